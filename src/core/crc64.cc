#include "core/crc64.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace goblin {
namespace {

constexpr uint64_t kJones = 0xad93d23594c935a9ULL;  // x^64 implied
constexpr uint64_t kJonesReflected = 0x95ac9329ac4bc9b5ULL;

// Eight tables: the data is consumed a 64-bit word at a time ("slicing by 8").
using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables tables{};
  for (uint64_t byte = 0; byte < 256; ++byte) {
    uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kJonesReflected : crc >> 1;
    tables[0][byte] = crc;
  }
  for (size_t byte = 0; byte < 256; ++byte) {
    for (size_t k = 1; k < 8; ++k) {
      uint64_t previous = tables[k - 1][byte];
      tables[k][byte] = tables[0][previous & 0xff] ^ (previous >> 8);
    }
  }
  return tables;
}

constexpr Tables kTables = MakeTables();

uint64_t Crc64Tables(uint64_t crc, const unsigned char* p, size_t n) {
  while (n >= 8) {
    uint64_t word = 0;
    for (int i = 7; i >= 0; --i) word = word << 8 | p[i];
    crc ^= word;
    crc = kTables[7][crc & 0xff] ^ kTables[6][(crc >> 8) & 0xff] ^ kTables[5][(crc >> 16) & 0xff] ^
          kTables[4][(crc >> 24) & 0xff] ^ kTables[3][(crc >> 32) & 0xff] ^
          kTables[2][(crc >> 40) & 0xff] ^ kTables[1][(crc >> 48) & 0xff] ^ kTables[0][crc >> 56];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = kTables[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)

// Folding with carry-less multiplication (Intel's "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ", in the reflected form). A 16-byte block X, read little-endian, stands for a
// polynomial whose low 64 bits XL hold its higher-degree half: X = XL x^64 + XH. Carried forward
// over d bits, X x^d = XL x^(d+64) + XH x^d, and modulo P each half becomes one 64x64-bit
// product with a constant, landing on the block d bits later, with which it is xored. A
// reflected product comes out multiplied by x once more, so the constants are x^(d+63) mod P
// and x^(d-1) mod P, bit-reversed. At the end the one block left is congruent to everything
// before it; its CRC (16 bytes through the tables) is the CRC of all of it.

constexpr uint64_t Reverse64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= ((v >> i) & 1) << (63 - i);
  return r;
}

// x^n mod P, reflected.
constexpr uint64_t PowerModP(int n) {
  uint64_t r = 1;
  for (int i = 0; i < n; ++i) r = (r << 1) ^ ((r >> 63) ? kJones : 0);
  return Reverse64(r);
}

struct FoldConstants {
  uint64_t low;   // for XL: x^(d+63) mod P
  uint64_t high;  // for XH: x^(d-1) mod P
};

constexpr FoldConstants Fold(int bits) { return {PowerModP(bits + 63), PowerModP(bits - 1)}; }

constexpr FoldConstants kFold512 = Fold(512);  // four blocks ahead
constexpr FoldConstants kFold384 = Fold(384);
constexpr FoldConstants kFold256 = Fold(256);
constexpr FoldConstants kFold128 = Fold(128);  // the next block

__attribute__((target("pclmul,sse2"))) inline __m128i FoldBlock(__m128i x, __m128i k,
                                                                __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i high = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("pclmul,sse2"))) inline __m128i Constants(FoldConstants k) {
  return _mm_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low));
}

// REQUIRES: n >= 64.
__attribute__((target("pclmul,sse2"))) uint64_t Crc64Folding(uint64_t crc, const unsigned char* p,
                                                             size_t n) {
  auto load = [](const unsigned char* at) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  };
  // Four blocks at a time, in four independent chains.
  __m128i x0 = _mm_xor_si128(load(p), _mm_set_epi64x(0, static_cast<long long>(crc)));
  __m128i x1 = load(p + 16);
  __m128i x2 = load(p + 32);
  __m128i x3 = load(p + 48);
  p += 64;
  n -= 64;
  const __m128i k512 = Constants(kFold512);
  while (n >= 64) {
    x0 = FoldBlock(x0, k512, load(p));
    x1 = FoldBlock(x1, k512, load(p + 16));
    x2 = FoldBlock(x2, k512, load(p + 32));
    x3 = FoldBlock(x3, k512, load(p + 48));
    p += 64;
    n -= 64;
  }
  __m128i x = FoldBlock(x0, Constants(kFold384), x3);
  x = FoldBlock(x1, Constants(kFold256), x);
  x = FoldBlock(x2, Constants(kFold128), x);
  const __m128i k128 = Constants(kFold128);
  while (n >= 16) {
    x = FoldBlock(x, k128, load(p));
    p += 16;
    n -= 16;
  }
  unsigned char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), x);
  return Crc64Tables(Crc64Tables(0, last, sizeof(last)), p, n);
}

const bool kHaveCarrylessMultiply = __builtin_cpu_supports("pclmul");

#endif

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
#if defined(__x86_64__)
  if (data.size() >= 64 && kHaveCarrylessMultiply) return Crc64Folding(crc, p, data.size());
#endif
  return Crc64Tables(crc, p, data.size());
}

}  // namespace goblin
