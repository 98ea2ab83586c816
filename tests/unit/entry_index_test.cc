// Tests of goblin::EntryIndex alone, against a fake owner that knows each entry's hash: seeded
// randomized model tests against std::unordered_map through splits and merges, SCAN's
// guarantee while the table grows and shrinks between calls, Random's spread, BulkLoad, and
// segments that outgrow their main block (keys agreeing on many low hash bits).

#include "core/entry_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace goblin {
namespace {

// The entries the index points at: each ref's hash, as the pages would hold it.
class FakeOwner : public EntryIndexOwner {
 public:
  uint64_t HashAt(EntryRef ref) const override {
    const auto it = hashes_.find(ref);
    // An index that reads an entry nobody holds is broken; say so instead of crashing.
    EXPECT_NE(it, hashes_.end()) << "read of a dead entry " << ref;
    return it == hashes_.end() ? 0 : it->second;
  }
  void PrefetchAt(EntryRef) const override {}

  // A fresh ref in hash's chain (offsets are never reused, so every ref is unique).
  EntryRef Add(uint64_t hash) {
    const EntryRef ref = MakeEntryRef(ChainOfHash(hash), next_offset_++);
    hashes_[ref] = hash;
    position_[ref] = refs_.size();
    refs_.push_back(ref);
    return ref;
  }
  void Remove(EntryRef ref) {
    hashes_.erase(ref);
    const size_t at = position_.at(ref);
    position_.erase(ref);
    if (at + 1 != refs_.size()) {
      refs_[at] = refs_.back();
      position_[refs_[at]] = at;
    }
    refs_.pop_back();
  }
  const std::unordered_map<EntryRef, uint64_t>& hashes() const { return hashes_; }
  size_t size() const { return hashes_.size(); }
  // The i-th live ref, in no particular order (a random pick when i is random).
  EntryRef RefAt(size_t i) const { return refs_[i]; }

 private:
  std::unordered_map<EntryRef, uint64_t> hashes_;
  std::vector<EntryRef> refs_;
  std::unordered_map<EntryRef, size_t> position_;  // index of each ref in refs_
  uint32_t next_offset_ = 1;
};

// True when Find(hash) offers ref to its probe.
bool Finds(const EntryIndex& index, uint64_t hash, EntryRef ref) {
  return index.Find(hash, [&](EntryRef candidate) { return candidate == ref; });
}

// The index's refs (ForEach) equal the owner's, each once.
void ExpectSameEntries(const EntryIndex& index, const FakeOwner& owner) {
  std::vector<EntryRef> seen;
  index.ForEach([&](EntryRef ref) { seen.push_back(ref); });
  std::vector<EntryRef> expected;
  for (const auto& [ref, hash] : owner.hashes()) expected.push_back(ref);
  std::sort(seen.begin(), seen.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(seen, expected);
  EXPECT_EQ(index.size(), owner.size());
}

// Inserts n entries of random hashes into both.
void InsertRandom(EntryIndex* index, FakeOwner* owner, std::mt19937_64* rng, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t hash = (*rng)();
    index->Insert(hash, owner->Add(hash));
  }
}

// Erases random entries from both until `keep` remain.
void EraseRandomDownTo(EntryIndex* index, FakeOwner* owner, std::mt19937_64* rng, size_t keep) {
  while (owner->size() > keep) {
    const EntryRef ref = owner->RefAt((*rng)() % owner->size());
    index->Erase(owner->hashes().at(ref), ref);
    owner->Remove(ref);
  }
}

TEST(EntryIndexTest, EmptyIndex) {
  FakeOwner owner;
  EntryIndex index(&owner);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.segment_count(), 1u);
  EXPECT_FALSE(Finds(index, 12345, MakeEntryRef(ChainOfHash(12345), 1)));
  std::vector<EntryRef> out;
  EXPECT_EQ(index.Scan(0, 10, &out), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_GT(index.MemoryUsage(), 0u);
  EXPECT_EQ(index.Validate(), "");
}

TEST(EntryIndexTest, InsertFindReplaceErase) {
  FakeOwner owner;
  EntryIndex index(&owner);
  const uint64_t hash = 0x0123456789abcdefULL;
  const EntryRef ref = owner.Add(hash);
  index.Insert(hash, ref);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_TRUE(Finds(index, hash, ref));
  // Another hash with the same low bits but a different tag is not offered.
  EXPECT_FALSE(index.Find(hash ^ (uint64_t{1} << 5), [](EntryRef) { return true; }));

  const EntryRef moved = owner.Add(hash);
  index.Replace(hash, ref, moved);
  owner.Remove(ref);
  EXPECT_FALSE(Finds(index, hash, ref));
  EXPECT_TRUE(Finds(index, hash, moved));
  EXPECT_EQ(index.Validate(), "");

  index.Erase(hash, moved);
  owner.Remove(moved);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(Finds(index, hash, moved));
  EXPECT_EQ(index.Validate(), "");
}

TEST(EntryIndexTest, EqualHashesAreAllOffered) {
  // Distinct keys whose 64-bit hashes collide: Find must offer every one of them.
  FakeOwner owner;
  EntryIndex index(&owner);
  const uint64_t hash = 0xfeedfacecafebeefULL;
  std::vector<EntryRef> refs;
  for (int i = 0; i < 40; ++i) {
    refs.push_back(owner.Add(hash));
    index.Insert(hash, refs.back());
  }
  std::unordered_set<EntryRef> offered;
  index.Find(hash, [&](EntryRef ref) {
    offered.insert(ref);
    return false;
  });
  EXPECT_EQ(offered, std::unordered_set<EntryRef>(refs.begin(), refs.end()));
  for (EntryRef ref : refs) EXPECT_TRUE(Finds(index, hash, ref));
  for (size_t i = 0; i < refs.size(); i += 2) {
    index.Erase(hash, refs[i]);
    owner.Remove(refs[i]);
  }
  for (size_t i = 0; i < refs.size(); ++i) EXPECT_EQ(Finds(index, hash, refs[i]), i % 2 == 1);
  EXPECT_EQ(index.Validate(), "");
}

TEST(EntryIndexTest, SplitsAsItGrowsAndMergesAsItShrinks) {
  FakeOwner owner;
  EntryIndex index(&owner);
  std::mt19937_64 rng(7);
  const size_t n = 20 * EntryIndex::kTargetPerSegment + 1;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t hash = rng();
    index.Insert(hash, owner.Add(hash));
    // Linear hashing: never more elements than kTargetPerSegment per segment on average.
    ASSERT_LE(index.size(), EntryIndex::kTargetPerSegment * index.segment_count());
  }
  EXPECT_EQ(index.segment_count(), 21u);
  EXPECT_EQ(index.Validate(), "");
  while (owner.size() > 1) {
    const EntryRef ref = owner.RefAt(rng() % owner.size());
    index.Erase(owner.hashes().at(ref), ref);
    owner.Remove(ref);
    // Below half the target per segment, the last split is undone.
    if (index.segment_count() > 1) {
      ASSERT_GE(index.size(), EntryIndex::kTargetPerSegment / 2 * index.segment_count());
    }
  }
  EXPECT_EQ(index.segment_count(), 1u);
  EXPECT_EQ(index.Validate(), "");
  ExpectSameEntries(index, owner);
}

TEST(EntryIndexTest, CrowdedSegmentGrowsATailAndShrinksBack) {
  // Keys agreeing on their low 24 hash bits all land in one segment however the table splits:
  // the segment outgrows single size classes and takes main + tail blocks.
  FakeOwner owner;
  EntryIndex index(&owner);
  std::mt19937_64 rng(11);
  const uint64_t low = 0xabcdef;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t hash = (rng() << 24) | low;
    index.Insert(hash, owner.Add(hash));
    if (i % 500 == 0) {
      ASSERT_EQ(index.Validate(), "") << i;
    }
  }
  // Spread keys too, so that the table splits around the crowded segment.
  InsertRandom(&index, &owner, &rng, 3000);
  EXPECT_EQ(index.Validate(), "");
  EXPECT_GT(index.segment_count(), 8u);
  ExpectSameEntries(index, owner);
  // Slack stays small: within 2% plus the minimum blocks.
  EXPECT_LT(index.slot_capacity(), index.size() + index.size() / 50 + 64 * index.segment_count());
  for (const auto& [ref, hash] : owner.hashes()) ASSERT_TRUE(Finds(index, hash, ref));
  // Drain the crowded keys first: their segment shrinks block by block.
  std::vector<EntryRef> crowded;
  for (const auto& [ref, hash] : owner.hashes()) {
    if ((hash & 0xffffff) == low) crowded.push_back(ref);
  }
  for (size_t i = 0; i < crowded.size(); ++i) {
    index.Erase(owner.hashes().at(crowded[i]), crowded[i]);
    owner.Remove(crowded[i]);
    if (i % 300 == 0) {
      ASSERT_EQ(index.Validate(), "") << i;
    }
  }
  EXPECT_EQ(index.Validate(), "");
  ExpectSameEntries(index, owner);
  EXPECT_LT(index.slot_capacity(), index.size() + index.size() / 8 + 64 * index.segment_count());
}

// One seeded run of random inserts, erases, replaces and lookups, checked against the owner.
void RunModel(uint64_t seed, int steps) {
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  FakeOwner owner;
  EntryIndex index(&owner);
  // Phases of growth and shrinkage, so splits and merges both happen many times.
  int grow_percent = 70;
  // Few distinct low bits now and then: keys pile into a few segments.
  auto make_hash = [&] {
    const uint64_t h = rng();
    return rng() % 8 == 0 ? (h & ~uint64_t{0xfff}) | (rng() % 3) : h;
  };
  for (int step = 0; step < steps; ++step) {
    if (step % 4000 == 0) grow_percent = grow_percent == 70 ? 30 : 70;
    const unsigned op = static_cast<unsigned>(rng() % 100);
    if (owner.size() == 0 || op < static_cast<unsigned>(grow_percent)) {
      const uint64_t hash = make_hash();
      const EntryRef ref = owner.Add(hash);
      index.Insert(hash, ref);
      ASSERT_TRUE(Finds(index, hash, ref)) << "step " << step;
    } else if (op < 90) {
      const EntryRef ref = owner.RefAt(rng() % owner.size());
      const uint64_t hash = owner.hashes().at(ref);
      index.Erase(hash, ref);
      owner.Remove(ref);
      ASSERT_FALSE(Finds(index, hash, ref)) << "step " << step;
    } else {
      const EntryRef ref = owner.RefAt(rng() % owner.size());
      const uint64_t hash = owner.hashes().at(ref);
      const EntryRef moved = owner.Add(hash);
      index.Replace(hash, ref, moved);
      owner.Remove(ref);
      ASSERT_FALSE(Finds(index, hash, ref)) << "step " << step;
      ASSERT_TRUE(Finds(index, hash, moved)) << "step " << step;
    }
    ASSERT_EQ(index.size(), owner.size()) << "step " << step;
    // Every candidate Find offers is a live entry (the owner checks reads too).
    if (owner.size() > 0) {
      const EntryRef probe_ref = owner.RefAt(rng() % owner.size());
      const uint64_t probe_hash = owner.hashes().at(probe_ref);
      bool found = false;
      index.Find(probe_hash, [&](EntryRef candidate) {
        EXPECT_TRUE(owner.hashes().count(candidate)) << "step " << step;
        found = found || candidate == probe_ref;
        return false;
      });
      ASSERT_TRUE(found) << "step " << step;
    }
    if (step % 1000 == 999) {
      ASSERT_EQ(index.Validate(), "") << "step " << step;
      ExpectSameEntries(index, owner);
      for (const auto& [ref, hash] : owner.hashes()) {
        ASSERT_TRUE(Finds(index, hash, ref)) << "step " << step;
      }
    }
  }
}

TEST(EntryIndexTest, RandomizedModel) {
  for (uint64_t seed : {1, 2, 3, 4}) RunModel(seed, 24000);
}

// Scans the whole index with `count` per call, calling between_calls after each call; returns
// every ref reported, in order. Fails if the scan does not end within a generous bound.
template <typename BetweenCalls>
std::vector<EntryRef> FullScan(const EntryIndex& index, size_t count, BetweenCalls between_calls) {
  std::vector<EntryRef> reported;
  uint64_t cursor = 0;
  for (int calls = 0;; ++calls) {
    EXPECT_LT(calls, 1000000) << "scan does not end";
    if (calls >= 1000000) break;
    std::vector<EntryRef> out;
    const uint64_t next = index.Scan(cursor, count, &out);
    // A call that continues reported at least `count` entries.
    if (next != 0) {
      EXPECT_GE(out.size(), count) << "cursor " << cursor;
    }
    reported.insert(reported.end(), out.begin(), out.end());
    between_calls(out);
    if (next == 0) break;
    EXPECT_GT(next, cursor) << "cursor went backwards";
    cursor = next;
  }
  return reported;
}

TEST(EntryIndexTest, ScanOfAQuietTableReportsEachEntryOnce) {
  std::mt19937_64 rng(5);
  for (size_t n : {1, 7, 256, 257, 3000, 20000}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    FakeOwner owner;
    EntryIndex index(&owner);
    InsertRandom(&index, &owner, &rng, n);
    for (size_t count : {1, 10, 100, 100000}) {
      std::vector<EntryRef> reported = FullScan(index, count, [](const std::vector<EntryRef>&) {});
      std::sort(reported.begin(), reported.end());
      std::vector<EntryRef> expected;
      for (const auto& [ref, hash] : owner.hashes()) expected.push_back(ref);
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(reported, expected) << "count " << count;
    }
  }
}

// SCAN's guarantee: an entry present from the start of a scan to its end is reported at least
// once, however the table grew or shrank between calls; nothing dead is ever reported.
void RunScanUnderChange(uint64_t seed, size_t initial, int grow_percent, size_t changes_per_call,
                        size_t count) {
  SCOPED_TRACE("seed=" + std::to_string(seed) + " initial=" + std::to_string(initial) +
               " grow%=" + std::to_string(grow_percent));
  std::mt19937_64 rng(seed);
  FakeOwner owner;
  EntryIndex index(&owner);
  InsertRandom(&index, &owner, &rng, initial);
  std::unordered_set<EntryRef> stayed;  // present since the start, never erased
  for (const auto& [ref, hash] : owner.hashes()) stayed.insert(ref);
  std::unordered_set<EntryRef> seen;
  FullScan(index, count, [&](const std::vector<EntryRef>& out) {
    for (EntryRef ref : out) {
      EXPECT_TRUE(owner.hashes().count(ref)) << "reported a dead entry";
      seen.insert(ref);
    }
    for (size_t c = 0; c < changes_per_call; ++c) {
      if (owner.size() == 0 || static_cast<int>(rng() % 100) < grow_percent) {
        const uint64_t hash = rng();
        index.Insert(hash, owner.Add(hash));
      } else {
        const EntryRef ref = owner.RefAt(rng() % owner.size());
        index.Erase(owner.hashes().at(ref), ref);
        owner.Remove(ref);
        stayed.erase(ref);
      }
    }
  });
  size_t missed = 0;
  for (EntryRef ref : stayed) missed += seen.count(ref) == 0;
  EXPECT_EQ(missed, 0u) << "of " << stayed.size() << " entries present throughout";
  EXPECT_EQ(index.Validate(), "");
}

// A scan covers about count / size() of the positions per call, so a table growing g entries
// per call ends its scan e^(g / count) times larger: the parameters keep that within reach.
TEST(EntryIndexTest, ScanSeesEveryLastingEntryWhileTheTableGrows) {
  // 2000 -> ~40000 entries, 8 -> ~150 segments: every split happens mid-scan.
  for (uint64_t seed : {1, 2}) RunScanUnderChange(seed, 2000, 100, 30, 10);
  // From one segment to about twenty.
  for (uint64_t seed : {3, 4}) RunScanUnderChange(seed, 100, 100, 30, 8);
  // Growing with erases among the inserts.
  for (uint64_t seed : {5, 6}) RunScanUnderChange(seed, 2000, 70, 40, 20);
}

TEST(EntryIndexTest, ScanSeesEveryLastingEntryWhileTheTableShrinks) {
  // Merges mid-scan leave cursors inside a slot's span: the entry must be read to place it.
  for (uint64_t seed : {1, 2, 3}) RunScanUnderChange(seed, 12000, 10, 40, 5);
  for (uint64_t seed : {4, 5}) RunScanUnderChange(seed, 12000, 40, 60, 30);
}

TEST(EntryIndexTest, RandomReachesEveryEntryEvenly) {
  FakeOwner owner;
  EntryIndex index(&owner);
  std::mt19937_64 rng(13);
  const size_t n = 3000;
  InsertRandom(&index, &owner, &rng, n);
  std::unordered_map<EntryRef, uint32_t> drawn;
  uint64_t state = 99;
  const size_t per_entry = 300;
  for (size_t i = 0; i < n * per_entry; ++i) {
    const EntryRef ref = index.Random(&state);
    ASSERT_TRUE(owner.hashes().count(ref)) << "drew a ref that is not an entry";
    ++drawn[ref];
  }
  ASSERT_EQ(drawn.size(), n);
  uint32_t least = UINT32_MAX, most = 0;
  for (const auto& [ref, times] : drawn) {
    least = std::min(least, times);
    most = std::max(most, times);
  }
  // 300 expected draws each: the sampling noise alone stays within +-25% at this seed, so wider
  // spreads mean some segments are favoured.
  EXPECT_GT(least, per_entry / 2) << "most " << most;
  EXPECT_LT(most, per_entry * 3 / 2) << "least " << least;
}

TEST(EntryIndexTest, RandomOfANearlyEmptyTable) {
  FakeOwner owner;
  EntryIndex index(&owner);
  std::mt19937_64 rng(17);
  InsertRandom(&index, &owner, &rng, 5000);
  EraseRandomDownTo(&index, &owner, &rng, 1);
  const EntryRef last = owner.RefAt(0);
  uint64_t state = 1;
  for (int i = 0; i < 200; ++i) EXPECT_EQ(index.Random(&state), last);
}

TEST(EntryIndexTest, BulkLoadBuildsWhatInsertsWould) {
  std::mt19937_64 rng(19);
  for (size_t n : {0, 1, 255, 256, 257, 1000, 5000, 40000}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    FakeOwner owner;
    EntryIndex index(&owner);
    std::vector<std::pair<uint64_t, EntryRef>> entries;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t hash = rng();
      entries.emplace_back(hash, owner.Add(hash));
    }
    index.BulkLoad(entries);
    ASSERT_EQ(index.Validate(), "");
    ExpectSameEntries(index, owner);
    for (const auto& [hash, ref] : entries) ASSERT_TRUE(Finds(index, hash, ref));
    // As many segments as inserts one by one would have made, and no more room than needed.
    const size_t segments = std::max<size_t>(
        1, (n + EntryIndex::kTargetPerSegment - 1) / EntryIndex::kTargetPerSegment);
    EXPECT_EQ(index.segment_count(), segments);
    EXPECT_LE(index.slot_capacity(), n + n / 20 + 16 * segments);
    // The loaded index keeps working: grow it past a split, then shrink it past a merge.
    InsertRandom(&index, &owner, &rng, 600);
    ASSERT_EQ(index.Validate(), "");
    EraseRandomDownTo(&index, &owner, &rng, n / 3);
    ASSERT_EQ(index.Validate(), "");
    ExpectSameEntries(index, owner);
  }
}

TEST(EntryIndexTest, MemoryUsageFollowsSize) {
  // A hash or set turns into a paged table at a few hundred elements: its index must cost
  // bytes in proportion, not a whole chunk of the segment table (1024 segments, 16 KB).
  FakeOwner owner;
  EntryIndex index(&owner);
  std::mt19937_64 rng(29);
  InsertRandom(&index, &owner, &rng, 200);
  EXPECT_LT(index.MemoryUsage(), 200u * 8);
  InsertRandom(&index, &owner, &rng, 2000);
  EXPECT_LT(index.MemoryUsage(), 2200u * 7);
  // The layout comment's 5.17 bytes per element at large N; small N pays a little more.
  InsertRandom(&index, &owner, &rng, 47800);
  const double per_element = static_cast<double>(index.MemoryUsage()) / 50000;
  EXPECT_GT(per_element, 5.0);
  EXPECT_LT(per_element, 5.6);
  EXPECT_EQ(index.Validate(), "");
  ExpectSameEntries(index, owner);
}

}  // namespace
}  // namespace goblin
