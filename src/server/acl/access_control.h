// Access control as Redis 7.2 has it: the users (the `default` user always among them), how a
// client logs in, the security log (ACL LOG), and the users' two homes, the ACL file (aclfile,
// ACL LOAD, ACL SAVE) and `user` lines in the configuration file.
//
// Invariants:
//  1. A User object lives as long as its name is in the table: clients point at it. Removing
//     one (ACL DELUSER, ACL LOAD) hands it back to the caller, which drops the clients logged
//     in as it before the object goes (Server::DropUsers).
//  2. ACL SETUSER and ACL LOAD are all or nothing: rules are applied to a copy that replaces the
//     user, or the new table that replaces the old one, only when every rule was valid.
//  3. The default user is the same object for the server's life; ACL LOAD copies the file's
//     `default` rules into it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/user.h"

namespace goblin::acl {

// Where a refusal happened, as ACL LOG's "context" names it.
enum class LogContext : uint8_t { kTopLevel, kMulti, kLua, kModule };

struct LogEntry {
  uint64_t count = 1;
  Denial reason = Denial::kNone;
  LogContext context = LogContext::kTopLevel;
  std::string object;    // the command, key or channel refused; AUTH's command name
  std::string username;  // the user refused (the one named, for a failed AUTH)
  std::string client_info;
  uint64_t entry_id = 0;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
};

std::string_view DenialName(Denial reason);
std::string_view LogContextName(LogContext context);

// The -NOPERM text of a refusal (without the "NOPERM " prefix): verbose names the key or
// channel refused (ACL DRYRUN), as Redis's getAclErrorMessage.
std::string DenialMessage(Denial reason, const User& user, const Command& command,
                          std::string_view refused, bool verbose);

class AccessControl {
 public:
  using Users = std::map<std::string, std::unique_ptr<User>, std::less<>>;

  // Starts with the default user alone: on, no password, every command, key and channel.
  explicit AccessControl(const CommandTable& commands);

  // acl-pubsub-default: whether users and selectors created from now on start with every
  // channel.
  void set_pubsub_default(bool all_channels) {
    pubsub_default_ = all_channels ? static_cast<uint32_t>(Selector::kAllChannels) : 0;
  }
  RuleContext context() const { return {&commands_, pubsub_default_}; }

  User& default_user() { return *default_; }
  const User& default_user() const { return *default_; }
  User* Find(std::string_view name);
  const Users& users() const { return users_; }

  // ACL SETUSER: applies rules to the user, created if missing, all or nothing. Returns "" or
  // the error (without the "ERR " prefix).
  std::string SetUser(std::string_view name, std::span<const std::string_view> rules);
  // ACL DELUSER: the user, out of the table; null when there was none.
  std::unique_ptr<User> Remove(std::string_view name);

  // AUTH and HELLO: the user that name and password open, or null.
  User* Authenticate(std::string_view name, std::string_view password);
  // requirepass: the default user's one password, or nopass when empty.
  void SetDefaultPassword(std::string_view password);
  // A client needs AUTH before anything else when the default user has a password or is off.
  bool DefaultNeedsAuth() const { return !default_->nopass() || !default_->enabled(); }

  // A `user` line of the configuration file (name, rules...) checked as Redis checks it while
  // reading the file: "" or the reason, naming the word at fault. Unknown commands pass here
  // (they are refused at startup, as Redis refuses them once modules are loaded).
  static std::string CheckDeclaration(const CommandTable& commands,
                                      const std::vector<std::string>& line);

  // The startup load: `user` lines of the configuration file (each: name, rules...), then the
  // ACL file. Returns "" or what Redis logs before it exits.
  std::string LoadAtStartup(const std::vector<std::vector<std::string>>& config_users,
                            const std::string& acl_file);
  // ACL LOAD: the file replaces every user, or nothing changes. Returns "" or the errors, one
  // sentence each; *dropped receives the users replaced (the default user is kept and updated).
  std::string LoadFile(const std::string& path, std::vector<std::unique_ptr<User>>* dropped);
  // ACL SAVE: "" or why not (logged as Redis logs it).
  std::string SaveFile(const std::string& path) const;
  // "user <name> <rules>", for ACL LIST, the ACL file and CONFIG REWRITE.
  static std::string UserLine(const User& user);

  // ACL LOG.
  void Log(Denial reason, LogContext context, std::string object, std::string username,
           std::string client_info, int64_t now_ms, size_t max_length);
  const std::deque<LogEntry>& log() const { return log_; }
  void ResetLog() { log_.clear(); }

  // INFO stats: acl_access_denied_auth, _cmd, _key, _channel.
  struct Counters {
    uint64_t auth = 0;
    uint64_t command = 0;
    uint64_t key = 0;
    uint64_t channel = 0;
  };
  const Counters& denied() const { return denied_; }
  void ResetCounters() { denied_ = {}; }

 private:
  std::unique_ptr<User> NewDefaultUser() const;
  // Validates and applies one file's text into a fresh table; "" or the errors.
  std::string ParseFile(const std::string& path, std::string_view text, Users* out) const;

  const CommandTable& commands_;
  uint32_t pubsub_default_ = 0;
  Users users_;
  User* default_ = nullptr;
  std::deque<LogEntry> log_;
  uint64_t next_entry_id_ = 0;
  Counters denied_;
};

}  // namespace goblin::acl
