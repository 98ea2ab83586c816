// LatencyHistogram against a sorted std::vector of the same values: percentiles within the
// stated precision (1/128 of the value) and exactly as Redis's hdr_histogram rounds them, and
// the power-of-two cumulative steps LATENCY HISTOGRAM prints. The fixed cases are values whose
// INFO latencystats and LATENCY HISTOGRAM output was read from redis-server 7.0.
#include "core/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace goblin {
namespace {

using Steps = std::vector<LatencyHistogram::Step>;

uint64_t Clamp(uint64_t v) {
  return std::clamp(v, LatencyHistogram::kLowest, LatencyHistogram::kHighest);
}

// The model's steps, from the definition: the bound 2^k (k = 10 .. 29) covers every value up to
// the end of the counter starting at 2^k, which is 2^(k-7) wide; past 2^29 the last counter,
// ending at 2^30 - 1, closes the walk.
Steps ModelSteps(const std::vector<uint64_t>& sorted) {
  Steps steps;
  uint64_t previous = 0;
  for (int k = 10; k <= 30 && previous < sorted.size(); ++k) {
    const uint64_t upper =
        k < 30 ? (uint64_t{1} << k) + (uint64_t{1} << (k - 7)) - 1 : (uint64_t{1} << 30) - 1;
    const uint64_t count = static_cast<uint64_t>(
        std::upper_bound(sorted.begin(), sorted.end(), upper) - sorted.begin());
    if (count > previous) steps.push_back({upper, count});
    previous = count;
  }
  return steps;
}

void ExpectSteps(const Steps& got, const Steps& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].upper, want[i].upper) << "step " << i;
    EXPECT_EQ(got[i].count, want[i].count) << "step " << i;
  }
}

// Checks one percentile against the model: the exact value at Redis's rank, reported as the
// highest (for 0: the lowest) value of its counter, which lies within 1/128 of it.
void ExpectPercentile(const LatencyHistogram& h, const std::vector<uint64_t>& sorted, double p) {
  int64_t rank = static_cast<int64_t>(p / 100 * static_cast<double>(sorted.size()) + 0.5);
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(sorted.size()));
  const uint64_t exact = sorted[static_cast<size_t>(rank - 1)];
  const uint64_t got = h.ValueAtPercentile(p);
  const uint64_t slack = exact < 256 ? 0 : exact / 128;
  if (p == 0.0) {
    EXPECT_LE(got, exact) << "p" << p;
    EXPECT_GE(got + slack, exact) << "p" << p;
    EXPECT_EQ(got, LatencyHistogram::LowestEquivalent(exact)) << "p" << p;
  } else {
    EXPECT_GE(got, exact) << "p" << p;
    EXPECT_LE(got, exact + slack) << "p" << p;
    EXPECT_EQ(got, LatencyHistogram::HighestEquivalent(exact)) << "p" << p;
  }
}

TEST(LatencyHistogramTest, EmptyHasNoStepsAndZeroPercentiles) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.ValueAtPercentile(50), 0u);
  EXPECT_TRUE(h.PowerOfTwoSteps().empty());
}

TEST(LatencyHistogramTest, ValuesSeenOnRedis) {
  // A 5 us command: LATENCY HISTOGRAM's bucket 8 (8255 ns / 1000), p50=5.023.
  LatencyHistogram five;
  five.Record(5000);
  ExpectSteps(five.PowerOfTwoSteps(), {{8255, 1}});
  EXPECT_EQ(five.ValueAtPercentile(50), 5023u);
  // A 69 us command: p0=68.608 (the counter's lowest value), p10=69.119.
  LatencyHistogram slow;
  slow.Record(69000);
  EXPECT_EQ(slow.ValueAtPercentile(0), 68608u);
  EXPECT_EQ(slow.ValueAtPercentile(10), 69119u);
  // Three 2 us PINGs and a 3 us one: p50=2.007, p100=3.007; buckets 2 and 4.
  LatencyHistogram ping;
  for (uint64_t v : {2000, 2000, 2000, 3000}) ping.Record(v);
  EXPECT_EQ(ping.ValueAtPercentile(0), 2000u);
  EXPECT_EQ(ping.ValueAtPercentile(50), 2007u);
  EXPECT_EQ(ping.ValueAtPercentile(100), 3007u);
  ExpectSteps(ping.PowerOfTwoSteps(), {{2063, 3}, {4127, 4}});
}

TEST(LatencyHistogramTest, ClampsIntoTheTrackedRange) {
  LatencyHistogram h;
  h.Record(0);
  h.Record(5'000'000'000);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1u);
  EXPECT_EQ(h.ValueAtPercentile(100), LatencyHistogram::HighestEquivalent(1'000'000'000));
  // 1 ns falls in the first bucket (1031 ns); a second, past 2^29, in the last counter's.
  ExpectSteps(h.PowerOfTwoSteps(), {{1031, 1}, {(uint64_t{1} << 30) - 1, 2}});
}

TEST(LatencyHistogramTest, EquivalentRangesTileTheValues) {
  // Each value's range contains it, ranges are contiguous, and widths stay within 1/128.
  uint64_t expected_low = 0;
  for (uint64_t v = 0; v < (uint64_t{1} << 30);) {
    const uint64_t low = LatencyHistogram::LowestEquivalent(v);
    const uint64_t high = LatencyHistogram::HighestEquivalent(v);
    ASSERT_EQ(low, expected_low) << v;
    ASSERT_LE(low, v);
    ASSERT_GE(high, v);
    ASSERT_EQ(LatencyHistogram::LowestEquivalent(high), low);
    if (low >= 256) {
      ASSERT_LE(high - low + 1, low / 128) << v;
    }
    expected_low = high + 1;
    v = high + 1;
  }
  EXPECT_EQ(expected_low, uint64_t{1} << 30);
}

TEST(LatencyHistogramTest, RandomizedAgainstSortedVector) {
  const double kPercentiles[] = {0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    LatencyHistogram h;
    std::vector<uint64_t> sorted;
    // Log-uniform over 0 .. 2^31, so every octave is hit and some values need clamping; each
    // seed favours a narrower band too, as one command's calls do.
    std::uniform_real_distribution<double> wide(0, 31);
    const double centre = std::uniform_real_distribution<double>(8, 28)(rng);
    std::normal_distribution<double> narrow(centre, 1.5);
    const int operations = 3000;
    for (int i = 0; i < operations; ++i) {
      const double exponent = rng() % 3 == 0 ? wide(rng) : std::clamp(narrow(rng), 0.0, 31.0);
      const uint64_t value = static_cast<uint64_t>(std::exp2(exponent)) - 1;
      h.Record(value);
      sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), Clamp(value)), Clamp(value));
      ASSERT_EQ(h.count(), sorted.size());
      if (i % 97 != 0 && i != operations - 1) continue;
      for (double p : kPercentiles) ExpectPercentile(h, sorted, p);
      ExpectPercentile(h, sorted, std::uniform_real_distribution<double>(0, 100)(rng));
      ExpectSteps(h.PowerOfTwoSteps(), ModelSteps(sorted));
      if (testing::Test::HasFailure()) FAIL() << "seed " << seed << " after " << i + 1;
    }
  }
}

}  // namespace
}  // namespace goblin
