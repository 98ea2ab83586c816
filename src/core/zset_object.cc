#include "core/zset_object.h"

#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/value_digest.h"

namespace goblin {
namespace {

// Limits under which AppendSorted never changes a set's form.
constexpr ZsetLimits kUnlimited{std::numeric_limits<size_t>::max(),
                                std::numeric_limits<size_t>::max()};

// Copies every element of `from` into `to` (empty, already in the wanted form) in order.
void AppendAll(const SortedSet& from, SortedSet* to) {
  from.ForEachInRankRange(0, from.size(), false, [&](double score, std::string_view member) {
    to->AppendSorted(score, member, kUnlimited);
  });
  to->FinishAppends();
}

}  // namespace

size_t ZsetObject::MemoryUsage() const {
  // SortedSet::MemoryUsage counts sizeof(SortedSet); this block holds it plus the vtable.
  return malloc_usable_size(const_cast<ZsetObject*>(this)) - sizeof(SortedSet) + set_.MemoryUsage();
}

Collection* ZsetObject::Clone() const {
  const bool large = set_.encoding() == SortedSet::Encoding::kSkiplist;
  // A size hint above the limit makes the copy start in the large form.
  auto* copy = new ZsetObject(large ? 1 : 0, 0, ZsetLimits{0, 0});
  AppendAll(set_, &copy->set_);
  return copy;
}

bool ZsetObject::Insert(SortedSet& set, double score, std::string_view member,
                        const ZsetLimits& limits, double* old_score) {
  const bool added = set.Insert(score, member, limits, old_score);
  if (score == 0 && std::signbit(score) && set.encoding() == SortedSet::Encoding::kListpack) {
    set.Insert(0.0, member, limits);
  }
  return added;
}

void ZsetObject::ConvertToLarge(SortedSet& set) {
  if (set.encoding() == SortedSet::Encoding::kSkiplist) return;
  SortedSet large(1, 0, ZsetLimits{0, 0});
  AppendAll(set, &large);
  set = std::move(large);
}

void ZsetObject::Digest(ValueDigest* digest) const {
  set_.ForEachInRankRange(0, set_.size(), false, [&](double score, std::string_view member) {
    ValueDigest element;
    element.Mix(member);
    element.Mix(score);
    digest->Xor(element);
  });
}

void ZsetObject::Describe(StatFields* fields) const {
  const ZsetStats s = set_.Stats();
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  fields->insert(fields->end(), {{"layout", std::string_view(s.layout)},
                                 {"members", count(s.size)},
                                 {"value_bytes", count(s.bytes)},
                                 {"payload_bytes", count(s.payload_bytes)},
                                 {"capacity_bytes", count(s.capacity_bytes)},
                                 {"fill", s.fill},
                                 {"leaves", count(s.leaves)},
                                 {"jumbo_leaves", count(s.jumbo_leaves)},
                                 {"inner_nodes", count(s.inner_nodes)},
                                 {"height", static_cast<int64_t>(s.height)},
                                 {"leaf_bytes", count(s.leaf_bytes)},
                                 {"inner_bytes", count(s.inner_bytes)},
                                 {"table_bytes", count(s.table_bytes)},
                                 {"index_bytes", count(s.index_bytes)},
                                 {"index_segments", count(s.index_segments)},
                                 {"index_slots", count(s.index_slots)}});
}

}  // namespace goblin
