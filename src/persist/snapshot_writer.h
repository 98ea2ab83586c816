// SnapshotWriter: writes the keyspace as a Goblin snapshot (snapshot_format.h).
//
// The packed structures are written as they lie: a sorted set's leaf runs, a hash's or set's
// Dump bytes, so saving is mostly copying. WriteSnapshotFile is what SAVE, BGSAVE's child and
// SHUTDOWN call: it writes `<path>.tmp-<pid>`, fsyncs it, renames it over `path` and fsyncs
// the directory, so a crash at any moment leaves the previous snapshot whole.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "persist/saved_replication.h"

namespace goblin {

class Database;

struct SnapshotSaveStats {
  uint64_t keys = 0;
  uint64_t bytes = 0;  // file size
};

// Writes the function libraries (their code) and the databases (index i of dbs is database
// i) to `path`, with the replication history when replication has one (a version 2 file; else
// version 1). Returns false with a message naming the file on any I/O error; the previous
// file at `path` is then untouched, except when only the final directory fsync fails (the new
// file is in place by then). key_save_delay_us: SleepPerKey's delay (rdb-key-save-delay).
bool WriteSnapshotFile(const std::vector<const Database*>& dbs,
                       const std::vector<std::string_view>& libraries, const std::string& path,
                       int64_t now_ms, SnapshotSaveStats* stats, std::string* error,
                       const SavedReplication& replication = {}, int64_t key_save_delay_us = 0);

// The same into an already open file descriptor (the AOF base, tests); no rename, no fsync.
bool WriteSnapshotToFd(const std::vector<const Database*>& dbs,
                       const std::vector<std::string_view>& libraries, int fd, int64_t now_ms,
                       SnapshotSaveStats* stats, std::string* error,
                       const SavedReplication& replication = {}, int64_t key_save_delay_us = 0);

}  // namespace goblin
