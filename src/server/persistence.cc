#include "server/persistence.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/ascii.h"
#include "core/key_entry.h"
#include "core/string_number.h"
#include "keyspace/database.h"
#include "persist/file_util.h"
#include "persist/rdb_loader.h"
#include "persist/rdb_writer.h"
#include "persist/snapshot_format.h"
#include "persist/snapshot_loader.h"
#include "persist/snapshot_writer.h"
#include "server/client.h"
#include "server/command_table.h"
#include "server/cycle_clock.h"
#include "server/encoding_limits.h"
#include "server/errors.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/memory_stats.h"
#include "server/replication.h"
#include "server/script_runner.h"
#include "server/server.h"

namespace goblin {

namespace {

// Redis's CONFIG_BGSAVE_RETRY_DELAY: after a failed BGSAVE, save rules wait this long.
constexpr int64_t kBgsaveRetryDelayMs = 5000;
// While loading, clients are served at most this often.
constexpr int64_t kLoadingPumpIntervalUs = 2000;
// A long load logs its progress this often.
constexpr int64_t kLoadingLogIntervalUs = 2'000'000;

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

Persistence::Persistence(Server& server)
    : server_(server), fsync_policy_(ParseAppendFsync(server.config.appendfsync)) {}

Persistence::~Persistence() {
  KillChild();
  if (aof_) aof_->Close();
}

std::string Persistence::SnapshotPath() const {
  return JoinPath(server_.config.dir, server_.config.dbfilename);
}

RdbWriteOptions Persistence::RdbOptions() const {
  const Config& config = server_.config;
  RdbWriteOptions options;
  options.limits = EncodingLimitsOf(config);
  options.compress = config.rdbcompression;
  options.checksum = config.rdbchecksum;
  options.quicklist_packed_threshold = server_.quicklist_packed_threshold;
  return options;
}

bool Persistence::WriteSnapshot(const std::string& path, int64_t now_ms, SnapshotSaveStats* stats,
                                std::string* error) const {
  if (server_.config.snapshot_format != "rdb") {
    return WriteSnapshotFile(Databases(), FunctionLibraries(), path, now_ms, stats, error,
                             ReplicationToSave(), server_.config.rdb_key_save_delay);
  }
  return WriteRdb(path, now_ms, stats, error);
}

bool Persistence::WriteFilteredRdb(const std::string& path, bool functions,
                                   std::string* error) const {
  SnapshotSaveStats stats;
  return WriteRdb(path, server_.NowMs(), &stats, error, false, functions);
}

RdbWriteOptions Persistence::RdbSaveOptions() const {
  RdbWriteOptions options = RdbOptions();
  options.used_memory = AllocatedBytes();
  options.key_save_delay_us = server_.config.rdb_key_save_delay;
  // As Redis: idle times under an LRU policy, counters under an LFU one.
  const std::string& policy = server_.config.maxmemory_policy;
  if (policy.find("lru") != std::string::npos) {
    options.access_records = RdbWriteOptions::AccessRecords::kIdle;
  } else if (policy.find("lfu") != std::string::npos) {
    options.access_records = RdbWriteOptions::AccessRecords::kFreq;
  }
  options.clock = &server_.access_clock;
  return options;
}

bool Persistence::WriteRdb(const std::string& path, int64_t now_ms, SnapshotSaveStats* stats,
                           std::string* error, bool keys, bool functions) const {
  RdbWriteOptions options = RdbSaveOptions();
  if (keys) options.replication = ReplicationToSave();
  return WriteRdbFile(keys ? Databases() : std::vector<const Database*>(),
                      functions ? FunctionLibraries() : std::vector<std::string_view>(), path,
                      now_ms, options, stats, error);
}

bool Persistence::WriteSyncSnapshot(int64_t now_ms, SnapshotSaveStats* stats,
                                    std::string* error) const {
  const SyncSnapshotTarget& target = sync_target_;
  if (target.fd < 0) {
    return target.goblin
               ? WriteSnapshotFile(Databases(), FunctionLibraries(), target.path, now_ms, stats,
                                   error, ReplicationToSave(), server_.config.rdb_key_save_delay)
               : WriteRdb(target.path, now_ms, stats, error);
  }
  if (target.goblin) {
    return WriteSnapshotToFd(Databases(), FunctionLibraries(), target.fd, now_ms, stats, error,
                             ReplicationToSave(), server_.config.rdb_key_save_delay);
  }
  RdbWriteOptions options = RdbSaveOptions();
  options.replication = ReplicationToSave();
  return WriteRdbToFd(Databases(), FunctionLibraries(), target.fd, now_ms, options, stats, error);
}

SavedReplication Persistence::ReplicationToSave() const {
  const Replication& replication = *server_.replication;
  const MasterLink& link = *server_.master_link;
  if (!link.is_replica()) {
    // Without a backlog nobody continues this history: a replica gets a full sync anyway.
    if (replication.backlog() == nullptr) return {};
    return {server_.replication_id, replication.offset(), replication.stream_db()};
  }
  if (!link.has_history()) return {};
  return {server_.replication_id, replication.offset(), link.stream_db()};
}

std::string Persistence::LogDirectory() const {
  return JoinPath(server_.config.dir, server_.config.appenddirname);
}

std::vector<const Database*> Persistence::Databases() const {
  std::vector<const Database*> dbs;
  for (size_t i = 0; i < server_.database_count(); ++i) {
    dbs.push_back(&server_.db(static_cast<int>(i)));
  }
  return dbs;
}

// ---- Loading --------------------------------------------------------------------------------

bool Persistence::LoadAtStartup() {
  const int64_t start_us = SteadyMicros();
  std::string error;
  bool missing = false;
  bool ok;
  const char* what;
  const bool loaded_from_log = server_.config.appendonly;
  if (loaded_from_log) {
    what = "append only file";
    ok = LoadLog(&missing, &error);
  } else {
    what = "snapshot";
    naming_expired_ = server_.config.replicaof.host.empty();
    ok = LoadSnapshot(SnapshotPath(), &missing, &error);
    naming_expired_ = false;
  }
  FinishLoading();
  if (!ok && server_.shutdown_pending()) {
    // The loop exits at once; the partial keyspace must not be saved over the file.
    load_interrupted_ = true;
    return true;
  }
  if (!ok && !missing) {
    // The log's loader has said why already; its last line is the one Redis ends with.
    LogWarning(loaded_from_log ? error
                               : "Fatal error loading the " + std::string(what) + ": " + error);
    return false;
  }
  if (!missing) {
    const double seconds = static_cast<double>(SteadyMicros() - start_us) / 1e6;
    char text[64];
    std::snprintf(text, sizeof(text), "%.3f", seconds);
    std::string counts = std::to_string(last_load_keys_loaded_) + " keys, " +
                         std::to_string(last_load_keys_expired_) + " expired";
    if (loaded_from_log) {
      counts += ", then " + std::to_string(replayed_commands_) + " commands";
    }
    LogNotice(std::string("DB loaded from ") + what + ": " + text + " seconds (" + counts + ")");
  }
  if (server_.config.appendonly && !StartLog(loaded_from_log, &error)) {
    LogWarning("Can't open the append-only file: " + error);
    return false;
  }
  return true;
}

bool Persistence::LoadSnapshot(const std::string& path, bool* missing, std::string* error,
                               bool log_base, uint64_t* rdb_end) {
  loading_ = true;
  loading_start_ms_ = server_.NowMs();
  last_progress_log_us_ = SteadyMicros();
  loading_total_bytes_ = FileSize(path);
  loading_loaded_bytes_ = loading_keys_ = 0;
  std::vector<Database*> dbs;
  for (size_t i = 0; i < server_.database_count(); ++i) {
    dbs.push_back(&server_.db(static_cast<int>(i)));
  }
  MappedFile file;
  if (!file.Open(path, missing, error)) return false;
  const uint64_t total = loading_total_bytes_;
  auto progress = [&](uint64_t bytes, uint64_t keys) {
    return ServeWhileLoading(bytes, total, keys);
  };
  std::vector<std::string> libraries;
  bool ok;
  if (IsRdbFile(file.data())) {
    RdbLoadOptions options;
    options.limits = EncodingLimitsOf(server_.config);
    options.now_ms = server_.NowMs();
    // Redis loads an append-only file's base whole: its deadlines pass through the log.
    options.skip_expired = !log_base;
    options.name_expired = naming_expired_;
    options.key_load_delay_us = &server_.config.key_load_delay;
    options.verify_checksum = !server_.skip_checksum_validation;
    options.replace_existing = merge_on_load_;
    options.commands_may_follow = rdb_end != nullptr;
    options.progress = progress;
    const AccessClock& clock = server_.access_clock;
    options.key_access = [&](size_t db, std::string_view key, const RdbKeyAccess& access) {
      // As Redis's objectSetLRUOrLFU: the record the policy in force reads, the other ignored.
      if (clock.lfu && access.frequency) {
        dbs[db]->SetAccessStamp(key, clock.StampWithCounter(*access.frequency));
      } else if (!clock.lfu && access.idle_seconds) {
        dbs[db]->SetAccessStamp(key, clock.StampIdleFor(*access.idle_seconds));
      }
    };
    RdbLoadStats stats;
    ok = LoadRdb(path, file.data(), dbs, options, &stats, error);
    if (ok) LogRdbLoaded(stats, log_base);
    if (rdb_end != nullptr) *rdb_end = stats.bytes;
    loaded_replication_ = {};
    int64_t offset = -1, db = -1;
    if (ok && !stats.Aux("repl-id").empty() && ParseInt64(stats.Aux("repl-offset"), &offset) &&
        ParseInt64(stats.Aux("repl-stream-db"), &db) && offset >= 0 && db >= 0 &&
        db < static_cast<int64_t>(dbs.size())) {
      loaded_replication_ = {stats.Aux("repl-id"), static_cast<uint64_t>(offset),
                             static_cast<int>(db)};
    }
    last_load_keys_loaded_ = stats.keys_read;
    last_load_keys_expired_ = stats.keys_expired;
    expired_at_load_ = std::move(stats.expired_names);
    libraries = std::move(stats.libraries);
  } else {
    SnapshotLoader loader(path, file.data(), EncodingLimitsOf(server_.config));
    loader.set_replace_existing(merge_on_load_);
    loader.set_name_expired(naming_expired_);
    ok = loader.Load(dbs, server_.NowMs(), progress, &server_.config.key_load_delay, error);
    const SnapshotLoadStats& stats = loader.stats();
    if (rdb_end != nullptr) *rdb_end = file.data().size();
    loaded_replication_ = ok ? stats.replication : SavedReplication();
    if (ok) {
      LogNotice("Loading Goblin snapshot written by " + stats.creator);
      LogNotice(
          "Done loading the Goblin snapshot, keys loaded: " + std::to_string(stats.keys_read) +
          ", keys expired: " + std::to_string(stats.keys_expired) + ".");
    }
    last_load_keys_loaded_ = stats.keys_read;
    last_load_keys_expired_ = stats.keys_expired;
    expired_at_load_ = stats.expired_names;
    libraries = stats.libraries;
  }
  if (!ok || !LoadFunctionLibraries(libraries, path, error)) {
    if (!keep_on_load_) server_.FlushAll();
    return false;
  }
  return true;
}

void Persistence::LogRdbLoaded(const RdbLoadStats& stats, bool log_base) const {
  LogNotice("Loading RDB produced by version " +
            (stats.Aux("redis-ver").empty() ? std::string("unknown") : stats.Aux("redis-ver")) +
            " (RDB format version " + std::to_string(stats.version) + ")");
  int64_t created = 0;
  if (ParseInt64(stats.Aux("ctime"), &created)) {
    LogNotice("RDB age " + std::to_string(server_.NowMs() / 1000 - created) + " seconds");
  }
  int64_t used = 0;
  if (ParseInt64(stats.Aux("used-mem"), &used)) {
    char mb[32];
    std::snprintf(mb, sizeof(mb), "%.2f", static_cast<double>(used) / (1024 * 1024));
    LogNotice(std::string("RDB memory usage when created ") + mb + " Mb");
  }
  if (log_base) LogNotice("RDB is base AOF");
  if (!stats.checksum_verified && stats.version >= 5) {
    LogNotice("RDB file was saved with checksum disabled: no check performed.");
  }
  if (stats.keys_empty > 0) {
    LogNotice("Skipped " + std::to_string(stats.keys_empty) + " empty keys");
  }
  LogNotice("Done loading RDB, keys loaded: " + std::to_string(stats.keys_read) +
            ", keys expired: " + std::to_string(stats.keys_expired) + ".");
}

std::vector<std::string_view> Persistence::FunctionLibraries() const {
  return server_.scripts->functions.Codes();
}

bool Persistence::LoadFunctionLibraries(const std::vector<std::string>& libraries,
                                        const std::string& path, std::string* error) {
  goblin::FunctionLibraries& functions = server_.scripts->functions;
  if (!keep_on_load_) functions.Flush();
  for (const std::string& code : libraries) {
    std::string name;
    std::string load_error;
    if (!functions.Load(code, merge_on_load_, &name, &load_error)) {
      *error = path + ": a function library does not load: " + load_error;
      if (!keep_on_load_) functions.Flush();
      return false;
    }
  }
  return true;
}

bool Persistence::ServeWhileLoading(uint64_t bytes_done, uint64_t total_bytes, uint64_t keys) {
  loading_loaded_bytes_ = std::min(bytes_done, total_bytes);
  loading_keys_ = keys;
  // DEBUG RELOAD runs inside a command: other clients wait for it rather than re-entering.
  if (!serve_while_loading_) return true;
  const int64_t now = SteadyMicros();
  if (now - last_pump_us_ < kLoadingPumpIntervalUs) return true;
  last_pump_us_ = now;
  server_.ServeEvents(0);
  // SHUTDOWN or a signal while loading: stop, as Redis does, without saving a partial keyspace.
  if (server_.shutdown_pending()) return false;
  if (loading_total_bytes_ > 0 && now - last_progress_log_us_ >= kLoadingLogIntervalUs) {
    last_progress_log_us_ = now;
    LogNotice("Loading: " + std::to_string(keys) + " keys, " +
              std::to_string(100 * loading_loaded_bytes_ / loading_total_bytes_) + "% after " +
              std::to_string((server_.NowMs() - loading_start_ms_) / 1000) + " s");
  }
  return true;
}

void Persistence::FinishLoading() {
  loading_ = false;
  server_.dirty = 0;
  server_.last_save_unix = server_.NowMs() / 1000;
}

bool Persistence::LoadLog(bool* missing, std::string* error) {
  const std::string dir = LogDirectory();
  manifest_ = AofManifest(server_.config.appendfilename);
  AofManifestRefusal refusal;
  if (!manifest_.Load(dir, server_.config.appendfilename, error, &refusal) && !error->empty()) {
    if (!refusal.reason.empty()) {
      // Redis's lines, which its tests look for.
      LogWarning("*** FATAL AOF MANIFEST FILE ERROR ***");
      if (refusal.line_shown) {
        LogWarning("Reading the manifest file, at line " + std::to_string(refusal.line_number));
        LogWarning(">>> '" + refusal.line + "'");
      }
      LogWarning(*error);
      *error = refusal.reason;
    }
    return false;
  }
  if (!MoveSingleFileLogIn(error)) return false;
  if (!manifest_.base() && manifest_.incrs().empty()) {
    *missing = true;  // nothing to load: StartLog creates the files
    return false;
  }
  // Every file the manifest names must be there before any is read (Redis sizes them all
  // first): a log with a file missing is not the data set, whichever file it is.
  std::vector<std::pair<std::string, uint64_t>> files;  // name, size
  if (manifest_.base()) files.emplace_back(manifest_.base()->name, 0);
  for (const AofFile& incr : manifest_.incrs()) files.emplace_back(incr.name, 0);
  uint64_t total = 0;
  for (auto& [name, size] : files) {
    struct stat st {};
    if (::stat(JoinPath(dir, name).c_str(), &st) != 0) {
      *error = "Unable to obtain the AOF file " + name + " length. stat: " + std::strerror(errno);
      return false;
    }
    size = static_cast<uint64_t>(st.st_size);
    total += size;
  }
  loading_ = true;
  loading_start_ms_ = server_.NowMs();
  loading_total_bytes_ = total;
  loading_loaded_bytes_ = 0;
  uint64_t loaded_keys = 0, expired_keys = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [name, size] = files[i];
    // An empty file holds nothing to load (not even a snapshot's header), as in Redis.
    if (size == 0) continue;
    const bool base = i == 0 && manifest_.base();
    const bool last = i + 1 == files.size();
    const int64_t start_us = SteadyMicros();
    const uint64_t before = loading_loaded_bytes_;
    if (base) {
      if (!LoadLogBase(name, last, error)) return false;
      loaded_keys = last_load_keys_loaded_;
      expired_keys = last_load_keys_expired_;
      loading_ = true;
      loading_total_bytes_ = total;
    } else if (!ReplayLogFile(name, 0, last, error)) {
      return false;
    }
    loading_loaded_bytes_ = before + size;
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f",
                  static_cast<double>(SteadyMicros() - start_us) / 1e6);
    LogNotice(std::string("DB loaded from ") + (base ? "base" : "incr") + " file " + name + ": " +
              seconds + " seconds");
  }
  last_load_keys_loaded_ = loaded_keys;
  last_load_keys_expired_ = expired_keys;
  return true;
}

bool Persistence::MoveSingleFileLogIn(std::string* error) {
  const std::string& name = server_.config.appendfilename;
  const std::string old_path = JoinPath(server_.config.dir, name);
  const std::string dir = LogDirectory();
  const std::string new_path = JoinPath(dir, name);
  struct stat st {};
  if (::stat(old_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return true;
  // As Redis 7: when the directory is missing, or names no base and no incr file, or names
  // only a base called like the old file that is not in it yet (an upgrade that stopped
  // between writing the manifest and moving the file).
  const bool dir_exists = ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  const bool no_log = !manifest_.base() && manifest_.incrs().empty();
  const bool interrupted = manifest_.base() && manifest_.incrs().empty() &&
                           manifest_.base()->name == name && ::stat(new_path.c_str(), &st) != 0;
  if (dir_exists && !no_log && !interrupted) return true;
  if (!CreateDirectoryIfMissing(dir, error)) {
    *error = "Can't open or create append-only dir " + server_.config.appenddirname + ": " + *error;
    return false;
  }
  // The manifest first: a crash before the move leaves the "interrupted" layout above.
  AofManifest upgraded(name);
  upgraded.FinishRewrite(name, "");
  if (!upgraded.Persist(dir, error)) return false;
  if (::rename(old_path.c_str(), new_path.c_str()) != 0) {
    *error = "Error trying to move the old AOF file " + name + " into dir " +
             server_.config.appenddirname + ": " + std::strerror(errno);
    return false;
  }
  if (!FsyncDirectory(dir, error) || !FsyncDirectory(server_.config.dir, error)) return false;
  manifest_ = std::move(upgraded);
  LogNotice("Successfully migrated an old-style AOF file (" + name + ") into the AOF directory (" +
            server_.config.appenddirname + ").");
  return true;
}

bool Persistence::LoadLogBase(const std::string& name, bool last, std::string* error) {
  const std::string path = JoinPath(LogDirectory(), name);
  std::string head;
  {
    MappedFile file;
    bool absent = false;
    if (!file.Open(path, &absent, error)) {
      *error = "Fatal error: can't open the append log file " + name + " for reading: " + *error;
      return false;
    }
    head = std::string(file.data().substr(0, snapshot::kMagic.size()));
  }
  if (!IsRdbFile(head) && head != snapshot::kMagic) {
    // Commands, as Redis writes with aof-use-rdb-preamble no: replayed like an incr file (this
    // is how a Redis append-only directory, or a pre-7.0 log, moves to Goblin).
    return ReplayLogFile(name, 0, last, error);
  }
  // A pre-7.0 log (named as the log itself) may go on with commands after its RDB part.
  const bool old_style = IsRdbFile(head) && name == server_.config.appendfilename;
  if (IsRdbFile(head)) {
    LogNotice(old_style ? "Reading RDB preamble from AOF file..."
                        : "Reading RDB base file on AOF loading...");
  }
  bool absent = false;
  uint64_t rdb_end = 0;
  if (!LoadSnapshot(path, &absent, error, /*log_base=*/true, old_style ? &rdb_end : nullptr)) {
    LogWarning(*error);
    *error = (old_style ? "Error reading the RDB preamble of the AOF file "
                        : "Error reading the RDB base file ") +
             name + ", AOF loading aborted";
    return false;
  }
  if (!old_style) return true;
  LogNotice("Reading the remaining AOF tail...");
  loading_ = true;
  return ReplayLogFile(name, rdb_end, last, error);
}

bool Persistence::ReplayLogFile(const std::string& name, uint64_t offset, bool last,
                                std::string* error) {
  const std::string path = JoinPath(LogDirectory(), name);
  std::string file;
  if (!ReadWholeFile(path, &file, error)) {
    *error = "Fatal error: can't open the append log file " + name + " for reading: " + *error;
    return false;
  }
  const std::string_view data =
      std::string_view(file).substr(std::min<size_t>(offset, file.size()));
  Client replay(0, -1, ClientKind::kAofReplay);
  replay.authenticated = true;
  replaying_ = true;
  server_.effects.Suspend();
  const uint64_t base_bytes = loading_loaded_bytes_;
  uint64_t commands = 0;
  bool unknown_command = false;
  std::vector<std::string_view> argv;
  const AofReplayResult result =
      ReplayAof(data, [&](std::span<const std::string_view> command, std::string* what) {
        if (server_.commands.Find(command[0]) == nullptr) {
          *what = "Unknown command '" + std::string(command[0]) +
                  "' reading the append only file " + name;
          unknown_command = true;
          return false;
        }
        argv.assign(command.begin(), command.end());
        server_.Dispatch(replay, argv);
        replay.output.clear();
        if (server_.config.key_load_delay != 0) SleepPerKey(server_.config.key_load_delay);
        if (++commands % 1024 == 0 || server_.config.key_load_delay != 0) {
          if (!ServeWhileLoading(base_bytes + offset, loading_total_bytes_, loading_keys_)) {
            *what = "loading interrupted by a shutdown";
            return false;
          }
        }
        return true;
      });
  server_.effects.Resume();
  replaying_ = false;
  replayed_commands_ += commands;
  loading_loaded_bytes_ = base_bytes + file.size();
  const uint64_t valid_bytes = offset + result.valid_bytes;
  switch (result.status) {
    case AofReplayResult::Status::kOk:
      return true;
    case AofReplayResult::Status::kTruncated:
      // Redis's lines, in its order.
      if (result.in_transaction) {
        LogWarning("Revert incomplete MULTI/EXEC transaction in AOF file " + name);
      }
      if (server_.config.aof_load_truncated) {
        LogWarning("!!! Warning: short read while loading the AOF file " + name + "!!!");
        if (!last) {
          // Redis would cut it, then refuse it anyway; the file is left as it is.
          *error = "Fatal error: the truncated file is not the last file";
          return false;
        }
        LogWarning("!!! Truncating the AOF " + name + " at offset " + std::to_string(valid_bytes) +
                   " !!!");
        if (truncate(path.c_str(), static_cast<off_t>(valid_bytes)) != 0) {
          LogWarning("Error truncating the AOF file " + name + ": " + std::strerror(errno));
        } else {
          LogWarning("AOF " + name + " loaded anyway because aof-load-truncated is enabled");
          return true;
        }
      }
      LogWarning(name + ": offset " + std::to_string(valid_bytes) + ": " + result.error);
      *error = "Unexpected end of file reading the append only file " + name +
               ". You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix "
               "<filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' "
               "configuration option to yes and restart the server.";
      return false;
    case AofReplayResult::Status::kCorrupt:
      if (unknown_command || result.error == "loading interrupted by a shutdown") {
        *error = result.error;
        return false;
      }
      LogWarning(name + ": offset " + std::to_string(offset + result.error_offset) + ": " +
                 result.error);
      *error = "Bad file format reading the append only file " + name +
               ": make a backup of your AOF file, then use ./redis-check-aof --fix "
               "<filename.manifest>";
      return false;
  }
  return false;
}

// ---- Snapshots ------------------------------------------------------------------------------

std::string Persistence::Save() {
  if (child_kind_ == ChildKind::kSnapshot || child_kind_ == ChildKind::kReplication) {
    return std::string(errors::kBgsaveInProgress);
  }
  SnapshotSaveStats stats;
  std::string error;
  const int64_t start = server_.NowMs();
  if (!WriteSnapshot(SnapshotPath(), start, &stats, &error)) {
    // As Redis's foreground save: the reason is logged, the reply is a bare ERR, and only a
    // background save's failure turns on MISCONF (stop-writes-on-bgsave-error).
    LogWarning("Error saving DB on disk: " + error);
    return "ERR";
  }
  LogNotice("DB saved on disk (" + std::to_string(stats.keys) + " keys, " +
            std::to_string(stats.bytes) + " bytes)");
  server_.dirty = 0;
  server_.last_save_unix = server_.NowMs() / 1000;
  last_bgsave_ok_ = true;
  ++saves_;
  return "";
}

std::string Persistence::BackgroundSave(bool schedule, bool* scheduled) {
  *scheduled = false;
  if (child_kind_ == ChildKind::kSnapshot || child_kind_ == ChildKind::kReplication) {
    return std::string(errors::kBgsaveInProgress);
  }
  if (child_kind_ == ChildKind::kRewrite) {
    if (!schedule) {
      return "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
             "SCHEDULE in order to schedule a BGSAVE whenever possible.";
    }
    bgsave_scheduled_ = true;
    *scheduled = true;
    return "";
  }
  std::string error;
  if (!StartChild(ChildKind::kSnapshot, SnapshotPath(), &error)) {
    last_bgsave_ok_ = false;
    return "ERR " + error;
  }
  return "";
}

void Persistence::StopSnapshotChild() {
  if (child_kind_ != ChildKind::kSnapshot && child_kind_ != ChildKind::kReplication) return;
  LogNotice("Killing the background saving child " + std::to_string(child_pid_) +
            ": its keyspace was flushed");
  KillChild();
}

bool Persistence::StartReplicationSnapshot(const SyncSnapshotTarget& target, std::string* error) {
  sync_target_ = target;
  return StartChild(ChildKind::kReplication, target.path, error);
}

std::string Persistence::DebugReload(bool save, bool flush, bool merge) {
  if (loading_) return std::string(errors::kLoading);
  if (save) {
    if (std::string error = Save(); !error.empty()) return error;
  }
  if (flush) server_.FlushAll();
  bool missing = false;
  std::string error;
  serve_while_loading_ = false;
  // Without MERGE a key of the file already present fails the load (Redis panics there).
  merge_on_load_ = merge;
  keep_on_load_ = !flush;
  const bool ok = LoadSnapshot(SnapshotPath(), &missing, &error);
  merge_on_load_ = false;
  keep_on_load_ = false;
  serve_while_loading_ = true;
  if (!ok) {
    FinishLoading();
    LogWarning("DEBUG RELOAD failed: " + error);
    return "ERR Error trying to load the RDB dump, check server logs.";
  }
  FinishLoading();
  LogNotice("DB reloaded by DEBUG RELOAD");
  return "";
}

std::string Persistence::DebugLoadLog() {
  if (loading_) return std::string(errors::kLoading);
  FlushLog();
  server_.FlushAll();
  bool missing = false;
  std::string error;
  serve_while_loading_ = false;
  const bool ok = LoadLog(&missing, &error);
  serve_while_loading_ = true;
  FinishLoading();
  if (!ok) {
    LogWarning("DEBUG LOADAOF failed: " + (missing ? std::string("no append-only file") : error));
    return "ERR Error trying to load the AOF files, check server logs.";
  }
  server_.dirty = 0;
  LogNotice("Append Only File loaded by DEBUG LOADAOF");
  return "";
}

bool Persistence::LoadFromMaster(const std::string& path, std::string* error) {
  // A child's image is of the data set about to go.
  if (child_running()) KillChild();
  const bool logging = aof_ != nullptr;
  if (logging) StopLog();
  server_.FlushAll();
  bool missing = false;
  const bool ok = LoadSnapshot(path, &missing, error);
  FinishLoading();
  if (!ok) server_.FlushAll();
  if (logging) {
    std::string log_error;
    if (!StartLog(/*keyspace_from_log=*/false, &log_error)) {
      LogWarning("Can't open the append-only file after the sync with the master: " + log_error);
      aof_write_ok_ = false;
    }
  }
  return ok;
}

bool Persistence::StartChild(ChildKind kind, const std::string& target, std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  FlushLog();
  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    // The child: dies with its parent, frees the listening ports, writes, reports, exits.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    close(fds[0]);
    server_.CloseListenersInChild();
    server_.oom_score.Apply(server_.config.oom_score_adj, server_.config.oom_score_adj_values,
                            OomScore::kBackgroundChild);
    SnapshotSaveStats stats;
    std::string child_error;
    // A BGSAVE writes the configured format; an AOF rewrite always a Goblin snapshot (the base);
    // a replication child the format its replicas read.
    bool ok;
    if (kind == ChildKind::kSnapshot) {
      ok = WriteSnapshot(target, server_.NowMs(), &stats, &child_error);
    } else if (kind == ChildKind::kReplication) {
      ok = WriteSyncSnapshot(server_.NowMs(), &stats, &child_error);
    } else {
      ok = WriteSnapshotFile(Databases(), FunctionLibraries(), target, server_.NowMs(), &stats,
                             &child_error, {}, server_.config.rdb_key_save_delay);
    }
    if (!ok) LogWarning("Background save error: " + child_error);
    // As Redis's child says it (its lines carry the C of a child, log.h); a diskless sync's
    // child saves nothing on disk.
    const bool to_disk =
        kind == ChildKind::kSnapshot || (kind == ChildKind::kReplication && sync_target_.fd < 0);
    if (ok && to_disk) LogNotice("DB saved on disk");
    // The private pages that were written: copied on write.
    const uint64_t cow = SmapsBytes("Private_Dirty");
    ssize_t ignored = write(fds[1], &cow, sizeof(cow));
    (void)ignored;
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  child_kind_ = kind;
  child_pid_ = pid;
  server_.SetChildSharesPages(true);
  child_pipe_ = fds[0];
  child_start_ms_ = server_.NowMs();
  child_target_ = target;
  dirty_at_fork_ = server_.dirty;
  if (kind == ChildKind::kReplication && sync_target_.fd >= 0) {
    LogNotice("Background RDB transfer started by pid " + std::to_string(pid));
  } else if (kind == ChildKind::kSnapshot || kind == ChildKind::kReplication) {
    if (kind == ChildKind::kSnapshot) last_bgsave_try_ms_ = child_start_ms_;
    LogNotice("Background saving started by pid " + std::to_string(pid));
  } else {
    LogNotice("Background append only file rewriting started by pid " + std::to_string(pid));
  }
  return true;
}

void Persistence::ReapChild(bool block) {
  if (child_pid_ < 0) return;
  int status = 0;
  const pid_t done = waitpid(child_pid_, &status, block ? 0 : WNOHANG);
  if (done == 0) return;
  const bool ok = done == child_pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  ChildDone(ok, server_.NowMs());
}

void Persistence::ChildDone(bool ok, int64_t now_ms) {
  uint64_t cow = 0;
  if (read(child_pipe_, &cow, sizeof(cow)) != static_cast<ssize_t>(sizeof(cow))) cow = 0;
  close(child_pipe_);
  child_pipe_ = -1;
  const ChildKind kind = child_kind_;
  child_kind_ = ChildKind::kNone;
  child_pid_ = -1;
  server_.SetChildSharesPages(false);
  const int64_t seconds = (now_ms - child_start_ms_) / 1000;
  if (kind == ChildKind::kReplication) {
    const bool diskless = sync_target_.fd >= 0;
    if (ok) {
      LogNotice(diskless ? "Background RDB transfer terminated with success"
                         : "Background saving terminated with success");
    } else {
      LogWarning(diskless ? "Background transfer error" : "Background saving error");
    }
    server_.replication->SnapshotDone(ok, child_target_);
    return;
  }
  if (kind == ChildKind::kSnapshot) {
    last_bgsave_ok_ = ok;
    last_bgsave_seconds_ = seconds;
    if (ok) {
      server_.dirty -= std::min(server_.dirty, dirty_at_fork_);
      server_.last_save_unix = now_ms / 1000;  // Redis stamps the end of the save
      last_cow_bytes_ = cow;
      ++saves_;
      LogNotice("Background saving terminated with success");
    } else {
      LogWarning("Background saving error");
    }
    return;
  }
  last_rewrite_ok_ = ok;
  last_rewrite_seconds_ = seconds;
  if (!ok) {
    ++rewrite_failures_;
    LogWarning("Background AOF rewrite terminated with error");
    return;
  }
  aof_last_cow_bytes_ = cow;
  ++rewrites_;
  std::string error;
  const std::string dir = LogDirectory();
  const std::string base_name = child_target_.substr(child_target_.rfind('/') + 1);
  // The files the new base replaces are deleted once the manifest no longer names them (a
  // crash in between leaves unnamed files behind, never a manifest naming missing ones).
  // The switch is made on a copy and kept only once it is on disk.
  AofManifest next = manifest_;
  if (!next.FinishRewrite(base_name, rewrite_first_incr_)) {
    error = "cannot record the new base " + base_name;
  }
  const std::vector<std::string> replaced = next.TakeHistory();
  if (!error.empty() || !next.Persist(dir, &error)) {
    // The old manifest, on disk and here, still describes a complete log: nothing is lost.
    LogWarning("Can't persist the AOF manifest: " + error);
    unlink(child_target_.c_str());
    return;
  }
  manifest_ = std::move(next);
  for (const std::string& old : replaced) unlink(JoinPath(dir, old).c_str());
  aof_history_size_ = ClosedLogBytes();
  aof_base_size_ = aof_history_size_ + (aof_ ? aof_->size() : 0);
  log_durable_ = aof_ != nullptr;
  LogNotice("Background AOF rewrite finished successfully");
}

void Persistence::KillChild() {
  if (child_pid_ < 0) return;
  kill(child_pid_, SIGUSR1);
  kill(child_pid_, SIGKILL);
  int status;
  waitpid(child_pid_, &status, 0);
  // A diskless sync's child writes no file.
  if (!child_target_.empty())
    unlink((child_target_ + ".tmp-" + std::to_string(child_pid_)).c_str());
  close(child_pipe_);
  child_pipe_ = -1;
  child_pid_ = -1;
  server_.SetChildSharesPages(false);
  const ChildKind kind = child_kind_;
  child_kind_ = ChildKind::kNone;
  // The replicas waiting for the snapshot are dropped; they come back for another.
  if (kind == ChildKind::kReplication) server_.replication->SnapshotDone(false, child_target_);
}

// ---- Append-only file -----------------------------------------------------------------------

bool Persistence::StartLog(bool keyspace_from_log, std::string* error) {
  const std::string dir = LogDirectory();
  if (!CreateDirectoryIfMissing(dir, error)) return false;
  if (!keyspace_from_log) {
    // The keyspace came from elsewhere (the log was turned on while a snapshot loaded): files
    // already in the directory only lend their numbering; a new base replaces them all.
    manifest_ = AofManifest(server_.config.appendfilename);
    std::string ignored;
    manifest_.Load(dir, server_.config.appendfilename, &ignored);
  }
  if (manifest_.empty()) manifest_ = AofManifest(server_.config.appendfilename);
  // As Redis's aofOpenIfNeededOnServerStart: a log that names a base or an incr file is kept
  // as it is (no base is written for it, even when it has none); writes go on at the end of
  // the newest incr file (its torn tail, if any, was cut while loading), or into a new one.
  const bool keep_log = keyspace_from_log && (manifest_.base() || !manifest_.incrs().empty());
  auto writer = std::make_unique<AofWriter>();
  std::string incr;
  const bool reopen = keyspace_from_log && !manifest_.incrs().empty();
  if (reopen) {
    incr = manifest_.incrs().back().name;
  } else {
    incr = manifest_.NextIncrName();
    manifest_.AddIncr(incr);
  }
  if (!writer->Open(JoinPath(dir, incr), error)) return false;
  if (!keep_log) {
    // A fresh log starts from a base holding the keyspace as loaded (empty on a first start:
    // with appendonly yes Redis ignores the snapshot), written here in the foreground.
    const std::string base = manifest_.NextBaseName();
    SnapshotSaveStats stats;
    if (!WriteSnapshotFile(Databases(), FunctionLibraries(), JoinPath(dir, base), server_.NowMs(),
                           &stats, error)) {
      return false;
    }
    if (!manifest_.FinishRewrite(base, incr)) {
      *error = "cannot record the AOF base in the manifest";
      return false;
    }
    LogNotice("Creating AOF base file " + base + " on server start");
  }
  LogNotice(std::string(reopen ? "Opening" : "Creating") + " AOF incr file " + incr +
            " on server start");
  const std::vector<std::string> replaced = manifest_.TakeHistory();
  if (!manifest_.Persist(dir, error)) return false;
  for (const std::string& old : replaced) unlink(JoinPath(dir, old).c_str());
  aof_ = std::move(writer);
  server_.effects.AddConsumer(this);
  aof_write_ok_ = true;
  log_durable_ = true;
  durable_floor_ = server_.replication->offset();
  aof_history_size_ = ClosedLogBytes();
  aof_base_size_ = aof_history_size_;
  return true;
}

uint64_t Persistence::ClosedLogBytes() const {
  const std::string dir = LogDirectory();
  const std::string current = aof_ ? aof_->path().substr(aof_->path().rfind('/') + 1) : "";
  uint64_t bytes = manifest_.base() ? FileSize(JoinPath(dir, manifest_.base()->name)) : 0;
  for (const AofFile& incr : manifest_.incrs()) {
    if (incr.name != current) bytes += FileSize(JoinPath(dir, incr.name));
  }
  return bytes;
}

void Persistence::StopLog() {
  if (child_kind_ == ChildKind::kRewrite) KillChild();
  if (aof_) aof_->Close();
  aof_.reset();
  server_.effects.RemoveConsumer(this);
  rewrite_scheduled_ = false;
  log_durable_ = false;
}

void Persistence::ConsumeEffects(std::span<const Effect> effects) {
  if (aof_ == nullptr || replaying_) return;
  std::vector<std::string_view> argv;
  for (const Effect& effect : effects) {
    // Not a PUBLISH (replayed, it would deliver again), nor what a script sent to replicas only.
    if (!(effect.targets & kToLog)) continue;
    argv.assign(effect.argv.begin(), effect.argv.end());
    aof_->Append(effect.db, argv);
  }
  server_.replication->CountUnreplicated(effects.size());
}

void Persistence::FlushLog() {
  if (aof_ == nullptr || !aof_->has_pending()) return;
  // Every unit logged so far has reached the stream's offset too (replication consumes after
  // the log, and a replica counts a command once it ran).
  aof_->MarkOffset(server_.replication->offset());
  std::string error;
  const bool ok = aof_->Flush(fsync_policy_, &error);
  if (!ok && aof_write_ok_) LogWarning("Error writing to the AOF file: " + error);
  aof_write_ok_ = ok;
}

int64_t Persistence::FsyncedOffset() const {
  if (aof_ == nullptr || !log_durable_) return -1;
  if (fsync_policy_ != AppendFsync::kNo && aof_->AllSynced()) {
    return static_cast<int64_t>(server_.replication->offset());
  }
  return static_cast<int64_t>(std::max(durable_floor_, aof_->SyncedOffset()));
}

std::string Persistence::RewriteLog(bool* scheduled) {
  *scheduled = false;
  if (child_kind_ == ChildKind::kRewrite) {
    return "ERR Background append only file rewriting already in progress";
  }
  if (child_kind_ == ChildKind::kSnapshot || child_kind_ == ChildKind::kReplication) {
    rewrite_scheduled_ = true;
    *scheduled = true;
    return "";
  }
  std::string error;
  const std::string dir = LogDirectory();
  if (!CreateDirectoryIfMissing(dir, &error)) return "ERR " + error;
  rewrite_first_incr_.clear();
  if (aof_ == nullptr) {
    // With the log off the rewrite only writes a base (Redis does the same).
    manifest_ = AofManifest(server_.config.appendfilename);
    std::string ignored;
    manifest_.Load(dir, server_.config.appendfilename, &ignored);
  } else {
    // Writes from now on go to a new incremental file, listed before the child starts.
    const AofManifest before = manifest_;
    const std::string previous = aof_->path();
    const std::string incr = manifest_.NextIncrName();
    if (!aof_->SwitchTo(JoinPath(dir, incr), &error)) return "ERR " + error;
    manifest_.AddIncr(incr);
    if (!manifest_.Persist(dir, &error)) {
      // Writes must go on to a file the manifest on disk names.
      manifest_ = before;
      std::string ignored;
      aof_->SwitchTo(previous, &ignored);
      unlink(JoinPath(dir, incr).c_str());
      return "ERR " + error;
    }
    rewrite_first_incr_ = incr;
  }
  const std::string base = JoinPath(dir, manifest_.NextBaseName());
  if (!StartChild(ChildKind::kRewrite, base, &error)) {
    last_rewrite_ok_ = false;
    return "ERR " + error;
  }
  return "";
}

std::string Persistence::OnConfigChange(std::string_view name) {
  if (name == "appendfsync") fsync_policy_ = ParseAppendFsync(server_.config.appendfsync);
  if (name != "appendonly") return "";
  if (loading_) return "";  // LoadAtStartup opens (or not) the log when the load ends
  if (server_.config.appendonly && aof_ == nullptr) {
    std::string error;
    if (child_kind_ == ChildKind::kSnapshot || child_kind_ == ChildKind::kReplication) {
      KillChild();
    }
    manifest_ = AofManifest(server_.config.appendfilename);
    std::string ignored;
    manifest_.Load(LogDirectory(), server_.config.appendfilename, &ignored);
    // A running server's keyspace goes into a new base written by a child; the incr file
    // opened first catches every write made meanwhile. The manifest on disk changes only when
    // the base is done (ChildDone): until then it names the old, complete log, never a new
    // incr file without the base it continues.
    const std::string dir = LogDirectory();
    if (!CreateDirectoryIfMissing(dir, &error)) return "ERR " + error;
    const std::string incr = manifest_.NextIncrName();
    auto writer = std::make_unique<AofWriter>();
    if (!writer->Open(JoinPath(dir, incr), &error)) return "ERR " + error;
    manifest_.AddIncr(incr);
    aof_ = std::move(writer);
    server_.effects.AddConsumer(this);
    rewrite_first_incr_ = incr;
    aof_history_size_ = 0;
    // Nothing counts as fsynced to the log until its base is written (ChildDone).
    log_durable_ = false;
    durable_floor_ = server_.replication->offset();
    if (!StartChild(ChildKind::kRewrite, JoinPath(dir, manifest_.NextBaseName()), &error)) {
      StopLog();
      return "ERR " + error;
    }
  } else if (!server_.config.appendonly && aof_ != nullptr) {
    StopLog();
  }
  return "";
}

// ---- Periodic work and shutdown -------------------------------------------------------------

void Persistence::Tick(int64_t now_ms) {
  ReapChild(false);
  if (child_kind_ != ChildKind::kNone) return;
  bool scheduled = false;
  if (rewrite_scheduled_) {
    rewrite_scheduled_ = false;
    RewriteLog(&scheduled);
    return;
  }
  if (bgsave_scheduled_) {
    bgsave_scheduled_ = false;
    BackgroundSave(false, &scheduled);
    return;
  }
  const int64_t since_save = now_ms / 1000 - server_.last_save_unix;
  for (const SaveRule& rule : server_.config.save) {
    if (server_.dirty >= static_cast<uint64_t>(rule.changes) && since_save >= rule.seconds &&
        (last_bgsave_ok_ || now_ms - last_bgsave_try_ms_ > kBgsaveRetryDelayMs)) {
      LogNotice(std::to_string(rule.changes) + " changes in " + std::to_string(rule.seconds) +
                " seconds. Saving...");
      BackgroundSave(false, &scheduled);
      return;
    }
  }
  if (aof_ != nullptr && server_.config.auto_aof_rewrite_percentage > 0) {
    const uint64_t size = aof_history_size_ + aof_->size();
    const uint64_t base = std::max<uint64_t>(aof_base_size_, 1);
    if (size >= static_cast<uint64_t>(server_.config.auto_aof_rewrite_min_size) &&
        (size - std::min(size, base)) * 100 / base >=
            static_cast<uint64_t>(server_.config.auto_aof_rewrite_percentage)) {
      LogNotice("Starting automatic rewriting of AOF on " +
                std::to_string((size - std::min(size, base)) * 100 / base) + "% growth");
      RewriteLog(&scheduled);
    }
  }
}

bool Persistence::PrepareShutdown(bool save, bool nosave, std::string* error) {
  KillChild();
  FlushLog();
  // A keyspace still loading (or whose load was cut short) is partial: saving it would
  // replace a good snapshot.
  if ((save || !server_.config.save.empty()) && !nosave && !loading_ && !load_interrupted_) {
    LogNotice("Saving the final snapshot before exiting.");
    const std::string failure = Save();
    if (!failure.empty()) {
      // The server may go on (a shutdown without FORCE is cancelled): the log stays open.
      *error = failure;
      return false;
    }
  }
  if (aof_) aof_->Close();
  return true;
}

std::string Persistence::RefuseWrites() const {
  if (server_.config.stop_writes_on_bgsave_error && !server_.config.save.empty() &&
      !last_bgsave_ok_) {
    return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
           "persist to disk. Commands that may modify the data set are disabled, because this "
           "instance is configured to report errors during writes if RDB snapshotting fails "
           "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
           "the RDB error.";
  }
  if (aof_ != nullptr && !aof_write_ok_) {
    return "MISCONF Errors writing to the AOF file: see the server log";
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> Persistence::InfoFields(int64_t now_ms) const {
  std::vector<std::pair<std::string, std::string>> f;
  auto add = [&](std::string name, auto value) {
    if constexpr (std::is_convertible_v<decltype(value), std::string>) {
      f.emplace_back(std::move(name), std::string(value));
    } else {
      f.emplace_back(std::move(name), std::to_string(value));
    }
  };
  const bool bgsave = child_kind_ == ChildKind::kSnapshot || child_kind_ == ChildKind::kReplication;
  const bool rewrite = child_kind_ == ChildKind::kRewrite;
  const int64_t child_seconds = child_pid_ >= 0 ? (now_ms - child_start_ms_) / 1000 : -1;
  add("loading", loading_ ? "1" : "0");
  add("async_loading", "0");
  if (loading_) {
    const int64_t elapsed = std::max<int64_t>(0, (now_ms - loading_start_ms_) / 1000);
    const double percent = loading_total_bytes_ == 0
                               ? 0.0
                               : 100.0 * static_cast<double>(loading_loaded_bytes_) /
                                     static_cast<double>(loading_total_bytes_);
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f", percent);
    int64_t eta = 1;
    if (loading_loaded_bytes_ > 0 && elapsed > 0) {
      eta = static_cast<int64_t>((loading_total_bytes_ - loading_loaded_bytes_) * elapsed /
                                 loading_loaded_bytes_);
    }
    add("loading_start_time", loading_start_ms_ / 1000);
    add("loading_total_bytes", loading_total_bytes_);
    add("loading_rdb_used_mem", 0);
    add("loading_loaded_bytes", loading_loaded_bytes_);
    add("loading_loaded_perc", std::string(text));
    add("loading_eta_seconds", eta);
    add("loading_loaded_keys", loading_keys_);
  }
  add("current_cow_peak", 0);
  add("current_cow_size", 0);
  add("current_cow_size_age", 0);
  add("current_fork_perc", "0.00");
  add("current_save_keys_processed", 0);
  add("current_save_keys_total", 0);
  add("rdb_changes_since_last_save", server_.dirty);
  add("rdb_bgsave_in_progress", bgsave ? 1 : 0);
  add("rdb_last_save_time", server_.last_save_unix);
  add("rdb_last_bgsave_status", last_bgsave_ok_ ? "ok" : "err");
  add("rdb_last_bgsave_time_sec", last_bgsave_seconds_);
  add("rdb_current_bgsave_time_sec", bgsave ? child_seconds : -1);
  add("rdb_saves", saves_);
  add("rdb_last_cow_size", last_cow_bytes_);
  add("rdb_last_load_keys_expired", last_load_keys_expired_);
  add("rdb_last_load_keys_loaded", last_load_keys_loaded_);
  add("aof_enabled", aof_ != nullptr ? 1 : 0);
  add("aof_rewrite_in_progress", rewrite ? 1 : 0);
  add("aof_rewrite_scheduled", rewrite_scheduled_ ? 1 : 0);
  add("aof_last_rewrite_time_sec", last_rewrite_seconds_);
  add("aof_current_rewrite_time_sec", rewrite ? child_seconds : -1);
  add("aof_last_bgrewrite_status", last_rewrite_ok_ ? "ok" : "err");
  add("aof_rewrites", rewrites_);
  add("aof_rewrites_consecutive_failures", rewrite_failures_);
  add("aof_last_write_status", aof_write_ok_ && (!aof_ || aof_->last_write_ok()) ? "ok" : "err");
  add("aof_last_cow_size", aof_last_cow_bytes_);
  add("module_fork_in_progress", 0);
  add("module_fork_last_cow_size", 0);
  if (aof_ != nullptr) {
    add("aof_current_size", aof_history_size_ + aof_->size());
    add("aof_base_size", aof_base_size_);
    add("aof_pending_rewrite", rewrite_scheduled_ ? 1 : 0);
    add("aof_buffer_length", 0);
    add("aof_pending_bio_fsync", 0);
    add("aof_delayed_fsync", 0);
  }
  return f;
}

}  // namespace goblin
