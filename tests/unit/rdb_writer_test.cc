// Tests of the RDB writer's byte forms (persist/rdb_string.h, persist/rdb_writer.h): strings at
// every integer-encoding and LZF boundary, read back with RdbReadString; a whole file's frame
// (magic, aux fields, database opcodes, end, CRC-64); and the forms values take. Whether Redis
// itself loads what is written is tests/integration/test_rdb_export.py's job.

#include "persist/rdb_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/crc64.h"
#include "core/key_entry.h"
#include "core/set_object.h"
#include "core/version.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "keyspace/database.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"
#include "rdb_test_support.h"

namespace goblin {
namespace {

std::string Encoded(std::string_view s, bool compress = true) {
  std::string out;
  RdbAppendEncodedString(&out, s, compress);
  return out;
}

std::string ReadBack(const std::string& bytes) {
  size_t pos = 0;
  std::string out;
  EXPECT_TRUE(RdbReadString(bytes, &pos, &out));
  EXPECT_EQ(pos, bytes.size());
  return out;
}

TEST(RdbEncodedString, IntegersFitting32BitsTakeTheIntegerEncodings) {
  struct Case {
    std::string text;
    std::string bytes;
  };
  const std::vector<Case> cases = {
      {"0", std::string("\xc0\x00", 2)},
      {"127", "\xc0\x7f"},
      {"-128", "\xc0\x80"},
      {"128", std::string("\xc1\x80\x00", 3)},
      {"-129", "\xc1\x7f\xff"},
      {"32767", "\xc1\xff\x7f"},
      {"32768", std::string("\xc2\x00\x80\x00\x00", 5)},
      {"-32769", "\xc2\xff\x7f\xff\xff"},
      {"2147483647", "\xc2\xff\xff\xff\x7f"},
      {"-2147483648", std::string("\xc2\x00\x00\x00\x80", 5)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(Encoded(c.text), c.bytes);
    EXPECT_EQ(ReadBack(Encoded(c.text)), c.text);
  }
}

TEST(RdbEncodedString, OtherTextIsStoredVerbatim) {
  for (std::string text : {"2147483648", "-2147483649", "9223372036854775807",
                           "-9223372036854775808", "007", "-0", "+1", " 1", "", "1.5", "abc"}) {
    SCOPED_TRACE(text);
    std::string expected;
    RdbAppendString(&expected, text);
    EXPECT_EQ(Encoded(text), expected);
    EXPECT_EQ(ReadBack(Encoded(text)), text);
  }
}

TEST(RdbEncodedString, LzfOnlyOver20BytesWhenItSavesFour) {
  const std::string twenty(20, 'a');
  const std::string twenty_one(21, 'a');
  EXPECT_EQ(static_cast<uint8_t>(Encoded(twenty)[0]), 20u);  // too short to try
  EXPECT_EQ(static_cast<uint8_t>(Encoded(twenty_one)[0]), 0xc3u);
  EXPECT_EQ(ReadBack(Encoded(twenty_one)), twenty_one);
  EXPECT_EQ(static_cast<uint8_t>(Encoded(twenty_one, /*compress=*/false)[0]), 21u);
  // Bytes LZF cannot shrink are stored as they are.
  std::string noise;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 300; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    noise.push_back(static_cast<char>(x));
  }
  std::string verbatim;
  RdbAppendString(&verbatim, noise);
  EXPECT_EQ(Encoded(noise), verbatim);
  const std::string big(100000, 'z');
  EXPECT_LT(Encoded(big).size(), 2000u);
  EXPECT_EQ(ReadBack(Encoded(big)), big);
}

TEST(RdbEncodedString, FunctionRecordIsTheOpcodeAndTheCode) {
  std::string out;
  RdbAppendFunction(&out, "#!lua name=x", /*compress=*/false);
  EXPECT_EQ(static_cast<uint8_t>(out[0]), rdb::kOpFunction2);
  size_t pos = 1;
  std::string code;
  ASSERT_TRUE(RdbReadString(out, &pos, &code));
  EXPECT_EQ(code, "#!lua name=x");
}

TEST(RdbFile, FrameAndChecksum) {
  Database empty;
  Database db;
  db.Put("k", EntryValue::String("v"), std::nullopt);
  db.Put("n", EntryValue::Integer(-5), 1800000000000);
  SnapshotSaveStats stats;
  const std::string file = rdb_test::WrittenRdb({&empty, &db}, RdbWriteOptions{}, &stats);
  EXPECT_EQ(stats.keys, 2u);
  EXPECT_EQ(stats.bytes, file.size());
  ASSERT_GT(file.size(), 9u + 9u);
  EXPECT_EQ(file.substr(0, 9), "REDIS0010");
  size_t pos = 9;
  std::vector<std::string> aux;
  while (static_cast<uint8_t>(file[pos]) == rdb::kOpAux) {
    ++pos;
    std::string name, value;
    ASSERT_TRUE(RdbReadString(file, &pos, &name));
    ASSERT_TRUE(RdbReadString(file, &pos, &value));
    aux.push_back(name + "=" + value);
  }
  EXPECT_EQ(aux.size(), 5u);
  EXPECT_EQ(aux[0], std::string("redis-ver=") + kRedisVersion);
  EXPECT_EQ(aux[1], "redis-bits=64");
  EXPECT_EQ(aux[2], "ctime=1700000000");
  EXPECT_EQ(aux[4], "aof-base=0");
  ASSERT_EQ(static_cast<uint8_t>(file[pos]), rdb::kOpFunction2);
  ++pos;
  std::string code;
  ASSERT_TRUE(RdbReadString(file, &pos, &code));
  // Only the database holding keys: SELECTDB 1, RESIZEDB 2 1.
  ASSERT_EQ(static_cast<uint8_t>(file[pos++]), rdb::kOpSelectDb);
  EXPECT_EQ(file[pos++], 1);
  ASSERT_EQ(static_cast<uint8_t>(file[pos++]), rdb::kOpResizeDb);
  EXPECT_EQ(file[pos++], 2);
  EXPECT_EQ(file[pos++], 1);
  // The end byte, then the CRC-64 of everything before it, little-endian.
  ASSERT_EQ(static_cast<uint8_t>(file[file.size() - 9]), rdb::kOpEof);
  const uint64_t crc = Crc64(0, std::string_view(file).substr(0, file.size() - 8));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(static_cast<uint8_t>(file[file.size() - 8 + i]),
              static_cast<uint8_t>(crc >> (8 * i)));
  }
  RdbWriteOptions unchecked;
  unchecked.checksum = false;
  const std::string plain = rdb_test::WrittenRdb({&empty, &db}, unchecked, &stats);
  EXPECT_EQ(plain.substr(plain.size() - 8), std::string(8, '\0'));
}

TEST(RdbFile, ExpiryOpcodePrecedesTheRecord) {
  Database db;
  db.Put("n", EntryValue::Integer(-5), 1800000000000);
  SnapshotSaveStats stats;
  const std::string file = rdb_test::WrittenRdb({&db}, RdbWriteOptions{}, &stats);
  std::string record;
  record.push_back(static_cast<char>(rdb::kOpExpireTimeMs));
  for (int i = 0; i < 8; ++i) record.push_back(static_cast<char>(1800000000000ULL >> (8 * i)));
  record += std::string("\x00\x01n\xc0\xfb", 5);  // string type, key "n", -5 as C0
  EXPECT_NE(file.find(record), std::string::npos);
}

TEST(RdbValue, IntsetUsesTheNarrowestWidthAndAscendingOrder) {
  auto intset_bytes = [](std::vector<std::string> members) {
    PackedSet set;
    for (const std::string& m : members) set.Add(m, SetLimits{});
    KeyEntry* entry = KeyEntry::Make("s", EntryValue::Object(new SetObject(std::move(set))));
    RdbOutput out;
    RdbAppendValue(&out, *entry, RdbWriteOptions{});
    KeyEntry::Destroy(entry);
    return out.bytes;
  };
  const std::string small = intset_bytes({"3", "-2", "1"});
  EXPECT_EQ(static_cast<uint8_t>(small[0]), rdb::kTypeSetIntset);
  size_t pos = 1;
  std::string blob;
  ASSERT_TRUE(RdbReadString(small, &pos, &blob));
  EXPECT_EQ(blob, std::string("\x02\x00\x00\x00\x03\x00\x00\x00\xfe\xff\x01\x00\x03\x00", 14));
  const std::string wide = intset_bytes({"1", "-9223372036854775808"});
  pos = 1;
  ASSERT_TRUE(RdbReadString(wide, &pos, &blob));
  EXPECT_EQ(blob.substr(0, 8), std::string("\x08\x00\x00\x00\x02\x00\x00\x00", 8));
  // A member that is not an integer: the hashtable form, count then members.
  const std::string text = intset_bytes({"1", "a"});
  EXPECT_EQ(static_cast<uint8_t>(text[0]), rdb::kTypeSet);
  EXPECT_EQ(text[1], 2);
}

// The node count of a stream's value (kTypeStreamListpacks2, uncompressed: a 1-byte length).
size_t StreamNodes(const std::vector<std::vector<StreamField>>& entries, size_t max_node_bytes) {
  Stream stream;
  uint64_t seq = 0;
  for (const auto& fields : entries) stream.Append(StreamId{1, ++seq}, fields);
  KeyEntry* entry = KeyEntry::Make("st", EntryValue::Object(new StreamObject(std::move(stream))));
  RdbWriteOptions options;
  options.compress = false;
  options.limits.stream.max_node_bytes = max_node_bytes;
  options.limits.stream.max_node_entries = 100;
  RdbOutput out;
  RdbAppendValue(&out, *entry, options);
  KeyEntry::Destroy(entry);
  EXPECT_EQ(static_cast<uint8_t>(out.bytes[0]), rdb::kTypeStreamListpacks2);
  return static_cast<uint8_t>(out.bytes[1]);
}

TEST(RdbValue, StreamNodesAreCutWhereXaddOpensOne) {
  // XADD opens a node when the open node's listpack bytes plus the new entry's field and value
  // lengths reach stream-node-max-bytes. A node holding one entry {a: 1, b: 2} is 33 bytes.
  const std::vector<StreamField> small = {{"a", "1"}, {"b", "2"}};
  const std::string fits(164, 'v');     // 33 + 1 + 164 = 198
  const std::string reaches(166, 'v');  // 33 + 1 + 166 = 200
  EXPECT_EQ(StreamNodes({small, {{"f", fits}}}, 200), 1u);
  EXPECT_EQ(StreamNodes({small, {{"f", reaches}}}, 200), 2u);
  EXPECT_EQ(StreamNodes({small, {{"f", reaches}}}, 201), 1u);
}

}  // namespace
}  // namespace goblin
