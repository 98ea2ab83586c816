// A connection: a byte stream to a peer (a client, a replica, a master, a MIGRATE target) and
// the only way the layers above read, write and wait on one. The server never sees how the
// bytes travel: PlainConnection (below) moves them with the socket calls themselves; a TLS
// connection, a second implementation of the same interface, will encrypt them, and nothing
// above changes when it does.
//
// Conventions, as the system calls have them, so that callers keep their error handling:
//  1. Read, Write and Writev return the bytes moved, or -1 with errno set: EAGAIN when the
//     connection cannot move any now (the loop says when it can), EINTR to retry. Read returns
//     0 at the end of the stream.
//  2. Every connection is non-blocking. Only WaitReady blocks, for MIGRATE's bounded waits.
//  3. Readiness goes through the event loop (event_loop.h) to the handler given to Watch; a
//     connection unwatches itself before it closes (the loop's invariant 4).
//  4. SendFile exists only where CanSendFile says so: a connection that transforms its bytes
//     cannot hand a file to the kernel, and SendFileChunk reads and writes through it instead.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/event_loop.h"

namespace goblin::net {

class Connection {
 public:
  Connection() = default;
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  virtual ssize_t Read(char* buffer, size_t size) = 0;
  virtual ssize_t Write(const char* data, size_t size) = 0;
  virtual ssize_t Writev(const iovec* vectors, int count) = 0;
  // Whether SendFile can send a file's bytes directly (convention 4).
  virtual bool CanSendFile() const = 0;
  // Sends up to count bytes of file from *offset, advancing it. REQUIRES: CanSendFile().
  virtual ssize_t SendFile(int file, off_t* offset, size_t count) = 0;

  // Readiness goes to handler: always when readable, and when writable while SetWritable(true).
  virtual bool Watch(EventLoop& loop, EventHandler* handler, bool writable) = 0;
  virtual void SetWritable(bool writable) = 0;
  virtual void Unwatch() = 0;
  // Blocks until the connection is readable (or writable) or timeout_ms passes. Returns 1 when
  // ready, 0 at the timeout, -1 with errno set on an error.
  virtual int WaitReady(bool writable, int64_t timeout_ms) = 0;
  // After a non-blocking connect reported writable: 0 when it succeeded, else its errno.
  virtual int ConnectError() = 0;
  // Unwatches and closes; Read and Write fail afterwards. The destructor closes too.
  virtual void Close() = 0;

  // The descriptor underneath, as CLIENT LIST shows it; -1 once closed.
  virtual int fd() const = 0;
  // "ip:port" of this end ("?:0" when not TCP).
  virtual std::string LocalAddress() const = 0;
};

// A TCP or Unix-domain socket, or any other stream descriptor (a child's pipe), used with the
// plain system calls.
class PlainConnection final : public Connection {
 public:
  // Takes ownership of fd, which is non-blocking.
  explicit PlainConnection(int fd) : fd_(fd) {}
  ~PlainConnection() override;

  ssize_t Read(char* buffer, size_t size) override;
  ssize_t Write(const char* data, size_t size) override;
  ssize_t Writev(const iovec* vectors, int count) override;
  bool CanSendFile() const override { return true; }
  ssize_t SendFile(int file, off_t* offset, size_t count) override;
  bool Watch(EventLoop& loop, EventHandler* handler, bool writable) override;
  void SetWritable(bool writable) override;
  void Unwatch() override;
  int WaitReady(bool writable, int64_t timeout_ms) override;
  int ConnectError() override;
  void Close() override;
  int fd() const override { return fd_; }
  std::string LocalAddress() const override;

  // Hands the descriptor to another owner (a TlsConnection); this one is closed after.
  int Release() {
    const int fd = fd_;
    Unwatch();
    fd_ = -1;
    return fd;
  }

  // TCP options of an accepted or connected socket.
  void SetNoDelay();
  void SetKeepAlive();

 private:
  int fd_;
  EventLoop* loop_ = nullptr;  // while watched
};

// Connection::WaitReady and ConnectError for socket fd, whatever travels over it.
int WaitSocket(int fd, bool writable, int64_t timeout_ms);
int SocketError(int fd);
// "ip:port" of the local end of socket fd ("?:0" when not TCP).
std::string LocalAddressOf(int fd);
// "ip:port" of a TCP address ("?:0" for another family).
std::string FormatAddress(const sockaddr_storage& address);
// Whether address is 127.0.0.0/8 or ::1 (IPv4-mapped too): protected mode's local peers.
bool IsLoopback(const sockaddr_storage& address);

// Sends up to count bytes of file, from *offset (advanced by what was sent), to connection:
// with SendFile when it can, else read into buffer and written through it. Returns as Write.
ssize_t SendFileChunk(Connection& connection, int file, off_t* offset, size_t count,
                      std::vector<char>* buffer);

}  // namespace goblin::net
