// maxmemory: while used memory is over the limit, keys are evicted under maxmemory-policy
// before each command; when nothing can be evicted, commands that may grow memory are refused
// with -OOM (Server::Dispatch), as in Redis.
//
// Which key goes. Redis keeps a 24-bit clock in every object and samples keys for the oldest;
// Goblin keeps one bit per key (KeyEntry::recently_used, set when a key is looked up or
// changed, except by CLIENT NO-TOUCH clients and Redis's no-touch commands TYPE, EXISTS, OBJECT
// and MEMORY USAGE, and never while a forked child shares the pages) and runs the CLOCK algorithm
// ("second chance"): a hand sweeps each database in hash order, clears the bit of every key it
// passes, and evicts the first key whose bit was already clear, that is, one nobody used since the
// hand last passed. That is the classic one-bit approximation of LRU and costs no byte per key. A
// new key starts unused (as a page enters Linux's inactive list): a key written once and never read
// again goes at the hand's next pass, before keys that are read, so a burst of fresh writes cannot
// flush the keys in use; a key used after its creation lives at least until the hand has passed it
// twice. The LFU policies use the same clock: Goblin keeps no per-key frequency counter, so OBJECT
// FREQ stays a constant (commands/keys.cc).
//
//   allkeys-lru, allkeys-lfu        the clock over every key
//   volatile-lru, volatile-lfu      the clock over keys with a deadline
//   allkeys-random                  a uniformly random key (KeyTable::Random)
//   volatile-random                 the next key with a deadline at the hand (hash order)
//   volatile-ttl                    of the next maxmemory-samples keys with a deadline at the
//                                   hand, the one whose deadline is nearest
//   noeviction                      nothing: writes are refused until memory is freed
//
// Keys with a deadline are found by the same sweep (Goblin keeps no table of them, unlike
// Redis's expires dict): where they are rare, a volatile policy walks past the others, up to a
// revolution per eviction.
//
// Databases take turns, one eviction each. One call evicts for at most the time
// maxmemory-eviction-tenacity allows (Redis's scale: 10 -> 500 us, 100 -> unbounded); what is
// left continues before the next command and on the server tick, and the command in between
// runs (Redis does the same). Evicted keys reach the append-only file as DEL.
//
// Memory is read through UsedMemoryGauge (memory_stats.h): exact at each tick, moved between
// ticks by the serving thread's own allocations, so freeing a key is seen at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace goblin {

class Server;
class Database;

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
  // Evicts one key from the next database that has a candidate.
  Step EvictOne(EvictionPolicy policy);
  // The key the policy picks in db, or nullopt; sets *searched when the clock cleared bits.
  std::optional<std::string> Pick(Database& db, EvictionPolicy policy, bool* searched);
  void EndExceeded();
  int64_t CurrentExceededMicros() const;

  Server& server_;
  size_t next_db_ = 0;
  uint64_t evicted_keys_ = 0;
  int64_t exceeded_since_us_ = 0;  // 0 while under the limit
  int64_t exceeded_total_us_ = 0;
};

}  // namespace goblin
