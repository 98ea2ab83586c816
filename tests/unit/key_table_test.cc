#include "core/key_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace goblin {
namespace {

struct TestEntry {
  std::string key;
  uint64_t value;
};

struct TestKeyOf {
  std::string_view operator()(const TestEntry* e) const { return e->key; }
};

using Table = KeyTable<TestEntry, TestKeyOf>;
// Slots carrying a 3-byte stamp, as the keyspace's: fewer slots per bucket, same behaviour.
using StampedTable = KeyTable<TestEntry, TestKeyOf, 3>;

// Keys of varied lengths, some with NUL and high bytes, so the table is tested on binary keys.
std::string KeyFor(uint64_t n) {
  std::string key = "key:" + std::to_string(n);
  if (n % 7 == 0) key += std::string("\0\xff", 2);
  if (n % 11 == 0) key.append(n % 40, 'x');
  return key;
}

template <class T>
void DeleteAll(T* table) {
  table->Clear([](TestEntry* e) { delete e; });
}

// Scans the whole table from cursor 0; returns how often each entry was reported.
std::unordered_map<const TestEntry*, int> ScanAll(const Table& table, size_t* calls = nullptr) {
  std::unordered_map<const TestEntry*, int> seen;
  uint64_t cursor = 0;
  size_t n = 0;
  do {
    cursor = table.Scan(cursor, [&](TestEntry* e) { ++seen[e]; });
    ++n;
  } while (cursor != 0);
  if (calls != nullptr) *calls = n;
  return seen;
}

TEST(KeyTableTest, EmptyTable) {
  Table table;
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.Find("a"), nullptr);
  EXPECT_FALSE(table.FindSlot("a"));
  EXPECT_EQ(table.Erase("a"), nullptr);
  EXPECT_EQ(table.Random(12345), nullptr);
  EXPECT_EQ(table.AllocatedBytes(), 0u);
  int calls = 0;
  EXPECT_EQ(table.Scan(0, [&](TestEntry*) { ++calls; }), 0u);
  table.ForEach([&](TestEntry*) { ++calls; });
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(table.Validate(), "");
}

TEST(KeyTableTest, SingleEntry) {
  Table table;
  auto* e = new TestEntry{"only", 1};
  table.Insert(e);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.Find("only"), e);
  EXPECT_EQ(table.Find("other"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  // Enough calls that some miss the one occupied slot of nine 64 times and take the fallback.
  for (uint64_t bits = 0; bits < 20000; ++bits) ASSERT_EQ(table.Random(bits), e);
  size_t calls = 0;
  auto seen = ScanAll(table, &calls);
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[e], 1);
  EXPECT_EQ(calls, 1u);  // One segment of one bucket: a single call covers the hash space.
  EXPECT_EQ(table.Validate(), "");
  EXPECT_EQ(table.Erase("only"), e);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.Scan(0, [](TestEntry*) { FAIL(); }), 0u);
  EXPECT_EQ(table.Random(7), nullptr);
  delete e;
}

TEST(KeyTableTest, EmptyAndBinaryKeys) {
  Table table;
  std::vector<std::string> keys = {"", std::string("\0", 1), std::string("\0\0", 2), "\xff",
                                   std::string(300, 'k')};
  for (const auto& k : keys) table.Insert(new TestEntry{k, 0});
  for (const auto& k : keys) {
    ASSERT_NE(table.Find(k), nullptr);
    EXPECT_EQ(table.Find(k)->key, k);
  }
  EXPECT_EQ(table.Find(std::string("\0\0\0", 3)), nullptr);
  EXPECT_EQ(table.Validate(), "");
  DeleteAll(&table);
}

TEST(KeyTableTest, FindSlotReplacesInPlace) {
  Table table;
  for (uint64_t i = 0; i < 1000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  for (uint64_t i = 0; i < 1000; i += 3) {
    Table::Slot slot = table.FindSlot(KeyFor(i));
    ASSERT_TRUE(slot);
    TestEntry* old = slot.entry();
    EXPECT_EQ(old->value, i);
    slot.Replace(new TestEntry{old->key, i + 1000000});
    delete old;
  }
  for (uint64_t i = 0; i < 1000; ++i) {
    TestEntry* e = table.Find(KeyFor(i));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value, i % 3 == 0 ? i + 1000000 : i);
  }
  EXPECT_FALSE(table.FindSlot("absent"));
  EXPECT_EQ(table.Validate(), "");
  DeleteAll(&table);
}

// The model test: a seeded random mix of inserts, erases, finds and slot replacements, applied
// to the table and to std::unordered_map, through phases that grow the table to each target size
// in turn (past many segment splits and directory doublings) and shrink it back (through merges
// and directory halvings). Cheap checks after every operation, a full comparison every 100K
// operations and at every phase change. Returns the number of operations. With kStampMask, the
// table's slots carry stamps: every insert and some replacements set a random one, and each
// must still be found beside its entry after every rebuild, split and merge.
template <class T, uint32_t kStampMask = 0>
size_t RunModel(uint64_t seed, bool stall_directory, const std::vector<size_t>& targets) {
  std::mt19937_64 rng(seed);
  T table;
  if (stall_directory) table.SetDirectoryResizeForTesting(0, 0, 0);
  std::unordered_map<std::string, TestEntry*> model;
  std::unordered_map<std::string, uint32_t> stamps;
  std::vector<std::string> present;  // The model's keys, for picking a random present one.
  std::unordered_map<std::string, size_t> position;
  uint64_t next_key = 0;

  auto add_present = [&](const std::string& k) {
    position[k] = present.size();
    present.push_back(k);
  };
  auto remove_present = [&](const std::string& k) {
    size_t at = position[k];
    position[present.back()] = at;
    std::swap(present[at], present.back());
    present.pop_back();
    position.erase(k);
  };
  auto full_check = [&]() {
    ASSERT_EQ(table.Validate(), "");
    size_t count = 0;
    table.ForEach([&](TestEntry* e) {
      ++count;
      auto it = model.find(e->key);
      ASSERT_NE(it, model.end());
      ASSERT_EQ(it->second, e);
    });
    ASSERT_EQ(count, model.size());
    for (const auto& [k, e] : model) ASSERT_EQ(table.Find(k), e);
    if constexpr (kStampMask != 0) {
      for (const auto& [k, stamp] : stamps) ASSERT_EQ(table.FindSlot(k).stamp(), stamp) << k;
    }
  };

  size_t phase = 0;
  size_t ops = 0;
  size_t max_bytes = 0;
  const size_t kMaxOps = 5000000;
  while (ops < kMaxOps && phase < targets.size()) {
    const bool growing = phase == 0 || targets[phase] > targets[phase - 1];
    const uint32_t r = static_cast<uint32_t>(rng() % 100);
    // Growing: 50% insert, 15% erase; shrinking: 15% insert, 50% erase; the rest half finds,
    // half slot replacements.
    const uint32_t insert_pct = growing ? 50 : 15;
    const uint32_t erase_pct = growing ? 15 : 50;
    ++ops;
    if (r < insert_pct) {
      std::string k = KeyFor(next_key++);
      auto* e = new TestEntry{k, rng()};
      if constexpr (kStampMask != 0) {
        stamps[k] = static_cast<uint32_t>(rng()) & kStampMask;
        table.Insert(e, stamps[k]);
      } else {
        table.Insert(e);
      }
      model[k] = e;
      add_present(k);
    } else if (r < insert_pct + erase_pct) {
      // Mostly present keys, sometimes absent ones.
      std::string k;
      if (!present.empty() && rng() % 8 != 0) {
        k = present[rng() % present.size()];
      } else {
        k = KeyFor(next_key + rng() % 1000);
      }
      TestEntry* got = table.Erase(k);
      auto it = model.find(k);
      if (it == model.end()) {
        EXPECT_EQ(got, nullptr) << "erased absent key " << k;
        if (got != nullptr) return ops;
      } else {
        EXPECT_EQ(got, it->second);
        if (got != it->second) return ops;
        delete got;
        model.erase(it);
        stamps.erase(k);
        remove_present(k);
      }
    } else if (r < insert_pct + erase_pct + (100 - insert_pct - erase_pct) / 2) {
      std::string k = (!present.empty() && rng() % 2 == 0) ? present[rng() % present.size()]
                                                           : KeyFor(rng() % (next_key + 100));
      auto it = model.find(k);
      EXPECT_EQ(table.Find(k), it == model.end() ? nullptr : it->second) << k;
      if (::testing::Test::HasFailure()) return ops;
    } else if (!present.empty()) {
      const std::string& k = present[rng() % present.size()];
      typename T::Slot slot = table.FindSlot(k);
      EXPECT_TRUE(slot && slot.entry() == model[k]) << k;
      if (::testing::Test::HasFailure()) return ops;
      auto* e = new TestEntry{k, rng()};
      slot.Replace(e);
      if constexpr (kStampMask != 0) {
        EXPECT_EQ(slot.stamp(), stamps[k]) << k;  // a replaced entry keeps its stamp
        if (rng() % 2 == 0) {
          stamps[k] = static_cast<uint32_t>(rng()) & kStampMask;
          slot.set_stamp(stamps[k]);
        }
      }
      delete model[k];
      model[k] = e;
      EXPECT_EQ(table.Find(k), e);
    }
    EXPECT_EQ(table.size(), model.size());
    if (::testing::Test::HasFailure()) return ops;
    max_bytes = std::max(max_bytes, table.AllocatedBytes());
    if (ops % 100000 == 0) full_check();
    if (growing ? model.size() >= targets[phase] : model.size() <= targets[phase]) {
      full_check();
      ++phase;
    }
    if (::testing::Test::HasFailure()) return ops;
  }
  EXPECT_EQ(phase, targets.size()) << "ran out of operations before the last phase";
  size_t largest = *std::max_element(targets.begin(), targets.end());
  EXPECT_GT(max_bytes, largest * 7);  // It did reach the largest target.
  full_check();
  DeleteAll(&table);
  EXPECT_EQ(table.AllocatedBytes(), 0u);
  return ops;
}

TEST(KeyTableTest, RandomizedAgainstUnorderedMap) {
  size_t ops = RunModel<Table>(20240611, false, {40000, 2000, 100000, 100, 50000, 0, 20000});
  EXPECT_GE(ops, 1000000u);
  RecordProperty("operations", static_cast<int>(ops));
}

// The same with directory resizes that never advance on their own: lookups keep reading the old
// array, writes fill chunks on demand, and segments that must split wait by growing in place.
TEST(KeyTableTest, RandomizedWithStalledDirectoryResizes) {
  size_t ops = RunModel<Table>(77, true, {60000, 500, 30000, 0});
  EXPECT_GE(ops, 300000u);
  RecordProperty("operations", static_cast<int>(ops));
}

TEST(KeyTableTest, StampsTravelWithTheirEntries) {
  size_t ops = RunModel<StampedTable, 0xffffff>(9001, false, {30000, 1000, 60000, 0, 5000});
  EXPECT_GE(ops, 200000u);
  ops = RunModel<StampedTable, 0xffffff>(4242, true, {20000, 300, 10000, 0});
  EXPECT_GE(ops, 100000u);
}

// Sample: n distinct present entries (all of them when fewer), and over many calls every entry.
TEST(KeyTableTest, SampleGivesDistinctPresentEntriesAndReachesAll) {
  for (uint64_t n_keys : {1u, 7u, 3000u}) {
    SCOPED_TRACE(n_keys);
    StampedTable table;
    for (uint64_t i = 0; i < n_keys; ++i) table.Insert(new TestEntry{KeyFor(i), i}, i);
    std::unordered_set<const TestEntry*> reached;
    std::mt19937_64 rng(n_keys);
    // A key is missed by one call with probability ~(1 - 5/3000): 20000 calls leave none.
    for (int call = 0; call < 20000; ++call) {
      std::unordered_set<const TestEntry*> seen;
      table.Sample(rng(), 5, [&](StampedTable::Slot slot) {
        ASSERT_EQ(table.Find(slot.entry()->key), slot.entry());
        ASSERT_EQ(slot.stamp(), slot.entry()->value);
        EXPECT_TRUE(seen.insert(slot.entry()).second) << "sampled twice in one call";
      });
      ASSERT_EQ(seen.size(), std::min<size_t>(5, n_keys));
      reached.insert(seen.begin(), seen.end());
    }
    EXPECT_EQ(reached.size(), n_keys);
    DeleteAll(&table);
  }
}

TEST(KeyTableTest, StampedTableCostsAboutElevenAndAHalfBytesPerKey) {
  StampedTable table;
  for (uint64_t i = 0; i < 200000; ++i) table.Insert(new TestEntry{KeyFor(i), i}, i & 0xffffff);
  const double per_key = static_cast<double>(table.AllocatedBytes()) / table.size();
  EXPECT_GT(per_key, 10.5);
  EXPECT_LT(per_key, 12.8);
  for (uint64_t i = 0; i < 200000; i += 997) {
    ASSERT_EQ(table.FindSlot(KeyFor(i)).stamp(), i & 0xffffff);
  }
  EXPECT_EQ(table.Validate(), "");
  DeleteAll(&table);
}

TEST(KeyTableTest, ScanWithoutChangesReportsEachEntryOnce) {
  Table table;
  for (uint64_t i = 0; i < 50000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  size_t calls = 0;
  auto seen = ScanAll(table, &calls);
  EXPECT_EQ(seen.size(), table.size());
  for (const auto& [e, n] : seen) EXPECT_EQ(n, 1) << e->key;
  // One call per home bucket: about one call per 8 entries.
  EXPECT_GT(calls, table.size() / 12);
  EXPECT_LT(calls, table.size() / 5);
  // Every call visits a bounded amount.
  uint64_t cursor = 0;
  do {
    size_t n = 0;
    cursor = table.Scan(cursor, [&](TestEntry*) { ++n; });
    EXPECT_LE(n, 40u);
  } while (cursor != 0);
  DeleteAll(&table);
}

// Inserts and erases between Scan calls, enough to split and merge segments and to double and
// halve the directory while the scan runs; every entry present throughout must be reported.
TEST(KeyTableTest, ScanSurvivesGrowthAndShrink) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    Table table;
    // Odd seeds stall directory resizes, so scans also run over half-copied directories.
    if (seed % 2 == 1) table.SetDirectoryResizeForTesting(0, 0, 0);
    std::unordered_set<std::string> live;
    const uint64_t kStable = 5000;
    for (uint64_t i = 0; i < kStable; ++i) {
      table.Insert(new TestEntry{KeyFor(i), 0});
      live.insert(KeyFor(i));
    }
    std::vector<std::string> volatile_keys;
    uint64_t next_key = 1000000 * seed;
    for (int i = 0; i < 15000; ++i) {
      std::string k = KeyFor(next_key++);
      table.Insert(new TestEntry{k, 1});
      live.insert(k);
      volatile_keys.push_back(k);
    }
    std::unordered_set<std::string> reported;
    uint64_t cursor = 0;
    size_t calls = 0;
    do {
      cursor = table.Scan(cursor, [&](TestEntry* e) {
        ASSERT_TRUE(live.count(e->key)) << "reported an entry that is not present";
        // The hash ranges of successive calls are disjoint, so no key comes back.
        ASSERT_TRUE(reported.insert(e->key).second) << "reported twice: " << e->key;
      });
      ++calls;
      // First grow towards ~90K entries, then erase the volatile ones down to a few hundred.
      const bool grow = calls < 1500;
      for (int j = 0; j < 40; ++j) {
        if (grow) {
          std::string k = KeyFor(next_key++);
          table.Insert(new TestEntry{k, 1});
          live.insert(k);
          volatile_keys.push_back(k);
        } else if (!volatile_keys.empty()) {
          size_t at = rng() % volatile_keys.size();
          std::string k = volatile_keys[at];
          volatile_keys[at] = volatile_keys.back();
          volatile_keys.pop_back();
          delete table.Erase(k);
          live.erase(k);
        }
      }
    } while (cursor != 0);
    for (uint64_t i = 0; i < kStable; ++i) {
      EXPECT_TRUE(reported.count(KeyFor(i))) << "missed stable key " << KeyFor(i);
    }
    EXPECT_EQ(table.Validate(), "");
    DeleteAll(&table);
  }
}

// A cursor that lands inside a bucket's hash range (as one from before a merge does) still
// reports only entries at or after it, and the scan still covers the rest.
TEST(KeyTableTest, ScanFromArbitraryCursor) {
  Table table;
  for (uint64_t i = 0; i < 20000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const uint64_t start = rng();
    std::unordered_set<const TestEntry*> seen;
    uint64_t cursor = start;
    do {
      cursor = table.Scan(cursor, [&](TestEntry* e) {
        EXPECT_GE(HashBytes(e->key), start);
        seen.insert(e);
      });
    } while (cursor != 0);
    size_t expected = 0;
    table.ForEach([&](TestEntry* e) { expected += HashBytes(e->key) >= start; });
    EXPECT_EQ(seen.size(), expected);
  }
  DeleteAll(&table);
}

TEST(KeyTableTest, RandomReturnsPresentEntriesAndReachesAll) {
  Table table;
  std::vector<TestEntry*> entries;
  for (uint64_t i = 0; i < 50; ++i) {
    entries.push_back(new TestEntry{KeyFor(i), i});
    table.Insert(entries.back());
  }
  std::mt19937_64 rng(99);
  std::unordered_map<const TestEntry*, int> hits;
  for (int i = 0; i < 20000; ++i) {
    TestEntry* e = table.Random(rng());
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(table.Find(e->key), e);
    ++hits[e];
  }
  EXPECT_EQ(hits.size(), entries.size());
  for (const auto& [e, n] : hits) {
    EXPECT_GT(n, 200) << e->key;  // 400 expected each.
    EXPECT_LT(n, 650) << e->key;
  }
  DeleteAll(&table);
}

TEST(KeyTableTest, RandomIsRoughlyUniformOnALargeTable) {
  Table table;
  for (uint64_t i = 0; i < 3000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  std::mt19937_64 rng(123);
  std::unordered_map<const TestEntry*, int> hits;
  for (int i = 0; i < 600000; ++i) ++hits[table.Random(rng())];
  EXPECT_EQ(hits.size(), 3000u);
  for (const auto& [e, n] : hits) {
    EXPECT_GT(n, 120) << e->key;  // 200 expected each.
    EXPECT_LT(n, 300) << e->key;
  }
  DeleteAll(&table);
}

TEST(KeyTableTest, RandomOnASparseTable) {
  Table table;
  for (uint64_t i = 0; i < 100000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  for (uint64_t i = 0; i < 100000; ++i) {
    if (i % 5000 != 0) delete table.Erase(KeyFor(i));
  }
  ASSERT_EQ(table.size(), 20u);
  std::mt19937_64 rng(3);
  std::unordered_set<const TestEntry*> hits;
  for (int i = 0; i < 5000; ++i) {
    TestEntry* e = table.Random(rng());
    ASSERT_NE(e, nullptr);
    ASSERT_EQ(table.Find(e->key), e);
    hits.insert(e);
  }
  EXPECT_EQ(hits.size(), 20u);
  DeleteAll(&table);
}

TEST(KeyTableTest, ClearFreesEverythingAndTheTableIsReusable) {
  Table table;
  for (uint64_t i = 0; i < 10000; ++i) table.Insert(new TestEntry{KeyFor(i), i});
  size_t deleted = 0;
  table.Clear([&](TestEntry* e) {
    ++deleted;
    delete e;
  });
  EXPECT_EQ(deleted, 10000u);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.AllocatedBytes(), 0u);
  EXPECT_EQ(table.Find(KeyFor(1)), nullptr);
  EXPECT_EQ(table.Scan(0, [](TestEntry*) { FAIL(); }), 0u);
  table.Insert(new TestEntry{"again", 1});
  EXPECT_EQ(table.Find("again")->value, 1u);
  EXPECT_EQ(table.Validate(), "");
  DeleteAll(&table);
}

TEST(KeyTableTest, MoveTransfersOwnership) {
  Table a;
  for (uint64_t i = 0; i < 1000; ++i) a.Insert(new TestEntry{KeyFor(i), i});
  size_t bytes = a.AllocatedBytes();
  Table b(std::move(a));
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_EQ(b.AllocatedBytes(), bytes);
  EXPECT_EQ(b.Find(KeyFor(5))->value, 5u);
  Table c;
  c.Insert(new TestEntry{"c", 0});
  DeleteAll(&c);
  c = std::move(b);
  EXPECT_EQ(c.size(), 1000u);
  EXPECT_EQ(c.Validate(), "");
  DeleteAll(&c);
}

// Keys whose hashes all start with the same 3 bits, inserted while a directory resize cannot
// advance (it only fills entries that are written, and the other 7/8 of the directory is not):
// segments that must split wait, grow in place up to their 64-bucket limit, and then finish
// the resize themselves.
TEST(KeyTableTest, SkewedInsertsDuringAStalledDirectoryResize) {
  Table table;
  table.SetDirectoryResizeForTesting(0, 0, 0);
  uint64_t n = 0;
  for (; table.size() < 2000; ++n) table.Insert(new TestEntry{KeyFor(n), n});
  ASSERT_EQ(table.Validate(), "");
  size_t skewed = 0;
  for (; skewed < 20000; ++n) {
    std::string key = KeyFor(n);
    if ((HashBytes(key) >> 61) != 0) continue;
    table.Insert(new TestEntry{key, n});
    ++skewed;
    if (skewed % 1000 == 0) {
      ASSERT_EQ(table.Validate(), "");
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    TestEntry* e = table.Find(KeyFor(i));
    if (e != nullptr) {
      EXPECT_EQ(e->value, i);
    }
  }
  EXPECT_EQ(table.size(), 22000u);
  DeleteAll(&table);
}

// The memory budget: about 8 bytes per key at every size, not only just before a doubling.
TEST(KeyTableTest, BytesPerKeyStaysLowAtEverySize) {
  Table table;
  double worst = 0;
  for (uint64_t i = 0; i < 300000; ++i) {
    table.Insert(new TestEntry{KeyFor(i), i});
    if (i >= 20000 && i % 1000 == 0) {
      worst = std::max(worst, static_cast<double>(table.AllocatedBytes()) / table.size());
    }
  }
  EXPECT_LT(worst, 8.5);
  // Mass deletion gives the memory back, in steps, while staying near the same bytes per key.
  double worst_shrinking = 0;
  for (uint64_t i = 0; i < 290000; ++i) {
    delete table.Erase(KeyFor(i));
    if (i % 1000 == 0) {
      worst_shrinking =
          std::max(worst_shrinking, static_cast<double>(table.AllocatedBytes()) / table.size());
    }
  }
  EXPECT_LT(worst_shrinking, 10.0);
  EXPECT_LT(table.AllocatedBytes(), 10000u * 10);
  EXPECT_EQ(table.Validate(), "");
  DeleteAll(&table);
}

// A table reserved for its key count holds the same keys as one grown by inserts, costs about
// the same bytes per key, and keeps working (growth past the reservation, erases, merges).
TEST(KeyTableTest, ReservedTableHoldsItsKeysAtTheUsualCost) {
  for (uint64_t n : {0u, 150u, 5000u, 200000u}) {
    SCOPED_TRACE(n);
    Table grown;
    Table reserved;
    reserved.Reserve(n);
    EXPECT_EQ(reserved.Validate(), "");
    for (uint64_t i = 0; i < n; ++i) {
      grown.Insert(new TestEntry{KeyFor(i), i});
      reserved.Insert(new TestEntry{KeyFor(i), i});
    }
    EXPECT_EQ(reserved.Validate(), "");
    ASSERT_EQ(reserved.size(), n);
    for (uint64_t i = 0; i < n; ++i) {
      const TestEntry* e = reserved.Find(KeyFor(i));
      ASSERT_NE(e, nullptr) << i;
      ASSERT_EQ(e->value, i);
    }
    if (n >= 5000) {
      const double grown_bytes = static_cast<double>(grown.AllocatedBytes()) / n;
      const double reserved_bytes = static_cast<double>(reserved.AllocatedBytes()) / n;
      EXPECT_LT(reserved_bytes, grown_bytes * 1.15);
      EXPECT_LT(reserved_bytes, 8.5);
    }
    // Twice the reservation: segments rebuild and split past it as usual.
    for (uint64_t i = n; i < 2 * n + 10; ++i) reserved.Insert(new TestEntry{KeyFor(i), i});
    for (uint64_t i = 0; i < 2 * n + 10; i += 2) delete reserved.Erase(KeyFor(i));
    EXPECT_EQ(reserved.Validate(), "");
    EXPECT_EQ(reserved.size(), n + 5);
    DeleteAll(&grown);
    DeleteAll(&reserved);
  }
}

}  // namespace
}  // namespace goblin
