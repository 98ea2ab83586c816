// Tests of goblin::ZsetTree alone: seeded randomized model tests against a std::set of
// (score key, member) and a std::map of member -> score through inserts, score updates,
// erases and rank-range erases, checking scores, ranks, counts below a score, iteration both
// ways and the tree's own Validate(); plus the edges: scores that tie by the thousand (member
// order and member prefixes decide), -0.0 and infinities, lex ranges over equal scores, members
// that need a leaf of their own, and bulk appends.

#include "core/zset_tree.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace goblin {
namespace {

using Ordered = std::set<std::pair<uint64_t, std::string>>;

// The sorted set as plain containers: by (score key, member), and member -> score.
struct Model {
  Ordered ordered;
  std::map<std::string, double> scores;

  bool Insert(double score, const std::string& member) {
    const auto it = scores.find(member);
    const bool added = it == scores.end();
    if (!added) ordered.erase({ScoreToKey(it->second), member});
    scores[member] = score;
    ordered.insert({ScoreToKey(score), member});
    return added;
  }
  bool Erase(const std::string& member) {
    const auto it = scores.find(member);
    if (it == scores.end()) return false;
    ordered.erase({ScoreToKey(it->second), member});
    scores.erase(it);
    return true;
  }
  size_t Rank(const std::string& member) const {
    return static_cast<size_t>(
        std::distance(ordered.begin(), ordered.find({ScoreToKey(scores.at(member)), member})));
  }
  size_t CountBelowKey(uint64_t key, bool inclusive) const {
    size_t n = 0;
    for (const auto& [k, member] : ordered) n += inclusive ? k <= key : k < key;
    return n;
  }
};

bool SameScore(double a, double b) {
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

// The tree's entries from rank 0 on, walking forward.
std::vector<std::pair<double, std::string>> Forward(const ZsetTree& tree) {
  std::vector<std::pair<double, std::string>> out;
  for (ZsetTree::Iterator it = tree.Seek(0); it.Valid(); it.Next()) {
    out.emplace_back(it.entry().score(), std::string(it.entry().member));
  }
  return out;
}

// Everything the model knows, compared with the tree.
void ExpectMatches(const ZsetTree& tree, const Model& model, std::mt19937_64& rng) {
  ASSERT_EQ(tree.Validate(), "");
  ASSERT_EQ(tree.size(), model.scores.size());
  const auto forward = Forward(tree);
  ASSERT_EQ(forward.size(), model.ordered.size());
  size_t rank = 0;
  for (const auto& [key, member] : model.ordered) {
    ASSERT_EQ(forward[rank].second, member) << "rank " << rank;
    ASSERT_TRUE(SameScore(forward[rank].first, model.scores.at(member))) << member;
    ASSERT_EQ(tree.Rank(member), rank) << member;
    ++rank;
  }
  // Backward from the last rank.
  if (!model.ordered.empty()) {
    auto expected = model.ordered.rbegin();
    for (ZsetTree::Iterator it = tree.Seek(tree.size() - 1); it.Valid(); it.Prev(), ++expected) {
      ASSERT_NE(expected, model.ordered.rend());
      ASSERT_EQ(it.entry().member, expected->second);
    }
  }
  EXPECT_FALSE(tree.Seek(tree.size()).Valid());
  // A few walks from random ranks, mixing directions.
  for (int walk = 0; walk < 5 && !forward.empty(); ++walk) {
    size_t at = rng() % forward.size();
    ZsetTree::Iterator it = tree.Seek(at);
    for (int step = 0; step < 40 && it.Valid(); ++step) {
      ASSERT_EQ(it.entry().member, forward[at].second) << "walk from rank " << at;
      if (rng() % 3 == 0) {
        if (at == 0) break;
        it.Prev();
        --at;
      } else {
        it.Next();
        if (++at == forward.size()) {
          EXPECT_FALSE(it.Valid());
          break;
        }
      }
    }
  }
  // Counts below scores present and absent, inclusive and not.
  for (int probe = 0; probe < 20; ++probe) {
    uint64_t key;
    if (!forward.empty() && probe % 2 == 0) {
      key = ScoreToKey(forward[rng() % forward.size()].first);
    } else {
      key = ScoreToKey(static_cast<double>(static_cast<int64_t>(rng() % 60) - 20) / 2);
    }
    for (bool inclusive : {false, true}) {
      ASSERT_EQ(tree.CountBelowKey(key, inclusive), model.CountBelowKey(key, inclusive));
    }
  }
  size_t run_entries = 0;
  tree.ForEachLeafRun([&](const uint8_t*, uint32_t entries, uint32_t) { run_entries += entries; });
  EXPECT_EQ(run_entries, tree.size());
}

TEST(ZsetTreeTest, EmptyTree) {
  ZsetTree tree;
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_FALSE(tree.Score("a").has_value());
  EXPECT_FALSE(tree.Rank("a").has_value());
  EXPECT_FALSE(tree.Erase("a"));
  EXPECT_FALSE(tree.Seek(0).Valid());
  EXPECT_EQ(tree.CountBelowKey(ScoreToKey(1), true), 0u);
  EXPECT_EQ(tree.CountBelowMember("a", true), 0u);
  EXPECT_EQ(tree.EraseRange(0, 10), 0u);
  EXPECT_EQ(tree.Validate(), "");
}

TEST(ZsetTreeTest, InsertReportsAddedOrOldScore) {
  ZsetTree tree;
  double old = 0;
  EXPECT_TRUE(tree.Insert(1.5, "a", &old));
  EXPECT_FALSE(tree.Insert(2.5, "a", &old));
  EXPECT_EQ(old, 1.5);
  EXPECT_FALSE(tree.Insert(2.5, "a", nullptr));
  EXPECT_EQ(tree.Score("a"), 2.5);
  EXPECT_EQ(tree.size(), 1u);
  EXPECT_EQ(tree.Validate(), "");
}

TEST(ZsetTreeTest, SignedZeroAndInfinities) {
  ZsetTree tree;
  tree.Insert(-0.0, "negative zero", nullptr);
  tree.Insert(0.0, "zero", nullptr);
  tree.Insert(std::numeric_limits<double>::infinity(), "inf", nullptr);
  tree.Insert(-std::numeric_limits<double>::infinity(), "-inf", nullptr);
  tree.Insert(-std::numeric_limits<double>::denorm_min(), "tiny negative", nullptr);
  tree.Insert(std::numeric_limits<double>::denorm_min(), "tiny", nullptr);
  ASSERT_EQ(tree.Validate(), "");
  // -0.0 keeps its sign but ranks with 0.0, by member.
  EXPECT_TRUE(std::signbit(*tree.Score("negative zero")));
  EXPECT_FALSE(std::signbit(*tree.Score("zero")));
  const std::vector<std::string> order = {"-inf", "tiny negative", "negative zero",
                                          "zero", "tiny",          "inf"};
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(tree.Rank(order[i]), i) << order[i];
  EXPECT_EQ(tree.CountBelowKey(ScoreToKey(0.0), false), 2u);
  EXPECT_EQ(tree.CountBelowKey(ScoreToKey(-0.0), true), 4u);
  EXPECT_EQ(tree.CountBelowKey(ScoreToKey(std::numeric_limits<double>::infinity()), true), 6u);
}

TEST(ZsetTreeTest, ThousandsOfTiesOrderByMember) {
  // An integer leaderboard: few scores, many members each, with members that share their first
  // 8 bytes (the prefix inner nodes keep), so descents must read members to break ties.
  ZsetTree tree;
  Model model;
  std::mt19937_64 rng(31);
  for (int i = 0; i < 8000; ++i) {
    const std::string member = (i % 2 ? "player:0000" : "p") + std::to_string(rng() % 100000);
    const double score = static_cast<double>(rng() % 4);
    ASSERT_EQ(tree.Insert(score, member, nullptr), model.Insert(score, member)) << member;
  }
  ExpectMatches(tree, model, rng);
  // Move members between ties: each update leaves and rejoins a crowd.
  for (int i = 0; i < 3000; ++i) {
    auto it = model.scores.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng() % model.scores.size()));
    const std::string member = it->first;
    const double score = static_cast<double>(rng() % 4);
    tree.Insert(score, member, nullptr);
    model.Insert(score, member);
  }
  ExpectMatches(tree, model, rng);
}

TEST(ZsetTreeTest, LexCountsOverEqualScores) {
  ZsetTree tree;
  std::set<std::string> members;
  std::mt19937_64 rng(37);
  for (int i = 0; i < 5000; ++i) {
    std::string member(1 + rng() % 12, 'a');
    for (char& c : member) c = static_cast<char>('a' + rng() % 4);  // many shared prefixes
    members.insert(member);
    tree.Insert(0, member, nullptr);
  }
  ASSERT_EQ(tree.Validate(), "");
  ASSERT_EQ(tree.size(), members.size());
  std::vector<std::string> probes = {"", "a", "aaaaaaaaaaaaaaaaaaaa", "e", "\xff"};
  for (int i = 0; i < 200; ++i) {
    std::string probe(rng() % 14, 'a');
    for (char& c : probe) c = static_cast<char>('a' + rng() % 5);
    probes.push_back(probe);
  }
  for (const std::string& probe : probes) {
    const auto below =
        static_cast<size_t>(std::distance(members.begin(), members.lower_bound(probe)));
    const auto at_or_below =
        static_cast<size_t>(std::distance(members.begin(), members.upper_bound(probe)));
    EXPECT_EQ(tree.CountBelowMember(probe, false), below) << probe;
    EXPECT_EQ(tree.CountBelowMember(probe, true), at_or_below) << probe;
  }
}

TEST(ZsetTreeTest, MembersLargerThanALeaf) {
  ZsetTree tree;
  Model model;
  std::mt19937_64 rng(41);
  for (int i = 0; i < 300; ++i) {
    const size_t length = i % 10 == 0 ? ZsetTree::kLeafBytes + rng() % 3000 : 1 + rng() % 300;
    const std::string member = std::to_string(i) + std::string(length, 'j');
    const double score = static_cast<double>(rng() % 50);
    tree.Insert(score, member, nullptr);
    model.Insert(score, member);
  }
  ExpectMatches(tree, model, rng);
  EXPECT_GT(tree.GetStats().jumbo_leaves, 0u);
  for (int i = 0; i < 300; i += 2) {
    const std::string member = model.scores.begin()->first;
    ASSERT_TRUE(tree.Erase(member));
    model.Erase(member);
  }
  ExpectMatches(tree, model, rng);
}

TEST(ZsetTreeTest, EraseRangeClampsAndRemovesRanks) {
  ZsetTree tree;
  Model model;
  std::mt19937_64 rng(43);
  for (int i = 0; i < 20000; ++i) {
    const std::string member = "m" + std::to_string(i);
    const double score = static_cast<double>(rng() % 1000);
    tree.Insert(score, member, nullptr);
    model.Insert(score, member);
  }
  // Ranges inside a leaf, across leaves, across inner nodes, at both ends, past the end.
  const std::vector<std::pair<size_t, size_t>> ranges = {
      {0, 1}, {5, 7}, {100, 2000}, {15000, 30000}, {0, 50}, {3000, 3000}, {20000, 20001}};
  for (const auto& [start, stop] : ranges) {
    const size_t size = model.ordered.size();
    const size_t expected = start >= size ? 0 : std::min(stop, size) - start;
    ASSERT_EQ(tree.EraseRange(start, stop), expected) << start << ".." << stop;
    auto first =
        std::next(model.ordered.begin(), static_cast<std::ptrdiff_t>(std::min(start, size)));
    auto last = std::next(model.ordered.begin(), static_cast<std::ptrdiff_t>(std::min(stop, size)));
    for (auto it = first; it != last; ++it) model.scores.erase(it->second);
    model.ordered.erase(first, last);
    ASSERT_EQ(tree.Validate(), "");
    ASSERT_EQ(Forward(tree).size(), model.ordered.size());
  }
  ExpectMatches(tree, model, rng);
  ASSERT_EQ(tree.EraseRange(0, tree.size()), model.ordered.size());
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_EQ(tree.Validate(), "");
  // An emptied tree takes members again.
  tree.Insert(1, "again", nullptr);
  EXPECT_EQ(tree.Rank("again"), 0u);
  EXPECT_EQ(tree.Validate(), "");
}

TEST(ZsetTreeTest, AppendsBuildWhatInsertsWould) {
  for (size_t n : {1, 60, 5000, 20000}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::mt19937_64 rng(47 + n);
    Model model;
    while (model.scores.size() < n) {
      model.Insert(static_cast<double>(rng() % (n / 2 + 1)), "a" + std::to_string(rng() % (4 * n)));
    }
    ZsetTree tree;
    for (const auto& [key, member] : model.ordered) tree.Append(model.scores[member], member);
    tree.FinishAppends();
    ExpectMatches(tree, model, rng);
    // Appends fill leaves: no more leaves than the entries need at full fill, plus one.
    const ZsetTree::Stats stats = tree.GetStats();
    EXPECT_LE(stats.leaf_payload_bytes, stats.leaf_capacity_bytes);
    EXPECT_LE(stats.leaves, stats.leaf_payload_bytes / (ZsetTree::kLeafPayload - 40) + 1);
    // The built tree takes ordinary changes.
    for (int i = 0; i < 500; ++i) {
      const std::string member = "b" + std::to_string(rng() % 1000);
      const double score = static_cast<double>(rng() % 100);
      ASSERT_EQ(tree.Insert(score, member, nullptr), model.Insert(score, member));
    }
    ExpectMatches(tree, model, rng);
  }
}

// One seeded run of random operations, checked after every step on what it touched and in
// full at checkpoints.
void RunModel(uint64_t seed, int steps) {
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  ZsetTree tree;
  Model model;
  auto random_score = [&]() -> double {
    switch (rng() % 8) {
      case 0:
        return static_cast<double>(rng() % 5);  // crowds of ties
      case 1:
        return rng() % 2 ? 0.0 : -0.0;
      case 2:
        return rng() % 2 ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
      case 3:
        return static_cast<double>(static_cast<int64_t>(rng() % 40) - 20) / 2;
      default:
        return std::ldexp(static_cast<double>(rng() % 2000000) - 1000000.0,
                          static_cast<int>(rng() % 40) - 20);
    }
  };
  auto random_member = [&]() -> std::string {
    switch (rng() % 6) {
      case 0:
        return "leaderboard:" + std::to_string(rng() % 3000);  // long shared prefixes
      case 1:
        return std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 3));
      case 2:
        return std::string(rng() % 200 + 20, static_cast<char>('A' + rng() % 26)) +
               std::to_string(rng() % 50);
      default:
        return "u" + std::to_string(rng() % 6000);
    }
  };
  int grow_percent = 65;
  for (int step = 0; step < steps; ++step) {
    if (step % 3000 == 0) grow_percent = grow_percent == 65 ? 35 : 65;
    const unsigned op = static_cast<unsigned>(rng() % 100);
    const std::string member = random_member();
    if (op < static_cast<unsigned>(grow_percent)) {
      const double score = random_score();
      const auto before = model.scores.find(member);
      const bool existed = before != model.scores.end();
      const double previous = existed ? before->second : 0;
      double old = 12345;
      ASSERT_EQ(tree.Insert(score, member, &old), model.Insert(score, member)) << member;
      if (existed) {
        ASSERT_TRUE(SameScore(old, previous)) << member;
      }
    } else if (op < 97) {
      ASSERT_EQ(tree.Erase(member), model.Erase(member)) << member;
    } else if (!model.ordered.empty()) {
      const size_t start = rng() % model.ordered.size();
      const size_t stop = start + rng() % 30;
      const size_t removed = tree.EraseRange(start, stop);
      const size_t end = std::min(stop, model.ordered.size());
      ASSERT_EQ(removed, end - start);
      auto first = std::next(model.ordered.begin(), static_cast<std::ptrdiff_t>(start));
      auto last = std::next(model.ordered.begin(), static_cast<std::ptrdiff_t>(end));
      for (auto it = first; it != last; ++it) model.scores.erase(it->second);
      model.ordered.erase(first, last);
    }
    ASSERT_EQ(tree.size(), model.scores.size()) << "step " << step;
    // The touched member: its score and, now and then, its rank.
    const auto it = model.scores.find(member);
    const std::optional<double> score = tree.Score(member);
    ASSERT_EQ(score.has_value(), it != model.scores.end()) << "step " << step << " " << member;
    if (score) {
      ASSERT_TRUE(SameScore(*score, it->second)) << "step " << step << " " << member;
      if (step % 8 == 0) {
        ASSERT_EQ(tree.Rank(member), model.Rank(member)) << "step " << step;
      }
    } else {
      ASSERT_FALSE(tree.Rank(member).has_value());
    }
    if (step % 1000 == 999) {
      ExpectMatches(tree, model, rng);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  ExpectMatches(tree, model, rng);
}

TEST(ZsetTreeTest, RandomizedModel) {
  for (uint64_t seed : {1, 2, 3, 4}) RunModel(seed, 12000);
}

}  // namespace
}  // namespace goblin
