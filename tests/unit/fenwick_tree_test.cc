#include "core/fenwick_tree.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace goblin {
namespace {

// Checks every query of the tree against the plain counts.
void ExpectMatches(const FenwickTree& tree, const std::vector<uint64_t>& counts) {
  ASSERT_EQ(tree.size(), counts.size());
  uint64_t prefix = 0;
  for (size_t p = 0; p <= counts.size(); ++p) {
    ASSERT_EQ(tree.PrefixSum(p), prefix) << "end " << p;
    if (p < counts.size()) prefix += counts[p];
  }
  ASSERT_EQ(tree.total(), prefix);
  // FindRank at each position's first and last unit.
  uint64_t before = 0;
  for (size_t p = 0; p < counts.size(); ++p) {
    if (counts[p] != 0) {
      ASSERT_EQ(tree.FindRank(before), p);
      ASSERT_EQ(tree.FindRank(before + counts[p] - 1), p);
    }
    before += counts[p];
  }
}

TEST(FenwickTreeTest, Empty) {
  FenwickTree tree(16);
  EXPECT_EQ(tree.size(), 16u);
  EXPECT_EQ(tree.total(), 0u);
  EXPECT_EQ(tree.PrefixSum(16), 0u);
  EXPECT_EQ(tree.NextNonZero(0), 16u);
  FenwickTree none(0);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.NextNonZero(0), 0u);
}

TEST(FenwickTreeTest, OnePosition) {
  FenwickTree tree(1);
  tree.Add(0, 3);
  EXPECT_EQ(tree.FindRank(0), 0u);
  EXPECT_EQ(tree.FindRank(2), 0u);
  EXPECT_EQ(tree.NextNonZero(0), 0u);
  EXPECT_EQ(tree.NextNonZero(1), 1u);
}

// Thousands of seeded random updates on sizes around and between powers of two, the tree
// compared after each step with a std::vector of the counts.
TEST(FenwickTreeTest, RandomizedModel) {
  for (size_t n : {1u, 2u, 3u, 7u, 8u, 9u, 100u, 128u, 1000u}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed * 7919 + n);
      FenwickTree tree(n);
      std::vector<uint64_t> counts(n, 0);
      for (int step = 0; step < 3000; ++step) {
        const size_t p = rng() % n;
        int64_t delta = static_cast<int64_t>(rng() % 5) + 1;
        if (rng() % 2 == 0) delta = -std::min<int64_t>(delta, static_cast<int64_t>(counts[p]));
        tree.Add(p, delta);
        counts[p] += static_cast<uint64_t>(delta);
        // The full check is O(n log n): on every step for small trees, now and then for large.
        if (n <= 9 || step % 97 == 0) ExpectMatches(tree, counts);
        if (tree.total() != 0) {
          const uint64_t rank = rng() % tree.total();
          const size_t q = tree.FindRank(rank);
          const uint64_t below = std::accumulate(counts.begin(), counts.begin() + q, uint64_t{0});
          ASSERT_LE(below, rank);
          ASSERT_GT(below + counts[q], rank);
        }
        const size_t from = rng() % (n + 1);
        size_t next = from;
        while (next < n && counts[next] == 0) ++next;
        ASSERT_EQ(tree.NextNonZero(from), next);
      }
      ExpectMatches(tree, counts);
    }
  }
}

}  // namespace
}  // namespace goblin
