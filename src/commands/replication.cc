// Replication commands: the master's REPLCONF, SYNC, PSYNC (the replica's handshake and
// acknowledgements, server/replication.h) and WAIT; REPLICAOF / SLAVEOF (server/master_link.h).
#include "server/replication.h"

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "core/string_number.h"
#include "resp/request_parser.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
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
      int64_t offset;
      if (!ctx.client.is_replica() || !ParseInt64(value, &offset)) return;
      ctx.server.replication->Acknowledge(ctx.client,
                                          static_cast<uint64_t>(std::max<int64_t>(offset, 0)));
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
        ctx.reply.Error("ERR value is out of range, value must between 0 and 1");
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

void SyncCommand(CommandContext& ctx) { ctx.server.replication->Sync(ctx.client, false, "", 0); }

void PsyncCommand(CommandContext& ctx) {
  if (ctx.client.is_replica()) return;
  int64_t offset;
  if (!ParseInt64(ctx.arg(2), &offset)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  ctx.server.replication->Sync(ctx.client, true, ctx.arg(1), offset);
}

// WAIT numreplicas timeout: the replicas that acknowledged the client's last write, once
// numreplicas did or timeout milliseconds passed (0: no limit).
void WaitCommand(CommandContext& ctx) {
  int64_t replicas;
  if (!ParseInt64(ctx.arg(1), &replicas)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  int64_t timeout;
  if (!ParseInt64(ctx.arg(2), &timeout)) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return;
  }
  if (timeout < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return;
  }
  if (timeout > 0 && timeout > INT64_MAX - ctx.now_ms) {
    ctx.reply.Error("ERR timeout is out of range");
    return;
  }
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

// REPLICAOF host port | NO ONE.
void ReplicaofCommand(CommandContext& ctx) {
  MasterLink& link = *ctx.server.master_link;
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

}  // namespace

void RegisterReplicationCommands(CommandTable* table) {
  CommandAdder add{table, "server"};
  add("replconf", -1, kCmdAdmin | kCmdNoscript | kCmdLoading | kCmdStale | kCmdAllowBusy, 0, 0, 0,
      ReplconfCommand, "An internal command for configuring the replication stream", "3.0.0",
      "O(1)", "");
  add("sync", 1, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdNoMulti, 0, 0, 0, SyncCommand,
      "Internal command used for replication", "1.0.0", "", "");
  add("psync", -3, kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading | kCmdNoMulti, 0, 0, 0,
      PsyncCommand, "Internal command used for replication", "2.8.0", "", "replicationid offset");
  for (const char* name : {"replicaof", "slaveof"}) {
    add(name, 3, kCmdAdmin | kCmdNoscript | kCmdStale | kCmdNoAsyncLoading, 0, 0, 0,
        ReplicaofCommand, "Make the server a replica of another instance, or promote it as master.",
        std::string_view(name) == "replicaof" ? "5.0.0" : "1.0.0", "O(1)", "host port | NO ONE");
  }
  CommandAdder generic{table, "generic"};
  generic("wait", 3, kCmdNoscript, 0, 0, 0, WaitCommand,
          "Blocks until the asynchronous replication of all preceding write commands sent by the "
          "connection is completed.",
          "3.0.0", "O(1)", "numreplicas timeout")
      ->acl = "@connection";
}

}  // namespace goblin
