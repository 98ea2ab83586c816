#include "core/bitop.h"

#include <algorithm>
#include <cstdint>

#include "core/ascii.h"

namespace goblin::bitop {

std::optional<Op> ParseOp(std::string_view name) {
  static constexpr std::pair<std::string_view, Op> kNames[] = {
      {"and", Op::kAnd},   {"or", Op::kOr},       {"xor", Op::kXor},     {"not", Op::kNot},
      {"diff", Op::kDiff}, {"diff1", Op::kDiff1}, {"andor", Op::kAndOr}, {"one", Op::kOne}};
  for (const auto& [word, op] : kNames) {
    if (EqualsIgnoreCase(name, word)) return op;
  }
  return std::nullopt;
}

bool NeedsTwoSources(Op op) { return op == Op::kDiff || op == Op::kDiff1 || op == Op::kAndOr; }

std::string Apply(Op op, std::span<const std::string_view> sources) {
  size_t length = 0;
  for (std::string_view source : sources) length = std::max(length, source.size());
  std::string result(length, '\0');
  auto byte_of = [](std::string_view source, size_t at) -> uint8_t {
    return at < source.size() ? static_cast<uint8_t>(source[at]) : 0;
  };
  for (size_t at = 0; at < length; ++at) {
    const uint8_t first = byte_of(sources[0], at);
    uint8_t out = first;
    // The others' union (DIFF, DIFF1, ANDOR), or for ONE the bits seen in two sources or more.
    uint8_t others = 0;
    uint8_t seen_twice = 0;
    for (size_t k = 1; k < sources.size(); ++k) {
      const uint8_t byte = byte_of(sources[k], at);
      switch (op) {
        case Op::kAnd:
          out &= byte;
          break;
        case Op::kOr:
          out |= byte;
          break;
        case Op::kXor:
          out ^= byte;
          break;
        case Op::kOne:
          seen_twice |= out & byte;
          out |= byte;
          break;
        default:
          others |= byte;
          break;
      }
    }
    switch (op) {
      case Op::kNot:
        out = static_cast<uint8_t>(~first);
        break;
      case Op::kDiff:
        out = first & static_cast<uint8_t>(~others);
        break;
      case Op::kDiff1:
        out = static_cast<uint8_t>(~first) & others;
        break;
      case Op::kAndOr:
        out = first & others;
        break;
      case Op::kOne:
        out &= static_cast<uint8_t>(~seen_twice);
        break;
      default:
        break;
    }
    result[at] = static_cast<char>(out);
  }
  return result;
}

}  // namespace goblin::bitop
