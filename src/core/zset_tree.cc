#include "core/zset_tree.h"

#include <malloc.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/hashing.h"
#include "core/varint.h"

namespace goblin {

namespace {

// The key and member prefix of the first entry of a run AppendRun copied before anyone checked
// it (its caller checks it meanwhile, and drops the tree if it is malformed). Every read stays
// inside the run's bytes: a malformed run gives some key and prefix, never a read past the
// leaf, nor a varint longer than ten bytes shifted past 64 bits.
std::pair<uint64_t, uint64_t> FirstOfUncheckedRun(const uint8_t* run, uint32_t bytes) {
  const uint8_t* end = run + bytes;
  uint64_t key = 0;
  uint64_t length = 0;
  const uint8_t* after_key = GetVarintChecked(run, end, &key);
  const uint8_t* member =
      after_key == nullptr ? nullptr : GetVarintChecked(after_key, end, &length);
  if (member == nullptr) return {key, 0};
  const uint64_t prefix_bytes =
      std::min<uint64_t>({length >> 1, 8, static_cast<uint64_t>(end - member)});
  return {key, MemberPrefix(std::string_view(reinterpret_cast<const char*>(member),
                                             static_cast<size_t>(prefix_bytes)))};
}

}  // namespace

ZsetTree::ZsetTree() { root_ = NewLeaf(kLeafPayload); }

ZsetTree::~ZsetTree() {
  for (size_t i = 0; i < leaves_.size(); ++i) std::free(leaves_[i]);
  for (size_t i = 0; i < inners_.size(); ++i) std::free(inners_[i]);
}

// ---- Node allocation ------------------------------------------------------------------------

uint32_t ZsetTree::NewLeaf(uint32_t payload_capacity) {
  const size_t bytes = kLeafHeaderBytes + std::max(kLeafPayload, payload_capacity);
  auto* block = static_cast<uint8_t*>(std::malloc(bytes));
  if (block == nullptr) std::abort();
  Header(block)->count = 0;
  Header(block)->used = 0;
  node_bytes_ += malloc_usable_size(block);
  uint32_t number;
  if (!free_leaves_.empty()) {
    number = free_leaves_.back();
    free_leaves_.pop_back();
    leaves_[number] = block;
  } else {
    number = static_cast<uint32_t>(leaves_.size());
    // The index names leaves in 26 bits: 64M leaves of 1 KiB, far beyond any real set.
    if (number > ZsetMemberIndex::kMaxLeaf) std::abort();
    leaves_.push_back(block);
  }
  return number;
}

void ZsetTree::FreeLeaf(uint32_t number) {
  node_bytes_ -= malloc_usable_size(leaves_[number]);
  std::free(leaves_[number]);
  leaves_[number] = nullptr;
  free_leaves_.push_back(number);
}

uint32_t ZsetTree::NewInner() {
  auto* node = static_cast<InnerNode*>(std::malloc(sizeof(InnerNode)));
  if (node == nullptr) std::abort();
  node->size = 0;
  node_bytes_ += malloc_usable_size(node);
  if (!free_inners_.empty()) {
    const uint32_t number = free_inners_.back();
    free_inners_.pop_back();
    inners_[number] = node;
    return number;
  }
  inners_.push_back(node);
  return static_cast<uint32_t>(inners_.size() - 1);
}

void ZsetTree::FreeInner(uint32_t number) {
  node_bytes_ -= malloc_usable_size(inners_[number]);
  std::free(inners_[number]);
  inners_[number] = nullptr;
  free_inners_.push_back(number);
}

void ZsetTree::HashesInLeaf(uint32_t number, std::vector<uint64_t>* hashes) const {
  const uint8_t* block = leaf(number);
  const uint8_t* p = Payload(block);
  ZsetEntry e;
  for (uint32_t i = 0; i < Header(block)->count; ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    hashes->push_back(HashBytes(e.member));
  }
}

// ---- Lookups ---------------------------------------------------------------------------------

void ZsetTree::FinishAppends() const {
  if (pending_index_.empty()) return;
  index_.BulkLoad(pending_index_);
  pending_index_.clear();
  pending_index_.shrink_to_fit();
}

void ZsetTree::BeforeMutation() {
  FinishAppends();
  appending_ = false;
}

bool ZsetTree::Find(std::string_view member, uint64_t hash, uint32_t* leaf_number,
                    ZsetRunPosition* pos, ZsetEntry* entry) const {
  FinishAppends();
  return index_.Find(hash, [&](uint32_t number) {
    const uint8_t* block = leaf(number);
    // Ask for every line of the leaf at once (without waiting for its header to say how many
    // are used): the scan then waits for one memory latency instead of one per line.
    for (uint32_t line = 64; line < kLeafBytes; line += 64) __builtin_prefetch(block + line);
    if (!ZsetRunFind(Payload(block), Header(block)->count, member, pos, entry)) return false;
    *leaf_number = number;
    return true;
  });
}

std::string_view ZsetTree::FirstMember(uint32_t node, int height) const {
  for (; height > 0; --height) node = inner(node)->child[0];
  ZsetEntry e;
  DecodeZsetEntry(Payload(leaf(node)), 0, &e);
  return e.member;
}

int ZsetTree::ChildFor(const InnerNode* node, int height, uint64_t key, uint64_t prefix,
                       std::string_view member) const {
  int a = 0;
  int b = node->size;
  while (a < b) {
    const int mid = (a + b) / 2;
    const ChildFirst& f = node->first[mid];
    bool at_most;
    if (f.key != key) {
      at_most = f.key < key;
    } else if (f.prefix != prefix) {
      at_most = f.prefix < prefix;
    } else {
      at_most = FirstMember(node->child[mid], height - 1) <= member;
    }
    if (at_most) {
      a = mid + 1;
    } else {
      b = mid;
    }
  }
  return std::max(a - 1, 0);
}

uint32_t ZsetTree::DescendByKey(uint64_t key, std::string_view member, Path* path,
                                size_t* rank_before) const {
  const uint64_t prefix = MemberPrefix(member);
  uint32_t node = root_;
  size_t rank = 0;
  path->depth = height_;
  for (int d = 0; d < height_; ++d) {
    const InnerNode* n = inner(node);
    const int i = ChildFor(n, height_ - d, key, prefix, member);
    for (int j = 0; j < i; ++j) rank += n->count[j];
    path->node[d] = node;
    path->index[d] = static_cast<uint32_t>(i);
    node = n->child[i];
  }
  if (rank_before != nullptr) *rank_before = rank;
  return node;
}

uint32_t ZsetTree::DescendByRank(size_t rank, Path* path, size_t* rank_in_leaf) const {
  uint32_t node = root_;
  path->depth = height_;
  for (int d = 0; d < height_; ++d) {
    const InnerNode* n = inner(node);
    int i = 0;
    while (i + 1 < n->size && rank >= n->count[i]) rank -= n->count[i++];
    path->node[d] = node;
    path->index[d] = static_cast<uint32_t>(i);
    node = n->child[i];
  }
  *rank_in_leaf = rank;
  return node;
}

std::optional<double> ZsetTree::Score(std::string_view member) const {
  uint32_t number;
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!Find(member, HashBytes(member), &number, &pos, &e)) return std::nullopt;
  return e.score();
}

std::optional<size_t> ZsetTree::Rank(std::string_view member) const {
  uint32_t number;
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!Find(member, HashBytes(member), &number, &pos, &e)) return std::nullopt;
  Path path;
  size_t before;
  [[maybe_unused]] const uint32_t found = DescendByKey(e.key, member, &path, &before);
  assert(found == number);
  return before + pos.index;
}

size_t ZsetTree::CountBelowKey(uint64_t key, bool inclusive) const {
  uint32_t node = root_;
  size_t rank = 0;
  for (int d = 0; d < height_; ++d) {
    const InnerNode* n = inner(node);
    const ChildFirst* firsts = n->first;
    const ChildFirst* end = firsts + n->size;
    const int below = static_cast<int>(
        (inclusive ? std::ranges::upper_bound(firsts, end, key, {}, &ChildFirst::key)
                   : std::ranges::lower_bound(firsts, end, key, {}, &ChildFirst::key)) -
        firsts);
    const int i = std::max(below - 1, 0);
    for (int j = 0; j < i; ++j) rank += n->count[j];
    node = n->child[i];
  }
  const uint8_t* block = leaf(node);
  return rank + ZsetRunCountBelowKey(Payload(block), Header(block)->count, key, inclusive);
}

size_t ZsetTree::CountBelowMember(std::string_view member, bool inclusive) const {
  uint32_t node = root_;
  size_t rank = 0;
  auto below = [&](std::string_view m) { return inclusive ? m <= member : m < member; };
  const uint64_t prefix = MemberPrefix(member);
  for (int d = 0; d < height_; ++d) {
    const InnerNode* n = inner(node);
    int a = 0;
    int b = n->size;
    while (a < b) {
      const int mid = (a + b) / 2;
      const uint64_t first_prefix = n->first[mid].prefix;
      if (first_prefix != prefix ? first_prefix < prefix
                                 : below(FirstMember(n->child[mid], height_ - d - 1))) {
        a = mid + 1;
      } else {
        b = mid;
      }
    }
    const int i = std::max(a - 1, 0);
    for (int j = 0; j < i; ++j) rank += n->count[j];
    node = n->child[i];
  }
  const uint8_t* block = leaf(node);
  const uint8_t* p = Payload(block);
  ZsetEntry e;
  uint32_t i = 0;
  for (; i < Header(block)->count; ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    if (!below(e.member)) break;
  }
  return rank + i;
}

// ---- Iteration -------------------------------------------------------------------------------

void ZsetTree::Iterator::Load(uint32_t number, bool at_end) {
  leaf_ = tree_->leaf(number);
  count_ = Header(leaf_)->count;
  recorded_ = false;
  if (at_end) {
    Record();
    index_ = count_ - 1;
    DecodeAt(index_);
  } else {
    index_ = 0;
    next_offset_ =
        static_cast<uint32_t>(DecodeZsetEntry(Payload(leaf_), 0, &entry_) - Payload(leaf_));
  }
}

void ZsetTree::Iterator::Record() {
  offsets_.resize(count_);
  keys_.resize(count_);
  const uint8_t* payload = Payload(leaf_);
  const uint8_t* p = payload;
  ZsetEntry e;
  for (uint32_t i = 0; i < count_; ++i) {
    offsets_[i] = static_cast<uint32_t>(p - payload);
    p = DecodeZsetEntry(p, e.key, &e);
    keys_[i] = e.key;
  }
  recorded_ = true;
}

void ZsetTree::Iterator::DecodeAt(uint32_t index) {
  const uint8_t* payload = Payload(leaf_);
  next_offset_ = static_cast<uint32_t>(
      DecodeZsetEntry(payload + offsets_[index], index == 0 ? 0 : keys_[index - 1], &entry_) -
      payload);
}

void ZsetTree::Iterator::Next() {
  if (index_ + 1 < count_) {
    ++index_;
    const uint8_t* payload = Payload(leaf_);
    next_offset_ = static_cast<uint32_t>(
        DecodeZsetEntry(payload + next_offset_, entry_.key, &entry_) - payload);
    return;
  }
  int d = depth_ - 1;
  while (d >= 0 && path_index_[d] + 1 >= tree_->inner(path_node_[d])->size) --d;
  if (d < 0) {
    leaf_ = nullptr;
    return;
  }
  ++path_index_[d];
  for (int dd = d + 1; dd < depth_; ++dd) {
    path_node_[dd] = tree_->inner(path_node_[dd - 1])->child[path_index_[dd - 1]];
    path_index_[dd] = 0;
  }
  Load(tree_->inner(path_node_[depth_ - 1])->child[path_index_[depth_ - 1]], false);
}

void ZsetTree::Iterator::Prev() {
  if (index_ > 0) {
    if (!recorded_) Record();
    DecodeAt(--index_);
    return;
  }
  int d = depth_ - 1;
  while (d >= 0 && path_index_[d] == 0) --d;
  if (d < 0) {
    leaf_ = nullptr;
    return;
  }
  --path_index_[d];
  for (int dd = d + 1; dd < depth_; ++dd) {
    path_node_[dd] = tree_->inner(path_node_[dd - 1])->child[path_index_[dd - 1]];
    path_index_[dd] = tree_->inner(path_node_[dd])->size - 1;
  }
  Load(tree_->inner(path_node_[depth_ - 1])->child[path_index_[depth_ - 1]], true);
}

ZsetTree::Iterator ZsetTree::Seek(size_t rank) const {
  Iterator it;
  it.tree_ = this;
  if (rank >= size_) return it;
  Path path;
  size_t in_leaf;
  const uint32_t number = DescendByRank(rank, &path, &in_leaf);
  it.depth_ = path.depth;
  std::copy(path.node, path.node + path.depth, it.path_node_);
  std::copy(path.index, path.index + path.depth, it.path_index_);
  it.leaf_ = leaf(number);
  it.count_ = Header(it.leaf_)->count;
  it.index_ = static_cast<uint32_t>(in_leaf);
  const ZsetRunPosition pos = ZsetRunSeek(Payload(it.leaf_), it.index_);
  it.next_offset_ = static_cast<uint32_t>(
      DecodeZsetEntry(Payload(it.leaf_) + pos.offset, pos.prev_key, &it.entry_) -
      Payload(it.leaf_));
  return it;
}

// ---- Path maintenance -----------------------------------------------------------------------

void ZsetTree::AddToPath(const Path& path, int64_t delta) {
  for (int d = 0; d < path.depth; ++d) {
    uint32_t& c = inner(path.node[d])->count[path.index[d]];
    c = static_cast<uint32_t>(static_cast<int64_t>(c) + delta);
  }
}

void ZsetTree::SetFirst(const Path& path, int depth, ChildFirst first) {
  for (int d = depth - 1; d >= 0; --d) {
    inner(path.node[d])->first[path.index[d]] = first;
    if (path.index[d] != 0) break;
  }
}

// ---- Insertion -------------------------------------------------------------------------------

bool ZsetTree::Insert(double score, std::string_view member, double* old_score) {
  BeforeMutation();
  const uint64_t hash = HashBytes(member);
  const uint64_t key = ScoreToKey(score);
  const bool negative_zero = IsNegativeZero(score);
  uint32_t number;
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!Find(member, hash, &number, &pos, &e)) {
    InsertNew(key, negative_zero, member, hash, kNoLeaf);
    return true;
  }
  if (old_score != nullptr) *old_score = e.score();
  if (e.key == key && e.negative_zero == negative_zero) return false;
  // The member leaves its leaf but keeps its index slot, which InsertNew relocates.
  Path path;
  [[maybe_unused]] const uint32_t found = DescendByKey(e.key, member, &path, nullptr);
  assert(found == number);
  EraseInLeaf(path, number, pos.index, 1, /*keep_index=*/true);
  InsertNew(key, negative_zero, member, hash, number);
  return false;
}

void ZsetTree::InsertNew(uint64_t key, bool negative_zero, std::string_view member, uint64_t hash,
                         uint32_t indexed_leaf) {
  Path path;
  const uint32_t number = DescendByKey(key, member, &path, nullptr);
  uint8_t* block = leaf(number);
  LeafHeader* header = Header(block);
  const ZsetRunPosition pos = ZsetRunLowerBound(Payload(block), header->count, key, member);
  const ptrdiff_t growth =
      ZsetRunInsertGrowth(Payload(block), header->count, header->used, pos, key, member);
  const bool fits = header->count == 0
                        ? static_cast<size_t>(growth) <= kLeafPayload
                        : header->used + growth <= static_cast<ptrdiff_t>(kLeafPayload);
  if (!fits) {
    InsertOverflow(path, number, pos, key, negative_zero, member, hash, indexed_leaf);
    return;
  }
  header->used =
      ZsetRunInsert(Payload(block), header->count, header->used, pos, key, negative_zero, member);
  ++header->count;
  ++size_;
  AddToPath(path, 1);
  if (pos.index == 0) SetFirst(path, path.depth, {key, MemberPrefix(member)});
  if (indexed_leaf == kNoLeaf) {
    index_.Insert(hash, number, *this);
  } else if (indexed_leaf != number) {
    index_.Relocate(hash, indexed_leaf, number);
  }
}

std::vector<uint32_t> ZsetTree::PackItems(const std::vector<Item>& items, size_t k) const {
  const size_t n = items.size();
  std::vector<uint32_t> first_size(n);
  std::vector<uint64_t> prefix(n + 1, 0);  // prefix[i]: bytes of items [0, i) packed as a run
  for (size_t i = 0; i < n; ++i) {
    const uint64_t prev = i == 0 ? 0 : items[i - 1].key;
    first_size[i] = static_cast<uint32_t>(ZsetEntrySize(items[i].key, items[i].member_size));
    prefix[i + 1] = prefix[i] + ZsetEntrySize(items[i].key - prev, items[i].member_size);
  }
  auto run_bytes = [&](size_t begin, size_t end) {  // bytes of items [begin, end) as one leaf
    return first_size[begin] + (prefix[end] - prefix[begin + 1]);
  };
  std::vector<uint32_t> ends;
  size_t i = 0;
  for (size_t j = 0; i < n; ++j) {
    const bool balanced = k > 0;
    if (balanced && j == k) return {};
    const size_t leaves_left = balanced ? k - j : 1;
    if (balanced && leaves_left == 1) {
      if (n - i > 1 && run_bytes(i, n) > kLeafPayload) return {};
      ends.push_back(static_cast<uint32_t>(n));
      break;
    }
    const uint64_t target =
        balanced ? run_bytes(i, n) / leaves_left : std::numeric_limits<uint64_t>::max();
    const size_t begin = i++;
    if (first_size[begin] <= kLeafPayload) {
      while (i < n && (!balanced || n - i > leaves_left - 1)) {
        if (first_size[i] > kLeafPayload) break;  // a jumbo entry gets its own leaf
        const uint64_t with = run_bytes(begin, i + 1);
        if (with > kLeafPayload) break;
        const uint64_t entry = with - run_bytes(begin, i);
        if (balanced && with - entry / 2 > target) break;
        ++i;
      }
    }
    ends.push_back(static_cast<uint32_t>(i));
  }
  if (k > 0 && ends.size() != k) return {};
  return ends;
}

void ZsetTree::InsertOverflow(Path& path, uint32_t number, const ZsetRunPosition& pos, uint64_t key,
                              bool negative_zero, std::string_view member, uint64_t hash,
                              uint32_t indexed_leaf) {
  ++size_;
  AddToPath(path, 1);
  const int depth = path.depth;
  // Spread over the leaf and a sibling first (B*-tree style): two full leaves become three
  // two-thirds-full ones, and a half-empty neighbour absorbs the overflow without a new leaf.
  std::vector<uint32_t> group;
  int first = 0;
  if (depth == 0) {
    group.push_back(number);
  } else {
    const InnerNode* parent = inner(path.node[depth - 1]);
    const int c = static_cast<int>(path.index[depth - 1]);
    if (c + 1 < parent->size) {
      first = c;
    } else if (c > 0) {
      first = c - 1;
    } else {
      first = c;
    }
    group.push_back(parent->child[first]);
    if (parent->size > 1) group.push_back(parent->child[first + 1]);
  }

  std::vector<Item> items;
  scratch_.clear();
  size_t new_item = 0;
  auto add_new = [&] {
    new_item = items.size();
    items.push_back(Item{key, negative_zero, static_cast<uint32_t>(scratch_.size()),
                         static_cast<uint32_t>(member.size()), indexed_leaf});
    scratch_.append(member);
  };
  for (uint32_t g : group) {
    const uint8_t* block = leaf(g);
    const uint8_t* p = Payload(block);
    ZsetEntry e;
    for (uint32_t j = 0; j < Header(block)->count; ++j) {
      if (g == number && j == pos.index) add_new();
      p = DecodeZsetEntry(p, e.key, &e);
      items.push_back(Item{e.key, e.negative_zero, static_cast<uint32_t>(scratch_.size()),
                           static_cast<uint32_t>(e.member.size()), g});
      scratch_.append(e.member);
    }
    if (g == number && pos.index == Header(block)->count) add_new();
  }

  std::vector<uint32_t> ends;
  for (size_t k = group.size(); k <= group.size() + 1 && ends.empty(); ++k) {
    ends = PackItems(items, k);
  }
  if (ends.empty()) ends = PackItems(items, 0);

  std::vector<uint32_t> ids(ends.size());
  std::vector<uint32_t> counts(ends.size());
  std::vector<ChildFirst> firsts(ends.size());
  std::vector<uint32_t> item_leaf(items.size());
  // Which existing leaf each output leaf reuses (kNoLeaf: a new one). Every member that changes
  // leaf costs an index update (a cache miss), so a 2 -> 3 split puts the new leaf in the
  // middle: it takes the tail of the left leaf and the head of the right one, and a third of
  // the entries move instead of half.
  std::vector<uint32_t> reuse(ends.size(), kNoLeaf);
  if (group.size() == 2 && ends.size() == 3) {
    reuse = {group[0], kNoLeaf, group[1]};
  } else {
    for (size_t j = 0; j < std::min(ends.size(), group.size()); ++j) reuse[j] = group[j];
  }
  size_t begin = 0;
  for (size_t j = 0; j < ends.size(); ++j) {
    const size_t end = ends[j];
    uint32_t bytes = 0;
    for (size_t i = begin; i < end; ++i) {
      bytes += static_cast<uint32_t>(
          ZsetEntrySize(items[i].key - (i == begin ? 0 : items[i - 1].key), items[i].member_size));
    }
    uint32_t id;
    if (reuse[j] != kNoLeaf) {
      id = reuse[j];
      if (std::max(bytes, kLeafPayload) != Capacity(leaf(id))) {
        // Jumbo leaves are sized to their entry; reallocate under the same number.
        const size_t old_bytes = malloc_usable_size(leaves_[id]);
        auto* block = static_cast<uint8_t*>(
            std::realloc(leaves_[id], kLeafHeaderBytes + std::max(bytes, kLeafPayload)));
        if (block == nullptr) std::abort();
        node_bytes_ += malloc_usable_size(block) - old_bytes;
        leaves_[id] = block;
      }
    } else {
      id = NewLeaf(bytes);
    }
    uint8_t* block = leaf(id);
    uint8_t* p = Payload(block);
    for (size_t i = begin; i < end; ++i) {
      const Item& it = items[i];
      p = EncodeZsetEntry(p, it.key - (i == begin ? 0 : items[i - 1].key), it.negative_zero,
                          std::string_view(scratch_).substr(it.member_offset, it.member_size));
      item_leaf[i] = id;
    }
    Header(block)->count = static_cast<uint32_t>(end - begin);
    Header(block)->used = bytes;
    ids[j] = id;
    counts[j] = static_cast<uint32_t>(end - begin);
    firsts[j] = {items[begin].key, MemberPrefix(std::string_view(scratch_).substr(
                                       items[begin].member_offset, items[begin].member_size))};
    begin = end;
  }
  for (uint32_t g : group) {
    if (std::find(reuse.begin(), reuse.end(), g) == reuse.end()) FreeLeaf(g);
  }

  // Index: every moved member is relocated before the one insertion that may split a segment,
  // so a split that rescans leaves sees the index agree with them (invariant 4).
  for (size_t i = 0; i < items.size(); ++i) {
    if (i == new_item || items[i].old_leaf == item_leaf[i]) continue;
    index_.Relocate(
        HashBytes(std::string_view(scratch_).substr(items[i].member_offset, items[i].member_size)),
        items[i].old_leaf, item_leaf[i]);
  }
  if (indexed_leaf != kNoLeaf) {
    if (indexed_leaf != item_leaf[new_item]) {
      index_.Relocate(hash, indexed_leaf, item_leaf[new_item]);
    }
  }

  if (depth == 0) {
    if (ids.size() == 1) {
      root_ = ids[0];
    } else {
      const uint32_t root = NewInner();
      InnerNode* n = inner(root);
      for (size_t j = 0; j < ids.size(); ++j) {
        n->child[j] = ids[j];
        n->count[j] = counts[j];
        n->first[j] = firsts[j];
      }
      n->size = static_cast<uint16_t>(ids.size());
      root_ = root;
      height_ = 1;
    }
  } else {
    ReplaceChildren(path, depth - 1, first, static_cast<int>(group.size()), ids, counts, firsts,
                    /*append=*/false);
  }
  if (indexed_leaf == kNoLeaf) index_.Insert(hash, item_leaf[new_item], *this);
}

void ZsetTree::ReplaceChildren(Path& path, int depth, int first, int old_count,
                               const std::vector<uint32_t>& ids,
                               const std::vector<uint32_t>& counts,
                               const std::vector<ChildFirst>& firsts, bool append) {
  const uint32_t number = path.node[depth];
  InnerNode* n = inner(number);
  const int added = static_cast<int>(ids.size());
  const int new_size = n->size - old_count + added;
  const int tail = n->size - first - old_count;
  if (new_size <= kInnerFanout) {
    const int from = first + old_count;
    const int to = first + added;
    std::memmove(n->child + to, n->child + from, tail * sizeof(uint32_t));
    std::memmove(n->count + to, n->count + from, tail * sizeof(uint32_t));
    std::memmove(n->first + to, n->first + from, tail * sizeof(ChildFirst));
    for (int j = 0; j < added; ++j) {
      n->child[first + j] = ids[j];
      n->count[first + j] = counts[j];
      n->first[first + j] = firsts[j];
    }
    n->size = static_cast<uint16_t>(new_size);
    return;
  }
  // Overflow: lay the children out in order, then cut them into two nodes.
  std::vector<uint32_t> child(new_size);
  std::vector<uint32_t> count(new_size);
  std::vector<ChildFirst> key(new_size);
  int w = 0;
  auto copy_old = [&](int from, int to) {
    for (int j = from; j < to; ++j, ++w) {
      child[w] = n->child[j];
      count[w] = n->count[j];
      key[w] = n->first[j];
    }
  };
  copy_old(0, first);
  for (int j = 0; j < added; ++j, ++w) {
    child[w] = ids[j];
    count[w] = counts[j];
    key[w] = firsts[j];
  }
  copy_old(first + old_count, n->size);
  // Appends keep the left node full, so a bulk load leaves no half-empty inner nodes.
  const int left = append ? kInnerFanout : (new_size + 1) / 2;
  const uint32_t right_number = NewInner();
  InnerNode* right = inner(right_number);
  n = inner(number);
  uint64_t left_total = 0;
  uint64_t right_total = 0;
  for (int j = 0; j < new_size; ++j) {
    InnerNode* target = j < left ? n : right;
    const int slot = j < left ? j : j - left;
    target->child[slot] = child[j];
    target->count[slot] = count[j];
    target->first[slot] = key[j];
    (j < left ? left_total : right_total) += count[j];
  }
  n->size = static_cast<uint16_t>(left);
  right->size = static_cast<uint16_t>(new_size - left);
  const std::vector<uint32_t> up_ids = {number, right_number};
  const std::vector<uint32_t> up_counts = {static_cast<uint32_t>(left_total),
                                           static_cast<uint32_t>(right_total)};
  const std::vector<ChildFirst> up_keys = {key[0], key[left]};
  if (depth == 0) {
    // Paths are fixed arrays. With fanout 63 and merging of thin nodes, 24 levels would take
    // more members than memory can hold, so reaching it means a broken invariant.
    if (height_ + 1 >= kMaxHeight) std::abort();
    const uint32_t root = NewInner();
    InnerNode* r = inner(root);
    for (int j = 0; j < 2; ++j) {
      r->child[j] = up_ids[j];
      r->count[j] = up_counts[j];
      r->first[j] = up_keys[j];
    }
    r->size = 2;
    root_ = root;
    ++height_;
    return;
  }
  ReplaceChildren(path, depth - 1, static_cast<int>(path.index[depth - 1]), 1, up_ids, up_counts,
                  up_keys, append);
}

void ZsetTree::Append(double score, std::string_view member) {
  const uint64_t hash = HashBytes(member);
  const uint64_t key = ScoreToKey(score);
  const bool negative_zero = IsNegativeZero(score);
  // A run of appends into one leaf reuses the route to it: the descent costs more than the
  // append itself (a snapshot load appends a million entries in a row).
  Path& path = append_path_;
  uint32_t node = append_leaf_;
  if (!appending_ || !append_path_valid_) {
    path.depth = height_;
    node = root_;
    for (int d = 0; d < height_; ++d) {
      path.node[d] = node;
      path.index[d] = inner(node)->size - 1u;
      node = inner(node)->child[path.index[d]];
    }
    append_path_valid_ = true;
  }
  uint8_t* block = leaf(node);
  LeafHeader* header = Header(block);
  if (!appending_ || append_leaf_ != node) {
    const uint8_t* p = Payload(block);
    ZsetEntry e;
    for (uint32_t i = 0; i < header->count; ++i) p = DecodeZsetEntry(p, e.key, &e);
    append_last_key_ = e.key;
    append_leaf_ = node;
    appending_ = true;
  }
  // Into an empty index the entries are collected and indexed in one pass at the end.
  auto index = [&](uint32_t number) {
    if (index_.size() == 0) {
      pending_index_.emplace_back(hash, number);
    } else {
      index_.Insert(hash, number, *this);
    }
  };
  const size_t first_size = ZsetEntrySize(key, member.size());
  if (header->count == 0 && first_size <= kLeafPayload) {
    header->used = static_cast<uint32_t>(
        EncodeZsetEntry(Payload(block), key, negative_zero, member) - Payload(block));
    header->count = 1;
    ++size_;
    append_last_key_ = key;
    index(node);
    return;
  }
  const size_t entry_size = ZsetEntrySize(key - append_last_key_, member.size());
  if (header->count > 0 && header->used + entry_size <= kLeafPayload) {
    EncodeZsetEntry(Payload(block) + header->used, key - append_last_key_, negative_zero, member);
    header->used += static_cast<uint32_t>(entry_size);
    ++header->count;
    ++size_;
    AddToPath(path, 1);
    append_last_key_ = key;
    index(node);
    return;
  }
  // A new rightmost leaf.
  const uint32_t fresh = NewLeaf(static_cast<uint32_t>(first_size));
  uint8_t* fresh_block = leaf(fresh);
  Header(fresh_block)->used = static_cast<uint32_t>(first_size);
  Header(fresh_block)->count = 1;
  EncodeZsetEntry(Payload(fresh_block), key, negative_zero, member);
  ++size_;
  if (header->count == 0) {
    // Only an empty root leaf is empty; the new leaf replaces it.
    FreeLeaf(node);
    root_ = fresh;
  } else if (height_ == 0) {
    const uint32_t root = NewInner();
    InnerNode* r = inner(root);
    ZsetEntry first;
    DecodeZsetEntry(Payload(block), 0, &first);
    r->child[0] = node;
    r->count[0] = header->count;
    r->first[0] = {first.key, MemberPrefix(first.member)};
    r->child[1] = fresh;
    r->count[1] = 1;
    r->first[1] = {key, MemberPrefix(member)};
    r->size = 2;
    root_ = root;
    height_ = 1;
  } else {
    for (int d = 0; d + 1 < path.depth; ++d) ++inner(path.node[d])->count[path.index[d]];
    const int depth = path.depth - 1;
    ReplaceChildren(path, depth, static_cast<int>(path.index[depth]) + 1, 0, {fresh}, {1},
                    {{key, MemberPrefix(member)}}, /*append=*/true);
  }
  append_leaf_ = fresh;
  append_last_key_ = key;
  append_path_valid_ = false;  // the new leaf's route is found by the next descent
  index(fresh);
}

uint32_t ZsetTree::AppendRun(const uint8_t* run, uint32_t count, uint32_t bytes) {
  appending_ = false;  // Append's cursor does not follow runs
  const bool into_empty_root = height_ == 0 && Header(leaf(root_))->count == 0;
  if (into_empty_root && bytes > kLeafPayload) {
    FreeLeaf(root_);  // first, so the leaves stay numbered in order (snapshot_loader.cc)
    root_ = NewLeaf(bytes);
  }
  const uint32_t node = into_empty_root ? root_ : NewLeaf(bytes);
  uint8_t* block = leaf(node);
  std::memcpy(Payload(block), run, bytes);
  Header(block)->count = count;
  Header(block)->used = bytes;
  size_ += count;
  // The run is checked by the caller, perhaps only meanwhile, so its first entry is read within
  // its bytes.
  const auto [first_key, first_prefix] = FirstOfUncheckedRun(Payload(block), bytes);
  const ChildFirst first = {first_key, first_prefix};
  if (into_empty_root) return node;
  Path path;
  path.depth = height_;
  uint32_t last = root_;
  for (int d = 0; d < height_; ++d) {
    path.node[d] = last;
    path.index[d] = inner(last)->size - 1u;
    last = inner(last)->child[path.index[d]];
  }
  if (height_ == 0) {
    const uint32_t root = NewInner();
    InnerNode* r = inner(root);
    // The root leaf came from an earlier AppendRun, unchecked as this one.
    const auto [last_key, last_prefix] =
        FirstOfUncheckedRun(Payload(leaf(last)), Header(leaf(last))->used);
    r->child[0] = last;
    r->count[0] = Header(leaf(last))->count;
    r->first[0] = {last_key, last_prefix};
    r->child[1] = node;
    r->count[1] = count;
    r->first[1] = first;
    r->size = 2;
    root_ = root;
    height_ = 1;
  } else {
    for (int d = 0; d + 1 < path.depth; ++d) inner(path.node[d])->count[path.index[d]] += count;
    const int depth = path.depth - 1;
    ReplaceChildren(path, depth, static_cast<int>(path.index[depth]) + 1, 0, {node}, {count},
                    {first}, /*append=*/true);
  }
  return node;
}

// ---- Removal ---------------------------------------------------------------------------------

bool ZsetTree::Erase(std::string_view member) {
  BeforeMutation();
  const uint64_t hash = HashBytes(member);
  uint32_t number;
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!Find(member, hash, &number, &pos, &e)) return false;
  Path path;
  [[maybe_unused]] const uint32_t found = DescendByKey(e.key, member, &path, nullptr);
  assert(found == number);
  index_.Erase(hash, number);
  EraseInLeaf(path, number, pos.index, 1, /*keep_index=*/true);
  return true;
}

size_t ZsetTree::EraseRange(size_t start, size_t stop) {
  BeforeMutation();
  stop = std::min(stop, size_);
  if (start >= stop) return 0;
  size_t remaining = stop - start;
  while (remaining > 0) {
    Path path;
    size_t in_leaf;
    const uint32_t number = DescendByRank(start, &path, &in_leaf);
    const uint32_t n =
        static_cast<uint32_t>(std::min<size_t>(remaining, Header(leaf(number))->count - in_leaf));
    EraseInLeaf(path, number, static_cast<uint32_t>(in_leaf), n, /*keep_index=*/false);
    remaining -= n;
  }
  return stop - start;
}

void ZsetTree::EraseInLeaf(Path& path, uint32_t number, uint32_t first, uint32_t n,
                           bool keep_index) {
  uint8_t* block = leaf(number);
  LeafHeader* header = Header(block);
  const ZsetRunPosition pos = ZsetRunSeek(Payload(block), first);
  if (!keep_index) {
    const uint8_t* p = Payload(block) + pos.offset;
    ZsetEntry e;
    e.key = pos.prev_key;
    for (uint32_t i = 0; i < n; ++i) {
      p = DecodeZsetEntry(p, e.key, &e);
      index_.Erase(HashBytes(e.member), number);
    }
  }
  AddToPath(path, -static_cast<int64_t>(n));
  size_ -= n;
  if (n == header->count) {
    FreeLeaf(number);
    if (path.depth == 0) {
      root_ = NewLeaf(kLeafPayload);
    } else {
      RemoveChild(path, path.depth - 1);
    }
  } else {
    header->used = ZsetRunErase(Payload(block), header->count, header->used, pos, n);
    header->count -= n;
    if (first == 0) {
      ZsetEntry e;
      DecodeZsetEntry(Payload(block), 0, &e);
      SetFirst(path, path.depth, {e.key, MemberPrefix(e.member)});
    }
    MaybeMergeLeaf(path);
  }
  CollapseRoot();
}

void ZsetTree::RemoveChild(Path& path, int depth) {
  const uint32_t number = path.node[depth];
  InnerNode* n = inner(number);
  const int i = static_cast<int>(path.index[depth]);
  const int tail = n->size - i - 1;
  std::memmove(n->child + i, n->child + i + 1, tail * sizeof(uint32_t));
  std::memmove(n->count + i, n->count + i + 1, tail * sizeof(uint32_t));
  std::memmove(n->first + i, n->first + i + 1, tail * sizeof(ChildFirst));
  --n->size;
  if (n->size == 0) {
    FreeInner(number);
    if (depth == 0) {
      root_ = NewLeaf(kLeafPayload);
      height_ = 0;
    } else {
      RemoveChild(path, depth - 1);
    }
    return;
  }
  if (i == 0) SetFirst(path, depth, n->first[0]);
  MaybeMergeInner(path, depth);
}

void ZsetTree::MaybeMergeLeaf(Path& path) {
  const int depth = path.depth;
  if (depth == 0) return;
  InnerNode* parent = inner(path.node[depth - 1]);
  const int c = static_cast<int>(path.index[depth - 1]);
  const uint32_t used = Header(leaf(parent->child[c]))->used;
  if (used >= kLeafPayload / 4) return;
  int s;
  if (c + 1 < parent->size) {
    s = c + 1;
  } else if (c > 0) {
    s = c - 1;
  } else {
    return;
  }
  if (used + Header(leaf(parent->child[s]))->used > kLeafPayload) return;
  const int left = std::min(c, s);
  const int right = std::max(c, s);
  const uint32_t left_number = parent->child[left];
  const uint32_t right_number = parent->child[right];
  uint8_t* left_block = leaf(left_number);
  const uint8_t* right_block = leaf(right_number);
  uint64_t last_key = 0;
  {
    const uint8_t* p = Payload(left_block);
    ZsetEntry e;
    for (uint32_t i = 0; i < Header(left_block)->count; ++i) p = DecodeZsetEntry(p, e.key, &e);
    last_key = e.key;
  }
  uint8_t* out = Payload(left_block) + Header(left_block)->used;
  const uint8_t* p = Payload(right_block);
  ZsetEntry e;
  for (uint32_t i = 0; i < Header(right_block)->count; ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    out = EncodeZsetEntry(out, e.key - last_key, e.negative_zero, e.member);
    last_key = e.key;
    index_.Relocate(HashBytes(e.member), right_number, left_number);
  }
  Header(left_block)->used = static_cast<uint32_t>(out - Payload(left_block));
  Header(left_block)->count += Header(right_block)->count;
  parent->count[left] += parent->count[right];
  parent->count[right] = 0;
  FreeLeaf(right_number);
  path.index[depth - 1] = static_cast<uint32_t>(right);
  RemoveChild(path, depth - 1);
}

void ZsetTree::MaybeMergeInner(Path& path, int depth) {
  if (depth == 0) return;
  InnerNode* parent = inner(path.node[depth - 1]);
  const int c = static_cast<int>(path.index[depth - 1]);
  if (inner(parent->child[c])->size >= kInnerFanout / 4) return;
  int s;
  if (c + 1 < parent->size) {
    s = c + 1;
  } else if (c > 0) {
    s = c - 1;
  } else {
    return;
  }
  const int left = std::min(c, s);
  const int right = std::max(c, s);
  InnerNode* l = inner(parent->child[left]);
  InnerNode* r = inner(parent->child[right]);
  if (l->size + r->size > kInnerFanout) return;
  std::memcpy(l->child + l->size, r->child, r->size * sizeof(uint32_t));
  std::memcpy(l->count + l->size, r->count, r->size * sizeof(uint32_t));
  std::memcpy(l->first + l->size, r->first, r->size * sizeof(ChildFirst));
  l->size = static_cast<uint16_t>(l->size + r->size);
  parent->count[left] += parent->count[right];
  parent->count[right] = 0;
  FreeInner(parent->child[right]);
  path.index[depth - 1] = static_cast<uint32_t>(right);
  RemoveChild(path, depth - 1);
}

void ZsetTree::CollapseRoot() {
  while (height_ > 0 && inner(root_)->size == 1) {
    const uint32_t old = root_;
    root_ = inner(old)->child[0];
    FreeInner(old);
    --height_;
  }
}

// ---- Accounting and checks ------------------------------------------------------------------

size_t ZsetTree::MemoryUsage() const {
  return node_bytes_ + leaves_.MemoryUsage() + inners_.MemoryUsage() +
         (free_leaves_.capacity() + free_inners_.capacity()) * sizeof(uint32_t) +
         scratch_.capacity() + index_.MemoryUsage() +
         pending_index_.capacity() * sizeof(pending_index_[0]);
}

ZsetTree::Stats ZsetTree::GetStats() const {
  FinishAppends();
  Stats s;
  s.height = height_;
  for (size_t i = 0; i < leaves_.size(); ++i) {
    const uint8_t* block = leaves_[i];
    if (block == nullptr) continue;
    ++s.leaves;
    if (Header(block)->used > kLeafPayload) ++s.jumbo_leaves;
    s.leaf_payload_bytes += Header(block)->used;
    s.leaf_capacity_bytes += Capacity(block);
    s.leaf_bytes += malloc_usable_size(const_cast<uint8_t*>(block));
  }
  for (size_t i = 0; i < inners_.size(); ++i) {
    if (inners_[i] == nullptr) continue;
    ++s.inner_nodes;
    s.inner_bytes += malloc_usable_size(inners_[i]);
  }
  s.table_bytes = leaves_.MemoryUsage() + inners_.MemoryUsage() +
                  (free_leaves_.capacity() + free_inners_.capacity()) * sizeof(uint32_t);
  s.index_bytes = index_.MemoryUsage();
  s.index_segments = index_.segment_count();
  s.index_slots = index_.slot_capacity();
  return s;
}

std::string ZsetTree::ValidateNode(uint32_t node, int height, size_t* count, ChildFirst* first,
                                   bool* have_prev, uint64_t* prev_key,
                                   std::string* prev_member) const {
  if (height == 0) {
    const uint8_t* block = leaf(node);
    if (block == nullptr) return "dangling leaf";
    const uint32_t n = Header(block)->count;
    if (n == 0 && !(node == root_ && height_ == 0)) return "empty leaf";
    if (Header(block)->used > kLeafPayload && n != 1) return "oversized leaf";
    const uint8_t* p = Payload(block);
    ZsetEntry e;
    for (uint32_t i = 0; i < n; ++i) {
      p = DecodeZsetEntry(p, e.key, &e);
      if (i == 0) *first = {e.key, MemberPrefix(e.member)};
      if (*have_prev && CompareZsetKeys(*prev_key, *prev_member, e.key, e.member) >= 0) {
        return "entries out of order";
      }
      *have_prev = true;
      *prev_key = e.key;
      prev_member->assign(e.member);
      uint32_t found_leaf;
      ZsetRunPosition pos;
      ZsetEntry found;
      if (!Find(e.member, HashBytes(e.member), &found_leaf, &pos, &found) || found_leaf != node) {
        return "member not indexed to its leaf";
      }
    }
    if (static_cast<size_t>(p - Payload(block)) != Header(block)->used) return "bad used bytes";
    *count = n;
    return "";
  }
  const InnerNode* n = inner(node);
  if (n == nullptr) return "dangling inner node";
  if (n->size == 0 || n->size > kInnerFanout) return "bad inner size";
  size_t total = 0;
  for (int i = 0; i < n->size; ++i) {
    size_t c;
    ChildFirst f;
    std::string err =
        ValidateNode(n->child[i], height - 1, &c, &f, have_prev, prev_key, prev_member);
    if (!err.empty()) return err;
    if (c != n->count[i]) return "bad child count";
    if (f.key != n->first[i].key) return "bad first key";
    if (f.prefix != n->first[i].prefix) return "bad first member prefix";
    if (i == 0) *first = f;
    total += c;
  }
  *count = total;
  return "";
}

std::string ZsetTree::Validate() const {
  FinishAppends();
  size_t count = 0;
  ChildFirst first{};
  bool have_prev = false;
  uint64_t prev_key = 0;
  std::string prev_member;
  std::string err =
      ValidateNode(root_, height_, &count, &first, &have_prev, &prev_key, &prev_member);
  if (!err.empty()) return err;
  if (count != size_) return "size mismatch";
  if (index_.size() != size_) return "index size mismatch";
  return "";
}

}  // namespace goblin
