// Connections and I/O: the listeners, the loop's rounds, accepting clients, reading and parsing
// requests, writing replies (after the append-only file has what they acknowledge), output
// limits, closing. SHUTDOWN signals end the loop here.
#include <netdb.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "net/sockets.h"
#include "server/cluster/cluster.h"
#include "server/crash_report.h"
#include "server/failover.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"
#include "server/shutdown.h"
#include "server/supervision.h"

namespace goblin {

namespace {

// A client reads 16 KB at a time, as Redis does, until it sends more than that between two
// reads: then 64 KB, so that a deep pipeline or a big value takes few read calls. The tick's
// resize rule (InputBuffer::ResizeForIdleOrPeak) brings the buffer back down once the client
// calms, so an idle or blocked client with a few bytes pending holds 16 KB, not 64.
constexpr size_t kFirstReadChunk = 16 * 1024;
constexpr size_t kReadChunk = 64 * 1024;

volatile sig_atomic_t g_shutdown_signal = 0;

void OnShutdownSignal(int signal_number) { g_shutdown_signal = signal_number; }

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

// Writes through client's connection. A client no socket backs (the append-only file's replay,
// a test's) fails as a write to a closed descriptor does.
ssize_t WriteVectors(Client& client, const iovec* vectors, int count) {
  if (client.connection == nullptr) {
    errno = EBADF;
    return -1;
  }
  return client.connection->Writev(vectors, count);
}

}  // namespace

void Server::KillClient(Client& victim, const Client& caller) {
  victim.close_after_reply = true;
  if (&victim == &caller) return;
  victim.output.clear();
  clients_to_close_.push_back(&victim);
}

void Server::CloseClientSoon(Client& client) {
  if (client.close_after_reply && client.output.empty()) return;
  client.close_after_reply = true;
  client.replies_dropped = true;
  client.output.clear();
  clients_to_close_.push_back(&client);
}

bool Server::OpenTcpListeners(int64_t listen_port, bool tls, std::vector<Listener>* out,
                              std::string* error) {
  if (listen_port == 0) return true;
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
    std::string port = std::to_string(listen_port);
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &result) != 0 || result == nullptr) {
      if (optional) continue;
      *error = "Invalid bind address '" + host + "'";
      return false;
    }
    const int fd = net::ListenTcp(*result, static_cast<int>(config.tcp_backlog));
    if (fd < 0) {
      int saved = errno;
      freeaddrinfo(result);
      if (optional && (saved == EADDRNOTAVAIL || saved == EAFNOSUPPORT)) continue;
      *error = "Could not create server TCP listening socket " + host + ":" + port + ": " +
               std::strerror(saved);
      for (const Listener& opened : *out) close(opened.fd);
      out->clear();
      return false;
    }
    freeaddrinfo(result);
    out->emplace_back(this, fd, false, tls);
  }
  return true;
}

bool Server::OpenBusListeners(int port, std::vector<int>* fds, std::string* error) {
  std::vector<Listener> opened;
  if (!OpenTcpListeners(port, false, &opened, error)) return false;
  for (const Listener& listener : opened) fds->push_back(listener.fd);
  return true;
}

bool Server::ConfigureTls() {
  if (config.tls.port == 0 && !config.tls.replication && !config.tls.cluster) return true;
  const Config::Tls& tls = config.tls;
  net::TlsOptions options;
  options.cert_file = tls.cert_file;
  options.key_file = tls.key_file;
  options.key_file_pass = tls.key_file_pass;
  options.client_cert_file = tls.client_cert_file;
  options.client_key_file = tls.client_key_file;
  options.client_key_file_pass = tls.client_key_file_pass;
  options.ca_cert_file = tls.ca_cert_file;
  options.ca_cert_dir = tls.ca_cert_dir;
  options.dh_params_file = tls.dh_params_file;
  options.protocols = tls.protocols;
  options.ciphers = tls.ciphers;
  options.ciphersuites = tls.ciphersuites;
  options.auth_clients = tls.auth_clients;
  options.prefer_server_ciphers = tls.prefer_server_ciphers;
  options.session_caching = tls.session_caching;
  options.session_cache_size = tls.session_cache_size;
  options.session_cache_timeout = tls.session_cache_timeout;
  std::string error;
  if (options.auth_clients != "no" && tls.ca_cert_file.empty() && tls.ca_cert_dir.empty()) {
    error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
  } else if (std::shared_ptr<net::TlsContext> context = net::TlsContext::Create(options, &error)) {
    tls_ = std::move(context);
    return true;
  }
  LogWarning(error);
  return false;
}

void Server::WatchListeners() {
  for (Listener& listener : listeners_) event_loop.Watch(listener.fd, &listener, false);
}

bool Server::RebindTcp(std::string* error) {
  std::vector<Listener> fresh;
  // Close ours first: the new sockets may want the same address and port.
  std::vector<Listener> kept;
  for (const Listener& listener : listeners_) {
    if (listener.unix_socket) {
      kept.push_back(listener);  // the Unix socket stays plain, as in Redis
    } else {
      event_loop.Unwatch(listener.fd);
      close(listener.fd);
    }
  }
  for (const Listener& listener : kept) event_loop.Unwatch(listener.fd);
  bool ok = OpenTcpListeners(config.port, false, &fresh, error) &&
            OpenTcpListeners(config.tls.port, true, &fresh, error);
  listeners_ = std::move(kept);
  listeners_.insert(listeners_.end(), fresh.begin(), fresh.end());
  WatchListeners();
  return ok;
}

bool Server::OpenListeners(std::string* error) {
  if (!OpenTcpListeners(config.port, false, &listeners_, error) ||
      !OpenTcpListeners(config.tls.port, true, &listeners_, error)) {
    return false;
  }
  tcp_port_bound = static_cast<int>(config.port);
  if (!config.unixsocket.empty()) {
    const int fd = net::ListenUnix(config.unixsocket, static_cast<int>(config.tcp_backlog));
    if (fd < 0 && errno == ENAMETOOLONG) {
      *error = "Unix socket path too long: " + config.unixsocket;
      return false;
    }
    if (fd < 0) {
      *error =
          "Could not create server Unix socket " + config.unixsocket + ": " + std::strerror(errno);
      return false;
    }
    if (config.unixsocketperm != 0) {
      chmod(config.unixsocket.c_str(), static_cast<mode_t>(config.unixsocketperm));
    }
    listeners_.emplace_back(this, fd, true);
  }
  if (listeners_.empty()) {
    *error = "Configured to not listen anywhere, exiting.";
    return false;
  }
  return true;
}

// Redis's adjustOpenFilesLimit: room for maxclients connections plus the server's own
// descriptors, raising the soft (and, when allowed, hard) limit, else lowering maxclients to
// what the limit holds. False when not even the reserved descriptors fit.
bool Server::AdjustOpenFilesLimit() {
  constexpr rlim_t kReserved = 32;  // listeners, files, the epoll descriptor, ...
  const rlim_t wanted = static_cast<rlim_t>(config.maxclients) + kReserved;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    LogWarning(std::string("Unable to obtain the current NOFILE limit (") + std::strerror(errno) +
               "), assuming 1024 and setting the max clients configuration accordingly.");
    config.maxclients = 1024 - static_cast<int64_t>(kReserved);
    return true;
  }
  const rlim_t old_limit = limit.rlim_cur;
  if (old_limit >= wanted) return true;
  rlim_t best = wanted;
  int failure = 0;
  while (best > old_limit) {
    limit.rlim_cur = limit.rlim_max = best;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) break;
    failure = errno;
    best = best < 16 ? old_limit : best - 16;
  }
  best = std::max(best, old_limit);
  if (best >= wanted) {
    LogNotice("Increased maximum number of open files to " + std::to_string(best) +
              " (it was originally set to " + std::to_string(old_limit) + ").");
    return true;
  }
  if (best <= kReserved) {
    LogWarning("Your current 'ulimit -n' of " + std::to_string(old_limit) +
               " is not enough for the server to start. Please increase your open file limit "
               "to at least " +
               std::to_string(kReserved + 1) + ". Exiting.");
    return false;
  }
  const int64_t requested = config.maxclients;
  config.maxclients = static_cast<int64_t>(best - kReserved);
  LogWarning("You requested maxclients of " + std::to_string(requested) + " requiring at least " +
             std::to_string(wanted) + " max file descriptors.");
  LogWarning("Server can't set maximum open files to " + std::to_string(wanted) +
             " because of OS error: " + std::strerror(failure) + ".");
  LogWarning("Current maximum open files is " + std::to_string(best) +
             ". maxclients has been reduced to " + std::to_string(config.maxclients) +
             " to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.");
  return true;
}

int Server::Run() {
  UsedMemory();  // the gauge's first exact reading, on the serving thread
  if (!AdjustOpenFilesLimit()) return 1;
  InstallCrashHandler(this);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction action {};
  action.sa_handler = OnShutdownSignal;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);

  if (!LoadUsers()) return 1;
  if (!ConfigureTls()) {
    LogWarning("Failed to configure TLS. Check logs for more info.");
    return 1;
  }
  std::string error;
  if (!OpenListeners(&error)) {
    LogWarning(error);
    return 1;
  }
  if (!event_loop.Open()) {
    LogWarning(std::string("Failed creating the event loop: ") + std::strerror(errno));
    return 1;
  }
  WatchListeners();
  if (cluster_mode != nullptr) {
    if (!cluster_mode->Start(&error)) {
      LogWarning(error);
      return 1;
    }
    LogNotice("Running mode=cluster, port=" + std::to_string(config.port) + ".");
  }
  // The listeners are open during the load (clients get -LOADING); "Ready" is logged after
  // it, as Redis does, for tools that wait for that line.
  SetClock(NowMs());  // replayed commands that record times (XCLAIM, XREADGROUP) see the clock
  if (!persistence->LoadAtStartup()) return 1;
  LogNotice("Ready to accept connections" +
            (config.port ? " tcp on port " + std::to_string(config.port) : std::string()) +
            (config.tls.port ? " tls on port " + std::to_string(config.tls.port) : std::string()) +
            (config.unixsocket.empty() ? "" : " unix at " + config.unixsocket));
  Supervision supervision(config.supervised);
  supervision.Ready();
  master_link->Start();

  next_tick_ms_ = NowMs();
  while (!shutdown_requested_) {
    // A signal is logged as it comes; its shutdown begins where Redis's cron begins it, so
    // DEBUG PAUSE-CRON holds it, and SHUTDOWN ABORT may cancel it meanwhile.
    if (g_shutdown_signal != 0 && !shutdown_signal_logged_) {
      if (shutdown->waiting() && g_shutdown_signal == SIGINT) {
        LogWarning("You insist... exiting now.");
        return 1;
      }
      LogNotice(std::string("Received ") + (g_shutdown_signal == SIGINT ? "SIGINT" : "SIGTERM") +
                " scheduling shutdown...");
      shutdown_signal_logged_ = true;
    }
    if (g_shutdown_signal != 0 && !cron_paused) {
      const int signal_number = g_shutdown_signal;
      g_shutdown_signal = 0;
      shutdown_signal_logged_ = false;
      const uint32_t flags =
          signal_number == SIGINT ? config.shutdown_on_sigint : config.shutdown_on_sigterm;
      if (shutdown->Begin(flags, nullptr) == Shutdown::Outcome::kExit) break;
    }
    if (!ServeEvents(-1)) return 1;
  }
  supervision.Stopping();
  LogNotice("Goblin is now ready to exit, bye bye...");
  return 0;
}

void Server::ServeWhileScriptRuns() {
  ++serving_depth_;
  const int64_t script_clock = now_ms_;
  ServeEvents(0);
  SetClock(script_clock);  // the script's commands keep seeing the time it started at
  --serving_depth_;
}

bool Server::ServeEvents(int timeout_ms) {
  if (serving_depth_ > 0) {
    event_loop.Wait(0);
    SetClock(NowMs());
    event_loop.Dispatch();
    FlushQueuedWrites();
    CloseClientsToClose();
    return true;
  }
  SetClock(NowMs());
  if (timeout_ms < 0) {
    int64_t wake = next_tick_ms_;
    if (!block_deadlines_.empty()) wake = std::min(wake, block_deadlines_.begin()->first);
    if (!block_retries_.empty()) wake = std::min(wake, block_retries_.begin()->first);
    if (pause_until_ms_ != 0) wake = std::min(wake, pause_until_ms_);
    timeout_ms = static_cast<int>(std::max<int64_t>(0, wake - now_ms_));
  }
  const int n = event_loop.Wait(timeout_ms);
  // One clock read per wake-up: every command handled in this round sees this time.
  SetClock(NowMs());
  if (!block_deadlines_.empty()) HandleBlockTimeouts();
  if (!block_retries_.empty()) HandleBlockRetries();
  if (pause_until_ms_ != 0 && now_ms_ >= pause_until_ms_) UnpauseClients();
  if (n < 0) {
    if (errno == EINTR) return true;
    LogWarning(std::string("epoll_wait: ") + std::strerror(errno));
    return false;
  }
  event_loop.Dispatch();
  // The periodic work runs after the events and before the writes, as in Redis: what it sends
  // (a replica's REPLCONF ACK, a master's PING) leaves in this round, and says what the round
  // applied. An acknowledgement built before the round and sent after it would name an offset
  // already passed, and a failover waiting for it would wait for ever.
  if (now_ms_ >= next_tick_ms_ && !loading()) {
    Tick();
    next_tick_ms_ = now_ms_ + 1000 / std::max<int64_t>(config.hz, 1);
  }
  if (resume_paused_) ResumePausedClients();
  tracking.Broadcast();
  replication->BeforeSleep();
  if (replication->has_aof_waiters()) replication->ReleaseAofWaiters();
  // The acknowledgements just read may be the ones a failover waits for.
  failover->Update(now_ms_);
  shutdown->Update(now_ms_);
  if (cluster_mode != nullptr) cluster_mode->BeforeSleep();
  FlushQueuedWrites();
  CloseClientsToClose();
  return true;
}

void Client::OnReady(uint32_t readiness) { server->OnClientReady(*this, readiness); }

void Server::OnClientReady(Client& client, uint32_t readiness) {
  // The client whose script is running is read again once the script ends.
  if (client.running_script) return;
  const int fd = client.fd;
  if (readiness & net::kReadable) HandleReadable(client);
  // Reading may have run a script that served, and closed, clients (ServeWhileScriptRuns).
  if ((readiness & net::kWritable) && clients_by_fd_.count(fd)) HandleWritable(client);
}

void Server::CloseClientsToClose() {
  std::vector<Client*> closing = std::move(clients_to_close_);
  clients_to_close_.clear();
  // Several paths may have asked to close the same client this round (a CLIENT KILL, a read
  // of its end, its last reply written): it is closed, and freed, once. Every pointer is live
  // until this pass, which alone frees clients.
  std::unordered_set<Client*> seen;
  for (Client* client : closing) {
    if (!seen.insert(client).second) continue;
    if (client->running_script) {
      clients_to_close_.push_back(client);  // after its script
    } else {
      CloseClient(*client);
    }
  }
}

bool Server::shutdown_pending() const { return shutdown_requested_ || g_shutdown_signal != 0; }

bool Server::CancelShutdownSignal() {
  if (g_shutdown_signal == 0) return false;
  g_shutdown_signal = 0;
  shutdown_signal_logged_ = false;
  return true;
}

void Server::CloseListenersInChild() {
  for (const Listener& listener : listeners_) close(listener.fd);
}

void Server::Accept(const Listener& listener) {
  for (int accepted = 0; accepted < 1000; ++accepted) {
    sockaddr_storage peer{};
    std::unique_ptr<net::PlainConnection> connection = net::Accept(listener.fd, &peer);
    if (connection == nullptr) return;
    ++stats.total_connections_received;
    const bool tls = listener.tls && tls_ != nullptr;
    std::string_view refusal;
    if (clients_by_fd_.size() >= static_cast<size_t>(config.maxclients)) {
      static constexpr std::string_view kTooMany = "-ERR max number of clients reached\r\n";
      refusal = kTooMany;
    } else if (!listener.unix_socket && config.protected_mode && acl.default_user().nopass() &&
               !net::IsLoopback(peer)) {
      refusal = kProtectedModeError;
    }
    if (!refusal.empty()) {
      ++stats.rejected_connections;
      // Over TLS a refusal can only be read after the handshake. One past maxclients is closed
      // at once, its reply lost, as in Redis: keeping it would let connections grow past the
      // limit. One refused by protected mode counts as a client until its reply is written
      // (below), as Redis checks protected mode once the handshake is done.
      if (!tls) {
        connection->Write(refusal.data(), refusal.size());
        continue;
      }
      if (refusal != kProtectedModeError) continue;
    }
    const int fd = connection->fd();
    auto client = std::make_unique<Client>(next_client_id_++, fd);
    client->unix_socket = listener.unix_socket;
    StartAsDefaultUser(*client);
    client->created_ms = client->last_interaction_ms = NowMs();
    if (listener.unix_socket) {
      client->address = config.unixsocket + ":0";
      client->local_address = config.unixsocket + ":0";
    } else {
      connection->SetNoDelay();
      if (config.tcp_keepalive > 0) connection->SetKeepAlive();
      client->address = net::FormatAddress(peer);
      client->local_address = connection->LocalAddress();
    }
    client->server = this;
    if (tls) {
      // The handshake runs as the connection's first readiness arrives (net/tls.h).
      client->connection =
          std::make_unique<net::TlsConnection>(connection->Release(), tls_->server(), true);
    } else {
      client->connection = std::move(connection);
    }
    if (!refusal.empty()) {
      client->output.append(refusal);
      client->close_after_reply = true;
    }
    client->connection->Watch(event_loop, client.get(), !refusal.empty());
    clients_by_id_[client->id] = client.get();
    clients_by_fd_[fd] = std::move(client);
  }
}

void Server::HandleReadable(Client& client) {
  if (client.close_after_reply) return;
  size_t want = client.input.peak() >= kFirstReadChunk ? kReadChunk : kFirstReadChunk;
  size_t needed = client.parser.bytes_needed();
  if (needed > client.input.size()) want = std::max(want, needed - client.input.size());
  char* target = client.input.PrepareWrite(want);
  ssize_t n = client.connection->Read(target, want);
  if (n <= 0) {
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    clients_to_close_.push_back(&client);
    client.close_after_reply = true;
    client.output.clear();
    return;
  }
  client.input.CommitWrite(static_cast<size_t>(n));
  ++stats.total_reads_processed;
  stats.net_input_bytes += static_cast<uint64_t>(n);
  client.last_interaction_ms = now_ms_;
  if (client.input.size() > static_cast<size_t>(config.client_query_buffer_limit) &&
      client.kind != ClientKind::kMaster) {
    LogWarning("Closing client that reached max query buffer length: id=" +
               std::to_string(client.id));
    ++stats.client_query_buffer_limit_disconnections;
    client.close_after_reply = true;
    client.output.clear();
    clients_to_close_.push_back(&client);
    return;
  }
  ProcessInput(client);
  Flush(client);
}

void Server::ProcessInput(Client& client) {
  ProtocolLimits limits;
  limits.max_bulk_len = config.proto_max_bulk_len;
  std::vector<std::string_view>& argv = serving_depth_ > 0 ? nested_argv_ : argv_scratch_;
  size_t prefetched = 0;  // requests ahead whose keys are on their way to the cache
  while (!client.close_after_reply && !client.blocked && !client.paused &&
         client.input.size() > 0) {
    limits.authenticated = client.authenticated || !acl.DefaultNeedsAuth();
    std::string_view data = client.input.pending();
    if (client.parser.bytes_needed() > data.size()) break;
    if (prefetched == 0) prefetched = PrefetchPipelinedKeys(client, data);
    if (prefetched > 0) --prefetched;
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
    if (!argv.empty()) {
      // As Redis does before each command: the memory the arguments hold may be what closes
      // the client, and then the command does not run.
      if (client_eviction_limit_ != 0) {
        CountClientMemory(client);
        EvictClients();
        if (client.close_after_reply) break;
      }
      Execute(client, argv);
    }
    if (client.paused) break;  // the request stays unconsumed, parsed again on resume
    // The master's stream goes on, byte for byte, to this replica's backlog and replicas.
    if (client.kind == ClientKind::kMaster) master_link->Applied(data.substr(0, consumed));
    client.input.Consume(consumed);
  }
  client.input.ShrinkIfEmpty(4 * kReadChunk);
}

size_t Server::PrefetchPipelinedKeys(const Client& client, std::string_view data) {
  // A window of 16: enough requests for their misses to overlap, few enough that the first
  // entries are still cached when their requests run. One request alone gains nothing.
  constexpr size_t kWindow = 16;
  std::array<PeekedRequest, kWindow> requests;
  const size_t count = PeekRequests(data, requests);
  if (count < 2) return 1;
  const Database& database = db(client.db);
  std::array<std::string_view, kWindow> keys;
  size_t key_count = 0;
  for (size_t i = 0; i < count; ++i) {
    const PeekedRequest& request = requests[i];
    if (request.first.empty()) continue;
    const Command* command = commands.Find(request.name);
    if (command == nullptr || command->first_key != 1) continue;
    keys[key_count++] = request.first;
    database.Prefetch(request.first);
  }
  for (size_t i = 0; i < key_count; ++i) database.PrefetchEntry(keys[i]);
  return count;
}

void Server::Flush(Client& client) {
  FlushReplies(client);
  if (client_eviction_limit_ != 0 && !client.close_after_reply) {
    CountClientMemory(client);
    EvictClients();
  }
}

void Server::FlushReplies(Client& client) {
  if (client.replies_dropped) {
    client.output.clear();
    return;
  }
  // Invariant 2 of persistence.h: logged writes reach the file before their replies leave.
  if (persistence->log_pending()) persistence->FlushLog();
  // A syncing replica's stream waits for its snapshot (replication.h, Invariant 2).
  if (client.is_replica() && !replication->SendBulk(client)) {
    if (client.close_after_reply || DropOverOutputLimit(client)) return;
    UpdateWriteWatch(client);
    return;
  }
  uint64_t& written = client.is_replica() ? stats.net_repl_output_bytes : stats.net_output_bytes;
  // A few blocks at a time: writev stops at the socket's room anyway, and a slow reader's long
  // list is not walked whole for each write.
  constexpr size_t kWriteVectors = 16;
  std::array<iovec, kWriteVectors> vectors;
  while (client.pending_output() > 0) {
    const size_t count = client.output.Gather(vectors.data(), vectors.size());
    ssize_t n = WriteVectors(client, vectors.data(), static_cast<int>(count));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      client.output.clear();
      client.close_after_reply = true;
      break;
    }
    ++stats.total_writes_processed;
    written += static_cast<uint64_t>(n);
    // Written blocks are freed as they go (output_buffer.h), so a client that drains slowly
    // gives its memory back, and one that drains completely keeps one small block.
    client.output.Consume(static_cast<size_t>(n));
  }
  if (client.pending_output() == 0) {
    client.over_soft_limit_since = 0;
    if (client.close_after_reply) {
      clients_to_close_.push_back(&client);
      return;
    }
  } else if (DropOverOutputLimit(client)) {
    return;
  }
  UpdateWriteWatch(client);
}

bool Server::DropOverOutputLimit(Client& client) {
  if (!OverOutputLimit(client)) return false;
  const OutputBufferLimit& limit = OutputLimitClass(client);
  const uint64_t pending = client.pending_output();
  const bool class_limit = client.is_replica() ||
                           (limit.hard > 0 && pending >= static_cast<uint64_t>(limit.hard)) ||
                           (limit.soft > 0 && pending >= static_cast<uint64_t>(limit.soft));
  LogWarning("Client id=" + std::to_string(client.id) + " scheduled to be closed ASAP for " +
             (class_limit ? std::string("overcoming of output buffer limits.")
                          : "overcoming the reply size limit of " +
                                std::to_string(OutputHardLimit(client)) +
                                " bytes (client-reply-size-limit)."));
  ++stats.client_output_buffer_limit_disconnections;
  CloseClientSoon(client);
  return true;
}

bool Server::OverOutputLimit(Client& client) {
  const OutputBufferLimit& limit = OutputLimitClass(client);
  const auto pending = static_cast<int64_t>(client.pending_output());
  const uint64_t hard = OutputHardLimit(client);
  if (hard > 0 && static_cast<uint64_t>(pending) >= hard) return true;
  if (limit.soft == 0 || pending < limit.soft) {
    client.over_soft_limit_since = 0;
    return false;
  }
  if (client.over_soft_limit_since == 0) client.over_soft_limit_since = now_ms_;
  return now_ms_ - client.over_soft_limit_since > limit.soft_seconds * 1000;
}

const OutputBufferLimit& Server::OutputLimitClass(const Client& client) const {
  const OutputBufferLimits& limits = config.client_output_buffer_limit;
  return client.is_replica() ? limits.replica : client.subscribed() ? limits.pubsub : limits.normal;
}

uint64_t Server::OutputHardLimit(const Client& client) const {
  const OutputBufferLimit& limit = OutputLimitClass(client);
  if (client.is_replica()) {
    // As Redis 7's: a replica's hard limit below repl-backlog-size counts as that size, or a
    // replica would be dropped for holding what a partial resync sends it.
    if (limit.hard == 0) return 0;
    return static_cast<uint64_t>(std::max<int64_t>(limit.hard, config.repl_backlog_size));
  }
  // A tiny maxmemory (a test's `maxmemory 1`, a small cache) must not cut ordinary replies.
  constexpr uint64_t kLeastDerivedBound = 64ULL << 20;
  uint64_t bound = static_cast<uint64_t>(config.client_reply_size_limit);
  if (bound == 0) {
    bound = config.maxmemory > 0
                ? std::max(static_cast<uint64_t>(config.maxmemory), kLeastDerivedBound)
                : physical_memory_ / 8;
  }
  if (limit.hard > 0) bound = bound == 0 ? limit.hard : std::min<uint64_t>(bound, limit.hard);
  return bound;
}

void Server::UpdateWriteWatch(Client& client) {
  // A replica sends its snapshot first and holds its stream until then.
  const ReplicaLink& link = client.replica;
  bool want_write = link.state == ReplicaState::kSendBulk || link.relay_writing ||
                    (client.pending_output() > 0 && link.state != ReplicaState::kWaitBgsaveEnd &&
                     !link.stream_on_ack);
  if (want_write == client.want_write) return;
  client.want_write = want_write;
  if (client.connection != nullptr) client.connection->SetWritable(want_write);
}

void Server::HandleWritable(Client& client) { Flush(client); }

void Server::CloseClient(Client& client) {
  int fd = client.fd;
  if (!clients_by_fd_.count(fd)) return;  // closed earlier in this round
  client.connection->Close();
  ForgetClientMemory(client);
  UnwatchAll(client);
  UnblockClient(client);
  pubsub.RemoveClient(client);
  RemoveMonitor(client);
  tracking.Disable(client);
  replication->RemoveReplica(client);
  if (client.kind == ClientKind::kMaster) master_link->MasterClosed(client);
  clients_by_id_.erase(client.id);
  clients_by_fd_.erase(fd);
}

Client& Server::AdoptMasterConnection(std::unique_ptr<net::Connection> connection,
                                      const std::string& address) {
  const int fd = connection->fd();
  auto client = std::make_unique<Client>(next_client_id_++, fd, ClientKind::kMaster);
  client->authenticated = true;
  client->created_ms = client->last_interaction_ms = NowMs();
  client->address = address;
  client->local_address = connection->LocalAddress();
  // The master reads no replies: only REPLCONF ACK goes back (master_link.h).
  client->reply.set_buffer(&client->discarded_replies);
  client->server = this;
  client->connection = std::move(connection);
  client->connection->Watch(event_loop, client.get(), false);
  Client& adopted = *client;
  clients_by_id_[client->id] = client.get();
  clients_by_fd_[fd] = std::move(client);
  return adopted;
}

void Server::FeedMasterInput(Client& client, std::string_view bytes) {
  std::memcpy(client.input.PrepareWrite(bytes.size()), bytes.data(), bytes.size());
  client.input.CommitWrite(bytes.size());
  ProcessInput(client);
  Flush(client);
}

// Dispatch.

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

}  // namespace goblin
