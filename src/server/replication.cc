#include "server/replication.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/ascii.h"
#include "persist/aof_log.h"
#include "persist/file_util.h"
#include "server/failover.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/server.h"

namespace goblin {

namespace {

constexpr std::string_view kNoReplicationId = "0000000000000000000000000000000000000000";
// Redis's CONFIG_REPL_BACKLOG_MIN_SIZE: a smaller repl-backlog-size is raised to it.
constexpr int64_t kMinBacklogSize = 16 * 1024;
// sendfile() chunk of a snapshot.
constexpr size_t kBulkChunk = size_t{1} << 20;
// A diskless sync's relay: the pipe's size, the bytes read at a time, and the chunks relayed
// before other clients get their turn.
constexpr int kRelayPipeSize = 1 << 20;
constexpr size_t kRelayChunk = 256 * 1024;
constexpr int kRelayChunksPerRound = 16;

// The peer's IP: the address without its port.
std::string PeerIp(const Client& client) {
  const size_t colon = client.address.rfind(':');
  return colon == std::string::npos ? client.address : client.address.substr(0, colon);
}

// Writes to client's connection. A client no socket backs (a test's) fails as a write to a closed
// descriptor does.
ssize_t WriteTo(Client& client, const char* data, size_t size) {
  if (client.connection == nullptr) {
    errno = EBADF;
    return -1;
  }
  return client.connection->Write(data, size);
}

}  // namespace

Replication::Replication(Server& server) : server_(server), replid2_(kNoReplicationId) {
  no_replicas_since_ms_ = server.NowMs();
}

// The server outlives no client: it closes the replicas' snapshot files with their sockets.
Replication::~Replication() = default;

std::vector<Client*> Replication::Replicas() const {
  std::vector<Client*> out;
  for (uint64_t id : replicas_) {
    if (Client* client = server_.FindClient(id)) out.push_back(client);
  }
  return out;
}

size_t Replication::ReplicaBufferBytes() const {
  size_t bytes = 0;
  for (Client* client : Replicas()) bytes += client->input.capacity() + client->output.allocated();
  return bytes;
}

size_t Replication::ReplicaOutputBytes() const {
  size_t bytes = 0;
  for (Client* client : Replicas()) bytes += client->output.allocated();
  return bytes;
}

std::string Replication::ReplicaIp(const Client& client) {
  return client.replica.ip_address.empty() ? PeerIp(client) : client.replica.ip_address;
}

std::string_view Replication::StateName(ReplicaState state) {
  switch (state) {
    case ReplicaState::kWaitBgsaveStart:
    case ReplicaState::kWaitBgsaveEnd:
      return "wait_bgsave";
    case ReplicaState::kSendBulk:
      return "send_bulk";
    case ReplicaState::kOnline:
      return "online";
    case ReplicaState::kNone:
      break;
  }
  return "";
}

std::string Replication::Name(const Client& client) const {
  const int64_t port = client.replica.listening_port;
  return ReplicaIp(client) + ":" +
         (port != 0 ? std::to_string(port) : std::string("<unknown-replica-port>"));
}

// ---- The stream ------------------------------------------------------------------------------

void Replication::CreateBacklog(bool new_id) {
  if (new_id) {
    server_.replication_id = server_.RandomHexId();
    replid2_ = kNoReplicationId;
    second_offset_ = -1;
  }
  if (!backlog_) server_.effects.AddConsumer(this);
  backlog_ = std::make_unique<ReplBacklog>(
      static_cast<size_t>(std::max(server_.config.repl_backlog_size, kMinBacklogSize)),
      offset_ + 1);
  LogNotice("Replication backlog created, my new replication IDs are '" + server_.replication_id +
            "' and '" + replid2_ + "'");
}

void Replication::ShiftReplicationId(std::string id) {
  replid2_ = std::move(server_.replication_id);
  second_offset_ = static_cast<int64_t>(offset_ + 1);
  server_.replication_id = std::move(id);
  LogNotice("Setting secondary replication ID to " + replid2_ + ", valid up to offset: " +
            std::to_string(second_offset_) + ". New replication ID is " + server_.replication_id);
}

void Replication::FeedFromMaster(std::string_view bytes) {
  if (!backlog_) CreateBacklog(/*new_id=*/false);
  Feed(bytes);
}

void Replication::AttachToMaster(std::string_view replid, uint64_t offset) {
  DropReplicas();
  server_.replication_id = replid;
  replid2_ = kNoReplicationId;
  second_offset_ = -1;
  offset_ = offset;
  CreateBacklog(/*new_id=*/false);
}

void Replication::RestoreHistory(std::string_view replid, uint64_t offset) {
  server_.replication_id = replid;
  replid2_ = kNoReplicationId;
  second_offset_ = -1;
  offset_ = offset;
}

void Replication::ContinueSavedHistory(std::string_view replid, uint64_t offset,
                                       const std::vector<std::pair<int, std::string>>& expired) {
  offset_ = offset;
  CreateBacklog(/*new_id=*/true);
  replid2_ = replid;
  second_offset_ = static_cast<int64_t>(offset + 1);
  no_replicas_since_ms_ = server_.NowMs();
  LogNotice("Continuing the replication history " + replid2_ + " up to offset " +
            std::to_string(second_offset_) + " under the new ID " + server_.replication_id);
  // The keys that expired while the server was down were deleted as it loaded: as in Redis,
  // their deletions come first in the history, so that the replicas that continue drop them.
  const std::string_view del = server_.config.lazyfree.expire ? "UNLINK" : "DEL";
  std::string bytes;
  for (const auto& [db, key] : expired) {
    if (db != selected_db_) {
      const std::string db_text = std::to_string(db);
      const std::string_view select[] = {"SELECT", db_text};
      AppendRespCommand(&bytes, select);
      selected_db_ = db;
    }
    const std::string_view argv[] = {del, key};
    AppendRespCommand(&bytes, argv);
  }
  if (!bytes.empty()) Feed(bytes);
}

void Replication::ChangeMasterId(std::string_view replid) {
  ShiftReplicationId(std::string(replid));
  DropReplicas();
}

void Replication::Promote() {
  ShiftReplicationId(server_.RandomHexId());
  DropReplicas();
  // The next command from here on names its database.
  selected_db_ = -1;
  no_replicas_since_ms_ = server_.NowMs();
}

void Replication::DropReplicas() {
  for (Client* client : Replicas()) Drop(*client);
}

void Replication::FreeBacklog() {
  server_.replication_id = server_.RandomHexId();
  replid2_ = kNoReplicationId;
  second_offset_ = -1;
  backlog_.reset();
  server_.effects.RemoveConsumer(this);
  LogNotice("Replication backlog freed after " + std::to_string(server_.config.repl_backlog_ttl) +
            " seconds without connected replicas.");
}

void Replication::ResizeBacklog() {
  server_.config.repl_backlog_size = std::max(server_.config.repl_backlog_size, kMinBacklogSize);
  if (backlog_) backlog_->Resize(static_cast<size_t>(server_.config.repl_backlog_size));
}

void Replication::ConsumeEffects(std::span<const Effect> effects) {
  // A replica's own writes (replica-read-only no) stay local; its stream is its master's. What
  // DEBUG LOADAOF replays is not sent either, as Redis sends it nowhere.
  if (!backlog_ || server_.master_link->is_replica() || server_.persistence->replaying()) return;
  std::string& bytes = unit_bytes_;
  std::vector<std::string_view>& argv = unit_argv_;
  bytes.clear();
  for (const Effect& effect : effects) {
    if (!(effect.targets & kToReplicas)) continue;  // a script's REPL_AOF write
    if (effect.db != selected_db_) {
      const std::string db_text = std::to_string(effect.db);
      const std::string_view select[] = {"SELECT", db_text};
      AppendRespCommand(&bytes, select);
      selected_db_ = effect.db;
    }
    argv.assign(effect.argv.begin(), effect.argv.end());
    AppendRespCommand(&bytes, argv);
  }
  if (!bytes.empty()) Feed(bytes);
}

void Replication::FeedCommand(std::span<const std::string_view> argv) {
  if (!backlog_ || server_.master_link->is_replica()) return;
  std::string bytes;
  AppendRespCommand(&bytes, argv);
  Feed(bytes);
}

void Replication::Feed(std::string_view bytes) {
  backlog_->Append(bytes);
  offset_ += bytes.size();
  for (uint64_t id : replicas_) {
    Client* client = server_.FindClient(id);
    if (client == nullptr || client->close_after_reply) continue;
    const ReplicaState state = client->replica.state;
    if (state == ReplicaState::kWaitBgsaveStart || client->replica.rdb_only) continue;
    client->output.append(bytes);
    // A replica still syncing holds the stream, but its output-buffer limit is checked.
    server_.QueueWrite(*client);
  }
}

// ---- Synchronization -------------------------------------------------------------------------

void Replication::Sync(Client& client, bool psync, std::string_view replid, int64_t offset) {
  if (client.is_replica()) return;
  if (client.pending_output() > 0) {
    client.reply.Error("ERR SYNC and PSYNC are invalid with pending output");
    return;
  }
  // A replica hands on its master's stream: there is none to hand on without the link.
  if (server_.master_link->is_replica() && !server_.master_link->connected()) {
    client.reply.Error("NOMASTERLINK Can't SYNC while not connected with my master");
    return;
  }
  LogNotice("Replica " + Name(client) + " asks for synchronization");
  // From here on the link carries the stream; replies to the replica are set aside.
  client.reply.set_buffer(&client.discarded_replies);
  if (psync) {
    if (TryPartialResync(client, replid, offset)) {
      ++stats_.sync_partial_ok;
      return;
    }
    if (replid != "?") ++stats_.sync_partial_err;
  } else {
    client.replica.pre_psync = true;
  }
  ++stats_.sync_full;
  client.replica.state = ReplicaState::kWaitBgsaveStart;
  client.replica.sync_request_ms = server_.NowMs();
  replicas_.push_back(client.id);
  if (!backlog_) CreateBacklog(/*new_id=*/!server_.master_link->is_replica());
  if (client.replica.filtered) {
    SendFilteredSnapshot(client);
    return;
  }
  Persistence& persistence = *server_.persistence;
  if (persistence.replication_child_running() && relay_active_) {
    LogNotice("Current BGSAVE has socket target. Waiting for next BGSAVE for SYNC");
    return;
  }
  if (persistence.replication_child_running()) {
    // Share the running snapshot when it can read its format: the stream after its fork is
    // what another waiting replica holds.
    for (Client* other : Replicas()) {
      if (other == &client || other->close_after_reply ||
          other->replica.state != ReplicaState::kWaitBgsaveEnd || other->replica.rdb_only ||
          other->replica.filtered || (snapshot_goblin_ && !client.replica.goblin_snapshot)) {
        continue;
      }
      client.output.clear();
      client.output.append(other->output);
      if (SetupFullResync(client, other->replica.initial_offset)) {
        LogNotice("Waiting for end of BGSAVE for SYNC");
      }
      return;
    }
    LogNotice("Can't attach the replica to the current BGSAVE. Waiting for next BGSAVE for SYNC");
    return;
  }
  const Config& config = server_.config;
  if (config.repl_diskless_sync && client.replica.eof && config.repl_diskless_sync_delay > 0) {
    LogNotice("Delay next BGSAVE for diskless SYNC");
    return;
  }
  if (persistence.child_running()) {
    LogNotice(
        "No BGSAVE in progress, but another BG operation is active. BGSAVE for replication "
        "delayed");
    return;
  }
  StartSnapshot();
}

bool Replication::TryPartialResync(Client& client, std::string_view replid, int64_t offset) {
  const std::string& id = server_.replication_id;
  // The previous history (replid2) is ours up to second_offset_: a sibling of the master this
  // server followed continues from here.
  const bool previous = EqualsIgnoreCase(replid, replid2_) && replid2_ != kNoReplicationId;
  if (!EqualsIgnoreCase(replid, id) && !previous) {
    if (replid != "?") {
      LogNotice(
          "Partial resynchronization not accepted: Replication ID mismatch (Replica asked "
          "for '" +
          std::string(replid) + "', my replication IDs are '" + id + "' and '" + replid2_ + "')");
    } else {
      LogNotice("Full resync requested by replica " + Name(client));
    }
    return false;
  }
  if (!EqualsIgnoreCase(replid, id) && offset > second_offset_) {
    LogNotice("Partial resynchronization not accepted: Requested offset for second ID was " +
              std::to_string(offset) + ", but I can reply up to " + std::to_string(second_offset_));
    return false;
  }
  if (!backlog_ || offset < 0 || !backlog_->Holds(static_cast<uint64_t>(offset))) {
    LogNotice("Unable to partial resync with replica " + Name(client) +
              " for lack of backlog (Replica request was: " + std::to_string(offset) + ").");
    if (offset > static_cast<int64_t>(offset_)) {
      LogWarning("Warning: replica " + Name(client) +
                 " tried to PSYNC with an offset that is greater than the master replication "
                 "offset.");
    }
    return false;
  }
  ReplicaLink& link = client.replica;
  link.state = ReplicaState::kOnline;
  link.ack_time_ms = server_.NowMs();
  replicas_.push_back(client.id);
  client.output.append(link.psync2 ? "+CONTINUE " + id + "\r\n" : std::string("+CONTINUE\r\n"));
  // In slices, so that a large backlog is not held twice.
  constexpr size_t kSlice = 1 << 20;
  size_t sent = 0;
  std::string slice;
  for (uint64_t at = static_cast<uint64_t>(offset); at < backlog_->end_offset();
       at += slice.size()) {
    slice.clear();
    sent += backlog_->CopyFrom(at, kSlice, &slice);
    client.output.append(slice);
  }
  server_.QueueWrite(client);
  LogNotice("Partial resynchronization request from " + Name(client) + " accepted. Sending " +
            std::to_string(sent) + " bytes of backlog starting from offset " +
            std::to_string(offset) + ".");
  return true;
}

void Replication::MaybeStartSnapshot(int64_t now_ms) {
  int64_t waiting = 0;
  int64_t longest_wait_ms = 0;
  for (Client* client : Replicas()) {
    if (client->replica.state != ReplicaState::kWaitBgsaveStart) continue;
    ++waiting;
    longest_wait_ms = std::max(longest_wait_ms, now_ms - client->replica.sync_request_ms);
  }
  if (waiting == 0) return;
  const Config& config = server_.config;
  if (!config.repl_diskless_sync || longest_wait_ms >= config.repl_diskless_sync_delay * 1000 ||
      (config.repl_diskless_sync_max_replicas > 0 &&
       waiting >= config.repl_diskless_sync_max_replicas)) {
    StartSnapshot();
  }
}

void Replication::StartSnapshot() {
  bool eof = true;
  bool goblin = true;
  for (Client* client : Replicas()) {
    if (client->replica.state != ReplicaState::kWaitBgsaveStart) continue;
    eof = eof && client->replica.eof;
    goblin = goblin && client->replica.goblin_snapshot;
  }
  const bool diskless = server_.config.repl_diskless_sync && eof;
  SyncSnapshotTarget target;
  target.goblin = goblin;
  std::string error;
  int pipe_fds[2] = {-1, -1};
  if (diskless) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
      error = std::string("pipe: ") + std::strerror(errno);
    } else {
      fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
      fcntl(pipe_fds[1], F_SETPIPE_SZ, kRelayPipeSize);  // a hint: a smaller pipe works too
      target.fd = pipe_fds[1];
    }
  } else {
    target.path = JoinPath(server_.config.dir, "temp-repl-" + std::to_string(server_.pid) + ".rdb");
  }
  LogNotice(std::string("Starting BGSAVE for SYNC with target: ") +
            (diskless ? "replicas sockets" : "disk") + (goblin ? " (Goblin snapshot format)" : ""));
  const bool started =
      error.empty() && server_.persistence->StartReplicationSnapshot(target, &error);
  // The child holds the write end; the pipe ends when it exits.
  if (pipe_fds[1] >= 0) close(pipe_fds[1]);
  if (!started && pipe_fds[0] >= 0) close(pipe_fds[0]);
  if (!started) LogWarning("BGSAVE for replication failed: " + error);
  snapshot_goblin_ = goblin;
  for (Client* client : Replicas()) {
    if (client->replica.state != ReplicaState::kWaitBgsaveStart) continue;
    if (!started) {
      // Redis tells the replica before it closes the link.
      client->reply.set_buffer(&client->output);
      client->reply.Error("ERR BGSAVE failed, replication can't continue");
      std::erase(replicas_, client->id);
      client->replica.state = ReplicaState::kNone;
      client->close_after_reply = true;
      server_.QueueWrite(*client);
      continue;
    }
    if (SetupFullResync(*client, offset_)) client->replica.relayed = diskless;
  }
  if (started && diskless) StartRelay(pipe_fds[0]);
}

// ---- The diskless relay ----------------------------------------------------------------------

void Replication::StartRelay(int fd) {
  relay_active_ = true;
  relay_ = std::make_unique<net::PlainConnection>(fd);
  relay_eof_ = relay_child_done_ = relay_child_ok_ = relay_final_ = false;
  eof_mark_ = server_.RandomHexId();
  // The first chunk is the header; the snapshot follows as the child writes it.
  relay_chunk_ = "$EOF:" + eof_mark_ + "\r\n";
  Distribute();
  if (relay_pending_ == 0) PumpRelay();
}

void Replication::Distribute() {
  relay_pending_ = 0;
  for (Client* client : Replicas()) {
    ReplicaLink& link = client->replica;
    if (!link.relayed || client->close_after_reply) continue;
    link.relay_sent = 0;
    link.relay_writing = true;
    if (!WriteRelay(*client)) ++relay_pending_;
  }
}

bool Replication::WriteRelay(Client& client) {
  ReplicaLink& link = client.replica;
  while (link.relay_sent < relay_chunk_.size()) {
    const ssize_t n = WriteTo(client, relay_chunk_.data() + link.relay_sent,
                              relay_chunk_.size() - link.relay_sent);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (link.relay_stalled_ms == 0) link.relay_stalled_ms = server_.NowMs();
      server_.QueueWrite(client);  // the write handler takes it from here
      return false;
    }
    if (n <= 0) {
      LogWarning("Diskless rdb transfer, write error sending DB to replica: " +
                 std::string(std::strerror(errno)));
      link.relayed = link.relay_writing = false;
      Drop(client);
      return true;
    }
    server_.stats.net_repl_output_bytes += static_cast<uint64_t>(n);
    link.relay_sent += static_cast<size_t>(n);
    link.relay_stalled_ms = 0;
  }
  link.relay_writing = false;
  if (relay_final_) {
    link.relayed = false;
    link.stream_on_ack = true;
    if (!link.rdb_only) {
      LogNotice("Streamed RDB transfer with replica " + Name(client) +
                " succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming");
    }
    PutOnline(client);
  }
  return true;
}

void Replication::PumpRelay() {
  if (!relay_active_ || relay_pending_ > 0) return;
  if (relay_final_) {
    // Every replica of the round has the end mark.
    relay_active_ = relay_final_ = false;
    relay_chunk_ = std::string();
    return;
  }
  for (int round = 0; round < kRelayChunksPerRound && relay_pending_ == 0; ++round) {
    relay_chunk_.resize(kRelayChunk);
    const ssize_t n = relay_->Read(relay_chunk_.data(), kRelayChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      if (n < 0)
        LogWarning("Diskless rdb transfer, read error: " + std::string(std::strerror(errno)));
      relay_eof_ = true;
      WatchRelay(false);
      if (n < 0) {
        FinishRelay(false);
        server_.persistence->StopReplicationChild();
      } else if (!relay_child_done_) {
        server_.persistence->WaitReplicationChild();  // reports through SnapshotDone
      } else {
        FinishRelay(relay_child_ok_);
      }
      return;
    }
    relay_chunk_.resize(static_cast<size_t>(n));
    Distribute();
  }
  // The pipe is read again once every replica took the chunk.
  WatchRelay(relay_pending_ == 0);
}

void Replication::FinishRelay(bool ok) {
  WatchRelay(false);
  relay_.reset();
  if (!ok) {
    for (Client* client : Replicas()) {
      if (!client->replica.relayed) continue;
      client->replica.relayed = client->replica.relay_writing = false;
      Drop(*client);
    }
    relay_active_ = false;
    relay_pending_ = 0;
    relay_chunk_ = std::string();
    return;
  }
  relay_final_ = true;
  relay_chunk_ = eof_mark_;
  Distribute();
  PumpRelay();
}

void Replication::ServiceRelay() {
  bool replicas_left = false;
  for (Client* client : Replicas()) {
    replicas_left = replicas_left || (client->replica.relayed && !client->close_after_reply);
  }
  if (!replicas_left && !relay_final_) {
    LogWarning("Diskless rdb transfer, last replica dropped, killing fork child.");
    // Reports through SnapshotDone, which ends the relay; a child already gone ends it here.
    server_.persistence->StopReplicationChild();
    if (relay_active_) FinishRelay(false);
    return;
  }
  PumpRelay();
}

void Replication::WatchRelay(bool watch) {
  if (relay_ == nullptr || watch == relay_watched_) return;
  relay_watched_ = watch;
  if (watch) {
    relay_->Watch(server_.event_loop, this, /*writable=*/false);
  } else {
    relay_->Unwatch();
  }
}

bool Replication::SetupFullResync(Client& client, uint64_t offset) {
  client.replica.initial_offset = offset;
  client.replica.state = ReplicaState::kWaitBgsaveEnd;
  // The stream held from here on starts with a SELECT.
  selected_db_ = -1;
  if (client.replica.pre_psync) return true;
  const std::string line =
      "+FULLRESYNC " + server_.replication_id + " " + std::to_string(offset) + "\r\n";
  if (!WriteNow(client, line)) {
    Drop(client);
    return false;
  }
  return true;
}

void Replication::SnapshotDone(bool ok, const std::string& path) {
  if (relay_active_) {
    relay_child_done_ = true;
    relay_child_ok_ = ok;
    // The relay ends once the pipe is drained too (a failure needs no more of it).
    if (!ok) LogWarning("Diskless rdb transfer failed: the child returned an error");
    if (!ok || relay_eof_) FinishRelay(ok);
    return;
  }
  if (!ok) LogWarning("SYNC failed. BGSAVE child returned an error");
  for (Client* client : Replicas()) {
    ReplicaLink& link = client->replica;
    if (link.state != ReplicaState::kWaitBgsaveEnd) continue;
    if (!ok || link.filtered) {
      if (!ok) Drop(*client);
      continue;
    }
    StartBulk(*client, path);
  }
  // The replicas that opened the file keep reading it; nobody else needs it.
  if (!path.empty()) unlink(path.c_str());
}

bool Replication::StartBulk(Client& client, const std::string& path) {
  ReplicaLink& link = client.replica;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    LogWarning(std::string("SYNC failed. Can't open/stat DB after BGSAVE: ") +
               std::strerror(errno));
    if (fd >= 0) close(fd);
    Drop(client);
    return false;
  }
  link.rdb_fd = fd;
  link.rdb_sent = 0;
  link.rdb_size = static_cast<uint64_t>(st.st_size);
  link.preamble = "$" + std::to_string(link.rdb_size) + "\r\n";
  link.state = ReplicaState::kSendBulk;
  server_.QueueWrite(client);
  return true;
}

void Replication::SendFilteredSnapshot(Client& client) {
  if (!SetupFullResync(client, offset_)) return;
  const std::string path =
      JoinPath(server_.config.dir, "temp-repl-" + std::to_string(server_.pid) + "-" +
                                       std::to_string(client.id) + ".rdb");
  std::string error;
  if (!server_.persistence->WriteFilteredRdb(path, client.replica.filtered_functions, &error)) {
    LogWarning("SYNC failed: " + error);
    Drop(client);
    return;
  }
  StartBulk(client, path);
  unlink(path.c_str());
}

bool Replication::SendBulk(Client& client) {
  ReplicaLink& link = client.replica;
  if (link.state == ReplicaState::kOnline) return !link.stream_on_ack;
  if (link.relay_writing && !client.close_after_reply && WriteRelay(client)) {
    if (--relay_pending_ == 0) PumpRelay();
  }
  if (link.state != ReplicaState::kSendBulk || client.close_after_reply) return false;
  while (!link.preamble.empty()) {
    const ssize_t n = WriteTo(client, link.preamble.data(), link.preamble.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return false;
    if (n <= 0) {
      LogWarning("Write error sending DB to replica: " + std::string(std::strerror(errno)));
      Drop(client);
      return false;
    }
    server_.stats.net_repl_output_bytes += static_cast<uint64_t>(n);
    link.preamble.erase(0, static_cast<size_t>(n));
  }
  while (link.rdb_sent < link.rdb_size) {
    off_t at = static_cast<off_t>(link.rdb_sent);
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(kBulkChunk, link.rdb_size - link.rdb_sent));
    const ssize_t n = net::SendFileChunk(*client.connection, link.rdb_fd, &at, want, &bulk_buffer_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return false;
    if (n <= 0) {
      LogWarning("Write error sending DB to replica: " +
                 std::string(n == 0 ? "premature end of the file" : std::strerror(errno)));
      Drop(client);
      return false;
    }
    server_.stats.net_repl_output_bytes += static_cast<uint64_t>(n);
    link.rdb_sent += static_cast<uint64_t>(n);
  }
  close(link.rdb_fd);
  link.rdb_fd = -1;
  PutOnline(client);
  return link.state == ReplicaState::kOnline && !client.close_after_reply;
}

void Replication::PutOnline(Client& client) {
  if (client.replica.rdb_only) {
    LogNotice("RDB transfer completed, rdb only replica (" + Name(client) +
              ") should be disconnected asap");
    Drop(client);
    return;
  }
  client.replica.state = ReplicaState::kOnline;
  client.replica.ack_time_ms = server_.NowMs();
  LogNotice("Synchronization with replica " + Name(client) + " succeeded");
}

bool Replication::WriteNow(Client& client, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = WriteTo(client, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    server_.stats.net_repl_output_bytes += static_cast<uint64_t>(n);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void Replication::Drop(Client& client) { server_.CloseClientSoon(client); }

void Replication::RemoveReplica(Client& client) {
  if (!client.is_replica()) return;
  if (client.replica.rdb_fd >= 0) close(client.replica.rdb_fd);
  client.replica.rdb_fd = -1;
  if (client.replica.state == ReplicaState::kOnline) {
    LogNotice("Connection with replica " + Name(client) + " lost.");
  }
  // A relay goes on without it (BeforeSleep resumes or stops it).
  if (client.replica.relay_writing) --relay_pending_;
  client.replica.relayed = client.replica.relay_writing = false;
  client.replica.state = ReplicaState::kNone;
  std::erase(replicas_, client.id);
  if (replicas_.empty()) no_replicas_since_ms_ = server_.NowMs();
}

// ---- Acknowledgements and WAIT ---------------------------------------------------------------

void Replication::Acknowledge(Client& client, uint64_t offset) {
  if (!client.is_replica()) return;
  client.replica.ack_offset = std::max(client.replica.ack_offset, offset);
  client.replica.ack_time_ms = server_.NowMs();
  acks_arrived_ = true;
  if (client.replica.stream_on_ack) {
    // The snapshot is loaded: the stream held since the fork follows.
    client.replica.stream_on_ack = false;
    server_.QueueWrite(client);
  }
}

int64_t Replication::CountAcknowledged(uint64_t offset) const {
  int64_t count = 0;
  for (Client* client : Replicas()) {
    if (client->replica.state == ReplicaState::kOnline && client->replica.ack_offset >= offset) {
      ++count;
    }
  }
  return count;
}

bool Replication::AllAcknowledged() const {
  for (const Client* client : Replicas()) {
    if (client->replica.ack_offset != offset_) return false;
  }
  return true;
}

void Replication::RequestAcks() {
  if (!replicas_.empty() && !server_.paused()) FeedCommand({"REPLCONF", "GETACK", "*"});
}

void Replication::LogLaggingReplicas() const {
  const std::vector<Client*> replicas = Replicas();
  size_t lagging = 0;
  const int64_t now_ms = server_.NowMs();
  for (const Client* client : replicas) {
    const ReplicaLink& link = client->replica;
    if (link.ack_offset == offset_) continue;
    ++lagging;
    const int64_t lag =
        link.state == ReplicaState::kOnline ? (now_ms - link.ack_time_ms) / 1000 : 0;
    LogNotice("Lagging replica " + Name(*client) + " reported offset " +
              std::to_string(offset_ - link.ack_offset) + " behind master, lag=" +
              std::to_string(lag) + ", state=" + std::string(StateName(link.state)) + ".");
  }
  if (!replicas.empty()) {
    LogNotice(std::to_string(replicas.size() - lagging) + " of " + std::to_string(replicas.size()) +
              " replicas are in sync when shutting down.");
  }
}

void Replication::AddWaiter(Client& client) {
  waiters_.push_back(client.id);
  ack_requested_ = true;
}

void Replication::BeforeSleep() {
  if (relay_active_) ServiceRelay();
  if (ack_requested_ && !server_.paused()) {
    ack_requested_ = false;
    FeedCommand({"REPLCONF", "GETACK", "*"});
  }
  if (!acks_arrived_ || waiters_.empty()) return;
  acks_arrived_ = false;
  const std::vector<uint64_t> waiting = std::move(waiters_);
  waiters_.clear();
  for (uint64_t id : waiting) {
    Client* client = server_.FindClient(id);
    if (client == nullptr || !client->blocked || !client->block.waits_for_replicas) continue;
    const int64_t acknowledged = CountAcknowledged(client->block.replica_offset);
    if (acknowledged >= client->block.replicas) {
      server_.ReleaseWait(*client, acknowledged);
    } else {
      waiters_.push_back(id);
    }
  }
}

bool Replication::EnoughGoodReplicas(int64_t now_ms) const {
  const Config& config = server_.config;
  if (config.min_replicas_to_write == 0 || config.min_replicas_max_lag == 0) return true;
  // A replica takes writes from its master only, which counted the master's own replicas.
  if (server_.master_link->is_replica()) return true;
  return GoodReplicas(now_ms) >= config.min_replicas_to_write;
}

int64_t Replication::GoodReplicas(int64_t now_ms) const {
  int64_t good = 0;
  for (Client* client : Replicas()) {
    if (client->replica.state == ReplicaState::kOnline &&
        now_ms / 1000 - client->replica.ack_time_ms / 1000 <= server_.config.min_replicas_max_lag) {
      ++good;
    }
  }
  return good;
}

// ---- Periodic work ---------------------------------------------------------------------------

void Replication::Tick(int64_t now_ms) {
  if (!server_.persistence->child_running()) MaybeStartSnapshot(now_ms);
  if (now_ms - last_cron_ms_ >= 1000) {
    last_cron_ms_ = now_ms;
    Cron(now_ms);
  }
}

void Replication::Cron(int64_t now_ms) {
  const Config& config = server_.config;
  if (!replicas_.empty() && !server_.failover->holds_pings() &&
      cron_loops_ % static_cast<uint64_t>(config.repl_ping_replica_period) == 0) {
    FeedCommand({"PING"});
  }
  ++cron_loops_;
  for (Client* client : Replicas()) {
    ReplicaLink& link = client->replica;
    if (client->close_after_reply) continue;
    if (link.relayed) {
      if (link.relay_stalled_ms != 0 &&
          (now_ms - link.relay_stalled_ms) / 1000 > config.repl_timeout) {
        LogWarning("Disconnecting timedout replica (full sync): " + Name(*client));
        Drop(*client);
      }
      continue;
    }
    if (link.state == ReplicaState::kWaitBgsaveStart ||
        link.state == ReplicaState::kWaitBgsaveEnd) {
      // Keeps the link alive while the snapshot is made; the replica skips newlines.
      if (!WriteNow(*client, "\n")) Drop(*client);
      continue;
    }
    if (link.state == ReplicaState::kOnline && !link.pre_psync &&
        (now_ms - link.ack_time_ms) / 1000 > config.repl_timeout) {
      LogWarning("Disconnecting timedout replica (streaming sync): " + Name(*client));
      Drop(*client);
    }
  }
  server_.master_link->Cron(now_ms);
  // A replica keeps its backlog: promoted, it serves its former siblings from it.
  if (replicas_.empty() && backlog_ && config.repl_backlog_ttl > 0 &&
      !server_.master_link->is_replica() &&
      (now_ms - no_replicas_since_ms_) / 1000 > config.repl_backlog_ttl) {
    FreeBacklog();
  }
}

}  // namespace goblin
