#include "server/acl/access_control.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "persist/file_util.h"
#include "server/log.h"

namespace goblin::acl {

namespace {

// Entries of the same refusal within this many milliseconds are counted in one (Redis's
// ACL_LOG_GROUPING_MAX_TIME_DELTA); only the newest few entries are searched for one.
constexpr int64_t kLogGroupingMs = 60000;
constexpr size_t kLogGroupingScan = 10;

std::string_view Trim(std::string_view text, std::string_view blanks) {
  const size_t start = text.find_first_not_of(blanks);
  if (start == std::string_view::npos) return {};
  return text.substr(start, text.find_last_not_of(blanks) - start + 1);
}

std::vector<std::string_view> SplitOnSpaces(std::string_view line) {
  std::vector<std::string_view> words;
  size_t start = 0;
  while (true) {
    const size_t space = line.find(' ', start);
    words.push_back(line.substr(start, space - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return words;
}

}  // namespace

std::string_view DenialName(Denial reason) {
  switch (reason) {
    case Denial::kCommand:
      return "command";
    case Denial::kKey:
      return "key";
    case Denial::kChannel:
      return "channel";
    case Denial::kAuth:
      return "auth";
    case Denial::kNone:
      break;
  }
  return "unknown";
}

std::string_view LogContextName(LogContext context) {
  switch (context) {
    case LogContext::kTopLevel:
      return "toplevel";
    case LogContext::kMulti:
      return "multi";
    case LogContext::kLua:
      return "lua";
    case LogContext::kModule:
      return "module";
  }
  return "unknown";
}

std::string DenialMessage(Denial reason, const User& user, const Command& command,
                          std::string_view refused, bool verbose) {
  switch (reason) {
    case Denial::kKey:
      if (!verbose) return "No permissions to access a key";
      return "User " + user.name() + " has no permissions to access the '" +
             std::string(refused) + "' key";
    case Denial::kChannel:
      if (!verbose) return "No permissions to access a channel";
      return "User " + user.name() + " has no permissions to access the '" +
             std::string(refused) + "' channel";
    default:
      return "User " + user.name() + " has no permissions to run the '" + command.name +
             "' command";
  }
}

AccessControl::AccessControl(const CommandTable& commands) : commands_(commands) {
  std::unique_ptr<User> user = NewDefaultUser();
  default_ = user.get();
  users_.emplace("default", std::move(user));
}

std::unique_ptr<User> AccessControl::NewDefaultUser() const {
  auto user = std::make_unique<User>("default", pubsub_default_);
  for (std::string_view rule : {"+@all", "~*", "&*", "on", "nopass"}) user->Apply(rule, context());
  return user;
}

User* AccessControl::Find(std::string_view name) {
  auto found = users_.find(name);
  return found == users_.end() ? nullptr : found->second.get();
}

std::string AccessControl::SetUser(std::string_view name,
                                   std::span<const std::string_view> rules) {
  if (HasSpaces(name)) return "Usernames can't contain spaces or null characters";
  std::vector<std::string> merged;
  size_t unmatched = 0;
  if (!MergeSelectorArguments(rules, &merged, &unmatched)) {
    return "Unmatched parenthesis in acl selector starting at '" + std::string(rules[unmatched]) +
           "'.";
  }
  User* existing = Find(name);
  User staged(std::string(name), pubsub_default_);
  if (existing != nullptr) staged.TakeRulesOf(*existing);
  for (const std::string& rule : merged) {
    const RuleError error = staged.Apply(rule, context());
    if (error != RuleError::kNone) {
      return "Error in ACL SETUSER modifier '" + rule + "': " + std::string(RuleErrorText(error));
    }
  }
  if (existing == nullptr) {
    existing = users_.emplace(std::string(name), std::make_unique<User>(std::string(name), 0))
                   .first->second.get();
  }
  existing->TakeRulesOf(staged);
  return "";
}

std::unique_ptr<User> AccessControl::Remove(std::string_view name) {
  auto found = users_.find(name);
  if (found == users_.end() || found->second.get() == default_) return nullptr;
  std::unique_ptr<User> user = std::move(found->second);
  users_.erase(found);
  return user;
}

User* AccessControl::Authenticate(std::string_view name, std::string_view password) {
  User* user = Find(name);
  return user != nullptr && user->Accepts(password) ? user : nullptr;
}

void AccessControl::SetDefaultPassword(std::string_view password) {
  default_->Apply("resetpass", context());
  default_->Apply(password.empty() ? std::string("nopass") : ">" + std::string(password),
                  context());
}

std::string AccessControl::CheckDeclaration(const CommandTable& commands,
                                            const std::vector<std::string>& line) {
  std::vector<std::string_view> words(line.begin() + 1, line.end());
  std::vector<std::string> rules;
  size_t unmatched = 0;
  if (!MergeSelectorArguments(words, &rules, &unmatched)) {
    return "'" + std::string(words[unmatched]) + "': Unmatched parenthesis in acl selector";
  }
  User user(line[0], 0);
  const RuleContext context{&commands, 0};
  for (const std::string& rule : rules) {
    const RuleError error = user.Apply(rule, context);
    if (error != RuleError::kNone && error != RuleError::kUnknownCommand) {
      return "'" + rule + "': " + std::string(RuleErrorText(error));
    }
  }
  return "";
}

std::string AccessControl::LoadAtStartup(const std::vector<std::vector<std::string>>& config_users,
                                         const std::string& acl_file) {
  if (!acl_file.empty() && !config_users.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors and "
           "security holes, please define either an ACL file or declare users directly in your "
           "redis.conf, but not both.";
  }
  for (const std::vector<std::string>& line : config_users) {
    const std::string& name = line[0];
    if (HasSpaces(name)) return "Spaces not allowed in ACL usernames";
    std::vector<std::string_view> words(line.begin() + 1, line.end());
    std::vector<std::string> rules;
    size_t unmatched = 0;
    if (!MergeSelectorArguments(words, &rules, &unmatched)) {
      return "Error in user declaration '" + std::string(words[unmatched]) +
             "': Unmatched parenthesis in acl selector";
    }
    User* user = Find(name);
    if (user == nullptr) {
      user = users_.emplace(name, std::make_unique<User>(name, pubsub_default_))
                 .first->second.get();
    } else {
      user->Apply("reset", context());  // the default user, declared in the file
    }
    for (const std::string& rule : rules) {
      const RuleError error = user->Apply(rule, context());
      if (error != RuleError::kNone) {
        return "Error loading ACL rule '" + rule + "' for the user named '" + name +
               "': " + std::string(RuleErrorText(error));
      }
    }
    if (!user->enabled()) {
      LogNotice("The user '" + name +
                "' is disabled (there is no 'on' modifier in the user description). Make sure "
                "this is not a configuration error.");
    }
  }
  if (acl_file.empty()) return "";
  std::vector<std::unique_ptr<User>> dropped;
  std::string errors = LoadFile(acl_file, &dropped);
  if (!errors.empty()) return "Aborting Redis startup because of ACL errors: " + errors;
  return "";
}

std::string AccessControl::LoadFile(const std::string& path,
                                    std::vector<std::unique_ptr<User>>* dropped) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
  }
  std::stringstream text;
  text << in.rdbuf();
  Users fresh;
  std::string errors = ParseFile(path, text.str(), &fresh);
  if (!errors.empty()) {
    return errors +
           "WARNING: ACL errors detected, no change to the previously active ACL rules was "
           "performed";
  }
  // The default user stays the same object (clients and the server point at it): it takes
  // the file's rules, or the rules it is born with when the file does not name it.
  std::unique_ptr<User> file_default;
  if (auto found = fresh.find("default"); found != fresh.end()) {
    file_default = std::move(found->second);
    fresh.erase(found);
  } else {
    file_default = NewDefaultUser();
  }
  default_->TakeRulesOf(*file_default);
  auto own_default = users_.find("default");
  std::unique_ptr<User> kept = std::move(own_default->second);
  users_.erase(own_default);
  for (auto& [name, user] : users_) dropped->push_back(std::move(user));
  users_ = std::move(fresh);
  users_.emplace("default", std::move(kept));
  return "";
}

std::string AccessControl::ParseFile(const std::string& path, std::string_view text,
                                     Users* out) const {
  std::string errors;
  int line_number = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(start, end - start), " \t\r\n");
    start = end + 1;
    ++line_number;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_number);
    const std::vector<std::string_view> words = SplitOnSpaces(line);
    if (words[0] != "user" || words.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    const std::string name(words[1]);
    if (HasSpaces(name)) {
      errors += "'" + where + ": username '" + name + "' contains invalid characters. ";
      continue;
    }
    if (out->contains(name)) {
      errors += "WARNING: Duplicate user '" + name + "' found on line " +
                std::to_string(line_number) + ". ";
      continue;
    }
    User& user = *out->emplace(name, std::make_unique<User>(name, pubsub_default_)).first->second;
    std::vector<std::string> rules;
    size_t unmatched = 0;
    if (!MergeSelectorArguments(std::span(words).subspan(2), &rules, &unmatched)) {
      errors += where + ": Unmatched parenthesis in selector definition.";
      rules.clear();
    }
    bool syntax_error = false;
    for (const std::string& rule : rules) {
      const std::string_view trimmed = Trim(rule, "\t\r\n");
      const RuleError error = user.Apply(trimmed, context());
      if (error == RuleError::kUnknownCommand) {
        errors += where + ": Error in applying operation '" + std::string(trimmed) +
                  "': " + std::string(RuleErrorText(error)) + ". ";
      } else if (error != RuleError::kNone && !syntax_error) {
        // Only the first: later rules may fail because of it.
        errors += where + ": " + std::string(RuleErrorText(error)) + ". ";
        syntax_error = true;
      }
    }
  }
  return errors;
}

std::string AccessControl::UserLine(const User& user) {
  return "user " + user.name() + " " + user.Describe();
}

std::string AccessControl::SaveFile(const std::string& path) const {
  std::string text;
  for (const auto& [name, user] : users_) text += UserLine(*user) + "\n";
  // Written to a temporary file, fsynced, renamed over the old one, the directory fsynced.
  std::string error;
  if (!WriteFileAtomically(path, text, &error)) {
    LogWarning("Writing ACL file for ACL SAVE: " + error);
    return error;
  }
  return "";
}

void AccessControl::Log(Denial reason, LogContext context, std::string object,
                        std::string username, std::string client_info, int64_t now_ms,
                        size_t max_length) {
  switch (reason) {
    case Denial::kAuth:
      ++denied_.auth;
      break;
    case Denial::kCommand:
      ++denied_.command;
      break;
    case Denial::kKey:
      ++denied_.key;
      break;
    case Denial::kChannel:
      ++denied_.channel;
      break;
    case Denial::kNone:
      return;
  }
  // The same refusal again soon after is counted in its entry, which moves to the front.
  const size_t scan = std::min(log_.size(), kLogGroupingScan);
  for (size_t i = 0; i < scan; ++i) {
    LogEntry& entry = log_[i];
    if (entry.reason == reason && entry.context == context &&
        std::abs(entry.updated_ms - now_ms) <= kLogGroupingMs && entry.object == object &&
        entry.username == username) {
      LogEntry updated = std::move(entry);
      log_.erase(log_.begin() + static_cast<std::ptrdiff_t>(i));
      updated.client_info = std::move(client_info);
      updated.updated_ms = now_ms;
      ++updated.count;
      log_.push_front(std::move(updated));
      return;
    }
  }
  LogEntry entry;
  entry.reason = reason;
  entry.context = context;
  entry.object = std::move(object);
  entry.username = std::move(username);
  entry.client_info = std::move(client_info);
  entry.entry_id = next_entry_id_++;
  entry.created_ms = entry.updated_ms = now_ms;
  log_.push_front(std::move(entry));
  while (log_.size() > max_length) log_.pop_back();
}

}  // namespace goblin::acl
