#include "core/lcs.h"

#include <array>
#include <bit>
#include <cstddef>

namespace goblin {
namespace {

using Word = uint64_t;
constexpr size_t kWordBits = 64;

// Computes the rows H_1 .. H_|a| of lcs.h one after the other.
class RowBuilder {
 public:
  RowBuilder(std::string_view a, std::string_view b)
      : words_((b.size() + kWordBits - 1) / kWordBits), columns_(b.size()), v_(words_, ~Word{0}) {
    // One mask per byte value present in both strings: bit j set where b[j] is that byte.
    std::array<bool, 256> in_a{};
    for (unsigned char c : a) in_a[c] = true;
    slot_.fill(kNone);
    for (size_t j = 0; j < b.size(); ++j) {
      const auto c = static_cast<unsigned char>(b[j]);
      if (!in_a[c]) continue;
      if (slot_[c] == kNone) {
        slot_[c] = slots_++;
        masks_.resize(masks_.size() + words_, 0);
      }
      masks_[slot_[c] * words_ + j / kWordBits] |= Word{1} << (j % kWordBits);
    }
  }

  size_t words() const { return words_; }

  // Advances from row i-1 to row i, whose byte of a is c. The recurrence keeps V = ~H: with
  // U = V & M(c), V' = (V + U) | (V - U), and V - U = V & ~U since U is a subset of V.
  void Advance(unsigned char c) {
    if (slot_[c] == kNone) return;  // no match in this row: H_i = H_{i-1}
    const Word* match = masks_.data() + slot_[c] * words_;
    bool carry = false;
    for (size_t w = 0; w < words_; ++w) {
      const Word v = v_[w];
      const Word u = v & match[w];
      Word sum;
      const bool first = __builtin_add_overflow(v, u, &sum);
      const bool second = __builtin_add_overflow(sum, static_cast<Word>(carry), &sum);
      carry = first || second;
      v_[w] = sum | (v & ~u);
    }
  }

  // H_i of the current row into out[0 .. words()), the bits past |b| clear.
  void Store(Word* out) const {
    for (size_t w = 0; w < words_; ++w) out[w] = ~v_[w];
    if (const size_t tail = columns_ % kWordBits; tail != 0)
      out[words_ - 1] &= (Word{1} << tail) - 1;
  }

 private:
  static constexpr uint16_t kNone = 0xFFFF;

  size_t words_;
  size_t columns_;
  std::vector<Word> v_;
  std::array<uint16_t, 256> slot_;  // where each byte's mask starts in masks_, in words_ units
  uint16_t slots_ = 0;
  std::vector<Word> masks_;
};

uint32_t Popcount(const Word* row, size_t words) {
  uint32_t count = 0;
  for (size_t w = 0; w < words; ++w) count += static_cast<uint32_t>(std::popcount(row[w]));
  return count;
}

}  // namespace

uint32_t LcsLength(std::string_view a, std::string_view b) {
  RowBuilder rows(a, b);
  for (unsigned char c : a) rows.Advance(c);
  std::vector<Word> last(rows.words());
  rows.Store(last.data());
  return Popcount(last.data(), last.size());
}

LcsMatches LcsWalk(std::string_view a, std::string_view b) {
  RowBuilder rows(a, b);
  const size_t words = rows.words();
  // table[(i - 1) * words ..] holds H_i; H_0 is all zeros.
  std::vector<Word> table(a.size() * words);
  for (size_t i = 0; i < a.size(); ++i) {
    rows.Advance(static_cast<unsigned char>(a[i]));
    rows.Store(table.data() + i * words);
  }
  // H_row bit of column `column` (1-based): L(row, column) - L(row, column - 1).
  auto step = [&](uint32_t row, uint32_t column) -> uint32_t {
    if (row == 0) return 0;
    const size_t bit = column - 1;
    return (table[(row - 1) * words + bit / kWordBits] >> (bit % kWordBits)) & 1;
  };
  // L(row, column) by counting the row's steps up to that column.
  auto value = [&](uint32_t row, uint32_t column) -> uint32_t {
    if (row == 0) return 0;
    const Word* h = table.data() + (row - 1) * words;
    uint32_t count = Popcount(h, column / kWordBits);
    if (const uint32_t tail = column % kWordBits; tail != 0) {
      count +=
          static_cast<uint32_t>(std::popcount(h[column / kWordBits] & ((Word{1} << tail) - 1)));
    }
    return count;
  };

  auto i = static_cast<uint32_t>(a.size());
  auto j = static_cast<uint32_t>(b.size());
  uint32_t here = value(i, j);  // L(i, j)
  LcsMatches out;
  out.text.resize(here);
  uint32_t above = i > 0 ? value(i - 1, j) : 0;  // L(i - 1, j)
  LcsRange run;
  bool in_run = false;
  while (i > 0 && j > 0) {
    if (a[i - 1] == b[j - 1]) {
      out.text[here - 1] = a[i - 1];
      if (!in_run) {
        run = LcsRange{.a_start = i - 1, .a_end = i - 1, .b_start = j - 1, .b_end = j - 1};
        in_run = true;
      } else {
        run.a_start = i - 1;
        run.b_start = j - 1;
      }
      // A run that reached the start of either string is the walk's last.
      if (run.a_start == 0 || run.b_start == 0) {
        out.ranges.push_back(run);
        in_run = false;
      }
      --i;
      --j;
      --here;
      above = i > 0 ? value(i - 1, j) : 0;
      continue;
    }
    const uint32_t left = here - step(i, j);  // L(i, j - 1)
    if (above > left) {
      --i;
      here = above;
      above = i > 0 ? value(i - 1, j) : 0;
    } else {
      above -= step(i - 1, j);
      here = left;
      --j;
    }
    if (in_run) {
      out.ranges.push_back(run);
      in_run = false;
    }
  }
  return out;
}

}  // namespace goblin
