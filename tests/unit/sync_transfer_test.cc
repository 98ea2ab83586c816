// SyncTransfer and ParseFullResync: what a replica reads from its master before the stream.
// The framing of sized and diskless snapshots, the keep-alive newlines, the errors a master can
// send instead, and the same snapshot and stream start whatever pieces the bytes arrive in.
#include "resp/sync_transfer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace goblin {
namespace {

const std::string kMark(kReplicationIdLength, 'm');

struct Result {
  SyncTransfer::Status status = SyncTransfer::Status::kMore;
  std::string snapshot;
  std::string rest;  // the bytes after the snapshot (the stream), after kDone
  std::string error;
};

// Feeds data in pieces of at most chunk bytes, keeping the unconsumed bytes as MasterLink does.
Result Feed(std::string_view data, size_t chunk) {
  SyncTransfer transfer;
  Result result;
  std::string pending;
  size_t offset = 0;
  do {
    const size_t take = std::min(chunk, data.size() - offset);
    pending.append(data.substr(offset, take));
    offset += take;
    std::string_view payload;
    size_t used = 0;
    result.status = transfer.Consume(pending, &payload, &used, &result.error);
    result.snapshot.append(payload);
    pending.erase(0, used);
    if (result.status == SyncTransfer::Status::kDone) {
      EXPECT_EQ(transfer.snapshot_bytes(), result.snapshot.size() - (transfer.diskless() ? 40 : 0));
      result.rest = pending + std::string(data.substr(offset));
      return result;
    }
  } while (result.status == SyncTransfer::Status::kMore && offset < data.size());
  return result;
}

TEST(SyncTransferTest, SizedSnapshotEndsAtItsSize) {
  const Result result = Feed("\n\n$5\r\nREDIS*1\r\n$4\r\nPING\r\n", 1 << 20);
  EXPECT_EQ(result.status, SyncTransfer::Status::kDone);
  EXPECT_EQ(result.snapshot, "REDIS");
  EXPECT_EQ(result.rest, "*1\r\n$4\r\nPING\r\n");
}

TEST(SyncTransferTest, EmptySnapshotIsDoneAtItsHeader) {
  const Result result = Feed("$0\r\n*1\r\n", 1 << 20);
  EXPECT_EQ(result.status, SyncTransfer::Status::kDone);
  EXPECT_EQ(result.snapshot, "");
  EXPECT_EQ(result.rest, "*1\r\n");
}

// The stream may follow the mark in the same read: the snapshot still ends at the mark (it
// used to end only when a read ended with the mark, so these bytes left the replica waiting;
// the fuzz corpus keeps the input that found it, sync_transfer/crash-mark-inside-a-read).
TEST(SyncTransferTest, DisklessSnapshotEndsAtItsMark) {
  const Result result = Feed("$EOF:" + kMark + "\r\nREDIS0011" + kMark + "tail", 1 << 20);
  EXPECT_EQ(result.status, SyncTransfer::Status::kDone);
  EXPECT_EQ(result.snapshot, "REDIS0011" + kMark);
  EXPECT_EQ(result.rest, "tail");
}

TEST(SyncTransferTest, DisklessMarkSplitAcrossReads) {
  for (size_t chunk = 1; chunk <= 50; ++chunk) {
    const Result result = Feed("$EOF:" + kMark + "\r\nREDIS" + kMark + "*1\r\n", chunk);
    EXPECT_EQ(result.status, SyncTransfer::Status::kDone) << chunk;
    EXPECT_EQ(result.snapshot, "REDIS" + kMark) << chunk;
    EXPECT_EQ(result.rest, "*1\r\n") << chunk;
  }
}

TEST(SyncTransferTest, IncompleteHeaderConsumesOnlyTheNewlines) {
  SyncTransfer transfer;
  std::string_view payload;
  size_t used = 0;
  std::string error;
  EXPECT_EQ(transfer.Consume("\n\n$12", &payload, &used, &error), SyncTransfer::Status::kMore);
  EXPECT_EQ(used, 2u);
  EXPECT_FALSE(transfer.header_read());
  EXPECT_EQ(transfer.size(), -1);
}

TEST(SyncTransferTest, MastersErrorsAndOtherBytesAreErrors) {
  EXPECT_EQ(Feed("-ERR no\r\n", 100).error, "MASTER aborted replication with an error: ERR no");
  for (std::string bad : {"$-1\r\n", "+OK\r\n", "$EOF:short\r\n", "$12x\r\n", "\r\n"}) {
    const Result result = Feed(bad, 100);
    EXPECT_EQ(result.status, SyncTransfer::Status::kError) << bad;
    EXPECT_TRUE(result.error.starts_with("Bad protocol from MASTER, the first byte is not '$'"))
        << result.error;
  }
  const Result long_header = Feed("$" + std::string(SyncTransfer::kMaxHeader + 1, '1'), 1 << 20);
  EXPECT_EQ(long_header.status, SyncTransfer::Status::kError);
}

TEST(SyncTransferTest, PiecesDoNotChangeTheFraming) {
  std::mt19937_64 rng(20261206);
  for (int round = 0; round < 500; ++round) {
    std::string snapshot(rng() % 200, '\0');
    for (char& c : snapshot) c = static_cast<char>(rng() % 4 == 0 ? 'm' : rng());
    const bool diskless = rng() % 2 == 0;
    std::string data(rng() % 3, '\n');
    if (diskless) {
      data += "$EOF:" + kMark + "\r\n" + snapshot + kMark;
    } else {
      data += "$" + std::to_string(snapshot.size()) + "\r\n" + snapshot;
    }
    data += "*1\r\n$4\r\nPING\r\n";
    const Result whole = Feed(data, data.size());
    ASSERT_EQ(whole.status, SyncTransfer::Status::kDone);
    const Result pieces = Feed(data, 1 + rng() % 50);
    ASSERT_EQ(pieces.status, SyncTransfer::Status::kDone);
    EXPECT_EQ(pieces.snapshot, whole.snapshot);
    EXPECT_EQ(pieces.rest, whole.rest);
  }
}

TEST(SyncTransferTest, FullResyncLine) {
  const std::string id(40, 'a');
  std::string replid;
  uint64_t offset = 0;
  EXPECT_TRUE(ParseFullResync("+FULLRESYNC " + id + " 1234", &replid, &offset));
  EXPECT_EQ(replid, id);
  EXPECT_EQ(offset, 1234u);
  EXPECT_FALSE(ParseFullResync("+FULLRESYNC " + id + " -1", &replid, &offset));
  EXPECT_FALSE(ParseFullResync("+FULLRESYNC " + id.substr(1) + " 1", &replid, &offset));
  EXPECT_FALSE(ParseFullResync("+FULLRESYNC " + std::string(40, 'g') + " 1", &replid, &offset));
  EXPECT_FALSE(ParseFullResync("+FULLRESYNC " + id + " 1 2", &replid, &offset));
  EXPECT_FALSE(ParseFullResync("+CONTINUE " + id, &replid, &offset));
}

}  // namespace
}  // namespace goblin
