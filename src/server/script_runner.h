// Runs EVAL scripts and functions for the server: the script client their redis.call commands
// run as, the checks Redis makes before a script starts and on each command it calls, the
// busy state past busy-reply-threshold, and SCRIPT KILL / FUNCTION KILL.
//
// Invariants:
//  1. One script runs at a time, to its end, as one unit of the effects stream: the commands
//     it calls join the unit of the EVAL or FCALL that started it, so their effects reach
//     the append-only file in order inside MULTI ... EXEC (never the script text itself).
//  2. While a script runs past busy-reply-threshold, the server reads and answers other
//     clients between VM instructions: they get -BUSY, except for the commands flagged
//     allow-busy (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE, ...). The caller waits unread.
//  3. A script that has written is not killed (-UNKILLABLE): it would leave half its writes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "scripting/eval_scripts.h"
#include "scripting/function_libraries.h"
#include "scripting/lua_vm.h"
#include "server/client.h"
#include "server/command_table.h"

namespace goblin {

class Server;
struct CommandContext;

class ScriptRunner : private ScriptHost {
 public:
  explicit ScriptRunner(Server& server);

  EvalScripts eval;
  FunctionLibraries functions;

  struct Script {
    LuaVm* vm = nullptr;
    int handle = 0;
    uint32_t flags = 0;  // ScriptFlag bits
    std::string_view name;
    std::span<const std::string_view> keys;
    std::span<const std::string_view> args;
    bool function = false;           // FCALL (else EVAL)
    bool read_only_command = false;  // EVAL_RO, EVALSHA_RO, FCALL_RO
  };
  // Checks the script's flags against the server's state, runs it for ctx's client and
  // appends its reply.
  void Run(CommandContext& ctx, const Script& script);

  // The flags of the script the call argv of EVAL, EVALSHA or FCALL (or their _RO forms) names,
  // read before the call as Redis's getCommandFlags reads them: kScriptCompatMode for a script
  // without a shebang, an unknown one or a bad shebang.
  uint32_t DeclaredFlags(std::string_view command, std::span<const std::string_view> argv) const;
  // EVAL, EVALSHA, FCALL or one of their _RO forms.
  static bool RunsScript(std::string_view command);

  bool running() const { return caller_ != nullptr; }
  // The client whose EVAL or FCALL is running, or null.
  const Client* caller() const { return caller_; }
  bool running_function() const { return running() && function_; }
  // Past busy-reply-threshold: other clients are being answered -BUSY.
  bool busy() const { return busy_; }
  // The -BUSY reply for a command refused meanwhile.
  std::string_view BusyError() const;
  // SCRIPT KILL (function false) / FUNCTION KILL: the reply text ("" for OK).
  std::string Kill(bool function);
  // SHUTDOWN NOSAVE: the running script stops at its next check, written or not.
  void Abort() { killed_ = running(); }
  // The wall clock, in microseconds, when the running script started (TIME inside it).
  int64_t start_micros() const { return start_micros_; }
  // The running script's name and milliseconds so far (FUNCTION STATS).
  std::string_view running_name() const { return name_; }
  std::span<const std::string_view> running_command() const { return command_; }
  int64_t running_ms() const;

  // INFO memory.
  size_t EvalVmBytes() { return eval.vm().MemoryBytes(); }
  size_t FunctionVmBytes() { return functions.vm().MemoryBytes(); }

 private:
  // ScriptHost: what redis.call and friends reach.
  void Call(std::span<const std::string_view> argv, int resp, std::string* reply) override;
  void Log(int level, std::string_view message) override;
  bool Interrupted(std::string* error) override;
  std::optional<bool> AclCheck(std::span<const std::string_view> argv) override;
  void SetReplication(int flags) override;
  // The script-specific refusal of a command redis.call was given ("" when it may run);
  // *command is its row.
  std::string Refusal(std::span<const std::string_view> argv, const Command** command);
  // A replica whose link is down, with replica-serve-stale-data no.
  bool ServingStale() const;
  // The refusals of a write: the server cannot persist, too few replicas, a read-only replica,
  // out of memory.
  std::string WriteRefusal(const Command& command);

  Server& server_;
  Client client_;
  std::vector<std::string_view> argv_;
  // The running call.
  Client* caller_ = nullptr;
  bool function_ = false;
  std::string_view name_;                      // valid while the script runs
  std::span<const std::string_view> command_;  // the EVAL or FCALL being run
  bool read_only_ = false;
  bool out_of_memory_ = false;  // at the start: a compatibility-mode script's first write fails
  bool wrote_ = false;
  // Cluster mode: the slot of the keys the script reached so far (-1: none yet), and whether it
  // may reach several (the allow-cross-slot-keys flag).
  int cluster_slot_ = -1;
  bool allow_cross_slot_ = false;
  bool busy_ = false;
  bool killed_ = false;
  int replication_ = 3;
  int64_t start_ms_ = 0;
  int64_t start_micros_ = 0;
};

}  // namespace goblin
