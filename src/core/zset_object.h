// ZsetObject: the Collection a sorted-set key owns, a thin shell around goblin::SortedSet.
//
// The keyspace frees, copies and measures values through Collection; the sorted-set commands
// reach the SortedSet inside through set(). The shell adds 8 bytes (the vtable pointer) to the
// SortedSet it holds:
//
//   KeyEntry payload --> +---------+------------------------------------------+
//                        | vtable  | SortedSet (packed run | B+tree pointer)   |
//                        +---------+------------------------------------------+
//
// Invariants:
//  1. A ZsetObject stored under a key is never empty: the command that removes its last member
//     deletes the key (as Redis deletes empty keys).
//  2. The small ("listpack") form never stores -0: Redis writes an integral score into a
//     listpack as an integer, so -0 reads back as 0 there, while its skiplist keeps -0. The
//     command layer applies that rule (ZsetObject::Insert); a clone preserves it.
//
// Allocated with new only (MemoryUsage asks the allocator for the size of this block).
#pragma once

#include <cstddef>
#include <string_view>

#include "core/collection.h"
#include "core/sorted_set.h"
#include "core/value_types.h"

namespace goblin {

class ZsetObject final : public Collection {
 public:
  ZsetObject() = default;
  // Starts in the large form when size_hint or member_size_hint exceeds the limits.
  ZsetObject(size_t size_hint, size_t member_size_hint, const ZsetLimits& limits)
      : set_(size_hint, member_size_hint, limits) {}
  explicit ZsetObject(SortedSet&& set) : set_(std::move(set)) {}

  SortedSet& set() { return set_; }
  const SortedSet& set() const { return set_; }

  ValueType type() const override { return ValueType::kZSet; }
  size_t MemoryUsage() const override;
  std::string_view EncodingName() const override { return set_.EncodingName(); }
  // Same members, scores and form (a small set stays small whatever the limits now are).
  Collection* Clone() const override;
  size_t Optimize() override { return set_.Optimize(); }
  // Each (member, score) pair is one unordered element, as in Redis's digest.
  void Digest(ValueDigest* digest) const override;
  void Describe(StatFields* fields) const override;
  void AppendSnapshotValue(std::string* out, std::string* scratch) const override;
  // The registry's decoder (zset_snapshot.cc): the runs are checked entry by entry (order,
  // -0 marks, NaN) and the set takes the form the limits give its size and longest member.
  static Collection* DecodeSnapshot(std::string_view bytes, const EncodingLimits& limits,
                                    std::string* what);
  // The form byte of the snapshot value.
  static constexpr uint8_t kSnapshotSmall = 0;
  static constexpr uint8_t kSnapshotLarge = 1;

  // Adds member or sets its score, keeping invariant 2: in the small form a -0 score is stored
  // as 0 (but a -0 that moves the set to the large form stays -0, as in Redis). Returns
  // whether the member was added; *old_score receives the previous score otherwise.
  static bool Insert(SortedSet& set, double score, std::string_view member,
                     const ZsetLimits& limits, double* old_score = nullptr);

  // Moves a small set to the large form (Redis converts before a ZADD of more pairs than
  // zset-max-listpack-entries).
  static void ConvertToLarge(SortedSet& set);

 private:
  SortedSet set_;
};

}  // namespace goblin
