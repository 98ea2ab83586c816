// ValueDigest: the 160-bit digest behind DEBUG DIGEST and DEBUG DIGEST-VALUE.
//
// Built the way Redis builds its digest: Mix folds ordered content into the state (the order
// of the calls matters), Xor folds in the digest of one element of an unordered collection
// (the order of the elements does not). The 20 bytes print as 40 hex digits like Redis's
// SHA1-based digest; the values differ from Redis's, only equality means anything.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

class ValueDigest {
 public:
  static constexpr size_t kBytes = 20;

  // state = H(state, length, bytes): distinct sequences of Mix calls give distinct states.
  void Mix(std::string_view bytes);
  void Mix(int64_t value);
  // The double's bits: -0 and 0 differ, as their replies do.
  void Mix(double value);
  // Folds in another digest as ordered content (the digest of a part: a key's value).
  void Mix(const ValueDigest& part);
  void Xor(const ValueDigest& other);

  bool zero() const;
  // 40 lowercase hex digits.
  std::string Hex() const;

 private:
  uint8_t state_[kBytes] = {};
};

}  // namespace goblin
