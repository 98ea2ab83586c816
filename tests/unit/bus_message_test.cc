#include "resp/cluster_bus_message.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace goblin::cluster {
namespace {

// A MEET that Debian's redis-server 7.0.15 sent to a new node: the node serving slots
// 1000-5460 of a cluster in state fail, knowing two other masters, with the hostname "host-a".
// Captured on the wire; only the bytes that are not zero are listed, by offset.
std::string Redis70Meet() {
  std::string bytes(2480, '\0');
  const std::vector<std::pair<size_t, std::string>> runs = {
      {0, std::string("RCmb", 4)},
      {6, std::string("\x09\xb0\x00\x01\x1c\xe9\x00\x02\x00\x02", 10)},
      {23, std::string("\x05", 1)},
      {31, std::string("\x01", 1)},
      {40, "3357fe876b5a2f071108f3d322fcfc729d128a2a"},
      {205, std::string(557, '\xff') + "\x1f"},
      {2215, std::string("\x01", 1)},
      {2248, std::string("\x43\xf9\x00\x11\x01\x04", 6)},
      {2256, "e28eaa4b6a7ad82b8a93b025f9ddb146b55f3d73"},
      {2300, std::string("\x6b\x15\xd5\x91"
                         "127.0.0.1",
                         13)},
      {2350, std::string("\x1c\xea\x43\xfa\x00\x01", 6)},
      {2360, "fa4e1944b9916592fa47c6a625897e622d45c381"},
      {2404, std::string("\x6b\x15\xd5\x91"
                         "127.0.0.1",
                         13)},
      {2454, std::string("\x1c\xeb\x43\xfb\x00\x01", 6)},
      {2467, std::string("\x10", 1)},
      {2472, "host-a"},
  };
  for (const auto& [offset, run] : runs) bytes.replace(offset, run.size(), run);
  return bytes;
}

TEST(BusMessageTest, DecodesAMeetRedisSent) {
  const std::string bytes = Redis70Meet();
  std::string error;
  ASSERT_EQ(AnnouncedLength(bytes.substr(0, 8), &error), 2480u) << error;
  const std::optional<BusMessage> m = Decode(bytes, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->type, MessageType::kMeet);
  EXPECT_EQ(m->port, 7401);
  EXPECT_EQ(m->bus_port, 17401);
  EXPECT_EQ(m->current_epoch, 5u);
  EXPECT_EQ(m->config_epoch, 1u);
  EXPECT_EQ(m->sender, "3357fe876b5a2f071108f3d322fcfc729d128a2a");
  EXPECT_EQ(m->master, "");
  EXPECT_EQ(m->ip, "");
  EXPECT_EQ(m->flags, kMaster | kMyself);
  EXPECT_EQ(m->state, 1);
  EXPECT_EQ(m->slots.count(), 5461u - 1000u);
  EXPECT_FALSE(m->slots[999]);
  EXPECT_TRUE(m->slots[1000]);
  EXPECT_TRUE(m->slots[5460]);
  EXPECT_FALSE(m->slots[5461]);
  ASSERT_EQ(m->gossip.size(), 2u);
  EXPECT_EQ(m->gossip[0].name, "e28eaa4b6a7ad82b8a93b025f9ddb146b55f3d73");
  EXPECT_EQ(m->gossip[0].pong_received, 1796593041u);
  EXPECT_EQ(m->gossip[0].ip, "127.0.0.1");
  EXPECT_EQ(m->gossip[0].port, 7402);
  EXPECT_EQ(m->gossip[0].bus_port, 17402);
  EXPECT_EQ(m->gossip[1].port, 7403);
  EXPECT_EQ(m->gossip[1].flags, kMaster);
  EXPECT_EQ(m->hostname, "host-a");
  EXPECT_FALSE(m->shard_id);
}

// Goblin's encoding of the same content is the same bytes.
TEST(BusMessageTest, EncodesAsRedisDoes) {
  std::string error;
  const std::string bytes = Redis70Meet();
  const std::optional<BusMessage> m = Decode(bytes, &error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(Encode(*m), bytes);
}

BusMessage RandomMessage(std::mt19937_64& rng, MessageType type) {
  auto name = [&] {
    std::string text;
    for (int i = 0; i < 40; ++i) text.push_back("0123456789abcdef"[rng() % 16]);
    return text;
  };
  BusMessage m;
  m.type = type;
  m.port = static_cast<uint16_t>(rng());
  m.current_epoch = rng();
  m.config_epoch = rng();
  m.offset = rng();
  m.sender = name();
  for (int i = 0; i < 50; ++i) m.slots[rng() % kClusterSlots] = true;
  if (rng() % 2) m.master = name();
  m.ip = "10.0." + std::to_string(rng() % 256) + ".1";
  m.other_port = static_cast<uint16_t>(rng());
  m.bus_port = static_cast<uint16_t>(rng());
  m.flags = static_cast<uint16_t>(rng() % 1024);
  m.state = static_cast<uint8_t>(rng() % 2);
  switch (type) {
    case MessageType::kPing:
    case MessageType::kPong:
    case MessageType::kMeet:
      for (size_t i = rng() % 5; i > 0; --i) {
        Gossip g;
        g.name = name();
        g.ping_sent = static_cast<uint32_t>(rng());
        g.pong_received = static_cast<uint32_t>(rng());
        g.ip = "127.0.0." + std::to_string(rng() % 256);
        g.port = static_cast<uint16_t>(rng());
        g.bus_port = static_cast<uint16_t>(rng());
        g.flags = static_cast<uint16_t>(rng() % 1024);
        g.other_port = static_cast<uint16_t>(rng());
        m.gossip.push_back(g);
      }
      if (rng() % 2) m.hostname = std::string(rng() % 20, 'h');
      if (rng() % 2) m.human_nodename = "node-" + std::to_string(rng() % 100);
      if (rng() % 2) m.shard_id = name();
      if (rng() % 2) m.forgotten.push_back({name(), rng() % 60});
      break;
    case MessageType::kFail:
      m.about = name();
      break;
    case MessageType::kPublish:
    case MessageType::kPublishShard:
      m.channel = std::string(rng() % 10, 'c');
      m.payload = std::string(rng() % 100, '\0');
      break;
    case MessageType::kUpdate:
      m.about = name();
      m.update_config_epoch = rng();
      for (int i = 0; i < 50; ++i) m.update_slots[rng() % kClusterSlots] = true;
      break;
    default:
      break;
  }
  return m;
}

void ExpectSame(const BusMessage& a, const BusMessage& b) {
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.port, b.port);
  EXPECT_EQ(a.current_epoch, b.current_epoch);
  EXPECT_EQ(a.config_epoch, b.config_epoch);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.sender, b.sender);
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.master, b.master);
  EXPECT_EQ(a.ip, b.ip);
  EXPECT_EQ(a.other_port, b.other_port);
  EXPECT_EQ(a.bus_port, b.bus_port);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.state, b.state);
  ASSERT_EQ(a.gossip.size(), b.gossip.size());
  for (size_t i = 0; i < a.gossip.size(); ++i) {
    EXPECT_EQ(a.gossip[i].name, b.gossip[i].name);
    EXPECT_EQ(a.gossip[i].ping_sent, b.gossip[i].ping_sent);
    EXPECT_EQ(a.gossip[i].pong_received, b.gossip[i].pong_received);
    EXPECT_EQ(a.gossip[i].ip, b.gossip[i].ip);
    EXPECT_EQ(a.gossip[i].port, b.gossip[i].port);
    EXPECT_EQ(a.gossip[i].bus_port, b.gossip[i].bus_port);
    EXPECT_EQ(a.gossip[i].flags, b.gossip[i].flags);
    EXPECT_EQ(a.gossip[i].other_port, b.gossip[i].other_port);
  }
  EXPECT_EQ(a.hostname, b.hostname);
  EXPECT_EQ(a.human_nodename, b.human_nodename);
  EXPECT_EQ(a.shard_id, b.shard_id);
  ASSERT_EQ(a.forgotten.size(), b.forgotten.size());
  for (size_t i = 0; i < a.forgotten.size(); ++i) {
    EXPECT_EQ(a.forgotten[i].name, b.forgotten[i].name);
    EXPECT_EQ(a.forgotten[i].ttl_seconds, b.forgotten[i].ttl_seconds);
  }
  EXPECT_EQ(a.about, b.about);
  EXPECT_EQ(a.channel, b.channel);
  EXPECT_EQ(a.payload, b.payload);
  EXPECT_EQ(a.update_config_epoch, b.update_config_epoch);
  EXPECT_EQ(a.update_slots, b.update_slots);
}

TEST(BusMessageTest, EveryTypeRoundTrips) {
  std::mt19937_64 rng(20261206);
  for (int round = 0; round < 500; ++round) {
    const auto type = static_cast<MessageType>(rng() % kMessageTypes);
    const BusMessage m = RandomMessage(rng, type);
    const std::string bytes = Encode(m);
    std::string error;
    ASSERT_EQ(AnnouncedLength(bytes.substr(0, 8), &error), bytes.size());
    const std::optional<BusMessage> back = Decode(bytes, &error);
    ASSERT_TRUE(back) << "round " << round << ": " << error;
    if (type == MessageType::kModule) continue;  // its body is not Goblin's to read
    ExpectSame(m, *back);
  }
}

// Every cut of a valid message, and every single corrupted length field, is refused or parsed
// without reading past the bytes given (the sanitizer build checks the reads).
TEST(BusMessageTest, TruncatedOrInconsistentMessagesAreRefused) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    const auto type = static_cast<MessageType>(rng() % kMessageTypes);
    const std::string bytes = Encode(RandomMessage(rng, type));
    std::string error;
    for (size_t cut = 0; cut < bytes.size(); cut += 1 + rng() % 97) {
      EXPECT_FALSE(Decode(bytes.substr(0, cut), &error)) << "cut at " << cut;
    }
    std::string bad = bytes;
    bad[14] = static_cast<char>(0x7f);  // a gossip count the body cannot hold
    if (type == MessageType::kPing || type == MessageType::kPong || type == MessageType::kMeet) {
      EXPECT_FALSE(Decode(bad, &error));
    }
  }
  std::string error;
  EXPECT_FALSE(AnnouncedLength(std::string("RCmx\0\0\x10\0", 8), &error));
  EXPECT_FALSE(AnnouncedLength(std::string("RCmb\0\0\0\x10", 8), &error));  // shorter than a header
  EXPECT_FALSE(AnnouncedLength(std::string("RCmb\xff\xff\xff\xff", 8), &error));  // too long
  std::string wrong_version = Redis70Meet();
  wrong_version[9] = 2;
  EXPECT_FALSE(Decode(wrong_version, &error));
}

TEST(BusMessageTest, ExtensionOfAnUnknownTypeIsSkipped) {
  BusMessage m;
  m.type = MessageType::kPing;
  m.sender = std::string(40, 'a');
  m.hostname = "h";
  std::string bytes = Encode(m);
  // A newer extension (type 9, 16 bytes) after the hostname, counted in the header.
  bytes += std::string("\0\0\0\x10\0\x09\0\0abcdefgh", 16);
  const uint32_t length = static_cast<uint32_t>(bytes.size());
  for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<char>(length >> (24 - 8 * i));
  bytes[2215] = 2;
  std::string error;
  const std::optional<BusMessage> back = Decode(bytes, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->hostname, "h");
}

}  // namespace
}  // namespace goblin::cluster
