// ZsetObject: the Collection shell of a sorted-set key. Clone keeps members, scores and form;
// the small form never stores -0 (Redis's listpack writes an integral score as an integer);
// ConvertToLarge and MemoryUsage; a snapshot value whose runs are malformed is refused without
// reading outside them.

#include "core/zset_object.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/value_types.h"
#include "core/zset_tree.h"

namespace goblin {
namespace {

using Elements = std::vector<std::pair<double, std::string>>;

Elements Contents(const SortedSet& set) {
  Elements out;
  set.ForEachInRankRange(0, set.size(), false, [&](double score, std::string_view member) {
    out.emplace_back(score, std::string(member));
  });
  return out;
}

bool SameBits(const Elements& a, const Elements& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].second != b[i].second || a[i].first != b[i].first ||
        std::signbit(a[i].first) != std::signbit(b[i].first)) {
      return false;
    }
  }
  return true;
}

TEST(ZsetObjectTest, SmallFormStoresNegativeZeroAsZero) {
  const ZsetLimits limits;
  SortedSet set;
  EXPECT_TRUE(ZsetObject::Insert(set, -0.0, "a", limits));
  ASSERT_EQ(set.encoding(), SortedSet::Encoding::kListpack);
  EXPECT_FALSE(std::signbit(*set.Score("a")));
  double old = 1;
  EXPECT_FALSE(ZsetObject::Insert(set, -0.0, "a", limits, &old));
  EXPECT_FALSE(std::signbit(old));
  EXPECT_FALSE(std::signbit(*set.Score("a")));
}

TEST(ZsetObjectTest, LargeFormKeepsNegativeZero) {
  const ZsetLimits limits{0, 64};
  SortedSet set(1, 0, limits);
  ZsetObject::Insert(set, -0.0, "a", limits);
  ASSERT_EQ(set.encoding(), SortedSet::Encoding::kSkiplist);
  EXPECT_TRUE(std::signbit(*set.Score("a")));
}

TEST(ZsetObjectTest, NegativeZeroThatConvertsTheSetStaysNegative) {
  // Redis converts first, then inserts into the skiplist the score as given.
  const ZsetLimits limits{2, 64};
  SortedSet set;
  ZsetObject::Insert(set, -0.0, "a", limits);
  ZsetObject::Insert(set, 1, "b", limits);
  ZsetObject::Insert(set, -0.0, "c", limits);
  ASSERT_EQ(set.encoding(), SortedSet::Encoding::kSkiplist);
  EXPECT_FALSE(std::signbit(*set.Score("a")));
  EXPECT_TRUE(std::signbit(*set.Score("c")));
}

TEST(ZsetObjectTest, CloneKeepsContentAndForm) {
  std::mt19937_64 rng(5);
  for (size_t n : {1, 5, 128, 129, 3000}) {
    const ZsetLimits limits;
    auto original = std::make_unique<ZsetObject>();
    for (size_t i = 0; i < n; ++i) {
      const double score =
          (rng() % 3 == 0) ? static_cast<double>(rng() % 10) : (rng() % 100000) / 7.0;
      ZsetObject::Insert(original->set(), score, "member:" + std::to_string(rng() % (2 * n)),
                         limits);
    }
    if (original->set().encoding() == SortedSet::Encoding::kSkiplist) {
      ZsetObject::Insert(original->set(), -0.0, "negative zero", limits);
    }
    std::unique_ptr<Collection> copy(original->Clone());
    const auto& copied = static_cast<const ZsetObject&>(*copy).set();
    EXPECT_EQ(copied.encoding(), original->set().encoding()) << n;
    EXPECT_TRUE(SameBits(Contents(copied), Contents(original->set()))) << n;
    EXPECT_EQ(copied.Validate(), "");
    EXPECT_EQ(copy->EncodingName(), original->EncodingName());
    // The copy is independent of the original.
    ZsetObject::Insert(original->set(), 1e9, "only in the original", limits);
    EXPECT_FALSE(copied.Contains("only in the original"));
  }
}

TEST(ZsetObjectTest, SmallCloneStaysSmallUnderLowerLimits) {
  // A listpack copied by COPY stays a listpack even if the limits have since been lowered.
  auto original = std::make_unique<ZsetObject>();
  for (int i = 0; i < 10; ++i)
    ZsetObject::Insert(original->set(), i, std::to_string(i), ZsetLimits{});
  std::unique_ptr<Collection> copy(original->Clone());
  EXPECT_EQ(copy->EncodingName(), "listpack");
}

TEST(ZsetObjectTest, ConvertToLargeKeepsContent) {
  SortedSet set;
  for (int i = 0; i < 50; ++i)
    ZsetObject::Insert(set, i % 5, "m" + std::to_string(i), ZsetLimits{});
  const Elements before = Contents(set);
  ZsetObject::ConvertToLarge(set);
  EXPECT_EQ(set.encoding(), SortedSet::Encoding::kSkiplist);
  EXPECT_TRUE(SameBits(Contents(set), before));
  EXPECT_EQ(set.Validate(), "");
  // Score 2 holds m12 m17 m2 m22 m27 m32 m37 m42 m47 m7 (byte order), after 20 lower members.
  EXPECT_EQ(*set.Rank("m7"), 29u);
  ZsetObject::ConvertToLarge(set);  // already large: unchanged
  EXPECT_TRUE(SameBits(Contents(set), before));
}

TEST(ZsetObjectTest, MemoryUsageGrowsWithTheSet) {
  auto object = std::make_unique<ZsetObject>();
  const size_t empty = object->MemoryUsage();
  EXPECT_GE(empty, sizeof(ZsetObject));
  // The shell adds its own block (vtable pointer and allocator rounding) to the set's bytes.
  const size_t shell = empty - object->set().MemoryUsage();
  for (int i = 0; i < 1000; ++i) {
    ZsetObject::Insert(object->set(), i, "user:" + std::to_string(i), ZsetLimits{});
  }
  EXPECT_GT(object->MemoryUsage(), empty + 1000 * 8);
  EXPECT_EQ(object->MemoryUsage() - object->set().MemoryUsage(), shell);
}

// The large form copies each run into a leaf while another pass checks it, and the copy's
// first entry used to be read with the varint reader for trusted bytes: a run of 0xff bytes
// (found by the snapshot_loader fuzz target) made it shift past 64 bits and read past the
// leaf. Under the sanitizer build that stopped the test; now the value is refused.
TEST(ZsetObjectTest, SnapshotRunsOfContinuationBytesAreRefused) {
  const std::string garbage(ZsetTree::kLeafPayload, '\xff');
  std::string good_run;
  AppendVar(&good_run, 0);  // one entry: key 0, member "m"
  AppendVar(&good_run, uint64_t{1} << 1);
  good_run += "m";
  for (size_t runs : {1, 2}) {
    std::string value;
    AppendU8(&value, ZsetObject::kSnapshotLarge);
    AppendVar(&value, runs);  // members
    AppendVar(&value, 100);   // longest member: above 64 bytes, so the large form
    AppendVar(&value, runs);
    AppendVar(&value, 1);
    AppendLengthPrefixed(&value, garbage);
    if (runs == 2) {
      // A second run makes the tree grow a root over the first leaf, read the same way.
      AppendVar(&value, 1);
      AppendLengthPrefixed(&value, good_run);
    }
    std::string what;
    EXPECT_EQ(ZsetObject::DecodeSnapshot(value, EncodingLimits{}, &what), nullptr) << runs;
    EXPECT_EQ(what, "sorted set run ends inside an entry") << runs;
  }
}

}  // namespace
}  // namespace goblin
