#include "core/paged_table.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <unordered_set>
#include <utility>

namespace goblin {

void AppendPackedStatFields(const PackedStats& s, StatFields* fields) {
  auto count = [](size_t n) { return static_cast<int64_t>(n); };
  fields->insert(fields->end(), {{"layout", std::string_view(s.layout)},
                                 {"elements", count(s.size)},
                                 {"value_bytes", count(s.bytes)},
                                 {"payload_bytes", count(s.payload_bytes)},
                                 {"dead_bytes", count(s.dead_bytes)},
                                 {"capacity_bytes", count(s.capacity_bytes)},
                                 {"fill", s.fill},
                                 {"pages", count(s.pages)},
                                 {"index_segments", count(s.index_segments)},
                                 {"index_slots", count(s.index_slots)},
                                 {"index_bytes", count(s.index_bytes)}});
}

PagedTable::PagedTable(bool with_values)
    : with_values_(with_values), pages_(with_values ? 2 : 1), index_(this) {}

PagedTable::~PagedTable() = default;

uint64_t PagedTable::HashOfEntry(const uint8_t* entry) {
  CellView key;
  DecodeCell(entry, &key);
  return PackedKey::HashOf(key.AsInput());
}

std::optional<EntryRef> PagedTable::Find(const PackedKey& key) const {
  assert(pending_.empty());
  std::optional<EntryRef> found;
  index_.Find(key.hash, [&](EntryRef ref) {
    if (!CellMatches(pages_.At(ref), key)) return false;
    found = ref;
    return true;
  });
  return found;
}

void PagedTable::Insert(const PackedKey& key, const CellInput* value) {
  assert(pending_.empty() && (value != nullptr) == with_values_);
  const size_t bytes = key.EncodedSize() + (value != nullptr ? value->EncodedSize() : 0);
  EntryRef ref;
  uint8_t* p = pages_.Append(ChainOfHash(key.hash), bytes, &ref);
  p = EncodeCell(p, key);
  if (value != nullptr) EncodeCell(p, *value);
  index_.Insert(key.hash, ref);
}

void PagedTable::SetValue(const PackedKey& key, EntryRef ref, const CellInput& value) {
  assert(with_values_);
  uint8_t* entry = pages_.MutableAt(ref);
  uint8_t* old_value = SkipCell(entry);
  const size_t old_size = static_cast<size_t>(SkipCell(old_value) - old_value);
  const size_t new_size = value.EncodedSize();
  const size_t key_size = static_cast<size_t>(old_value - entry);
  if (old_size == new_size || pages_.ResizeLast(ref, key_size + old_size, key_size + new_size)) {
    EncodeCell(old_value, value);
    return;
  }
  // A different size: write the whole entry anew at the end of its chain (the key cell is
  // re-encoded from key, which encodes identically), repoint the slot, then kill the old one.
  EntryRef new_ref;
  uint8_t* p = pages_.Append(ChainOfHash(key.hash), key_size + new_size, &new_ref);
  p = EncodeCell(p, key);
  EncodeCell(p, value);
  index_.Replace(key.hash, ref, new_ref);
  pages_.Kill(ref, this);
}

bool PagedTable::Erase(const PackedKey& key) {
  const std::optional<EntryRef> ref = Find(key);
  if (!ref) return false;
  index_.Erase(key.hash, *ref);
  pages_.Kill(*ref, this);
  return true;
}

void PagedTable::EraseAt(EntryRef ref) {
  index_.Erase(HashOfEntry(pages_.At(ref)), ref);
  pages_.Kill(ref, this);
}

void SampleDistinctIndices(size_t n, size_t k, uint64_t* random_state, std::vector<uint32_t>* out) {
  std::vector<uint32_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = static_cast<uint32_t>(i);
  k = std::min(k, n);
  for (size_t i = 0; i < k; ++i) {
    std::swap(all[i], all[i + RandomBelow(random_state, n - i)]);
  }
  all.resize(k);
  *out = std::move(all);
}

void PagedTable::SampleDistinct(size_t count, uint64_t* random_state,
                                std::vector<EntryRef>* out) const {
  out->clear();
  const size_t n = size();
  count = std::min(count, n);
  if (count == 0) return;
  if (count * 3 > n) {
    // A large share: one pass choosing each entry with probability (still needed) / (still
    // left) (Knuth's algorithm S), then a shuffle, since the pass yields page order.
    size_t left = n;
    size_t needed = count;
    pages_.ForEach([&](EntryRef ref, const uint8_t*, size_t) {
      if (RandomBelow(random_state, left) < needed) {
        out->push_back(ref);
        --needed;
      }
      --left;
    });
    for (size_t i = out->size(); i > 1; --i) {
      std::swap((*out)[i - 1], (*out)[RandomBelow(random_state, i)]);
    }
    return;
  }
  // A small share: random draws, dropping repeats (fewer than half of the draws repeat).
  std::unordered_set<EntryRef> seen;
  seen.reserve(count * 2);
  while (out->size() < count) {
    const EntryRef ref = index_.Random(random_state);
    if (seen.insert(ref).second) out->push_back(ref);
  }
}

void PagedTable::AppendUnindexed(const uint8_t* entry, size_t bytes, uint64_t hash) {
  EntryRef ref;
  uint8_t* p = pages_.Append(ChainOfHash(hash), bytes, &ref);
  std::memcpy(p, entry, bytes);
  pending_.emplace_back(hash, ref);
}

bool PagedTable::PendingKeysDistinct() const {
  // Equal keys have equal hashes: sort the hashes (four 16-bit radix passes), then compare
  // the keys of the entries whose hashes collide.
  std::vector<std::pair<uint64_t, EntryRef>> sorted(pending_);
  std::vector<std::pair<uint64_t, EntryRef>> buffer(sorted.size());
  std::vector<uint32_t> offsets(1 << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(offsets.begin(), offsets.end(), 0);
    for (const auto& item : sorted) ++offsets[(item.first >> shift) & 0xffff];
    uint32_t total = 0;
    for (uint32_t& offset : offsets) total += std::exchange(offset, total);
    for (const auto& item : sorted) buffer[offsets[(item.first >> shift) & 0xffff]++] = item;
    sorted.swap(buffer);
  }
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first != sorted[i - 1].first) continue;
    const uint8_t* a = pages_.At(sorted[i].second);
    const uint8_t* b = pages_.At(sorted[i - 1].second);
    const size_t a_size = static_cast<size_t>(SkipCell(a) - a);
    if (a_size == static_cast<size_t>(SkipCell(b) - b) && std::memcmp(a, b, a_size) == 0) {
      return false;
    }
  }
  return true;
}

void PagedTable::BuildIndex() {
  index_.BulkLoad(pending_);
  pending_ = std::vector<std::pair<uint64_t, EntryRef>>();
}

size_t PagedTable::MemoryUsage() const {
  return sizeof(*this) + pages_.MemoryUsage() + index_.MemoryUsage() +
         pending_.capacity() * sizeof(pending_[0]);
}

size_t PagedTable::Optimize(std::unique_ptr<PagedTable>* table) {
  const PagedTable& old = **table;
  const size_t before = old.MemoryUsage();
  auto packed = std::make_unique<PagedTable>(old.with_values_);
  old.pages_.ForEach([&](EntryRef, const uint8_t* entry, size_t bytes) {
    packed->AppendUnindexed(entry, bytes, HashOfEntry(entry));
  });
  packed->BuildIndex();
  const size_t after = packed->MemoryUsage();
  if (after >= before) return 0;
  *table = std::move(packed);
  return before - after;
}

void PagedTable::FillStats(PackedStats* s) const {
  s->layout = "paged-table";
  s->size = size();
  s->bytes = MemoryUsage();
  s->payload_bytes = pages_.live_bytes();
  s->dead_bytes = pages_.dead_bytes();
  s->capacity_bytes = pages_.page_bytes();
  s->fill = s->capacity_bytes == 0 ? 0 : double(s->payload_bytes) / double(s->capacity_bytes);
  s->pages = pages_.page_count();
  s->page_bytes = pages_.MemoryUsage();
  s->index_segments = index_.segment_count();
  s->index_slots = index_.slot_capacity();
  s->index_bytes = index_.MemoryUsage();
}

std::string PagedTable::Validate() const {
  if (!pending_.empty()) return "bulk build not finished";
  std::string error = pages_.Validate();
  if (!error.empty()) return "pages: " + error;
  error = index_.Validate();
  if (!error.empty()) return "index: " + error;
  size_t entries = 0;
  pages_.ForEach([&](EntryRef ref, const uint8_t* entry, size_t) {
    ++entries;
    CellView key;
    DecodeCell(entry, &key);
    const std::optional<EntryRef> found = Find(PackedKey::From(key.AsInput()));
    if (!found) {
      error = "entry without a slot";
    } else if (*found != ref) {
      error = "two entries with one key";
    }
  });
  if (!error.empty()) return error;
  if (entries != index_.size()) return "entries != slots";
  return "";
}

}  // namespace goblin
