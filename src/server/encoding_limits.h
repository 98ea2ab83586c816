// The encoding thresholds of the configuration (zset-max-listpack-*, hash-max-listpack-*,
// set-max-*) as the core structures take them. Commands and the snapshot loader both read
// them from here, so a collection gets the same form whichever way it is built.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/packed_hash.h"
#include "core/packed_list.h"
#include "core/packed_set.h"
#include "core/sorted_set.h"
#include "core/value_types.h"
#include "server/config.h"

namespace goblin {

namespace encoding_limits_internal {
// CONFIG accepts negative values for these knobs; they act as 0, as in Redis.
inline size_t Size(int64_t value) { return static_cast<size_t>(std::max<int64_t>(0, value)); }
}  // namespace encoding_limits_internal

inline ZsetLimits ZsetLimitsOf(const Config& c) {
  using encoding_limits_internal::Size;
  return {Size(c.zset_max_listpack_entries), Size(c.zset_max_listpack_value)};
}

inline HashLimits HashLimitsOf(const Config& c) {
  using encoding_limits_internal::Size;
  return {Size(c.hash_max_listpack_entries), Size(c.hash_max_listpack_value)};
}

inline ListLimits ListLimitsOf(const Config& c) {
  return {c.list_max_listpack_size, c.list_compress_depth};
}

inline Stream::Limits StreamLimitsOf(const Config& c) {
  using encoding_limits_internal::Size;
  return {Size(c.stream_node_max_bytes), Size(c.stream_node_max_entries)};
}

inline SetLimits SetLimitsOf(const Config& c) {
  using encoding_limits_internal::Size;
  return {Size(c.set_max_intset_entries), Size(c.set_max_listpack_entries),
          Size(c.set_max_listpack_value)};
}

// All of them, as the snapshot loader and the RDB writer take them.
inline EncodingLimits EncodingLimitsOf(const Config& c) {
  return {ZsetLimitsOf(c), HashLimitsOf(c), SetLimitsOf(c), ListLimitsOf(c), StreamLimitsOf(c)};
}

}  // namespace goblin
