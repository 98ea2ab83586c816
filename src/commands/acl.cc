// ACL: users and their permissions (server/acl/), as Redis 7.2 shows and changes them.
#include <openssl/rand.h>

#include <algorithm>
#include <string>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

void AclSetuserCommand(CommandContext& ctx) {
  const std::string_view name = ctx.arg(2);
  acl::AccessControl& access = ctx.server.acl;
  const acl::User* existing = access.Find(name);
  std::optional<acl::User> before;
  if (existing != nullptr) before.emplace(*existing);
  std::vector<std::string_view> rules(ctx.argv.begin() + 3, ctx.argv.end());
  std::string error = access.SetUser(name, rules);
  if (!error.empty()) {
    ctx.reply.Error("ERR " + errors::OneLine(std::move(error)));
    return;
  }
  if (before) ctx.server.DropDeniedSubscribers(*access.Find(name), *before);
  ctx.reply.Ok();
}

void AclDeluserCommand(CommandContext& ctx) {
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ctx.arg(i) == "default") {
      ctx.reply.Error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  std::vector<std::unique_ptr<acl::User>> removed;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (std::unique_ptr<acl::User> user = ctx.server.acl.Remove(ctx.arg(i))) {
      removed.push_back(std::move(user));
    }
  }
  const auto count = static_cast<int64_t>(removed.size());
  ctx.server.DropUsers(std::move(removed), &ctx.client);
  ctx.reply.Integer(count);
}

void ReplySelector(ReplyBuilder& r, const acl::Selector& selector) {
  r.Bulk("commands");
  r.Bulk(selector.DescribeCommands());
  r.Bulk("keys");
  r.Bulk(selector.DescribeKeys());
  r.Bulk("channels");
  r.Bulk(selector.DescribeChannels());
}

void AclGetuserCommand(CommandContext& ctx) {
  const acl::User* user = ctx.server.acl.Find(ctx.arg(2));
  ReplyBuilder& r = ctx.reply;
  if (user == nullptr) {
    r.Null();
    return;
  }
  r.Map(6);
  r.Bulk("flags");
  size_t flags = 0;
  for (const auto& [flag, name] : acl::User::kFlagNames) flags += (user->flags() & flag) ? 1 : 0;
  r.Set(flags);
  for (const auto& [flag, name] : acl::User::kFlagNames) {
    if (user->flags() & flag) r.Bulk(name);
  }
  r.Bulk("passwords");
  const std::vector<std::string> passwords = user->passwords();
  r.Array(passwords.size());
  for (const std::string& hash : passwords) r.Bulk(hash);
  // The root selector's rules at the top level, the others under "selectors".
  const std::vector<acl::Selector>& selectors = user->selectors();
  ReplySelector(r, selectors.front());
  r.Bulk("selectors");
  r.Array(selectors.size() - 1);
  for (size_t i = 1; i < selectors.size(); ++i) {
    r.Map(3);
    ReplySelector(r, selectors[i]);
  }
}

void AclListCommand(CommandContext& ctx) {
  const acl::AccessControl::Users& users = ctx.server.acl.users();
  ctx.reply.Array(users.size());
  for (const auto& [name, user] : users) ctx.reply.Bulk(acl::AccessControl::UserLine(*user));
}

void AclUsersCommand(CommandContext& ctx) {
  const acl::AccessControl::Users& users = ctx.server.acl.users();
  ctx.reply.Array(users.size());
  for (const auto& [name, user] : users) ctx.reply.Bulk(name);
}

void AclWhoamiCommand(CommandContext& ctx) {
  if (ctx.client.user == nullptr) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(ctx.client.user->name());
  }
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";

void AclLoadCommand(CommandContext& ctx) {
  const std::string& path = ctx.server.config.acl.file;
  if (path.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  std::vector<std::unique_ptr<acl::User>> dropped;
  std::string errors = ctx.server.acl.LoadFile(path, &dropped);
  if (!errors.empty()) {
    ctx.reply.Error("ERR " + errors::OneLine(std::move(errors)));
    return;
  }
  ctx.server.DropUsers(std::move(dropped), &ctx.client);
  ctx.reply.Ok();
}

void AclSaveCommand(CommandContext& ctx) {
  const std::string& path = ctx.server.config.acl.file;
  if (path.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (!ctx.server.acl.SaveFile(path).empty()) {
    ctx.reply.Error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    return;
  }
  ctx.reply.Ok();
}

// Every row in a category, subcommands after their container.
void AclCatCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    ctx.reply.Array(std::size(kAclCategoryNames));
    for (const auto& [category, name] : kAclCategoryNames) ctx.reply.Bulk(name);
    return;
  }
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "ACL"));
    return;
  }
  const uint32_t category = AclCategoryByName(ctx.arg(2));
  if (category == 0) {
    ctx.reply.Error("ERR Unknown category '" + std::string(ctx.arg(2).substr(0, 128)) + "'");
    return;
  }
  std::vector<const std::string*> names;
  for (const Command* command : ctx.server.commands.All()) {
    if (command->acl_categories & category) names.push_back(&command->name);
    for (const auto& sub : command->subcommands) {
      if (sub->acl_categories & category) names.push_back(&sub->name);
    }
  }
  ctx.reply.Array(names.size());
  for (const std::string* name : names) ctx.reply.Bulk(*name);
}

void AclGenpassCommand(CommandContext& ctx) {
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "ACL"));
    return;
  }
  if (ctx.argc() == 3 && !ParseIntegerArg(ctx, ctx.arg(2), &bits)) return;
  if (bits <= 0 || bits > kMaxBits) {
    ctx.reply.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a positive "
        "number up to 4096");
    return;
  }
  const auto chars = static_cast<size_t>((bits + 3) / 4);  // hex digits, four bits each
  unsigned char random[kMaxBits / 8];
  const size_t bytes = (chars + 1) / 2;
  RAND_bytes(random, static_cast<int>(bytes));
  const std::string hex = LowerHex(std::string_view(reinterpret_cast<char*>(random), bytes));
  ctx.reply.Bulk(std::string_view(hex).substr(0, chars));
}

void AclLogCommand(CommandContext& ctx) {
  acl::AccessControl& access = ctx.server.acl;
  int64_t count = 10;
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "ACL"));
    return;
  }
  if (ctx.argc() == 3) {
    if (EqualsIgnoreCase(ctx.arg(2), "reset")) {
      access.ResetLog();
      ctx.reply.Ok();
      return;
    }
    if (!ParseIntegerArg(ctx, ctx.arg(2), &count)) return;
    count = std::max<int64_t>(count, 0);
  }
  const std::deque<acl::LogEntry>& log = access.log();
  const size_t shown = std::min(static_cast<size_t>(count), log.size());
  ReplyBuilder& r = ctx.reply;
  r.Array(shown);
  for (size_t i = 0; i < shown; ++i) {
    const acl::LogEntry& entry = log[i];
    r.Map(10);
    r.Bulk("count");
    r.Integer(static_cast<int64_t>(entry.count));
    r.Bulk("reason");
    r.Bulk(acl::DenialName(entry.reason));
    r.Bulk("context");
    r.Bulk(acl::LogContextName(entry.context));
    r.Bulk("object");
    r.Bulk(entry.object);
    r.Bulk("username");
    r.Bulk(entry.username);
    r.Bulk("age-seconds");
    r.Double(static_cast<double>(ctx.now_ms - entry.updated_ms) / 1000);
    r.Bulk("client-info");
    r.Bulk(entry.client_info);
    r.Bulk("entry-id");
    r.Integer(static_cast<int64_t>(entry.entry_id));
    r.Bulk("timestamp-created");
    r.Integer(entry.created_ms);
    r.Bulk("timestamp-last-updated");
    r.Integer(entry.updated_ms);
  }
}

void AclDryrunCommand(CommandContext& ctx) {
  const acl::User* user = ctx.server.acl.Find(ctx.arg(2));
  if (user == nullptr) {
    ctx.reply.Error("ERR User '" + errors::Quote(ctx.arg(2)) + "' not found");
    return;
  }
  const std::vector<std::string_view> call(ctx.argv.begin() + 3, ctx.argv.end());
  std::string unknown;
  const Command* command = ctx.server.LookUpCommand(call, &unknown);
  if (command == nullptr) {
    ctx.reply.Error("ERR Command '" + errors::Quote(call[0]) + "' not found");
    return;
  }
  if (!command->ArityOk(call.size())) {
    ctx.reply.Error(errors::WrongArity(command->name));
    return;
  }
  size_t position = 0;
  const acl::Denial denial = user->Check(*command, call, &position);
  if (denial != acl::Denial::kNone) {
    ctx.reply.Bulk(acl::DenialMessage(denial, *user, *command, call[position], true));
    return;
  }
  ctx.reply.Ok();
}

void AclHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"CAT [<category>]",
             "    List all commands that belong to <category>, or all command categories",
             "    when no category is specified.", "DELUSER <username> [<username> ...]",
             "    Delete a list of users.", "DRYRUN <username> <command> [<arg> ...]",
             "    Returns whether the user can execute the given command without executing the "
             "command.",
             "GETUSER <username>", "    Get the user's details.", "GENPASS [<bits>]",
             "    Generate a secure 256-bit user password. The optional `bits` argument can",
             "    be used to specify a different size.", "LIST",
             "    Show users details in config file format.", "LOAD",
             "    Reload users from the ACL file.", "LOG [<count> | RESET]",
             "    Show the ACL log entries.", "SAVE", "    Save the current config to the ACL file.",
             "SETUSER <username> <attribute> [<attribute> ...]",
             "    Create or modify a user with the specified attributes.", "USERS",
             "    List all the registered usernames.", "WHOAMI",
             "    Return the current connection username."});
}

}  // namespace

void RegisterAclCommands(CommandTable* table) {
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale;
  constexpr uint32_t kPlain = kCmdNoscript | kCmdLoading | kCmdStale;
  CommandAdder add{table, "server"};
  Command* acl = add("acl", -2, 0, {}, nullptr, "A container for Access List Control commands.",
                     "6.0.0", "Depends on subcommand.", "");
  add.Sub(acl, "cat", -2, kPlain, {}, AclCatCommand,
          "Lists the ACL categories, or the commands inside a category.", "6.0.0",
          "O(1) since the categories and commands are a fixed set.", "[category]");
  add.Sub(acl, "deluser", -3, kAdmin, {}, AclDeluserCommand,
          "Deletes ACL users, and terminates their connections.", "6.0.0",
          "O(1) amortized time considering the typical user.", "username [username ...]");
  add.Sub(acl, "dryrun", -4, kAdmin, {}, AclDryrunCommand,
          "Simulates the execution of a command by a user, without executing the command.",
          "7.0.0", "O(1).", "username command [arg [arg ...]]");
  add.Sub(acl, "genpass", -2, kPlain, {}, AclGenpassCommand,
          "Generates a pseudorandom, secure password that can be used to identify ACL users.",
          "6.0.0", "O(1)", "[bits]");
  add.Sub(acl, "getuser", 3, kAdmin, {}, AclGetuserCommand, "Lists the ACL rules of a user.",
          "6.0.0",
          "O(N). Where N is the number of password, command and pattern rules that the user has.",
          "username");
  add.Sub(acl, "help", 2, kCmdLoading | kCmdStale, {}, AclHelpCommand,
          "Returns helpful text about the different subcommands.", "6.0.0", "O(1)", "");
  add.Sub(acl, "list", 2, kAdmin, {}, AclListCommand, "Dumps the effective rules in ACL file format.",
          "6.0.0", "O(N). Where N is the number of configured users.", "");
  add.Sub(acl, "load", 2, kAdmin, {}, AclLoadCommand,
          "Reloads the rules from the configured ACL file.", "6.0.0",
          "O(N). Where N is the number of configured users.", "");
  add.Sub(acl, "log", -2, kAdmin, {}, AclLogCommand,
          "Lists recent security events generated due to ACL rules.", "6.0.0",
          "O(N) with N being the number of entries shown.", "[count | RESET]");
  add.Sub(acl, "save", 2, kAdmin, {}, AclSaveCommand,
          "Saves the effective ACL rules in the configured ACL file.", "6.0.0",
          "O(N). Where N is the number of configured users.", "");
  add.Sub(acl, "setuser", -3, kAdmin, {}, AclSetuserCommand,
          "Creates and modifies an ACL user and its rules.", "6.0.0",
          "O(N). Where N is the number of rules provided.", "username [rule [rule ...]]");
  add.Sub(acl, "users", 2, kAdmin, {}, AclUsersCommand, "Lists all ACL users.", "6.0.0",
          "O(N). Where N is the number of configured users.", "");
  add.Sub(acl, "whoami", 2, kPlain, {}, AclWhoamiCommand,
          "Returns the authenticated username of the current connection.", "6.0.0", "O(1)", "");
}

}  // namespace goblin
