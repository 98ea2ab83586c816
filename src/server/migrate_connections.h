// MIGRATE's connections to other servers, kept for reuse as Redis keeps its
// migrate_cached_sockets: one per "host:port" text, at most kMaxConnections (a random one is
// closed to make room), each closed once unused for more than kIdleSeconds.
//
// I/O on them blocks the serving thread, as Redis's does, and every wait is bounded:
//  1. Open's connect waits at most the timeout for the handshake (TCP's, then TLS's when the
//     connection is to speak TLS). A handshake that does not finish in time leaves the
//     connection failed with kTimeout, so the first write reports it at once instead of
//     waiting a second timeout (Redis waits twice).
//  2. WriteAll sends in 64 KB pieces, each within its own timeout (Redis's syncWrite), so a
//     large payload to a live target is not cut short while a dead one costs one timeout.
//  3. ReadLine waits at most the timeout for one whole line, which it returns without its
//     CR LF, at most kMaxLine bytes (the rest stays for the next line, as Redis's 1 KB
//     buffer leaves it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "net/connection.h"
#include "net/tls.h"

namespace goblin {

class MigrateConnection {
 public:
  enum class Status { kOk, kTimeout, kError };

  static constexpr size_t kMaxLine = 1023;

  // Resolves host and starts the connection to port, speaking TLS with tls_client's settings
  // when it is not null; waits for the handshakes at most timeout_ms. Null only when no
  // connection could even be attempted (an unknown host, no socket): Redis's "error or
  // timeout connecting to the client".
  static std::unique_ptr<MigrateConnection> Open(const std::string& host, int port,
                                                 int64_t timeout_ms, SSL_CTX* tls_client);
  MigrateConnection(const MigrateConnection&) = delete;
  MigrateConnection& operator=(const MigrateConnection&) = delete;

  Status WriteAll(std::string_view bytes, int64_t timeout_ms);
  Status ReadLine(std::string* line, int64_t timeout_ms);

  // The database the target last selected through this connection, -1 when unknown.
  int64_t last_db = -1;
  int64_t last_use_s = 0;

 private:
  explicit MigrateConnection(std::unique_ptr<net::Connection> connection)
      : connection_(std::move(connection)) {}
  // Waits until the connection is readable (or writable) or deadline_ms passes.
  Status Wait(bool writable, int64_t deadline_ms);

  std::unique_ptr<net::Connection> connection_;
  Status failed_ = Status::kOk;  // a handshake that did not complete
  std::string input_;            // bytes read past the last line returned
};

class MigrateConnections {
 public:
  static constexpr size_t kMaxConnections = 64;
  static constexpr int64_t kIdleSeconds = 10;

  // The cached connection to host:port (the texts as MIGRATE got them), or a new one opened
  // with the port as atoi reads the text (over TLS when tls_client is not null, as Open);
  // null when it cannot be opened. random_bits picks the connection closed when the cache
  // is full.
  MigrateConnection* Get(std::string_view host, std::string_view port, int64_t timeout_ms,
                         int64_t now_s, uint64_t random_bits, SSL_CTX* tls_client);
  void Close(std::string_view host, std::string_view port);
  // Closes the connections unused for more than kIdleSeconds.
  void CloseIdle(int64_t now_s);
  size_t size() const { return connections_.size(); }

 private:
  std::map<std::string, std::unique_ptr<MigrateConnection>, std::less<>> connections_;
};

}  // namespace goblin
