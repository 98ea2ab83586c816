// StreamGroups: the consumer groups of one stream, each with its pending entries list (PEL)
// and its consumers, for XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO.
//
// Redis 7.2 keeps two radix trees per group (the group PEL and every consumer's PEL) that share
// one heap-allocated streamNACK per pending entry: about 100+ bytes per pending entry. Here a
// group keeps one ordered array of fixed 32-byte records, cut into leaves, and nothing else per
// entry; a consumer owns a count, and its own pending entries are found by scanning the group's
// leaves that may hold them.
//
// Layout (one group):
//
//   leaves_ (std::vector<PendingLeaf>, ordered by id; a binary search over the leaves' last ids
//   |        finds the leaf, a binary search inside it finds the record)
//   |
//   +-> PendingLeaf (32 B): records (std::vector, at most leaf_capacity, default 256, records)
//   |                       consumer_mask (u64: bit slot % 64 set for every consumer slot that
//   |                                      owns a record here; may have extra bits)
//   |     PendingRecord (32 B):
//   |     +---------+---------+--------------------+----------------+---------------+
//   |     | ms u64  | seq u64 | delivery_time i64  | delivery_count | consumer slot |
//   |     |         |         | (ms, Unix time)    | u32 (see below)| u32           |
//   |     +---------+---------+--------------------+----------------+---------------+
//   |
//   consumers_ (std::map name -> slot, name order for XPENDING / XINFO CONSUMERS)
//   slots_     (std::vector<ConsumerSlot>, indexed by slot: seen, active, pending count,
//               a pointer to the name in consumers_; freed slots are reused)
//
// Bytes per pending entry: 32 for the record, plus per leaf of 256 records its 32-byte header
// and the allocator's rounding of the 8 KiB block: measured 32.1 B at 1M pending entries
// (stream_groups_test's BytesPerPendingEntry); 44 B when the same entries arrive in random order
// (half-split leaves, BytesPerPendingEntryInRandomOrder). Appends at the tail (XREADGROUP '>') open
// a new leaf when the last one is full, so the leaves of a growing PEL stay full; an insert in the
// middle of a full leaf splits it in halves. A leaf that falls under a quarter full merges with
// a neighbour when the two fit in three quarters of a leaf; an emptied leaf goes at once.
//
// Costs (P = the group's pending entries, L = P / leaf_capacity leaves):
//   Deliver, Ack/Remove one id, Claim one id, FindPending   O(log P + leaf_capacity)
//   PendingRange / AutoClaim over the group                 O(log P + entries scanned)
//   a consumer's own entries (history reads, XPENDING with a consumer, DeleteConsumer): the
//     leaves whose consumer_mask has the consumer's bit, scanned record by record, stopping
//     once the consumer's pending count is reached. With at most 64 consumers a mask bit means
//     the leaf holds or held that consumer's records (an ack or a claim leaves the bit until
//     the leaf splits, merges or loses a consumer); with more, consumers share bits and a scan
//     may read leaves of the others. Worst case O(L + P): a history read from an id above all
//     of the consumer's entries reads to the end of the PEL.
//   Summary, a consumer's pending count                      O(consumers), O(log consumers)
//
// Delivery counts are 64-bit as in Redis (XCLAIM RETRYCOUNT sets any long long; a count past
// 2^63 - 1 replies negative, as Redis's does): a record keeps 32 bits, and the rare count of
// 2^32 - 1 or more lives in a side table keyed by id (big_counts_).
//
// Invariants (CheckInvariants verifies them):
//  1. Records are strictly increasing by id across leaves; no leaf is empty; no leaf holds more
//     than leaf_capacity records.
//  2. Every record's consumer slot is live, and its bit (slot % 64) is in its leaf's mask.
//  3. Every live slot's pending count is the number of records naming it; their sum is
//     pending_count().
//  4. consumers_ and the live slots are the same set; a slot's name points at its map key.
//  5. big_counts_ holds exactly the ids of the records whose count field is kBigCount, each
//     with a count >= kBigCount.
//
// Not thread-safe. The string_views in returned structs point into the groups and are valid
// until the next change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/stream.h"

namespace goblin {

// Redis's SCG_INVALID_ENTRIES_READ: the group's entries_read counter is not known.
inline constexpr int64_t kEntriesReadUnknown = -1;

// streamEstimateDistanceFromFirstEverEntry: the logical read counter of id (how many entries
// were ever added up to and including id), or kEntriesReadUnknown when deletions make it
// unknowable or id is above the stream's last id.
int64_t EstimateEntriesRead(const Stream& stream, StreamId id);
// streamRangeHasTombstones: whether a deleted entry may lie in [start, end].
bool StreamRangeHasTombstones(const Stream& stream, StreamId start, StreamId end);

// XREADGROUP CLAIM's idle time (Redis 8.4): now - delivered taken as an unsigned number, so a
// delivery time ahead of the clock is idle for ages rather than not at all.
inline uint64_t UnsignedIdle(int64_t now_ms, int64_t delivered_ms) {
  return static_cast<uint64_t>(now_ms) - static_cast<uint64_t>(delivered_ms);
}

struct PendingEntry {
  StreamId id;
  std::string_view consumer;
  int64_t delivery_time_ms = 0;
  uint64_t delivery_count = 0;
};

struct ConsumerInfo {
  std::string_view name;
  int64_t seen_time_ms = 0;     // last attempted interaction (XINFO CONSUMERS idle)
  int64_t active_time_ms = -1;  // last successful one, -1 for never (XINFO "inactive" -1)
  uint64_t pending = 0;
};

// XPENDING's summary form.
struct PendingSummary {
  uint64_t count = 0;
  StreamId min_id;  // meaningful when count > 0
  StreamId max_id;
  std::vector<std::pair<std::string_view, uint64_t>> consumers;  // pending > 0, name order
};

// How XCLAIM updates a claimed entry (the caller parses IDLE / TIME / RETRYCOUNT / JUSTID /
// FORCE into this).
struct ClaimOptions {
  int64_t now_ms = 0;
  int64_t min_idle_ms = 0;              // 0: no idle test; else skip entries idle < min_idle_ms
  int64_t delivery_time_ms = 0;         // the new delivery time (now, or now - IDLE, or TIME)
  std::optional<uint64_t> retry_count;  // RETRYCOUNT: set the count to this
  bool increment_count = true;          // without RETRYCOUNT: count + 1 (false for JUSTID)
  bool force = false;                   // FORCE: create the entry when not pending
};

enum class ClaimResult {
  kNotPending,  // not in the PEL (and not forced, or forced but not in the stream)
  kTooRecent,   // pending but idle for less than min_idle_ms; untouched
  kRemoved,     // pending but gone from the stream: removed from the PEL (Redis 7 does too)
  kClaimed,     // now owned by the consumer with the updated time and count
};

struct AutoClaimResult {
  std::vector<StreamId> claimed;  // in id order
  std::vector<StreamId> deleted;  // pending ids not in the stream, removed from the PEL
  StreamId next;                  // the cursor for the next call; 0-0 when the scan ended
};

class ConsumerGroup {
 public:
  static constexpr size_t kDefaultLeafCapacity = 256;

  ConsumerGroup(StreamId last_delivered_id, int64_t entries_read,
                size_t leaf_capacity = kDefaultLeafCapacity);
  ConsumerGroup(const ConsumerGroup&) = delete;
  ConsumerGroup& operator=(const ConsumerGroup&) = delete;

  StreamId last_delivered_id() const { return last_delivered_id_; }
  // kEntriesReadUnknown or a count >= 0.
  int64_t entries_read() const { return entries_read_; }
  uint64_t pending_count() const { return pending_; }
  size_t consumer_count() const { return consumers_.size(); }

  // XGROUP SETID. REQUIRES: entries_read is kEntriesReadUnknown or >= 0.
  void SetId(StreamId id, int64_t entries_read);
  // XREADGROUP '>' for each entry delivered, NOACK included (Redis's per-entry update in
  // streamReplyWithRange): when id > last_delivered_id, advances it to id and counts the read
  // (entries_read + 1 when known and no tombstone lies at or after id, else the estimate).
  void AdvanceLastDelivered(const Stream& stream, StreamId id);
  // XINFO GROUPS "lag" (streamCGLag): entries not yet delivered, or nullopt when unknown.
  std::optional<int64_t> Lag(const Stream& stream) const;

  // --- Consumers ---

  // XGROUP CREATECONSUMER: creates it with seen = now, active = -1; false if it existed.
  bool CreateConsumer(std::string_view name, int64_t now_ms);
  // XREADGROUP / XCLAIM touching a consumer: creates it if missing, then seen = now. Returns
  // whether it was created (the caller notifies "xgroup-createconsumer").
  bool SeeConsumer(std::string_view name, int64_t now_ms);
  // XGROUP DELCONSUMER: removes the consumer and its pending entries from the PEL. Returns
  // the number it had pending, or nullopt when there was no such consumer.
  std::optional<uint64_t> DeleteConsumer(std::string_view name);
  std::optional<ConsumerInfo> FindConsumer(std::string_view name) const;
  // Every consumer in name order (XINFO CONSUMERS).
  void ForEachConsumer(const std::function<void(const ConsumerInfo&)>& visit) const;

  // --- The PEL ---

  // XREADGROUP '>' delivering id to consumer (created if missing, seen = now): a new pending
  // entry with count 1 and time now; an entry already pending (after XSETID moved the group
  // back) moves to this consumer with count reset to 1 and time now, as Redis does. Sets the
  // consumer's active time to now.
  void Deliver(std::string_view consumer, StreamId id, int64_t now_ms);
  // XREADGROUP with an explicit id: the consumer's pending ids >= start, ascending, at most
  // count (0: all). Empty for an unknown consumer.
  std::vector<StreamId> ConsumerPendingFrom(std::string_view consumer, StreamId start,
                                            size_t count) const;
  // A history read served the entry (it still exists in the stream): count + 1, time = now.
  // False when id is not pending.
  bool Redeliver(StreamId id, int64_t now_ms);
  // XACK: removes each pending id; returns how many were pending.
  size_t Ack(std::span<const StreamId> ids);
  // Removes one pending entry (its stream entry is gone); false if it was not pending.
  bool Remove(StreamId id);
  std::optional<PendingEntry> FindPending(StreamId id) const;

  // XPENDING key group.
  PendingSummary Summary() const;
  // XPENDING key group [IDLE min_idle] start end count [consumer]: the pending entries with
  // start <= id <= end, ascending, at most count of them (0 gives none), only consumer's when
  // given, only those idle (now - delivery time) >= min_idle_ms when min_idle_ms > 0.
  std::vector<PendingEntry> PendingRange(StreamId start, StreamId end, size_t count,
                                         std::optional<std::string_view> consumer,
                                         int64_t min_idle_ms, int64_t now_ms) const;

  // XCLAIM of one id, in Redis 7.2's order: not pending and options.force and in_stream ->
  // created (count 1 before the update below, min idle ignored); pending and !in_stream ->
  // removed, however recent; pending and idle too short -> kTooRecent; else moved to consumer
  // (created if missing) with time = options.delivery_time_ms and count = retry_count, or count + 1
  // when increment_count. A claim sets the consumer's active time to options.now_ms.
  ClaimResult Claim(StreamId id, std::string_view consumer, const ClaimOptions& options,
                    bool in_stream);
  // XAUTOCLAIM: scans pending entries from start, at most count * 10 of them, until count
  // entries were claimed or removed. Entries !in_stream(id) are removed (and counted); those
  // idle >= min_idle_ms (when > 0) move to consumer with time = now and count + 1 (unless
  // justid). REQUIRES: count > 0.
  AutoClaimResult AutoClaim(std::string_view consumer, StreamId start, size_t count,
                            int64_t min_idle_ms, int64_t now_ms, bool justid,
                            const std::function<bool(StreamId)>& in_stream);
  // XREADGROUP CLAIM (Redis 8.4): the pending entries in order of delivery time (then id),
  // oldest first, up to the first one idle for less than min_idle_ms, at most count of them
  // (0: no limit). Idle is UnsignedIdle, as Redis computes it: an entry delivered "in the
  // future" (the clock went back) counts as idle for ages once the walk reaches it. Changes
  // nothing. REQUIRES: min_idle_ms >= 0.
  // O(P + E log E), E the entries taken before the count: the PEL keeps no order by time.
  std::vector<PendingEntry> IdleEntries(int64_t min_idle_ms, int64_t now_ms, size_t count) const;
  // The pending entry delivered first (then the lowest id) among those keep accepts, if any
  // (XREADGROUP CLAIM: whether a claim can be served now, and when one could be). O(P), and
  // O(P log P) when the first one is refused.
  std::optional<PendingEntry> FirstDelivered(const std::function<bool(StreamId)>& keep) const;

  // The group's heap and inline bytes (leaves, records, consumers).
  size_t MemoryUsage() const;
  bool CheckInvariants() const;
  size_t leaf_count() const { return leaves_.size(); }

 private:
  friend class StreamGroups;

  struct PendingRecord {
    uint64_t ms;
    uint64_t seq;
    int64_t delivery_time_ms;
    uint32_t delivery_count;
    uint32_t consumer;
    StreamId id() const { return {ms, seq}; }
  };
  struct PendingLeaf {
    std::vector<PendingRecord> records;
    uint64_t consumer_mask = 0;
  };
  struct ConsumerSlot {
    const std::string* name = nullptr;  // the key in consumers_; nullptr when the slot is free
    int64_t seen_time_ms = 0;
    int64_t active_time_ms = -1;
    uint64_t pending = 0;
  };
  struct Position {
    size_t leaf;
    size_t index;
  };
  static uint64_t MaskBit(uint32_t slot) { return uint64_t{1} << (slot % 64); }
  // A record's delivery count is 32 bits; kBigCount there means the count (2^32 - 1 or more,
  // which only XCLAIM RETRYCOUNT or billions of deliveries make) is in big_counts_.
  static constexpr uint32_t kBigCount = UINT32_MAX;
  // Delivery time first, then id: the order XREADGROUP CLAIM walks the PEL in.
  static bool DeliveredBefore(const PendingRecord* a, const PendingRecord* b) {
    return a->delivery_time_ms != b->delivery_time_ms ? a->delivery_time_ms < b->delivery_time_ms
                                                      : a->id() < b->id();
  }
  uint64_t CountOf(const PendingRecord& record) const;
  // REQUIRES: record's id is final (the side table is keyed by it).
  void SetCount(PendingRecord* record, uint64_t count);
  // The record leaves the PEL: drops its big count, if any.
  void ForgetCount(const PendingRecord& record);

  // The first record with id >= the given id (leaf == leaves_.size() at the end).
  Position LowerBound(StreamId id) const;
  // The record with exactly this id, if any.
  std::optional<Position> Locate(StreamId id) const;
  // REQUIRES: no record with record.id() exists.
  void Insert(const PendingRecord& record);
  // Removes the record at pos, fixing the owner's count and the leaves.
  void Erase(Position pos);
  // Merges or drops a leaf that became small or empty.
  void Rebalance(size_t leaf);
  // Visits records from start to end (inclusive), only those of slot when slot is set, while
  // visit returns true.
  void Scan(StreamId start, StreamId end, std::optional<uint32_t> slot,
            const std::function<bool(const PendingRecord&)>& visit) const;
  // The consumer's slot, creating it (seen = now) when missing; *created says which.
  uint32_t EnsureConsumer(std::string_view name, int64_t now_ms, bool* created);
  std::optional<uint32_t> FindSlot(std::string_view name) const;
  void MoveTo(PendingRecord* record, uint32_t slot, size_t leaf);
  PendingEntry ToEntry(const PendingRecord& record) const;

  size_t leaf_capacity_;
  StreamId last_delivered_id_;
  int64_t entries_read_;
  uint64_t pending_ = 0;
  std::vector<PendingLeaf> leaves_;
  std::map<std::string, uint32_t, std::less<>> consumers_;
  std::vector<ConsumerSlot> slots_;
  std::vector<uint32_t> free_slots_;
  std::map<StreamId, uint64_t> big_counts_;  // the counts of records holding kBigCount
};

class StreamGroups {
 public:
  explicit StreamGroups(size_t leaf_capacity = ConsumerGroup::kDefaultLeafCapacity)
      : leaf_capacity_(leaf_capacity) {}
  StreamGroups(const StreamGroups&) = delete;
  StreamGroups& operator=(const StreamGroups&) = delete;

  size_t size() const { return groups_.size(); }
  bool empty() const { return groups_.empty(); }

  // XGROUP CREATE: nullptr when a group of that name exists (BUSYGROUP).
  // REQUIRES: entries_read is kEntriesReadUnknown or >= 0.
  ConsumerGroup* Create(std::string_view name, StreamId last_delivered_id, int64_t entries_read);
  // XGROUP DESTROY: false when there was no such group.
  bool Destroy(std::string_view name);
  ConsumerGroup* Find(std::string_view name);
  const ConsumerGroup* Find(std::string_view name) const;
  // Every group in name order (XINFO GROUPS).
  void ForEach(const std::function<void(std::string_view, const ConsumerGroup&)>& visit) const;

  // Whether some group still needs the entry id (the ACKED policy of XADD, XTRIM, XDELEX and
  // XACKDEL): it is pending in a group, or a group has not been delivered it yet (its last
  // delivered id is below id). O(groups * log pending).
  bool References(StreamId id) const;
  // Drops id from every group's PEL (the DELREF policy). Returns how many PELs held it.
  size_t RemoveEverywhere(StreamId id);

  size_t MemoryUsage() const;

  // The snapshot value of every group (every number a varint, z: zigzag):
  //   dump  := [version u8 = 1] [group count] group*            (groups in name order)
  //   group := [name length] [name] [last ms] [last seq] [entries_read + 1]
  //            [consumer count] consumer* [pending count] pending*
  //   consumer := [name length] [name] [z seen] [z active]        (name order)
  //   pending  := [ms - previous ms] [seq - previous seq - 1 when ms equal, else seq]
  //               [z delivery time - previous delivery time] [count] [consumer ordinal]
  //   (the first pending entry writes its ms and seq whole and its time against 0; ids
  //   strictly increase, ordinals count consumers in the order written)
  void Dump(std::string* out) const;
  // REQUIRES nothing of data: returns false for bytes Dump did not write, leaving *out as it
  // was; else replaces *out's groups (its leaf capacity stays).
  static bool Restore(std::string_view data, StreamGroups* out);

  bool CheckInvariants() const;

 private:
  size_t leaf_capacity_;
  std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>> groups_;
};

}  // namespace goblin
