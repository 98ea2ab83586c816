// ReplayAof (persist/aof_log.h): an incr file of the append-only directory, cut short by a
// crash or damaged on disk.
//
// Input: [fail-at][file]. The execute callback refuses the fail-at'th command (0: none), as a
// server refuses a command it cannot run. Beyond "no crash", the result must keep ReplayAof's
// contract:
//  - valid_bytes ends a complete command: replaying data[0, valid_bytes) gives kOk with the
//    same commands executed (the truncation aof-load-truncated makes loads cleanly);
//  - kOk means every byte was read; the error offset lies within the data.
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "persist/aof_log.h"

namespace {

using goblin::AofReplayResult;

struct Replay {
  AofReplayResult result;
  std::vector<std::vector<std::string>> executed;
};

Replay Run(std::string_view data, uint64_t fail_at) {
  Replay replay;
  replay.result =
      goblin::ReplayAof(data, [&](std::span<const std::string_view> argv, std::string* error) {
        FUZZ_CHECK(!argv.empty());
        if (replay.executed.size() + 1 == fail_at) {
          *error = "refused";
          return false;
        }
        replay.executed.emplace_back(argv.begin(), argv.end());
        return true;
      });
  return replay;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  goblin::fuzz::InputReader input(bytes, size);
  const uint64_t fail_at = input.Byte() % 16;
  const std::string data(input.Rest());
  const Replay whole = Run(data, fail_at);
  const AofReplayResult& result = whole.result;
  FUZZ_CHECK(result.valid_bytes <= data.size());
  FUZZ_CHECK(result.commands == whole.executed.size());
  switch (result.status) {
    case AofReplayResult::Status::kOk:
      FUZZ_CHECK(result.valid_bytes == data.size());
      break;
    case AofReplayResult::Status::kTruncated: {
      FUZZ_CHECK(result.error_offset <= data.size());
      const Replay cut = Run(std::string(data, 0, result.valid_bytes), fail_at);
      FUZZ_CHECK(cut.result.status == AofReplayResult::Status::kOk);
      FUZZ_CHECK(cut.executed == whole.executed);
      break;
    }
    case AofReplayResult::Status::kCorrupt:
      FUZZ_CHECK(result.error_offset < data.size() || data.empty());
      FUZZ_CHECK(!result.error.empty());
      break;
  }
  return 0;
}
