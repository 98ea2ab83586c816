// latency_histogram_bench: the cost of LatencyHistogram::Record (core/latency_histogram.h), the
// work dispatch adds to every call while latency-tracking is on, without a server.
//
// Reports ns per Record for one repeated value, for values spread over four octaves (300 ns ..
// 5 us, the range of SET and GET calls) and over the whole range, each from a precomputed
// array so that no random number generator is timed; and the time of the queries INFO and
// LATENCY HISTOGRAM make (ValueAtPercentile, PowerOfTwoSteps) on such a histogram.
//
// Build, in one line:
//   g++ -std=c++20 -O2 -DNDEBUG -Wall -Wextra -Isrc src/core/latency_histogram.cc
//       bench/latency_histogram_bench.cc -o /tmp/latency_histogram_bench
// Run: taskset -c 1 /tmp/latency_histogram_bench [records, default 200000000] [runs, 5]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/latency_histogram.h"

namespace {

using Clock = std::chrono::steady_clock;

double NanosSince(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Median ns per Record over runs, recording `records` values cycling through `values`.
double RecordCost(const std::vector<uint64_t>& values, uint64_t records, int runs) {
  std::vector<double> costs;
  uint64_t sink = 0;
  for (int run = 0; run < runs; ++run) {
    goblin::LatencyHistogram histogram;
    const size_t mask = values.size() - 1;  // a power of two
    const auto start = Clock::now();
    for (uint64_t i = 0; i < records; ++i) histogram.Record(values[i & mask]);
    costs.push_back(NanosSince(start) / static_cast<double>(records));
    sink += histogram.count();
  }
  if (sink != records * static_cast<uint64_t>(runs)) std::abort();
  std::sort(costs.begin(), costs.end());
  return costs[costs.size() / 2];
}

std::vector<uint64_t> LogUniform(double low, double high, size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(std::log2(low), std::log2(high));
  std::vector<uint64_t> values(n);
  for (uint64_t& v : values) v = static_cast<uint64_t>(std::exp2(exponent(rng)));
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t records = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  const size_t n = 1 << 16;
  std::printf("records %llu, runs %d (median)\n", static_cast<unsigned long long>(records), runs);
  std::printf("Record, one value (700 ns):        %.2f ns\n",
              RecordCost(std::vector<uint64_t>(n, 700), records, runs));
  const std::vector<uint64_t> calls = LogUniform(300, 5000, n, 1);
  std::printf("Record, 300 ns .. 5 us:            %.2f ns\n", RecordCost(calls, records, runs));
  std::printf("Record, 1 ns .. 1 s:               %.2f ns\n",
              RecordCost(LogUniform(1, 1e9, n, 2), records, runs));

  goblin::LatencyHistogram histogram;
  for (uint64_t v : calls) histogram.Record(v);
  const int queries = 100000;
  uint64_t sink = 0;
  auto start = Clock::now();
  for (int i = 0; i < queries; ++i) sink += histogram.ValueAtPercentile(99.9);
  std::printf("ValueAtPercentile(99.9):           %.0f ns\n", NanosSince(start) / queries);
  start = Clock::now();
  for (int i = 0; i < queries; ++i) sink += histogram.PowerOfTwoSteps().size();
  std::printf("PowerOfTwoSteps:                   %.0f ns\n", NanosSince(start) / queries);
  return sink == 0;
}
