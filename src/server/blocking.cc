// Blocking commands (server.h: BlockClient): the queues of clients waiting on keys, their
// wake-up when a key changes, timeouts, CLIENT UNBLOCK.
#include <algorithm>

#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

void Server::BlockClient(Client& client, const std::vector<std::string_view>& argv,
                         const std::vector<std::string_view>& keys, int64_t deadline_ms,
                         ValueType waits_for, bool retries_without_key, int64_t retry_at_ms) {
  if (client.retrying_block) {  // still nothing to serve: keep its place
    client.block_requested = true;
    SetBlockRetry(client, retry_at_ms);
    return;
  }
  BlockState& block = client.block;
  client.blocked = true;
  block.db = client.db;
  block.deadline_ms = deadline_ms;
  block.waits_for = waits_for;
  block.retries_without_key = retries_without_key;
  block.argv.assign(argv.begin(), argv.end());
  block.keys.clear();
  KeyWaiters& waiters = waiters_[static_cast<size_t>(client.db)];
  for (std::string_view key : keys) {
    if (std::find(block.keys.begin(), block.keys.end(), key) != block.keys.end()) continue;
    block.keys.emplace_back(key);
    waiters.blocked[std::string(key)].push_back(client.id);
  }
  if (deadline_ms > 0) block_deadlines_.emplace(deadline_ms, client.id);
  block.retry_at_ms = 0;
  SetBlockRetry(client, retry_at_ms);
  ++stats.blocked_clients;
}

void Server::SetBlockRetry(Client& client, int64_t retry_at_ms) {
  BlockState& block = client.block;
  if (block.retry_at_ms > 0) block_retries_.erase({block.retry_at_ms, client.id});
  // A time already come (CLAIM 0 with nothing pending) waits for the next tick, as Redis looks
  // at these times once per round of its event loop: the client does not spin.
  if (retry_at_ms > 0 && retry_at_ms <= now_ms_) retry_at_ms = std::max(next_tick_ms_, now_ms_ + 1);
  block.retry_at_ms = retry_at_ms;
  if (retry_at_ms > 0) block_retries_.emplace(retry_at_ms, client.id);
}

namespace {

// client blocks until deadline_ms (0: forever) for offset to reach replicas (WAIT, WAITAOF).
BlockState& BlockForOffset(Client& client, int64_t deadline_ms, uint64_t offset, int64_t replicas) {
  BlockState& block = client.block;
  client.blocked = true;
  block = BlockState();
  block.db = client.db;
  block.deadline_ms = deadline_ms;
  block.replica_offset = offset;
  block.replicas = replicas;
  return block;
}

}  // namespace

void Server::BlockForReplicas(Client& client, int64_t deadline_ms, uint64_t offset,
                              int64_t replicas) {
  BlockForOffset(client, deadline_ms, offset, replicas).waits_for_replicas = true;
  if (deadline_ms > 0) block_deadlines_.emplace(deadline_ms, client.id);
  ++stats.blocked_clients;
  replication->AddWaiter(client);
}

void Server::CountUnblockedCall(const Client& client) {
  if (client.blocked && client.last_command != nullptr) ++client.last_command->stats.calls;
}

void Server::ReleaseWait(Client& client, int64_t acknowledged) {
  CountUnblockedCall(client);
  UnblockClient(client);
  client.reply.Integer(acknowledged);
  ResumeClient(client);
}

void Server::BlockForAof(Client& client, int64_t deadline_ms, uint64_t offset, int64_t local,
                         int64_t replicas) {
  BlockState& block = BlockForOffset(client, deadline_ms, offset, replicas);
  block.waits_for_fsync = true;
  block.local = local;
  if (deadline_ms > 0) block_deadlines_.emplace(deadline_ms, client.id);
  ++stats.blocked_clients;
  replication->AddAofWaiter(client);
}

void Server::ReleaseWaitAof(Client& client, int64_t local, int64_t replicas) {
  CountUnblockedCall(client);
  UnblockClient(client);
  client.reply.Array(2);
  client.reply.Integer(local);
  client.reply.Integer(replicas);
  ResumeClient(client);
}

void Server::ReleaseWaitAofWithError(Client& client, std::string_view error) {
  CountUnblockedCall(client);
  UnblockClient(client);
  client.reply.Error(error);
  ResumeClient(client);
}

void Server::ReplyBlockTimeout(Client& client) {
  CountUnblockedCall(client);
  if (client.block.waits_for_fsync) {
    const uint64_t offset = client.block.replica_offset;
    const int64_t local = persistence->FsyncedOffset() >= static_cast<int64_t>(offset) ? 1 : 0;
    const int64_t replicas = replication->CountFsynced(offset);
    UnblockClient(client);
    client.reply.Array(2);
    client.reply.Integer(local);
    client.reply.Integer(replicas);
  } else if (client.block.waits_for_replicas) {
    const int64_t acknowledged = replication->CountAcknowledged(client.block.replica_offset);
    UnblockClient(client);
    client.reply.Integer(acknowledged);
  } else {
    UnblockClient(client);
    client.reply.NullArray();
  }
}

void Server::UnblockClient(Client& client) {
  if (!client.blocked) return;
  BlockState& block = client.block;
  KeyWaiters& waiters = waiters_[static_cast<size_t>(block.db)];
  for (const std::string& key : block.keys) {
    auto it = waiters.blocked.find(key);
    if (it == waiters.blocked.end()) continue;
    std::erase(it->second, client.id);
    if (it->second.empty()) waiters.blocked.erase(it);
  }
  if (block.deadline_ms > 0) block_deadlines_.erase({block.deadline_ms, client.id});
  if (block.retry_at_ms > 0) block_retries_.erase({block.retry_at_ms, client.id});
  client.blocked = false;
  block = BlockState();
  --stats.blocked_clients;
}

void Server::ResumeClient(Client& client) {
  ProcessInput(client);
  Flush(client);
}

void Server::HandleReadyKeys() {
  if (handling_ready_keys_) return;  // the outer loop will see what this round adds
  handling_ready_keys_ = true;
  while (any_ready_) {
    any_ready_ = false;
    for (size_t index = 0; index < waiters_.size(); ++index) {
      KeyWaiters& waiters = waiters_[index];
      std::vector<std::string> ready = std::move(waiters.ready);
      waiters.ready.clear();
      for (const std::string& key : ready) {
        auto it = waiters.blocked.find(key);
        if (it == waiters.blocked.end()) continue;
        // Keys expire against the time now, not the round's start, as Redis updates its cached
        // time before serving each ready key: a deadline that passed while the command that
        // filled the key ran (a transaction with DEBUG SLEEP) leaves the waiters blocked.
        SetClock(std::max(now_ms_, NowMs()));
        const std::deque<uint64_t> queue = it->second;  // serving changes the real queue
        for (uint64_t id : queue) {
          Client* client = FindClient(id);
          if (client == nullptr || !client->blocked) continue;
          // A key that does not hold what the client waits for leaves it blocked.
          const KeyEntry* entry = dbs_[index].Find(key, now_ms_);
          if ((entry == nullptr || entry->type() != client->block.waits_for) &&
              !client->block.retries_without_key) {
            continue;
          }
          // block.argv stays put during the run: only UnblockClient, after it, resets it.
          std::vector<std::string_view> argv(client->block.argv.begin(), client->block.argv.end());
          client->retrying_block = true;
          client->block_requested = false;
          const Tracking::Frame tracking_frame = tracking.Enter(*client);
          Dispatch(*client, argv);
          tracking.Leave(tracking_frame, argv);
          client->retrying_block = false;
          if (client->block_requested) continue;
          UnblockClient(*client);
          ResumeClient(*client);
        }
      }
    }
  }
  handling_ready_keys_ = false;
}

void Server::HandleBlockTimeouts() {
  while (!block_deadlines_.empty() && block_deadlines_.begin()->first <= now_ms_) {
    Client* client = FindClient(block_deadlines_.begin()->second);
    if (client == nullptr) {
      block_deadlines_.erase(block_deadlines_.begin());
      continue;
    }
    ReplyBlockTimeout(*client);
    ResumeClient(*client);
  }
}

void Server::HandleBlockRetries() {
  while (!block_retries_.empty() && block_retries_.begin()->first <= now_ms_) {
    Client* client = FindClient(block_retries_.begin()->second);
    block_retries_.erase(block_retries_.begin());
    if (client == nullptr || !client->blocked) continue;
    client->block.retry_at_ms = 0;
    // As a change of the keys would: every client waiting on them runs again, in its turn.
    Database& db = dbs_[static_cast<size_t>(client->block.db)];
    for (const std::string& key : client->block.keys) db.WakeBlocked(key);
  }
  if (any_ready_) HandleReadyKeys();
}

void Server::UnblockAllClients(std::string_view error) {
  for (Client* client : ClientsById()) {
    if (!client->blocked) continue;
    CountUnblockedCall(*client);
    UnblockClient(*client);
    client->reply.Error(error);
    // As Redis: the client learns why and is closed, whatever it meant to do next.
    client->close_after_reply = true;
    Flush(*client);
  }
}

void Server::BlockForShutdown(Client& client) {
  BlockForOffset(client, 0, 0, 0).waits_for_shutdown = true;
  ++stats.blocked_clients;
}

void Server::ReleaseShutdownWait(Client& client, std::string_view error) {
  CountUnblockedCall(client);
  UnblockClient(client);
  client.reply.Error(error);
  ResumeClient(client);
}

void Server::UnblockWithError(Client& client, std::string_view error) {
  CountUnblockedCall(client);
  UnblockClient(client);
  client.reply.Error(error);
  ResumeClient(client);
}

bool Server::UnblockById(uint64_t id, bool with_error) {
  Client* client = FindClient(id);
  if (client == nullptr || !client->blocked || client->block.waits_for_shutdown) return false;
  if (with_error) {
    UnblockWithError(*client, "UNBLOCKED client unblocked via CLIENT UNBLOCK");
    return true;
  } else {
    ReplyBlockTimeout(*client);
  }
  ResumeClient(*client);
  return true;
}

}  // namespace goblin
