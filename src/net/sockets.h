// Opening sockets: listeners, accepted connections and outgoing TCP connections, each a
// non-blocking descriptor (the connections close-on-exec too). Reading and writing them is
// Connection's (connection.h).
#pragma once

#include <netdb.h>

#include <memory>
#include <string>
#include <string_view>

#include "net/connection.h"

namespace goblin::net {

// A listening TCP socket bound to address (one getaddrinfo result) with SO_REUSEADDR, and an
// IPv6 one IPv6 only. Returns the descriptor, or -1 with errno set.
int ListenTcp(const addrinfo& address, int backlog);
// A listening Unix-domain socket at path; a file already there is removed first. Returns the
// descriptor, or -1 with errno set (ENAMETOOLONG when path does not fit an address).
int ListenUnix(const std::string& path, int backlog);

// The next connection waiting on listener, its peer's address in *peer; null with errno set
// (EAGAIN: none waits).
std::unique_ptr<PlainConnection> Accept(int listener, sockaddr_storage* peer);

struct ConnectResult {
  // Null when no connection could be started; then error says why (0: host not resolved).
  std::unique_ptr<PlainConnection> connection;
  bool in_progress = false;  // the handshake goes on: writable, then ConnectError, says how
  int error = 0;
};
// Resolves host and starts a non-blocking connection to port on the first address that takes
// it, with TCP_NODELAY.
ConnectResult ConnectTcp(const std::string& host, int port);

// Sends message to the service manager's notification socket ($NOTIFY_SOCKET, a path or, with
// a leading '@', an abstract name), as sd_notify does. False when there is none or it failed.
bool NotifyServiceManager(std::string_view message);

}  // namespace goblin::net
