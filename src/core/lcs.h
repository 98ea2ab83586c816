// The longest common subsequence of two byte strings, as Redis's LCS command (t_string.c)
// reports it: the same subsequence among the many longest ones, the same matching ranges in the
// same order.
//
// Redis fills the table L(i, j) = the LCS length of a[0..i) and b[0..j), (|a|+1) x (|b|+1)
// uint32 cells, then walks back from (|a|, |b|): on equal bytes a[i-1] == b[j-1] it takes the byte
// and steps to (i-1, j-1); otherwise it steps up to (i-1, j) when L(i-1, j) > L(i, j-1), left to
// (i, j-1) when not. Which subsequence and which ranges come out depend on that walk, so the walk
// here is the same one; only the table is kept differently.
//
// Along a row L grows by 0 or 1 from one column to the next, so row i is stored as a bit vector
// H_i, bit j-1 set when L(i, j) = L(i, j-1) + 1:
//
//   b = "abcb", a = "bcab"        H_i (bit 0 first)   L(i, 0..4)
//     row 1 ("b")                 0 1 0 0             0 0 1 1 1
//     row 2 ("bc")                0 1 1 0             0 0 1 2 2
//     row 3 ("bca")               1 0 1 0             0 1 1 2 2
//     row 4 ("bcab")              1 1 0 1             0 1 2 2 3
//
// A row follows from the one before 64 columns at a time (Hyyro's bit-parallel LCS recurrence
// over the positions of a[i-1] in b), and the walk recovers the two values it compares from a
// running L(i, j) and one prefix popcount per row it climbs to.
//
//   memory: |a| * ceil(|b| / 64) * 8 bytes for the rows, plus one mask of that width per byte
//           value found in both strings (Redis: (|a| + 1) * (|b| + 1) * 4 bytes)
//   time:   O(|a| * |b| / 64) to fill, the same bound for the walk
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

// A run of the walk's consecutive diagonal steps: a[a_start..a_end] == b[b_start..b_end].
struct LcsRange {
  uint32_t a_start = 0;
  uint32_t a_end = 0;
  uint32_t b_start = 0;
  uint32_t b_end = 0;
  uint32_t length() const { return a_end - a_start + 1; }
  bool operator==(const LcsRange&) const = default;
};

struct LcsMatches {
  std::string text;              // the subsequence Redis reports
  std::vector<LcsRange> ranges;  // every run, in the walk's order: the last bytes first
};

// REQUIRES for both: a.size() and b.size() below UINT32_MAX - 1 (Redis's "String too long").

// The length alone, in O(|b| / 64) memory.
uint32_t LcsLength(std::string_view a, std::string_view b);

// The subsequence and its ranges; the length is text.size().
LcsMatches LcsWalk(std::string_view a, std::string_view b);

}  // namespace goblin
