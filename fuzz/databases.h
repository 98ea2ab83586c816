// What the file-loader targets share: the databases a file loads into, and the round trip a
// loaded file must survive (saved through a writer, loaded again, the same keys in each).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "fuzz_support.h"
#include "keyspace/database.h"
#include "persist/snapshot_writer.h"

namespace goblin::fuzz {

// Few databases: a file that names more is refused early, which is a path worth taking too.
inline constexpr size_t kDatabases = 4;
// Keys whose deadline is before this are skipped as expired.
inline constexpr int64_t kNowMs = 1700000000000;

struct Databases {
  std::vector<Database> storage{kDatabases};

  std::vector<Database*> Pointers() {
    std::vector<Database*> out;
    for (Database& db : storage) out.push_back(&db);
    return out;
  }
  std::vector<const Database*> ConstPointers() const {
    std::vector<const Database*> out;
    for (const Database& db : storage) out.push_back(&db);
    return out;
  }
};

// Runs write(fd, &stats) on an in-memory file and returns the bytes it wrote. The writers
// take a file descriptor; the fuzzer should not touch the disk.
template <typename Write>
std::string WrittenBytes(Write write) {
  const int fd = memfd_create("fuzz-save", 0);
  FUZZ_CHECK(fd >= 0);
  SnapshotSaveStats stats;
  FUZZ_CHECK(write(fd, &stats));
  std::string file(stats.bytes, '\0');
  FUZZ_CHECK(pread(fd, file.data(), file.size(), 0) == static_cast<ssize_t>(file.size()));
  close(fd);
  return file;
}

inline void CheckSameKeyCounts(const Databases& first, const Databases& second) {
  for (size_t i = 0; i < kDatabases; ++i) {
    FUZZ_CHECK(first.storage[i].size() == second.storage[i].size());
  }
}

}  // namespace goblin::fuzz
