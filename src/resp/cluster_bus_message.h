// The Redis Cluster bus protocol: the binary messages nodes exchange on their bus port, laid
// out byte for byte as Redis 7.x lays them, so that Goblin and redis-server nodes can share a
// cluster. Every integer is big-endian ("network order"). A wire format like RESP, needing
// nothing of the server, it lives in the protocol layer; server/cluster speaks it.
//
// A message is a fixed header, then a body that depends on its type:
//
//   offset  size  field
//        0     4  signature "RCmb"
//        4     4  total length of the message, header included
//        8     2  protocol version, 1
//       10     2  sender's client port (its TLS port when the cluster speaks TLS)
//       12     2  type (MessageType)
//       14     2  count: PING, PONG and MEET's number of gossip sections
//       16     8  sender's current epoch
//       24     8  sender's config epoch (a replica: its master's)
//       32     8  replication offset (a master's own, a replica's processed one)
//       40    40  sender's node name, 40 hex characters
//       80  2048  the slots the sender (a replica: its master) serves, slot n in bit n % 8 of
//                 byte n / 8 (least significant bit first)
//     2128    40  the name of the sender's master, or 40 zero bytes
//     2168    46  sender's IP as it announces it, NUL-padded; all zero when it has none
//     2214     2  number of ping extensions after the gossip sections
//     2216    30  unused, zero
//     2246     2  sender's other client port (plain when the port above is TLS, and back)
//     2248     2  sender's bus port
//     2250     2  sender's flags (NodeFlag)
//     2252     1  sender's view of the cluster state: 0 ok, 1 fail
//     2253     3  message flags (mflags[0]: kPaused, kForceAck, kExtensionData)
//     2256        body
//
// Bodies:
//   PING, PONG, MEET  `count` gossip sections of 104 bytes, each a node the sender knows:
//                     name 40, ping sent (s) 4, pong received (s) 4, ip 46, port 2, bus port 2,
//                     flags 2, other port 2, unused 2; then `extensions` ping extensions, each
//                     [length 4 (header included, a multiple of 8)][type 2][unused 2][data],
//                     announced by kExtensionData in mflags[0]:
//                       0 hostname, 1 human node name: NUL-terminated text, padded to 8
//                       2 forgotten node: name 40, seconds to keep it forgotten 8
//                       3 shard id: 40
//   FAIL              the failed node's name, 40
//   PUBLISH, PUBLISHSHARD  channel length 4, message length 4, channel, message
//   UPDATE            config epoch 8, node name 40, slots 2048: a node's slots as they are
//   FAILOVER_AUTH_REQUEST, FAILOVER_AUTH_ACK, MFSTART  no body
//   MODULE            module id 8, length 4, type 1, payload (Goblin has no modules: ignored)
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_slot.h"

namespace goblin::cluster {

inline constexpr size_t kNameLength = 40;
inline constexpr size_t kIpLength = 46;
inline constexpr size_t kHeaderBytes = 2256;
inline constexpr size_t kGossipBytes = 104;
inline constexpr uint16_t kProtocolVersion = 1;
// The length a message may announce: a PUBLISH of the largest bulk string a client may send
// (proto-max-bulk-len's ceiling), with room for the channel. A larger one drops the link.
inline constexpr uint64_t kMaxMessageBytes = (uint64_t{1} << 30);

enum class MessageType : uint16_t {
  kPing = 0,
  kPong = 1,
  kMeet = 2,
  kFail = 3,
  kPublish = 4,
  kFailoverAuthRequest = 5,
  kFailoverAuthAck = 6,
  kUpdate = 7,
  kMfStart = 8,
  kModule = 9,
  kPublishShard = 10,
};
inline constexpr size_t kMessageTypes = 11;

// A node's flags, as the header and the gossip sections carry them.
enum NodeFlag : uint16_t {
  kMaster = 1,
  kReplica = 2,
  kPossiblyFailing = 4,  // PFAIL: this node has not heard from it within the node timeout
  kFailing = 8,          // FAIL: a majority of masters agreed
  kMyself = 16,
  kHandshake = 32,  // met, its first PONG not yet received
  kNoAddress = 64,
  kMeet = 128,        // a MEET goes to it next, not a PING
  kMigrateTo = 256,   // a master that may receive a migrating replica
  kNoFailover = 512,  // a replica that will not fail over
};

// mflags[0].
enum MessageFlag : uint8_t { kPaused = 1, kForceAck = 2, kExtensionData = 4 };

using SlotBits = std::bitset<kClusterSlots>;

struct Gossip {
  std::string name;
  uint32_t ping_sent = 0;
  uint32_t pong_received = 0;
  std::string ip;
  uint16_t port = 0;
  uint16_t bus_port = 0;
  uint16_t flags = 0;
  uint16_t other_port = 0;
};

struct ForgottenNode {
  std::string name;
  uint64_t ttl_seconds = 0;
};

struct BusMessage {
  MessageType type = MessageType::kPing;
  uint16_t port = 0;
  uint64_t current_epoch = 0;
  uint64_t config_epoch = 0;
  uint64_t offset = 0;
  std::string sender;  // 40 characters
  SlotBits slots;
  std::string master;  // empty when the sender is a master
  std::string ip;      // empty when the sender announces none
  uint16_t other_port = 0;
  uint16_t bus_port = 0;
  uint16_t flags = 0;
  uint8_t state = 0;
  std::array<uint8_t, 3> mflags{};

  // PING, PONG, MEET.
  std::vector<Gossip> gossip;
  std::optional<std::string> hostname;
  std::optional<std::string> human_nodename;
  std::optional<std::string> shard_id;
  std::vector<ForgottenNode> forgotten;
  // FAIL: the failed node. UPDATE: the node whose slots follow.
  std::string about;
  // PUBLISH, PUBLISHSHARD.
  std::string channel;
  std::string payload;
  // UPDATE.
  uint64_t update_config_epoch = 0;
  SlotBits update_slots;
};

// The message as bytes on the wire.
std::string Encode(const BusMessage& message);

// The length the first 8 bytes of a message announce, or nullopt (with *error set) when they
// are not a message's start: a wrong signature, or a length shorter than a header or longer
// than kMaxMessageBytes. REQUIRES: head.size() >= 8.
std::optional<uint32_t> AnnouncedLength(std::string_view head, std::string* error);

// Parses one whole message (as long as its announced length). nullopt, with *error set, when
// it is malformed: a version other than 1, a body that does not match the type's length rules,
// an extension that runs past the end. Unknown types and extension types are accepted and
// ignored, as Redis ignores them.
std::optional<BusMessage> Decode(std::string_view bytes, std::string* error);

const char* TypeName(MessageType type);

}  // namespace goblin::cluster
