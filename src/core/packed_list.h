// PackedList: a list of binary strings in packed nodes, indexed by position.
//
// Entries are a varint length and the bytes, back to back, in nodes of a few KB; a Fenwick tree
// over the nodes' entry counts finds the node holding any position in O(log nodes), so LINDEX,
// LSET, LINSERT, LRANGE from an offset and LTRIM never walk the nodes (Redis's quicklist walks
// its linked list of nodes from the nearer end).
//
//   entry:  [varint length][bytes]            16-byte value: 1 + 16 = 17 bytes
//
//   node:   one malloc block in a jemalloc size class (at most 8 KB by default)
//           +-------+-----+-------+----------+-------------------+----------+
//           | begin | end | count | capacity |  free  | entries  |   free   |
//           | u32   | u32 | u32   | u32      |        ^begin     ^end       |
//           +-------+-----+-------+----------+-------------------+----------+
//           A node built by pushes at the tail fills from the left, one built by pushes at
//           the head from the right, so either end grows without moving bytes.
//
//   index:  nodes_ (8 B per node) and fenwick_ (4 B per node): 12 B per ~480 entries.
//
// Byte budget, RPUSH of 16-byte values: 17 B of entry + (16 B node header + 12 B index) / 480
// entries per 8 KB node = 17.06 B per element (Redis 7.2's quicklist: 18.2).
//
// Compression (list-compress-depth d > 0): every node but the d first and d last holds its
// entries as one LZ4 block (raw_bytes says how long they are decompressed), as Redis
// compresses its quicklist's interior nodes. A read decompresses a node into a scratch buffer;
// a change in the middle decompresses it for good and the interior is compressed again after
// the change (a pass over the nodes' headers, so a change in the middle of a compressed list
// costs O(nodes)). Pushes and pops work on end nodes, which stay raw. A node that LZ4 cannot shrink
// by 8 bytes stays raw (tried says so until it changes).
//
// Encoding (what OBJECT ENCODING says) follows Redis 7.2's rules, independent of the nodes: a
// list starts as "listpack" and becomes "quicklist" when a command would take it past
// list-max-listpack-size (ConvertForGrowth: more entries than a positive limit, or more bytes
// of Redis's listpack than a negative one names, measured as Redis measures it: the listpack's
// bytes plus the raw lengths of the new elements; a positive limit also caps the bytes at
// 8 KB); it returns to "listpack" when shrinking leaves it under half of both limits
// (ConvertForShrink). Redis also requires its quicklist to be down to one node; a list under
// half the byte limit fits one node, so that condition is taken as met.
//
// Invariants:
//  1. No node is empty; a node's count entries lie exactly in data[begin, end).
//  2. fenwick_ holds the prefix sums of the nodes' counts; size_ is their sum.
//  3. listpack_bytes_ is the byte size Redis's listpack of the same elements would have.
//  4. tail_offsets_, when valid, are the offsets of every entry of the last node, in order.
//  5. After every public change, with depth d = compress_depth_, nodes [d, n - d) are compressed
//     (or tried) and the others raw; the first and last nodes are raw whenever d > 0.
//
// Not thread-safe. Views returned by At and passed to callbacks are valid until the next
// change of the list.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace goblin {

// list-max-listpack-size and list-compress-depth as the structure takes them.
struct ListLimits {
  int64_t max_listpack_size = -2;  // > 0: entries per node; -1..-5: 4, 8, 16, 32, 64 KB per node
  int64_t compress_depth = 0;      // nodes kept raw at each end; 0: no compression

  // A node's listpack never passes this many bytes when its size is a count.
  static constexpr size_t kSafetyBytes = 8192;
  // Redis 7.2's quicklist node limits under max_listpack_size: the listpack bytes of a node (4
  // to 64 KB for a negative size, below -5 as -5; 8 KB, its safety limit, for a count) and
  // the entries (the count; 1 for 0; no limit for a negative size).
  size_t NodeBytes() const {
    if (max_listpack_size >= 0) return kSafetyBytes;
    const uint64_t level = std::min<uint64_t>(static_cast<uint64_t>(-(max_listpack_size + 1)), 4);
    return size_t{4096} << level;
  }
  size_t NodeEntries() const {
    if (max_listpack_size > 0) return static_cast<size_t>(max_listpack_size);
    return max_listpack_size == 0 ? 1 : SIZE_MAX;
  }
};

struct ListStats {
  const char* encoding = "listpack";
  const char* layout = "packed-nodes";
  size_t compressed_nodes = 0;
  size_t size = 0;
  size_t bytes = 0;           // MemoryUsage()
  size_t payload_bytes = 0;   // entry bytes
  size_t capacity_bytes = 0;  // payload bytes the nodes could hold
  double fill = 0;            // payload_bytes / capacity_bytes
  size_t nodes = 0;
  size_t index_bytes = 0;
};

class PackedList {
 public:
  enum class Encoding { kListpack, kQuicklist };

  PackedList() = default;
  ~PackedList();
  PackedList(PackedList&& other) noexcept;
  PackedList& operator=(PackedList&& other) noexcept;
  PackedList(const PackedList&) = delete;
  PackedList& operator=(const PackedList&) = delete;

  // Same elements, same encoding.
  PackedList Clone() const;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Encoding encoding() const { return quicklist_ ? Encoding::kQuicklist : Encoding::kListpack; }
  std::string_view EncodingName() const { return quicklist_ ? "quicklist" : "listpack"; }

  // Redis 7.2's conversions (see the header comment). ConvertForGrowth is called before a
  // command adds add_count elements of add_bytes raw bytes; ConvertForShrink after it removed
  // or replaced elements.
  void ConvertForGrowth(size_t add_count, size_t add_bytes, const ListLimits& limits);
  void ConvertForShrink(const ListLimits& limits);
  // Reports "quicklist" from now on, whatever the size (Redis keeps a list it loads as a
  // quicklist when the file held it in several nodes).
  void ConvertToQuicklist() { quicklist_ = true; }

  void PushFront(std::string_view value, const ListLimits& limits);
  void PushBack(std::string_view value, const ListLimits& limits);
  // Remove and return the first / last element. REQUIRES: !empty().
  std::string PopFront();
  std::string PopBack();

  // REQUIRES: index < size().
  std::string_view At(size_t index) const;
  // REQUIRES: index < size().
  void Set(size_t index, std::string_view value, const ListLimits& limits);
  // Inserts before the element at index; index == size() appends. REQUIRES: index <= size().
  void Insert(size_t index, std::string_view value, const ListLimits& limits);
  // Removes positions [start, stop), clamped to the list.
  void EraseRange(size_t start, size_t stop);

  // fn(std::string_view) for positions [start, stop) ascending; stop is clamped.
  template <typename Fn>
  void ForEach(size_t start, size_t stop, Fn&& fn) const;
  // The first position >= start whose element satisfies pred, or size().
  template <typename Pred>
  size_t FindForward(size_t start, Pred&& pred) const;
  // The last position < end whose element satisfies pred, or size().
  template <typename Pred>
  size_t FindBackward(size_t end, Pred&& pred) const;

  // Bytes held, sizeof(PackedList) included.
  size_t MemoryUsage() const;
  // Repacks the nodes full; returns the bytes saved.
  size_t Optimize();
  ListStats Stats() const;

  // A self-describing byte form: varint encoding flag, varint count, then the entries.
  void Dump(std::string* out) const;
  // The list Dump wrote, nodes sized by limits, in the encoding Redis 7.2 gives a list it loads
  // (listpack when within the limits). False, with *out untouched, on any malformed input.
  static bool Restore(std::string_view data, const ListLimits& limits, PackedList* out);

 private:
  struct Node {
    uint32_t begin;
    uint32_t end;
    uint32_t count;
    uint32_t capacity;
    uint32_t raw_bytes;  // 0: raw; else the entries are an LZ4 block in data[begin, end)
    uint32_t tried;      // 1: compressing it did not pay, since it last changed
    uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
    const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this + 1); }
    uint32_t bytes() const { return end - begin; }
  };
  struct Position {
    size_t node;
    size_t offset;  // the entry's position within its node
  };

  // Whether the elements fit a listpack under limits divided by divisor (2 when shrinking).
  bool FitsListpack(const ListLimits& limits, size_t divisor) const;
  static Node* NewNode(size_t capacity);
  static void FreeNode(Node* node);
  // The payload bytes a node may hold under limits.
  static size_t NodePayloadLimit(const ListLimits& limits);
  static size_t EntrySize(std::string_view value);
  static const uint8_t* ReadEntry(const uint8_t* p, std::string_view* value);
  static uint8_t* WriteEntry(uint8_t* p, std::string_view value);

  Position Locate(size_t index) const;
  // The node at index with its entries readable: itself, or (compressed) a copy decompressed
  // into scratch_, valid until the next call.
  const Node* Readable(size_t index) const;
  // The node at index, decompressed for good when it was compressed.
  Node* Writable(size_t index);
  void Compress(size_t index);
  // Insert and EraseRange without restoring invariant 5 (they do it after).
  void InsertUnwindowed(size_t index, std::string_view value, const ListLimits& limits);
  void EraseUnwindowed(size_t start, size_t stop);
  // Restores invariant 5: for every node (all), or for the nodes at the window's edges.
  void EnforceWindow(bool all);
  // Offset within the node's data of its offset-th entry.
  static uint32_t EntryOffset(const Node* node, size_t offset);
  void RebuildIndex();
  // The sum of the first `nodes` nodes' counts.
  size_t Prefix(size_t nodes) const;
  void AddToIndex(size_t node, int64_t delta);
  // A node with room for bytes more at the front or back, growing or re-centering it; nullptr
  // when it would pass the limits.
  Node* MakeRoom(size_t node_index, size_t bytes, bool front, const ListLimits& limits);
  void InsertNode(size_t at, Node* node);
  // A new, empty last node; REQUIRES: the index is current.
  void AppendNode(Node* node);
  void RemoveNode(size_t at);
  // Merges node at with a neighbour when both are under a quarter full (under the limits the
  // list was last changed with).
  void MergeIfSparse(size_t at);
  void RememberLimits(const ListLimits& limits) {
    payload_limit_ = NodePayloadLimit(limits);
    count_limit_ = limits.NodeEntries();
    const size_t depth = static_cast<size_t>(std::max<int64_t>(0, limits.compress_depth));
    if (depth != compress_depth_) {
      compress_depth_ = depth;
      EnforceWindow(true);
    }
  }
  void InvalidateTail() { tail_valid_ = false; }
  void BuildTailOffsets() const;
  void Clear();

  std::vector<Node*> nodes_;
  std::vector<uint32_t> fenwick_;  // 1-based prefix sums of node counts
  size_t size_ = 0;
  size_t listpack_bytes_ = 7;  // Redis's empty listpack: 6-byte header and end byte
  size_t payload_limit_ = 0;   // the node limits of the last change (Optimize, merges)
  size_t count_limit_ = SIZE_MAX;
  size_t compress_depth_ = 0;
  bool may_have_compressed_ = false;  // a node was compressed since the last pass at depth 0
  mutable std::string scratch_;       // a compressed node's decompressed copy (Readable)
  bool quicklist_ = false;
  mutable bool tail_valid_ = false;
  mutable std::vector<uint32_t> tail_offsets_;
};

template <typename Fn>
void PackedList::ForEach(size_t start, size_t stop, Fn&& fn) const {
  stop = std::min(stop, size_);
  if (start >= stop) return;
  Position pos = Locate(start);
  size_t remaining = stop - start;
  for (size_t n = pos.node; n < nodes_.size() && remaining > 0; ++n) {
    const Node* node = Readable(n);
    const uint8_t* p = node->data() + (n == pos.node ? EntryOffset(node, pos.offset) : node->begin);
    const size_t first = n == pos.node ? pos.offset : 0;
    for (size_t i = first; i < node->count && remaining > 0; ++i, --remaining) {
      std::string_view value;
      p = ReadEntry(p, &value);
      fn(value);
    }
  }
}

template <typename Pred>
size_t PackedList::FindForward(size_t start, Pred&& pred) const {
  if (start >= size_) return size_;
  Position pos = Locate(start);
  size_t index = start;
  for (size_t n = pos.node; n < nodes_.size(); ++n) {
    const Node* node = Readable(n);
    const uint8_t* p = node->data() + (n == pos.node ? EntryOffset(node, pos.offset) : node->begin);
    for (size_t i = n == pos.node ? pos.offset : 0; i < node->count; ++i, ++index) {
      std::string_view value;
      p = ReadEntry(p, &value);
      if (pred(value)) return index;
    }
  }
  return size_;
}

template <typename Pred>
size_t PackedList::FindBackward(size_t end, Pred&& pred) const {
  end = std::min(end, size_);
  if (end == 0) return size_;
  Position pos = Locate(end - 1);
  size_t index = end;  // one past the position being looked at
  std::vector<std::string_view> values;
  for (size_t n = pos.node + 1; n-- > 0;) {
    const Node* node = Readable(n);
    const size_t last = n == pos.node ? pos.offset : node->count - 1;
    values.clear();
    const uint8_t* p = node->data() + node->begin;
    for (size_t i = 0; i <= last; ++i) {
      std::string_view value;
      p = ReadEntry(p, &value);
      values.push_back(value);
    }
    for (size_t i = values.size(); i-- > 0;) {
      --index;
      if (pred(values[i])) return index;
    }
  }
  return size_;
}

}  // namespace goblin
