// POSIX file helpers for the persistence layer (AOF, manifest, snapshots): whole-buffer writes,
// whole-file reads, and durable atomic replacement of a small file.
//
// Contract shared by every function here:
//  1. A false return comes with *error set to one human-readable line naming the operation, the
//     path and strerror(errno), e.g. "open appendonlydir/x.manifest: Permission denied".
//  2. EINTR is retried, never reported.
//  3. "Durable" means fsync'ed data and an fsync'ed directory entry: after a power loss the file
//     is there with these bytes.
//
// All functions are thread-compatible (they share no state) and block on disk I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace goblin {

// dir + "/" + name, without doubling a trailing '/'; an empty dir gives name unchanged.
std::string JoinPath(const std::string& dir, const std::string& name);

// The directory part of path ("." when it has none, "/" for a file at the root).
std::string DirectoryOf(const std::string& path);

// Writes all size bytes to fd, looping over short writes. A write that returns 0 is an error
// (it would otherwise loop forever).
bool WriteAll(int fd, const char* data, size_t size, std::string* error);

// As above, and *written says how many bytes reached fd, also on failure, so that a caller can
// keep the unwritten tail.
bool WriteAll(int fd, const char* data, size_t size, size_t* written, std::string* error);

// Replaces *out with the contents of path.
bool ReadWholeFile(const std::string& path, std::string* out, std::string* error);

// fsyncs a directory so that entries created, renamed or removed in it survive a power loss.
// Filesystems that cannot fsync a directory (EINVAL) count as success, as in Redis.
bool FsyncDirectory(const std::string& dir, std::string* error);

// Creates dir (one level, mode 0755) unless it exists as a directory; fsyncs its parent when it
// was created.
bool CreateDirectoryIfMissing(const std::string& dir, std::string* error);

// Creates "<path>.tmp-<pid>", lets write(fd, error) fill it, fsyncs and closes it, renames it
// over path and fsyncs the directory. A crash at any point leaves path either whole and old or
// whole and new (at worst with a stray temporary beside it). Without durable the two fsyncs are
// skipped: a crash of the process still leaves a whole file, a crash of the machine may leave
// the old one. On failure the temporary is
// removed and path is untouched, except when only the final directory fsync fails (the new
// file is in place by then). write's error is passed on with the temporary's name after it.
bool ReplaceFile(const std::string& path, const std::function<bool(int, std::string*)>& write,
                 std::string* error, bool durable = true);

// ReplaceFile with contents as the new file.
bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error,
                         bool durable = true);

// Redis's test knobs key-load-delay and rdb-key-save-delay: sleeps microseconds once per key
// loaded or saved. A negative -n sleeps one microsecond for one key in n, drawn at random, as
// Redis's debugDelay does, for delays finer than a system call.
void SleepPerKey(int64_t microseconds);

// A whole file mapped read-only (and read ahead), for the loaders of snapshot files. Errors are
// "<path>: cannot open|stat|map: <strerror>"; a missing file is reported through *missing with
// no error, so that startup can tell "no file" from "bad file".
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  bool Open(const std::string& path, bool* missing, std::string* error);
  // The bytes (empty before Open succeeds and for an empty file).
  std::string_view data() const { return {static_cast<const char*>(map_), size_}; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
};

}  // namespace goblin
