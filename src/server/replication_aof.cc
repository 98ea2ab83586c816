// WAITAOF numlocal numreplicas timeout (Redis 7.2): a client waits until its last write is
// fsynced to this master's append-only file (numlocal 1) and to those of numreplicas replicas.
//
// A replica with its append-only file on reports, with every REPLCONF ACK, the offset of the
// stream it has fsynced: REPLCONF ACK <offset> FACK <fsynced>. Redis 7.0 masters read the ACK
// and ignore the rest. This master's own fsynced offset is Persistence::FsyncedOffset; a
// master without a backlog counts master_repl_offset up by one per logged command, as
// Redis 7.2 does, so that a client's last write has an offset to wait for.
#include <algorithm>

#include "server/errors.h"
#include "server/master_link.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

void Replication::AcknowledgeFsynced(Client& client, uint64_t offset) {
  if (!client.is_replica()) return;
  client.replica.fsynced_offset = std::max(client.replica.fsynced_offset, offset);
}

int64_t Replication::CountFsynced(uint64_t offset) const {
  int64_t count = 0;
  for (Client* client : Replicas()) {
    if (client->replica.state == ReplicaState::kOnline &&
        client->replica.fsynced_offset >= offset) {
      ++count;
    }
  }
  return count;
}

void Replication::AddAofWaiter(Client& client) {
  aof_waiters_.push_back(client.id);
  ack_requested_ = true;
}

void Replication::CountUnreplicated(size_t commands) {
  if (backlog_ || server_.master_link->is_replica()) return;
  offset_ += commands;
}

void Replication::ReleaseAofWaiters() {
  const std::vector<uint64_t> waiting = std::move(aof_waiters_);
  aof_waiters_.clear();
  const int64_t fsynced = server_.persistence->FsyncedOffset();
  for (uint64_t id : waiting) {
    Client* client = server_.FindClient(id);
    if (client == nullptr || !client->blocked || !client->block.waits_for_fsync) continue;
    const BlockState& block = client->block;
    // appendonly was turned off under a client that waits for the local fsync.
    if (block.local > 0 && !server_.config.appendonly) {
      server_.ReleaseWaitAofWithError(*client, errors::kWaitAofWithoutLog);
      continue;
    }
    const int64_t local = fsynced >= static_cast<int64_t>(block.replica_offset) ? 1 : 0;
    const int64_t replicas = CountFsynced(block.replica_offset);
    if (local >= block.local && replicas >= block.replicas) {
      server_.ReleaseWaitAof(*client, local, replicas);
    } else {
      aof_waiters_.push_back(id);
    }
  }
}

}  // namespace goblin
