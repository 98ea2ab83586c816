#include "persist/aof_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "core/ascii.h"
#include "persist/file_util.h"

namespace goblin {
namespace {

// A buffer that once held a burst bigger than this is given back rather than kept for reuse.
constexpr size_t kMaxRetainedBufferCapacity = 1 << 20;

constexpr uint64_t kMaxBulkLength = 512ull * 1024 * 1024;  // Redis's proto-max-bulk-len default
constexpr uint64_t kMaxArgCount = 1024 * 1024;             // Redis's multibulk limit

int64_t UnixMillisNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int DataSync(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

void AppendLengthLine(std::string* out, char prefix, size_t value) {
  *out += prefix;
  *out += std::to_string(value);
  *out += "\r\n";
}

}  // namespace

void AppendRespCommand(std::string* out, std::span<const std::string_view> argv) {
  AppendLengthLine(out, '*', argv.size());
  for (std::string_view arg : argv) {
    AppendLengthLine(out, '$', arg.size());
    out->append(arg);
    *out += "\r\n";
  }
}

bool ParseAppendFsync(std::string_view text, AppendFsync* policy) {
  if (EqualsIgnoreCase(text, "always")) {
    *policy = AppendFsync::kAlways;
  } else if (EqualsIgnoreCase(text, "everysec")) {
    *policy = AppendFsync::kEverySec;
  } else if (EqualsIgnoreCase(text, "no")) {
    *policy = AppendFsync::kNo;
  } else {
    return false;
  }
  return true;
}

AppendFsync ParseAppendFsync(std::string_view text) {
  AppendFsync policy = AppendFsync::kEverySec;
  ParseAppendFsync(text, &policy);
  return policy;
}

std::string_view AppendFsyncName(AppendFsync policy) {
  switch (policy) {
    case AppendFsync::kAlways:
      return "always";
    case AppendFsync::kEverySec:
      return "everysec";
    case AppendFsync::kNo:
      return "no";
  }
  return "everysec";
}

// ---------------------------------------------------------------------------------------------
// AofWriter

AofWriter::AofWriter(std::chrono::milliseconds fsync_interval) : fsync_interval_(fsync_interval) {}

AofWriter::~AofWriter() { Close(); }

bool AofWriter::OpenFd(const std::string& path, int* fd, uint64_t* size, std::string* error) {
  // O_EXCL first only to learn whether the file is new: a new directory entry is not durable
  // until the directory is fsynced, and losing it would lose every command written to it.
  bool created = true;
  int opened;
  do {
    opened = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  } while (opened < 0 && errno == EINTR);
  if (opened < 0 && errno == EEXIST) {
    created = false;
    do {
      opened = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    } while (opened < 0 && errno == EINTR);
  }
  if (opened < 0) {
    *error = "open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(opened, &st) != 0) {
    *error = "fstat " + path + ": " + std::strerror(errno);
    ::close(opened);
    return false;
  }
  if (created && !FsyncDirectory(DirectoryOf(path), error)) {
    ::close(opened);
    return false;
  }
  *fd = opened;
  *size = static_cast<uint64_t>(st.st_size);
  return true;
}

bool AofWriter::Open(const std::string& path, std::string* error) {
  if (fd_ >= 0) {
    *error = "AOF writer already has " + path_ + " open";
    return false;
  }
  int fd;
  uint64_t size;
  if (!OpenFd(path, &fd, &size, error)) return false;
  {
    std::lock_guard<std::mutex> lock(fd_mutex_);
    fd_ = fd;
    path_ = path;
  }
  buffer_.clear();
  written_size_ = size;
  selected_db_ = -1;
  unsynced_ = false;
  return true;
}

void AofWriter::Append(int db, std::span<const std::string_view> argv) {
  if (db != selected_db_) {
    const std::string db_text = std::to_string(db);
    const std::string_view select[] = {"SELECT", db_text};
    AppendRespCommand(&buffer_, select);
    selected_db_ = db;
  }
  AppendRespCommand(&buffer_, argv);
}

bool AofWriter::WriteBuffer(std::string* error) {
  if (buffer_.empty()) return true;
  size_t written = 0;
  std::string write_error;
  const bool ok = WriteAll(fd_, buffer_.data(), buffer_.size(), &written, &write_error);
  written_size_ += written;
  if (written > 0) unsynced_ = true;
  if (!ok) {
    // Keep the tail: the next Flush appends exactly the bytes that are missing, so the file
    // never holds a command twice or a hole.
    write_ok_ = false;
    write_error_ = path_ + ": " + write_error + " (" + std::to_string(written) + " of " +
                   std::to_string(buffer_.size()) + " bytes written)";
    buffer_.erase(0, written);
    *error = write_error_;
    return false;
  }
  if (buffer_.capacity() > kMaxRetainedBufferCapacity) {
    std::string().swap(buffer_);
  } else {
    buffer_.clear();
  }
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    written_offset_ = std::max(written_offset_, pending_offset_);
    if (written > 0) written_unsynced_ = true;
  }
  write_ok_ = true;
  write_error_.clear();
  return true;
}

bool AofWriter::SyncNow(std::string* error) {
  if (DataSync(fd_) != 0) {
    write_ok_ = false;
    write_error_ = "fdatasync " + path_ + ": " + std::strerror(errno);
    *error = write_error_;
    return false;
  }
  unsynced_ = false;
  last_fsync_unix_ms_.store(UnixMillisNow());
  std::lock_guard<std::mutex> lock(state_mutex_);
  // Everything written so far is durable now, whatever an earlier background fsync said.
  background_ok_ = true;
  background_error_.clear();
  synced_offset_ = written_offset_;
  written_unsynced_ = false;
  return true;
}

uint64_t AofWriter::SyncedOffset() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return synced_offset_;
}

bool AofWriter::AllSynced() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return buffer_.empty() && !written_unsynced_ && !fsync_requested_ && !background_busy_;
}

bool AofWriter::Flush(AppendFsync policy, std::string* error) {
  if (fd_ < 0) {
    *error = "AOF file is not open";
    return false;
  }
  if (!WriteBuffer(error)) return false;
  switch (policy) {
    case AppendFsync::kAlways:
      return !unsynced_ || SyncNow(error);
    case AppendFsync::kEverySec: {
      if (unsynced_) {
        RequestBackgroundFsync();
        unsynced_ = false;
      }
      std::lock_guard<std::mutex> lock(state_mutex_);
      if (!background_ok_) {
        *error = background_error_;
        return false;
      }
      return true;
    }
    case AppendFsync::kNo:
      return true;
  }
  return true;
}

bool AofWriter::SwitchTo(const std::string& new_path, std::string* error) {
  if (fd_ < 0) {
    *error = "AOF file is not open";
    return false;
  }
  // Open the new file first so that a failure leaves the writer exactly as it was.
  int new_fd;
  uint64_t new_size;
  if (!OpenFd(new_path, &new_fd, &new_size, error)) return false;
  // Always fsync: bytes handed to the background thread may still be waiting out its interval,
  // and after the switch it would fsync the new file instead.
  if (!WriteBuffer(error) || !SyncNow(error)) {
    ::close(new_fd);
    return false;
  }
  int old_fd;
  {
    std::lock_guard<std::mutex> lock(fd_mutex_);
    old_fd = fd_;
    fd_ = new_fd;
    path_ = new_path;
  }
  // The background thread can no longer reach old_fd: it reads fd_ under fd_mutex_.
  ::close(old_fd);
  written_size_ = new_size;
  selected_db_ = -1;
  unsynced_ = false;
  return true;
}

void AofWriter::Close() {
  std::string ignored;
  Close(&ignored);
}

bool AofWriter::Close(std::string* error) {
  if (fd_ < 0) return true;
  bool ok = true;
  std::string step_error;
  if (!WriteBuffer(&step_error)) {
    ok = false;
    *error = step_error + "; " + std::to_string(buffer_.size()) + " buffered bytes lost";
  }
  StopBackgroundThread();
  if (!SyncNow(&step_error) && ok) {
    ok = false;
    *error = step_error;
  }
  int fd;
  {
    std::lock_guard<std::mutex> lock(fd_mutex_);
    fd = fd_;
    fd_ = -1;
  }
  if (::close(fd) != 0 && errno != EINTR && ok) {
    ok = false;
    write_ok_ = false;
    write_error_ = "close " + path_ + ": " + std::strerror(errno);
    *error = write_error_;
  }
  buffer_.clear();
  written_size_ = 0;
  selected_db_ = -1;
  unsynced_ = false;
  return ok;
}

bool AofWriter::last_write_ok() const {
  if (!write_ok_) return false;
  std::lock_guard<std::mutex> lock(state_mutex_);
  return background_ok_;
}

std::string AofWriter::last_error() const {
  if (!write_ok_) return write_error_;
  std::lock_guard<std::mutex> lock(state_mutex_);
  return background_error_;
}

uint64_t AofWriter::background_fsyncs() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return background_fsyncs_;
}

bool AofWriter::background_fsync_pending() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return fsync_requested_ || background_busy_;
}

void AofWriter::RequestBackgroundFsync() {
  std::lock_guard<std::mutex> lock(state_mutex_);
  if (!background_.joinable()) {
    stop_ = false;
    background_ = std::thread([this] { BackgroundLoop(); });
  }
  fsync_requested_ = true;
  state_changed_.notify_all();
}

void AofWriter::StopBackgroundThread() {
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    if (!background_.joinable()) return;
    stop_ = true;
    state_changed_.notify_all();
  }
  background_.join();
  std::lock_guard<std::mutex> lock(state_mutex_);
  background_ = std::thread();
  stop_ = false;
  // The caller fsyncs itself after stopping; a request left over is moot, and the next thread
  // may fsync at once.
  fsync_requested_ = false;
  background_fsynced_ = false;
  state_changed_.notify_all();
}

void AofWriter::WaitForBackgroundFsync() {
  std::unique_lock<std::mutex> lock(state_mutex_);
  state_changed_.wait(
      lock, [this] { return !background_.joinable() || (!fsync_requested_ && !background_busy_); });
}

void AofWriter::BackgroundLoop() {
  std::unique_lock<std::mutex> lock(state_mutex_);
  while (true) {
    state_changed_.wait(lock, [this] { return stop_ || fsync_requested_; });
    if (stop_) return;
    const auto earliest = last_background_fsync_ + fsync_interval_;
    if (background_fsynced_ && std::chrono::steady_clock::now() < earliest) {
      // A request that arrives meanwhile is folded into this fsync: that is the once-per-
      // interval limit. Stop cuts the wait short (Close fsyncs by itself).
      if (state_changed_.wait_until(lock, earliest, [this] { return stop_; })) return;
    }
    fsync_requested_ = false;
    background_busy_ = true;
    // What was written before the fsync starts is what it covers.
    const uint64_t covers = written_offset_;
    const bool covered_unsynced = written_unsynced_;
    written_unsynced_ = false;
    lock.unlock();

    int rc = 0;
    int saved_errno = 0;
    std::string path;
    {
      // Holding fd_mutex_ through the fsync is what keeps fd_ from being closed (or closed and
      // reused by another open) under it.
      std::lock_guard<std::mutex> fd_lock(fd_mutex_);
      if (fd_ >= 0) {
        rc = DataSync(fd_);
        saved_errno = errno;
        path = path_;
      }
    }
    const int64_t now_ms = UnixMillisNow();

    lock.lock();
    background_busy_ = false;
    ++background_fsyncs_;
    last_background_fsync_ = std::chrono::steady_clock::now();
    background_fsynced_ = true;
    if (rc == 0) {
      background_ok_ = true;
      background_error_.clear();
      last_fsync_unix_ms_.store(now_ms);
      synced_offset_ = std::max(synced_offset_, covers);
    } else {
      written_unsynced_ = written_unsynced_ || covered_unsynced;
      background_ok_ = false;
      background_error_ = "background fdatasync " + path + ": " + std::strerror(saved_errno);
    }
    state_changed_.notify_all();
  }
}

// ---------------------------------------------------------------------------------------------
// ReplayAof

namespace {

enum class Step { kDone, kNeedMore, kBad };

// A cursor over the file; on kBad it records where and why.
struct AofCursor {
  explicit AofCursor(std::string_view file) : data(file) {}

  std::string_view data;
  size_t pos = 0;
  size_t bad_offset = 0;
  std::string why;

  Step Bad(size_t offset, std::string reason) {
    bad_offset = offset;
    why = std::move(reason);
    return Step::kBad;
  }

  static std::string ByteName(char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    auto u = static_cast<unsigned char>(c);
    std::string name = "byte 0x";
    name += kHex[u >> 4];
    name += kHex[u & 15];
    if (u >= 0x21 && u < 0x7f) name += std::string(" '") + c + "'";
    return name;
  }

  // Reads "<prefix><decimal>\r\n" into *value, which must lie in [min, max]. The digits are
  // range-checked as they arrive, so a huge number is rejected before it is complete and no
  // prefix of a valid line is ever called bad.
  Step ReadLengthLine(char prefix, uint64_t min, uint64_t max, const char* what, uint64_t* value) {
    size_t p = pos;
    if (p >= data.size()) return Step::kNeedMore;
    if (data[p] != prefix) {
      return Bad(p, std::string("expected '") + prefix + "', found " + ByteName(data[p]));
    }
    const size_t digits_start = ++p;
    uint64_t v = 0;
    while (p < data.size() && data[p] >= '0' && data[p] <= '9') {
      v = v * 10 + static_cast<uint64_t>(data[p] - '0');
      if (v > max) {
        return Bad(digits_start, std::string(what) + " exceeds " + std::to_string(max));
      }
      ++p;
    }
    if (p >= data.size()) return Step::kNeedMore;
    if (p == digits_start) {
      return Bad(p,
                 std::string("expected a digit of the ") + what + ", found " + ByteName(data[p]));
    }
    if (data[p] != '\r')
      return Bad(p,
                 "expected '\\r' after the " + std::string(what) + ", found " + ByteName(data[p]));
    if (p + 1 >= data.size()) return Step::kNeedMore;
    if (data[p + 1] != '\n') {
      return Bad(p + 1, "expected '\\n' after '\\r', found " + ByteName(data[p + 1]));
    }
    if (v < min) {
      return Bad(digits_start,
                 std::string(what) + " " + std::to_string(v) + " is below " + std::to_string(min));
    }
    *value = v;
    pos = p + 2;
    return Step::kDone;
  }

  // Reads one command into *argv (views into data).
  Step ReadCommand(std::vector<std::string_view>* argv) {
    argv->clear();
    uint64_t count;
    Step step = ReadLengthLine('*', 1, kMaxArgCount, "argument count", &count);
    if (step != Step::kDone) return step;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t length;
      step = ReadLengthLine('$', 0, kMaxBulkLength, "bulk length", &length);
      if (step != Step::kDone) return step;
      // Compare against what is there before touching anything of that size.
      if (data.size() - pos < length) return Step::kNeedMore;
      const size_t end = pos + static_cast<size_t>(length);
      if (end >= data.size()) return Step::kNeedMore;
      if (data[end] != '\r') {
        return Bad(end, "expected '\\r' after a " + std::to_string(length) + "-byte bulk, found " +
                            ByteName(data[end]));
      }
      if (end + 1 >= data.size()) return Step::kNeedMore;
      if (data[end + 1] != '\n') {
        return Bad(end + 1, "expected '\\n' after '\\r', found " + ByteName(data[end + 1]));
      }
      argv->push_back(data.substr(pos, static_cast<size_t>(length)));
      pos = end + 2;
    }
    return Step::kDone;
  }
};

// A command parsed inside MULTI, waiting for EXEC.
struct QueuedCommand {
  size_t offset;
  size_t first_arg;
  size_t arg_count;
};

}  // namespace

AofReplayResult ReplayAof(std::string_view data, const AofExecuteFn& execute) {
  AofReplayResult result;
  AofCursor cursor(data);
  std::vector<std::string_view> argv;
  bool in_multi = false;
  size_t multi_offset = 0;
  std::vector<QueuedCommand> queued;
  std::vector<std::string_view> queued_args;
  bool truncated = false;
  size_t truncated_item = 0;  // start of the command or annotation the data ends in

  auto corrupt = [&](uint64_t offset, std::string error) {
    result.status = AofReplayResult::Status::kCorrupt;
    result.error_offset = offset;
    result.error = std::move(error);
    return result;
  };
  auto run = [&](size_t offset, std::span<const std::string_view> command) {
    std::string error;
    if (!execute(command, &error)) {
      corrupt(offset, error.empty() ? "command rejected" : std::move(error));
      return false;
    }
    ++result.commands;
    return true;
  };

  while (cursor.pos < data.size()) {
    const size_t start = cursor.pos;
    if (data[start] == '#') {
      size_t newline = data.find('\n', start);
      if (newline == std::string_view::npos) {
        truncated = true;
        truncated_item = start;
        break;
      }
      cursor.pos = newline + 1;
      if (!in_multi) result.valid_bytes = cursor.pos;
      continue;
    }
    Step step = cursor.ReadCommand(&argv);
    if (step == Step::kNeedMore) {
      truncated = true;
      truncated_item = start;
      break;
    }
    if (step == Step::kBad) {
      return corrupt(cursor.bad_offset, "Bad file format reading the append only file at offset " +
                                            std::to_string(cursor.bad_offset) + ": " + cursor.why);
    }
    const bool is_multi = EqualsIgnoreCase(argv[0], "multi");
    const bool is_exec = EqualsIgnoreCase(argv[0], "exec");
    if (!in_multi) {
      if (is_exec) return corrupt(start, "EXEC without MULTI at offset " + std::to_string(start));
      if (is_multi) {
        in_multi = true;
        multi_offset = start;
        queued.clear();
        queued_args.clear();
      } else {
        if (!run(start, argv)) return result;
        result.valid_bytes = cursor.pos;
        continue;
      }
    } else if (is_multi) {
      return corrupt(start, "MULTI inside MULTI at offset " + std::to_string(start));
    }
    queued.push_back(QueuedCommand{start, queued_args.size(), argv.size()});
    queued_args.insert(queued_args.end(), argv.begin(), argv.end());
    if (is_exec) {
      const std::span<const std::string_view> args(queued_args);
      for (const QueuedCommand& command : queued) {
        if (!run(command.offset, args.subspan(command.first_arg, command.arg_count))) {
          return result;
        }
      }
      in_multi = false;
      result.valid_bytes = cursor.pos;
    }
  }

  if (truncated || in_multi) {
    result.status = AofReplayResult::Status::kTruncated;
    result.error_offset = data.size();
    if (in_multi) {
      result.in_transaction = true;
      result.valid_bytes = multi_offset;
      result.error =
          "Unexpected end of file inside the MULTI at offset " + std::to_string(multi_offset);
    } else {
      result.error =
          "Unexpected end of file inside the command at offset " + std::to_string(truncated_item);
    }
  }
  return result;
}

}  // namespace goblin
