#include "server/config.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <tuple>

#include "core/ascii.h"
#include "core/glob.h"
#include "core/string_number.h"
#include "resp/request_parser.h"
#include "server/acl/access_control.h"
#include "server/errors.h"
#include "server/keyspace_notify.h"

namespace goblin {

bool ParseMemory(std::string_view text, int64_t* bytes) {
  std::string lower = AsciiLower(text);
  struct Unit {
    const char* suffix;
    int64_t multiplier;
  };
  static const Unit kUnits[] = {{"kb", 1024}, {"mb", 1024LL * 1024}, {"gb", 1024LL * 1024 * 1024},
                                {"k", 1000},  {"m", 1000 * 1000},    {"g", 1000LL * 1000 * 1000},
                                {"b", 1}};
  int64_t multiplier = 1;
  std::string_view digits = lower;
  for (const Unit& unit : kUnits) {
    size_t n = std::strlen(unit.suffix);
    if (digits.size() > n && digits.substr(digits.size() - n) == unit.suffix) {
      multiplier = unit.multiplier;
      digits.remove_suffix(n);
      break;
    }
  }
  int64_t value;
  if (!ParseInt64(digits, &value)) return false;
  if (value != 0 && (value > INT64_MAX / multiplier || value < INT64_MIN / multiplier)) {
    return false;
  }
  *bytes = value * multiplier;
  return true;
}

std::string FormatPercentile(double percentile) {
  char buf[512];  // "%f" of up to 100: the validated range
  int len = std::snprintf(buf, sizeof(buf), "%f", percentile);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "0";
  if (std::memchr(buf, '.', static_cast<size_t>(len)) != nullptr) {
    while (buf[len - 1] == '0') --len;
    if (buf[len - 1] == '.') --len;
  }
  return std::string(buf, static_cast<size_t>(len));
}

namespace {

// Reasons more than one kind or parser gives, as Redis words them. CONFIG SET puts them after
// its own prefix; the file and command-line parsers after the directive they quote.
constexpr char kWrongArgumentCount[] = "wrong number of arguments";
constexpr char kBadDirective[] = "Bad directive or wrong number of arguments";
constexpr char kNotInteger[] = "argument couldn't be parsed into an integer";
constexpr char kBadSave[] = "Invalid save parameters";

// shutdown-on-sigterm's words, in the order CONFIG GET lists them.
constexpr std::pair<const char*, uint32_t> kShutdownFlagWords[] = {{"default", 0},
                                                                   {"save", kShutdownSave},
                                                                   {"nosave", kShutdownNoSave},
                                                                   {"now", kShutdownNow},
                                                                   {"force", kShutdownForce}};

// The words in one value ("nosave force", CONFIG SET) or several (a config file's line);
// nullopt for an unknown word or none at all.
std::optional<uint32_t> ParseShutdownFlags(const std::vector<std::string>& values) {
  uint32_t flags = 0;
  size_t words = 0;
  for (const std::string& value : values) {
    std::istringstream in(value);
    for (std::string word; in >> word; ++words) {
      const auto* known =
          std::find_if(std::begin(kShutdownFlagWords), std::end(kShutdownFlagWords),
                       [&](const auto& entry) { return EqualsIgnoreCase(word, entry.first); });
      if (known == std::end(kShutdownFlagWords)) return std::nullopt;
      flags |= known->second;
    }
  }
  if (words == 0) return std::nullopt;
  return flags;
}

// oom-score-adj-values: three scores in [-2000, 2000], in one value or three words.
std::string NormalizeOomScores(std::string* value) {
  std::istringstream in(*value);
  std::vector<int64_t> scores;
  for (std::string word; in >> word;) {
    int64_t score;
    if (!ParseInt64(word, &score)) return kNotInteger;
    scores.push_back(score);
  }
  if (scores.size() != 3) return kWrongArgumentCount;
  for (int64_t score : scores) {
    if (score < -2000 || score > 2000) {
      return "Invalid oom-score-adj-values, elements must be between -2000 and 2000.";
    }
  }
  *value =
      Int64ToString(scores[0]) + " " + Int64ToString(scores[1]) + " " + Int64ToString(scores[2]);
  return "";
}

// maxmemory-clients: a byte count with Redis's units, or a percentage of maxmemory ("10%").
std::string NormalizeMemoryOrPercent(std::string* value) {
  int64_t number;
  if (!value->empty() && value->back() == '%') {
    if (ParseInt64(std::string_view(*value).substr(0, value->size() - 1), &number) && number >= 0) {
      *value = Int64ToString(number) + "%";
      return "";
    }
  } else if (ParseMemory(*value, &number) && number >= 0) {
    *value = Int64ToString(number);
    return "";
  }
  return "argument must be a memory or percent value";
}

// A value as one word of a config line: quoted, with Redis's escapes, when it holds a space,
// a quote or a byte that is not printable.
std::string QuoteIfNeeded(const std::string& value) {
  const bool plain = std::all_of(value.begin(), value.end(), [](unsigned char c) {
    return c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\';
  });
  if (plain) return value;
  std::string out = "\"";
  for (unsigned char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c >= ' ' && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          char hex[5];
          std::snprintf(hex, sizeof(hex), "\\x%02x", c);
          out += hex;
        }
    }
  }
  return out + "\"";
}

}  // namespace

struct ConfigRegistry::Option {
  enum class Kind {
    kBool,
    kInt,
    kMemory,
    kString,
    kEnum,
    kSave,
    kBind,
    kOctal,
    kDir,
    kOutputLimits,
    kNotifyClasses,
    kPercentiles,
    kReplicaOf,
    kShutdownFlags
  };
  enum Mutability { kImmutable, kMutable, kProtected };
  std::string name;
  std::vector<std::string> aliases;
  Kind kind;
  Mutability mutability;
  void* field;
  int64_t min = INT64_MIN;  // kInt, kMemory, kOctal
  int64_t max = INT64_MAX;
  std::vector<std::string> choices;  // kEnum
  ConfigHook hook = ConfigHook::kNone;
  // kString: checks a value, and writes it as CONFIG GET shows it, before it is stored;
  // returns "" or the reason.
  std::string (*validate)(std::string* value) = nullptr;
  // Stored and reported, with no effect in Goblin (Config::Inert).
  bool inert = false;
  // Left out of CONFIG GET's pattern matches (answered when named), as Redis hides its
  // testing knobs.
  bool hidden = false;
  // A feature Goblin lacks: any value but this one (as Format writes it) is refused.
  std::optional<std::string> only_value;
  std::string only_value_reason;

  std::string Format() const;
  // Stores values, or returns why not ("" on success), OnlyValue's refusal included.
  std::string Set(const std::vector<std::string>& values) const;

 private:
  std::string Parse(const std::vector<std::string>& values) const;
};

// Adds the rows of the option table, one call an option. Each kind takes a field of its own
// type, so a row cannot bind an option to a field that its kind would misread.
class ConfigRegistry::OptionTable {
 public:
  using Kind = Option::Kind;
  using Mutability = Option::Mutability;
  using Choices = std::vector<std::string>;
  static constexpr ConfigHook kNone = ConfigHook::kNone;

  explicit OptionTable(std::vector<Option>* rows) : rows_(rows) {}

  void Bool(const char* name, bool* field, Mutability mutability, ConfigHook hook = kNone) {
    Add(name, Kind::kBool, field, mutability, hook);
  }
  void Int(const char* name, int64_t* field, int64_t min, int64_t max, Mutability mutability,
           ConfigHook hook = kNone) {
    Add(name, Kind::kInt, field, mutability, hook, min, max);
  }
  // A byte count written with Redis's units ("64mb"); never negative.
  void Memory(const char* name, int64_t* field, int64_t min, int64_t max, Mutability mutability,
              ConfigHook hook = kNone) {
    Add(name, Kind::kMemory, field, mutability, hook, min, max);
  }
  // File permission bits, written in octal.
  void Octal(const char* name, int64_t* field, int64_t min, int64_t max, Mutability mutability) {
    Add(name, Kind::kOctal, field, mutability, kNone, min, max);
  }
  void String(const char* name, std::string* field, Mutability mutability,
              ConfigHook hook = kNone) {
    Add(name, Kind::kString, field, mutability, hook);
  }
  // One of `choices`, matched without case and stored in lower case.
  void Enum(const char* name, std::string* field, const Choices& choices, Mutability mutability,
            ConfigHook hook = kNone) {
    Add(name, Kind::kEnum, field, mutability, hook).choices = choices;
  }
  // The working directory: setting it changes directory.
  void Dir(const char* name, std::string* field, Mutability mutability) {
    Add(name, Kind::kDir, field, mutability, kNone);
  }
  // "host port", or "no one" for none: the master to follow.
  void ReplicaOfMaster(const char* name, ReplicaOf* field) {
    Add(name, Kind::kReplicaOf, field, Mutability::kImmutable, kNone);
  }
  void Save(const char* name, std::vector<SaveRule>* field, Mutability mutability) {
    Add(name, Kind::kSave, field, mutability, kNone);
  }
  void Bind(const char* name, std::vector<std::string>* field, Mutability mutability,
            ConfigHook hook) {
    Add(name, Kind::kBind, field, mutability, hook);
  }
  void OutputLimits(const char* name, OutputBufferLimits* field, Mutability mutability) {
    Add(name, Kind::kOutputLimits, field, mutability, kNone);
  }
  // notify-keyspace-events: class letters in, Redis's normalised letters out.
  void NotifyClasses(const char* name, uint32_t* field, Mutability mutability) {
    Add(name, Kind::kNotifyClasses, field, mutability, kNone);
  }
  // ShutdownFlags written as words ("nosave force"), "default" for none.
  void ShutdownFlagWords(const char* name, uint32_t* field, Mutability mutability) {
    Add(name, Kind::kShutdownFlags, field, mutability, kNone);
  }
  // Percentiles in [0, 100]: words in a file, one space-separated value from CONFIG SET.
  void Percentiles(const char* name, std::vector<double>* field, Mutability mutability) {
    Add(name, Kind::kPercentiles, field, mutability, kNone);
  }
  // A string checked by validate before it is stored.
  void Validated(const char* name, std::string* field, Mutability mutability,
                 std::string (*validate)(std::string*)) {
    Add(name, Kind::kString, field, mutability, kNone).validate = validate;
  }
  // Another name for the option added last, answered by CONFIG GET and accepted everywhere.
  void Alias(const char* name) { rows_->back().aliases.push_back(name); }
  // CONFIG SET of the option added last runs hook.
  void Hook(ConfigHook hook) { rows_->back().hook = hook; }
  // The option added last has no effect in Goblin (Config::Inert).
  void Inert() { rows_->back().inert = true; }
  // The option added last is not listed by CONFIG GET's patterns.
  void Hidden() { rows_->back().hidden = true; }
  // The option added last names a feature Goblin lacks: only value is accepted, else reason.
  void OnlyValue(const char* value, const char* reason) {
    rows_->back().only_value = value;
    rows_->back().only_value_reason = reason;
  }

 private:
  Option& Add(const char* name, Kind kind, void* field, Mutability mutability, ConfigHook hook,
              int64_t min = INT64_MIN, int64_t max = INT64_MAX) {
    return rows_->emplace_back(Option{.name = name,
                                      .aliases = {},
                                      .kind = kind,
                                      .mutability = mutability,
                                      .field = field,
                                      .min = min,
                                      .max = max,
                                      .choices = {},
                                      .hook = hook,
                                      .validate = nullptr,
                                      .inert = false,
                                      .hidden = false,
                                      .only_value = std::nullopt,
                                      .only_value_reason = {}});
  }

  std::vector<Option>* rows_;
};

std::string ConfigRegistry::Option::Format() const {
  switch (kind) {
    case Kind::kBool:
      return *static_cast<bool*>(field) ? "yes" : "no";
    case Kind::kInt:
    case Kind::kMemory:
      return Int64ToString(*static_cast<int64_t*>(field));
    case Kind::kOctal: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%llo",
                    static_cast<unsigned long long>(*static_cast<int64_t*>(field)));
      return buf;
    }
    case Kind::kString:
    case Kind::kEnum:
    case Kind::kDir:
      return *static_cast<std::string*>(field);
    case Kind::kNotifyClasses:
      return FormatNotifyClasses(*static_cast<uint32_t*>(field));
    case Kind::kShutdownFlags: {
      const uint32_t flags = *static_cast<uint32_t*>(field);
      if (flags == 0) return "default";
      std::string out;
      for (const auto& [word, flag] : kShutdownFlagWords) {
        if (flag == 0 || (flags & flag) == 0) continue;
        if (!out.empty()) out += ' ';
        out += word;
      }
      return out;
    }
    case Kind::kReplicaOf: {
      const auto& master = *static_cast<ReplicaOf*>(field);
      return master.host.empty() ? "" : master.host + " " + Int64ToString(master.port);
    }
    case Kind::kPercentiles: {
      std::string out;
      for (double percentile : *static_cast<std::vector<double>*>(field)) {
        if (!out.empty()) out += ' ';
        out += FormatPercentile(percentile);
      }
      return out;
    }
    case Kind::kSave: {
      std::string out;
      for (const SaveRule& rule : *static_cast<std::vector<SaveRule>*>(field)) {
        if (!out.empty()) out += ' ';
        out += Int64ToString(rule.seconds) + " " + Int64ToString(rule.changes);
      }
      return out;
    }
    case Kind::kBind: {
      std::string out;
      for (const std::string& address : *static_cast<std::vector<std::string>*>(field)) {
        if (!out.empty()) out += ' ';
        out += address;
      }
      return out;
    }
    case Kind::kOutputLimits: {
      const auto& limits = *static_cast<OutputBufferLimits*>(field);
      std::string out;
      for (const auto& [name, limit] :
           {std::pair<const char*, const OutputBufferLimit&>{"normal", limits.normal},
            {"slave", limits.replica},
            {"pubsub", limits.pubsub}}) {
        if (!out.empty()) out += ' ';
        out += std::string(name) + " " + Int64ToString(limit.hard) + " " +
               Int64ToString(limit.soft) + " " + Int64ToString(limit.soft_seconds);
      }
      return out;
    }
  }
  return "";
}

// Returns "" on success or Redis's reason text.
std::string ConfigRegistry::Option::Set(const std::vector<std::string>& values) const {
  if (!only_value) return Parse(values);
  const std::string before = Format();
  std::string error = Parse(values);
  if (error.empty() && Format() != *only_value) {
    Parse({before});
    error = only_value_reason;
  }
  return error;
}

std::string ConfigRegistry::Option::Parse(const std::vector<std::string>& values) const {
  bool single = values.size() == 1;
  switch (kind) {
    case Kind::kBool: {
      if (!single) return kWrongArgumentCount;
      std::string v = AsciiLower(values[0]);
      if (v != "yes" && v != "no") return "argument must be 'yes' or 'no'";
      *static_cast<bool*>(field) = v == "yes";
      return "";
    }
    case Kind::kInt:
    case Kind::kMemory: {
      if (!single) return kWrongArgumentCount;
      int64_t v;
      bool ok =
          kind == Kind::kInt ? ParseInt64(values[0], &v) : ParseMemory(values[0], &v) && v >= 0;
      if (!ok) {
        return kind == Kind::kInt ? kNotInteger : "argument must be a memory value";
      }
      if (v < min || v > max) {
        return "argument must be between " + Int64ToString(min) + " and " + Int64ToString(max) +
               " inclusive";
      }
      *static_cast<int64_t*>(field) = v;
      return "";
    }
    case Kind::kOctal: {
      if (!single) return kWrongArgumentCount;
      char* end;
      errno = 0;
      long long v = std::strtoll(values[0].c_str(), &end, 8);
      if (values[0].empty() || *end != '\0' || errno != 0 || v < min || v > max) {
        return kNotInteger;
      }
      *static_cast<int64_t*>(field) = v;
      return "";
    }
    case Kind::kString:
      if (validate != nullptr) {
        // A list option (oom-score-adj-values) comes as words from a file, one value from
        // CONFIG SET.
        std::string value;
        for (const std::string& word : values) value += (value.empty() ? "" : " ") + word;
        if (std::string reason = validate(&value); !reason.empty()) return reason;
        *static_cast<std::string*>(field) = std::move(value);
        return "";
      }
      if (!single) return kWrongArgumentCount;
      *static_cast<std::string*>(field) = values[0];
      return "";
    case Kind::kReplicaOf: {
      // "host port" as two values, or as one from the command line ("--replicaof 'h p'").
      std::vector<std::string> words = values;
      if (words.size() == 1) {
        words.clear();
        std::istringstream in(values[0]);
        for (std::string word; in >> word;) words.push_back(word);
      }
      if (words.size() != 2) return kWrongArgumentCount;
      auto& master = *static_cast<ReplicaOf*>(field);
      if (EqualsIgnoreCase(words[0], "no") && EqualsIgnoreCase(words[1], "one")) {
        master = {};
        return "";
      }
      int64_t port;
      if (!ParseInt64(words[1], &port) || port < 0 || port > 65535) return "Invalid master port";
      master = {words[0], port};
      return "";
    }
    case Kind::kNotifyClasses: {
      if (!single) return kWrongArgumentCount;
      const std::optional<uint32_t> flags = ParseNotifyClasses(values[0]);
      if (!flags) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
      *static_cast<uint32_t*>(field) = *flags;
      return "";
    }
    case Kind::kShutdownFlags: {
      const std::optional<uint32_t> flags = ParseShutdownFlags(values);
      if (!flags) {
        return "argument(s) must be one of the following: default, save, nosave, now, force";
      }
      *static_cast<uint32_t*>(field) = *flags;
      return "";
    }
    case Kind::kEnum: {
      if (!single) return kWrongArgumentCount;
      std::string v = AsciiLower(values[0]);
      for (const std::string& choice : choices) {
        if (v == choice) {
          *static_cast<std::string*>(field) = v;
          return "";
        }
      }
      std::string reason = "argument(s) must be one of the following: ";
      for (size_t i = 0; i < choices.size(); ++i) reason += (i ? ", " : "") + choices[i];
      return reason;
    }
    case Kind::kDir: {
      if (!single) return kWrongArgumentCount;
      if (chdir(values[0].c_str()) != 0) return std::strerror(errno);
      char cwd[4096];
      if (getcwd(cwd, sizeof(cwd)) == nullptr) return std::strerror(errno);
      *static_cast<std::string*>(field) = cwd;
      return "";
    }
    case Kind::kSave: {
      // One value holding pairs ("3600 1 300 100"), several values, or "" for none.
      std::vector<std::string> words;
      for (const std::string& value : values) {
        std::istringstream in(value);
        for (std::string word; in >> word;) words.push_back(word);
      }
      if (words.size() % 2 != 0) return kBadSave;
      std::vector<SaveRule> rules;
      for (size_t i = 0; i < words.size(); i += 2) {
        SaveRule rule;
        if (!ParseInt64(words[i], &rule.seconds) || !ParseInt64(words[i + 1], &rule.changes) ||
            rule.seconds < 1 || rule.changes < 0) {
          return kBadSave;
        }
        rules.push_back(rule);
      }
      *static_cast<std::vector<SaveRule>*>(field) = std::move(rules);
      return "";
    }
    case Kind::kOutputLimits: {
      // "<class> <hard> <soft> <soft seconds>" groups, in one value or several; a directive
      // with none changes nothing, as in Redis.
      std::vector<std::string> words;
      for (const std::string& value : values) {
        std::istringstream in(value);
        for (std::string word; in >> word;) words.push_back(word);
      }
      if (values.empty()) return "";
      if (words.empty() || words.size() % 4 != 0) {
        return "Wrong number of arguments in buffer limit configuration.";
      }
      OutputBufferLimits limits = *static_cast<OutputBufferLimits*>(field);
      for (size_t i = 0; i < words.size(); i += 4) {
        const std::string name = AsciiLower(words[i]);
        OutputBufferLimit* limit = name == "normal"                       ? &limits.normal
                                   : name == "slave" || name == "replica" ? &limits.replica
                                   : name == "pubsub"                     ? &limits.pubsub
                                                                          : nullptr;
        if (limit == nullptr)
          return "Invalid client class specified in buffer limit configuration.";
        OutputBufferLimit parsed;
        if (!ParseMemory(words[i + 1], &parsed.hard) || !ParseMemory(words[i + 2], &parsed.soft) ||
            !ParseInt64(words[i + 3], &parsed.soft_seconds) || parsed.hard < 0 || parsed.soft < 0 ||
            parsed.soft_seconds < 0) {
          return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        }
        *limit = parsed;
      }
      *static_cast<OutputBufferLimits*>(field) = limits;
      return "";
    }
    case Kind::kPercentiles: {
      // CONFIG SET's one value is cut at every single space, as Redis's multi-argument options
      // are: "" is no percentile at all, "50  99" holds an empty word and is refused. Each word
      // is a double as Redis's string2d reads it (so 1e400 and 1e-400 are refused too).
      std::vector<std::string> words = values;
      if (single) {
        const std::string& text = values[0];
        words.clear();
        for (size_t start = 0; !text.empty();) {
          const size_t space = text.find(' ', start);
          words.push_back(text.substr(start, space - start));
          if (space == std::string::npos) break;
          start = space + 1;
        }
      }
      std::vector<double> percentiles;
      for (const std::string& word : words) {
        double percentile;
        if (!ParseDouble(word, &percentile)) {
          return "Invalid latency-tracking-info-percentiles parameters";
        }
        if (percentile > 100.0 || percentile < 0.0) {
          return "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";
        }
        percentiles.push_back(percentile);
      }
      *static_cast<std::vector<double>*>(field) = std::move(percentiles);
      return "";
    }
    case Kind::kBind: {
      std::vector<std::string> addresses;
      for (const std::string& value : values) {
        std::istringstream in(value);
        for (std::string word; in >> word;) addresses.push_back(word);
      }
      if (addresses.empty()) return kWrongArgumentCount;
      if (addresses.size() > 16) return "Too many bind addresses specified.";
      *static_cast<std::vector<std::string>*>(field) = std::move(addresses);
      return "";
    }
  }
  return "unknown option kind";
}

ConfigRegistry::ConfigRegistry(Config* config) : config_(config) {
  constexpr auto kImmutable = Option::kImmutable;
  constexpr auto kMutable = Option::kMutable;
  constexpr auto kProtected = Option::kProtected;
  constexpr int64_t kMinInt = INT32_MIN;
  constexpr int64_t kMaxInt = INT32_MAX;
  constexpr int64_t kMaxLong = INT64_MAX;
  constexpr int64_t kMiB = 1024 * 1024;
  const OptionTable::Choices kNoYesLocal = {"no", "yes", "local"};
  const OptionTable::Choices kLogLevels = {"debug", "verbose", "notice", "warning", "nothing"};
  const OptionTable::Choices kFsyncPolicies = {"always", "everysec", "no"};
  const OptionTable::Choices kEvictionPolicies = {
      "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
      "allkeys-lru",  "allkeys-lfu",  "allkeys-random",  "noeviction"};
  Config& c = *config;
  OptionTable table(&options_);
  // name, field, bounds or choices, who may change it at runtime, what the server does then.
  // The order is CONFIG REWRITE's and CONFIG GET's.
  table.Int("port", &c.port, 0, 65535, kMutable, ConfigHook::kRebindTcp);
  table.Bind("bind", &c.bind, kMutable, ConfigHook::kRebindTcp);
  table.String("unixsocket", &c.unixsocket, kImmutable);
  table.Octal("unixsocketperm", &c.unixsocketperm, 0, 0777, kImmutable);
  table.Bool("protected-mode", &c.protected_mode, kMutable);
  table.Int("tcp-backlog", &c.tcp_backlog, 0, kMaxInt, kImmutable);
  table.Int("tcp-keepalive", &c.tcp_keepalive, 0, kMaxInt, kMutable);
  table.Int("timeout", &c.timeout, 0, kMaxInt, kMutable);
  table.Int("maxclients", &c.maxclients, 1, kMaxInt, kMutable);
  table.Dir("dir", &c.dir, kProtected);
  table.Int("databases", &c.databases, 1, kMaxInt, kImmutable);
  table.String("requirepass", &c.requirepass, kMutable, ConfigHook::kDefaultPassword);
  table.Enum("enable-debug-command", &c.enable_debug_command, kNoYesLocal, kImmutable);
  table.Enum("enable-module-command", &c.enable_module_command, kNoYesLocal, kImmutable);
  table.Int("hz", &c.hz, 0, kMaxInt, kMutable, ConfigHook::kClampHz);
  table.Enum("loglevel", &c.loglevel, kLogLevels, kMutable, ConfigHook::kSetLogLevel);
  table.String("logfile", &c.logfile, kImmutable);
  table.Bool("daemonize", &c.daemonize, kImmutable);
  table.String("pidfile", &c.pidfile, kImmutable);
  table.Save("save", &c.save, kMutable);
  table.Bool("appendonly", &c.appendonly, kMutable, ConfigHook::kPersistence);
  table.Enum("appendfsync", &c.appendfsync, kFsyncPolicies, kMutable, ConfigHook::kPersistence);
  table.String("appendfilename", &c.appendfilename, kImmutable);
  table.String("dbfilename", &c.dbfilename, kProtected);
  table.Enum("snapshot-format", &c.snapshot_format, {"goblin", "rdb"}, kMutable);
  table.String("appenddirname", &c.appenddirname, kImmutable);
  table.Int("auto-aof-rewrite-percentage", &c.auto_aof_rewrite_percentage, 0, kMaxInt, kMutable);
  table.Memory("auto-aof-rewrite-min-size", &c.auto_aof_rewrite_min_size, 0, kMaxLong, kMutable);
  table.Bool("aof-load-truncated", &c.aof_load_truncated, kMutable);
  table.Bool("stop-writes-on-bgsave-error", &c.stop_writes_on_bgsave_error, kMutable);
  table.Bool("rdbcompression", &c.rdbcompression, kMutable);
  table.Bool("rdbchecksum", &c.rdbchecksum, kImmutable);
  table.Bool("aof-use-rdb-preamble", &c.aof_use_rdb_preamble, kMutable);
  table.Bool("aof-timestamp-enabled", &c.aof_timestamp_enabled, kMutable);
  table.Bool("no-appendfsync-on-rewrite", &c.no_appendfsync_on_rewrite, kMutable);
  table.Bool("rdb-del-sync-files", &c.rdb_del_sync_files, kMutable);
  table.Enum("sanitize-dump-payload", &c.sanitize_dump_payload, {"no", "yes", "clients"}, kMutable);
  table.Int("key-load-delay", &c.key_load_delay, kMinInt, kMaxInt, kMutable);
  table.Hidden();
  table.Int("rdb-key-save-delay", &c.rdb_key_save_delay, kMinInt, kMaxInt, kMutable);
  table.Hidden();
  table.Memory("proto-max-bulk-len", &c.proto_max_bulk_len, kMiB, kMaxLong, kMutable);
  table.Memory("client-query-buffer-limit", &c.client_query_buffer_limit, kMiB, kMaxLong, kMutable);
  table.Memory("maxmemory", &c.maxmemory, 0, kMaxLong, kMutable);
  table.Hook(ConfigHook::kClientEviction);  // maxmemory-clients may be a percentage of it
  table.Memory("client-reply-size-limit", &c.client_reply_size_limit, 0, kMaxLong, kMutable);
  table.Enum("maxmemory-policy", &c.maxmemory_policy, kEvictionPolicies, kMutable,
             ConfigHook::kAccessClock);
  table.Int("maxmemory-samples", &c.maxmemory_samples, 1, 64, kMutable);
  table.Int("lfu-log-factor", &c.lfu_log_factor, 0, kMaxInt, kMutable, ConfigHook::kAccessClock);
  table.Int("lfu-decay-time", &c.lfu_decay_time, 0, kMaxInt, kMutable, ConfigHook::kAccessClock);
  table.OutputLimits("client-output-buffer-limit", &c.client_output_buffer_limit, kMutable);
  table.Int("maxmemory-eviction-tenacity", &c.maxmemory_eviction_tenacity, 0, 100, kMutable);
  table.Validated("maxmemory-clients", &c.maxmemory_clients, kMutable, NormalizeMemoryOrPercent);
  table.Hook(ConfigHook::kClientEviction);
  table.Int("zset-max-listpack-entries", &c.zset_max_listpack_entries, 0, kMaxLong, kMutable);
  table.Alias("zset-max-ziplist-entries");
  table.Memory("zset-max-listpack-value", &c.zset_max_listpack_value, 0, kMaxLong, kMutable);
  table.Alias("zset-max-ziplist-value");
  table.Int("hash-max-listpack-entries", &c.hash_max_listpack_entries, 0, kMaxLong, kMutable);
  table.Alias("hash-max-ziplist-entries");
  table.Memory("hash-max-listpack-value", &c.hash_max_listpack_value, 0, kMaxLong, kMutable);
  table.Alias("hash-max-ziplist-value");
  table.Int("set-max-intset-entries", &c.set_max_intset_entries, 0, kMaxLong, kMutable);
  table.Int("set-max-listpack-entries", &c.set_max_listpack_entries, 0, kMaxLong, kMutable);
  table.Memory("set-max-listpack-value", &c.set_max_listpack_value, 0, kMaxLong, kMutable);
  table.Int("list-max-listpack-size", &c.list_max_listpack_size, kMinInt, kMaxInt, kMutable);
  table.Alias("list-max-ziplist-size");
  table.Int("list-compress-depth", &c.list_compress_depth, 0, kMaxInt, kMutable);
  table.Memory("repl-backlog-size", &c.repl_backlog_size, 1, kMaxLong, kMutable,
               ConfigHook::kReplBacklog);
  table.Int("repl-backlog-ttl", &c.repl_backlog_ttl, 0, kMaxInt, kMutable);
  table.Int("repl-ping-replica-period", &c.repl_ping_replica_period, 1, kMaxInt, kMutable);
  table.Alias("repl-ping-slave-period");
  table.Int("repl-timeout", &c.repl_timeout, 1, kMaxInt, kMutable);
  table.Int("shutdown-timeout", &c.shutdown_timeout, 0, kMaxInt, kMutable);
  table.ShutdownFlagWords("shutdown-on-sigterm", &c.shutdown_on_sigterm, kMutable);
  table.ShutdownFlagWords("shutdown-on-sigint", &c.shutdown_on_sigint, kMutable);
  table.Bool("repl-diskless-sync", &c.repl_diskless_sync, kMutable);
  table.Int("repl-diskless-sync-delay", &c.repl_diskless_sync_delay, 0, kMaxInt, kMutable);
  table.Int("repl-diskless-sync-max-replicas", &c.repl_diskless_sync_max_replicas, 0, kMaxInt,
            kMutable);
  table.Bool("repl-disable-tcp-nodelay", &c.repl_disable_tcp_nodelay, kMutable);
  table.Int("min-replicas-to-write", &c.min_replicas_to_write, 0, kMaxInt, kMutable);
  table.Alias("min-slaves-to-write");
  table.Int("min-replicas-max-lag", &c.min_replicas_max_lag, 0, kMaxInt, kMutable);
  table.Alias("min-slaves-max-lag");
  table.ReplicaOfMaster("replicaof", &c.replicaof);
  table.Alias("slaveof");
  table.String("masterauth", &c.masterauth, kMutable);
  table.String("masteruser", &c.masteruser, kMutable);
  table.Bool("replica-read-only", &c.replica_read_only, kMutable);
  table.Alias("slave-read-only");
  table.Bool("replica-serve-stale-data", &c.replica_serve_stale_data, kMutable);
  table.Alias("slave-serve-stale-data");
  table.Int("replica-priority", &c.replica_priority, 0, kMaxInt, kMutable);
  table.Alias("slave-priority");
  table.String("replica-announce-ip", &c.replica_announce_ip, kMutable);
  table.Alias("slave-announce-ip");
  table.Int("replica-announce-port", &c.replica_announce_port, 0, 65535, kMutable);
  table.Alias("slave-announce-port");
  table.Bool("replica-announced", &c.replica_announced, kMutable);
  table.Bool("replica-ignore-maxmemory", &c.replica_ignore_maxmemory, kMutable);
  table.Alias("slave-ignore-maxmemory");
  table.Enum("propagation-error-behavior", &c.propagation_error_behavior,
             {"ignore", "panic", "panic-on-replicas"}, kMutable);
  table.Bool("replica-ignore-disk-write-errors", &c.replica_ignore_disk_write_errors, kMutable);
  table.Bool("replica-lazy-flush", &c.replica_lazy_flush, kMutable);
  table.Alias("slave-lazy-flush");
  table.Enum("repl-diskless-load", &c.repl_diskless_load, {"disabled", "on-empty-db", "swapdb"},
             kMutable);
  table.Int("slowlog-log-slower-than", &c.slowlog_log_slower_than, -1, kMaxLong, kMutable);
  table.Int("slowlog-max-len", &c.slowlog_max_len, 0, kMaxLong, kMutable);
  table.Int("latency-monitor-threshold", &c.latency_monitor_threshold, 0, kMaxLong, kMutable);
  table.Bool("latency-tracking", &c.latency_tracking, kMutable);
  table.Percentiles("latency-tracking-info-percentiles", &c.latency_tracking_info_percentiles,
                    kMutable);
  table.Int("busy-reply-threshold", &c.busy_reply_threshold, 0, kMaxLong, kMutable);
  table.Alias("lua-time-limit");
  table.Memory("lua-memory-limit", &c.lua_memory_limit, 0, kMaxLong, kMutable);
  table.NotifyClasses("notify-keyspace-events", &c.notify_keyspace_events, kMutable);
  table.Memory("stream-node-max-bytes", &c.stream_node_max_bytes, 0, kMaxLong, kMutable);
  table.Int("stream-node-max-entries", &c.stream_node_max_entries, 0, kMaxLong, kMutable);
  table.Int("tracking-table-max-keys", &c.tracking_table_max_keys, 0, kMaxLong, kMutable);
  table.Memory("hll-sparse-max-bytes", &c.hll_sparse_max_bytes, 0, kMaxLong, kMutable);
  table.Enum("enable-protected-configs", &c.enable_protected_configs, kNoYesLocal, kImmutable);
  table.Enum("oom-score-adj", &c.oom_score_adj, {"no", "yes", "relative", "absolute"}, kMutable,
             ConfigHook::kOomScore);
  table.Bool("disable-thp", &c.disable_thp, kImmutable);
  table.Enum("supervised", &c.supervised, {"upstart", "systemd", "auto", "no"}, kImmutable);
  table.Bool("jemalloc-bg-thread", &c.jemalloc_bg_thread, kMutable, ConfigHook::kAllocatorThreads);
  table.Bool("crash-log-enabled", &c.crash_log_enabled, kMutable, ConfigHook::kCrashLog);
  table.Validated("oom-score-adj-values", &c.oom_score_adj_values, kMutable, NormalizeOomScores);
  table.Hook(ConfigHook::kOomScore);

  // TLS (net/tls.h): a change reloads the certificates and settings, all or nothing.
  Config::Tls& tls = c.tls;
  table.Int("tls-port", &tls.port, 0, 65535, kMutable, ConfigHook::kTlsPort);
  for (auto [name, field] : {std::pair{"tls-cert-file", &tls.cert_file},
                             {"tls-key-file", &tls.key_file},
                             {"tls-key-file-pass", &tls.key_file_pass},
                             {"tls-client-cert-file", &tls.client_cert_file},
                             {"tls-client-key-file", &tls.client_key_file},
                             {"tls-client-key-file-pass", &tls.client_key_file_pass},
                             {"tls-ca-cert-file", &tls.ca_cert_file},
                             {"tls-ca-cert-dir", &tls.ca_cert_dir},
                             {"tls-dh-params-file", &tls.dh_params_file},
                             {"tls-ciphers", &tls.ciphers},
                             {"tls-ciphersuites", &tls.ciphersuites},
                             {"tls-protocols", &tls.protocols}}) {
    table.String(name, field, kMutable, ConfigHook::kTlsConfigure);
  }
  table.Enum("tls-auth-clients", &tls.auth_clients, {"no", "yes", "optional"}, kMutable,
             ConfigHook::kTlsConfigure);
  table.Bool("tls-prefer-server-ciphers", &tls.prefer_server_ciphers, kMutable,
             ConfigHook::kTlsConfigure);
  table.Bool("tls-session-caching", &tls.session_caching, kMutable, ConfigHook::kTlsConfigure);
  table.Int("tls-session-cache-size", &tls.session_cache_size, 0, kMaxInt, kMutable,
            ConfigHook::kTlsConfigure);
  table.Int("tls-session-cache-timeout", &tls.session_cache_timeout, 0, kMaxInt, kMutable,
            ConfigHook::kTlsConfigure);
  table.Bool("tls-replication", &tls.replication, kMutable, ConfigHook::kTlsConfigure);
  // The cluster bus speaks plain TCP; tls-cluster's one effect is MIGRATE speaking TLS.
  table.Bool("tls-cluster", &tls.cluster, kMutable, ConfigHook::kTlsConfigure);

  Config::Cluster& cluster = c.cluster;
  table.Bool("cluster-enabled", &cluster.enabled, kImmutable);
  table.String("cluster-config-file", &cluster.config_file, kImmutable);
  table.Int("cluster-node-timeout", &cluster.node_timeout, 0, kMaxLong, kMutable);
  table.Int("cluster-port", &cluster.port, 0, 65535, kImmutable);
  table.String("cluster-announce-ip", &cluster.announce_ip, kMutable);
  table.String("cluster-announce-hostname", &cluster.announce_hostname, kMutable);
  table.String("cluster-announce-human-nodename", &cluster.announce_human_nodename, kMutable);
  table.Int("cluster-announce-port", &cluster.announce_port, 0, 65535, kMutable);
  table.Int("cluster-announce-tls-port", &cluster.announce_tls_port, 0, 65535, kMutable);
  table.Int("cluster-announce-bus-port", &cluster.announce_bus_port, 0, 65535, kMutable);
  table.Enum("cluster-preferred-endpoint-type", &cluster.preferred_endpoint_type,
             {"ip", "hostname", "unknown-endpoint"}, kMutable);
  table.Bool("cluster-require-full-coverage", &cluster.require_full_coverage, kMutable);
  table.Bool("cluster-allow-reads-when-down", &cluster.allow_reads_when_down, kMutable);
  table.Bool("cluster-allow-pubsubshard-when-down", &cluster.allow_pubsubshard_when_down, kMutable);
  table.Int("cluster-replica-validity-factor", &cluster.replica_validity_factor, 0, kMaxInt,
            kMutable);
  table.Alias("cluster-slave-validity-factor");
  table.Int("cluster-migration-barrier", &cluster.migration_barrier, 0, kMaxInt, kMutable);
  table.Bool("cluster-allow-replica-migration", &cluster.allow_replica_migration, kMutable);
  table.Bool("cluster-replica-no-failover", &cluster.replica_no_failover, kMutable);
  table.Alias("cluster-slave-no-failover");
  table.Memory("cluster-link-sendbuf-limit", &cluster.link_sendbuf_limit, 0, kMaxLong, kMutable);

  table.String("aclfile", &c.acl.file, kImmutable);
  table.Int("acllog-max-len", &c.acl.log_max_len, 0, kMaxLong, kMutable);
  table.Enum("acl-pubsub-default", &c.acl.pubsub_default, {"allchannels", "resetchannels"},
             kMutable, ConfigHook::kAclPubsubDefault);

  table.Bool("lazyfree-lazy-eviction", &c.lazyfree.eviction, kMutable);
  table.Bool("lazyfree-lazy-expire", &c.lazyfree.expire, kMutable);
  table.Bool("lazyfree-lazy-server-del", &c.lazyfree.server_del, kMutable);
  table.Bool("lazyfree-lazy-user-del", &c.lazyfree.user_del, kMutable);

  // No effect in Goblin (Config::Inert).
  Config::Inert& inert = c.inert;
  for (auto [name, field, mutability] :
       {std::tuple{"activerehashing", &inert.activerehashing, kMutable},
        {"dynamic-hz", &inert.dynamic_hz, kMutable},
        {"lazyfree-lazy-user-flush", &inert.lazyfree_lazy_user_flush, kMutable},
        {"io-threads-do-reads", &inert.io_threads_do_reads, kImmutable},
        {"always-show-logo", &inert.always_show_logo, kImmutable},
        {"set-proc-title", &inert.set_proc_title, kImmutable},
        {"syslog-enabled", &inert.syslog_enabled, kImmutable},
        {"crash-memcheck-enabled", &inert.crash_memcheck_enabled, kMutable},
        {"aof-rewrite-incremental-fsync", &inert.aof_rewrite_incremental_fsync, kMutable},
        {"rdb-save-incremental-fsync", &inert.rdb_save_incremental_fsync, kMutable},
        {"aof-disable-auto-gc", &inert.aof_disable_auto_gc, kMutable}}) {
    table.Bool(name, field, mutability);
    table.Inert();
  }
  table.Bool("activedefrag", &inert.activedefrag, kMutable);
  table.OnlyValue("no",
                  "Active defragmentation cannot be enabled: Goblin compacts its structures "
                  "with GOBLIN.OPTIMIZE instead");
  for (auto [name, field, min, max, mutability] :
       {std::tuple{"active-defrag-threshold-lower", &inert.active_defrag_threshold_lower,
                   int64_t{0}, int64_t{1000}, kMutable},
        {"active-defrag-threshold-upper", &inert.active_defrag_threshold_upper, 0, 1000, kMutable},
        {"active-defrag-cycle-min", &inert.active_defrag_cycle_min, 1, 99, kMutable},
        {"active-defrag-cycle-max", &inert.active_defrag_cycle_max, 1, 99, kMutable},
        {"active-defrag-max-scan-fields", &inert.active_defrag_max_scan_fields, 1, kMaxLong,
         kMutable},
        {"active-expire-effort", &inert.active_expire_effort, 1, 10, kMutable},
        {"io-threads", &inert.io_threads, 1, 128, kImmutable},
        {"socket-mark-id", &inert.socket_mark_id, 0, int64_t{UINT32_MAX}, kImmutable}}) {
    table.Int(name, field, min, max, mutability);
    table.Inert();
  }
  table.Memory("active-defrag-ignore-bytes", &inert.active_defrag_ignore_bytes, 1, kMaxLong,
               kMutable);
  table.Inert();
  table.Int("loading-process-events-interval-bytes", &inert.loading_process_events_interval_bytes,
            1024, kMaxInt, kMutable);
  table.Inert();
  table.Hidden();
  for (auto [name, field, mutability] :
       {std::tuple{"server_cpulist", &inert.server_cpulist, kImmutable},
        {"bio_cpulist", &inert.bio_cpulist, kImmutable},
        {"aof_rewrite_cpulist", &inert.aof_rewrite_cpulist, kImmutable},
        {"bgsave_cpulist", &inert.bgsave_cpulist, kImmutable},
        {"proc-title-template", &inert.proc_title_template, kMutable},
        {"syslog-ident", &inert.syslog_ident, kImmutable},
        {"bind-source-addr", &inert.bind_source_addr, kMutable},
        {"ignore-warnings", &inert.ignore_warnings, kMutable},
        {"locale-collate", &inert.locale_collate, kMutable}}) {
    table.String(name, field, mutability);
    table.Inert();
  }
  table.Enum(
      "syslog-facility", &inert.syslog_facility,
      {"user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"},
      kImmutable);
  table.Inert();
}

ConfigRegistry::~ConfigRegistry() = default;

const ConfigRegistry::Option* ConfigRegistry::Find(std::string_view name) const {
  std::string lower = AsciiLower(name);
  for (const Option& option : options_) {
    if (option.name == lower) return &option;
    for (const std::string& alias : option.aliases) {
      if (alias == lower) return &option;
    }
  }
  return nullptr;
}

bool ConfigRegistry::IsKnown(std::string_view name) const { return Find(name) != nullptr; }

std::string ConfigRegistry::Apply(std::string_view name, const std::vector<std::string>& values) {
  const Option* option = Find(name);
  if (option == nullptr) return kBadDirective;
  std::string error = option->Set(values);
  if (error.empty() && option->inert &&
      std::find(inert_set_.begin(), inert_set_.end(), option->name) == inert_set_.end()) {
    inert_set_.push_back(option->name);
  }
  return error;
}

std::string ConfigRegistry::SetAtRuntime(
    const std::vector<std::pair<std::string_view, std::string_view>>& pairs, bool allow_protected,
    std::vector<ConfigChange>* changed) {
  std::vector<const Option*> options;
  std::string unknown, error, error_name;
  for (const auto& [name, value] : pairs) {
    const Option* option = Find(name);
    if (option == nullptr) {
      if (error.empty() && unknown.empty()) unknown = errors::Quote(name);
      continue;
    }
    if (!error.empty() || !unknown.empty()) continue;
    if (option->mutability == Option::kImmutable ||
        (option->mutability == Option::kProtected && !allow_protected)) {
      error = option->mutability == Option::kImmutable ? "can't set immutable config"
                                                       : "can't set protected config";
      error_name = errors::Quote(name);
      continue;
    }
    for (const Option* earlier : options) {
      if (earlier == option) {
        error = "duplicate parameter";
        error_name = errors::Quote(name);
      }
    }
    options.push_back(option);
  }
  if (!unknown.empty()) {
    return "ERR Unknown option or number of arguments for CONFIG SET - '" + unknown + "'";
  }
  if (error.empty()) {
    Config saved = *config_;
    for (size_t i = 0; i < options.size(); ++i) {
      error = options[i]->Set({std::string(pairs[i].second)});
      if (!error.empty()) {
        *config_ = saved;
        error_name = options[i]->name;
        break;
      }
    }
  }
  if (!error.empty()) {
    return errors::ConfigSetFailed(error_name, error);
  }
  for (const Option* option : options) changed->push_back({option->name, option->hook});
  return "";
}

std::string ConfigRegistry::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "Fatal error, can't open config file '" + path + "': " + std::strerror(errno);
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    std::vector<std::string> words;
    auto fail = [&](const std::string& reason) {
      return "Reading the configuration file '" + path + "', at line " +
             std::to_string(line_number) + "\n>>> '" + line + "'\n" + reason;
    };
    if (!SplitInlineArgs(line, &words)) return fail("Unbalanced quotes in configuration line");
    if (words.empty()) continue;
    if (AsciiLower(words[0]) == "user") {
      // A user of the ACL (server/acl/access_control.h): its rules are checked at startup.
      if (words.size() < 2) return fail(kBadDirective);
      std::vector<std::string> user(words.begin() + 1, words.end());
      for (const std::vector<std::string>& earlier : config_->acl.users) {
        if (earlier[0] == user[0]) {
          return fail("Error in user declaration '" + user[0] +
                      "': Duplicate user found. A user can only be defined once in config files");
        }
      }
      if (commands_ != nullptr) {
        std::string error = acl::AccessControl::CheckDeclaration(*commands_, user);
        if (!error.empty()) return fail("Error in user declaration " + error);
      }
      config_->acl.users.push_back(std::move(user));
      continue;
    }
    if (AsciiLower(words[0]) == "include") {
      if (words.size() != 2) return fail(kBadDirective);
      std::string error = LoadFile(words[1]);
      if (!error.empty()) return error;
      continue;
    }
    // A directive with no value is what Redis's own test harness writes for `save ""`: the
    // options that take a list take an empty one, the others refuse it.
    std::vector<std::string> values(words.begin() + 1, words.end());
    std::string error = Apply(words[0], values);
    if (!error.empty()) return fail(error);
  }
  config_->config_file = path;
  return "";
}

std::string ConfigRegistry::LoadCommandLine(int argc, char** argv) {
  int i = 1;
  if (i < argc && std::strncmp(argv[i], "--", 2) != 0) {
    char resolved[4096];
    std::string path = argv[i];
    if (realpath(argv[i], resolved) != nullptr) path = resolved;
    std::string error = LoadFile(path);
    if (!error.empty()) return error;
    ++i;
  }
  while (i < argc) {
    std::string name = argv[i];
    if (name.size() < 3 || name.compare(0, 2, "--") != 0) {
      return std::string("Invalid argument '") + argv[i] + "': options start with --";
    }
    name = name.substr(2);
    std::vector<std::string> values;
    ++i;
    // Values run until the next --option; "--save ''" gives one empty value.
    while (i < argc && !(std::strncmp(argv[i], "--", 2) == 0 && std::strlen(argv[i]) > 2)) {
      values.push_back(argv[i++]);
    }
    if (values.empty()) {
      return "option '--" + name + "' needs a value (" + kBadDirective + ")";
    }
    if (AsciiLower(name) == "user") {
      config_->acl.users.push_back(std::move(values));
      continue;
    }
    std::string error = Apply(name, values);
    if (!error.empty()) return "option '--" + name + "': " + error;
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> ConfigRegistry::Get(
    std::string_view pattern) const {
  std::vector<std::pair<std::string, std::string>> out;
  // A plain name is answered under the spelling it was asked with, as Redis does.
  if (pattern.find_first_of("*?[") == std::string_view::npos) {
    if (const Option* option = Find(pattern)) out.emplace_back(pattern, option->Format());
    return out;
  }
  for (const Option& option : options_) {
    if (option.hidden) continue;
    if (GlobMatch(pattern, option.name, /*nocase=*/true)) {
      out.emplace_back(option.name, option.Format());
    }
    for (const std::string& alias : option.aliases) {
      if (GlobMatch(pattern, alias, true)) out.emplace_back(alias, option.Format());
    }
  }
  return out;
}

std::string ConfigRegistry::Rewrite(const std::vector<std::string>& user_lines) const {
  if (config_->config_file.empty()) {
    return "The server is running without a config file";
  }
  // Keep comments and unknown-to-us lines out: the file is the table, one line per option.
  std::string text = "# Rewritten by goblin-server CONFIG REWRITE\n";
  for (const Option& option : options_) {
    std::string value = option.Format();
    if (option.kind == Option::Kind::kReplicaOf && value.empty()) continue;  // a master
    if (value.empty()) {
      value = "\"\"";  // an empty save, string or event class list
    } else if ((option.kind == Option::Kind::kString && option.validate == nullptr) ||
               option.kind == Option::Kind::kDir) {
      value = QuoteIfNeeded(value);  // one value, spaces and all ("{title} {listen-addr}")
    }
    text += option.name + " " + value + "\n";
  }
  for (const std::string& line : user_lines) text += line + "\n";
  std::string tmp = config_->config_file + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return std::string("Rewriting config file: ") + std::strerror(errno);
    out << text;
    if (!out.flush()) return std::string("Rewriting config file: ") + std::strerror(errno);
  }
  if (std::rename(tmp.c_str(), config_->config_file.c_str()) != 0) {
    return std::string("Rewriting config file: ") + std::strerror(errno);
  }
  return "";
}

}  // namespace goblin
