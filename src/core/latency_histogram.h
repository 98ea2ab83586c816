// A log-linear histogram of durations in nanoseconds, with the bucket layout of an HDR
// histogram tracking 1 ns .. 1 s at 2 significant figures: the layout Redis's per-command
// latency tracking uses, so percentiles and bucket bounds come out as Redis prints them.
//
// Values are grouped by the position of their highest bit. Below 256 every value has its own
// counter; from there on each power of two [2^k, 2^(k+1)) is split into 128 counters of equal
// width 2^(k-7). A value is therefore known within 1/128 of itself (under 0.8%), which is what
// "2 significant figures" guarantees. Counter index i, value v (b = bit_width(v | 255) - 8):
//
//   i = (b << 7) + (v >> b)
//
//   index     0 .. 255    256 .. 383    384 .. 511            2944 .. 3071
//   values    0 .. 255    256 .. 511    512 .. 1023    ...    2^29 .. 2^30 - 1
//   width     1           2             4                     2^22
//
// 3072 counters in all: 24 blocks of 128. A block is allocated when a value first lands in
// it, so a command whose calls take 300 ns .. 5 us holds five 1 KiB blocks rather than 24 KiB.
//
// Invariants:
//  1. blocks_[j] is null or holds 128 counters for indexes [128 j, 128 j + 128).
//  2. count_ is the sum of all counters.
// Not thread-safe: one thread records and reads.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

namespace goblin {

class LatencyHistogram {
 public:
  static constexpr uint64_t kLowest = 1;
  static constexpr uint64_t kHighest = 1'000'000'000;

  LatencyHistogram() = default;
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Counts one value, clamped into [kLowest, kHighest].
  void Record(uint64_t value) {
    // One unsigned comparison for both ends: 0 wraps around past kHighest.
    if (value - kLowest > kHighest - kLowest) [[unlikely]] {
      value = value < kLowest ? kLowest : kHighest;
    }
    const unsigned index = IndexOf(value);
    uint64_t* block = blocks_[index >> kBlockBits].get();
    if (block == nullptr) [[unlikely]]
      block = AllocateBlock(index >> kBlockBits);
    ++block[index & (kBlockSize - 1)];
    ++count_;
  }

  // Number of values recorded.
  uint64_t count() const { return count_; }

  // The value below which `percentile` percent (0..100) of the values fall, as Redis's
  // hdr_value_at_percentile: the rank round(percentile% of count), at least 1, is looked up, and
  // the highest value its counter stands for is returned (the lowest for percentile 0).
  // 0 when nothing was recorded.
  uint64_t ValueAtPercentile(double percentile) const;

  // One step of a walk at power-of-two bounds: `count` values are at most `upper`.
  struct Step {
    uint64_t upper;
    uint64_t count;
  };
  // The cumulative distribution at 1024, 2048, 4096, ... ns, as Redis's LATENCY HISTOGRAM walks
  // it (an HDR logarithmic iterator): the step for bound L counts every value whose counter
  // starts at or below L, and `upper` is the highest value of L's counter. Steps that add
  // nothing are left out; the last step counts every value.
  std::vector<Step> PowerOfTwoSteps() const;

  // The lowest and highest value counted together with value. REQUIRES: value < 2^30.
  static uint64_t LowestEquivalent(uint64_t value) { return ValueAt(IndexOf(value)); }
  static uint64_t HighestEquivalent(uint64_t value) {
    const unsigned index = IndexOf(value);
    return ValueAt(index) + WidthAt(index) - 1;
  }

 private:
  static constexpr unsigned kBlockBits = 7;
  static constexpr unsigned kBlockSize = 1u << kBlockBits;
  static constexpr unsigned kBlocks = 24;
  static constexpr unsigned kCounters = kBlocks * kBlockSize;

  static unsigned IndexOf(uint64_t value) {
    const unsigned bucket = static_cast<unsigned>(std::bit_width(value | 255)) - 8;
    return (bucket << kBlockBits) + static_cast<unsigned>(value >> bucket);
  }
  static uint64_t ValueAt(unsigned index) {
    if (index < 2 * kBlockSize) return index;
    const unsigned bucket = (index >> kBlockBits) - 1;
    return static_cast<uint64_t>((index & (kBlockSize - 1)) + kBlockSize) << bucket;
  }
  static uint64_t WidthAt(unsigned index) {
    return index < 2 * kBlockSize ? 1 : uint64_t{1} << ((index >> kBlockBits) - 1);
  }
  uint64_t CountAt(unsigned index) const {
    const uint64_t* block = blocks_[index >> kBlockBits].get();
    return block == nullptr ? 0 : block[index & (kBlockSize - 1)];
  }
  uint64_t* AllocateBlock(unsigned block);

  std::array<std::unique_ptr<uint64_t[]>, kBlocks> blocks_;
  uint64_t count_ = 0;
};

}  // namespace goblin
