// COMMAND and its subcommands: the command table as clients see it.
#include <optional>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/glob.h"
#include "server/command_syntax.h"
#include "server/errors.h"
#include "server/key_specs.h"

namespace goblin {
namespace {

std::vector<std::string_view> FlagNames(uint32_t flags) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kCmdWrite, "write"},
      {kCmdReadonly, "readonly"},
      {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},
      {kCmdPubsub, "pubsub"},
      {kCmdNoscript, "noscript"},
      {kCmdBlocking, "blocking"},
      {kCmdLoading, "loading"},
      {kCmdStale, "stale"},
      {kCmdSkipMonitor, "skip_monitor"},
      {kCmdSkipSlowlog, "skip_slowlog"},
      {kCmdAsking, "asking"},
      {kCmdFast, "fast"},
      {kCmdNoAuth, "no_auth"},
      {kCmdNoMandatoryKeys, "no_mandatory_keys"},
      {kCmdNoAsyncLoading, "no_async_loading"},
      {kCmdNoMulti, "no_multi"},
      {kCmdMovableKeys, "movablekeys"},
      {kCmdAllowBusy, "allow_busy"}};
  std::vector<std::string_view> names;
  for (const auto& [flag, name] : kNames) {
    if (flags & flag) names.push_back(name);
  }
  return names;
}

void ReplyAclCategories(ReplyBuilder& r, uint32_t categories) {
  r.Set(static_cast<size_t>(__builtin_popcount(categories)));
  for (const auto& [category, name] : kAclCategoryNames) {
    if (!(categories & category)) continue;
    std::string text = "@";
    text += name;
    r.Simple(text);
  }
}

void ReplyKeySpec(ReplyBuilder& r, const KeySpec& spec) {
  r.Map(spec.notes.empty() ? 3 : 4);
  if (!spec.notes.empty()) {
    r.Bulk("notes");
    r.Bulk(spec.notes);
  }
  r.Bulk("flags");
  const std::vector<std::string_view> flags = KeySpecFlagNames(spec.flags);
  r.Set(flags.size());
  for (std::string_view flag : flags) r.Simple(flag);
  r.Bulk("begin_search");
  r.Map(2);
  r.Bulk("type");
  switch (spec.begin.type) {
    case KeyBegin::Type::kIndex:
      r.Bulk("index");
      r.Bulk("spec");
      r.Map(1);
      r.Bulk("index");
      r.Integer(spec.begin.index);
      break;
    case KeyBegin::Type::kKeyword:
      r.Bulk("keyword");
      r.Bulk("spec");
      r.Map(2);
      r.Bulk("keyword");
      r.Bulk(spec.begin.keyword);
      r.Bulk("startfrom");
      r.Integer(spec.begin.index);
      break;
    case KeyBegin::Type::kUnknown:
      r.Bulk("unknown");
      r.Bulk("spec");
      r.Map(0);
      break;
  }
  r.Bulk("find_keys");
  r.Map(2);
  r.Bulk("type");
  switch (spec.find.type) {
    case KeyFind::Type::kRange:
      r.Bulk("range");
      r.Bulk("spec");
      r.Map(3);
      r.Bulk("lastkey");
      r.Integer(spec.find.a);
      r.Bulk("keystep");
      r.Integer(spec.find.b);
      r.Bulk("limit");
      r.Integer(spec.find.c);
      break;
    case KeyFind::Type::kKeynum:
      r.Bulk("keynum");
      r.Bulk("spec");
      r.Map(3);
      r.Bulk("keynumidx");
      r.Integer(spec.find.a);
      r.Bulk("firstkey");
      r.Integer(spec.find.b);
      r.Bulk("keystep");
      r.Integer(spec.find.c);
      break;
    case KeyFind::Type::kUnknown:
      r.Bulk("unknown");
      r.Bulk("spec");
      r.Map(0);
      break;
  }
}

void ReplyCommandInfo(ReplyBuilder& r, const Command& command) {
  r.Array(10);
  r.Bulk(command.name);
  r.Integer(command.arity);
  std::vector<std::string_view> flags = FlagNames(command.flags);
  r.Set(flags.size());
  for (std::string_view flag : flags) r.Simple(flag);
  r.Integer(command.first_key);
  r.Integer(command.last_key);
  r.Integer(command.key_step);
  ReplyAclCategories(r, command.acl_categories);
  r.Set(command.tips.size());
  for (std::string_view tip : command.tips) r.Bulk(tip);
  r.Set(command.key_specs.size());
  for (const KeySpec& spec : command.key_specs) ReplyKeySpec(r, spec);
  // Redis answers an empty set for no subcommands, an array otherwise.
  if (command.subcommands.empty()) {
    r.Set(0);
  } else {
    r.Array(command.subcommands.size());
  }
  for (const auto& sub : command.subcommands) ReplyCommandInfo(r, *sub);
}

// One argument as Redis 7.2 and later describe it: display_text (the name) for every argument
// but a oneof or block, key_spec_index for a key named by a spec, and the fields in Redis's
// order.
void ReplyArgument(ReplyBuilder& r, const CommandArgument& argument) {
  const bool has_token = !argument.token.empty();
  const bool has_since = !argument.since.empty();
  const bool has_flags = argument.optional || argument.multiple;
  const bool has_children = argument.type == "oneof" || argument.type == "block";
  const bool has_key_spec = argument.key_spec_index >= 0;
  r.Map(2 + !has_children + has_key_spec + has_token + has_since + has_flags + has_children);
  r.Bulk("name");
  r.Bulk(argument.name);
  r.Bulk("type");
  r.Bulk(argument.type);
  if (!has_children) {
    r.Bulk("display_text");
    r.Bulk(argument.name);
  }
  if (has_key_spec) {
    r.Bulk("key_spec_index");
    r.Integer(argument.key_spec_index);
  }
  if (has_token) {
    r.Bulk("token");
    r.Bulk(argument.token);
  }
  if (has_since) {
    r.Bulk("since");
    r.Bulk(argument.since);
  }
  if (has_flags) {
    r.Bulk("flags");
    r.Set(argument.optional + argument.multiple);
    if (argument.optional) r.Simple("optional");
    if (argument.multiple) r.Simple("multiple");
  }
  if (has_children) {
    r.Bulk("arguments");
    r.Array(argument.children.size());
    for (const CommandArgument& child : argument.children) ReplyArgument(r, child);
  }
}

void ReplyCommandDocs(ReplyBuilder& r, const Command& command) {
  bool has_subcommands = command.HasSubcommands();
  const std::vector<CommandArgument> arguments =
      command.arguments.empty() ? ParseCommandSyntax(command.syntax) : command.arguments;
  // Redis leaves out a complexity it does not state (LOLWUT).
  const bool has_complexity = !command.complexity.empty();
  const bool has_history = !command.history.empty();
  r.Map(3 + has_complexity + has_history + (has_subcommands ? 1 : 0) + (arguments.empty() ? 0 : 1));
  r.Bulk("summary");
  r.Bulk(command.summary);
  r.Bulk("since");
  r.Bulk(command.since);
  r.Bulk("group");
  r.Bulk(command.group);
  if (has_complexity) {
    r.Bulk("complexity");
    r.Bulk(command.complexity);
  }
  if (has_history) {
    r.Bulk("history");
    r.Array(command.history.size());
    for (const auto& [version, change] : command.history) {
      r.Array(2);
      r.Bulk(version);
      r.Bulk(change);
    }
  }
  if (!arguments.empty()) {
    r.Bulk("arguments");
    r.Array(arguments.size());
    for (const CommandArgument& argument : arguments) ReplyArgument(r, argument);
  }
  if (has_subcommands) {
    r.Bulk("subcommands");
    r.Map(command.subcommands.size());
    for (const auto& sub : command.subcommands) {
      r.Bulk(sub->name);
      ReplyCommandDocs(r, *sub);
    }
  }
}

void CommandCommand(CommandContext& ctx) {
  const auto& all = ctx.server.commands.All();
  ctx.reply.Array(all.size());
  for (const Command* command : all) ReplyCommandInfo(ctx.reply, *command);
}

void CommandCountCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.commands.size()));
}

void CommandInfoCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    CommandCommand(ctx);
    return;
  }
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const Command* command = ctx.server.commands.FindFullName(ctx.arg(i));
    if (command == nullptr) {
      ctx.reply.NullArray();
    } else {
      ReplyCommandInfo(ctx.reply, *command);
    }
  }
}

void CommandDocsCommand(CommandContext& ctx) {
  std::vector<const Command*> chosen;
  if (ctx.argc() == 2) {
    chosen = ctx.server.commands.All();
  } else {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (const Command* c = ctx.server.commands.FindFullName(ctx.arg(i))) chosen.push_back(c);
    }
  }
  ctx.reply.Map(chosen.size());
  for (const Command* command : chosen) {
    ctx.reply.Bulk(command->name);
    ReplyCommandDocs(ctx.reply, *command);
  }
}

void CommandListCommand(CommandContext& ctx) {
  std::string_view pattern = "*";
  std::string_view category_name;
  if (ctx.argc() == 5 && EqualsIgnoreCase(ctx.arg(2), "filterby")) {
    if (EqualsIgnoreCase(ctx.arg(3), "pattern")) {
      pattern = ctx.arg(4);
    } else if (EqualsIgnoreCase(ctx.arg(3), "aclcat")) {
      category_name = ctx.arg(4);
    } else if (EqualsIgnoreCase(ctx.arg(3), "module")) {
      ctx.reply.Array(0);
      return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  } else if (ctx.argc() != 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  // An unknown category lists nothing, as in Redis.
  const uint32_t category = AclCategoryByName(category_name);
  std::vector<std::string_view> names;
  auto consider = [&](const Command& command) {
    if (!GlobMatch(pattern, command.name, true)) return;
    if (!category_name.empty() && !(command.acl_categories & category)) return;
    names.push_back(command.name);
  };
  for (const Command* command : ctx.server.commands.All()) {
    consider(*command);
    for (const auto& sub : command->subcommands) consider(*sub);
  }
  ctx.reply.Array(names.size());
  for (std::string_view name : names) ctx.reply.Bulk(name);
}

// The call a COMMAND GETKEYS names and its keys, or nullopt once the error or the empty answer
// is sent.
struct KeysOfCall {
  std::vector<std::string_view> call;
  std::vector<KeyReference> keys;
};

std::optional<KeysOfCall> FindKeysOfCall(CommandContext& ctx) {
  const Command* command = ctx.server.commands.Find(ctx.arg(2));
  if (command == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return std::nullopt;
  }
  size_t argc = ctx.argc() - 2;
  if (command->HasSubcommands() && argc >= 2) {
    if (const Command* sub = command->FindSubcommand(ctx.arg(3))) command = sub;
  }
  if (!command->ArityOk(argc)) {
    ctx.reply.Error("ERR Invalid number of arguments specified for command");
    return std::nullopt;
  }
  if (!command->HasKeys()) {
    ctx.reply.Error(errors::kNoKeyArguments);
    return std::nullopt;
  }
  std::vector<std::string_view> call(ctx.argv.begin() + 2, ctx.argv.end());
  std::optional<std::vector<KeyReference>> keys = command->Keys(call);
  // Redis finds no keys, rather than an error, where a script's numkeys is out of range.
  if ((!keys || keys->empty()) && (command->flags & kCmdNoMandatoryKeys)) {
    ctx.reply.Array(0);
    return std::nullopt;
  }
  if (!keys || keys->empty()) {
    ctx.reply.Error(keys ? errors::kNoKeyArguments : "ERR Invalid arguments specified for command");
    return std::nullopt;
  }
  return KeysOfCall{std::move(call), std::move(*keys)};
}

void CommandGetkeysCommand(CommandContext& ctx) {
  const std::optional<KeysOfCall> keys = FindKeysOfCall(ctx);
  if (!keys) return;
  ctx.reply.Array(keys->keys.size());
  for (const KeyReference& key : keys->keys) ctx.reply.Bulk(keys->call[key.position]);
}

void CommandGetkeysandflagsCommand(CommandContext& ctx) {
  const std::optional<KeysOfCall> keys = FindKeysOfCall(ctx);
  if (!keys) return;
  ctx.reply.Array(keys->keys.size());
  for (const KeyReference& key : keys->keys) {
    ctx.reply.Array(2);
    ctx.reply.Bulk(keys->call[key.position]);
    // A key Redis finds through an incomplete spec comes from the command's own key finder,
    // whose flags never say so.
    const std::vector<std::string_view> names = KeySpecFlagNames(key.flags & ~kKeyIncomplete);
    ctx.reply.Set(names.size());
    for (std::string_view name : names) ctx.reply.Simple(name);
  }
}

void CommandHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"(no subcommand)", "    Return details about all Redis commands.", "COUNT",
             "    Return the total number of commands in this Redis server.", "LIST",
             "    Return a list of all commands in this Redis server.", "INFO [<command-name> ...]",
             "    Return details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "DOCS [<command-name> ...]",
             "    Return documentation details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "GETKEYS <full-command>",
             "    Return the keys from a full Redis command.", "GETKEYSANDFLAGS <full-command>",
             "    Return the keys and the access flags from a full Redis command."});
}

}  // namespace

void RegisterIntrospectionCommands(CommandTable* table) {
  constexpr uint32_t kFlags = kCmdLoading | kCmdStale;
  // COMMAND is @connection in Redis: a client learns the server with it before anything else.
  CommandAdder add{table, "server", kAclConnection};
  Command* command = add("command", -1, kFlags, {}, CommandCommand,
                         "Returns detailed information about all commands.", "2.8.13",
                         "O(N) where N is the total number of Redis commands", "",
                         {"nondeterministic_output_order"});
  add.Sub(command, "count", 2, kFlags, {}, CommandCountCommand, "Returns a count of commands.",
          "2.8.13", "O(1)", "");
  add.Sub(command, "info", -2, kFlags, {}, CommandInfoCommand,
          "Returns information about one, multiple or all commands.", "2.8.13",
          "O(N) where N is the number of commands to look up", "[command-name [command-name ...]]",
          {"nondeterministic_output_order"});
  add.Sub(command, "docs", -2, kFlags, {}, CommandDocsCommand,
          "Returns documentary information about one, multiple or all commands.", "7.0.0",
          "O(N) where N is the number of commands to look up", "[command-name [command-name ...]]",
          {"nondeterministic_output_order"});
  add.Sub(command, "list", -2, kFlags, {}, CommandListCommand, "Returns a list of command names.",
          "7.0.0", "O(N) where N is the total number of Redis commands",
          "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]",
          {"nondeterministic_output_order"});
  add.Sub(command, "getkeys", -4, kFlags, {}, CommandGetkeysCommand,
          "Extracts the key names from an arbitrary command.", "2.8.13",
          "O(N) where N is the number of arguments to the command", "command [arg [arg ...]]");
  add.Sub(command, "getkeysandflags", -4, kFlags, {}, CommandGetkeysandflagsCommand,
          "Extract keys and access flags given a full Redis command", "7.0.0",
          "O(N) where N is the number of arguments to the command", "command [arg [arg ...]]");
  add.Sub(command, "help", 2, kFlags, {}, CommandHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
}

}  // namespace goblin
