#include "server/migrate_connections.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iterator>

#include "net/sockets.h"
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
                                                           int64_t timeout_ms,
                                                           SSL_CTX* tls_client) {
  net::ConnectResult connected = net::ConnectTcp(host, port);
  if (connected.connection == nullptr) return nullptr;
  std::unique_ptr<MigrateConnection> connection(
      new MigrateConnection(std::move(connected.connection)));
  const int64_t deadline = DeadlineAfter(timeout_ms);
  if (connected.in_progress) {
    const Status waited = connection->Wait(/*writable=*/true, deadline);
    if (waited != Status::kOk) {
      connection->failed_ = waited;
    } else if (connection->connection_->ConnectError() != 0) {
      connection->failed_ = Status::kError;
    }
  }
  if (tls_client == nullptr || connection->failed_ != Status::kOk) return connection;
  // tls-cluster: the TLS handshake shares the connect's timeout, as in Redis.
  const int fd = static_cast<net::PlainConnection*>(connection->connection_.get())->Release();
  auto tls = std::make_unique<net::TlsConnection>(fd, tls_client, /*accept=*/false);
  net::TlsConnection& handshake = *tls;
  connection->connection_ = std::move(tls);
  while (!handshake.handshake_done() && !handshake.failed()) {
    // WaitReady takes the handshake's next step before it waits (net/tls.h).
    if (const Status waited = connection->Wait(/*writable=*/false, deadline);
        waited != Status::kOk) {
      connection->failed_ = waited;
      return connection;
    }
  }
  if (handshake.failed()) connection->failed_ = Status::kError;
  return connection;
}

MigrateConnection::Status MigrateConnection::Wait(bool writable, int64_t deadline_ms) {
  const int ready = connection_->WaitReady(writable, deadline_ms - SteadyMillis());
  return ready > 0 ? Status::kOk : ready == 0 ? Status::kTimeout : Status::kError;
}

MigrateConnection::Status MigrateConnection::WriteAll(std::string_view bytes, int64_t timeout_ms) {
  if (failed_ != Status::kOk) return failed_;
  while (!bytes.empty()) {
    std::string_view piece = bytes.substr(0, kWritePiece);
    bytes.remove_prefix(piece.size());
    const int64_t deadline = DeadlineAfter(timeout_ms);
    while (!piece.empty()) {
      const ssize_t sent = connection_->Write(piece.data(), piece.size());
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
    const ssize_t got = connection_->Read(buffer, sizeof(buffer));
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
                                           uint64_t random_bits, SSL_CTX* tls_client) {
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
      MigrateConnection::Open(std::string(host), std::atoi(std::string(port).c_str()), timeout_ms,
                              tls_client);
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
