// A cheap monotonic clock for timing individual commands (INFO commandstats and latencystats,
// SLOWLOG, LATENCY).
//
// Reading the time through clock_gettime cost 9% of the serving thread at -P 16 on this
// machine's virtual clock source; the processor's time-stamp counter costs a few cycles. It is
// calibrated once against steady_clock at startup. Elsewhere than x86-64 it falls back to
// steady_clock.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace goblin {

// Microseconds of steady_clock: for time slices and durations that are not per command.
inline int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class CycleClock {
 public:
  // Measures the counter's rate; call once before Now()/ToMicros()/ToNanos() matter.
  static void Calibrate();

  static uint64_t Now() {
#if defined(__x86_64__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
#endif
  }

  static int64_t ToMicros(uint64_t ticks) {
    return static_cast<int64_t>(static_cast<double>(ticks) * micros_per_tick_);
  }

  static uint64_t ToNanos(uint64_t ticks) {
    return static_cast<uint64_t>(static_cast<double>(ticks) * nanos_per_tick_);
  }

 private:
  // steady_clock nanoseconds until calibrated.
  static inline double micros_per_tick_ = 0.001;
  static inline double nanos_per_tick_ = 1;
};

}  // namespace goblin
