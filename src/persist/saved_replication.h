// The replication history a snapshot carries: Redis's repl-stream-db, repl-id and repl-offset
// RDB aux fields, and the 'R' section of a Goblin snapshot (snapshot_format.h). A replica
// restarted from such a file asks its master to continue the history from offset + 1.
#pragma once

#include <cstdint>
#include <string>

namespace goblin {

struct SavedReplication {
  std::string replid;  // empty: the file carries no history
  uint64_t offset = 0;
  int stream_db = 0;  // the database the stream selected last
  bool present() const { return !replid.empty(); }
};

}  // namespace goblin
