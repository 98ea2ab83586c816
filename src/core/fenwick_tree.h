// FenwickTree (a binary indexed tree): n counts with O(log n) update, prefix sum, and its
// inverse, the position that holds the k-th unit. The keyspace in cluster mode keeps one over
// its 16384 hash slots' key counts, so it can pick a slot weighted by its keys (a uniformly
// random key is then a random key of that slot) and find the next non-empty slot, each in 14
// steps.
//
// Layout: one array of n 64-bit sums, 1-based. Node i sums the counts of positions
// (i - lowbit(i), i], where lowbit(i) = i & -i:
//
//   node:   1     2       3     4             5     6       7     8   ...
//   sums:  [1]  [1..2]   [3]  [1..4]         [5]  [5..6]   [7]  [1..8]
//
// An update climbs i += lowbit(i), a prefix sum descends i -= lowbit(i), and FindRank walks
// down from the largest power of two <= n, halving the step: the nodes it reads cover the
// prefix it has passed, so it needs no separate copy of the counts (8 bytes per position in
// all: 128 KB for the slots).
//
// Invariants:
//   1. node[i] = sum of count(p) for p in (i - lowbit(i), i], and total_ = sum of all counts.
//   2. Every count is >= 0 (Add must not take a count below zero).
// Not thread-safe.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace goblin {

class FenwickTree {
 public:
  // n positions, all counts 0.
  explicit FenwickTree(size_t n) : nodes_(n + 1, 0) {
    while (top_step_ * 2 <= n) top_step_ *= 2;
  }

  size_t size() const { return nodes_.size() - 1; }
  uint64_t total() const { return total_; }

  // count(position) += delta. REQUIRES: position < size(); the count stays >= 0.
  void Add(size_t position, int64_t delta) {
    assert(position < size());
    for (size_t i = position + 1; i < nodes_.size(); i += i & (~i + 1)) {
      nodes_[i] += static_cast<uint64_t>(delta);
    }
    total_ += static_cast<uint64_t>(delta);
  }

  // The sum of the counts of positions [0, end). REQUIRES: end <= size().
  uint64_t PrefixSum(size_t end) const {
    assert(end <= size());
    uint64_t sum = 0;
    for (size_t i = end; i > 0; i -= i & (~i + 1)) sum += nodes_[i];
    return sum;
  }

  // The position p with PrefixSum(p) <= rank < PrefixSum(p + 1): the one holding the rank-th
  // unit, counting from 0, so a uniform rank in [0, total()) picks p with probability
  // count(p) / total(). REQUIRES: rank < total().
  size_t FindRank(uint64_t rank) const {
    assert(rank < total_);
    size_t position = 0;  // the prefix passed so far, [0, position)
    for (size_t step = top_step_; step > 0; step /= 2) {
      const size_t next = position + step;
      if (next < nodes_.size() && nodes_[next] <= rank) {
        position = next;
        rank -= nodes_[next];
      }
    }
    return position;
  }

  // The first position >= from with a nonzero count, or size() when there is none.
  size_t NextNonZero(size_t from) const {
    const uint64_t before = PrefixSum(from);
    return before == total_ ? size() : FindRank(before);
  }

  size_t AllocatedBytes() const { return nodes_.capacity() * sizeof(uint64_t); }

 private:
  std::vector<uint64_t> nodes_;  // nodes_[0] unused
  uint64_t total_ = 0;
  size_t top_step_ = 1;  // the largest power of two <= size(), or 1 when empty
};

}  // namespace goblin
