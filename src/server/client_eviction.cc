// maxmemory-clients: when the memory of the clients together reaches the limit, the biggest
// clients are closed until it is below again, as Redis 7.2 does it.
//
// 1. A client's memory is ClientMemory (client.h): query buffer, replies, the client itself,
//    its MULTI queue, watched keys, subscriptions and tracking prefixes.
// 2. Only while the limit is set is it counted: Client::memory_counted is what the client adds
//    to client_memory_total_, recounted at the end of each write of its replies (Flush), before
//    each of its commands, and in the tick. Replicas and the master's link are not counted, as
//    in Redis; a CLIENT NO-EVICT client is counted, by the tick only, and never closed.
// 3. Clients are grouped in buckets by powers of two, as Redis groups them: everything under
//    32 KB in the first bucket, then [32 KB, 64 KB), ..., and 4 GB and more in the last. The
//    biggest bucket is emptied first. Within a bucket Redis takes clients in the order they
//    entered it; Goblin takes the biggest first, which is one of the orders Redis may show.
// 4. The limit is at least 128 KB whatever the option says, so that a bad setting does not
//    leave the server unreachable; a percentage of an unset maxmemory means no limit.
#include <algorithm>
#include <bit>

#include "core/string_number.h"
#include "server/log.h"
#include "server/server.h"

namespace goblin {

namespace {

constexpr int kLeastBucketLog = 15;  // the first bucket: under 32 KB
constexpr int kMostBucketLog = 33;   // the last bucket: 4 GB and more
constexpr size_t kLeastLimit = 128 * 1024;

// Whether client may be closed for maxmemory-clients (or, not counted at all).
bool Counted(const Client& client) { return client.is_connection() && !client.is_replica(); }

bool Evictable(const Client& client) {
  return Counted(client) && !client.no_evict && !client.close_after_reply;
}

}  // namespace

size_t ClientMemoryBucket(size_t memory) {
  const int bits = memory == 0 ? 0 : std::bit_width(memory);
  return static_cast<size_t>(std::clamp(bits, kLeastBucketLog, kMostBucketLog) - kLeastBucketLog);
}

size_t ClientMemoryBucketCount() { return kMostBucketLog - kLeastBucketLog + 1; }

size_t ClientMemoryBucketFloor(size_t bucket) {
  return bucket == 0 ? 0 : size_t{1} << (bucket - 1 + kLeastBucketLog);
}

void Server::RecountClientMemory() {
  const std::string& option = config.maxmemory_clients;
  int64_t value = 0;
  uint64_t limit = 0;
  if (!option.empty() && option.back() == '%') {
    ParseInt64(std::string_view(option).substr(0, option.size() - 1), &value);
    if (config.maxmemory > 0 && value > 0) {
      limit = static_cast<uint64_t>(static_cast<double>(config.maxmemory) *
                                    static_cast<double>(value) / 100.0);
    }
  } else if (ParseInt64(option, &value) && value > 0) {
    limit = static_cast<uint64_t>(value);
  }
  client_eviction_limit_ = limit == 0 ? 0 : std::max<uint64_t>(limit, kLeastLimit);
  client_memory_total_ = 0;
  for (const auto& [fd, client] : clients_by_fd_) {
    client->memory_counted = 0;
    CountClientMemory(*client, /*every_client=*/true);
  }
}

void Server::CountClientMemory(Client& client, bool every_client) {
  if (client_eviction_limit_ == 0 || !Counted(client)) return;
  if (client.no_evict && !every_client) return;
  const size_t memory = ClientMemory(client);
  client_memory_total_ = client_memory_total_ - client.memory_counted + memory;
  client.memory_counted = memory;
}

void Server::ForgetClientMemory(Client& client) {
  client_memory_total_ -= client.memory_counted;
  client.memory_counted = 0;
}

void Server::EvictClients() {
  if (client_eviction_limit_ == 0 || client_memory_total_ < client_eviction_limit_) return;
  std::vector<std::pair<size_t, Client*>> candidates;  // (memory, client)
  for (const auto& [fd, client] : clients_by_fd_) {
    if (Evictable(*client)) candidates.emplace_back(client->memory_counted, client.get());
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [memory, client] : candidates) {
    if (client_memory_total_ < client_eviction_limit_) return;
    LogNotice("Evicting client: " + ClientInfoLine(*client, now_ms_));
    ForgetClientMemory(*client);
    ++stats.evicted_clients;
    CloseClientSoon(*client);
  }
  if (client_memory_total_ >= client_eviction_limit_) {
    LogWarning("Over client maxmemory after evicting all evictable clients");
  }
}

std::vector<std::pair<size_t, size_t>> Server::ClientMemoryBuckets() const {
  std::vector<std::pair<size_t, size_t>> buckets(ClientMemoryBucketCount());
  for (const auto& [fd, client] : clients_by_fd_) {
    if (!Evictable(*client)) continue;
    auto& [memory, count] = buckets[ClientMemoryBucket(client->memory_counted)];
    memory += client->memory_counted;
    ++count;
  }
  return buckets;
}

}  // namespace goblin
