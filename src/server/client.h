// One connection: its buffers, protocol state and the per-connection settings that commands
// read and change (database, RESP version, name, authentication, reply mode).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/collection.h"
#include "net/connection.h"
#include "net/event_loop.h"
#include "resp/reply_builder.h"
#include "resp/request_parser.h"
#include "server/input_buffer.h"

namespace goblin {

struct Command;
namespace acl {
class User;
}

enum class ReplyMode { kOn, kOff, kSkipNext, kSkipThis };

// Who issues a client's commands. Only a connection is subject to the checks that protect the
// server from its users (maxmemory refusals, -LOADING, MISCONF, CLIENT PAUSE); the replay of
// the append-only file runs what was already accepted once, and a script's commands were
// checked when the script started and by redis.call (server/script_runner.h).
enum class ClientKind {
  kConnection,  // a socket: TCP or Unix
  kAofReplay,   // the append-only file, replayed at startup
  kScript,      // the commands a running script or function calls
  kMaster,      // this replica's master (server/master_link.h): its socket carries the stream
};

// Where a replica's synchronization stands (server/replication.h), as Redis names the states.
enum class ReplicaState {
  kNone,             // not a replica
  kWaitBgsaveStart,  // SYNC or PSYNC arrived; no snapshot for it has started yet
  kWaitBgsaveEnd,    // +FULLRESYNC sent; the snapshot is being written (or streamed, diskless),
                     // the stream held
  kSendBulk,         // the snapshot file is being sent; the stream follows it
  kOnline,           // receiving the stream
};

// A connection's replication link: what REPLCONF told about it and, once SYNC or PSYNC made it
// a replica, its synchronization and acknowledgements.
struct ReplicaLink {
  ReplicaState state = ReplicaState::kNone;
  int64_t listening_port = 0;  // REPLCONF listening-port
  std::string ip_address;      // REPLCONF ip-address, else the peer's address is shown
  bool rdb_only = false;       // REPLCONF rdb-only 1: closed once the snapshot is sent
  // REPLCONF rdb-filter-only: the snapshot holds no keys, and the function libraries only
  // when filtered_functions (redis-cli --replica and --functions-rdb ask for this).
  bool filtered = false;
  bool filtered_functions = false;
  bool pre_psync = false;        // came with SYNC: no +FULLRESYNC line, never acknowledges
  bool psync2 = false;           // REPLCONF capa psync2: +CONTINUE names the replication id
  bool eof = false;              // REPLCONF capa eof: reads a snapshot of unknown size ($EOF:)
  bool goblin_snapshot = false;  // REPLCONF capa goblin-snapshot: loads Goblin's format
  int64_t sync_request_ms = 0;   // when it asked for a full sync (repl-diskless-sync-delay)
  uint64_t initial_offset = 0;   // the offset +FULLRESYNC named
  uint64_t ack_offset = 0;       // the last REPLCONF ACK
  uint64_t fsynced_offset = 0;   // its FACK: the stream the replica fsynced to its AOF
  int64_t ack_time_ms = 0;       // when it arrived (or the link came online)
  // kSendBulk: "$<size>\r\n" not yet written, then the file's bytes from rdb_sent on.
  std::string preamble;
  int rdb_fd = -1;
  uint64_t rdb_sent = 0;
  uint64_t rdb_size = 0;
  // A diskless sync: the snapshot streams from the child's pipe, a chunk at a time, to every
  // replica of the round (Replication's relay); relay_sent bytes of the current chunk are
  // written, the rest is while relay_writing. relay_stalled_ms: since when a write would block.
  bool relayed = false;
  bool relay_writing = false;
  size_t relay_sent = 0;
  int64_t relay_stalled_ms = 0;
  // Online after a diskless sync: the stream waits for the first REPLCONF ACK, which says the
  // snapshot is loaded (the replica finds the end mark without the stream glued to it).
  bool stream_on_ack = false;
};

// What a client blocked by BZPOPMIN and friends waits for.
struct BlockState {
  int db = 0;
  int64_t deadline_ms = 0;                 // 0: wait forever
  ValueType waits_for = ValueType::kList;  // the type a key must hold to wake the client
  // XREADGROUP: the command runs again when a key goes or changes type too (and answers the
  // NOGROUP or WRONGTYPE that a fresh run gives).
  bool retries_without_key = false;
  // XREADGROUP CLAIM: its keys are also woken at this time, when a pending entry becomes idle
  // enough to claim (0: never).
  int64_t retry_at_ms = 0;
  std::vector<std::string> argv;  // the command, run again when a key changes
  std::vector<std::string> keys;
  // WAIT: no keys; released once replicas replicas acknowledged offset, or at the deadline
  // with the count so far.
  bool waits_for_replicas = false;
  uint64_t replica_offset = 0;
  int64_t replicas = 0;
  // WAITAOF: the same, counting fsyncs, and the local log's too when local is 1.
  bool waits_for_fsync = false;
  int64_t local = 0;
  // SHUTDOWN: until the server exits, or the shutdown is cancelled (shutdown.h).
  bool waits_for_shutdown = false;
};

class Server;

struct Client final : net::EventHandler {
  Client(uint64_t id, int fd, ClientKind kind = ClientKind::kConnection)
      : id(id), fd(fd), kind(kind), reply(&output) {}
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // The connection's readiness: reads and writes for server (server/connections.cc).
  void OnReady(uint32_t readiness) override;

  uint64_t id;
  int fd;  // the connection's descriptor; -1 unless kind is kConnection or kMaster
  // The socket (net/connection.h); null unless kind is kConnection or kMaster.
  std::unique_ptr<net::Connection> connection;
  Server* server = nullptr;  // set while connection is watched
  ClientKind kind;
  bool is_connection() const { return kind == ClientKind::kConnection; }
  // A Unix socket or a loopback peer: where an enable-*-command or enable-protected-configs
  // option set to "local" allows what it guards.
  bool is_local() const {
    return unix_socket || address.starts_with("127.") || address.starts_with("::1:");
  }
  bool unix_socket = false;
  std::string address;        // "ip:port" of the peer, or "/path:0" for a Unix socket
  std::string local_address;  // "ip:port" of our end
  std::string name;
  std::string lib_name;
  std::string lib_ver;

  InputBuffer input;
  RequestParser parser;

  // Replies not yet written (resp/output_buffer.h).
  OutputBuffer output;
  ReplyBuilder reply;
  bool want_write = false;  // its connection is watched for writability

  int db = 0;
  // The ACL user the client runs as (server/acl/user.h); null for a client that may run
  // anything (the master's link, the append-only file's replay).
  acl::User* user = nullptr;
  // Logged in: AUTH or HELLO succeeded, or the default user needed no password when the
  // client connected.
  bool authenticated = false;
  bool close_after_reply = false;
  // Closed unanswered (Server::CloseClientSoon: an output limit, an error): what the rest of
  // its pipeline or transaction replies is dropped, not sent, as Redis never writes to a
  // client it scheduled to close.
  bool replies_dropped = false;
  bool no_evict = false;
  bool no_touch = false;  // CLIENT NO-TOUCH: only TOUCH marks keys used for eviction
  bool readonly = false;  // READONLY: a cluster replica serves it reads of its master's slots
  bool asking = false;    // ASKING: the next command may use an importing slot
  ReplyMode reply_mode = ReplyMode::kOn;
  int64_t created_ms = 0;
  int64_t last_interaction_ms = 0;
  // The command last looked up for the client, run or refused (CLIENT LIST's cmd=); null
  // before the first, or after a name that is no command.
  const Command* last_command = nullptr;
  uint64_t commands_processed = 0;

  // MULTI / EXEC / WATCH.
  bool in_multi = false;
  bool multi_failed = false;  // a command was rejected while queueing: EXEC aborts
  std::vector<std::vector<std::string>> queued;
  // The queued commands' flags (server/command_table.h), kept as they are queued for EXEC's
  // admission: a flag some command has, and a flag some command lacks.
  uint32_t queued_flags = 0;
  uint32_t queued_lacking_flags = 0;
  // The bytes of the queued arguments (CLIENT LIST's multi-mem, the client's memory).
  size_t queued_bytes = 0;
  void Queue(const std::vector<std::string_view>& argv, uint32_t flags) {
    queued.emplace_back(argv.begin(), argv.end());
    for (std::string_view arg : argv) queued_bytes += arg.size();
    queued_flags |= flags;
    queued_lacking_flags |= ~flags;
  }
  // Leaves MULTI: the queue and its flags go (the watched keys stay: Server::UnwatchAll).
  void DiscardTransaction() {
    in_multi = multi_failed = false;
    queued.clear();
    queued_bytes = 0;
    queued_flags = queued_lacking_flags = 0;
  }
  bool watch_dirty = false;
  std::vector<std::pair<int, std::string>> watched;  // (db, key)
  size_t watched_key_bytes = 0;                      // the watched keys' names, summed

  // Blocking commands.
  bool blocked = false;
  BlockState block;
  bool retrying_block = false;   // the blocked command is being run again
  bool block_requested = false;  // ... and found nothing to serve again
  // Running its transaction's queue (EXEC): blocking commands time out at once, and no
  // queued command is refused for memory (EXEC itself was checked).
  bool in_exec = false;
  size_t exec_size = 0;  // the commands of the transaction EXEC runs (CLIENT LIST's multi=)
  // Waiting for its script to finish: while the script lets other clients be served
  // (busy-reply-threshold), this one is neither read nor closed.
  bool running_script = false;
  // Inside a transaction or a script a command that would block answers at once instead.
  bool may_block() const { return !in_exec && kind != ClientKind::kScript; }

  // Publish/subscribe (server/pubsub.h): what this client listens to. A RESP2 client with any
  // subscription is in the subscribed context, where only (un)subscribing, PING, QUIT and RESET
  // are allowed.
  std::unordered_set<std::string> channels;
  std::unordered_set<std::string> patterns;
  std::unordered_set<std::string> shard_channels;
  bool subscribed() const {
    return !channels.empty() || !patterns.empty() || !shard_channels.empty();
  }
  bool write_queued = false;          // in the server's end-of-round write queue
  bool monitor = false;               // MONITOR: every command executed is written here
  bool paused = false;                // CLIENT PAUSE: its next command waits in the input
  int64_t over_soft_limit_since = 0;  // ms when unsent replies passed the soft limit, or 0

  size_t pending_output() const { return output.size(); }
  // What this client adds to the clients' total of maxmemory-clients as last counted
  // (server/client_eviction.cc); 0 while client eviction is off.
  size_t memory_counted = 0;

  // Replication (server/replication.h). A replica's output is the replication stream; replies
  // to its own commands go to discarded_replies instead (a replica that gets one is dropped).
  ReplicaLink replica;
  bool is_replica() const { return replica.state != ReplicaState::kNone; }
  OutputBuffer discarded_replies;
  // master_repl_offset right after this client's last command that fed the stream (WAIT).
  uint64_t write_offset = 0;

  // CLIENT TRACKING (server/tracking.h): client-side caching.
  struct Tracking {
    bool on = false;
    bool bcast = false;
    bool optin = false;
    bool optout = false;
    bool noloop = false;
    bool caching = false;            // CLIENT CACHING YES (OPTIN) or NO (OPTOUT), for one command
    bool broken_redirect = false;    // the REDIRECT target has gone
    uint64_t redirect = 0;           // 0: invalidations come to this client itself
    std::set<std::string> prefixes;  // BCAST; ordered as Redis lists them
  };
  Tracking tracking;
};

// The memory a client holds, as Redis 7.2 counts it for CLIENT LIST's tot-mem, INFO's
// mem_clients_normal and maxmemory-clients: the query buffer, the replies (sent blocks kept and
// unsent), the client itself, its MULTI queue, and the overhead of its watched keys,
// subscriptions and tracking prefixes.
size_t ClientMemory(const Client& client);
// maxmemory-clients groups clients by their memory in buckets of powers of two, as Redis 7.2
// does (server/client_eviction.cc): the bucket of a client holding memory bytes, the number of
// buckets, and the least memory of a bucket's clients.
size_t ClientMemoryBucket(size_t memory);
size_t ClientMemoryBucketCount();
size_t ClientMemoryBucketFloor(size_t bucket);

// One client as CLIENT LIST and CLIENT INFO describe it (and Redis's log and ACL LOG name a
// client).
std::string ClientInfoLine(const Client& client, int64_t now_ms);

}  // namespace goblin
