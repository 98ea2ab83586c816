#include "core/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "core/murmur_hash.h"

namespace goblin {
namespace hll {
namespace {

// ---- sparse opcodes ----------------------------------------------------------------------

constexpr uint8_t kXzeroBit = 0x40;
constexpr uint8_t kValBit = 0x80;
constexpr int kZeroMaxRun = 64;
constexpr int kValMaxRun = 4;
constexpr int kXzeroMaxRun = 16384;

bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
bool IsXzero(uint8_t op) { return (op & 0xc0) == kXzeroBit; }
bool IsVal(uint8_t op) { return (op & kValBit) != 0; }
int ZeroRun(uint8_t op) { return (op & 0x3f) + 1; }
int XzeroRun(uint8_t high, uint8_t low) { return (((high & 0x3f) << 8) | low) + 1; }
int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int ValRun(uint8_t op) { return (op & 0x3) + 1; }
uint8_t ValOp(int value, int run) {
  return static_cast<uint8_t>(((value - 1) << 2) | (run - 1) | kValBit);
}
uint8_t ZeroOp(int run) { return static_cast<uint8_t>(run - 1); }
void PutXzero(uint8_t* out, int run) {
  out[0] = static_cast<uint8_t>(((run - 1) >> 8) | kXzeroBit);
  out[1] = static_cast<uint8_t>((run - 1) & 0xff);
}

// One opcode read at p (Invariant 4 for an XZERO cut short).
struct Op {
  int run;
  int value;  // 0 for ZERO and XZERO
  size_t size;
};
Op ReadOp(const uint8_t* p, const uint8_t* end) {
  const uint8_t op = *p;
  if (IsZero(op)) return {ZeroRun(op), 0, 1};
  if (IsVal(op)) return {ValRun(op), ValValue(op), 1};
  return {XzeroRun(op, p + 1 < end ? p[1] : 0), 0, 2};
}

// Calls fn(first_register, run, value) for each opcode in order; false as soon as a run would
// pass the last register, or when the runs end short of it.
template <class Fn>
bool ForEachRun(std::string_view opcodes, Fn&& fn) {
  const auto* p = reinterpret_cast<const uint8_t*>(opcodes.data());
  const uint8_t* end = p + opcodes.size();
  size_t next_register = 0;
  while (p < end) {
    const Op op = ReadOp(p, end);
    if (next_register + static_cast<size_t>(op.run) > kRegisters) return false;
    fn(next_register, op.run, op.value);
    next_register += static_cast<size_t>(op.run);
    p += op.size;
  }
  return next_register == kRegisters;
}

uint8_t* Bytes(std::string* value) { return reinterpret_cast<uint8_t*>(value->data()); }

// Splits a run of zeros [first, last] around `index`, which gets `count`: the zeros before and
// after as ZERO, or XZERO when longer than a ZERO holds. Returns the bytes written to out.
size_t SplitZeros(size_t first, size_t last, size_t index, uint8_t count, uint8_t* out) {
  size_t n = 0;
  auto zeros = [&](size_t run) {
    if (run > static_cast<size_t>(kZeroMaxRun)) {
      PutXzero(out + n, static_cast<int>(run));
      n += 2;
    } else {
      out[n++] = ZeroOp(static_cast<int>(run));
    }
  };
  if (index != first) zeros(index - first);
  out[n++] = ValOp(count, 1);
  if (index != last) zeros(last - index);
  return n;
}

// The same for a VAL run of `value` (at most 4 registers, so every piece fits one VAL).
size_t SplitVal(size_t first, size_t last, size_t index, int value, uint8_t count, uint8_t* out) {
  size_t n = 0;
  if (index != first) out[n++] = ValOp(value, static_cast<int>(index - first));
  out[n++] = ValOp(count, 1);
  if (index != last) out[n++] = ValOp(value, static_cast<int>(last - index));
  return n;
}

// After an edit at `from`: joins neighbouring VALs of one value whose runs fit one VAL,
// looking at no more than five opcodes, as Redis does (Invariant 3).
void JoinVals(std::string* value, size_t from) {
  size_t p = from;
  int budget = 5;
  while (p < value->size() && budget-- > 0) {
    const uint8_t* bytes = Bytes(value);
    const uint8_t op = bytes[p];
    if (IsXzero(op)) {
      p += 2;
      continue;
    }
    if (IsZero(op)) {
      ++p;
      continue;
    }
    if (p + 1 < value->size() && IsVal(bytes[p + 1]) && ValValue(op) == ValValue(bytes[p + 1])) {
      const int run = ValRun(op) + ValRun(bytes[p + 1]);
      if (run <= kValMaxRun) {
        Bytes(value)[p + 1] = ValOp(ValValue(op), run);
        value->erase(p, 1);
        continue;  // the joined VAL may join the next one too
      }
    }
    ++p;
  }
}

RaiseResult PromoteAndRaise(std::string* value, size_t index, uint8_t count) {
  if (!SparseToDense(value)) return RaiseResult::kCorrupt;
  // Every way here needs the register raised (a count no VAL holds, or a change that would
  // make the code too long), so the dense register is lower.
  RaiseDense(Bytes(value) + kHeaderBytes, index, count);
  return RaiseResult::kRaised;
}

RaiseResult RaiseSparse(std::string* value, size_t index, uint8_t count, size_t sparse_max_bytes) {
  if (count > kSparseMaxValue) return PromoteAndRaise(value, index, count);

  // Find the opcode covering the register.
  const size_t length = value->size();
  const uint8_t* bytes = Bytes(value);
  const uint8_t* end = bytes + length;
  size_t p = kHeaderBytes;
  size_t first = 0;  // the first register of the opcode at p
  size_t previous = 0;
  bool has_previous = false;
  Op op{0, 0, 0};
  while (p < length) {
    op = ReadOp(bytes + p, end);
    if (index <= first + static_cast<size_t>(op.run) - 1) break;
    previous = p;
    has_previous = true;
    p += op.size;
    first += static_cast<size_t>(op.run);
  }
  if (op.run == 0 || p >= length) return RaiseResult::kCorrupt;  // the code ends before index
  const bool is_xzero = IsXzero(bytes[p]);
  const size_t next = p + (is_xzero ? 2 : 1);
  const bool has_next = next < length;

  if (op.value >= count) return RaiseResult::kUnchanged;  // a VAL at least as high (0 never is)
  const size_t join_from = has_previous ? previous : kHeaderBytes;
  auto raised = [&] {
    JoinVals(value, join_from);
    InvalidateCache(Bytes(value));
    return RaiseResult::kRaised;
  };
  // A VAL or ZERO of this one register becomes its VAL where it lies.
  if (op.run == 1 && !is_xzero) {
    Bytes(value)[p] = ValOp(count, 1);
    return raised();
  }

  // The general case: the opcode becomes up to three (XZERO VAL XZERO at most: 5 bytes).
  uint8_t sequence[5];
  const size_t last = first + static_cast<size_t>(op.run) - 1;
  const size_t sequence_size = op.value == 0
                                   ? SplitZeros(first, last, index, count, sequence)
                                   : SplitVal(first, last, index, op.value, count, sequence);
  const size_t old_size = is_xzero ? 2 : 1;
  if (sequence_size > old_size && length + sequence_size - old_size > sparse_max_bytes) {
    return PromoteAndRaise(value, index, count);
  }
  // old_size counts both bytes of an XZERO even when the string ends after its first, as
  // Redis counts them: the piece past the shorter string is lost (Invariant 4).
  const size_t new_length = length + sequence_size - old_size;
  if (new_length > length) value->resize(new_length);
  uint8_t* out = Bytes(value);
  if (new_length != length && has_next) {
    std::memmove(out + p + sequence_size, out + next, length - next);
  }
  std::memcpy(out + p, sequence, std::min(sequence_size, new_length - p));
  if (new_length < length) value->resize(new_length);
  return raised();
}

}  // namespace

Pattern PatternOf(std::string_view element) {
  uint64_t hash = MurmurHash64A(element, kHashSeed);
  const auto index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kPrecision;
  hash |= uint64_t{1} << kQ;  // the run ends by bit kQ at the latest
  return {index, static_cast<uint8_t>(std::countr_zero(hash) + 1)};
}

bool IsHyperLogLog(std::string_view value) {
  if (value.size() < kHeaderBytes || value.substr(0, 4) != "HYLL") return false;
  const uint8_t encoding = EncodingOf(value);
  if (encoding > kSparse) return false;
  return encoding != kDense || value.size() == kDenseBytes;
}

std::string NewSparse() {
  std::string value(kHeaderBytes, '\0');
  std::memcpy(value.data(), "HYLL", 4);
  value[4] = static_cast<char>(kSparse);
  for (size_t left = kRegisters; left > 0;) {
    const size_t run = std::min<size_t>(left, kXzeroMaxRun);
    uint8_t op[2];
    PutXzero(op, static_cast<int>(run));
    value.append(reinterpret_cast<const char*>(op), 2);
    left -= run;
  }
  return value;
}

bool CacheValid(const uint8_t* value) { return (value[15] & 0x80) == 0; }

uint64_t CachedCardinality(const uint8_t* value) {
  uint64_t cardinality = 0;
  for (int i = 7; i >= 0; --i) cardinality = (cardinality << 8) | value[8 + i];
  return cardinality;
}

void StoreCardinality(uint8_t* value, uint64_t cardinality) {
  for (int i = 0; i < 8; ++i) value[8 + i] = static_cast<uint8_t>(cardinality >> (8 * i));
}

void InvalidateCache(uint8_t* value) { value[15] |= 0x80; }

// Register i starts at bit 6i: within one byte when that bit's offset is 0 or 2, else split
// over two. The last register (offset 2) never reads past the array.
uint8_t DenseRegister(const uint8_t* registers, size_t index) {
  const size_t byte = index * 6 / 8;
  const unsigned shift = (index * 6) & 7;
  unsigned bits = registers[byte] >> shift;
  if (shift > 2) bits |= static_cast<unsigned>(registers[byte + 1]) << (8 - shift);
  return static_cast<uint8_t>(bits & 63);
}

void SetDenseRegister(uint8_t* registers, size_t index, uint8_t value) {
  const size_t byte = index * 6 / 8;
  const unsigned shift = (index * 6) & 7;
  registers[byte] =
      static_cast<uint8_t>((registers[byte] & ~(63u << shift)) | (unsigned{value} << shift));
  if (shift > 2) {
    const unsigned high = 8 - shift;
    registers[byte + 1] =
        static_cast<uint8_t>((registers[byte + 1] & ~(63u >> high)) | (unsigned{value} >> high));
  }
}

void DenseHistogram(const uint8_t* registers, Histogram* histogram) {
  Histogram& h = *histogram;
  // Four registers in each three bytes.
  for (const uint8_t* r = registers; r < registers + kDenseRegisterBytes; r += 3) {
    const unsigned b0 = r[0], b1 = r[1], b2 = r[2];
    ++h[b0 & 63];
    ++h[((b0 >> 6) | (b1 << 2)) & 63];
    ++h[((b1 >> 4) | (b2 << 4)) & 63];
    ++h[b2 >> 2];
  }
}

bool SparseHistogram(std::string_view opcodes, Histogram* histogram) {
  return ForEachRun(opcodes, [&](size_t, int run, int value) { (*histogram)[value] += run; });
}

void ByteHistogram(const uint8_t* registers, Histogram* histogram) {
  for (size_t i = 0; i < kRegisters; i += 8) {
    uint64_t word;
    std::memcpy(&word, registers + i, 8);
    if (word == 0) {
      (*histogram)[0] += 8;
      continue;
    }
    for (size_t j = 0; j < 8; ++j) ++(*histogram)[registers[i + j]];
  }
}

namespace {

// sigma and tau of Ertl's paper, iterated until the sum stops changing.
double Sigma(double x) {
  if (x == 1.0) return INFINITY;
  double y = 1;
  double z = x;
  double previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0;
  double z = 1 - x;
  double previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
  } while (previous != z);
  return z / 3;
}

}  // namespace

uint64_t Estimate(const Histogram& histogram) {
  constexpr double kAlphaInfinity = 0.721347520444481703680;  // 1 / (2 ln 2)
  const double m = kRegisters;
  double z = m * Tau((m - histogram[kMaxRegister]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInfinity * m * m / z));
}

std::optional<uint64_t> Count(std::string_view value) {
  Histogram histogram{};
  const auto* registers = reinterpret_cast<const uint8_t*>(value.data()) + kHeaderBytes;
  if (EncodingOf(value) == kDense) {
    DenseHistogram(registers, &histogram);
  } else if (!SparseHistogram(value.substr(kHeaderBytes), &histogram)) {
    return std::nullopt;
  }
  return Estimate(histogram);
}

bool MergeInto(std::string_view value, uint8_t* registers) {
  if (EncodingOf(value) == kDense) {
    const auto* dense = reinterpret_cast<const uint8_t*>(value.data()) + kHeaderBytes;
    for (size_t i = 0; i < kRegisters; ++i) {
      registers[i] = std::max(registers[i], DenseRegister(dense, i));
    }
    return true;
  }
  return ForEachRun(value.substr(kHeaderBytes), [&](size_t first, int run, int v) {
    const auto byte = static_cast<uint8_t>(v);
    for (size_t i = first; i < first + static_cast<size_t>(run); ++i) {
      registers[i] = std::max(registers[i], byte);
    }
  });
}

bool SparseToDense(std::string* value) {
  std::string dense(kDenseBytes, '\0');
  std::memcpy(dense.data(), value->data(), kHeaderBytes);
  dense[4] = static_cast<char>(kDense);
  uint8_t* registers = Bytes(&dense) + kHeaderBytes;
  const bool valid =
      ForEachRun(std::string_view(*value).substr(kHeaderBytes), [&](size_t first, int run, int v) {
        if (v == 0) return;
        for (size_t i = first; i < first + static_cast<size_t>(run); ++i) {
          SetDenseRegister(registers, i, static_cast<uint8_t>(v));
        }
      });
  if (!valid) return false;
  *value = std::move(dense);
  return true;
}

RaiseResult Raise(std::string* value, size_t index, uint8_t count, size_t sparse_max_bytes) {
  if (EncodingOf(*value) == kSparse) return RaiseSparse(value, index, count, sparse_max_bytes);
  return RaiseDense(Bytes(value) + kHeaderBytes, index, count) ? RaiseResult::kRaised
                                                               : RaiseResult::kUnchanged;
}

std::string DecodeSparse(std::string_view opcodes) {
  std::string text;
  const auto* p = reinterpret_cast<const uint8_t*>(opcodes.data());
  const uint8_t* end = p + opcodes.size();
  char piece[32];
  while (p < end) {
    const Op op = ReadOp(p, end);
    int n;
    if (op.value != 0) {
      n = std::snprintf(piece, sizeof(piece), "v:%d,%d ", op.value, op.run);
    } else {
      n = std::snprintf(piece, sizeof(piece), "%c:%d ", op.size == 2 ? 'Z' : 'z', op.run);
    }
    text.append(piece, static_cast<size_t>(n));
    p += op.size;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

std::string SelfTest(size_t sparse_max_bytes, uint64_t seed) {
  char text[128];
  std::mt19937_64 rng(seed);

  std::vector<uint8_t> registers(kDenseRegisterBytes, 0);
  std::vector<uint8_t> expected(kRegisters);
  for (int round = 0; round < 1000; ++round) {
    for (size_t i = 0; i < kRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(rng() & 63);
      SetDenseRegister(registers.data(), i, expected[i]);
    }
    for (size_t i = 0; i < kRegisters; ++i) {
      const uint8_t got = DenseRegister(registers.data(), i);
      if (got != expected[i]) {
        std::snprintf(text, sizeof(text), "TESTFAILED Register %zu should be %d but is %d", i,
                      expected[i], got);
        return text;
      }
    }
  }

  std::string dense(kDenseBytes, '\0');
  std::memcpy(dense.data(), "HYLL", 4);
  std::string sparse = NewSparse();
  const double relative_error = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  const uint64_t salt = rng();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    const uint64_t element = j ^ salt;
    char bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>(element >> (8 * b));
    const Pattern pattern = PatternOf(std::string_view(bytes, 8));
    RaiseDense(Bytes(&dense) + kHeaderBytes, pattern.index, pattern.count);
    Raise(&sparse, pattern.index, pattern.count, sparse_max_bytes);
    if (j != checkpoint) continue;
    if (j < sparse_max_bytes / 2 && EncodingOf(sparse) != kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t estimate = *Count(dense);
    if (Count(sparse) != estimate) return "TESTFAILED dense/sparse disagree";
    // At 10 elements a collision alone is a large relative error: allow one.
    const uint64_t max_error =
        j == 10 ? 1 : static_cast<uint64_t>(std::ceil(relative_error * 6 * static_cast<double>(j)));
    const uint64_t error = estimate > j ? estimate - j : j - estimate;
    if (error > max_error) {
      std::snprintf(text, sizeof(text), "TESTFAILED Too big error. card:%llu abserr:%llu",
                    static_cast<unsigned long long>(j), static_cast<unsigned long long>(error));
      return text;
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace hll
}  // namespace goblin
