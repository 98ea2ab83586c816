// Persistence: snapshots (SAVE, BGSAVE, save rules, SHUTDOWN) and the append-only file, with
// Redis's commands, configuration and INFO fields, on top of Goblin's own file formats.
//
// Snapshots: the keyspace is written by SnapshotWriter, or with snapshot-format rdb by RdbWriter
// as Redis's RDB (the same temporary file, rename, child and INFO fields either way), in the
// foreground (SAVE, GOBLIN.SAVE, SHUTDOWN) or in a forked child that sees a copy-on-write image
// while the serving thread keeps answering (BGSAVE, save rules). The child reports its
// copy-on-write size through a pipe before it exits; the tick reaps it.
//
// Append-only file: Redis 7's multi-part layout (<dir>/<appenddirname>/ with a manifest, one
// base file and incremental files). The base is a Goblin snapshot; the incremental files hold
// the effects stream (effects.h) as RESP: each change in the deterministic form its command
// chose (relative expiries become PEXPIREAT or SET ... PXAT, SPOP becomes SREM, float
// increments become SET/HSET, an expired key a DEL), written before any reply leaves (appendfsync
// always also fsyncs then; everysec fsyncs once a second off the serving thread). A rewrite opens a
// new incremental file, then a child writes the new base; when it is done the manifest names the
// new base and the files from the rewrite on.
//
// Startup: with appendonly yes the AOF is loaded (and the snapshot ignored, as in Redis);
// otherwise the snapshot. While loading, clients are served between batches of keys and get
// -LOADING for everything but the few commands Redis allows.
//
// Invariants:
//  1. At most one child (a BGSAVE or an AOF rewrite) runs at a time; a request that finds one
//     running is refused or scheduled as Redis does.
//  2. With the AOF on, every acknowledged write is in the kernel (write() returned) before its
//     reply is written, and on disk (fdatasync returned) when appendfsync is always.
//  3. A file is replaced only by rename after fsync: a crash never damages the last snapshot,
//     base or manifest.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persist/aof_log.h"
#include "persist/aof_manifest.h"
#include "persist/rdb_writer.h"
#include "persist/saved_replication.h"
#include "persist/snapshot_writer.h"
#include "server/effects.h"

namespace goblin {

struct RdbLoadStats;
class Server;

// Where and how a full sync's snapshot is written.
struct SyncSnapshotTarget {
  std::string path;     // the file, when fd < 0
  int fd = -1;          // else the write end of a pipe (a diskless sync)
  bool goblin = false;  // Goblin's snapshot format (every replica announced it), else RDB
};

class Persistence : public EffectConsumer {
 public:
  explicit Persistence(Server& server);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Loads the AOF or the snapshot; false (after logging why) means the server must not start.
  bool LoadAtStartup();
  bool loading() const { return loading_; }
  const bool* loading_flag() const { return &loading_; }

  // --- Snapshots -----------------------------------------------------------------------------
  // SAVE / GOBLIN.SAVE: in the foreground. Returns "" or the error reply text.
  std::string Save();
  // BGSAVE [SCHEDULE]: "" when started (or scheduled), else the error reply text.
  std::string BackgroundSave(bool schedule, bool* scheduled);
  // FLUSHALL: a snapshot child (BGSAVE's or a full sync's) is writing a keyspace that is gone;
  // as Redis, it is stopped (a BGSAVE's status stays ok; replicas waiting for it sync again).
  void StopSnapshotChild();
  // A full sync's snapshot (server/replication.h): a child writes the keyspace to target,
  // whatever snapshot-format says; Replication::SnapshotDone hears when it ends. False with
  // *error when it could not start. REQUIRES: !child_running().
  bool StartReplicationSnapshot(const SyncSnapshotTarget& target, std::string* error);
  // A diskless sync read the child's pipe to its end: waits for the child to exit, which
  // reports through Replication::SnapshotDone. REQUIRES: replication_child_running().
  void WaitReplicationChild() { ReapChild(/*block=*/true); }
  // The last replica a diskless sync was for is gone: the child is killed.
  void StopReplicationChild() {
    if (replication_child_running()) KillChild();
  }
  // The snapshot of a replica that asked for no keys: the RDB file of an empty keyspace, with
  // the function libraries when functions, written here in the foreground.
  bool WriteFilteredRdb(const std::string& path, bool functions, std::string* error) const;
  bool child_running() const { return child_kind_ != ChildKind::kNone; }
  bool replication_child_running() const { return child_kind_ == ChildKind::kReplication; }
  // DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save (unless !save), empty the keyspace and the
  // function libraries (unless !flush), load the snapshot file back, its keys and libraries
  // replacing those present when merge.
  // Returns "" or the error reply text.
  std::string DebugReload(bool save, bool flush, bool merge);
  // DEBUG LOADAOF: the log's pending writes reach the file, the keyspace is emptied and the
  // append-only files the manifest on disk names are loaded again, neither logged nor
  // replicated. Returns "" or the error reply text.
  std::string DebugLoadLog();
  // Whether the append-only file is being replayed (its commands are not logged again).
  bool replaying() const { return replaying_; }
  // A replica's full sync (server/master_link.h): the data set becomes the snapshot at path
  // (RDB or Goblin's), clients getting -LOADING meanwhile; a running child is stopped and the
  // append-only file starts again from the new data set. False (*error) leaves it empty.
  bool LoadFromMaster(const std::string& path, std::string* error);
  // The replication history a snapshot saved now carries (Redis's rdbPopulateSaveInfo): a
  // master's while it has a backlog, a replica's once it has one to continue; else none.
  SavedReplication ReplicationToSave() const;
  // The history the last snapshot loaded carried (MasterLink::Start continues it).
  const SavedReplication& loaded_replication() const { return loaded_replication_; }
  // A master's startup snapshot: the keys skipped for their deadlines, (db, key) in file order,
  // handed over once (their DELs continue the saved history).
  std::vector<std::pair<int, std::string>> TakeExpiredAtLoad() {
    return std::move(expired_at_load_);
  }
  // How values are written as RDB under the current configuration (encoding limits,
  // rdbcompression, rdbchecksum): the RDB file, DUMP and MIGRATE payloads.
  RdbWriteOptions RdbOptions() const;

  // --- Append-only file ------------------------------------------------------------------------
  // EffectConsumer: while the log is open, the effects stream's units are appended to it.
  void ConsumeEffects(std::span<const Effect> effects) override;
  // Writes logged commands before replies leave (Invariant 2).
  void FlushLog();
  bool log_pending() const { return aof_ != nullptr && aof_->has_pending(); }
  // WAITAOF (Redis 7.2's fsynced_reploff): the replication offset up to which every logged
  // write is fsynced; -1 while the log is off, or on but still without its base (turned on
  // at run time, until the rewrite that writes the base is done). Once all that was logged is
  // on disk, the current offset (what follows is not the log's: PING, GETACK), except with
  // appendfsync no, where only what the server itself fsynced counts.
  int64_t FsyncedOffset() const;
  // BGREWRITEAOF: "" when started or scheduled (*scheduled says which), else the error.
  std::string RewriteLog(bool* scheduled);

  // CONFIG SET appendonly / appendfsync took effect; "" or the error reply.
  std::string OnConfigChange(std::string_view name);

  // hz times a second: reaps children, runs save rules, scheduled and automatic rewrites.
  void Tick(int64_t now_ms);
  // Shutdown: kills a running child, saves when asked (or when save rules exist and not
  // NOSAVE), fsyncs the AOF. Returns false (and *error) when a requested save failed.
  bool PrepareShutdown(bool save, bool nosave, std::string* error);
  // A write command must be refused (stop-writes-on-bgsave-error / AOF write errors): the
  // error reply text, else "".
  std::string RefuseWrites() const;

  // INFO persistence: (field, value) in Redis's order.
  std::vector<std::pair<std::string, std::string>> InfoFields(int64_t now_ms) const;

 private:
  // A replication child writes an RDB snapshot as a BGSAVE does, to a file of its own.
  enum class ChildKind { kNone, kSnapshot, kRewrite, kReplication };

  std::string SnapshotPath() const;
  // SAVE's and BGSAVE's file at path, in the format snapshot-format names.
  bool WriteSnapshot(const std::string& path, int64_t now_ms, SnapshotSaveStats* stats,
                     std::string* error) const;
  bool WriteRdb(const std::string& path, int64_t now_ms, SnapshotSaveStats* stats,
                std::string* error, bool keys = true, bool functions = true) const;
  // The RDB options of a saved file: WriteRdb's plus access records and used memory.
  RdbWriteOptions RdbSaveOptions() const;
  // A replication child's work: the snapshot sync_target_ names.
  bool WriteSyncSnapshot(int64_t now_ms, SnapshotSaveStats* stats, std::string* error) const;
  std::string LogDirectory() const;
  std::vector<const class Database*> Databases() const;
  // The function libraries' code, saved with the keyspace.
  std::vector<std::string_view> FunctionLibraries() const;
  // Replaces the function libraries with those a snapshot held (adds them to those present
  // while a DEBUG RELOAD NOFLUSH loads).
  bool LoadFunctionLibraries(const std::vector<std::string>& libraries, const std::string& path,
                             std::string* error);
  // Loads a Goblin snapshot or an RDB file (told apart by its first bytes). log_base: the file
  // is an append-only file's base. rdb_end, when given, lets commands follow an RDB file (an
  // old-style append-only file's preamble) and gets the offset where the RDB part ended.
  bool LoadSnapshot(const std::string& path, bool* missing, std::string* error,
                    bool log_base = false, uint64_t* rdb_end = nullptr);
  bool merge_on_load_ = false;  // DEBUG RELOAD MERGE, while it loads
  // DEBUG RELOAD NOFLUSH, while it loads: the libraries present stay (a library of the file
  // with the same name fails the load unless MERGE), and a failed load empties nothing.
  bool keep_on_load_ = false;
  void LogRdbLoaded(const RdbLoadStats& stats, bool log_base) const;
  // Loads the files the manifest names, as Redis's loadAppendOnlyFiles does: every file must
  // exist before any is read; *missing when there is no log to load. A failure is logged
  // as it happens; *error is its last line.
  bool LoadLog(bool* missing, std::string* error);
  // Redis 7's upgrade of a pre-7.0 log, <dir>/<appendfilename>, into the AOF directory as the
  // base of a new manifest (see the definition for when).
  bool MoveSingleFileLogIn(std::string* error);
  // A base: an RDB file (and the commands after it, in an old-style file), a Goblin snapshot,
  // or commands.
  bool LoadLogBase(const std::string& name, bool last, std::string* error);
  // Replays the commands of the file from offset on. last: the file is the log's last, whose
  // torn tail aof-load-truncated may cut.
  bool ReplayLogFile(const std::string& name, uint64_t offset, bool last, std::string* error);
  // Serves clients (-LOADING) now and then; false when a shutdown asks the load to stop.
  bool ServeWhileLoading(uint64_t bytes_done, uint64_t total_bytes, uint64_t keys);
  void FinishLoading();
  // Opens the log at startup; keyspace_from_log says whether the keyspace was loaded from it.
  bool StartLog(bool keyspace_from_log, std::string* error);
  void StopLog();
  // Bytes of the files the manifest names, but for the incr file being written (INFO's
  // aof_current_size and the automatic rewrite add that one's size as it grows).
  uint64_t ClosedLogBytes() const;
  // Forks a child that runs work() and exits with its result; false with *error on failure.
  bool StartChild(ChildKind kind, const std::string& target, std::string* error);
  void ReapChild(bool block);
  void ChildDone(bool ok, int64_t now_ms);
  void KillChild();

  Server& server_;
  bool loading_ = false;
  int64_t loading_start_ms_ = 0;
  uint64_t loading_total_bytes_ = 0;
  uint64_t loading_loaded_bytes_ = 0;
  uint64_t loading_keys_ = 0;
  int64_t last_pump_us_ = 0;
  int64_t last_progress_log_us_ = 0;
  bool serve_while_loading_ = true;
  bool load_interrupted_ = false;

  // Snapshot state, as INFO names it.
  bool last_bgsave_ok_ = true;
  int64_t last_bgsave_try_ms_ = 0;
  int64_t last_bgsave_seconds_ = -1;
  uint64_t saves_ = 0;
  uint64_t last_cow_bytes_ = 0;
  uint64_t last_load_keys_loaded_ = 0;
  uint64_t last_load_keys_expired_ = 0;
  bool bgsave_scheduled_ = false;

  // The one child.
  ChildKind child_kind_ = ChildKind::kNone;
  pid_t child_pid_ = -1;
  int child_pipe_ = -1;  // the child writes its copy-on-write bytes here
  int64_t child_start_ms_ = 0;
  uint64_t dirty_at_fork_ = 0;
  std::string child_target_;        // the file the child writes
  SyncSnapshotTarget sync_target_;  // a replication child's

  // AOF state.
  std::unique_ptr<AofWriter> aof_;
  AppendFsync fsync_policy_;  // config.appendfsync, parsed once (FlushLog runs per reply batch)
  AofManifest manifest_;
  bool replaying_ = false;
  uint64_t replayed_commands_ = 0;
  bool rewrite_scheduled_ = false;
  bool last_rewrite_ok_ = true;
  int64_t last_rewrite_seconds_ = -1;
  uint64_t rewrites_ = 0;
  uint64_t rewrite_failures_ = 0;
  uint64_t aof_last_cow_bytes_ = 0;
  uint64_t aof_base_size_ = 0;      // base + incrs right after the last rewrite
  uint64_t aof_history_size_ = 0;   // bytes of the incr files before the current one
  std::string rewrite_first_incr_;  // the incr file opened when the running rewrite began
  bool aof_write_ok_ = true;
  // FsyncedOffset: whether the log is complete on disk, and the offset its base covers.
  bool log_durable_ = false;
  uint64_t durable_floor_ = 0;
  SavedReplication loaded_replication_;
  bool naming_expired_ = false;
  std::vector<std::pair<int, std::string>> expired_at_load_;
};

}  // namespace goblin
