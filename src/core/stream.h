// Stream: the entries of a Redis stream, ordered by id, in packed nodes.
//
// An entry is an id (ms-seq, two 64-bit numbers, strictly increasing along the stream) and a
// non-empty list of field/value pairs. Streams are append-mostly: entries arrive at the tail
// with ids just above the last, are read by ranges, deleted one by one (XDEL) or trimmed from
// the head (XTRIM, XADD MAXLEN/MINID).
//
// Layout (one node, at most max_node_bytes of entries and max_node_entries entries; an entry
// bigger than max_node_bytes gets a node of its own):
//
//   Node (struct, 80 B): first id, last id (deleted entries included), entries, live,
//                        master_fields, entries_start, bytes (a std::string)
//   bytes := master entry*
//   master := [count varint] [name: varint length + bytes] * count
//             the field names of the node's first entry (a node of entries of one shape
//             stores the names once)
//   entry := [flags u8][ms delta varint][seq varint] body
//     body, same fields:  [value: varint length + bytes] * master count
//     body, other fields: [count varint] ([name: varint length + bytes]
//                                         [value: varint length + bytes]) * count
//     flags bit 0  same fields as the master (names omitted); the first entry always has it
//     flags bit 1  deleted (XDEL and exact trims mark it; the bytes stay until the node goes)
//     ms delta     entry ms - node first ms
//     seq          entry seq - previous entry's seq when the ms equals the previous entry's
//                  (the first entry's "previous" is the node's first id, so it writes 0 0),
//                  else the entry's seq (so several entries per millisecond cost 1 byte)
//
//   +---------------+----------------------------+----------------------------+----
//   | 01 01 'f'     | 01 00 00 10 <16 B value>   | 01 00 01 10 <16 B value>   | ...
//   | master "f"    | same, 0 ms, seq+0          | same, 0 ms, seq+1          |
//   +---------------+----------------------------+----------------------------+----
//
// Byte budget, one field "f" and a 16-byte value, ids several per ms: flags 1, ms delta 1,
// seq 1, value length 1, value 16: 20 bytes per entry, plus per node (100 entries) the master
// (3 B) and the Node struct (80 B, up to twice that in the vector's spare capacity): measured
// 21.35 B per entry at 0.5M, 1M and 2M entries (stream_test's MemoryBudget; Redis 7.2's listpacks
// spend 31.3). The tail node's block grows geometrically, each step capped at the node's
// expected full size (max_node_bytes, or this entry's size times the entries still allowed),
// and shrinks to fit when the next node opens.
//
// Nodes are kept in a vector ordered by first id; a lookup by id is a binary search over the
// nodes, then a scan inside one node (at most max_node_entries entries). A range costs
// O(log nodes + entries scanned); a reverse range decodes each node forward into a buffer of
// entry heads and walks it back. Removing head nodes moves the vector (O(nodes), a memmove of
// 80-byte structs).
//
// Trimming (Redis's streamTrim): whole head nodes go while the live count left stays >= maxlen
// (MAXLEN) or while the node's last id, deleted entries included, is < min_id (MINID). With
// approx that is all; a non-zero limit stops before a node whose removal would take the total
// removed past limit (the caller passes Redis's default, 100 * stream-node-max-entries, when
// LIMIT is not given). Without approx, limit is ignored, and the new head node's oldest live
// entries are then marked deleted until the exact bound holds (a node left without live entries
// is dropped). Trimming leaves max_deleted_id() alone, as in Redis: only XDEL raises it.
// With TrimRefs::keep (ACKED) a head node holding a kept live entry ends the run of whole nodes;
// the exact trim then marks that node's oldest entries deleted, passing over the kept ones, and
// stops at the node's end even when the bound does not hold yet, as Redis's streamTrim does.
//
// Invariants:
//  1. Ids strictly increase across entries, deleted ones included, and every id is above
//     0-0 and at most last_id(). last_id() is the highest id ever added (it stays when the entry
//     is deleted) unless SetLastId lowered it: that cuts the deleted entries above the new id.
//  2. No node is empty of live entries: a node whose entries are all deleted is dropped.
//  3. size() is the number of live entries; entries_added() counts every entry ever added
//     (XSETID may raise it), max_deleted_id() is the highest id XDEL deleted (or what
//     XSETID set).
//  4. Each Node's last, entries, live, master_fields and entries_start are what its bytes say
//     (CheckInvariants decodes every node to verify 1, 2 and 4).
//
// Not thread-safe. Views returned by Find and passed to Range's visitor are valid until the
// stream changes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace goblin {

struct StreamId {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;
  static constexpr StreamId Min() { return {0, 0}; }
  static constexpr StreamId Max() { return {UINT64_MAX, UINT64_MAX}; }
  // The next id after this one (REQUIRES: not Max()).
  StreamId Next() const { return seq == UINT64_MAX ? StreamId{ms + 1, 0} : StreamId{ms, seq + 1}; }
  // The id before this one (REQUIRES: not Min()).
  StreamId Previous() const {
    return seq == 0 ? StreamId{ms - 1, UINT64_MAX} : StreamId{ms, seq - 1};
  }
  std::string ToString() const;  // "ms-seq"
};

using StreamField = std::pair<std::string_view, std::string_view>;

// One entry as a range returns it: views into the stream, valid until it changes.
struct StreamEntryView {
  StreamId id;
  std::vector<StreamField> fields;
};

class Stream {
 public:
  struct Limits {
    size_t max_node_bytes = 4096;   // stream-node-max-bytes (0: no limit)
    size_t max_node_entries = 100;  // stream-node-max-entries (0: no limit)
  };

  Stream() = default;
  explicit Stream(Limits limits) : limits_(limits) {}

  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  StreamId last_id() const { return last_id_; }
  StreamId max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  // The first and last live entries' ids (REQUIRES: !empty()).
  StreamId first_id() const;
  StreamId last_live_id() const;
  // The first node's first id, deleted entries included: where Redis's log puts an exact MINID
  // (streamGetEdgeID without skipping tombstones). REQUIRES: !empty().
  StreamId first_id_with_deleted() const { return nodes_.front().first; }

  // Appends an entry. REQUIRES: id > last_id(), fields non-empty.
  void Append(StreamId id, std::span<const StreamField> fields);

  // Visits the live entries with start <= id <= end, ascending (or descending when reverse),
  // at most count of them (0: all); visit returns false to stop. Returns the number visited.
  size_t Range(StreamId start, StreamId end, bool reverse, size_t count,
               const std::function<bool(const StreamEntryView&)>& visit) const;
  // The entry with this id, if live.
  std::optional<StreamEntryView> Find(StreamId id) const;

  // XDEL: marks the entry deleted; false when there is no live entry with this id.
  bool Delete(StreamId id);

  // What a trim does about entries that consumer groups still refer to (XADD's and XTRIM's
  // KEEPREF, DELREF and ACKED; by default nothing). keep(id) true spares that entry: a node
  // holding such an entry is not removed whole, so the trim stops there, and the exact trim of
  // that node passes over it (see "Trimming" above). removed(id) hears of every live entry the
  // trim removes, before it goes. Neither may change the stream.
  struct TrimRefs {
    std::function<bool(StreamId)> keep;
    std::function<void(StreamId)> removed;
  };

  // XTRIM / XADD trimming. Removes the oldest entries until at most maxlen remain (MAXLEN)
  // or none below min_id remains (MINID). approx (~) removes whole nodes only, never more
  // than the exact trim would; limit caps the entries an approx trim removes (0: no cap; an
  // exact trim ignores it). Returns the number of entries removed. See "Trimming" above.
  size_t TrimMaxLen(size_t maxlen, bool approx, size_t limit, const TrimRefs& refs = {});
  size_t TrimMinId(StreamId min_id, bool approx, size_t limit, const TrimRefs& refs = {});

  // XSETID: REQUIRES id >= the last live entry's id (the caller checks and replies). An id
  // below deleted tail entries cuts them from the tail node (invariant 1).
  void SetLastId(StreamId id, std::optional<uint64_t> entries_added,
                 std::optional<StreamId> max_deleted_id);

  // The number of live entries with an id above id (a consumer group's lag). O(log nodes +
  // one node + the fewer of the nodes before or after id).
  size_t CountAfter(StreamId id) const;

  // sizeof(Stream), the node vector's capacity and every node's heap block.
  size_t MemoryUsage() const;
  size_t node_count() const { return nodes_.size(); }
  const Limits& limits() const { return limits_; }
  void set_limits(Limits limits) { limits_ = limits; }

  // The snapshot value: every node's bytes as they lie, with the stream's ids and counters.
  void Dump(std::string* out) const;
  // REQUIRES nothing of data: returns false for bytes Dump did not write, leaving *out as it
  // was; else replaces *out's entries and counters (its limits stay).
  //   dump := [version u8 = 1] [live] [entries_added] [last_id ms] [seq] [max_deleted ms]
  //           [seq] [node count] ([first ms] [first seq] [bytes length] [bytes]) * count
  //   (every number a varint). Each node is decoded and checked as CheckInvariants does.
  static bool Restore(std::string_view data, Stream* out);

  // Decodes every node and checks invariants 1, 2 and 4 and the live count (for tests).
  bool CheckInvariants() const;

 private:
  struct Node {
    StreamId first;        // the first entry's id (deleted or not)
    StreamId last;         // the last entry's id (deleted or not)
    uint32_t entries = 0;  // entries in bytes, deleted included
    uint32_t live = 0;
    uint32_t master_fields = 0;  // count of master field names at the start of bytes
    uint32_t entries_start = 0;  // offset of the first entry in bytes
    std::string bytes;           // master fields, then the entries
  };
  struct EntryHead;
  class EntryScanner;

  // fn(head) for each entry of node in order until it returns false; false on bytes that do
  // not decode (never for a node this class built).
  static bool ScanNode(const Node& node, const std::function<bool(const EntryHead&)>& fn);
  // The fields of the entry at head in node.
  static void ReadFields(const Node& node, const EntryHead& head, std::vector<StreamField>* fields);
  // The node's last live entry (REQUIRES: it has one).
  static EntryHead LastLive(const Node& node);
  // Fills node's counts and last id from node->first and node->bytes; false when they do not
  // decode or the node has no live entry.
  static bool BuildNode(Node* node);

  // The live entry with this id: its node's index and its head.
  bool Locate(StreamId id, size_t* node_index, EntryHead* found) const;
  // The entries a node may hold (max_node_entries, 0 meaning no limit, capped at 2^32 - 1).
  size_t EntryCap() const;
  // Makes room for more bytes at the end of node's bytes (see the layout comment).
  void Reserve(Node* node, size_t more);
  void MarkDeleted(Node* node, const EntryHead& head);
  // Removes nodes [0, count) (trimming), updating live_.
  void DropHeadNodes(size_t count, const TrimRefs& refs);
  // Whether node holds a live entry refs.keep spares.
  static bool HoldsKept(const Node& node, const TrimRefs& refs);
  // The exact trim inside the head node: marks its live entries deleted, oldest first, those
  // refs.keep spares excepted, while more(id) holds; drops the node if it empties.
  void TrimHeadNode(const TrimRefs& refs, const std::function<bool(StreamId)>& more);

  Limits limits_;
  std::vector<Node> nodes_;
  size_t live_ = 0;
  StreamId last_id_;
  StreamId max_deleted_id_;
  uint64_t entries_added_ = 0;
};

}  // namespace goblin
