// Scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, FUNCTION, FCALL, FCALL_RO.
//
// The interpreters and the script cache live in src/scripting; running a script (its checks,
// the commands it calls, BUSY and KILL) is server/script_runner.h.
#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "core/glob.h"
#include "core/string_number.h"
#include "scripting/script_flags.h"
#include "server/errors.h"
#include "server/script_runner.h"

namespace goblin {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// numkeys at argv[2]: the keys follow it, then the arguments. not_integer is the reply for a
// count that is not a number (EVAL and FCALL differ).
bool ParseNumKeys(CommandContext& ctx, std::string_view not_integer,
                  std::span<const std::string_view>* keys,
                  std::span<const std::string_view>* args) {
  int64_t numkeys = 0;
  if (!ParseInt64(ctx.arg(2), &numkeys)) {
    ctx.reply.Error(not_integer);
    return false;
  }
  if (numkeys > static_cast<int64_t>(ctx.argc()) - 3) {
    ctx.reply.Error(errors::kTooManyKeys);
    return false;
  }
  if (numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return false;
  }
  std::span<const std::string_view> all(ctx.argv);
  *keys = all.subspan(3, static_cast<size_t>(numkeys));
  *args = all.subspan(3 + static_cast<size_t>(numkeys));
  return true;
}

void FeedMonitors(CommandContext& ctx) {
  // Before the script, so that the commands it calls follow it in MONITOR.
  ctx.server.FeedMonitors(ctx.client, ctx.command, ctx.argv);
}

void EvalGeneric(CommandContext& ctx, bool by_sha, bool read_only) {
  FeedMonitors(ctx);
  if (by_sha && ctx.arg(1).size() != 40) {
    ctx.reply.Error(kNoScript);
    return;
  }
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
  if (!ParseNumKeys(ctx, errors::kNotInteger, &keys, &args)) return;
  ScriptRunner& runner = *ctx.server.scripts;
  const EvalScript* script = nullptr;
  if (by_sha) {
    script = runner.eval.Find(ctx.arg(1));
    if (script == nullptr) {
      ctx.reply.Error(kNoScript);
      return;
    }
  } else {
    std::string sha;
    std::string error;
    script = runner.eval.Add(ctx.arg(1), &sha, &error);
    if (script == nullptr) {
      ctx.reply.Error(error);
      return;
    }
  }
  runner.Run(ctx, {.vm = &runner.eval.vm(),
                   .handle = script->handle,
                   .flags = script->flags,
                   .name = script->sha,
                   .keys = keys,
                   .args = args,
                   .read_only_command = read_only});
}

void EvalCommand(CommandContext& ctx) { EvalGeneric(ctx, false, false); }
void EvalShaCommand(CommandContext& ctx) { EvalGeneric(ctx, true, false); }
void EvalRoCommand(CommandContext& ctx) { EvalGeneric(ctx, false, true); }
void EvalShaRoCommand(CommandContext& ctx) { EvalGeneric(ctx, true, true); }

void FcallGeneric(CommandContext& ctx, bool read_only) {
  FeedMonitors(ctx);
  ScriptRunner& runner = *ctx.server.scripts;
  const ScriptFunction* function = runner.functions.FindFunction(ctx.arg(1));
  if (function == nullptr) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
  if (!ParseNumKeys(ctx, "ERR Bad number of keys provided", &keys, &args)) return;
  runner.Run(ctx, {.vm = &runner.functions.vm(),
                   .handle = function->handle,
                   .flags = function->flags,
                   .name = function->name,
                   .keys = keys,
                   .args = args,
                   .function = true,
                   .read_only_command = read_only});
}

void FcallCommand(CommandContext& ctx) { FcallGeneric(ctx, false); }
void FcallRoCommand(CommandContext& ctx) { FcallGeneric(ctx, true); }

// --- SCRIPT ---------------------------------------------------------------------------------

void ScriptLoadCommand(CommandContext& ctx) {
  std::string sha;
  std::string error;
  if (ctx.server.scripts->eval.Add(ctx.arg(2), &sha, &error) == nullptr) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Bulk(sha);
}

void ScriptExistsCommand(CommandContext& ctx) {
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Integer(ctx.server.scripts->eval.Find(ctx.arg(i)) != nullptr ? 1 : 0);
  }
}

// FLUSH's optional mode; both modes flush at once (the interpreter is dropped whole).
bool ParseFlushMode(CommandContext& ctx, std::string_view error) {
  if (ctx.argc() > 3 || (ctx.argc() == 3 && !EqualsIgnoreCase(ctx.arg(2), "sync") &&
                         !EqualsIgnoreCase(ctx.arg(2), "async"))) {
    ctx.reply.Error(error);
    return false;
  }
  return true;
}

void ScriptFlushCommand(CommandContext& ctx) {
  if (!ParseFlushMode(ctx, "ERR SCRIPT FLUSH only support SYNC|ASYNC option")) return;
  ctx.server.scripts->eval.Flush();
  ctx.reply.Ok();
}

void ReplyKill(CommandContext& ctx, bool function) {
  std::string refusal = ctx.server.scripts->Kill(function);
  if (refusal.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(refusal);
  }
}

void ScriptKillCommand(CommandContext& ctx) { ReplyKill(ctx, false); }

void ScriptDebugCommand(CommandContext& ctx) {
  if (EqualsIgnoreCase(ctx.arg(2), "no")) {
    ctx.reply.Ok();
  } else if (EqualsIgnoreCase(ctx.arg(2), "yes") || EqualsIgnoreCase(ctx.arg(2), "sync")) {
    ctx.reply.Error("ERR SCRIPT DEBUG is not supported: this server has no Lua debugger");
  } else {
    ctx.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void ScriptHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"DEBUG (YES|SYNC|NO)", "    Set the debug mode for subsequent scripts executed.",
             "EXISTS <sha1> [<sha1> ...]",
             "    Return information about the existence of the scripts in the script cache.",
             "FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache. Very dangerous on replicas.",
             "    When called without the optional mode argument, the behavior is determined "
             "by the",
             "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
             "    * ASYNC: Asynchronously flush the scripts cache.",
             "    * SYNC: Synchronously flush the scripts cache.", "KILL",
             "    Kill the currently executing Lua script.", "LOAD <script>",
             "    Load a script into the scripts cache without executing it."});
}

// --- FUNCTION -------------------------------------------------------------------------------

void FunctionLoadCommand(CommandContext& ctx) {
  bool replace = false;
  for (size_t i = 2; i + 1 < ctx.argc(); ++i) {
    if (!EqualsIgnoreCase(ctx.arg(i), "replace")) {
      ctx.reply.Error("ERR Unknown option given: " + errors::Quote(ctx.arg(i)));
      return;
    }
    replace = true;
  }
  std::string name;
  std::string error;
  if (!ctx.server.scripts->functions.Load(ctx.arg(ctx.argc() - 1), replace, &name, &error)) {
    ctx.reply.Error(error);
    return;
  }
  MarkDirty(ctx);
  ctx.reply.Bulk(name);
}

void FunctionDeleteCommand(CommandContext& ctx) {
  if (!ctx.server.scripts->functions.Delete(ctx.arg(2))) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  MarkDirty(ctx);
  ctx.reply.Ok();
}

void FunctionFlushCommand(CommandContext& ctx) {
  // Unlike SCRIPT FLUSH, an extra argument is a wrong subcommand call, not a bad mode.
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "FUNCTION"));
    return;
  }
  if (!ParseFlushMode(ctx, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option")) return;
  ctx.server.scripts->functions.Flush();
  MarkDirty(ctx);
  ctx.reply.Ok();
}

void FunctionKillCommand(CommandContext& ctx) { ReplyKill(ctx, true); }

void ReplyFunction(CommandContext& ctx, const ScriptFunction& function) {
  ctx.reply.Map(3);
  ctx.reply.Bulk("name");
  ctx.reply.Bulk(function.name);
  ctx.reply.Bulk("description");
  if (function.has_description) {
    ctx.reply.Bulk(function.description);
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("flags");
  std::vector<std::string_view> flags = ScriptFlagNames(function.flags);
  ctx.reply.Set(flags.size());
  for (std::string_view flag : flags) ctx.reply.Simple(flag);
}

void FunctionListCommand(CommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "withcode") && !with_code) {
      with_code = true;
    } else if (EqualsIgnoreCase(ctx.arg(i), "libraryname") && !pattern) {
      if (i + 1 >= ctx.argc()) {
        ctx.reply.Error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.arg(++i);
    } else {
      ctx.reply.Error("ERR Unknown argument " + errors::Quote(ctx.arg(i)));
      return;
    }
  }
  std::vector<const FunctionLibrary*> listed;
  for (const auto& [name, library] : ctx.server.scripts->functions.libraries()) {
    if (!pattern || GlobMatch(*pattern, name, true)) listed.push_back(library.get());
  }
  ctx.reply.Array(listed.size());
  for (const FunctionLibrary* library : listed) {
    ctx.reply.Map(with_code ? 4 : 3);
    ctx.reply.Bulk("library_name");
    ctx.reply.Bulk(library->name);
    ctx.reply.Bulk("engine");
    ctx.reply.Bulk("LUA");
    ctx.reply.Bulk("functions");
    ctx.reply.Array(library->functions.size());
    for (const auto& function : library->functions) ReplyFunction(ctx, *function);
    if (with_code) {
      ctx.reply.Bulk("library_code");
      ctx.reply.Bulk(library->code);
    }
  }
}

void FunctionStatsCommand(CommandContext& ctx) {
  ScriptRunner& runner = *ctx.server.scripts;
  if (runner.busy() && !runner.running_function()) {
    ctx.reply.Error(runner.BusyError());  // served while busy only for functions
    return;
  }
  ctx.reply.Map(2);
  ctx.reply.Bulk("running_script");
  if (runner.running_function()) {
    ctx.reply.Map(3);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(runner.running_name());
    ctx.reply.Bulk("command");
    std::span<const std::string_view> command = runner.running_command();
    ctx.reply.Array(command.size());
    for (std::string_view arg : command) ctx.reply.Bulk(arg);
    ctx.reply.Bulk("duration_ms");
    ctx.reply.Integer(runner.running_ms());
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("engines");
  ctx.reply.Map(1);
  ctx.reply.Bulk("LUA");
  ctx.reply.Map(2);
  ctx.reply.Bulk("libraries_count");
  ctx.reply.Integer(static_cast<int64_t>(runner.functions.libraries().size()));
  ctx.reply.Bulk("functions_count");
  ctx.reply.Integer(static_cast<int64_t>(runner.functions.function_count()));
}

void FunctionDumpCommand(CommandContext& ctx) {
  ctx.reply.Bulk(ctx.server.scripts->functions.Dump());
}

void FunctionRestoreCommand(CommandContext& ctx) {
  FunctionLibraries::RestorePolicy policy = FunctionLibraries::RestorePolicy::kAppend;
  if (ctx.argc() > 4) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "FUNCTION"));
    return;
  }
  if (ctx.argc() == 4) {
    if (EqualsIgnoreCase(ctx.arg(3), "flush")) {
      policy = FunctionLibraries::RestorePolicy::kFlush;
    } else if (EqualsIgnoreCase(ctx.arg(3), "replace")) {
      policy = FunctionLibraries::RestorePolicy::kReplace;
    } else if (!EqualsIgnoreCase(ctx.arg(3), "append")) {
      ctx.reply.Error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or "
          "REPLACE.");
      return;
    }
  }
  std::string error;
  if (!ctx.server.scripts->functions.Restore(ctx.arg(2), policy, &error)) {
    ctx.reply.Error(error);
    return;
  }
  MarkDirty(ctx);
  ctx.reply.Ok();
}

void FunctionHelpCommand(CommandContext& ctx) {
  ReplyHelp(
      ctx,
      {"LOAD [REPLACE] <FUNCTION CODE>",
       "    Create a new library with the given library name and code.",
       "DELETE <LIBRARY NAME>",
       "    Delete the given library.",
       "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
       "    Return general information on all the libraries:",
       "    * Library name",
       "    * The engine used to run the Library",
       "    * Library description",
       "    * Functions list",
       "    * Library code (if WITHCODE is given)",
       "    It also possible to get only function that matches a pattern using LIBRARYNAME "
       "argument.",
       "STATS",
       "    Return information about the current function running:",
       "    * Function name",
       "    * Command used to run the function",
       "    * Duration in MS that the function is running",
       "    If no function is running, return nil",
       "    In addition, returns a list of available engines.",
       "KILL",
       "    Kill the current running function.",
       "FLUSH [ASYNC|SYNC]",
       "    Delete all the libraries.",
       "    When called without the optional mode argument, the behavior is determined by the",
       "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
       "    * ASYNC: Asynchronously flush the libraries.",
       "    * SYNC: Synchronously flush the libraries.",
       "DUMP",
       "    Return a serialized payload representing the current libraries, can be restored "
       "using FUNCTION RESTORE command",
       "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
       "    Restore the libraries represented by the given payload, it is possible to give a "
       "restore policy to",
       "    control how to handle existing libraries (default APPEND):",
       "    * FLUSH: delete all existing libraries.",
       "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
       "abort.",
       "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
       "replace the old",
       "      libraries with the new libraries (notice that even on this option there is a "
       "chance of failure",
       "      in case of functions name collision with another library)."});
}

}  // namespace

void RegisterScriptingCommands(CommandTable* table) {
  CommandAdder add{table, "scripting", kAclScripting};
  constexpr uint32_t kRun = kCmdNoscript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys;
  add("eval", -3, kRun,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1),
               "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"}},
      EvalCommand, "Executes a server-side Lua script.", "2.6.0",
      "Depends on the script that is executed.", "script numkeys [key [key ...]] [arg [arg ...]]");
  add("evalsha", -3, kRun,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      EvalShaCommand, "Executes a server-side Lua script by SHA1 digest.", "2.6.0",
      "Depends on the script that is executed.", "sha1 numkeys [key [key ...]] [arg [arg ...]]");
  add("eval_ro", -3, kRun | kCmdReadonly,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1),
               "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"}},
      EvalRoCommand, "Executes a read-only server-side Lua script.", "7.0.0",
      "Depends on the script that is executed.", "script numkeys [key [key ...]] [arg [arg ...]]");
  add("evalsha_ro", -3, kRun | kCmdReadonly,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      EvalShaRoCommand, "Executes a read-only server-side Lua script by SHA1 digest.", "7.0.0",
      "Depends on the script that is executed.", "sha1 numkeys [key [key ...]] [arg [arg ...]]");
  add("fcall", -3, kRun,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1),
               "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"}},
      FcallCommand, "Invokes a function.", "7.0.0", "Depends on the function that is executed.",
      "function numkeys [key [key ...]] [arg [arg ...]]");
  add("fcall_ro", -3, kRun | kCmdReadonly,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1),
               "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"}},
      FcallRoCommand, "Invokes a read-only function.", "7.0.0",
      "Depends on the function that is executed.",
      "function numkeys [key [key ...]] [arg [arg ...]]");

  Command* script =
      add("script", -2, 0, {}, nullptr, "A container for Lua scripts management commands.", "2.6.0",
          "Depends on subcommand.", "");
  add.Sub(script, "debug", 3, kCmdNoscript, {}, ScriptDebugCommand,
          "Sets the debug mode of server-side Lua scripts.", "3.2.0", "O(1)", "<YES | SYNC | NO>");
  add.Sub(script, "exists", -3, kCmdNoscript, {}, ScriptExistsCommand,
          "Determines whether server-side Lua scripts exist in the script cache.", "2.6.0",
          "O(N) with N being the number of scripts to check (so checking a single script is an "
          "O(1) operation).",
          "sha1 [sha1 ...]", {"request_policy:all_shards", "response_policy:agg_logical_and"});
  add.Sub(script, "flush", -2, kCmdNoscript, {}, ScriptFlushCommand,
          "Removes all server-side Lua scripts from the script cache.", "2.6.0",
          "O(N) with N being the number of scripts in cache", "[ASYNC | SYNC]",
          {"request_policy:all_nodes", "response_policy:all_succeeded"});
  add.Sub(script, "help", 2, kCmdLoading | kCmdStale, {}, ScriptHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
  add.Sub(script, "kill", 2, kCmdNoscript | kCmdAllowBusy, {}, ScriptKillCommand,
          "Terminates a server-side Lua script during execution.", "2.6.0", "O(1)", "",
          {"request_policy:all_shards", "response_policy:one_succeeded"});
  add.Sub(script, "load", 3, kCmdNoscript | kCmdStale, {}, ScriptLoadCommand,
          "Loads a server-side Lua script to the script cache.", "2.6.0",
          "O(N) with N being the length in bytes of the script body.", "script",
          {"request_policy:all_nodes", "response_policy:all_succeeded"});

  Command* function = add("function", -2, 0, {}, nullptr, "A container for function commands.",
                          "7.0.0", "Depends on subcommand.", "");
  add.Sub(function, "delete", 3, kCmdWrite | kCmdNoscript, {}, FunctionDeleteCommand,
          "Deletes a library and its functions.", "7.0.0", "O(1)", "library-name",
          {"request_policy:all_shards", "response_policy:all_succeeded"});
  add.Sub(function, "dump", 2, kCmdNoscript, {}, FunctionDumpCommand,
          "Dumps all libraries into a serialized binary payload.", "7.0.0",
          "O(N) where N is the number of functions", "");
  add.Sub(function, "flush", -2, kCmdWrite | kCmdNoscript, {}, FunctionFlushCommand,
          "Deletes all libraries and functions.", "7.0.0",
          "O(N) where N is the number of functions deleted", "[ASYNC | SYNC]",
          {"request_policy:all_shards", "response_policy:all_succeeded"});
  add.Sub(function, "help", 2, kCmdLoading | kCmdStale, {}, FunctionHelpCommand,
          "Returns helpful text about the different subcommands.", "7.0.0", "O(1)", "");
  add.Sub(function, "kill", 2, kCmdNoscript | kCmdAllowBusy, {}, FunctionKillCommand,
          "Terminates a function during execution.", "7.0.0", "O(1)", "",
          {"request_policy:all_shards", "response_policy:one_succeeded"});
  add.Sub(function, "list", -2, kCmdNoscript, {}, FunctionListCommand,
          "Returns information about all libraries.", "7.0.0",
          "O(N) where N is the number of functions",
          "[LIBRARYNAME library-name-pattern] [WITHCODE]", {"nondeterministic_output_order"});
  add.Sub(function, "load", -3, kCmdWrite | kCmdDenyOom | kCmdNoscript, {}, FunctionLoadCommand,
          "Creates a library.", "7.0.0", "O(1) (considering compilation time is redundant)",
          "[REPLACE] function-code",
          {"request_policy:all_shards", "response_policy:all_succeeded"});
  add.Sub(function, "restore", -3, kCmdWrite | kCmdDenyOom | kCmdNoscript, {},
          FunctionRestoreCommand, "Restores all libraries from a payload.", "7.0.0",
          "O(N) where N is the number of functions on the payload",
          "serialized-value [FLUSH | APPEND | REPLACE]",
          {"request_policy:all_shards", "response_policy:all_succeeded"});
  add.Sub(function, "stats", 2, kCmdNoscript | kCmdAllowBusy, {}, FunctionStatsCommand,
          "Returns information about a function during execution.", "7.0.0", "O(1)", "",
          {"nondeterministic_output", "request_policy:all_shards", "response_policy:special"});
}

}  // namespace goblin
