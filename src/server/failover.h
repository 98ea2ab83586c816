// FAILOVER, Redis's coordinated failover: a master hands its role to one of its replicas
// without losing an acknowledged write, and follows it.
//
// The states, as INFO replication's master_failover_state names them:
//   no-failover           nothing is going on
//   waiting-for-sync      FAILOVER was accepted: writes are paused (CLIENT PAUSE WRITE's rules,
//                         with a pause of its own that CLIENT UNPAUSE leaves alone), and the
//                         master waits until the target (TO host port), or else any online
//                         replica, acknowledged master_repl_offset. The replicas acknowledge
//                         once a second; the pause holds REPLCONF GETACK back, and with a
//                         TIMEOUT the PINGs too, so that the offset stays put (Redis's rules).
//                         Past the TIMEOUT the failover aborts, or with FORCE goes on.
//   failover-in-progress  the master became a replica of the target, keeping its data and its
//                         history (REPLICAOF's rules), and its PSYNC carries a fourth word,
//                         FAILOVER. The target, whose replication id must be the one named,
//                         promotes itself as REPLICAOF NO ONE does (the old id stays valid as
//                         replid2) and answers +CONTINUE. +CONTINUE or +FULLRESYNC ends the
//                         failover; any other answer aborts it.
// An abort (FAILOVER ABORT, the timeout, a refused PSYNC) ends the pause; from
// failover-in-progress it also makes this server a master again, with a new replication id
// whose predecessor its replicas continue from. The other replicas stay attached through the
// hand-over: once the new master's +CONTINUE names its new id they reconnect to this server,
// now their chained master, and continue with +CONTINUE too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "server/config.h"

namespace goblin {

class Server;
struct Client;

class Failover {
 public:
  enum class State { kNone, kWaitForSync, kInProgress };

  explicit Failover(Server& server) : server_(server) {}
  Failover(const Failover&) = delete;
  Failover& operator=(const Failover&) = delete;

  // FAILOVER [TO host port [FORCE]] [TIMEOUT ms], its arguments and preconditions checked:
  // target.host is empty for any replica, deadline_ms 0 for none.
  void Start(const ReplicaOf& target, int64_t deadline_ms, bool force);
  // Ends the failover for reason (logged); from kInProgress this server is a master again.
  void Abort(std::string_view reason);
  // The end of each event-loop round and every tick: the deadline, and whether the target
  // caught up (then this server becomes its replica).
  void Update(int64_t now_ms);
  // The target answered the PSYNC: accepted (+CONTINUE or +FULLRESYNC) ends the failover,
  // anything else aborts it. Nothing happens outside kInProgress.
  void PsyncAnswered(bool accepted);

  State state() const { return state_; }
  bool active() const { return state_ != State::kNone; }
  bool in_progress() const { return state_ == State::kInProgress; }
  // Replication's PINGs wait: writes are paused for a failover with a deadline.
  bool holds_pings() const { return state_ == State::kWaitForSync && deadline_ms_ != 0; }
  std::string_view StateName() const;
  // The replica announcing address host (REPLCONF ip-address, else its peer's address; no
  // case) and listening port port, as FAILOVER TO names it; nullptr when there is none.
  Client* FindReplica(std::string_view host, int64_t port) const;

 private:
  // The target's "host:port", or "any replica", as the log names it.
  std::string TargetName() const;
  void HandOver();
  void Clear();

  Server& server_;
  State state_ = State::kNone;
  ReplicaOf target_;  // host empty: any replica, until one caught up
  int64_t deadline_ms_ = 0;
  bool force_ = false;
};

}  // namespace goblin
