// Failover inside the cluster: a replica of a failed master is elected by the masters and takes
// its slots; CLUSTER FAILOVER does the same on request, after the replica caught up (default),
// without waiting for the master (FORCE), or without an election (TAKEOVER).
#include <algorithm>

#include "server/cluster/cluster.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/server.h"

namespace goblin::cluster {

void Cluster::ResetManualFailover() {
  if (manual_failover_replica_ != nullptr || (myself_->is_master() && manual_failover_end_ms_)) {
    server_.SetWritePause(WritePause::kClusterFailover, false);
  }
  manual_failover_end_ms_ = 0;
  manual_failover_can_start_ = false;
  manual_failover_replica_ = nullptr;
  manual_failover_offset_known_ = false;
  manual_failover_master_offset_ = 0;
}

std::string Cluster::Failover(std::string_view mode) {
  const bool force = mode == "force";
  const bool takeover = mode == "takeover";
  if (myself_->is_master()) return "ERR You should send CLUSTER FAILOVER to a replica";
  ClusterNode* master = myself_->master;
  if (master == nullptr) return "ERR I'm a replica but my master is unknown to me";
  if (!force && !takeover && (master->failing() || master->link == nullptr)) {
    return "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE";
  }
  ResetManualFailover();
  manual_failover_end_ms_ = NowMs() + kManualFailoverTimeoutMs;
  if (takeover) {
    // No votes: this node takes a config epoch of its own and its master's slots at once.
    LogWarning("Taking over the master (user request).");
    BumpEpoch();
    ReplicaWins();
    return "";
  }
  if (force) {
    LogWarning("Forced failover user request accepted.");
    manual_failover_can_start_ = true;
    return "";
  }
  LogWarning("Manual failover user request accepted.");
  BusMessage m = Header(MessageType::kMfStart);
  CountSent(MessageType::kMfStart);
  master->link->Send(Encode(m));
  return "";
}

void Cluster::HandleManualFailover() {
  if (manual_failover_end_ms_ == 0 || manual_failover_can_start_ ||
      !manual_failover_offset_known_) {
    return;
  }
  if (manual_failover_master_offset_ == ReplicationOffset()) {
    manual_failover_can_start_ = true;
    LogWarning("All master replication stream processed, manual failover can start.");
  }
}

void Cluster::HandleReplicaFailover() {
  ClusterNode* master = myself_->master;
  const bool manual = manual_failover_end_ms_ != 0 && manual_failover_can_start_;
  const int64_t now = NowMs();
  const int64_t timeout = server_.config.cluster.node_timeout;
  const int64_t auth_timeout = std::max<int64_t>(timeout * 2, 2000);
  const int64_t auth_retry = auth_timeout * 2;
  if (master == nullptr || (!master->failing() && !manual) ||
      (server_.config.cluster.replica_no_failover && !manual) || master->slot_count == 0) {
    return;
  }
  // How old this replica's data is: since the master last spoke on the replication link, less
  // the node timeout it took to notice the failure.
  int64_t data_age = server_.master_link->connected()
                         ? server_.master_link->last_io_seconds_ago(now) * 1000
                         : server_.master_link->down_since_seconds(now) * 1000;
  if (data_age < 0) data_age = INT64_MAX / 4;
  if (data_age > timeout) data_age -= timeout;
  const int64_t factor = server_.config.cluster.replica_validity_factor;
  if (factor != 0 && !manual &&
      data_age > server_.config.repl_ping_replica_period * 1000 + timeout * factor) {
    return;
  }
  if (now - election_time_ms_ > auth_retry) {
    // A new election, later for replicas with older data (rank: how many fellow replicas have
    // a newer offset), so that the best one usually goes first.
    int rank = 0;
    const uint64_t offset = ReplicationOffset();
    for (const ClusterNode* replica : master->replicas) {
      if (replica != myself_ && !replica->failing() && replica->repl_offset > offset) ++rank;
    }
    election_time_ms_ = now + 500 + static_cast<int64_t>(server_.Random64() % 500) + rank * 1000;
    election_votes_ = 0;
    election_requested_ = false;
    if (manual) election_time_ms_ = now;
    LogWarning("Start of election delayed for " + std::to_string(election_time_ms_ - now) +
               " milliseconds (rank #" + std::to_string(rank) + ", offset " +
               std::to_string(offset) + ").");
    // The fellow replicas learn this one's offset for their own ranks.
    for (ClusterNode* replica : master->replicas) {
      if (replica != myself_ && replica->link != nullptr) {
        SendPing(*replica->link, MessageType::kPong);
      }
    }
    return;
  }
  if (now < election_time_ms_) return;
  if (now - election_time_ms_ > auth_timeout) return;  // expired: the next one is planned later
  if (!election_requested_) {
    ++current_epoch_;
    election_epoch_ = current_epoch_;
    LogWarning("Starting a failover election for epoch " + std::to_string(current_epoch_) + ".");
    BusMessage request = Header(MessageType::kFailoverAuthRequest);
    if (manual) request.mflags[0] |= kForceAck;
    Broadcast(request);
    election_requested_ = true;
    MarkConfigDirty();
    return;
  }
  if (election_votes_ >= QuorumSize()) {
    LogWarning("Failover election won: I'm the new master.");
    if (myself_->config_epoch < election_epoch_) {
      myself_->config_epoch = election_epoch_;
      LogWarning("configEpoch set to " + std::to_string(election_epoch_) +
                 " after successful failover");
    }
    ReplicaWins();
  }
}

void Cluster::ReplicaWins() {
  ClusterNode* old_master = myself_->master;
  SetAsMaster(myself_);
  server_.master_link->SetMaster({});
  if (old_master != nullptr) {
    for (int slot = 0; slot < kClusterSlots; ++slot) {
      if (slots_[static_cast<size_t>(slot)] == old_master) AssignSlot(slot, myself_);
    }
  }
  election_time_ms_ = 0;
  election_requested_ = false;
  state_update_pending_ = true;
  UpdateState();
  std::string error;
  SaveConfig(&error);
  // Everyone learns the new owner now rather than at their next PING.
  for (auto& [name, node] : nodes_) {
    if (node->link != nullptr && node.get() != myself_ && !node->in_handshake()) {
      SendPing(*node->link, MessageType::kPong);
    }
  }
  ResetManualFailover();
}

void Cluster::GrantVoteIfNeeded(ClusterNode* requester, const BusMessage& request) {
  if (myself_->is_replica() || myself_->slot_count == 0) return;
  const int64_t now = NowMs();
  const std::string who = requester->name;
  if (request.current_epoch < current_epoch_) {
    LogWarning("Failover auth denied to " + who + " (): reqEpoch (" +
               std::to_string(request.current_epoch) + ") < curEpoch(" +
               std::to_string(current_epoch_) + ")");
    return;
  }
  if (last_vote_epoch_ == current_epoch_) {
    LogWarning("Failover auth denied to " + who + " (): already voted for epoch " +
               std::to_string(current_epoch_));
    return;
  }
  ClusterNode* master = requester->master;
  const bool force = (request.mflags[0] & kForceAck) != 0;
  if (requester->is_master() || master == nullptr || (!master->failing() && !force)) {
    LogWarning("Failover auth denied to " + who + " (): " +
               (requester->is_master() ? "it is a master node"
                : master == nullptr    ? "I don't know its master"
                                       : "its master is up"));
    return;
  }
  const int64_t timeout = server_.config.cluster.node_timeout;
  if (now - master->voted_time_ms < timeout * 2) {
    LogWarning("Failover auth denied to " + who +
               " (): can't vote for any replica of this master "
               "before " +
               std::to_string(timeout * 2 - (now - master->voted_time_ms)) + " milliseconds");
    return;
  }
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const auto s = static_cast<size_t>(slot);
    if (!request.slots[s] || slots_[s] == nullptr) continue;
    if (slots_[s]->config_epoch <= request.config_epoch) continue;
    LogWarning("Failover auth denied to " + who + " (): slot " + std::to_string(slot) + " epoch (" +
               std::to_string(slots_[s]->config_epoch) + ") > reqEpoch (" +
               std::to_string(request.config_epoch) + ")");
    return;
  }
  last_vote_epoch_ = current_epoch_;
  master->voted_time_ms = now;
  MarkConfigDirty();
  if (requester->link != nullptr) {
    CountSent(MessageType::kFailoverAuthAck);
    requester->link->Send(Encode(Header(MessageType::kFailoverAuthAck)));
  }
  LogWarning("Failover auth granted to " + who + " () for epoch " + std::to_string(current_epoch_));
}

}  // namespace goblin::cluster
