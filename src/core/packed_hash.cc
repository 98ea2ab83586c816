#include "core/packed_hash.h"

#include <algorithm>
#include <unordered_set>

#include "core/alloc_size.h"
#include <utility>

namespace goblin {
namespace {

// Dump's first byte: the form, and whether the hash has its expiry block (then values may
// carry deadlines).
constexpr uint8_t kDumpListpack = 1;
constexpr uint8_t kDumpHashtable = 2;
constexpr uint8_t kDumpListpackWithExpiry = 3;
constexpr uint8_t kDumpHashtableWithExpiry = 4;

// The bytes of one [field][value] entry at p in [p, end), or 0 when malformed; *deadline is
// the value's (0: none), which only with_deadlines allows.
size_t CheckedEntrySize(const uint8_t* p, const uint8_t* end, bool with_deadlines,
                        int64_t* deadline) {
  CellView field, value;
  const uint8_t* q = DecodeCellChecked(p, end, &field);
  if (q == nullptr) return 0;
  q = DecodeCellChecked(q, end, &value, with_deadlines);
  *deadline = value.deadline_ms;
  return q == nullptr ? 0 : static_cast<size_t>(q - p);
}

}  // namespace

PackedHash::PackedHash() = default;
PackedHash::~PackedHash() = default;
PackedHash::PackedHash(PackedHash&&) noexcept = default;
PackedHash& PackedHash::operator=(PackedHash&&) noexcept = default;

PackedHash PackedHash::Clone() const {
  PackedHash copy;
  if (expiry_) {
    copy.expiry_ = std::make_unique<FieldExpiry>(*expiry_);
    copy.expiry_->cursor = 0;  // a round starts afresh over the copy's own layout
  }
  if (!large_) {
    copy.small_ = small_.Clone();
    return copy;
  }
  copy.large_ = std::make_unique<PagedTable>(true);
  large_->ForEach([&](const uint8_t* entry) {
    copy.large_->AppendUnindexed(entry, large_->EntrySize(entry), PagedTable::HashOfEntry(entry));
  });
  copy.large_->BuildIndex();
  return copy;
}

void PackedHash::ConvertToLarge() {
  if (large_) return;
  auto table = std::make_unique<PagedTable>(true);
  small_.ForEach([&](const uint8_t* entry) {
    table->AppendUnindexed(entry, PackedRun<2>::EntrySize(entry), PagedTable::HashOfEntry(entry));
  });
  table->BuildIndex();
  small_ = PackedRun<2>();
  large_ = std::move(table);
}

void PackedHash::PrepareForInsert(size_t new_fields, size_t longest_argument,
                                  const HashLimits& limits) {
  if (large_) return;
  if (new_fields > limits.max_listpack_entries || longest_argument > limits.max_listpack_value) {
    ConvertToLarge();
  }
}

bool PackedHash::Set(std::string_view field, std::string_view value, const HashLimits& limits,
                     bool keep_deadline) {
  const CellInput f = CellInput::Of(field);
  CellInput v = CellInput::Of(value);
  // A replaced value's deadline: kept or cleared (the count follows), read before the write.
  auto carry_deadline = [&](const uint8_t* entry) {
    if (!expiry_) return;
    const int64_t old_deadline = CellDeadline(SkipCell(entry));
    if (keep_deadline) v.deadline_ms = old_deadline;
    CountDeadline(old_deadline, v.deadline_ms);
  };
  if (!large_) {
    if (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value) {
      ConvertToLarge();
    } else {
      const uint32_t offset = small_.Find(f);
      if (offset != PackedRun<2>::kNotFound) {
        carry_deadline(small_.EntryAt(offset));
        small_.ReplaceValue(offset, v);
        return false;
      }
      small_.Append(f, &v);
      if (small_.size() > limits.max_listpack_entries) ConvertToLarge();
      return true;
    }
  }
  const PackedKey key = PackedKey::From(f);
  const std::optional<EntryRef> ref = large_->Find(key);
  if (ref) {
    carry_deadline(large_->EntryAt(*ref));
    large_->SetValue(key, *ref, v);
    return false;
  }
  large_->Insert(key, &v);
  return true;
}

void PackedHash::EnableFieldExpiry() {
  if (!expiry_) expiry_ = std::make_unique<FieldExpiry>();
}

void PackedHash::CountDeadline(int64_t old_deadline, int64_t new_deadline) {
  if (old_deadline != 0) --expiry_->count;
  if (new_deadline == 0) return;
  expiry_->earliest = expiry_->count == 0 ? new_deadline : std::min(expiry_->earliest, new_deadline);
  expiry_->round_earliest = std::min(expiry_->round_earliest, new_deadline);
  ++expiry_->count;
}

std::optional<int64_t> PackedHash::Deadline(std::string_view field) const {
  const uint8_t* entry = FindEntry(CellInput::Of(field));
  if (entry == nullptr) return std::nullopt;
  return CellDeadline(SkipCell(entry));
}

bool PackedHash::SetDeadline(std::string_view field, int64_t deadline_ms) {
  const CellInput f = CellInput::Of(field);
  const uint8_t* entry = FindEntry(f);
  if (entry == nullptr) return false;
  CellView value;
  DecodeCell(SkipCell(entry), &value);
  if (value.deadline_ms == deadline_ms) return true;
  EnableFieldExpiry();
  CountDeadline(value.deadline_ms, deadline_ms);
  // The value's bytes are copied out: rewriting the entry moves or frees them.
  const std::string text(value.bytes);
  CellInput v = value.AsInput();
  v.text = text;
  v.deadline_ms = deadline_ms;
  if (large_) {
    const PackedKey key = PackedKey::From(f);
    large_->SetValue(key, *large_->Find(key), v);
  } else {
    small_.ReplaceValue(static_cast<uint32_t>(entry - small_.data()), v);
  }
  return true;
}

void PackedHash::DeleteEntry(const uint8_t* entry) {
  if (expiry_) CountDeadline(CellDeadline(SkipCell(entry)), 0);
  if (large_) {
    CellView field;
    DecodeCell(entry, &field);
    large_->Erase(PackedKey::From(field.AsInput()));
    return;
  }
  small_.EraseAt(static_cast<uint32_t>(entry - small_.data()));
}

const uint8_t* PackedHash::FindEntry(const CellInput& field) const {
  if (large_) {
    const std::optional<EntryRef> ref = large_->Find(PackedKey::From(field));
    return ref ? large_->EntryAt(*ref) : nullptr;
  }
  const uint32_t offset = small_.Find(field);
  return offset == PackedRun<2>::kNotFound ? nullptr : small_.EntryAt(offset);
}

std::optional<std::string_view> PackedHash::Get(std::string_view field, char* scratch) const {
  const uint8_t* entry = FindEntry(CellInput::Of(field));
  if (entry == nullptr) return std::nullopt;
  CellView value;
  DecodeCell(SkipCell(entry), &value);
  return value.Text(scratch);
}

bool PackedHash::Contains(std::string_view field) const {
  return FindEntry(CellInput::Of(field)) != nullptr;
}

std::optional<size_t> PackedHash::ValueLength(std::string_view field) const {
  const uint8_t* entry = FindEntry(CellInput::Of(field));
  if (entry == nullptr) return std::nullopt;
  CellView value;
  DecodeCell(SkipCell(entry), &value);
  return value.TextLength();
}

bool PackedHash::Delete(std::string_view field) {
  const CellInput f = CellInput::Of(field);
  if (expiry_) {
    const uint8_t* entry = FindEntry(f);
    if (entry == nullptr) return false;
    DeleteEntry(entry);
    return true;
  }
  if (large_) return large_->Erase(PackedKey::From(f));
  const uint32_t offset = small_.Find(f);
  if (offset == PackedRun<2>::kNotFound) return false;
  small_.EraseAt(offset);
  return true;
}

void PackedHash::RandomEntries(size_t count, bool distinct, uint64_t* random_state,
                               std::vector<const uint8_t*>* out) const {
  out->clear();
  const size_t n = size();
  if (n == 0 || count == 0) return;
  if (large_) {
    if (!distinct) {
      out->reserve(count);
      for (size_t i = 0; i < count; ++i)
        out->push_back(large_->EntryAt(large_->RandomRef(random_state)));
      return;
    }
    std::vector<EntryRef> refs;
    large_->SampleDistinct(count, random_state, &refs);
    out->reserve(refs.size());
    for (EntryRef ref : refs) out->push_back(large_->EntryAt(ref));
    return;
  }
  const std::vector<uint32_t> offsets = small_.Offsets();
  if (!distinct) {
    out->reserve(count);
    for (size_t i = 0; i < count; ++i) {
      out->push_back(small_.EntryAt(offsets[RandomBelow(random_state, n)]));
    }
    return;
  }
  std::vector<uint32_t> picks;
  SampleDistinctIndices(n, count, random_state, &picks);
  for (uint32_t i : picks) out->push_back(small_.EntryAt(offsets[i]));
}

uint64_t PackedHash::ScanEntries(uint64_t cursor, size_t count,
                                 std::vector<const uint8_t*>* out) const {
  out->clear();
  if (!large_) {
    small_.ForEach([&](const uint8_t* entry) { out->push_back(entry); });
    return 0;
  }
  std::vector<EntryRef> refs;
  const uint64_t next = large_->Scan(cursor, count, &refs);
  for (EntryRef ref : refs) out->push_back(large_->EntryAt(ref));
  return next;
}

size_t PackedHash::MemoryUsage() const {
  return sizeof(*this) + (large_ ? large_->MemoryUsage() : small_.MemoryUsage()) +
         (expiry_ ? AllocatedSize(expiry_.get()) : 0);
}

size_t PackedHash::Optimize() {
  if (expiry_) expiry_->cursor = 0;  // the rebuilt table is walked from its start
  if (!large_) return small_.Shrink();
  return PagedTable::Optimize(&large_);
}

PackedStats PackedHash::Stats() const {
  PackedStats s;
  if (large_) {
    large_->FillStats(&s);
  } else {
    s.layout = "packed-run";
    s.size = small_.size();
    s.payload_bytes = small_.used_bytes();
    s.capacity_bytes = small_.capacity_bytes();
    s.fill = s.capacity_bytes == 0 ? 0 : double(s.payload_bytes) / double(s.capacity_bytes);
  }
  s.encoding = EncodingName();
  s.bytes = MemoryUsage();
  return s;
}

std::string PackedHash::Validate() const {
  size_t deadlines = 0;
  int64_t earliest = 0;
  ForEachWithDeadline([&](std::string_view, std::string_view, int64_t deadline) {
    if (deadline == 0) return;
    ++deadlines;
    earliest = earliest == 0 ? deadline : std::min(earliest, deadline);
  });
  if (deadlines != fields_with_deadline()) return "deadline count is off";
  if (deadlines > 0 && expiry_->earliest > earliest) return "earliest deadline bound is late";
  if (large_) {
    if (small_.size() != 0) return "both forms hold fields";
    return large_->Validate();
  }
  std::unordered_set<std::string_view> fields;
  std::string error;
  small_.ForEach([&](const uint8_t* entry) {
    CellView field, value;
    const uint8_t* end = small_.end();
    int64_t deadline;
    if (CheckedEntrySize(entry, end, expiry_ != nullptr, &deadline) == 0) {
      error = "malformed entry";
      return;
    }
    DecodeCell(DecodeCell(entry, &field), &value);
    const size_t field_bytes = static_cast<size_t>(SkipCell(entry) - entry);
    if (!fields.emplace(reinterpret_cast<const char*>(entry), field_bytes).second) {
      error = "field stored twice";
    }
  });
  return error;
}

void PackedHash::BeginBulkLoad() {
  *this = PackedHash();
  large_ = std::make_unique<PagedTable>(true);
}

void PackedHash::BulkAppend(const CellInput& field, const CellInput& value) {
  if (value.deadline_ms != 0) {
    EnableFieldExpiry();
    CountDeadline(0, value.deadline_ms);
  }
  uint8_t small[128];
  const size_t field_bytes = field.EncodedSize();
  const size_t n = field_bytes + value.EncodedSize();
  if (n <= sizeof(small)) {
    EncodeCell(EncodeCell(small, field), value);
    large_->AppendUnindexed(small, n, PagedTable::HashOfEntry(small));
    return;
  }
  std::string entry(n, '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(entry.data());
  EncodeCell(EncodeCell(bytes, field), value);
  large_->AppendUnindexed(bytes, n, PagedTable::HashOfEntry(bytes));
}

bool PackedHash::EndBulkLoad() {
  if (!large_->PendingKeysDistinct()) return false;
  large_->BuildIndex();
  return true;
}

void PackedHash::Dump(std::string* out) const {
  const uint8_t form = expiry_ ? (large_ ? kDumpHashtableWithExpiry : kDumpListpackWithExpiry)
                               : (large_ ? kDumpHashtable : kDumpListpack);
  out->push_back(static_cast<char>(form));
  uint8_t varint[kMaxVarintBytes];
  out->append(reinterpret_cast<const char*>(varint),
              static_cast<size_t>(PutVarint(varint, size()) - varint));
  if (!large_) {
    out->append(reinterpret_cast<const char*>(small_.data()), small_.used_bytes());
    return;
  }
  large_->ForEach([&](const uint8_t* entry) {
    out->append(reinterpret_cast<const char*>(entry), large_->EntrySize(entry));
  });
}

bool PackedHash::Restore(std::string_view data, PackedHash* out) {
  *out = PackedHash();
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* end = p + data.size();
  if (p == end) return false;
  const uint8_t form = *p++;
  if (form < kDumpListpack || form > kDumpHashtableWithExpiry) return false;
  const bool with_expiry = form == kDumpListpackWithExpiry || form == kDumpHashtableWithExpiry;
  uint64_t count = 0;
  p = GetVarintChecked(p, end, &count);
  if (p == nullptr) return false;
  if (count > static_cast<uint64_t>(end - p) / 2) return false;  // an entry takes >= 2 bytes
  PackedHash result;
  if (with_expiry) result.EnableFieldExpiry();
  int64_t deadline = 0;
  if (form == kDumpListpack || form == kDumpListpackWithExpiry) {
    std::unordered_set<std::string_view> fields;
    for (uint64_t i = 0; i < count; ++i) {
      const size_t n = CheckedEntrySize(p, end, with_expiry, &deadline);
      if (n == 0) return false;
      if (deadline != 0) result.CountDeadline(0, deadline);
      const size_t field_bytes = static_cast<size_t>(SkipCell(p) - p);
      if (!fields.emplace(reinterpret_cast<const char*>(p), field_bytes).second) return false;
      result.small_.AppendEncoded(p, n);
      p += n;
    }
  } else {
    result.large_ = std::make_unique<PagedTable>(true);
    for (uint64_t i = 0; i < count; ++i) {
      const size_t n = CheckedEntrySize(p, end, with_expiry, &deadline);
      if (n == 0) return false;
      if (deadline != 0) result.CountDeadline(0, deadline);
      result.large_->AppendUnindexed(p, n, PagedTable::HashOfEntry(p));
      p += n;
    }
    if (!result.large_->PendingKeysDistinct()) return false;
    result.large_->BuildIndex();
  }
  if (p != end) return false;
  *out = std::move(result);
  return true;
}

}  // namespace goblin
