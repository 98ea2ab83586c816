// Redis Cluster's hash slots: a key belongs to slot CRC16(k) mod 16384, where k is the whole key
// or, when the key has a hash tag, the tag. The tag is what lies between the first '{' and the
// first '}' after it, provided it is not empty: "{user1000}.following" and
// "{user1000}.followers" share a slot, "{}x" and "x{" hash whole. Every Redis Cluster node and
// client computes exactly this, so a key's owner is the same whoever asks.
//
// The CRC is CRC-16/XMODEM (polynomial 0x1021, initial value 0, not reflected, no final xor):
// Crc16("123456789") = 0x31c3.
#pragma once

#include <cstdint>
#include <string_view>

namespace goblin {

inline constexpr int kClusterSlots = 16384;

uint16_t Crc16(std::string_view data);

// The part of key that is hashed: its hash tag, or the whole key.
std::string_view HashTagOf(std::string_view key);

// The slot of key, in [0, kClusterSlots).
inline int KeySlot(std::string_view key) { return Crc16(HashTagOf(key)) & (kClusterSlots - 1); }

}  // namespace goblin
