// The large form of a sorted set: an order-statistic B+tree over (score, member) with packed
// leaves, plus a member -> leaf index.
//
// Where the bytes go, `zset` workload (13-byte members, random 6-decimal scores), per member,
// measured at N = 1M with jemalloc (bench/sorted_set_bench.cc):
//
//   leaf entry     5 (score delta) + 1 (length) + 13 (member)          = 19.4 B
//   leaves         entries at 83% fill (borrow, then 2 -> 3 splits), 8 B header, size class
//                                                                       = 23.4 B
//   inner nodes    24 B per child, one child per ~44 members           =  0.8 B
//   tables         leaf/node number -> pointer, 8 B per leaf           =  0.2 B
//   index          5 B slot (tag + leaf + spare bits) at 90% of its segment, + segment table
//                                                                       =  6.0 B
//   total          30.3 B at every size of the 0.5M..2M sweep (Redis 7.2: 94-109 B);
//                  26.5 B after Optimize() (99% fill). Ratings-style data (10-byte names,
//                  integer scores that repeat): 20.9 B, 18.7 B optimized.
//
// Leaf (kLeafBytes = 1024, one malloc; a single entry bigger than the payload gets a leaf of
// its own exact size, a "jumbo" leaf):
//
//   +-------------+------------+--------------------------------------------------+
//   | count u32   | used u32   | packed run of `count` entries (zset_packed.h)    |
//   +-------------+------------+--------------------------------------------------+
//
// Inner node (kInnerFanout = 63 children, 1520 bytes in jemalloc's 1536 class, one malloc):
//
//   +-----------------------------------+------------------+------------------+-----------+
//   | first {key u64, prefix u64} [63]  | child u32 [63]   | count u32 [63]   | size u16  |
//   +-----------------------------------+------------------+------------------+-----------+
//
//   child[i] is a leaf number when the node is at height 1, else an inner node number;
//   count[i] is the number of entries under child i; first[i] the score key of its first entry
//   and the first 8 bytes of that entry's member (MemberPrefix). Leaves and inner nodes are
//   addressed by 32-bit numbers through chunked pointer tables, so a parent spends 4 bytes per
//   child rather than 8 and the index can name a leaf in 26 bits.
//
// Descending by (score, member) compares first[i]: the key, then, among children whose first
// score ties with the target's (integer leaderboards hold thousands of members per score), the
// member prefix. Only when both tie is the child's first member read, from its leftmost leaf.
// Without the prefix every tie cost that walk: a 20M-member leaderboard spent half its update
// time there.
//
// Invariants:
//  1. Every leaf is reachable from root_ at depth height_; leaves in key order left to right.
//  2. count[i] and first[i] of every inner node are exact for child i.
//  3. Every leaf except an empty root leaf holds at least one entry; every inner node at least
//     one child. A normal leaf's run fits kLeafPayload bytes; a jumbo leaf holds one entry.
//  4. The index holds exactly one slot per member, naming its leaf (zset_member_index.h);
//     except after Appends into an empty tree, when the index is empty and pending_index_
//     holds (hash, leaf) for every member until FinishAppends() builds it in one pass.
//  5. A score update leaves the member's slot naming its old leaf until it is re-placed, and
//     nothing that rescans leaves for the index (a segment split) runs in between.
//  6. The set holds fewer than 2^32 members (per-child counts are 32-bit).
//
// Costs: ZSCORE is an index probe and one leaf scan; ZRANK adds a descent; an insertion or
// score update touches one or two leaves and O(1) index slots amortized (a 2 -> 3 split
// relocates about a third of two leaves). Nothing moves more than a few leaves and one index
// segment, except EraseRange (proportional to what it erases) and bulk building.
//
// Not thread-safe. Views (string_view, iterators) returned by const methods are valid until the
// next mutation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/zset_chunked_array.h"
#include "core/zset_member_index.h"
#include "core/zset_packed.h"

namespace goblin {

class ZsetTree final : private ZsetLeafHashes {
 public:
  static constexpr uint32_t kLeafBytes = 1024;
  static constexpr uint32_t kLeafHeaderBytes = 8;
  static constexpr uint32_t kLeafPayload = kLeafBytes - kLeafHeaderBytes;
  static constexpr int kInnerFanout = 63;
  static constexpr int kMaxHeight = 24;

  struct Stats {
    size_t leaves = 0;
    size_t jumbo_leaves = 0;
    size_t inner_nodes = 0;
    int height = 0;                  // 0: the root is a leaf.
    size_t leaf_payload_bytes = 0;   // bytes of packed entries
    size_t leaf_capacity_bytes = 0;  // payload bytes the leaves could hold
    size_t leaf_bytes = 0;           // allocated for leaves
    size_t inner_bytes = 0;          // allocated for inner nodes
    size_t table_bytes = 0;          // leaf and node number tables
    size_t index_bytes = 0;
    size_t index_segments = 0;
    size_t index_slots = 0;  // slot capacity
  };

  // Walks entries in order. Obtained from Seek(); invalidated by any mutation of the tree.
  // Forward steps decode one entry each; the first backward step inside a leaf records where
  // its entries start (a run decodes forward only).
  class Iterator {
   public:
    bool Valid() const { return leaf_ != nullptr; }
    const ZsetEntry& entry() const { return entry_; }
    void Next();
    void Prev();

   private:
    friend class ZsetTree;
    void Load(uint32_t leaf_number, bool at_end);
    void Record();
    void DecodeAt(uint32_t index);

    const ZsetTree* tree_ = nullptr;
    uint32_t path_node_[kMaxHeight];
    uint32_t path_index_[kMaxHeight];
    int depth_ = 0;
    const uint8_t* leaf_ = nullptr;
    uint32_t count_ = 0;
    uint32_t index_ = 0;
    uint32_t next_offset_ = 0;  // payload offset of the entry after entry_
    ZsetEntry entry_;
    bool recorded_ = false;
    std::vector<uint32_t> offsets_;  // per entry of the leaf, once recorded
    std::vector<uint64_t> keys_;
  };

  ZsetTree();
  ~ZsetTree() override;
  ZsetTree(const ZsetTree&) = delete;
  ZsetTree& operator=(const ZsetTree&) = delete;

  size_t size() const { return size_; }

  // Adds the member, or moves it to the new score. Returns true when added; otherwise stores
  // the previous score in *old_score (if not null).
  // REQUIRES: score is not NaN; member does not point into this tree.
  bool Insert(double score, std::string_view member, double* old_score);

  // Removes the member; returns whether it was present. REQUIRES: member not inside this tree.
  bool Erase(std::string_view member);

  std::optional<double> Score(std::string_view member) const;

  // 0-based position in ascending order.
  std::optional<size_t> Rank(std::string_view member) const;

  // Number of entries whose score key is < key (<= key when inclusive).
  size_t CountBelowKey(uint64_t key, bool inclusive) const;

  // Number of entries whose member is < member (<= when inclusive), assuming entries ordered by
  // member (true when all scores are equal, the only case Redis defines for lex ranges).
  size_t CountBelowMember(std::string_view member, bool inclusive) const;

  // Positions an iterator at `rank` (invalid iterator when rank >= size()).
  Iterator Seek(size_t rank) const;

  // Removes ranks [start, stop); returns how many were removed. Clamps stop to size().
  size_t EraseRange(size_t start, size_t stop);

  // Appends an entry greater than every entry in the tree, filling leaves and inner nodes
  // completely: the bulk-load path for conversion, snapshots and Optimize().
  // REQUIRES: (score, member) greater than the last entry; member not already present.
  void Append(double score, std::string_view member);

  // Bulk load of packed runs, verbatim (snapshots dump a tree's leaves and load them with
  // this): `run` holds `count` entries in `bytes` bytes, the first with its whole key
  // (zset_packed.h), all greater than every entry present. A malformed run leaves a tree fit
  // only for destruction (the caller checks runs meanwhile and discards the tree). It becomes
  // the new rightmost leaf; the return value is its number. The member index is not touched:
  // the caller builds one from (member hash, leaf number) pairs and hands it over with
  // AdoptIndex.
  // REQUIRES: the tree holds only what earlier AppendRun calls added; count > 0; the run
  // fits a leaf (bytes <= kLeafPayload) or holds one entry.
  uint32_t AppendRun(const uint8_t* run, uint32_t count, uint32_t bytes);
  // Ends a run of AppendRun with an index built (ZsetMemberIndex::BulkLoad) for its leaves.
  void AdoptIndex(ZsetMemberIndex& index) { index_.Swap(index); }

  // Completes the work a run of Appends defers: into an empty tree they collect the index
  // entries and build the whole index in one pass (ZsetMemberIndex::BulkLoad). Every method
  // that needs the index does this first; a loader calls it so no command pays for it.
  void FinishAppends() const;

  // Shrinks the index segments to their tightest allocations; returns bytes saved.
  size_t CompactIndex() {
    FinishAppends();
    return index_.Shrink();
  }

  // Calls fn(const uint8_t* run, uint32_t entries, uint32_t bytes) for every non-empty leaf
  // in key order: each leaf's packed run as it lies (snapshots write them unchanged).
  template <typename Fn>
  void ForEachLeafRun(Fn&& fn) const;

  // Bytes allocated by the tree, its tables and its index (not sizeof(*this)).
  size_t MemoryUsage() const;
  Stats GetStats() const;

  // Checks every invariant; returns an empty string or a description of the first violation.
  // O(n); for tests.
  std::string Validate() const;

 private:
  struct LeafHeader {
    uint32_t count;
    uint32_t used;
  };

  // What an inner node keeps of a child's first entry.
  struct ChildFirst {
    uint64_t key;
    uint64_t prefix;  // MemberPrefix of the member
  };

  struct InnerNode {
    ChildFirst first[kInnerFanout];
    uint32_t child[kInnerFanout];
    uint32_t count[kInnerFanout];
    uint16_t size;
  };

  // Root-to-leaf route: node[d] is the inner node at depth d, index[d] the child taken.
  struct Path {
    uint32_t node[kMaxHeight];
    uint32_t index[kMaxHeight];
    int depth = 0;  // number of inner nodes on the route (== height_)
  };

  // An entry detached from its leaf while leaves are repacked.
  struct Item {
    uint64_t key;
    bool negative_zero;
    uint32_t member_offset;
    uint32_t member_size;
    uint32_t old_leaf;
  };

  static constexpr uint32_t kNoLeaf = UINT32_MAX;

  static LeafHeader* Header(uint8_t* leaf) { return reinterpret_cast<LeafHeader*>(leaf); }
  static const LeafHeader* Header(const uint8_t* leaf) {
    return reinterpret_cast<const LeafHeader*>(leaf);
  }
  static uint8_t* Payload(uint8_t* leaf) { return leaf + kLeafHeaderBytes; }
  static const uint8_t* Payload(const uint8_t* leaf) { return leaf + kLeafHeaderBytes; }
  static uint32_t Capacity(const uint8_t* leaf) {
    return Header(leaf)->used > kLeafPayload ? Header(leaf)->used : kLeafPayload;
  }

  uint8_t* leaf(uint32_t number) const { return leaves_[number]; }
  InnerNode* inner(uint32_t number) const { return inners_[number]; }

  uint32_t NewLeaf(uint32_t payload_capacity);
  void FreeLeaf(uint32_t number);
  uint32_t NewInner();
  void FreeInner(uint32_t number);

  void HashesInLeaf(uint32_t leaf, std::vector<uint64_t>* hashes) const override;
  // Ends an append run before a structural change: deferred index entries are built and the
  // append cursor forgotten.
  void BeforeMutation();

  // Locates a member through the index.
  bool Find(std::string_view member, uint64_t hash, uint32_t* leaf_number, ZsetRunPosition* pos,
            ZsetEntry* entry) const;
  std::string_view FirstMember(uint32_t node, int height) const;
  // The last child whose first entry is <= (key, member), or child 0.
  int ChildFor(const InnerNode* node, int height, uint64_t key, uint64_t prefix,
               std::string_view member) const;
  uint32_t DescendByKey(uint64_t key, std::string_view member, Path* path,
                        size_t* rank_before) const;
  uint32_t DescendByRank(size_t rank, Path* path, size_t* rank_in_leaf) const;

  void AddToPath(const Path& path, int64_t delta);
  // The first entry under path's node at `depth` is now `first`: update up the left spine.
  void SetFirst(const Path& path, int depth, ChildFirst first);

  // Places a member that is in no leaf. indexed_leaf is kNoLeaf for a new member, or the leaf
  // its index slot still names (a score update), which is then relocated.
  void InsertNew(uint64_t key, bool negative_zero, std::string_view member, uint64_t hash,
                 uint32_t indexed_leaf);
  void InsertOverflow(Path& path, uint32_t leaf_number, const ZsetRunPosition& pos, uint64_t key,
                      bool negative_zero, std::string_view member, uint64_t hash,
                      uint32_t indexed_leaf);
  // Splits items into consecutive leaves; returns the end index of each leaf. With k > 0 tries
  // exactly k leaves of balanced size and returns {} if that fails; k == 0 fills greedily.
  std::vector<uint32_t> PackItems(const std::vector<Item>& items, size_t k) const;
  // Replaces `old_count` children at `first` of the node at path depth `depth` with new ones,
  // splitting nodes upward as needed. `append` keeps split nodes full on the left.
  void ReplaceChildren(Path& path, int depth, int first, int old_count,
                       const std::vector<uint32_t>& ids, const std::vector<uint32_t>& counts,
                       const std::vector<ChildFirst>& firsts, bool append);
  // Removes child path.index[depth] of path.node[depth] (already freed or detached).
  void RemoveChild(Path& path, int depth);
  void MaybeMergeLeaf(Path& path);
  void MaybeMergeInner(Path& path, int depth);
  void CollapseRoot();
  // Removes entries [first, first + n) of the leaf at the end of path, and their index slots
  // unless keep_index (the caller handles the one slot).
  void EraseInLeaf(Path& path, uint32_t leaf_number, uint32_t first, uint32_t n, bool keep_index);

  std::string ValidateNode(uint32_t node, int height, size_t* count, ChildFirst* first,
                           bool* have_prev, uint64_t* prev_key, std::string* prev_member) const;

  ZsetChunkedArray<uint8_t*> leaves_;
  std::vector<uint32_t> free_leaves_;
  ZsetChunkedArray<InnerNode*> inners_;
  std::vector<uint32_t> free_inners_;
  uint32_t root_ = 0;
  int height_ = 0;
  size_t size_ = 0;
  size_t node_bytes_ = 0;
  // Mutable: FinishAppends() builds deferred index entries from const methods. Building them
  // changes no answer, and the set is single-threaded.
  mutable ZsetMemberIndex index_;
  mutable std::vector<std::pair<uint64_t, uint32_t>> pending_index_;  // (hash, leaf)
  // Append cursor: the rightmost leaf and its last key, valid while only Append runs.
  bool appending_ = false;
  uint32_t append_leaf_ = 0;
  uint64_t append_last_key_ = 0;
  Path append_path_;  // the route to append_leaf_, while append_path_valid_
  bool append_path_valid_ = false;
  std::string scratch_;  // member bytes of detached items
};

template <typename Fn>
void ZsetTree::ForEachLeafRun(Fn&& fn) const {
  // Depth-first, left to right, with an explicit stack of (node, next child) per level.
  uint32_t node_at[kMaxHeight];
  int next_at[kMaxHeight];
  auto visit_leaf = [&](uint32_t number) {
    const uint8_t* block = leaf(number);
    if (Header(block)->count > 0) fn(Payload(block), Header(block)->count, Header(block)->used);
  };
  if (height_ == 0) {
    visit_leaf(root_);
    return;
  }
  int depth = 0;
  node_at[0] = root_;
  next_at[0] = 0;
  while (depth >= 0) {
    const InnerNode* node = inner(node_at[depth]);
    if (next_at[depth] == node->size) {
      --depth;
      continue;
    }
    const uint32_t child = node->child[next_at[depth]++];
    if (depth + 1 == height_) {
      visit_leaf(child);
    } else {
      ++depth;
      node_at[depth] = child;
      next_at[depth] = 0;
    }
  }
}

}  // namespace goblin
