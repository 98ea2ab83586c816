// Replication, the master's side (Redis's PSYNC2): replicas attach with SYNC or PSYNC and follow
// the effects stream (effects.h) as RESP commands.
//
// The stream. Each effects unit becomes RESP commands, with a SELECT before a command whose
// database differs from the last one sent (and before the first after a full sync was set
// up), MULTI/EXEC as the unit has them. PING every repl-ping-replica-period seconds and
// REPLCONF GETACK * while a WAIT is pending join it without a SELECT. master_repl_offset counts
// every byte; the backlog (core/repl_backlog.h, repl-backlog-size) keeps the last ones.
//
// The backlog exists from the first replica on, created with a new replication id (no earlier
// history is valid, as in Redis), until repl-backlog-ttl seconds pass without replicas; while
// it exists replication consumes the effects stream.
//
// A full sync. With repl-diskless-sync and every replica of the round able to read a snapshot
// of unknown size (REPLCONF capa eof), it is diskless: a forked child (persistence.h) writes
// the snapshot into a pipe and the serving thread relays it to the replicas of the round, a
// chunk at a time, framed "$EOF:<mark>\r\n" <snapshot> <mark>; the next chunk is read once every
// replica took the last, and one that stalls past repl-timeout is dropped. A round starts
// repl-diskless-sync-delay seconds after its first replica asked, or as soon as
// repl-diskless-sync-max-replicas wait; a replica arriving during a round waits for the next.
// The stream held since the fork starts at the replica's first REPLCONF ACK, the sign that the
// snapshot is loaded (so the end mark is never glued to the stream).
//
// Otherwise it is disk-based: the child writes the snapshot into a file in dir. +FULLRESYNC
// <replid> <offset> goes out when the child starts, offset being master_repl_offset at the
// fork, and the stream from then on is held in the replica's output. When the child is done
// the file is opened for each replica waiting for it and unlinked; each gets "$<size>\r\n" and
// the file's bytes, then the stream it holds. A replica that arrives while such a child runs
// shares it (it copies the stream held by one waiting for it); otherwise it waits for the next
// child, which starts as soon as no child runs. While a replica waits for its snapshot it gets
// a newline a second, as Redis sends.
//
// Either way the snapshot is Goblin's own format when every replica of the round announced
// capa goblin-snapshot (it loads several times faster than RDB), and RDB otherwise.
//
// A partial resync: PSYNC <replid> <offset> naming this replication id and an offset the backlog
// holds gets +CONTINUE <replid> (+CONTINUE alone without capa psync2) and the bytes from offset.
//
// Replicas get no replies: a replica's replies go to Client::discarded_replies, and one that got
// a reply is dropped (Redis 7 does the same). REPLCONF ACK records a replica's offset; WAIT
// counts the online replicas whose acknowledged offset reached the caller's last write.
//
// Invariants:
//  1. master_repl_offset is the number of bytes fed; with a backlog it is end_offset() - 1.
//  2. A replica in kWaitBgsaveEnd or kSendBulk holds in its output exactly the stream after its
//     initial_offset, none of it sent; an online one writes the stream as it comes.
//  3. replicas_ holds the id of every replica, in the order they attached, and nothing else.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/repl_backlog.h"
#include "net/connection.h"
#include "server/client.h"
#include "server/effects.h"

namespace goblin {

class Server;

struct ReplicationStats {
  uint64_t sync_full = 0;
  uint64_t sync_partial_ok = 0;
  uint64_t sync_partial_err = 0;
};

class Replication : public EffectConsumer, private net::EventHandler {
 public:
  explicit Replication(Server& server);
  ~Replication() override;
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // EffectConsumer: the unit goes to the backlog and to the replicas, PUBLISH included.
  void ConsumeEffects(std::span<const Effect> effects) override;
  bool TakesEffectsForReplicas() const override { return true; }

  // SYNC (psync false) or PSYNC replid offset from client: a partial resync when possible,
  // else a full one. Replies errors itself; a replica asking again is ignored, as in Redis.
  void Sync(Client& client, bool psync, std::string_view replid, int64_t offset);
  // REPLCONF ACK offset from a replica (ignored from other clients).
  void Acknowledge(Client& client, uint64_t offset);
  // The online replicas whose acknowledged offset is offset or more.
  int64_t CountAcknowledged(uint64_t offset) const;
  // client is blocked in WAIT (Server::BlockForReplicas): replicas are asked for their offsets
  // at the end of the round, and client is released once enough acknowledged its offset.
  void AddWaiter(Client& client);
  // The connection of client closes: it stops being a replica.
  void RemoveReplica(Client& client);
  // The replication child ended (persistence.h); path is the file it wrote.
  void SnapshotDone(bool ok, const std::string& path);
  // Writes a syncing replica's snapshot; true once it is sent and the held stream may follow.
  // False while the snapshot waits or is being sent, or when the replica was dropped.
  bool SendBulk(Client& client);
  // Every tick: starts the snapshot replicas wait for when no child runs; once a second,
  // Redis's replication cron (PING, newlines to waiting replicas, timeouts, the backlog's ttl).
  void Tick(int64_t now_ms);
  // The end of an event-loop round: REPLCONF GETACK * when a WAIT asked, WAITs acknowledged,
  // a diskless sync's relay resumed or stopped.
  void BeforeSleep();
  // The diskless child's pipe is readable: the next chunks go to the replicas.
  void PumpRelay();
  // CONFIG SET repl-backlog-size.
  void ResizeBacklog();

  // WAITAOF (Redis 7.2; replication_aof.cc). REPLCONF ACK's FACK offset from a replica: the
  // stream it has fsynced to its append-only file (ignored from other clients).
  void AcknowledgeFsynced(Client& client, uint64_t offset);
  // The online replicas that fsynced offset.
  int64_t CountFsynced(uint64_t offset) const;
  // client is blocked in WAITAOF (Server::BlockForAof): the replicas are asked for their
  // offsets, and ReleaseAofWaiters lets it go once enough fsynced its last write.
  void AddAofWaiter(Client& client);
  // The end of each event-loop round, while WAITAOF clients wait.
  void ReleaseAofWaiters();
  bool has_aof_waiters() const { return !aof_waiters_.empty(); }
  // The append-only file logged commands: without a backlog a master counts each as one
  // byte of master_repl_offset (Redis 7.2), so that WAITAOF can tell when a write's fsync
  // is done.
  void CountUnreplicated(size_t commands);

  // A replica (master_link.h). The stream from the master, one complete command's bytes at a
  // time, as received: to the backlog and the sub-replicas, and into master_repl_offset.
  void FeedFromMaster(std::string_view bytes);
  // A full sync loaded: this server's history is now the master's, replid at offset (a new
  // backlog starts after it).
  void AttachToMaster(std::string_view replid, uint64_t offset);
  // +CONTINUE named another id: the master was promoted. The old id stays valid as replid2 up
  // to the current offset; the sub-replicas reconnect to learn the new one.
  void ChangeMasterId(std::string_view replid);
  // REPLICAOF NO ONE: a new history starts here, the master's kept as replid2 (as above).
  void Promote();
  // Disconnects every replica (they resynchronize, partially when they can).
  void DropReplicas();
  // A replica restarted from a snapshot that carried its history (Persistence): it continues
  // replid at offset.
  void RestoreHistory(std::string_view replid, uint64_t offset);
  // A master started from a snapshot that holds its history (replid at offset): a new id
  // starts there with an empty backlog, the saved one kept as replid2, so that its replicas
  // continue with +CONTINUE (Redis does the same).
  // expired: the keys the load deleted for their deadlines, (db, key), whose DELs come first.
  void ContinueSavedHistory(std::string_view replid, uint64_t offset,
                            const std::vector<std::pair<int, std::string>>& expired);
  // The database the stream selected last (0 before any): a snapshot saves it.
  int stream_db() const { return std::max(selected_db_, 0); }
  const std::string& replid2() const { return replid2_; }
  int64_t second_offset() const { return second_offset_; }

  uint64_t offset() const { return offset_; }
  const ReplBacklog* backlog() const { return backlog_.get(); }
  const ReplicationStats& stats() const { return stats_; }
  // CONFIG RESETSTAT: the sync counters start again from 0.
  void ResetStats() { stats_ = ReplicationStats(); }
  // Replicas in the order they attached.
  std::vector<Client*> Replicas() const;
  // INFO memory: the backlog's allocation, and the replicas' buffers.
  size_t BacklogBytes() const { return backlog_ ? backlog_->AllocatedBytes() : 0; }
  size_t ReplicaBufferBytes() const;
  // The replicas' output buffers: memory maxmemory does not count (mem_not_counted_for_evict).
  size_t ReplicaOutputBytes() const;
  // min-replicas-to-write: whether enough online replicas acknowledged within
  // min-replicas-max-lag seconds (always, when either option is 0).
  bool EnoughGoodReplicas(int64_t now_ms) const;
  // Whether every replica acknowledged master_repl_offset (a shutdown waits for it).
  bool AllAcknowledged() const;
  // REPLCONF GETACK * to the replicas now, unless writes are paused.
  void RequestAcks();
  // Before exiting: a line for each replica behind master_repl_offset, and how many are not.
  void LogLaggingReplicas() const;
  // The online replicas that acknowledged within min-replicas-max-lag seconds.
  int64_t GoodReplicas(int64_t now_ms) const;
  // The address INFO and ROLE show for a replica: REPLCONF ip-address, else the peer's.
  static std::string ReplicaIp(const Client& client);
  // INFO's state names.
  static std::string_view StateName(ReplicaState state);

  // argv goes to the replicas and the backlog with no SELECT before it, and nowhere else:
  // the links' own commands, and DEBUG REPLICATE's (which lets replicas diverge, for tests).
  // Nothing on a replica, or without a backlog.
  void FeedCommand(std::span<const std::string_view> argv);

 private:
  // The backlog, starting after the current offset; with a new replication id on a master.
  void CreateBacklog(bool new_id);
  // The current id becomes replid2, valid up to the current offset; then id is the current.
  void ShiftReplicationId(std::string id);
  void FreeBacklog();
  // Appends bytes to the stream: the backlog, and every replica past kWaitBgsaveStart.
  void Feed(std::string_view bytes);
  // A command of the replication link itself (PING, REPLCONF GETACK): no SELECT before it.
  void FeedCommand(std::initializer_list<std::string_view> argv) {
    FeedCommand(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  bool TryPartialResync(Client& client, std::string_view replid, int64_t offset);
  // Starts the full sync the waiting replicas need once repl-diskless-sync-delay allows.
  void MaybeStartSnapshot(int64_t now_ms);
  void StartSnapshot();
  // A diskless sync: the relay reads the child's pipe (fd) and sends each chunk to every
  // replica of the round (see the top of the file).
  void StartRelay(int fd);
  // Makes relay_chunk_ every relayed replica's next bytes, writing what their sockets take.
  void Distribute();
  // Writes client's part of the chunk; true once it took all of it or was dropped.
  bool WriteRelay(Client& client);
  // The child ended and its pipe is drained: the end mark follows when it succeeded, else the
  // round's replicas are dropped.
  void FinishRelay(bool ok);
  // Resumes a relay whose replicas took their chunk, or stops one that lost all its replicas.
  void ServiceRelay();
  void WatchRelay(bool watch);
  // The relay's pipe is readable.
  void OnReady(uint32_t) override { PumpRelay(); }
  // A replica that asked for no keys gets its small snapshot at once, without a child.
  void SendFilteredSnapshot(Client& client);
  // Opens the snapshot at path for client and starts sending it (false: dropped).
  bool StartBulk(Client& client, const std::string& path);
  // +FULLRESYNC for client, whose stream starts after offset.
  bool SetupFullResync(Client& client, uint64_t offset);
  void PutOnline(Client& client);
  // Writes bytes on client's socket at once, ahead of anything held (false: the link failed).
  bool WriteNow(Client& client, std::string_view bytes);
  void Drop(Client& client);
  void Cron(int64_t now_ms);
  // "ip:port" of a replica, as Redis's log names it.
  std::string Name(const Client& client) const;

  Server& server_;
  std::unique_ptr<ReplBacklog> backlog_;
  uint64_t offset_ = 0;  // master_repl_offset
  std::string replid2_;  // master_replid2: the previous history, valid up to second_offset_
  int64_t second_offset_ = -1;
  int selected_db_ = -1;
  // ConsumeEffects' buffers, kept between units.
  std::string unit_bytes_;
  std::vector<std::string_view> unit_argv_;
  std::vector<uint64_t> replicas_;
  std::vector<uint64_t> waiters_;      // WAIT clients, by id
  std::vector<uint64_t> aof_waiters_;  // WAITAOF clients, by id
  bool ack_requested_ = false;
  bool acks_arrived_ = false;
  int64_t no_replicas_since_ms_ = 0;
  bool snapshot_goblin_ = false;  // the running disk snapshot's format
  // The diskless relay: the child's pipe (read end), the chunk being sent and how many
  // replicas still write it; the child's end (eof: the pipe drained; child_done/ok: it exited).
  bool relay_active_ = false;
  std::unique_ptr<net::Connection> relay_;  // the pipe, read through a connection
  bool relay_watched_ = false;
  std::string relay_chunk_;
  int64_t relay_pending_ = 0;
  std::string eof_mark_;
  bool relay_eof_ = false;
  bool relay_child_done_ = false;
  bool relay_child_ok_ = false;
  bool relay_final_ = false;  // relay_chunk_ is the end mark
  int64_t last_cron_ms_ = 0;
  uint64_t cron_loops_ = 0;
  ReplicationStats stats_;
  // A full sync through a connection that cannot send a file directly (TLS) reads the file
  // into this buffer first (net::SendFileChunk).
  std::vector<char> bulk_buffer_;
};

}  // namespace goblin
