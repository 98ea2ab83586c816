// Client-side caching (CLIENT TRACKING, Redis 7.2's tracking.c): which clients may hold which
// keys in a local cache, the prefixes broadcasting clients listen to, and the invalidation
// messages that tell them a key changed.
//
// Two modes, as in Redis:
//  - Default: after a read-only command of a tracking client, the command's keys are remembered
//    in one table, key -> client ids (the database is ignored, as Redis ignores it). A change
//    of a remembered key sends each of its clients an invalidation and forgets the key.
//  - BCAST: a client listens to prefixes (the empty prefix matches every key); every key
//    changed during one event-loop round that starts with a prefix is sent to the prefix's
//    clients at the end of the round, one message per prefix and client.
//
// The table. TrackingTable is a KeyTable (core/key_table.h, ~7.7 bytes a key) of one heap block
// per tracked key:
//
//   +--------------+-----------+--------------------------+-----------------------------+
//   | key size u32 | count u32 | key bytes, padded to 8   | ids: capacity x u64         |
//   +--------------+-----------+--------------------------+-----------------------------+
//   capacity = bit_ceil(count): a block is reallocated when an id is added to a full one.
//
// A key read by one client (the usual case) costs 8 + pad8(key) + 8 bytes in its block (32 for a
// 12-byte key) plus its slot: about 40 bytes, against Redis's radix tree of a radix tree of ids
// per key (docs/BENCHMARKS.md, Client-side caching).
//
// Invariants:
//  1. A key is in the table exactly when at least one id is stored for it; items() is the sum
//     of the counts (INFO tracking_total_items).
//  2. A block's ids are distinct and ordered as Redis's radix tree orders them (by their
//     little-endian bytes), so invalidations go out in Redis's order.
//  3. Ids are not removed when their client turns tracking off or disconnects (as in Redis:
//     that would cost a walk of the table); an invalidation for a client that is gone, no
//     longer tracking or now in BCAST mode is dropped when its key changes.
//  4. The keyspace calls KeyChanged only while listening: the table holds a key or a prefix
//     exists. Otherwise KeyWaiters::changes is null and a write pays one branch.
//  5. Every prefix in the prefix table has at least one client, and a client is in exactly
//     the prefix states its Client::Tracking::prefixes names.
//  6. An invalidation for the client whose command is running is held back until the
//     command's reply (for EXEC, the whole transaction's; for a script, the EVAL's) has been
//     written, as Redis 7.2 does with its pending keys.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/key_table.h"
#include "keyspace/database.h"
#include "server/client.h"
#include "server/command_table.h"

namespace goblin {

class Server;

// One tracked key's block (see the drawing above).
class TrackedKey {
 public:
  static TrackedKey* Make(std::string_view key, uint64_t id);
  static void Destroy(TrackedKey* block);
  // Adds id in order; returns the block, which moves when it grew (*added false: already there).
  static TrackedKey* Add(TrackedKey* block, uint64_t id, bool* added);

  std::string_view key() const { return {reinterpret_cast<const char*>(this + 1), key_size_}; }
  uint32_t count() const { return count_; }
  uint64_t id(size_t i) const;
  size_t AllocatedBytes() const { return BlockBytes(key_size_, Capacity(count_)); }

 private:
  TrackedKey() = default;
  static size_t Capacity(uint32_t count);
  static size_t IdsOffset(size_t key_size) { return sizeof(TrackedKey) + ((key_size + 7) & ~7u); }
  static size_t BlockBytes(size_t key_size, size_t capacity) {
    return IdsOffset(key_size) + 8 * capacity;
  }
  char* ids() { return reinterpret_cast<char*>(this) + IdsOffset(key_size_); }
  const char* ids() const { return reinterpret_cast<const char*>(this) + IdsOffset(key_size_); }

  uint32_t key_size_ = 0;
  uint32_t count_ = 0;
};

struct KeyOfTrackedKey {
  std::string_view operator()(const TrackedKey* block) const { return block->key(); }
};

// Key -> the ids of the clients that may cache it.
class TrackingTable {
 public:
  TrackingTable() = default;
  ~TrackingTable() { Clear(); }
  TrackingTable(const TrackingTable&) = delete;
  TrackingTable& operator=(const TrackingTable&) = delete;

  // Remembers that client id may cache key; false when it was remembered already.
  bool Add(std::string_view key, uint64_t id);
  // Forgets key, appending its ids to *ids (invariant 2's order); false when key is untracked.
  bool Take(std::string_view key, std::vector<uint64_t>* ids);
  // A tracked key chosen from random_bits, or nullopt when the table is empty.
  std::optional<std::string> RandomKey(uint64_t random_bits) const;
  void Clear();

  size_t keys() const { return table_.size(); }
  uint64_t items() const { return items_; }
  // The table's slots and every block.
  size_t AllocatedBytes() const { return table_.AllocatedBytes() + block_bytes_; }
  // f(key, ids in order) for every key, in no useful order.
  template <class F>
  void ForEach(F&& f) const {
    table_.ForEach([&](const TrackedKey* block) {
      std::vector<uint64_t> ids;
      for (uint32_t i = 0; i < block->count(); ++i) ids.push_back(block->id(i));
      f(block->key(), ids);
    });
  }

 private:
  KeyTable<TrackedKey, KeyOfTrackedKey> table_;
  uint64_t items_ = 0;
  size_t block_bytes_ = 0;
};

class Tracking final : private KeyChangeListener {
 public:
  explicit Tracking(Server& server) : server_(server) {}
  Tracking(const Tracking&) = delete;
  Tracking& operator=(const Tracking&) = delete;

  // CLIENT TRACKING ON, its options already checked (PrefixOverlap among them). Turning it on
  // again replaces the mode and the redirect and adds the prefixes.
  void Enable(Client& client, uint64_t redirect, bool bcast, bool optin, bool optout, bool noloop,
              const std::vector<std::string_view>& prefixes);
  // CLIENT TRACKING OFF, RESET, a closed connection.
  void Disable(Client& client);
  // Redis's error when one of prefixes overlaps one client listens to already or one after it
  // in the list; "" when none does.
  static std::string PrefixOverlap(const Client& client,
                                   const std::vector<std::string_view>& prefixes);

  // A top-level command of client is about to run (Server::Execute, a blocked client run
  // again): it becomes the client whose own invalidations wait for its reply. The table is
  // brought under tracking-table-max-keys first. Leave, after the reply, sends what waited and
  // ends a CLIENT CACHING that lasted one command.
  struct Frame {
    Client* client;
    bool executing;
    size_t pending_mark;
  };
  Frame Enter(Client& client);
  void Leave(const Frame& outer, const std::vector<std::string_view>& argv);

  // Where a push for target goes (an invalidation, a pub/sub message, a keyspace event): its
  // output, or, when target is the client whose command runs, a buffer held back until Leave
  // appends it after the reply, as Redis 7.2 orders a client's own pushes. Delivered schedules
  // the write of a push that went to the output.
  OutputBuffer* OutputOf(Client& target);
  void Delivered(Client& target, const OutputBuffer* out);

  // Whether a read-only command now may remember keys: the running top-level client tracks,
  // not in BCAST mode.
  bool remembering() const {
    return current_ != nullptr && current_->tracking.on && !current_->tracking.bcast;
  }
  // After a command ran (argv as it ran, inside a script too): remembers its keys for the
  // running top-level client when the command reads and OPTIN/OPTOUT let it.
  void RememberKeys(const Command& command, const std::vector<std::string_view>& argv);

  // FLUSHDB, FLUSHALL, DEBUG RELOAD: every tracking client gets the null invalidation ("every
  // key"), and the table is emptied.
  void InvalidateAll();
  // End of an event-loop round: sends BCAST clients the keys changed in it.
  void Broadcast();
  // Evicts random tracked keys (invalidating them) while the table is over
  // tracking-table-max-keys, with Redis's effort: 100 keys a call, 100 more each call that
  // could not get under the limit.
  void LimitTableSize();

  size_t clients() const { return tracking_clients_; }
  size_t keys() const { return table_.keys(); }
  uint64_t items() const { return table_.items(); }
  size_t prefixes() const { return prefixes_.size(); }
  const TrackingTable& table() const { return table_; }

 private:
  struct PrefixState {
    std::vector<uint64_t> clients;            // ids, ascending
    std::map<std::string, uint64_t> changed;  // key -> id of the client that changed it last
  };
  struct Pending {
    bool raw;           // push holds bytes for the current client, else data is to Send
    std::string data;   // key invalidation payload, or null
    OutputBuffer push;  // raw: the push held back
  };

  void KeyChanged(std::string_view key, bool expired) override;
  void Invalidate(std::string_view key);
  // Sends tracker an invalidation with payload (an array of keys, or a null), to itself or to
  // its REDIRECT target, as Redis's sendTrackingMessage.
  void Send(Client& tracker, std::string_view payload);
  void AddPrefix(Client& client, std::string_view prefix);
  void UpdateListening();
  static std::string KeyPayload(std::string_view key);
  static std::string BroadcastPayload(const std::map<std::string, uint64_t>& changed,
                                      uint64_t skip_id);

  Server& server_;
  TrackingTable table_;
  std::map<std::string, PrefixState, std::less<>> prefixes_;
  size_t tracking_clients_ = 0;
  bool listening_ = false;
  // The top-level client whose command runs (Redis's current_client), and whether it is
  // executing now (its invalidations wait in pending_ for Leave).
  Client* current_ = nullptr;
  bool executing_ = false;
  std::vector<Pending> pending_;
  std::vector<uint64_t> ids_;  // scratch for Invalidate
  unsigned limit_rounds_ = 0;  // LimitTableSize calls in a row that stayed over the limit
};

}  // namespace goblin
