// The value-type contract: what every value that is not a string provides, so that the
// keyspace, the commands that treat values generically (TYPE, OBJECT, MEMORY, COPY, DEBUG
// DIGEST, GOBLIN.*) and the snapshot format handle any type without knowing it.
//
// A KeyEntry owns one Collection (strings live inline in the entry instead). The other half
// of the contract is the type's row in the value-type registry (value_types.h): its TYPE
// name, its stable snapshot tag and the function that decodes its snapshot value. Adding a
// type is docs/DESIGN.md's "Adding a value type".
//
// A value's own byte encoding belongs to the value, like its layout: Goblin's snapshot value
// here. Redis's RDB encoding (persist/rdb_writer.h) rebuilds Redis's layouts from each type's
// public walks instead, since it depends on Redis's encoding limits rather than the value's.
// The files around them (sections, checksums, the AOF) belong to src/persist.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace goblin {

class ValueDigest;

// The types a key can hold. The numbers are the KeyEntry header bits, an in-memory detail:
// the snapshot stores each type's own registry tag, so renumbering here changes no file.
enum class ValueType : uint8_t {
  kString = 0,
  kList = 1,
  kSet = 2,
  kZSet = 3,
  kHash = 4,
  kStream = 5
};

// One field of GOBLIN.STATS: a name and an integer, a double or a (static) text.
struct StatField {
  std::string_view name;
  std::variant<int64_t, double, std::string_view> value;
};
using StatFields = std::vector<StatField>;

class Collection {
 public:
  virtual ~Collection() = default;

  virtual ValueType type() const = 0;
  // Bytes of memory this value holds, everything included (MEMORY USAGE).
  virtual size_t MemoryUsage() const = 0;
  // Redis's OBJECT ENCODING name ("listpack", "skiplist", "hashtable", "intset", ...).
  virtual std::string_view EncodingName() const = 0;
  // A deep copy (COPY).
  virtual Collection* Clone() const = 0;
  // Repacks to the tightest form (GOBLIN.OPTIMIZE); returns the bytes saved.
  virtual size_t Optimize() = 0;

  // DEBUG DIGEST-VALUE: mixes the content into digest, the same for equal values whatever
  // their encoding, and, where Redis's digest ignores it, whatever their insertion order.
  virtual void Digest(ValueDigest* digest) const = 0;
  // GOBLIN.STATS: how the value is really laid out, after the type, encoding and bytes every
  // value reports.
  virtual void Describe(StatFields* fields) const = 0;
  // The snapshot: appends the value's field of its key record, length-prefixed
  // (docs/FORMAT.md); the registry row's decoder reads the bytes inside the prefix back.
  // scratch is a buffer the caller keeps across values.
  virtual void AppendSnapshotValue(std::string* out, std::string* scratch) const = 0;
  // Whether some elements carry deadlines of their own (a hash's fields, HEXPIRE): the
  // keyspace then keeps the key where the active sweep of elements finds it.
  virtual bool has_element_deadlines() const { return false; }
};

}  // namespace goblin
