// hash_set_bench: memory, speed and growth latency of goblin::PackedHash and goblin::PackedSet
// (core/packed_hash.h, core/packed_set.h), without a server.
//
// Reports:
//   memory   bytes per element at N = 0.5M, 1M, 1.1M, 2M, by jemalloc's own count
//            (stats.allocated around the inserts, thread cache flushed, inputs generated
//            before) next to MemoryUsage(), then after Optimize(); plus min/max of
//            MemoryUsage()/N sampled every 50K while one collection grows from 100K to 2M.
//            Workloads (DESIGN.md's standard ones and the online-users pattern):
//              hash          fields field:%010d over a random permutation, 16 random hex digits
//              set           members user:%08d over a random permutation
//              online-hash   1M integer user ids 10000001... -> integer unix times
//              online-set    the integer user ids
//   speed    ns per operation at 1M (thread CPU time, keys in random order): HSET new field,
//            HSET of an existing field, HGET hit and miss, HDEL; SADD new member, SADD of a
//            present member, SISMEMBER hit and miss, SREM; Dump and Restore per element.
//   latency  every single HSET / SADD while one hash / set grows to N (default 10M), fastest
//            of `runs` runs per insert (a stall from another process hits the same insert in
//            every run only if the structure is slow there): percentiles, max, the slowest.
//
// Build (jemalloc, as the server links it), in one line:
//   g++ -std=c++20 -O2 -DNDEBUG -Wall -Wextra -Isrc src/core/hash.cc src/core/string_number.cc
//       src/core/entry_index.cc src/core/entry_pages.cc src/core/paged_table.cc
//       src/core/int_set.cc src/core/packed_hash.cc src/core/packed_set.cc
//       bench/hash_set_bench.cc -lxxhash -ljemalloc -o /tmp/hashset/bench
// Run: /tmp/hashset/bench [memory|speed|latency|all] [latency N, default 10000000] [runs, 3]

#include <jemalloc/jemalloc.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/packed_hash.h"
#include "core/packed_set.h"

namespace goblin {
namespace {

// Bytes the allocator has handed out. The thread cache is flushed first: blocks it holds count
// as allocated, which would add a few hundred KB of noise to every delta.
size_t AllocatedBytes() {
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  uint64_t epoch = 1;
  size_t size = sizeof(epoch);
  mallctl("epoch", &epoch, &size, &epoch, size);
  size_t allocated = 0;
  size = sizeof(allocated);
  mallctl("stats.allocated", &allocated, &size, nullptr, 0);
  return allocated;
}

double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::vector<uint32_t> Permutation(size_t n, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

struct Pairs {
  std::vector<std::string> keys;
  std::vector<std::string> values;  // empty for sets
};

Pairs HashWorkload(size_t n, uint64_t seed) {
  Pairs w;
  std::mt19937_64 rng(seed);
  char buf[32];
  for (uint32_t i : Permutation(n, seed)) {
    std::snprintf(buf, sizeof(buf), "field:%010u", i);
    w.keys.emplace_back(buf);
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(rng()));
    w.values.emplace_back(buf);
  }
  return w;
}

// The keys in `order`, copied so that their bytes lie in access order: timing a lookup should
// count the structure's cache misses, not those of finding the key's own bytes.
std::vector<std::string> InOrder(const std::vector<std::string>& keys,
                                 const std::vector<uint32_t>& order) {
  std::vector<std::string> out;
  out.reserve(order.size());
  for (uint32_t i : order) out.push_back(keys[i]);
  return out;
}

Pairs SetWorkload(size_t n, uint64_t seed) {
  Pairs w;
  char buf[32];
  for (uint32_t i : Permutation(n, seed)) {
    std::snprintf(buf, sizeof(buf), "user:%08u", i);
    w.keys.emplace_back(buf);
  }
  return w;
}

// User ids 10000001.. in arrival order (random), each with the unix time it was last seen.
Pairs OnlineWorkload(size_t n, uint64_t seed, bool with_times) {
  Pairs w;
  std::mt19937_64 rng(seed);
  for (uint32_t i : Permutation(n, seed)) {
    w.keys.push_back(std::to_string(10000001 + uint64_t{i}));
    if (with_times) w.values.push_back(std::to_string(1758000000 + rng() % 86400));
  }
  return w;
}

struct Built {
  double allocator_bytes;  // per element
  double usage_bytes;      // MemoryUsage() per element
  double optimized_bytes;  // MemoryUsage() per element after Optimize()
};

Built BuildHash(const Pairs& w) {
  const HashLimits limits;
  const size_t before = AllocatedBytes();
  auto* h = new PackedHash;
  for (size_t i = 0; i < w.keys.size(); ++i) h->Set(w.keys[i], w.values[i], limits);
  const size_t after = AllocatedBytes();
  const double n = static_cast<double>(w.keys.size());
  Built b{(after - before) / n, h->MemoryUsage() / n, 0};
  h->Optimize();
  b.optimized_bytes = h->MemoryUsage() / n;
  delete h;
  return b;
}

Built BuildSet(const Pairs& w) {
  const SetLimits limits;
  const size_t before = AllocatedBytes();
  auto* s = new PackedSet(w.keys[0], 1, limits);
  for (const std::string& k : w.keys) s->Add(k, limits);
  const size_t after = AllocatedBytes();
  const double n = static_cast<double>(w.keys.size());
  Built b{(after - before) / n, s->MemoryUsage() / n, 0};
  s->Optimize();
  b.optimized_bytes = s->MemoryUsage() / n;
  delete s;
  return b;
}

// MemoryUsage()/N sampled every 10K elements while a collection grows: the largest value below
// and above 500K (fixed costs, such as the 16 partly filled append pages, weigh on small N).
class Sweep {
 public:
  void Sample(size_t n, size_t bytes) {
    if (n < 100000 || n % 10000 != 0) return;
    const double b = static_cast<double>(bytes) / static_cast<double>(n);
    Range& r = n < 500000 ? small_ : large_;
    if (b < r.lo) r.lo = b, r.lo_at = n;
    if (b > r.hi) r.hi = b, r.hi_at = n;
  }
  void Print(const char* what) const {
    std::printf(
        "%-4s sweep, step 10K: 100K..490K min %.2f (at %zu) max %.2f (at %zu); "
        "500K..2M min %.2f (at %zu) max %.2f (at %zu)\n",
        what, small_.lo, small_.lo_at, small_.hi, small_.hi_at, large_.lo, large_.lo_at, large_.hi,
        large_.hi_at);
  }

 private:
  struct Range {
    double lo = 1e9, hi = 0;
    size_t lo_at = 0, hi_at = 0;
  };
  Range small_, large_;
};

void Memory() {
  std::printf(
      "== bytes per element (jemalloc stats.allocated delta / N; MemoryUsage() / N; "
      "after Optimize)\n");
  std::printf("%-12s %9s %10s %10s %10s %10s\n", "workload", "N", "allocator", "usage", "optimized",
              "Redis 7.2");
  const size_t sizes[] = {500000, 1000000, 1100000, 2000000};
  struct Workload {
    const char* name;
    double redis;
    bool is_hash;
    std::function<Pairs(size_t)> make;
  };
  const Workload workloads[] = {
      {"hash", 80.4, true, [](size_t n) { return HashWorkload(n, 1); }},
      {"set", 30.1, false, [](size_t n) { return SetWorkload(n, 2); }},
      {"online-hash", 63, true, [](size_t n) { return OnlineWorkload(n, 3, true); }},
      {"online-set", 48, false, [](size_t n) { return OnlineWorkload(n, 4, false); }},
  };
  for (const Workload& wl : workloads) {
    for (size_t n : sizes) {
      const Pairs w = wl.make(n);
      const Built b = wl.is_hash ? BuildHash(w) : BuildSet(w);
      std::printf("%-12s %9zu %10.2f %10.2f %10.2f %10.1f\n", wl.name, n, b.allocator_bytes,
                  b.usage_bytes, b.optimized_bytes, wl.redis);
    }
  }
  // No step hides between the four sizes: sample while growing.
  {
    const Pairs w = HashWorkload(2000000, 7);
    const HashLimits limits;
    PackedHash h;
    Sweep sweep;
    for (size_t i = 0; i < w.keys.size(); ++i) {
      h.Set(w.keys[i], w.values[i], limits);
      sweep.Sample(i + 1, h.MemoryUsage());
    }
    sweep.Print("hash");
  }
  {
    const Pairs w = SetWorkload(2000000, 8);
    const SetLimits limits;
    PackedSet s(w.keys[0], 1, limits);
    Sweep sweep;
    for (size_t i = 0; i < w.keys.size(); ++i) {
      s.Add(w.keys[i], limits);
      sweep.Sample(i + 1, s.MemoryUsage());
    }
    sweep.Print("set");
  }
}

template <typename F>
void TimeOp(const char* what, size_t n, F&& op) {
  const double t0 = CpuNow();
  for (size_t i = 0; i < n; ++i) op(i);
  std::printf("  %-28s %7.0f ns\n", what, (CpuNow() - t0) * 1e9 / static_cast<double>(n));
}

void Speed() {
  constexpr size_t kN = 1000000;
  std::printf("== ns per operation at %zu elements (thread CPU time, random order)\n", kN);
  {
    const Pairs w = HashWorkload(kN, 11);
    const Pairs misses = HashWorkload(kN, 12);
    const std::vector<std::string> shuffled = InOrder(w.keys, Permutation(kN, 13));
    std::vector<std::string> miss_keys;
    for (const std::string& k : misses.keys) miss_keys.push_back(k + "x");
    const HashLimits limits;
    PackedHash h;
    char scratch[kInt64TextMax];
    size_t found = 0;
    TimeOp("HSET new field", kN, [&](size_t i) { h.Set(w.keys[i], w.values[i], limits); });
    TimeOp("HSET existing field", kN, [&](size_t i) { h.Set(shuffled[i], w.values[i], limits); });
    TimeOp("HGET hit", kN, [&](size_t i) { found += h.Get(shuffled[i], scratch).has_value(); });
    TimeOp("HGET miss", kN, [&](size_t i) { found += h.Get(miss_keys[i], scratch).has_value(); });
    std::string dump;
    const double d0 = CpuNow();
    h.Dump(&dump);
    const double d1 = CpuNow();
    PackedHash back;
    const bool ok = PackedHash::Restore(dump, &back);
    const double d2 = CpuNow();
    std::printf("  %-28s %7.0f ns  (%.1f MB, %s)\n", "hash Dump per field", (d1 - d0) * 1e9 / kN,
                dump.size() / 1e6, ok ? "ok" : "FAILED");
    std::printf("  %-28s %7.0f ns  (%.3f s for 1M)\n", "hash Restore per field",
                (d2 - d1) * 1e9 / kN, d2 - d1);
    TimeOp("HDEL", kN, [&](size_t i) { found += h.Delete(shuffled[i]); });
    if (found != 2 * kN) std::printf("  (unexpected hit count %zu)\n", found);
  }
  {
    const Pairs w = SetWorkload(kN, 21);
    const std::vector<std::string> shuffled = InOrder(w.keys, Permutation(kN, 23));
    std::vector<std::string> miss_keys;
    for (const std::string& k : w.keys) miss_keys.push_back(k + "x");
    const SetLimits limits;
    PackedSet s(w.keys[0], 1, limits);
    size_t found = 0;
    TimeOp("SADD new member", kN, [&](size_t i) { s.Add(w.keys[i], limits); });
    TimeOp("SADD present member", kN, [&](size_t i) { found += !s.Add(shuffled[i], limits); });
    TimeOp("SISMEMBER hit", kN, [&](size_t i) { found += s.Contains(shuffled[i]); });
    TimeOp("SISMEMBER miss", kN, [&](size_t i) { found += s.Contains(miss_keys[i]); });
    std::string dump;
    const double d0 = CpuNow();
    s.Dump(&dump);
    const double d1 = CpuNow();
    PackedSet back;
    const bool ok = PackedSet::Restore(dump, &back);
    const double d2 = CpuNow();
    std::printf("  %-28s %7.0f ns  (%.1f MB, %s)\n", "set Dump per member", (d1 - d0) * 1e9 / kN,
                dump.size() / 1e6, ok ? "ok" : "FAILED");
    std::printf("  %-28s %7.0f ns  (%.3f s for 1M)\n", "set Restore per member",
                (d2 - d1) * 1e9 / kN, d2 - d1);
    TimeOp("SREM", kN, [&](size_t i) { found += s.Remove(shuffled[i]); });
    if (found != 3 * kN) std::printf("  (unexpected hit count %zu)\n", found);
  }
  {
    const Pairs w = OnlineWorkload(kN, 31, true);
    const HashLimits limits;
    PackedHash h;
    TimeOp("online HSET new (int -> int)", kN,
           [&](size_t i) { h.Set(w.keys[i], w.values[i], limits); });
    char scratch[kInt64TextMax];
    size_t found = 0;
    TimeOp("online HGET hit", kN,
           [&](size_t i) { found += h.Get(w.keys[i], scratch).has_value(); });
    if (found != kN) std::printf("  (unexpected hit count %zu)\n", found);
  }
}

void Percentiles(std::vector<float> v) {
  auto at = [&](double q) {
    const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
    std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
    return v[k];
  };
  const float p50 = at(0.5), p99 = at(0.99), p999 = at(0.999), p9999 = at(0.9999);
  const float max = *std::max_element(v.begin(), v.end());
  const size_t over_100us = std::count_if(v.begin(), v.end(), [](float x) { return x > 1e5f; });
  const size_t over_1ms = std::count_if(v.begin(), v.end(), [](float x) { return x > 1e6f; });
  std::printf(
      "  p50 %.0f ns  p99 %.0f ns  p99.9 %.0f ns  p99.99 %.1f us  max %.1f us  "
      "(>100 us: %zu, >1 ms: %zu)\n",
      p50, p99, p999, p9999 / 1000, max / 1000, over_100us, over_1ms);
}

// Times op(i) for i in [0, n) `runs` times over fresh collections, keeping each op's fastest.
void Latency(const char* what, size_t n, int runs, const std::function<void()>& reset,
             const std::function<void(size_t)>& prepare, const std::function<void(size_t)>& op,
             const std::function<size_t()>& bytes) {
  std::vector<float> ns(n, 1e30f);
  for (int run = 0; run < runs; ++run) {
    reset();
    for (size_t i = 0; i < n; ++i) {
      prepare(i);
      timespec t0, t1;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      op(i);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      const float t = static_cast<float>((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec));
      ns[i] = std::min(ns[i], t);
    }
    if (run == 0) {
      std::printf("  %s: %zu elements, %.2f bytes each\n", what, n,
                  static_cast<double>(bytes()) / static_cast<double>(n));
    }
  }
  std::vector<size_t> slowest(n);
  std::iota(slowest.begin(), slowest.end(), 0);
  const size_t k = std::min<size_t>(6, n);
  std::partial_sort(slowest.begin(), slowest.begin() + static_cast<long>(k), slowest.end(),
                    [&](size_t a, size_t b) { return ns[a] > ns[b]; });
  std::printf("  slowest (insert number: us): ");
  for (size_t j = 0; j < k; ++j) std::printf("%zu: %.1f  ", slowest[j], ns[slowest[j]] / 1000);
  std::printf("\n");
  Percentiles(std::move(ns));
}

void Latency(size_t n, int runs) {
  std::printf("== single-insert latency growing one collection to %zu, fastest of %d runs\n", n,
              runs);
  char field[32], value[32];
  {
    const HashLimits limits;
    std::unique_ptr<PackedHash> h;
    std::mt19937_64 rng(41);
    Latency(
        "HSET", n, runs, [&] { h = std::make_unique<PackedHash>(); },
        [&](size_t i) {
          // A bijection of i, so fields are distinct and arrive in no useful order.
          std::snprintf(field, sizeof(field), "field:%010" PRIu64,
                        static_cast<uint64_t>((uint64_t{i} * 0x9E3779B1u) % 10000000000ULL));
          std::snprintf(value, sizeof(value), "%016llx", static_cast<unsigned long long>(rng()));
        },
        [&](size_t) { h->Set(field, value, limits); }, [&] { return h->MemoryUsage(); });
  }
  {
    const SetLimits limits;
    std::unique_ptr<PackedSet> s;
    Latency(
        "SADD", n, runs, [&] { s = std::make_unique<PackedSet>("user:", 1, limits); },
        [&](size_t i) {
          std::snprintf(field, sizeof(field), "user:%08" PRIu64,
                        static_cast<uint64_t>((uint64_t{i} * 0x9E3779B1u) % 100000000ULL));
        },
        [&](size_t) { s->Add(field, limits); }, [&] { return s->MemoryUsage(); });
  }
}

}  // namespace
}  // namespace goblin

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  const size_t latency_n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000000;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  if (mode == "memory" || mode == "all") goblin::Memory();
  if (mode == "speed" || mode == "all") goblin::Speed();
  if (mode == "latency" || mode == "all") goblin::Latency(latency_n, runs);
  return 0;
}
