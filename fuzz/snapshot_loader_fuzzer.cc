// Goblin's snapshot loader (persist/snapshot_loader.h) on a damaged or hostile file.
//
// Every section carries an XXH3 check and the end section a chain of them, so random bytes
// would rarely get past the first check. The target recomputes them before loading: each
// section's check over its bytes as they stand, and the end section's chain over the checks
// before it, so the mutations reach the decoders behind them. (The checks themselves are
// tested in tests/unit/snapshot_test.cc.)
//
// A file that loads must save again, and the saved file must load to the same key counts.
#include <xxhash.h>

#include <string>
#include <vector>

#include "databases.h"
#include "fuzz_support.h"
#include "persist/snapshot_format.h"
#include "persist/snapshot_loader.h"
#include "persist/snapshot_writer.h"

namespace {

using goblin::fuzz::kNowMs;
namespace snapshot = goblin::snapshot;

void PutLe(std::string* file, size_t at, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) (*file)[at + i] = static_cast<char>(value >> (8 * i));
}

// Rewrites the section checks and the end section's chain of file so they match its bytes.
void FixChecks(std::string* file) {
  size_t pos = snapshot::kMagic.size();
  std::string chain;
  while (file->size() >= pos + snapshot::kSectionOverhead) {
    uint64_t length = 0;
    for (int i = 0; i < 8; ++i) {
      length |= uint64_t{static_cast<uint8_t>((*file)[pos + 1 + i])} << (8 * i);
    }
    const size_t body_at = pos + snapshot::kSectionHead;
    if (length > file->size() - body_at - snapshot::kSectionTail) return;
    const bool end = (*file)[pos] == static_cast<char>(snapshot::SectionKind::kEnd);
    if (end && length >= 8) {
      PutLe(file, body_at + length - 8, XXH3_64bits(chain.data(), chain.size()), 8);
    }
    const size_t check_at = body_at + length;
    PutLe(file, check_at,
          static_cast<uint32_t>(XXH3_64bits(file->data() + pos, snapshot::kSectionHead + length)),
          4);
    chain.append(*file, check_at, snapshot::kSectionTail);
    pos = check_at + snapshot::kSectionTail;
  }
}

struct Loaded {
  goblin::fuzz::Databases databases;
  std::vector<std::string> libraries;
  bool ok = false;

  explicit Loaded(std::string_view file) {
    goblin::SnapshotLoader loader("fuzz.gsnap", file, goblin::EncodingLimits{});
    std::string error;
    ok = loader.Load(databases.Pointers(), kNowMs, {}, nullptr, &error);
    FUZZ_CHECK(ok == error.empty());
    if (ok) libraries = loader.stats().libraries;
  }

  std::string Save() const {
    const std::vector<std::string_view> code(libraries.begin(), libraries.end());
    return goblin::fuzz::WrittenBytes([&](int fd, goblin::SnapshotSaveStats* stats) {
      std::string error;
      return goblin::WriteSnapshotToFd(databases.ConstPointers(), code, fd, kNowMs, stats, &error);
    });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  FixChecks(&file);
  const Loaded first(file);
  if (!first.ok) return 0;
  const Loaded second(first.Save());
  FUZZ_CHECK(second.ok);
  goblin::fuzz::CheckSameKeyCounts(first.databases, second.databases);
  FUZZ_CHECK(first.libraries == second.libraries);
  return 0;
}
