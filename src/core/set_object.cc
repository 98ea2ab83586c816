#include "core/set_object.h"

#include <algorithm>
#include <optional>

#include "core/value_digest.h"

namespace goblin {

void SetObject::Digest(ValueDigest* digest) const {
  set().ForEach([&](std::string_view member) {
    ValueDigest element;
    element.Mix(member);
    digest->Xor(element);
  });
}

void SetObject::Describe(StatFields* fields) const {
  AppendPackedStatFields(set().Stats(), fields);
}

Collection* SetObject::DecodeSnapshot(std::string_view bytes, const EncodingLimits& all_limits,
                                      std::string* what) {
  PackedSet set;
  if (!PackedSet::Restore(bytes, &set) || set.empty()) {
    *what = "malformed set";
    return nullptr;
  }
  const SetLimits& limits = all_limits.set;
  if (set.encoding() == PackedSet::Encoding::kHashtable) {
    // Redis re-adds a dumped hashtable's members when it may fit a smaller form.
    if (set.size() <= std::max(limits.max_intset_entries, limits.max_listpack_entries)) {
      std::optional<PackedSet> rebuilt;
      set.ForEach([&](std::string_view member) {
        if (!rebuilt) rebuilt.emplace(member, set.size(), limits);
        rebuilt->Add(member, limits);
      });
      set = std::move(*rebuilt);
    }
  } else {
    const size_t max_entries = set.encoding() == PackedSet::Encoding::kIntset
                                   ? limits.max_intset_entries
                                   : limits.max_listpack_entries;
    bool too_long = false;
    if (set.encoding() == PackedSet::Encoding::kListpack) {
      set.ForEach([&](std::string_view member) {
        too_long = too_long || member.size() > limits.max_listpack_value;
      });
    }
    if (set.size() > max_entries || too_long) set.ConvertToLarge();
  }
  return new SetObject(std::move(set));
}

}  // namespace goblin
