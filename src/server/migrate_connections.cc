#include "server/migrate_connections.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>

#include "server/cycle_clock.h"

namespace goblin {

namespace {

// Redis writes a MIGRATE request in pieces of this size, each with its own timeout.
constexpr size_t kWritePiece = 64 * 1024;

int64_t SteadyMillis() { return SteadyMicros() / 1000; }

// now + timeout_ms, for any timeout MIGRATE accepts (up to the largest long).
int64_t DeadlineAfter(int64_t timeout_ms) {
  constexpr int64_t kLongest = int64_t{1} << 50;  // 35,000 years
  return SteadyMillis() + std::min(timeout_ms, kLongest);
}

// The cache's key: the texts as MIGRATE got them, as Redis names its cached sockets.
std::string ConnectionName(std::string_view host, std::string_view port) {
  std::string name;
  name.reserve(host.size() + 1 + port.size());
  name.append(host).append(":").append(port);
  return name;
}

}  // namespace

std::unique_ptr<MigrateConnection> MigrateConnection::Open(const std::string& host, int port,
                                                           int64_t timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses) != 0) return nullptr;
  // As Redis's anetTcpNonBlockConnect: the first address whose connect starts.
  int fd = -1;
  bool in_progress = false;
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    if (errno == EINPROGRESS) {
      in_progress = true;
      break;
    }
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(addresses);
  if (fd < 0) return nullptr;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::unique_ptr<MigrateConnection> connection(new MigrateConnection(fd));
  if (in_progress) {
    const Status waited = connection->Wait(/*writable=*/true, DeadlineAfter(timeout_ms));
    int error = 0;
    socklen_t length = sizeof(error);
    if (waited != Status::kOk) {
      connection->failed_ = waited;
    } else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      connection->failed_ = Status::kError;
    }
  }
  return connection;
}

MigrateConnection::~MigrateConnection() { ::close(fd_); }

MigrateConnection::Status MigrateConnection::Wait(bool writable, int64_t deadline_ms) {
  for (;;) {
    const int64_t left = deadline_ms - SteadyMillis();
    if (left <= 0) return Status::kTimeout;
    pollfd event{fd_, static_cast<short>(writable ? POLLOUT : POLLIN), 0};
    const int ready = ::poll(&event, 1, static_cast<int>(std::min<int64_t>(left, 1 << 30)));
    if (ready > 0) return Status::kOk;
    if (ready < 0 && errno != EINTR) return Status::kError;
  }
}

MigrateConnection::Status MigrateConnection::WriteAll(std::string_view bytes, int64_t timeout_ms) {
  if (failed_ != Status::kOk) return failed_;
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, kWritePiece);
    bytes.remove_prefix(piece.size());
    const int64_t deadline = DeadlineAfter(timeout_ms);
    while (!piece.empty()) {
      const ssize_t sent = ::send(fd_, piece.data(), piece.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        piece.remove_prefix(static_cast<size_t>(sent));
        continue;
      }
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return Status::kError;
      }
      if (const Status waited = Wait(/*writable=*/true, deadline); waited != Status::kOk) {
        return waited;
      }
    }
  }
  return Status::kOk;
}

MigrateConnection::Status MigrateConnection::ReadLine(std::string* line, int64_t timeout_ms) {
  if (failed_ != Status::kOk) return failed_;
  const int64_t deadline = DeadlineAfter(timeout_ms);
  for (;;) {
    const size_t scanned = std::min(input_.size(), kMaxLine);
    const size_t newline = input_.find('\n');
    if (newline != std::string::npos && newline < kMaxLine) {
      const size_t end = newline > 0 && input_[newline - 1] == '\r' ? newline - 1 : newline;
      line->assign(input_, 0, end);
      input_.erase(0, newline + 1);
      return Status::kOk;
    }
    if (scanned == kMaxLine) {
      line->assign(input_, 0, kMaxLine);
      input_.erase(0, kMaxLine);
      return Status::kOk;
    }
    char buffer[16 * 1024];
    const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got > 0) {
      input_.append(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got == 0) return Status::kError;  // the target closed the connection
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Status::kError;
    if (const Status waited = Wait(/*writable=*/false, deadline); waited != Status::kOk) {
      return waited;
    }
  }
}

MigrateConnection* MigrateConnections::Get(std::string_view host, std::string_view port,
                                           int64_t timeout_ms, int64_t now_s,
                                           uint64_t random_bits) {
  std::string name = ConnectionName(host, port);
  if (auto it = connections_.find(name); it != connections_.end()) {
    it->second->last_use_s = now_s;
    return it->second.get();
  }
  if (connections_.size() >= kMaxConnections) {
    connections_.erase(std::next(connections_.begin(),
                                 static_cast<std::ptrdiff_t>(random_bits % connections_.size())));
  }
  std::unique_ptr<MigrateConnection> connection =
      MigrateConnection::Open(std::string(host), std::atoi(std::string(port).c_str()), timeout_ms);
  if (connection == nullptr) return nullptr;
  connection->last_use_s = now_s;
  return connections_.emplace(std::move(name), std::move(connection)).first->second.get();
}

void MigrateConnections::Close(std::string_view host, std::string_view port) {
  if (auto it = connections_.find(ConnectionName(host, port)); it != connections_.end()) {
    connections_.erase(it);
  }
}

void MigrateConnections::CloseIdle(int64_t now_s) {
  std::erase_if(connections_,
                [&](const auto& item) { return now_s - item.second->last_use_s > kIdleSeconds; });
}

}  // namespace goblin
