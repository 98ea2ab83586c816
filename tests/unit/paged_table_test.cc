// Tests of goblin::PagedTable alone: seeded randomized model tests against std::unordered_map
// (hashes) and std::unordered_set (sets) through inserts, value rewrites of every size change,
// erases by key and by ref, lookups, SCAN under change, sampling, bulk builds and Optimize;
// plus the cell edges: integers that are and are not canonical text, long strings, keys that
// get a page of their own.

#include "core/paged_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/packed_cell.h"
#include "core/string_number.h"

namespace goblin {
namespace {

// The texts of an entry: its key and, in a hash, its value.
std::pair<std::string, std::string> Texts(const PagedTable& table, const uint8_t* entry) {
  char scratch[kInt64TextMax];
  CellView key;
  const uint8_t* after = DecodeCell(entry, &key);
  std::pair<std::string, std::string> out;
  out.first = std::string(key.Text(scratch));
  if (table.with_values()) {
    CellView value;
    DecodeCell(after, &value);
    out.second = std::string(value.Text(scratch));
  }
  return out;
}

std::unordered_map<std::string, std::string> Contents(const PagedTable& table) {
  std::unordered_map<std::string, std::string> out;
  table.ForEach([&](const uint8_t* entry) {
    auto [key, value] = Texts(table, entry);
    EXPECT_TRUE(out.emplace(key, value).second) << "key listed twice: " << key;
  });
  return out;
}

void Insert(PagedTable* table, const std::string& key, const std::string& value) {
  const CellInput cell = CellInput::Of(value);
  table->Insert(PackedKey::Of(key), table->with_values() ? &cell : nullptr);
}

// The value stored under key, or nullopt.
std::optional<std::string> Lookup(const PagedTable& table, const std::string& key) {
  const std::optional<EntryRef> ref = table.Find(PackedKey::Of(key));
  if (!ref) return std::nullopt;
  auto [found_key, value] = Texts(table, table.EntryAt(*ref));
  EXPECT_EQ(found_key, key);
  return value;
}

TEST(PagedTableTest, CellsKeepTheirExactText) {
  // Canonical integers are stored as integers and non-canonical ones as strings; each reads
  // back as the text that came in, and the two never meet in a lookup.
  PagedTable table(true);
  const std::vector<std::string> keys = {"0",
                                         "-0",
                                         "007",
                                         "+1",
                                         "1",
                                         "106",
                                         "107",
                                         "-1",
                                         "",
                                         " 1",
                                         "1 ",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "9223372036854775808",
                                         std::string(127, 'k'),
                                         std::string(128, 'k'),
                                         std::string(5000, 'K')};
  for (size_t i = 0; i < keys.size(); ++i) Insert(&table, keys[i], "v" + std::to_string(i));
  EXPECT_EQ(table.Validate(), "");
  EXPECT_EQ(table.size(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(Lookup(table, keys[i]), "v" + std::to_string(i)) << keys[i];
  }
  EXPECT_EQ(Lookup(table, "00"), std::nullopt);
  EXPECT_EQ(Lookup(table, "-00"), std::nullopt);
  EXPECT_EQ(Contents(table).size(), keys.size());
}

TEST(PagedTableTest, SetValueOfEverySizeChange) {
  PagedTable table(true);
  for (int i = 0; i < 1000; ++i) Insert(&table, "field" + std::to_string(i), "x");
  // Same size (rewritten in place), larger, smaller, integer, a page of its own and back.
  const std::vector<std::string> values = {
      "y", "longer value", "s", "12345", "-7", std::string(3000, 'o'), "", std::string(200, 'l')};
  for (const std::string& value : values) {
    for (int i = 0; i < 1000; i += 3) {
      const std::string name = "field" + std::to_string(i);  // the key views it
      const PackedKey key = PackedKey::Of(name);
      const std::optional<EntryRef> ref = table.Find(key);
      ASSERT_TRUE(ref);
      table.SetValue(key, *ref, CellInput::Of(value));
    }
    ASSERT_EQ(table.Validate(), "") << value.size();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(Lookup(table, "field" + std::to_string(i)), i % 3 == 0 ? value : "x");
    }
  }
  EXPECT_EQ(table.size(), 1000u);
}

TEST(PagedTableTest, EraseAtRandomRefsEmptiesTheTable) {
  PagedTable table(false);
  std::unordered_set<std::string> model;
  for (int i = 0; i < 3000; ++i) {
    const std::string member = "user:" + std::to_string(i);
    Insert(&table, member, "");
    model.insert(member);
  }
  uint64_t state = 3;
  while (table.size() > 0) {
    const EntryRef ref = table.RandomRef(&state);
    const std::string member = Texts(table, table.EntryAt(ref)).first;
    ASSERT_EQ(model.erase(member), 1u) << member;
    table.EraseAt(ref);
    ASSERT_EQ(table.size(), model.size());
    if (model.size() % 500 == 0) {
      ASSERT_EQ(table.Validate(), "");
    }
  }
  EXPECT_EQ(table.Validate(), "");
  EXPECT_FALSE(table.Erase(PackedKey::Of("user:1")));
}

TEST(PagedTableTest, SampleDistinctDrawsDistinctLiveEntries) {
  PagedTable table(false);
  for (int i = 0; i < 2000; ++i) Insert(&table, std::to_string(i * 7), "");
  uint64_t state = 5;
  // Both methods: draws with repeats dropped (few), one selecting pass (many), and all.
  for (size_t count : {0, 1, 10, 600, 700, 1999, 2000, 5000}) {
    std::vector<EntryRef> out;
    table.SampleDistinct(count, &state, &out);
    ASSERT_EQ(out.size(), std::min<size_t>(count, 2000)) << count;
    std::unordered_set<std::string> members;
    for (EntryRef ref : out) members.insert(Texts(table, table.EntryAt(ref)).first);
    EXPECT_EQ(members.size(), out.size()) << "repeats at count " << count;
  }
  // The selecting pass is shuffled: the first of many samples is not always the first entry.
  std::unordered_set<EntryRef> firsts;
  for (int i = 0; i < 20; ++i) {
    std::vector<EntryRef> out;
    table.SampleDistinct(1500, &state, &out);
    firsts.insert(out[0]);
  }
  EXPECT_GT(firsts.size(), 10u);
}

TEST(PagedTableTest, SampleDistinctIndicesIsAPartialPermutation) {
  uint64_t state = 9;
  for (size_t n : {0, 1, 5, 100}) {
    for (size_t k : {0, 1, 3, 100, 200}) {
      std::vector<uint32_t> out;
      SampleDistinctIndices(n, k, &state, &out);
      ASSERT_EQ(out.size(), std::min(n, k));
      std::unordered_set<uint32_t> distinct(out.begin(), out.end());
      EXPECT_EQ(distinct.size(), out.size());
      for (uint32_t i : out) EXPECT_LT(i, n);
    }
  }
}

TEST(PagedTableTest, BulkBuildAndDistinctnessCheck) {
  PagedTable source(true);
  for (int i = 0; i < 5000; ++i) {
    Insert(&source, "f" + std::to_string(i), std::to_string(i % 300));
  }
  std::vector<std::string> encoded;
  source.ForEach([&](const uint8_t* entry) {
    encoded.emplace_back(reinterpret_cast<const char*>(entry), source.EntrySize(entry));
  });
  auto build = [&](bool duplicate) {
    auto table = std::make_unique<PagedTable>(true);
    for (const std::string& e : encoded) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(e.data());
      table->AppendUnindexed(bytes, e.size(), PagedTable::HashOfEntry(bytes));
    }
    if (duplicate) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(encoded[1234].data());
      table->AppendUnindexed(bytes, encoded[1234].size(), PagedTable::HashOfEntry(bytes));
    }
    return table;
  };
  auto good = build(false);
  EXPECT_EQ(good->size(), 5000u);
  EXPECT_TRUE(good->PendingKeysDistinct());
  EXPECT_EQ(good->Validate(), "bulk build not finished");
  good->BuildIndex();
  EXPECT_EQ(good->Validate(), "");
  EXPECT_EQ(Contents(*good), Contents(source));
  Insert(good.get(), "new", "value");
  EXPECT_EQ(Lookup(*good, "new"), "value");
  EXPECT_EQ(good->Validate(), "");

  auto bad = build(true);
  EXPECT_FALSE(bad->PendingKeysDistinct());
}

TEST(PagedTableTest, OptimizeKeepsTheContentsAndSaves) {
  auto table = std::make_unique<PagedTable>(true);
  std::mt19937_64 rng(21);
  for (int i = 0; i < 20000; ++i) Insert(table.get(), "field:" + std::to_string(i), "value");
  // Holes everywhere (below the compaction threshold) and slack in the index.
  for (int i = 0; i < 20000; ++i) {
    if (rng() % 4 == 0) table->Erase(PackedKey::Of("field:" + std::to_string(i)));
  }
  const auto before = Contents(*table);
  const size_t bytes_before = table->MemoryUsage();
  const size_t saved = PagedTable::Optimize(&table);
  EXPECT_GT(saved, 0u);
  EXPECT_EQ(table->MemoryUsage(), bytes_before - saved);
  EXPECT_EQ(table->Validate(), "");
  EXPECT_EQ(Contents(*table), before);
  // A second pass finds nothing to save and keeps the same table.
  const PagedTable* same = table.get();
  EXPECT_EQ(PagedTable::Optimize(&table), 0u);
  EXPECT_EQ(table.get(), same);
}

TEST(PagedTableTest, StatsAddUp) {
  PagedTable table(false);
  // Enough members that the 16 partly filled append pages weigh little.
  for (int i = 0; i < 100000; ++i) Insert(&table, "user:" + std::to_string(10000000 + i), "");
  PackedStats stats;
  table.FillStats(&stats);
  EXPECT_STREQ(stats.layout, "paged-table");
  EXPECT_EQ(stats.size, 100000u);
  EXPECT_EQ(stats.bytes, table.MemoryUsage());
  EXPECT_EQ(stats.payload_bytes, 100000u * 14);
  EXPECT_LE(stats.payload_bytes, stats.capacity_bytes);
  EXPECT_GT(stats.fill, 0.9);
  EXPECT_EQ(stats.bytes, sizeof(PagedTable) + stats.page_bytes + stats.index_bytes);
}

// One seeded run against std::unordered_map (values ignored for sets).
void RunModel(uint64_t seed, bool with_values, int steps) {
  SCOPED_TRACE("seed=" + std::to_string(seed) + (with_values ? " hash" : " set"));
  std::mt19937_64 rng(seed);
  PagedTable table(with_values);
  std::unordered_map<std::string, std::string> model;
  std::vector<std::string> keys;  // every key ever used, to pick present and absent ones
  auto text = [&]() -> std::string {
    switch (rng() % 10) {
      case 0:
        return std::to_string(static_cast<int64_t>(rng() % 300) - 100);
      case 1:
        return std::to_string(static_cast<int64_t>(rng()));
      case 2:
        return "0" + std::to_string(rng() % 100);  // integer-looking strings
      case 3:
        return std::string(rng() % 2 ? 130 : 2100 + rng() % 100,
                           static_cast<char>('a' + rng() % 26));
      default:
        return "k:" + std::to_string(rng() % 20000);
    }
  };
  auto pick_key = [&]() -> std::string {
    if (keys.empty() || rng() % 3 == 0) {
      keys.push_back(text());
      return keys.back();
    }
    return keys[rng() % keys.size()];
  };
  int grow_percent = 60;
  for (int step = 0; step < steps; ++step) {
    if (step % 4000 == 0) grow_percent = grow_percent == 60 ? 25 : 60;
    const std::string key = pick_key();
    const PackedKey packed = PackedKey::Of(key);
    const auto it = model.find(key);
    const unsigned op = static_cast<unsigned>(rng() % 100);
    if (op < static_cast<unsigned>(grow_percent)) {
      // HSET / SADD: insert when absent, else rewrite the value.
      const std::string value = with_values ? text() : "";
      const CellInput cell = CellInput::Of(value);
      const std::optional<EntryRef> ref = table.Find(packed);
      ASSERT_EQ(ref.has_value(), it != model.end()) << key;
      if (!ref) {
        table.Insert(packed, with_values ? &cell : nullptr);
      } else if (with_values) {
        table.SetValue(packed, *ref, cell);
      }
      model[key] = value;
    } else if (op < 90) {
      ASSERT_EQ(table.Erase(packed), it != model.end()) << key;
      if (it != model.end()) model.erase(it);
    } else if (!model.empty()) {
      uint64_t state = rng();
      const EntryRef ref = table.RandomRef(&state);
      const std::string victim = Texts(table, table.EntryAt(ref)).first;
      ASSERT_EQ(model.erase(victim), 1u) << victim;
      table.EraseAt(ref);
    }
    ASSERT_EQ(table.size(), model.size()) << "step " << step;
    const std::string probe = pick_key();
    const auto expected = model.find(probe);
    ASSERT_EQ(Lookup(table, probe),
              expected == model.end() ? std::nullopt : std::optional(expected->second))
        << "step " << step << " key " << probe;
    if (step % 1000 == 999) {
      ASSERT_EQ(table.Validate(), "") << "step " << step;
      ASSERT_EQ(Contents(table), model) << "step " << step;
    }
  }
}

TEST(PagedTableTest, RandomizedModelOfAHash) {
  for (uint64_t seed : {1, 2, 3}) RunModel(seed, true, 20000);
}

TEST(PagedTableTest, RandomizedModelOfASet) {
  for (uint64_t seed : {4, 5, 6}) RunModel(seed, false, 20000);
}

TEST(PagedTableTest, ScanUnderChangeSeesEveryLastingKey) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    SCOPED_TRACE("seed=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    PagedTable table(true);
    std::unordered_set<std::string> live, lasting;
    int next = 0;
    for (; next < 6000; ++next) {
      const std::string key = "key" + std::to_string(next);
      Insert(&table, key, "v");
      live.insert(key);
    }
    lasting = live;
    std::unordered_set<std::string> seen;
    // Growing for the first seeds, shrinking for the others; value rewrites move entries too.
    const bool grow = seed % 2 == 1;
    uint64_t cursor = 0;
    int calls = 0;
    do {
      std::vector<EntryRef> out;
      cursor = table.Scan(cursor, 1 + rng() % 50, &out);
      for (EntryRef ref : out) {
        const std::string key = Texts(table, table.EntryAt(ref)).first;
        ASSERT_TRUE(live.count(key)) << "reported a dead key " << key;
        seen.insert(key);
      }
      for (int c = 0; c < 30; ++c) {
        if (grow ? rng() % 10 < 8 : rng() % 10 < 2) {
          const std::string key = "key" + std::to_string(next++);
          Insert(&table, key, "v");
          live.insert(key);
        } else if (!live.empty()) {
          const std::string key = "key" + std::to_string(rng() % next);
          if (table.Erase(PackedKey::Of(key))) {
            live.erase(key);
            lasting.erase(key);
          }
        }
        const std::string key = "key" + std::to_string(rng() % next);
        const PackedKey packed = PackedKey::Of(key);
        if (const std::optional<EntryRef> ref = table.Find(packed)) {
          table.SetValue(packed, *ref, CellInput::Of(std::string(rng() % 40, 'w')));
        }
      }
      ASSERT_LT(++calls, 100000);
    } while (cursor != 0);
    for (const std::string& key : lasting) ASSERT_TRUE(seen.count(key)) << key;
    EXPECT_EQ(table.Validate(), "");
  }
}

}  // namespace
}  // namespace goblin
