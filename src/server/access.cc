// Where the server meets access control (acl/access_control.h): the permission check of a
// call, logging in, the startup load of the users, and the connections a change of users
// closes, as Redis closes them.
#include <algorithm>

#include "server/log.h"
#include "server/script_runner.h"
#include "server/server.h"

namespace goblin {

acl::LogContext Server::LogContextOf(const Client& client) {
  return client.in_multi || client.in_exec ? acl::LogContext::kMulti : acl::LogContext::kTopLevel;
}

acl::Denial Server::CheckAndLog(const Client& client, const Command& command,
                                const std::vector<std::string_view>& argv,
                                acl::LogContext context, size_t* position) {
  const acl::User& user = *client.user;
  const acl::Denial denial = user.Check(command, argv, position);
  if (denial == acl::Denial::kNone) return denial;
  // A script's commands are logged with the client that called the script.
  const Client& shown = context == acl::LogContext::kLua && scripts->caller() != nullptr
                            ? *scripts->caller()
                            : client;
  acl.Log(denial, context,
          std::string(denial == acl::Denial::kCommand ? std::string_view(command.name)
                                                      : argv[*position]),
          user.name(), ClientInfoLine(shown, now_ms_), now_ms_,
          static_cast<size_t>(config.acl.log_max_len));
  return denial;
}

std::string Server::AclRefusal(const Client& client, const Command& command,
                               const std::vector<std::string_view>& argv,
                               acl::LogContext context) {
  size_t position = 0;
  const acl::Denial denial = CheckAndLog(client, command, argv, context, &position);
  if (denial == acl::Denial::kNone) return "";
  return "NOPERM " + acl::DenialMessage(denial, *client.user, command, argv[position], false);
}

bool Server::LogIn(Client& client, std::string_view command, std::string_view username,
                   std::string_view password) {
  if (acl::User* user = acl.Authenticate(username, password)) {
    client.user = user;
    client.authenticated = true;
    return true;
  }
  acl.Log(acl::Denial::kAuth, LogContextOf(client), std::string(command), std::string(username),
          ClientInfoLine(client, now_ms_), now_ms_, static_cast<size_t>(config.acl.log_max_len));
  return false;
}

void Server::DropUsers(std::vector<std::unique_ptr<acl::User>> users, const Client* current) {
  if (users.empty()) return;
  for (Client* client : ClientsById()) {
    const bool gone = std::any_of(users.begin(), users.end(),
                                  [&](const auto& user) { return user.get() == client->user; });
    if (!gone) continue;
    // Never left pointing at a freed user, even for the moment before it closes.
    client->user = &acl.default_user();
    client->authenticated = false;
    if (client == current) {
      CloseClientLater(*client);
    } else {
      CloseClientSoon(*client);
    }
  }
}

void Server::DropDeniedSubscribers(const acl::User& user, const acl::User& before) {
  const auto& selectors = user.selectors();
  if (std::any_of(selectors.begin(), selectors.end(), [](const acl::Selector& selector) {
        return selector.flags() & acl::Selector::kAllChannels;
      })) {
    return;
  }
  // Every channel pattern of the new rules, across selectors.
  std::vector<std::string_view> allowed;
  for (const acl::Selector& selector : selectors) {
    for (std::string_view channel : selector.channels()) allowed.push_back(channel);
  }
  auto listed = [&](std::string_view channel) {
    return std::find(allowed.begin(), allowed.end(), channel) != allowed.end();
  };
  // Nothing to do when the new patterns include every old one.
  bool superset = true;
  for (const acl::Selector& selector : before.selectors()) {
    if (selector.flags() & acl::Selector::kAllChannels) {
      superset = false;
      break;
    }
    for (std::string_view channel : selector.channels()) superset = superset && listed(channel);
  }
  if (superset) return;
  for (Client* client : ClientsById()) {
    if (client->user != &user || !client->subscribed()) continue;
    bool denied = std::any_of(client->patterns.begin(), client->patterns.end(),
                              [&](const std::string& p) { return !user.AllowsChannel(p, true); });
    for (const auto* names : {&client->channels, &client->shard_channels}) {
      denied = denied || std::any_of(names->begin(), names->end(), [&](const std::string& c) {
                 return !user.AllowsChannel(c, false);
               });
    }
    if (denied) CloseClientSoon(*client);
  }
}

bool Server::LoadUsers() {
  std::string error = acl.LoadAtStartup(config.acl.users, config.acl.file);
  if (error.empty()) return true;
  LogWarning(error);
  if (error.starts_with("Error loading ACL rule") || error.starts_with("Spaces not allowed")) {
    LogWarning("Critical error while loading ACLs. Exiting.");
  }
  return false;
}

}  // namespace goblin
