#include "server/cycle_clock.h"

#include <thread>

namespace goblin {

void CycleClock::Calibrate() {
#if defined(__x86_64__)
  auto wall_start = std::chrono::steady_clock::now();
  uint64_t start = Now();
  // Both clocks are read within tens of nanoseconds of each other at either end: over 2 ms the
  // rate is within 1e-4, and startup (a restarted replica, a failover) waits no longer.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  uint64_t ticks = Now() - start;
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - wall_start)
                   .count();
  if (ticks > 0 && nanos > 0) {
    nanos_per_tick_ = static_cast<double>(nanos) / static_cast<double>(ticks);
    micros_per_tick_ = nanos_per_tick_ / 1000;
  }
#endif
}

}  // namespace goblin
