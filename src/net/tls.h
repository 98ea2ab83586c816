// TLS with OpenSSL, as Redis 6+ speaks it: the certificates and settings (TlsContext) and a
// connection that encrypts its bytes (TlsConnection), a second implementation of Connection
// (connection.h) that nothing above the net layer tells apart from a plain one.
//
// Invariants:
//  1. Nothing blocks: the handshake advances one step per readiness of the socket, and a peer
//     that sends nothing, or garbage, costs one idle connection until the server closes it.
//     A caller that chooses to block (MIGRATE's connections) drives the handshake through
//     WaitReady, which takes its next step before waiting in the direction it needs.
//  2. The connection is watched with itself as the loop's handler: it drives the handshake,
//     turns OpenSSL's wants (a read that needs the socket writable, a write that needs it
//     readable) into the loop's interest, and forwards the readiness its owner asked for.
//  3. Bytes OpenSSL holds that Read has not returned yet leave the socket quiet: such a
//     connection asks the loop to deliver it readable again (EventLoop::MarkPending). OpenSSL
//     does not read ahead: with it, a replica's TLS link stalled in about one start in ten,
//     a lost wakeup not yet explained.
//  4. A context is shared: connections hold a reference to the SSL_CTX they were made with,
//     so replacing the context (CONFIG SET of a certificate) leaves them working.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "net/connection.h"

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;

namespace goblin::net {

// Redis's tls-* options (Config::Tls carries them to here).
struct TlsOptions {
  std::string cert_file, key_file, key_file_pass;
  std::string client_cert_file, client_key_file, client_key_file_pass;
  std::string ca_cert_file, ca_cert_dir, dh_params_file;
  std::string protocols;     // "TLSv1.2 TLSv1.3"; empty: TLSv1.2 and up
  std::string ciphers;       // TLS 1.2 and below
  std::string ciphersuites;  // TLS 1.3
  std::string auth_clients = "yes";  // yes | no | optional
  bool prefer_server_ciphers = false;
  bool session_caching = true;
  int64_t session_cache_size = 20480;
  int64_t session_cache_timeout = 300;
};

class TlsContext {
 public:
  // Loads the certificates and applies the settings; null with *error (OpenSSL's reason, as
  // Redis logs it) when something does not load.
  static std::shared_ptr<TlsContext> Create(const TlsOptions& options, std::string* error);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Accepted connections (the server's certificate, client verification as tls-auth-clients
  // says) and connections this server opens (to a master: tls-client-cert-file, or the
  // server's certificate, and the peer verified against the CA).
  SSL_CTX* server() const { return server_; }
  SSL_CTX* client() const { return client_; }

 private:
  TlsContext() = default;
  SSL_CTX* server_ = nullptr;
  SSL_CTX* client_ = nullptr;
};

class TlsConnection final : public Connection, private EventHandler {
 public:
  // Takes ownership of fd (non-blocking, connected): accept true for a peer that connected to
  // us, false for one we connected to.
  TlsConnection(int fd, SSL_CTX* context, bool accept);
  ~TlsConnection() override;

  ssize_t Read(char* buffer, size_t size) override;
  ssize_t Write(const char* data, size_t size) override;
  ssize_t Writev(const iovec* vectors, int count) override;
  bool CanSendFile() const override { return false; }
  ssize_t SendFile(int, off_t*, size_t) override;
  bool Watch(EventLoop& loop, EventHandler* handler, bool writable) override;
  void SetWritable(bool writable) override;
  void Unwatch() override;
  int WaitReady(bool writable, int64_t timeout_ms) override;
  int ConnectError() override;
  void Close() override;
  int fd() const override { return fd_; }
  std::string LocalAddress() const override;

  bool handshake_done() const { return established_; }
  bool failed() const { return failed_; }
  // Why the handshake or the last read or write failed ("" when none did), for the log.
  const std::string& error() const { return error_; }

 private:
  void OnReady(uint32_t readiness) override;
  // One handshake step: true once established; false while it waits or after it failed.
  bool Handshake();
  // Maps the result of an SSL call to the system calls' convention (connection.h).
  ssize_t Result(int result, bool reading);
  void UpdateInterest();

  int fd_;
  SSL* ssl_ = nullptr;
  EventLoop* loop_ = nullptr;
  EventHandler* handler_ = nullptr;
  bool established_ = false;
  bool failed_ = false;
  bool owner_wants_write_ = false;
  bool read_wants_write_ = false;  // a read waits for the socket to be writable
  bool write_wants_read_ = false;  // a write waits for the socket to be readable
  bool handshake_wants_write_ = false;
  std::string error_;
  std::string gather_;  // Writev's pieces, gathered into one record
};

}  // namespace goblin::net
