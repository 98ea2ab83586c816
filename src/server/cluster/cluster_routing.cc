// Which node serves a call: the -MOVED, -ASK, -TRYAGAIN, -CROSSSLOT and -CLUSTERDOWN replies,
// with Redis's texts and rules.
//
// A call's keys must all hash to one slot (hash tags make related keys share one). The slot's
// owner serves it; another node answers -MOVED with the owner's address. While the slot moves
// (CLUSTER SETSLOT ... MIGRATING on the owner, IMPORTING on the target), the owner serves the
// keys it still has and sends the others to the target with -ASK; the target serves a call
// after ASKING, and only if all its keys are there (-TRYAGAIN while some still move). A replica
// serves reads of its master's slots to a READONLY client.
#include "server/client.h"
#include "server/cluster/cluster.h"
#include "server/command_table.h"
#include "server/server.h"

namespace goblin::cluster {

namespace {

// One command of the request: the command itself, or each of EXEC's queue.
struct Call {
  const Command* command;
  std::vector<std::string_view> argv;
};

}  // namespace

std::string Cluster::Redirection(Client& client, const Command& command,
                                 const std::vector<std::string_view>& argv) {
  const bool exec = command.name == "exec";
  if (!exec && !command.HasKeysOrChannels()) return "";
  std::vector<Call> calls;
  if (exec) {
    if (!client.in_multi) return "";
    for (const std::vector<std::string>& queued : client.queued) {
      Call call;
      call.argv.assign(queued.begin(), queued.end());
      std::string error;
      call.command = server_.LookUpCommand(call.argv, &error);
      if (call.command != nullptr) calls.push_back(std::move(call));
    }
  } else {
    calls.push_back({&command, argv});
  }

  const ClusterNode* owner = nullptr;
  int slot = -1;
  std::string_view first_key;
  bool multiple_keys = false, migrating = false, importing = false;
  bool shard_channels = false;
  size_t missing = 0, existing = 0;
  bool readonly = true;  // every call is a read (a replica may serve it to a READONLY client)
  bool writes = false;   // some call writes (refused while the cluster is down)
  Database& db = server_.db(0);
  for (const Call& call : calls) {
    if (!(call.command->flags & kCmdReadonly)) readonly = false;
    if (call.command->flags & kCmdWrite) writes = true;
    if (!call.command->HasKeysOrChannels()) continue;
    std::optional<std::vector<KeyReference>> keys =
        call.command->Keys(call.argv, /*with_channels=*/true);
    if (!keys) continue;
    for (const KeyReference& reference : *keys) {
      const std::string_view key = call.argv[reference.position];
      const bool channel = (reference.flags & kKeyNotKey) != 0;
      shard_channels |= channel;
      const int key_slot = KeySlot(key);
      if (slot < 0) {
        first_key = key;
        slot = key_slot;
        owner = slots_[static_cast<size_t>(slot)];
        if (owner == nullptr) {
          // Redis answers a slot nobody serves before anything else.
          return "CLUSTERDOWN Hash slot not served";
        }
        // Only the node that holds the slot's keys migrates or imports them.
        if (owner == myself_ && migrating_[static_cast<size_t>(slot)] != nullptr) {
          migrating = true;
        } else if (importing_[static_cast<size_t>(slot)] != nullptr) {
          importing = true;
        }
      } else if (key != first_key) {
        if (key_slot != slot) return "CROSSSLOT Keys in request don't hash to the same slot";
        multiple_keys = true;
      }
      if ((migrating || importing) && !channel) {
        (db.Peek(key) == nullptr ? missing : existing)++;
      }
    }
  }
  if (owner == nullptr) return "";  // no keys at all: any node serves it

  if (state_ != State::kOk) {
    if (shard_channels) {
      if (!server_.config.cluster.allow_pubsubshard_when_down) {
        return "CLUSTERDOWN The cluster is down";
      }
    } else if (!server_.config.cluster.allow_reads_when_down) {
      return "CLUSTERDOWN The cluster is down";
    } else if (writes) {
      return "CLUSTERDOWN The cluster is down and only accepts read commands";
    }
  }
  // MIGRATE moves the keys out of a migrating slot: it runs here whatever they are.
  const bool migrate = calls.size() == 1 && calls[0].command->name == "migrate";
  if ((migrating || importing) && migrate) return "";
  if (migrating && missing > 0) {
    if (existing > 0) return "TRYAGAIN Multiple keys request during rehashing of slot";
    const ClusterNode* target = migrating_[static_cast<size_t>(slot)];
    return "ASK " + std::to_string(slot) + " " + Endpoint(*target);
  }
  if (importing && (client.asking || (command.flags & kCmdAsking))) {
    if (multiple_keys && missing > 0) {
      return "TRYAGAIN Multiple keys request during rehashing of slot";
    }
    return "";
  }
  if (client.readonly && readonly && myself_->is_replica() && myself_->master == owner) return "";
  if (owner != myself_) return "MOVED " + std::to_string(slot) + " " + Endpoint(*owner);
  return "";
}

}  // namespace goblin::cluster
