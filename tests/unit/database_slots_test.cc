// Cluster mode of the keyspace (Database::EnableSlots, keyspace/slot_tables.h): a database of one
// table per hash slot, checked against a std::map model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/key_slot.h"
#include "keyspace/database.h"
#include "server/memory_stats.h"

namespace goblin {
namespace {

constexpr int64_t kNow = 1'000'000;

// Key names: a third share one of a few hash tags (so some slots hold many keys), the rest
// spread over all slots.
std::string KeyName(uint64_t n) {
  if (n % 3 == 0) return "{user" + std::to_string(n % 5) + "}:" + std::to_string(n);
  return "key:" + std::to_string(n);
}

struct ModelValue {
  std::string value;
  bool expired = false;  // stored with a deadline already past
};
using Model = std::map<std::string, ModelValue>;

std::map<int, std::set<std::string>> BySlot(const Model& model) {
  std::map<int, std::set<std::string>> slots;
  for (const auto& [key, value] : model) slots[KeySlot(key)].insert(key);
  return slots;
}

// The whole content, per slot and in total, against the model.
void ExpectSameKeys(const Database& db, const Model& model) {
  ASSERT_EQ(db.size(), model.size());
  std::set<std::string> all;
  db.ForEach([&](const KeyEntry* entry) { all.emplace(entry->key()); });
  std::set<std::string> expected;
  for (const auto& [key, value] : model) expected.insert(key);
  ASSERT_EQ(all, expected);
  size_t stamped = 0;
  db.ForEachWithStamp([&](const KeyEntry*, uint32_t) { ++stamped; });
  ASSERT_EQ(stamped, model.size());
  const auto slots = BySlot(model);
  size_t counted = 0;
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    const size_t n = db.KeysInSlot(slot);
    counted += n;
    auto it = slots.find(slot);
    ASSERT_EQ(n, it == slots.end() ? 0 : it->second.size()) << "slot " << slot;
  }
  ASSERT_EQ(counted, model.size());
  for (const auto& [slot, keys] : slots) {
    std::set<std::string> listed;
    db.ForEachKeyInSlot(slot, keys.size() + 10,
                        [&](const KeyEntry* e) { listed.emplace(e->key()); });
    ASSERT_EQ(listed, keys) << "slot " << slot;
  }
}

// The per-slot figures in keyspace/slot_tables.h assume a one-segment table of 48 bytes.
static_assert(sizeof(SlotTables::Table) <= 48);

TEST(DatabaseSlotsTest, EmptyAndEnable) {
  Database db;
  EXPECT_FALSE(db.slotted());
  EXPECT_EQ(db.KeysInSlot(0), 0u);
  db.EnableSlots();
  EXPECT_TRUE(db.slotted());
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.Random(1), nullptr);
  EXPECT_EQ(db.Scan(0, [](KeyEntry*) { FAIL(); }), 0u);
  db.Sample(3, 5, [](const KeyEntry*, uint32_t) { FAIL(); });
  db.ForEachKeyInSlot(0, 10, [](const KeyEntry*) { FAIL(); });
  EXPECT_EQ(db.Find("missing", kNow), nullptr);
  EXPECT_FALSE(db.Delete("missing"));
  // The empty tables cost only the counts and the page pointers.
  EXPECT_LT(db.TableBytes(), 140'000u);
}

TEST(DatabaseSlotsTest, CountsAndListsOneSlot) {
  Database db;
  db.EnableSlots();
  const int slot = KeySlot("{tag}");
  for (int i = 0; i < 1000; ++i) {
    db.Put("{tag}" + std::to_string(i), EntryValue::String("v"), std::nullopt);
  }
  db.Put("other", EntryValue::String("v"), std::nullopt);
  EXPECT_EQ(db.KeysInSlot(slot), 1000u);
  EXPECT_EQ(db.KeysInSlot(KeySlot("other")), 1u);
  std::set<std::string> listed;
  db.ForEachKeyInSlot(slot, 10, [&](const KeyEntry* e) { listed.emplace(e->key()); });
  EXPECT_EQ(listed.size(), 10u);
  for (const std::string& key : listed) EXPECT_EQ(KeySlot(key), slot);
  // Expired keys are still counted and listed until something deletes them.
  db.Put("{tag}gone", EntryValue::String("v"), kNow - 1);
  EXPECT_EQ(db.KeysInSlot(slot), 1001u);
  size_t all = 0;
  db.ForEachKeyInSlot(slot, 5000, [&](const KeyEntry*) { ++all; });
  EXPECT_EQ(all, 1001u);
  EXPECT_EQ(db.Find("{tag}gone", kNow), nullptr);
  EXPECT_EQ(db.KeysInSlot(slot), 1000u);
  db.Clear();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.KeysInSlot(slot), 0u);
  EXPECT_LT(db.TableBytes(), 140'000u);
}

// Seeded random puts, deletes, lookups, renames and expiries on a slotted database and a
// std::map, compared after every step on the key touched and every few hundred on everything.
TEST(DatabaseSlotsTest, RandomizedModel) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    Database db;
    db.EnableSlots();
    Model model;
    const uint64_t universe = 400 + 1500 * seed;
    for (int step = 0; step < 20000; ++step) {
      const std::string key = KeyName(rng() % universe);
      const int op = static_cast<int>(rng() % 100);
      if (op < 40) {  // SET, now and then with a deadline already past
        const std::string value = std::to_string(rng());
        const bool expired = rng() % 10 == 0;
        db.Put(key, EntryValue::String(value), expired ? std::optional(kNow - 1) : std::nullopt);
        model[key] = {value, expired};
      } else if (op < 55) {
        ASSERT_EQ(db.Delete(key), model.erase(key) == 1);
      } else if (op < 60) {  // SETNX as a loader does it
        const bool added = db.AddNew(key, EntryValue::String("new"), std::nullopt);
        ASSERT_EQ(added, model.count(key) == 0);
        if (added) model[key] = {"new", false};
      } else if (op < 70) {  // RENAME key to another name, maybe in another slot
        const std::string target = KeyName(rng() % universe);
        if (target == key) continue;
        KeyEntry* taken = db.Take(key);
        auto it = model.find(key);
        ASSERT_EQ(taken != nullptr, it != model.end());
        if (taken == nullptr) continue;
        ModelValue value = it->second;
        model.erase(it);
        KeyEntry* moved = KeyEntry::WithKey(taken, target);
        KeyEntry::FreeBlock(taken);
        db.Adopt(moved);
        model[target] = value;
      } else {
        KeyEntry* entry = db.Find(key, kNow);
        auto it = model.find(key);
        if (it == model.end() || it->second.expired) {
          ASSERT_EQ(entry, nullptr);
          if (it != model.end()) model.erase(it);  // lazy expiry deleted it
        } else {
          ASSERT_NE(entry, nullptr);
          char scratch[32];
          ASSERT_EQ(entry->string_value(scratch), it->second.value);
        }
      }
      ASSERT_EQ(db.size(), model.size());
      const int slot = KeySlot(key);
      size_t in_slot = 0;
      for (const auto& [k, v] : model) in_slot += KeySlot(k) == slot;
      ASSERT_EQ(db.KeysInSlot(slot), in_slot);
      if (step % 500 == 0) ExpectSameKeys(db, model);
    }
    ExpectSameKeys(db, model);
    size_t expired = 0;
    for (const auto& [k, v] : model) expired += v.expired;
    ASSERT_EQ(db.expires(), expired);
  }
}

// SCAN from cursor 0 to 0 while keys come and go between calls: every key present for the whole
// scan is reported, nothing reported was absent throughout, and the cursor always moves on.
TEST(DatabaseSlotsTest, ScanCoversKeysPresentThroughout) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed * 31);
    Database db;
    db.EnableSlots();
    std::set<std::string> present;
    const uint64_t universe = 5000 * seed;
    for (uint64_t i = 0; i < universe / 2; ++i) {
      const std::string key = KeyName(rng() % universe);
      db.Put(key, EntryValue::String("v"), std::nullopt);
      present.insert(key);
    }
    std::set<std::string> throughout = present;  // present at the start, never deleted
    std::set<std::string> ever = present;
    std::set<std::string> reported;
    uint64_t cursor = 0;
    size_t calls = 0;
    uint64_t last_slot = 0;
    do {
      cursor = db.Scan(cursor, [&](KeyEntry* e) { reported.emplace(e->key()); });
      ++calls;
      if (cursor != 0) {
        ASSERT_GE(cursor & (kClusterSlots - 1), last_slot);
        last_slot = cursor & (kClusterSlots - 1);
      }
      ASSERT_LT(calls, 10 * universe + kClusterSlots) << "the cursor stopped moving";
      // Changes between calls: many inserts (tables grow and split), some deletes.
      const int changes = static_cast<int>(rng() % 8);
      for (int c = 0; c < changes; ++c) {
        const std::string key = KeyName(rng() % (2 * universe));
        if (rng() % 3 == 0) {
          db.Delete(key);
          present.erase(key);
          throughout.erase(key);
        } else {
          db.Put(key, EntryValue::String("w"), std::nullopt);
          present.insert(key);
          ever.insert(key);
        }
      }
    } while (cursor != 0);
    for (const std::string& key : throughout) ASSERT_TRUE(reported.count(key)) << key;
    for (const std::string& key : reported) ASSERT_TRUE(ever.count(key)) << key;
  }
}

// A hash-tagged slot of many keys next to keys spread over every slot: a random key comes from
// the tagged slot as often as its share of the keys says, and every key comes up.
TEST(DatabaseSlotsTest, RandomIsUniformOverKeys) {
  Database db;
  db.EnableSlots();
  constexpr int kTagged = 3000;
  constexpr int kSpread = 3000;
  for (int i = 0; i < kTagged; ++i)
    db.Put("{hot}" + std::to_string(i), EntryValue::String("v"), {});
  for (int i = 0; i < kSpread; ++i) db.Put("k" + std::to_string(i), EntryValue::String("v"), {});
  const int hot = KeySlot("{hot}");
  std::mt19937_64 rng(42);
  std::unordered_map<const KeyEntry*, int> hits;
  constexpr int kDraws = 600000;
  int from_hot = 0;
  for (int i = 0; i < kDraws; ++i) {
    const KeyEntry* e = db.Random(rng());
    ASSERT_NE(e, nullptr);
    ++hits[e];
    from_hot += KeySlot(e->key()) == hot;
  }
  EXPECT_NEAR(static_cast<double>(from_hot) / kDraws, 0.5, 0.02);
  ASSERT_EQ(hits.size(), static_cast<size_t>(kTagged + kSpread));
  // 100 expected per key; KeyTable::Random is within ~10% of uniform.
  int lowest = kDraws;
  int highest = 0;
  for (const auto& [entry, n] : hits) {
    lowest = std::min(lowest, n);
    highest = std::max(highest, n);
  }
  EXPECT_GT(lowest, 40);
  EXPECT_LT(highest, 200);

  // Eviction's sample: n distinct keys, from the hot slot about half the time.
  int sampled_hot = 0;
  for (int i = 0; i < 20000; ++i) {
    std::set<const KeyEntry*> sample;
    db.Sample(rng(), 5, [&](const KeyEntry* e, uint32_t) { sample.insert(e); });
    ASSERT_EQ(sample.size(), 5u);
    sampled_hot += KeySlot((*sample.begin())->key()) == hot;
  }
  EXPECT_NEAR(sampled_hot / 20000.0, 0.5, 0.03);
}

// A sample larger than one slot's keys continues into the next slots, wrapping around.
TEST(DatabaseSlotsTest, SampleCrossesSlots) {
  Database db;
  db.EnableSlots();
  for (int i = 0; i < 7; ++i) db.Put("s" + std::to_string(i), EntryValue::String("v"), {});
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::set<const KeyEntry*> sample;
    db.Sample(rng(), 5, [&](const KeyEntry* e, uint32_t) { sample.insert(e); });
    ASSERT_EQ(sample.size(), 5u);
    sample.clear();
    db.Sample(rng(), 20, [&](const KeyEntry* e, uint32_t) { sample.insert(e); });
    ASSERT_EQ(sample.size(), 7u);
  }
}

// Active expiry and the eviction hand go round all slots with the slotted cursor.
TEST(DatabaseSlotsTest, ActiveExpireAndEvictionHand) {
  Database db;
  db.EnableSlots();
  for (int i = 0; i < 5000; ++i) {
    const bool expired = i % 2 == 0;
    db.Put(KeyName(i), EntryValue::String("v"), expired ? std::optional(kNow - 1) : std::nullopt);
  }
  ASSERT_EQ(db.expires(), 2500u);
  size_t deleted = 0;
  for (int round = 0; round < 1000 && db.expires() != 0; ++round) {
    deleted += db.ActiveExpire(kNow, 100).deleted;
  }
  EXPECT_EQ(deleted, 2500u);
  EXPECT_EQ(db.expires(), 0u);
  EXPECT_EQ(db.size(), 2500u);

  // The hand visits every key once per turn.
  std::unordered_map<const KeyEntry*, int> visits;
  size_t total = 0;
  while (total < 2500 * 3) {
    total += db.SweepEvictionHand(
        [&](KeyEntry* e) {
          ++visits[e];
          return false;
        },
        64);
  }
  EXPECT_EQ(visits.size(), 2500u);
  for (const auto& [e, n] : visits) EXPECT_GE(n, 2);
}

// Bytes of the key tables per key for 1M string keys spread over all 16384 slots, against one
// table, and what the allocator holds in all (tables and entries; 0 without jemalloc).
TEST(DatabaseSlotsTest, MemoryPerKey) {
  constexpr int kKeys = 1'000'000;
  double table_per_key[2];
  double allocated_per_key[2];
  for (int slotted = 0; slotted < 2; ++slotted) {
    const size_t before = AllocatedBytes();
    {
      Database db;
      if (slotted) db.EnableSlots();
      char key[32];
      for (int i = 0; i < kKeys; ++i) {
        std::snprintf(key, sizeof(key), "key:%08d", i);
        db.Put(key, EntryValue::String("0123456789abcdef"), std::nullopt);
      }
      table_per_key[slotted] = static_cast<double>(db.TableBytes()) / kKeys;
      allocated_per_key[slotted] = static_cast<double>(AllocatedBytes() - before) / kKeys;
      if (slotted) {
        size_t empty = 0;
        for (int s = 0; s < kClusterSlots; ++s) empty += db.KeysInSlot(s) == 0;
        EXPECT_EQ(empty, 0u);
      }
    }
  }
  std::printf("table bytes/key: standalone %.2f, slotted %.2f (+%.2f)\n", table_per_key[0],
              table_per_key[1], table_per_key[1] - table_per_key[0]);
  std::printf("allocated bytes/key: standalone %.2f, slotted %.2f (+%.2f)\n", allocated_per_key[0],
              allocated_per_key[1], allocated_per_key[1] - allocated_per_key[0]);
  EXPECT_LT(table_per_key[1] - table_per_key[0], 1.5);
}

}  // namespace
}  // namespace goblin
