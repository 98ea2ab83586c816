// The server's state and what ties the layers together: databases and their waiters, clients
// by id, WATCH, error statistics, CONFIG SET's effects. The rest of Server is split by seam:
// connections.cc (listeners, the loop, client I/O), dispatch.cc (running one command),
// blocking.cc, client_pause.cc, monitor.cc, slowlog.cc (SLOWLOG and LATENCY), tick.cc.
#include "server/cluster/cluster.h"
#include "server/server.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "server/crash_report.h"
#include "server/errors.h"
#include "server/failover.h"
#include "server/keyspace_notify.h"
#include "server/log.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/script_runner.h"
#include "server/shutdown.h"

namespace goblin {

namespace {

// Redis clamps hz into this range whatever the configuration says.
constexpr int64_t kMinHz = 1;
constexpr int64_t kMaxHz = 500;

}  // namespace

Database& CommandContext::db() { return server.db(client.db); }

bool CommandContext::propagating() const { return server.effects.active(); }

void CommandContext::Propagate(std::initializer_list<std::string_view> words) {
  server.effects.Replace(client.db, words);
}

void CommandContext::Propagate(std::span<const std::string_view> words) {
  server.effects.Replace(client.db, words);
}

void CommandContext::PropagateOnlyRecorded() { server.effects.ReplaceWithNothing(); }

Server::Server(Config config_in) : config(std::move(config_in)), rng_(std::random_device{}()) {
  config.hz = std::clamp<int64_t>(config.hz, kMinHz, kMaxHz);
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    physical_memory_ = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }
  acl.set_pubsub_default(config.acl.pubsub_default == "allchannels");
  if (!config.requirepass.empty()) acl.SetDefaultPassword(config.requirepass);
  dbs_.resize(static_cast<size_t>(config.databases));
  waiters_.resize(dbs_.size());
  own_deadline_keys_.resize(dbs_.size());
  for (size_t i = 0; i < dbs_.size(); ++i) {
    dbs_[i].set_counters(&stats.keyspace);
    waiters_[i].index = static_cast<int>(i);
    waiters_[i].any_ready = &any_ready_;
    waiters_[i].events = this;
    dbs_[i].set_waiters(&waiters_[i]);
    dbs_[i].set_access_clock(&access_clock, &touch_keys_);
  }
  UpdateAccessClock();
  RecountClientMemory();
  access_clock.SetNow(NowMs());
  start_time_ms = NowMs();
  last_save_unix = start_time_ms / 1000;
  replication = std::make_unique<Replication>(*this);
  master_link = std::make_unique<MasterLink>(*this);
  failover = std::make_unique<Failover>(*this);
  shutdown = std::make_unique<Shutdown>(*this);
  persistence = std::make_unique<Persistence>(*this);
  expiry_rules_.loading = persistence->loading_flag();
  for (Database& db : dbs_) db.set_expiry_rules(&expiry_rules_);
  scripts = std::make_unique<ScriptRunner>(*this);
  if (config.cluster.enabled) {
    cluster_mode = std::make_unique<cluster::Cluster>(*this);
    // The keys of each slot are kept together: CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT.
    dbs_[0].EnableSlots();
  }
  pid = getpid();
  SetLogProcess(pid);
  run_id = RandomHexId();
  replication_id = RandomHexId();
}

std::string Server::RandomHexId() {
  static const char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 40; ++i) id.push_back(kHex[rng_() % 16]);
  return id;
}

Server::~Server() {
  // The connections close with their clients, before the event loop they are watched by.
  for (auto& [fd, client] : clients_by_fd_) {
    if (client->replica.rdb_fd >= 0) close(client->replica.rdb_fd);
  }
  for (const Listener& listener : listeners_) close(listener.fd);
  if (!config.unixsocket.empty()) unlink(config.unixsocket.c_str());
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
  // As Redis's touchAllWatchedKeysInDb, a key past its deadline counts as none: a stale key
  // replaced by none or by another stale key, or none by a stale key, is no change.
  auto touch = [this](size_t watched, size_t other) {
    for (auto& [key, watches] : waiters_[watched].watched) {
      const bool here = dbs_[watched].Contains(key);
      const KeyEntry* incoming = dbs_[other].Peek(key);
      if (!here && incoming == nullptr) continue;
      const bool incoming_stale = incoming != nullptr && Database::Expired(incoming, now_ms_);
      for (KeyWatch& watch : watches) {
        if (watch.stale && incoming == nullptr) {
          watch.stale = false;
        } else if (watch.stale && incoming_stale) {
          continue;
        } else if (!watch.stale && !here && incoming_stale) {
          watch.stale = true;
        } else {
          *watch.dirty = true;
        }
      }
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
  client.watched_key_bytes += key.size();
  const KeyEntry* entry = db(client.db).Peek(key);
  const bool stale = entry != nullptr && Database::Expired(entry, now_ms_);
  waiters_[static_cast<size_t>(client.db)].watched[std::string(key)].push_back(
      KeyWatch{&client.watch_dirty, stale});
}

bool Server::WatchedKeyExpired(const Client& client) const {
  for (const auto& [index, key] : client.watched) {
    const auto& keys = waiters_[static_cast<size_t>(index)].watched;
    auto it = keys.find(key);
    if (it == keys.end()) continue;
    for (const KeyWatch& watch : it->second) {
      if (watch.dirty != &client.watch_dirty || watch.stale) continue;
      const KeyEntry* entry = dbs_[static_cast<size_t>(index)].Peek(key);
      if (entry != nullptr && Database::Expired(entry, now_ms_)) return true;
    }
  }
  return false;
}

void Server::UnwatchAll(Client& client) {
  for (const auto& [db, key] : client.watched) {
    auto& keys = waiters_[static_cast<size_t>(db)].watched;
    auto it = keys.find(key);
    if (it == keys.end()) continue;
    std::erase_if(it->second,
                  [&](const KeyWatch& watch) { return watch.dirty == &client.watch_dirty; });
    if (it->second.empty()) keys.erase(it);
  }
  client.watched.clear();
  client.watched_key_bytes = 0;
  client.watch_dirty = false;
}

void Server::FlushAll() {
  tracking.InvalidateAll();
  for (Database& db : dbs_) db.Clear();
  for (auto& keys : own_deadline_keys_) keys.clear();
}

void Server::RecordOwnDeadlines(bool on) {
  if (on == recording_own_deadlines_) return;
  recording_own_deadlines_ = on;
  for (size_t i = 0; i < waiters_.size(); ++i) {
    waiters_[i].deadlines_set = on ? &own_deadline_keys_[i] : nullptr;
  }
}

void Server::ExpireOwnKeys(int64_t now_ms) {
  for (size_t i = 0; i < own_deadline_keys_.size(); ++i) {
    auto& keys = own_deadline_keys_[i];
    for (auto it = keys.begin(); it != keys.end();) {
      // A key gone, or without a deadline now, is forgotten; a later deadline keeps it.
      it = dbs_[i].ExpireIfDue(*it, now_ms) ? std::next(it) : keys.erase(it);
    }
  }
}

void Server::SetKeyChangeListener(KeyChangeListener* listener) {
  for (KeyWaiters& waiters : waiters_) waiters.changes = listener;
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

// Blocking commands: a handler that finds nothing to serve calls BlockClient and replies
// nothing. When one of its keys changes, the command is run again for it, oldest client
// first; a run that would block again leaves the client where it was in the queue.

void Server::CountError(std::string_view error_text) {
  ++stats.total_error_replies;
  // The code is the first word when a space ends it within Redis's 32 bytes of "-CODE ", else
  // ERR (a script's {err = 'oops'} counts as ERR).
  const size_t space = error_text.substr(0, 31).find(' ');
  std::string prefix(space == std::string_view::npos ? std::string_view("ERR")
                                                     : error_text.substr(0, space));
  // Keep errorstats bounded as Redis does (128 distinct prefixes).
  if (stats.error_counts.size() < 128 || stats.error_counts.count(prefix)) {
    ++stats.error_counts[prefix];
  }
}

// Listeners and the loop.

void Server::UpdateAccessClock() {
  access_clock.lfu = config.maxmemory_policy.find("lfu") != std::string::npos;
  access_clock.log_factor = config.lfu_log_factor;
  access_clock.decay_minutes = config.lfu_decay_time;
}

std::string Server::ApplyConfigChanges(const std::vector<ConfigChange>& changes) {
  bool rebind = false;
  const ConfigChange* tls_change = nullptr;  // the TLS settings load once, after the others
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
      case ConfigHook::kAccessClock:
        UpdateAccessClock();
        break;
      case ConfigHook::kClientEviction:
        RecountClientMemory();
        break;
      case ConfigHook::kReplBacklog:
        replication->ResizeBacklog();
        break;
      case ConfigHook::kAllocatorThreads:
        if (!SetAllocatorBackgroundThreads(config.jemalloc_bg_thread)) {
          return errors::ConfigSetFailed(change.name, "Failed to set background threads");
        }
        break;
      case ConfigHook::kDefaultPassword:
        acl.SetDefaultPassword(config.requirepass);
        break;
      case ConfigHook::kAclPubsubDefault:
        acl.set_pubsub_default(config.acl.pubsub_default == "allchannels");
        break;
      case ConfigHook::kTlsPort:
        rebind = true;
        [[fallthrough]];
      case ConfigHook::kTlsConfigure:
        if (tls_change == nullptr) tls_change = &change;
        break;
      case ConfigHook::kCrashLog:
        ArmCrashHandler(config.crash_log_enabled);
        break;
      case ConfigHook::kOomScore:
        if (!UpdateOomScore()) {
          return errors::ConfigSetFailed(change.name,
                                         "Failed to set current oom_score_adj. Check server logs.");
        }
        break;
      case ConfigHook::kPersistence:
        if (std::string error = persistence->OnConfigChange(change.name); !error.empty()) {
          return error;
        }
        break;
    }
  }
  if (tls_change != nullptr && !ConfigureTls()) {
    return errors::ConfigSetFailed(tls_change->name,
                                   "Unable to update TLS configuration. Check server logs.");
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

bool Server::UpdateOomScore() {
  return oom_score.Apply(config.oom_score_adj, config.oom_score_adj_values,
                         config.replicaof.host.empty() ? OomScore::kMaster : OomScore::kReplica);
}

void Server::KeyExpired(int db, std::string_view key) {
  effects.Add(db, {config.lazyfree.expire ? "UNLINK" : "DEL", key});
  NotifyKeyspaceEvent(kNotifyExpired, "expired", key, db);
}

void Server::KeyMissed(int db, std::string_view key) {
  NotifyKeyspaceEvent(kNotifyKeyMiss, "keymiss", key, db);
}

void Server::KeyAdded(int db, std::string_view key) {
  if (!loading()) NotifyKeyspaceEvent(kNotifyNew, "new", key, db);
}

void Server::NotifyKeyspaceEvent(uint32_t type, std::string_view event, std::string_view key,
                                 int db) {
  const uint32_t enabled = config.notify_keyspace_events;
  if ((enabled & type) == 0) return;
  const std::string db_text = std::to_string(db);
  if (enabled & kNotifyKeyspace) {
    std::string channel = "__keyspace@" + db_text + "__:";
    channel += key;
    Publish(PubSub::kChannel, channel, event);
  }
  if (enabled & kNotifyKeyevent) {
    std::string channel = "__keyevent@" + db_text + "__:";
    channel += event;
    Publish(PubSub::kChannel, channel, key);
  }
}

void Server::DeliverPublished(bool sharded, std::string_view channel, std::string_view message) {
  Publish(sharded ? PubSub::kShard : PubSub::kChannel, channel, message);
}

void Server::DeleteKeysInSlot(int slot) {
  Database& db = dbs_[0];
  std::vector<std::string> keys;
  db.ForEachKeyInSlot(slot, db.KeysInSlot(slot),
                      [&](const KeyEntry* entry) { keys.emplace_back(entry->key()); });
  for (const std::string& key : keys) {
    db.Delete(key);
    // The replicas and the log lose the key too, as Redis propagates the deletion.
    effects.Add(0, {"DEL", key});
  }
  dirty += keys.size();
}

size_t Server::Publish(PubSub::Kind kind, std::string_view channel, std::string_view message) {
  return pubsub.Publish(
      kind, channel, message, [this](Client& subscriber) { return tracking.OutputOf(subscriber); },
      [this](Client& subscriber, const OutputBuffer* out) { tracking.Delivered(subscriber, out); });
}

bool Server::loading() const { return persistence->loading(); }

}  // namespace goblin
