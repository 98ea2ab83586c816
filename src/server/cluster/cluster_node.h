// A node of the cluster as this node knows it: its identity, address, role, slots and health,
// and the bus links to it. Owned by Cluster (cluster.h), which keeps every pointer between
// nodes (master, replicas) consistent as nodes come, go and change roles.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "resp/cluster_bus_message.h"

namespace goblin::cluster {

class BusLink;

struct ClusterNode {
  std::string name;      // 40 hex characters
  std::string shard_id;  // 40 hex characters: a master and its replicas share it
  uint16_t flags = 0;    // NodeFlag
  int64_t created_ms = 0;
  uint64_t config_epoch = 0;
  std::string ip;  // empty until known
  int port = 0;
  int bus_port = 0;
  int other_port = 0;  // the plain port when port is TLS, and back
  std::string hostname;
  std::string human_nodename;
  // Whether its PINGs carry a shard id. Redis 7.0 nodes send none and log every one they get as
  // an unknown extension, so they get none once they have been heard from.
  bool sends_shard_id = false;

  SlotBits slots;
  int slot_count = 0;
  ClusterNode* master = nullptr;  // a replica's master, when known
  std::vector<ClusterNode*> replicas;

  int64_t ping_sent_ms = 0;      // a PING went unanswered since; 0 when none is pending
  int64_t pong_received_ms = 0;  // the last PONG
  int64_t data_received_ms = 0;  // the last message of any kind
  int64_t fail_time_ms = 0;      // when it was marked FAIL
  int64_t voted_time_ms = 0;     // when this node last voted for one of its replicas
  int64_t orphaned_time_ms = 0;  // since when this master has no working replica
  uint64_t repl_offset = 0;
  int64_t repl_offset_time_ms = 0;
  // FAIL reports: the masters that said it is failing (by name), and when they last did.
  std::map<std::string, int64_t> fail_reports;

  BusLink* link = nullptr;          // the link this node opened to it
  BusLink* inbound_link = nullptr;  // the link it opened to this node

  bool is_master() const { return (flags & kMaster) != 0; }
  bool is_replica() const { return (flags & kReplica) != 0; }
  bool myself() const { return (flags & kMyself) != 0; }
  bool in_handshake() const { return (flags & kHandshake) != 0; }
  bool has_address() const { return (flags & kNoAddress) == 0; }
  bool failing() const { return (flags & kFailing) != 0; }
  bool possibly_failing() const { return (flags & kPossiblyFailing) != 0; }
  bool timed_out() const { return (flags & (kFailing | kPossiblyFailing)) != 0; }
};

}  // namespace goblin::cluster
