#include "resp/cluster_bus_message.h"

#include <cstring>

namespace goblin::cluster {

namespace {

constexpr size_t kExtensionHeaderBytes = 8;
constexpr uint16_t kExtHostname = 0;
constexpr uint16_t kExtHumanNodename = 1;
constexpr uint16_t kExtForgottenNode = 2;
constexpr uint16_t kExtShardId = 3;

size_t RoundUpTo8(size_t n) { return (n + 7) / 8 * 8; }

class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    U8(static_cast<uint8_t>(v >> 8));
    U8(static_cast<uint8_t>(v));
  }
  void U32(uint32_t v) {
    U16(static_cast<uint16_t>(v >> 16));
    U16(static_cast<uint16_t>(v));
  }
  void U64(uint64_t v) {
    U32(static_cast<uint32_t>(v >> 32));
    U32(static_cast<uint32_t>(v));
  }
  // text in a field of `width` bytes, NUL-padded (and cut to width).
  void Fixed(std::string_view text, size_t width) {
    const size_t n = std::min(text.size(), width);
    out_->append(text.data(), n);
    out_->append(width - n, '\0');
  }
  void Bytes(std::string_view bytes) { out_->append(bytes); }
  void Slots(const SlotBits& slots) {
    for (size_t byte = 0; byte < kClusterSlots / 8; ++byte) {
      uint8_t v = 0;
      for (size_t bit = 0; bit < 8; ++bit) v |= slots[byte * 8 + bit] ? (1u << bit) : 0;
      U8(v);
    }
  }

 private:
  std::string* out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  size_t position() const { return position_; }
  void Seek(size_t position) { position_ = position; }
  uint8_t U8() { return static_cast<uint8_t>(in_[position_++]); }
  uint16_t U16() {
    const uint16_t high = U8();
    return static_cast<uint16_t>(high << 8 | U8());
  }
  uint32_t U32() {
    const uint32_t high = U16();
    return high << 16 | U16();
  }
  uint64_t U64() {
    const uint64_t high = U32();
    return high << 32 | U32();
  }
  // A NUL-padded field: the text before the first NUL.
  std::string Fixed(size_t width) {
    std::string_view field = in_.substr(position_, width);
    position_ += width;
    return std::string(field.substr(0, field.find('\0')));
  }
  std::string Bytes(size_t n) {
    std::string bytes(in_.substr(position_, n));
    position_ += n;
    return bytes;
  }
  SlotBits Slots() {
    SlotBits slots;
    for (size_t byte = 0; byte < kClusterSlots / 8; ++byte) {
      const uint8_t v = U8();
      for (size_t bit = 0; bit < 8; ++bit) slots[byte * 8 + bit] = (v >> bit & 1) != 0;
    }
    return slots;
  }

 private:
  std::string_view in_;
  size_t position_ = 0;
};

bool IsPingLike(MessageType type) {
  return type == MessageType::kPing || type == MessageType::kPong || type == MessageType::kMeet;
}

void WriteTextExtension(Writer& w, uint16_t type, std::string_view text) {
  const size_t data = RoundUpTo8(text.size() + 1);
  w.U32(static_cast<uint32_t>(kExtensionHeaderBytes + data));
  w.U16(type);
  w.U16(0);
  w.Fixed(text, data);
}

void WriteExtensionHeader(Writer& w, uint16_t type, size_t data) {
  w.U32(static_cast<uint32_t>(kExtensionHeaderBytes + data));
  w.U16(type);
  w.U16(0);
}

// Reads the extensions of a PING, PONG or MEET from r (positioned after the gossip) to the end.
bool ReadExtensions(Reader& r, size_t end, size_t count, BusMessage* m, std::string* error) {
  for (size_t i = 0; i < count; ++i) {
    if (end - r.position() < kExtensionHeaderBytes) {
      *error = "ping extension header past the end of the message";
      return false;
    }
    const size_t start = r.position();
    const uint32_t length = r.U32();
    const uint16_t type = r.U16();
    r.U16();
    if (length < kExtensionHeaderBytes || length % 8 != 0 || length > end - start) {
      *error = "ping extension of a bad length";
      return false;
    }
    const size_t data = length - kExtensionHeaderBytes;
    switch (type) {
      case kExtHostname:
        m->hostname = r.Fixed(data);
        break;
      case kExtHumanNodename:
        m->human_nodename = r.Fixed(data);
        break;
      case kExtForgottenNode:
        if (data < kNameLength + 8) {
          *error = "forgotten node extension too short";
          return false;
        }
        m->forgotten.push_back({r.Fixed(kNameLength), r.U64()});
        break;
      case kExtShardId:
        if (data < kNameLength) {
          *error = "shard id extension too short";
          return false;
        }
        m->shard_id = r.Fixed(kNameLength);
        break;
      default:
        break;  // a newer extension: skipped, as Redis skips it
    }
    r.Seek(start + length);
  }
  return true;
}

}  // namespace

std::string Encode(const BusMessage& m) {
  std::string out;
  out.reserve(kHeaderBytes + m.gossip.size() * kGossipBytes + 256 + m.payload.size() +
              m.channel.size());
  Writer w(&out);
  w.Bytes("RCmb");
  w.U32(0);  // the length, filled in at the end
  w.U16(kProtocolVersion);
  w.U16(m.port);
  w.U16(static_cast<uint16_t>(m.type));
  w.U16(IsPingLike(m.type) ? static_cast<uint16_t>(m.gossip.size()) : 0);
  w.U64(m.current_epoch);
  w.U64(m.config_epoch);
  w.U64(m.offset);
  w.Fixed(m.sender, kNameLength);
  w.Slots(m.slots);
  w.Fixed(m.master, kNameLength);
  w.Fixed(m.ip, kIpLength);
  uint16_t extensions = 0;
  if (IsPingLike(m.type)) {
    extensions = static_cast<uint16_t>((m.hostname ? 1 : 0) + (m.human_nodename ? 1 : 0) +
                                       (m.shard_id ? 1 : 0) + m.forgotten.size());
  }
  w.U16(extensions);
  w.Fixed("", 30);
  w.U16(m.other_port);
  w.U16(m.bus_port);
  w.U16(m.flags);
  w.U8(m.state);
  std::array<uint8_t, 3> mflags = m.mflags;
  if (extensions != 0) mflags[0] |= kExtensionData;
  for (const uint8_t f : mflags) w.U8(f);

  switch (m.type) {
    case MessageType::kPing:
    case MessageType::kPong:
    case MessageType::kMeet:
      for (const Gossip& g : m.gossip) {
        w.Fixed(g.name, kNameLength);
        w.U32(g.ping_sent);
        w.U32(g.pong_received);
        w.Fixed(g.ip, kIpLength);
        w.U16(g.port);
        w.U16(g.bus_port);
        w.U16(g.flags);
        w.U16(g.other_port);
        w.U16(0);
      }
      if (m.hostname) WriteTextExtension(w, kExtHostname, *m.hostname);
      if (m.human_nodename) WriteTextExtension(w, kExtHumanNodename, *m.human_nodename);
      for (const ForgottenNode& f : m.forgotten) {
        WriteExtensionHeader(w, kExtForgottenNode, kNameLength + 8);
        w.Fixed(f.name, kNameLength);
        w.U64(f.ttl_seconds);
      }
      if (m.shard_id) {
        WriteExtensionHeader(w, kExtShardId, kNameLength);
        w.Fixed(*m.shard_id, kNameLength);
      }
      break;
    case MessageType::kFail:
      w.Fixed(m.about, kNameLength);
      break;
    case MessageType::kPublish:
    case MessageType::kPublishShard:
      w.U32(static_cast<uint32_t>(m.channel.size()));
      w.U32(static_cast<uint32_t>(m.payload.size()));
      w.Bytes(m.channel);
      w.Bytes(m.payload);
      break;
    case MessageType::kUpdate:
      w.U64(m.update_config_epoch);
      w.Fixed(m.about, kNameLength);
      w.Slots(m.update_slots);
      break;
    default:
      break;
  }
  const uint32_t length = static_cast<uint32_t>(out.size());
  for (int i = 0; i < 4; ++i) out[4 + i] = static_cast<char>(length >> (24 - 8 * i));
  return out;
}

std::optional<uint32_t> AnnouncedLength(std::string_view head, std::string* error) {
  if (head.substr(0, 4) != "RCmb") {
    *error = "bad message signature";
    return std::nullopt;
  }
  Reader r(head.substr(4, 4));
  const uint32_t length = r.U32();
  if (length < kHeaderBytes) {
    *error = "message shorter than a header";
    return std::nullopt;
  }
  if (length > kMaxMessageBytes) {
    *error = "message longer than the bus allows";
    return std::nullopt;
  }
  return length;
}

std::optional<BusMessage> Decode(std::string_view bytes, std::string* error) {
  if (bytes.size() < kHeaderBytes || bytes.substr(0, 4) != "RCmb") {
    *error = "not a bus message";
    return std::nullopt;
  }
  Reader r(bytes);
  r.Seek(4);
  const uint32_t length = r.U32();
  if (length != bytes.size()) {
    *error = "message length does not match";
    return std::nullopt;
  }
  if (r.U16() != kProtocolVersion) {
    *error = "unknown protocol version";
    return std::nullopt;
  }
  BusMessage m;
  m.port = r.U16();
  m.type = static_cast<MessageType>(r.U16());
  const uint16_t count = r.U16();
  m.current_epoch = r.U64();
  m.config_epoch = r.U64();
  m.offset = r.U64();
  m.sender = r.Fixed(kNameLength);
  m.slots = r.Slots();
  m.master = r.Fixed(kNameLength);
  m.ip = r.Fixed(kIpLength);
  const uint16_t extensions = r.U16();
  r.Seek(r.position() + 30);
  m.other_port = r.U16();
  m.bus_port = r.U16();
  m.flags = r.U16();
  m.state = r.U8();
  for (uint8_t& f : m.mflags) f = r.U8();

  const size_t body = bytes.size() - kHeaderBytes;
  switch (m.type) {
    case MessageType::kPing:
    case MessageType::kPong:
    case MessageType::kMeet: {
      if (body < size_t{count} * kGossipBytes) {
        *error = "gossip sections past the end of the message";
        return std::nullopt;
      }
      m.gossip.resize(count);
      for (Gossip& g : m.gossip) {
        g.name = r.Fixed(kNameLength);
        g.ping_sent = r.U32();
        g.pong_received = r.U32();
        g.ip = r.Fixed(kIpLength);
        g.port = r.U16();
        g.bus_port = r.U16();
        g.flags = r.U16();
        g.other_port = r.U16();
        r.U16();
      }
      const size_t ext_count = (m.mflags[0] & kExtensionData) != 0 ? extensions : 0;
      if (!ReadExtensions(r, bytes.size(), ext_count, &m, error)) return std::nullopt;
      if (r.position() != bytes.size()) {
        *error = "message longer than its sections";
        return std::nullopt;
      }
      break;
    }
    case MessageType::kFail:
      if (body != kNameLength) {
        *error = "FAIL message of a bad length";
        return std::nullopt;
      }
      m.about = r.Fixed(kNameLength);
      break;
    case MessageType::kPublish:
    case MessageType::kPublishShard: {
      if (body < 8) {
        *error = "PUBLISH message too short";
        return std::nullopt;
      }
      const uint64_t channel = r.U32();
      const uint64_t payload = r.U32();
      if (8 + channel + payload != body) {
        *error = "PUBLISH message of a bad length";
        return std::nullopt;
      }
      m.channel = r.Bytes(channel);
      m.payload = r.Bytes(payload);
      break;
    }
    case MessageType::kUpdate:
      if (body != 8 + kNameLength + kClusterSlots / 8) {
        *error = "UPDATE message of a bad length";
        return std::nullopt;
      }
      m.update_config_epoch = r.U64();
      m.about = r.Fixed(kNameLength);
      m.update_slots = r.Slots();
      break;
    case MessageType::kFailoverAuthRequest:
    case MessageType::kFailoverAuthAck:
    case MessageType::kMfStart:
      if (body != 0) {
        *error = "message with an unexpected body";
        return std::nullopt;
      }
      break;
    default:
      break;  // MODULE and types of later versions: the header is all Goblin reads
  }
  return m;
}

const char* TypeName(MessageType type) {
  switch (type) {
    case MessageType::kPing:
      return "ping";
    case MessageType::kPong:
      return "pong";
    case MessageType::kMeet:
      return "meet";
    case MessageType::kFail:
      return "fail";
    case MessageType::kPublish:
      return "publish";
    case MessageType::kPublishShard:
      return "publishshard";
    case MessageType::kFailoverAuthRequest:
      return "auth-req";
    case MessageType::kFailoverAuthAck:
      return "auth-ack";
    case MessageType::kUpdate:
      return "update";
    case MessageType::kMfStart:
      return "mfstart";
    case MessageType::kModule:
      return "module";
  }
  return "unknown";
}

}  // namespace goblin::cluster
