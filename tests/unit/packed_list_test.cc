#include "core/packed_list.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

namespace goblin {
namespace {

std::vector<std::string> Contents(const PackedList& list) {
  std::vector<std::string> out;
  list.ForEach(0, list.size(), [&](std::string_view value) { out.emplace_back(value); });
  return out;
}

std::vector<std::string> Contents(const std::deque<std::string>& model) {
  return {model.begin(), model.end()};
}

struct ModelCase {
  uint64_t seed;
  int64_t fill;  // list-max-listpack-size
  size_t steps;
  int64_t depth = 0;  // list-compress-depth
};

class PackedListModelTest : public testing::TestWithParam<ModelCase> {};

// Seeded random operations on a PackedList and a std::deque, compared after every step (the
// size and one probed position) and in full every few steps.
TEST_P(PackedListModelTest, MatchesDeque) {
  const ModelCase c = GetParam();
  std::mt19937_64 rng(c.seed);
  ListLimits limits;
  limits.max_listpack_size = c.fill;
  limits.compress_depth = c.depth;
  PackedList list;
  std::deque<std::string> model;
  auto value = [&]() {
    const uint64_t kind = rng() % 100;
    size_t length = kind < 5    ? 0
                    : kind < 90 ? 1 + rng() % 24
                    : kind < 98 ? 100 + rng() % 400
                                : 9000 + rng() % 3000;
    std::string v(length, '\0');
    for (char& ch : v) ch = static_cast<char>(rng() % 256);
    if (kind % 7 == 0) v = std::to_string(static_cast<int64_t>(rng() % 20000) - 10000);
    return v;
  };
  auto index = [&](size_t bound) { return bound == 0 ? 0 : static_cast<size_t>(rng() % bound); };
  for (size_t step = 0; step < c.steps; ++step) {
    const uint64_t op = rng() % 100;
    // Grow more than shrink for the first half, then drain.
    const bool grow = step < c.steps / 2 ? op < 60 : op < 35;
    if (grow) {
      const std::string v = value();
      list.ConvertForGrowth(1, v.size(), limits);  // as the commands do
      switch (rng() % 3) {
        case 0:
          list.PushFront(v, limits);
          model.push_front(v);
          break;
        case 1:
          list.PushBack(v, limits);
          model.push_back(v);
          break;
        default: {
          const size_t at = index(model.size() + 1);
          list.Insert(at, v, limits);
          model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), v);
        }
      }
    } else if (!model.empty()) {
      switch (rng() % 6) {
        case 0:
          ASSERT_EQ(list.PopFront(), model.front()) << "step " << step;
          model.pop_front();
          list.ConvertForShrink(limits);
          break;
        case 1:
          ASSERT_EQ(list.PopBack(), model.back()) << "step " << step;
          model.pop_back();
          list.ConvertForShrink(limits);
          break;
        case 2: {
          const size_t at = index(model.size());
          const std::string v = value();
          list.Set(at, v, limits);
          model[at] = v;
          break;
        }
        case 3: {
          const size_t start = index(model.size());
          const size_t stop = start + index(rng() % 4 == 0 ? model.size() : 8);
          list.EraseRange(start, stop);
          model.erase(model.begin() + static_cast<std::ptrdiff_t>(start),
                      model.begin() + static_cast<std::ptrdiff_t>(std::min(stop, model.size())));
          break;
        }
        case 4: {
          const size_t start = index(model.size());
          const std::string& wanted = model[index(model.size())];
          size_t expected = model.size();
          for (size_t i = start; i < model.size(); ++i) {
            if (model[i] == wanted) {
              expected = i;
              break;
            }
          }
          ASSERT_EQ(list.FindForward(start, [&](std::string_view v) { return v == wanted; }),
                    expected);
          const size_t end = 1 + index(model.size());
          expected = model.size();
          for (size_t i = end; i-- > 0;) {
            if (model[i] == wanted) {
              expected = i;
              break;
            }
          }
          ASSERT_EQ(list.FindBackward(end, [&](std::string_view v) { return v == wanted; }),
                    expected);
          break;
        }
        default: {
          const size_t start = index(model.size());
          const size_t stop = start + index(50);
          std::vector<std::string> got;
          list.ForEach(start, stop, [&](std::string_view v) { got.emplace_back(v); });
          std::vector<std::string> want(
              model.begin() + static_cast<std::ptrdiff_t>(start),
              model.begin() + static_cast<std::ptrdiff_t>(std::min(stop, model.size())));
          ASSERT_EQ(got, want) << "step " << step;
        }
      }
    }
    ASSERT_EQ(list.size(), model.size()) << "step " << step;
    if (!model.empty()) {
      const size_t at = index(model.size());
      ASSERT_EQ(list.At(at), model[at]) << "step " << step << " position " << at;
    }
    if (step % 97 == 0) {
      ASSERT_EQ(Contents(list), Contents(model)) << "step " << step;
    }
    if (step % 1009 == 0) {
      PackedList copy = list.Clone();
      ASSERT_EQ(Contents(copy), Contents(model));
      std::string dump;
      list.Dump(&dump);
      PackedList restored;
      ASSERT_TRUE(PackedList::Restore(dump, limits, &restored));
      ASSERT_EQ(Contents(restored), Contents(model));
      list.Optimize();
      ASSERT_EQ(Contents(list), Contents(model)) << "after Optimize, step " << step;
    }
  }
  EXPECT_EQ(Contents(list), Contents(model));
}

INSTANTIATE_TEST_SUITE_P(Fills, PackedListModelTest,
                         testing::Values(ModelCase{1, -2, 20000}, ModelCase{2, -1, 20000},
                                         ModelCase{3, 4, 20000}, ModelCase{4, 1, 8000},
                                         ModelCase{5, 0, 8000}, ModelCase{6, 128, 20000},
                                         ModelCase{7, -5, 20000}, ModelCase{8, -2, 60000},
                                         ModelCase{9, -2, 30000, 1}, ModelCase{10, 8, 20000, 2},
                                         ModelCase{11, -1, 20000, 3}));

TEST(PackedListTest, OneMillionElementsAtBothEndsAndByPosition) {
  ListLimits limits;
  PackedList list;
  std::deque<std::string> model;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000000; ++i) {
    std::string v = std::to_string(rng());
    if (i % 2 == 0) {
      list.PushBack(v, limits);
      model.push_back(v);
    } else {
      list.PushFront(v, limits);
      model.push_front(v);
    }
  }
  for (int i = 0; i < 20000; ++i) {
    const size_t at = rng() % model.size();
    ASSERT_EQ(list.At(at), model[at]);
  }
  list.EraseRange(1000, 900000);
  model.erase(model.begin() + 1000, model.begin() + 900000);
  ASSERT_EQ(Contents(list), Contents(model));
  while (!model.empty()) {
    ASSERT_EQ(list.PopBack(), model.back());
    model.pop_back();
  }
  EXPECT_TRUE(list.empty());
}

TEST(PackedListTest, SixteenByteValuesCostUnderSeventeenAndAHalfBytes) {
  for (size_t n : {500000u, 1000000u, 2000000u}) {
    ListLimits limits;
    PackedList list;
    std::mt19937_64 rng(n);
    std::string v(16, 'x');
    for (size_t i = 0; i < n; ++i) {
      for (char& ch : v) ch = static_cast<char>('a' + rng() % 26);
      list.PushBack(v, limits);
    }
    const double per_element = static_cast<double>(list.MemoryUsage()) / static_cast<double>(n);
    EXPECT_LE(per_element, 17.5) << n << " elements";
    RecordProperty("bytes_per_element_" + std::to_string(n), std::to_string(per_element));
  }
}

TEST(PackedListTest, InteriorNodesAreCompressedPastTheDepth) {
  ListLimits limits;
  limits.compress_depth = 1;
  PackedList list;
  std::deque<std::string> model;
  for (int i = 0; i < 20000; ++i) {
    std::string v = "event:" + std::to_string(i % 100) + ":payload-payload-payload";
    list.PushBack(v, limits);
    model.push_back(v);
  }
  const ListStats stats = list.Stats();
  EXPECT_GE(stats.compressed_nodes, stats.nodes - 2) << "all but the two end nodes";
  EXPECT_GT(stats.compressed_nodes, 10u);
  PackedList plain;
  for (const std::string& v : model) plain.PushBack(v, ListLimits{});
  EXPECT_LT(list.MemoryUsage() * 2, plain.MemoryUsage()) << "repetitive text compresses";
  for (int i = 0; i < 2000; ++i) {
    const size_t at = static_cast<size_t>(i * 7919) % model.size();
    ASSERT_EQ(list.At(at), model[at]);
  }
  // Depth 0 again (CONFIG SET list-compress-depth 0): the next change decompresses everything.
  ListLimits off;
  list.PushBack("x", off);
  model.push_back("x");
  EXPECT_EQ(list.Stats().compressed_nodes, 0u);
  EXPECT_EQ(Contents(list), Contents(model));
}

TEST(PackedListTest, AQueueKeepsItsMemoryFlat) {
  ListLimits limits;
  PackedList list;
  std::string v(16, 'q');
  for (int i = 0; i < 10000; ++i) list.PushFront(v, limits);
  const size_t settled = list.MemoryUsage();
  for (int i = 0; i < 1000000; ++i) {
    list.PushFront(v, limits);
    list.PopBack();
  }
  EXPECT_LE(list.MemoryUsage(), settled + 16384);
}

TEST(PackedListTest, EncodingFollowsRedisThresholds) {
  // Positive: entries; conversion back under half of them.
  ListLimits four;
  four.max_listpack_size = 4;
  PackedList list;
  list.ConvertForGrowth(4, 4, four);
  for (const char* v : {"a", "b", "c", "d"}) list.PushBack(v, four);
  EXPECT_EQ(list.EncodingName(), "listpack");
  list.ConvertForGrowth(1, 1, four);
  EXPECT_EQ(list.EncodingName(), "quicklist");
  list.PushBack("e", four);
  list.PopBack();
  list.PopBack();
  list.ConvertForShrink(four);
  EXPECT_EQ(list.EncodingName(), "quicklist") << "3 entries is over half of 4";
  list.PopBack();
  list.ConvertForShrink(four);
  EXPECT_EQ(list.EncodingName(), "listpack");

  // Negative: Redis's listpack bytes (-1: 4096) plus the raw bytes of what is added.
  ListLimits small;
  small.max_listpack_size = -1;
  PackedList bytes;
  const std::string v(100, 'v');  // 2 + 100 + 1 = 103 listpack bytes each
  for (int i = 0; i < 39; ++i) {
    bytes.ConvertForGrowth(1, v.size(), small);
    bytes.PushBack(v, small);
  }
  // 7 + 39 * 103 = 4024; adding 100 more raw bytes passes 4096.
  EXPECT_EQ(bytes.EncodingName(), "listpack");
  bytes.ConvertForGrowth(1, v.size(), small);
  EXPECT_EQ(bytes.EncodingName(), "quicklist");
  while (bytes.size() > 20) bytes.PopFront();
  bytes.ConvertForShrink(small);
  EXPECT_EQ(bytes.EncodingName(), "quicklist") << "7 + 20 * 103 = 2067 > 2048";
  bytes.PopFront();
  bytes.ConvertForShrink(small);
  EXPECT_EQ(bytes.EncodingName(), "listpack");
}

TEST(PackedListTest, RestoreChoosesTheEncodingAfresh) {
  ListLimits four;
  four.max_listpack_size = 4;
  PackedList list;
  list.ConvertForGrowth(5, 5, four);
  for (const char* v : {"a", "b", "c", "d", "e"}) list.PushBack(v, four);
  list.PopBack();
  list.PopBack();
  list.ConvertForShrink(four);
  ASSERT_EQ(list.EncodingName(), "quicklist");  // 3 > 4 / 2
  std::string dump;
  list.Dump(&dump);
  PackedList restored;
  ASSERT_TRUE(PackedList::Restore(dump, four, &restored));
  EXPECT_EQ(restored.EncodingName(), "listpack");  // 3 <= 4: Redis 7.2's load
  ListLimits two;
  two.max_listpack_size = 2;
  ASSERT_TRUE(PackedList::Restore(dump, two, &restored));
  EXPECT_EQ(restored.EncodingName(), "quicklist");
}

TEST(PackedListTest, RestoreRefusesDamagedDumps) {
  ListLimits limits;
  PackedList list;
  for (int i = 0; i < 300; ++i) list.PushBack(std::string(i % 40, static_cast<char>(i)), limits);
  std::string dump;
  list.Dump(&dump);
  std::mt19937_64 rng(5);
  size_t refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = dump;
    if (trial % 3 == 0) {
      damaged.resize(rng() % dump.size());
    } else {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    PackedList out;
    if (!PackedList::Restore(damaged, limits, &out)) ++refused;
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_FALSE(PackedList::Restore("", limits, &list));
  EXPECT_EQ(list.size(), 300u) << "a refused restore must leave the target alone";
}

}  // namespace
}  // namespace goblin
