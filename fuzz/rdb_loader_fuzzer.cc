// The RDB loader (persist/rdb_loader.h) and through it every value decoder of
// persist/rdb_reader.h: a Redis data file from a machine nobody vouches for.
//
// The trailing CRC-64 would stop almost every mutation at the end of the file, and a CRC of 0
// means "written with rdbchecksum no", which the loader accepts as Redis does: when the byte
// before the last eight is the EOF opcode the target zeroes those eight, so the damage reaches
// the decoders. (The checksum itself is tested in tests/unit/rdb_loader_test.cc.)
//
// A file that loads must save again as RDB, and that file must load to the same key counts.
#include <string>
#include <vector>

#include "databases.h"
#include "fuzz_support.h"
#include "persist/rdb_format.h"
#include "persist/rdb_loader.h"
#include "persist/rdb_writer.h"

namespace {

using goblin::fuzz::kNowMs;

struct Loaded {
  goblin::fuzz::Databases databases;
  goblin::RdbLoadStats stats;
  bool ok = false;

  explicit Loaded(std::string_view file) {
    goblin::RdbLoadOptions options;
    options.now_ms = kNowMs;
    std::string error;
    ok = goblin::LoadRdb("fuzz.rdb", file, databases.Pointers(), options, &stats, &error);
    FUZZ_CHECK(ok == error.empty());
  }

  std::string Save() const {
    const std::vector<std::string_view> code(stats.libraries.begin(), stats.libraries.end());
    return goblin::fuzz::WrittenBytes([&](int fd, goblin::SnapshotSaveStats* saved) {
      std::string error;
      return goblin::WriteRdbToFd(databases.ConstPointers(), code, fd, kNowMs,
                                  goblin::RdbWriteOptions{}, saved, &error);
    });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  if (size >= 9 && static_cast<uint8_t>(file[size - 9]) == goblin::rdb::kOpEof) {
    file.replace(size - 8, 8, 8, '\0');
  }
  const Loaded first(file);
  if (!first.ok) return 0;
  const Loaded second(first.Save());
  FUZZ_CHECK(second.ok);
  goblin::fuzz::CheckSameKeyCounts(first.databases, second.databases);
  FUZZ_CHECK(first.stats.libraries == second.stats.libraries);
  return 0;
}
