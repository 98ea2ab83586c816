// Tests of goblin::PackedSet (and IntSet): Redis 7.2's choice and conversion of encodings,
// integer edge cases, and seeded randomized model tests against std::unordered_set through
// growth, shrink and conversion, including SSCAN under modification between calls.

#include "core/packed_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace goblin {
namespace {

std::vector<std::string> Members(const PackedSet& s) {
  std::vector<std::string> out;
  s.ForEach([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

std::multiset<std::string> Sorted(const PackedSet& s) {
  auto m = Members(s);
  return std::multiset<std::string>(m.begin(), m.end());
}

TEST(IntSetTest, SortedWidensAndErases) {
  IntSet s;
  EXPECT_TRUE(s.Insert(5));
  EXPECT_TRUE(s.Insert(-3));
  EXPECT_FALSE(s.Insert(5));
  EXPECT_EQ(s.width(), 2u);
  EXPECT_TRUE(s.Insert(70000));
  EXPECT_EQ(s.width(), 4u);
  EXPECT_TRUE(s.Insert(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(s.width(), 8u);
  EXPECT_TRUE(s.Insert(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(s.size(), 5u);
  const std::vector<int64_t> expected = {std::numeric_limits<int64_t>::min(), -3, 5, 70000,
                                         std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(s.At(i), expected[i]);
  EXPECT_TRUE(s.Contains(70000));
  EXPECT_FALSE(s.Contains(70001));
  EXPECT_TRUE(s.Erase(-3));
  EXPECT_FALSE(s.Erase(-3));
  EXPECT_EQ(s.width(), 8u);  // never narrows, as in Redis
  EXPECT_EQ(s.Validate(), "");
  IntSet copy = s.Clone();
  EXPECT_EQ(copy.size(), 4u);
  for (int64_t v : {std::numeric_limits<int64_t>::min(), int64_t{5}, int64_t{70000},
                    std::numeric_limits<int64_t>::max()}) {
    EXPECT_TRUE(s.Erase(v));
  }
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.MemoryUsage(), 0u);
}

TEST(PackedSetTest, CreationFollowsSetTypeCreate) {
  SetLimits limits;
  EXPECT_STREQ(PackedSet("5", 1, limits).EncodingName(), "intset");
  EXPECT_STREQ(PackedSet("5", 512, limits).EncodingName(), "intset");
  EXPECT_STREQ(PackedSet("5", 513, limits).EncodingName(), "hashtable");
  EXPECT_STREQ(PackedSet("a", 1, limits).EncodingName(), "listpack");
  EXPECT_STREQ(PackedSet("007", 1, limits).EncodingName(), "listpack");
  EXPECT_STREQ(PackedSet("-0", 1, limits).EncodingName(), "listpack");
  EXPECT_STREQ(PackedSet("a", 128, limits).EncodingName(), "listpack");
  EXPECT_STREQ(PackedSet("a", 129, limits).EncodingName(), "hashtable");
  EXPECT_STREQ(PackedSet().EncodingName(), "intset");
  SetLimits small{4, 2, 3};
  EXPECT_STREQ(PackedSet("5", 3, small).EncodingName(), "intset");
  EXPECT_STREQ(PackedSet("a", 3, small).EncodingName(), "hashtable");
  EXPECT_STREQ(PackedSet("5", 5, small).EncodingName(), "hashtable");
}

TEST(PackedSetTest, PrepareForInsertFollowsSetTypeMaybeConvert) {
  SetLimits limits;
  PackedSet ints;
  ints.Add("1", limits);
  ints.PrepareForInsert(512, limits);
  EXPECT_STREQ(ints.EncodingName(), "intset");
  ints.PrepareForInsert(513, limits);
  EXPECT_STREQ(ints.EncodingName(), "hashtable");
  EXPECT_TRUE(ints.Contains("1"));
  PackedSet strings("a", 1, limits);
  strings.Add("a", limits);
  strings.PrepareForInsert(128, limits);
  EXPECT_STREQ(strings.EncodingName(), "listpack");
  strings.PrepareForInsert(129, limits);
  EXPECT_STREQ(strings.EncodingName(), "hashtable");
  EXPECT_TRUE(strings.Contains("a"));
  EXPECT_EQ(strings.Validate(), "");
}

TEST(PackedSetTest, IntsetConvertsAsRedis72) {
  SetLimits limits;
  {
    PackedSet s;
    for (int i = 0; i < 512; ++i) EXPECT_TRUE(s.Add(std::to_string(i * 3 - 700), limits));
    EXPECT_STREQ(s.EncodingName(), "intset");
    EXPECT_FALSE(s.Add("-700", limits));
    EXPECT_TRUE(s.Add("100000", limits));
    EXPECT_STREQ(s.EncodingName(), "hashtable");
    EXPECT_EQ(s.size(), 513u);
    EXPECT_TRUE(s.Contains("-700"));
    EXPECT_EQ(s.Validate(), "");
  }
  {
    // Fewer than 128 integers and a short string: listpack, integers first in ascending order.
    PackedSet s;
    for (int i = 126; i >= 0; --i) s.Add(std::to_string(i), limits);
    EXPECT_TRUE(s.Add("x", limits));
    EXPECT_STREQ(s.EncodingName(), "listpack");
    auto members = Members(s);
    ASSERT_EQ(members.size(), 128u);
    EXPECT_EQ(members[0], "0");
    EXPECT_EQ(members[126], "126");
    EXPECT_EQ(members[127], "x");
    EXPECT_TRUE(s.Add("y", limits));  // the 129th breaks the listpack
    EXPECT_STREQ(s.EncodingName(), "hashtable");
    EXPECT_EQ(s.Validate(), "");
  }
  {
    // 128 integers: not fewer than set-max-listpack-entries, straight to hashtable.
    PackedSet s;
    for (int i = 0; i < 128; ++i) s.Add(std::to_string(i), limits);
    s.Add("x", limits);
    EXPECT_STREQ(s.EncodingName(), "hashtable");
  }
  {
    // A member over set-max-listpack-value.
    PackedSet s;
    s.Add("1", limits);
    s.Add(std::string(65, 'm'), limits);
    EXPECT_STREQ(s.EncodingName(), "hashtable");
  }
  {
    // The intset's widest member, written out, is over the value limit.
    SetLimits narrow{512, 128, 10};
    PackedSet s;
    s.Add("-9223372036854775808", narrow);
    s.Add("a", narrow);
    EXPECT_STREQ(s.EncodingName(), "hashtable");
    PackedSet t;
    t.Add("1234567890", narrow);  // 10 characters: fits
    t.Add("a", narrow);
    EXPECT_STREQ(t.EncodingName(), "listpack");
  }
}

TEST(PackedSetTest, ListpackConvertsAsRedis) {
  SetLimits limits;
  PackedSet s("a", 1, limits);
  for (int i = 0; i < 128; ++i) s.Add("m" + std::to_string(i), limits);
  EXPECT_STREQ(s.EncodingName(), "listpack");
  EXPECT_FALSE(s.Add("m5", limits));
  s.Add("5", limits);  // integers stay in the listpack as integers
  EXPECT_STREQ(s.EncodingName(), "hashtable");
  PackedSet t("a", 1, limits);
  t.Add(std::string(64, 'v'), limits);
  EXPECT_STREQ(t.EncodingName(), "listpack");
  t.Add(std::string(65, 'v'), limits);
  EXPECT_STREQ(t.EncodingName(), "hashtable");
  // Never back.
  for (const auto& m : Members(t)) t.Remove(m);
  EXPECT_STREQ(t.EncodingName(), "hashtable");
  EXPECT_EQ(t.size(), 0u);
}

TEST(PackedSetTest, IntegerEdgeCasesStayDistinct) {
  SetLimits limits;
  for (bool large : {false, true}) {
    PackedSet s("a", large ? 1000 : 1, limits);
    const std::vector<std::string> members = {"0",
                                              "-0",
                                              "00",
                                              "007",
                                              "7",
                                              "+7",
                                              "-9223372036854775808",
                                              "9223372036854775807",
                                              "9223372036854775808",
                                              "99999999999999999999",
                                              "",
                                              std::string("\0", 1),
                                              std::string("7\0", 2)};
    for (const auto& m : members) EXPECT_TRUE(s.Add(m, limits)) << m;
    for (const auto& m : members) EXPECT_FALSE(s.Add(m, limits)) << m;
    EXPECT_EQ(s.size(), members.size());
    EXPECT_EQ(Sorted(s), std::multiset<std::string>(members.begin(), members.end()));
    EXPECT_FALSE(s.Contains("-00"));
    EXPECT_FALSE(s.Contains("70"));
    EXPECT_EQ(s.Validate(), "");
  }
}

class MemberSource {
 public:
  MemberSource(uint64_t seed, size_t pool, int integer_percent)
      : rng_(seed), pool_(pool), integer_percent_(integer_percent) {}
  std::string Member() {
    const uint64_t n = rng_() % pool_;
    if (static_cast<int>(rng_() % 100) < integer_percent_) {
      // Integers of every width, both signs.
      return std::to_string(static_cast<int64_t>(n * 0x9E3779B97F4A7C15ULL) >> (n % 64));
    }
    switch (n % 5) {
      case 0:
        return "user:" + std::to_string(n);
      case 1:
        return "0" + std::to_string(n);
      case 2:
        return std::string("\0b", 2) + std::to_string(n);
      case 3:
        return n % 50 == 3 ? std::string() : std::string(n % 90, 'a' + n % 26);
      default:
        return n % 97 == 4 ? std::string(2100 + n % 100, 'J') : "m" + std::to_string(n);
    }
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  size_t pool_;
  int integer_percent_;
};

void ExpectSame(const PackedSet& s, const std::unordered_set<std::string>& model) {
  ASSERT_EQ(s.size(), model.size());
  ASSERT_EQ(s.Validate(), "");
  const auto members = Members(s);
  ASSERT_EQ(members.size(), model.size());
  std::unordered_set<std::string> seen;
  for (const auto& m : members) {
    ASSERT_TRUE(seen.insert(m).second) << "listed twice: " << m;
    ASSERT_TRUE(model.count(m)) << m;
  }
}

void RunModel(uint64_t seed, SetLimits limits, size_t pool, int integer_percent, size_t steps,
              size_t grow_steps) {
  MemberSource source(seed, pool, integer_percent);
  auto& rng = source.rng();
  PackedSet s;
  std::unordered_set<std::string> model;
  uint64_t random_state = seed * 7;
  bool created = false;
  for (size_t step = 0; step < steps; ++step) {
    const bool growing = step < grow_steps;
    const uint64_t op = rng() % 100;
    const std::string m = source.Member();
    if (!created) {
      s = PackedSet(m, 1 + rng() % 4, limits);
      created = true;
    }
    if (op < (growing ? 60u : 20u)) {
      ASSERT_EQ(s.Add(m, limits), model.insert(m).second) << m;
    } else if (op < 85) {
      ASSERT_EQ(s.Remove(m), model.erase(m) == 1) << m;
    } else if (op < 93) {
      ASSERT_EQ(s.Contains(m), model.count(m) == 1) << m;
    } else if (op < 95) {
      std::string popped;
      const bool popped_one = s.PopRandom(&random_state, &popped);
      ASSERT_EQ(popped_one, !model.empty());
      if (popped_one) {
        ASSERT_EQ(model.erase(popped), 1u) << popped;
      }
    } else if (op < 99 && !model.empty()) {
      const size_t count = rng() % 30;
      std::unordered_set<std::string> seen;
      s.RandomDistinct(count, &random_state, [&](std::string_view r) {
        ASSERT_TRUE(seen.insert(std::string(r)).second);
        ASSERT_TRUE(model.count(std::string(r)));
      });
      ASSERT_EQ(seen.size(), std::min(count, model.size()));
      size_t calls = 0;
      s.RandomWithRepetition(count, &random_state, [&](std::string_view r) {
        ++calls;
        ASSERT_TRUE(model.count(std::string(r)));
      });
      ASSERT_EQ(calls, count);
    } else if (op == 99 && rng() % 8 == 0) {
      s.Optimize();
    }
    ASSERT_EQ(s.size(), model.size());
    if (step % 997 == 0) ExpectSame(s, model);
  }
  ExpectSame(s, model);
}

TEST(PackedSetModelTest, IntegersOnlyStayIntset) { RunModel(1, SetLimits{}, 400, 100, 8000, 4000); }
TEST(PackedSetModelTest, MostlyIntegersConvertThroughListpack) {
  RunModel(2, SetLimits{}, 5000, 90, 30000, 20000);
}
TEST(PackedSetModelTest, StringsGrowAndShrink) {
  RunModel(3, SetLimits{}, 40000, 10, 80000, 55000);
}
TEST(PackedSetModelTest, TinyLimits) {
  for (uint64_t seed = 10; seed < 18; ++seed) {
    RunModel(seed, SetLimits{6, 4, 5}, 2000, 50, 6000, 4000);
  }
}

TEST(PackedSetTest, PopRandomEmptiesEveryForm) {
  SetLimits limits;
  for (int form = 0; form < 3; ++form) {
    PackedSet s =
        form == 0 ? PackedSet() : PackedSet(form == 1 ? "a" : "b", form == 1 ? 1 : 1000, limits);
    std::unordered_set<std::string> model;
    const int n = form == 2 ? 5000 : 100;
    for (int i = 0; i < n; ++i) {
      const std::string m = form == 0 ? std::to_string(i * 17 - 800) : "p" + std::to_string(i);
      s.Add(m, limits);
      model.insert(m);
    }
    const std::string encoding = s.EncodingName();
    uint64_t state = 3;
    std::string out;
    while (s.PopRandom(&state, &out)) ASSERT_EQ(model.erase(out), 1u) << out;
    EXPECT_TRUE(model.empty());
    EXPECT_EQ(s.size(), 0u);
    EXPECT_EQ(s.EncodingName(), encoding);
    EXPECT_EQ(s.Validate(), "");
  }
}

void ScanUnderChurn(uint64_t seed, size_t start_size, size_t end_size, size_t count_hint) {
  std::mt19937_64 rng(seed);
  SetLimits limits;
  PackedSet s("x", 100000, limits);
  std::unordered_set<std::string> present, ever;
  size_t next_id = 0;
  auto add = [&] {
    const std::string m =
        next_id % 2 ? std::to_string(next_id * 104729) : "scan:" + std::to_string(next_id);
    ++next_id;
    s.Add(m, limits);
    present.insert(m);
    ever.insert(m);
  };
  for (size_t i = 0; i < start_size; ++i) add();
  std::unordered_set<std::string> whole_scan = present;
  std::unordered_map<std::string, int> reported;
  const size_t budget = 1 + start_size / std::max<size_t>(count_hint, 1);
  uint64_t cursor = 0;
  size_t calls = 0;
  do {
    cursor = s.Scan(cursor, count_hint, [&](std::string_view m) { ++reported[std::string(m)]; });
    ++calls;
    const double progress = double(std::min(calls, budget)) / double(budget);
    const auto target = static_cast<size_t>(double(start_size) +
                                            (double(end_size) - double(start_size)) * progress);
    const size_t changes = 1 + rng() % (2 * (start_size / budget + 50));
    for (size_t i = 0; i < changes; ++i) {
      if (present.size() < target || (rng() % 4 == 0 && present.size() <= target)) {
        add();
      } else if (!present.empty()) {
        auto it = present.begin();
        std::advance(it, static_cast<long>(rng() % std::min<size_t>(present.size(), 16)));
        s.Remove(*it);
        whole_scan.erase(*it);
        present.erase(it);
      }
    }
    ASSERT_LT(calls, 10 * (start_size + end_size) + 100) << "scan does not end";
  } while (cursor != 0);
  ASSERT_EQ(s.Validate(), "");
  for (const auto& m : whole_scan) {
    auto it = reported.find(m);
    ASSERT_TRUE(it != reported.end()) << "missed " << m;
    ASSERT_EQ(it->second, 1) << "reported twice: " << m;
  }
  for (const auto& [m, n] : reported) ASSERT_TRUE(ever.count(m)) << "never present: " << m;
}

TEST(PackedSetScanTest, GrowingSet) { ScanUnderChurn(31, 1000, 50000, 10); }
TEST(PackedSetScanTest, ShrinkingSet) { ScanUnderChurn(32, 50000, 500, 10); }
TEST(PackedSetScanTest, SteadySetCountOne) { ScanUnderChurn(33, 5000, 5000, 1); }

TEST(PackedSetScanTest, ArbitraryCursorsNeverLoop) {
  SetLimits limits;
  PackedSet s("x", 1000, limits);
  for (int i = 0; i < 20000; ++i) s.Add("c" + std::to_string(i), limits);
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 50; ++trial) {
    uint64_t cursor = rng();
    const uint64_t first = cursor;
    size_t calls = 0;
    while (cursor != 0) {
      const uint64_t next = s.Scan(cursor, 10, [](std::string_view) {});
      ASSERT_TRUE(next == 0 || next > cursor) << first;
      cursor = next;
      ASSERT_LT(++calls, 5000u);
    }
  }
}

TEST(PackedSetTest, DumpRestoreRoundTripsEveryForm) {
  SetLimits limits;
  for (int n : {0, 1, 100, 512, 513, 30000}) {
    for (bool strings : {false, true}) {
      PackedSet s = strings ? PackedSet("s", 1, limits) : PackedSet();
      for (int i = 0; i < n; ++i) {
        s.Add(strings && i % 2 ? "s" + std::to_string(i) : std::to_string(i * 7 - 5000), limits);
      }
      std::string dump;
      s.Dump(&dump);
      PackedSet back;
      ASSERT_TRUE(PackedSet::Restore(dump, &back)) << n;
      EXPECT_STREQ(back.EncodingName(), s.EncodingName());
      EXPECT_EQ(Sorted(back), Sorted(s));
      EXPECT_EQ(back.Validate(), "");
      PackedSet copy = s.Clone();
      EXPECT_STREQ(copy.EncodingName(), s.EncodingName());
      EXPECT_EQ(Sorted(copy), Sorted(s));
      if (n <= 100) {
        for (size_t cut = 0; cut < dump.size(); ++cut) {
          EXPECT_FALSE(PackedSet::Restore(dump.substr(0, cut), &back)) << cut;
        }
      }
    }
  }
  // An intset dump must hold ascending integers.
  std::string bad = {3, 2, static_cast<char>(0x95), static_cast<char>(0x92)};  // 4, then 1
  PackedSet back;
  EXPECT_FALSE(PackedSet::Restore(bad, &back));
}

TEST(PackedSetTest, SmallFormsScanEverythingAndReportStats) {
  SetLimits limits;
  PackedSet ints;
  PackedSet strings("a", 1, limits);
  for (int i = 0; i < 50; ++i) {
    ints.Add(std::to_string(i * 100), limits);
    strings.Add("s" + std::to_string(i), limits);
  }
  for (PackedSet* s : {&ints, &strings}) {
    size_t n = 0;
    EXPECT_EQ(s->Scan(777, 5, [&](std::string_view) { ++n; }), 0u);
    EXPECT_EQ(n, 50u);
    const PackedStats stats = s->Stats();
    EXPECT_EQ(stats.size, 50u);
    EXPECT_EQ(stats.bytes, s->MemoryUsage());
    EXPECT_GT(stats.fill, 0.5);
    EXPECT_LE(stats.fill, 1.0);
  }
  EXPECT_STREQ(ints.Stats().layout, "intset");
  EXPECT_STREQ(ints.Stats().encoding, "intset");
  EXPECT_EQ(ints.Stats().payload_bytes, 100u);  // 50 two-byte values
  EXPECT_STREQ(strings.Stats().layout, "packed-run");
  EXPECT_STREQ(strings.Stats().encoding, "listpack");
  // Moved-from sets are empty and usable.
  PackedSet moved = std::move(strings);
  EXPECT_EQ(moved.size(), 50u);
  EXPECT_EQ(strings.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(strings.Add("again", limits));
}

TEST(PackedSetTest, MembersOfUserIdsCostUnderTwentyBytes) {
  SetLimits limits;
  PackedSet s("user:00000000", 1, limits);
  constexpr int kMembers = 300000;
  char m[32];
  for (int i = 0; i < kMembers; ++i) {
    std::snprintf(m, sizeof(m), "user:%08d", static_cast<int>((int64_t{i} * 7919) % kMembers));
    s.Add(m, limits);
  }
  EXPECT_EQ(s.size(), static_cast<size_t>(kMembers));
  EXPECT_LT(double(s.MemoryUsage()) / kMembers, 20.0);
  PackedSet ids;
  for (int i = 0; i < kMembers; ++i) ids.Add(std::to_string(10000001 + i), limits);
  EXPECT_STREQ(ids.EncodingName(), "hashtable");
  EXPECT_LT(double(ids.MemoryUsage()) / kMembers, 12.0);
  const PackedStats stats = ids.Stats();
  EXPECT_STREQ(stats.layout, "paged-table");
  EXPECT_EQ(stats.payload_bytes, 4u * kMembers);
}

}  // namespace
}  // namespace goblin
