#include "server/acl/selector.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/ascii.h"
#include "core/glob.h"
#include "server/log.h"

namespace goblin::acl {

namespace {

// Calls visit(entry) for each NUL-ended entry of list until it returns true; returns whether
// one did.
template <typename Visit>
bool AnyEntry(std::string_view list, Visit visit) {
  size_t start = 0;
  while (start < list.size()) {
    const size_t end = list.find('\0', start);
    if (visit(list.substr(start, end - start), start)) return true;
    start = end + 1;
  }
  return false;
}

// Key pattern entries: the head byte, the pattern's length (one byte, or 0xff and four bytes
// for a pattern of 255 bytes or more), the pattern. Calls visit(pattern, head, head's offset)
// for each until it returns true; returns whether one did.
template <typename Visit>
bool AnyPattern(std::string_view list, Visit visit) {
  const char* const begin = list.data();
  const char* const end = begin + list.size();
  for (const char* entry = begin; entry < end;) {
    const auto head = static_cast<uint8_t>(entry[0]);
    size_t length = static_cast<uint8_t>(entry[1]);
    const char* pattern = entry + 2;
    if (length == 0xff) {
      uint32_t long_length;
      std::memcpy(&long_length, pattern, sizeof(long_length));
      length = long_length;
      pattern += sizeof(long_length);
    }
    if (visit(std::string_view(pattern, length), head, static_cast<size_t>(entry - begin))) {
      return true;
    }
    entry = pattern + length;
  }
  return false;
}

void AppendPatternEntry(std::string* list, uint8_t head, std::string_view pattern) {
  *list += static_cast<char>(head);
  if (pattern.size() < 0xff) {
    *list += static_cast<char>(pattern.size());
  } else {
    *list += static_cast<char>(0xff);
    const auto length = static_cast<uint32_t>(pattern.size());
    list->append(reinterpret_cast<const char*>(&length), sizeof(length));
  }
  *list += pattern;
}

// A key pattern entry's head byte: its KeyPermission bits, and how it matches (most patterns
// are a prefix and a '*', or a plain name: they are compared, not interpreted as globs).
constexpr uint8_t kPermissionBits = 3;
constexpr uint8_t kMatchPrefix = 4;  // "app:*": the bytes before the '*' start the key
constexpr uint8_t kMatchExact = 8;   // "config": the key itself

uint8_t MatchKind(std::string_view pattern) {
  const size_t special = pattern.find_first_of("*?[\\");
  if (special == std::string_view::npos) return kMatchExact;
  return special == pattern.size() - 1 && pattern.back() == '*' ? kMatchPrefix : 0;
}

bool Matches(uint8_t kind, std::string_view pattern, std::string_view text) {
  if (kind & kMatchPrefix) {
    const size_t prefix = pattern.size() - 1;  // the bytes before the final '*'
    return text.size() >= prefix && std::memcmp(text.data(), pattern.data(), prefix) == 0;
  }
  if (kind & kMatchExact) return text == pattern;
  return GlobMatch(pattern, text);
}

// The permissions a key needs for what the command does to it (its key-spec flags).
uint8_t NeededPermissions(uint32_t key_spec_flags) {
  uint8_t needed = 0;
  if (key_spec_flags & kKeyAccess) needed |= kKeyRead;
  if (key_spec_flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) needed |= kKeyWrite;
  return needed;
}

// Every row, subcommands after their container, as Redis walks its command table.
template <typename Visit>
void ForEachRow(const CommandTable& commands, Visit visit) {
  for (const Command* command : commands.All()) {
    visit(*command);
    for (const auto& sub : command->subcommands) visit(*sub);
  }
}

}  // namespace

bool HasSpaces(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    return c == '\0' || std::isspace(static_cast<unsigned char>(c));
  });
}

std::string_view RuleErrorText(RuleError error) {
  switch (error) {
    case RuleError::kNone:
      return "";
    case RuleError::kSyntax:
      return "Syntax error";
    case RuleError::kUnknownCommand:
      return "Unknown command or category name in ACL";
    case RuleError::kKeyAfterAllKeys:
      return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
             "does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case RuleError::kChannelAfterAll:
      return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
             "does not have any effect. Try 'resetchannels' to start with an empty list of "
             "channels";
    case RuleError::kNoSuchPassword:
      return "The password you are trying to remove from the user does not exist";
    case RuleError::kBadHash:
      return "The password hash must be exactly 64 characters and contain only lowercase "
             "hexadecimal characters";
    case RuleError::kFirstArgOfSubcommand:
      return "Allowing first-arg of a subcommand is not supported";
  }
  return "Wrong format";
}

ChannelUse ChannelUseOf(const Command& command) {
  if (!(command.flags & kCmdPubsub)) return ChannelUse::kNone;  // the common case, one test
  const std::string& name = command.name;
  if (name == "publish" || name == "spublish") return ChannelUse::kPublish;
  if (name == "subscribe" || name == "ssubscribe") return ChannelUse::kSubscribe;
  if (name == "psubscribe") return ChannelUse::kSubscribePattern;
  return ChannelUse::kNone;
}

RuleError Selector::Apply(std::string_view rule, const CommandTable& commands) {
  if (EqualsIgnoreCase(rule, "allkeys") || rule == "~*") {
    flags_ |= kAllKeys;
    patterns_.clear();
  } else if (EqualsIgnoreCase(rule, "resetkeys")) {
    flags_ &= ~kAllKeys;
    patterns_.clear();
  } else if (EqualsIgnoreCase(rule, "allchannels") || rule == "&*") {
    flags_ |= kAllChannels;
    channels_.clear();
  } else if (EqualsIgnoreCase(rule, "resetchannels")) {
    flags_ &= ~kAllChannels;
    channels_.clear();
  } else if (EqualsIgnoreCase(rule, "allcommands") || EqualsIgnoreCase(rule, "+@all")) {
    SetAll(true);
  } else if (EqualsIgnoreCase(rule, "nocommands") || EqualsIgnoreCase(rule, "-@all")) {
    SetAll(false);
  } else if (!rule.empty() && (rule[0] == '~' || rule[0] == '%')) {
    return ApplyKeyPattern(rule);
  } else if (!rule.empty() && rule[0] == '&') {
    return ApplyChannelPattern(rule);
  } else if (rule.size() >= 2 && (rule[0] == '+' || rule[0] == '-') && rule[1] == '@') {
    const uint32_t category = AclCategoryByName(rule.substr(2));
    if (category == 0) return RuleError::kUnknownCommand;
    const bool allow = rule[0] == '+';
    RecordRule(rule.substr(1), allow);
    SetCategory(category, allow, commands);
  } else if (!rule.empty() && rule[0] == '+') {
    if (rule.find('|') != std::string_view::npos) return AllowWithArgument(rule, commands);
    const Command* command = commands.FindFullName(rule.substr(1));
    if (command == nullptr) return RuleError::kUnknownCommand;
    SetCommand(*command, true);
    RecordRule(command->name, true);
  } else if (!rule.empty() && rule[0] == '-') {
    const Command* command = commands.FindFullName(rule.substr(1));
    if (command == nullptr) return RuleError::kUnknownCommand;
    SetCommand(*command, false);
    RecordRule(command->name, false);
  } else {
    return RuleError::kSyntax;
  }
  return RuleError::kNone;
}

RuleError Selector::ApplyKeyPattern(std::string_view rule) {
  if (flags_ & kAllKeys) return RuleError::kKeyAfterAllKeys;
  uint8_t permissions = kKeyReadWrite;
  size_t offset = 1;
  if (rule[0] == '%') {
    permissions = 0;
    for (; offset < rule.size(); ++offset) {
      const char c = AsciiToUpper(rule[offset]);
      if (c == 'R' && !(permissions & kKeyRead)) {
        permissions |= kKeyRead;
      } else if (c == 'W' && !(permissions & kKeyWrite)) {
        permissions |= kKeyWrite;
      } else if (rule[offset] == '~' && permissions != 0) {
        ++offset;
        break;
      } else {
        return RuleError::kSyntax;
      }
    }
    // "%R" without '~' is an empty pattern, as Redis keeps it for compatibility; a lone "%"
    // grants nothing and is refused.
    if (permissions == 0) return RuleError::kSyntax;
  }
  const std::string_view pattern = rule.substr(offset);
  if (HasSpaces(pattern)) return RuleError::kSyntax;
  const bool known = AnyPattern(patterns_, [&](std::string_view entry, uint8_t head, size_t at) {
    if (entry != pattern) return false;
    patterns_[at] = static_cast<char>(head | permissions);
    return true;
  });
  if (!known) AppendPatternEntry(&patterns_, permissions | MatchKind(pattern), pattern);
  return RuleError::kNone;
}

RuleError Selector::ApplyChannelPattern(std::string_view rule) {
  if (flags_ & kAllChannels) return RuleError::kChannelAfterAll;
  const std::string_view pattern = rule.substr(1);
  if (HasSpaces(pattern)) return RuleError::kSyntax;
  if (!AnyEntry(channels_, [&](std::string_view entry, size_t) { return entry == pattern; })) {
    channels_ += pattern;
    channels_ += '\0';
  }
  return RuleError::kNone;
}

// "+config|get" allows a subcommand; "+select|0" a first argument of a command that has no
// subcommands (Redis warns that this use is deprecated, and so do we).
RuleError Selector::AllowWithArgument(std::string_view rule, const CommandTable& commands) {
  const std::string_view body = rule.substr(1);
  const size_t bar = body.rfind('|');
  const Command* command = commands.FindFullName(body.substr(0, bar));
  if (command == nullptr) return RuleError::kUnknownCommand;
  if (command->parent != nullptr) return RuleError::kFirstArgOfSubcommand;
  const std::string_view argument = body.substr(bar + 1);
  if (argument.empty()) return RuleError::kSyntax;
  if (command->HasSubcommands()) {
    const Command* sub = commands.FindFullName(body);
    if (sub == nullptr) return RuleError::kUnknownCommand;
    SetCommand(*sub, true);
  } else {
    LogWarning(
        "Deprecation warning: Allowing a first arg of an otherwise blocked command is a misuse "
        "of ACL and may get disabled in the future (offender: " +
        std::string(body) + ")");
    auto entry = std::find_if(first_args_.begin(), first_args_.end(),
                              [&](const auto& item) { return item.first == command->acl_id; });
    if (entry == first_args_.end()) {
      first_args_.push_back({command->acl_id, {}});
      entry = std::prev(first_args_.end());
    }
    std::vector<std::string>& allowed = entry->second;
    if (std::none_of(allowed.begin(), allowed.end(),
                     [&](const std::string& a) { return EqualsIgnoreCase(a, argument); })) {
      allowed.emplace_back(argument);
    }
  }
  RecordRule(body, true);
  return RuleError::kNone;
}

void Selector::SetAll(bool allow) {
  if (allow) {
    allowed_.set();
    flags_ |= kAllCommands;
  } else {
    allowed_.reset();
    flags_ &= ~kAllCommands;
  }
  rules_.clear();
  first_args_.clear();
}

void Selector::SetCommand(const Command& command, bool allow) {
  auto set = [&](uint32_t id) {
    if (id >= kFutureCommandsBit) return;
    allowed_[id] = allow;
    if (!allow) flags_ &= ~kAllCommands;
  };
  set(command.acl_id);
  std::erase_if(first_args_, [&](const auto& item) { return item.first == command.acl_id; });
  for (const auto& sub : command.subcommands) set(sub->acl_id);
}

void Selector::SetCategory(uint32_t category, bool allow, const CommandTable& commands) {
  ForEachRow(commands, [&](const Command& command) {
    if (command.acl_categories & category) SetCommand(command, allow);
  });
}

// A rule about a command replaces the earlier rules about it (and about its subcommands or
// first arguments), so that the description replays to the same permissions.
void Selector::RecordRule(std::string_view rule, bool allow) {
  const std::string lowered = AsciiLower(rule);
  std::string kept;
  size_t start = 0;
  while (start < rules_.size()) {
    size_t end = rules_.find(' ', start);
    if (end == std::string::npos) end = rules_.size();
    const std::string_view existing = std::string_view(rules_).substr(start, end - start);
    const std::string_view body = existing.substr(1);
    const bool replaced =
        body.starts_with(lowered) && (body.size() == lowered.size() || body[lowered.size()] == '|');
    if (!replaced) {
      if (!kept.empty()) kept += ' ';
      kept += existing;
    }
    start = end + 1;
  }
  if (!kept.empty()) kept += ' ';
  kept += allow ? '+' : '-';
  kept += lowered;
  rules_ = std::move(kept);
}

std::string Selector::DescribeCommands() const {
  std::string text = allowed_[kFutureCommandsBit] ? "+@all" : "-@all";
  if (!rules_.empty()) text += " " + rules_;
  return text;
}

namespace {

// A key pattern as a rule: "~p", "%R~p" or "%W~p".
void AppendKeyPattern(std::string* out, std::string_view pattern, uint8_t head) {
  const auto permissions = static_cast<uint8_t>(head & kPermissionBits);
  if (permissions == kKeyRead) {
    *out += "%R~";
  } else if (permissions == kKeyWrite) {
    *out += "%W~";
  } else {
    *out += '~';
  }
  *out += pattern;
}

}  // namespace

std::string Selector::DescribeKeys() const {
  if (flags_ & kAllKeys) return "~*";
  std::string text;
  AnyPattern(patterns_, [&](std::string_view pattern, uint8_t head, size_t) {
    if (!text.empty()) text += ' ';
    AppendKeyPattern(&text, pattern, head);
    return false;
  });
  return text;
}

std::string Selector::DescribeChannels() const {
  if (flags_ & kAllChannels) return "&*";
  std::string text;
  AnyEntry(channels_, [&](std::string_view channel, size_t) {
    if (!text.empty()) text += ' ';
    text += '&';
    text += channel;
    return false;
  });
  return text;
}

std::vector<std::string_view> Selector::channels() const {
  std::vector<std::string_view> out;
  AnyEntry(channels_, [&](std::string_view channel, size_t) {
    out.push_back(channel);
    return false;
  });
  return out;
}

std::string Selector::Describe() const {
  std::string text;
  if (flags_ & kAllKeys) {
    text += "~* ";
  } else {
    AnyPattern(patterns_, [&](std::string_view pattern, uint8_t head, size_t) {
      AppendKeyPattern(&text, pattern, head);
      text += ' ';
      return false;
    });
  }
  if (flags_ & kAllChannels) {
    text += "&* ";
  } else {
    text += "resetchannels ";
    AnyEntry(channels_, [&](std::string_view channel, size_t) {
      text += '&';
      text += channel;
      text += ' ';
      return false;
    });
  }
  text += DescribeCommands();
  return text;
}

bool Selector::AllowsCommand(const Command& command,
                             const std::vector<std::string_view>& argv) const {
  if ((flags_ & kAllCommands) || (command.flags & kCmdNoAuth) || allowed_[command.acl_id]) {
    return true;
  }
  // "+select|0": the command with that first argument (the argument after a subcommand's
  // name, for a subcommand).
  const size_t index = command.parent != nullptr ? 2 : 1;
  if (argv.size() < 2 || argv.size() <= index) return false;
  for (const auto& [id, arguments] : first_args_) {
    if (id != command.acl_id) continue;
    return std::any_of(arguments.begin(), arguments.end(), [&](const std::string& argument) {
      return EqualsIgnoreCase(argument, argv[index]);
    });
  }
  return false;
}

Denial Selector::Check(const Command& command, const std::vector<std::string_view>& argv,
                       size_t* position) const {
  if (!AllowsCommand(command, argv)) {
    *position = 0;
    return Denial::kCommand;
  }
  // A call whose keys cannot be found names none, as Redis's getKeysFromCommandWithSpecs
  // finds none (the command then answers its own syntax error).
  if (!(flags_ & kAllKeys) && command.HasKeys() &&
      !command.AllKeys(argv, [&](size_t at, uint32_t key_flags) {
        *position = at;
        return AllowsKey(argv[at], key_flags);
      })) {
    return Denial::kKey;
  }
  if (!(flags_ & kAllChannels)) {
    const ChannelUse use = ChannelUseOf(command);
    if (use != ChannelUse::kNone) {
      const size_t last = use == ChannelUse::kPublish ? std::min<size_t>(1, argv.size() - 1)
                                                      : argv.size() - 1;
      for (size_t i = 1; i <= last; ++i) {
        if (!AllowsChannel(argv[i], use == ChannelUse::kSubscribePattern)) {
          *position = i;
          return Denial::kChannel;
        }
      }
    }
  }
  return Denial::kNone;
}

bool Selector::AllowsKey(std::string_view key, uint32_t key_spec_flags) const {
  if (flags_ & kAllKeys) return true;
  const uint8_t needed = NeededPermissions(key_spec_flags);
  return AnyPattern(patterns_, [&](std::string_view pattern, uint8_t head, size_t) {
    return (head & needed) == needed && Matches(head, pattern, key);
  });
}

bool Selector::AllowsAnyKey(uint32_t key_spec_flags) const {
  if (flags_ & kAllKeys) return true;
  const uint8_t needed = NeededPermissions(key_spec_flags);
  return AnyPattern(patterns_, [&](std::string_view pattern, uint8_t head, size_t) {
    return (head & needed) == needed && pattern == "*";
  });
}

// A channel named by PUBLISH or SUBSCRIBE matches the patterns as globs; a PSUBSCRIBE pattern
// only the same pattern, literally.
bool Selector::AllowsChannel(std::string_view channel, bool is_pattern) const {
  if (flags_ & kAllChannels) return true;
  return AnyEntry(channels_, [&](std::string_view allowed, size_t) {
    return is_pattern ? allowed == channel : GlobMatch(allowed, channel);
  });
}

}  // namespace goblin::acl
