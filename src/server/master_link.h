// Replication, the replica's side (Redis's PSYNC2): REPLICAOF makes this server follow a master,
// a redis-server or another goblin-server, over one TCP connection.
//
// The link, as Redis's replication state machine:
//   kConnect     a master is set; the once-a-second cron opens a non-blocking connection
//   kConnecting  connect() is in progress
//   kHandshake   PING; then AUTH (masterauth, masteruser), REPLCONF listening-port, ip-address
//                and capa eof psync2 goblin-snapshot, sent at once and answered in order; then
//                PSYNC <replid> <offset+1> (PSYNC ? -1 without a history to continue), with a
//                fourth word FAILOVER while this server hands its role over (failover.h)
//   kTransfer    +FULLRESYNC <replid> <offset>: the snapshot arrives, "$<size>\r\n" and its
//                bytes, or diskless "$EOF:<40-byte mark>\r\n", its bytes and the mark; it goes
//                into a temporary file in dir, renamed to dbfilename once complete
//   kConnected   the socket became the master client (ClientKind::kMaster), whose commands
//                run as the server's own: no -READONLY, -OOM, -LOADING or pause for them
// +CONTINUE [<replid>] skips kTransfer: the stream goes on from the offset PSYNC named.
//
// A full sync keeps serving the old data set (or -MASTERDOWN with replica-serve-stale-data no)
// until the snapshot is whole; then the data set is replaced by it (Persistence::LoadFromMaster:
// clients get -LOADING meanwhile, and a file that does not load leaves the data set empty and
// the link retrying, never half-loaded), the sub-replicas are dropped (their history ended),
// and the replication id and offset become the master's.
//
// The stream. The master client's commands run as they arrive; each complete command's bytes,
// as received, advance the replication offset and go to this server's backlog and its own
// replicas (Replication::FeedFromMaster): a chain of replicas carries one byte stream. REPLCONF
// GETACK * is answered at once with REPLCONF ACK <offset>, and an ACK goes every second too.
// Keys are not expired here: a lookup by the master's commands sees a key whose deadline passed,
// other clients see it missing, and the master's DEL removes it (Server's ExpiryRules). Only a
// writable replica's own keys with deadlines expire here (Server::ExpireOwnKeys).
//
// When the link drops the server keeps its replication id and offset, so the next PSYNC asks
// the master to continue; a master turned replica continues its own history the same way.
// REPLICAOF NO ONE makes it a master again: the master's id becomes master_replid2, valid up
// to second_repl_offset, so that its former siblings continue from it with +CONTINUE.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "net/connection.h"
#include "net/tls.h"
#include "resp/sync_transfer.h"
#include "server/config.h"

namespace goblin {

class Server;
struct Client;

class MasterLink final : private net::EventHandler {
 public:
  enum class State { kNone, kConnect, kConnecting, kHandshake, kTransfer, kConnected };

  explicit MasterLink(Server& server);
  ~MasterLink();
  MasterLink(const MasterLink&) = delete;
  MasterLink& operator=(const MasterLink&) = delete;

  // REPLICAOF host port (master empty: NO ONE). A master turning replica continues its own
  // history; a replica dropping its master becomes a master with a new replication id.
  void SetMaster(const ReplicaOf& master);
  // At startup, replicaof from the configuration: connect from the first cron on.
  void Start();
  bool is_replica() const { return state_ != State::kNone; }
  // The master's link is up (master_link_status:up).
  bool connected() const { return state_ == State::kConnected; }
  State state() const { return state_; }
  const ReplicaOf& master() const { return master_; }
  // Whether this server has a history its master may continue (PSYNC <replid> <offset>).
  bool has_history() const { return has_history_ || master_client_id_ != 0; }
  // The database the master's stream selected last: a partial resync continues in it, and a
  // snapshot saves it.
  int stream_db() const;

  // Once a second: connects, times out a silent master, sends REPLCONF ACK.
  void Cron(int64_t now_ms);
  // The master client ran one command whose bytes, as received, were command.
  void Applied(std::string_view command);
  // REPLCONF GETACK from the master: an ACK now.
  void SendAck();
  // The master client's connection closed: the link goes back to kConnect.
  void MasterClosed(Client& client);

  // INFO replication's replica fields, ROLE's state.
  std::string_view RoleState() const;
  // slave_repl_offset: the offset applied; 0 before the first sync gave this server a history.
  uint64_t applied_offset() const;
  // slave_read_repl_offset: also counting the master's bytes received and not yet applied.
  uint64_t read_offset() const;
  int64_t last_io_seconds_ago(int64_t now_ms) const;
  int64_t down_since_seconds(int64_t now_ms) const;  // -1 when the link never came up
  bool sync_in_progress() const { return state_ == State::kTransfer; }
  // While kTransfer: the snapshot's size (-1 until known, and for a diskless one), bytes read.
  int64_t transfer_size() const { return transfer_.size(); }
  uint64_t transfer_read() const { return transfer_.read(); }
  int64_t transfer_last_io_ms() const { return transfer_last_io_ms_; }

 private:
  enum class Step { kPong, kReplies, kPsync };

  // The connection is readable or writable (watched while connecting and syncing).
  void OnReady(uint32_t readiness) override;
  void Connect();
  // Closes the socket and whatever a sync had received; kConnect again (kNone: no master).
  void Abort(State next = State::kConnect);
  void OnConnected();
  // Connected (TLS included): PING, then AUTH and REPLCONF.
  void BeginHandshake();
  void ReadHandshake();
  // One reply line of the handshake; false when the link was aborted.
  bool HandleReply(const std::string& line);
  bool HandlePsyncReply(const std::string& line);
  void SendHandshake();
  bool SendLine(std::initializer_list<std::string_view> argv);
  void ReadTransfer();
  // The transfer's data bytes (after its header): to the file, the end mark found.
  bool ConsumeTransfer(std::string_view data, size_t* used);
  void FinishTransfer();
  // The master client takes over the socket with bytes already read after the snapshot.
  void BecomeConnected(std::string leftover);
  std::string TempPath() const;

  Server& server_;
  ReplicaOf master_;
  State state_ = State::kNone;
  Step step_ = Step::kPong;
  std::unique_ptr<net::Connection> connection_;  // until it becomes the master client's
  // While connection_'s TLS handshake (tls-replication) runs: connection_ itself.
  net::TlsConnection* tls_handshake_ = nullptr;
  std::string inbox_;        // bytes read and not yet consumed by the handshake or transfer
  int pending_replies_ = 0;  // kReplies: AUTH and REPLCONF answers still to read
  bool auth_sent_ = false;
  // PSYNC continues our history (replication id and offset) when set; else "? -1".
  bool has_history_ = false;
  int stream_db_ = 0;  // stream_db() while no master client exists
  uint64_t master_client_id_ = 0;
  int64_t last_io_ms_ = 0;
  int64_t down_since_ms_ = 0;  // 0: never up
  int64_t connect_start_ms_ = 0;
  // kTransfer.
  std::string transfer_replid_;
  uint64_t transfer_offset_ = 0;
  SyncTransfer transfer_;  // the snapshot's framing: header, size or end mark, bytes read
  int64_t transfer_last_io_ms_ = 0;
  int temp_fd_ = -1;
  std::string temp_path_;
};

}  // namespace goblin
