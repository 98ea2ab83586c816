#include "server/tracking.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace goblin {
namespace {

// Redis's radix tree orders ids by their little-endian bytes: the order invalidations go out.
struct RadixOrder {
  bool operator()(uint64_t a, uint64_t b) const {
    for (int byte = 0; byte < 8; ++byte) {
      const auto x = static_cast<uint8_t>(a >> (8 * byte));
      const auto y = static_cast<uint8_t>(b >> (8 * byte));
      if (x != y) return x < y;
    }
    return false;
  }
};

using Model = std::map<std::string, std::set<uint64_t, RadixOrder>>;

std::string KeyFor(uint64_t n) {
  std::string key = "k" + std::to_string(n);
  if (n % 5 == 0) key += std::string("\0\xfe", 2);
  if (n % 13 == 0) key.append(n % 50, 'p');
  return key;
}

void ExpectSame(const TrackingTable& table, const Model& model, uint64_t items) {
  ASSERT_EQ(table.keys(), model.size());
  ASSERT_EQ(table.items(), items);
  size_t seen = 0;
  table.ForEach([&](std::string_view key, const std::vector<uint64_t>& ids) {
    ++seen;
    auto it = model.find(std::string(key));
    ASSERT_NE(it, model.end()) << "unexpected key " << key;
    ASSERT_EQ(ids, std::vector<uint64_t>(it->second.begin(), it->second.end())) << key;
  });
  ASSERT_EQ(seen, model.size());
}

TEST(TrackingTableTest, SeededModel) {
  for (uint64_t seed : {1u, 7u, 42u, 2024u}) {
    std::mt19937_64 rng(seed);
    TrackingTable table;
    Model model;
    uint64_t items = 0;
    for (int step = 0; step < 20000; ++step) {
      const uint64_t op = rng() % 100;
      const std::string key = KeyFor(rng() % 400);
      if (op < 60) {
        // Few clients, plus ids whose low bytes collide, so the byte order matters.
        const uint64_t id = (rng() % 4 == 0) ? (rng() % 8) << 8 | 1 : 1 + rng() % 40;
        const bool added = model[key].insert(id).second;
        items += added;
        ASSERT_EQ(table.Add(key, id), added) << "seed " << seed << " step " << step;
      } else if (op < 90) {
        std::vector<uint64_t> ids;
        auto it = model.find(key);
        ASSERT_EQ(table.Take(key, &ids), it != model.end());
        if (it != model.end()) {
          ASSERT_EQ(ids, std::vector<uint64_t>(it->second.begin(), it->second.end()));
          items -= it->second.size();
          model.erase(it);
        }
      } else if (op < 99) {
        std::optional<std::string> random = table.RandomKey(rng());
        ASSERT_EQ(random.has_value(), !model.empty());
        if (random) {
          ASSERT_TRUE(model.count(*random)) << *random;
        }
      } else {
        table.Clear();
        model.clear();
        items = 0;
      }
      if (step % 500 == 0) ExpectSame(table, model, items);
    }
    ExpectSame(table, model, items);
  }
}

TEST(TrackingTableTest, ManyClientsOnOneKeyGrowTheBlock) {
  TrackingTable table;
  std::set<uint64_t, RadixOrder> model;
  std::mt19937_64 rng(5);
  const size_t empty_bytes = table.AllocatedBytes();
  for (int i = 0; i < 3000; ++i) {
    const uint64_t id = 1 + rng() % 100000;
    ASSERT_EQ(table.Add("hot", id), model.insert(id).second);
  }
  EXPECT_GT(table.AllocatedBytes(), empty_bytes + 8 * model.size());
  std::vector<uint64_t> ids;
  ASSERT_TRUE(table.Take("hot", &ids));
  EXPECT_EQ(ids, std::vector<uint64_t>(model.begin(), model.end()));
  EXPECT_EQ(table.keys(), 0u);
  EXPECT_EQ(table.items(), 0u);
  EXPECT_FALSE(table.Take("hot", &ids));
}

TEST(TrackingTableTest, RandomKeyReachesEveryKey) {
  TrackingTable table;
  for (uint64_t n = 0; n < 50; ++n) table.Add(KeyFor(n), 1);
  std::set<std::string> drawn;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 5000; ++i) drawn.insert(*table.RandomKey(rng()));
  EXPECT_EQ(drawn.size(), 50u);
}

}  // namespace
}  // namespace goblin
