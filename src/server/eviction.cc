#include "server/eviction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "keyspace/database.h"
#include "server/cycle_clock.h"
#include "server/keyspace_notify.h"
#include "server/master_link.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

namespace {

// How long one Perform may evict, from maxmemory-eviction-tenacity (0..100) on Redis's scale:
// linear up to 500 us at 10, then 15% more per step, unbounded at 100.
int64_t EvictionTimeLimitMicros(int64_t tenacity) {
  if (tenacity <= 10) return 50 * tenacity;
  if (tenacity < 100) return static_cast<int64_t>(500.0 * std::pow(1.15, tenacity - 10.0));
  return std::numeric_limits<int64_t>::max();
}

bool VolatileOnly(EvictionPolicy policy) {
  return policy == EvictionPolicy::kVolatileLru || policy == EvictionPolicy::kVolatileLfu ||
         policy == EvictionPolicy::kVolatileRandom || policy == EvictionPolicy::kVolatileTtl;
}

// Candidates the pool keeps between evictions (Redis's EVPOOL_SIZE).
constexpr size_t kPoolSize = 16;

}  // namespace

std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name) {
  static constexpr std::pair<std::string_view, EvictionPolicy> kNames[] = {
      {"noeviction", EvictionPolicy::kNoEviction},
      {"allkeys-lru", EvictionPolicy::kAllKeysLru},
      {"allkeys-lfu", EvictionPolicy::kAllKeysLfu},
      {"allkeys-random", EvictionPolicy::kAllKeysRandom},
      {"volatile-lru", EvictionPolicy::kVolatileLru},
      {"volatile-lfu", EvictionPolicy::kVolatileLfu},
      {"volatile-random", EvictionPolicy::kVolatileRandom},
      {"volatile-ttl", EvictionPolicy::kVolatileTtl},
  };
  for (const auto& [text, policy] : kNames) {
    if (text == name) return policy;
  }
  return std::nullopt;
}

Evictor::Result Evictor::Perform() {
  const Config& config = server_.config;
  // replica-ignore-maxmemory: a replica's keys go when its master's DEL comes.
  if (config.maxmemory <= 0 || server_.loading() ||
      (config.replica_ignore_maxmemory && server_.master_link->is_replica())) {
    EndExceeded();
    return Result::kOk;
  }
  const size_t limit = static_cast<size_t>(config.maxmemory);
  // As Redis: what replicas have not read yet is no reason to evict (each eviction adds to it).
  auto counted = [this] {
    const size_t used = server_.memory_gauge.Read();
    return used - std::min(used, server_.replication->ReplicaOutputBytes());
  };
  if (counted() <= limit) {
    EndExceeded();
    return Result::kOk;
  }
  const int64_t start = SteadyMicros();
  if (exceeded_since_us_ == 0) exceeded_since_us_ = start;
  const EvictionPolicy policy =
      ParseEvictionPolicy(config.maxmemory_policy).value_or(EvictionPolicy::kNoEviction);
  if (policy == EvictionPolicy::kNoEviction) return Result::kFail;
  const int64_t time_limit = EvictionTimeLimitMicros(config.maxmemory_eviction_tenacity);
  for (size_t steps = 1; counted() > limit; ++steps) {
    const Step step = EvictOne(policy);
    if (step == Step::kNothing) return Result::kFail;
    if ((step == Step::kSearched || steps % 16 == 0) && SteadyMicros() - start > time_limit) {
      return Result::kRunning;
    }
  }
  EndExceeded();
  return Result::kOk;
}

Evictor::Step Evictor::EvictOne(EvictionPolicy policy) {
  const size_t databases = server_.database_count();
  const bool volatile_only = VolatileOnly(policy);
  auto has_candidates = [&](const Database& db) {
    return db.size() > 0 && (!volatile_only || db.expires() > 0);
  };
  if (policy == EvictionPolicy::kAllKeysRandom || policy == EvictionPolicy::kVolatileRandom) {
    // Databases take turns, one eviction each.
    for (size_t tried = 0; tried < databases; ++tried) {
      const int index = static_cast<int>(next_db_++ % databases);
      Database& db = server_.db(index);
      if (!has_candidates(db)) continue;
      std::string key;
      if (policy == EvictionPolicy::kAllKeysRandom) {
        key = db.Random(server_.Random64())->key();
      } else {
        db.SweepEvictionHand(
            [&](KeyEntry* entry) {
              if (!entry->has_expire()) return false;
              key = entry->key();
              return true;
            },
            db.size());
      }
      Evict(index, key);
      return Step::kEvicted;
    }
    return Step::kNothing;
  }
  bool sampled = false;
  for (size_t index = 0; index < databases; ++index) {
    Database& db = server_.db(static_cast<int>(index));
    if (!has_candidates(db)) continue;
    Sample(db, static_cast<int>(index), policy);
    sampled = true;
  }
  if (!sampled) return Step::kNothing;
  // The best candidate that is still there (keys change between samplings: one may be gone,
  // or have lost its deadline).
  while (!pool_.empty()) {
    Candidate best = std::move(pool_.back());
    pool_.pop_back();
    const KeyEntry* entry = server_.db(best.db).Peek(best.key);
    if (entry == nullptr || (volatile_only && !entry->has_expire())) continue;
    Evict(best.db, best.key);
    return Step::kEvicted;
  }
  return Step::kSearched;
}

void Evictor::Evict(int index, const std::string& key) {
  // As Redis: the log and replicas see a DEL (UNLINK with lazyfree-lazy-eviction), watchers see
  // the key change.
  server_.effects.Add(index, {server_.config.lazyfree.eviction ? "UNLINK" : "DEL", key});
  server_.db(index).Delete(key);
  server_.NotifyKeyspaceEvent(kNotifyEvicted, "evicted", key, index);
  ++evicted_keys_;
}

void Evictor::Sample(Database& db, int index, EvictionPolicy policy) {
  const size_t wanted = static_cast<size_t>(std::max<int64_t>(server_.config.maxmemory_samples, 1));
  const AccessClock& clock = server_.access_clock;
  // Redis's scores: the larger, the sooner evicted.
  auto score = [&](const KeyEntry* entry, uint32_t stamp) -> uint64_t {
    switch (policy) {
      case EvictionPolicy::kVolatileTtl:
        return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(entry->expire_ms());
      case EvictionPolicy::kAllKeysLfu:
      case EvictionPolicy::kVolatileLfu:
        return 255 - clock.DecayedCounter(stamp);
      default:
        return clock.IdleMs(stamp);
    }
  };
  if (!VolatileOnly(policy)) {
    db.Sample(server_.Random64(), wanted, [&](const KeyEntry* entry, uint32_t stamp) {
      Offer(score(entry, stamp), index, entry);
    });
    return;
  }
  // Keys with a deadline come from the hand's sweep (Goblin keeps no separate table of them):
  // where they are rare it may walk up to a revolution to find them (db.expires() > 0 says
  // there is one), a pause proportional to the keys without a deadline.
  size_t found = 0;
  db.SweepEvictionHand(
      [&](KeyEntry* entry) {
        if (!entry->has_expire()) return false;
        Offer(score(entry, db.AccessStamp(entry->key())), index, entry);
        return ++found >= wanted;
      },
      db.size());
}

void Evictor::Offer(uint64_t score, int index, const KeyEntry* entry) {
  // Ascending by score; when full, a candidate must beat the worst kept one, which it pushes
  // out. The entry (a cache miss) is read only for a candidate that gets in.
  if (pool_.size() == kPoolSize && score <= pool_.front().score) return;
  const std::string_view key = entry->key();
  for (const Candidate& candidate : pool_) {
    if (candidate.db == index && candidate.key == key) return;  // already a candidate
  }
  size_t at = static_cast<size_t>(
      std::lower_bound(pool_.begin(), pool_.end(), score,
                       [](const Candidate& c, uint64_t s) { return c.score < s; }) -
      pool_.begin());
  if (pool_.size() == kPoolSize) {
    pool_.erase(pool_.begin());
    --at;
  }
  pool_.insert(pool_.begin() + static_cast<ptrdiff_t>(at),
               Candidate{score, index, std::string(key)});
}

void Evictor::EndExceeded() {
  exceeded_total_us_ += CurrentExceededMicros();
  exceeded_since_us_ = 0;
}

int64_t Evictor::CurrentExceededMicros() const {
  return exceeded_since_us_ == 0 ? 0 : SteadyMicros() - exceeded_since_us_;
}

int64_t Evictor::CurrentExceededMs() const { return CurrentExceededMicros() / 1000; }

int64_t Evictor::TotalExceededMs() const {
  return (exceeded_total_us_ + CurrentExceededMicros()) / 1000;
}

}  // namespace goblin
