// What a replica reads from its master between PSYNC and the command stream, framed apart from
// the socket and the server (server/master_link.h drives it), so that every byte a master can
// send before the stream is parsed by code that a test or a fuzzer can call alone:
//
//   +FULLRESYNC <replid> <offset>\r\n          ParseFullResync
//   \n ... \n                                  newlines: the master keeps the link alive while
//                                              it writes the snapshot
//   $<size>\r\n <size bytes>                   a snapshot of known size, or
//   $EOF:<mark>\r\n <bytes> <mark>             diskless: the 40-byte mark (Redis's run id
//                                              length) ends the bytes
//   *<n>\r\n$<len>\r\n ...                     the stream: the master client's commands
//                                              (resp/request_parser.h)
//
// SyncTransfer invariants:
//  1. read() <= size() once the size is known; the transfer is done exactly when read() ==
//     size(), or for a diskless one at the end of the first occurrence of the mark, however
//     the bytes were cut into calls.
//  2. Consume never consumes a byte past the snapshot's end: what follows is the stream's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace goblin {

// Redis's CONFIG_RUN_ID_SIZE: replication ids and the diskless end mark.
inline constexpr size_t kReplicationIdLength = 40;

// Whether text is a replication id: 40 hex digits.
bool IsReplicationId(std::string_view text);

// Reads "+FULLRESYNC <replid> <offset>" (the line without its CR LF): a replication id and an
// offset >= 0. False when the line is anything else.
bool ParseFullResync(std::string_view line, std::string* replid, uint64_t* offset);

class SyncTransfer {
 public:
  // A header longer than this is not Redis's protocol (Redis reads it as one 64 KB line).
  static constexpr size_t kMaxHeader = 64 * 1024;

  enum class Status { kMore, kDone, kError };

  // Reads the front of data: the header first, then the snapshot's bytes. *payload views the
  // snapshot bytes found in data (the caller writes them out as they come); *used is the count
  // of bytes consumed, the rest is the caller's to pass again with more (kMore) or, after
  // kDone, the start of the stream. kError: *error says what the master sent instead (Redis's
  // log text), and the transfer cannot go on.
  Status Consume(std::string_view data, std::string_view* payload, size_t* used,
                 std::string* error);

  bool header_read() const { return header_read_; }
  bool diskless() const { return !eof_mark_.empty(); }
  // The snapshot's size: -1 until the header is read, and for a diskless snapshot.
  int64_t size() const { return size_; }
  // Snapshot bytes consumed so far (for a diskless snapshot, the mark's included).
  uint64_t read() const { return read_; }
  // The snapshot's length without a diskless mark. REQUIRES: Consume returned kDone.
  uint64_t snapshot_bytes() const { return diskless() ? read_ - kReplicationIdLength : read_; }

 private:
  Status ReadHeader(std::string_view data, size_t* used, std::string* error);

  bool header_read_ = false;
  int64_t size_ = -1;
  std::string eof_mark_;
  std::string tail_;  // diskless: the last 39 bytes read, where the mark may start
  uint64_t read_ = 0;
};

}  // namespace goblin
