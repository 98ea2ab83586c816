// The incremental AOF file: how commands are encoded into it (AppendRespCommand), written to it
// with an appendfsync policy (AofWriter), and read back (ReplayAof).
//
// An incr file is a plain concatenation of RESP multibulk commands, the bytes Redis writes:
//
//   *2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n ...
//   |<---------- SELECT 0 ------------>|<----------- SET k v -------------->|
//
// Every argument is length-prefixed, so values are binary-safe (\r\n and NUL inside are fine).
// Redis 7 may also write annotation lines "#...\n" between commands (aof-timestamp-enabled);
// ReplayAof skips them, AofWriter never writes them.
//
// AofWriter invariants:
//  1. Bytes reach the file in Append order, exactly once: a failed or short write keeps the
//     unwritten tail buffered and the next Flush continues from it.
//  2. The first command after Open/SwitchTo is preceded by SELECT, and so is every command
//     whose db differs from the previous one written to that file.
//  3. size() == the file's size at Open + bytes written since + bytes still buffered.
//  4. The background fsync thread (started by the first kEverySec Flush, one per writer) only
//     fsyncs the writer's current fd while holding fd_mutex_; Open, SwitchTo and Close change
//     fd_ only while holding it and close the old fd afterwards, when the thread can no longer
//     see it, so it never fsyncs a closed or reused fd.
//  5. It fsyncs at most once per fsync interval (1 s, Redis's everysec), and only when a Flush
//     wrote bytes since the last fsync.
//  6. Offsets (WAITAOF): MarkOffset names the stream offset the bytes appended so far carry;
//     written_offset_ is the mark of the last whole buffer written, synced_offset_ the mark an
//     fsync that started after that write covered. synced_offset_ <= written_offset_, and
//     both only grow.
//
// Thread-safety: AofWriter is used by one thread (the server's main thread); the background
// thread is internal. ReplayAof is a pure function.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>

namespace goblin {

// Appends "*<n>\r\n" then "$<len>\r\n<bytes>\r\n" per argument to *out.
void AppendRespCommand(std::string* out, std::span<const std::string_view> argv);

enum class AppendFsync { kAlways, kEverySec, kNo };

// "always", "everysec" or "no", any case (Redis config enums ignore case). Returns false for
// anything else.
bool ParseAppendFsync(std::string_view text, AppendFsync* policy);
// As above; text that is not a policy gives kEverySec, Redis's default. Use the two-argument
// form to reject a bad config value.
AppendFsync ParseAppendFsync(std::string_view text);
// The config spelling: "always", "everysec" or "no".
std::string_view AppendFsyncName(AppendFsync policy);

class AofWriter {
 public:
  // fsync_interval is the everysec period; tests shorten or lengthen it.
  explicit AofWriter(std::chrono::milliseconds fsync_interval = std::chrono::seconds(1));
  // Close().
  ~AofWriter();
  AofWriter(const AofWriter&) = delete;
  AofWriter& operator=(const AofWriter&) = delete;

  // Opens path for appending (O_WRONLY|O_CREAT|O_APPEND, 0644) and makes it the current file;
  // fsyncs the directory when the file was created. REQUIRES: no file is open.
  bool Open(const std::string& path, std::string* error);

  // Buffers argv for the current file, after a SELECT when db is not the file's current db.
  // Nothing reaches the file before Flush. REQUIRES: a file is open.
  void Append(int db, std::span<const std::string_view> argv);

  // Writes the buffer. kAlways: fdatasync before returning. kEverySec: asks the background
  // thread to fdatasync (at most once per interval); returns false if the latest background
  // fsync failed (Redis then refuses writes until one succeeds). kNo: leaves it to the kernel.
  // On a write error the unwritten tail stays buffered (has_pending()) for the next Flush.
  bool Flush(AppendFsync policy, std::string* error);

  // Flushes the buffer and fdatasyncs the current file, then makes new_path the current file
  // (the next Append gets a SELECT). On failure the old file stays current, nothing is lost,
  // and any bytes that could not be written stay buffered.
  bool SwitchTo(const std::string& new_path, std::string* error);

  // Flushes, stops the background thread, fdatasyncs and closes. Failures are recorded in
  // last_write_ok()/last_error(); the two-argument form also reports them. No-op when closed.
  void Close();
  bool Close(std::string* error);

  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  bool has_pending() const { return !buffer_.empty(); }
  size_t pending_bytes() const { return buffer_.size(); }
  // Bytes in the current file including the buffered ones (INFO aof_current_size).
  uint64_t size() const { return written_size_ + buffer_.size(); }

  // INFO aof_last_write_status: false after a failed write or fsync (here or in the
  // background), true again after the next successful one of that kind.
  bool last_write_ok() const;
  // The text of the latest failure, empty when last_write_ok().
  std::string last_error() const;
  // Wall-clock time of the latest successful fsync of any kind, 0 if none yet.
  int64_t last_fsync_unix_ms() const { return last_fsync_unix_ms_.load(); }
  // Background fsyncs completed (successful or not) and whether one is requested or running
  // now (INFO aof_pending_bio_fsync).
  uint64_t background_fsyncs() const;
  bool background_fsync_pending() const;

  // The bytes appended so far carry the replication stream up to offset (a caller's numbering,
  // non-decreasing): once they are fsynced, SyncedOffset() reaches offset.
  void MarkOffset(uint64_t offset) { pending_offset_ = offset; }
  // The highest mark whose bytes an fsync covered.
  uint64_t SyncedOffset() const;
  // Whether every byte appended is written and fsynced, none being fsynced now.
  bool AllSynced() const;

  // Blocks until the background thread has no requested or running fsync. With a pending
  // request this can take up to the fsync interval; tests use it with a zero interval.
  void WaitForBackgroundFsync();

 private:
  bool OpenFd(const std::string& path, int* fd, uint64_t* size, std::string* error);
  bool WriteBuffer(std::string* error);
  bool SyncNow(std::string* error);
  void RequestBackgroundFsync();
  void StopBackgroundThread();
  void BackgroundLoop();

  const std::chrono::milliseconds fsync_interval_;
  // fd_ and path_ are written by the owning thread only while holding fd_mutex_, which the
  // background thread holds while it fsyncs fd_.
  std::mutex fd_mutex_;
  int fd_ = -1;
  std::string path_;

  // The owning thread's alone.
  std::string buffer_;
  uint64_t written_size_ = 0;
  int selected_db_ = -1;
  bool unsynced_ = false;        // bytes written since the last fsync or fsync request
  uint64_t pending_offset_ = 0;  // MarkOffset's, for the buffered bytes
  bool write_ok_ = true;
  std::string write_error_;

  mutable std::mutex state_mutex_;  // guards the fields below
  std::condition_variable state_changed_;
  std::thread background_;
  bool stop_ = false;
  bool fsync_requested_ = false;
  bool background_busy_ = false;
  bool background_ok_ = true;
  std::string background_error_;
  uint64_t background_fsyncs_ = 0;
  bool background_fsynced_ = false;  // last_background_fsync_ is set
  std::chrono::steady_clock::time_point last_background_fsync_;
  uint64_t written_offset_ = 0;  // Invariant 6
  uint64_t synced_offset_ = 0;
  bool written_unsynced_ = false;  // bytes written that no finished or running fsync covers

  std::atomic<int64_t> last_fsync_unix_ms_{0};
};

// What ReplayAof found. valid_bytes is the end of the last complete command (or annotation)
// outside an unfinished transaction: truncating the file there keeps every executed command
// and drops the rest (Redis's aof-load-truncated). kOk means valid_bytes == data.size().
struct AofReplayResult {
  enum class Status { kOk, kTruncated, kCorrupt };
  Status status = Status::kOk;
  uint64_t valid_bytes = 0;
  uint64_t commands = 0;        // calls to execute that returned true
  uint64_t error_offset = 0;    // kCorrupt: the bad byte or the failed command; kTruncated: end
  bool in_transaction = false;  // kTruncated: the data ends after a MULTI without its EXEC
  std::string error;
};

using AofExecuteFn =
    std::function<bool(std::span<const std::string_view> argv, std::string* error)>;

// Parses data as an incr file and passes each command to execute, in order. The grammar is
// what Redis's loadSingleAppendOnlyFile reads, checked strictly:
//   command    = "*" count CRLF bulk{count}      count in 1 .. 1M (decimal, leading zeros ok)
//   bulk       = "$" length CRLF byte{length} CRLF    length in 0 .. 512 MB
//   annotation = "#" any bytes "\n"                   only between commands; skipped
// Anything else is kCorrupt with error_offset at the first offending byte (for an
// out-of-range number, its first digit). Data that ends inside a command (including inside a
// length line or a bulk's CRLF) is kTruncated with valid_bytes at that command's start.
//
// Transactions: MULTI, the commands after it and EXEC are passed to execute, all of them
// (argv views into data), only once the EXEC has been read, so a server that queues between
// MULTI and EXEC applies them atomically; a file that ends before the EXEC is kTruncated with
// valid_bytes at the MULTI, and none of the transaction is executed. A MULTI inside a
// transaction or an EXEC outside one is kCorrupt (Redis never writes either).
//
// If execute returns false, replay stops: kCorrupt with its error and error_offset at that
// command's start. (Inside a transaction the server has then seen MULTI without EXEC.)
AofReplayResult ReplayAof(std::string_view data, const AofExecuteFn& execute);

}  // namespace goblin
