#include "persist/file_util.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace goblin {
namespace {

// Builds the contract's error line from errno; call it before anything can change errno.
std::string ErrnoMessage(std::string_view operation, const std::string& path) {
  std::string message(operation);
  message += ' ';
  message += path;
  message += ": ";
  message += std::strerror(errno);
  return message;
}

int OpenRetryingEintr(const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

void SleepPerKey(int64_t microseconds) {
  if (microseconds < 0) {
    thread_local std::minstd_rand draw{std::random_device{}()};
    microseconds = draw() % static_cast<uint64_t>(-microseconds) == 0 ? 1 : 0;
  }
  if (microseconds > 0) std::this_thread::sleep_for(std::chrono::microseconds(microseconds));
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, const char* data, size_t size, std::string* error) {
  size_t written = 0;
  return WriteAll(fd, data, size, &written, error);
}

bool WriteAll(int fd, const char* data, size_t size, size_t* written, std::string* error) {
  *written = 0;
  while (*written < size) {
    ssize_t n = ::write(fd, data + *written, size - *written);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::string("write: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) {
      *error = "write: wrote 0 bytes";
      return false;
    }
    *written += static_cast<size_t>(n);
  }
  return true;
}

bool ReadWholeFile(const std::string& path, std::string* out, std::string* error) {
  out->clear();
  int fd = OpenRetryingEintr(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = ErrnoMessage("open", path);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out->reserve(static_cast<size_t>(st.st_size));
  // Read to EOF rather than trusting st_size: the file may grow while we read, and some files
  // (/proc, pipes) report 0.
  char chunk[64 * 1024];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = ErrnoMessage("read", path);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

bool FsyncDirectory(const std::string& dir, std::string* error) {
  int fd = OpenRetryingEintr(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    *error = ErrnoMessage("open directory", dir);
    return false;
  }
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EINVAL) {
    *error = ErrnoMessage("fsync directory", dir);
    ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

bool CreateDirectoryIfMissing(const std::string& dir, std::string* error) {
  if (::mkdir(dir.c_str(), 0755) == 0) return FsyncDirectory(DirectoryOf(dir), error);
  if (errno != EEXIST) {
    *error = ErrnoMessage("mkdir", dir);
    return false;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    *error = ErrnoMessage("stat", dir);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    *error = "mkdir " + dir + ": exists and is not a directory";
    return false;
  }
  return true;
}

bool ReplaceFile(const std::string& path, const std::function<bool(int, std::string*)>& write,
                 std::string* error, bool durable) {
  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  int fd = OpenRetryingEintr(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = ErrnoMessage("open", temp);
    return false;
  }
  std::string write_error;
  if (!write(fd, &write_error)) {
    *error = write_error + " (" + temp + ")";
    ::close(fd);
    ::unlink(temp.c_str());
    return false;
  }
  int rc = 0;
  while (durable && (rc = ::fsync(fd)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    *error = ErrnoMessage("fsync", temp);
    ::close(fd);
    ::unlink(temp.c_str());
    return false;
  }
  // close() after a successful fsync can still report a deferred error on some filesystems
  // (NFS); a file we cannot vouch for must not replace the old one.
  if (::close(fd) != 0 && errno != EINTR) {
    *error = ErrnoMessage("close", temp);
    ::unlink(temp.c_str());
    return false;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    *error = ErrnoMessage("rename " + temp + " to", path);
    ::unlink(temp.c_str());
    return false;
  }
  // Until the directory is fsynced the rename itself may be lost; the old file is then still
  // whole, but the caller must not act (delete files) as if the new one were durable.
  return !durable || FsyncDirectory(DirectoryOf(path), error);
}

bool WriteFileAtomically(const std::string& path, std::string_view contents, std::string* error,
                         bool durable) {
  return ReplaceFile(
      path,
      [&](int fd, std::string* write_error) {
        return WriteAll(fd, contents.data(), contents.size(), write_error);
      },
      error, durable);
}

MappedFile::~MappedFile() {
  if (map_ != nullptr) munmap(map_, size_);
}

bool MappedFile::Open(const std::string& path, bool* missing, std::string* error) {
  *missing = false;
  const int fd = OpenRetryingEintr(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *missing = true;
      return false;
    }
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = path + ": cannot stat: " + std::strerror(errno);
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
      *error = path + ": cannot map: " + std::strerror(errno);
      close(fd);
      return false;
    }
    map_ = map;
    size_ = size;
  }
  close(fd);
  return true;
}

}  // namespace goblin
