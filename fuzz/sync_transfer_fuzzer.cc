// The replication stream a replica reads, up to its command stream: the +FULLRESYNC line and
// the snapshot transfer (resp/sync_transfer.h, which server/master_link.cc drives with what
// it reads from the socket), then the commands after it through the request parser, as the
// master client reads them.
//
// MasterLink itself owns a socket, a temporary file and the server; the framing is the part
// that parses the master's bytes, so that is the seam fuzzed here.
//
// Input: [chunk][line "\n"][rest]. line goes to ParseFullResync; rest is fed to SyncTransfer
// in pieces of chunk bytes (0: all at once), as reads from the socket would cut it; whatever
// follows the snapshot is parsed as the stream. Checked: the framing is the same whatever the
// pieces (the same snapshot bytes, the same end), and it never consumes past the snapshot.
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "resp/request_parser.h"
#include "resp/sync_transfer.h"

namespace {

using goblin::SyncTransfer;

struct Framed {
  SyncTransfer::Status status = SyncTransfer::Status::kMore;
  std::string snapshot;  // the payload bytes, in order
  size_t end = 0;        // where the stream starts in the input (after kDone)
};

// Feeds data to a SyncTransfer in pieces of at most chunk bytes, keeping what it did not
// consume for the next call, as MasterLink keeps it in its inbox.
Framed Frame(std::string_view data, size_t chunk) {
  SyncTransfer transfer;
  Framed framed;
  std::string pending;
  size_t offset = 0;  // input bytes handed over so far
  while (true) {
    const size_t take = std::min(chunk, data.size() - offset);
    pending.append(data.substr(offset, take));
    offset += take;
    std::string_view payload;
    size_t used = 0;
    std::string error;
    framed.status = transfer.Consume(pending, &payload, &used, &error);
    FUZZ_CHECK(used <= pending.size());
    if (framed.status == SyncTransfer::Status::kError) {
      FUZZ_CHECK(!error.empty());
      return framed;
    }
    // The payload is the tail of what was consumed.
    FUZZ_CHECK(payload.size() <= used);
    FUZZ_CHECK(payload.data() + payload.size() == pending.data() + used || payload.empty());
    framed.snapshot.append(payload);
    FUZZ_CHECK(transfer.read() == framed.snapshot.size());
    if (transfer.size() >= 0) FUZZ_CHECK(transfer.read() <= static_cast<uint64_t>(transfer.size()));
    pending.erase(0, used);
    if (framed.status == SyncTransfer::Status::kDone) {
      FUZZ_CHECK(transfer.snapshot_bytes() <= transfer.read());
      framed.end = offset - pending.size();
      return framed;
    }
    if (offset == data.size() && take == 0) return framed;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  goblin::fuzz::InputReader input(bytes, size);
  const size_t chunk = input.Byte();
  const std::string_view line = input.Until('\n');
  const std::string data(input.Rest());

  std::string replid;
  uint64_t offset = 0;
  if (goblin::ParseFullResync(line, &replid, &offset)) {
    FUZZ_CHECK(goblin::IsReplicationId(replid));
  }

  const Framed whole = Frame(data, data.size());
  if (chunk > 0) {
    const Framed pieces = Frame(data, chunk);
    FUZZ_CHECK(pieces.status == whole.status);
    if (whole.status == SyncTransfer::Status::kDone) {
      FUZZ_CHECK(pieces.snapshot == whole.snapshot && pieces.end == whole.end);
    }
  }
  if (whole.status != SyncTransfer::Status::kDone) return 0;

  // The stream: commands until the bytes run out or the parser gives up.
  goblin::RequestParser parser;
  std::vector<std::string_view> args;
  std::string_view stream = std::string_view(data).substr(whole.end);
  while (!stream.empty()) {
    size_t consumed = 0;
    if (parser.Parse(stream, goblin::ProtocolLimits{}, &args, &consumed) !=
        goblin::RequestParser::Status::kRequest) {
      break;
    }
    stream.remove_prefix(consumed);
  }
  return 0;
}
