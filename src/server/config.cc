#include "server/config.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/ascii.h"
#include "core/glob.h"
#include "core/string_number.h"
#include "resp/request_parser.h"
#include "server/errors.h"

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
    kOutputLimits
  };
  enum Mutability { kImmutable, kMutable, kProtected };
  std::string name;
  std::vector<std::string> aliases;
  Kind kind;
  Mutability mutability;
  void* field;
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  std::vector<std::string> choices;  // kEnum

  std::string Format() const;
  std::string Set(const std::vector<std::string>& values) const;
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
  bool single = values.size() == 1;
  switch (kind) {
    case Kind::kBool: {
      if (!single) return "wrong number of arguments";
      std::string v = AsciiLower(values[0]);
      if (v != "yes" && v != "no") return "argument must be 'yes' or 'no'";
      *static_cast<bool*>(field) = v == "yes";
      return "";
    }
    case Kind::kInt:
    case Kind::kMemory: {
      if (!single) return "wrong number of arguments";
      int64_t v;
      bool ok =
          kind == Kind::kInt ? ParseInt64(values[0], &v) : ParseMemory(values[0], &v) && v >= 0;
      if (!ok) {
        return kind == Kind::kInt ? "argument couldn't be parsed into an integer"
                                  : "argument must be a memory value";
      }
      if (v < min || v > max) {
        return "argument must be between " + Int64ToString(min) + " and " + Int64ToString(max) +
               " inclusive";
      }
      *static_cast<int64_t*>(field) = v;
      return "";
    }
    case Kind::kOctal: {
      if (!single) return "wrong number of arguments";
      char* end;
      errno = 0;
      long long v = std::strtoll(values[0].c_str(), &end, 8);
      if (values[0].empty() || *end != '\0' || errno != 0 || v < 0 || v > 0777) {
        return "argument couldn't be parsed into an integer";
      }
      *static_cast<int64_t*>(field) = v;
      return "";
    }
    case Kind::kString:
      if (!single) return "wrong number of arguments";
      *static_cast<std::string*>(field) = values[0];
      return "";
    case Kind::kEnum: {
      if (!single) return "wrong number of arguments";
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
      if (!single) return "wrong number of arguments";
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
      if (words.size() % 2 != 0) return "Invalid save parameters";
      std::vector<SaveRule> rules;
      for (size_t i = 0; i < words.size(); i += 2) {
        SaveRule rule;
        if (!ParseInt64(words[i], &rule.seconds) || !ParseInt64(words[i + 1], &rule.changes) ||
            rule.seconds < 1 || rule.changes < 0) {
          return "Invalid save parameters";
        }
        rules.push_back(rule);
      }
      *static_cast<std::vector<SaveRule>*>(field) = std::move(rules);
      return "";
    }
    case Kind::kOutputLimits: {
      // "<class> <hard> <soft> <soft seconds>" groups, in one value or several.
      std::vector<std::string> words;
      for (const std::string& value : values) {
        std::istringstream in(value);
        for (std::string word; in >> word;) words.push_back(word);
      }
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
    case Kind::kBind: {
      std::vector<std::string> addresses;
      for (const std::string& value : values) {
        std::istringstream in(value);
        for (std::string word; in >> word;) addresses.push_back(word);
      }
      if (addresses.empty()) return "wrong number of arguments";
      if (addresses.size() > 16) return "Too many bind addresses specified.";
      *static_cast<std::vector<std::string>*>(field) = std::move(addresses);
      return "";
    }
  }
  return "unknown option kind";
}

ConfigRegistry::ConfigRegistry(Config* config) : config_(config) {
  using Kind = Option::Kind;
  Config& c = *config;
  auto add = [this](Option option) { options_.push_back(std::move(option)); };
  const int64_t kMaxInt = INT32_MAX;
  constexpr auto kImmutable = Option::kImmutable;
  constexpr auto kMutable = Option::kMutable;
  constexpr auto kProtected = Option::kProtected;
  // name, aliases, kind, mutable at runtime, field, min, max, choices
  add({"port", {}, Kind::kInt, kMutable, &c.port, 0, 65535, {}});
  add({"bind", {}, Kind::kBind, kMutable, &c.bind, 0, 0, {}});
  add({"unixsocket", {}, Kind::kString, kImmutable, &c.unixsocket, 0, 0, {}});
  add({"unixsocketperm", {}, Kind::kOctal, kImmutable, &c.unixsocketperm, 0, 0777, {}});
  add({"protected-mode", {}, Kind::kBool, kMutable, &c.protected_mode, 0, 0, {}});
  add({"tcp-backlog", {}, Kind::kInt, kImmutable, &c.tcp_backlog, 0, kMaxInt, {}});
  add({"tcp-keepalive", {}, Kind::kInt, kMutable, &c.tcp_keepalive, 0, kMaxInt, {}});
  add({"timeout", {}, Kind::kInt, kMutable, &c.timeout, 0, kMaxInt, {}});
  add({"maxclients", {}, Kind::kInt, kMutable, &c.maxclients, 1, kMaxInt, {}});
  add({"dir", {}, Kind::kDir, kProtected, &c.dir, 0, 0, {}});
  add({"databases", {}, Kind::kInt, kImmutable, &c.databases, 1, kMaxInt, {}});
  add({"requirepass", {}, Kind::kString, kMutable, &c.requirepass, 0, 0, {}});
  add({"enable-debug-command",
       {},
       Kind::kEnum,
       kImmutable,
       &c.enable_debug_command,
       0,
       0,
       {"no", "yes", "local"}});
  add({"enable-module-command",
       {},
       Kind::kEnum,
       kImmutable,
       &c.enable_module_command,
       0,
       0,
       {"no", "yes", "local"}});
  add({"hz", {}, Kind::kInt, kMutable, &c.hz, 0, kMaxInt, {}});
  add({"loglevel",
       {},
       Kind::kEnum,
       kMutable,
       &c.loglevel,
       0,
       0,
       {"debug", "verbose", "notice", "warning", "nothing"}});
  add({"logfile", {}, Kind::kString, kImmutable, &c.logfile, 0, 0, {}});
  add({"daemonize", {}, Kind::kBool, kImmutable, &c.daemonize, 0, 0, {}});
  add({"pidfile", {}, Kind::kString, kImmutable, &c.pidfile, 0, 0, {}});
  add({"save", {}, Kind::kSave, kMutable, &c.save, 0, 0, {}});
  add({"appendonly", {}, Kind::kBool, kMutable, &c.appendonly, 0, 0, {}});
  add({"appendfsync",
       {},
       Kind::kEnum,
       kMutable,
       &c.appendfsync,
       0,
       0,
       {"always", "everysec", "no"}});
  add({"appendfilename", {}, Kind::kString, kImmutable, &c.appendfilename, 0, 0, {}});
  add({"dbfilename", {}, Kind::kString, kProtected, &c.dbfilename, 0, 0, {}});
  add({"appenddirname", {}, Kind::kString, kImmutable, &c.appenddirname, 0, 0, {}});
  add({"auto-aof-rewrite-percentage",
       {},
       Kind::kInt,
       kMutable,
       &c.auto_aof_rewrite_percentage,
       0,
       kMaxInt,
       {}});
  add({"auto-aof-rewrite-min-size",
       {},
       Kind::kMemory,
       kMutable,
       &c.auto_aof_rewrite_min_size,
       0,
       INT64_MAX,
       {}});
  add({"aof-load-truncated", {}, Kind::kBool, kMutable, &c.aof_load_truncated, 0, 0, {}});
  add({"stop-writes-on-bgsave-error",
       {},
       Kind::kBool,
       kMutable,
       &c.stop_writes_on_bgsave_error,
       0,
       0,
       {}});
  add({"rdbcompression", {}, Kind::kBool, kMutable, &c.rdbcompression, 0, 0, {}});
  add({"rdbchecksum", {}, Kind::kBool, kImmutable, &c.rdbchecksum, 0, 0, {}});
  add({"aof-use-rdb-preamble", {}, Kind::kBool, kMutable, &c.aof_use_rdb_preamble, 0, 0, {}});
  add({"aof-timestamp-enabled", {}, Kind::kBool, kMutable, &c.aof_timestamp_enabled, 0, 0, {}});
  add({"no-appendfsync-on-rewrite",
       {},
       Kind::kBool,
       kMutable,
       &c.no_appendfsync_on_rewrite,
       0,
       0,
       {}});
  add({"rdb-del-sync-files", {}, Kind::kBool, kMutable, &c.rdb_del_sync_files, 0, 0, {}});
  add({"key-load-delay", {}, Kind::kInt, kMutable, &c.key_load_delay, INT32_MIN, kMaxInt, {}});
  add({"proto-max-bulk-len",
       {},
       Kind::kMemory,
       kMutable,
       &c.proto_max_bulk_len,
       1024 * 1024,
       INT64_MAX,
       {}});
  add({"client-query-buffer-limit",
       {},
       Kind::kMemory,
       kMutable,
       &c.client_query_buffer_limit,
       1024 * 1024,
       INT64_MAX,
       {}});
  add({"maxmemory", {}, Kind::kMemory, kMutable, &c.maxmemory, 0, INT64_MAX, {}});
  add({"maxmemory-policy",
       {},
       Kind::kEnum,
       kMutable,
       &c.maxmemory_policy,
       0,
       0,
       {"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru",
        "allkeys-lfu", "allkeys-random", "noeviction"}});
  add({"maxmemory-samples", {}, Kind::kInt, kMutable, &c.maxmemory_samples, 1, 64, {}});
  add({"client-output-buffer-limit",
       {},
       Kind::kOutputLimits,
       kMutable,
       &c.client_output_buffer_limit,
       0,
       0,
       {}});
  add({"maxmemory-eviction-tenacity",
       {},
       Kind::kInt,
       kMutable,
       &c.maxmemory_eviction_tenacity,
       0,
       100,
       {}});
  add({"zset-max-listpack-entries",
       {"zset-max-ziplist-entries"},
       Kind::kInt,
       kMutable,
       &c.zset_max_listpack_entries,
       0,
       INT64_MAX,
       {}});
  add({"zset-max-listpack-value",
       {"zset-max-ziplist-value"},
       Kind::kMemory,
       kMutable,
       &c.zset_max_listpack_value,
       0,
       INT64_MAX,
       {}});
  add({"hash-max-listpack-entries",
       {"hash-max-ziplist-entries"},
       Kind::kInt,
       kMutable,
       &c.hash_max_listpack_entries,
       0,
       INT64_MAX,
       {}});
  add({"hash-max-listpack-value",
       {"hash-max-ziplist-value"},
       Kind::kMemory,
       kMutable,
       &c.hash_max_listpack_value,
       0,
       INT64_MAX,
       {}});
  add({"set-max-intset-entries",
       {},
       Kind::kInt,
       kMutable,
       &c.set_max_intset_entries,
       0,
       INT64_MAX,
       {}});
  add({"set-max-listpack-entries",
       {},
       Kind::kInt,
       kMutable,
       &c.set_max_listpack_entries,
       0,
       INT64_MAX,
       {}});
  add({"set-max-listpack-value",
       {},
       Kind::kMemory,
       kMutable,
       &c.set_max_listpack_value,
       0,
       INT64_MAX,
       {}});
  add({"list-max-listpack-size",
       {"list-max-ziplist-size"},
       Kind::kInt,
       kMutable,
       &c.list_max_listpack_size,
       INT32_MIN,
       INT32_MAX,
       {}});
  add({"slowlog-log-slower-than",
       {},
       Kind::kInt,
       kMutable,
       &c.slowlog_log_slower_than,
       -1,
       INT64_MAX,
       {}});
  add({"slowlog-max-len", {}, Kind::kInt, kMutable, &c.slowlog_max_len, 0, INT64_MAX, {}});
  add({"latency-monitor-threshold",
       {},
       Kind::kInt,
       kMutable,
       &c.latency_monitor_threshold,
       0,
       INT64_MAX,
       {}});
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
  if (option == nullptr) return "Bad directive or wrong number of arguments";
  return option->Set(values);
}

std::string ConfigRegistry::SetAtRuntime(
    const std::vector<std::pair<std::string_view, std::string_view>>& pairs,
    std::vector<std::string>* changed) {
  std::vector<const Option*> options;
  std::string unknown, error, error_name;
  for (const auto& [name, value] : pairs) {
    const Option* option = Find(name);
    if (option == nullptr) {
      if (error.empty() && unknown.empty()) unknown = errors::Quote(name);
      continue;
    }
    if (!error.empty() || !unknown.empty()) continue;
    if (option->mutability != Option::kMutable) {
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
    return "ERR CONFIG SET failed (possibly related to argument '" + error_name + "') - " + error;
  }
  for (const Option* option : options) changed->push_back(option->name);
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
    if (AsciiLower(words[0]) == "include") {
      if (words.size() != 2) return fail("Bad directive or wrong number of arguments");
      std::string error = LoadFile(words[1]);
      if (!error.empty()) return error;
      continue;
    }
    std::vector<std::string> values(words.begin() + 1, words.end());
    if (values.empty()) return fail("Bad directive or wrong number of arguments");
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
      return "option '--" + name + "' needs a value (Bad directive or wrong number of arguments)";
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
    if (GlobMatch(pattern, option.name, /*nocase=*/true)) {
      out.emplace_back(option.name, option.Format());
    }
    for (const std::string& alias : option.aliases) {
      if (GlobMatch(pattern, alias, true)) out.emplace_back(alias, option.Format());
    }
  }
  return out;
}

std::string ConfigRegistry::Rewrite() const {
  if (config_->config_file.empty()) {
    return "The server is running without a config file";
  }
  // Keep comments and unknown-to-us lines out: the file is the table, one line per option.
  std::string text = "# Rewritten by goblin-server CONFIG REWRITE\n";
  for (const Option& option : options_) {
    std::string value = option.Format();
    if (option.kind == Option::Kind::kSave && value.empty()) value = "\"\"";
    if (option.kind == Option::Kind::kString && value.empty()) value = "\"\"";
    text += option.name + " " + value + "\n";
  }
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
