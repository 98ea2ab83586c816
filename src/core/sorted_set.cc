#include "core/sorted_set.h"

#include <algorithm>

namespace goblin {

SortedSet::SortedSet() = default;

SortedSet::SortedSet(size_t size_hint, size_t member_size_hint, const ZsetLimits& limits) {
  if (size_hint > limits.max_listpack_entries || member_size_hint > limits.max_listpack_value) {
    tree_ = std::make_unique<ZsetTree>();
  }
}

SortedSet::~SortedSet() = default;
SortedSet::SortedSet(SortedSet&&) noexcept = default;
SortedSet& SortedSet::operator=(SortedSet&&) noexcept = default;

void SortedSet::ConvertToTree() {
  auto tree = std::make_unique<ZsetTree>();
  const uint8_t* p = small_.data();
  ZsetEntry e;
  for (size_t i = 0; i < small_.size(); ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    tree->Append(e.score(), e.member);
  }
  // The index stays deferred: a bulk load that crosses the threshold keeps appending, and
  // anything else settles it first.
  tree_ = std::move(tree);
  small_ = ZsetListpack();
}

bool SortedSet::Insert(double score, std::string_view member, const ZsetLimits& limits,
                       double* old_score) {
  if (tree_) return tree_->Insert(score, member, old_score);
  const uint64_t key = ScoreToKey(score);
  const bool negative_zero = IsNegativeZero(score);
  ZsetRunPosition pos;
  ZsetEntry e;
  if (small_.Find(member, &pos, &e)) {
    if (old_score != nullptr) *old_score = e.score();
    if (e.key == key && e.negative_zero == negative_zero) return false;
    small_.EraseAt(pos.index, 1);
    small_.InsertNew(key, negative_zero, member);
    return false;
  }
  // Redis checks the limits only when a member is added.
  if (small_.size() + 1 > limits.max_listpack_entries ||
      member.size() > limits.max_listpack_value) {
    ConvertToTree();
    return tree_->Insert(score, member, old_score);
  }
  small_.InsertNew(key, negative_zero, member);
  return true;
}

bool SortedSet::Erase(std::string_view member) {
  if (tree_) return tree_->Erase(member);
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!small_.Find(member, &pos, &e)) return false;
  small_.EraseAt(pos.index, 1);
  return true;
}

std::optional<double> SortedSet::Score(std::string_view member) const {
  if (tree_) return tree_->Score(member);
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!small_.Find(member, &pos, &e)) return std::nullopt;
  return e.score();
}

std::optional<size_t> SortedSet::Rank(std::string_view member) const {
  if (tree_) return tree_->Rank(member);
  ZsetRunPosition pos;
  ZsetEntry e;
  if (!small_.Find(member, &pos, &e)) return std::nullopt;
  return pos.index;
}

std::optional<size_t> SortedSet::ReverseRank(std::string_view member) const {
  const std::optional<size_t> rank = Rank(member);
  if (!rank) return std::nullopt;
  return size() - 1 - *rank;
}

size_t SortedSet::ScoreLowerBound(double min, bool exclusive) const {
  const uint64_t key = ScoreToKey(min);
  return tree_ ? tree_->CountBelowKey(key, exclusive) : small_.CountBelowKey(key, exclusive);
}

size_t SortedSet::ScoreUpperBound(double max, bool exclusive) const {
  const uint64_t key = ScoreToKey(max);
  return tree_ ? tree_->CountBelowKey(key, !exclusive) : small_.CountBelowKey(key, !exclusive);
}

size_t SortedSet::CountBelowLexBound(const ZsetLexBound& bound,
                                     ZsetLexBound::Kind counts_its_member) const {
  switch (bound.kind) {
    case ZsetLexBound::Kind::kNegativeInfinity:
      return 0;
    case ZsetLexBound::Kind::kPositiveInfinity:
      return size();
    case ZsetLexBound::Kind::kInclusive:
    case ZsetLexBound::Kind::kExclusive:
      break;
  }
  const bool inclusive = bound.kind == counts_its_member;
  return tree_ ? tree_->CountBelowMember(bound.member, inclusive)
               : small_.CountBelowMember(bound.member, inclusive);
}

// A lower bound starts after its member when exclusive; an upper one ends after it when
// inclusive.
size_t SortedSet::LexLowerBound(const ZsetLexBound& min) const {
  return CountBelowLexBound(min, ZsetLexBound::Kind::kExclusive);
}

size_t SortedSet::LexUpperBound(const ZsetLexBound& max) const {
  return CountBelowLexBound(max, ZsetLexBound::Kind::kInclusive);
}

ZsetElement SortedSet::ElementAt(size_t rank) const {
  if (tree_) {
    const ZsetTree::Iterator it = tree_->Seek(rank);
    // The iterator's entries point into the leaf, which outlives the iterator.
    return ZsetElement{it.entry().score(), it.entry().member};
  }
  const ZsetEntry e = small_.EntryAt(rank);
  return ZsetElement{e.score(), e.member};
}

size_t SortedSet::EraseRankRange(size_t start, size_t stop) {
  stop = std::min(stop, size());
  if (start >= stop) return 0;
  if (tree_) return tree_->EraseRange(start, stop);
  small_.EraseAt(start, stop - start);
  return stop - start;
}

std::optional<std::pair<double, std::string>> SortedSet::PopMin() {
  if (empty()) return std::nullopt;
  const ZsetElement e = ElementAt(0);
  std::pair<double, std::string> result(e.score, std::string(e.member));
  EraseRankRange(0, 1);
  return result;
}

std::optional<std::pair<double, std::string>> SortedSet::PopMax() {
  if (empty()) return std::nullopt;
  const size_t last = size() - 1;
  const ZsetElement e = ElementAt(last);
  std::pair<double, std::string> result(e.score, std::string(e.member));
  EraseRankRange(last, last + 1);
  return result;
}

void SortedSet::AppendSorted(double score, std::string_view member, const ZsetLimits& limits) {
  if (!tree_ && (small_.size() + 1 > limits.max_listpack_entries ||
                 member.size() > limits.max_listpack_value)) {
    ConvertToTree();
  }
  if (tree_) {
    tree_->Append(score, member);
  } else {
    // Appending at the end of a run is its lower bound; InsertNew finds it in one pass.
    small_.InsertNew(ScoreToKey(score), IsNegativeZero(score), member);
  }
}

size_t SortedSet::MemoryUsage() const {
  return sizeof(*this) + (tree_ ? sizeof(ZsetTree) + tree_->MemoryUsage() : small_.MemoryUsage());
}

size_t SortedSet::Optimize() {
  const size_t before = MemoryUsage();
  if (!tree_) {
    small_.Shrink();
  } else {
    auto packed = std::make_unique<ZsetTree>();
    for (ZsetTree::Iterator it = tree_->Seek(0); it.Valid(); it.Next()) {
      packed->Append(it.entry().score(), it.entry().member);
    }
    packed->FinishAppends();
    packed->CompactIndex();
    tree_ = std::move(packed);
  }
  const size_t after = MemoryUsage();
  return before > after ? before - after : 0;
}

ZsetStats SortedSet::Stats() const {
  ZsetStats s;
  s.encoding = EncodingName();
  s.size = size();
  s.bytes = MemoryUsage();
  if (!tree_) {
    s.layout = "packed-run";
    s.payload_bytes = small_.used_bytes();
    s.capacity_bytes = small_.capacity_bytes();
    s.leaves = small_.size() > 0 ? 1 : 0;
    s.leaf_bytes = small_.MemoryUsage();
  } else {
    const ZsetTree::Stats t = tree_->GetStats();
    s.layout = "bptree";
    s.payload_bytes = t.leaf_payload_bytes;
    s.capacity_bytes = t.leaf_capacity_bytes;
    s.leaves = t.leaves;
    s.jumbo_leaves = t.jumbo_leaves;
    s.inner_nodes = t.inner_nodes;
    s.height = t.height;
    s.leaf_bytes = t.leaf_bytes;
    s.inner_bytes = t.inner_bytes;
    s.table_bytes = t.table_bytes;
    s.index_bytes = t.index_bytes;
    s.index_segments = t.index_segments;
    s.index_slots = t.index_slots;
  }
  s.fill = s.capacity_bytes == 0 ? 0 : static_cast<double>(s.payload_bytes) / s.capacity_bytes;
  return s;
}

std::string SortedSet::Validate() const {
  if (tree_) return tree_->Validate();
  const uint8_t* p = small_.data();
  ZsetEntry prev;
  ZsetEntry e;
  for (size_t i = 0; i < small_.size(); ++i) {
    p = DecodeZsetEntry(p, e.key, &e);
    if (i > 0 && CompareZsetKeys(prev.key, prev.member, e.key, e.member) >= 0) {
      return "entries out of order";
    }
    prev = e;
  }
  if (static_cast<size_t>(p - small_.data()) != small_.used_bytes()) return "bad used bytes";
  return "";
}

}  // namespace goblin
