#include "server/script_runner.h"

#include <algorithm>
#include <chrono>

#include "core/ascii.h"
#include "core/key_slot.h"
#include "scripting/script_flags.h"
#include "server/cluster/cluster.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

namespace {

constexpr std::string_view kBusyEval =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
constexpr std::string_view kBusyFunction =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

}  // namespace

ScriptRunner::ScriptRunner(Server& server) : server_(server), client_(0, -1, ClientKind::kScript) {
  client_.authenticated = true;
}

std::string_view ScriptRunner::BusyError() const { return function_ ? kBusyFunction : kBusyEval; }

int64_t ScriptRunner::running_ms() const { return running() ? server_.NowMs() - start_ms_ : 0; }

void ScriptRunner::Run(CommandContext& ctx, const Script& script) {
  Client& caller = ctx.client;
  const Config& config = server_.config;
  const bool compat = (script.flags & kScriptCompatMode) != 0;
  const bool writes = !(script.flags & kScriptNoWrites);
  bool out_of_memory = false;
  if (config.maxmemory > 0 && caller.is_connection()) {
    out_of_memory = server_.evictor.Perform() == Evictor::Result::kFail;
  }
  if (compat && caller.is_connection() && ServingStale()) {
    // EVAL lets any script through on a stale replica, for those that declare allow-stale; one
    // without a shebang is refused here as a command would be.
    ctx.reply.Error(errors::kMasterDown);
    return;
  }
  if (!compat) {
    // A script that declared its flags is checked before it runs, as a command would be.
    if (out_of_memory && writes && !(script.flags & kScriptAllowOom)) {
      ctx.reply.Error(errors::kOutOfMemory);
      return;
    }
    if (writes) {
      if (caller.is_connection()) {
        if (std::string refusal = server_.persistence->RefuseWrites(); !refusal.empty()) {
          ctx.reply.Error(refusal);
          return;
        }
        if (!server_.replication->EnoughGoodReplicas(server_.NowMs())) {
          ctx.reply.Error(errors::kNoReplicas);
          return;
        }
        if (server_.master_link->is_replica() && config.replica_read_only) {
          ctx.reply.Error(errors::kReadOnlyReplica);
          return;
        }
      }
      if (script.read_only_command) {
        ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
        return;
      }
    }
  }
  if (server_.cluster_mode != nullptr && (script.flags & kScriptNoCluster)) {
    ctx.reply.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
    return;
  }
  caller_ = &caller;
  cluster_slot_ = script.keys.empty() ? -1 : KeySlot(script.keys.front());
  allow_cross_slot_ = (script.flags & kScriptAllowCrossSlot) != 0;
  function_ = script.function;
  name_ = script.name;
  command_ = ctx.argv;
  read_only_ = script.read_only_command || !writes;
  out_of_memory_ = out_of_memory && !(script.flags & kScriptAllowOom);
  wrote_ = false;
  busy_ = false;
  killed_ = false;
  replication_ = 3;
  start_micros_ = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  start_ms_ = start_micros_ / 1000;
  client_.db = caller.db;
  client_.user = caller.user;  // the script's commands run as its caller
  client_.reply.set_protocol(2);
  caller.running_script = true;

  LuaVm::Invocation invocation;
  invocation.handle = script.handle;
  invocation.keys = script.keys;
  invocation.args = script.args;
  invocation.keys_as_globals = !script.function;
  invocation.name = name_;
  invocation.host = this;
  invocation.reply = &ctx.reply;
  invocation.memory_limit = static_cast<size_t>(config.lua_memory_limit);
  script.vm->Run(invocation);

  caller.running_script = false;
  caller_ = nullptr;
  client_.user = nullptr;
  busy_ = false;
  server_.effects.set_targets(kToAll);
}

uint32_t ScriptRunner::DeclaredFlags(std::string_view command,
                                     std::span<const std::string_view> argv) const {
  if (argv.size() < 2) return kScriptCompatMode;
  uint32_t flags = kScriptCompatMode;
  if (command == "eval" || command == "eval_ro") {
    size_t body_offset;
    std::string error;
    if (!ParseEvalShebang(argv[1], &flags, &body_offset, &error)) return kScriptCompatMode;
  } else if (command == "evalsha" || command == "evalsha_ro") {
    const EvalScript* script = eval.Find(argv[1]);
    if (script != nullptr) flags = script->flags;
  } else if (command == "fcall" || command == "fcall_ro") {
    const ScriptFunction* function = functions.FindFunction(argv[1]);
    if (function != nullptr) flags = function->flags;
  }
  return flags;
}

bool ScriptRunner::RunsScript(std::string_view command) {
  for (std::string_view name : {"eval", "evalsha", "fcall", "eval_ro", "evalsha_ro", "fcall_ro"}) {
    if (command == name) return true;
  }
  return false;
}

bool ScriptRunner::ServingStale() const {
  return server_.master_link->is_replica() && !server_.config.replica_serve_stale_data &&
         !server_.master_link->connected();
}

std::string ScriptRunner::Refusal(std::span<const std::string_view> argv, const Command** found) {
  const Command* command = server_.commands.Find(argv[0]);
  if (command != nullptr && command->HasSubcommands() && argv.size() >= 2) {
    command = command->FindSubcommand(argv[1]);
  }
  *found = command;
  if (command == nullptr) return "ERR Unknown Redis command called from script";
  if (!command->ArityOk(argv.size())) {
    return "ERR Wrong number of args calling Redis command from script";
  }
  if ((command->flags & kCmdNoscript) && !server_.script_disable_deny_script) {
    return "ERR This Redis command is not allowed from script";
  }
  // Only a script flagged allow-stale gets this far on a stale replica; it may still run only
  // the commands a stale replica serves.
  if (!(command->flags & kCmdStale) && caller_->is_connection() && ServingStale()) {
    return "ERR Can not execute the command on a stale replica";
  }
  if (client_.user != nullptr && !client_.user->unrestricted()) {
    std::string refusal = server_.AclRefusal(client_, *command, argv_, acl::LogContext::kLua);
    if (!refusal.empty()) {
      return "ERR ACL failure in script: " + refusal.substr(refusal.find(' ') + 1);
    }
  }
  if (read_only_ && (command->flags & (kCmdWrite | kCmdMayReplicate))) {
    return "ERR Write commands are not allowed from read-only scripts.";
  }
  if (command->flags & kCmdWrite) {
    if (std::string refusal = WriteRefusal(*command); !refusal.empty()) return refusal;
  }
  // A cluster node's script reaches only keys of the slots it serves, one slot at a time; the
  // master's stream and the log's replay run whatever they carry.
  if (server_.cluster_mode != nullptr && caller_->is_connection()) {
    return server_.cluster_mode->ScriptRefusal(*command, argv_, *caller_, allow_cross_slot_,
                                               &cluster_slot_);
  }
  return "";
}

std::string ScriptRunner::WriteRefusal(const Command& command) {
  // Once a script has written, refusing a later write would leave it half done.
  if (wrote_) return "";
  if (caller_->is_connection()) {
    if (std::string refusal = server_.persistence->RefuseWrites(); !refusal.empty()) {
      return refusal;
    }
    if (!server_.replication->EnoughGoodReplicas(server_.NowMs())) {
      return std::string(errors::kNoReplicas);
    }
    if (server_.master_link->is_replica() && server_.config.replica_read_only) {
      return std::string(errors::kReadOnlyReplica);
    }
  }
  if (out_of_memory_ && (command.flags & kCmdDenyOom)) return std::string(errors::kOutOfMemory);
  return "";
}

void ScriptRunner::Call(std::span<const std::string_view> argv, int resp, std::string* reply) {
  const Command* command = nullptr;
  argv_.assign(argv.begin(), argv.end());
  if (std::string refusal = Refusal(argv, &command); !refusal.empty()) {
    // A refused call is counted as a refused command is, whether the script raises the error
    // (redis.call) or keeps it (redis.pcall); the script's own error reply is not counted again.
    server_.CountError(refusal);
    if (command != nullptr) ++command->stats.rejected_calls;
    OutputBuffer error;
    ReplyBuilder(&error).Error(refusal);
    *reply = error.ToString();
    return;
  }
  if (command->flags & kCmdWrite) wrote_ = true;
  client_.reply.set_protocol(resp);
  client_.output.clear();
  // redis.set_repl's bits are the effects stream's targets (REPL_AOF the log, REPL_REPLICA the
  // replicas).
  server_.effects.set_targets(static_cast<uint8_t>(replication_ & kToAll));
  server_.Dispatch(client_, argv_);
  *reply = client_.output.ToString();
  client_.output.clear();
}

void ScriptRunner::Log(int level, std::string_view message) {
  static constexpr LogLevel kLevels[] = {LogLevel::kDebug, LogLevel::kVerbose, LogLevel::kNotice,
                                         LogLevel::kWarning};
  goblin::Log(kLevels[level], message);
}

bool ScriptRunner::Interrupted(std::string* error) {
  if (!busy_ && server_.NowMs() - start_ms_ >= server_.config.busy_reply_threshold) {
    busy_ = true;
    LogWarning("Slow script detected: still in execution after " +
               std::to_string(server_.NowMs() - start_ms_) +
               " milliseconds. You can try killing the script using the " +
               (function_ ? "FUNCTION KILL" : "SCRIPT KILL") +
               " command. Script name is: " + std::string(name_) + ".");
  }
  if (busy_ && !killed_) server_.ServeWhileScriptRuns();
  if (!killed_) return false;
  *error = "Script killed by user with SCRIPT KILL...";
  return true;
}

std::string ScriptRunner::Kill(bool function) {
  if (!running()) return "NOTBUSY No scripts in execution right now.";
  if (wrote_) {
    return "UNKILLABLE Sorry the script already executed write commands against the dataset. "
           "You can either wait the script termination or kill the server in a hard way using "
           "the SHUTDOWN NOSAVE command.";
  }
  // The other kind of KILL gets the -BUSY reply of the script that runs.
  if (function != function_) return std::string(BusyError());
  killed_ = true;
  return "";
}

std::optional<bool> ScriptRunner::AclCheck(std::span<const std::string_view> argv) {
  std::vector<std::string_view> call(argv.begin(), argv.end());
  std::string unknown;
  const Command* command = server_.LookUpCommand(call, &unknown);
  if (command == nullptr) return std::nullopt;
  const acl::User* user = caller_ != nullptr ? caller_->user : nullptr;
  size_t position = 0;
  return user == nullptr || user->Check(*command, call, &position) == acl::Denial::kNone;
}

void ScriptRunner::SetReplication(int flags) { replication_ = flags; }

}  // namespace goblin
