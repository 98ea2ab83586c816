// Connection commands: PING ECHO QUIT HELLO AUTH RESET SELECT CLIENT.
#include <algorithm>
#include <optional>
#include <string>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/string_number.h"
#include "core/version.h"
#include "server/errors.h"
#include "server/master_link.h"

namespace goblin {
namespace {

void PingCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.reply.Error(errors::WrongArity("ping"));
    return;
  }
  if (ctx.client.subscribed() && !ctx.reply.resp3()) {
    // In the RESP2 subscribed context replies look like messages.
    ctx.reply.Array(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argc() == 2 ? ctx.arg(1) : std::string_view());
    return;
  }
  if (ctx.argc() == 2) {
    ctx.reply.Bulk(ctx.arg(1));
  } else {
    ctx.reply.Simple("PONG");
  }
}

void EchoCommand(CommandContext& ctx) { ctx.reply.Bulk(ctx.arg(1)); }

void QuitCommand(CommandContext& ctx) {
  ctx.reply.Ok();
  ctx.server.CloseClientLater(ctx.client);
}

void SelectCommand(CommandContext& ctx) {
  int index;
  if (!ParseInt32Arg(ctx, ctx.arg(1), &index)) return;
  // A cluster has one database.
  if (ctx.server.cluster_mode != nullptr && index != 0) {
    ctx.reply.Error("ERR SELECT is not allowed in cluster mode");
    return;
  }
  if (index < 0 || index >= static_cast<int64_t>(ctx.server.database_count())) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return;
  }
  ctx.client.db = index;
  ctx.reply.Ok();
}

// Logs the client in as user. Replies the error and returns false when the pair opens no user.
bool Authenticate(CommandContext& ctx, std::string_view user, std::string_view password) {
  if (ctx.server.LogIn(ctx.client, ctx.arg(0), user, password)) return true;
  ctx.reply.Error("WRONGPASS invalid username-password pair or user is disabled.");
  return false;
}

void AuthCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argc() == 2 && ctx.server.acl.default_user().nopass()) {
    ctx.reply.Error(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
    return;
  }
  std::string_view user = ctx.argc() == 3 ? ctx.arg(1) : "default";
  if (Authenticate(ctx, user, ctx.arg(ctx.argc() - 1))) ctx.reply.Ok();
}

bool ValidClientText(std::string_view text) {
  for (char c : text) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

void HelloCommand(CommandContext& ctx) {
  int64_t version = ctx.client.reply.protocol();
  size_t next = 1;
  if (ctx.argc() >= 2) {
    if (!ParseInt64(ctx.arg(1), &version)) {
      ctx.reply.Error(errors::kProtocolNotInteger);
      return;
    }
    next = 2;
    if (version < 2 || version > 3) {
      ctx.reply.Error("NOPROTO unsupported protocol version");
      return;
    }
  }
  std::string_view user, password, name;
  bool has_auth = false, has_name = false;
  for (size_t i = next; i < ctx.argc(); ++i) {
    size_t left = ctx.argc() - i - 1;
    if (EqualsIgnoreCase(ctx.arg(i), "auth") && left >= 2) {
      has_auth = true;
      user = ctx.arg(i + 1);
      password = ctx.arg(i + 2);
      i += 2;
    } else if (EqualsIgnoreCase(ctx.arg(i), "setname") && left >= 1) {
      has_name = true;
      name = ctx.arg(++i);
      // The name is checked as soon as it is parsed; it is set only after AUTH succeeds.
      if (!ValidClientText(name)) {
        ctx.reply.Error(errors::kInvalidClientName);
        return;
      }
    } else {
      ctx.reply.Error("ERR Syntax error in HELLO option '" + errors::Quote(ctx.arg(i)) + "'");
      return;
    }
  }
  if (has_auth && !Authenticate(ctx, user, password)) return;
  if (!ctx.client.authenticated) {
    ctx.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "<proto> AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time");
    return;
  }
  if (has_name) ctx.client.name = name;
  ctx.client.reply.set_protocol(static_cast<int>(version));
  ReplyBuilder& r = ctx.reply;
  r.Map(7);
  r.Bulk("server");
  r.Bulk("redis");
  r.Bulk("version");
  r.Bulk(kRedisVersion);
  r.Bulk("proto");
  r.Integer(version);
  r.Bulk("id");
  r.Integer(static_cast<int64_t>(ctx.client.id));
  r.Bulk("mode");
  r.Bulk(ctx.server.cluster_mode != nullptr ? "cluster" : "standalone");
  r.Bulk("role");
  r.Bulk(ctx.server.master_link->is_replica() ? "replica" : "master");
  r.Bulk("modules");
  r.Array(0);
}

void ResetCommand(CommandContext& ctx) {
  Client& client = ctx.client;
  client.db = 0;
  client.reply.set_protocol(2);
  client.name.clear();
  client.reply_mode = ReplyMode::kOn;
  client.no_evict = false;
  client.no_touch = false;
  ctx.server.StartAsDefaultUser(client);
  client.DiscardTransaction();
  ctx.server.UnwatchAll(client);
  ctx.server.pubsub.RemoveClient(client);
  ctx.server.RemoveMonitor(client);
  ctx.server.tracking.Disable(client);
  ctx.reply.Simple("RESET");
}

// --- CLIENT -------------------------------------------------------------------------------

void ClientIdCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.client.id));
}

void ClientSetnameCommand(CommandContext& ctx) {
  if (!ValidClientText(ctx.arg(2))) {
    ctx.reply.Error(errors::kInvalidClientName);
    return;
  }
  ctx.client.name = ctx.arg(2);
  ctx.reply.Ok();
}

void ClientGetnameCommand(CommandContext& ctx) {
  if (ctx.client.name.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(ctx.client.name);
  }
}

// CLIENT LIST / KILL TYPE: the canonical name of a type argument, or nullopt.
std::optional<std::string> ClientTypeName(std::string_view text) {
  for (const char* name : {"normal", "master", "replica", "pubsub"}) {
    if (EqualsIgnoreCase(text, name)) return std::string(name);
  }
  if (EqualsIgnoreCase(text, "slave")) return std::string("replica");
  return std::nullopt;
}

// Redis's client types.
std::string_view ClientType(const Client& client) {
  if (client.kind == ClientKind::kMaster) return "master";
  if (client.is_replica()) return "replica";
  return client.subscribed() ? "pubsub" : "normal";
}

void ClientListCommand(CommandContext& ctx) {
  std::vector<uint64_t> ids;
  bool filter_ids = false;
  std::optional<std::string> type;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "type") && i + 1 < ctx.argc()) {
      type = ClientTypeName(ctx.arg(++i));
      if (!type) {
        ctx.reply.Error(errors::UnknownClientType(ctx.arg(i)));
        return;
      }
    } else if (EqualsIgnoreCase(ctx.arg(i), "id") && i + 1 < ctx.argc()) {
      filter_ids = true;
      for (++i; i < ctx.argc(); ++i) {
        int64_t id;
        if (!ParseInt64(ctx.arg(i), &id) || id <= 0) {
          ctx.reply.Error("ERR Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(id));
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::string text;
  for (Client* client : ctx.server.ClientsById()) {
    if (filter_ids && std::find(ids.begin(), ids.end(), client->id) == ids.end()) continue;
    if (type && *type != ClientType(*client)) continue;
    text += ClientInfoLine(*client, ctx.now_ms);
    text += '\n';
  }
  ctx.reply.Verbatim(text);
}

void ClientInfoCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(ClientInfoLine(ctx.client, ctx.now_ms) + "\n");
}

void ClientKillCommand(CommandContext& ctx) {
  // Old form: CLIENT KILL ip:port -> +OK or an error.
  if (ctx.argc() == 3) {
    for (Client* client : ctx.server.ClientsById()) {
      if (client->address == ctx.arg(2)) {
        ctx.server.KillClient(*client, ctx.client);
        ctx.reply.Ok();
        return;
      }
    }
    ctx.reply.Error("ERR No such client");
    return;
  }
  if (ctx.argc() % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::optional<uint64_t> id;
  std::optional<std::string> address, local_address, type;
  const acl::User* user = nullptr;
  std::optional<int64_t> max_age;
  bool skip_me = true;
  for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
    std::string_view option = ctx.arg(i), value = ctx.arg(i + 1);
    if (EqualsIgnoreCase(option, "id")) {
      int64_t parsed;
      if (!ParseInt64(value, &parsed) || parsed <= 0) {
        ctx.reply.Error("ERR client-id should be greater than 0");
        return;
      }
      id = static_cast<uint64_t>(parsed);
    } else if (EqualsIgnoreCase(option, "addr")) {
      address = std::string(value);
    } else if (EqualsIgnoreCase(option, "laddr")) {
      local_address = std::string(value);
    } else if (EqualsIgnoreCase(option, "user")) {
      user = ctx.server.acl.Find(value);
      if (user == nullptr) {
        ctx.reply.Error("ERR No such user '" + errors::Quote(value) + "'");
        return;
      }
    } else if (EqualsIgnoreCase(option, "type")) {
      type = ClientTypeName(value);
      if (!type) {
        ctx.reply.Error(errors::UnknownClientType(value));
        return;
      }
    } else if (EqualsIgnoreCase(option, "skipme")) {
      if (EqualsIgnoreCase(value, "yes")) {
        skip_me = true;
      } else if (EqualsIgnoreCase(value, "no")) {
        skip_me = false;
      } else {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
    } else if (EqualsIgnoreCase(option, "maxage")) {
      int64_t parsed;
      if (!ParseInt64(value, &parsed)) {
        ctx.reply.Error(errors::kSyntax);
        return;
      }
      max_age = parsed;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  int64_t killed = 0;
  for (Client* client : ctx.server.ClientsById()) {
    if (type && *type != ClientType(*client)) continue;
    if (id && client->id != *id) continue;
    if (address && client->address != *address) continue;
    if (local_address && client->local_address != *local_address) continue;
    if (user != nullptr && client->user != user) continue;
    if (max_age && (ctx.now_ms - client->created_ms) / 1000 < *max_age) continue;
    if (skip_me && client == &ctx.client) continue;
    ctx.server.KillClient(*client, ctx.client);
    ++killed;
  }
  ctx.reply.Integer(killed);
}

void ClientSetinfoCommand(CommandContext& ctx) {
  std::string_view attribute = ctx.arg(2), value = ctx.arg(3);
  bool is_name = EqualsIgnoreCase(attribute, "lib-name");
  bool is_version = EqualsIgnoreCase(attribute, "lib-ver");
  if (!is_name && !is_version) {
    ctx.reply.Error("ERR Unrecognized option '" + errors::Quote(attribute) + "'");
    return;
  }
  if (!ValidClientText(value)) {
    ctx.reply.Error(is_name ? "ERR lib-name cannot contain spaces, newlines or special characters."
                            : "ERR lib-ver cannot contain spaces, newlines or special characters.");
    return;
  }
  (is_name ? ctx.client.lib_name : ctx.client.lib_ver) = value;
  ctx.reply.Ok();
}

bool ParseOnOff(CommandContext& ctx, std::string_view text, bool* on) {
  if (EqualsIgnoreCase(text, "on")) {
    *on = true;
  } else if (EqualsIgnoreCase(text, "off")) {
    *on = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void ClientNoEvictCommand(CommandContext& ctx) {
  bool on;
  if (!ParseOnOff(ctx, ctx.arg(2), &on)) return;
  ctx.client.no_evict = on;
  ctx.reply.Ok();
}

void ClientNoTouchCommand(CommandContext& ctx) {
  bool on;
  if (!ParseOnOff(ctx, ctx.arg(2), &on)) return;
  ctx.client.no_touch = on;
  ctx.reply.Ok();
}

void ClientReplyCommand(CommandContext& ctx) {
  std::string_view mode = ctx.arg(2);
  if (EqualsIgnoreCase(mode, "on")) {
    ctx.client.reply_mode = ReplyMode::kOn;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(mode, "off")) {
    ctx.client.reply_mode = ReplyMode::kOff;
  } else if (EqualsIgnoreCase(mode, "skip")) {
    if (ctx.client.reply_mode == ReplyMode::kOn) ctx.client.reply_mode = ReplyMode::kSkipNext;
  } else {
    ctx.reply.Error(errors::kSyntax);
  }
}

void ClientUnblockCommand(CommandContext& ctx) {
  if (ctx.argc() > 4) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "CLIENT"));
    return;
  }
  int64_t id;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &id)) return;
  bool with_error = false;
  if (ctx.argc() == 4) {
    if (EqualsIgnoreCase(ctx.arg(3), "error")) {
      with_error = true;
    } else if (!EqualsIgnoreCase(ctx.arg(3), "timeout")) {
      ctx.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  bool unblocked = id > 0 && ctx.server.UnblockById(static_cast<uint64_t>(id), with_error);
  ctx.reply.Integer(unblocked ? 1 : 0);
}

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]: the
// options are parsed first, then checked against each other and the client's mode, each
// check with Redis's error in Redis's order.
void ClientTrackingCommand(CommandContext& ctx) {
  int64_t redirect = 0;
  bool bcast = false, optin = false, optout = false, noloop = false;
  std::vector<std::string_view> prefixes;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    const std::string_view option = ctx.arg(i);
    const bool more = i + 1 < ctx.argc();
    if (EqualsIgnoreCase(option, "redirect") && more) {
      ++i;
      if (redirect != 0) {
        ctx.reply.Error("ERR A client can only redirect to a single other client");
        return;
      }
      if (!ParseIntegerArg(ctx, ctx.arg(i), &redirect)) return;
      if (redirect <= 0 || ctx.server.FindClient(static_cast<uint64_t>(redirect)) == nullptr) {
        ctx.reply.Error("ERR The client ID you want redirect to does not exist");
        return;
      }
    } else if (EqualsIgnoreCase(option, "bcast")) {
      bcast = true;
    } else if (EqualsIgnoreCase(option, "optin")) {
      optin = true;
    } else if (EqualsIgnoreCase(option, "optout")) {
      optout = true;
    } else if (EqualsIgnoreCase(option, "noloop")) {
      noloop = true;
    } else if (EqualsIgnoreCase(option, "prefix") && more) {
      prefixes.push_back(ctx.arg(++i));
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  Client::Tracking& state = ctx.client.tracking;
  if (EqualsIgnoreCase(ctx.arg(2), "off")) {
    ctx.server.tracking.Disable(ctx.client);
    ctx.reply.Ok();
    return;
  }
  if (!EqualsIgnoreCase(ctx.arg(2), "on")) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  static constexpr std::string_view kSwitch =
      " mode before disabling tracking for this client, and then re-enabling it with a different "
      "mode.";
  if (!bcast && !prefixes.empty()) {
    ctx.reply.Error("ERR PREFIX option requires BCAST mode to be enabled");
  } else if (state.on && state.bcast != bcast) {
    ctx.reply.Error(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this "
        "client, and then re-enabling it with a different mode.");
  } else if (bcast && (optin || optout)) {
    ctx.reply.Error("ERR OPTIN and OPTOUT are not compatible with BCAST");
  } else if (optin && optout) {
    ctx.reply.Error("ERR You can't specify both OPTIN mode and OPTOUT mode");
  } else if ((optin && state.optout) || (optout && state.optin)) {
    ctx.reply.Error("ERR You can't switch OPTIN/OPTOUT" + std::string(kSwitch));
  } else if (std::string overlap = bcast ? Tracking::PrefixOverlap(ctx.client, prefixes) : "";
             !overlap.empty()) {
    ctx.reply.Error(overlap);
  } else {
    ctx.server.tracking.Enable(ctx.client, static_cast<uint64_t>(redirect), bcast, optin, optout,
                               noloop, prefixes);
    ctx.reply.Ok();
  }
}

// CLIENT CACHING YES|NO: whether the next command's keys are remembered, in OPTIN (YES) or
// OPTOUT (NO) mode.
void ClientCachingCommand(CommandContext& ctx) {
  Client::Tracking& state = ctx.client.tracking;
  if (!state.on) {
    ctx.reply.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
        "OPTOUT mode enabled");
  } else if (EqualsIgnoreCase(ctx.arg(2), "yes")) {
    if (!state.optin) {
      ctx.reply.Error(
          "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      return;
    }
    state.caching = true;
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(ctx.arg(2), "no")) {
    if (!state.optout) {
      ctx.reply.Error(
          "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      return;
    }
    state.caching = true;
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(errors::kSyntax);
  }
}

void ClientGetredirCommand(CommandContext& ctx) {
  const Client::Tracking& state = ctx.client.tracking;
  ctx.reply.Integer(state.on ? static_cast<int64_t>(state.redirect) : -1);
}

void ClientTrackinginfoCommand(CommandContext& ctx) {
  const Client::Tracking& state = ctx.client.tracking;
  std::vector<std::string_view> flags{state.on ? "on" : "off"};
  if (state.bcast) flags.push_back("bcast");
  if (state.optin) flags.push_back("optin");
  if (state.optin && state.caching) flags.push_back("caching-yes");
  if (state.optout) flags.push_back("optout");
  if (state.optout && state.caching) flags.push_back("caching-no");
  if (state.noloop) flags.push_back("noloop");
  if (state.broken_redirect) flags.push_back("broken_redirect");
  ReplyBuilder& r = ctx.reply;
  r.Map(3);
  r.Bulk("flags");
  r.Set(flags.size());
  for (std::string_view flag : flags) r.Bulk(flag);
  r.Bulk("redirect");
  r.Integer(state.on ? static_cast<int64_t>(state.redirect) : -1);
  r.Bulk("prefixes");
  r.Array(state.prefixes.size());
  for (const std::string& prefix : state.prefixes) r.Bulk(prefix);
}

void ClientPauseCommand(CommandContext& ctx) {
  if (ctx.argc() > 4) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "CLIENT"));
    return;
  }
  int64_t timeout;
  if (!ParseInt64(ctx.arg(2), &timeout)) {
    ctx.reply.Error(errors::kTimeoutNotInteger);
    return;
  }
  if (timeout < 0) {
    ctx.reply.Error(errors::kTimeoutNegative);
    return;
  }
  bool all = true;
  if (ctx.argc() == 4) {
    if (EqualsIgnoreCase(ctx.arg(3), "write")) {
      all = false;
    } else if (!EqualsIgnoreCase(ctx.arg(3), "all")) {
      ctx.reply.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
      return;
    }
  }
  ctx.server.PauseClients(ctx.now_ms + std::min(timeout, INT64_MAX - ctx.now_ms), all);
  ctx.reply.Ok();
}

void ClientUnpauseCommand(CommandContext& ctx) {
  ctx.server.UnpauseClients();
  ctx.reply.Ok();
}

void ClientHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"CACHING (YES|NO)",
                  "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
                  "GETREDIR",
                  "    Return the client ID we are redirecting to when tracking is enabled.",
                  "GETNAME",
                  "    Return the name of the current connection.",
                  "ID",
                  "    Return the ID of the current connection.",
                  "INFO",
                  "    Return information about the current client connection.",
                  "KILL <ip:port>",
                  "    Kill connection made from <ip:port>.",
                  "KILL <option> <value> [<option> <value> [...]]",
                  "    Kill connections. Options are:",
                  "    * ADDR (<ip:port>|<unixsocket>:0)",
                  "      Kill connections made from the specified address",
                  "    * LADDR (<ip:port>|<unixsocket>:0)",
                  "      Kill connections made to specified local address",
                  "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                  "      Kill connections by type.",
                  "    * USER <username>",
                  "      Kill connections authenticated by <username>.",
                  "    * SKIPME (YES|NO)",
                  "      Skip killing current connection (default: yes).",
                  "    * ID <client-id>",
                  "      Kill connections by client id.",
                  "    * MAXAGE <maxage>",
                  "      Kill connections older than the specified age.",
                  "LIST [options ...]",
                  "    Return information about client connections. Options:",
                  "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
                  "      Return clients of specified type.",
                  "NO-EVICT (ON|OFF)",
                  "    Protect current client connection from eviction.",
                  "NO-TOUCH (ON|OFF)",
                  "    Will not touch LRU/LFU stats when this mode is on.",
                  "PAUSE <timeout> [WRITE|ALL]",
                  "    Suspend all, or just write, clients for <timeout> milliseconds.",
                  "UNPAUSE",
                  "    Stop the current client pause, resuming traffic.",
                  "REPLY (ON|OFF|SKIP)",
                  "    Control the replies sent to the current connection.",
                  "SETNAME <name>",
                  "    Assign the name <name> to the current connection.",
                  "UNBLOCK <clientid> [TIMEOUT|ERROR]",
                  "    Unblock the specified blocked client.",
                  "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
                  "         [OPTIN] [OPTOUT] [NOLOOP]",
                  "    Control server assisted client side caching.",
                  "TRACKINGINFO",
                  "    Report tracking status for the current connection.",
                  "SETINFO <option> <value>",
                  "    Set client meta attr. Options are:",
                  "    * LIB-NAME: the client lib name.",
                  "    * LIB-VER: the client lib version."});
}

}  // namespace

void RegisterConnectionCommands(CommandTable* table) {
  constexpr uint32_t kConn = kCmdNoscript | kCmdLoading | kCmdStale;
  constexpr uint32_t kHandshake = kConn | kCmdNoAuth | kCmdFast | kCmdAllowBusy;
  CommandAdder add{table, "connection", kAclConnection};
  add("ping", -1, kCmdFast, {}, PingCommand, "Returns the server's liveliness response.", "1.0.0",
      "O(1)", "[message]", {"request_policy:all_shards", "response_policy:all_succeeded"});
  add("echo", 2, kCmdFast | kCmdLoading | kCmdStale, {}, EchoCommand, "Returns the given string.",
      "1.0.0", "O(1)", "message");
  add("quit", -1, kHandshake | kCmdTransactionControl, {}, QuitCommand, "Closes the connection.",
      "1.0.0", "O(1)", "");
  add("select", 2, kCmdLoading | kCmdStale | kCmdFast, {}, SelectCommand,
      "Changes the selected database.", "1.0.0", "O(1)", "index");
  add("auth", -2, kHandshake, {}, AuthCommand, "Authenticates the connection.", "1.0.0",
      "O(N) where N is the number of passwords defined for the user", "[username] password");
  add("hello", -1, kHandshake, {}, HelloCommand, "Handshakes with the Redis server.", "6.0.0",
      "O(1)", "[protover [AUTH username password] [SETNAME clientname]]");
  add("reset", 1, kHandshake | kCmdTransactionControl, {}, ResetCommand, "Resets the connection.",
      "6.2.0", "O(1)", "");
  Command* client = add("client", -2, 0, {}, nullptr, "A container for client connection commands.",
                        "2.4.0", "Depends on subcommand.", "");
  add.Sub(client, "id", 2, kConn, {}, ClientIdCommand,
          "Returns the unique client ID of the connection.", "5.0.0", "O(1)", "");
  add.Sub(client, "setname", 3, kConn, {}, ClientSetnameCommand, "Sets the connection name.",
          "2.6.9", "O(1)", "connection-name");
  add.Sub(client, "getname", 2, kConn, {}, ClientGetnameCommand,
          "Returns the name of the connection.", "2.6.9", "O(1)", "");
  add.Sub(client, "list", -2, kCmdAdmin | kConn, {}, ClientListCommand, "Lists open connections.",
          "2.4.0", "O(N) where N is the number of client connections",
          "[TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]",
          {"nondeterministic_output"});
  add.Sub(client, "info", 2, kConn, {}, ClientInfoCommand,
          "Returns information about the connection.", "6.2.0", "O(1)", "",
          {"nondeterministic_output"});
  add.Sub(client, "kill", -3, kCmdAdmin | kConn, {}, ClientKillCommand,
          "Terminates open connections.", "2.4.0",
          "O(N) where N is the number of client connections",
          "<ip:port | <[ID client-id] | [TYPE <NORMAL | MASTER | SLAVE | REPLICA | PUBSUB>] | "
          "[USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME <YES | NO>] | "
          "[MAXAGE maxage] [[ID client-id] | ...]>>");
  add.Sub(client, "setinfo", 4, kConn, {}, ClientSetinfoCommand,
          "Sets information specific to the client or connection.", "7.2.0", "O(1)",
          "<LIB-NAME libname | LIB-VER libver>");
  add.Sub(client, "no-evict", 3, kCmdAdmin | kConn, {}, ClientNoEvictCommand,
          "Sets the client eviction mode of the connection.", "7.0.0", "O(1)", "<ON | OFF>");
  add.Sub(client, "no-touch", 3, kConn, {}, ClientNoTouchCommand,
          "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
          "7.2.0", "O(1)", "<ON | OFF>");
  add.Sub(client, "reply", 3, kConn, {}, ClientReplyCommand,
          "Instructs the server whether to reply to commands.", "3.2.0", "O(1)",
          "<ON | OFF | SKIP>");
  add.Sub(client, "pause", -3, kCmdAdmin | kConn, {}, ClientPauseCommand,
          "Suspends commands processing.", "3.0.0", "O(1)", "timeout [WRITE | ALL]");
  add.Sub(client, "unpause", 2, kCmdAdmin | kConn, {}, ClientUnpauseCommand,
          "Resumes processing commands from paused clients.", "6.2.0",
          "O(N) Where N is the number of paused clients", "");
  add.Sub(client, "unblock", -3, kCmdAdmin | kConn, {}, ClientUnblockCommand,
          "Unblocks a client blocked by a blocking command from a different connection.", "5.0.0",
          "O(log N) where N is the number of client connections", "client-id [TIMEOUT | ERROR]");
  add.Sub(client, "tracking", -3, kConn, {}, ClientTrackingCommand,
          "Controls server-assisted client-side caching for the connection.", "6.0.0",
          "O(1). Some options may introduce additional complexity.",
          "<ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix ...]] [BCAST] [OPTIN] "
          "[OPTOUT] [NOLOOP]");
  add.Sub(client, "caching", 3, kConn, {}, ClientCachingCommand,
          "Instructs the server whether to track the keys in the next request.", "6.0.0", "O(1)",
          "<YES | NO>");
  add.Sub(client, "getredir", 2, kConn, {}, ClientGetredirCommand,
          "Returns the client ID to which the connection's tracking notifications are redirected.",
          "6.0.0", "O(1)", "");
  add.Sub(client, "trackinginfo", 2, kConn, {}, ClientTrackinginfoCommand,
          "Returns information about server-assisted client-side caching for the connection.",
          "6.2.0", "O(1)", "");
  add.Sub(client, "help", 2, kCmdLoading | kCmdStale, {}, ClientHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
}

}  // namespace goblin
