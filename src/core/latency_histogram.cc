#include "core/latency_histogram.h"

namespace goblin {

uint64_t* LatencyHistogram::AllocateBlock(unsigned block) {
  blocks_[block] = std::make_unique<uint64_t[]>(kBlockSize);  // zeroed
  return blocks_[block].get();
}

uint64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  const double requested = percentile < 100.0 ? percentile : 100.0;
  // The same arithmetic as Redis's hdr_histogram, so that a rank on a .5 boundary rounds alike.
  int64_t rank = static_cast<int64_t>(requested / 100 * static_cast<double>(count_) + 0.5);
  if (rank < 1) rank = 1;
  uint64_t seen = 0;
  for (unsigned block = 0; block < kBlocks; ++block) {
    const uint64_t* counters = blocks_[block].get();
    if (counters == nullptr) continue;
    for (unsigned slot = 0; slot < kBlockSize; ++slot) {
      seen += counters[slot];
      if (seen >= static_cast<uint64_t>(rank)) {
        const unsigned index = (block << kBlockBits) + slot;
        return percentile == 0.0 ? ValueAt(index) : ValueAt(index) + WidthAt(index) - 1;
      }
    }
  }
  return 0;
}

std::vector<LatencyHistogram::Step> LatencyHistogram::PowerOfTwoSteps() const {
  std::vector<Step> steps;
  uint64_t cumulative = 0;
  unsigned next = 0;  // the first counter not yet added
  for (uint64_t bound = 1024; cumulative < count_; bound *= 2) {
    // A bound past the tracked range ends at the last counter, as the iterator runs off the end.
    const unsigned end = bound < (uint64_t{1} << 30) ? IndexOf(bound) : kCounters - 1;
    const uint64_t before = cumulative;
    for (; next <= end; ++next) cumulative += CountAt(next);
    if (cumulative > before) steps.push_back({ValueAt(end) + WidthAt(end) - 1, cumulative});
    if (end == kCounters - 1) break;
  }
  return steps;
}

}  // namespace goblin
