// LoadRdb: reads a Redis RDB file, versions 1 to 12 (Redis 1.0 to 7.4), into the databases, so
// that goblin-server starts on a Redis data directory (its dump.rdb, or the RDB base of its
// append-only directory). The values are rdb_reader.h's; around them:
//
//   file    := "REDIS" version (4 ASCII digits) record* kOpEof [crc]
//   record  := kOpAux name value                  logged (redis-ver, ctime, used-mem, ...)
//            | kOpSelectDb index                  keys that follow go to database index
//            | kOpResizeDb keys expires           the database's table is reserved for them
//            | kOpSlotInfo slot keys expires      7.4 cluster slot sizes: skipped
//            | kOpFunction2 code                  a function library (the caller loads them)
//            | kOpFunctionPreGa name engine has-description [description] code
//                                                 7.0 release candidates: "#!engine name=..."
//            | kOpModuleAux ...                   refused: Goblin loads no modules
//            | [kOpExpireTimeMs ms-i64-LE | kOpExpireTime s-i32-LE] [kOpIdle seconds]
//              [kOpFreq counter-u8] value-type key value
//   crc     := CRC-64 (core/crc64.h) of every byte before it, 8 bytes LE; 0 means the writer had
//              rdbchecksum no, and is accepted as Redis accepts it. Versions before 5 have none.
//   (numbers are RDB lengths, strings RDB strings: rdb_string.h)
//
// As the snapshot loader, it trusts no byte: the first problem stops the load with
// "<file>: offset <n>: <what>", and the caller discards whatever was loaded. A key twice in a
// database and a database index the server does not have are errors; an empty collection is
// skipped (and counted), as Redis skips it; keys whose deadline has passed are skipped as Redis
// does on a master, except in an append-only file's base, which Redis loads whole.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/value_types.h"

namespace goblin {

class Database;

// The newest RDB version read (Redis 7.4's).
inline constexpr uint32_t kRdbFileVersionRead = 12;

// Whether a file that starts with head is an RDB file (rather than a Goblin snapshot).
inline bool IsRdbFile(std::string_view head) { return head.substr(0, 5) == "REDIS"; }

// What a record said about its key's use, for the access clock (OBJECT IDLETIME / FREQ).
struct RdbKeyAccess {
  std::optional<uint64_t> idle_seconds;  // kOpIdle: seconds since last use (maxmemory-policy LRU)
  std::optional<uint8_t> frequency;      // kOpFreq: the logarithmic use counter (LFU)
};

struct RdbLoadOptions {
  EncodingLimits limits;
  int64_t now_ms = 0;
  // Skip keys whose deadline is before now_ms (false for an append-only file's base).
  bool skip_expired = true;
  // Name the skipped keys in RdbLoadStats::expired_names (a master's startup load: their
  // deletions continue its replicas' history).
  bool name_expired = false;
  // Redis's key-load-delay, for tests: SleepPerKey's delay (file_util.h), read before each key
  // so that a CONFIG SET during the load takes effect at once, as in Redis. Null: none.
  const int64_t* key_load_delay_us = nullptr;
  // DEBUG SET-SKIP-CHECKSUM-VALIDATION 1: the file's CRC-64 is not compared with its bytes.
  bool verify_checksum = true;
  // An old-style append-only file: commands may follow the RDB part (its "preamble"), which
  // then ends at stats->bytes rather than at the end of data.
  bool commands_may_follow = false;
  // DEBUG RELOAD MERGE: a key already in the database is replaced by the file's (else the
  // load fails on it).
  bool replace_existing = false;
  // Called every few thousand keys and after every big key: (bytes done, keys done); returning
  // false stops the load (it then fails, "interrupted by a shutdown").
  std::function<bool(uint64_t bytes, uint64_t keys)> progress;
  // Called after each key is stored whose record had kOpIdle or kOpFreq.
  std::function<void(size_t db, std::string_view key, const RdbKeyAccess& access)> key_access;
};

struct RdbLoadStats {
  uint32_t version = 0;
  uint64_t keys_read = 0;     // keys stored
  uint64_t keys_expired = 0;  // skipped because their deadline had passed
  uint64_t keys_empty = 0;    // skipped because their collection was empty
  uint64_t bytes = 0;         // the RDB part's length (all of data, unless commands_may_follow)
  bool checksum_verified = false;  // false: none in the file (version < 5, or written as 0)
  std::vector<std::pair<std::string, std::string>> aux;  // kOpAux fields, in file order
  std::vector<std::string> libraries;                    // function libraries' code, in file order
  std::vector<std::pair<int, std::string>> expired_names;  // (db, key) with name_expired
  // The aux field name's value, or "".
  std::string Aux(std::string_view name) const;
};

// Adds every key of the RDB file in data to dbs[index] (dbs.size() is the configured database
// count; the databases should be empty). file_name is only used in messages.
bool LoadRdb(const std::string& file_name, std::string_view data, const std::vector<Database*>& dbs,
             const RdbLoadOptions& options, RdbLoadStats* stats, std::string* error);

// Maps path and loads it. A missing file is reported through *missing (false, no error).
bool LoadRdbFile(const std::string& path, const std::vector<Database*>& dbs,
                 const RdbLoadOptions& options, RdbLoadStats* stats, bool* missing,
                 std::string* error);

}  // namespace goblin
