// KeyEntry: the packed key block. Encodings follow what redis-server 7.0 reports in OBJECT
// ENCODING after SET (int / embstr / raw).
#include "core/key_entry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "core/string_number.h"

namespace goblin {
namespace {

using namespace std::string_literals;

// A collection that counts its live instances, so ownership moves can be checked.
class CountedCollection : public Collection {
 public:
  explicit CountedCollection(std::string payload, ValueType type = ValueType::kHash)
      : payload_(std::move(payload)), type_(type) {
    ++live;
  }
  ~CountedCollection() override { --live; }
  ValueType type() const override { return type_; }
  size_t MemoryUsage() const override { return 1000 + payload_.size(); }
  std::string_view EncodingName() const override { return "listpack"; }
  Collection* Clone() const override { return new CountedCollection(payload_, type_); }
  size_t Optimize() override { return 0; }
  void Digest(ValueDigest*) const override {}
  void Describe(StatFields*) const override {}
  void AppendSnapshotValue(std::string*, std::string*) const override {}
  const std::string& payload() const { return payload_; }

  static inline int live = 0;

 private:
  std::string payload_;
  ValueType type_;
};

// Frees an entry at scope exit.
struct EntryDeleter {
  void operator()(KeyEntry* entry) const { KeyEntry::Destroy(entry); }
};
using EntryPtr = std::unique_ptr<KeyEntry, EntryDeleter>;

EntryPtr MakeString(std::string_view key, std::string_view value,
                    std::optional<int64_t> expire = std::nullopt) {
  return EntryPtr(KeyEntry::Make(key, EntryValue::String(value), expire));
}

std::string ValueOf(const KeyEntry& entry) {
  char scratch[kInt64TextMax];
  return std::string(entry.string_value(scratch));
}

class KeyEntryTest : public testing::Test {
 protected:
  void SetUp() override { CountedCollection::live = 0; }
  void TearDown() override { EXPECT_EQ(CountedCollection::live, 0) << "a collection leaked"; }
};

// ---- string encodings ----

TEST_F(KeyEntryTest, CanonicalIntegersAreStoredAsInt) {
  for (std::string_view text :
       {"0", "1", "-1", "12345", "9223372036854775807", "-9223372036854775808", "1000000"}) {
    EntryPtr entry = MakeString("k", text);
    EXPECT_EQ(entry->type(), ValueType::kString);
    EXPECT_EQ(entry->string_encoding(), StringEncoding::kInt) << text;
    EXPECT_EQ(entry->EncodingName(), "int") << text;
    int64_t expected;
    ASSERT_TRUE(ParseInt64(text, &expected));
    EXPECT_EQ(entry->int_value(), expected);
    EXPECT_EQ(ValueOf(*entry), text);
  }
}

TEST_F(KeyEntryTest, NonCanonicalNumbersAreStrings) {
  // OBJECT ENCODING after SET says embstr for all of these.
  for (std::string_view text : {"010", "-0", " 1", "1 ", "1.0", "+1", "00", "",
                                "9223372036854775808", "-9223372036854775809", "1e3", "0x10"}) {
    EntryPtr entry = MakeString("k", text);
    EXPECT_EQ(entry->string_encoding(), StringEncoding::kEmbstr) << "'" << text << "'";
    EXPECT_EQ(entry->EncodingName(), "embstr") << "'" << text << "'";
    EXPECT_EQ(ValueOf(*entry), text);
  }
}

TEST_F(KeyEntryTest, EmbstrUpTo44BytesRawAbove) {
  const std::string at_limit(44, 'x');
  const std::string over_limit(45, 'x');
  EXPECT_EQ(MakeString("k", at_limit)->EncodingName(), "embstr");
  EXPECT_EQ(MakeString("k", over_limit)->EncodingName(), "raw");
  EXPECT_EQ(MakeString("k", over_limit)->string_encoding(), StringEncoding::kRaw);
  EXPECT_EQ(ValueOf(*MakeString("k", over_limit)), over_limit);
  // 44 digits are not an integer (too long for string2ll), 45 are raw.
  EXPECT_EQ(MakeString("k", std::string(44, '1'))->EncodingName(), "embstr");
  EXPECT_EQ(MakeString("k", std::string(45, '1'))->EncodingName(), "raw");
}

TEST_F(KeyEntryTest, ExplicitEncodings) {
  EntryPtr raw(KeyEntry::Make("k", EntryValue::RawString("abc")));
  EXPECT_EQ(raw->EncodingName(), "raw");  // APPEND / SETRANGE results
  EXPECT_EQ(ValueOf(*raw), "abc");
  EntryPtr integer(KeyEntry::Make("k", EntryValue::Integer(-42)));
  EXPECT_EQ(integer->EncodingName(), "int");
  EXPECT_EQ(integer->int_value(), -42);
  EXPECT_EQ(ValueOf(*integer), "-42");
}

TEST_F(KeyEntryTest, BinaryKeysAndValues) {
  const std::string key = "k\0e\xffy\r\n"s;
  const std::string value = "\0\0v\0"s;
  EntryPtr entry = MakeString(key, value);
  EXPECT_EQ(entry->key(), key);
  EXPECT_EQ(ValueOf(*entry), value);
  EXPECT_EQ(entry->EncodingName(), "embstr");
  KeyOfEntry key_of;
  EXPECT_EQ(key_of(entry.get()), key);
}

TEST_F(KeyEntryTest, EmptyKeyAndValue) {
  EntryPtr entry = MakeString(std::string_view(), std::string_view());
  EXPECT_EQ(entry->key(), "");
  EXPECT_EQ(ValueOf(*entry), "");
  EXPECT_EQ(entry->EncodingName(), "embstr");
  EXPECT_FALSE(entry->has_expire());
  EntryPtr with_expire = MakeString("", "", 5);
  EXPECT_EQ(with_expire->key(), "");
  EXPECT_EQ(with_expire->expire_ms(), 5);
}

TEST_F(KeyEntryTest, LongKeysAndValuesUseMultiByteLengths) {
  // Varint length boundaries: 1 byte up to 127, 2 up to 16383, 3 above.
  for (size_t n : {size_t{127}, size_t{128}, size_t{16383}, size_t{16384}, size_t{100000}}) {
    std::string key(n, 'k');
    key[0] = 'A';
    key[n - 1] = 'Z';
    std::string value(n + 3, 'v');
    value[n] = '\0';
    for (std::optional<int64_t> expire : {std::optional<int64_t>(), std::optional<int64_t>(77)}) {
      EntryPtr entry = MakeString(key, value, expire);
      EXPECT_EQ(entry->key(), key) << n;
      EXPECT_EQ(ValueOf(*entry), value) << n;
      EXPECT_EQ(entry->EncodingName(), "raw");
      EXPECT_EQ(entry->has_expire(), expire.has_value());
      if (expire) {
        EXPECT_EQ(entry->expire_ms(), 77);
      }
      EntryPtr number = MakeString(key, "123", expire);
      EXPECT_EQ(number->key(), key);
      EXPECT_EQ(number->int_value(), 123);
    }
  }
}

// ---- raw strings growing in place (APPEND, SETRANGE) ----

// Applies the resize the way the commands do: in place, or grown with headroom first.
KeyEntry* ResizeTo(KeyEntry* entry, size_t length, char** bytes) {
  *bytes = KeyEntry::ResizeRawString(entry, length);
  if (*bytes == nullptr) {
    entry = KeyEntry::GrowForString(entry, length);
    *bytes = KeyEntry::ResizeRawString(entry, length);
  }
  return entry;
}

TEST_F(KeyEntryTest, RawStringsResizeInPlaceAcrossLengthFieldWidths) {
  std::mt19937_64 rng(42);
  for (std::optional<int64_t> expire : {std::optional<int64_t>(), std::optional<int64_t>(777)}) {
    KeyEntry* entry = KeyEntry::Make("log", EntryValue::RawString("start"), expire);
    std::string model = "start";
    size_t moves = 0;
    // Lengths cross the 1-, 2- and 3-byte varint widths both ways.
    for (size_t length : {100, 127, 128, 129, 5000, 16383, 16384, 20000, 16384, 16383, 128, 127, 3,
                          0, 200000, 10}) {
      char* bytes;
      KeyEntry* before = entry;
      entry = ResizeTo(entry, length, &bytes);
      moves += entry != before;
      ASSERT_NE(bytes, nullptr);
      model.resize(length, '\0');
      for (size_t i = 0; i < length; i += 1 + rng() % 97) {
        model[i] = static_cast<char>(rng());
        bytes[i] = model[i];
      }
      ASSERT_EQ(ValueOf(*entry), model) << length;
      ASSERT_EQ(entry->key(), "log");
      ASSERT_EQ(entry->string_encoding(), StringEncoding::kRaw);
      ASSERT_EQ(entry->has_expire(), expire.has_value());
      if (expire) {
        ASSERT_EQ(entry->expire_ms(), *expire);
      }
    }
    // Headroom: growing to 200000 bytes reallocated a handful of times, not on every step.
    EXPECT_LE(moves, 6u);
    KeyEntry::Destroy(entry);
  }
}

TEST_F(KeyEntryTest, OnlyRawStringsResizeInPlace) {
  EntryPtr number = MakeString("n", "12345");
  EntryPtr embstr = MakeString("e", "short");
  ASSERT_EQ(number->string_encoding(), StringEncoding::kInt);
  ASSERT_EQ(embstr->string_encoding(), StringEncoding::kEmbstr);
  EXPECT_EQ(KeyEntry::ResizeRawString(number.get(), 3), nullptr);
  EXPECT_EQ(KeyEntry::ResizeRawString(embstr.get(), 3), nullptr);
  EXPECT_EQ(ValueOf(*number), "12345");
  EXPECT_EQ(ValueOf(*embstr), "short");
  EntryPtr hash(KeyEntry::Make("h", EntryValue::Object(new CountedCollection("x"))));
  EXPECT_EQ(KeyEntry::ResizeRawString(hash.get(), 3), nullptr);
}

TEST_F(KeyEntryTest, Expiry) {
  EntryPtr none = MakeString("k", "v");
  EXPECT_FALSE(none->has_expire());
  for (int64_t when :
       {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{1717171717171}, INT64_MAX, INT64_MIN}) {
    EntryPtr entry = MakeString("key", "value", when);
    ASSERT_TRUE(entry->has_expire());
    EXPECT_EQ(entry->expire_ms(), when);
    EXPECT_EQ(entry->key(), "key");
    EXPECT_EQ(ValueOf(*entry), "value");
    EXPECT_EQ(entry->type(), ValueType::kString);
    EXPECT_EQ(entry->EncodingName(), "embstr");
  }
  EntryPtr integer = MakeString("k", "99", 12345);
  EXPECT_EQ(integer->expire_ms(), 12345);
  EXPECT_EQ(integer->int_value(), 99);
}

// ---- replacing blocks ----

TEST_F(KeyEntryTest, WithExpireMakesANewBlockAndLeavesTheOld) {
  KeyEntry* old = KeyEntry::Make("key", EntryValue::String("value"));
  KeyEntry* added = KeyEntry::WithExpire(old, 1000);
  ASSERT_NE(added, old);
  EXPECT_TRUE(added->has_expire());
  EXPECT_EQ(added->expire_ms(), 1000);
  EXPECT_EQ(added->key(), "key");
  EXPECT_EQ(ValueOf(*added), "value");
  EXPECT_EQ(added->EncodingName(), "embstr");
  // The old block is still readable until the caller frees it.
  EXPECT_FALSE(old->has_expire());
  EXPECT_EQ(ValueOf(*old), "value");
  KeyEntry::FreeBlock(old);

  KeyEntry* changed = KeyEntry::WithExpire(added, 2000);
  EXPECT_EQ(changed->expire_ms(), 2000);
  KeyEntry::FreeBlock(added);
  KeyEntry* removed = KeyEntry::WithExpire(changed, std::nullopt);
  EXPECT_FALSE(removed->has_expire());
  EXPECT_EQ(removed->key(), "key");
  EXPECT_EQ(ValueOf(*removed), "value");
  KeyEntry::FreeBlock(changed);
  KeyEntry::Destroy(removed);
}

TEST_F(KeyEntryTest, WithExpireKeepsEncodings) {
  EntryPtr integer = MakeString("k", "123");
  EntryPtr integer2(KeyEntry::WithExpire(integer.get(), 5));
  EXPECT_EQ(integer2->EncodingName(), "int");
  EXPECT_EQ(integer2->int_value(), 123);
  EntryPtr raw(KeyEntry::Make("k", EntryValue::RawString("abc")));
  EntryPtr raw2(KeyEntry::WithExpire(raw.get(), 5));
  EXPECT_EQ(raw2->EncodingName(), "raw");
}

TEST_F(KeyEntryTest, WithExpireMovesTheCollection) {
  auto* object = new CountedCollection("members", ValueType::kZSet);
  KeyEntry* old = KeyEntry::Make("z", EntryValue::Object(object), 10);
  KeyEntry* fresh = KeyEntry::WithExpire(old, std::nullopt);
  EXPECT_EQ(fresh->object(), object);
  EXPECT_EQ(fresh->type(), ValueType::kZSet);
  EXPECT_FALSE(fresh->has_expire());
  KeyEntry::FreeBlock(old);  // never Destroy: the collection now belongs to `fresh`
  EXPECT_EQ(CountedCollection::live, 1);
  KeyEntry::Destroy(fresh);
  EXPECT_EQ(CountedCollection::live, 0);
}

TEST_F(KeyEntryTest, WithKeyRenamesAndKeepsExpiry) {
  KeyEntry* old = KeyEntry::Make("old", EntryValue::String("value"), 42);
  KeyEntry* renamed = KeyEntry::WithKey(old, std::string(300, 'n'));
  EXPECT_EQ(renamed->key(), std::string(300, 'n'));
  EXPECT_EQ(ValueOf(*renamed), "value");
  ASSERT_TRUE(renamed->has_expire());
  EXPECT_EQ(renamed->expire_ms(), 42);
  EXPECT_EQ(old->key(), "old");
  KeyEntry::FreeBlock(old);
  KeyEntry::Destroy(renamed);

  auto* object = new CountedCollection("x");
  old = KeyEntry::Make("h", EntryValue::Object(object));
  renamed = KeyEntry::WithKey(old, "h2");
  KeyEntry::FreeBlock(old);
  EXPECT_EQ(renamed->object(), object);
  EXPECT_EQ(renamed->key(), "h2");
  EXPECT_FALSE(renamed->has_expire());
  KeyEntry::Destroy(renamed);
}

TEST_F(KeyEntryTest, WithValueReplacesAndDestroysTheOld) {
  auto* object = new CountedCollection("old", ValueType::kSet);
  KeyEntry* entry = KeyEntry::Make("k", EntryValue::Object(object), 99);
  entry = KeyEntry::WithValue(entry, EntryValue::String("7"), /*keep_expire=*/true);
  EXPECT_EQ(CountedCollection::live, 0);  // the set went with the old block
  EXPECT_EQ(entry->type(), ValueType::kString);
  EXPECT_EQ(entry->int_value(), 7);
  EXPECT_EQ(entry->key(), "k");
  ASSERT_TRUE(entry->has_expire());
  EXPECT_EQ(entry->expire_ms(), 99);
  entry = KeyEntry::WithValue(entry, EntryValue::String("text"), /*keep_expire=*/false);
  EXPECT_FALSE(entry->has_expire());
  EXPECT_EQ(ValueOf(*entry), "text");
  KeyEntry::Destroy(entry);
}

TEST_F(KeyEntryTest, CloneIsADeepCopy) {
  EntryPtr source = MakeString("src", "payload", 500);
  EntryPtr copy(KeyEntry::Clone(source.get(), "dst", /*keep_expire=*/true));
  EXPECT_EQ(copy->key(), "dst");
  EXPECT_EQ(ValueOf(*copy), "payload");
  EXPECT_EQ(copy->expire_ms(), 500);
  EntryPtr no_expire(KeyEntry::Clone(source.get(), "dst", /*keep_expire=*/false));
  EXPECT_FALSE(no_expire->has_expire());
  EntryPtr integer = MakeString("i", "-5");
  EntryPtr integer_copy(KeyEntry::Clone(integer.get(), "j", false));
  EXPECT_EQ(integer_copy->int_value(), -5);
  EXPECT_EQ(integer_copy->EncodingName(), "int");

  auto* object = new CountedCollection("members", ValueType::kSet);
  EntryPtr list(KeyEntry::Make("l", EntryValue::Object(object)));
  EntryPtr list_copy(KeyEntry::Clone(list.get(), "l2", true));
  EXPECT_EQ(CountedCollection::live, 2);
  EXPECT_NE(list_copy->object(), list->object());
  EXPECT_EQ(static_cast<CountedCollection*>(list_copy->object())->payload(), "members");
  EXPECT_EQ(list_copy->type(), ValueType::kSet);
  list.reset();
  EXPECT_EQ(CountedCollection::live, 1);
}

// ---- collections, memory, names ----

TEST_F(KeyEntryTest, CollectionTypes) {
  for (ValueType type : {ValueType::kSet, ValueType::kZSet, ValueType::kHash}) {
    auto* object = new CountedCollection("x", type);
    EntryPtr entry(KeyEntry::Make("c", EntryValue::Object(object), 3));
    EXPECT_EQ(entry->type(), type);
    EXPECT_EQ(entry->object(), object);
    EXPECT_EQ(entry->EncodingName(), "listpack");
    EXPECT_EQ(entry->expire_ms(), 3);
    EXPECT_EQ(entry->key(), "c");
  }
}

TEST_F(KeyEntryTest, MemoryUsageCoversThePayload) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{44}, size_t{45}, size_t{1000}, size_t{70000}}) {
    const std::string key(n / 2 + 1, 'k');
    const std::string value(n, 'v');
    EntryPtr entry = MakeString(key, value, 1);
    EXPECT_GE(entry->MemoryUsage(), 1 + 8 + key.size() + value.size() + 2) << n;
  }
  EntryPtr integer = MakeString("key", "123456789");
  EXPECT_GE(integer->MemoryUsage(), 1 + 1 + 3 + 8u);
  auto* object = new CountedCollection(std::string(500, 'm'));
  EntryPtr set(KeyEntry::Make("s", EntryValue::Object(object)));
  EXPECT_GE(set->MemoryUsage(), object->MemoryUsage() + 1 + 1 + 1 + sizeof(Collection*));
}

TEST_F(KeyEntryTest, RandomizedAgainstAPlainModel) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string key(rng() % 300, '\0');
    for (char& c : key) c = static_cast<char>(rng());
    std::string value;
    bool integer = false;
    switch (rng() % 3) {
      case 0:  // canonical integer text of any magnitude
        value = std::to_string(static_cast<int64_t>(rng()) >> (rng() % 64));
        integer = true;
        break;
      case 1:
        value.assign(rng() % 60, static_cast<char>('a' + rng() % 26));
        break;
      default:  // binary, never starting like a number
        value.resize(rng() % 20000);
        for (char& c : value) c = static_cast<char>(rng());
        if (!value.empty()) value[0] = 'x';
    }
    std::optional<int64_t> expire;
    if (rng() % 2) expire = static_cast<int64_t>(rng());
    EntryPtr entry = MakeString(key, value, expire);
    ASSERT_EQ(entry->key(), key);
    ASSERT_EQ(ValueOf(*entry), value);
    ASSERT_EQ(entry->has_expire(), expire.has_value());
    if (expire) {
      ASSERT_EQ(entry->expire_ms(), *expire);
    }
    const char* expected = integer ? "int" : value.size() <= 44 ? "embstr" : "raw";
    ASSERT_EQ(entry->EncodingName(), expected) << value.size();
  }
}

}  // namespace
}  // namespace goblin
