#include "server/eviction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "keyspace/database.h"
#include "server/cycle_clock.h"
#include "server/keyspace_notify.h"
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

// Entries the clock visits per step. A step that finds only used keys (their bits now clear)
// returns without an eviction, and the next step goes on from there: a revolution over keys
// all used lately, after a bulk load say, is spread over many steps and commands instead of
// stalling one.
constexpr size_t kClockVisitBudget = 2048;

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
  if (config.maxmemory <= 0 || server_.loading()) {
    EndExceeded();
    return Result::kOk;
  }
  const size_t limit = static_cast<size_t>(config.maxmemory);
  if (server_.memory_gauge.Read() <= limit) {
    EndExceeded();
    return Result::kOk;
  }
  const int64_t start = SteadyMicros();
  if (exceeded_since_us_ == 0) exceeded_since_us_ = start;
  const EvictionPolicy policy =
      ParseEvictionPolicy(config.maxmemory_policy).value_or(EvictionPolicy::kNoEviction);
  if (policy == EvictionPolicy::kNoEviction) return Result::kFail;
  const int64_t time_limit = EvictionTimeLimitMicros(config.maxmemory_eviction_tenacity);
  for (size_t steps = 1; server_.memory_gauge.Read() > limit; ++steps) {
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
  bool searched = false;
  for (size_t tried = 0; tried < databases; ++tried) {
    const int index = static_cast<int>(next_db_++ % databases);
    Database& db = server_.db(index);
    std::optional<std::string> key = Pick(db, policy, &searched);
    if (!key) continue;
    // As Redis: the log and replicas see a DEL, watchers see the key change.
    server_.effects.Add(index, {"DEL", *key});
    db.Delete(*key);
    server_.NotifyKeyspaceEvent(kNotifyEvicted, "evicted", *key, index);
    ++evicted_keys_;
    return Step::kEvicted;
  }
  return searched ? Step::kSearched : Step::kNothing;
}

std::optional<std::string> Evictor::Pick(Database& db, EvictionPolicy policy, bool* searched) {
  const bool volatile_only = VolatileOnly(policy);
  if (db.size() == 0 || (volatile_only && db.expires() == 0)) return std::nullopt;
  if (policy == EvictionPolicy::kAllKeysRandom) {
    return std::string(db.Random(server_.Random64())->key());
  }
  // The hand walks on until the policy has what it needs, at most kClockVisitBudget
  // candidates. Keys with a deadline may be rare (Goblin keeps no separate table of them): the
  // volatile policies may walk a whole revolution to find one (db.expires() > 0 says there is
  // one), a pause proportional to the keys without a deadline.
  std::optional<std::string> chosen;
  int64_t nearest = std::numeric_limits<int64_t>::max();
  size_t samples = 0;
  size_t candidates = 0;
  const size_t wanted = static_cast<size_t>(std::max<int64_t>(server_.config.maxmemory_samples, 1));
  const bool clock =
      policy != EvictionPolicy::kVolatileRandom && policy != EvictionPolicy::kVolatileTtl;
  const size_t budget = volatile_only ? std::max(db.size(), kClockVisitBudget) : kClockVisitBudget;
  db.SweepEvictionHand(
      [&](KeyEntry* entry) {
        if (volatile_only && !entry->has_expire()) return false;
        if (clock) {
          if (!entry->recently_used()) {
            if (!chosen) chosen.emplace(entry->key());
            return true;
          }
          entry->ClearUsed();
          *searched = true;
          return ++candidates >= kClockVisitBudget;
        }
        if (policy == EvictionPolicy::kVolatileRandom) {
          if (!chosen) chosen.emplace(entry->key());
          return true;
        }
        // volatile-ttl
        if (entry->expire_ms() < nearest) {
          nearest = entry->expire_ms();
          chosen.emplace(entry->key());
        }
        return ++samples >= wanted;
      },
      budget);
  return chosen;
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
