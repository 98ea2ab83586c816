// ZsetMemberIndex alone, against a fake tree: members are bare 64-bit hashes that live in
// numbered leaves. Exercises what the sorted-set tests reach only by chance: many members of
// one leaf sharing a tag, slots whose stored split bits run out, and contraction.

#include "core/zset_member_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

namespace goblin {
namespace {

class FakeLeaves : public ZsetLeafHashes {
 public:
  void HashesInLeaf(uint32_t leaf, std::vector<uint64_t>* hashes) const override {
    auto it = leaves_.find(leaf);
    if (it != leaves_.end()) hashes->insert(hashes->end(), it->second.begin(), it->second.end());
  }
  void Add(uint32_t leaf, uint64_t h) { leaves_[leaf].push_back(h); }
  void Remove(uint32_t leaf, uint64_t h) {
    auto& v = leaves_[leaf];
    v.erase(std::find(v.begin(), v.end(), h));
  }

 private:
  std::unordered_map<uint32_t, std::vector<uint64_t>> leaves_;
};

// Every member is found in exactly its leaf: a probe answers true only for that leaf.
void ExpectAllFound(const ZsetMemberIndex& index,
                    const std::unordered_map<uint64_t, uint32_t>& where) {
  for (const auto& [h, leaf] : where) {
    const uint32_t want = leaf;
    ASSERT_TRUE(index.Find(h, [&](uint32_t l) { return l == want; })) << h;
  }
}

TEST(ZsetMemberIndexTest, GrowsRelocatesRefreshesAndContracts) {
  std::mt19937_64 rng(3);
  ZsetMemberIndex index;
  FakeLeaves leaves;
  std::unordered_map<uint64_t, uint32_t> where;
  // Hashes share their top byte (the tag) in small groups and leaves are few, so slots with
  // the same (tag, leaf) are common and PickSlot must keep the matching intact.
  auto make_hash = [&] { return (rng() & 0x00ffffffffffffffULL) | ((rng() % 4) << 56); };
  for (int i = 0; i < 200000; ++i) {
    const uint64_t h = make_hash();
    if (where.count(h)) continue;
    const uint32_t leaf = static_cast<uint32_t>(rng() % 64);
    leaves.Add(leaf, h);
    where[h] = leaf;
    index.Insert(h, leaf, leaves);
    // Move an existing member now and then, as leaf splits do.
    if (i % 7 == 0) {
      auto it = where.begin();
      std::advance(it, static_cast<long>(rng() % std::min<size_t>(where.size(), 64)));
      const uint32_t to = static_cast<uint32_t>(rng() % 64);
      leaves.Remove(it->second, it->first);
      leaves.Add(to, it->first);
      index.Relocate(it->first, it->second, to);
      it->second = to;
    }
  }
  EXPECT_EQ(index.size(), where.size());
  // 200k members from one segment is a 5000x growth: early slots ran out of stored bits.
  EXPECT_GT(index.refreshed_slots(), 0u);
  ExpectAllFound(index, where);
  // The index stays near its target density: ~5-6 bytes per member.
  EXPECT_LT(index.MemoryUsage(), where.size() * 7);

  // Remove nine in ten: segments merge back.
  const size_t segments = index.segment_count();
  std::vector<uint64_t> all;
  for (const auto& [h, leaf] : where) all.push_back(h);
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % 10 == 0) continue;
    const uint32_t leaf = where[all[i]];
    index.Erase(all[i], leaf);
    leaves.Remove(leaf, all[i]);
    where.erase(all[i]);
  }
  EXPECT_EQ(index.size(), where.size());
  EXPECT_LT(index.segment_count(), segments / 4);
  ExpectAllFound(index, where);
  const size_t before = index.MemoryUsage();
  index.Shrink();
  EXPECT_LE(index.MemoryUsage(), before);
  ExpectAllFound(index, where);

  // And it grows again from there.
  for (int i = 0; i < 50000; ++i) {
    const uint64_t h = make_hash();
    if (where.count(h)) continue;
    const uint32_t leaf = static_cast<uint32_t>(rng() % 64);
    leaves.Add(leaf, h);
    where[h] = leaf;
    index.Insert(h, leaf, leaves);
  }
  ExpectAllFound(index, where);
  EXPECT_EQ(index.size(), where.size());
}

}  // namespace
}  // namespace goblin
