#include "server/failover.h"

#include <string>

#include "core/ascii.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

std::string_view Failover::StateName() const {
  switch (state_) {
    case State::kNone:
      return "no-failover";
    case State::kWaitForSync:
      return "waiting-for-sync";
    case State::kInProgress:
      return "failover-in-progress";
  }
  return "unknown";
}

std::string Failover::TargetName() const {
  return target_.host + ":" + std::to_string(target_.port);
}

Client* Failover::FindReplica(std::string_view host, int64_t port) const {
  for (Client* replica : server_.replication->Replicas()) {
    if (EqualsIgnoreCase(Replication::ReplicaIp(*replica), host) &&
        replica->replica.listening_port == port) {
      return replica;
    }
  }
  return nullptr;
}

void Failover::Start(const ReplicaOf& target, int64_t deadline_ms, bool force) {
  target_ = target;
  deadline_ms_ = deadline_ms;
  force_ = force;
  state_ = State::kWaitForSync;
  server_.SetWritePause(WritePause::kFailover, true);
}

void Failover::Abort(std::string_view reason) {
  if (state_ == State::kNone) return;
  LogNotice("FAILOVER to " + (target_.host.empty() ? std::string("any replica") : TargetName()) +
            " aborted: " + std::string(reason));
  if (state_ == State::kInProgress) server_.master_link->SetMaster({});
  Clear();
}

void Failover::PsyncAnswered(bool accepted) {
  if (state_ != State::kInProgress) return;
  if (accepted) {
    Clear();
  } else {
    Abort("Failover target rejected psync request");
  }
}

void Failover::Update(int64_t now_ms) {
  if (state_ != State::kWaitForSync) return;
  if (deadline_ms_ != 0 && deadline_ms_ <= now_ms) {
    if (!force_) {
      Abort("Replica never caught up before timeout");
      return;
    }
    LogNotice("FAILOVER to " + TargetName() + " time out exceeded, failing over.");
    HandOver();
    return;
  }
  // A replica that is still syncing has acknowledged nothing of this history.
  const uint64_t offset = server_.replication->offset();
  auto caught_up = [offset](const Client& replica) {
    return replica.replica.state == ReplicaState::kOnline && replica.replica.ack_offset == offset;
  };
  if (!target_.host.empty()) {
    const Client* replica = FindReplica(target_.host, target_.port);
    if (replica == nullptr || !caught_up(*replica)) return;
  } else {
    const Client* chosen = nullptr;
    for (const Client* replica : server_.replication->Replicas()) {
      if (caught_up(*replica)) {
        chosen = replica;
        break;
      }
    }
    if (chosen == nullptr) return;
    target_ = {Replication::ReplicaIp(*chosen), chosen->replica.listening_port};
  }
  LogNotice("Failover target " + TargetName() + " is synced, failing over.");
  HandOver();
}

void Failover::HandOver() {
  state_ = State::kInProgress;
  // The PSYNC this link sends names FAILOVER (master_link.cc) while the state says so.
  server_.master_link->SetMaster(target_);
}

void Failover::Clear() {
  state_ = State::kNone;
  target_ = {};
  deadline_ms_ = 0;
  force_ = false;
  server_.SetWritePause(WritePause::kFailover, false);
}

}  // namespace goblin
