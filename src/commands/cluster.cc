// CLUSTER, READONLY, READWRITE and ASKING: Redis Cluster's commands (server/cluster/cluster.h
// keeps the state they show and change). Without cluster-enabled every one answers as Redis
// does: "This instance has cluster support disabled".
#include "server/cluster/cluster.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/key_slot.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

constexpr std::string_view kDisabled = "ERR This instance has cluster support disabled";

// The cluster, or null after answering that there is none.
cluster::Cluster* ClusterOrReply(CommandContext& ctx) {
  if (ctx.server.cluster_mode == nullptr) ctx.reply.Error(kDisabled);
  return ctx.server.cluster_mode.get();
}

// A slot argument, or -1 after answering Redis's error.
int SlotOrReply(CommandContext& ctx, std::string_view text) {
  int64_t slot = 0;
  if (!ParseInt64(text, &slot) || slot < 0 || slot >= kClusterSlots) {
    ctx.reply.Error("ERR Invalid or out of range slot");
    return -1;
  }
  return static_cast<int>(slot);
}

// The optional last word of CLUSTER FAILOVER and RESET: "" when absent, the word (lowercase)
// when it is one of choices, nullopt after answering a syntax error.
std::optional<std::string> OptionalWord(CommandContext& ctx,
                                        std::initializer_list<std::string_view> choices) {
  if (ctx.argc() == 2) return std::string();
  if (ctx.argc() == 3) {
    for (const std::string_view choice : choices) {
      if (EqualsIgnoreCase(ctx.arg(2), choice)) return std::string(choice);
    }
  }
  ctx.reply.Error(errors::kSyntax);
  return std::nullopt;
}

void ReplyOkOr(CommandContext& ctx, const std::string& error) {
  if (error.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(error);
  }
}

// ADDSLOTS / DELSLOTS slot..., and their RANGE forms: start end...
bool CollectSlots(CommandContext& ctx, bool ranges, std::vector<int>* slots) {
  if (ranges && ctx.argc() % 2 == 1) {
    ctx.reply.Error(errors::WrongArity(ctx.command.name));
    return false;
  }
  for (size_t i = 2; i < ctx.argc(); i += ranges ? 2 : 1) {
    const int first = SlotOrReply(ctx, ctx.arg(i));
    if (first < 0) return false;
    int last = first;
    if (ranges) {
      last = SlotOrReply(ctx, ctx.arg(i + 1));
      if (last < 0) return false;
      if (first > last) {
        ctx.reply.Error("ERR start slot number " + std::to_string(first) +
                        " is greater than end slot number " + std::to_string(last));
        return false;
      }
    }
    for (int slot = first; slot <= last; ++slot) slots->push_back(slot);
  }
  return true;
}

void AssignSlots(CommandContext& ctx, bool add, bool ranges) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  std::vector<int> slots;
  if (!CollectSlots(ctx, ranges, &slots)) return;
  ReplyOkOr(ctx, add ? cluster->AddSlots(slots) : cluster->DeleteSlots(slots));
}

void ClusterAddslotsCommand(CommandContext& ctx) { AssignSlots(ctx, true, false); }
void ClusterAddslotsrangeCommand(CommandContext& ctx) { AssignSlots(ctx, true, true); }
void ClusterDelslotsCommand(CommandContext& ctx) { AssignSlots(ctx, false, false); }
void ClusterDelslotsrangeCommand(CommandContext& ctx) { AssignSlots(ctx, false, true); }

void ClusterBumpepochCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) ctx.reply.Simple(cluster->BumpEpoch());
}

void ClusterCountFailureReportsCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  bool found = false;
  const int count = cluster->CountFailureReports(ctx.arg(2), &found);
  if (!found) {
    ctx.reply.Error("ERR Unknown node " + std::string(ctx.arg(2)));
    return;
  }
  ctx.reply.Integer(count);
}

void ClusterCountkeysinslotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  int64_t slot = 0;
  if (!ParseInt64(ctx.arg(2), &slot) || slot < 0 || slot >= kClusterSlots) {
    ctx.reply.Error("ERR Invalid slot");
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.db(0).KeysInSlot(static_cast<int>(slot))));
}

void ClusterGetkeysinslotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  int64_t slot = 0, count = 0;
  if (!ParseInt64(ctx.arg(2), &slot) || !ParseInt64(ctx.arg(3), &count) || count < 0 || slot < 0 ||
      slot >= kClusterSlots) {
    ctx.reply.Error("ERR Invalid slot or number of keys");
    return;
  }
  Database& db = ctx.server.db(0);
  const size_t n = std::min(static_cast<size_t>(count), db.KeysInSlot(static_cast<int>(slot)));
  ctx.reply.Array(n);
  db.ForEachKeyInSlot(static_cast<int>(slot), n,
                      [&](const KeyEntry* entry) { ctx.reply.Bulk(entry->key()); });
}

void ClusterFailoverCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  if (const std::optional<std::string> mode = OptionalWord(ctx, {"force", "takeover"})) {
    ReplyOkOr(ctx, cluster->Failover(*mode));
  }
}

void ClusterFlushslotsCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  if (ctx.server.db(0).size() != 0) {
    ctx.reply.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    return;
  }
  cluster->FlushSlots();
  ctx.reply.Ok();
}

void ClusterForgetCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) ReplyOkOr(ctx, cluster->Forget(ctx.arg(2)));
}

void ClusterHelpCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ReplyHelp(ctx, {"ADDSLOTS <slot> [<slot> ...]",
                  "    Assign slots to current node.",
                  "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                  "    Assign slots which are between <start-slot> and <end-slot> to current node.",
                  "BUMPEPOCH",
                  "    Advance the cluster config epoch.",
                  "COUNT-FAILURE-REPORTS <node-id>",
                  "    Return number of failure reports for <node-id>.",
                  "COUNTKEYSINSLOT <slot>",
                  "    Return the number of keys in <slot>.",
                  "DELSLOTS <slot> [<slot> ...]",
                  "    Delete slots information from current node.",
                  "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
                  "    Delete slots information which are between <start-slot> and <end-slot> from "
                  "current node.",
                  "FAILOVER [FORCE|TAKEOVER]",
                  "    Promote current replica node to being a master.",
                  "FORGET <node-id>",
                  "    Remove a node from the cluster.",
                  "GETKEYSINSLOT <slot> <count>",
                  "    Return key names stored by current node in a slot.",
                  "FLUSHSLOTS",
                  "    Delete current node own slots information.",
                  "INFO",
                  "    Return information about the cluster.",
                  "KEYSLOT <key>",
                  "    Return the hash slot for <key>.",
                  "MEET <ip> <port> [<bus-port>]",
                  "    Connect nodes into a working cluster.",
                  "MYID",
                  "    Return the node id.",
                  "MYSHARDID",
                  "    Return the node's shard id.",
                  "NODES",
                  "    Return cluster configuration seen by node. Output format:",
                  "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> "
                  "<link> <slot> ...",
                  "REPLICATE <node-id>",
                  "    Configure current node as replica to <node-id>.",
                  "RESET [HARD|SOFT]",
                  "    Reset current node (default: soft).",
                  "SET-CONFIG-EPOCH <epoch>",
                  "    Set config epoch of current node.",
                  "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
                  "    Set slot state.",
                  "REPLICAS <node-id>",
                  "    Return <node-id> replicas.",
                  "SAVECONFIG",
                  "    Force saving cluster configuration on disk.",
                  "SLOTS",
                  "    Return information about slots range mappings. Each range is made of:",
                  "    start, end, master and replicas IP addresses, ports and ids",
                  "SHARDS",
                  "    Return information about slot range mappings and the nodes associated with "
                  "them.",
                  "LINKS",
                  "    Return information about all network links between this node and its peers.",
                  "    Output format is an array where each array element is a map containing "
                  "attributes of a link"});
}

void ClusterInfoCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) cluster->Info(ctx.reply);
}

void ClusterKeyslotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) != nullptr) ctx.reply.Integer(KeySlot(ctx.arg(2)));
}

void ClusterLinksCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) cluster->Links(ctx.reply);
}

void ClusterMeetCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  if (ctx.argc() > 5) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "CLUSTER"));
    return;
  }
  int64_t port = 0, bus_port = 0;
  if (!ParseInt64(ctx.arg(3), &port)) {
    ctx.reply.Error("ERR Invalid TCP base port specified: " + std::string(ctx.arg(3)));
    return;
  }
  if (ctx.argc() == 5) {
    if (!ParseInt64(ctx.arg(4), &bus_port)) {
      ctx.reply.Error("ERR Invalid TCP bus port specified: " + std::string(ctx.arg(4)));
      return;
    }
  } else {
    bus_port = port + 10000;
  }
  const std::string error =
      cluster->Meet(std::string(ctx.arg(2)), static_cast<int>(port), static_cast<int>(bus_port));
  if (!error.empty()) {
    ctx.reply.Error("ERR Invalid node address specified: " + std::string(ctx.arg(2)) + ":" +
                    std::string(ctx.arg(3)));
    return;
  }
  ctx.reply.Ok();
}

void ClusterMyidCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) ctx.reply.Bulk(cluster->myself().name);
}

void ClusterMyshardidCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) ctx.reply.Bulk(cluster->myself().shard_id);
}

void ClusterNodesCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) {
    ctx.reply.Verbatim(cluster->NodesDescription(/*for_file=*/false));
  }
}

void ClusterReplicasCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  std::vector<std::string> lines;
  std::string error;
  if (!cluster->ReplicasOf(ctx.arg(2), &lines, &error)) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Array(lines.size());
  for (const std::string& line : lines) ctx.reply.Bulk(line);
}

void ClusterReplicateCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) {
    ReplyOkOr(ctx, cluster->Replicate(ctx.arg(2)));
  }
}

void ClusterResetCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  if (const std::optional<std::string> mode = OptionalWord(ctx, {"hard", "soft"})) {
    ReplyOkOr(ctx, cluster->Reset(*mode == "hard"));
  }
}

void ClusterSaveconfigCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  std::string error;
  if (!cluster->SaveConfig(&error)) {
    ctx.reply.Error("ERR error saving the cluster node config: " + error);
    return;
  }
  ctx.reply.Ok();
}

void ClusterSetConfigEpochCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  int64_t epoch = 0;
  if (!ParseInt64(ctx.arg(2), &epoch)) {
    ctx.reply.Error(errors::kNotInteger);
    return;
  }
  if (epoch < 0) {
    ctx.reply.Error("ERR Invalid config epoch specified: " + std::to_string(epoch));
    return;
  }
  ReplyOkOr(ctx, cluster->SetConfigEpoch(static_cast<uint64_t>(epoch)));
}

void ClusterSetslotCommand(CommandContext& ctx) {
  cluster::Cluster* cluster = ClusterOrReply(ctx);
  if (cluster == nullptr) return;
  const int slot = SlotOrReply(ctx, ctx.arg(2));
  if (slot < 0) return;
  const std::string_view action = ctx.arg(3);
  const bool with_node = EqualsIgnoreCase(action, "migrating") ||
                         EqualsIgnoreCase(action, "importing") || EqualsIgnoreCase(action, "node");
  const bool stable = EqualsIgnoreCase(action, "stable");
  if ((with_node && ctx.argc() != 5) || (stable && ctx.argc() != 4) || (!with_node && !stable)) {
    ctx.reply.Error("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
    return;
  }
  ReplyOkOr(ctx, cluster->SetSlot(slot, action, with_node ? ctx.arg(4) : std::string_view()));
}

void ClusterShardsCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) cluster->Shards(ctx.reply);
}

void ClusterSlotsCommand(CommandContext& ctx) {
  if (cluster::Cluster* cluster = ClusterOrReply(ctx)) cluster->Slots(ctx.reply);
}

void ReadonlyCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ctx.client.readonly = true;
  ctx.reply.Ok();
}

void ReadwriteCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ctx.client.readonly = false;
  ctx.reply.Ok();
}

void AskingCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ctx.client.asking = true;
  ctx.reply.Ok();
}

}  // namespace

void RegisterClusterCommands(CommandTable* table) {
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdStale | kCmdNoAsyncLoading;
  constexpr uint32_t kAdminRead = kCmdAdmin | kCmdStale;
  constexpr uint32_t kRead = kCmdStale;
  constexpr uint32_t kReadLoading = kCmdLoading | kCmdStale;
  const std::vector<std::string_view> kNondeterministic = {"nondeterministic_output"};
  CommandAdder add{table, "cluster"};
  Command* cluster = add("cluster", -2, 0, {}, nullptr, "A container for Redis Cluster commands.",
                         "3.0.0", "Depends on subcommand.", "");
  add.Sub(cluster, "addslots", -3, kAdmin, {}, ClusterAddslotsCommand,
          "Assigns new hash slots to a node.", "3.0.0",
          "O(N) where N is the total number of hash slot arguments", "slot [slot ...]");
  add.Sub(cluster, "addslotsrange", -4, kAdmin, {}, ClusterAddslotsrangeCommand,
          "Assigns new hash slot ranges to a node.", "7.0.0",
          "O(N) where N is the total number of the slots between the start slot and end slot "
          "arguments.",
          "start-slot end-slot [start-slot end-slot ...]");
  add.Sub(cluster, "bumpepoch", 2, kAdmin, {}, ClusterBumpepochCommand,
          "Advances the cluster config epoch.", "3.0.0", "O(1)", "", kNondeterministic);
  add.Sub(cluster, "count-failure-reports", 3, kAdminRead, {}, ClusterCountFailureReportsCommand,
          "Returns the number of active failure reports active for a node.", "3.0.0",
          "O(N) where N is the number of failure reports", "node-id", kNondeterministic);
  add.Sub(cluster, "countkeysinslot", 3, kRead, {}, ClusterCountkeysinslotCommand,
          "Returns the number of keys in a hash slot.", "3.0.0", "O(1)", "slot");
  add.Sub(cluster, "delslots", -3, kAdmin, {}, ClusterDelslotsCommand,
          "Sets hash slots as unbound for a node.", "3.0.0",
          "O(N) where N is the total number of hash slot arguments", "slot [slot ...]");
  add.Sub(cluster, "delslotsrange", -4, kAdmin, {}, ClusterDelslotsrangeCommand,
          "Sets hash slot ranges as unbound for a node.", "7.0.0",
          "O(N) where N is the total number of the slots between the start slot and end slot "
          "arguments.",
          "start-slot end-slot [start-slot end-slot ...]");
  add.Sub(cluster, "failover", -2, kAdmin, {}, ClusterFailoverCommand,
          "Forces a replica to perform a manual failover of its master.", "3.0.0", "O(1)",
          "[FORCE | TAKEOVER]");
  add.Sub(cluster, "flushslots", 2, kAdmin, {}, ClusterFlushslotsCommand,
          "Deletes all slots information from a node.", "3.0.0", "O(1)", "");
  add.Sub(cluster, "forget", 3, kAdmin, {}, ClusterForgetCommand,
          "Removes a node from the nodes table.", "3.0.0", "O(1)", "node-id");
  add.Sub(cluster, "getkeysinslot", 4, kRead, {}, ClusterGetkeysinslotCommand,
          "Returns the key names in a hash slot.", "3.0.0",
          "O(N) where N is the number of requested keys", "slot count", kNondeterministic);
  add.Sub(cluster, "help", 2, kReadLoading, {}, ClusterHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
  add.Sub(cluster, "info", 2, kRead, {}, ClusterInfoCommand,
          "Returns information about the state of a node.", "3.0.0", "O(1)", "", kNondeterministic);
  add.Sub(cluster, "keyslot", 3, kRead, {}, ClusterKeyslotCommand,
          "Returns the hash slot for a key.", "3.0.0",
          "O(N) where N is the number of bytes in the key", "key");
  add.Sub(cluster, "links", 2, kRead, {}, ClusterLinksCommand,
          "Returns a list of all TCP links to and from peer nodes.", "7.0.0",
          "O(N) where N is the total number of Cluster nodes", "", kNondeterministic);
  add.Sub(cluster, "meet", -4, kAdmin, {}, ClusterMeetCommand,
          "Forces a node to handshake with another node.", "3.0.0", "O(1)",
          "ip port [cluster-bus-port]");
  add.Sub(cluster, "myid", 2, kRead, {}, ClusterMyidCommand, "Returns the ID of a node.", "3.0.0",
          "O(1)", "");
  add.Sub(cluster, "myshardid", 2, kRead, {}, ClusterMyshardidCommand,
          "Returns the shard ID of a node.", "7.2.0", "O(1)", "", kNondeterministic);
  add.Sub(cluster, "nodes", 2, kRead, {}, ClusterNodesCommand,
          "Returns the cluster configuration for a node.", "3.0.0",
          "O(N) where N is the total number of Cluster nodes", "", kNondeterministic);
  add.Sub(cluster, "replicas", 3, kAdminRead, {}, ClusterReplicasCommand,
          "Lists the replica nodes of a master node.", "5.0.0",
          "O(N) where N is the number of replicas.", "node-id", kNondeterministic);
  add.Sub(cluster, "replicate", 3, kAdmin, {}, ClusterReplicateCommand,
          "Configure a node as replica of a master node.", "3.0.0", "O(1)", "node-id");
  add.Sub(cluster, "reset", -2, kAdminRead | kCmdNoscript, {}, ClusterResetCommand,
          "Resets a node.", "3.0.0",
          "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a "
          "side effect.",
          "[HARD | SOFT]");
  add.Sub(cluster, "saveconfig", 2, kAdmin, {}, ClusterSaveconfigCommand,
          "Forces a node to save the cluster configuration to disk.", "3.0.0", "O(1)", "");
  add.Sub(cluster, "set-config-epoch", 3, kAdmin, {}, ClusterSetConfigEpochCommand,
          "Sets the configuration epoch for a new node.", "3.0.0", "O(1)", "config-epoch");
  add.Sub(cluster, "setslot", -4, kAdmin, {}, ClusterSetslotCommand, "Binds a hash slot to a node.",
          "3.0.0", "O(1)", "slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>");
  add.Sub(cluster, "shards", 2, kRead, {}, ClusterShardsCommand,
          "Returns the mapping of cluster slots to shards.", "7.0.0",
          "O(N) where N is the total number of cluster nodes", "", kNondeterministic);
  add.Sub(cluster, "slaves", 3, kAdminRead, {}, ClusterReplicasCommand,
          "Lists the replica nodes of a master node.", "3.0.0",
          "O(N) where N is the number of replicas.", "node-id", kNondeterministic);
  add.Sub(cluster, "slots", 2, kRead, {}, ClusterSlotsCommand,
          "Returns the mapping of cluster slots to nodes.", "3.0.0",
          "O(N) where N is the total number of Cluster nodes", "", kNondeterministic);
  CommandAdder connection = add.In(kAclConnection);
  connection("readonly", 1, kCmdFast | kCmdLoading | kCmdStale, {}, ReadonlyCommand,
             "Enables read-only queries for a connection to a Redis Cluster replica node.", "3.0.0",
             "O(1)", "");
  connection("readwrite", 1, kCmdFast | kCmdLoading | kCmdStale, {}, ReadwriteCommand,
             "Enables read-write queries for a connection to a Reids Cluster replica node.",
             "3.0.0", "O(1)", "");
  connection("asking", 1, kCmdFast, {}, AskingCommand,
             "Signals that a cluster client is following an -ASK redirect.", "3.0.0", "O(1)", "");
}

}  // namespace goblin
