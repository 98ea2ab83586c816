#include "net/sockets.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace goblin::net {

int ListenTcp(const addrinfo& address, int backlog) {
  const int fd = socket(address.ai_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  if (bind(fd, address.ai_addr, address.ai_addrlen) != 0 || listen(fd, backlog) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

int ListenUnix(const std::string& path, int backlog) {
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, backlog) != 0) {
    const int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

std::unique_ptr<PlainConnection> Accept(int listener, sockaddr_storage* peer) {
  socklen_t peer_length = sizeof(*peer);
  const int fd = accept4(listener, reinterpret_cast<sockaddr*>(peer), &peer_length,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::make_unique<PlainConnection>(fd);
}

ConnectResult ConnectTcp(const std::string& host, int port) {
  ConnectResult result;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses) != 0) return result;
  // As Redis's anetTcpNonBlockConnect: the first address whose connect starts.
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      result.error = errno;
      continue;
    }
    const bool connected = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (connected || errno == EINPROGRESS) {
      result.connection = std::make_unique<PlainConnection>(fd);
      result.connection->SetNoDelay();
      result.in_progress = !connected;
      result.error = 0;
      break;
    }
    result.error = errno;
    close(fd);
  }
  freeaddrinfo(addresses);
  return result;
}

bool NotifyServiceManager(std::string_view message) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(path);
  if (length >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, path, length);
  if (path[0] == '@') address.sun_path[0] = '\0';  // an abstract name
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length);
  const bool sent = sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                           reinterpret_cast<const sockaddr*>(&address), size) >= 0;
  close(fd);
  return sent;
}

}  // namespace goblin::net
