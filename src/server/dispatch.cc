// Running one command, in the two steps Redis's processCommand and call() take:
//
//   admission  the command is looked up, then the checks that may refuse it run in Redis's
//              order (AdmissionRefusal); an admitted command may still wait (CLIENT PAUSE) or
//              be queued (MULTI)
//   execution  the handler, its effects, and the statistics after it: commandstats, the
//              latency histograms, errorstats, SLOWLOG, LATENCY, MONITOR (Call)
//
// The commands EXEC runs were admitted when they were queued, and EXEC itself was admitted with
// the flags of its whole queue: they go straight to execution (RunQueued), as in Redis.
#include <algorithm>

#include "core/ascii.h"
#include "scripting/script_flags.h"
#include "server/crash_report.h"
#include "server/cycle_clock.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/script_runner.h"
#include "server/cluster/cluster.h"
#include "server/server.h"

namespace goblin {

namespace {

// Redis formats an unknown name with %s, so it stops at its first NUL byte.
std::string PrintableName(std::string_view arg, size_t limit) {
  return std::string(arg.substr(0, std::min(limit, arg.find('\0'))));
}

}  // namespace

void Server::Execute(Client& client, const std::vector<std::string_view>& argv) {
  const uint64_t output_before = client.output.end_position();
  bool skip_reply = client.reply_mode != ReplyMode::kOn;
  const Tracking::Frame tracking_frame = tracking.Enter(client);
  Dispatch(client, argv);
  if (!client.paused) {  // else not run yet: CLIENT PAUSE
    // CLIENT REPLY OFF|SKIP: the command ran, its reply is dropped.
    // (Unless the client was closed meanwhile, its output dropped.)
    if (skip_reply && client.reply_mode != ReplyMode::kOn &&
        client.output.end_position() > output_before) {
      client.output.Truncate(output_before - std::min(output_before, client.output.consumed()));
    }
    if (client.reply_mode == ReplyMode::kSkipThis) client.reply_mode = ReplyMode::kOn;
    if (client.reply_mode == ReplyMode::kSkipNext) client.reply_mode = ReplyMode::kSkipThis;
  }
  // Invalidations of the client's own keys follow its reply (and pass CLIENT REPLY OFF).
  tracking.Leave(tracking_frame, argv);
  // A replica's link carries the stream only: one that made a reply is dropped, as in Redis.
  if (client.kind == ClientKind::kMaster) {
    client.discarded_replies.clear();  // the master reads no replies
  } else if (client.is_replica() && !client.discarded_replies.empty()) {
    LogWarning("Replica generated a reply to command '" +
               (client.last_command != nullptr ? client.last_command->name : "NULL") +
               "', disconnecting it: id=" + std::to_string(client.id) + " addr=" + client.address);
    client.discarded_replies.clear();
    CloseClientSoon(client);
    return;
  }
  if (client.paused) return;
  if (any_ready_) HandleReadyKeys();
}

void Server::Dispatch(Client& client, const std::vector<std::string_view>& argv) {
  DispatchCommand(client, argv);
  // ASKING covers the one command after it (a whole transaction when it comes before MULTI),
  // refused or not.
  if (client.asking && !client.in_multi &&
      (client.last_command == nullptr || client.last_command->name != "asking")) {
    client.asking = false;
  }
}

void Server::DispatchCommand(Client& client, const std::vector<std::string_view>& argv) {
  std::string error;
  const Command* command = LookUpCommand(argv, &error);
  client.last_command = command;  // refused or not, as Redis's c->lastcmd
  if (command == nullptr) {
    Refuse(client, error, nullptr);
    return;
  }
  const AdmissionFlags flags = FlagsForAdmission(client, *command, argv);
  if (std::string refusal = AdmissionRefusal(client, *command, flags, argv); !refusal.empty()) {
    Refuse(client, refusal, command);
    return;
  }
  if (paused() && client.is_connection() && !client.is_replica() && !client.retrying_block &&
      PausesCommand(flags.any)) {
    client.paused = true;  // the command stays in the input until the pause ends
    paused_clients_.push_back(client.id);
    return;
  }
  if (client.in_multi && !(command->flags & kCmdTransactionControl)) {
    client.Queue(argv, flags.any);
    client.reply.Simple("QUEUED");
    return;
  }
  Call(client, *command, argv);
}

void Server::RunQueued(Client& client, const std::vector<std::string_view>& argv) {
  std::string error;
  // Found when it was queued; the table does not change at run time.
  const Command* command = LookUpCommand(argv, &error);
  // The user's rules may have changed since the command was queued: they are checked again.
  if (client.user != nullptr && !client.user->unrestricted()) {
    size_t position = 0;
    const acl::Denial denial =
        CheckAndLog(client, *command, argv, acl::LogContext::kMulti, &position);
    if (denial != acl::Denial::kNone) {
      static constexpr std::string_view kReasons[] = {
          "no permission", "no permission to execute the command or subcommand",
          "no permission to touch the specified keys", "no permission",
          "no permission to access one of the channels used as arguments"};
      client.reply.Error(
          "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
          "EXEC call. This command is no longer allowed for the following reason: " +
          std::string(kReasons[static_cast<size_t>(denial)]));
      CountError("NOPERM");
      return;
    }
  }
  Call(client, *command, argv);
}

const Command* Server::LookUpCommand(const std::vector<std::string_view>& argv,
                                     std::string* error) const {
  const Command* command = commands.Find(argv[0]);
  if (command == nullptr) {
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + PrintableName(argv[i], 128 - args.size()) + "' ";
    }
    *error = errors::OneLine("ERR unknown command '" + PrintableName(argv[0], 128) +
                             "', with args beginning with: " + args);
    return nullptr;
  }
  if (!command->HasSubcommands() || argv.size() < 2) return command;
  const Command* sub = command->FindSubcommand(argv[1]);
  if (sub == nullptr) {
    *error = errors::OneLine(
        errors::UnknownSubcommand(PrintableName(argv[1], 128), AsciiUpper(command->name)));
  }
  return sub;
}

Server::AdmissionFlags Server::FlagsForAdmission(const Client& client, const Command& command,
                                                 const std::vector<std::string_view>& argv) const {
  AdmissionFlags flags{command.flags, ~command.flags};
  if ((command.flags & kCmdNoscript) && ScriptRunner::RunsScript(command.name)) {
    // EVAL, EVALSHA, FCALL and their _RO forms: a script that declares its flags is admitted by
    // them, as Redis's scriptFlagsToCmdFlags reads them (a write without no-writes, deny-oom
    // without allow-oom or no-writes, stale only with allow-stale). One without a shebang, or
    // not known yet, keeps the command's flags and may-replicate (hidden from COMMAND) unless it
    // is a _RO form; its checks come as it runs.
    const uint32_t script_flags = scripts->DeclaredFlags(command.name, argv);
    if (!(script_flags & kScriptCompatMode)) {
      constexpr uint32_t kDeclared = kCmdWrite | kCmdDenyOom | kCmdStale | kCmdMayReplicate;
      uint32_t declared = 0;
      if (!(script_flags & kScriptNoWrites)) declared |= kCmdWrite;
      if (!(script_flags & (kScriptNoWrites | kScriptAllowOom))) declared |= kCmdDenyOom;
      if (script_flags & kScriptAllowStale) declared |= kCmdStale;
      flags.any = (flags.any & ~kDeclared) | declared;
      flags.lacking = (flags.lacking & ~kDeclared) | (kDeclared & ~declared);
    } else if (!(command.flags & kCmdReadonly)) {
      flags.any |= kCmdMayReplicate;
      flags.lacking &= ~kCmdMayReplicate;
    }
  }
  if (client.in_multi && command.name == "exec") {
    flags.any |= client.queued_flags;
    flags.lacking |= client.queued_lacking_flags;
  }
  return flags;
}

// The checks of Redis's processCommand, in its order: when several refusals apply, the first
// of this list is the one the client gets.
//    1. arity
//    2. a protected command (DEBUG, MODULE LOAD) that enable-debug-command or
//       enable-module-command does not allow
//    3. authentication
//    4. a command MULTI may not hold, inside MULTI
//    5. the client's ACL user may not run it, or not on these keys or channels
//    6. in cluster mode, a key of a slot this node does not serve (-MOVED, -ASK, ...)
//    6. maxmemory, once the policy has evicted what it may
//    7. MISCONF: the last background save or an AOF write failed
//    8. min-replicas-to-write
//    9. a write to a read-only replica
//   10. the RESP2 subscribed context
//   11. replica-serve-stale-data no, while the link to the master is down
//   12. loading
//   13. a script running past busy-reply-threshold
//   14. a replica or a monitor (Redis's monitors are replicas underneath) touching the keyspace
// Then, in Dispatch: CLIENT PAUSE holds the command, MULTI queues it.
// A connection goes through every check; the other clients (the append-only file's replay,
// the master's stream, a script's calls: server/client.h) only through the first five (a
// script's calls are checked against its caller's user by the script runner), and a write of
// the master's stream that this replica cannot persist is a panic
// (replica-ignore-disk-write-errors), as in Redis.
std::string Server::AdmissionRefusal(Client& client, const Command& command,
                                     const AdmissionFlags& flags,
                                     const std::vector<std::string_view>& argv) {
  if (!command.ArityOk(argv.size())) return errors::WrongArity(command.name);
  if (command.flags & kCmdProtected) {
    const bool debug = command.name == "debug";
    const std::string& mode = debug ? config.enable_debug_command : config.enable_module_command;
    if (mode != "yes" && !(mode == "local" && client.is_local())) {
      return debug ? errors::ProtectedCommandRefused("DEBUG", "enable-debug-command")
                   : errors::ProtectedCommandRefused("MODULE", "enable-module-command");
    }
  }
  if (!client.authenticated && !(command.flags & kCmdNoAuth) && acl.DefaultNeedsAuth()) {
    return std::string(errors::kNoAuth);
  }
  if (client.in_multi && (command.flags & kCmdNoMulti)) {
    return "ERR Command not allowed inside a transaction";
  }
  // A script's calls were checked by the script runner, with the script's context.
  if (client.user != nullptr && !client.user->unrestricted() &&
      client.kind != ClientKind::kScript) {
    size_t position = 0;
    if (client.user->Check(command, argv, &position) != acl::Denial::kNone) {
      return AclRefusal(client, command, argv, LogContextOf(client));
    }
  }
  // The master's stream and the log's replay carry what was accepted once: never redirected.
  if (cluster_mode != nullptr && client.is_connection()) {
    if (std::string refusal = cluster_mode->Redirection(client, command, argv); !refusal.empty()) {
      return refusal;
    }
  }
  if (client.kind == ClientKind::kMaster && (flags.any & kCmdWrite) &&
      !persistence->RefuseWrites().empty()) {
    // A replica that cannot persist what its master sends stops, as Redis's does, unless
    // replica-ignore-disk-write-errors lets it diverge from its disk instead.
    if (!config.replica_ignore_disk_write_errors) {
      Panic("Replica was unable to write command to disk.", __FILE__, __LINE__);
    }
    if (now_ms_ - disk_error_logged_ms_ > 10000) {
      disk_error_logged_ms_ = now_ms_;
      LogWarning("Replica is applying a command even though it is unable to write to disk.");
    }
  }
  if (!client.is_connection()) return "";
  // While a script is busy nothing is evicted: the script's view of the data must hold.
  if (config.maxmemory > 0 && !scripts->busy() && !client.retrying_block &&
      evictor.Perform() == Evictor::Result::kFail &&
      RefusedWhenOutOfMemory(client, command, flags.any)) {
    return std::string(errors::kOutOfMemory);
  }
  const bool writes = flags.any & kCmdWrite;
  // PING too, so that a health check sees the failure.
  if (writes || command.name == "ping") {
    if (std::string refusal = persistence->RefuseWrites(); !refusal.empty()) return refusal;
  }
  if (writes && !replication->EnoughGoodReplicas(now_ms_)) {
    return std::string(errors::kNoReplicas);
  }
  const bool replica = master_link->is_replica();
  if (writes && replica && config.replica_read_only) {
    return std::string(errors::kReadOnlyReplica);
  }
  if (client.subscribed() && !client.reply.resp3() && !AllowedWhileSubscribed(command)) {
    return "ERR Can't execute '" + command.name +
           "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this "
           "context";
  }
  if (replica && !config.replica_serve_stale_data && !master_link->connected() &&
      (flags.lacking & kCmdStale)) {
    return std::string(errors::kMasterDown);
  }
  if (loading() && (flags.lacking & kCmdLoading)) return std::string(errors::kLoading);
  if (scripts->busy() && !client.running_script && !(command.flags & kCmdAllowBusy)) {
    return std::string(scripts->BusyError());
  }
  if ((client.monitor || client.is_replica()) &&
      (flags.any & (kCmdWrite | kCmdReadonly | kCmdMayReplicate))) {
    return "ERR Replica can't interact with the keyspace";
  }
  return "";
}

// Over maxmemory with nothing left to evict, Redis refuses commands that may grow memory
// (denyoom), EXEC of a transaction holding one, and inside MULTI anything but the commands
// that end it (queuing itself takes memory).
bool Server::RefusedWhenOutOfMemory(const Client& client, const Command& command,
                                    uint32_t any_flags) const {
  if (any_flags & kCmdDenyOom) return true;
  const std::string& name = command.name;
  return client.in_multi && name != "exec" && name != "discard" && name != "quit" &&
         name != "reset";
}

// What a RESP2 client in the subscribed context may still run.
bool Server::AllowedWhileSubscribed(const Command& command) {
  static constexpr std::string_view kAllowed[] = {"subscribe",   "ssubscribe",   "psubscribe",
                                                  "unsubscribe", "sunsubscribe", "punsubscribe",
                                                  "ping",        "quit",         "reset"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), command.name) != std::end(kAllowed);
}

void Server::PropagatedCommandFailed(const Client& client, std::string_view error) {
  // As Redis words it, the error cut at 4096 bytes.
  const bool from_log = client.kind == ClientKind::kAofReplay;
  const std::string command =
      client.last_command != nullptr ? client.last_command->name : "<unknown>";
  LogWarning(std::string("== CRITICAL == This ") + (from_log ? "server" : "replica") +
             " is sending an error to its " + (from_log ? "AOF-loading-client" : "master") + ": '" +
             std::string(error.substr(0, 4096)) + "' after processing the command '" + command +
             "'");
  ++stats.unexpected_error_replies;
  // propagation-error-behavior: a read-only replica panics under panic and panic-on-replicas
  // (a writable one may diverge from its master by design), the AOF's replay under panic only.
  const std::string& behavior = config.propagation_error_behavior;
  const bool panic =
      from_log ? behavior == "panic" : config.replica_read_only && behavior != "ignore";
  if (panic) {
    Panic(std::string("This ") + (from_log ? "server" : "replica") +
              " panicked sending an error to its " + (from_log ? "AOF-loading-client" : "master") +
              " after processing the command '" + command + "'",
          __FILE__, __LINE__);
  }
}

void Server::Refuse(Client& client, std::string_view error, const Command* counted) {
  if (counted != nullptr && counted->name == "exec") {
    // A refused EXEC ends its transaction, if any (Redis's execCommandAbort, in MULTI or not).
    client.DiscardTransaction();
    UnwatchAll(client);
    client.reply.Error("EXECABORT Transaction discarded because of: " + std::string(error));
  } else {
    client.reply.Error(error);
  }
  CountError(error);
  if (counted != nullptr) ++counted->stats.rejected_calls;
  if (client.kind == ClientKind::kMaster || client.kind == ClientKind::kAofReplay) {
    PropagatedCommandFailed(client, error);
  }
  if (client.in_multi) client.multi_failed = true;
}

void Server::Call(Client& client, const Command& command,
                  const std::vector<std::string_view>& argv) {
  uint64_t start = CycleClock::Now();
  uint64_t errors_before = stats.total_error_replies;
  // Where the reply goes: the client's output, or the replies a replication link discards.
  OutputBuffer& replies = *client.reply.buffer();
  const uint64_t output_before = replies.end_position();
  const uint64_t dirty_before = dirty;
  const uint64_t changes_before = stats.keyspace.modifications;
  const uint64_t repl_offset_before = replication->offset();
  effects.BeginCommand();
  CommandContext ctx{*this, client, argv, command, client.reply, now_ms_};
  // A replica expires nothing itself: its master's commands see expired keys, the others not.
  // Nor does a paused server (CLIENT PAUSE, FAILOVER): the replicas' offset must stay put.
  // A writable replica's own writes are the exception, as Redis 7's: a write deletes the
  // expired key it meets, and the keys they give deadlines are expired by this replica's cron.
  const bool replica = master_link->is_replica();
  const bool own_write = replica && !config.replica_read_only &&
                         client.kind != ClientKind::kMaster && (command.flags & kCmdWrite);
  expiry_rules_.keep = replica && client.kind == ClientKind::kMaster;
  expiry_rules_.hide = (paused() || (replica && !own_write)) && !expiry_rules_.keep;
  RecordOwnDeadlines(replica && !config.replica_read_only && client.kind != ClientKind::kMaster);
  command_touches_keys_ =
      !(command.flags & kCmdNoTouch) && (!client.no_touch || command.name == "touch");
  UpdateKeyTouching();
  const CommandContext* outer = SetRunningCommand(&ctx);
  // A reply that grows past what the client may hold stops being built (reply_builder.h): the
  // client is closed for it at once, as Redis closes one over its hard limit.
  const size_t outer_limit = client.reply.limit();
  const bool limited = client.is_connection() && !client.is_replica();
  if (limited) {
    const uint64_t hard = OutputHardLimit(client);
    if (hard > 0) client.reply.set_limit(hard);
  }
  command.handler(ctx);
  // A call that blocked (or, run again, found nothing and blocked again) is counted once, when
  // it is served or unblocked otherwise (CountUnblockedCall), as Redis counts it.
  const bool blocked_now = client.retrying_block ? client.block_requested : client.blocked;
  const bool over_limit = limited && client.reply.over_limit();
  client.reply.set_limit(outer_limit);
  SetRunningCommand(outer);
  // The limits are read again there; should the command have raised them (CONFIG SET inside
  // a transaction), the truncated reply must not leave all the same.
  if (over_limit && !DropOverOutputLimit(client)) CloseClientSoon(client);
  if (tracking.remembering()) tracking.RememberKeys(command, argv);
  if (!monitors_.empty() && !(command.flags & (kCmdSkipMonitor | kCmdAdmin)) &&
      !client.retrying_block && client.kind != ClientKind::kAofReplay) {
    FeedMonitors(client, command, argv);
  }
  // A may-replicate command that changed data (PFCOUNT writing its cache) is logged too, as
  // Redis propagates whatever made the server dirty.
  effects.EndCommand(client.db, argv,
                     (command.flags & (kCmdWrite | kCmdMayReplicate)) &&
                         (dirty != dirty_before || stats.keyspace.modifications != changes_before));
  // WAIT counts the replicas that acknowledged the client's last write.
  if (replication->offset() != repl_offset_before) client.write_offset = replication->offset();
  const uint64_t elapsed = CycleClock::Now() - start;
  int64_t duration = CycleClock::ToMicros(elapsed);
  // A reply that starts with '-' is a failed call, as INFO commandstats counts it.
  if (replies.end_position() > output_before && output_before >= replies.consumed() &&
      replies.at(output_before - replies.consumed()) == '-') {
    const size_t start = output_before - replies.consumed();
    const std::string error = replies.substr(start + 1, replies.find('\r', start) - start - 1);
    if (stats.total_error_replies == errors_before) CountError(error);
    ++command.stats.failed_calls;
    if (client.kind == ClientKind::kMaster || client.kind == ClientKind::kAofReplay) {
      PropagatedCommandFailed(client, error);
    }
  }
  ++client.commands_processed;
  ++stats.total_commands_processed;
  if (blocked_now) return;
  ++command.stats.calls;
  command.stats.usec += static_cast<uint64_t>(duration);
  if (config.latency_tracking) {
    std::unique_ptr<LatencyHistogram>& histogram = command.stats.latency;
    if (histogram == nullptr) histogram = std::make_unique<LatencyHistogram>();
    histogram->Record(CycleClock::ToNanos(elapsed));
  }
  if (!(command.flags & kCmdSkipSlowlog)) RecordSlowlog(client, command, argv, duration);
  if (config.latency_monitor_threshold > 0 && duration / 1000 >= config.latency_monitor_threshold) {
    RecordLatency(command.flags & kCmdFast ? "fast-command" : "command", duration / 1000);
  }
}

}  // namespace goblin
