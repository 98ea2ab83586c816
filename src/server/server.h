// The server: configuration, databases, clients and the serving loop.
//
// One thread runs everything that touches data (docs/DESIGN.md, "Threads"): the event loop
// reads requests, executes every complete request in a client's buffer, batches the replies
// and writes them before waiting again. A periodic tick (hz times a second) does background
// work in bounded slices: active expiry, client timeouts, statistics. Every change a command
// makes leaves through the effects stream (effects.h).
//
// Server's members are defined by seam: server.cc (state, databases, WATCH, CONFIG SET),
// connections.cc (listeners, the loop, client I/O), dispatch.cc (one command), blocking.cc,
// client_pause.cc, monitor.cc, slowlog.cc (SLOWLOG, LATENCY) and tick.cc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "keyspace/database.h"
#include "net/connection.h"
#include "net/event_loop.h"
#include "net/tls.h"
#include "server/acl/access_control.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/config.h"
#include "server/effects.h"
#include "server/eviction.h"
#include "server/memory_stats.h"
#include "server/migrate_connections.h"
#include "server/oom_score.h"
#include "server/pubsub.h"
#include "server/tracking.h"

namespace goblin {

class Failover;
namespace cluster {
class Cluster;
}
class Shutdown;

// Who pauses writes besides CLIENT PAUSE (Server::SetWritePause).
// Who holds writes paused besides CLIENT PAUSE: FAILOVER, a shutdown waiting for its replicas,
// and a cluster master handing its slots to a replica (CLUSTER FAILOVER).
enum class WritePause : uint8_t { kFailover = 1, kShutdown = 2, kClusterFailover = 4 };
class MasterLink;
class Persistence;
class Replication;
class ScriptRunner;
class Server;

// What a command handler sees.
struct CommandContext {
  Server& server;
  Client& client;
  const std::vector<std::string_view>& argv;
  const Command& command;
  ReplyBuilder& reply;
  int64_t now_ms;

  Database& db();
  size_t argc() const { return argv.size(); }
  std::string_view arg(size_t i) const { return argv[i]; }

  // Whether the command's effects are recorded (an append-only file listens): a handler checks
  // it before it builds an expensive replacement.
  bool propagating() const;
  // Records argv (in the client's database) as the command's effect instead of the command as
  // it arrived; several calls record several commands (effects.h). Kept only when the command
  // changed data.
  void Propagate(std::initializer_list<std::string_view> argv);
  void Propagate(std::span<const std::string_view> argv);
  // Logs only what Propagate records, nothing if it records nothing, however the command
  // changed data (effects.h: ReplaceWithNothing).
  void PropagateOnlyRecorded();
};

// Which arguments of a call carry passwords (AUTH's, HELLO ... AUTH's, MIGRATE ... AUTH and
// AUTH2's, CONFIG SET of masterauth, requirepass and Redis's other sensitive options): MONITOR,
// SLOWLOG and the crash report show them as "(redacted)", as Redis does.
std::vector<bool> SecretArguments(const Command& command,
                                  const std::vector<std::string_view>& argv);
// The same without allocating (the crash report runs in a signal handler): sets secret[i] for
// the secret arguments among the first count; leaves the others as they are.
void MarkSecretArguments(const Command& command, const std::vector<std::string_view>& argv,
                         bool* secret, size_t count);

struct SlowlogEntry {
  uint64_t id;
  int64_t unix_time;
  int64_t duration_us;
  std::vector<std::string> args;
  std::string peer;
  std::string client_name;
};

struct LatencySample {
  int64_t unix_time;
  int64_t latency_ms;
};

struct LatencyEvent {
  std::deque<LatencySample> history;  // at most 160 samples, as in Redis
  int64_t max_ms = 0;
};

struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;
  uint64_t net_repl_output_bytes = 0;  // written to replicas (not in net_output_bytes)
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  uint64_t client_query_buffer_limit_disconnections = 0;
  uint64_t client_output_buffer_limit_disconnections = 0;
  uint64_t evicted_clients = 0;       // closed for maxmemory-clients
  uint64_t reply_buffer_shrinks = 0;  // idle reply blocks given back by the tick
  uint64_t blocked_clients = 0;
  std::map<std::string, uint64_t> error_counts;  // errorstats: prefix -> count
  KeyspaceCounters keyspace;
  // instantaneous_ops_per_sec: commands per tick over the last 16 ticks.
  uint64_t ops_at_last_sample = 0;
  int64_t last_sample_ms = 0;
  double ops_samples[16] = {};
  size_t ops_sample_index = 0;
};

class Server : private KeyspaceEvents {
 public:
  explicit Server(Config config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Opens the listeners and serves until SHUTDOWN or a signal; returns the exit code.
  int Run();

  // Executes one request for client (argv[0] is the command name) and appends its reply.
  void Execute(Client& client, const std::vector<std::string_view>& argv);
  // Admits and runs one command (dispatch.cc), without the reply-mode handling of Execute: a
  // refusal is the reply; an admitted command may wait (CLIENT PAUSE), be queued (MULTI) or
  // run.
  void Dispatch(Client& client, const std::vector<std::string_view>& argv);
  void DispatchCommand(Client& client, const std::vector<std::string_view>& argv);
  // Runs a command EXEC took from client's queue: it was admitted when it was queued.
  void RunQueued(Client& client, const std::vector<std::string_view>& argv);
  // The command argv[0] (and argv[1] for a container) names, or null with error set to Redis's
  // reply for an unknown command or subcommand.
  const Command* LookUpCommand(const std::vector<std::string_view>& argv, std::string* error) const;

  // Blocking commands. A handler with nothing to serve calls BlockClient (and replies
  // nothing); the command is run again when one of keys changes, and the client gets a null
  // array at deadline_ms (0: never).
  // A key wakes the client only when it holds waits_for (Redis 7.2: a SET on a key a BLPOP
  // waits on leaves the client blocked), unless retries_without_key: then a key deleted or
  // holding another type runs the command again too (XREADGROUP, whose group went with the
  // key: Redis 7.2 answers what a fresh run answers, NOGROUP or WRONGTYPE).
  // At retry_at_ms (0: never) the client's keys are woken as if they changed (Redis 8.4's
  // XREADGROUP CLAIM: a pending entry becomes idle enough to claim); a run that blocks again
  // sets the next such time.
  void BlockClient(Client& client, const std::vector<std::string_view>& argv,
                   const std::vector<std::string_view>& keys, int64_t deadline_ms,
                   ValueType waits_for, bool retries_without_key = false, int64_t retry_at_ms = 0);
  // WAIT: client waits until replicas replicas acknowledged offset (replication.h releases it
  // with ReleaseWait) or until deadline_ms (0: never), when it gets the count so far.
  void BlockForReplicas(Client& client, int64_t deadline_ms, uint64_t offset, int64_t replicas);
  void ReleaseWait(Client& client, int64_t acknowledged);
  // WAITAOF: as WAIT, until local (0 or 1) local fsyncs and replicas replicas' fsyncs cover
  // offset; released with the two counts, or with error.
  void BlockForAof(Client& client, int64_t deadline_ms, uint64_t offset, int64_t local,
                   int64_t replicas);
  void ReleaseWaitAof(Client& client, int64_t local, int64_t replicas);
  void ReleaseWaitAofWithError(Client& client, std::string_view error);
  // SHUTDOWN waiting for the replicas (shutdown.h): client waits unanswered; released with
  // error when the shutdown is cancelled.
  void BlockForShutdown(Client& client);
  void ReleaseShutdownWait(Client& client, std::string_view error);
  // CLIENT UNBLOCK: false when no such client is blocked (or it waits for a shutdown).
  bool UnblockById(uint64_t id, bool with_error);
  // Answers a blocked client error instead of its command's reply, and lets it go on.
  void UnblockWithError(Client& client, std::string_view error);

  // WATCH bookkeeping.
  void Watch(Client& client, std::string_view key);
  void UnwatchAll(Client& client);
  // True when a key the client watched while it was live is now past its deadline, deleted or
  // not: EXEC fails then, as Redis's isWatchedKeyExpired makes it.
  bool WatchedKeyExpired(const Client& client) const;

  // Client bookkeeping.
  Client* FindClient(uint64_t id);
  std::vector<Client*> ClientsById();
  // Closes client after the reply now being built has been written (QUIT).
  void CloseClientLater(Client& client) { client.close_after_reply = true; }
  // Output was added to client outside its own command (a published message): it is written
  // at the end of the event loop round, once however many messages arrive meanwhile.
  void QueueWrite(Client& client);
  // CLIENT PAUSE: until until_ms, commands (all, or those that write) wait unread in their
  // clients' input; a second pause extends the first. CLIENT UNPAUSE ends it.
  void PauseClients(int64_t until_ms, bool all);
  void UnpauseClients();
  // The pauses of writes of FAILOVER (failover.h) and of a shutdown waiting for its replicas
  // (shutdown.h), apart from CLIENT PAUSE: each ends on its own.
  void SetWritePause(WritePause reason, bool on);
  bool paused() const { return pause_until_ms_ != 0 || write_pauses_ != 0; }
  // MONITOR: client receives a line for every command executed from now on.
  void AddMonitor(Client& client);
  void RemoveMonitor(Client& client);
  // CLIENT KILL: another client is dropped at once, unread replies and all; the caller itself
  // (SKIPME no) still gets its reply first.
  void KillClient(Client& victim, const Client& caller);
  // Drops client at the end of the round, unsent output and all.
  void CloseClientSoon(Client& client);
  // Every blocked client gets error (a -UNBLOCKED reply) and runs on.
  void UnblockAllClients(std::string_view error);

  // The replica's link to its master (master_link.h): once synced, its connection becomes the
  // master client.
  Client& AdoptMasterConnection(std::unique_ptr<net::Connection> connection,
                                const std::string& address);
  // Bytes of the master's stream that arrived with the snapshot: run as if just read.
  void FeedMasterInput(Client& client, std::string_view bytes);

  // Time.
  int64_t NowMs() const;
  int64_t UptimeSeconds() const;

  // Memory as INFO reports it.
  size_t UsedMemory();
  size_t PeakMemory() const { return peak_memory_; }

  uint64_t Random64() { return rng_(); }
  Database& db(int index) { return dbs_[static_cast<size_t>(index)]; }
  size_t database_count() const { return dbs_.size(); }
  void SwapDatabases(int a, int b);
  void FlushAll();
  // A writable replica's cron: deletes the keys of own_deadline_keys_ whose time has passed.
  void ExpireOwnKeys(int64_t now_ms);
  // Whether the keys a command stores with deadlines go to own_deadline_keys_.
  void RecordOwnDeadlines(bool on);

  void RequestShutdown() { shutdown_requested_ = true; }
  // SHUTDOWN ran or a SIGTERM/SIGINT arrived.
  bool shutdown_pending() const;
  // SHUTDOWN ABORT before a signal's shutdown began: forgets the signal; false when none came.
  bool CancelShutdownSignal();

  // Runs one round of the event loop: waits up to timeout_ms for events and handles them.
  // Returns false when epoll failed. Also called while a snapshot loads, to answer -LOADING.
  bool ServeEvents(int timeout_ms);
  // In a forked child: releases the listening ports so a restarted server can bind them.
  void CloseListenersInChild();
  bool loading() const;

  // Puts CONFIG SET changes into effect by running each option's hook. Returns "" or the error
  // reply.
  std::string ApplyConfigChanges(const std::vector<ConfigChange>& changes);

  // Records an error reply for INFO errorstats (the prefix is the first word, or ERR).
  void CountError(std::string_view error_text);

  // Publishes keyspace event `event` of class `type` (server/keyspace_notify.h) for key in
  // database db on the channels notify-keyspace-events enables; nothing when type is off.
  void NotifyKeyspaceEvent(uint32_t type, std::string_view event, std::string_view key, int db);
  // PUBLISH / SPUBLISH and keyspace events: delivers message to the subscribers of channel (and
  // of the patterns it matches); returns how many copies went out. The running client's own
  // copies follow its reply (Tracking::OutputOf).
  size_t Publish(PubSub::Kind kind, std::string_view channel, std::string_view message);

  Config config;
  ConfigRegistry config_registry{&config};
  CommandTable commands;
  // Users, logins and the ACL log (acl/access_control.h); checked by admission (dispatch.cc),
  // EXEC and scripts through the functions below (access.cc).
  acl::AccessControl acl{commands};
  // Whether client's user may run the call; a refusal is logged in ACL LOG and *position is
  // argv's index of the key or channel refused (0: the command).
  acl::Denial CheckAndLog(const Client& client, const Command& command,
                          const std::vector<std::string_view>& argv, acl::LogContext context,
                          size_t* position);
  // The -NOPERM refusal of the call for client's user ("" when allowed), logged in ACL LOG.
  std::string AclRefusal(const Client& client, const Command& command,
                         const std::vector<std::string_view>& argv, acl::LogContext context);
  // A new connection, or one after RESET: the default user, logged in unless it needs a
  // password (or is off).
  void StartAsDefaultUser(Client& client) {
    client.user = &acl.default_user();
    client.authenticated = !acl.DefaultNeedsAuth();
  }
  // AUTH and HELLO ... AUTH: logs client in as the user, or logs the failure in ACL LOG
  // (`command` as the client spelled it) and returns false.
  bool LogIn(Client& client, std::string_view command, std::string_view username,
             std::string_view password);
  // Closes the connections logged in as users that are gone (ACL DELUSER, ACL LOAD); the
  // current client, if among them, after its reply.
  void DropUsers(std::vector<std::unique_ptr<acl::User>> users, const Client* current);
  // ACL SETUSER revoked channels of user (as it was: before): its connections subscribed to a
  // channel or pattern it may no longer use are closed, as Redis closes them.
  void DropDeniedSubscribers(const acl::User& user, const acl::User& before);
  // Startup: the configuration's `user` lines and the ACL file, which replace what requirepass
  // made of the default user; false (logged) on error.
  bool LoadUsers();
  // The ACL LOG context of a command the client runs now.
  static acl::LogContext LogContextOf(const Client& client);
  ServerStats stats;
  std::deque<SlowlogEntry> slowlog;
  uint64_t next_slowlog_id = 0;
  std::map<std::string, LatencyEvent> latency_events;
  bool active_expire_enabled = true;
  int64_t start_time_ms = 0;
  int64_t last_save_unix = 0;
  uint64_t dirty = 0;  // changes since the last save
  // Every connection's readiness (net/event_loop.h). Declared before everything that holds a
  // connection, which unwatches itself when destroyed.
  net::EventLoop event_loop;
  // The master's side of replication (replication.h). Declared before persistence, which
  // tells it when its child ends, even while being destroyed.
  std::unique_ptr<Replication> replication;
  // The replica's side (master_link.h): whether and whom this server follows.
  std::unique_ptr<MasterLink> master_link;
  // FAILOVER's coordination (failover.h).
  std::unique_ptr<Failover> failover;
  // SHUTDOWN and the shutdown signals, waiting for the replicas (shutdown.h).
  std::unique_ptr<Shutdown> shutdown;
  // Snapshots and the append-only file (src/persist).
  std::unique_ptr<Persistence> persistence;
  // EVAL scripts and function libraries (script_runner.h).
  std::unique_ptr<ScriptRunner> scripts;
  // Redis Cluster mode (cluster/cluster.h); null unless cluster-enabled.
  std::unique_ptr<cluster::Cluster> cluster_mode;
  // The cluster bus's listening sockets, on the bind addresses: false with *error set.
  bool OpenBusListeners(int port, std::vector<int>* fds, std::string* error);
  // A message PUBLISH or SPUBLISH sent on another node of the cluster, delivered here.
  void DeliverPublished(bool sharded, std::string_view channel, std::string_view message);
  // Deletes every key of slot (a slot this cluster node lost without migrating its keys).
  void DeleteKeysInSlot(int slot);
  // While a script runs past busy-reply-threshold: serves one round of other clients' events
  // (they get -BUSY but for allow-busy commands), without timers and without the caller.
  void ServeWhileScriptRuns();
  // Writes the MONITOR line of a command that runs for client.
  void FeedMonitors(const Client& client, const Command& command,
                    const std::vector<std::string_view>& argv);
  // maxmemory-clients (client_eviction.cc). The limit in bytes, 0 when client eviction is off.
  uint64_t client_eviction_limit() const { return client_eviction_limit_; }
  // The memory of the clients counted for it, together.
  uint64_t client_memory_total() const { return client_memory_total_; }
  // Reads the limit from the options again and counts every client anew (CONFIG SET of
  // maxmemory-clients or maxmemory, startup, the tick).
  void RecountClientMemory();
  // Counts client's memory again in the total; nothing while client eviction is off. A
  // CLIENT NO-EVICT client is counted only when every_client (the tick), as Redis refreshes
  // such a client's figure only in its client cron: the big arguments of its own command do
  // not close other clients before the command has run and freed them.
  void CountClientMemory(Client& client, bool every_client = false);
  // While the total reaches the limit, closes evictable clients, the biggest first, each
  // counted in evicted_clients and logged.
  void EvictClients();
  // By bucket (ClientMemoryBucket): the memory and the number of the evictable clients.
  std::vector<std::pair<size_t, size_t>> ClientMemoryBuckets() const;
  // maxmemory (eviction.h).
  UsedMemoryGauge memory_gauge;
  Evictor evictor{*this};
  // The process's OOM score by its role (oom_score.h); UpdateOomScore writes the one of this
  // server's role, after a change of role or of the options. False: /proc refused it (logged).
  OomScore oom_score;
  bool UpdateOomScore();
  // Every key's access stamp (OBJECT IDLETIME / FREQ, the LRU and LFU policies) is read and
  // written through it; its clock is the commands' clock.
  AccessClock access_clock;
  // Persistence says so while a forked child shares the pages: updating a key's access stamp
  // would copy its page.
  void SetChildSharesPages(bool shares) {
    child_shares_pages_ = shares;
    UpdateKeyTouching();
  }
  PubSub pubsub;
  // Client-side caching: CLIENT TRACKING's table, prefixes and invalidations (tracking.h).
  Tracking tracking{*this};
  // Points every database's key-change hook at listener, or clears it (nullptr).
  void SetKeyChangeListener(KeyChangeListener* listener);
  // Every change, as a replay must see it (effects.h); the append-only file consumes it.
  EffectStream effects;
  // MIGRATE's connections to its targets, reused for kIdleSeconds (migrate_connections.h).
  MigrateConnections migrate_connections;
  std::string executable;
  // The arguments the process started with (DEBUG RESTART runs them again).
  std::vector<std::string> command_line;
  std::string run_id;
  // INFO replication's master_replid; DEBUG CHANGE-REPL-ID draws a new one.
  std::string replication_id;
  std::string RandomHexId();
  // DEBUG PAUSE-CRON 1 stops the tick: no background expiry, eviction or persistence rules.
  bool cron_paused = false;
  // DEBUG QUICKLIST-PACKED-THRESHOLD, remembered for DEBUG's sake only: a list element of any
  // size is stored in Goblin's packed nodes, so there is no plain-node form it could select.
  uint64_t quicklist_packed_threshold = 1ULL << 30;
  // DEBUG SET-SKIP-CHECKSUM-VALIDATION 1: RDB files and RESTORE payloads load without their
  // CRC-64 compared.
  bool skip_checksum_validation = false;
  // DEBUG SET-DISABLE-DENY-SCRIPTS 1: scripts may call the commands flagged noscript.
  bool script_disable_deny_script = false;
  // DEBUG REPLYBUFFER PEAK-RESET-TIME and RESIZING. Redis resizes each client's fixed reply
  // buffer to its recent peak; Goblin's replies live in blocks freed as they are written
  // (resp/output_buffer.h), and the tick gives back the one block an idle client keeps unless
  // RESIZING is 0. The peak reset time is remembered for DEBUG's sake only.
  int64_t reply_buffer_peak_reset_time_ms = 5000;
  bool reply_buffer_resizing = true;
  pid_t pid = 0;
  int tcp_port_bound = 0;

 private:
  // A listening socket; its readiness accepts connections.
  struct Listener final : net::EventHandler {
    Listener(Server* server, int fd, bool unix_socket, bool tls = false)
        : server(server), fd(fd), unix_socket(unix_socket), tls(tls) {}
    void OnReady(uint32_t) override { server->Accept(*this); }
    Server* server;
    int fd;
    bool unix_socket;
    bool tls;  // tls-port: its connections speak TLS
  };
  // A client's readiness arrives through Client::OnReady.
  friend struct Client;

  bool OpenListeners(std::string* error);
  bool AdjustOpenFilesLimit();
  // The TCP listeners on every bind address for port (tls: those of tls-port).
  bool OpenTcpListeners(int64_t port, bool tls, std::vector<Listener>* out, std::string* error);
  // Loads the TLS certificates and settings when TLS is in use (tls-port, tls-replication);
  // false, logged as
  // Redis logs it, when they do not load. Connections keep the context they started with.
  bool ConfigureTls();
  std::shared_ptr<net::TlsContext> tls_;

 public:
  // The TLS settings in use (null when TLS is not): the replica's link to its master opens
  // its connection with them under tls-replication.
  const std::shared_ptr<net::TlsContext>& tls_context() const { return tls_; }

 private:
  bool RebindTcp(std::string* error);
  void WatchListeners();
  void Accept(const Listener& listener);
  void OnClientReady(Client& client, uint32_t readiness);
  void CloseClientsToClose();
  void HandleReadable(Client& client);
  void HandleWritable(Client& client);
  void ProcessInput(Client& client);
  // Starts loading the key-table buckets, then the entries, of the keys of the pipelined
  // requests at the front of data (the client's input), so that executing them one after the
  // other does not wait for memory at each. Returns how many requests it read ahead.
  size_t PrefetchPipelinedKeys(const Client& client, std::string_view data);
  // Writes what client's replies the socket takes, then counts its memory for
  // maxmemory-clients (and evicts clients over it).
  void Flush(Client& client);
  void FlushReplies(Client& client);
  void FlushQueuedWrites();
  // client-output-buffer-limit: whether client's unsent replies broke its class's limit, or
  // OutputHardLimit.
  bool OverOutputLimit(Client& client);
  // The most unsent output client may hold before it is closed: its class's hard limit and,
  // for a client that is not a replica, the reply size limit (client-reply-size-limit; when 0,
  // maxmemory but at least 64 MB, or an eighth of physical memory without one), which keeps a
  // reply that cannot fit (ZRANDMEMBER key -2147483648 is 24 GB) from taking the machine.
  // 0: none.
  uint64_t OutputHardLimit(const Client& client) const;
  // The client-output-buffer-limit class of client: replica, pubsub or normal.
  const OutputBufferLimit& OutputLimitClass(const Client& client) const;
  // Closes client, logged, when OverOutputLimit says so; returns whether it did.
  bool DropOverOutputLimit(Client& client);
  // The timeout reply of a blocked client: a null array, or WAIT's count.
  void ReplyBlockTimeout(Client& client);
  void CloseClient(Client& client);
  // Takes client's memory out of the clients' total (it is closing).
  void ForgetClientMemory(Client& client);
  void Tick();
  // Active expiry of hash fields (server/field_expiry.cc), until the steady clock passes
  // until_us.
  void ExpireHashFields(int64_t now_ms, int64_t until_us);
  void RecordSlowlog(const Client& client, const Command& command,
                     const std::vector<std::string_view>& argv, int64_t duration_us);
  void RecordLatency(std::string_view event, int64_t duration_ms);
  void UpdateWriteWatch(Client& client);
  void UnblockClient(Client& client);
  void ResumeClient(Client& client);
  void HandleReadyKeys();
  void HandleBlockTimeouts();
  // INFO commandstats' count of a blocked client's command, when it is answered without being
  // run again (a timeout, CLIENT UNBLOCK, WAIT released, an error to every blocked client).
  void CountUnblockedCall(const Client& client);
  // Wakes the keys of the clients whose retry_at_ms has come (BlockClient), and serves them.
  void HandleBlockRetries();
  // Replaces client's retry time (0: none).
  void SetBlockRetry(Client& client, int64_t retry_at_ms);
  // The flags admission judges a call by: the command's, and for EXEC those of its queue too,
  // as Redis's mstate.cmd_flags and cmd_inv_flags make them. any: a flag some command has;
  // lacking: a flag some command lacks.
  struct AdmissionFlags {
    uint32_t any;
    uint32_t lacking;
  };
  // The command's flags, with what a script's declared flags make of them (or may-replicate for
  // one without a shebang) and, for EXEC, what the queued commands add.
  AdmissionFlags FlagsForAdmission(const Client& client, const Command& command,
                                   const std::vector<std::string_view>& argv) const;
  // Why client may not run the call argv of command now, in Redis's order (dispatch.cc); ""
  // when it may. Evicts first when over maxmemory, as Redis does.
  std::string AdmissionRefusal(Client& client, const Command& command, const AdmissionFlags& flags,
                               const std::vector<std::string_view>& argv);
  bool RefusedWhenOutOfMemory(const Client& client, const Command& command,
                              uint32_t any_flags) const;
  // A command from the master or the append-only file answered error: logged and counted in
  // unexpected_error_replies, as Redis does, and a panic when propagation-error-behavior says.
  void PropagatedCommandFailed(const Client& client, std::string_view error);
  // Replies error to a refused call and counts it (counted: the command refused, when known).
  void Refuse(Client& client, std::string_view error, const Command* counted);
  // Runs an admitted command: the handler, then its effects and the statistics.
  void Call(Client& client, const Command& command, const std::vector<std::string_view>& argv);
  // KeyspaceEvents: an expired key reaches the effects stream as a DEL and subscribers as
  // `expired`; a read miss is `keymiss`, a key created `new`.
  void KeyExpired(int db, std::string_view key) override;
  void KeyMissed(int db, std::string_view key) override;
  void KeyAdded(int db, std::string_view key) override;
  // The clock commands see, and the access stamps with it.
  void SetClock(int64_t now_ms) {
    now_ms_ = now_ms;
    access_clock.SetNow(now_ms);
  }
  void UpdateKeyTouching() { touch_keys_ = !child_shares_pages_ && command_touches_keys_; }
  // The access clock's policy and parameters from the config.
  void UpdateAccessClock();
  static bool AllowedWhileSubscribed(const Command& command);
  // Whether a call with these flags (AdmissionFlags::any) waits while clients are paused.
  bool PausesCommand(uint32_t any_flags) const;
  void ResumePausedClients();

  // Declared before dbs_ so that it outlives them (members are destroyed in reverse order).
  std::vector<KeyWaiters> waiters_;  // by database index, not moved by SWAPDB
  std::vector<Database> dbs_;
  bool any_ready_ = false;  // some KeyWaiters::ready is non-empty
  // Lookups update the keys' access stamps while touch_keys_ (each Database points at it): not
  // while a child shares the pages, nor for a command that does not touch keys (kCmdNoTouch,
  // or anything but TOUCH from a CLIENT NO-TOUCH client).
  bool touch_keys_ = true;
  // What lookups do with expired keys (every Database points at it): set per command by who
  // runs it when this server is a replica.
  Database::ExpiryRules expiry_rules_;
  // A writable replica's keys to which its own clients gave deadlines, by database index (not
  // moved by SWAPDB, as Redis's): it expires these itself, and only these (ExpireOwnKeys).
  std::vector<std::set<std::string, std::less<>>> own_deadline_keys_;
  bool recording_own_deadlines_ = false;
  bool shutdown_signal_logged_ = false;  // the pending signal's "Received ..." line is written
  bool child_shares_pages_ = false;
  bool command_touches_keys_ = true;
  bool handling_ready_keys_ = false;
  std::set<std::pair<int64_t, uint64_t>> block_deadlines_;  // (deadline ms, client id)
  std::set<std::pair<int64_t, uint64_t>> block_retries_;    // (BlockState::retry_at_ms, client id)
  std::vector<Listener> listeners_;
  std::unordered_map<int, std::unique_ptr<Client>> clients_by_fd_;
  std::map<uint64_t, Client*> clients_by_id_;
  std::vector<Client*> clients_to_close_;
  int64_t query_buffers_resized_ms_ = 0;  // the tick's last pass over the query buffers
  std::vector<uint64_t> write_queue_;     // ids of clients QueueWrite named
  std::vector<Client*> monitors_;         // MONITOR clients, in the order they asked
  int64_t pause_until_ms_ = 0;            // CLIENT PAUSE deadline, 0 when not paused
  bool pause_all_ = false;                // ALL (else WRITE)
  uint8_t write_pauses_ = 0;              // WritePause bits: who holds writes until they end
  std::vector<uint64_t> paused_clients_;  // ids, in the order their commands arrived
  bool resume_paused_ = false;            // the pause ended: serve paused_clients_
  int64_t now_ms_ = 0;                  // the clock commands see; refreshed once per batch of input
  int64_t disk_error_logged_ms_ = 0;    // a replica applying writes it cannot persist, logged
  uint64_t client_eviction_limit_ = 0;  // maxmemory-clients in bytes; 0: off
  uint64_t client_memory_total_ = 0;    // the sum of the clients' memory_counted
  uint64_t next_client_id_ = 1;
  bool shutdown_requested_ = false;
  int64_t next_tick_ms_ = 0;
  size_t peak_memory_ = 0;
  uint64_t physical_memory_ = 0;  // read once at startup
  std::mt19937_64 rng_;
  std::vector<std::string_view> argv_scratch_;
  // ServeEvents inside a running script (ServeWhileScriptRuns) has its own argv: the script
  // command's is still in use (the event loop keeps a batch of events per depth).
  int serving_depth_ = 0;
  std::vector<std::string_view> nested_argv_;
};

}  // namespace goblin
