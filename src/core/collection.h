// The base of every value that is not a string: lists, sets, sorted sets, hashes.
// A KeyEntry owns one Collection through this interface, so the keyspace can free, copy and
// measure any value without knowing its type.
#pragma once

#include <cstddef>
#include <string_view>

namespace goblin {

class Collection {
 public:
  virtual ~Collection() = default;
  // Bytes of memory this value holds, everything included (MEMORY USAGE).
  virtual size_t MemoryUsage() const = 0;
  // Redis's OBJECT ENCODING name ("listpack", "skiplist", "hashtable", "intset", ...).
  virtual std::string_view EncodingName() const = 0;
  // A deep copy (COPY).
  virtual Collection* Clone() const = 0;
  // Repacks to the tightest form (GOBLIN.OPTIMIZE); returns the bytes saved.
  virtual size_t Optimize() = 0;
};

}  // namespace goblin
