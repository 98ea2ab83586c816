// AofManifest::Parse (persist/aof_manifest.h): the manifest of an append-only directory,
// possibly written by Redis, possibly damaged.
//
// A manifest that parses must keep the invariants the header lists (one base at most, plain
// distinct names, incr seqs increasing), and a non-empty one serialize to text that parses
// back to the same lists; the next names it hands out must not be listed already.
#include <set>
#include <string>

#include "fuzz_support.h"
#include "persist/aof_manifest.h"

namespace {

using goblin::AofFile;
using goblin::AofManifest;

void CheckInvariants(const AofManifest& manifest) {
  std::set<std::string> names;
  auto check_name = [&](const AofFile& file) {
    FUZZ_CHECK(!file.name.empty());
    FUZZ_CHECK(file.name.find('/') == std::string::npos);
    FUZZ_CHECK(file.name.find('\\') == std::string::npos);
    FUZZ_CHECK(file.seq > 0);
    FUZZ_CHECK(names.insert(file.name).second);
  };
  if (manifest.base()) {
    FUZZ_CHECK(manifest.base()->type == AofFile::kBase);
    check_name(*manifest.base());
  }
  for (const AofFile& file : manifest.history()) {
    FUZZ_CHECK(file.type == AofFile::kHistory);
    check_name(file);
  }
  int64_t previous = 0;
  for (const AofFile& file : manifest.incrs()) {
    FUZZ_CHECK(file.type == AofFile::kIncr);
    check_name(file);
    FUZZ_CHECK(file.seq > previous);
    previous = file.seq;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  AofManifest manifest;
  std::string error;
  if (!AofManifest::Parse(text, &manifest, &error)) {
    FUZZ_CHECK(!error.empty());
    FUZZ_CHECK(manifest.empty());
    return 0;
  }
  CheckInvariants(manifest);
  // Only comments parse to an empty manifest, as in Redis, but its text is empty, and an empty
  // file is refused: there is nothing to read back.
  if (manifest.empty()) return 0;
  AofManifest again;
  FUZZ_CHECK(AofManifest::Parse(manifest.Serialize(), &again, &error));
  FUZZ_CHECK(again.base() == manifest.base());
  FUZZ_CHECK(again.incrs() == manifest.incrs());
  FUZZ_CHECK(again.history() == manifest.history());
  CheckInvariants(again);

  // The names a rewrite would create next are new ones.
  const std::string base = manifest.NextBaseName();
  const std::string incr = manifest.NextIncrName();
  manifest.AddIncr(incr);
  FUZZ_CHECK(manifest.FinishRewrite(base, incr));
  CheckInvariants(manifest);
  return 0;
}
