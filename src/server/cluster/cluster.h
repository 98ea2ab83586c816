// Redis Cluster mode (cluster-enabled yes): this node's view of the cluster and its part in it,
// as Redis 7.2 defines them, so that Goblin nodes, redis-server nodes, redis-cli --cluster and
// the cluster clients all work together.
//
// What it keeps:
//   - the nodes (cluster_node.h), by name, this node among them (myself_);
//   - each slot's owner, and the slots being migrated away or imported (CLUSTER SETSLOT);
//   - the epochs: currentEpoch, each master's configEpoch, the last epoch this node voted in;
//   - nodes.conf (cluster-config-file), rewritten whole (a temporary file renamed over it)
//     after every change that must survive a restart, and read at startup.
//
// How it talks: the cluster bus (bus_message.h), a TCP port of its own (cluster-port, or the
// client port + 10000). Every node keeps one outbound link to each node it knows and accepts
// theirs. Ten times a second (Cron) it connects what is not connected, PINGs the nodes it has
// not heard from for a while, and judges their health; each PING and PONG carries the sender's
// slots, role and epochs plus a few gossip sections about other nodes, from which the others
// learn new nodes and failures.
//
// Failure detection and failover, as Redis does them: a node silent for cluster-node-timeout is
// PFAIL to this node; when a majority of the masters report it PFAIL or FAIL, it is FAIL and a
// FAIL message tells everyone. A replica of a FAIL master then asks the masters for votes
// (FAILOVER_AUTH_REQUEST) in a new epoch; with a majority it takes its master's slots with
// that epoch as its config epoch. Conflicting claims on a slot are settled by the higher config
// epoch (UPDATE messages correct a node that claims stale slots), and two masters with the same
// config epoch are parted by the one with the smaller name taking a new one.
//
// Keys: commands reach this node only for the slots it serves (Redirection, in
// cluster_routing.cc): the others answer -MOVED, -ASK, -TRYAGAIN, -CROSSSLOT or -CLUSTERDOWN
// with Redis's texts.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/connection.h"
#include "net/event_loop.h"
#include "resp/cluster_bus_message.h"
#include "server/cluster/cluster_node.h"

namespace goblin {

class Server;
struct Client;
struct Command;
class ReplyBuilder;

namespace cluster {

class Cluster;

// One bus connection, to (outbound) or from (inbound) a node.
class BusLink final : public net::EventHandler {
 public:
  BusLink(Cluster& cluster, std::unique_ptr<net::Connection> connection, bool inbound,
          int64_t now_ms)
      : cluster_(cluster),
        connection_(std::move(connection)),
        inbound_(inbound),
        created_ms_(now_ms) {}
  ~BusLink();
  BusLink(const BusLink&) = delete;
  BusLink& operator=(const BusLink&) = delete;

  void OnReady(uint32_t readiness) override;
  // Queues message; it is written as the socket takes it.
  void Send(std::string bytes);

  bool inbound() const { return inbound_; }
  bool connecting() const { return connecting_; }
  void set_connecting(bool connecting) { connecting_ = connecting; }
  int64_t created_ms() const { return created_ms_; }
  ClusterNode* node = nullptr;
  std::string peer_ip;  // the address it was accepted from, or the node's it connects to
  net::Connection& connection() { return *connection_; }
  size_t send_queue_bytes() const { return queued_bytes_; }
  size_t receive_buffer_bytes() const { return input_.capacity(); }
  // Closed (the peer went away, a malformed message): Cluster frees it at the end of the round.
  bool closed() const { return closed_; }
  void Close();

 private:
  void Flush();
  void ReadMessages();

  Cluster& cluster_;
  std::unique_ptr<net::Connection> connection_;
  bool inbound_;
  bool connecting_ = false;
  bool closed_ = false;
  int64_t created_ms_;
  std::string input_;
  std::deque<std::string> output_;
  size_t output_offset_ = 0;  // bytes of output_.front() already written
  size_t queued_bytes_ = 0;
};

enum class State { kOk, kFail };

// How long a manual failover (CLUSTER FAILOVER) may take, as Redis allows it.
inline constexpr int64_t kManualFailoverTimeoutMs = 5000;

class Cluster {
 public:
  explicit Cluster(Server& server);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Startup: reads nodes.conf (or creates this node and writes it), and opens the bus port.
  // False with *error set, logged by the caller, when neither works.
  bool Start(std::string* error);
  // Ten times a second: links, PINGs, failure detection, failover (Cron's comment above).
  void Cron(int64_t now_ms);
  // The end of every event-loop round: the state and nodes.conf, when something changed them.
  void BeforeSleep();

  // Redirection (cluster_routing.cc): the error a call of command must get on this node, or ""
  // when it runs here. For EXEC the queued commands are judged together.
  std::string Redirection(Client& client, const Command& command,
                          const std::vector<std::string_view>& argv);
  // The same judgement for a command a script calls, with the texts scripts get; keys the script
  // reaches must share one slot (*script_slot, -1 until the first) unless allow_cross_slot.
  std::string ScriptRefusal(const Command& command, const std::vector<std::string_view>& argv,
                            const Client& caller, bool allow_cross_slot, int* script_slot);

  // PUBLISH and SPUBLISH: delivered on every node (PUBLISH) or on the shard of the channel's
  // slot (SPUBLISH), as Redis relays them on the bus.
  void PropagatePublish(bool sharded, std::string_view channel, std::string_view message);

  // CLUSTER subcommands (commands/cluster.cc calls them; each replies itself).
  void Info(ReplyBuilder& reply) const;
  std::string NodesDescription(bool for_file) const;
  void Slots(ReplyBuilder& reply) const;
  void Shards(ReplyBuilder& reply) const;
  void Links(ReplyBuilder& reply) const;
  // MEET: "" or the error.
  std::string Meet(const std::string& ip, int port, int bus_port);
  std::string Forget(std::string_view name);
  std::string AddSlots(const std::vector<int>& slots);
  std::string DeleteSlots(const std::vector<int>& slots);
  void FlushSlots();
  std::string SetSlot(int slot, std::string_view action, std::string_view node_name);
  std::string Replicate(std::string_view name);
  std::string SetConfigEpoch(uint64_t epoch);
  // BUMPEPOCH: "BUMPED <epoch>" or "STILL <epoch>".
  std::string BumpEpoch();
  std::string Reset(bool hard);
  std::string Failover(std::string_view mode);
  bool SaveConfig(std::string* error);
  int CountFailureReports(std::string_view name, bool* found);
  // The replicas of the master named; false when there is no such master.
  bool ReplicasOf(std::string_view name, std::vector<std::string>* lines, std::string* error);

  const ClusterNode& myself() const { return *myself_; }
  uint64_t current_epoch() const { return current_epoch_; }
  State state() const { return state_; }
  const ClusterNode* owner(int slot) const { return slots_[static_cast<size_t>(slot)]; }
  const ClusterNode* migrating_to(int slot) const { return migrating_[static_cast<size_t>(slot)]; }
  const ClusterNode* importing_from(int slot) const {
    return importing_[static_cast<size_t>(slot)];
  }
  // "ip:port" (or hostname:port, as cluster-preferred-endpoint-type says) of node, for MOVED.
  std::string Endpoint(const ClusterNode& node) const;
  // The host part of it: the IP, the hostname, or "?".
  std::string EndpointHost(const ClusterNode& node) const;
  int ClientPort(const ClusterNode& node) const;

  // Bus events (cluster_bus.cc).
  void Accept(int listener);
  void Process(BusLink& link, const BusMessage& message);
  void LinkFailed(BusLink& link, std::string_view why);
  void CountSent(MessageType type) { ++sent_[static_cast<size_t>(type)]; }
  int64_t NowMs() const;

 private:
  struct ListenerHandler final : net::EventHandler {
    ListenerHandler(Cluster* cluster, int fd) : cluster(cluster), fd(fd) {}
    Cluster* cluster;
    int fd;
    void OnReady(uint32_t) override { cluster->Accept(fd); }
  };

  // Routing (cluster_routing.cc).
  enum class Refusal { kNone, kCrossSlot, kUnbound, kDown, kDownReadOnly, kTryAgain, kAsk, kMoved };
  struct Routing {
    Refusal refusal = Refusal::kNone;
    int slot = -1;                      // the keys' slot, -1 without keys
    const ClusterNode* node = nullptr;  // where -ASK and -MOVED send the client
  };
  struct RoutedCall {
    const Command* command;
    const std::vector<std::string_view>* argv;
  };
  // Judges calls together (EXEC's queue, or one command) as Redis's getNodeByQuery does.
  Routing Route(std::span<const RoutedCall> calls, bool asking, bool readonly_client) const;
  std::string RefusalText(const Routing& routing) const;

  // nodes.conf (cluster.cc).
  bool LoadConfig(const std::string& path, std::string* error);
  void MarkConfigDirty() { save_pending_ = true; }
  void UpdateState();
  std::string NodeDescription(const ClusterNode& node, bool for_file) const;

  // Nodes.
  ClusterNode* CreateNode(std::string name, uint16_t flags);
  ClusterNode* Lookup(std::string_view name) const;
  void DeleteNode(ClusterNode* node);
  void RenameNode(ClusterNode* node, const std::string& name);
  void SetAsMaster(ClusterNode* node);
  void AttachReplica(ClusterNode* master, ClusterNode* replica);
  void DetachReplica(ClusterNode* replica);
  void AssignSlot(int slot, ClusterNode* node);
  void UnassignSlot(int slot);
  void UnassignAllSlotsOf(ClusterNode* node);
  // Makes this node a replica of master, following it with replication.
  void BecomeReplicaOf(ClusterNode* master);
  std::string RandomName();

  // Messages (cluster_bus.cc).
  BusMessage Header(MessageType type) const;
  void SendPing(BusLink& link, MessageType type);
  void Broadcast(const BusMessage& message);
  void SendFail(const ClusterNode& node);
  void SendUpdate(BusLink& link, const ClusterNode& node);
  void ProcessGossip(const BusMessage& message, ClusterNode* sender);
  void ProcessExtensions(const BusMessage& message, ClusterNode* sender);
  void UpdateSlotsFrom(ClusterNode* sender, uint64_t config_epoch, const SlotBits& slots);
  void HandleEpochCollision(ClusterNode* sender);
  bool UpdateAddress(ClusterNode* node, BusLink& link, const BusMessage& message);
  void MarkFailingIfNeeded(ClusterNode* node);
  void ClearFailureIfNeeded(ClusterNode* node);
  int FailureReportCount(ClusterNode* node);
  void Connect(ClusterNode* node);
  void FreeLink(BusLink* link);
  void FreeClosedLinks();
  // Clients blocked on keys of a slot this node no longer serves get -MOVED (or -CLUSTERDOWN),
  // as Redis's client cron sends them on.
  void RedirectBlockedClients();
  // Failover of a replica whose master failed (cluster_failover.cc).
  void HandleReplicaFailover();
  // CLUSTER FAILOVER (default mode): may the election start, the master's stream all applied?
  void HandleManualFailover();
  // Ends a manual failover on either side; a master's writes resume.
  void ResetManualFailover();
  void GrantVoteIfNeeded(ClusterNode* requester, const BusMessage& request);
  void ReplicaWins();
  uint64_t ReplicationOffset() const;
  int QuorumSize() const { return size_ / 2 + 1; }

  Server& server_;
  std::map<std::string, std::unique_ptr<ClusterNode>, std::less<>> nodes_;
  ClusterNode* myself_ = nullptr;
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  std::array<ClusterNode*, kClusterSlots> slots_{};
  std::array<ClusterNode*, kClusterSlots> migrating_{};
  std::array<ClusterNode*, kClusterSlots> importing_{};
  State state_ = State::kFail;
  int size_ = 0;  // masters serving at least one slot
  int64_t among_minority_since_ms_ = 0;
  int64_t first_state_update_ms_ = 0;
  // CLUSTER FORGET: names not to re-learn from gossip until their time (ms).
  std::map<std::string, int64_t, std::less<>> forgotten_;
  std::vector<std::unique_ptr<BusLink>> links_;
  std::vector<std::unique_ptr<ListenerHandler>> listeners_;
  std::array<uint64_t, kMessageTypes> sent_{};
  std::array<uint64_t, kMessageTypes> received_{};
  uint64_t links_over_limit_ = 0;
  int64_t last_cron_ms_ = 0;
  uint64_t cron_iterations_ = 0;
  bool save_pending_ = false;
  // The epochs and votes of the last fsynced nodes.conf (SaveConfig).
  uint64_t EpochsFingerprint() const;
  uint64_t durable_fingerprint_ = 0;
  bool state_update_pending_ = true;
  std::string config_path_;
  int config_lock_fd_ = -1;

  // Election state of this node as a replica.
  int64_t election_time_ms_ = 0;  // when it may ask for votes; 0 when no election is planned
  bool election_requested_ = false;
  int election_votes_ = 0;
  uint64_t election_epoch_ = 0;
  // Manual failover (CLUSTER FAILOVER), on either side.
  int64_t manual_failover_end_ms_ = 0;
  bool manual_failover_can_start_ = false;
  bool manual_failover_forced_ = false;
  ClusterNode* manual_failover_replica_ = nullptr;
  uint64_t manual_failover_master_offset_ = 0;
  bool manual_failover_offset_known_ = false;
};

}  // namespace cluster
}  // namespace goblin
