// Tests of RdbReadValue (persist/rdb_reader.h): values written by Goblin's RDB writer and values
// built byte by byte in Redis's older encodings (ziplist, zipmap, intset, linked list, quicklist
// of ziplists, stream v1) decode to the contents a std:: model holds, in the form Redis 7.2
// gives them; hostile bytes (truncation, lying lengths, duplicates, bad containers, broken
// streams, bit flips) give an error and never a crash.

#include "persist/rdb_reader.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/list_object.h"
#include "core/listpack.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "core/zset_object.h"
#include "persist/rdb_containers.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"
#include "rdb_test_support.h"

namespace goblin {
namespace {

using rdb_test::Be;
using rdb_test::Le;
using rdb_test::Len;
using rdb_test::Str;

// ---- building values and reading them back -----------------------------------------------

// A key entry holding object (taken), destroyed with the holder.
struct Held {
  KeyEntry* entry;
  explicit Held(Collection* object) : entry(KeyEntry::Make("k", EntryValue::Object(object))) {}
  explicit Held(const EntryValue& value) : entry(KeyEntry::Make("k", value)) {}
  ~Held() { KeyEntry::Destroy(entry); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
};

// The writer's bytes for object: the type byte, then the value.
std::string Write(Collection* object, const EncodingLimits& limits = {}) {
  Held held(object);
  RdbWriteOptions options;
  options.limits = limits;
  RdbOutput out;
  RdbAppendValue(&out, *held.entry, options);
  return out.bytes;
}

// Decodes bytes (type byte first) under limits into an entry; nullptr with *error on failure.
// With whole, the value must take all of bytes.
KeyEntry* Read(const std::string& bytes, const EncodingLimits& limits, RdbReadError* error,
               bool whole = true) {
  if (bytes.empty()) return nullptr;
  size_t pos = 1;
  RdbValue value;
  if (!RdbReadValue(static_cast<uint8_t>(bytes[0]), bytes, &pos, limits, &value, error)) {
    return nullptr;
  }
  if (whole) {
    EXPECT_EQ(pos, bytes.size());
  }
  return KeyEntry::Make("k", value.Take());
}

// The decoded entry, which must decode.
struct Decoded {
  KeyEntry* entry = nullptr;
  Decoded(const std::string& bytes, const EncodingLimits& limits = {}) {
    RdbReadError error;
    entry = Read(bytes, limits, &error);
    EXPECT_NE(entry, nullptr) << error.what << " at " << error.offset;
  }
  ~Decoded() {
    if (entry != nullptr) KeyEntry::Destroy(entry);
  }
  bool ok() const { return entry != nullptr; }
  std::string_view encoding() const { return entry->EncodingName(); }
  template <typename T>
  const T& as() const {
    return *static_cast<const T*>(entry->object());
  }
};

// The error of bytes that must not decode.
RdbReadError Refused(const std::string& bytes, const EncodingLimits& limits = {}) {
  RdbReadError error;
  KeyEntry* entry = Read(bytes, limits, &error);
  EXPECT_EQ(entry, nullptr) << "decoded";
  if (entry != nullptr) KeyEntry::Destroy(entry);
  EXPECT_FALSE(error.what.empty());
  return error;
}

std::vector<std::string> ListOf(const Decoded& d) {
  std::vector<std::string> out;
  const PackedList& list = d.as<ListObject>().list();
  list.ForEach(0, list.size(), [&](std::string_view v) { out.emplace_back(v); });
  return out;
}
std::set<std::string> SetOf(const Decoded& d) {
  std::set<std::string> out;
  d.as<SetObject>().set().ForEach([&](std::string_view v) { out.emplace(v); });
  return out;
}
std::map<std::string, std::string> HashOf(const Decoded& d) {
  std::map<std::string, std::string> out;
  d.as<HashObject>().hash().ForEach(
      [&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}
std::vector<std::pair<double, std::string>> ZsetOf(const Decoded& d) {
  std::vector<std::pair<double, std::string>> out;
  const SortedSet& set = d.as<ZsetObject>().set();
  set.ForEachInRankRange(0, set.size(), false,
                         [&](double s, std::string_view m) { out.emplace_back(s, m); });
  return out;
}

// ---- hand-built encodings ------------------------------------------------------------------

std::string Type(uint8_t t) { return rdb_test::Byte(t); }

// A ziplist of elements, integers encoded as integers, built from the format description.
std::string Ziplist(const std::vector<std::string>& elements) {
  std::string entries;
  size_t previous = 0;
  size_t last = 10;
  for (const std::string& e : elements) {
    std::string entry =
        previous < 254 ? std::string(1, static_cast<char>(previous)) : "\xfe" + Le(previous, 4);
    int64_t v;
    if (ParseInt64(e, &v)) {
      if (v >= 0 && v <= 12) {
        entry.push_back(static_cast<char>(0xF1 + v));
      } else if (v >= INT8_MIN && v <= INT8_MAX) {
        entry += "\xfe" + Le(static_cast<uint64_t>(v), 1);
      } else if (v >= INT16_MIN && v <= INT16_MAX) {
        entry += "\xc0" + Le(static_cast<uint64_t>(v), 2);
      } else if (v >= -(1 << 23) && v < (1 << 23)) {
        entry += "\xf0" + Le(static_cast<uint64_t>(v), 3);
      } else if (v >= INT32_MIN && v <= INT32_MAX) {
        entry += "\xd0" + Le(static_cast<uint64_t>(v), 4);
      } else {
        entry += "\xe0" + Le(static_cast<uint64_t>(v), 8);
      }
    } else if (e.size() < 64) {
      entry.push_back(static_cast<char>(e.size()));
      entry += e;
    } else if (e.size() < 16384) {
      entry += Be(0x4000 | e.size(), 2) + e;
    } else {
      entry += "\x80" + Be(e.size(), 4) + e;
    }
    last = 10 + entries.size();
    previous = entry.size();
    entries += entry;
  }
  const size_t total = 10 + entries.size() + 1;
  return Le(total, 4) + Le(last, 4) + Le(elements.size() < 65535 ? elements.size() : 65535, 2) +
         entries + "\xff";
}

std::string Zipmap(const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto length = [](size_t n) {
    return n < 254 ? std::string(1, static_cast<char>(n)) : "\xfe" + Le(n, 4);
  };
  std::string out(1, static_cast<char>(pairs.size() < 254 ? pairs.size() : 254));
  for (const auto& [k, v] : pairs) {
    out += length(k.size()) + k + length(v.size()) + std::string(1, '\x02') + v + "xx";
  }
  return out + "\xff";
}

std::string Intset(const std::vector<int64_t>& values, int width) {
  std::string out = Le(static_cast<uint64_t>(width), 4) + Le(values.size(), 4);
  for (int64_t v : values) out += Le(static_cast<uint64_t>(v), width);
  return out;
}

std::string Listpack(const std::vector<std::string>& elements) {
  ListpackWriter writer;
  for (const std::string& e : elements) writer.AppendString(e);
  return std::string(writer.Finish());
}

// ---- containers ---------------------------------------------------------------------------

TEST(RdbContainers, ZiplistReadsEveryEncoding) {
  const std::vector<std::string> elements = {"0",
                                             "12",
                                             "13",
                                             "-1",
                                             "-128",
                                             "300",
                                             "-30000",
                                             "70000",
                                             "-8388608",
                                             "2000000000",
                                             "9000000000000",
                                             "",
                                             "abc",
                                             std::string(100, 'x'),
                                             std::string(20000, 'y'),
                                             "007"};
  std::vector<RdbElement> read;
  std::string what;
  const std::string blob = Ziplist(elements);  // the elements view it
  ASSERT_TRUE(ReadZiplist(blob, &read, &what)) << what;
  ASSERT_EQ(read.size(), elements.size());
  char digits[kInt64TextMax];
  for (size_t i = 0; i < elements.size(); ++i) EXPECT_EQ(read[i].Text(digits), elements[i]) << i;
}

TEST(RdbContainers, ZiplistDamageIsRefused) {
  const std::string good = Ziplist({"a", "bb", "300"});
  std::vector<RdbElement> read;
  std::string what;
  ASSERT_TRUE(ReadZiplist(good, &read, &what));
  std::string bad = good;
  bad[0] = static_cast<char>(bad[0] + 1);  // total bytes
  EXPECT_FALSE(ReadZiplist(bad, &read, &what));
  bad = good;
  bad[4] = static_cast<char>(bad[4] + 1);  // tail offset
  EXPECT_FALSE(ReadZiplist(bad, &read, &what));
  bad = good;
  bad[8] = 5;  // count
  EXPECT_FALSE(ReadZiplist(bad, &read, &what));
  bad = good;
  bad[13] = 9;  // second entry's previous-entry length
  EXPECT_FALSE(ReadZiplist(bad, &read, &what));
  bad = good;
  bad.back() = 0;  // end byte
  EXPECT_FALSE(ReadZiplist(bad, &read, &what));
  EXPECT_FALSE(ReadZiplist(good.substr(0, good.size() - 2), &read, &what));
}

TEST(RdbContainers, ListpackDamageIsRefused) {
  const std::string good = Listpack({"a", "12345", std::string(70, 'z')});
  std::vector<RdbElement> read;
  std::string what;
  ASSERT_TRUE(ReadListpack(good, &read, &what)) << what;
  ASSERT_EQ(read.size(), 3u);
  std::string bad = good;
  bad[4] = 4;  // count
  EXPECT_FALSE(ReadListpack(bad, &read, &what));
  bad = good;
  bad[good.size() - 2] = 9;  // last back length
  EXPECT_FALSE(ReadListpack(bad, &read, &what));
  EXPECT_FALSE(ReadListpack(good.substr(0, 6), &read, &what));
}

TEST(RdbContainers, IntsetMustAscend) {
  std::vector<int64_t> values;
  std::string what;
  EXPECT_TRUE(ReadIntset(Intset({-5, 1, 70000}, 4), &values, &what)) << what;
  EXPECT_EQ(values, (std::vector<int64_t>{-5, 1, 70000}));
  EXPECT_FALSE(ReadIntset(Intset({1, 1}, 2), &values, &what));
  EXPECT_FALSE(ReadIntset(Intset({2, 1}, 8), &values, &what));
  EXPECT_FALSE(ReadIntset(Intset({1}, 3), &values, &what));
  EXPECT_FALSE(ReadIntset(Intset({1, 2}, 2).substr(0, 10), &values, &what));
}

TEST(RdbContainers, ZipmapSkipsFreeBytes) {
  std::vector<RdbElement> read;
  std::string what;
  const std::string blob = Zipmap({{"f", "v"}, {std::string(300, 'k'), "value"}});
  ASSERT_TRUE(ReadZipmap(blob, &read, &what)) << what;
  ASSERT_EQ(read.size(), 4u);
  EXPECT_EQ(read[1].text, "v");
  EXPECT_EQ(read[2].text, std::string(300, 'k'));
  EXPECT_EQ(read[3].text, "value");
  std::string bad = Zipmap({{"f", "v"}});
  bad[0] = 3;
  EXPECT_FALSE(ReadZipmap(bad, &read, &what));
}

// ---- values -------------------------------------------------------------------------------

TEST(RdbReadValue, StringsInEveryEncoding) {
  for (const std::string& s :
       std::vector<std::string>{"", "abc", "12", "-2147483648", std::string(100, 'a'), "007"}) {
    std::string bytes = Type(rdb::kTypeString);
    RdbAppendEncodedString(&bytes, s, true);
    Decoded d(bytes);
    ASSERT_TRUE(d.ok());
    char scratch[kInt64TextMax];
    EXPECT_EQ(d.entry->string_value(scratch), s);
  }
  Decoded integer(Type(rdb::kTypeString) + Str("12345"));
  EXPECT_EQ(integer.encoding(), "int");
}

TEST(RdbReadValue, ListsOfEveryType) {
  const std::vector<std::string> model = {"a", "1", "-7", std::string(80, 'q'), "x"};
  std::string linked = Type(rdb::kTypeList) + Len(model.size());
  for (const std::string& e : model) RdbAppendEncodedString(&linked, e, true);
  const std::string ziplist = Type(rdb::kTypeListZiplist) + Str(Ziplist(model));
  const std::string quicklist = Type(rdb::kTypeListQuicklist) + Len(2) +
                                Str(Ziplist({model[0], model[1]})) +
                                Str(Ziplist({model[2], model[3], model[4]}));
  const std::string quicklist2 = Type(rdb::kTypeListQuicklist2) + Len(3) + Len(2) +
                                 Str(Listpack({model[0], model[1]})) + Len(1) + Str(model[2]) +
                                 Len(2) + Str(Listpack({model[3], model[4]}));
  for (const auto& [bytes, encoding] :
       std::vector<std::pair<std::string, std::string>>{{linked, "listpack"},
                                                        {ziplist, "listpack"},
                                                        {quicklist, "quicklist"},
                                                        {quicklist2, "quicklist"}}) {
    Decoded d(bytes);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(ListOf(d), model);
    EXPECT_EQ(d.encoding(), encoding);
  }
  // One node that fits is a listpack, as Redis 7.2 converts it.
  Decoded one(Type(rdb::kTypeListQuicklist2) + Len(1) + Len(2) + Str(Listpack(model)));
  EXPECT_EQ(one.encoding(), "listpack");
  EncodingLimits tight;
  tight.list.max_listpack_size = 2;
  Decoded big(Type(rdb::kTypeListQuicklist2) + Len(1) + Len(2) + Str(Listpack(model)), tight);
  EXPECT_EQ(big.encoding(), "quicklist");
}

TEST(RdbReadValue, EmptyContainersAreReportedEmpty) {
  for (const std::string& bytes :
       {Type(rdb::kTypeList) + Len(0), Type(rdb::kTypeSet) + Len(0), Type(rdb::kTypeZset2) + Len(0),
        Type(rdb::kTypeHash) + Len(0),
        Type(rdb::kTypeListQuicklist2) + Len(1) + Len(2) + Str(Listpack({})),
        Type(rdb::kTypeSetIntset) + Str(Intset({}, 2)),
        Type(rdb::kTypeHashZiplist) + Str(Ziplist({})),
        Type(rdb::kTypeZsetListpack) + Str(Listpack({}))}) {
    EXPECT_TRUE(Refused(bytes).empty) << bytes.size();
  }
  EXPECT_FALSE(Refused(Type(rdb::kTypeSet) + Len(3)).empty);
}

TEST(RdbReadValue, SetsTakeRedisForms) {
  EncodingLimits limits;  // intset 512, listpack 128 entries of 64 bytes
  Decoded ints(Type(rdb::kTypeSet) + Len(3) + Str("3") + Str("1") + Str("2"), limits);
  EXPECT_EQ(ints.encoding(), "intset");
  EXPECT_EQ(SetOf(ints), (std::set<std::string>{"1", "2", "3"}));
  Decoded mixed(Type(rdb::kTypeSet) + Len(3) + Str("3") + Str("a") + Str("2"), limits);
  EXPECT_EQ(mixed.encoding(), "listpack");
  std::string many = Type(rdb::kTypeSet) + Len(200);
  for (int i = 0; i < 200; ++i) many += Str("m" + std::to_string(i));
  Decoded large(many, limits);
  EXPECT_EQ(large.encoding(), "hashtable");
  EXPECT_EQ(SetOf(large).size(), 200u);
  Decoded intset(Type(rdb::kTypeSetIntset) + Str(Intset({-3, 5, 1 << 20}, 4)), limits);
  EXPECT_EQ(intset.encoding(), "intset");
  EXPECT_EQ(SetOf(intset), (std::set<std::string>{"-3", "5", "1048576"}));
  limits.set.max_intset_entries = 2;
  Decoded over(Type(rdb::kTypeSetIntset) + Str(Intset({-3, 5, 1 << 20}, 4)), limits);
  EXPECT_EQ(over.encoding(), "hashtable");
  // A listpack stays a listpack even when its members are integers.
  Decoded listpack(Type(rdb::kTypeSetListpack) + Str(Listpack({"1", "2", "x"})));
  EXPECT_EQ(listpack.encoding(), "listpack");
  EXPECT_EQ(SetOf(listpack), (std::set<std::string>{"1", "2", "x"}));
  Decoded numbers(Type(rdb::kTypeSetListpack) + Str(Listpack({"1", "2"})));
  EXPECT_EQ(numbers.encoding(), "listpack");
}

TEST(RdbReadValue, DuplicatesAreRefused) {
  std::string big_set = Type(rdb::kTypeSet) + Len(600);
  for (int i = 0; i < 599; ++i) big_set += Str("m" + std::to_string(i));
  big_set += Str("m7");
  std::string big_hash = Type(rdb::kTypeHash) + Len(300);
  for (int i = 0; i < 299; ++i) big_hash += Str("f" + std::to_string(i)) + Str("v");
  big_hash += Str("f3") + Str("w");
  std::string big_zset = Type(rdb::kTypeZset2) + Len(300);
  for (int i = 0; i < 299; ++i)
    big_zset += Str("z" + std::to_string(i)) + Le(std::bit_cast<uint64_t>(double(i)), 8);
  big_zset += Str("z5") + Le(std::bit_cast<uint64_t>(1000.0), 8);
  for (const std::string& bytes :
       {Type(rdb::kTypeSet) + Len(2) + Str("a") + Str("a"),
        Type(rdb::kTypeSet) + Len(2) + Str("1") + Str("1"), big_set,
        Type(rdb::kTypeSetListpack) + Str(Listpack({"x", "y", "x"})),
        Type(rdb::kTypeHash) + Len(2) + Str("f") + Str("1") + Str("f") + Str("2"), big_hash,
        Type(rdb::kTypeHashListpack) + Str(Listpack({"f", "1", "f", "2"})),
        Type(rdb::kTypeHashZipmap) + Str(Zipmap({{"f", "1"}, {"f", "2"}})),
        Type(rdb::kTypeZset2) + Len(2) + Str("m") + Le(0, 8) + Str("m") +
            Le(std::bit_cast<uint64_t>(2.0), 8),
        big_zset, Type(rdb::kTypeZsetListpack) + Str(Listpack({"m", "1", "m", "2"}))}) {
    const RdbReadError error = Refused(bytes);
    EXPECT_NE(error.what.find("twice"), std::string::npos) << error.what;
  }
}

TEST(RdbReadValue, SortedSetsInEveryOrderAndType) {
  const std::vector<std::pair<double, std::string>> model = {
      {-HUGE_VAL, "ninf"}, {-1.5, "a"}, {0, "b"}, {0, "c"}, {2, "d"}, {HUGE_VAL, "inf"}};
  auto binary = [](double d) { return Le(std::bit_cast<uint64_t>(d), 8); };
  auto text = [](double d) {
    if (std::isinf(d)) return std::string(1, static_cast<char>(d > 0 ? 254 : 255));
    const std::string s = FormatDouble(d);
    return std::string(1, static_cast<char>(s.size())) + s;
  };
  std::string descending = Type(rdb::kTypeZset2) + Len(model.size());
  for (size_t i = model.size(); i-- > 0;)
    descending += Str(model[i].second) + binary(model[i].first);
  std::string shuffled = Type(rdb::kTypeZset) + Len(model.size());
  for (size_t i : {3, 0, 5, 1, 4, 2}) shuffled += Str(model[i].second) + text(model[i].first);
  std::vector<std::string> flat;
  for (const auto& [s, m] : model) {
    flat.push_back(m);
    flat.push_back(FormatDouble(s));
  }
  const std::string ziplist = Type(rdb::kTypeZsetZiplist) + Str(Ziplist(flat));
  const std::string listpack = Type(rdb::kTypeZsetListpack) + Str(Listpack(flat));
  for (const std::string& bytes : {descending, shuffled, ziplist, listpack}) {
    Decoded d(bytes);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(ZsetOf(d), model);
    EXPECT_EQ(d.encoding(), "listpack");
  }
  EncodingLimits limits;
  limits.zset.max_listpack_entries = 3;
  Decoded large(descending, limits);
  EXPECT_EQ(large.encoding(), "skiplist");
  EXPECT_EQ(ZsetOf(large), model);
  // NaN is refused in every form.
  EXPECT_NE(Refused(Type(rdb::kTypeZset2) + Len(1) + Str("m") +
                    binary(std::numeric_limits<double>::quiet_NaN()))
                .what.find("NaN"),
            std::string::npos);
  Refused(Type(rdb::kTypeZset) + Len(1) + Str("m") + std::string(1, '\xfd'));
  Refused(Type(rdb::kTypeZsetListpack) + Str(Listpack({"m", "nan"})));
  Refused(Type(rdb::kTypeZsetListpack) + Str(Listpack({"m", "1", "n"})));
}

TEST(RdbReadValue, HashesOfEveryType) {
  const std::map<std::string, std::string> model = {
      {"f1", "v1"}, {"n", "12"}, {"7", "-3"}, {"long", std::string(70, 'L')}};
  std::string table = Type(rdb::kTypeHash) + Len(model.size());
  std::vector<std::string> flat;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [f, v] : model) {
    table += Str(f) + Str(v);
    flat.push_back(f);
    flat.push_back(v);
    pairs.emplace_back(f, v);
  }
  // A value over 64 bytes: the hashtable form from a table or a zipmap, not from a listpack.
  struct Case {
    std::string bytes;
    std::string encoding;
  };
  for (const Case& c : {Case{table, "hashtable"},
                        Case{Type(rdb::kTypeHashZipmap) + Str(Zipmap(pairs)), "hashtable"},
                        Case{Type(rdb::kTypeHashZiplist) + Str(Ziplist(flat)), "listpack"},
                        Case{Type(rdb::kTypeHashListpack) + Str(Listpack(flat)), "listpack"}}) {
    Decoded d(c.bytes);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(HashOf(d), model);
    EXPECT_EQ(d.encoding(), c.encoding);
  }
  EncodingLimits limits;
  limits.hash.max_listpack_entries = 3;
  Decoded large(Type(rdb::kTypeHashListpack) + Str(Listpack(flat)), limits);
  EXPECT_EQ(large.encoding(), "hashtable");
  EXPECT_EQ(HashOf(large), model);
}

TEST(RdbReadValue, ModulesAreRefusedByNameAndCutFieldExpiryHashesByWhatIsMissing) {
  // "ReJSON-RL" encoded as Redis's module id: 9 characters of 6 bits, then 10 bits of version.
  const std::string charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  uint64_t id = 0;
  for (char c : std::string("ReJSON-RL")) id = id << 6 | charset.find(c);
  id = id << 10 | 3;
  EXPECT_EQ(RdbModuleTypeName(id), "ReJSON-RL");
  const RdbReadError error = Refused(Type(rdb::kTypeModule2) + Len(id) + std::string(20, 'x'));
  EXPECT_NE(error.what.find("'ReJSON-RL'"), std::string::npos) << error.what;
  EXPECT_NE(error.what.find("encoding version 3"), std::string::npos) << error.what;
  // Redis 7.4's hashes with field deadlines are read (test_hash_field_expiry.py loads its
  // file); cut short, each names what is missing.
  EXPECT_NE(Refused(Type(24) + std::string(4, '\0')).what.find("truncated minimum field deadline"),
            std::string::npos);
  EXPECT_NE(Refused(Type(22) + Len(1)).what.find("hash size 1 is more than"), std::string::npos);
  EXPECT_NE(Refused(Type(25) + std::string(8, '\0')).what.find("hash listpack with field expiry"),
            std::string::npos);
  EXPECT_NE(Refused(Type(8)).what.find("unknown RDB value type 8"), std::string::npos);
}

// ---- streams -------------------------------------------------------------------------------

std::string StreamIdRaw(uint64_t ms, uint64_t seq) { return Be(ms, 8) + Be(seq, 8); }

// A stream node listpack: master fields, entries (id deltas from master), flags.
struct NodeEntry {
  uint64_t ms, seq;
  std::vector<std::pair<std::string, std::string>> fields;
  bool deleted = false;
};
std::string StreamNodeListpack(uint64_t master_ms, uint64_t master_seq,
                               const std::vector<std::string>& master_fields,
                               const std::vector<NodeEntry>& entries) {
  ListpackWriter lp;
  int64_t live = 0, deleted = 0;
  for (const NodeEntry& e : entries) (e.deleted ? deleted : live)++;
  lp.AppendInteger(live);
  lp.AppendInteger(deleted);
  lp.AppendInteger(static_cast<int64_t>(master_fields.size()));
  for (const std::string& f : master_fields) lp.AppendString(f);
  lp.AppendInteger(0);
  for (const NodeEntry& e : entries) {
    bool same = e.fields.size() == master_fields.size();
    for (size_t i = 0; same && i < master_fields.size(); ++i)
      same = e.fields[i].first == master_fields[i];
    lp.AppendInteger((same ? 2 : 0) | (e.deleted ? 1 : 0));
    lp.AppendInteger(static_cast<int64_t>(e.ms - master_ms));
    lp.AppendInteger(static_cast<int64_t>(e.seq - master_seq));
    if (!same) lp.AppendInteger(static_cast<int64_t>(e.fields.size()));
    for (const auto& [f, v] : e.fields) {
      if (!same) lp.AppendString(f);
      lp.AppendString(v);
    }
    const auto n = static_cast<int64_t>(e.fields.size());
    lp.AppendInteger(same ? n + 3 : 2 * n + 4);
  }
  return std::string(lp.Finish());
}

// A v1 stream (type 15), built by hand: one node of three entries, one deleted, one group.
std::string StreamV1() {
  std::string out =
      Type(rdb::kTypeStreamListpacks) + Len(1) + Str(StreamIdRaw(5, 0)) +
      Str(StreamNodeListpack(
          5, 0, {"f"},
          {{5, 0, {{"f", "a"}}}, {5, 1, {{"f", "b"}}, true}, {7, 0, {{"g", "c"}, {"h", "d"}}}}));
  out += Len(2) + Len(7) + Len(0);               // length, last id
  out += Len(1) + Str("grp") + Len(5) + Len(0);  // one group, last delivered 5-0
  out += Len(1) + StreamIdRaw(5, 0) + Le(1700000000000, 8) + Len(2);  // PEL
  out += Len(1) + Str("alice") + Le(1700000000500, 8) + Len(1) + StreamIdRaw(5, 0);
  return out;
}

TEST(RdbReadValue, StreamV1BuiltByHand) {
  Decoded d(StreamV1());
  ASSERT_TRUE(d.ok());
  const StreamObject& object = d.as<StreamObject>();
  const Stream& stream = object.stream();
  EXPECT_EQ(stream.size(), 2u);
  EXPECT_EQ(stream.last_id(), (StreamId{7, 0}));
  EXPECT_EQ(stream.entries_added(), 2u);
  std::vector<std::string> seen;
  stream.Range(StreamId::Min(), StreamId::Max(), false, 0, [&](const StreamEntryView& e) {
    std::string s = e.id.ToString();
    for (const auto& [f, v] : e.fields) s += " " + std::string(f) + "=" + std::string(v);
    seen.push_back(s);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"5-0 f=a", "7-0 g=c h=d"}));
  ASSERT_NE(object.groups(), nullptr);
  const ConsumerGroup* group = const_cast<StreamObject&>(object).FindGroup("grp");
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->last_delivered_id(), (StreamId{5, 0}));
  // v1 has no read counter: estimated as Redis estimates it.
  EXPECT_EQ(group->entries_read(), 1);
  const auto pending = group->FindPending(StreamId{5, 0});
  ASSERT_TRUE(pending.has_value());
  EXPECT_EQ(pending->consumer, "alice");
  EXPECT_EQ(pending->delivery_count, 2u);
  EXPECT_EQ(pending->delivery_time_ms, 1700000000000);
  const auto alice = group->FindConsumer("alice");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->seen_time_ms, 1700000000500);
  EXPECT_EQ(alice->active_time_ms, 1700000000500);
}

TEST(RdbReadValue, BrokenStreamsAreRefused) {
  const std::string good = StreamV1();
  // Length that does not match the live entries.
  std::string wrong_length = good;
  const std::string tail = Len(2) + Len(7) + Len(0) + Len(1) + Str("grp");
  const size_t at = wrong_length.find(tail);
  ASSERT_NE(at, std::string::npos);
  wrong_length[at] = 3;
  EXPECT_NE(Refused(wrong_length).what.find("length"), std::string::npos);
  // A last id below the entries.
  std::string low_last = good;
  low_last[at + 1] = 6;
  Refused(low_last);
  // Ids out of order inside a node.
  Refused(Type(rdb::kTypeStreamListpacks) + Len(1) + Str(StreamIdRaw(5, 0)) +
          Str(StreamNodeListpack(5, 0, {"f"}, {{5, 3, {{"f", "a"}}}, {5, 1, {{"f", "b"}}}})) +
          Len(2) + Len(5) + Len(3) + Len(0));
  // A consumer owning an entry the group does not hold, and an entry nobody owns.
  Refused(Type(rdb::kTypeStreamListpacks) + Len(0) + Len(0) + Len(0) + Len(0) + Len(1) + Str("g") +
          Len(0) + Len(0) + Len(0) + Len(1) + Str("c") + Le(0, 8) + Len(1) + StreamIdRaw(1, 1));
  Refused(Type(rdb::kTypeStreamListpacks) + Len(0) + Len(0) + Len(0) + Len(0) + Len(1) + Str("g") +
          Len(0) + Len(0) + Len(1) + StreamIdRaw(1, 1) + Le(0, 8) + Len(1) + Len(0));
  // A node key that is not 16 bytes.
  Refused(Type(rdb::kTypeStreamListpacks) + Len(1) + Str("short") +
          Str(StreamNodeListpack(5, 0, {"f"}, {{5, 0, {{"f", "a"}}}})) + Len(1) + Len(5) + Len(0) +
          Len(0));
}

// ---- round trips through the writer -------------------------------------------------------

TEST(RdbReadValue, RoundTripOfEveryWriterForm) {
  std::mt19937_64 random(20250101);
  for (int round = 0; round < 60; ++round) {
    SCOPED_TRACE(round);
    EncodingLimits limits;
    const bool small = round % 2 == 0;
    const size_t n = small ? 1 + random() % 60 : 150 + random() % 400;
    auto member = [&](size_t i) {
      switch (random() % 3) {
        case 0:
          return std::to_string(static_cast<int64_t>(random() % 2000) - 1000 + 5000 * int64_t(i));
        case 1:
          return "m" + std::to_string(i);
        default:
          return std::string(1 + random() % 30, static_cast<char>('a' + i % 26)) +
                 std::to_string(i);
      }
    };
    // Set.
    {
      std::set<std::string> model;
      PackedSet set;
      for (size_t i = 0; i < n; ++i) {
        const std::string m = member(i);
        model.insert(m);
        set.Add(m, limits.set);
      }
      Decoded d(Write(new SetObject(std::move(set)), limits), limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(SetOf(d), model);
    }
    // Hash.
    {
      std::map<std::string, std::string> model;
      PackedHash hash;
      for (size_t i = 0; i < n; ++i) {
        const std::string f = member(i), v = member(i + 7);
        model[f] = v;
        hash.Set(f, v, limits.hash);
      }
      Decoded d(Write(new HashObject(std::move(hash)), limits), limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(HashOf(d), model);
      EXPECT_EQ(d.encoding(), model.size() <= 128 && small ? "listpack" : "hashtable");
    }
    // Sorted set.
    {
      std::map<std::string, double> scores;
      SortedSet set;
      for (size_t i = 0; i < n; ++i) {
        const std::string m = member(i);
        const double s = static_cast<double>(static_cast<int64_t>(random() % 100) - 50) / 4;
        scores[m] = s;
        ZsetObject::Insert(set, s, m, limits.zset);
      }
      std::vector<std::pair<double, std::string>> model;
      for (const auto& [m, s] : scores) model.emplace_back(s, m);
      std::sort(model.begin(), model.end());
      Decoded d(Write(new ZsetObject(std::move(set)), limits), limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(ZsetOf(d), model);
    }
    // List.
    {
      std::vector<std::string> model;
      PackedList list;
      for (size_t i = 0; i < n * 4; ++i) {
        model.push_back(member(i));
        list.PushBack(model.back(), limits.list);
      }
      list.ConvertForGrowth(0, 0, limits.list);
      const std::string_view encoding = list.EncodingName();
      const std::string bytes = Write(new ListObject(std::move(list)), limits);
      Decoded d(bytes, limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(ListOf(d), model);
      EXPECT_EQ(d.encoding(), encoding);
    }
  }
}

// ---- the old encodings, at random, against a model ------------------------------------------

// The elements, integers as their text: what every encoding must give back.
struct RandomValues {
  std::mt19937_64 random;
  explicit RandomValues(uint64_t seed) : random(seed) {}
  size_t Below(size_t n) { return static_cast<size_t>(random() % n); }
  std::string Element(size_t i) {
    switch (Below(5)) {
      case 0:
        return std::to_string(static_cast<int64_t>(random() >> Below(64)) * (Below(2) ? -1 : 1));
      case 1:
        return std::to_string(Below(300));
      case 2:
        return std::string(Below(3) == 0 ? 70 + Below(100) : Below(20), 'a' + Below(26)) +
               std::to_string(i);
      case 3:
        return "007" + std::to_string(i);
      default:
        return "m" + std::to_string(i);
    }
  }
};

std::string Linked(uint8_t type, const std::vector<std::string>& elements) {
  std::string out = Type(type) + Len(elements.size());
  for (const std::string& e : elements) RdbAppendEncodedString(&out, e, true);
  return out;
}

// Redis 7.2's form for a set it loads (rdb.c's order of conversions), written out.
std::string ExpectedSetForm(uint8_t type, const std::vector<std::string>& members,
                            const SetLimits& limits) {
  auto integer = [](const std::string& m) {
    int64_t v;
    return ParseInt64(m, &v);
  };
  if (type == rdb::kTypeSetIntset) {
    return members.size() > limits.max_intset_entries ? "hashtable" : "intset";
  }
  if (type == rdb::kTypeSetListpack) {
    return members.size() > limits.max_listpack_entries ? "hashtable" : "listpack";
  }
  if (members.size() > limits.max_intset_entries) return "hashtable";
  std::string form = "intset";
  size_t longest = 0, size = 0;
  for (const std::string& m : members) {
    longest = std::max(longest, m.size());
    if (form == "intset" && !integer(m)) {
      form = size < limits.max_listpack_entries && longest <= limits.max_listpack_value
                 ? "listpack"
                 : "hashtable";
    }
    if (form == "listpack" &&
        !(size < limits.max_listpack_entries && m.size() <= limits.max_listpack_value)) {
      form = "hashtable";
    }
    ++size;
  }
  return form;
}

TEST(RdbReadValue, RandomOldEncodingsMatchTheModel) {
  RandomValues r(424242);
  for (int round = 0; round < 400; ++round) {
    SCOPED_TRACE(round);
    EncodingLimits limits;
    limits.set = {1 + r.Below(40), 1 + r.Below(40), 1 + r.Below(120)};
    limits.hash = {1 + r.Below(40), 1 + r.Below(120)};
    limits.zset = {1 + r.Below(40), 1 + r.Below(120)};
    limits.list.max_listpack_size =
        r.Below(2) ? 1 + static_cast<int64_t>(r.Below(50)) : -1 - static_cast<int64_t>(r.Below(5));
    const size_t n = 1 + r.Below(r.Below(4) == 0 ? 300 : 50);
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (size_t i = 0; i < n; ++i) {
      std::string e = r.Element(i);
      if (seen.insert(e).second) unique.push_back(e);
    }
    // Set.
    {
      bool all_integers = true;
      std::vector<int64_t> values;
      for (const std::string& m : unique) {
        int64_t v;
        all_integers = all_integers && ParseInt64(m, &v);
        values.push_back(all_integers ? v : 0);
      }
      std::vector<uint8_t> types = {rdb::kTypeSet, rdb::kTypeSetListpack};
      if (all_integers) types.push_back(rdb::kTypeSetIntset);
      const uint8_t type = types[r.Below(types.size())];
      std::string bytes;
      if (type == rdb::kTypeSet) {
        bytes = Linked(type, unique);
      } else if (type == rdb::kTypeSetListpack) {
        bytes = Type(type) + Str(Listpack(unique));
      } else {
        std::sort(values.begin(), values.end());
        const bool narrow = values.front() >= INT32_MIN && values.back() <= INT32_MAX;
        bytes = Type(type) + Str(Intset(values, narrow && r.Below(2) ? 4 : 8));
      }
      Decoded d(bytes, limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(SetOf(d), std::set<std::string>(unique.begin(), unique.end()));
      EXPECT_EQ(d.encoding(), ExpectedSetForm(type, unique, limits.set)) << int(type);
    }
    // Hash: fields from the unique elements, values at random.
    {
      std::map<std::string, std::string> model;
      std::vector<std::string> flat;
      std::vector<std::pair<std::string, std::string>> pairs;
      size_t longest = 0;
      for (size_t i = 0; i < unique.size(); ++i) {
        const std::string value = r.Element(i + 1000);
        model[unique[i]] = value;
        flat.push_back(unique[i]);
        flat.push_back(value);
        pairs.emplace_back(unique[i], value);
        longest = std::max({longest, unique[i].size(), value.size()});
      }
      const uint8_t types[] = {rdb::kTypeHash, rdb::kTypeHashZipmap, rdb::kTypeHashZiplist,
                               rdb::kTypeHashListpack};
      const uint8_t type = types[r.Below(4)];
      std::string bytes;
      if (type == rdb::kTypeHash) {
        bytes = Type(type) + Len(pairs.size());
        for (const auto& [f, v] : pairs) {
          RdbAppendEncodedString(&bytes, f, true);
          RdbAppendEncodedString(&bytes, v, true);
        }
      } else if (type == rdb::kTypeHashZipmap) {
        bytes = Type(type) + Str(Zipmap(pairs));
      } else if (type == rdb::kTypeHashZiplist) {
        bytes = Type(type) + Str(Ziplist(flat));
      } else {
        bytes = Type(type) + Str(Listpack(flat));
      }
      const bool by_length = type == rdb::kTypeHash || type == rdb::kTypeHashZipmap;
      const bool small = pairs.size() <= limits.hash.max_listpack_entries &&
                         (!by_length || longest <= limits.hash.max_listpack_value);
      Decoded d(bytes, limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(HashOf(d), model);
      EXPECT_EQ(d.encoding(), small ? "listpack" : "hashtable") << int(type);
    }
    // Sorted set: members from the unique elements, scores at random, in random order.
    {
      std::vector<std::pair<double, std::string>> model;
      for (const std::string& m : unique) {
        const double score = r.Below(4) == 0 ? static_cast<double>(r.Below(5))
                                             : static_cast<double>(r.random() % 100000) / 64 - 500;
        model.emplace_back(score, m);
      }
      std::vector<std::pair<double, std::string>> order = model;
      std::shuffle(order.begin(), order.end(), r.random);
      std::sort(model.begin(), model.end());
      const uint8_t types[] = {rdb::kTypeZset, rdb::kTypeZset2, rdb::kTypeZsetZiplist,
                               rdb::kTypeZsetListpack};
      const uint8_t type = types[r.Below(4)];
      std::string bytes;
      size_t longest = 0;
      for (const auto& [score, m] : model) longest = std::max(longest, m.size());
      if (type == rdb::kTypeZset || type == rdb::kTypeZset2) {
        bytes = Type(type) + Len(order.size());
        for (const auto& [score, m] : order) {
          RdbAppendEncodedString(&bytes, m, true);
          if (type == rdb::kTypeZset2) {
            bytes += Le(std::bit_cast<uint64_t>(score), 8);
          } else {
            const std::string text = FormatDouble(score);
            bytes += std::string(1, static_cast<char>(text.size())) + text;
          }
        }
      } else {
        std::vector<std::string> flat;
        for (const auto& [score, m] : model) {
          flat.push_back(m);
          flat.push_back(FormatDouble(score));
        }
        bytes = Type(type) + Str(type == rdb::kTypeZsetZiplist ? Ziplist(flat) : Listpack(flat));
      }
      const bool by_length = type == rdb::kTypeZset || type == rdb::kTypeZset2;
      const bool small = model.size() <= limits.zset.max_listpack_entries &&
                         (!by_length || longest <= limits.zset.max_listpack_value);
      Decoded d(bytes, limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(ZsetOf(d), model);
      EXPECT_EQ(d.encoding(), small ? "listpack" : "skiplist") << int(type);
      EXPECT_EQ(d.as<ZsetObject>().set().Validate(), "");
    }
    // List: the elements with repeats, in nodes of random sizes.
    {
      std::vector<std::string> model;
      for (size_t i = 0; i < n; ++i) model.push_back(unique[r.Below(unique.size())]);
      const uint8_t types[] = {rdb::kTypeList, rdb::kTypeListZiplist, rdb::kTypeListQuicklist,
                               rdb::kTypeListQuicklist2};
      const uint8_t type = types[r.Below(4)];
      std::string bytes;
      size_t nodes = 1;
      if (type == rdb::kTypeList) {
        bytes = Linked(type, model);
      } else if (type == rdb::kTypeListZiplist) {
        bytes = Type(type) + Str(Ziplist(model));
      } else {
        std::string body;
        nodes = 0;
        for (size_t i = 0; i < model.size();) {
          const size_t take = std::min(model.size() - i, 1 + r.Below(20));
          const std::vector<std::string> part(model.begin() + i, model.begin() + i + take);
          if (type == rdb::kTypeListQuicklist2) body += Len(rdb::kQuicklistNodePacked);
          body += Str(type == rdb::kTypeListQuicklist ? Ziplist(part) : Listpack(part));
          ++nodes;
          i += take;
        }
        bytes = Type(type) + Len(nodes) + body;
      }
      ListpackWriter all;
      for (const std::string& e : model) all.AppendString(e);
      const ListLimits& l = limits.list;
      const bool fits = l.max_listpack_size < 0
                            ? all.bytes() <= l.NodeBytes()
                            : all.bytes() <= ListLimits::kSafetyBytes &&
                                  model.size() <= static_cast<size_t>(l.max_listpack_size);
      Decoded d(bytes, limits);
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(ListOf(d), model);
      EXPECT_EQ(d.encoding(), nodes == 1 && fits ? "listpack" : "quicklist") << int(type);
    }
  }
}

// Valid values, damaged at random: refused, or decoded into sound structures; never a crash.
TEST(RdbReadValue, RandomDamageNeverCrashes) {
  RandomValues r(9001);
  EncodingLimits limits;
  limits.set.max_intset_entries = 20;
  limits.hash.max_listpack_entries = 20;
  limits.zset.max_listpack_entries = 20;
  std::vector<std::string> samples;
  for (int i = 0; i < 6; ++i) {
    std::vector<std::string> elements;
    for (size_t j = 0; j < 10 + 10 * static_cast<size_t>(i); ++j) {
      elements.push_back(r.Element(j) + "u" + std::to_string(j));
    }
    std::vector<std::string> flat;
    for (size_t j = 0; j < elements.size(); ++j) {
      flat.push_back(elements[j]);
      flat.push_back(std::to_string(j));
    }
    std::vector<int64_t> ints;
    for (int64_t v = 0; v < 10 + 5 * i; ++v) ints.push_back(v * 3 - 7);
    samples.push_back(Linked(rdb::kTypeSet, elements));
    samples.push_back(Type(rdb::kTypeSetListpack) + Str(Listpack(elements)));
    samples.push_back(Type(rdb::kTypeSetIntset) + Str(Intset(ints, 2)));
    samples.push_back(Type(rdb::kTypeHashZiplist) + Str(Ziplist(flat)));
    samples.push_back(Type(rdb::kTypeHashListpack) + Str(Listpack(flat)));
    samples.push_back(Type(rdb::kTypeZsetZiplist) + Str(Ziplist(flat)));
    samples.push_back(Type(rdb::kTypeZsetListpack) + Str(Listpack(flat)));
    samples.push_back(Type(rdb::kTypeListQuicklist) + Len(1) + Str(Ziplist(elements)));
    samples.push_back(Type(rdb::kTypeListQuicklist2) + Len(1) + Len(2) + Str(Listpack(elements)));
  }
  samples.push_back(StreamV1());
  size_t refused = 0, total = 0;
  for (const std::string& sample : samples) {
    ASSERT_TRUE(Decoded(sample, limits).ok());
    for (int i = 0; i < 300; ++i) {
      std::string damaged = sample;
      for (int flips = 1 + static_cast<int>(r.Below(3)); flips > 0; --flips) {
        damaged[1 + r.Below(damaged.size() - 1)] = static_cast<char>(r.random());
      }
      if (r.Below(5) == 0) damaged.resize(1 + r.Below(damaged.size() - 1));
      RdbReadError error;
      KeyEntry* entry = Read(damaged, limits, &error, /*whole=*/false);
      ++total;
      if (entry == nullptr) {
        ++refused;
        continue;
      }
      rdb_test::ExpectSound(*entry);
      KeyEntry::Destroy(entry);
    }
  }
  EXPECT_GT(refused, total / 2);
}

}  // namespace
}  // namespace goblin
