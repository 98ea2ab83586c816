// One numbered database (SELECT n): the key table plus expiry, with lazy and active expiry.
//
// Standalone, the keys live in one KeyTable. In cluster mode (EnableSlots) they live in one
// KeyTable per hash slot (keyspace/slot_tables.h), so a slot's keys can be counted and listed
// without a pass over the others. Every method works in both modes; each chooses its table with
// one test of slots_, which standalone never sees change, so it pays a predicted branch and no
// slot hashing.
//
// Invariants:
//  1. An expired key is never returned: every lookup checks the deadline and deletes a key
//     whose time has passed (lazy expiry); ActiveExpire reclaims keys nobody looks at.
//  2. expires() equals the number of stored entries with has_expire(); every change of an
//     entry goes through this class so the count stays right.
//  3. now_ms is the time of the command being executed (cached by the server), so one command
//     sees one consistent clock, as in Redis.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/access_clock.h"
#include "core/key_entry.h"
#include "core/key_table.h"
#include "keyspace/slot_tables.h"

namespace goblin {

// What the keyspace tells the layers above about changes it makes on its own.
class KeyspaceEvents {
 public:
  virtual ~KeyspaceEvents() = default;
  // key was deleted because its deadline passed (lazy or active expiry). A replay must see
  // the deletion as a DEL: it may run at a time when the key has not expired yet.
  virtual void KeyExpired(int db, std::string_view key) = 0;
  // A read lookup found no key (Redis's keymiss event).
  virtual void KeyMissed(int db, std::string_view key) = 0;
  // A key that did not exist was stored (Redis's new event; not while a snapshot loads).
  virtual void KeyAdded(int db, std::string_view key) = 0;
};

// Told of every change of a key in any database (client-side caching, server/tracking.h). Set
// in KeyWaiters only while someone needs it, so a keyspace nobody tracks pays one branch.
class KeyChangeListener {
 public:
  virtual ~KeyChangeListener() = default;
  // key changed (Touch), or was deleted by expiry (expired).
  virtual void KeyChanged(std::string_view key, bool expired) = 0;
};

// One client's WATCH of a key: the flag a change raises (its transaction fails), and whether the
// key was already past its deadline, not yet deleted, when watched (Redis's watchedKey.expired).
// To such a watcher the key was already gone: its deletion is no change, nor is its replacement
// by another key past its deadline (SWAPDB).
struct KeyWatch {
  bool* dirty = nullptr;
  bool stale = false;
};

// Who waits on the keys of one database index, in the terms the layers above gave: a WATCH
// flag to raise, a blocked client's id. It belongs to the index, not to the data: SWAPDB swaps
// Database objects but not their waiters.
struct KeyWaiters {
  int index = 0;  // the database index these waiters belong to
  // WATCH: a change to one of these keys raises each watcher's flag (KeyWatch).
  std::unordered_map<std::string, std::vector<KeyWatch>> watched;
  // Blocking commands (BZPOPMIN, ...): client ids in arrival order, served first come first.
  std::unordered_map<std::string, std::deque<uint64_t>> blocked;
  // Blocked-on keys changed since the server last retried their clients.
  std::vector<std::string> ready;
  bool* any_ready = nullptr;             // the server's "some database has ready keys" flag
  KeyspaceEvents* events = nullptr;      // told of expiries, or none
  KeyChangeListener* changes = nullptr;  // told of every change, or none
  // While set, every key stored or changed with a deadline is added here (a writable replica
  // remembers the keys its own clients gave deadlines, which it alone expires).
  std::set<std::string, std::less<>>* deadlines_set = nullptr;
};

struct KeyspaceCounters {
  // Every change of a key a command made (Touch; not the deletions of expiry): with
  // server.dirty it tells whether a write command changed anything, and so has effects.
  uint64_t modifications = 0;
  uint64_t expired_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
};

class Database {
 public:
  // Each slot carries the key's access stamp (core/access_clock.h).
  using Table = KeyspaceTable;

  Database() = default;
  // Frees every entry; waiters are not told (they may be gone already at shutdown).
  ~Database() {
    table_.Clear([](KeyEntry* entry) { KeyEntry::Destroy(entry); });
    if (slots_ != nullptr) slots_->Clear([](KeyEntry* entry) { KeyEntry::Destroy(entry); });
  }
  Database(Database&&) = default;
  Database& operator=(Database&&) = default;

  // The live entry for key, or nullptr (deleting it first when it has expired). A lookup is an
  // access of the key (its access stamp moves) unless touch is false, as for Redis's
  // LOOKUP_NOTOUCH.
  KeyEntry* Find(std::string_view key, int64_t now_ms, bool touch = true);
  // The same, counting keyspace_hits / keyspace_misses for INFO.
  KeyEntry* FindForRead(std::string_view key, int64_t now_ms, bool touch = true);

  // Stores value under key, replacing any previous value. With keep_ttl the old deadline
  // stays, else expire_ms (or none) applies.
  void Put(std::string_view key, const EntryValue& value, std::optional<int64_t> expire_ms,
           bool keep_ttl = false);
  // Adds key only when absent (a snapshot loader finding a key twice reports it); returns
  // false, storing nothing, when key is present. Ownership of value.object passes only on true.
  bool AddNew(std::string_view key, const EntryValue& value, std::optional<int64_t> expire_ms);
  // Starts loading what AddNew(key, ...) will read first (a loader calls it a few keys ahead).
  void Prefetch(std::string_view key) const {
    if (const Table* table = TableOf(key)) table->Prefetch(key);
  }
  // The second step, a little later: starts loading key's entry from the bucket Prefetch loaded.
  void PrefetchEntry(std::string_view key) const {
    if (const Table* table = TableOf(key)) table->PrefetchEntry(key);
  }
  // Stores a ready entry (RENAME, MOVE, COPY), replacing any previous value of its key, with
  // the access stamp given (a key moved keeps its own) or a new key's.
  void Adopt(KeyEntry* entry, std::optional<uint32_t> stamp = std::nullopt);
  // Makes room for key's raw string value to grow to `length` bytes in place (see
  // KeyEntry::GrowForString: the default headroom, or `room` bytes) and returns its entry,
  // which may have moved. REQUIRES: key holds a kRaw string.
  KeyEntry* ReserveString(std::string_view key, size_t length, size_t room = 0);
  // Stores key's string value (an integer or embstr) again as a kRaw string of the same bytes
  // and returns its entry, without counting a change: a bit command (SETBIT, BITFIELD) needs raw
  // bytes before it knows whether it will change any, as Redis's dbUnshareStringValue.
  // REQUIRES: key holds a string.
  KeyEntry* UnshareString(std::string_view key);
  // Removes key from the table and hands its entry to the caller, or nullptr; *stamp gets its
  // access stamp when given.
  KeyEntry* Take(std::string_view key, uint32_t* stamp = nullptr);
  bool Delete(std::string_view key);
  // Sets or clears the deadline of a present key.
  void SetExpire(std::string_view key, std::optional<int64_t> expire_ms);

  // Keys whose value has elements with deadlines of their own (Collection::
  // has_element_deadlines: hash fields): noted as such a value is stored or gets its first
  // element deadline, forgotten by the sweep of element deadlines once the key is gone or has
  // none left. Ordered by name, so that sweep goes round them a slice at a time.
  void NoteElementDeadlines(std::string_view key);
  void ForgetElementDeadlines(std::string_view key) {
    element_deadline_keys_.erase(std::string(key));
  }
  size_t element_deadline_keys() const { return element_deadline_keys_.size(); }
  // The next noted keys, up to n, going round from where the last call stopped.
  std::vector<std::string> NextElementDeadlineKeys(size_t n);

  // Whether key is stored, expired or not (no lazy expiry: for bookkeeping, not for commands).
  bool Contains(std::string_view key) const { return Peek(key) != nullptr; }
  // The stored entry, expired or not, without touching it (bookkeeping, as Contains).
  KeyEntry* Peek(std::string_view key) const {
    const Table* table = TableOf(key);
    return table == nullptr ? nullptr : table->Find(key);
  }
  size_t size() const { return slots_ == nullptr ? table_.size() : slots_->size(); }
  size_t expires() const { return expires_; }
  // Sizes the empty table for `keys` keys about to be added (a snapshot load). No-op unless
  // empty, and in cluster mode, where the keys' slots are not known yet and each slot's table
  // is small enough to grow without splitting much.
  void Reserve(size_t keys) {
    if (slots_ == nullptr && table_.empty()) table_.Reserve(keys);
  }
  // One step of SCAN: reports the keys of one home bucket (in cluster mode, of one slot's
  // table; see SlotTables for the cursor) and returns the next cursor, 0 at the end.
  uint64_t Scan(uint64_t cursor, const std::function<void(KeyEntry*)>& fn) const;
  // A random key, nullptr when empty; in cluster mode a slot is picked in proportion to its
  // keys first, so every key keeps about the same chance.
  KeyEntry* Random(uint64_t random_bits) const {
    return slots_ == nullptr ? table_.Random(random_bits) : slots_->Random(random_bits);
  }
  // Calls fn(entry, access stamp) on up to n keys stored next to each other from a random place
  // (KeyTable::Sample, SlotTables::Sample): eviction's sample.
  template <class F>
  void Sample(uint64_t random_bits, size_t n, F&& fn) const {
    auto each = [&](Table::Slot slot) { fn(slot.entry(), slot.stamp()); };
    if (slots_ == nullptr) {
      table_.Sample(random_bits, n, each);
    } else {
      slots_->Sample(random_bits, n, each);
    }
  }

  // Cluster mode: from now on keys live in one table per hash slot. REQUIRES: size() == 0.
  void EnableSlots();
  bool slotted() const { return slots_ != nullptr; }
  // The number of keys in slot (expired or not), in O(1); 0 in standalone mode.
  // REQUIRES: 0 <= slot < kClusterSlots.
  size_t KeysInSlot(int slot) const { return slots_ == nullptr ? 0 : slots_->KeysInSlot(slot); }
  // Calls fn(const KeyEntry*) on up to limit keys of slot, expired or not, as CLUSTER
  // GETKEYSINSLOT lists them; its time grows with the keys listed, not the slot's. Nothing in
  // standalone mode. REQUIRES: 0 <= slot < kClusterSlots; fn does not change the database.
  template <class F>
  void ForEachKeyInSlot(int slot, size_t limit, F&& fn) const {
    if (slots_ != nullptr) slots_->ForEachKeyInSlot(slot, limit, std::forward<F>(fn));
  }
  // A stored key's access stamp (expired or not, and without touching it); 0 when absent.
  uint32_t AccessStamp(std::string_view key) const;
  // Sets a present key's access stamp (RESTORE IDLETIME / FREQ, a loaded file's records).
  void SetAccessStamp(std::string_view key, uint32_t stamp);
  template <class F>
  void ForEach(F&& fn) const {
    if (slots_ == nullptr) {
      table_.ForEach(fn);
    } else {
      slots_->ForEachTable([&](const Table& table) { table.ForEach(fn); });
    }
  }
  // fn(const KeyEntry*, uint32_t access stamp) for every key.
  template <class F>
  void ForEachWithStamp(F&& fn) const {
    if (slots_ == nullptr) {
      table_.ForEachWithStamp(fn);
    } else {
      slots_->ForEachTable([&](const Table& table) { table.ForEachWithStamp(fn); });
    }
  }
  void Clear();
  // Heap bytes of the key table(s), not of the entries.
  size_t TableBytes() const {
    return table_.AllocatedBytes() + (slots_ == nullptr ? 0 : slots_->AllocatedBytes());
  }

  // Eviction's hand (server/eviction.h): visits entries from where the last sweep stopped, a
  // home bucket at a time in hash order, wrapping around, calling visit(entry) on each. Stops
  // at the end of the first bucket in which visit returned true, or once max_visits entries
  // were visited. visit must not change the table. Returns the number of entries visited.
  size_t SweepEvictionHand(const std::function<bool(KeyEntry*)>& visit, size_t max_visits);

  // New keys take their access stamp from clock, and lookups update it while *touching (the
  // server clears it while a forked child shares the pages, which a write would copy, and for
  // the commands that must not count as an access).
  void set_access_clock(AccessClock* clock, const bool* touching) {
    access_ = clock;
    touching_ = touching;
  }
  // What lookups do with a key whose deadline has passed (the server keeps one copy, which it
  // changes as the running client changes).
  struct ExpiryRules {
    // While *loading, it is live: a load replays the log, and as in Redis a key whose deadline
    // has passed by now is still what the logged commands after it saw.
    const bool* loading = nullptr;
    // It is live for the commands of a replica's master, whose DEL will remove it.
    bool keep = false;
    // It reads as missing but stays stored: a replica's other clients (Redis 7's replicas
    // never expire keys on their own), and every client while writes are paused.
    bool hide = false;
  };
  void set_expiry_rules(const ExpiryRules* rules) { expiry_rules_ = rules; }
  // The rules in force; elements with deadlines of their own (hash fields) follow them too.
  const ExpiryRules* expiry_rules() const { return expiry_rules_; }

  struct ExpireSweep {
    size_t visited = 0;
    size_t deleted = 0;
  };
  // Visits about max_visits entries from the expiry cursor and deletes the expired ones.
  ExpireSweep ActiveExpire(int64_t now_ms, size_t max_visits);
  // Deletes key if its deadline has passed by now_ms (an expiry, as ActiveExpire's). Returns
  // whether key is still stored with a deadline still to come.
  bool ExpireIfDue(std::string_view key, int64_t now_ms);

  static bool Expired(const KeyEntry* entry, int64_t now_ms) {
    return entry->has_expire() && entry->expire_ms() <= now_ms;
  }

  KeyspaceCounters& counters() { return *counters_; }
  void set_counters(KeyspaceCounters* counters) { counters_ = counters; }
  void set_waiters(KeyWaiters* waiters) { waiters_ = waiters; }

  // Records that key changed, for WATCH and for clients blocked on it. Every mutator here
  // calls it; commands that change a collection in place call it themselves.
  void Touch(std::string_view key) {
    if (counters_ != nullptr) ++counters_->modifications;
    if (waiters_ == nullptr) return;
    if (!waiters_->watched.empty() || !waiters_->blocked.empty()) TouchWaiters(key);
    if (waiters_->changes != nullptr) waiters_->changes->KeyChanged(key, false);
  }
  // Marks every watched key that exists here as changed (FLUSHDB), but for watchers to whom
  // it was already gone (KeyWatch::stale).
  void TouchAllWatched();
  // Tells the clients blocked on key to look again, without counting a change of the key
  // (XGROUP DESTROY: its XREADGROUP waiters learn the group is gone; WATCH does not see it).
  void WakeBlocked(std::string_view key);

 private:
  void Insert(KeyEntry* entry, std::optional<uint32_t> stamp = std::nullopt);
  // The table that holds key, or would: nullptr in cluster mode when its slot never held a key.
  const Table* TableOf(std::string_view key) const {
    return slots_ == nullptr ? &table_ : slots_->TableOf(key);
  }
  Table* TableOf(std::string_view key) {
    return slots_ == nullptr ? &table_ : slots_->TableOf(key);
  }
  // key's slot in its table, empty when absent.
  Table::Slot FindSlot(std::string_view key) {
    Table* table = TableOf(key);
    return table == nullptr ? Table::Slot() : table->FindSlot(key);
  }
  // Removes key from its table and returns its entry, or nullptr; no accounting.
  KeyEntry* EraseFromTable(std::string_view key) {
    return slots_ == nullptr ? table_.Erase(key) : slots_->Erase(key);
  }
  // One step of Scan for either mode, fn called inline.
  template <class F>
  uint64_t ScanStep(uint64_t cursor, F&& fn) const {
    return slots_ == nullptr ? table_.Scan(cursor, fn) : slots_->Scan(cursor, fn);
  }
  uint32_t NewStamp() const { return access_ != nullptr ? access_->NewStamp() : 0; }
  void Replace(Table::Slot slot, KeyEntry* fresh);
  void Forget(KeyEntry* entry) { expires_ -= entry->has_expire() ? 1 : 0; }
  // Records a stored entry's deadline for KeyWaiters::deadlines_set.
  void NoteDeadline(const KeyEntry* entry) {
    if (waiters_ != nullptr && waiters_->deadlines_set != nullptr && entry->has_expire()) {
      waiters_->deadlines_set->emplace(entry->key());
    }
  }
  void TouchWaiters(std::string_view key);
  // Queues a key some client is blocked on for the server's next retry of its waiters.
  void MarkReady(std::string name);
  // Deletes an expired key: waiters see the change, the events listener the expiry.
  void DeleteExpired(std::string_view key);

  Table table_;                        // standalone: every key; cluster mode: empty
  std::unique_ptr<SlotTables> slots_;  // cluster mode only
  size_t expires_ = 0;
  std::set<std::string, std::less<>> element_deadline_keys_;
  std::string element_deadline_cursor_;  // the last key NextElementDeadlineKeys returned
  uint64_t expire_cursor_ = 0;
  uint64_t eviction_hand_ = 0;
  AccessClock* access_ = nullptr;
  const bool* touching_ = nullptr;
  const ExpiryRules* expiry_rules_ = nullptr;
  KeyspaceCounters* counters_ = nullptr;
  KeyWaiters* waiters_ = nullptr;
};

}  // namespace goblin
