// The tick, hz times a second: background work in bounded slices (active expiry, client
// timeouts and query buffers, eviction, persistence's children and rules, MIGRATE's idle
// connections, ops/sec samples).
#include <algorithm>

#include "server/cluster/cluster.h"
#include "server/cycle_clock.h"
#include "server/failover.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

void Server::Tick() {
  if (cron_paused) return;
  int64_t now = NowMs();
  int64_t tick_ms = 1000 / std::max<int64_t>(config.hz, 1);
  // A client pause holds the data still: no key expires or is evicted in the background.
  // A replica's keys go when its master's DEL comes (Database::ExpiryRules), but for those its
  // own clients wrote with deadlines (ExpireOwnKeys).
  if (active_expire_enabled && !paused() && !master_link->is_replica()) {
    // In slices of 256 visited entries per database: at least kMinVisits entries, then on
    // only while a slice finds more than 10% of its entries expired (Redis's acceptable stale
    // ratio), so that keys with distant deadlines cost little; at most a quarter of the tick
    // and one pass over the database.
    constexpr size_t kSlice = 256;
    constexpr size_t kMinVisits = 2048;
    int64_t deadline = SteadyMicros() + tick_ms * 250;
    for (Database& db : dbs_) {
      size_t visited = 0;
      while (db.expires() > 0 && visited < db.size() && SteadyMicros() < deadline) {
        const Database::ExpireSweep sweep = db.ActiveExpire(now, kSlice);
        visited += sweep.visited;
        if (visited >= kMinVisits && sweep.deleted * 10 <= sweep.visited) break;
      }
    }
    ExpireHashFields(now, deadline);
  }
  if (active_expire_enabled && !paused() && master_link->is_replica()) ExpireOwnKeys(now);
  if (config.timeout > 0) {
    for (auto& [fd, client] : clients_by_fd_) {
      // Replicas are not idle clients: repl-timeout watches them.
      if (!client->is_replica() && client->kind != ClientKind::kMaster &&
          now - client->last_interaction_ms > config.timeout * 1000) {
        clients_to_close_.push_back(client.get());
      }
    }
    CloseClientsToClose();
  }
  // Once a second, as Redis's client cron visits each client: query buffers an idle or calmer
  // client no longer needs, and reply blocks with nothing left to send, go back to the
  // allocator.
  if (now - query_buffers_resized_ms_ >= 1000) {
    query_buffers_resized_ms_ = now;
    for (auto& [fd, client] : clients_by_fd_) {
      // A client that reads nothing gets no write round: its soft limit's time is judged
      // here, as Redis's client cron judges it.
      if (client->kind != ClientKind::kMaster && !client->close_after_reply &&
          client->pending_output() > 0 && DropOverOutputLimit(*client)) {
        continue;
      }
      client->input.ResizeForIdleOrPeak(now - client->last_interaction_ms > 2000,
                                        client->parser.bytes_needed());
      if (reply_buffer_resizing && client->output.ReleaseIfEmpty()) ++stats.reply_buffer_shrinks;
      CountClientMemory(*client, /*every_client=*/true);  // what changed without a write
    }
    EvictClients();
  }
  // Catches a tracking-table-max-keys lowered by CONFIG SET while no command came.
  if (tracking.clients() > 0) tracking.LimitTableSize();
  UsedMemory();
  // Goes on with eviction a command left unfinished, and catches a limit lowered by CONFIG SET
  // or memory other threads took while no command came.
  if (config.maxmemory > 0 && !paused()) evictor.Perform();
  persistence->Tick(now);
  if (migrate_connections.size() > 0) migrate_connections.CloseIdle(now / 1000);
  replication->Tick(now);
  failover->Update(now);
  if (cluster_mode != nullptr) cluster_mode->Cron(now);
  if (now - stats.last_sample_ms >= 100) {
    double seconds = static_cast<double>(now - stats.last_sample_ms) / 1000.0;
    uint64_t ops = stats.total_commands_processed - stats.ops_at_last_sample;
    stats.ops_samples[stats.ops_sample_index++ % 16] =
        stats.last_sample_ms ? static_cast<double>(ops) / seconds : 0;
    stats.ops_at_last_sample = stats.total_commands_processed;
    stats.last_sample_ms = now;
  }
}

}  // namespace goblin
