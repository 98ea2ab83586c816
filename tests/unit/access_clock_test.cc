#include "core/access_clock.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace goblin {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;

TEST(AccessClockTest, LruIdleTimeCountsWholeSecondsSinceTheAccess) {
  AccessClock clock;
  clock.SetNow(1'700'000'000'123);
  const uint32_t stamp = clock.NewStamp();
  EXPECT_EQ(clock.IdleMs(stamp), 0u);
  clock.SetNow(1'700'000'000'123 + 2500);
  EXPECT_EQ(clock.IdleMs(stamp), 2000u);
  EXPECT_EQ(clock.IdleMs(clock.Accessed(stamp)), 0u);
}

TEST(AccessClockTest, LruIdleTimeUnwrapsTheTwentyFourBitClockOnce) {
  AccessClock clock;
  // A stamp taken just before the seconds clock wraps, read just after it.
  const int64_t wrap_ms = int64_t{AccessClock::kStampMask + 1} * kSecond;
  clock.SetNow(wrap_ms - 10 * kSecond);
  const uint32_t stamp = clock.NewStamp();
  EXPECT_EQ(stamp, AccessClock::kStampMask - 9);
  clock.SetNow(wrap_ms + 5 * kSecond);
  // Redis's estimateObjectIdleTime: (now + (max - stamp)) seconds, one short of the true 15.
  EXPECT_EQ(clock.IdleMs(stamp), 14u * kSecond);
}

TEST(AccessClockTest, StampIdleForGivesTheIdleTimeBack) {
  AccessClock clock;
  for (int64_t now : {int64_t{5} * kSecond, int64_t{1'700'000'000'000}}) {
    clock.SetNow(now);
    for (uint64_t idle : {0u, 1u, 59u, 3600u, 86400u * 30}) {
      const uint64_t got = clock.IdleMs(clock.StampIdleFor(idle)) / 1000;
      // Across the clock's wrap Redis's arithmetic loses one second, as above.
      EXPECT_TRUE(got == idle || got + 1 == idle) << now << " " << idle << " " << got;
    }
  }
}

TEST(AccessClockTest, StampIdleForBeyondTheClockPeriodFollowsRedisArithmetic) {
  AccessClock clock;
  clock.SetNow(int64_t{1'796'233'000} * kSecond);
  const uint64_t now = 1'796'233'000 & AccessClock::kStampMask;
  // Past the period the stamp is (now - idle - 1) mod 2^24, as Redis's 24-bit field keeps it.
  const uint64_t far = 20'000'000;
  EXPECT_EQ(clock.StampIdleFor(far),
            (now + (uint64_t{1} << 48) - far - 1) & AccessClock::kStampMask);
  // An idle time whose milliseconds overflow a long long wraps to -1 s in Redis: a stamp one
  // second ahead, which reads as 2^24 - 2 seconds idle.
  EXPECT_EQ(clock.IdleMs(clock.StampIdleFor(INT64_MAX)) / 1000, AccessClock::kStampMask - 1);
}

TEST(AccessClockTest, LfuNewKeysStartAtFiveAndLogFactorZeroCountsEveryAccess) {
  AccessClock clock;
  clock.lfu = true;
  clock.log_factor = 0;
  clock.decay_minutes = 0;
  clock.SetNow(1000 * kMinute);
  uint32_t stamp = clock.NewStamp();
  EXPECT_EQ(clock.DecayedCounter(stamp), AccessClock::kLfuInitCounter);
  for (uint32_t n = 1; n <= 300; ++n) {
    stamp = clock.Accessed(stamp);
    EXPECT_EQ(clock.DecayedCounter(stamp), std::min<uint32_t>(5 + n, 255));
  }
}

TEST(AccessClockTest, LfuCounterDecaysOneStepPerDecayPeriod) {
  AccessClock clock;
  clock.lfu = true;
  clock.decay_minutes = 2;
  clock.SetNow(500 * kMinute);
  const uint32_t stamp = clock.StampWithCounter(20);
  EXPECT_EQ(clock.DecayedCounter(stamp), 20u);
  clock.SetNow(503 * kMinute);
  EXPECT_EQ(clock.DecayedCounter(stamp), 19u);
  clock.SetNow(540 * kMinute);
  EXPECT_EQ(clock.DecayedCounter(stamp), 0u);
  // An access applies the decay before it counts, and restarts the decay time.
  clock.SetNow(510 * kMinute);
  clock.log_factor = 0;
  const uint32_t accessed = clock.Accessed(stamp);
  EXPECT_EQ(clock.DecayedCounter(accessed), 16u);
  clock.decay_minutes = 0;  // lfu-decay-time 0: counters never decay
  clock.SetNow(90000 * kMinute);
  EXPECT_EQ(clock.DecayedCounter(accessed), 16u);
}

TEST(AccessClockTest, LfuMinutesWrapAsRedisCountsThem) {
  AccessClock clock;
  clock.lfu = true;
  clock.SetNow(65530 * kMinute);
  const uint32_t stamp = clock.StampWithCounter(100);
  clock.SetNow(65536 * kMinute + 4 * kMinute);  // 10 minutes later, past the 16-bit wrap
  // Redis's LFUTimeElapsed: 65535 - 65530 + 4 = 9 periods of one minute.
  EXPECT_EQ(clock.DecayedCounter(stamp), 91u);
}

// The increment's probability, 1 / ((counter - 5) * factor + 1), measured over many draws.
TEST(AccessClockTest, LfuIncrementProbabilityFollowsTheLogFactor) {
  AccessClock clock;
  clock.lfu = true;
  clock.log_factor = 10;
  clock.decay_minutes = 0;
  clock.SetNow(kMinute);
  for (uint32_t counter : {5u, 6u, 15u, 105u}) {
    const uint32_t stamp = clock.StampWithCounter(counter);
    const int kDraws = 200000;
    int increments = 0;
    for (int i = 0; i < kDraws; ++i)
      increments += clock.DecayedCounter(clock.Accessed(stamp)) > counter;
    const double expected = 1.0 / ((counter - 5) * 10.0 + 1.0);
    const double sigma = std::sqrt(expected * (1 - expected) / kDraws);
    EXPECT_NEAR(static_cast<double>(increments) / kDraws, expected, 5 * sigma + 1e-6) << counter;
  }
  EXPECT_EQ(clock.DecayedCounter(clock.Accessed(clock.StampWithCounter(255))), 255u);
}

}  // namespace
}  // namespace goblin
