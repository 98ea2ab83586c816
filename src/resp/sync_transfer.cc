#include "resp/sync_transfer.h"

#include <algorithm>
#include <vector>

#include "core/string_number.h"
#include "resp/request_parser.h"

namespace goblin {

bool IsReplicationId(std::string_view text) {
  return text.size() == kReplicationIdLength && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
         });
}

bool ParseFullResync(std::string_view line, std::string* replid, uint64_t* offset) {
  if (!line.starts_with("+FULLRESYNC")) return false;
  std::vector<std::string> words;
  int64_t number = -1;
  if (!SplitInlineArgs(line, &words) || words.size() != 3 || !IsReplicationId(words[1]) ||
      !ParseInt64(words[2], &number) || number < 0) {
    return false;
  }
  *replid = words[1];
  *offset = static_cast<uint64_t>(number);
  return true;
}

SyncTransfer::Status SyncTransfer::ReadHeader(std::string_view data, size_t* used,
                                              std::string* error) {
  size_t start = 0;
  while (start < data.size() && data[start] == '\n') ++start;
  const size_t end = data.find('\n', start);
  if (end == std::string_view::npos) {
    if (data.size() - start > kMaxHeader) {
      *error = "Bad protocol from MASTER: a transfer header longer than " +
               std::to_string(kMaxHeader) + " bytes";
      return Status::kError;
    }
    *used = start;
    return Status::kMore;
  }
  std::string_view header = data.substr(start, end - start);
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  if (!header.empty() && header[0] == '-') {
    *error = "MASTER aborted replication with an error: " + std::string(header.substr(1));
    return Status::kError;
  }
  int64_t size = -1;
  if (header.starts_with("$EOF:") && header.size() == 5 + kReplicationIdLength) {
    eof_mark_ = header.substr(5);
  } else if (!header.empty() && header[0] == '$' && ParseInt64(header.substr(1), &size) &&
             size >= 0) {
    size_ = size;
  } else {
    *error = "Bad protocol from MASTER, the first byte is not '$' (we received '" +
             std::string(header.substr(0, 64)) + "'), are you sure the host and port are right?";
    return Status::kError;
  }
  header_read_ = true;
  *used = end + 1;
  return Status::kMore;
}

SyncTransfer::Status SyncTransfer::Consume(std::string_view data, std::string_view* payload,
                                           size_t* used, std::string* error) {
  *payload = {};
  *used = 0;
  if (!header_read_) {
    const Status status = ReadHeader(data, used, error);
    if (status == Status::kError || !header_read_) return status;
    data.remove_prefix(*used);
  }
  if (!diskless()) {
    *payload = data.substr(0, static_cast<uint64_t>(size_) - read_);
    read_ += payload->size();
    *used += payload->size();
    return read_ == static_cast<uint64_t>(size_) ? Status::kDone : Status::kMore;
  }
  // The mark ends the snapshot wherever it lies in data, not only at its end: the master's
  // stream may follow it in the same read, and the framing must not depend on how the socket
  // cuts the bytes. The mark may start in the bytes of earlier calls (tail_).
  size_t end = std::string_view::npos;  // in data, just past the mark
  const std::string straddle = tail_ + std::string(data.substr(0, kReplicationIdLength - 1));
  const size_t in_straddle = straddle.find(eof_mark_);
  if (in_straddle != std::string::npos) {
    end = in_straddle + kReplicationIdLength - tail_.size();
  } else if (const size_t in_data = data.find(eof_mark_); in_data != std::string_view::npos) {
    end = in_data + kReplicationIdLength;
  }
  *payload = data.substr(0, end);
  read_ += payload->size();
  *used += payload->size();
  if (end != std::string_view::npos) return Status::kDone;
  tail_.append(*payload);
  if (tail_.size() >= kReplicationIdLength) {
    tail_.erase(0, tail_.size() - (kReplicationIdLength - 1));
  }
  return Status::kMore;
}

}  // namespace goblin
