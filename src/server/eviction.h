// maxmemory: while used memory is over the limit, keys are evicted under maxmemory-policy
// before each command; when nothing can be evicted, commands that may grow memory are refused
// with -OOM (Server::Dispatch), as in Redis.
//
// Which key goes: Redis's approximation, on the same per-key access stamps
// (core/access_clock.h; a key's lives in its key table slot, so it costs the table's 3 bytes
// and none in the entry). Each eviction samples maxmemory-samples keys of every database into a
// pool of the 16 best candidates kept from one eviction to the next, and evicts the pool's best
// that still exists:
//
//   allkeys-lru, volatile-lru       the longest idle (the access stamp's idle time)
//   allkeys-lfu, volatile-lfu       the lowest LFU counter, decayed
//   volatile-ttl                    the nearest deadline
//   allkeys-random                  a uniformly random key (KeyTable::Random)
//   volatile-random                 the next key with a deadline at the hand (hash order)
//   noeviction                      nothing: writes are refused until memory is freed
//
// Lookups update the stamps except for CLIENT NO-TOUCH clients and Redis's no-touch commands
// (TYPE, EXISTS, OBJECT, MEMORY USAGE), and never while a forked child shares the pages.
// Keys with a deadline are found by a hand that sweeps each database in hash order (Goblin keeps
// no table of them, unlike Redis's expires dict): where they are rare, a volatile policy walks
// past the others, up to a revolution per sampling.
//
// The random policies take the databases in turn, one eviction each. One call evicts for at
// most the time maxmemory-eviction-tenacity allows (Redis's scale: 10 -> 500 us, 100 ->
// unbounded); what is left continues before the next command and on the server tick, and the
// command in between runs (Redis does the same). Evicted keys reach the append-only file as DEL.
//
// Memory is read through UsedMemoryGauge (memory_stats.h): exact at each tick, moved between
// ticks by the serving thread's own allocations, so freeing a key is seen at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

class Server;
class Database;
class KeyEntry;

enum class EvictionPolicy {
  kNoEviction,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
};

std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name);

class Evictor {
 public:
  enum class Result {
    kOk,       // under the limit (or no limit)
    kRunning,  // over it, evicting, out of time for this call
    kFail,     // over it and nothing left to evict: denyoom commands are refused
  };

  explicit Evictor(Server& server) : server_(server) {}

  // Evicts until used memory is under maxmemory or the time limit is reached.
  Result Perform();

  uint64_t evicted_keys() const { return evicted_keys_; }
  void ResetCounters() { evicted_keys_ = 0; }  // CONFIG RESETSTAT
  // Milliseconds memory has spent over the limit, in total and in the current stretch
  // (INFO stats total_eviction_exceeded_time / current_eviction_exceeded_time).
  int64_t TotalExceededMs() const;
  int64_t CurrentExceededMs() const;

 private:
  enum class Step {
    kEvicted,
    kSearched,  // the clock cleared use bits but found no unused key yet
    kNothing,   // no database holds a key the policy may evict
  };
  // A key sampled by an LRU, LFU or TTL policy and its score (the larger, the sooner evicted).
  struct Candidate {
    uint64_t score;
    int db;
    std::string key;
  };

  // Evicts one key: for the random policies from the next database that has one, for the
  // others the best candidate of the pool after sampling every database.
  Step EvictOne(EvictionPolicy policy);
  void Evict(int index, const std::string& key);
  // Offers maxmemory-samples of db's keys (with a deadline for the volatile policies) to the
  // pool.
  void Sample(Database& db, int index, EvictionPolicy policy);
  void Offer(uint64_t score, int index, const KeyEntry* entry);
  void EndExceeded();
  int64_t CurrentExceededMicros() const;

  Server& server_;
  size_t next_db_ = 0;
  std::vector<Candidate> pool_;  // at most kPoolSize, ascending by score
  uint64_t evicted_keys_ = 0;
  int64_t exceeded_since_us_ = 0;  // 0 while under the limit
  int64_t exceeded_total_us_ = 0;
};

}  // namespace goblin
