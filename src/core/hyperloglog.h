// HyperLogLog in Redis's own byte format. A HyperLogLog is a plain string value (TYPE string,
// GET returns these bytes), so the bytes are the contract: a string SET from Redis's GET works
// here, and after the same commands GET returns what Redis returns. Every function below edits
// or reads those bytes directly; nothing is kept beside them.
//
// The header, 16 bytes, then the registers in one of two encodings:
//
//   +------+-----+----------+-----------------------------------+--------------------------
//   | HYLL | enc | 3 unused | cached cardinality, u64 LE        | registers ...
//   | 4 B  | 1 B | (copied) | bit 63 (top bit of byte 15) set = |
//   |      |     |          | the cache is stale                |
//   +------+-----+----------+-----------------------------------+--------------------------
//   enc 0 = dense, 1 = sparse; anything else is not a HyperLogLog.
//
// 16384 registers (P = 14 index bits of the hash); a register holds the longest run seen of
// "0...01" in the remaining Q = 50 bits, counting the 1 (1..51).
//
// Dense: 6 bits per register, 12288 bytes, register 0 in the low bits of byte 0:
//
//   byte:  |  0       |  1       |  2       |  3 ...
//   bits:  | 11000000 | 22221111 | 33333322 | 55444444     (digit = register, MSB left)
//
// Sparse: a run-length code over the registers in order, opcodes of one or two bytes:
//
//   ZERO   00xxxxxx            xxxxxx + 1 registers (1..64) are 0
//   XZERO  01xxxxxx yyyyyyyy   xxxxxxyyyyyyyy + 1 registers (1..16384) are 0
//   VAL    1vvvvvxx            xx + 1 registers (1..4) hold vvvvv + 1 (1..32)
//
// An empty HyperLogLog is one XZERO of 16384. A sparse value becomes dense when a register
// must hold more than 32, or when an edit would make the string longer than
// hll-sparse-max-bytes (header included); it never goes back.
//
// Invariants (of every value these functions write from a valid one):
//  1. Byte 4 is 0 or 1; a dense value is exactly kDenseBytes long; the unused bytes and the
//     cache's bytes other than its flag are carried over unchanged by every edit and by the
//     sparse-to-dense conversion.
//  2. A sparse value's runs cover exactly kRegisters registers. Values that break this (a
//     corrupt string SET by a client) are reported as corrupt where Redis reports them: by
//     whatever reads the whole code (count, merge, conversion), and by an edit whose register
//     lies past the code's end. An edit inside a broken code goes ahead, as in Redis.
//  3. Edits follow Redis's algorithm step for step (how a run is split, which neighbours are
//     joined), since the sparse code of a set of registers is not unique and the bytes must
//     match.
//  4. An XZERO whose second byte is missing (the string ends after its first) reads that byte
//     as 0, as Redis reads the terminator of its string buffer.
//
// Not thread-safe; no allocation except where a std::string grows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace goblin {
namespace hll {

inline constexpr int kPrecision = 14;
inline constexpr size_t kRegisters = size_t{1} << kPrecision;
inline constexpr int kQ = 64 - kPrecision;  // hash bits that count the run
inline constexpr int kMaxRegister = kQ + 1;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kDenseRegisterBytes = kRegisters * 6 / 8;
inline constexpr size_t kDenseBytes = kHeaderBytes + kDenseRegisterBytes;
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;
inline constexpr int kSparseMaxValue = 32;
inline constexpr uint64_t kHashSeed = 0xadc83b19ULL;

// Where an element lands: its register and the run length it offers that register.
struct Pattern {
  uint32_t index;
  uint8_t count;
};
Pattern PatternOf(std::string_view element);

// Redis's test of a string before any HyperLogLog command reads it: at least a header, the
// magic, a known encoding, and a dense value's exact length. A sparse code is checked later.
bool IsHyperLogLog(std::string_view value);
// REQUIRES: IsHyperLogLog(value).
inline uint8_t EncodingOf(std::string_view value) { return static_cast<uint8_t>(value[4]); }

// The value PFADD and PFMERGE create for a missing key: sparse, all registers 0, a valid
// cached cardinality of 0.
std::string NewSparse();

// The cached cardinality in the header. REQUIRES: at least kHeaderBytes bytes.
bool CacheValid(const uint8_t* value);
uint64_t CachedCardinality(const uint8_t* value);  // the 8 bytes as they are
void StoreCardinality(uint8_t* value, uint64_t cardinality);
void InvalidateCache(uint8_t* value);

// Dense registers: `registers` points just past the header, kDenseRegisterBytes bytes.
uint8_t DenseRegister(const uint8_t* registers, size_t index);
void SetDenseRegister(uint8_t* registers, size_t index, uint8_t value);
// Sets register index to count if that is more than it holds; returns whether it did.
inline bool RaiseDense(uint8_t* registers, size_t index, uint8_t count) {
  if (count <= DenseRegister(registers, index)) return false;
  SetDenseRegister(registers, index, count);
  return true;
}

// How many registers hold each value. Dense registers can hold up to 63 (a corrupt value),
// so the table has 64 slots; the estimate reads 0..kMaxRegister.
using Histogram = std::array<int, 64>;
void DenseHistogram(const uint8_t* registers, Histogram* histogram);
// Sparse opcodes (the bytes after the header); false when they do not cover exactly
// kRegisters registers.
bool SparseHistogram(std::string_view opcodes, Histogram* histogram);
// One byte per register, kRegisters bytes (the scratch registers of a multi-key count).
void ByteHistogram(const uint8_t* registers, Histogram* histogram);
// Otmar Ertl's estimator ("New cardinality estimation algorithms for HyperLogLog sketches",
// 2017), computed as Redis 7 computes it, so the rounding agrees.
uint64_t Estimate(const Histogram& histogram);
// The cardinality of a value from its registers (the cache unread); nullopt for a corrupt
// sparse code. REQUIRES: IsHyperLogLog(value).
std::optional<uint64_t> Count(std::string_view value);

// Raises each of `registers` (one byte per register, kRegisters of them) to the value's
// register; false, leaving `registers` partly merged, for a corrupt sparse code.
// REQUIRES: IsHyperLogLog(value).
bool MergeInto(std::string_view value, uint8_t* registers);

// Rewrites a sparse *value as dense (header copied, encoding byte set); false, *value
// untouched, when the code is corrupt. REQUIRES: EncodingOf(*value) == kSparse.
bool SparseToDense(std::string* value);

enum class RaiseResult { kUnchanged, kRaised, kCorrupt };
// Sets register index of *value to count if that is more than it holds: a dense value in
// place, a sparse one by Redis's edit of its code, which turns it dense past
// `sparse_max_bytes` or for a count above kSparseMaxValue. A sparse edit marks the cache
// stale; a dense one leaves that to the caller (PFADD marks it once per command).
// REQUIRES: IsHyperLogLog(*value), count in 1..kMaxRegister, index < kRegisters.
RaiseResult Raise(std::string* value, size_t index, uint8_t count, size_t sparse_max_bytes);

// PFSELFTEST's checks, as Redis runs them: every dense register keeps what was written without
// disturbing its neighbours (random values, 1000 rounds), and sparse and dense values fed the
// same 10 million elements agree, stay sparse while small, and estimate within six standard
// errors at 1, 10, 100, ... elements. Returns "" when all pass, else Redis's TESTFAILED text.
std::string SelfTest(size_t sparse_max_bytes, uint64_t seed);

// PFDEBUG DECODE's text for a sparse code: "z:<n>" (ZERO), "Z:<n>" (XZERO), "v:<value>,<n>"
// (VAL), space-separated, read to the end without checking the total.
std::string DecodeSparse(std::string_view opcodes);

}  // namespace hll
}  // namespace goblin
