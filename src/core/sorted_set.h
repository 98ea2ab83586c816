// goblin::SortedSet: the value behind a Redis sorted-set key, with no protocol code. The
// command layer (ZADD, ZRANGE, ZREMRANGEBY*, ...) is written against this class only.
//
// Two forms, as in Redis:
//   small  ZsetListpack (zset_listpack.h): one packed run, while the set has at most
//          ZsetLimits::max_listpack_entries members of at most max_listpack_value bytes.
//          OBJECT ENCODING says "listpack".
//   large  ZsetTree (zset_tree.h): order-statistic B+tree of packed leaves + member index.
//          OBJECT ENCODING says "skiplist", the name clients expect; Stats() tells the truth.
// The set moves to the large form when an insertion breaks a limit and never moves back (an
// empty set is deleted by the caller, as Redis deletes empty keys).
//
// Order: by score, then by member bytes (memcmp, a proper prefix first). -0.0 and +0.0 order
// as equal scores but each is stored and returned as given. Every range query is rank
// arithmetic: ZRANGEBYSCORE min max is ranks [ScoreLowerBound(min), ScoreUpperBound(max)),
// ZCOUNT its length, the REV forms the same ranks walked backwards.
//
// Invariants:
//  1. Exactly one form is live: tree_ != nullptr means the large form.
//  2. In the small form size() <= the max_listpack_entries in force when members were added.
//
// Not thread-safe. Member views (ZsetElement::member, ForEachInRankRange arguments) are valid
// until the next mutation. No argument may point into the set it is passed to.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/zset_listpack.h"
#include "core/zset_packed.h"
#include "core/zset_tree.h"

namespace goblin {

// The conversion thresholds (zset-max-listpack-entries / zset-max-listpack-value).
struct ZsetLimits {
  size_t max_listpack_entries = 128;
  size_t max_listpack_value = 64;
};

struct ZsetElement {
  double score;
  std::string_view member;
};

// A ZRANGEBYLEX bound: "-", "+", "[member" or "(member".
struct ZsetLexBound {
  enum class Kind { kNegativeInfinity, kPositiveInfinity, kInclusive, kExclusive };
  Kind kind = Kind::kNegativeInfinity;
  std::string_view member;
};

// What GOBLIN.STATS reports.
struct ZsetStats {
  const char* encoding = "listpack";  // what OBJECT ENCODING says
  const char* layout = "packed-run";  // what it really is: "packed-run" or "bptree"
  size_t size = 0;
  size_t bytes = 0;           // MemoryUsage()
  size_t payload_bytes = 0;   // packed entry bytes
  size_t capacity_bytes = 0;  // payload bytes the allocations could hold
  double fill = 0;            // payload_bytes / capacity_bytes
  size_t leaves = 0;
  size_t jumbo_leaves = 0;
  size_t inner_nodes = 0;
  int height = 0;
  size_t leaf_bytes = 0;   // allocated for leaves (the packed run, in the small form)
  size_t inner_bytes = 0;  // allocated for inner nodes
  size_t table_bytes = 0;  // leaf and node number tables
  size_t index_bytes = 0;
  size_t index_segments = 0;
  size_t index_slots = 0;
};

class SortedSet {
 public:
  enum class Encoding { kListpack, kSkiplist };

  SortedSet();
  // Starts in the large form when the expected size or longest member already exceeds the
  // limits (what Redis does for ZADD on a new key and for ZUNIONSTORE-style results).
  SortedSet(size_t size_hint, size_t member_size_hint, const ZsetLimits& limits);
  ~SortedSet();
  SortedSet(SortedSet&&) noexcept;
  SortedSet& operator=(SortedSet&&) noexcept;
  SortedSet(const SortedSet&) = delete;
  SortedSet& operator=(const SortedSet&) = delete;

  size_t size() const { return tree_ ? tree_->size() : small_.size(); }
  bool empty() const { return size() == 0; }
  Encoding encoding() const { return tree_ ? Encoding::kSkiplist : Encoding::kListpack; }
  // "listpack" or "skiplist", as OBJECT ENCODING replies.
  const char* EncodingName() const { return tree_ ? "skiplist" : "listpack"; }

  // Adds the member or sets its score. Returns true when it was added; when it existed,
  // *old_score (if not null) receives the previous score (ZADD GT/LT/INCR/CH need it).
  // REQUIRES: score is not NaN.
  bool Insert(double score, std::string_view member, const ZsetLimits& limits,
              double* old_score = nullptr);

  // Removes the member; returns whether it was present.
  bool Erase(std::string_view member);

  std::optional<double> Score(std::string_view member) const;
  bool Contains(std::string_view member) const { return Score(member).has_value(); }

  // 0-based rank in ascending order (ZRANK) and from the top (ZREVRANK).
  std::optional<size_t> Rank(std::string_view member) const;
  std::optional<size_t> ReverseRank(std::string_view member) const;

  // Rank of the first element with score >= min (> min when exclusive).
  size_t ScoreLowerBound(double min, bool exclusive) const;
  // Number of elements with score <= max (< max when exclusive): one past the last rank in range.
  size_t ScoreUpperBound(double max, bool exclusive) const;
  // Rank of the first element whose member is at or above the bound, and one past the last
  // element at or below it. Members compare as bytes. Exact when all scores are equal, the only
  // case Redis defines; otherwise, as in Redis, a position a search assuming member order finds.
  size_t LexLowerBound(const ZsetLexBound& min) const;
  size_t LexUpperBound(const ZsetLexBound& max) const;

  // REQUIRES: rank < size().
  ZsetElement ElementAt(size_t rank) const;

  // Calls fn(double score, std::string_view member) for ranks [start, stop) ascending, or for
  // the same ranks descending when reverse. stop is clamped to size(). A fn returning bool
  // stops the walk by returning false.
  template <typename Fn>
  void ForEachInRankRange(size_t start, size_t stop, bool reverse, Fn&& fn) const;

  // Removes ranks [start, stop) (clamped); returns how many were removed.
  size_t EraseRankRange(size_t start, size_t stop);

  // Removes and returns the lowest / highest element.
  std::optional<std::pair<double, std::string>> PopMin();
  std::optional<std::pair<double, std::string>> PopMax();

  // Bulk load for snapshots: appends an element greater than all present ones; the large form
  // gets completely full leaves. REQUIRES: strictly increasing (score, member) order.
  void AppendSorted(double score, std::string_view member, const ZsetLimits& limits);
  // Bulk load of the large form from packed runs, verbatim (ZsetTree::AppendRun and
  // AdoptIndex). REQUIRES: encoding() == kSkiplist.
  uint32_t AppendRun(const uint8_t* run, uint32_t count, uint32_t bytes) {
    return tree_->AppendRun(run, count, bytes);
  }
  void AdoptIndex(ZsetMemberIndex& index) { tree_->AdoptIndex(index); }

  // Ends a run of AppendSorted: builds the deferred member index now (a 1M-member load does it
  // in one pass) rather than inside the next command. Optional; any lookup does it too.
  void FinishAppends() const {
    if (tree_) tree_->FinishAppends();
  }

  // Calls fn(const uint8_t* run, size_t entries, size_t bytes) for each packed run of the set
  // in order (zset_packed.h format): the small form's one run, or every leaf of the large one.
  template <typename Fn>
  void ForEachRun(Fn&& fn) const {
    if (tree_) {
      tree_->ForEachLeafRun(fn);
    } else if (small_.size() > 0) {
      fn(small_.data(), small_.size(), small_.used_bytes());
    }
  }

  // Bytes allocated for this set, including the object itself (MEMORY USAGE).
  size_t MemoryUsage() const;

  // Repacks to the tightest form (full leaves, tight index segments); returns bytes saved.
  // Rebuilds the large form in one pass, so it briefly holds two copies of the set.
  size_t Optimize();

  ZsetStats Stats() const;

  // Checks internal invariants; empty string when sound. O(n); for tests.
  std::string Validate() const;

 private:
  void ConvertToTree();
  // Elements whose member is below the bound, counting an equal member when the bound's kind
  // is counts_its_member (the Lex*Bound rank arithmetic).
  size_t CountBelowLexBound(const ZsetLexBound& bound, ZsetLexBound::Kind counts_its_member) const;

  ZsetListpack small_;
  std::unique_ptr<ZsetTree> tree_;
};

template <typename Fn>
void SortedSet::ForEachInRankRange(size_t start, size_t stop, bool reverse, Fn&& fn) const {
  auto visit = [&fn](double score, std::string_view member) {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, double, std::string_view>>) {
      fn(score, member);
      return true;
    } else {
      return static_cast<bool>(fn(score, member));
    }
  };
  stop = std::min(stop, size());
  if (start >= stop) return;
  if (tree_) {
    ZsetTree::Iterator it = tree_->Seek(reverse ? stop - 1 : start);
    for (size_t n = stop - start; n > 0 && it.Valid(); --n) {
      if (!visit(it.entry().score(), it.entry().member)) return;
      if (reverse) {
        it.Prev();
      } else {
        it.Next();
      }
    }
    return;
  }
  const ZsetRunPosition pos = ZsetRunSeek(small_.data(), static_cast<uint32_t>(start));
  const uint8_t* p = small_.data() + pos.offset;
  ZsetEntry e;
  e.key = pos.prev_key;
  if (!reverse) {
    for (size_t r = start; r < stop; ++r) {
      p = DecodeZsetEntry(p, e.key, &e);
      if (!visit(e.score(), e.member)) return;
    }
    return;
  }
  // A run decodes forward only; the small form holds at most a few hundred entries.
  std::vector<ZsetEntry> entries(stop - start);
  for (auto& entry : entries) {
    p = DecodeZsetEntry(p, e.key, &e);
    entry = e;
  }
  for (size_t i = entries.size(); i > 0; --i) {
    if (!visit(entries[i - 1].score(), entries[i - 1].member)) return;
  }
}

}  // namespace goblin
