// key_table_bench: memory, speed and growth latency of the keyspace table (core/key_table.h)
// on the `string` workload's keys (key:%08d over a seeded random permutation), each entry a
// 32-byte heap allocation [key length][key][value length][16-byte value] as the keyspace's own
// entries are.
//
// Reports:
//   - AllocatedBytes()/N at N = 0.5M, 1M, 1.1M, 2M, next to jemalloc's own count of the bytes
//     the table holds (stats.allocated, measured around the inserts, entries allocated before),
//     and the min/max over a fine sweep from 100K to 2M;
//   - ns per Insert / Find hit / Find miss / Erase at 1M, and entries read per Find (tag misses);
//   - the slowest single Insert while growing to 10M, and the slowest single Erase while
//     deleting 9.9M of them, with bytes/key along the way.
//
// Build (jemalloc, as the server links it), in one line:
//   g++ -std=c++20 -O2 -DNDEBUG -Wall -Wextra -Isrc src/core/hash.cc bench/key_table_bench.cc
//       -lxxhash -ljemalloc -o /tmp/key_table_bench
// Run: /tmp/key_table_bench [memory|speed|latency|all] [latency N, default 10000000] [runs, 3]

#include <jemalloc/jemalloc.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_table.h"

namespace {

// Entry bytes: [key length][key][value length][value], in one 32-byte allocation.
struct Entry {
  uint8_t bytes[32];
};

struct KeyOfEntry {
  std::string_view operator()(const Entry* e) const {
    return std::string_view(reinterpret_cast<const char*>(e->bytes + 1), e->bytes[0]);
  }
};

// The same, counting how many entries lookups read (to measure how well tags filter).
uint64_t g_entry_reads = 0;
struct CountingKeyOf {
  std::string_view operator()(const Entry* e) const {
    ++g_entry_reads;
    return KeyOfEntry{}(e);
  }
};

using Table = goblin::KeyTable<Entry, KeyOfEntry>;
using CountingTable = goblin::KeyTable<Entry, CountingKeyOf>;

std::string KeyFor(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key:%08" PRIu64, n);
  return buf;
}

Entry* MakeEntry(uint64_t n) {
  auto* e = static_cast<Entry*>(std::malloc(sizeof(Entry)));
  std::string key = KeyFor(n);
  e->bytes[0] = static_cast<uint8_t>(key.size());
  std::memcpy(e->bytes + 1, key.data(), key.size());
  e->bytes[1 + key.size()] = 16;
  std::memset(e->bytes + 2 + key.size(), 'v', 32 - 2 - key.size());
  return e;
}

std::vector<uint64_t> Permutation(uint64_t n, uint64_t seed) {
  std::vector<uint64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  return order;
}

size_t JemallocAllocated() {
  uint64_t epoch = 1;
  size_t sz = sizeof(epoch);
  mallctl("thread.tcache.flush", nullptr, nullptr, nullptr, 0);
  mallctl("epoch", &epoch, &sz, &epoch, sz);
  size_t allocated = 0;
  sz = sizeof(allocated);
  mallctl("stats.allocated", &allocated, &sz, nullptr, 0);
  return allocated;
}

// CPU time of this thread: the machine this runs on is shared, and wall time would charge the
// table for the moments another process had the core.
double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

template <class T>
void FreeAll(T* table) {
  table->Clear([](Entry* e) { std::free(e); });
}

void MemorySweep() {
  std::printf("== bytes per key (table only; entries not counted)\n");
  std::printf("%10s %14s %16s\n", "N", "Allocated/N", "jemalloc delta/N");
  for (uint64_t n : {500000ull, 1000000ull, 1100000ull, 2000000ull}) {
    std::vector<uint64_t> order = Permutation(n, 1);
    std::vector<Entry*> entries(n);
    for (uint64_t i = 0; i < n; ++i) entries[i] = MakeEntry(order[i]);
    size_t before = JemallocAllocated();
    Table table;
    for (Entry* e : entries) table.Insert(e);
    size_t after = JemallocAllocated();
    std::printf("%10" PRIu64 " %14.2f %16.2f\n", n, static_cast<double>(table.AllocatedBytes()) / n,
                static_cast<double>(after - before) / n);
    FreeAll(&table);
  }
  // Fine sweep: every 10K keys from 100K to 2M, so no step hides between the points above.
  Table table;
  std::vector<uint64_t> order = Permutation(2000000, 2);
  double lo = 1e9, hi = 0, sum = 0;
  int samples = 0;
  for (uint64_t i = 0; i < order.size(); ++i) {
    table.Insert(MakeEntry(order[i]));
    if (i + 1 >= 100000 && (i + 1) % 10000 == 0) {
      double b = static_cast<double>(table.AllocatedBytes()) / table.size();
      lo = std::min(lo, b);
      hi = std::max(hi, b);
      sum += b;
      ++samples;
    }
  }
  std::printf("sweep 100K..2M step 10K: min %.2f  mean %.2f  max %.2f bytes/key\n", lo,
              sum / samples, hi);
  FreeAll(&table);
}

void Speed(uint64_t n) {
  std::printf("== speed at N = %" PRIu64 " (random order, entries on the heap)\n", n);
  std::vector<uint64_t> order = Permutation(n, 3);
  std::vector<Entry*> entries(n);
  for (uint64_t i = 0; i < n; ++i) entries[i] = MakeEntry(order[i]);
  std::vector<std::string> hit_keys(n), miss_keys(n);
  std::vector<uint64_t> probe = Permutation(n, 4);
  for (uint64_t i = 0; i < n; ++i) {
    hit_keys[i] = KeyFor(probe[i]);
    miss_keys[i] = KeyFor(n + probe[i]);
  }
  double best[4] = {1e9, 1e9, 1e9, 1e9};
  for (int round = 0; round < 5; ++round) {
    Table table;
    double t0 = Now();
    for (Entry* e : entries) table.Insert(e);
    double t1 = Now();
    uint64_t found = 0;
    for (const auto& k : hit_keys) found += table.Find(k) != nullptr;
    double t2 = Now();
    for (const auto& k : miss_keys) found += table.Find(k) != nullptr;
    double t3 = Now();
    for (const auto& k : hit_keys) table.Erase(k);
    double t4 = Now();
    if (found != n || !table.empty()) std::printf("WRONG RESULT\n");
    double ns[4] = {(t1 - t0) * 1e9 / n, (t2 - t1) * 1e9 / n, (t3 - t2) * 1e9 / n,
                    (t4 - t3) * 1e9 / n};
    std::printf("round %d: insert %.0f ns  find hit %.0f ns  find miss %.0f ns  erase %.0f ns\n",
                round, ns[0], ns[1], ns[2], ns[3]);
    for (int i = 0; i < 4; ++i) best[i] = std::min(best[i], ns[i]);
  }
  std::printf(
      "best of 5 (thread CPU time): insert %.0f ns  find hit %.0f ns  find miss %.0f ns  "
      "erase %.0f ns\n",
      best[0], best[1], best[2], best[3]);
  // Reference: one dependent read of a random entry, i.e. the cache miss every lookup must pay.
  {
    std::vector<uint64_t> chase = Permutation(n, 7);
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(entries[chase[i]]->bytes + 24, &entries[chase[(i + 1) % n]], 8);
    }
    double t0 = Now();
    Entry* p = entries[chase[0]];
    for (uint64_t i = 0; i < n; ++i) std::memcpy(&p, p->bytes + 24, 8);
    double t1 = Now();
    std::printf("reference: one dependent random entry read %.0f ns (%p)\n", (t1 - t0) * 1e9 / n,
                static_cast<void*>(p));
  }
  CountingTable table;
  for (Entry* e : entries) table.Insert(e);
  g_entry_reads = 0;
  for (const auto& k : hit_keys) table.Find(k);
  double hit_reads = static_cast<double>(g_entry_reads) / n;
  g_entry_reads = 0;
  for (const auto& k : miss_keys) table.Find(k);
  std::printf("entries read per find: hit %.4f  miss %.4f\n", hit_reads,
              static_cast<double>(g_entry_reads) / n);
  FreeAll(&table);
}

void Percentiles(const char* what, std::vector<float>* ns) {
  std::vector<float>& v = *ns;
  auto at = [&](double q) {
    size_t k = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return v[k];
  };
  float p50 = at(0.5), p99 = at(0.99), p999 = at(0.999), p9999 = at(0.9999);
  float max = *std::max_element(v.begin(), v.end());
  size_t over_100us = std::count_if(v.begin(), v.end(), [](float x) { return x > 100000; });
  std::printf(
      "  %-12s p50 %.0f ns  p99 %.0f ns  p99.9 %.0f ns  p99.99 %.1f us  max %.1f us  "
      "(>100us: %zu)\n",
      what, p50, p99, p999, p9999 / 1000, max / 1000, over_100us);
}

// Per-operation latency on a shared machine: another process or the hypervisor can stall any
// single operation for milliseconds. The workload is deterministic, so it runs `runs` times and
// keeps each operation's fastest time: a stall hits the same operation in every run only if
// the table itself is slow there.
class OpTimes {
 public:
  explicit OpTimes(size_t n) : ns_(n, 1e30f), bytes_(n) {}
  template <class F>
  void Time(size_t i, const Table& table, F&& op) {
    int64_t bytes = static_cast<int64_t>(table.AllocatedBytes());
    timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    op();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    float ns = static_cast<float>((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec));
    ns_[i] = std::min(ns_[i], ns);
    bytes_[i] = static_cast<int64_t>(table.AllocatedBytes()) - bytes;
  }
  void Report(const char* what) {
    std::vector<size_t> order(ns_.size());
    std::iota(order.begin(), order.end(), 0);
    size_t k = std::min<size_t>(6, order.size());
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](size_t a, size_t b) { return ns_[a] > ns_[b]; });
    std::printf("%s, slowest (op number: us, table bytes change): ", what);
    for (size_t j = 0; j < k; ++j) {
      std::printf("%zu: %.0f, %+" PRId64 "  ", order[j], ns_[order[j]] / 1000, bytes_[order[j]]);
    }
    std::printf("\n");
    // The directory doubles or halves where the table's bytes jump by more than a segment.
    float dir_worst = 0;
    size_t dir_ops = 0;
    for (size_t i = 0; i < ns_.size(); ++i) {
      if (std::abs(bytes_[i]) > 64 * 1024) dir_worst = std::max(dir_worst, ns_[i]), ++dir_ops;
    }
    std::printf("  directory resizes (bytes change > 64 KB): %zu, slowest %.0f us\n", dir_ops,
                dir_worst / 1000);
    std::vector<float> sorted = ns_;
    Percentiles("", &sorted);
  }

 private:
  std::vector<float> ns_;
  std::vector<int64_t> bytes_;
};

void Latency(uint64_t n, int runs) {
  std::printf("== single-operation latency, growing to %" PRIu64
              " and erasing 99%%, fastest of %d "
              "runs per operation\n",
              n, runs);
  std::vector<uint64_t> order = Permutation(n, 5);
  std::vector<Entry*> entries(n);
  for (uint64_t i = 0; i < n; ++i) entries[i] = MakeEntry(order[i]);
  std::vector<uint64_t> erase_order = Permutation(n, 6);
  std::vector<std::string> keys(n);
  for (uint64_t i = 0; i < n; ++i) keys[i] = KeyFor(erase_order[i]);
  const uint64_t keep = n / 100;
  OpTimes inserts(n), erases(n - keep);
  for (int run = 0; run < runs; ++run) {
    Table table;
    for (uint64_t i = 0; i < n; ++i) inserts.Time(i, table, [&] { table.Insert(entries[i]); });
    if (run == 0) {
      std::printf("bytes/key at %" PRIu64 ": %.2f\n", n,
                  static_cast<double>(table.AllocatedBytes()) / n);
    }
    for (uint64_t i = 0; i < n - keep; ++i) {
      erases.Time(i, table, [&] { table.Erase(keys[i]); });
      if (run == 0 && (i + 1) % (n / 4) == 0) {
        std::printf("  after erasing %" PRIu64 ": %zu keys, %.2f bytes/key\n", i + 1, table.size(),
                    static_cast<double>(table.AllocatedBytes()) / table.size());
      }
    }
    if (run == 0) {
      std::printf("after erasing 99%%: %zu keys, %.2f bytes/key, %zu bytes\n", table.size(),
                  static_cast<double>(table.AllocatedBytes()) / table.size(),
                  table.AllocatedBytes());
    }
    table.Clear([](Entry*) {});  // The entries are reused by the next run.
  }
  inserts.Report("insert");
  erases.Report("erase");
  for (Entry* e : entries) std::free(e);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "all";
  uint64_t latency_n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10000000;
  int runs = argc > 3 ? std::atoi(argv[3]) : 3;
  if (mode == "memory" || mode == "all") MemorySweep();
  if (mode == "speed" || mode == "all") Speed(1000000);
  if (mode == "latency" || mode == "all") Latency(latency_n, runs);
  return 0;
}
