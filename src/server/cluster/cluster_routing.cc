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

std::string Cluster::Redirection(Client& client, const Command& command,
                                 const std::vector<std::string_view>& argv) {
  const bool exec = command.name == "exec";
  if (!exec && !command.HasKeysOrChannels()) return "";
  std::vector<RoutedCall> calls;
  std::vector<std::vector<std::string_view>> queued_argv;
  if (exec) {
    if (!client.in_multi) return "";
    queued_argv.reserve(client.queued.size());
    for (const std::vector<std::string>& queued : client.queued) {
      std::vector<std::string_view>& call_argv =
          queued_argv.emplace_back(queued.begin(), queued.end());
      std::string error;
      if (const Command* found = server_.LookUpCommand(call_argv, &error)) {
        calls.push_back({found, &call_argv});
      }
    }
  } else {
    calls.push_back({&command, &argv});
  }
  const bool asking = client.asking || (command.flags & kCmdAsking);
  return RefusalText(Route(calls, asking, client.readonly));
}

std::string Cluster::ScriptRefusal(const Command& command,
                                   const std::vector<std::string_view>& argv, const Client& caller,
                                   bool allow_cross_slot, int* script_slot) {
  if (!command.HasKeysOrChannels()) return "";
  const RoutedCall call{&command, &argv};
  const Routing routing = Route(std::span(&call, 1), caller.asking, caller.readonly);
  switch (routing.refusal) {
    case Refusal::kNone:
      break;
    case Refusal::kDownReadOnly:
      return "ERR Script attempted to execute a write command while the cluster is down and "
             "readonly";
    case Refusal::kDown:
      return "ERR Script attempted to execute a command while the cluster is down";
    default:
      return "ERR Script attempted to access a non local key in a cluster node script";
  }
  // Keys the script did not declare must still share one slot, unless it says otherwise.
  if (routing.slot >= 0 && !allow_cross_slot) {
    if (*script_slot < 0) {
      *script_slot = routing.slot;
    } else if (*script_slot != routing.slot) {
      return "ERR Script attempted to access keys that do not hash to the same slot";
    }
  }
  return "";
}

std::string Cluster::RefusalText(const Routing& routing) const {
  switch (routing.refusal) {
    case Refusal::kNone:
      return "";
    case Refusal::kCrossSlot:
      return "CROSSSLOT Keys in request don't hash to the same slot";
    case Refusal::kUnbound:
      return "CLUSTERDOWN Hash slot not served";
    case Refusal::kDown:
      return "CLUSTERDOWN The cluster is down";
    case Refusal::kDownReadOnly:
      return "CLUSTERDOWN The cluster is down and only accepts read commands";
    case Refusal::kTryAgain:
      return "TRYAGAIN Multiple keys request during rehashing of slot";
    case Refusal::kAsk:
      return "ASK " + std::to_string(routing.slot) + " " + Endpoint(*routing.node);
    case Refusal::kMoved:
      return "MOVED " + std::to_string(routing.slot) + " " + Endpoint(*routing.node);
  }
  return "";
}

Cluster::Routing Cluster::Route(std::span<const RoutedCall> calls, bool asking,
                                bool readonly_client) const {
  Routing routing;
  const ClusterNode* owner = nullptr;
  std::string_view first_key;
  bool multiple_keys = false, migrating = false, importing = false;
  bool shard_channels = false;
  size_t missing = 0, existing = 0;
  bool readonly = true;  // every call is a read (a replica may serve it to a READONLY client)
  bool writes = false;   // some call writes (refused while the cluster is down)
  Database& db = server_.db(0);
  for (const RoutedCall& call : calls) {
    if (!(call.command->flags & kCmdReadonly)) readonly = false;
    if (call.command->flags & kCmdWrite) writes = true;
    if (!call.command->HasKeysOrChannels()) continue;
    std::optional<std::vector<KeyReference>> keys =
        call.command->Keys(*call.argv, /*with_channels=*/true);
    if (!keys) continue;
    for (const KeyReference& reference : *keys) {
      const std::string_view key = (*call.argv)[reference.position];
      const bool channel = (reference.flags & kKeyNotKey) != 0;
      shard_channels |= channel;
      const int key_slot = KeySlot(key);
      if (routing.slot < 0) {
        first_key = key;
        routing.slot = key_slot;
        owner = slots_[static_cast<size_t>(key_slot)];
        if (owner == nullptr) {
          // Redis answers a slot nobody serves before anything else.
          routing.refusal = Refusal::kUnbound;
          return routing;
        }
        // Only the node that holds the slot's keys migrates or imports them.
        if (owner == myself_ && migrating_[static_cast<size_t>(key_slot)] != nullptr) {
          migrating = true;
        } else if (importing_[static_cast<size_t>(key_slot)] != nullptr) {
          importing = true;
        }
      } else if (key != first_key) {
        if (key_slot != routing.slot) {
          routing.refusal = Refusal::kCrossSlot;
          return routing;
        }
        multiple_keys = true;
      }
      if ((migrating || importing) && !channel) {
        (db.Peek(key) == nullptr ? missing : existing)++;
      }
    }
  }
  if (owner == nullptr) return routing;  // no keys at all: any node serves it

  if (state_ != State::kOk) {
    if (shard_channels) {
      if (!server_.config.cluster.allow_pubsubshard_when_down) routing.refusal = Refusal::kDown;
    } else if (!server_.config.cluster.allow_reads_when_down) {
      routing.refusal = Refusal::kDown;
    } else if (writes) {
      routing.refusal = Refusal::kDownReadOnly;
    }
    if (routing.refusal != Refusal::kNone) return routing;
  }
  // MIGRATE moves the keys out of a migrating slot: it runs here whatever they are.
  const bool migrate = calls.size() == 1 && calls[0].command->name == "migrate";
  if ((migrating || importing) && migrate) return routing;
  if (migrating && missing > 0) {
    routing.refusal = existing > 0 ? Refusal::kTryAgain : Refusal::kAsk;
    routing.node = migrating_[static_cast<size_t>(routing.slot)];
    return routing;
  }
  if (importing && asking) {
    if (multiple_keys && missing > 0) routing.refusal = Refusal::kTryAgain;
    return routing;
  }
  if (readonly_client && readonly && myself_->is_replica() && myself_->master == owner) {
    return routing;
  }
  if (owner != myself_) {
    routing.refusal = Refusal::kMoved;
    routing.node = owner;
  }
  return routing;
}

void Cluster::RedirectBlockedClients() {
  if (server_.stats.blocked_clients == 0) return;
  for (Client* client : server_.ClientsById()) {
    const BlockState& block = client->block;
    if (!client->blocked || block.keys.empty()) continue;
    // A write would be needed to serve it, and none may come while the cluster is down (even
    // where reads are allowed then).
    if (state_ != State::kOk) {
      server_.UnblockWithError(*client, "CLUSTERDOWN The cluster is down");
      continue;
    }
    // Its keys share a slot: the first one says where they now live.
    const int slot = KeySlot(block.keys.front());
    const ClusterNode* owner = slots_[static_cast<size_t>(slot)];
    if (client->readonly && client->last_command != nullptr &&
        !(client->last_command->flags & kCmdWrite) && myself_->is_replica() &&
        myself_->master == owner) {
      continue;
    }
    if (owner == myself_ || importing_[static_cast<size_t>(slot)] != nullptr) continue;
    Routing routing;
    routing.slot = slot;
    routing.node = owner;
    routing.refusal = owner == nullptr ? Refusal::kUnbound : Refusal::kMoved;
    server_.UnblockWithError(*client, RefusalText(routing));
  }
}

}  // namespace goblin::cluster
