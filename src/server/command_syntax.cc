#include "server/command_syntax.h"

#include <cctype>

#include "core/ascii.h"

namespace goblin {
namespace {

bool IsUpperWord(std::string_view word) {
  bool letter = false;
  for (char c : word) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    letter = letter || std::isupper(static_cast<unsigned char>(c));
  }
  return letter;
}

std::string TypeForName(std::string_view name) {
  static const char* kKeys[] = {"key", "newkey", "source", "destination"};
  static const char* kIntegers[] = {
      "seconds", "milliseconds", "count",     "offset", "start",          "end",
      "index",   "index1",       "index2",    "db",     "destination-db", "numkeys",
      "timeout", "increment",    "decrement", "cursor", "protover",       "client-id",
      "maxage",  "samples",      "limit",     "stop",   "version"};
  static const char* kDoubles[] = {"score", "min", "max", "weight"};
  for (const char* k : kKeys)
    if (name == k) return "key";
  for (const char* k : kIntegers)
    if (name == k) return "integer";
  for (const char* k : kDoubles)
    if (name == k) return "double";
  if (name == "pattern") return "pattern";
  if (name.rfind("unix-time", 0) == 0) return "unix-time";
  return "string";
}

class SyntaxParser {
 public:
  explicit SyntaxParser(std::string_view text) : text_(text) {}

  std::vector<CommandArgument> Sequence(char closer) {
    std::vector<CommandArgument> items;
    while (true) {
      SkipSpaces();
      if (pos_ >= text_.size() || text_[pos_] == closer || text_[pos_] == '|') return items;
      if (text_.compare(pos_, 3, "...") == 0) {
        pos_ += 3;
        if (!items.empty()) items.back().multiple = true;
        continue;
      }
      CommandArgument item;
      if (!Atom(&item)) return items;
      // "key [key ...]": the bracketed repeat marks the previous item as multiple.
      if (item.optional && item.multiple && !items.empty() && item.children.empty() &&
          items.back().name == item.name && items.back().token.empty()) {
        items.back().multiple = true;
        continue;
      }
      // "EX seconds": a keyword followed by its value becomes one tokened argument.
      if (!items.empty() && items.back().type == "pure-token" && !items.back().optional &&
          item.token.empty() && item.children.empty() && item.type != "pure-token") {
        item.token = items.back().token;
        // Redis types min-idle-time as an integer after a keyword (XPENDING's IDLE,
        // XREADGROUP's CLAIM) and as a string where it stands alone (XCLAIM, XAUTOCLAIM).
        if (item.name == "min-idle-time") item.type = "integer";
        items.back() = std::move(item);
        continue;
      }
      items.push_back(std::move(item));
    }
  }

 private:
  void SkipSpaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }

  bool Atom(CommandArgument* out) {
    char c = text_[pos_];
    if (c == '[' || c == '<') {
      char closer = c == '[' ? ']' : '>';
      ++pos_;
      std::vector<std::vector<CommandArgument>> alternatives;
      alternatives.push_back(Sequence(closer));
      while (pos_ < text_.size() && text_[pos_] == '|') {
        ++pos_;
        alternatives.push_back(Sequence(closer));
      }
      if (pos_ < text_.size() && text_[pos_] == closer) ++pos_;
      if (alternatives.size() == 1) {
        std::vector<CommandArgument>& only = alternatives[0];
        if (only.size() == 1) {
          *out = std::move(only[0]);
        } else {
          out->type = "block";
          out->name = only.empty() ? "block" : only[0].name;
          out->children = std::move(only);
        }
      } else {
        out->type = "oneof";
        for (auto& alternative : alternatives) {
          if (alternative.size() == 1) {
            out->children.push_back(std::move(alternative[0]));
          } else if (!alternative.empty()) {
            CommandArgument block;
            block.type = "block";
            block.name = alternative[0].name;
            block.children = std::move(alternative);
            out->children.push_back(std::move(block));
          }
        }
        for (const CommandArgument& child : out->children) {
          out->name += (out->name.empty() ? "" : "-") + child.name;
        }
      }
      if (closer == ']') out->optional = true;
      return true;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != ']' && text_[pos_] != '>' &&
           text_[pos_] != '|' && text_[pos_] != '[' && text_[pos_] != '<') {
      ++pos_;
    }
    if (pos_ == start) {
      ++pos_;  // stray character: skip it
      return false;
    }
    std::string_view word = text_.substr(start, pos_ - start);
    if (IsUpperWord(word)) {
      out->type = "pure-token";
      out->token = std::string(word);
      out->name = AsciiLower(word);
    } else {
      out->name = std::string(word);
      out->type = TypeForName(word);
    }
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<CommandArgument> ParseCommandSyntax(std::string_view syntax) {
  return SyntaxParser(syntax).Sequence('\0');
}

namespace docs {
namespace {

CommandArgument Leaf(std::string_view name, std::string_view type, std::string_view token) {
  CommandArgument argument;
  argument.name = name;
  argument.type = type;
  argument.token = token;
  return argument;
}

}  // namespace

CommandArgument Key(std::string_view name, int key_spec_index) {
  CommandArgument argument = Leaf(name, "key", {});
  argument.key_spec_index = key_spec_index;
  return argument;
}
CommandArgument String(std::string_view name, std::string_view token) {
  return Leaf(name, "string", token);
}
CommandArgument Integer(std::string_view name, std::string_view token) {
  return Leaf(name, "integer", token);
}
CommandArgument UnixTime(std::string_view name, std::string_view token) {
  return Leaf(name, "unix-time", token);
}
CommandArgument Pattern(std::string_view name, std::string_view token) {
  return Leaf(name, "pattern", token);
}
CommandArgument Token(std::string_view name, std::string_view token) {
  return Leaf(name, "pure-token", token);
}
CommandArgument OneOf(std::string_view name, std::vector<CommandArgument> choices) {
  CommandArgument argument = Leaf(name, "oneof", {});
  argument.children = std::move(choices);
  return argument;
}
CommandArgument Block(std::string_view name, std::vector<CommandArgument> parts,
                      std::string_view token) {
  CommandArgument argument = Leaf(name, "block", token);
  argument.children = std::move(parts);
  return argument;
}
CommandArgument Optional(CommandArgument argument) {
  argument.optional = true;
  return argument;
}
CommandArgument Multiple(CommandArgument argument) {
  argument.multiple = true;
  return argument;
}
CommandArgument Expiration(CommandArgument last) {
  return Optional(
      OneOf("expiration", {Integer("seconds", "EX"), Integer("milliseconds", "PX"),
                           UnixTime("unix-time-seconds", "EXAT"),
                           UnixTime("unix-time-milliseconds", "PXAT"), std::move(last)}));
}

}  // namespace docs

}  // namespace goblin
