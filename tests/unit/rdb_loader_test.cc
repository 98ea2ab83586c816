// Tests of LoadRdb (persist/rdb_loader.h): the file's frame (magic, versions, aux fields,
// databases, expiries in seconds and milliseconds, LRU and LFU records, functions in both
// records, slot information, module data, the checksum) on files built byte by byte, and
// hostile files: a file cut at every byte and files with seeded bit flips (checksum off, so the
// damage reaches the decoder) give an error naming the offset or load structures whose
// invariants hold, never a crash.

#include "persist/rdb_loader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/crc64.h"
#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/list_object.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/zset_object.h"
#include "keyspace/database.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"
#include "rdb_test_support.h"

namespace goblin {
namespace {

using rdb_test::Le;
using rdb_test::Len;
using rdb_test::Str;

std::string Op(uint8_t op) { return rdb_test::Byte(op); }

// "REDIS" + version + body + EOF, with the CRC-64 for versions from 5 (0 when !checksum).
std::string File(std::string_view body, int version = 10, bool checksum = true) {
  char head[16];
  std::snprintf(head, sizeof(head), "REDIS%04d", version);
  std::string out = std::string(head) + std::string(body) + Op(rdb::kOpEof);
  if (version >= 5) out += Le(checksum ? Crc64(0, out) : 0, 8);
  return out;
}

// A set of databases to load into.
struct Databases {
  std::vector<Database> storage;
  std::vector<Database*> dbs;
  explicit Databases(size_t n = 16) : storage(n) {
    for (Database& db : storage) dbs.push_back(&db);
  }
  Database& operator[](size_t i) { return storage[i]; }
};

struct Loaded {
  bool ok;
  std::string error;
  RdbLoadStats stats;
};

Loaded Load(const std::string& file, Databases& dbs, RdbLoadOptions options = {}) {
  Loaded loaded;
  loaded.ok = LoadRdb("test.rdb", file, dbs.dbs, options, &loaded.stats, &loaded.error);
  if (!loaded.ok) {
    EXPECT_EQ(loaded.error.rfind("test.rdb: offset ", 0), 0u) << loaded.error;
  }
  return loaded;
}

std::string StringAt(Database& db, std::string_view key) {
  const KeyEntry* entry = db.Find(key, 0);
  if (entry == nullptr) return "(none)";
  char scratch[kInt64TextMax];
  return std::string(entry->string_value(scratch));
}

TEST(RdbLoader, AuxDatabasesAndExpiries) {
  const std::string body =
      Op(rdb::kOpAux) + Str("redis-ver") + Str("7.0.15") + Op(rdb::kOpAux) + Str("ctime") +
      Str("1700000000") + Op(rdb::kOpSelectDb) + Len(0) + Op(rdb::kOpResizeDb) + Len(2) + Len(1) +
      Op(rdb::kTypeString) + Str("a") + Str("1") + Op(rdb::kOpExpireTimeMs) + Le(5000000000000, 8) +
      Op(rdb::kTypeString) + Str("b") + Str("two") + Op(rdb::kOpSelectDb) + Len(7) +
      Op(rdb::kOpExpireTime) + Le(2000000000, 4) + Op(rdb::kTypeString) + Str("c") + Str("three");
  Databases dbs;
  const Loaded loaded = Load(File(body), dbs);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.version, 10u);
  EXPECT_EQ(loaded.stats.keys_read, 3u);
  EXPECT_TRUE(loaded.stats.checksum_verified);
  EXPECT_EQ(loaded.stats.Aux("redis-ver"), "7.0.15");
  EXPECT_EQ(loaded.stats.Aux("ctime"), "1700000000");
  EXPECT_EQ(StringAt(dbs[0], "a"), "1");
  EXPECT_EQ(dbs[0].Find("a", 0)->string_encoding(), StringEncoding::kInt);
  EXPECT_EQ(dbs[0].Find("b", 0)->expire_ms(), 5000000000000);
  EXPECT_EQ(StringAt(dbs[7], "c"), "three");
  EXPECT_EQ(dbs[7].Find("c", 0)->expire_ms(), int64_t{2000000000} * 1000);
  EXPECT_EQ(dbs[0].size(), 2u);
}

TEST(RdbLoader, CommandsMayFollowAnOldStyleAofPreamble) {
  const std::string rdb = File(Op(rdb::kTypeString) + Str("k") + Str("v"));
  const std::string tail = "*1\r\n$4\r\nPING\r\n";
  Databases dbs;
  EXPECT_FALSE(Load(rdb + tail, dbs).ok);  // a plain RDB file ends at its checksum

  RdbLoadOptions options;
  options.commands_may_follow = true;
  Databases preamble;
  const Loaded loaded = Load(rdb + tail, preamble, options);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.bytes, rdb.size());
  EXPECT_TRUE(loaded.stats.checksum_verified);
  EXPECT_EQ(StringAt(preamble[0], "k"), "v");
}

TEST(RdbLoader, ExpiredKeysAreSkippedUnlessTheFileIsAnAofBase) {
  const std::string body = Op(rdb::kOpExpireTimeMs) + Le(1000, 8) + Op(rdb::kTypeString) +
                           Str("old") + Str("x") + Op(rdb::kOpExpireTimeMs) + Le(3000, 8) +
                           Op(rdb::kTypeString) + Str("new") + Str("y");
  RdbLoadOptions options;
  options.now_ms = 2000;
  Databases dbs;
  Loaded loaded = Load(File(body), dbs, options);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.keys_read, 1u);
  EXPECT_EQ(loaded.stats.keys_expired, 1u);
  EXPECT_EQ(StringAt(dbs[0], "old"), "(none)");
  EXPECT_EQ(StringAt(dbs[0], "new"), "y");
  options.skip_expired = false;
  Databases base;
  loaded = Load(File(body), base, options);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.keys_read, 2u);
  EXPECT_EQ(base[0].size(), 2u);
}

TEST(RdbLoader, IdleAndFrequencyReachTheCaller) {
  const std::string body = Op(rdb::kOpIdle) + Len(3600) + Op(rdb::kTypeString) + Str("lru") +
                           Str("v") + Op(rdb::kOpFreq) + std::string(1, '\x07') +
                           Op(rdb::kTypeString) + Str("lfu") + Str("v") + Op(rdb::kTypeString) +
                           Str("plain") + Str("v");
  std::vector<std::string> seen;
  RdbLoadOptions options;
  options.key_access = [&](size_t db, std::string_view key, const RdbKeyAccess& access) {
    seen.push_back(std::to_string(db) + " " + std::string(key) + " " +
                   (access.idle_seconds ? std::to_string(*access.idle_seconds) : "-") + " " +
                   (access.frequency ? std::to_string(*access.frequency) : "-"));
  };
  Databases dbs;
  const Loaded loaded = Load(File(body), dbs, options);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(seen, (std::vector<std::string>{"0 lru 3600 -", "0 lfu - 7"}));
}

TEST(RdbLoader, FunctionsInBothRecordsAndSlotInfo) {
  const std::string code = "#!lua name=lib\nredis.register_function('f', function() end)";
  const std::string body =
      Op(rdb::kOpFunction2) + Str(code) + Op(rdb::kOpFunctionPreGa) + Str("old") + Str("LUA") +
      Len(1) + Str("a description") + Str("redis.register_function('g', function() end)") +
      Op(rdb::kOpSlotInfo) + Len(5) + Len(1) + Len(0) + Op(rdb::kTypeString) + Str("k") + Str("v");
  Databases dbs;
  const Loaded loaded = Load(File(body, 12), dbs);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  ASSERT_EQ(loaded.stats.libraries.size(), 2u);
  EXPECT_EQ(loaded.stats.libraries[0], code);
  EXPECT_EQ(loaded.stats.libraries[1],
            "#!LUA name=old\nredis.register_function('g', function() end)");
  EXPECT_EQ(StringAt(dbs[0], "k"), "v");
}

TEST(RdbLoader, VersionsAndChecksums) {
  const std::string body = Op(rdb::kTypeString) + Str("k") + Str("v");
  Databases a;
  // Before version 5 there is no checksum.
  Loaded loaded = Load(File(body, 4), a);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_FALSE(loaded.stats.checksum_verified);
  // A zero checksum is accepted, as Redis accepts a file written with rdbchecksum no.
  Databases b;
  loaded = Load(File(body, 9, /*checksum=*/false), b);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_FALSE(loaded.stats.checksum_verified);
  std::string wrong = File(body);
  wrong.back() ^= 1;
  Databases c;
  loaded = Load(wrong, c);
  EXPECT_FALSE(loaded.ok);
  EXPECT_NE(loaded.error.find("checksum mismatch"), std::string::npos) << loaded.error;
  for (const auto& [file, what] : std::vector<std::pair<std::string, std::string>>{
           {File(body, 13), "RDB format version 13 is not supported"},
           {File(body, 0), "RDB format version 0 is not supported"},
           {"REDIS00x1" + body, "not four digits"},
           {"REDIS", "truncated"},
           {"GOBLNSNP", "not an RDB file"},
           {File(body) + "x", "bytes after the end"},
           {File(body).substr(0, File(body).size() - 3), "checksum"}}) {
    Databases dbs;
    loaded = Load(file, dbs);
    EXPECT_FALSE(loaded.ok) << what;
    EXPECT_NE(loaded.error.find(what), std::string::npos) << loaded.error;
  }
}

TEST(RdbLoader, RefusalsNameTheProblem) {
  struct Case {
    std::string body;
    std::string what;
  };
  const std::vector<Case> cases = {
      {Op(rdb::kOpSelectDb) + Len(16), "database 16 is out of range (the server has 16 databases"},
      {Op(rdb::kTypeString) + Str("k") + Str("1") + Op(rdb::kTypeString) + Str("k") + Str("2"),
       "key 'k' appears twice in database 0"},
      {Op(rdb::kOpModuleAux) + Len(uint64_t{12345} << 10), "Goblin loads no modules"},
      {Op(8) + Str("k"), "unknown record type 8"},
      {Op(rdb::kTypeSet) + Str("k") + Len(2) + Str("a") + Str("a"),
       "key 'k': a set member appears twice"},
  };
  for (const Case& c : cases) {
    Databases dbs;
    const Loaded loaded = Load(File(c.body), dbs);
    EXPECT_FALSE(loaded.ok) << c.what;
    EXPECT_NE(loaded.error.find(c.what), std::string::npos) << loaded.error;
  }
  Databases dbs;
  const Loaded cut = Load("REDIS0010" + Op(rdb::kOpExpireTimeMs) + Le(1, 4), dbs);
  EXPECT_EQ(cut.error, "test.rdb: offset 10: truncated: the file ends inside an expiry");
}

TEST(RdbLoader, EmptyCollectionsAreSkippedAndCounted) {
  const std::string body = Op(rdb::kTypeSet) + Str("empty") + Len(0) + Op(rdb::kTypeList) +
                           Str("list") + Len(1) + Str("x");
  Databases dbs;
  const Loaded loaded = Load(File(body), dbs);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.keys_empty, 1u);
  EXPECT_EQ(loaded.stats.keys_read, 1u);
  EXPECT_EQ(dbs[0].size(), 1u);
}

TEST(RdbLoader, ProgressCanStopTheLoad) {
  std::string body;
  for (int i = 0; i < 3000; ++i)
    body += Op(rdb::kTypeString) + Str("k" + std::to_string(i)) + Str("v");
  RdbLoadOptions options;
  uint64_t calls = 0;
  options.progress = [&](uint64_t, uint64_t keys) {
    ++calls;
    return keys < 2048;
  };
  Databases dbs;
  const Loaded loaded = Load(File(body), dbs, options);
  EXPECT_FALSE(loaded.ok);
  EXPECT_NE(loaded.error.find("interrupted"), std::string::npos) << loaded.error;
  EXPECT_EQ(calls, 2u);
}

// ---- hostile files -----------------------------------------------------------------------

// A file of every type and form, as Goblin's writer writes it (with or without a checksum).
std::string EveryType(bool checksum) {
  EncodingLimits limits;
  Database db;
  db.Put("str", EntryValue::String("hello"), std::nullopt);
  db.Put("int", EntryValue::Integer(-77), 4000000000000);
  db.Put("long", EntryValue::String(std::string(300, 'z')), std::nullopt);
  PackedList list;
  for (int i = 0; i < 40; ++i)
    list.PushBack(i % 3 ? "e" + std::to_string(i) : std::to_string(i), limits.list);
  db.Put("list", EntryValue::Object(new ListObject(std::move(list))), std::nullopt);
  PackedSet ints, text, big;
  for (int i = 0; i < 10; ++i) ints.Add(std::to_string(i * 1000), limits.set);
  for (int i = 0; i < 10; ++i) text.Add("m" + std::to_string(i), limits.set);
  for (int i = 0; i < 200; ++i) big.Add("b" + std::to_string(i), limits.set);
  db.Put("ints", EntryValue::Object(new SetObject(std::move(ints))), std::nullopt);
  db.Put("text", EntryValue::Object(new SetObject(std::move(text))), std::nullopt);
  db.Put("bigset", EntryValue::Object(new SetObject(std::move(big))), std::nullopt);
  SortedSet small_z, big_z;
  for (int i = 0; i < 10; ++i)
    ZsetObject::Insert(small_z, i * 0.5, "z" + std::to_string(i), limits.zset);
  for (int i = 0; i < 200; ++i) ZsetObject::Insert(big_z, i, "Z" + std::to_string(i), limits.zset);
  db.Put("zsmall", EntryValue::Object(new ZsetObject(std::move(small_z))), std::nullopt);
  db.Put("zbig", EntryValue::Object(new ZsetObject(std::move(big_z))), std::nullopt);
  PackedHash small_h, big_h;
  for (int i = 0; i < 10; ++i) small_h.Set("f" + std::to_string(i), std::to_string(i), limits.hash);
  for (int i = 0; i < 200; ++i) big_h.Set("F" + std::to_string(i), "v", limits.hash);
  db.Put("hsmall", EntryValue::Object(new HashObject(std::move(small_h))), std::nullopt);
  db.Put("hbig", EntryValue::Object(new HashObject(std::move(big_h))), std::nullopt);
  auto* stream = new StreamObject();
  for (uint64_t i = 1; i <= 30; ++i) {
    const std::string value = "v" + std::to_string(i);
    const std::vector<StreamField> fields = {{"f", value}};
    stream->stream().Append({i, i % 2}, fields);
  }
  ConsumerGroup* group = stream->EnsureGroups().Create("g", {10, 0}, 10);
  group->Deliver("alice", {3, 1}, 1000);
  group->Deliver("bob", {4, 0}, 2000);
  db.Put("stream", EntryValue::Object(stream), std::nullopt);
  RdbWriteOptions options;
  options.checksum = checksum;
  SnapshotSaveStats stats;
  return rdb_test::WrittenRdb({&db}, options, &stats);
}

// Every loaded value's structure is sound.
void ExpectSound(Databases& dbs) {
  for (Database& db : dbs.storage) {
    db.ForEach([&](const KeyEntry* entry) { rdb_test::ExpectSound(*entry); });
  }
}

TEST(RdbLoaderDamage, EveryTypeLoads) {
  Databases dbs;
  const Loaded loaded = Load(EveryType(true), dbs);
  ASSERT_TRUE(loaded.ok) << loaded.error;
  EXPECT_EQ(loaded.stats.keys_read, 12u);
  ExpectSound(dbs);
}

TEST(RdbLoaderDamage, CutAtEveryByteIsRefused) {
  for (bool checksum : {true, false}) {
    const std::string file = EveryType(checksum);
    for (size_t cut = 0; cut < file.size(); ++cut) {
      Databases dbs;
      const Loaded loaded = Load(file.substr(0, cut), dbs);
      EXPECT_FALSE(loaded.ok) << "cut at " << cut;
    }
  }
}

TEST(RdbLoaderDamage, FlippedBitsAreRefusedByTheChecksum) {
  const std::string file = EveryType(true);
  std::mt19937_64 random(77);
  for (int i = 0; i < 400; ++i) {
    std::string damaged = file;
    const size_t at = random() % (file.size() - 9);  // the checksum's own bytes aside
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << (random() % 8)));
    Databases dbs;
    const Loaded loaded = Load(damaged, dbs);
    EXPECT_FALSE(loaded.ok) << "flip at " << at;
  }
}

TEST(RdbLoaderDamage, FlippedBytesWithoutChecksumNeverCrash) {
  // Without a checksum the decoder meets the damage itself: it refuses it, or the flip left a
  // file that decodes (a changed string byte), whose structures must be sound.
  const std::string file = EveryType(false);
  std::mt19937_64 random(1234);
  size_t refused = 0;
  const int rounds = 3000;
  for (int i = 0; i < rounds; ++i) {
    std::string damaged = file;
    for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips) {
      const size_t at = 9 + random() % (file.size() - 9);
      damaged[at] = static_cast<char>(random());
    }
    Databases dbs;
    const Loaded loaded = Load(damaged, dbs);
    if (!loaded.ok) {
      ++refused;
      continue;
    }
    ExpectSound(dbs);
  }
  EXPECT_GT(refused, static_cast<size_t>(rounds / 4));
}

}  // namespace
}  // namespace goblin
