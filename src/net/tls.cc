#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <sstream>

namespace goblin::net {

namespace {

std::string OpenSslError() {
  char text[256] = "unknown error";
  const unsigned long code = ERR_get_error();
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

// tls-protocols: the versions allowed, as Redis parses them ("TLSv1.2 TLSv1.3", any case).
bool ProtocolOptions(const std::string& protocols, uint64_t* disabled) {
  uint64_t allowed = 0;
  constexpr uint64_t kV10 = 1, kV11 = 2, kV12 = 4, kV13 = 8;
  std::istringstream words(protocols.empty() ? "TLSv1.2 TLSv1.3" : protocols);
  std::string word;
  while (words >> word) {
    if (strcasecmp(word.c_str(), "tlsv1") == 0) {
      allowed |= kV10;
    } else if (strcasecmp(word.c_str(), "tlsv1.1") == 0) {
      allowed |= kV11;
    } else if (strcasecmp(word.c_str(), "tlsv1.2") == 0) {
      allowed |= kV12;
    } else if (strcasecmp(word.c_str(), "tlsv1.3") == 0) {
      allowed |= kV13;
    } else {
      return false;
    }
  }
  *disabled = SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3;
  if (!(allowed & kV10)) *disabled |= SSL_OP_NO_TLSv1;
  if (!(allowed & kV11)) *disabled |= SSL_OP_NO_TLSv1_1;
  if (!(allowed & kV12)) *disabled |= SSL_OP_NO_TLSv1_2;
  if (!(allowed & kV13)) *disabled |= SSL_OP_NO_TLSv1_3;
  return allowed != 0;
}

int PasswordCallback(char* buffer, int size, int, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  if (password == nullptr || password->empty()) return 0;
  const int length = std::min<int>(size, static_cast<int>(password->size()));
  std::memcpy(buffer, password->data(), static_cast<size_t>(length));
  return length;
}

// One context: its certificate and key, the CA, protocols, ciphers. Null with *error.
SSL_CTX* MakeContext(bool server, const TlsOptions& options, const std::string& cert,
                     const std::string& key, const std::string& key_pass, std::string* error) {
  uint64_t disabled = 0;
  if (!ProtocolOptions(options.protocols, &disabled)) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and "
        "'TLSv1.3'.";
    return nullptr;
  }
  SSL_CTX* context = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (context == nullptr) {
    *error = "Failed to create TLS context: " + OpenSslError();
    return nullptr;
  }
  auto fail = [&](std::string text) {
    *error = std::move(text);
    SSL_CTX_free(context);
    return nullptr;
  };
  SSL_CTX_set_options(context, disabled | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  if (options.prefer_server_ciphers) SSL_CTX_set_options(context, SSL_OP_CIPHER_SERVER_PREFERENCE);
  // A partial write is kept (the output buffer resumes it, from a buffer that may have moved).
  // An idle connection gives back OpenSSL's record buffers (about 34 KB of its 42).
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                SSL_MODE_RELEASE_BUFFERS);
  if (server && options.session_caching) {
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(context, options.session_cache_size);
    SSL_CTX_set_timeout(context, static_cast<long>(options.session_cache_timeout));
    static const unsigned char kSessionContext[] = "goblin";
    SSL_CTX_set_session_id_context(context, kSessionContext, sizeof(kSessionContext) - 1);
  } else if (server) {
    SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  }
  int verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  if (server && options.auth_clients == "no") verify = SSL_VERIFY_NONE;
  if (server && options.auth_clients == "optional") verify = SSL_VERIFY_PEER;
  SSL_CTX_set_verify(context, verify, nullptr);
  SSL_CTX_set_default_passwd_cb(context, PasswordCallback);
  SSL_CTX_set_default_passwd_cb_userdata(context, const_cast<std::string*>(&key_pass));
  if (SSL_CTX_use_certificate_chain_file(context, cert.c_str()) <= 0) {
    return fail("Failed to load certificate: " + cert + ": " + OpenSslError());
  }
  if (SSL_CTX_use_PrivateKey_file(context, key.c_str(), SSL_FILETYPE_PEM) <= 0) {
    return fail("Failed to load private key: " + key + ": " + OpenSslError());
  }
  // The password is needed only while the key loads; the callback must not outlive it.
  SSL_CTX_set_default_passwd_cb_userdata(context, nullptr);
  const char* ca_file = options.ca_cert_file.empty() ? nullptr : options.ca_cert_file.c_str();
  const char* ca_dir = options.ca_cert_dir.empty() ? nullptr : options.ca_cert_dir.c_str();
  if ((ca_file != nullptr || ca_dir != nullptr) &&
      SSL_CTX_load_verify_locations(context, ca_file, ca_dir) <= 0) {
    return fail("Failed to configure CA certificate(s) file/directory: " + OpenSslError());
  }
  if (!options.dh_params_file.empty()) {
    BIO* file = BIO_new_file(options.dh_params_file.c_str(), "r");
    EVP_PKEY* parameters = file != nullptr ? PEM_read_bio_Parameters(file, nullptr) : nullptr;
    BIO_free(file);
    if (parameters == nullptr || SSL_CTX_set0_tmp_dh_pkey(context, parameters) <= 0) {
      EVP_PKEY_free(parameters);
      return fail("Failed to load DH params file: " + options.dh_params_file + ": " +
                  OpenSslError());
    }
  } else if (server) {
    SSL_CTX_set_dh_auto(context, 1);
  }
  if (!options.ciphers.empty() && !SSL_CTX_set_cipher_list(context, options.ciphers.c_str())) {
    return fail("Failed to configure ciphers: " + options.ciphers);
  }
  if (!options.ciphersuites.empty() &&
      !SSL_CTX_set_ciphersuites(context, options.ciphersuites.c_str())) {
    return fail("Failed to configure ciphersuites: " + options.ciphersuites);
  }
  return context;
}

}  // namespace

std::shared_ptr<TlsContext> TlsContext::Create(const TlsOptions& options, std::string* error) {
  if (options.cert_file.empty()) {
    *error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (options.key_file.empty()) {
    *error = "No tls-key-file configured!";
    return nullptr;
  }
  std::shared_ptr<TlsContext> tls(new TlsContext());
  tls->server_ = MakeContext(true, options, options.cert_file, options.key_file,
                             options.key_file_pass, error);
  if (tls->server_ == nullptr) return nullptr;
  const bool own_client_cert = !options.client_cert_file.empty();
  tls->client_ = MakeContext(false, options,
                             own_client_cert ? options.client_cert_file : options.cert_file,
                             own_client_cert ? options.client_key_file : options.key_file,
                             own_client_cert ? options.client_key_file_pass : options.key_file_pass,
                             error);
  if (tls->client_ == nullptr) return nullptr;
  return tls;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(server_);
  SSL_CTX_free(client_);
}

TlsConnection::TlsConnection(int fd, SSL_CTX* context, bool accept) : fd_(fd) {
  ssl_ = SSL_new(context);
  if (ssl_ == nullptr) {
    failed_ = true;
    error_ = OpenSslError();
    return;
  }
  SSL_set_fd(ssl_, fd);
  if (accept) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

TlsConnection::~TlsConnection() { Close(); }

bool TlsConnection::Handshake() {
  if (failed_) return false;
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    established_ = true;
    handshake_wants_write_ = false;
    UpdateInterest();
    return true;
  }
  const int reason = SSL_get_error(ssl_, result);
  if (reason == SSL_ERROR_WANT_READ || reason == SSL_ERROR_WANT_WRITE) {
    handshake_wants_write_ = reason == SSL_ERROR_WANT_WRITE;
    UpdateInterest();
    return false;
  }
  failed_ = true;
  error_ = reason == SSL_ERROR_SYSCALL && ERR_peek_error() == 0
               ? std::string(errno != 0 ? std::strerror(errno) : "connection closed by peer")
               : OpenSslError();
  return false;
}

void TlsConnection::OnReady(uint32_t readiness) {
  if (!established_) {
    if (!Handshake() && !failed_) return;  // waits for the peer
    // Established: data may already wait. Failed: the owner's read reports it.
    readiness = owner_wants_write_ ? kReadable | kWritable : kReadable;
    if (handler_ != nullptr) handler_->OnReady(readiness);
    return;
  }
  uint32_t forwarded = 0;
  if (readiness & kReadable) {
    forwarded |= kReadable;
    if (write_wants_read_) forwarded |= kWritable;
  }
  if (readiness & kWritable) {
    if (read_wants_write_) forwarded |= kReadable;
    if (owner_wants_write_) forwarded |= kWritable;
  }
  // The owner may close and free this connection in its handler: nothing after.
  if (forwarded != 0 && handler_ != nullptr) handler_->OnReady(forwarded);
}

ssize_t TlsConnection::Result(int result, bool reading) {
  const int reason = SSL_get_error(ssl_, result);
  switch (reason) {
    case SSL_ERROR_WANT_READ:
      if (!reading) write_wants_read_ = true;
      UpdateInterest();
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      if (reading) read_wants_write_ = true;
      UpdateInterest();
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:  // the peer closed the TLS session
      if (reading) return 0;
      errno = EPIPE;
      return -1;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {
        if (errno == 0) {  // the peer closed the socket without close_notify
          if (reading) return 0;
          errno = EPIPE;
        }
        return -1;
      }
      [[fallthrough]];
    default:
      error_ = OpenSslError();
      failed_ = true;
      errno = ECONNRESET;
      return -1;
  }
}

ssize_t TlsConnection::Read(char* buffer, size_t size) {
  if (failed_ || ssl_ == nullptr) {
    errno = ECONNRESET;
    return -1;
  }
  if (!established_ && !Handshake()) {
    if (failed_) {
      errno = ECONNRESET;
      return -1;
    }
    errno = EAGAIN;
    return -1;
  }
  ERR_clear_error();
  errno = 0;
  const int result = SSL_read(ssl_, buffer, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  if (result > 0) {
    if (read_wants_write_) {
      read_wants_write_ = false;
      UpdateInterest();
    }
    // Decrypted bytes left behind would not wake the loop (invariant 3).
    if (SSL_has_pending(ssl_) && loop_ != nullptr) loop_->MarkPending(fd_);
    return result;
  }
  return Result(result, true);
}

ssize_t TlsConnection::Write(const char* data, size_t size) {
  if (failed_ || ssl_ == nullptr) {
    errno = EPIPE;
    return -1;
  }
  if (!established_ && !Handshake()) {
    errno = failed_ ? EPIPE : EAGAIN;
    return -1;
  }
  if (size == 0) return 0;
  ERR_clear_error();
  errno = 0;
  const int result = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  if (result > 0) {
    if (write_wants_read_) {
      write_wants_read_ = false;
      UpdateInterest();
    }
    return result;
  }
  return Result(result, false);
}

// Small pieces (a reply's headers and short values) are gathered into one TLS record of up to
// 16 KB instead of a record each. A write that must be retried is retried with the same bytes
// first: the caller's output has not moved, and gathering it again yields the same prefix.
ssize_t TlsConnection::Writev(const iovec* vectors, int count) {
  constexpr size_t kRecord = 16 * 1024;
  if (count == 1 || vectors[0].iov_len >= kRecord) {
    return Write(static_cast<const char*>(vectors[0].iov_base), vectors[0].iov_len);
  }
  gather_.clear();
  for (int i = 0; i < count && gather_.size() < kRecord; ++i) {
    const size_t take = std::min(vectors[i].iov_len, kRecord - gather_.size());
    gather_.append(static_cast<const char*>(vectors[i].iov_base), take);
  }
  return Write(gather_.data(), gather_.size());
}

ssize_t TlsConnection::SendFile(int, off_t*, size_t) {
  errno = ENOTSUP;
  return -1;
}

bool TlsConnection::Watch(EventLoop& loop, EventHandler* handler, bool writable) {
  loop_ = &loop;
  handler_ = handler;
  owner_wants_write_ = writable;
  const bool ok = loop.Watch(fd_, this, false);
  // The first step now: a client's hello goes out (a server's finds nothing to read yet). A
  // connection that already failed is reported at the next round.
  if (!established_ && !Handshake() && failed_) loop.MarkPending(fd_);
  UpdateInterest();
  return ok;
}

void TlsConnection::SetWritable(bool writable) {
  owner_wants_write_ = writable;
  UpdateInterest();
}

void TlsConnection::UpdateInterest() {
  if (loop_ == nullptr) return;
  const bool writable = established_ ? owner_wants_write_ || read_wants_write_
                                     : handshake_wants_write_;
  loop_->SetWritable(fd_, writable);
}

void TlsConnection::Unwatch() {
  if (loop_ == nullptr) return;
  loop_->Unwatch(fd_);
  loop_ = nullptr;
}

int TlsConnection::WaitReady(bool writable, int64_t timeout_ms) {
  if (!established_) {
    // Invariant 1: a step first; done or failed, the caller's next call proceeds or reports.
    if (Handshake() || failed_) return 1;
    return WaitSocket(fd_, handshake_wants_write_, timeout_ms);
  }
  if (!writable && SSL_has_pending(ssl_)) return 1;
  return WaitSocket(fd_, writable || read_wants_write_ || handshake_wants_write_, timeout_ms);
}

int TlsConnection::ConnectError() { return SocketError(fd_); }

void TlsConnection::Close() {
  if (fd_ < 0) return;
  Unwatch();
  if (ssl_ != nullptr) {
    if (established_ && !failed_) SSL_shutdown(ssl_);  // one close_notify, not waited for
    SSL_free(ssl_);
    ssl_ = nullptr;
  }
  close(fd_);
  fd_ = -1;
}

std::string TlsConnection::LocalAddress() const { return LocalAddressOf(fd_); }

}  // namespace goblin::net
