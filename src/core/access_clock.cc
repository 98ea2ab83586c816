#include "core/access_clock.h"

namespace goblin {

uint32_t AccessClock::Accessed(uint32_t stamp) {
  if (!lfu) return seconds_;
  uint32_t counter = DecayedCounter(stamp);
  if (counter < 255) {
    // A uniform draw in [0, 1) against 1 / (base * factor + 1), without floating point:
    // r * (base * factor + 1) < 2^32 with r uniform in [0, 2^32).
    random_state_ = random_state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t r = random_state_ >> 32;
    const uint64_t base = counter > kLfuInitCounter ? counter - kLfuInitCounter : 0;
    const uint64_t factor = log_factor < 0 ? 0 : static_cast<uint64_t>(log_factor);
    if (r * (base * factor + 1) < (uint64_t{1} << 32)) ++counter;
  }
  return (minutes_ << 8) | counter;
}

uint64_t AccessClock::IdleMs(uint32_t stamp) const {
  stamp &= kStampMask;
  const uint64_t seconds = seconds_ >= stamp ? seconds_ - stamp : seconds_ + (kStampMask - stamp);
  return seconds * 1000;
}

uint32_t AccessClock::DecayedCounter(uint32_t stamp) const {
  const uint32_t counter = stamp & 0xff;
  if (decay_minutes <= 0) return counter;
  const uint32_t since = stamp >> 8 & 0xffff;
  const uint64_t elapsed = minutes_ >= since ? minutes_ - since : 65535 - since + minutes_;
  const uint64_t periods = elapsed / static_cast<uint64_t>(decay_minutes);
  return periods >= counter ? 0 : counter - static_cast<uint32_t>(periods);
}

uint32_t AccessClock::StampIdleFor(uint64_t idle_seconds) const {
  // Redis's arithmetic to the bit: idle * 1000 / 1000 in a long long (which wraps for idle times
  // past 2^63 / 1000 s), taken from the clock, one clock period added back when that is
  // negative, then kept to the stamp's 24 bits.
  const int64_t idle = static_cast<int64_t>(idle_seconds * 1000) / 1000;
  int64_t at = static_cast<int64_t>(seconds_) - idle;
  if (at < 0) at += kStampMask;
  return static_cast<uint32_t>(static_cast<uint64_t>(at) & kStampMask);
}

}  // namespace goblin
