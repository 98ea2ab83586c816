#include "core/stream_groups.h"

#include <algorithm>
#include <limits>

#include "core/alloc_size.h"
#include "core/bytes.h"
#include "core/varint.h"

namespace goblin {

namespace {

// now - then, saturating (a TIME option may put a delivery time anywhere).
int64_t Idle(int64_t now_ms, int64_t then_ms) {
  int64_t idle;
  if (__builtin_sub_overflow(now_ms, then_ms, &idle)) {
    return then_ms < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return idle;
}

// Bytes a std::map node costs: libstdc++'s 32-byte header and the value, in a size class.
template <typename Map>
size_t MapNodeBytes() {
  return SizeClassAtLeast(32 + sizeof(typename Map::value_type));
}

size_t StringHeapBytes(const std::string& s) {
  return s.capacity() > 15 ? AllocatedSize(s.data()) : 0;
}

}  // namespace

int64_t EstimateEntriesRead(const Stream& stream, StreamId id) {
  const auto added = static_cast<int64_t>(stream.entries_added());
  if (added == 0) return 0;
  if (stream.empty() && id <= stream.last_id()) return added;
  if (id == stream.last_id()) return added;
  if (id > stream.last_id()) return kEntriesReadUnknown;
  // Here id < last_id and the stream has entries.
  const StreamId first = stream.first_id();
  const StreamId max_deleted = stream.max_deleted_id();
  if (max_deleted == StreamId::Min() || max_deleted < first) {
    const auto live = static_cast<int64_t>(stream.size());
    if (id < first) return added - live;
    if (id == first) return added - live + 1;
  }
  return kEntriesReadUnknown;
}

bool StreamRangeHasTombstones(const Stream& stream, StreamId start, StreamId end) {
  const StreamId max_deleted = stream.max_deleted_id();
  if (stream.empty() || max_deleted == StreamId::Min()) return false;
  if (stream.first_id() > max_deleted) return false;
  return start <= max_deleted && max_deleted <= end;
}

// ---------------------------------------------------------------------------------------------
// ConsumerGroup

ConsumerGroup::ConsumerGroup(StreamId last_delivered_id, int64_t entries_read, size_t leaf_capacity)
    : leaf_capacity_(std::max<size_t>(leaf_capacity, 4)),
      last_delivered_id_(last_delivered_id),
      entries_read_(entries_read) {}

uint64_t ConsumerGroup::CountOf(const PendingRecord& record) const {
  if (record.delivery_count != kBigCount) return record.delivery_count;
  return big_counts_.at(record.id());
}

void ConsumerGroup::SetCount(PendingRecord* record, uint64_t count) {
  if (record->delivery_count == kBigCount && count < kBigCount) big_counts_.erase(record->id());
  if (count >= kBigCount) big_counts_[record->id()] = count;
  record->delivery_count = count >= kBigCount ? kBigCount : static_cast<uint32_t>(count);
}

void ConsumerGroup::ForgetCount(const PendingRecord& record) {
  if (record.delivery_count == kBigCount) big_counts_.erase(record.id());
}

void ConsumerGroup::SetId(StreamId id, int64_t entries_read) {
  last_delivered_id_ = id;
  entries_read_ = entries_read;
}

void ConsumerGroup::AdvanceLastDelivered(const Stream& stream, StreamId id) {
  if (id <= last_delivered_id_) return;
  if (entries_read_ != kEntriesReadUnknown &&
      !StreamRangeHasTombstones(stream, id, StreamId::Max())) {
    ++entries_read_;
  } else if (stream.entries_added() != 0) {
    entries_read_ = EstimateEntriesRead(stream, id);
  }
  last_delivered_id_ = id;
}

std::optional<int64_t> ConsumerGroup::Lag(const Stream& stream) const {
  const auto added = static_cast<int64_t>(stream.entries_added());
  if (added == 0) return 0;
  if (entries_read_ != kEntriesReadUnknown &&
      !StreamRangeHasTombstones(stream, last_delivered_id_, StreamId::Max())) {
    return added - entries_read_;
  }
  const int64_t estimate = EstimateEntriesRead(stream, last_delivered_id_);
  if (estimate == kEntriesReadUnknown) return std::nullopt;
  return added - estimate;
}

// --- Consumers ---

uint32_t ConsumerGroup::EnsureConsumer(std::string_view name, int64_t now_ms, bool* created) {
  auto it = consumers_.find(name);
  if (it != consumers_.end()) {
    *created = false;
    return it->second;
  }
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  auto inserted = consumers_.emplace(std::string(name), slot).first;
  slots_[slot] = ConsumerSlot{&inserted->first, now_ms, -1, 0};
  *created = true;
  return slot;
}

std::optional<uint32_t> ConsumerGroup::FindSlot(std::string_view name) const {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return std::nullopt;
  return it->second;
}

bool ConsumerGroup::CreateConsumer(std::string_view name, int64_t now_ms) {
  bool created;
  EnsureConsumer(name, now_ms, &created);
  return created;
}

bool ConsumerGroup::SeeConsumer(std::string_view name, int64_t now_ms) {
  bool created;
  const uint32_t slot = EnsureConsumer(name, now_ms, &created);
  slots_[slot].seen_time_ms = now_ms;
  return created;
}

std::optional<uint64_t> ConsumerGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return std::nullopt;
  const uint32_t slot = it->second;
  const uint64_t had = slots_[slot].pending;
  if (had > 0) {
    const uint64_t bit = MaskBit(slot);
    for (size_t l = 0; l < leaves_.size();) {
      PendingLeaf& leaf = leaves_[l];
      if ((leaf.consumer_mask & bit) == 0) {
        ++l;
        continue;
      }
      std::erase_if(leaf.records, [&](const PendingRecord& r) {
        if (r.consumer != slot) return false;
        ForgetCount(r);
        return true;
      });
      leaf.consumer_mask = 0;
      for (const PendingRecord& r : leaf.records) leaf.consumer_mask |= MaskBit(r.consumer);
      if (leaf.records.empty()) {
        leaves_.erase(leaves_.begin() + static_cast<ptrdiff_t>(l));
      } else {
        ++l;
      }
    }
    pending_ -= had;
    // Merge the leaves the removal left small.
    for (size_t l = 0; l + 1 < leaves_.size();) {
      const size_t a = leaves_[l].records.size(), b = leaves_[l + 1].records.size();
      if ((a < leaf_capacity_ / 4 || b < leaf_capacity_ / 4) && a + b <= leaf_capacity_ * 3 / 4) {
        PendingLeaf& left = leaves_[l];
        PendingLeaf& right = leaves_[l + 1];
        left.records.insert(left.records.end(), right.records.begin(), right.records.end());
        left.consumer_mask |= right.consumer_mask;
        leaves_.erase(leaves_.begin() + static_cast<ptrdiff_t>(l + 1));
      } else {
        ++l;
      }
    }
  }
  slots_[slot] = ConsumerSlot{};
  free_slots_.push_back(slot);
  consumers_.erase(it);
  return had;
}

std::optional<ConsumerInfo> ConsumerGroup::FindConsumer(std::string_view name) const {
  const auto slot = FindSlot(name);
  if (!slot) return std::nullopt;
  const ConsumerSlot& s = slots_[*slot];
  return ConsumerInfo{*s.name, s.seen_time_ms, s.active_time_ms, s.pending};
}

void ConsumerGroup::ForEachConsumer(const std::function<void(const ConsumerInfo&)>& visit) const {
  for (const auto& [name, slot] : consumers_) {
    const ConsumerSlot& s = slots_[slot];
    visit(ConsumerInfo{name, s.seen_time_ms, s.active_time_ms, s.pending});
  }
}

// --- The PEL: leaves ---

ConsumerGroup::Position ConsumerGroup::LowerBound(StreamId id) const {
  size_t lo = 0, hi = leaves_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (leaves_[mid].records.back().id() < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == leaves_.size()) return {lo, 0};
  const auto& records = leaves_[lo].records;
  auto it = std::lower_bound(records.begin(), records.end(), id,
                             [](const PendingRecord& r, StreamId key) { return r.id() < key; });
  return {lo, static_cast<size_t>(it - records.begin())};
}

std::optional<ConsumerGroup::Position> ConsumerGroup::Locate(StreamId id) const {
  const Position pos = LowerBound(id);
  if (pos.leaf == leaves_.size() || leaves_[pos.leaf].records[pos.index].id() != id) {
    return std::nullopt;
  }
  return pos;
}

void ConsumerGroup::Insert(const PendingRecord& record) {
  if (leaves_.empty()) {
    leaves_.emplace_back();
    leaves_.back().records.push_back(record);
    leaves_.back().consumer_mask = MaskBit(record.consumer);
    return;
  }
  Position pos = LowerBound(record.id());
  if (pos.leaf == leaves_.size()) {
    pos = {leaves_.size() - 1, leaves_.back().records.size()};
  }
  if (leaves_[pos.leaf].records.size() >= leaf_capacity_) {
    if (pos.leaf + 1 == leaves_.size() && pos.index == leaves_[pos.leaf].records.size()) {
      // An append past a full tail leaf: start a new leaf and keep the old one full.
      leaves_.emplace_back();
      pos = {pos.leaf + 1, 0};
    } else {
      PendingLeaf& left = leaves_[pos.leaf];
      const size_t half = left.records.size() / 2;
      PendingLeaf right;
      right.records.assign(left.records.begin() + static_cast<ptrdiff_t>(half), left.records.end());
      left.records.resize(half);
      left.consumer_mask = 0;
      for (const PendingRecord& r : left.records) left.consumer_mask |= MaskBit(r.consumer);
      for (const PendingRecord& r : right.records) right.consumer_mask |= MaskBit(r.consumer);
      leaves_.insert(leaves_.begin() + static_cast<ptrdiff_t>(pos.leaf + 1), std::move(right));
      if (pos.index > half) pos = {pos.leaf + 1, pos.index - half};
    }
  }
  PendingLeaf& leaf = leaves_[pos.leaf];
  leaf.records.insert(leaf.records.begin() + static_cast<ptrdiff_t>(pos.index), record);
  leaf.consumer_mask |= MaskBit(record.consumer);
}

void ConsumerGroup::Erase(Position pos) {
  PendingLeaf& leaf = leaves_[pos.leaf];
  ForgetCount(leaf.records[pos.index]);
  --slots_[leaf.records[pos.index].consumer].pending;
  --pending_;
  leaf.records.erase(leaf.records.begin() + static_cast<ptrdiff_t>(pos.index));
  Rebalance(pos.leaf);
}

void ConsumerGroup::Rebalance(size_t l) {
  PendingLeaf& leaf = leaves_[l];
  if (leaf.records.empty()) {
    leaves_.erase(leaves_.begin() + static_cast<ptrdiff_t>(l));
    return;
  }
  if (leaf.records.size() >= leaf_capacity_ / 4) return;
  for (const size_t neighbour : {l + 1, l - 1}) {
    if (neighbour >= leaves_.size()) continue;  // l - 1 wraps to SIZE_MAX when l == 0
    if (leaf.records.size() + leaves_[neighbour].records.size() > leaf_capacity_ * 3 / 4) {
      continue;
    }
    const size_t left_index = std::min(l, neighbour);
    PendingLeaf& left = leaves_[left_index];
    PendingLeaf& right = leaves_[left_index + 1];
    left.records.insert(left.records.end(), right.records.begin(), right.records.end());
    left.consumer_mask |= right.consumer_mask;
    leaves_.erase(leaves_.begin() + static_cast<ptrdiff_t>(left_index + 1));
    return;
  }
  // No merge: give back a block much larger than what is left.
  if (leaf.records.capacity() > 4 * leaf.records.size()) leaf.records.shrink_to_fit();
}

void ConsumerGroup::Scan(StreamId start, StreamId end, std::optional<uint32_t> slot,
                         const std::function<bool(const PendingRecord&)>& visit) const {
  if (start > end) return;
  uint64_t remaining = slot ? slots_[*slot].pending : UINT64_MAX;
  if (remaining == 0) return;
  const uint64_t bit = slot ? MaskBit(*slot) : ~uint64_t{0};
  const Position from = LowerBound(start);
  for (size_t l = from.leaf; l < leaves_.size(); ++l) {
    const PendingLeaf& leaf = leaves_[l];
    if ((leaf.consumer_mask & bit) == 0) {
      if (leaf.records.back().id() > end) return;
      continue;
    }
    for (size_t i = l == from.leaf ? from.index : 0; i < leaf.records.size(); ++i) {
      const PendingRecord& r = leaf.records[i];
      if (r.id() > end) return;
      if (slot && r.consumer != *slot) continue;
      if (!visit(r)) return;
      // The consumer has no more records than its count, so stop once that many were seen.
      if (slot && --remaining == 0) return;
    }
  }
}

void ConsumerGroup::MoveTo(PendingRecord* record, uint32_t slot, size_t leaf) {
  if (record->consumer == slot) return;
  --slots_[record->consumer].pending;
  ++slots_[slot].pending;
  record->consumer = slot;
  leaves_[leaf].consumer_mask |= MaskBit(slot);
}

PendingEntry ConsumerGroup::ToEntry(const PendingRecord& record) const {
  return PendingEntry{record.id(), *slots_[record.consumer].name, record.delivery_time_ms,
                      CountOf(record)};
}

// --- The PEL: operations ---

void ConsumerGroup::Deliver(std::string_view consumer, StreamId id, int64_t now_ms) {
  bool created;
  const uint32_t slot = EnsureConsumer(consumer, now_ms, &created);
  if (const auto pos = Locate(id)) {
    PendingRecord& record = leaves_[pos->leaf].records[pos->index];
    MoveTo(&record, slot, pos->leaf);
    record.delivery_time_ms = now_ms;
    SetCount(&record, 1);
  } else {
    Insert(PendingRecord{id.ms, id.seq, now_ms, 1, slot});
    ++slots_[slot].pending;
    ++pending_;
  }
  slots_[slot].active_time_ms = now_ms;
}

std::vector<StreamId> ConsumerGroup::ConsumerPendingFrom(std::string_view consumer, StreamId start,
                                                         size_t count) const {
  std::vector<StreamId> ids;
  const auto slot = FindSlot(consumer);
  if (!slot) return ids;
  Scan(start, StreamId::Max(), slot, [&](const PendingRecord& r) {
    ids.push_back(r.id());
    return count == 0 || ids.size() < count;
  });
  return ids;
}

bool ConsumerGroup::Redeliver(StreamId id, int64_t now_ms) {
  const auto pos = Locate(id);
  if (!pos) return false;
  PendingRecord& record = leaves_[pos->leaf].records[pos->index];
  record.delivery_time_ms = now_ms;
  SetCount(&record, CountOf(record) + 1);
  return true;
}

size_t ConsumerGroup::Ack(std::span<const StreamId> ids) {
  size_t acked = 0;
  for (const StreamId id : ids) acked += Remove(id) ? 1 : 0;
  return acked;
}

bool ConsumerGroup::Remove(StreamId id) {
  const auto pos = Locate(id);
  if (!pos) return false;
  Erase(*pos);
  return true;
}

std::optional<PendingEntry> ConsumerGroup::FindPending(StreamId id) const {
  const auto pos = Locate(id);
  if (!pos) return std::nullopt;
  return ToEntry(leaves_[pos->leaf].records[pos->index]);
}

PendingSummary ConsumerGroup::Summary() const {
  PendingSummary summary;
  summary.count = pending_;
  if (pending_ == 0) return summary;
  summary.min_id = leaves_.front().records.front().id();
  summary.max_id = leaves_.back().records.back().id();
  for (const auto& [name, slot] : consumers_) {
    if (slots_[slot].pending > 0) summary.consumers.emplace_back(name, slots_[slot].pending);
  }
  return summary;
}

std::vector<PendingEntry> ConsumerGroup::PendingRange(StreamId start, StreamId end, size_t count,
                                                      std::optional<std::string_view> consumer,
                                                      int64_t min_idle_ms, int64_t now_ms) const {
  std::vector<PendingEntry> entries;
  if (count == 0) return entries;
  std::optional<uint32_t> slot;
  if (consumer) {
    slot = FindSlot(*consumer);
    if (!slot) return entries;
  }
  Scan(start, end, slot, [&](const PendingRecord& r) {
    if (min_idle_ms > 0 && Idle(now_ms, r.delivery_time_ms) < min_idle_ms) return true;
    entries.push_back(ToEntry(r));
    return entries.size() < count;
  });
  return entries;
}

ClaimResult ConsumerGroup::Claim(StreamId id, std::string_view consumer,
                                 const ClaimOptions& options, bool in_stream) {
  bool created;
  auto pos = Locate(id);
  uint32_t slot;
  if (!pos) {
    if (!options.force || !in_stream) return ClaimResult::kNotPending;
    slot = EnsureConsumer(consumer, options.now_ms, &created);
    Insert(PendingRecord{id.ms, id.seq, options.now_ms, 1, slot});
    ++slots_[slot].pending;
    ++pending_;
    pos = Locate(id);
  } else {
    const PendingRecord& record = leaves_[pos->leaf].records[pos->index];
    if (!in_stream) {
      Erase(*pos);
      return ClaimResult::kRemoved;
    }
    if (options.min_idle_ms > 0 &&
        Idle(options.now_ms, record.delivery_time_ms) < options.min_idle_ms) {
      return ClaimResult::kTooRecent;
    }
    slot = EnsureConsumer(consumer, options.now_ms, &created);
  }
  PendingRecord& record = leaves_[pos->leaf].records[pos->index];
  MoveTo(&record, slot, pos->leaf);
  record.delivery_time_ms = options.delivery_time_ms;
  if (options.retry_count) {
    SetCount(&record, *options.retry_count);
  } else if (options.increment_count) {
    SetCount(&record, CountOf(record) + 1);
  }
  slots_[slot].active_time_ms = options.now_ms;
  return ClaimResult::kClaimed;
}

AutoClaimResult ConsumerGroup::AutoClaim(std::string_view consumer, StreamId start, size_t count,
                                         int64_t min_idle_ms, int64_t now_ms, bool justid,
                                         const std::function<bool(StreamId)>& in_stream) {
  AutoClaimResult result;
  uint64_t attempts = count > UINT64_MAX / 10 ? UINT64_MAX : uint64_t{count} * 10;
  std::optional<uint32_t> slot;  // created at the first claim, as Redis 7.2 does
  Position pos = LowerBound(start);
  auto advance = [&] {
    if (++pos.index == leaves_[pos.leaf].records.size()) pos = {pos.leaf + 1, 0};
  };
  while (attempts > 0 && count > 0 && pos.leaf < leaves_.size()) {
    --attempts;
    PendingRecord& record = leaves_[pos.leaf].records[pos.index];
    const StreamId id = record.id();
    if (!in_stream(id)) {
      Erase(pos);
      result.deleted.push_back(id);
      --count;
      pos = LowerBound(id);
      continue;
    }
    if (min_idle_ms > 0 && Idle(now_ms, record.delivery_time_ms) < min_idle_ms) {
      advance();
      continue;
    }
    if (!slot) {
      bool created;
      slot = EnsureConsumer(consumer, now_ms, &created);
    }
    MoveTo(&record, *slot, pos.leaf);
    record.delivery_time_ms = now_ms;
    if (!justid) SetCount(&record, CountOf(record) + 1);
    slots_[*slot].active_time_ms = now_ms;
    result.claimed.push_back(id);
    --count;
    advance();
  }
  result.next =
      pos.leaf < leaves_.size() ? leaves_[pos.leaf].records[pos.index].id() : StreamId::Min();
  return result;
}

std::vector<PendingEntry> ConsumerGroup::IdleEntries(int64_t min_idle_ms, int64_t now_ms,
                                                     size_t count) const {
  const auto idle_enough = [&](int64_t delivered) {
    return UnsignedIdle(now_ms, delivered) >= static_cast<uint64_t>(min_idle_ms);
  };
  // Walked in delivery order, the entries are taken up to the earliest delivery time that is
  // not idle enough: every entry delivered before that time is idle enough (or it would be the
  // earliest), and none delivered at or after it is reached.
  std::optional<int64_t> stop;
  std::vector<const PendingRecord*> taken;
  for (const PendingLeaf& leaf : leaves_) {
    for (const PendingRecord& record : leaf.records) {
      if (!idle_enough(record.delivery_time_ms)) {
        if (!stop || record.delivery_time_ms < *stop) stop = record.delivery_time_ms;
      } else if (!stop || record.delivery_time_ms < *stop) {
        taken.push_back(&record);
      }
    }
  }
  if (stop)
    std::erase_if(taken, [&](const PendingRecord* r) { return r->delivery_time_ms > *stop; });
  if (count > 0 && taken.size() > count) {
    std::partial_sort(taken.begin(), taken.begin() + static_cast<std::ptrdiff_t>(count),
                      taken.end(), DeliveredBefore);
    taken.resize(count);
  } else {
    std::sort(taken.begin(), taken.end(), DeliveredBefore);
  }
  std::vector<PendingEntry> out;
  out.reserve(taken.size());
  for (const PendingRecord* record : taken) out.push_back(ToEntry(*record));
  return out;
}

std::optional<PendingEntry> ConsumerGroup::FirstDelivered(
    const std::function<bool(StreamId)>& keep) const {
  std::vector<const PendingRecord*> all;
  all.reserve(pending_);
  for (const PendingLeaf& leaf : leaves_) {
    for (const PendingRecord& record : leaf.records) all.push_back(&record);
  }
  if (all.empty()) return std::nullopt;
  // Usually the first one is kept: find it alone, and order the rest only when it is refused.
  auto first = std::min_element(all.begin(), all.end(), DeliveredBefore);
  if (keep((*first)->id())) return ToEntry(**first);
  std::sort(all.begin(), all.end(), DeliveredBefore);
  for (const PendingRecord* record : all) {
    if (keep(record->id())) return ToEntry(*record);
  }
  return std::nullopt;
}

size_t ConsumerGroup::MemoryUsage() const {
  size_t bytes = sizeof(*this) + leaves_.capacity() * sizeof(PendingLeaf);
  for (const PendingLeaf& leaf : leaves_) {
    if (leaf.records.capacity() > 0) bytes += AllocatedSize(leaf.records.data());
  }
  bytes += slots_.capacity() * sizeof(ConsumerSlot) + free_slots_.capacity() * sizeof(uint32_t);
  bytes += big_counts_.size() * MapNodeBytes<decltype(big_counts_)>();
  for (const auto& [name, slot] : consumers_) {
    bytes += MapNodeBytes<decltype(consumers_)>() + StringHeapBytes(name);
  }
  return bytes;
}

bool ConsumerGroup::CheckInvariants() const {
  std::vector<uint64_t> counts(slots_.size(), 0);
  uint64_t total = 0;
  std::optional<StreamId> previous;
  for (const PendingLeaf& leaf : leaves_) {
    if (leaf.records.empty() || leaf.records.size() > leaf_capacity_) return false;
    for (const PendingRecord& r : leaf.records) {
      if (previous && r.id() <= *previous) return false;
      previous = r.id();
      if (r.consumer >= slots_.size() || slots_[r.consumer].name == nullptr) return false;
      if ((leaf.consumer_mask & MaskBit(r.consumer)) == 0) return false;
      ++counts[r.consumer];
      ++total;
    }
  }
  if (total != pending_) return false;
  size_t big = 0;
  for (const PendingLeaf& leaf : leaves_) {
    for (const PendingRecord& r : leaf.records) {
      if (r.delivery_count != kBigCount) continue;
      auto it = big_counts_.find(r.id());
      if (it == big_counts_.end() || it->second < kBigCount) return false;
      ++big;
    }
  }
  if (big != big_counts_.size()) return false;
  size_t live = 0;
  for (size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s].pending != counts[s]) return false;
    if (slots_[s].name != nullptr) ++live;
  }
  if (live != consumers_.size() || live + free_slots_.size() != slots_.size()) return false;
  for (const auto& [name, slot] : consumers_) {
    if (slot >= slots_.size() || slots_[slot].name != &name) return false;
  }
  for (const uint32_t slot : free_slots_) {
    if (slot >= slots_.size() || slots_[slot].name != nullptr) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// StreamGroups

ConsumerGroup* StreamGroups::Create(std::string_view name, StreamId last_delivered_id,
                                    int64_t entries_read) {
  if (groups_.find(name) != groups_.end()) return nullptr;
  auto group = std::make_unique<ConsumerGroup>(last_delivered_id, entries_read, leaf_capacity_);
  ConsumerGroup* raw = group.get();
  groups_.emplace(std::string(name), std::move(group));
  return raw;
}

bool StreamGroups::Destroy(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

ConsumerGroup* StreamGroups::Find(std::string_view name) {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

const ConsumerGroup* StreamGroups::Find(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

void StreamGroups::ForEach(
    const std::function<void(std::string_view, const ConsumerGroup&)>& visit) const {
  for (const auto& [name, group] : groups_) visit(name, *group);
}

bool StreamGroups::References(StreamId id) const {
  for (const auto& [name, group] : groups_) {
    if (group->last_delivered_id() < id || group->Locate(id)) return true;
  }
  return false;
}

size_t StreamGroups::RemoveEverywhere(StreamId id) {
  size_t removed = 0;
  for (auto& [name, group] : groups_) removed += group->Remove(id) ? 1 : 0;
  return removed;
}

size_t StreamGroups::MemoryUsage() const {
  size_t bytes = sizeof(*this);
  for (const auto& [name, group] : groups_) {
    bytes += MapNodeBytes<decltype(groups_)>() + StringHeapBytes(name) + group->MemoryUsage();
  }
  return bytes;
}

bool StreamGroups::CheckInvariants() const {
  for (const auto& [name, group] : groups_) {
    if (!group->CheckInvariants()) return false;
  }
  return true;
}

void StreamGroups::Dump(std::string* out) const {
  out->push_back(1);
  AppendVar(out, groups_.size());
  for (const auto& [name, group] : groups_) {
    AppendLengthPrefixed(out, name);
    AppendVar(out, group->last_delivered_id_.ms);
    AppendVar(out, group->last_delivered_id_.seq);
    AppendVar(out, static_cast<uint64_t>(group->entries_read_) + 1);  // -1 writes 0
    AppendVar(out, group->consumers_.size());
    // Ordinals follow the name order the consumers are written in.
    std::vector<uint32_t> ordinal(group->slots_.size(), 0);
    uint32_t next = 0;
    for (const auto& [consumer, slot] : group->consumers_) {
      ordinal[slot] = next++;
      const auto& s = group->slots_[slot];
      AppendLengthPrefixed(out, consumer);
      AppendVar(out, ZigZag(s.seen_time_ms));
      AppendVar(out, ZigZag(s.active_time_ms));
    }
    AppendVar(out, group->pending_);
    bool first = true;
    StreamId previous;
    int64_t previous_time = 0;
    for (const auto& leaf : group->leaves_) {
      for (const auto& r : leaf.records) {
        if (first) {
          AppendVar(out, r.ms);
          AppendVar(out, r.seq);
        } else {
          AppendVar(out, r.ms - previous.ms);
          AppendVar(out, r.ms == previous.ms ? r.seq - previous.seq - 1 : r.seq);
        }
        AppendVar(out, ZigZag(static_cast<int64_t>(static_cast<uint64_t>(r.delivery_time_ms) -
                                                   static_cast<uint64_t>(previous_time))));
        AppendVar(out, group->CountOf(r));
        AppendVar(out, ordinal[r.consumer]);
        first = false;
        previous = r.id();
        previous_time = r.delivery_time_ms;
      }
    }
  }
}

bool StreamGroups::Restore(std::string_view data, StreamGroups* out) {
  ByteReader in(data);
  uint8_t version;
  uint64_t group_count;
  if (!in.U8(&version) || version != 1 || !in.Var(&group_count)) return false;
  StreamGroups restored(out->leaf_capacity_);
  std::string_view previous_name;
  for (uint64_t g = 0; g < group_count; ++g) {
    std::string_view name;
    uint64_t ms, seq, entries_read_plus_one, consumer_count;
    if (!in.LengthPrefixed(&name) || (g > 0 && name <= previous_name)) return false;
    previous_name = name;
    if (!in.Var(&ms) || !in.Var(&seq) || !in.Var(&entries_read_plus_one) ||
        entries_read_plus_one > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1 ||
        !in.Var(&consumer_count)) {
      return false;
    }
    ConsumerGroup* group =
        restored.Create(name, StreamId{ms, seq}, static_cast<int64_t>(entries_read_plus_one - 1));
    std::string_view previous_consumer;
    for (uint64_t c = 0; c < consumer_count; ++c) {
      std::string_view consumer;
      uint64_t seen, active;
      if (!in.LengthPrefixed(&consumer) || (c > 0 && consumer <= previous_consumer) ||
          !in.Var(&seen) || !in.Var(&active)) {
        return false;
      }
      previous_consumer = consumer;
      // Written in name order into fresh slots, so the slot is the ordinal.
      group->CreateConsumer(consumer, UnZigZag(seen));
      group->slots_[c].active_time_ms = UnZigZag(active);
    }
    uint64_t pending_count;
    if (!in.Var(&pending_count)) return false;
    StreamId previous;
    uint64_t previous_time = 0;
    for (uint64_t p = 0; p < pending_count; ++p) {
      uint64_t a, b, time_delta, delivery_count, ordinal;
      if (!in.Var(&a) || !in.Var(&b) || !in.Var(&time_delta) || !in.Var(&delivery_count) ||
          !in.Var(&ordinal)) {
        return false;
      }
      StreamId id;
      if (p == 0) {
        id = {a, b};
      } else if (a == 0) {
        if (b >= UINT64_MAX - previous.seq) return false;  // seq would pass UINT64_MAX
        id = {previous.ms, previous.seq + b + 1};
      } else {
        if (a > UINT64_MAX - previous.ms) return false;
        id = {previous.ms + a, b};
      }
      if (ordinal >= consumer_count) return false;
      previous_time += static_cast<uint64_t>(UnZigZag(time_delta));
      const auto slot = static_cast<uint32_t>(ordinal);
      // Ids strictly increase, so every insert is an append at the tail.
      ConsumerGroup::PendingRecord record{id.ms, id.seq, static_cast<int64_t>(previous_time), 0,
                                          slot};
      group->SetCount(&record, delivery_count);
      group->Insert(record);
      ++group->slots_[slot].pending;
      ++group->pending_;
      previous = id;
    }
  }
  if (!in.done()) return false;
  out->groups_.swap(restored.groups_);
  return true;
}

}  // namespace goblin
