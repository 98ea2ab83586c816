#include "server/keyspace_notify.h"

#include <span>

namespace goblin {
namespace {

struct ClassName {
  char name;
  uint32_t flag;
};

// The data classes in the order CONFIG GET prints them.
constexpr ClassName kDataClasses[] = {
    {'g', kNotifyGeneric}, {'$', kNotifyString}, {'l', kNotifyList},    {'s', kNotifySet},
    {'h', kNotifyHash},    {'z', kNotifyZset},   {'x', kNotifyExpired}, {'e', kNotifyEvicted},
    {'t', kNotifyStream},  {'d', kNotifyModule}, {'n', kNotifyNew}};
constexpr ClassName kChannelClasses[] = {
    {'K', kNotifyKeyspace}, {'E', kNotifyKeyevent}, {'m', kNotifyKeyMiss}};

}  // namespace

std::optional<uint32_t> ParseNotifyClasses(std::string_view text) {
  uint32_t flags = 0;
  for (char c : text) {
    if (c == 'A') {
      flags |= kNotifyAll;
      continue;
    }
    bool known = false;
    for (std::span<const ClassName> table :
         {std::span<const ClassName>(kDataClasses), std::span<const ClassName>(kChannelClasses)}) {
      for (const ClassName& entry : table) {
        if (entry.name != c) continue;
        flags |= entry.flag;
        known = true;
      }
    }
    if (!known) return std::nullopt;
  }
  return flags;
}

std::string FormatNotifyClasses(uint32_t flags) {
  std::string out;
  if ((flags & kNotifyAll) == kNotifyAll) {
    out += 'A';
  } else {
    for (const ClassName& entry : kDataClasses) {
      if (flags & entry.flag) out += entry.name;
    }
  }
  for (const ClassName& entry : kChannelClasses) {
    if (flags & entry.flag) out += entry.name;
  }
  return out;
}

}  // namespace goblin
