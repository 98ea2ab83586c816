#include "core/hash_object.h"

#include "core/value_digest.h"

namespace goblin {

void HashObject::Digest(ValueDigest* digest) const {
  hash().ForEach([&](std::string_view field, std::string_view value) {
    ValueDigest pair;
    pair.Mix(field);
    pair.Mix(value);
    digest->Xor(pair);
  });
}

void HashObject::Describe(StatFields* fields) const {
  AppendPackedStatFields(hash().Stats(), fields);
}

Collection* HashObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& all_limits,
                                       std::string* what) {
  PackedHash hash;
  if (!PackedHash::Restore(bytes, &hash) || hash.empty()) {
    *what = "malformed hash";
    return nullptr;
  }
  const HashLimits& limits = all_limits.hash;
  bool fits_small = hash.size() <= limits.max_listpack_entries;
  if (fits_small) {
    hash.ForEach([&](std::string_view field, std::string_view value) {
      if (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value) {
        fits_small = false;
      }
    });
  }
  if (hash.encoding() == PackedHash::Encoding::kListpack && !fits_small) {
    hash.ConvertToLarge();
  } else if (hash.encoding() == PackedHash::Encoding::kHashtable && fits_small) {
    PackedHash small;
    if (hash.has_field_expiry()) small.EnableFieldExpiry();
    hash.ForEachWithDeadline([&](std::string_view field, std::string_view value, int64_t deadline) {
      small.Set(field, value, limits);
      if (deadline != 0) small.SetDeadline(field, deadline);
    });
    hash = std::move(small);
  }
  return new HashObject(std::move(hash));
}

}  // namespace goblin
