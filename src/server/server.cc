#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/ascii.h"
#include "core/string_number.h"
#include "persist/persistence.h"
#include "server/cycle_clock.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/memory_stats.h"

namespace goblin {

namespace {

volatile sig_atomic_t g_shutdown_signal = 0;

void OnShutdownSignal(int signal_number) { g_shutdown_signal = signal_number; }

bool SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
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

// Redis's protected-mode refusal, sent to a remote peer when no password protects the server.
constexpr std::string_view kProtectedModeError =
    "-DENIED Redis is running in protected mode because protected mode is enabled and no "
    "password is set for the default user. In this mode connections are only accepted from the "
    "loopback interface. If you want to connect from external computers to Redis you may adopt "
    "one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG "
    "SET protected-mode no' from the loopback interface by connecting to Redis from the same "
    "host the server is running, however MAKE SURE Redis is not publicly accessible from "
    "internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively "
    "you can just disable the protected mode by editing the Redis configuration file, and "
    "setting the protected mode option to 'no', and then restarting the server. 3) If you "
    "started the server manually just for testing, restart it with the '--protected-mode no' "
    "option. 4) Set up an authentication password for the default user. NOTE: You only need "
    "to do one of the above things in order for the server to start accepting connections from "
    "the outside.\r\n";

// Tokens of epoll events: listeners are tagged so they never collide with client fds.
constexpr uint64_t kListenerTag = 1ULL << 40;

constexpr size_t kReadChunk = 64 * 1024;
// Redis clamps hz into this range whatever the configuration says.
constexpr int64_t kMinHz = 1;
constexpr int64_t kMaxHz = 500;
constexpr size_t kSlowlogArgs = 32;
constexpr size_t kSlowlogArgBytes = 128;
constexpr size_t kLatencyHistory = 160;

}  // namespace

Database& CommandContext::db() { return server.db(client.db); }

Server::Server(Config config_in) : config(std::move(config_in)), rng_(std::random_device{}()) {
  config.hz = std::clamp<int64_t>(config.hz, kMinHz, kMaxHz);
  dbs_.resize(static_cast<size_t>(config.databases));
  waiters_.resize(dbs_.size());
  for (size_t i = 0; i < dbs_.size(); ++i) {
    dbs_[i].set_counters(&stats.keyspace);
    waiters_[i].any_ready = &any_ready_;
    dbs_[i].set_waiters(&waiters_[i]);
    dbs_[i].set_use_marking(&mark_key_use_);
  }
  start_time_ms = NowMs();
  last_save_unix = start_time_ms / 1000;
  persistence = std::make_unique<Persistence>(*this);
  pid = getpid();
  static const char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 40; ++i) run_id.push_back(kHex[rng_() % 16]);
}

Server::~Server() {
  for (auto& [fd, client] : clients_by_fd_) close(fd);
  for (const Listener& listener : listeners_) close(listener.fd);
  if (!config.unixsocket.empty()) unlink(config.unixsocket.c_str());
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

int64_t Server::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t Server::UptimeSeconds() const { return (NowMs() - start_time_ms) / 1000; }

size_t Server::UsedMemory() {
  size_t used = memory_gauge.Sync();
  peak_memory_ = std::max(peak_memory_, used);
  return used;
}

void Server::SwapDatabases(int a, int b) {
  size_t x = static_cast<size_t>(a), y = static_cast<size_t>(b);
  // A watcher of db x now sees db y's data: its transaction fails if its key exists in either.
  auto touch = [this](size_t watched, size_t other) {
    for (auto& [key, clients] : waiters_[watched].watched) {
      if (!dbs_[watched].Contains(key) && !dbs_[other].Contains(key)) continue;
      for (Client* client : clients) client->watch_dirty = true;
    }
  };
  touch(x, y);
  touch(y, x);
  std::swap(dbs_[x], dbs_[y]);
  dbs_[x].set_waiters(&waiters_[x]);
  dbs_[y].set_waiters(&waiters_[y]);
  // Clients blocked on either index may find their keys filled now.
  for (size_t index : {x, y}) {
    for (const auto& [key, clients] : waiters_[index].blocked) waiters_[index].ready.push_back(key);
    any_ready_ = any_ready_ || !waiters_[index].blocked.empty();
  }
}

void Server::Watch(Client& client, std::string_view key) {
  for (const auto& [db, watched] : client.watched) {
    if (db == client.db && watched == key) return;
  }
  client.watched.emplace_back(client.db, std::string(key));
  waiters_[static_cast<size_t>(client.db)].watched[std::string(key)].push_back(&client);
}

void Server::UnwatchAll(Client& client) {
  for (const auto& [db, key] : client.watched) {
    auto& keys = waiters_[static_cast<size_t>(db)].watched;
    auto it = keys.find(key);
    if (it == keys.end()) continue;
    std::erase(it->second, &client);
    if (it->second.empty()) keys.erase(it);
  }
  client.watched.clear();
  client.watch_dirty = false;
}

void Server::FlushAll() {
  for (Database& db : dbs_) db.Clear();
}

Client* Server::FindClient(uint64_t id) {
  auto it = clients_by_id_.find(id);
  return it == clients_by_id_.end() ? nullptr : it->second;
}

std::vector<Client*> Server::ClientsById() {
  std::vector<Client*> out;
  out.reserve(clients_by_id_.size());
  for (auto& [id, client] : clients_by_id_) out.push_back(client);
  return out;
}

// ---------------------------------------------------------------------------------------
// Blocking commands: a handler that finds nothing to serve calls BlockClient and replies
// nothing. When one of its keys changes, the command is run again for it, oldest client
// first; a run that would block again leaves the client where it was in the queue.

void Server::BlockClient(Client& client, const std::vector<std::string_view>& argv,
                         const std::vector<std::string_view>& keys, int64_t deadline_ms) {
  if (client.retrying_block) {  // still nothing to serve: keep its place
    client.block_requested = true;
    return;
  }
  BlockState& block = client.block;
  client.blocked = true;
  block.db = client.db;
  block.deadline_ms = deadline_ms;
  block.argv.assign(argv.begin(), argv.end());
  block.keys.clear();
  KeyWaiters& waiters = waiters_[static_cast<size_t>(client.db)];
  for (std::string_view key : keys) {
    if (std::find(block.keys.begin(), block.keys.end(), key) != block.keys.end()) continue;
    block.keys.emplace_back(key);
    waiters.blocked[std::string(key)].push_back(&client);
  }
  if (deadline_ms > 0) block_deadlines_.emplace(deadline_ms, client.id);
  ++stats.blocked_clients;
}

void Server::UnblockClient(Client& client) {
  if (!client.blocked) return;
  BlockState& block = client.block;
  KeyWaiters& waiters = waiters_[static_cast<size_t>(block.db)];
  for (const std::string& key : block.keys) {
    auto it = waiters.blocked.find(key);
    if (it == waiters.blocked.end()) continue;
    std::erase(it->second, &client);
    if (it->second.empty()) waiters.blocked.erase(it);
  }
  if (block.deadline_ms > 0) block_deadlines_.erase({block.deadline_ms, client.id});
  client.blocked = false;
  block = BlockState();
  --stats.blocked_clients;
}

void Server::ResumeClient(Client& client) {
  ProcessInput(client);
  Flush(client);
}

void Server::HandleReadyKeys() {
  if (handling_ready_keys_) return;  // the outer loop will see what this round adds
  handling_ready_keys_ = true;
  while (any_ready_) {
    any_ready_ = false;
    for (size_t index = 0; index < waiters_.size(); ++index) {
      KeyWaiters& waiters = waiters_[index];
      std::vector<std::string> ready = std::move(waiters.ready);
      waiters.ready.clear();
      for (const std::string& key : ready) {
        auto it = waiters.blocked.find(key);
        if (it == waiters.blocked.end()) continue;
        std::deque<Client*> queue = it->second;  // serving changes the real queue
        for (Client* client : queue) {
          if (!client->blocked) continue;
          // block.argv stays put during the run: only UnblockClient, after it, resets it.
          std::vector<std::string_view> argv(client->block.argv.begin(), client->block.argv.end());
          client->retrying_block = true;
          client->block_requested = false;
          Dispatch(*client, argv);
          client->retrying_block = false;
          if (client->block_requested) continue;
          UnblockClient(*client);
          ResumeClient(*client);
        }
      }
    }
  }
  handling_ready_keys_ = false;
}

void Server::HandleBlockTimeouts() {
  while (!block_deadlines_.empty() && block_deadlines_.begin()->first <= now_ms_) {
    Client* client = FindClient(block_deadlines_.begin()->second);
    if (client == nullptr) {
      block_deadlines_.erase(block_deadlines_.begin());
      continue;
    }
    UnblockClient(*client);
    client->reply.NullArray();
    ResumeClient(*client);
  }
}

bool Server::UnblockById(uint64_t id, bool with_error) {
  Client* client = FindClient(id);
  if (client == nullptr || !client->blocked) return false;
  UnblockClient(*client);
  if (with_error) {
    client->reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
  } else {
    client->reply.NullArray();
  }
  ResumeClient(*client);
  return true;
}

void Server::KillClient(Client& victim, const Client& caller) {
  victim.close_after_reply = true;
  if (&victim == &caller) return;
  victim.output.clear();
  victim.output_sent = 0;
  clients_to_close_.push_back(&victim);
}

void Server::CountError(std::string_view error_text) {
  ++stats.total_error_replies;
  size_t space = error_text.find(' ');
  std::string prefix(error_text.substr(0, space));
  // Keep errorstats bounded as Redis does (128 distinct prefixes).
  if (stats.error_counts.size() < 128 || stats.error_counts.count(prefix)) {
    ++stats.error_counts[prefix];
  }
}

// ---------------------------------------------------------------------------------------
// Listeners and the loop.

bool Server::OpenTcpListeners(std::vector<Listener>* out, std::string* error) {
  if (config.port == 0) return true;
  for (const std::string& configured : config.bind) {
    // "-addr" marks an address that may be missing on this host (Redis 7: bind ... -::1).
    bool optional = !configured.empty() && configured[0] == '-';
    std::string host = optional ? configured.substr(1) : configured;
    if (host == "*") host = "0.0.0.0";
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    addrinfo* result = nullptr;
    std::string port = std::to_string(config.port);
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &result) != 0 || result == nullptr) {
      if (optional) continue;
      *error = "Invalid bind address '" + host + "'";
      return false;
    }
    int fd = socket(result->ai_family, SOCK_STREAM, 0);
    int one = 1;
    if (fd >= 0) {
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      if (result->ai_family == AF_INET6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
      }
    }
    if (fd < 0 || bind(fd, result->ai_addr, result->ai_addrlen) != 0 ||
        listen(fd, static_cast<int>(config.tcp_backlog)) != 0) {
      int saved = errno;
      if (fd >= 0) close(fd);
      freeaddrinfo(result);
      if (optional && (saved == EADDRNOTAVAIL || saved == EAFNOSUPPORT)) continue;
      *error = "Could not create server TCP listening socket " + host + ":" + port + ": " +
               std::strerror(saved);
      for (const Listener& opened : *out) close(opened.fd);
      out->clear();
      return false;
    }
    freeaddrinfo(result);
    SetNonBlocking(fd);
    out->push_back({fd, false});
  }
  return true;
}

void Server::WatchListeners() {
  for (size_t i = 0; i < listeners_.size(); ++i) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = kListenerTag | i;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listeners_[i].fd, &event);
  }
}

bool Server::RebindTcp(std::string* error) {
  std::vector<Listener> fresh;
  // Close ours first: the new sockets may want the same address and port.
  std::vector<Listener> kept;
  for (const Listener& listener : listeners_) {
    if (listener.unix_socket) {
      kept.push_back(listener);
    } else {
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listener.fd, nullptr);
      close(listener.fd);
    }
  }
  for (const Listener& listener : kept) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listener.fd, nullptr);
  bool ok = OpenTcpListeners(&fresh, error);
  listeners_ = std::move(kept);
  listeners_.insert(listeners_.end(), fresh.begin(), fresh.end());
  WatchListeners();
  return ok;
}

std::string Server::ApplyConfigChanges(const std::vector<ConfigChange>& changes) {
  bool rebind = false;
  for (const ConfigChange& change : changes) {
    switch (change.hook) {
      case ConfigHook::kNone:
        break;
      case ConfigHook::kSetLogLevel:
        SetLogLevel(config.loglevel);
        break;
      case ConfigHook::kClampHz:
        config.hz = std::clamp<int64_t>(config.hz, kMinHz, kMaxHz);
        break;
      case ConfigHook::kRebindTcp:
        rebind = true;  // once for port and bind together
        break;
      case ConfigHook::kPersistence:
        if (std::string error = persistence->OnConfigChange(change.name); !error.empty()) {
          return error;
        }
        break;
    }
  }
  if (rebind) {
    std::string error;
    if (!RebindTcp(&error)) {
      LogWarning(error);
      return errors::ConfigSetFailed("port", "Unable to listen on this port");
    }
    tcp_port_bound = static_cast<int>(config.port);
  }
  return "";
}

bool Server::OpenListeners(std::string* error) {
  if (!OpenTcpListeners(&listeners_, error)) return false;
  tcp_port_bound = static_cast<int>(config.port);
  if (!config.unixsocket.empty()) {
    sockaddr_un address{};
    if (config.unixsocket.size() >= sizeof(address.sun_path)) {
      *error = "Unix socket path too long: " + config.unixsocket;
      return false;
    }
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, config.unixsocket.c_str(), config.unixsocket.size() + 1);
    unlink(config.unixsocket.c_str());
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        listen(fd, static_cast<int>(config.tcp_backlog)) != 0) {
      *error =
          "Could not create server Unix socket " + config.unixsocket + ": " + std::strerror(errno);
      return false;
    }
    if (config.unixsocketperm != 0) {
      chmod(config.unixsocket.c_str(), static_cast<mode_t>(config.unixsocketperm));
    }
    SetNonBlocking(fd);
    listeners_.push_back({fd, true});
  }
  if (listeners_.empty()) {
    *error = "Configured to not listen anywhere, exiting.";
    return false;
  }
  return true;
}

int Server::Run() {
  UsedMemory();  // the gauge's first exact reading, on the serving thread
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = OnShutdownSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  std::string error;
  if (!OpenListeners(&error)) {
    LogWarning(error);
    return 1;
  }
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  WatchListeners();
  // The listeners are open during the load (clients get -LOADING); "Ready" is logged after
  // it, as Redis does, for tools that wait for that line.
  if (!persistence->LoadAtStartup()) return 1;
  LogNotice("Ready to accept connections" +
            (config.port ? " tcp on port " + std::to_string(config.port) : std::string()) +
            (config.unixsocket.empty() ? "" : " unix at " + config.unixsocket));

  next_tick_ms_ = NowMs();
  while (!shutdown_requested_) {
    if (g_shutdown_signal != 0) {
      LogNotice("Received shutdown signal, scheduling shutdown...");
      break;
    }
    if (!ServeEvents(-1)) return 1;
  }
  // SHUTDOWN prepared itself (and could refuse); a signal saves here when save rules exist.
  error.clear();
  if (!shutdown_requested_ && !persistence->PrepareShutdown(false, false, &error)) {
    LogWarning("Error trying to save the DB before exiting: " + error);
  }
  LogNotice("Goblin is now ready to exit, bye bye...");
  return 0;
}

bool Server::ServeEvents(int timeout_ms) {
  now_ms_ = NowMs();
  if (now_ms_ >= next_tick_ms_ && !loading()) {
    Tick();
    next_tick_ms_ = now_ms_ + 1000 / std::max<int64_t>(config.hz, 1);
  }
  if (timeout_ms < 0) {
    int64_t wake = next_tick_ms_;
    if (!block_deadlines_.empty()) wake = std::min(wake, block_deadlines_.begin()->first);
    if (paused()) wake = std::min(wake, pause_until_ms_);
    timeout_ms = static_cast<int>(std::max<int64_t>(0, wake - now_ms_));
  }
  int n = epoll_wait(epoll_fd_, events_.data(), static_cast<int>(events_.size()), timeout_ms);
  // One clock read per wake-up: every command handled in this round sees this time.
  now_ms_ = NowMs();
  if (!block_deadlines_.empty()) HandleBlockTimeouts();
  if (paused() && now_ms_ >= pause_until_ms_) UnpauseClients();
  if (n < 0) {
    if (errno == EINTR) return true;
    LogWarning(std::string("epoll_wait: ") + std::strerror(errno));
    return false;
  }
  for (int i = 0; i < n; ++i) {
    uint64_t token = events_[static_cast<size_t>(i)].data.u64;
    if (token & kListenerTag) {
      Accept(listeners_[token & ~kListenerTag]);
      continue;
    }
    auto it = clients_by_fd_.find(static_cast<int>(token));
    if (it == clients_by_fd_.end()) continue;
    Client& client = *it->second;
    uint32_t mask = events_[static_cast<size_t>(i)].events;
    if (mask & (EPOLLIN | EPOLLERR | EPOLLHUP)) HandleReadable(client);
    if ((mask & EPOLLOUT) && clients_by_fd_.count(static_cast<int>(token))) {
      HandleWritable(client);
    }
  }
  if (resume_paused_) ResumePausedClients();
  FlushQueuedWrites();
  for (Client* client : clients_to_close_) CloseClient(*client);
  clients_to_close_.clear();
  return true;
}

void Server::PauseClients(int64_t until_ms, bool all) {
  pause_until_ms_ = std::max(pause_until_ms_, until_ms);
  pause_all_ = pause_all_ || all;
}

void Server::UnpauseClients() {
  pause_until_ms_ = 0;
  pause_all_ = false;
  resume_paused_ = true;  // served at the end of the event loop round, not inside a command
}

// A WRITE pause holds what would change data or reach replicas: writes, PUBLISH, and EXEC of a
// transaction holding either.
bool Server::PausesCommand(const Client& client, const Command& command) const {
  if (pause_all_) return true;
  auto writes = [](const Command& c) {
    return (c.flags & kCmdWrite) || c.name == "publish" || c.name == "spublish";
  };
  if (writes(command)) return true;
  return command.name == "exec" && QueuedAny(client, writes);
}

bool Server::QueuedAny(const Client& client,
                       const std::function<bool(const Command&)>& predicate) const {
  return std::any_of(client.queued.begin(), client.queued.end(), [&](const auto& queued) {
    const Command* q = commands.Find(queued[0]);
    return q != nullptr && predicate(*q);
  });
}

void Server::ResumePausedClients() {
  resume_paused_ = false;
  std::vector<uint64_t> ids = std::move(paused_clients_);
  paused_clients_.clear();
  for (uint64_t id : ids) {
    Client* client = FindClient(id);
    if (client == nullptr || !client->paused) continue;
    client->paused = false;
    ResumeClient(*client);
  }
}

void Server::AddMonitor(Client& client) {
  client.monitor = true;
  monitors_.push_back(&client);
}

void Server::RemoveMonitor(Client& client) {
  if (!client.monitor) return;
  client.monitor = false;
  std::erase(monitors_, &client);
}

void Server::FeedMonitors(const Client& client, const Command& command,
                          const std::vector<std::string_view>& argv) {
  // Arguments that carry passwords never leave the server, as in Redis.
  std::vector<bool> redacted(argv.size(), false);
  if (command.name == "auth") {
    for (size_t i = 1; i < argv.size(); ++i) redacted[i] = true;
  } else if (command.name == "hello") {
    for (size_t i = 2; i + 2 < argv.size(); ++i) {
      if (EqualsIgnoreCase(argv[i], "auth")) redacted[i + 1] = redacted[i + 2] = true;
    }
  }
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  char stamp[64];
  std::snprintf(stamp, sizeof(stamp), "+%lld.%06lld [%d ", static_cast<long long>(micros / 1000000),
                static_cast<long long>(micros % 1000000), client.db);
  std::string line = stamp;
  line += client.unix_socket ? "unix:" + config.unixsocket : client.address;
  line += ']';
  for (size_t i = 0; i < argv.size(); ++i) {
    line += ' ';
    AppendRepr(&line, redacted[i] ? std::string_view("(redacted)") : argv[i]);
  }
  line += "\r\n";
  for (Client* monitor : monitors_) {
    monitor->reply.Raw(line);
    if (monitor != &client) QueueWrite(*monitor);
  }
}

void Server::QueueWrite(Client& client) {
  if (client.write_queued) return;
  client.write_queued = true;
  write_queue_.push_back(client.id);
}

void Server::FlushQueuedWrites() {
  std::vector<uint64_t> queue = std::move(write_queue_);
  write_queue_.clear();
  for (uint64_t id : queue) {
    Client* client = FindClient(id);
    if (client == nullptr) continue;
    client->write_queued = false;
    if (!client->close_after_reply) Flush(*client);
  }
}

bool Server::loading() const { return persistence->loading(); }

bool Server::shutdown_pending() const { return shutdown_requested_ || g_shutdown_signal != 0; }

void Server::CloseListenersInChild() {
  for (const Listener& listener : listeners_) close(listener.fd);
}

void Server::Accept(const Listener& listener) {
  for (int accepted = 0; accepted < 1000; ++accepted) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof(peer);
    int fd = accept4(listener.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    ++stats.total_connections_received;
    if (clients_by_fd_.size() >= static_cast<size_t>(config.maxclients)) {
      static const char kTooMany[] = "-ERR max number of clients reached\r\n";
      ssize_t ignored = write(fd, kTooMany, sizeof(kTooMany) - 1);
      (void)ignored;
      close(fd);
      ++stats.rejected_connections;
      continue;
    }
    auto client = std::make_unique<Client>(next_client_id_++, fd);
    client->unix_socket = listener.unix_socket;
    client->authenticated = config.requirepass.empty();
    client->created_ms = client->last_interaction_ms = NowMs();
    if (listener.unix_socket) {
      client->address = config.unixsocket + ":0";
      client->local_address = config.unixsocket + ":0";
    } else {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (config.tcp_keepalive > 0) setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
      client->address = FormatAddress(peer);
      sockaddr_storage local{};
      socklen_t local_len = sizeof(local);
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len);
      client->local_address = FormatAddress(local);
      if (config.protected_mode && config.requirepass.empty() && !IsLoopback(peer)) {
        ssize_t ignored = write(fd, kProtectedModeError.data(), kProtectedModeError.size());
        (void)ignored;
        close(fd);
        ++stats.rejected_connections;
        continue;
      }
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = static_cast<uint64_t>(fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
    clients_by_id_[client->id] = client.get();
    clients_by_fd_[fd] = std::move(client);
  }
}

void Server::HandleReadable(Client& client) {
  if (client.close_after_reply) return;
  size_t want = kReadChunk;
  size_t needed = client.parser.bytes_needed();
  if (needed > client.input.size()) want = std::max(want, needed - client.input.size());
  char* target = client.input.PrepareWrite(want);
  ssize_t n = read(client.fd, target, want);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    clients_to_close_.push_back(&client);
    client.close_after_reply = true;
    client.output.clear();
    client.output_sent = 0;
    return;
  }
  client.input.CommitWrite(static_cast<size_t>(n));
  ++stats.total_reads_processed;
  stats.net_input_bytes += static_cast<uint64_t>(n);
  client.last_interaction_ms = now_ms_;
  if (client.input.size() > static_cast<size_t>(config.client_query_buffer_limit)) {
    LogWarning("Closing client that reached max query buffer length: id=" +
               std::to_string(client.id));
    ++stats.client_query_buffer_limit_disconnections;
    client.close_after_reply = true;
    client.output.clear();
    client.output_sent = 0;
    clients_to_close_.push_back(&client);
    return;
  }
  ProcessInput(client);
  Flush(client);
}

void Server::ProcessInput(Client& client) {
  ProtocolLimits limits;
  limits.max_bulk_len = config.proto_max_bulk_len;
  std::vector<std::string_view>& argv = argv_scratch_;
  while (!client.close_after_reply && !client.blocked && !client.paused &&
         client.input.size() > 0) {
    limits.authenticated = client.authenticated;
    std::string_view data = client.input.pending();
    if (client.parser.bytes_needed() > data.size()) break;
    size_t consumed = 0;
    RequestParser::Status status = client.parser.Parse(data, limits, &argv, &consumed);
    if (status == RequestParser::Status::kIncomplete) break;
    if (status == RequestParser::Status::kError) {
      client.reply.Error(client.parser.error());
      CountError(client.parser.error());
      LogVerbose("Protocol error from client id=" + std::to_string(client.id) + ": " +
                 client.parser.error());
      client.close_after_reply = true;
      break;
    }
    if (!argv.empty()) Execute(client, argv);
    if (client.paused) break;  // the request stays unconsumed, parsed again on resume
    client.input.Consume(consumed);
  }
  client.input.ShrinkIfEmpty(4 * kReadChunk);
}

void Server::Flush(Client& client) {
  // Invariant 2 of persistence.h: logged writes reach the file before their replies leave.
  if (persistence->log_pending()) persistence->FlushLog();
  while (client.pending_output() > 0) {
    ssize_t n =
        write(client.fd, client.output.data() + client.output_sent, client.pending_output());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      client.output.clear();
      client.output_sent = 0;
      client.close_after_reply = true;
      break;
    }
    ++stats.total_writes_processed;
    stats.net_output_bytes += static_cast<uint64_t>(n);
    client.output_sent += static_cast<size_t>(n);
  }
  if (client.pending_output() == 0) {
    client.output.clear();
    client.output_sent = 0;
    client.over_soft_limit_since = 0;
    if (client.output.capacity() > 4 * kReadChunk) client.output.shrink_to_fit();
    if (client.close_after_reply) {
      clients_to_close_.push_back(&client);
      return;
    }
  } else if (OverOutputLimit(client)) {
    LogWarning("Client id=" + std::to_string(client.id) +
               " scheduled to be closed ASAP for overcoming of output buffer limits.");
    ++stats.client_output_buffer_limit_disconnections;
    client.output.clear();
    client.output_sent = 0;
    client.close_after_reply = true;
    clients_to_close_.push_back(&client);
    return;
  }
  UpdateEpoll(client);
}

bool Server::OverOutputLimit(Client& client) {
  const OutputBufferLimits& limits = config.client_output_buffer_limit;
  const OutputBufferLimit& limit = client.subscribed() ? limits.pubsub : limits.normal;
  const auto pending = static_cast<int64_t>(client.pending_output());
  if (limit.hard > 0 && pending >= limit.hard) return true;
  if (limit.soft == 0 || pending < limit.soft) {
    client.over_soft_limit_since = 0;
    return false;
  }
  if (client.over_soft_limit_since == 0) client.over_soft_limit_since = now_ms_;
  return now_ms_ - client.over_soft_limit_since > limit.soft_seconds * 1000;
}

void Server::UpdateEpoll(Client& client) {
  bool want_write = client.pending_output() > 0;
  if (want_write == client.want_write) return;
  client.want_write = want_write;
  epoll_event event{};
  event.events = want_write ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  event.data.u64 = static_cast<uint64_t>(client.fd);
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, client.fd, &event);
}

void Server::HandleWritable(Client& client) { Flush(client); }

void Server::CloseClient(Client& client) {
  int fd = client.fd;
  if (!clients_by_fd_.count(fd)) return;  // closed earlier in this round
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  close(fd);
  UnwatchAll(client);
  UnblockClient(client);
  pubsub.RemoveClient(client);
  RemoveMonitor(client);
  clients_by_id_.erase(client.id);
  clients_by_fd_.erase(fd);
}

// ---------------------------------------------------------------------------------------
// Dispatch.

void Server::Execute(Client& client, const std::vector<std::string_view>& argv) {
  size_t output_before = client.output.size();
  bool skip_reply = client.reply_mode != ReplyMode::kOn;
  Dispatch(client, argv);
  if (client.paused) return;  // not run yet: CLIENT PAUSE
  // CLIENT REPLY OFF|SKIP: the command ran, its reply is dropped.
  if (skip_reply && client.reply_mode != ReplyMode::kOn) {
    client.output.resize(std::max(output_before, client.output_sent));
  }
  if (client.reply_mode == ReplyMode::kSkipThis) client.reply_mode = ReplyMode::kOn;
  if (client.reply_mode == ReplyMode::kSkipNext) client.reply_mode = ReplyMode::kSkipThis;
  if (any_ready_) HandleReadyKeys();
}

// What a RESP2 client in the subscribed context may still run.
bool Server::AllowedWhileSubscribed(const Command& command) {
  static constexpr std::string_view kAllowed[] = {"subscribe",   "ssubscribe",   "psubscribe",
                                                  "unsubscribe", "sunsubscribe", "punsubscribe",
                                                  "ping",        "quit",         "reset"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), command.name) != std::end(kAllowed);
}

// Over maxmemory with nothing left to evict, Redis refuses commands that may grow memory
// (denyoom), EXEC of a transaction holding one, and inside MULTI anything but the commands
// that end it (queuing itself takes memory).
bool Server::RefusedWhenOutOfMemory(const Client& client, const Command& command) const {
  if (command.flags & kCmdDenyOom) return true;
  const std::string& name = command.name;
  if (name == "exec") {
    return QueuedAny(client, [](const Command& q) { return (q.flags & kCmdDenyOom) != 0; });
  }
  return client.in_multi && name != "discard" && name != "quit" && name != "reset";
}

void Server::Dispatch(Client& client, const std::vector<std::string_view>& argv) {
  const Command* command = commands.Find(argv[0]);
  auto reject = [&](std::string_view error, const Command* counted) {
    client.reply.Error(error);
    CountError(error);
    if (counted != nullptr) ++counted->stats.rejected_calls;
    if (client.in_multi) client.multi_failed = true;
  };
  if (command == nullptr) {
    // Redis formats these with %s, so each argument stops at its first NUL byte.
    auto c_string = [](std::string_view arg, size_t limit) {
      return std::string(arg.substr(0, std::min(limit, arg.find('\0'))));
    };
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + c_string(argv[i], 128 - args.size()) + "' ";
    }
    std::string error =
        "ERR unknown command '" + c_string(argv[0], 128) + "', with args beginning with: " + args;
    std::replace(error.begin(), error.end(), '\r', ' ');
    std::replace(error.begin(), error.end(), '\n', ' ');
    reject(error, nullptr);
    return;
  }
  if (command->HasSubcommands() && argv.size() >= 2) {
    const Command* sub = command->FindSubcommand(argv[1]);
    if (sub == nullptr) {
      std::string upper = AsciiUpper(command->name);
      std::string_view name = argv[1].substr(0, std::min<size_t>(128, argv[1].find('\0')));
      std::string error = errors::UnknownSubcommand(name, upper);
      std::replace(error.begin(), error.end(), '\r', ' ');
      std::replace(error.begin(), error.end(), '\n', ' ');
      reject(error, nullptr);
      return;
    }
    command = sub;
  }
  if (!command->ArityOk(argv.size())) {
    reject(errors::WrongArity(command->name), command);
    return;
  }
  if (!client.authenticated && !(command->flags & kCmdNoAuth)) {
    if (config.requirepass.empty()) {
      client.authenticated = true;
    } else {
      reject(errors::kNoAuth, command);
      return;
    }
  }
  if (config.maxmemory > 0 && client.fd >= 0 && !client.in_exec && !client.retrying_block &&
      evictor.Perform() == Evictor::Result::kFail && RefusedWhenOutOfMemory(client, *command)) {
    reject(errors::kOutOfMemory, command);
    return;
  }
  // Redis's monitors are replicas underneath, which may not touch keys.
  if (client.monitor && (command->flags & (kCmdWrite | kCmdReadonly))) {
    reject("ERR Replica can't interact with the keyspace", command);
    return;
  }
  if (client.fd >= 0 && loading() && !(command->flags & kCmdLoading)) {
    reject(errors::kLoading, command);
    return;
  }
  if ((command->flags & kCmdWrite) && client.fd >= 0) {
    if (std::string refusal = persistence->RefuseWrites(); !refusal.empty()) {
      reject(refusal, command);
      return;
    }
  }
  if (client.subscribed() && !client.reply.resp3() && !AllowedWhileSubscribed(*command)) {
    reject("ERR Can't execute '" + command->name +
               "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
               "this context",
           command);
    return;
  }
  if (paused() && client.fd >= 0 && !client.in_exec && !client.retrying_block &&
      PausesCommand(client, *command)) {
    client.paused = true;  // the command stays in the input until the pause ends
    paused_clients_.push_back(client.id);
    return;
  }
  if (client.in_multi && !(command->flags & kCmdTransactionControl)) {
    if (command->flags & kCmdNoMulti) {
      reject("ERR Command not allowed inside a transaction", command);
      return;
    }
    client.queued.emplace_back(argv.begin(), argv.end());
    client.reply.Simple("QUEUED");
    return;
  }
  client.last_command = command->name;
  uint64_t start = CycleClock::Now();
  uint64_t errors_before = stats.total_error_replies;
  size_t output_before = client.output.size();
  const uint64_t dirty_before = dirty;
  const uint64_t changes_before = stats.keyspace.modifications;
  propagate_override.clear();
  CommandContext ctx{*this, client, argv, *command, client.reply, now_ms_};
  command_marks_use_ =
      !(command->flags & kCmdNoTouch) && (!client.no_touch || command->name == "touch");
  UpdateKeyUseMarking();
  command->handler(ctx);
  if (!monitors_.empty() && !(command->flags & (kCmdSkipMonitor | kCmdAdmin)) &&
      !client.retrying_block && client.fd >= 0) {
    FeedMonitors(client, *command, argv);
  }
  if ((command->flags & kCmdWrite) &&
      (dirty != dirty_before || stats.keyspace.modifications != changes_before)) {
    persistence->PropagateCommand(client, *command, argv, now_ms_);
  }
  int64_t duration = CycleClock::ToMicros(CycleClock::Now() - start);
  // A reply that starts with '-' is a failed call, as INFO commandstats counts it.
  if (client.output.size() > output_before && client.output[output_before] == '-') {
    if (stats.total_error_replies == errors_before) {
      size_t end = client.output.find('\r', output_before);
      CountError(
          std::string_view(client.output).substr(output_before + 1, end - output_before - 1));
    }
    ++command->stats.failed_calls;
  }
  ++command->stats.calls;
  command->stats.usec += static_cast<uint64_t>(duration);
  ++client.commands_processed;
  ++stats.total_commands_processed;
  if (!(command->flags & kCmdSkipSlowlog)) RecordSlowlog(client, argv, duration);
  if (config.latency_monitor_threshold > 0 && duration / 1000 >= config.latency_monitor_threshold) {
    RecordLatency(command->flags & kCmdFast ? "fast-command" : "command", duration / 1000);
  }
}

void Server::RecordSlowlog(const Client& client, const std::vector<std::string_view>& argv,
                           int64_t duration_us) {
  if (config.slowlog_log_slower_than < 0 || duration_us < config.slowlog_log_slower_than) return;
  SlowlogEntry entry;
  entry.id = next_slowlog_id++;
  entry.unix_time = NowMs() / 1000;
  entry.duration_us = duration_us;
  size_t shown = std::min(argv.size(), kSlowlogArgs);
  for (size_t i = 0; i < shown; ++i) {
    if (shown < argv.size() && i == shown - 1) {
      entry.args.push_back("... (" + std::to_string(argv.size() - shown + 1) + " more arguments)");
      break;
    }
    std::string arg(argv[i].substr(0, kSlowlogArgBytes));
    if (argv[i].size() > kSlowlogArgBytes) {
      arg += "... (" + std::to_string(argv[i].size() - kSlowlogArgBytes) + " more bytes)";
    }
    entry.args.push_back(std::move(arg));
  }
  entry.peer = client.address;
  entry.client_name = client.name;
  slowlog.push_front(std::move(entry));
  while (slowlog.size() > static_cast<size_t>(config.slowlog_max_len)) slowlog.pop_back();
}

void Server::RecordLatency(std::string_view event, int64_t duration_ms) {
  LatencyEvent& record = latency_events[std::string(event)];
  int64_t now = NowMs() / 1000;
  if (!record.history.empty() && record.history.back().unix_time == now) {
    record.history.back().latency_ms = std::max(record.history.back().latency_ms, duration_ms);
  } else {
    record.history.push_back({now, duration_ms});
    if (record.history.size() > kLatencyHistory) record.history.pop_front();
  }
  record.max_ms = std::max(record.max_ms, duration_ms);
}

// ---------------------------------------------------------------------------------------
// Background work, in bounded slices.

void Server::Tick() {
  int64_t now = NowMs();
  int64_t tick_ms = 1000 / std::max<int64_t>(config.hz, 1);
  // A client pause holds the data still: no key expires or is evicted in the background.
  if (active_expire_enabled && !paused()) {
    // At most a quarter of the tick, in slices of 256 visited entries per database.
    int64_t deadline = SteadyMicros() + tick_ms * 250;
    for (Database& db : dbs_) {
      // At most one pass over the database per tick.
      size_t visited = 0;
      while (db.expires() > 0 && visited < db.size() && SteadyMicros() < deadline) {
        visited += db.ActiveExpire(now, 256).visited;
      }
    }
  }
  if (config.timeout > 0) {
    for (auto& [fd, client] : clients_by_fd_) {
      if (now - client->last_interaction_ms > config.timeout * 1000) {
        clients_to_close_.push_back(client.get());
      }
    }
    for (Client* client : clients_to_close_) CloseClient(*client);
    clients_to_close_.clear();
  }
  UsedMemory();
  // Goes on with eviction a command left unfinished, and catches a limit lowered by CONFIG SET
  // or memory other threads took while no command came.
  if (config.maxmemory > 0 && !paused()) evictor.Perform();
  persistence->Tick(now);
  if (now - stats.last_sample_ms >= 100) {
    double seconds = static_cast<double>(now - stats.last_sample_ms) / 1000.0;
    uint64_t ops = stats.total_commands_processed - stats.ops_at_last_sample;
    stats.ops_samples[stats.ops_sample_index++ % 16] =
        stats.last_sample_ms ? static_cast<double>(ops) / seconds : 0;
    stats.ops_at_last_sample = stats.total_commands_processed;
    stats.last_sample_ms = now;
  }
}

}  // namespace goblin
