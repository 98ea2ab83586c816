#include "server/master_link.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>

#include "core/ascii.h"
#include "net/sockets.h"
#include "persist/aof_log.h"
#include "persist/file_util.h"
#include "resp/sync_transfer.h"
#include "server/failover.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

namespace {

constexpr size_t kReadChunk = 64 * 1024;
// A handshake reply longer than this is not Redis's protocol.
constexpr size_t kMaxLine = 64 * 1024;

// Pops one line (up to "\n", without "\r\n") from the front of buffer; false while incomplete.
bool PopLine(std::string* buffer, std::string* line) {
  const size_t end = buffer->find('\n');
  if (end == std::string::npos) return false;
  size_t length = end;
  if (length > 0 && (*buffer)[length - 1] == '\r') --length;
  line->assign(*buffer, 0, length);
  buffer->erase(0, end + 1);
  return true;
}

}  // namespace

MasterLink::MasterLink(Server& server) : server_(server) {
  // Redis's role letter follows the configuration from the start, before any connection.
  SetLogReplica(!server.config.replicaof.host.empty());
}

MasterLink::~MasterLink() {
  if (temp_fd_ >= 0) close(temp_fd_);
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
}

std::string_view MasterLink::RoleState() const {
  switch (state_) {
    case State::kNone:
      return "none";
    case State::kConnect:
      return "connect";
    case State::kConnecting:
      return "connecting";
    case State::kHandshake:
      return "handshake";
    case State::kTransfer:
      return "sync";
    case State::kConnected:
      return "connected";
  }
  return "unknown";
}

uint64_t MasterLink::applied_offset() const {
  const bool history = master_client_id_ != 0 || has_history_;
  return history ? server_.replication->offset() : 0;
}

uint64_t MasterLink::read_offset() const {
  const Client* client = server_.FindClient(master_client_id_);
  return applied_offset() + (client == nullptr ? 0 : client->input.size());
}

int64_t MasterLink::last_io_seconds_ago(int64_t now_ms) const {
  if (state_ != State::kConnected) return -1;
  const Client* client = server_.FindClient(master_client_id_);
  return client == nullptr ? -1 : (now_ms - client->last_interaction_ms) / 1000;
}

int64_t MasterLink::down_since_seconds(int64_t now_ms) const {
  // Whole seconds of the clock on each side, as Redis subtracts its unixtime readings.
  return down_since_ms_ == 0 ? -1 : now_ms / 1000 - down_since_ms_ / 1000;
}

// ---- Who the master is -----------------------------------------------------------------------

int MasterLink::stream_db() const {
  const Client* client = server_.FindClient(master_client_id_);
  return client != nullptr ? client->db : stream_db_;
}

void MasterLink::Start() {
  master_ = server_.config.replicaof;
  const SavedReplication& saved = server_.persistence->loaded_replication();
  if (master_.host.empty()) {
    // A master's snapshot holds the history its replicas follow: they continue it.
    if (saved.present()) {
      server_.replication->ContinueSavedHistory(saved.replid, saved.offset,
                                                server_.persistence->TakeExpiredAtLoad());
    }
    server_.persistence->TakeExpiredAtLoad();  // nothing to continue: forgotten
    return;
  }
  // A snapshot saved by this replica holds the history its data is at: continue it.
  if (saved.present()) {
    server_.replication->RestoreHistory(saved.replid, saved.offset);
    has_history_ = true;
    stream_db_ = saved.stream_db;
    LogNotice(
        "Using the replication ID and offset the snapshot holds to continue with the "
        "master: " +
        saved.replid + ":" + std::to_string(saved.offset));
  }
  state_ = State::kConnect;
  LogNotice("Connecting to MASTER " + master_.host + ":" + std::to_string(master_.port));
}

void MasterLink::SetMaster(const ReplicaOf& master) {
  const bool was_master = !is_replica();
  if (Client* client = server_.FindClient(master_client_id_)) {
    stream_db_ = client->db;
    server_.CloseClientSoon(*client);
  }
  // A master turned replica: its new master's stream starts with a SELECT.
  if (was_master) stream_db_ = 0;
  master_client_id_ = 0;
  server_.config.replicaof = master;
  server_.UpdateOomScore();
  SetLogReplica(!master.host.empty());
  if (master.host.empty()) {
    if (was_master) return;
    master_ = {};
    Abort(State::kNone);
    down_since_ms_ = 0;
    server_.replication->Promote();
    return;
  }
  // Clients blocked on a master's data would wait for writes this server no longer takes.
  server_.UnblockAllClients(
      "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
      "replica?)");
  master_ = master;
  Abort(State::kConnect);
  // A master turned replica continues its own history with the new master if it can.
  if (was_master) has_history_ = true;
  LogNotice("Connecting to MASTER " + master_.host + ":" + std::to_string(master_.port));
  Connect();
}

// ---- Connecting and the handshake ------------------------------------------------------------

void MasterLink::Connect() {
  connect_start_ms_ = server_.NowMs();
  net::ConnectResult connected = net::ConnectTcp(master_.host, master_.port);
  if (connected.connection == nullptr) {
    LogWarning(connected.error == 0
                   ? "Unable to connect to MASTER: can't resolve " + master_.host
                   : std::string("Unable to connect to MASTER: ") + std::strerror(connected.error));
    return;
  }
  connection_ = std::move(connected.connection);
  state_ = State::kConnecting;
  inbox_.clear();
  connection_->Watch(server_.event_loop, this, /*writable=*/true);
  LogNotice("MASTER <-> REPLICA sync started");
}

void MasterLink::Abort(State next) {
  tls_handshake_ = nullptr;
  connection_.reset();
  if (temp_fd_ >= 0) close(temp_fd_);
  temp_fd_ = -1;
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
  temp_path_.clear();
  inbox_.clear();
  transfer_ = SyncTransfer();
  state_ = next;
}

void MasterLink::OnReady(uint32_t readiness) {
  if (state_ == State::kConnecting && tls_handshake_ != nullptr) {
    // The TLS connection reports once its handshake has ended, either way.
    if (tls_handshake_->failed()) {
      LogWarning("Unable to connect to MASTER: TLS handshake failed: " + tls_handshake_->error());
      Abort();
      return;
    }
    if (!tls_handshake_->handshake_done()) return;
    tls_handshake_ = nullptr;
    BeginHandshake();
    return;
  }
  if (state_ == State::kConnecting) {
    // An error or a hang-up reports as readable; ConnectError then says which.
    if (readiness & (net::kWritable | net::kReadable)) OnConnected();
    return;
  }
  if (state_ == State::kHandshake) {
    ReadHandshake();
  } else if (state_ == State::kTransfer) {
    ReadTransfer();
  }
}

void MasterLink::OnConnected() {
  const int error = connection_->ConnectError();
  if (error != 0) {
    LogWarning(std::string("Error condition on socket for SYNC: ") + std::strerror(error));
    Abort();
    return;
  }
  LogNotice("Non blocking connect for SYNC fired the event.");
  if (server_.config.tls.replication && server_.tls_context() != nullptr) {
    // tls-replication: the link speaks TLS; the replication handshake waits for TLS's.
    // (Connect made a plain connection: its descriptor moves into the TLS one.)
    const int fd = static_cast<net::PlainConnection*>(connection_.get())->Release();
    auto tls = std::make_unique<net::TlsConnection>(fd, server_.tls_context()->client(), false);
    tls_handshake_ = tls.get();
    connection_ = std::move(tls);
    connection_->Watch(server_.event_loop, this, /*writable=*/false);
    return;
  }
  BeginHandshake();
}

void MasterLink::BeginHandshake() {
  connection_->SetWritable(false);
  state_ = State::kHandshake;
  step_ = Step::kPong;
  if (!SendLine({"PING"})) Abort();
}

bool MasterLink::SendLine(std::initializer_list<std::string_view> argv) {
  std::string bytes;
  AppendRespCommand(&bytes, std::span<const std::string_view>(argv.begin(), argv.size()));
  std::string_view rest = bytes;
  // A handshake command is small: the socket buffer of a fresh connection takes it at once.
  while (!rest.empty()) {
    const ssize_t n = connection_->Write(rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      LogWarning(std::string("Error writing to MASTER: ") + std::strerror(errno));
      return false;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void MasterLink::SendHandshake() {
  const Config& config = server_.config;
  pending_replies_ = 0;
  auth_sent_ = !config.masterauth.empty();
  bool ok = true;
  if (auth_sent_) {
    ok = config.masteruser.empty() ? SendLine({"AUTH", config.masterauth})
                                   : SendLine({"AUTH", config.masteruser, config.masterauth});
    ++pending_replies_;
  }
  // Under tls-replication the replica is reached on its tls-port (Sentinel connects there).
  const int64_t own_port = config.tls.replication && config.tls.port != 0
                               ? config.tls.port
                               : static_cast<int64_t>(server_.tcp_port_bound);
  const std::string port =
      std::to_string(config.replica_announce_port != 0 ? config.replica_announce_port : own_port);
  ok = ok && SendLine({"REPLCONF", "listening-port", port});
  ++pending_replies_;
  if (!config.replica_announce_ip.empty()) {
    ok = ok && SendLine({"REPLCONF", "ip-address", config.replica_announce_ip});
    ++pending_replies_;
  }
  ok = ok && SendLine({"REPLCONF", "capa", "eof", "capa", "psync2", "capa", "goblin-snapshot"});
  ++pending_replies_;
  step_ = Step::kReplies;
  if (!ok) Abort();
}

void MasterLink::ReadHandshake() {
  char buffer[4096];
  const ssize_t n = connection_->Read(buffer, sizeof(buffer));
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    LogWarning("Master closed the connection during the handshake" +
               (n < 0 ? ": " + std::string(std::strerror(errno)) : std::string()));
    Abort();
    return;
  }
  if (n < 0) return;
  inbox_.append(buffer, static_cast<size_t>(n));
  std::string line;
  while (state_ == State::kHandshake && PopLine(&inbox_, &line)) {
    if (!HandleReply(line)) return;
  }
  if (state_ == State::kHandshake && inbox_.size() > kMaxLine) {
    LogWarning("Bad protocol from MASTER: a reply line longer than " + std::to_string(kMaxLine) +
               " bytes");
    Abort();
  }
}

bool MasterLink::HandleReply(const std::string& line) {
  switch (step_) {
    case Step::kPong:
      // A master that wants AUTH first answers PING with an error, which is fine here.
      if (!line.empty() && line[0] == '-' && !line.starts_with("-NOAUTH") &&
          !line.starts_with("-NOPERM") && !line.starts_with("-ERR operation not permitted")) {
        LogWarning("Error reply to PING from master: '" + line + "'");
        Abort();
        return false;
      }
      LogNotice("Master replied to PING, replication can continue...");
      SendHandshake();
      return state_ == State::kHandshake;
    case Step::kReplies: {
      const bool error = !line.empty() && line[0] == '-';
      if (auth_sent_) {
        auth_sent_ = false;
        --pending_replies_;
        if (error) {
          LogWarning("Unable to AUTH to MASTER: " + line);
          Abort();
          return false;
        }
      } else {
        --pending_replies_;
        if (error) LogNotice("(Non critical) Master does not understand REPLCONF: " + line);
      }
      if (pending_replies_ > 0) return true;
      const std::string offset = std::to_string(server_.replication->offset() + 1);
      step_ = Step::kPsync;
      std::string_view replid = "?", from = "-1";
      if (has_history_) {
        LogNotice("Trying a partial resynchronization (request " + server_.replication_id + ":" +
                  offset + ").");
        replid = server_.replication_id;
        from = offset;
      } else {
        LogNotice("Partial resynchronization not possible (no cached master)");
      }
      // A failing-over master asks its target to take over (failover.h).
      const bool sent = server_.failover->in_progress()
                            ? SendLine({"PSYNC", replid, from, "FAILOVER"})
                            : SendLine({"PSYNC", replid, from});
      if (!sent) {
        Abort();
        server_.failover->Abort("Write error to failover target");
      }
      return sent;
    }
    case Step::kPsync:
      if (line.empty()) return true;  // the master keeps the link alive before it answers
      return HandlePsyncReply(line);
  }
  return false;
}

bool MasterLink::HandlePsyncReply(const std::string& line) {
  // A failover's target accepted to take over (failover.h); another answer aborts it below.
  if (line.starts_with("+FULLRESYNC") || line.starts_with("+CONTINUE")) {
    server_.failover->PsyncAnswered(true);
  }
  if (line.starts_with("+FULLRESYNC")) {
    if (!ParseFullResync(line, &transfer_replid_, &transfer_offset_)) {
      LogWarning("Master replied with wrong +FULLRESYNC syntax: '" + line + "'");
      Abort();
      return false;
    }
    LogNotice("Full resync from master: " + transfer_replid_ + ":" +
              std::to_string(transfer_offset_));
  } else if (line.starts_with("+CONTINUE")) {
    const std::string id = line.size() > 10 ? line.substr(10) : std::string();
    LogNotice("Successful partial resynchronization with master.");
    if (IsReplicationId(id) && id != server_.replication_id) {
      LogNotice("Master replication ID changed to " + id);
      server_.replication->ChangeMasterId(id);
    }
    LogNotice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    BecomeConnected(std::move(inbox_));
    return false;
  } else if (line.starts_with("-NOMASTERLINK") || line.starts_with("-LOADING")) {
    LogNotice("Master is currently unable to PSYNC but should be in the future: " + line);
    Abort();
    server_.failover->PsyncAnswered(false);
    return false;
  } else if (line[0] == '-') {
    // Old masters know only SYNC: the snapshot follows it at once, without a replication id.
    LogWarning("Master does not support PSYNC or is in error state (reply: " + line + ")");
    if (server_.failover->in_progress()) {
      Abort();
      server_.failover->PsyncAnswered(false);
      return false;
    }
    if (!SendLine({"SYNC"})) {
      Abort();
      return false;
    }
    transfer_replid_ = server_.RandomHexId();
    transfer_offset_ = 0;
  } else {
    LogWarning("Unexpected reply to PSYNC from master: " + line);
    Abort();
    server_.failover->PsyncAnswered(false);
    return false;
  }
  // The snapshot comes next; what followed the line is its start.
  temp_path_ = TempPath();
  temp_fd_ = open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (temp_fd_ < 0) {
    LogWarning("Opening the temp file needed for MASTER <-> REPLICA synchronization: " +
               std::string(std::strerror(errno)));
    temp_path_.clear();
    Abort();
    return false;
  }
  state_ = State::kTransfer;
  transfer_last_io_ms_ = server_.NowMs();
  if (!inbox_.empty()) {
    std::string pending = std::move(inbox_);
    inbox_.clear();
    size_t used = 0;
    if (ConsumeTransfer(pending, &used) && state_ == State::kTransfer) {
      inbox_ = pending.substr(used);
    }
  }
  return false;
}

std::string MasterLink::TempPath() const {
  return JoinPath(server_.config.dir, "temp-" + std::to_string(server_.NowMs() / 1000) + "." +
                                          std::to_string(server_.pid) + ".rdb");
}

// ---- The snapshot ----------------------------------------------------------------------------

void MasterLink::ReadTransfer() {
  std::string chunk(kReadChunk, '\0');
  const ssize_t n = connection_->Read(chunk.data(), chunk.size());
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
    LogWarning("I/O error trying to sync with MASTER: " +
               std::string(n == 0 ? "connection lost" : std::strerror(errno)));
    Abort();
    return;
  }
  if (n < 0) return;
  chunk.resize(static_cast<size_t>(n));
  transfer_last_io_ms_ = server_.NowMs();
  size_t used = 0;
  if (!inbox_.empty()) {
    inbox_.append(chunk);
    chunk = std::move(inbox_);
    inbox_.clear();
  }
  if (ConsumeTransfer(chunk, &used) && state_ == State::kTransfer) inbox_ = chunk.substr(used);
}

bool MasterLink::ConsumeTransfer(std::string_view data, size_t* used) {
  const bool had_header = transfer_.header_read();
  std::string_view payload;
  std::string error;
  const SyncTransfer::Status status = transfer_.Consume(data, &payload, used, &error);
  if (status == SyncTransfer::Status::kError) {
    LogWarning(error);
    Abort();
    return false;
  }
  if (!had_header && transfer_.header_read()) {
    LogNotice(transfer_.diskless()
                  ? "MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk"
                  : "MASTER <-> REPLICA sync: receiving " + std::to_string(transfer_.size()) +
                        " bytes from master to disk");
  }
  std::string write_error;
  if (!payload.empty() && !WriteAll(temp_fd_, payload.data(), payload.size(), &write_error)) {
    LogWarning("Write error or short write writing to the DB dumped on disk: " + write_error);
    Abort();
    return false;
  }
  if (status == SyncTransfer::Status::kMore) return true;
  inbox_ = std::string(data.substr(*used));
  FinishTransfer();
  return false;
}

void MasterLink::FinishTransfer() {
  if (transfer_.diskless() &&
      ftruncate(temp_fd_, static_cast<off_t>(transfer_.snapshot_bytes())) != 0) {
    LogWarning("Error truncating the RDB file received from the master: " +
               std::string(std::strerror(errno)));
    Abort();
    return;
  }
  if (fsync(temp_fd_) != 0 || close(temp_fd_) != 0) {
    temp_fd_ = -1;
    LogWarning("Failed trying to sync the temp DB to disk in MASTER <-> REPLICA synchronization: " +
               std::string(std::strerror(errno)));
    Abort();
    return;
  }
  temp_fd_ = -1;
  const std::string path = JoinPath(server_.config.dir, server_.config.dbfilename);
  if (rename(temp_path_.c_str(), path.c_str()) != 0) {
    LogWarning("Failed trying to rename the temp DB into " + server_.config.dbfilename +
               " in MASTER <-> REPLICA synchronization: " + std::strerror(errno));
    Abort();
    return;
  }
  temp_path_.clear();
  // The socket waits while the data set loads; what the master sends meanwhile stays in the
  // kernel's buffer, and the sub-replicas' history ends here.
  connection_->Unwatch();
  server_.replication->DropReplicas();
  LogNotice("MASTER <-> REPLICA sync: Flushing old data");
  LogNotice("MASTER <-> REPLICA sync: Loading DB in memory");
  std::string error;
  if (!server_.persistence->LoadFromMaster(path, &error)) {
    LogWarning("Failed trying to load the MASTER synchronization DB from disk: " + error);
    has_history_ = false;
    Abort();
    return;
  }
  server_.replication->AttachToMaster(transfer_replid_, transfer_offset_);
  has_history_ = true;
  stream_db_ = 0;  // the stream after a full sync starts with a SELECT
  LogNotice("MASTER <-> REPLICA sync: Finished with success");
  BecomeConnected(std::move(inbox_));
}

void MasterLink::BecomeConnected(std::string leftover) {
  inbox_.clear();
  connection_->Unwatch();
  state_ = State::kConnected;
  transfer_ = SyncTransfer();
  down_since_ms_ = 0;
  Client& client = server_.AdoptMasterConnection(std::move(connection_),
                                                 master_.host + ":" + std::to_string(master_.port));
  master_client_id_ = client.id;
  // A partial resync goes on where the stream was: no SELECT repeats the database.
  client.db = stream_db_;
  // The first ACK tells a diskless master that the snapshot is in (it then sends the stream).
  SendAck();
  if (!leftover.empty()) server_.FeedMasterInput(client, leftover);
}

// ---- The stream ------------------------------------------------------------------------------

void MasterLink::Applied(std::string_view command) { server_.replication->FeedFromMaster(command); }

void MasterLink::SendAck() {
  Client* client = server_.FindClient(master_client_id_);
  if (client == nullptr || client->close_after_reply) return;
  const std::string offset = std::to_string(server_.replication->offset());
  // With its append-only file on, the replica tells how much of the stream it fsynced
  // (Redis 7.2, for WAITAOF).
  const int64_t fsynced = server_.persistence->FsyncedOffset();
  const std::string fsynced_text = std::to_string(fsynced);
  const std::string_view with_fack[] = {"REPLCONF", "ACK", offset, "FACK", fsynced_text};
  const std::string_view argv[] = {"REPLCONF", "ACK", offset};
  std::string ack;
  if (fsynced >= 0) {
    AppendRespCommand(&ack, with_fack);
  } else {
    AppendRespCommand(&ack, argv);
  }
  client->output.append(ack);
  server_.QueueWrite(*client);
}

void MasterLink::MasterClosed(Client& client) {
  if (client.id != master_client_id_) return;
  master_client_id_ = 0;
  stream_db_ = client.db;
  if (state_ != State::kConnected) return;
  LogNotice("Connection with master lost.");
  LogNotice("* Caching the disconnected master state.");
  state_ = State::kConnect;
  down_since_ms_ = server_.NowMs();
  has_history_ = true;
}

void MasterLink::Cron(int64_t now_ms) {
  const int64_t timeout_ms = server_.config.repl_timeout * 1000;
  switch (state_) {
    case State::kNone:
      return;
    case State::kConnect:
      Connect();
      return;
    case State::kConnecting:
    case State::kHandshake:
      if (now_ms - connect_start_ms_ > timeout_ms) {
        LogWarning("Timeout connecting to the MASTER...");
        Abort();
      }
      return;
    case State::kTransfer:
      if (now_ms - transfer_last_io_ms_ > timeout_ms) {
        LogWarning(
            "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
            "'repl-timeout' parameter in goblin.conf to a larger value.");
        Abort();
      }
      return;
    case State::kConnected: {
      Client* client = server_.FindClient(master_client_id_);
      if (client == nullptr) return;
      if (now_ms - client->last_interaction_ms > timeout_ms) {
        LogWarning("MASTER timeout: no data nor PING received...");
        server_.CloseClientSoon(*client);
        return;
      }
      SendAck();
      return;
    }
  }
}

}  // namespace goblin
