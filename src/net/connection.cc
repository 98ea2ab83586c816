#include "net/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace goblin::net {

namespace {

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PlainConnection::~PlainConnection() { Close(); }

ssize_t PlainConnection::Read(char* buffer, size_t size) { return read(fd_, buffer, size); }

ssize_t PlainConnection::Write(const char* data, size_t size) { return write(fd_, data, size); }

ssize_t PlainConnection::Writev(const iovec* vectors, int count) {
  return writev(fd_, vectors, count);
}

ssize_t PlainConnection::SendFile(int file, off_t* offset, size_t count) {
  return sendfile(fd_, file, offset, count);
}

bool PlainConnection::Watch(EventLoop& loop, EventHandler* handler, bool writable) {
  loop_ = &loop;
  return loop.Watch(fd_, handler, writable);
}

void PlainConnection::SetWritable(bool writable) {
  if (loop_ != nullptr) loop_->SetWritable(fd_, writable);
}

void PlainConnection::Unwatch() {
  if (loop_ == nullptr) return;
  loop_->Unwatch(fd_);
  loop_ = nullptr;
}

int PlainConnection::WaitReady(bool writable, int64_t timeout_ms) {
  return WaitSocket(fd_, writable, timeout_ms);
}

int PlainConnection::ConnectError() { return SocketError(fd_); }

int WaitSocket(int fd, bool writable, int64_t timeout_ms) {
  const int64_t deadline = SteadyMillis() + timeout_ms;
  for (;;) {
    const int64_t left = deadline - SteadyMillis();
    if (left <= 0) return 0;
    pollfd event{fd, static_cast<short>(writable ? POLLOUT : POLLIN), 0};
    const int ready = poll(&event, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (ready > 0) return 1;
    if (ready < 0 && errno != EINTR) return -1;
  }
}

int SocketError(int fd) {
  int error = 0;
  socklen_t length = sizeof(error);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return errno;
  return error;
}

void PlainConnection::Close() {
  if (fd_ < 0) return;
  Unwatch();
  close(fd_);
  fd_ = -1;
}

std::string PlainConnection::LocalAddress() const { return LocalAddressOf(fd_); }

std::string LocalAddressOf(int fd) {
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  return FormatAddress(local);
}

void PlainConnection::SetNoDelay() {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void PlainConnection::SetKeepAlive() {
  int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
}

std::string FormatAddress(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

bool IsLoopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

ssize_t SendFileChunk(Connection& connection, int file, off_t* offset, size_t count,
                      std::vector<char>* buffer) {
  if (connection.CanSendFile()) return connection.SendFile(file, offset, count);
  // As Redis does for TLS: the file's bytes through the connection. What the connection does
  // not take is read again next time, from the offset it stopped at.
  if (buffer->size() < count) buffer->resize(count);
  const ssize_t got = pread(file, buffer->data(), count, *offset);
  if (got <= 0) return got;
  const ssize_t sent = connection.Write(buffer->data(), static_cast<size_t>(got));
  if (sent > 0) *offset += sent;
  return sent;
}

}  // namespace goblin::net
