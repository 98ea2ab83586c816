// AccessClock: Redis's per-key access stamp, 24 bits, read by OBJECT IDLETIME and OBJECT FREQ
// and by the LRU and LFU eviction policies. The keyspace keeps each key's stamp in its key
// table slot (KeyTable's kStampBytes), beside the entry's address.
//
//   LRU (every policy but the LFU ones): the access time in seconds, modulo 2^24 (194 days);
//     the idle time is now minus it, unwrapped once.
//   LFU (allkeys-lfu, volatile-lfu): [23..8 the time of the last decrement, in minutes modulo
//     2^16][7..0 a logarithmic access counter]. An access first applies the decay (one step per
//     lfu-decay-time minutes since that time), then increments the counter with probability
//     1 / ((counter - 5) * lfu-log-factor + 1), and stamps the time. A new key starts at 5
//     (LFU_INIT_VAL), so it is not evicted before it had a chance to be used.
//
// The stamp means one or the other by the policy in force, as in Redis: after a CONFIG SET of
// maxmemory-policy the old stamps read in the new meaning until keys are used again.
#pragma once

#include <cstdint>

namespace goblin {

class AccessClock {
 public:
  static constexpr uint32_t kStampMask = (uint32_t{1} << 24) - 1;
  static constexpr uint32_t kLfuInitCounter = 5;

  // The policy's parameters (maxmemory-policy, lfu-log-factor, lfu-decay-time).
  bool lfu = false;
  int64_t log_factor = 10;
  int64_t decay_minutes = 1;

  // The clock commands read: the time of the command being executed.
  void SetNow(int64_t now_ms) {
    seconds_ = static_cast<uint32_t>(now_ms / 1000) & kStampMask;
    minutes_ = static_cast<uint32_t>(now_ms / 60000) & 0xffff;
  }

  // The stamp of a key created now.
  uint32_t NewStamp() const { return lfu ? (minutes_ << 8) | kLfuInitCounter : seconds_; }
  // The stamp after an access.
  uint32_t Accessed(uint32_t stamp);

  // LRU: milliseconds since the access (Redis's estimateObjectIdleTime: second resolution).
  uint64_t IdleMs(uint32_t stamp) const;
  // LFU: the counter with the decay applied, without changing the stamp.
  uint32_t DecayedCounter(uint32_t stamp) const;

  // The stamps RESTORE ... IDLETIME / FREQ and an RDB file's idle and frequency records give
  // (Redis's objectSetLRUOrLFU): an access `idle_seconds` ago, or a counter of `counter`
  // (0..255) as of now.
  uint32_t StampIdleFor(uint64_t idle_seconds) const;
  uint32_t StampWithCounter(uint32_t counter) const { return (minutes_ << 8) | (counter & 0xff); }

 private:
  uint32_t seconds_ = 0;
  uint32_t minutes_ = 0;
  uint64_t random_state_ = 0x853c49e6748fea9bULL;
};

}  // namespace goblin
