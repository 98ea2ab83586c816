// SnapshotLoader: reads a Goblin snapshot (snapshot_format.h) into the databases.
//
// Every byte is checked before it is trusted: section checks and the end chain, lengths
// against what remains, counts against what follows, sorted-set order, duplicate keys. The
// first problem stops the load with "<file>: offset <n>: <what>"; the caller then discards
// whatever was loaded (startup exits; DEBUG RELOAD leaves an empty keyspace), so a file is
// never half-loaded in silence.
//
// Collections take the form Redis would give them under the limits in force now, as Redis's
// RDB loader does: a set dumped large that now fits a listpack loads as one, and the reverse.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/value_types.h"
#include "persist/saved_replication.h"

namespace goblin {

class Database;

struct SnapshotSection {
  uint64_t offset;
  uint64_t length;  // the whole section, head and check included
  char kind;
};

struct SnapshotLoadStats {
  uint64_t keys_read = 0;     // records in the file
  uint64_t keys_expired = 0;  // records skipped because their deadline had passed
  uint64_t bytes = 0;
  int64_t created_ms = 0;
  std::string creator;
  std::vector<std::string> libraries;  // the function libraries' code, in file order
  SavedReplication replication;        // the 'R' section's, when the file has one
  std::vector<std::pair<int, std::string>> expired_names;  // (db, key) with set_name_expired
};

class SnapshotLoader {
 public:
  // Called every few thousand keys and after every big key: (bytes done, keys done); returning
  // false stops the load (it then fails, "interrupted by a shutdown").
  using Progress = std::function<bool(uint64_t bytes, uint64_t keys)>;

  // file_name is only used in messages; data is the whole file.
  SnapshotLoader(std::string file_name, std::string_view data, const EncodingLimits& limits)
      : file_name_(std::move(file_name)), data_(data), limits_(limits) {}

  // Adds every key to dbs[index] (dbs.size() is the configured database count; the databases
  // should be empty). Keys whose deadline is at or before now_ms are skipped, as Redis skips
  // them. *key_load_delay_us, read before each key, is Redis's key-load-delay (SleepPerKey,
  // file_util.h; for tests); null for none.
  bool Load(const std::vector<Database*>& dbs, int64_t now_ms, const Progress& progress,
            const int64_t* key_load_delay_us, std::string* error);

  // DEBUG RELOAD MERGE: a key already in a database is replaced by the file's, where it would
  // otherwise fail the load.
  void set_replace_existing(bool replace) { replace_existing_ = replace; }
  // Name the keys skipped for their deadlines in the stats (a master's startup load).
  void set_name_expired(bool name) { name_expired_ = name; }

  const SnapshotLoadStats& stats() const { return stats_; }
  // Every section read, in file order (the check tool lists them).
  const std::vector<SnapshotSection>& sections() const { return sections_; }

 private:
  std::string file_name_;
  std::string_view data_;
  EncodingLimits limits_;
  bool replace_existing_ = false;
  bool name_expired_ = false;
  SnapshotLoadStats stats_;
  std::vector<SnapshotSection> sections_;
};

// Maps a snapshot file and loads it (reading through mmap). Reports a missing file through
// *missing (and returns false with no error) so startup can tell "no snapshot" from "bad".
bool LoadSnapshotFile(const std::string& path, const std::vector<Database*>& dbs,
                      const EncodingLimits& limits, int64_t now_ms,
                      const SnapshotLoader::Progress& progress, const int64_t* key_load_delay_us,
                      SnapshotLoadStats* stats, std::vector<SnapshotSection>* sections,
                      bool* missing, std::string* error);

}  // namespace goblin
