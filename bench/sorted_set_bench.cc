// Bytes per member and nanoseconds per operation of goblin::SortedSet, without a server.
//
//   g++ -std=c++20 -O2 -DNDEBUG -Isrc src/core/hash.cc src/core/zset_*.cc src/core/sorted_set.cc
//       bench/sorted_set_bench.cc -lxxhash -ljemalloc -o /tmp/zset/bench && /tmp/zset/bench
//
// Times are thread CPU time (robust on a shared machine). Memory is measured two ways: the
// allocator's own count of allocated bytes (jemalloc's stats.allocated, before and after building
// the set: everything included) and the set's MemoryUsage(). Workloads:
//   zset     members user:%08d over a random permutation of 0..N-1, scores uniform in [0, 1e6)
//            with 6 decimals (DESIGN.md's standard workload), N = 0.5M, 1M, 1.1M, 2M
//   lichess  10-character names, integer ratings in [400, 4000] (normal around 1500), N = 1M, 2M
// `--lichess-updates N` instead times the Lichess replay's hot path: 2M score updates by
// rating-sized steps in a ratings-style set of N members (thousands of members per score).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sorted_set.h"

#if __has_include(<jemalloc/jemalloc.h>)
#include <jemalloc/jemalloc.h>
#define GOBLIN_BENCH_JEMALLOC 1
#endif

namespace {

size_t AllocatedBytes() {
#ifdef GOBLIN_BENCH_JEMALLOC
  uint64_t epoch = 1;
  size_t size = sizeof(epoch);
  mallctl("epoch", &epoch, &size, &epoch, size);
  size_t allocated = 0;
  size = sizeof(allocated);
  mallctl("stats.allocated", &allocated, &size, nullptr, 0);
  return allocated;
#else
  return 0;
#endif
}

// CPU time of this thread: the machine is shared, and wall time would count the time other
// processes hold the core.
double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Workload {
  std::vector<std::string> members;
  std::vector<double> scores;
};

Workload ZsetWorkload(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Workload w;
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  w.members.reserve(n);
  for (uint32_t i : order) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "user:%08u", i);
    w.members.emplace_back(buf);
    w.scores.push_back(static_cast<double>(rng() % 1000000000000ULL) / 1e6);
  }
  return w;
}

Workload LichessWorkload(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> rating(1500, 350);
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
  Workload w;
  for (size_t i = 0; i < n; ++i) {
    std::string name(10, ' ');
    for (char& c : name) c = kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    w.members.push_back(std::move(name));
    w.scores.push_back(std::clamp(std::round(rating(rng)), 400.0, 4000.0));
  }
  return w;
}

void MemoryRow(const char* name, const Workload& w) {
  const goblin::ZsetLimits limits;
  const size_t n = w.members.size();
  const size_t before = AllocatedBytes();
  auto* z = new goblin::SortedSet();
  const double t0 = Now();
  for (size_t i = 0; i < n; ++i) z->Insert(w.scores[i], w.members[i], limits);
  const double t1 = Now();
  const size_t after = AllocatedBytes();
  const goblin::ZsetStats st = z->Stats();
  const size_t usage = z->MemoryUsage();
  z->Optimize();
  const size_t optimized = AllocatedBytes();
  const goblin::ZsetStats packed = z->Stats();
  std::printf(
      "%-8s N=%8zu  allocator %6.2f B/member  MemoryUsage %6.2f  fill %.3f  index %5.2f B/m  "
      "leaves %zu  height %d  | after Optimize %6.2f (fill %.3f, index %5.2f)  insert %4.0f ns\n",
      name, n, static_cast<double>(after - before) / n, static_cast<double>(usage) / n, st.fill,
      static_cast<double>(st.index_bytes) / n, st.leaves, st.height,
      static_cast<double>(optimized - before) / n, packed.fill,
      static_cast<double>(packed.index_bytes) / n, (t1 - t0) * 1e9 / n);
  std::printf(
      "         breakdown per member: leaves %.2f  inner %.2f  tables %.2f  index %.2f (%zu "
      "segments, %.0f%% of slots used)  object %.2f\n",
      static_cast<double>(st.leaf_bytes) / n, static_cast<double>(st.inner_bytes) / n,
      static_cast<double>(st.table_bytes) / n, static_cast<double>(st.index_bytes) / n,
      st.index_segments, 100.0 * n / st.index_slots,
      static_cast<double>(st.bytes - st.leaf_bytes - st.inner_bytes - st.table_bytes -
                          st.index_bytes) /
          n);
  delete z;
}

template <typename Fn>
double TimeOps(size_t ops, Fn&& fn) {
  const double t0 = Now();
  for (size_t i = 0; i < ops; ++i) fn(i);
  return (Now() - t0) * 1e9 / ops;
}

void SpeedRows() {
  const goblin::ZsetLimits limits;
  const size_t n = 1000000;
  const Workload w = ZsetWorkload(n, 7);
  goblin::SortedSet z;
  const double insert_ns =
      TimeOps(n, [&](size_t i) { z.Insert(w.scores[i], w.members[i], limits); });
  std::mt19937_64 rng(99);
  const size_t ops = 1000000;
  std::vector<uint32_t> pick(ops);
  for (auto& p : pick) p = static_cast<uint32_t>(rng() % n);
  std::vector<double> fresh(ops);
  for (auto& s : fresh) s = static_cast<double>(rng() % 1000000000000ULL) / 1e6;
  volatile double sink = 0;
  const double score_ns =
      TimeOps(ops, [&](size_t i) { sink = sink + *z.Score(w.members[pick[i]]); });
  const double rank_ns = TimeOps(
      ops, [&](size_t i) { sink = sink + static_cast<double>(*z.Rank(w.members[pick[i]])); });
  const double update_ns =
      TimeOps(ops, [&](size_t i) { z.Insert(fresh[i], w.members[pick[i]], limits); });
  const double range_ns = TimeOps(ops, [&](size_t) {
    z.ForEachInRankRange(0, 10, false, [&](double s, std::string_view) { sink = sink + s; });
  });
  const double mid_range_ns = TimeOps(ops, [&](size_t i) {
    const size_t start = pick[i] % (n - 10);
    z.ForEachInRankRange(start, start + 10, false,
                         [&](double s, std::string_view) { sink = sink + s; });
  });
  const double count_ns = TimeOps(ops, [&](size_t i) {
    sink = sink + static_cast<double>(z.ScoreUpperBound(fresh[i] + 1000, false) -
                                      z.ScoreLowerBound(fresh[i], false));
  });
  // Snapshot path: dump in order, then rebuild from the sorted run (full leaves, one-pass index).
  std::vector<std::pair<double, std::string>> dump;
  dump.reserve(n);
  const double dump_start = Now();
  z.ForEachInRankRange(0, z.size(), false,
                       [&](double s, std::string_view m) { dump.emplace_back(s, std::string(m)); });
  const double dump_ms = (Now() - dump_start) * 1e3;
  const double load_start = Now();
  goblin::SortedSet loaded;
  for (const auto& [s, m] : dump) loaded.AppendSorted(s, m, limits);
  loaded.FinishAppends();
  const double load_ms = (Now() - load_start) * 1e3;
  std::printf(
      "snapshot, zset workload N=1M: dump in order %.1f ms, bulk rebuild %.1f ms (%.2f B/member)\n",
      dump_ms, load_ms, static_cast<double>(loaded.MemoryUsage()) / n);

  // Calibration on the same keys and machine: one lookup in a node-based hash table, about
  // what a Redis dict lookup costs (a bucket miss and an entry miss).
  std::unordered_map<std::string, double> reference;
  reference.reserve(n);
  for (size_t i = 0; i < n; ++i) reference.emplace(w.members[i], w.scores[i]);
  const double reference_ns =
      TimeOps(ops, [&](size_t i) { sink = sink + reference.find(w.members[pick[i]])->second; });
  std::printf(
      "speed, zset workload N=1M (ns/op): insert new %.0f  update score %.0f  Score %.0f  Rank "
      "%.0f  range 0..9 %.0f  range r..r+9 %.0f  count by score %.0f  | reference "
      "std::unordered_map find %.0f\n",
      insert_ns, update_ns, score_ns, rank_ns, range_ns, mid_range_ns, count_ns, reference_ns);
}

// The Lichess replay's hot path at full population: score updates of random members by
// rating-sized steps in a set of n members whose integer ratings repeat thousands of times.
void LichessUpdateRow(size_t n) {
  const goblin::ZsetLimits limits;
  const Workload w = LichessWorkload(n, n + 3);
  goblin::SortedSet z;
  const double insert_ns =
      TimeOps(n, [&](size_t i) { z.Insert(w.scores[i], w.members[i], limits); });
  std::mt19937_64 rng(5);
  const size_t ops = 2000000;
  std::vector<uint32_t> pick(ops);
  std::vector<double> fresh(ops);
  for (size_t i = 0; i < ops; ++i) {
    pick[i] = static_cast<uint32_t>(rng() % n);
    const double step = static_cast<double>(rng() % 61) - 30;
    fresh[i] = std::clamp(w.scores[pick[i]] + step, 400.0, 4000.0);
  }
  const double update_ns =
      TimeOps(ops, [&](size_t i) { z.Insert(fresh[i], w.members[pick[i]], limits); });
  std::printf("lichess N=%zu (ns/op): insert new %.0f  update score by +-30 %.0f\n", n,
              insert_ns, update_ns);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (argc > 2 && std::strcmp(argv[1], "--lichess-updates") == 0) {
    LichessUpdateRow(std::strtoull(argv[2], nullptr, 10));
    return 0;
  }
#ifndef GOBLIN_BENCH_JEMALLOC
  std::printf(
      "(built without jemalloc: allocator column is 0; MemoryUsage is malloc_usable_size)\n");
#endif
  for (size_t n : {500000, 1000000, 1100000, 2000000}) {
    if (quick && n != 1000000) continue;
    MemoryRow("zset", ZsetWorkload(n, n));
  }
  for (size_t n : {1000000, 2000000}) {
    if (quick && n != 1000000) continue;
    MemoryRow("lichess", LichessWorkload(n, n + 1));
  }
  SpeedRows();
  return 0;
}
