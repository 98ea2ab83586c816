#include "core/packed_set.h"

#include <algorithm>
#include <unordered_set>
#include <utility>

namespace goblin {
namespace {

constexpr uint8_t kDumpIntset = 3;
constexpr uint8_t kDumpListpack = 4;
constexpr uint8_t kDumpHashtable = 5;

}  // namespace

PackedSet::PackedSet() = default;
PackedSet::~PackedSet() = default;
// A moved-from set is an empty intset, so it stays usable.
PackedSet::PackedSet(PackedSet&& other) noexcept
    : encoding_(std::exchange(other.encoding_, Encoding::kIntset)),
      ints_(std::move(other.ints_)),
      small_(std::move(other.small_)),
      large_(std::move(other.large_)) {}

PackedSet& PackedSet::operator=(PackedSet&& other) noexcept {
  if (this != &other) {
    encoding_ = std::exchange(other.encoding_, Encoding::kIntset);
    ints_ = std::move(other.ints_);
    small_ = std::move(other.small_);
    large_ = std::move(other.large_);
  }
  return *this;
}

PackedSet::PackedSet(std::string_view first_member, size_t size_hint, const SetLimits& limits) {
  int64_t ignored;
  if (ParseInt64(first_member, &ignored) && size_hint <= limits.max_intset_entries) {
    encoding_ = Encoding::kIntset;
  } else if (size_hint <= limits.max_listpack_entries) {
    encoding_ = Encoding::kListpack;
  } else {
    encoding_ = Encoding::kHashtable;
    large_ = std::make_unique<PagedTable>(false);
  }
}

PackedSet PackedSet::Clone() const {
  PackedSet copy;
  copy.encoding_ = encoding_;
  switch (encoding_) {
    case Encoding::kIntset:
      copy.ints_ = ints_.Clone();
      break;
    case Encoding::kListpack:
      copy.small_ = small_.Clone();
      break;
    case Encoding::kHashtable:
      copy.large_ = std::make_unique<PagedTable>(false);
      large_->ForEach([&](const uint8_t* entry) {
        copy.large_->AppendUnindexed(entry, large_->EntrySize(entry),
                                     PagedTable::HashOfEntry(entry));
      });
      copy.large_->BuildIndex();
      break;
  }
  return copy;
}

size_t PackedSet::size() const {
  switch (encoding_) {
    case Encoding::kIntset:
      return ints_.size();
    case Encoding::kListpack:
      return small_.size();
    case Encoding::kHashtable:
      return large_->size();
  }
  return 0;
}

const char* PackedSet::EncodingName() const {
  switch (encoding_) {
    case Encoding::kIntset:
      return "intset";
    case Encoding::kListpack:
      return "listpack";
    case Encoding::kHashtable:
      return "hashtable";
  }
  return "";
}

void PackedSet::IntsetToListpack() {
  PackedRun<1> run;
  for (size_t i = 0; i < ints_.size(); ++i) run.Append(CellInput::Integer(ints_.At(i)), nullptr);
  ints_ = IntSet();
  small_ = std::move(run);
  encoding_ = Encoding::kListpack;
}

void PackedSet::ConvertToLarge() {
  if (encoding_ == Encoding::kHashtable) return;
  auto table = std::make_unique<PagedTable>(false);
  if (encoding_ == Encoding::kIntset) {
    for (size_t i = 0; i < ints_.size(); ++i) {
      const CellInput member = CellInput::Integer(ints_.At(i));
      uint8_t cell[16];
      const size_t n = static_cast<size_t>(EncodeCell(cell, member) - cell);
      table->AppendUnindexed(cell, n, PackedKey::HashOf(member));
    }
    ints_ = IntSet();
  } else {
    small_.ForEach([&](const uint8_t* entry) {
      table->AppendUnindexed(entry, PackedRun<1>::EntrySize(entry), PagedTable::HashOfEntry(entry));
    });
    small_ = PackedRun<1>();
  }
  table->BuildIndex();
  large_ = std::move(table);
  encoding_ = Encoding::kHashtable;
}

void PackedSet::PrepareForInsert(size_t new_members, const SetLimits& limits) {
  if ((encoding_ == Encoding::kListpack && new_members > limits.max_listpack_entries) ||
      (encoding_ == Encoding::kIntset && new_members > limits.max_intset_entries)) {
    ConvertToLarge();
  }
}

bool PackedSet::Add(std::string_view member, const SetLimits& limits) {
  const CellInput m = CellInput::Of(member);
  if (encoding_ == Encoding::kIntset) {
    if (m.is_integer) {
      if (!ints_.Insert(m.integer)) return false;
      if (ints_.size() > limits.max_intset_entries) ConvertToLarge();
      return true;
    }
    // setTypeAddAux: a listpack if the intset's members, written out, would all fit one.
    const size_t n = ints_.size();
    size_t longest = 0;
    if (n != 0) {
      longest = std::max(IntegerTextLength(ints_.At(0)), IntegerTextLength(ints_.At(n - 1)));
    }
    if (n < limits.max_listpack_entries && member.size() <= limits.max_listpack_value &&
        longest <= limits.max_listpack_value) {
      IntsetToListpack();
      small_.Append(m, nullptr);
    } else {
      ConvertToLarge();
      large_->Insert(KeyOf(m), nullptr);
    }
    return true;
  }
  if (encoding_ == Encoding::kListpack) {
    if (small_.Find(m) != PackedRun<1>::kNotFound) return false;
    if (small_.size() < limits.max_listpack_entries && member.size() <= limits.max_listpack_value) {
      small_.Append(m, nullptr);
      return true;
    }
    ConvertToLarge();
    large_->Insert(KeyOf(m), nullptr);
    return true;
  }
  const PackedKey key = KeyOf(m);
  if (large_->Find(key)) return false;
  large_->Insert(key, nullptr);
  return true;
}

bool PackedSet::Remove(std::string_view member) {
  const CellInput m = CellInput::Of(member);
  switch (encoding_) {
    case Encoding::kIntset:
      return m.is_integer && ints_.Erase(m.integer);
    case Encoding::kListpack: {
      const uint32_t offset = small_.Find(m);
      if (offset == PackedRun<1>::kNotFound) return false;
      small_.EraseAt(offset);
      return true;
    }
    case Encoding::kHashtable:
      return large_->Erase(KeyOf(m));
  }
  return false;
}

bool PackedSet::Contains(std::string_view member) const {
  const CellInput m = CellInput::Of(member);
  switch (encoding_) {
    case Encoding::kIntset:
      return m.is_integer && ints_.Contains(m.integer);
    case Encoding::kListpack:
      return small_.Find(m) != PackedRun<1>::kNotFound;
    case Encoding::kHashtable:
      return large_->Find(KeyOf(m)).has_value();
  }
  return false;
}

void PackedSet::RandomPicks(size_t count, bool distinct, uint64_t* random_state,
                            std::vector<Pick>* out) const {
  out->clear();
  const size_t n = size();
  if (n == 0 || count == 0) return;
  if (encoding_ == Encoding::kHashtable) {
    if (!distinct) {
      out->reserve(count);
      for (size_t i = 0; i < count; ++i) {
        out->push_back(Pick{large_->EntryAt(large_->RandomRef(random_state)), 0});
      }
      return;
    }
    std::vector<EntryRef> refs;
    large_->SampleDistinct(count, random_state, &refs);
    for (EntryRef ref : refs) out->push_back(Pick{large_->EntryAt(ref), 0});
    return;
  }
  std::vector<uint32_t> offsets;
  if (encoding_ == Encoding::kListpack) offsets = small_.Offsets();
  auto pick_at = [&](size_t i) {
    return encoding_ == Encoding::kIntset ? Pick{nullptr, ints_.At(i)}
                                          : Pick{small_.EntryAt(offsets[i]), 0};
  };
  if (!distinct) {
    out->reserve(count);
    for (size_t i = 0; i < count; ++i) out->push_back(pick_at(RandomBelow(random_state, n)));
    return;
  }
  std::vector<uint32_t> picks;
  SampleDistinctIndices(n, count, random_state, &picks);
  for (uint32_t i : picks) out->push_back(pick_at(i));
}

bool PackedSet::PopRandom(uint64_t* random_state, std::string* out) {
  const size_t n = size();
  if (n == 0) return false;
  char scratch[kInt64TextMax];
  switch (encoding_) {
    case Encoding::kIntset: {
      const int64_t v = ints_.At(RandomBelow(random_state, n));
      out->assign(scratch, FormatInt64(v, scratch));
      ints_.Erase(v);
      return true;
    }
    case Encoding::kListpack: {
      const std::vector<uint32_t> offsets = small_.Offsets();
      const uint32_t offset = offsets[RandomBelow(random_state, n)];
      CellView member;
      DecodeCell(small_.EntryAt(offset), &member);
      const std::string_view text = member.Text(scratch);
      out->assign(text.data(), text.size());
      small_.EraseAt(offset);
      return true;
    }
    case Encoding::kHashtable: {
      const EntryRef ref = large_->RandomRef(random_state);
      CellView member;
      DecodeCell(large_->EntryAt(ref), &member);
      const std::string_view text = member.Text(scratch);
      out->assign(text.data(), text.size());
      large_->EraseAt(ref);
      return true;
    }
  }
  return false;
}

uint64_t PackedSet::ScanPicks(uint64_t cursor, size_t count, std::vector<Pick>* out) const {
  out->clear();
  switch (encoding_) {
    case Encoding::kIntset:
      for (size_t i = 0; i < ints_.size(); ++i) out->push_back(Pick{nullptr, ints_.At(i)});
      return 0;
    case Encoding::kListpack:
      small_.ForEach([&](const uint8_t* entry) { out->push_back(Pick{entry, 0}); });
      return 0;
    case Encoding::kHashtable: {
      std::vector<EntryRef> refs;
      const uint64_t next = large_->Scan(cursor, count, &refs);
      for (EntryRef ref : refs) out->push_back(Pick{large_->EntryAt(ref), 0});
      return next;
    }
  }
  return 0;
}

size_t PackedSet::MemoryUsage() const {
  size_t bytes = sizeof(*this);
  switch (encoding_) {
    case Encoding::kIntset:
      return bytes + ints_.MemoryUsage();
    case Encoding::kListpack:
      return bytes + small_.MemoryUsage();
    case Encoding::kHashtable:
      return bytes + large_->MemoryUsage();
  }
  return bytes;
}

size_t PackedSet::Optimize() {
  switch (encoding_) {
    case Encoding::kIntset:
      return ints_.Shrink();
    case Encoding::kListpack:
      return small_.Shrink();
    case Encoding::kHashtable:
      return PagedTable::Optimize(&large_);
  }
  return 0;
}

PackedStats PackedSet::Stats() const {
  PackedStats s;
  switch (encoding_) {
    case Encoding::kIntset:
      s.layout = "intset";
      s.payload_bytes = ints_.size() * ints_.width();
      s.capacity_bytes = ints_.MemoryUsage() == 0 ? 0 : ints_.MemoryUsage() - 8;
      break;
    case Encoding::kListpack:
      s.layout = "packed-run";
      s.payload_bytes = small_.used_bytes();
      s.capacity_bytes = small_.capacity_bytes();
      break;
    case Encoding::kHashtable:
      large_->FillStats(&s);
      break;
  }
  s.size = size();
  s.fill = s.capacity_bytes == 0 ? 0 : double(s.payload_bytes) / double(s.capacity_bytes);
  s.encoding = EncodingName();
  s.bytes = MemoryUsage();
  return s;
}

std::string PackedSet::Validate() const {
  const bool intset = encoding_ == Encoding::kIntset;
  const bool listpack = encoding_ == Encoding::kListpack;
  const bool hashtable = encoding_ == Encoding::kHashtable;
  if (!intset && ints_.size() != 0) return "intset holds members in another form";
  if (!listpack && small_.size() != 0) return "listpack holds members in another form";
  if (hashtable != (large_ != nullptr)) return "hashtable presence disagrees with the form";
  if (intset) return std::string(ints_.Validate());
  if (hashtable) return large_->Validate();
  std::unordered_set<std::string_view> members;
  std::string error;
  const uint8_t* end = small_.end();
  small_.ForEach([&](const uint8_t* entry) {
    CellView member;
    const uint8_t* next = DecodeCellChecked(entry, end, &member);
    if (next == nullptr) {
      error = "malformed member";
      return;
    }
    if (!members.emplace(reinterpret_cast<const char*>(entry), next - entry).second) {
      error = "member stored twice";
    }
  });
  return error;
}

void PackedSet::BeginBulkLoad() {
  *this = PackedSet();
  encoding_ = Encoding::kHashtable;
  large_ = std::make_unique<PagedTable>(false);
}

void PackedSet::BulkAppend(const CellInput& member) {
  uint8_t small[64];
  const size_t n = member.EncodedSize();
  if (n <= sizeof(small)) {
    EncodeCell(small, member);
    large_->AppendUnindexed(small, n, PagedTable::HashOfEntry(small));
    return;
  }
  std::string cell(n, '\0');
  auto* bytes = reinterpret_cast<uint8_t*>(cell.data());
  EncodeCell(bytes, member);
  large_->AppendUnindexed(bytes, n, PagedTable::HashOfEntry(bytes));
}

bool PackedSet::EndBulkLoad() {
  if (!large_->PendingKeysDistinct()) return false;
  large_->BuildIndex();
  return true;
}

void PackedSet::Dump(std::string* out) const {
  const uint8_t form = encoding_ == Encoding::kIntset     ? kDumpIntset
                       : encoding_ == Encoding::kListpack ? kDumpListpack
                                                          : kDumpHashtable;
  out->push_back(static_cast<char>(form));
  uint8_t buf[kMaxVarintBytes + 16];
  out->append(reinterpret_cast<const char*>(buf),
              static_cast<size_t>(PutVarint(buf, size()) - buf));
  switch (encoding_) {
    case Encoding::kIntset:
      for (size_t i = 0; i < ints_.size(); ++i) {
        const uint8_t* end = EncodeCell(buf, CellInput::Integer(ints_.At(i)));
        out->append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
      }
      break;
    case Encoding::kListpack:
      out->append(reinterpret_cast<const char*>(small_.data()), small_.used_bytes());
      break;
    case Encoding::kHashtable:
      large_->ForEach([&](const uint8_t* entry) {
        out->append(reinterpret_cast<const char*>(entry), large_->EntrySize(entry));
      });
      break;
  }
}

bool PackedSet::Restore(std::string_view data, PackedSet* out) {
  *out = PackedSet();
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* end = p + data.size();
  if (p == end) return false;
  const uint8_t form = *p++;
  if (form != kDumpIntset && form != kDumpListpack && form != kDumpHashtable) return false;
  uint64_t count = 0;
  p = GetVarintChecked(p, end, &count);
  if (p == nullptr) return false;
  if (count > static_cast<uint64_t>(end - p)) return false;  // a member takes >= 1 byte
  PackedSet result;
  std::unordered_set<std::string_view> seen;
  if (form == kDumpHashtable) {
    result.encoding_ = Encoding::kHashtable;
    result.large_ = std::make_unique<PagedTable>(false);
  } else if (form == kDumpListpack) {
    result.encoding_ = Encoding::kListpack;
  }
  int64_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    CellView member;
    const uint8_t* next = DecodeCellChecked(p, end, &member);
    if (next == nullptr) return false;
    const size_t n = static_cast<size_t>(next - p);
    if (form == kDumpIntset) {
      // Strictly ascending integers, as the intset holds them.
      if (!member.is_integer || (i > 0 && member.integer <= previous)) return false;
      previous = member.integer;
      result.ints_.Insert(member.integer);
    } else if (form == kDumpListpack) {
      if (!seen.emplace(reinterpret_cast<const char*>(p), n).second) return false;
      result.small_.AppendEncoded(p, n);
    } else {
      result.large_->AppendUnindexed(p, n, PagedTable::HashOfEntry(p));
    }
    p = next;
  }
  if (p != end) return false;
  if (result.large_) {
    if (!result.large_->PendingKeysDistinct()) return false;
    result.large_->BuildIndex();
  }
  *out = std::move(result);
  return true;
}

}  // namespace goblin
