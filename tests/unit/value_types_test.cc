// The value-type registry and the parts of the value-type contract every collection shares:
// snapshot tags that never move, names TYPE reports, and digests that depend on content only.
#include "core/value_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/hash_object.h"
#include "core/set_object.h"
#include "core/value_digest.h"
#include "core/zset_object.h"

namespace goblin {
namespace {

TEST(ValueTypesTest, SnapshotTagsAndNamesAreFixed) {
  // The tags are in every snapshot ever written (docs/FORMAT.md): they must never change.
  const std::map<ValueType, std::pair<std::string_view, uint8_t>> expected = {
      {ValueType::kString, {"string", 0}},
      {ValueType::kList, {"list", 1}},
      {ValueType::kSet, {"set", 2}},
      {ValueType::kZSet, {"zset", 3}},
      {ValueType::kHash, {"hash", 4}},
      {ValueType::kStream, {"stream", 5}}};
  ASSERT_EQ(ValueTypes().size(), expected.size());
  for (const auto& [type, row] : expected) {
    const ValueTypeInfo& info = InfoOf(type);
    EXPECT_EQ(info.type, type);
    EXPECT_EQ(info.name, row.first);
    EXPECT_EQ(info.snapshot_tag, row.second) << row.first;
    EXPECT_EQ(ValueTypeWithSnapshotTag(row.second), &info);
    EXPECT_EQ(ValueTypeNamed(row.first), &info);
    EXPECT_EQ(info.decode_snapshot == nullptr, type == ValueType::kString) << row.first;
  }
  EXPECT_EQ(ValueTypeNamed("ZSet"), &InfoOf(ValueType::kZSet));
  EXPECT_EQ(ValueTypeNamed("none"), nullptr);
  EXPECT_EQ(ValueTypeWithSnapshotTag(7), nullptr);
}

// ---- digests -----------------------------------------------------------------------------------

constexpr ZsetLimits kZsetLimits{128, 64};
constexpr HashLimits kHashLimits{128, 64};
constexpr SetLimits kSetLimits{512, 128, 64};

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string DigestOf(const Collection& value) {
  ValueDigest digest;
  value.Digest(&digest);
  return digest.Hex();
}

std::unique_ptr<Collection> MakeSet(const std::vector<std::string>& members, bool large) {
  PackedSet set(members.front(), members.size(), kSetLimits);
  for (const std::string& member : members) set.Add(member, kSetLimits);
  if (large) set.ConvertToLarge();
  return std::make_unique<SetObject>(std::move(set));
}

std::unique_ptr<Collection> MakeHash(const Pairs& fields, bool large) {
  PackedHash hash;
  for (const auto& [field, value] : fields) hash.Set(field, value, kHashLimits);
  if (large) hash.ConvertToLarge();
  return std::make_unique<HashObject>(std::move(hash));
}

std::unique_ptr<Collection> MakeZset(const std::vector<std::pair<double, std::string>>& members,
                                     bool large) {
  SortedSet set;
  for (const auto& [score, member] : members) {
    ZsetObject::Insert(set, score, member, kZsetLimits);
  }
  if (large) ZsetObject::ConvertToLarge(set);
  return std::make_unique<ZsetObject>(std::move(set));
}

// Seeded random contents, each built twice: in another insertion order and in the other
// encoding. Equal content gives equal digests; one changed element a different one.
class DigestModelTest : public testing::TestWithParam<uint64_t> {
 protected:
  std::mt19937_64 rng{GetParam()};

  std::string Word() {
    std::string word(1 + rng() % 12, 'a');
    for (char& c : word) c = static_cast<char>('a' + rng() % 6);
    return word;
  }
  size_t Size() { return 1 + rng() % (rng() % 2 ? 20 : 300); }
  template <typename T>
  std::vector<T> Shuffled(std::vector<T> items) {
    std::shuffle(items.begin(), items.end(), rng);
    return items;
  }
};

TEST_P(DigestModelTest, SetDigestIsContentOnly) {
  std::set<std::string> unique;
  for (size_t n = Size(); unique.size() < n;) unique.insert(Word() + std::to_string(rng() % 50));
  std::vector<std::string> members(unique.begin(), unique.end());
  const std::string digest = DigestOf(*MakeSet(members, false));
  EXPECT_EQ(DigestOf(*MakeSet(Shuffled(members), true)), digest);
  std::vector<std::string> changed = members;
  changed[rng() % changed.size()] += "!";
  EXPECT_NE(DigestOf(*MakeSet(changed, false)), digest);
  if (members.size() > 1) {
    members.pop_back();
    EXPECT_NE(DigestOf(*MakeSet(members, false)), digest);
  }
}

TEST_P(DigestModelTest, HashDigestIsContentOnly) {
  std::map<std::string, std::string> model;
  for (size_t n = Size(); model.size() < n;) model[Word() + std::to_string(rng() % 50)] = Word();
  Pairs fields(model.begin(), model.end());
  const std::string digest = DigestOf(*MakeHash(fields, false));
  EXPECT_EQ(DigestOf(*MakeHash(Shuffled(fields), true)), digest);
  Pairs changed = fields;
  changed[rng() % changed.size()].second += "!";
  EXPECT_NE(DigestOf(*MakeHash(changed, false)), digest);
  // A field and a value swapping roles is a change too.
  Pairs swapped = fields;
  std::swap(swapped[0].first, swapped[0].second);
  if (swapped[0].first != swapped[0].second && !model.count(swapped[0].first)) {
    EXPECT_NE(DigestOf(*MakeHash(swapped, false)), digest);
  }
}

TEST_P(DigestModelTest, SortedSetDigestIsContentOnly) {
  std::map<std::string, double> model;
  for (size_t n = Size(); model.size() < n;) {
    model[Word() + std::to_string(rng() % 50)] = static_cast<double>(rng() % 100) / 4;
  }
  std::vector<std::pair<double, std::string>> members;
  for (const auto& [member, score] : model) members.emplace_back(score, member);
  const std::string digest = DigestOf(*MakeZset(members, false));
  EXPECT_EQ(DigestOf(*MakeZset(Shuffled(members), true)), digest);
  auto rescored = members;
  rescored[rng() % rescored.size()].first += 0.5;
  EXPECT_NE(DigestOf(*MakeZset(rescored, false)), digest);
  auto renamed = members;
  renamed[rng() % renamed.size()].second += "!";
  EXPECT_NE(DigestOf(*MakeZset(renamed, false)), digest);
}

INSTANTIATE_TEST_SUITE_P(Seeds, DigestModelTest, testing::Range<uint64_t>(1, 41));

TEST(ValueDigestTest, MixIsOrderedAndUnambiguous) {
  ValueDigest ab, ba, joined;
  ab.Mix(std::string_view("a"));
  ab.Mix(std::string_view("b"));
  ba.Mix(std::string_view("b"));
  ba.Mix(std::string_view("a"));
  joined.Mix(std::string_view("ab"));
  EXPECT_NE(ab.Hex(), ba.Hex());
  EXPECT_NE(ab.Hex(), joined.Hex());
  ValueDigest zero, negative_zero;
  zero.Mix(0.0);
  negative_zero.Mix(-0.0);
  EXPECT_NE(zero.Hex(), negative_zero.Hex());
  EXPECT_TRUE(ValueDigest().zero());
  EXPECT_EQ(ValueDigest().Hex(), std::string(40, '0'));
  EXPECT_FALSE(ab.zero());
}

}  // namespace
}  // namespace goblin
