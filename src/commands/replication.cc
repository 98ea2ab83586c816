// Replication commands: the master's REPLCONF, SYNC, PSYNC (the replica's handshake and
// acknowledgements, server/replication.h) and WAIT; REPLICAOF / SLAVEOF (server/master_link.h);
// FAILOVER (server/failover.h).
#include "server/replication.h"

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "core/string_number.h"
#include "resp/request_parser.h"
#include "server/errors.h"
#include "server/failover.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/server.h"

namespace goblin {

namespace {

// Redis's NET_HOST_STR_LEN: the longest ip-address a replica may announce.
constexpr size_t kMaxHostLength = 256;

// REPLCONF <option> <value> ...: +OK once every option is taken; ACK and GETACK reply nothing.
void ReplconfCommand(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  ReplicaLink& link = ctx.client.replica;
  for (size_t i = 1; i + 1 < ctx.argc(); i += 2) {
    const std::string_view option = ctx.arg(i), value = ctx.arg(i + 1);
    if (EqualsIgnoreCase(option, "listening-port")) {
      int64_t port;
      if (!ParseInt64(value, &port)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      link.listening_port = port;
    } else if (EqualsIgnoreCase(option, "ip-address")) {
      if (value.size() > kMaxHostLength) {
        ctx.reply.Error("ERR REPLCONF ip-address provided by replica instance is too long: " +
                        std::to_string(value.size()) + " bytes");
        return;
      }
      link.ip_address = value;
    } else if (EqualsIgnoreCase(option, "capa")) {
      if (EqualsIgnoreCase(value, "psync2")) link.psync2 = true;
      if (EqualsIgnoreCase(value, "eof")) link.eof = true;
      if (EqualsIgnoreCase(value, "goblin-snapshot")) link.goblin_snapshot = true;
    } else if (EqualsIgnoreCase(option, "ack")) {
      // REPLCONF ACK <offset> [FACK <aof offset>] (FACK: Redis 7.2's WAITAOF).
      int64_t offset;
      if (!ctx.client.is_replica() || !ParseInt64(value, &offset)) return;
      ctx.server.replication->Acknowledge(ctx.client,
                                          static_cast<uint64_t>(std::max<int64_t>(offset, 0)));
      int64_t fsynced;
      if (i + 3 < ctx.argc() && EqualsIgnoreCase(ctx.arg(i + 2), "fack") &&
          ParseInt64(ctx.arg(i + 3), &fsynced)) {
        ctx.server.replication->AcknowledgeFsynced(
            ctx.client, static_cast<uint64_t>(std::max<int64_t>(fsynced, 0)));
      }
      return;
    } else if (EqualsIgnoreCase(option, "getack")) {
      if (ctx.client.kind == ClientKind::kMaster) ctx.server.master_link->SendAck();
      return;
    } else if (EqualsIgnoreCase(option, "rdb-filter-only")) {
      std::vector<std::string> filters;
      if (!SplitInlineArgs(value, &filters)) {
        ctx.reply.Error("ERR Missing rdb-filter-only values");
        return;
      }
      link.filtered = true;
      link.filtered_functions = false;
      for (const std::string& filter : filters) {
        if (!EqualsIgnoreCase(filter, "functions")) {
          ctx.reply.Error("ERR Unsupported rdb-filter-only option: " + errors::Quote(filter));
          return;
        }
        link.filtered_functions = true;
      }
    } else if (EqualsIgnoreCase(option, "rdb-only")) {
      int64_t rdb_only;
      if (!ParseInt64(value, &rdb_only)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (rdb_only < 0 || rdb_only > 1) {
        ctx.reply.Error(errors::kNotZeroOrOne);
        return;
      }
      link.rdb_only = rdb_only == 1;
    } else {
      ctx.reply.Error("ERR Unrecognized REPLCONF option: " + errors::Quote(option));
      return;
    }
  }
  ctx.reply.Ok();
}

// No replica attaches while this server hands its role over or takes one.
bool RefusedWhileFailingOver(CommandContext& ctx) {
  if (!ctx.server.failover->active()) return false;
  ctx.reply.Error("NOMASTERLINK Can't SYNC while failing over");
  return true;
}

// PSYNC replid offset FAILOVER: a failing-over master asks this replica of it to take over
// (server/failover.h). False when refused (replied).
bool TakeOverFromMaster(CommandContext& ctx) {
  LogWarning("Failover request received for replid " + std::string(ctx.arg(1)) + ".");
  MasterLink& link = *ctx.server.master_link;
  if (!link.is_replica()) {
    ctx.reply.Error("ERR PSYNC FAILOVER can't be sent to a master.");
    return false;
  }
  if (!EqualsIgnoreCase(ctx.arg(1), ctx.server.replication_id)) {
    ctx.reply.Error("ERR PSYNC FAILOVER replid must match my replid.");
    return false;
  }
  link.SetMaster({});
  LogNotice("MASTER MODE enabled (failover request from '" +
            ClientInfoLine(ctx.client, ctx.now_ms) + "')");
  return true;
}

void SyncCommand(CommandContext& ctx) {
  if (ctx.client.is_replica() || RefusedWhileFailingOver(ctx)) return;
  ctx.server.replication->Sync(ctx.client, false, "", 0);
}

void PsyncCommand(CommandContext& ctx) {
  if (ctx.client.is_replica()) return;
  if (ctx.argc() > 3 && EqualsIgnoreCase(ctx.arg(3), "failover") && !TakeOverFromMaster(ctx)) {
    return;
  }
  if (RefusedWhileFailingOver(ctx)) return;
  int64_t offset;
  if (!ParseInt64(ctx.arg(2), &offset)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  ctx.server.replication->Sync(ctx.client, true, ctx.arg(1), offset);
}

// WAIT numreplicas timeout: the replicas that acknowledged the client's last write, once
// numreplicas did or timeout milliseconds passed (0: no limit).
// WAIT's and WAITAOF's timeout: milliseconds, 0 for none; false once the error is replied.
bool ParseWaitTimeout(CommandContext& ctx, std::string_view text, int64_t* timeout) {
  if (!ParseInt64(text, timeout)) {
    ctx.reply.Error(errors::kTimeoutNotInteger);
    return false;
  }
  if (*timeout < 0) {
    ctx.reply.Error(errors::kTimeoutNegative);
    return false;
  }
  if (*timeout > 0 && *timeout > INT64_MAX - ctx.now_ms) {
    ctx.reply.Error(errors::kTimeoutOutOfRange);
    return false;
  }
  return true;
}

void WaitCommand(CommandContext& ctx) {
  int64_t replicas;
  if (!ParseInt64(ctx.arg(1), &replicas)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  int64_t timeout;
  if (!ParseWaitTimeout(ctx, ctx.arg(2), &timeout)) return;
  if (ctx.server.master_link->is_replica()) {
    ctx.reply.Error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
    return;
  }
  Replication& replication = *ctx.server.replication;
  const uint64_t offset = ctx.client.write_offset;
  const int64_t acknowledged = replication.CountAcknowledged(offset);
  if (acknowledged >= replicas || !ctx.client.may_block()) {
    ctx.reply.Integer(acknowledged);
    return;
  }
  ctx.server.BlockForReplicas(ctx.client, timeout > 0 ? ctx.now_ms + timeout : 0, offset, replicas);
}

// WAITAOF numlocal numreplicas timeout (Redis 7.2): [local fsyncs, replica fsyncs] of the
// client's last write, once numlocal and numreplicas are reached or timeout milliseconds passed
// (0: no limit). Every argument is checked before the server's state.
void WaitaofCommand(CommandContext& ctx) {
  int64_t local;
  if (!ParseInt64(ctx.arg(1), &local)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  if (local < 0 || local > 1) {
    ctx.reply.Error(errors::kNotZeroOrOne);
    return;
  }
  int64_t replicas;
  if (!ParseInt64(ctx.arg(2), &replicas)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  if (replicas < 0) {
    ctx.reply.Error(errors::kPositive);
    return;
  }
  int64_t timeout;
  if (!ParseWaitTimeout(ctx, ctx.arg(3), &timeout)) return;
  if (ctx.server.master_link->is_replica()) {
    ctx.reply.Error(errors::kWaitAofOnReplica);
    return;
  }
  if (local > 0 && !ctx.server.config.appendonly) {
    ctx.reply.Error(errors::kWaitAofWithoutLog);
    return;
  }
  const uint64_t offset = ctx.client.write_offset;
  const int64_t local_done =
      ctx.server.persistence->FsyncedOffset() >= static_cast<int64_t>(offset) ? 1 : 0;
  const int64_t replicas_done = ctx.server.replication->CountFsynced(offset);
  if ((local_done >= local && replicas_done >= replicas) || !ctx.client.may_block()) {
    ctx.reply.Array(2);
    ctx.reply.Integer(local_done);
    ctx.reply.Integer(replicas_done);
    return;
  }
  ctx.server.BlockForAof(ctx.client, timeout > 0 ? ctx.now_ms + timeout : 0, offset, local,
                         replicas);
}

// REPLICAOF host port | NO ONE.
void ReplicaofCommand(CommandContext& ctx) {
  MasterLink& link = *ctx.server.master_link;
  // A cluster node follows the master CLUSTER REPLICATE names.
  if (ctx.server.cluster_mode != nullptr) {
    ctx.reply.Error("ERR REPLICAOF not allowed in cluster mode.");
    return;
  }
  if (ctx.server.failover->active()) {
    ctx.reply.Error("ERR REPLICAOF not allowed while failing over.");
    return;
  }
  if (WordIs(ctx.arg(1), "no") && WordIs(ctx.arg(2), "one")) {
    if (link.is_replica()) {
      link.SetMaster({});
      LogNotice("MASTER MODE enabled (user request from '" +
                ClientInfoLine(ctx.client, ctx.now_ms) + "')");
    }
    ctx.reply.Ok();
    return;
  }
  // The replicas, this client among them, resynchronize with the new history.
  if (ctx.client.is_replica()) {
    ctx.reply.Error("ERR Command is not valid when client is a replica.");
    return;
  }
  int64_t port;
  if (!ParseInt64(ctx.arg(2), &port) || port < 0 || port > 65535) {
    ctx.reply.Error("ERR Invalid master port");
    return;
  }
  const ReplicaOf master{std::string(ctx.arg(1)), port};
  if (link.is_replica() && EqualsIgnoreCase(link.master().host, master.host) &&
      link.master().port == port) {
    LogNotice(
        "REPLICAOF would result into synchronization with the master we are already connected "
        "with. No operation performed.");
    ctx.reply.Simple("OK Already connected to specified master");
    return;
  }
  link.SetMaster(master);
  LogNotice("REPLICAOF " + master.host + ":" + std::to_string(port) +
            " enabled (user request from '" + ClientInfoLine(ctx.client, ctx.now_ms) + "')");
  ctx.reply.Ok();
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]: the arguments are checked
// first, then the server's state, in Redis's order.
void FailoverCommand(CommandContext& ctx) {
  Failover& failover = *ctx.server.failover;
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "abort")) {
    if (!failover.active()) {
      ctx.reply.Error("ERR No failover in progress.");
      return;
    }
    failover.Abort("Failover manually aborted");
    ctx.reply.Ok();
    return;
  }
  int64_t timeout_ms = 0;
  bool force = false;
  ReplicaOf target;
  bool has_target = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "timeout") && i + 1 < ctx.argc() && timeout_ms == 0) {
      if (!ParseInt64(ctx.arg(i + 1), &timeout_ms)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (timeout_ms <= 0) {
        ctx.reply.Error("ERR FAILOVER timeout must be greater than 0");
        return;
      }
      ++i;
    } else if (EqualsIgnoreCase(ctx.arg(i), "to") && i + 2 < ctx.argc() && !has_target) {
      if (!ParseInt64(ctx.arg(i + 2), &target.port)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      target.host = ctx.arg(i + 1);
      has_target = true;
      i += 2;
    } else if (EqualsIgnoreCase(ctx.arg(i), "force") && !force) {
      force = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (failover.active()) {
    ctx.reply.Error("ERR FAILOVER already in progress.");
    return;
  }
  if (ctx.server.master_link->is_replica()) {
    ctx.reply.Error("ERR FAILOVER is not valid when server is a replica.");
    return;
  }
  if (ctx.server.replication->Replicas().empty()) {
    ctx.reply.Error("ERR FAILOVER requires connected replicas.");
    return;
  }
  if (force && (timeout_ms == 0 || !has_target)) {
    ctx.reply.Error(
        "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
    return;
  }
  if (has_target) {
    const Client* replica = failover.FindReplica(target.host, target.port);
    if (replica == nullptr) {
      ctx.reply.Error("ERR FAILOVER target HOST and PORT is not a replica.");
      return;
    }
    if (replica->replica.state != ReplicaState::kOnline) {
      ctx.reply.Error("ERR FAILOVER target replica is not online.");
      return;
    }
    LogNotice("FAILOVER requested to " + target.host + ":" + std::to_string(target.port) + ".");
  } else {
    LogNotice("FAILOVER requested to any replica.");
  }
  failover.Start(target,
                 timeout_ms > 0 ? ctx.now_ms + std::min(timeout_ms, INT64_MAX - ctx.now_ms) : 0,
                 force);
  ctx.reply.Ok();
}

}  // namespace

void RegisterReplicationCommands(CommandTable* table) {
  CommandAdder add{table, "server"};
  add("replconf", -1, kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale | kCmdAllowBusy, {},
      ReplconfCommand, "An internal command for configuring the replication stream", "3.0.0",
      "O(1)", "");
  add("sync", 1, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdNoMulti, {}, SyncCommand,
      "Internal command used for replication", "1.0.0", "", "");
  add("psync", -3, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdNoMulti, {}, PsyncCommand,
      "Internal command used for replication", "2.8.0", "", "replicationid offset");
  for (const char* name : {"replicaof", "slaveof"}) {
    add(name, 3, kCmdAdmin | kCmdNoscript | kCmdStale | kCmdNoAsyncLoading, {}, ReplicaofCommand,
        "Make the server a replica of another instance, or promote it as master.",
        std::string_view(name) == "replicaof" ? "5.0.0" : "1.0.0", "O(1)", "host port | NO ONE");
  }
  add("failover", -1, kCmdAdmin | kCmdNoscript | kCmdStale, {}, FailoverCommand,
      "Starts a coordinated failover from a server to one of its replicas.", "6.2.0", "O(1)",
      "[TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]");
  CommandAdder generic{table, "generic", kAclKeyspace};
  generic.In(kAclConnection)(
      "wait", 3, kCmdNoscript, {}, WaitCommand,
      "Blocks until the asynchronous replication of all preceding write commands sent by the "
      "connection is completed.",
      "3.0.0", "O(1)", "numreplicas timeout",
      {"request_policy:all_shards", "response_policy:agg_min"});
  generic.In(kAclConnection)(
      "waitaof", 4, kCmdNoscript, {}, WaitaofCommand,
      "Blocks until all of the preceding write commands sent by the connection are written to "
      "the append-only file of the master and/or replicas.",
      "7.2.0", "O(1)", "numlocal numreplicas timeout");
}

}  // namespace goblin
