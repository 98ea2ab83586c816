// Redis's RDB format: the numbers that name its records and value types. The reader
// (rdb_reader.h) and the writer (rdb_writer.h) share them; lengths and strings are in
// rdb_string.h.
//
//   file:    "REDIS" + 4 ASCII digits of version, then records, then kOpEof and the CRC-64 of
//            everything before it (8 bytes, little-endian; zero when written with
//            rdbchecksum no)
//   record:  an opcode below, or a key: [expiry opcode + deadline] [kOpIdle/kOpFreq]
//            value-type byte, key string, value
#pragma once

#include <cstdint>

namespace goblin::rdb {

// Opcodes, in the byte where a value type would otherwise be.
inline constexpr uint8_t kOpSlotInfo = 244;       // 7.4, cluster slot sizes
inline constexpr uint8_t kOpFunction2 = 245;      // a function library's code
inline constexpr uint8_t kOpFunctionPreGa = 246;  // 7.0 release candidates
inline constexpr uint8_t kOpModuleAux = 247;
inline constexpr uint8_t kOpIdle = 248;          // LRU idle seconds of the next key
inline constexpr uint8_t kOpFreq = 249;          // LFU counter of the next key (one byte)
inline constexpr uint8_t kOpAux = 250;           // name string, value string
inline constexpr uint8_t kOpResizeDb = 251;      // key count, keys-with-expiry count
inline constexpr uint8_t kOpExpireTimeMs = 252;  // 8 bytes, little-endian, milliseconds
inline constexpr uint8_t kOpExpireTime = 253;    // 4 bytes, little-endian, seconds
inline constexpr uint8_t kOpSelectDb = 254;
inline constexpr uint8_t kOpEof = 255;

// Value types.
inline constexpr uint8_t kTypeString = 0;
inline constexpr uint8_t kTypeList = 1;   // linked list of strings (before 3.2)
inline constexpr uint8_t kTypeSet = 2;    // hashtable: count, members
inline constexpr uint8_t kTypeZset = 3;   // count, member, score as text
inline constexpr uint8_t kTypeHash = 4;   // hashtable: count, field, value
inline constexpr uint8_t kTypeZset2 = 5;  // count, member, score as a binary double
inline constexpr uint8_t kTypeModulePreGa = 6;
inline constexpr uint8_t kTypeModule2 = 7;
inline constexpr uint8_t kTypeHashZipmap = 9;
inline constexpr uint8_t kTypeListZiplist = 10;
inline constexpr uint8_t kTypeSetIntset = 11;
inline constexpr uint8_t kTypeZsetZiplist = 12;
inline constexpr uint8_t kTypeHashZiplist = 13;
inline constexpr uint8_t kTypeListQuicklist = 14;  // nodes of ziplists (3.2 to 6.2)
inline constexpr uint8_t kTypeStreamListpacks = 15;
inline constexpr uint8_t kTypeHashListpack = 16;
inline constexpr uint8_t kTypeZsetListpack = 17;
inline constexpr uint8_t kTypeListQuicklist2 = 18;     // nodes of listpacks, plain or packed
inline constexpr uint8_t kTypeStreamListpacks2 = 19;   // 7.0: adds first id, max deleted, added
inline constexpr uint8_t kTypeSetListpack = 20;        // 7.2
inline constexpr uint8_t kTypeStreamListpacks3 = 21;   // 7.2: adds consumers' active time
inline constexpr uint8_t kTypeHashMetadataPreGa = 22;  // 7.4: hashes with field expiry
inline constexpr uint8_t kTypeHashListpackExPreGa = 23;
inline constexpr uint8_t kTypeHashMetadata = 24;
inline constexpr uint8_t kTypeHashListpackEx = 25;

// A quicklist-2 node's container.
inline constexpr uint8_t kQuicklistNodePlain = 1;
inline constexpr uint8_t kQuicklistNodePacked = 2;

}  // namespace goblin::rdb
