#include "core/key_entry.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/string_number.h"
#include "core/varint.h"

namespace goblin {

EntryValue EntryValue::String(std::string_view bytes) {
  int64_t integer;
  if (bytes.size() <= 20 && ParseInt64(bytes, &integer)) return Integer(integer);
  EntryValue value = RawString(bytes);
  if (bytes.size() <= kEmbstrMaxLength) value.encoding = StringEncoding::kEmbstr;
  return value;
}

EntryValue EntryValue::RawString(std::string_view bytes) {
  EntryValue value;
  value.encoding = StringEncoding::kRaw;
  value.bytes = bytes;
  return value;
}

EntryValue EntryValue::Integer(int64_t integer) {
  EntryValue value;
  value.encoding = StringEncoding::kInt;
  value.integer = integer;
  return value;
}

EntryValue EntryValue::Object(Collection* object) {
  EntryValue value;
  value.type = object->type();
  value.object = object;
  return value;
}

namespace {

size_t PayloadSize(const EntryValue& value) {
  if (value.type != ValueType::kString) return sizeof(Collection*);
  if (value.encoding == StringEncoding::kInt) return sizeof(int64_t);
  return VarintSize(value.bytes.size()) + value.bytes.size();
}

}  // namespace

KeyEntry* KeyEntry::Make(std::string_view key, const EntryValue& value,
                         std::optional<int64_t> expire_ms) {
  size_t size = 1 + (expire_ms ? 8 : 0) + VarintSize(key.size()) + key.size() + PayloadSize(value);
  auto* block = static_cast<uint8_t*>(std::malloc(size));
  if (block == nullptr) throw std::bad_alloc();
  uint8_t* p = block;
  uint8_t header = static_cast<uint8_t>(value.type);
  if (value.type == ValueType::kString) header |= static_cast<uint8_t>(value.encoding) << 3;
  if (expire_ms) header |= kHasExpireBit;
  *p++ = header;
  if (expire_ms) {
    std::memcpy(p, &*expire_ms, 8);
    p += 8;
  }
  p = PutVarint(p, key.size());
  // An empty string_view may carry a null data(), which memcpy must not see even for 0 bytes.
  if (!key.empty()) std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (value.type != ValueType::kString) {
    std::memcpy(p, &value.object, sizeof(Collection*));
  } else if (value.encoding == StringEncoding::kInt) {
    std::memcpy(p, &value.integer, sizeof(int64_t));
  } else {
    p = PutVarint(p, value.bytes.size());
    if (!value.bytes.empty()) std::memcpy(p, value.bytes.data(), value.bytes.size());
  }
  return reinterpret_cast<KeyEntry*>(block);
}

bool KeyEntry::TryOverwrite(KeyEntry* entry, const EntryValue& value,
                            std::optional<int64_t> expire_ms) {
  if (entry->type() != ValueType::kString || value.type != ValueType::kString) return false;
  if (entry->has_expire() != expire_ms.has_value()) return false;
  std::string_view key = entry->key();
  size_t size = 1 + (expire_ms ? 8 : 0) + VarintSize(key.size()) + key.size() + PayloadSize(value);
  size_t usable = malloc_usable_size(entry);
  if (size > usable || size * 2 < usable) return false;
  auto* block = reinterpret_cast<uint8_t*>(entry);
  uint8_t* payload = const_cast<uint8_t*>(entry->payload());
  block[0] = static_cast<uint8_t>(static_cast<uint8_t>(ValueType::kString) |
                                  (static_cast<uint8_t>(value.encoding) << 3) |
                                  (expire_ms ? kHasExpireBit : 0));
  if (expire_ms) std::memcpy(block + 1, &*expire_ms, 8);
  if (value.encoding == StringEncoding::kInt) {
    std::memcpy(payload, &value.integer, sizeof(int64_t));
  } else {
    payload = PutVarint(payload, value.bytes.size());
    if (!value.bytes.empty()) std::memcpy(payload, value.bytes.data(), value.bytes.size());
  }
  return true;
}

void KeyEntry::FreeBlock(KeyEntry* entry) { std::free(entry); }

char* KeyEntry::ResizeRawString(KeyEntry* entry, size_t length) {
  if (entry->type() != ValueType::kString || entry->string_encoding() != StringEncoding::kRaw) {
    return nullptr;
  }
  auto* value_start = const_cast<uint8_t*>(entry->payload());
  uint64_t old_length;
  const uint8_t* old_bytes = GetVarint(value_start, &old_length);
  const size_t old_field = static_cast<size_t>(old_bytes - value_start);
  const size_t new_field = VarintSize(length);
  const size_t prefix = static_cast<size_t>(value_start - reinterpret_cast<uint8_t*>(entry));
  if (prefix + new_field + length > malloc_usable_size(entry)) return nullptr;
  uint8_t* bytes = value_start + new_field;
  // A length field that changes width moves the value (a few times over a value's growth).
  if (new_field != old_field) std::memmove(bytes, old_bytes, std::min<size_t>(old_length, length));
  if (length > old_length) std::memset(bytes + old_length, 0, length - old_length);
  PutVarint(value_start, length);
  return reinterpret_cast<char*>(bytes);
}

KeyEntry* KeyEntry::GrowForString(KeyEntry* entry, size_t length, size_t room) {
  constexpr size_t kMegabyte = 1 << 20;
  const size_t prefix =
      static_cast<size_t>(entry->payload() - reinterpret_cast<const uint8_t*>(entry));
  if (room == 0) room = length < kMegabyte ? 2 * length : length + kMegabyte;
  auto* grown = static_cast<KeyEntry*>(std::realloc(entry, prefix + VarintSize(room) + room));
  if (grown == nullptr) throw std::bad_alloc();
  return grown;
}

void KeyEntry::Destroy(KeyEntry* entry) {
  if (entry == nullptr) return;
  if (entry->type() != ValueType::kString) delete entry->object();
  FreeBlock(entry);
}

namespace {

// The value an entry holds, as an EntryValue that still points into the entry.
EntryValue ValueOf(const KeyEntry* entry, char* scratch) {
  if (entry->type() != ValueType::kString) return EntryValue::Object(entry->object());
  if (entry->string_encoding() == StringEncoding::kInt) {
    return EntryValue::Integer(entry->int_value());
  }
  EntryValue value = EntryValue::RawString(entry->string_value(scratch));
  value.encoding = entry->string_encoding();
  return value;
}

std::optional<int64_t> ExpireOf(const KeyEntry* entry) {
  if (!entry->has_expire()) return std::nullopt;
  return entry->expire_ms();
}

}  // namespace

KeyEntry* KeyEntry::WithValue(KeyEntry* entry, const EntryValue& value, bool keep_expire) {
  KeyEntry* fresh = Make(entry->key(), value, keep_expire ? ExpireOf(entry) : std::nullopt);
  Destroy(entry);
  return fresh;
}

KeyEntry* KeyEntry::WithExpire(const KeyEntry* entry, std::optional<int64_t> expire_ms) {
  char scratch[kInt64TextMax];
  KeyEntry* fresh = Make(entry->key(), ValueOf(entry, scratch), expire_ms);
  *reinterpret_cast<uint8_t*>(fresh) |= entry->header() & kUnsharedIntBit;
  return fresh;
}

KeyEntry* KeyEntry::WithKey(const KeyEntry* entry, std::string_view key) {
  char scratch[kInt64TextMax];
  KeyEntry* fresh = Make(key, ValueOf(entry, scratch), ExpireOf(entry));
  *reinterpret_cast<uint8_t*>(fresh) |= entry->header() & kUnsharedIntBit;
  return fresh;
}

KeyEntry* KeyEntry::Clone(const KeyEntry* entry, std::string_view key, bool keep_expire) {
  char scratch[kInt64TextMax];
  EntryValue value = ValueOf(entry, scratch);
  if (value.type != ValueType::kString) value.object = entry->object()->Clone();
  KeyEntry* copy = Make(key, value, keep_expire ? ExpireOf(entry) : std::nullopt);
  if (value.type == ValueType::kString && value.encoding == StringEncoding::kInt) {
    *reinterpret_cast<uint8_t*>(copy) |= kUnsharedIntBit;
  }
  return copy;
}

std::string_view KeyEntry::key() const {
  uint64_t len;
  const uint8_t* p = GetVarint(key_start(), &len);
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(len)};
}

int64_t KeyEntry::expire_ms() const {
  int64_t ms;
  std::memcpy(&ms, bytes() + 1, 8);
  return ms;
}

const uint8_t* KeyEntry::payload() const {
  uint64_t len;
  const uint8_t* p = GetVarint(key_start(), &len);
  return p + len;
}

std::string_view KeyEntry::string_value(char* scratch) const {
  if (string_encoding() == StringEncoding::kInt) {
    return {scratch, FormatInt64(int_value(), scratch)};
  }
  uint64_t len;
  const uint8_t* p = GetVarint(payload(), &len);
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(len)};
}

int64_t KeyEntry::int_value() const {
  int64_t v;
  std::memcpy(&v, payload(), 8);
  return v;
}

Collection* KeyEntry::object() const {
  Collection* object;
  std::memcpy(&object, payload(), sizeof(object));
  return object;
}

size_t KeyEntry::MemoryUsage() const {
  size_t bytes = malloc_usable_size(const_cast<KeyEntry*>(this));
  if (type() != ValueType::kString) bytes += object()->MemoryUsage();
  return bytes;
}

std::string_view KeyEntry::EncodingName() const {
  if (type() != ValueType::kString) return object()->EncodingName();
  switch (string_encoding()) {
    case StringEncoding::kInt:
      return "int";
    case StringEncoding::kEmbstr:
      return "embstr";
    case StringEncoding::kRaw:
      return "raw";
  }
  return "raw";
}

}  // namespace goblin
