// Randomized model tests of goblin::SortedSet against std::set + std::unordered_map, plus the
// corner cases of Redis's ordering (ties, -0.0, infinities, binary and empty members).

#include "core/sorted_set.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace goblin {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Same bits, not just equal: -0.0 must come back as -0.0.
bool SameScore(double a, double b) { return std::signbit(a) == std::signbit(b) && a == b; }

TEST(ZsetPackedTest, ScoreKeysPreserveOrderAndRoundTrip) {
  const std::vector<double> scores = {
      -kInf,     -1e308, -1.5,     -std::numeric_limits<double>::min(),
      -4.9e-324, 0.0,    4.9e-324, 1e-300,
      0.5,       1.0,    3.25,     1e6,
      1e308,     kInf};
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_TRUE(SameScore(KeyToScore(ScoreToKey(scores[i]), false), scores[i])) << scores[i];
    if (i > 0) {
      EXPECT_LT(ScoreToKey(scores[i - 1]), ScoreToKey(scores[i])) << scores[i];
    }
  }
  EXPECT_EQ(ScoreToKey(-0.0), ScoreToKey(0.0));
  EXPECT_TRUE(SameScore(KeyToScore(ScoreToKey(-0.0), true), -0.0));
}

// The model: what Redis would hold.
class Model {
 public:
  using Set = std::set<std::pair<double, std::string>>;

  bool Insert(double score, const std::string& member, double* old) {
    auto it = scores_.find(member);
    if (it != scores_.end()) {
      *old = it->second;
      set_.erase({it->second, member});
      it->second = score;
      set_.insert({score, member});
      return false;
    }
    scores_[member] = score;
    set_.insert({score, member});
    return true;
  }
  // REQUIRES: sorted, distinct members, model empty. Linear, unlike one insert at a time.
  void BulkLoad(const std::vector<std::pair<double, std::string>>& sorted) {
    scores_.reserve(sorted.size());
    for (const auto& e : sorted) {
      set_.insert(set_.end(), e);
      scores_.emplace(e.second, e.first);
    }
  }
  bool Erase(const std::string& member) {
    auto it = scores_.find(member);
    if (it == scores_.end()) return false;
    set_.erase({it->second, member});
    scores_.erase(it);
    return true;
  }
  void EraseRanks(size_t start, size_t stop) {
    auto first = std::next(set_.begin(), static_cast<ptrdiff_t>(start));
    auto last = std::next(first, static_cast<ptrdiff_t>(stop - start));
    for (auto it = first; it != last; ++it) scores_.erase(it->second);
    set_.erase(first, last);
  }
  size_t CountBelowScore(double s, bool inclusive) const {
    size_t n = 0;
    for (const auto& [score, member] : set_) {
      if (inclusive ? score > s : score >= s) break;
      ++n;
    }
    return n;
  }
  // For sets whose scores are all equal, lex order is set order.
  size_t CountBelowMember(const std::string& m, bool inclusive) const {
    size_t n = 0;
    for (const auto& [score, member] : set_) {
      if (inclusive ? member > m : member >= m) break;
      ++n;
    }
    return n;
  }
  size_t RankOf(const std::string& member) const {
    return static_cast<size_t>(
        std::distance(set_.begin(), set_.find({scores_.at(member), member})));
  }

  const Set& set() const { return set_; }
  const std::unordered_map<std::string, double>& scores() const { return scores_; }
  size_t size() const { return set_.size(); }

 private:
  Set set_;
  std::unordered_map<std::string, double> scores_;
};

std::vector<std::pair<double, std::string>> Dump(const SortedSet& z, size_t start, size_t stop,
                                                 bool reverse) {
  std::vector<std::pair<double, std::string>> out;
  z.ForEachInRankRange(start, stop, reverse, [&](double score, std::string_view member) {
    out.emplace_back(score, std::string(member));
  });
  return out;
}

// Applies random operations to a SortedSet and the model, comparing after each step.
class ModelHarness {
 public:
  struct Options {
    uint64_t seed = 1;
    size_t member_pool = 1000;  // members are drawn from this many names
    int score_spread = 20;      // integer scores in [-spread, spread] (many ties)
    bool equal_scores = false;  // every score 7: lex ranges are defined
    bool odd_members = true;    // binary, empty, long and jumbo members
    // Prepended to every generated member: 8 bytes or more make the inner nodes' member
    // prefixes tie, so the tree must read the members themselves.
    std::string member_prefix;
    bool trailing_nuls = false;   // append 0-2 NULs: "m7" and "m7\0" share a padded prefix
    size_t full_check_every = 1;  // compare everything every this many steps
    ZsetLimits limits;
  };

  explicit ModelHarness(const Options& options) : o_(options), rng_(options.seed) {}

  std::string Member() {
    const uint64_t r = rng_() % 1000;
    if (o_.odd_members && r == 0) return std::string();
    if (o_.odd_members && r == 1) return std::string("\0a\0", 3);
    if (o_.odd_members && r == 2) return std::string(70, 'L');     // over listpack value
    if (o_.odd_members && r == 3) return std::string(1500, 'J');   // jumbo leaf
    if (o_.odd_members && r == 4) return std::string(3000, '\0');  // jumbo, all NULs
    if (o_.odd_members && r < 30) {
      std::string m = "bin";
      m.push_back('\0');
      m.push_back(static_cast<char>(rng_() % 256));
      return m;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "m%zu", static_cast<size_t>(rng_() % o_.member_pool));
    std::string m = o_.member_prefix + buf;
    if (o_.trailing_nuls) m.append(rng_() % 3, '\0');
    return m;
  }

  double Score() {
    if (o_.equal_scores) return 7;
    const uint64_t r = rng_() % 100;
    if (r == 0) return kInf;
    if (r == 1) return -kInf;
    if (r == 2) return -0.0;
    if (r == 3) return 0.0;
    if (r < 10) return static_cast<double>(rng_() % 1000000) / 1000.0;
    return static_cast<double>(static_cast<int64_t>(rng_() % (2 * o_.score_spread + 1)) -
                               o_.score_spread);
  }

  double BoundScore() {
    const uint64_t r = rng_() % 10;
    if (r == 0) return kInf;
    if (r == 1) return -kInf;
    return Score();
  }

  ZsetLexBound LexBound(std::string* storage) {
    ZsetLexBound b;
    const uint64_t r = rng_() % 10;
    if (r == 0) {
      b.kind = ZsetLexBound::Kind::kNegativeInfinity;
    } else if (r == 1) {
      b.kind = ZsetLexBound::Kind::kPositiveInfinity;
    } else {
      b.kind = (r % 2) ? ZsetLexBound::Kind::kInclusive : ZsetLexBound::Kind::kExclusive;
      // Half the time an existing member, so inclusive and exclusive differ.
      *storage =
          (rng_() % 2 && model_.size() > 0)
              ? std::next(model_.set().begin(), static_cast<ptrdiff_t>(rng_() % model_.size()))
                    ->second
              : Member();
      b.member = *storage;
    }
    return b;
  }

  size_t ModelLexLower(const ZsetLexBound& b) const {
    switch (b.kind) {
      case ZsetLexBound::Kind::kNegativeInfinity:
        return 0;
      case ZsetLexBound::Kind::kPositiveInfinity:
        return model_.size();
      case ZsetLexBound::Kind::kInclusive:
        return model_.CountBelowMember(std::string(b.member), false);
      case ZsetLexBound::Kind::kExclusive:
        return model_.CountBelowMember(std::string(b.member), true);
    }
    return 0;
  }
  size_t ModelLexUpper(const ZsetLexBound& b) const {
    switch (b.kind) {
      case ZsetLexBound::Kind::kNegativeInfinity:
        return 0;
      case ZsetLexBound::Kind::kPositiveInfinity:
        return model_.size();
      case ZsetLexBound::Kind::kInclusive:
        return model_.CountBelowMember(std::string(b.member), true);
      case ZsetLexBound::Kind::kExclusive:
        return model_.CountBelowMember(std::string(b.member), false);
    }
    return 0;
  }

  void Step() {
    const uint64_t op = rng_() % 100;
    if (op < 55) {
      const std::string m = Member();
      const double s = Score();
      double old_z = 12345;
      double old_m = 54321;
      const bool added_z = z_.Insert(s, m, o_.limits, &old_z);
      const bool added_m = model_.Insert(s, m, &old_m);
      ASSERT_EQ(added_z, added_m);
      if (!added_m) {
        ASSERT_TRUE(SameScore(old_z, old_m));
      }
    } else if (op < 75) {
      const std::string m = Member();
      ASSERT_EQ(z_.Erase(m), model_.Erase(m));
    } else if (op < 79) {
      auto z = z_.PopMin();
      ASSERT_EQ(z.has_value(), model_.size() > 0);
      if (z) {
        const auto expected = *model_.set().begin();
        ASSERT_TRUE(SameScore(z->first, expected.first));
        ASSERT_EQ(z->second, expected.second);
        model_.Erase(expected.second);
      }
    } else if (op < 83) {
      auto z = z_.PopMax();
      ASSERT_EQ(z.has_value(), model_.size() > 0);
      if (z) {
        const auto expected = *model_.set().rbegin();
        ASSERT_TRUE(SameScore(z->first, expected.first));
        ASSERT_EQ(z->second, expected.second);
        model_.Erase(expected.second);
      }
    } else if (op < 86) {
      // ZREMRANGEBYRANK with a short range, occasionally a long one.
      const size_t n = model_.size();
      if (n == 0) return;
      const size_t start = rng_() % n;
      const size_t len = (rng_() % 20 == 0) ? rng_() % (n - start + 1) : rng_() % 4;
      ASSERT_EQ(z_.EraseRankRange(start, start + len), std::min(len, n - start));
      model_.EraseRanks(start, std::min(start + len, n));
    } else if (op < 88) {
      // ZREMRANGEBYSCORE (rank arithmetic).
      const double a = BoundScore();
      const bool ex = rng_() % 2;
      const size_t lo = z_.ScoreLowerBound(a, ex);
      const size_t hi = z_.ScoreUpperBound(a + static_cast<double>(rng_() % 3), ex);
      if (lo < hi) {
        z_.EraseRankRange(lo, hi);
        model_.EraseRanks(lo, hi);
      }
    } else if (op < 90 && o_.equal_scores) {
      // ZREMRANGEBYLEX (rank arithmetic).
      std::string s1;
      std::string s2;
      const ZsetLexBound a = LexBound(&s1);
      const ZsetLexBound b = LexBound(&s2);
      const size_t lo = z_.LexLowerBound(a);
      const size_t hi = z_.LexUpperBound(b);
      ASSERT_EQ(lo, ModelLexLower(a));
      ASSERT_EQ(hi, ModelLexUpper(b));
      if (lo < hi && hi - lo < 50) {
        z_.EraseRankRange(lo, hi);
        model_.EraseRanks(lo, hi);
      }
    } else {
      // Read-only probes.
      Probe();
    }
    ++steps_;
    if (steps_ % o_.full_check_every == 0) CheckAll();
  }

  // Point queries that cost O(n) in the model; kept cheap for the set.
  void Probe() {
    const size_t n = model_.size();
    ASSERT_EQ(z_.size(), n);
    const std::string m = Member();
    const auto it = model_.scores().find(m);
    const auto score = z_.Score(m);
    const auto rank = z_.Rank(m);
    ASSERT_EQ(score.has_value(), it != model_.scores().end());
    ASSERT_EQ(rank.has_value(), it != model_.scores().end());
    if (score) {
      ASSERT_TRUE(SameScore(*score, it->second));
      ASSERT_EQ(*rank, model_.RankOf(m));
      ASSERT_EQ(*z_.ReverseRank(m), n - 1 - *rank);
    }
    const double a = BoundScore();
    const double b = BoundScore();
    const bool ex_a = rng_() % 2;
    const bool ex_b = rng_() % 2;
    ASSERT_EQ(z_.ScoreLowerBound(a, ex_a), model_.CountBelowScore(a, ex_a));
    ASSERT_EQ(z_.ScoreUpperBound(b, ex_b), model_.CountBelowScore(b, !ex_b));
    if (o_.equal_scores) {
      std::string s1;
      std::string s2;
      const ZsetLexBound la = LexBound(&s1);
      const ZsetLexBound lb = LexBound(&s2);
      ASSERT_EQ(z_.LexLowerBound(la), ModelLexLower(la));
      ASSERT_EQ(z_.LexUpperBound(lb), ModelLexUpper(lb));
    }
    if (n > 0) {
      const size_t r = rng_() % n;
      const auto expected = *std::next(model_.set().begin(), static_cast<ptrdiff_t>(r));
      const ZsetElement e = z_.ElementAt(r);
      ASSERT_TRUE(SameScore(e.score, expected.first));
      ASSERT_EQ(e.member, expected.second);
      // A window of ranks both ways (ZRANGE / ZREVRANGE 0..9 style).
      const size_t stop = r + rng_() % 12;
      const bool reverse = rng_() % 2;
      auto got = Dump(z_, r, stop, reverse);
      std::vector<std::pair<double, std::string>> want(
          std::next(model_.set().begin(), static_cast<ptrdiff_t>(r)),
          std::next(model_.set().begin(), static_cast<ptrdiff_t>(std::min(stop, n))));
      if (reverse) std::reverse(want.begin(), want.end());
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_TRUE(SameScore(got[i].first, want[i].first));
        ASSERT_EQ(got[i].second, want[i].second);
      }
    }
  }

  void CheckAll() {
    ASSERT_EQ(z_.size(), model_.size());
    ASSERT_EQ(z_.Validate(), "");
    const auto all = Dump(z_, 0, z_.size(), false);
    ASSERT_EQ(all.size(), model_.size());
    size_t i = 0;
    for (const auto& [score, member] : model_.set()) {
      ASSERT_TRUE(SameScore(all[i].first, score)) << i;
      ASSERT_EQ(all[i].second, member) << i;
      ++i;
    }
    for (const auto& [member, score] : model_.scores()) {
      const auto s = z_.Score(member);
      ASSERT_TRUE(s.has_value());
      ASSERT_TRUE(SameScore(*s, score));
    }
  }

  void Run(size_t steps) {
    for (size_t i = 0; i < steps; ++i) {
      Step();
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "seed " << o_.seed << " step " << i;
        return;
      }
    }
    CheckAll();
  }

  SortedSet& set() { return z_; }
  Model& model() { return model_; }

 private:
  Options o_;
  std::mt19937_64 rng_;
  SortedSet z_;
  Model model_;
  size_t steps_ = 0;
};

TEST(SortedSetModelTest, SmallFormOnly) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    ModelHarness::Options o;
    o.seed = seed;
    o.member_pool = 60;
    o.odd_members = false;
    ModelHarness h(o);
    h.Run(3000);
    EXPECT_STREQ(h.set().EncodingName(), "listpack");
  }
}

TEST(SortedSetModelTest, CrossesTheThresholdBothWays) {
  // Pools around the 128-entry limit: the set converts mid-run and then shrinks and regrows
  // in the large form.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    ModelHarness::Options o;
    o.seed = seed;
    o.member_pool = 100 + 40 * seed;
    o.full_check_every = 3;
    ModelHarness h(o);
    h.Run(6000);
  }
}

TEST(SortedSetModelTest, ThousandsOfMembers) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    ModelHarness::Options o;
    o.seed = seed * 101;
    o.member_pool = 4000;
    o.full_check_every = 500;
    ModelHarness h(o);
    h.Run(40000);
  }
}

TEST(SortedSetModelTest, TinyListpackLimit) {
  ModelHarness::Options o;
  o.seed = 77;
  o.member_pool = 200;
  o.limits.max_listpack_entries = 4;
  o.limits.max_listpack_value = 8;
  o.full_check_every = 50;
  ModelHarness h(o);
  h.Run(8000);
  EXPECT_STREQ(h.set().EncodingName(), "skiplist");
}

TEST(SortedSetModelTest, ManyMembersShareOneScoreLexRanges) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    ModelHarness::Options o;
    o.seed = seed;
    o.member_pool = seed == 1 ? 100 : 6000;
    o.equal_scores = true;
    o.full_check_every = seed == 1 ? 1 : 1000;
    ModelHarness h(o);
    h.Run(seed == 1 ? 3000 : 20000);
  }
}

TEST(SortedSetModelTest, FewDistinctScoresLongTieRuns) {
  ModelHarness::Options o;
  o.seed = 9;
  o.member_pool = 20000;
  o.score_spread = 1;  // three scores: ties span many leaves
  o.full_check_every = 2000;
  ModelHarness h(o);
  h.Run(30000);
}

TEST(SortedSetModelTest, TiedScoresWithMembersSharingTheirFirstBytes) {
  // Inner nodes order tied children by the first 8 member bytes; here those tie too (a long
  // shared prefix, or members that differ only by trailing NULs), and the members decide.
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    ModelHarness::Options o;
    o.seed = seed;
    o.member_pool = 8000;
    o.score_spread = 1;
    o.odd_members = false;
    if (seed == 1) {
      o.member_prefix = "player:0000";
    } else {
      o.trailing_nuls = true;
    }
    o.full_check_every = 1000;
    ModelHarness h(o);
    h.Run(30000);
  }
}

TEST(SortedSetTest, TiesOrderByMemberBytesShorterFirst) {
  for (size_t limit : {size_t{128}, size_t{0}}) {
    ZsetLimits limits;
    limits.max_listpack_entries = limit;
    SortedSet z;
    const std::vector<std::string> members = {std::string("a\0", 2), "b", "", "a", "ab", "\xff",
                                              std::string("\0", 1),  "aa"};
    for (const auto& m : members) z.Insert(1.0, m, limits);
    const std::vector<std::string> want = {
        "", std::string("\0", 1), "a", std::string("a\0", 2), "aa", "ab", "b", "\xff"};
    auto got = Dump(z, 0, z.size(), false);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i].second, want[i]) << i;
    EXPECT_EQ(*z.Rank(std::string("\0", 1)), 1u);
    EXPECT_EQ(*z.Rank("\xff"), 7u);
    EXPECT_EQ(z.Validate(), "");
  }
}

// A walk whose callback returns bool stops at the first false, in both forms and directions
// (GEOSEARCH ... COUNT n ANY stops scanning a cell at its n-th match).
TEST(SortedSetTest, WalksStopWhenTheCallbackSaysSo) {
  const ZsetLimits limits;
  for (int n : {50, 500}) {
    SortedSet z;
    for (int i = 0; i < n; ++i) z.Insert(i, "m" + std::to_string(i), limits);
    ASSERT_EQ(z.encoding(),
              n <= 128 ? SortedSet::Encoding::kListpack : SortedSet::Encoding::kSkiplist);
    for (bool reverse : {false, true}) {
      std::vector<double> seen;
      z.ForEachInRankRange(10, 40, reverse, [&](double score, std::string_view) {
        seen.push_back(score);
        return seen.size() < 7;
      });
      ASSERT_EQ(seen.size(), 7u);
      EXPECT_EQ(seen.front(), reverse ? 39 : 10);
      EXPECT_EQ(seen.back(), reverse ? 33 : 16);
      size_t all = 0;
      z.ForEachInRankRange(10, 40, reverse, [&](double, std::string_view) { ++all; });
      EXPECT_EQ(all, 30u);
    }
  }
}

TEST(SortedSetTest, NegativeZeroIsKeptAndTiesWithZero) {
  for (size_t limit : {size_t{128}, size_t{0}}) {
    ZsetLimits limits;
    limits.max_listpack_entries = limit;
    SortedSet z;
    z.Insert(0.0, "b", limits);
    z.Insert(-0.0, "a", limits);
    z.Insert(-0.0, "c", limits);
    EXPECT_TRUE(std::signbit(*z.Score("a")));
    EXPECT_FALSE(std::signbit(*z.Score("b")));
    EXPECT_EQ(*z.Rank("a"), 0u);
    EXPECT_EQ(*z.Rank("b"), 1u);
    EXPECT_EQ(*z.Rank("c"), 2u);
    // Zero bounds include both zeros, as `score >= 0` does in Redis.
    EXPECT_EQ(z.ScoreLowerBound(0.0, false), 0u);
    EXPECT_EQ(z.ScoreUpperBound(-0.0, false), 3u);
    EXPECT_EQ(z.ScoreUpperBound(0.0, true), 0u);
    // Changing -0.0 to +0.0 is an update that changes the stored sign.
    double old = 1;
    EXPECT_FALSE(z.Insert(0.0, "a", limits, &old));
    EXPECT_TRUE(std::signbit(old));
    EXPECT_FALSE(std::signbit(*z.Score("a")));
  }
}

TEST(SortedSetTest, InfinitiesAreOrdinaryScores) {
  ZsetLimits limits;
  limits.max_listpack_entries = 0;
  SortedSet z;
  z.Insert(kInf, "top", limits);
  z.Insert(-kInf, "bottom", limits);
  z.Insert(5, "mid", limits);
  EXPECT_EQ(*z.Rank("bottom"), 0u);
  EXPECT_EQ(*z.Rank("top"), 2u);
  EXPECT_EQ(z.ScoreLowerBound(-kInf, false), 0u);
  EXPECT_EQ(z.ScoreLowerBound(-kInf, true), 1u);
  EXPECT_EQ(z.ScoreUpperBound(kInf, false), 3u);
  EXPECT_EQ(z.ScoreUpperBound(kInf, true), 2u);
  EXPECT_EQ(*z.Score("top"), kInf);
}

TEST(SortedSetTest, ConvertsOnEntriesOrValueLength) {
  ZsetLimits limits;
  SortedSet z;
  for (int i = 0; i < 128; ++i) z.Insert(i, "m" + std::to_string(i), limits);
  EXPECT_STREQ(z.EncodingName(), "listpack");
  z.Insert(1000, "m0", limits);  // an update never converts
  EXPECT_STREQ(z.EncodingName(), "listpack");
  z.Insert(0.5, "new", limits);
  EXPECT_STREQ(z.EncodingName(), "skiplist");
  EXPECT_EQ(z.size(), 129u);
  EXPECT_EQ(z.Validate(), "");
  // Redis does not convert back when the set shrinks.
  z.EraseRankRange(0, 120);
  EXPECT_STREQ(z.EncodingName(), "skiplist");

  SortedSet v;
  v.Insert(1, std::string(64, 'x'), limits);
  EXPECT_STREQ(v.EncodingName(), "listpack");
  v.Insert(1, std::string(65, 'x'), limits);
  EXPECT_STREQ(v.EncodingName(), "skiplist");
  EXPECT_EQ(v.size(), 2u);

  SortedSet hinted(200, 10, limits);
  EXPECT_STREQ(hinted.EncodingName(), "skiplist");
  EXPECT_STREQ(hinted.Stats().layout, "bptree");
}

TEST(SortedSetTest, BulkAppendBuildsFullLeavesAndOptimizeRepacks) {
  ZsetLimits limits;
  SortedSet bulk;
  SortedSet grown;
  std::mt19937_64 rng(5);
  std::vector<std::pair<double, std::string>> entries;
  for (int i = 0; i < 50000; ++i) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "user:%08d", i);
    entries.emplace_back(static_cast<double>(rng() % 1000000000) / 1e3, buf);
  }
  for (const auto& [s, m] : entries) grown.Insert(s, m, limits);
  std::sort(entries.begin(), entries.end());
  for (const auto& [s, m] : entries) bulk.AppendSorted(s, m, limits);
  EXPECT_EQ(bulk.Validate(), "");
  EXPECT_GT(bulk.Stats().fill, 0.97);
  EXPECT_EQ(Dump(bulk, 0, bulk.size(), false), Dump(grown, 0, grown.size(), false));
  const ZsetStats before = grown.Stats();
  EXPECT_GT(before.fill, 0.7);
  const size_t saved = grown.Optimize();
  EXPECT_GT(saved, 0u);
  EXPECT_EQ(grown.MemoryUsage() + saved, before.bytes);
  EXPECT_GT(grown.Stats().fill, 0.97);
  EXPECT_EQ(grown.Validate(), "");
  EXPECT_EQ(Dump(bulk, 0, bulk.size(), false), Dump(grown, 0, grown.size(), false));
  // The set stays fully usable after repacking.
  grown.Insert(-1, "first", limits);
  EXPECT_EQ(*grown.Rank("first"), 0u);
  EXPECT_EQ(grown.Validate(), "");
}

TEST(SortedSetTest, AppendsMixWithOtherOperations) {
  ZsetLimits limits;
  SortedSet z;
  Model model;
  double old;
  auto append = [&](double s, const std::string& m) {
    z.AppendSorted(s, m, limits);
    model.Insert(s, m, &old);
  };
  // A load crossing the listpack threshold, read without FinishAppends (the lookup settles
  // the deferred index itself).
  for (int i = 0; i < 5000; ++i) append(i, "a" + std::to_string(i));
  ASSERT_EQ(*z.Score("a4321"), 4321);
  ASSERT_EQ(*z.Rank("a17"), 17u);
  // Mutations between appends invalidate the append cursor.
  ASSERT_TRUE(z.Erase("a4999"));
  model.Erase("a4999");
  ASSERT_EQ(z.EraseRankRange(4990, 5000), 9u);
  model.EraseRanks(4990, 4999);
  for (int i = 5000; i < 6000; ++i) append(i, "b" + std::to_string(i));  // onto a live index
  ASSERT_TRUE(z.Insert(2.5, "middle", limits));
  model.Insert(2.5, "middle", &old);
  for (int i = 6000; i < 6100; ++i)
    append(i, std::string(i % 50 == 0 ? 2000 : 5, 'c') + std::to_string(i));  // with jumbo leaves
  ASSERT_EQ(z.Validate(), "");
  ASSERT_EQ(z.size(), model.size());
  auto got = Dump(z, 0, z.size(), false);
  ASSERT_TRUE(std::equal(got.begin(), got.end(), model.set().begin()));
  for (const auto& [m, sc] : model.scores()) ASSERT_EQ(*z.Score(m), sc);
}

TEST(SortedSetTest, MemoryUsageTracksGrowthAndRelease) {
  ZsetLimits limits;
  SortedSet z;
  const size_t empty = z.MemoryUsage();
  for (int i = 0; i < 100000; ++i) z.Insert(i % 977, "member:" + std::to_string(i), limits);
  const size_t full = z.MemoryUsage();
  // Generous bound for any malloc: the packed data alone is ~16 bytes per member.
  EXPECT_LT(full, 100000u * 40);
  EXPECT_GT(full, 100000u * 16);
  z.EraseRankRange(0, z.size());
  EXPECT_EQ(z.size(), 0u);
  EXPECT_LT(z.MemoryUsage(), full / 20);
  EXPECT_GE(z.MemoryUsage(), empty);
  EXPECT_EQ(z.Validate(), "");
}

// One million members (the `zset` workload), then mixed operations checked periodically.
TEST(SortedSetModelTest, OneMillionMembers) {
  constexpr size_t kN = 1000000;
  ZsetLimits limits;
  SortedSet z;
  Model model;
  std::mt19937_64 rng(2024);
  std::vector<uint32_t> order(kN);
  for (uint32_t i = 0; i < kN; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  auto name = [](uint32_t i) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "user:%08u", i);
    return std::string(buf);
  };
  auto score = [&] { return static_cast<double>(rng() % 1000000000000ULL) / 1e6; };
  std::vector<std::pair<double, std::string>> entries;
  entries.reserve(kN);
  for (uint32_t i : order) entries.emplace_back(score(), name(i));
  for (const auto& [s, m] : entries) ASSERT_TRUE(z.Insert(s, m, limits));
  std::sort(entries.begin(), entries.end());
  model.BulkLoad(entries);
  entries = {};
  ASSERT_EQ(z.size(), kN);
  // Mixed traffic: re-scores, deletes, range deletes, pops.
  for (int step = 0; step < 100000; ++step) {
    const uint64_t op = rng() % 100;
    const std::string m = name(static_cast<uint32_t>(rng() % (kN + kN / 10)));
    if (op < 70) {
      const double s = score();
      double old_z = 0;
      double old_m = 0;
      ASSERT_EQ(z.Insert(s, m, limits, &old_z), model.Insert(s, m, &old_m));
    } else if (op < 95) {
      ASSERT_EQ(z.Erase(m), model.Erase(m));
    } else if (op < 97) {
      ASSERT_EQ(z.PopMin()->second, model.set().begin()->second);
      model.Erase(model.set().begin()->second);
    } else {
      ASSERT_EQ(z.PopMax()->second, model.set().rbegin()->second);
      model.Erase(model.set().rbegin()->second);
    }
    if (step % 25000 == 0) {
      // O(n) model queries, so only now and then.
      const auto s = z.Score(m);
      ASSERT_EQ(s.has_value(), model.scores().count(m) == 1);
      if (s) {
        ASSERT_EQ(*z.Rank(m), model.RankOf(m));
      }
      const double bound = score();
      ASSERT_EQ(z.ScoreLowerBound(bound, false), model.CountBelowScore(bound, false));
    }
  }
  // A range erase in the middle (ZREMRANGEBYRANK 1000 100999).
  ASSERT_EQ(z.EraseRankRange(1000, 101000), 100000u);
  model.EraseRanks(1000, 101000);
  ASSERT_EQ(z.Validate(), "");
  ASSERT_EQ(z.size(), model.size());
  size_t i = 0;
  auto it = model.set().begin();
  bool same = true;
  z.ForEachInRankRange(0, z.size(), false, [&](double s, std::string_view m) {
    same = same && s == it->first && m == it->second;
    ++it;
    ++i;
  });
  ASSERT_TRUE(same);
  ASSERT_EQ(i, model.size());
}

}  // namespace
}  // namespace goblin
