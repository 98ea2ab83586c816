// What the fuzz targets share: a check that stops the run with a message when a property the
// code promises does not hold (libFuzzer then saves the input as a crash), and a reader that
// splits one fuzz input into the few values a target wants.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

// Not assert(): the targets are built without NDEBUG only by chance, and a property that
// fails must fail in every build.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace goblin::fuzz {

// Takes values off the front of the input; once it is used up every value is 0 or empty, so
// a target never has to reject a short input.
class InputReader {
 public:
  InputReader(const uint8_t* data, size_t size)
      : rest_(reinterpret_cast<const char*>(data), size) {}

  uint8_t Byte() {
    if (rest_.empty()) return 0;
    const uint8_t byte = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return byte;
  }
  // The bytes up to the next separator (which is dropped), or all that is left.
  std::string_view Until(char separator) {
    const size_t end = rest_.find(separator);
    const std::string_view part = rest_.substr(0, end);
    rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
    return part;
  }
  std::string_view Rest() {
    const std::string_view part = rest_;
    rest_ = {};
    return part;
  }

 private:
  std::string_view rest_;
};

}  // namespace goblin::fuzz
