// RdbWriter: Goblin's keyspace in Redis's RDB format, version 10 (what Redis 7.0 writes and every
// Redis 7 loads; 11 adds only the listpack set, which 7.0 refuses), or 12 (Redis 7.4's) when a
// hash has field deadlines. WriteRdbFile is what SAVE,
// BGSAVE and SHUTDOWN write with snapshot-format rdb and what --export-rdb writes;
// RdbAppendValue encodes one value, the body of a DUMP payload.
//
//   file   := "REDIS0010" (or "REDIS0012") aux* function* database* kOpEof crc
//   aux    := kOpAux name value            redis-ver, redis-bits, ctime, used-mem,
//                                          [repl-stream-db, repl-id, repl-offset], aof-base
//   function := kOpFunction2 code          (RdbAppendFunction, shared with FUNCTION DUMP)
//   database := kOpSelectDb index, kOpResizeDb keys keys-with-expiry, record*   (only those
//               holding keys)
//   record := [kOpExpireTimeMs deadline (i64 LE ms)] [kOpIdle seconds | kOpFreq counter (1 byte)]
//             value-type key value
//             (the idle time under an LRU policy, the LFU counter under an LFU one, as Redis)
//   crc    := CRC-64 of every byte before it, 8 bytes LE; 0 with rdbchecksum no
//   (numbers are RDB lengths, strings RdbAppendEncodedString: integers, LZF with rdbcompression)
//
// Each value is written in the form the loading Redis keeps it in under the encoding limits
// given (so it stays as it was written, and the file looks like one Redis wrote):
//   string  0   the bytes
//   list   18   quicklist-2: node count, then per node its container and bytes: 2 and a
//               listpack, filled as Redis 7.2's quicklist fills nodes under
//               list-max-listpack-size (an element joins a node while the node's bytes + its
//               length + 8 stay within the node limit, and, for a count, the node holds fewer
//               than the count); an element of quicklist_packed_threshold bytes or more alone,
//               container 1 and the bytes as they are
//   set    11   intset when every member is an integer and there are at most
//               set-max-intset-entries: [width u32 LE = 2, 4 or 8][count u32 LE][values LE,
//               ascending], the narrowest width holding them all
//           2   else: count, members
//   zset   17   listpack of member, score pairs in rank order when within zset-max-listpack-
//               entries and -value (scores as Redis 7.2's text; an integral one an integer)
//           5   else: count, then member and score (binary double LE) from the highest rank
//               down, Redis's order
//   hash   16   listpack of field, value pairs in the hash's order when within
//               hash-max-listpack-entries and -value
//           4   else: count, field, value
//          25   a hash with field deadlines that fits a listpack: the earliest deadline (8
//               bytes LE), then a listpack of field, value, deadline (unix ms, 0: none)
//               triplets, by deadline, those without one last, as Redis 7.4 keeps them
//          24   a larger one: the earliest deadline (8 bytes LE), count, then per field its
//               ttl (0: none, else deadline - earliest + 1), field, value
//               (a hash whose deadlines are all gone is written as 16 or 4: Redis 7.4 writes
//               the small one as 25, which only a version 12 reader takes)
//   stream 19   node count, then per node its master id (a 16-byte string: ms, seq big-endian)
//               and a listpack:
//                 master entry  live count, deleted count (0), field count, field names, 0
//                 entry         flags (2: same field names as the master), ms - master ms,
//                               seq - master seq, [field count, field, value ... | value ...],
//                               the entry's element count
//               holding the live entries, cut where XADD would open a node
//               (stream-node-max-bytes / -entries); then length, last id (ms, seq), first id,
//               max deleted id, entries added; groups: count, per group its name, last
//               delivered id, entries read (-1 is 2^64 - 1), the PEL (count, per entry its id
//               as 16 raw bytes, delivery time i64 LE ms, delivery count), the consumers
//               (count, per consumer its name, seen time i64 LE ms, its pending ids: count,
//               16 raw bytes each)
// Listpacks of over 1 GB (Redis's listpack safety limit) give way to the large forms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value_types.h"
#include "persist/saved_replication.h"
#include "persist/snapshot_writer.h"

namespace goblin {

class AccessClock;
class Database;
class KeyEntry;

inline constexpr std::string_view kRdbMagic = "REDIS0010";
// A file holding a hash with field deadlines (types 24 and 25) says version 12.
inline constexpr std::string_view kRdbMagicFieldExpiry = "REDIS0012";

// The RDB version a value written with this type byte needs: 12 for a hash with field
// deadlines, else 10.
uint16_t RdbVersionOfValueType(uint8_t type);

struct RdbWriteOptions {
  // Which access record each key gets, from maxmemory-policy, read from the stamps by clock.
  enum class AccessRecords { kNone, kIdle, kFreq };
  AccessRecords access_records = AccessRecords::kNone;
  const AccessClock* clock = nullptr;  // REQUIRES: set unless access_records is kNone
  EncodingLimits limits;
  bool compress = true;  // rdbcompression
  bool checksum = true;  // rdbchecksum
  // DEBUG QUICKLIST-PACKED-THRESHOLD: list elements this long get a plain node.
  uint64_t quicklist_packed_threshold = uint64_t{1} << 30;
  uint64_t used_memory = 0;  // the used-mem aux field
  int64_t key_save_delay_us = 0;  // rdb-key-save-delay: SleepPerKey's delay (file_util.h)
  // repl-stream-db, repl-id and repl-offset, written before aof-base when present (Redis
  // writes them whenever the server has a replication history).
  SavedReplication replication;
};

// Where the encoders put their bytes: appended to bytes. A writer that streams them to a file
// sets drain, which the encoders call between elements once bytes holds drain_at or more, and
// which must empty it.
struct RdbOutput {
  std::string bytes;
  std::function<void(std::string*)> drain;
  size_t drain_at = size_t{1} << 20;

  void Checkpoint() {
    if (drain && bytes.size() >= drain_at) drain(&bytes);
  }
};

// Appends entry's value-type byte and value (see the top of the file): what follows the key in
// a file's record, and the body of a DUMP payload (RdbAppendPayloadTrailer completes it).
void RdbAppendValue(RdbOutput* out, const KeyEntry& entry, const RdbWriteOptions& options);

// Writes the function libraries (their code) and the databases (index i of dbs is database i)
// as an RDB file at path, replacing it as ReplaceFile does. False with a message naming the file
// on any I/O error.
bool WriteRdbFile(const std::vector<const Database*>& dbs,
                  const std::vector<std::string_view>& libraries, const std::string& path,
                  int64_t now_ms, const RdbWriteOptions& options, SnapshotSaveStats* stats,
                  std::string* error);

// The same into an open file descriptor; no rename, no fsync.
bool WriteRdbToFd(const std::vector<const Database*>& dbs,
                  const std::vector<std::string_view>& libraries, int fd, int64_t now_ms,
                  const RdbWriteOptions& options, SnapshotSaveStats* stats, std::string* error);

}  // namespace goblin
