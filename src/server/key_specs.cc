#include "server/key_specs.h"

#include <algorithm>

#include "core/ascii.h"
#include "core/string_number.h"

namespace goblin {

std::vector<std::string_view> KeySpecFlagNames(uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kKeyRO, "RO"},
      {kKeyRW, "RW"},
      {kKeyOW, "OW"},
      {kKeyRM, "RM"},
      {kKeyAccess, "access"},
      {kKeyUpdate, "update"},
      {kKeyInsert, "insert"},
      {kKeyDelete, "delete"},
      {kKeyNotKey, "not_key"},
      {kKeyIncomplete, "incomplete"},
      {kKeyVariableFlags, "variable_flags"}};
  std::vector<std::string_view> names;
  for (const auto& [flag, name] : kNames) {
    if (flags & flag) names.push_back(name);
  }
  return names;
}

namespace {

// The index of the spec's first key in argv: argc when a keyword is the last argument, -1 when
// the call has none for it.
int BeginPosition(const KeyBegin& begin, const std::vector<std::string_view>& argv) {
  const int argc = static_cast<int>(argv.size());
  if (begin.type == KeyBegin::Type::kIndex) return begin.index < argc ? begin.index : -1;
  const bool forward = begin.index >= 0;
  for (int i = forward ? begin.index : argc + begin.index; i >= 1 && i < argc;
       i += forward ? 1 : -1) {
    if (EqualsIgnoreCase(argv[i], begin.keyword)) return i + 1;
  }
  return -1;
}

}  // namespace

bool KeySpec::Find(const std::vector<std::string_view>& argv, Span* span) const {
  *span = Span();
  if (!complete()) return true;
  const int argc = static_cast<int>(argv.size());
  int first = BeginPosition(begin, argv);
  if (first < 0) return true;
  // STREAMS with nothing after it names no stream, which XREAD rejects.
  if (first >= argc) return begin.type != KeyBegin::Type::kKeyword;
  int last;
  int step;
  if (find.type == KeyFind::Type::kRange) {
    const int last_key = find.a;
    const int limit = find.c;
    step = find.b;
    if (last_key >= 0) {
      last = first + last_key;
    } else if (limit <= 1) {
      last = argc + last_key;
    } else {
      if ((argc - first) % limit != 0) return false;
      last = first + (argc - first) / limit + last_key;
    }
  } else {
    const int count_at = first + find.a;
    int64_t count;
    if (count_at >= argc || !ParseInt64(argv[count_at], &count) || count < 0) return false;
    step = find.c;
    first = count_at + find.b;
    if (count > (argc - first + step - 1) / std::max(step, 1)) return false;
    last = first + static_cast<int>(count - 1) * step;
  }
  last = std::min(last, argc - 1);
  if (step <= 0 || last < first) return true;
  *span = {static_cast<size_t>(first), static_cast<size_t>(last), static_cast<size_t>(step)};
  return true;
}

bool KeySpec::Positions(const std::vector<std::string_view>& argv, std::vector<size_t>* out) const {
  Span span;
  if (!Find(argv, &span)) return false;
  if (span.empty()) return true;
  for (size_t i = span.first; i <= span.last; i += span.step) out->push_back(i);
  return true;
}

uint32_t ResolveVariableFlags(std::string_view command, const std::vector<std::string_view>& argv,
                              uint32_t flags) {
  // Redis resolves SET's variable flags by its GET option, BITFIELD's by whether every
  // operation is a GET (a malformed call counts as a write).
  if (command == "set") {
    for (size_t i = 3; i < argv.size(); ++i) {
      if (EqualsIgnoreCase(argv[i], "get")) return kKeyRW | kKeyAccess | kKeyUpdate;
    }
    return kKeyOW | kKeyUpdate;
  }
  if (command == "bitfield") {
    for (size_t i = 2; i < argv.size(); ++i) {
      const size_t remaining = argv.size() - i - 1;
      if (EqualsIgnoreCase(argv[i], "get") && remaining >= 2) {
        i += 2;
      } else if (EqualsIgnoreCase(argv[i], "overflow") && remaining >= 1) {
        i += 1;
      } else {
        return kKeyRW | kKeyAccess | kKeyUpdate;
      }
    }
    return kKeyRO | kKeyAccess;
  }
  return flags;
}

uint32_t KeyFlagsOf(const std::vector<KeySpec>& specs, const std::vector<std::string_view>& argv,
                    size_t position) {
  const KeySpec* chosen = nullptr;
  std::vector<size_t> positions;
  for (const KeySpec& spec : specs) {
    positions.clear();
    spec.Positions(argv, &positions);
    if (std::find(positions.begin(), positions.end(), position) != positions.end()) {
      chosen = &spec;
      break;
    }
    if (!spec.complete()) chosen = &spec;
  }
  return chosen == nullptr ? 0 : chosen->flags;
}

}  // namespace goblin
