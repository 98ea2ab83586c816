// Running one command: lookup, the checks Redis makes before a command may run (arity, AUTH,
// maxmemory, loading, MISCONF, the subscribed context, CLIENT PAUSE, MULTI queueing), the
// handler, its effects, and the statistics after it (commandstats, the latency histograms,
// errorstats, SLOWLOG, LATENCY, MONITOR).
#include <algorithm>

#include "core/ascii.h"
#include "server/crash_report.h"
#include "server/cycle_clock.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/script_runner.h"
#include "server/server.h"

namespace goblin {

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
    LogWarning("Replica generated a reply to command '" + client.last_command +
               "', disconnecting it: id=" + std::to_string(client.id) + " addr=" + client.address);
    client.discarded_replies.clear();
    CloseClientSoon(client);
    return;
  }
  if (client.paused) return;
  if (any_ready_) HandleReadyKeys();
}

// What a RESP2 client in the subscribed context may still run.
bool Server::AllowedWhileSubscribed(const Command& command) {
  static constexpr std::string_view kAllowed[] = {"subscribe",   "ssubscribe",   "psubscribe",
                                                  "unsubscribe", "sunsubscribe", "punsubscribe",
                                                  "ping",        "quit",         "reset"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), command.name) != std::end(kAllowed);
}

// Over maxmemory with nothing left to evict, Redis refuses commands that may grow memory
// (denyoom), EXEC of a transaction holding one, and inside MULTI anything but the commands
// that end it (queuing itself takes memory).
bool Server::RefusedWhenOutOfMemory(const Client& client, const Command& command) const {
  if (command.flags & kCmdDenyOom) return true;
  const std::string& name = command.name;
  if (name == "exec") {
    return QueuedAny(client, [](const Command& q) { return (q.flags & kCmdDenyOom) != 0; });
  }
  return client.in_multi && name != "discard" && name != "quit" && name != "reset";
}

void Server::Dispatch(Client& client, const std::vector<std::string_view>& argv) {
  const Command* command = commands.Find(argv[0]);
  auto reject = [&](std::string_view error, const Command* counted) {
    if (counted != nullptr && counted->name == "exec" && client.in_multi) {
      // A refused EXEC ends its transaction (Redis's execCommandAbort).
      client.in_multi = client.multi_failed = false;
      client.queued.clear();
      UnwatchAll(client);
      client.reply.Error("EXECABORT Transaction discarded because of: " + std::string(error));
    } else {
      client.reply.Error(error);
    }
    CountError(error);
    if (counted != nullptr) ++counted->stats.rejected_calls;
    if (client.in_multi) client.multi_failed = true;
  };
  if (command == nullptr) {
    // Redis formats these with %s, so each argument stops at its first NUL byte.
    auto c_string = [](std::string_view arg, size_t limit) {
      return std::string(arg.substr(0, std::min(limit, arg.find('\0'))));
    };
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + c_string(argv[i], 128 - args.size()) + "' ";
    }
    std::string error =
        "ERR unknown command '" + c_string(argv[0], 128) + "', with args beginning with: " + args;
    std::replace(error.begin(), error.end(), '\r', ' ');
    std::replace(error.begin(), error.end(), '\n', ' ');
    reject(error, nullptr);
    return;
  }
  if (command->HasSubcommands() && argv.size() >= 2) {
    const Command* sub = command->FindSubcommand(argv[1]);
    if (sub == nullptr) {
      std::string upper = AsciiUpper(command->name);
      std::string_view name = argv[1].substr(0, std::min<size_t>(128, argv[1].find('\0')));
      std::string error = errors::UnknownSubcommand(name, upper);
      std::replace(error.begin(), error.end(), '\r', ' ');
      std::replace(error.begin(), error.end(), '\n', ' ');
      reject(error, nullptr);
      return;
    }
    command = sub;
  }
  if (!command->ArityOk(argv.size())) {
    reject(errors::WrongArity(command->name), command);
    return;
  }
  if (scripts->busy() && client.is_connection() && !client.running_script &&
      !(command->flags & kCmdAllowBusy)) {
    reject(scripts->BusyError(), command);
    return;
  }
  if (!client.authenticated && !(command->flags & kCmdNoAuth)) {
    if (config.requirepass.empty()) {
      client.authenticated = true;
    } else {
      reject(errors::kNoAuth, command);
      return;
    }
  }
  if (config.maxmemory > 0 && client.is_connection() && !client.in_exec && !client.retrying_block &&
      evictor.Perform() == Evictor::Result::kFail && RefusedWhenOutOfMemory(client, *command)) {
    reject(errors::kOutOfMemory, command);
    return;
  }
  // Redis's monitors are replicas underneath, which may not touch keys.
  if (client.monitor && (command->flags & (kCmdWrite | kCmdReadonly))) {
    reject("ERR Replica can't interact with the keyspace", command);
    return;
  }
  if (client.is_connection() && loading() && !(command->flags & kCmdLoading)) {
    reject(errors::kLoading, command);
    return;
  }
  if ((command->flags & kCmdWrite) && client.is_connection()) {
    if (std::string refusal = persistence->RefuseWrites(); !refusal.empty()) {
      reject(refusal, command);
      return;
    }
  }
  // Writes, and EXEC of a transaction holding one, need min-replicas-to-write good replicas;
  // a read-only replica takes none but its master's.
  const bool writes = client.is_connection() && !client.in_exec &&
                      ((command->flags & kCmdWrite) ||
                       (command->name == "exec" && QueuedAny(client, [](const Command& q) {
                          return (q.flags & kCmdWrite) != 0;
                        })));
  if (writes && !replication->EnoughGoodReplicas(now_ms_)) {
    reject(errors::kNoReplicas, command);
    return;
  }
  const bool replica = master_link->is_replica();
  if (writes && replica && config.replica_read_only) {
    reject(errors::kReadOnlyReplica, command);
    return;
  }
  if (client.subscribed() && !client.reply.resp3() && !AllowedWhileSubscribed(*command)) {
    reject("ERR Can't execute '" + command->name +
               "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
               "this context",
           command);
    return;
  }
  // replica-serve-stale-data no: while the link is down only the stale-allowed commands run.
  if (replica && !config.replica_serve_stale_data && !master_link->connected() &&
      client.is_connection() && !client.in_exec &&
      (!(command->flags & kCmdStale) ||
       (command->name == "exec" &&
        QueuedAny(client, [](const Command& q) { return (q.flags & kCmdStale) == 0; })))) {
    reject(errors::kMasterDown, command);
    return;
  }
  if (paused() && client.is_connection() && !client.in_exec && !client.retrying_block &&
      PausesCommand(client, *command)) {
    client.paused = true;  // the command stays in the input until the pause ends
    paused_clients_.push_back(client.id);
    return;
  }
  if (client.in_multi && !(command->flags & kCmdTransactionControl)) {
    if (command->flags & kCmdNoMulti) {
      reject("ERR Command not allowed inside a transaction", command);
      return;
    }
    client.queued.emplace_back(argv.begin(), argv.end());
    client.reply.Simple("QUEUED");
    return;
  }
  client.last_command = command->name;
  uint64_t start = CycleClock::Now();
  uint64_t errors_before = stats.total_error_replies;
  const uint64_t output_before = client.output.end_position();
  const uint64_t dirty_before = dirty;
  const uint64_t changes_before = stats.keyspace.modifications;
  const uint64_t repl_offset_before = replication->offset();
  effects.BeginCommand();
  CommandContext ctx{*this, client, argv, *command, client.reply, now_ms_};
  // A replica expires nothing itself: its master's commands see expired keys, the others not.
  // Nor does a paused server (CLIENT PAUSE, FAILOVER): the replicas' offset must stay put.
  expiry_rules_.keep = replica && client.kind == ClientKind::kMaster;
  expiry_rules_.hide = (replica || paused()) && !expiry_rules_.keep;
  command_touches_keys_ =
      !(command->flags & kCmdNoTouch) && (!client.no_touch || command->name == "touch");
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
  command->handler(ctx);
  const bool over_limit = limited && client.reply.over_limit();
  client.reply.set_limit(outer_limit);
  SetRunningCommand(outer);
  // The limits are read again there; should the command have raised them (CONFIG SET inside
  // a transaction), the truncated reply must not leave all the same.
  if (over_limit && !DropOverOutputLimit(client)) CloseClientSoon(client);
  if (tracking.remembering()) tracking.RememberKeys(*command, argv);
  if (!monitors_.empty() && !(command->flags & (kCmdSkipMonitor | kCmdAdmin)) &&
      !client.retrying_block && client.kind != ClientKind::kAofReplay) {
    FeedMonitors(client, *command, argv);
  }
  // A may-replicate command that changed data (PFCOUNT writing its cache) is logged too, as
  // Redis propagates whatever made the server dirty.
  effects.EndCommand(client.db, argv,
                     (command->flags & (kCmdWrite | kCmdMayReplicate)) &&
                         (dirty != dirty_before || stats.keyspace.modifications != changes_before));
  // WAIT counts the replicas that acknowledged the client's last write.
  if (replication->offset() != repl_offset_before) client.write_offset = replication->offset();
  const uint64_t elapsed = CycleClock::Now() - start;
  int64_t duration = CycleClock::ToMicros(elapsed);
  // A reply that starts with '-' is a failed call, as INFO commandstats counts it.
  if (client.output.end_position() > output_before && output_before >= client.output.consumed() &&
      client.output.at(output_before - client.output.consumed()) == '-') {
    if (stats.total_error_replies == errors_before) {
      const size_t start = output_before - client.output.consumed();
      const size_t end = client.output.find('\r', start);
      CountError(client.output.substr(start + 1, end - start - 1));
    }
    ++command->stats.failed_calls;
  }
  ++command->stats.calls;
  command->stats.usec += static_cast<uint64_t>(duration);
  if (config.latency_tracking) {
    std::unique_ptr<LatencyHistogram>& histogram = command->stats.latency;
    if (histogram == nullptr) histogram = std::make_unique<LatencyHistogram>();
    histogram->Record(CycleClock::ToNanos(elapsed));
  }
  ++client.commands_processed;
  ++stats.total_commands_processed;
  if (!(command->flags & kCmdSkipSlowlog)) RecordSlowlog(client, *command, argv, duration);
  if (config.latency_monitor_threshold > 0 && duration / 1000 >= config.latency_monitor_threshold) {
    RecordLatency(command->flags & kCmdFast ? "fast-command" : "command", duration / 1000);
  }
}

bool Server::QueuedAny(const Client& client,
                       const std::function<bool(const Command&)>& predicate) const {
  return std::any_of(client.queued.begin(), client.queued.end(), [&](const auto& queued) {
    const Command* q = commands.Find(queued[0]);
    return q != nullptr && predicate(*q);
  });
}

}  // namespace goblin
