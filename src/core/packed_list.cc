#include "core/packed_list.h"

#include <lz4.h>
#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/bytes.h"
#include "core/listpack.h"
#include "core/string_number.h"
#include "core/varint.h"

namespace goblin {

namespace {

// A first node starts this small and doubles: a list of a few short elements stays small.
constexpr size_t kFirstNodeBlock = 64;
// Redis's quicklist leaves nodes under 48 bytes raw, and keeps a compression that saves less
// than 8 bytes undone.
constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinCompressGain = 8;

}  // namespace

// ---- entries ------------------------------------------------------------------------------

size_t PackedList::EntrySize(std::string_view value) {
  return VarintSize(value.size()) + value.size();
}

const uint8_t* PackedList::ReadEntry(const uint8_t* p, std::string_view* value) {
  uint64_t length;
  p = GetVarint(p, &length);
  *value = std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(length));
  return p + length;
}

uint8_t* PackedList::WriteEntry(uint8_t* p, std::string_view value) {
  p = PutVarint(p, value.size());
  if (!value.empty()) std::memcpy(p, value.data(), value.size());
  return p + value.size();
}

// ---- nodes and the index ------------------------------------------------------------------

PackedList::Node* PackedList::NewNode(size_t capacity) {
  void* block = std::malloc(sizeof(Node) + capacity);
  if (block == nullptr) throw std::bad_alloc();
  auto* node = static_cast<Node*>(block);
  // The allocator's size class may be larger than asked: the node may use all of it.
  node->capacity = static_cast<uint32_t>(malloc_usable_size(block) - sizeof(Node));
  node->begin = node->end = 0;
  node->count = 0;
  node->raw_bytes = 0;
  node->tried = 0;
  return node;
}

const PackedList::Node* PackedList::Readable(size_t index) const {
  const Node* node = nodes_[index];
  if (node->raw_bytes == 0) return node;
  scratch_.resize(sizeof(Node) + node->raw_bytes);
  auto* copy = reinterpret_cast<Node*>(scratch_.data());
  *copy = *node;
  copy->begin = 0;
  copy->end = copy->capacity = node->raw_bytes;
  copy->raw_bytes = 0;
  LZ4_decompress_safe(reinterpret_cast<const char*>(node->data() + node->begin),
                      reinterpret_cast<char*>(copy->data()), static_cast<int>(node->bytes()),
                      static_cast<int>(node->raw_bytes));
  return copy;
}

PackedList::Node* PackedList::Writable(size_t index) {
  Node* node = nodes_[index];
  node->tried = 0;  // the caller changes it
  if (node->raw_bytes == 0) return node;
  Node* raw = NewNode(std::max<size_t>(node->raw_bytes, payload_limit_));
  LZ4_decompress_safe(reinterpret_cast<const char*>(node->data() + node->begin),
                      reinterpret_cast<char*>(raw->data()), static_cast<int>(node->bytes()),
                      static_cast<int>(node->raw_bytes));
  raw->end = node->raw_bytes;
  raw->count = node->count;
  FreeNode(node);
  nodes_[index] = raw;
  if (index + 1 == nodes_.size()) InvalidateTail();
  return raw;
}

void PackedList::Compress(size_t index) {
  Node* node = nodes_[index];
  if (node->raw_bytes != 0 || node->tried != 0 || node->bytes() < kMinCompressBytes) return;
  const int bound = LZ4_compressBound(static_cast<int>(node->bytes()));
  std::string packed(static_cast<size_t>(bound), '\0');
  const int size = LZ4_compress_default(reinterpret_cast<const char*>(node->data() + node->begin),
                                        packed.data(), static_cast<int>(node->bytes()), bound);
  if (size <= 0 || static_cast<size_t>(size) + kMinCompressGain >= node->bytes()) {
    node->tried = 1;
    return;
  }
  Node* compressed = NewNode(static_cast<size_t>(size));
  std::memcpy(compressed->data(), packed.data(), static_cast<size_t>(size));
  compressed->end = static_cast<uint32_t>(size);
  compressed->count = node->count;
  compressed->raw_bytes = node->bytes();
  FreeNode(node);
  nodes_[index] = compressed;
  may_have_compressed_ = true;
  if (index + 1 == nodes_.size()) InvalidateTail();
}

void PackedList::EnforceWindow(bool all) {
  const size_t n = nodes_.size();
  const size_t d = compress_depth_;
  // Without compression this costs nothing, unless nodes compressed before may remain.
  if (d == 0 && (!all || !may_have_compressed_)) return;
  auto apply = [&](size_t i) {
    const bool interior = d > 0 && n > 2 * d && i >= d && i < n - d;
    if (interior) {
      Compress(i);
    } else if (nodes_[i]->raw_bytes != 0) {
      Writable(i);
    }
  };
  if (all) {
    for (size_t i = 0; i < n; ++i) apply(i);
    if (d == 0) may_have_compressed_ = false;
    return;
  }
  for (size_t i : {d - 1, d, n - d - 1, n - d}) {
    if (i < n) apply(i);
  }
}

void PackedList::FreeNode(Node* node) { std::free(node); }

size_t PackedList::NodePayloadLimit(const ListLimits& limits) {
  return limits.NodeBytes() - sizeof(Node);
}

PackedList::~PackedList() { Clear(); }

void PackedList::Clear() {
  for (Node* node : nodes_) FreeNode(node);
  nodes_.clear();
  fenwick_.clear();
  size_ = 0;
  listpack_bytes_ = 7;
  tail_valid_ = false;
}

PackedList::PackedList(PackedList&& other) noexcept { *this = std::move(other); }

PackedList& PackedList::operator=(PackedList&& other) noexcept {
  if (this == &other) return *this;
  Clear();
  nodes_ = std::move(other.nodes_);
  fenwick_ = std::move(other.fenwick_);
  size_ = other.size_;
  listpack_bytes_ = other.listpack_bytes_;
  payload_limit_ = other.payload_limit_;
  count_limit_ = other.count_limit_;
  compress_depth_ = other.compress_depth_;
  may_have_compressed_ = other.may_have_compressed_;
  quicklist_ = other.quicklist_;
  tail_valid_ = other.tail_valid_;
  tail_offsets_ = std::move(other.tail_offsets_);
  other.nodes_.clear();
  other.fenwick_.clear();
  other.size_ = 0;
  other.listpack_bytes_ = 7;
  other.tail_valid_ = false;
  return *this;
}

PackedList PackedList::Clone() const {
  PackedList copy;
  copy.nodes_.reserve(nodes_.size());
  for (const Node* node : nodes_) {
    Node* twin = NewNode(node->capacity);
    twin->begin = node->begin;
    twin->end = node->end;
    twin->count = node->count;
    twin->raw_bytes = node->raw_bytes;
    twin->tried = node->tried;
    std::memcpy(twin->data() + node->begin, node->data() + node->begin, node->bytes());
    copy.nodes_.push_back(twin);
  }
  copy.fenwick_ = fenwick_;
  copy.size_ = size_;
  copy.listpack_bytes_ = listpack_bytes_;
  copy.payload_limit_ = payload_limit_;
  copy.count_limit_ = count_limit_;
  copy.compress_depth_ = compress_depth_;
  copy.may_have_compressed_ = may_have_compressed_;
  copy.quicklist_ = quicklist_;
  return copy;
}

void PackedList::RebuildIndex() {
  const size_t n = nodes_.size();
  fenwick_.assign(n + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    fenwick_[i] += nodes_[i - 1]->count;
    const size_t parent = i + (i & (~i + 1));
    if (parent <= n) fenwick_[parent] += fenwick_[i];
  }
}

void PackedList::AddToIndex(size_t node, int64_t delta) {
  for (size_t i = node + 1; i < fenwick_.size(); i += i & (~i + 1)) {
    fenwick_[i] = static_cast<uint32_t>(static_cast<int64_t>(fenwick_[i]) + delta);
  }
}

PackedList::Position PackedList::Locate(size_t index) const {
  const size_t n = nodes_.size();
  size_t pos = 0;
  size_t rest = index;
  size_t step = 1;
  while (step * 2 <= n) step *= 2;
  for (; step > 0; step /= 2) {
    if (pos + step <= n && fenwick_[pos + step] <= rest) {
      pos += step;
      rest -= fenwick_[pos];
    }
  }
  return {pos, rest};
}

uint32_t PackedList::EntryOffset(const Node* node, size_t offset) {
  const uint8_t* p = node->data() + node->begin;
  for (size_t i = 0; i < offset; ++i) {
    uint64_t length;
    p = GetVarint(p, &length);
    p += length;
  }
  return static_cast<uint32_t>(p - node->data());
}

void PackedList::BuildTailOffsets() const {
  tail_offsets_.clear();
  const Node* node = nodes_.back();
  const uint8_t* p = node->data() + node->begin;
  for (uint32_t i = 0; i < node->count; ++i) {
    tail_offsets_.push_back(static_cast<uint32_t>(p - node->data()));
    uint64_t length;
    p = GetVarint(p, &length);
    p += length;
  }
  tail_valid_ = true;
}

size_t PackedList::Prefix(size_t nodes) const {
  size_t sum = 0;
  for (size_t i = nodes; i > 0; i -= i & (~i + 1)) sum += fenwick_[i];
  return sum;
}

void PackedList::AppendNode(Node* node) {
  // The new last cell covers the nodes (i - lowbit(i), i]: its sum takes O(log n), where
  // rebuilding the tree at every new node would cost O(nodes) per ~480 pushes.
  InvalidateTail();
  nodes_.push_back(node);
  const size_t i = nodes_.size();
  fenwick_.resize(i);  // cells 0..i-1 (cell 0 unused)
  const size_t covered_from = i - (i & (~i + 1));
  fenwick_.push_back(static_cast<uint32_t>(node->count + Prefix(i - 1) - Prefix(covered_from)));
}

void PackedList::InsertNode(size_t at, Node* node) {
  if (at == nodes_.size()) InvalidateTail();  // a new last node
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(at), node);
  RebuildIndex();
}

void PackedList::RemoveNode(size_t at) {
  FreeNode(nodes_[at]);
  if (at == nodes_.size() - 1) {
    // REQUIRES (pops): the other nodes' cells are current. No other cell covers the last node.
    InvalidateTail();
    nodes_.pop_back();
    fenwick_.resize(nodes_.size() + 1);
    return;
  }
  nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(at));
  RebuildIndex();
}

PackedList::Node* PackedList::MakeRoom(size_t node_index, size_t bytes, bool front,
                                       const ListLimits& limits) {
  Node* node = nodes_[node_index];
  if (node->count + 1 > limits.NodeEntries()) return nullptr;
  if (front ? node->begin >= bytes : node->capacity - node->end >= bytes) return node;
  const bool last = node_index + 1 == nodes_.size();
  const size_t used = node->bytes();
  if (used + bytes <= node->capacity) {
    // Room in total: move the entries away from the end that grows.
    const uint32_t target = front ? static_cast<uint32_t>(node->capacity - used) : 0;
    std::memmove(node->data() + target, node->data() + node->begin, used);
    node->begin = target;
    node->end = static_cast<uint32_t>(target + used);
    if (last) InvalidateTail();
    return node;
  }
  const size_t limit = std::max(NodePayloadLimit(limits), node->capacity + size_t{0});
  if (used + bytes > limit) return nullptr;
  // Grow the node (doubling, within the limit) with the room at the end that grows.
  const size_t capacity = std::min(limit, std::max(2 * size_t{node->capacity}, used + bytes));
  Node* grown = NewNode(capacity);
  const uint32_t target = front ? static_cast<uint32_t>(grown->capacity - used) : 0;
  std::memcpy(grown->data() + target, node->data() + node->begin, used);
  grown->begin = target;
  grown->end = static_cast<uint32_t>(target + used);
  grown->count = node->count;
  FreeNode(node);
  nodes_[node_index] = grown;
  if (last) InvalidateTail();
  return grown;
}

// ---- encoding -----------------------------------------------------------------------------

void PackedList::ConvertForGrowth(size_t add_count, size_t add_bytes, const ListLimits& limits) {
  if (quicklist_) return;
  const size_t bytes = listpack_bytes_ + add_bytes;
  if (limits.max_listpack_size < 0) {
    quicklist_ = bytes > limits.NodeBytes();
  } else {
    quicklist_ = bytes > ListLimits::kSafetyBytes || size_ + add_count > limits.NodeEntries();
  }
}

bool PackedList::FitsListpack(const ListLimits& limits, size_t divisor) const {
  if (limits.max_listpack_size < 0) return listpack_bytes_ <= limits.NodeBytes() / divisor;
  // One 8 KB node, and the entries the limit allows.
  return listpack_bytes_ <= ListLimits::kSafetyBytes && size_ <= limits.NodeEntries() / divisor;
}

void PackedList::ConvertForShrink(const ListLimits& limits) {
  if (quicklist_ && FitsListpack(limits, 2)) quicklist_ = false;
}

// ---- the ends -----------------------------------------------------------------------------

void PackedList::PushBack(std::string_view value, const ListLimits& limits) {
  RememberLimits(limits);
  const size_t bytes = EntrySize(value);
  Node* node = nodes_.empty() ? nullptr : MakeRoom(nodes_.size() - 1, bytes, false, limits);
  if (node == nullptr) {
    // The first node starts small; a node after a full one is full-sized at once.
    const size_t capacity =
        nodes_.empty() ? std::min(payload_limit_, kFirstNodeBlock) : payload_limit_;
    node = NewNode(std::max(capacity, bytes));
    AppendNode(node);
    tail_offsets_.clear();
    tail_valid_ = true;
  }
  if (tail_valid_) tail_offsets_.push_back(node->end);
  WriteEntry(node->data() + node->end, value);
  node->end += static_cast<uint32_t>(bytes);
  ++node->count;
  ++size_;
  AddToIndex(nodes_.size() - 1, 1);
  listpack_bytes_ += listpack::ElementSize(value);
  EnforceWindow(false);
}

void PackedList::PushFront(std::string_view value, const ListLimits& limits) {
  RememberLimits(limits);
  const size_t bytes = EntrySize(value);
  Node* node = nodes_.empty() ? nullptr : MakeRoom(0, bytes, true, limits);
  if (node == nullptr) {
    const size_t capacity =
        nodes_.empty() ? std::min(payload_limit_, kFirstNodeBlock) : payload_limit_;
    node = NewNode(std::max(capacity, bytes));
    node->begin = node->end = node->capacity;
    InsertNode(0, node);
  }
  node->begin -= static_cast<uint32_t>(bytes);
  WriteEntry(node->data() + node->begin, value);
  ++node->count;
  ++size_;
  if (nodes_.size() == 1) InvalidateTail();
  AddToIndex(0, 1);
  listpack_bytes_ += listpack::ElementSize(value);
  EnforceWindow(false);
}

std::string PackedList::PopFront() {
  Node* node = nodes_.front();
  std::string_view view;
  const uint8_t* next = ReadEntry(node->data() + node->begin, &view);
  std::string value(view);
  node->begin = static_cast<uint32_t>(next - node->data());
  --node->count;
  --size_;
  listpack_bytes_ -= listpack::ElementSize(value);
  if (nodes_.size() == 1) InvalidateTail();
  if (node->count == 0) {
    RemoveNode(0);
  } else {
    AddToIndex(0, -1);
  }
  EnforceWindow(false);
  return value;
}

std::string PackedList::PopBack() {
  if (!tail_valid_) BuildTailOffsets();
  Node* node = nodes_.back();
  const uint32_t at = tail_offsets_.back();
  tail_offsets_.pop_back();
  std::string_view view;
  ReadEntry(node->data() + at, &view);
  std::string value(view);
  node->end = at;
  --node->count;
  --size_;
  listpack_bytes_ -= listpack::ElementSize(value);
  if (node->count == 0) {
    RemoveNode(nodes_.size() - 1);
  } else {
    AddToIndex(nodes_.size() - 1, -1);
  }
  EnforceWindow(false);
  return value;
}

// ---- positions ----------------------------------------------------------------------------

std::string_view PackedList::At(size_t index) const {
  const Position pos = Locate(index);
  const Node* node = Readable(pos.node);
  uint32_t offset;
  if (pos.node + 1 == nodes_.size() && tail_valid_) {
    offset = tail_offsets_[pos.offset];
  } else {
    offset = EntryOffset(node, pos.offset);
  }
  std::string_view value;
  ReadEntry(node->data() + offset, &value);
  return value;
}

void PackedList::Set(size_t index, std::string_view value, const ListLimits& limits) {
  RememberLimits(limits);
  EraseUnwindowed(index, index + 1);
  InsertUnwindowed(index, value, limits);
  EnforceWindow(true);
}

void PackedList::Insert(size_t index, std::string_view value, const ListLimits& limits) {
  InsertUnwindowed(index, value, limits);
  EnforceWindow(true);
}

void PackedList::InsertUnwindowed(size_t index, std::string_view value, const ListLimits& limits) {
  if (index >= size_) {
    PushBack(value, limits);
    return;
  }
  if (index == 0) {
    PushFront(value, limits);
    return;
  }
  RememberLimits(limits);
  const size_t bytes = EntrySize(value);
  const Position pos = Locate(index);
  if (pos.offset == 0) {
    // Between two nodes: the end of the one before, else the front of this one, else a node
    // of its own.
    Writable(pos.node - 1);
    Node* node = MakeRoom(pos.node - 1, bytes, false, limits);
    size_t target = pos.node - 1;
    bool front = false;
    if (node == nullptr) {
      Writable(pos.node);
      node = MakeRoom(pos.node, bytes, true, limits);
      target = pos.node;
      front = true;
    }
    if (node == nullptr) {
      node = NewNode(std::max(payload_limit_, bytes));
      InsertNode(pos.node, node);
      target = pos.node;
      front = false;
    }
    if (front) {
      node->begin -= static_cast<uint32_t>(bytes);
      WriteEntry(node->data() + node->begin, value);
    } else {
      WriteEntry(node->data() + node->end, value);
      node->end += static_cast<uint32_t>(bytes);
    }
    ++node->count;
    ++size_;
    if (target + 1 == nodes_.size()) InvalidateTail();
    AddToIndex(target, 1);
    listpack_bytes_ += listpack::ElementSize(value);
    return;
  }
  const size_t n = pos.node;
  if (n + 1 == nodes_.size()) InvalidateTail();
  Node* node = Writable(n);
  const bool fits_count = node->count + 1 <= limits.NodeEntries();
  if (fits_count && node->bytes() + bytes <= std::max<size_t>(payload_limit_, node->capacity)) {
    // Neither end has the room: move the entries to the left, growing the node if need be.
    if (node->capacity - node->end < bytes && node->begin < bytes) {
      node = MakeRoom(n, bytes, false, limits);
    }
    const uint32_t at = EntryOffset(node, pos.offset);
    if (node->capacity - node->end >= bytes) {
      std::memmove(node->data() + at + bytes, node->data() + at, node->end - at);
      WriteEntry(node->data() + at, value);
      node->end += static_cast<uint32_t>(bytes);
    } else {
      std::memmove(node->data() + node->begin - bytes, node->data() + node->begin,
                   at - node->begin);
      node->begin -= static_cast<uint32_t>(bytes);
      WriteEntry(node->data() + at - bytes, value);
    }
    ++node->count;
    ++size_;
    AddToIndex(n, 1);
    listpack_bytes_ += listpack::ElementSize(value);
    return;
  }
  // Full: split the node at the position; the tail half goes to a new node with room for the
  // element in front of it.
  const uint32_t at = EntryOffset(node, pos.offset);
  const size_t tail_bytes = node->end - at;
  Node* tail = NewNode(std::max(payload_limit_, tail_bytes + bytes));
  std::memcpy(tail->data() + bytes, node->data() + at, tail_bytes);
  tail->begin = 0;
  tail->end = static_cast<uint32_t>(bytes + tail_bytes);
  tail->count = static_cast<uint32_t>(node->count - pos.offset);
  node->end = at;
  node->count = static_cast<uint32_t>(pos.offset);
  WriteEntry(tail->data(), value);
  ++tail->count;
  ++size_;
  InsertNode(n + 1, tail);
  listpack_bytes_ += listpack::ElementSize(value);
}

void PackedList::EraseRange(size_t start, size_t stop) {
  EraseUnwindowed(start, stop);
  EnforceWindow(true);
}

void PackedList::EraseUnwindowed(size_t start, size_t stop) {
  stop = std::min(stop, size_);
  if (start >= stop) return;
  InvalidateTail();
  Position pos = Locate(start);
  size_t remaining = stop - start;
  size_t n = pos.node;
  bool structural = false;
  // The first node: entries from pos.offset on.
  auto erase_in_node = [&](size_t index, size_t first, size_t count) {
    Node* node = Writable(index);
    const uint32_t from = EntryOffset(node, first);
    const uint8_t* p = node->data() + from;
    for (size_t i = 0; i < count; ++i) {
      std::string_view value;
      p = ReadEntry(p, &value);
      listpack_bytes_ -= listpack::ElementSize(value);
    }
    const auto to = static_cast<uint32_t>(p - node->data());
    if (first == 0) {
      node->begin = to;
    } else if (to == node->end) {
      node->end = from;
    } else {
      std::memmove(node->data() + from, node->data() + to, node->end - to);
      node->end -= to - from;
    }
    node->count -= static_cast<uint32_t>(count);
    size_ -= count;
    if (!structural) AddToIndex(index, -static_cast<int64_t>(count));
  };
  const size_t first_take = std::min<size_t>(remaining, nodes_[n]->count - pos.offset);
  erase_in_node(n, pos.offset, first_take);
  remaining -= first_take;
  size_t next = nodes_[n]->count == 0 ? n : n + 1;
  // Whole nodes in the middle go at once.
  size_t whole_end = next;
  while (whole_end < nodes_.size() && remaining >= nodes_[whole_end]->count) {
    remaining -= nodes_[whole_end]->count;
    size_ -= nodes_[whole_end]->count;
    const Node* node = Readable(whole_end);
    const uint8_t* p = node->data() + node->begin;
    for (uint32_t i = 0; i < node->count; ++i) {
      std::string_view value;
      p = ReadEntry(p, &value);
      listpack_bytes_ -= listpack::ElementSize(value);
    }
    ++whole_end;
  }
  if (remaining > 0) erase_in_node(whole_end, 0, remaining);
  // Drop the emptied first node and the whole ones, then rebuild the index once.
  const size_t drop_from = nodes_[n]->count == 0 ? n : n + 1;
  if (drop_from < whole_end) {
    for (size_t i = drop_from; i < whole_end; ++i) FreeNode(nodes_[i]);
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(drop_from),
                 nodes_.begin() + static_cast<std::ptrdiff_t>(whole_end));
    structural = true;
    RebuildIndex();
  }
  if (!nodes_.empty()) {
    const size_t around = std::min(n, nodes_.size() - 1);
    MergeIfSparse(around);
  }
}

void PackedList::MergeIfSparse(size_t at) {
  if (nodes_.size() < 2 || payload_limit_ == 0) return;
  for (size_t left : {at == 0 ? size_t{0} : at - 1, at}) {
    if (left + 1 >= nodes_.size()) continue;
    Node* a = Writable(left);
    Node* b = Writable(left + 1);
    const size_t combined = size_t{a->bytes()} + b->bytes();
    if (combined > payload_limit_ || std::max(a->bytes(), b->bytes()) > payload_limit_ / 4 ||
        size_t{a->count} + b->count > count_limit_) {
      continue;
    }
    Node* merged = NewNode(combined);
    std::memcpy(merged->data(), a->data() + a->begin, a->bytes());
    std::memcpy(merged->data() + a->bytes(), b->data() + b->begin, b->bytes());
    merged->end = static_cast<uint32_t>(combined);
    merged->count = a->count + b->count;
    FreeNode(a);
    FreeNode(b);
    nodes_[left] = merged;
    nodes_.erase(nodes_.begin() + static_cast<std::ptrdiff_t>(left + 1));
    InvalidateTail();
    RebuildIndex();
    return;
  }
}

// ---- memory, stats, dump ------------------------------------------------------------------

size_t PackedList::MemoryUsage() const {
  size_t bytes = sizeof(*this) + nodes_.capacity() * sizeof(Node*) +
                 fenwick_.capacity() * sizeof(uint32_t) +
                 tail_offsets_.capacity() * sizeof(uint32_t);
  for (const Node* node : nodes_) bytes += malloc_usable_size(const_cast<Node*>(node));
  return bytes;
}

size_t PackedList::Optimize() {
  const size_t before = MemoryUsage();
  const size_t limit = payload_limit_ == 0 ? NodePayloadLimit(ListLimits{}) : payload_limit_;
  std::vector<Node*> packed;
  Node* current = nullptr;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node* node = Readable(n);
    const uint8_t* p = node->data() + node->begin;
    for (uint32_t i = 0; i < node->count; ++i) {
      std::string_view value;
      const uint8_t* next = ReadEntry(p, &value);
      const auto bytes = static_cast<size_t>(next - p);
      if (current == nullptr || current->capacity - current->end < bytes) {
        current = NewNode(std::max(limit, bytes));
        packed.push_back(current);
      }
      std::memcpy(current->data() + current->end, p, bytes);
      current->end += static_cast<uint32_t>(bytes);
      ++current->count;
      p = next;
    }
    FreeNode(nodes_[n]);
  }
  // The last node shrinks to what it holds.
  if (!packed.empty() && packed.back()->end < packed.back()->capacity) {
    Node* last = packed.back();
    Node* exact = NewNode(last->end);
    std::memcpy(exact->data(), last->data(), last->end);
    exact->end = last->end;
    exact->count = last->count;
    FreeNode(last);
    packed.back() = exact;
  }
  nodes_ = std::move(packed);
  nodes_.shrink_to_fit();
  InvalidateTail();
  tail_offsets_ = std::vector<uint32_t>();
  RebuildIndex();
  fenwick_.shrink_to_fit();
  EnforceWindow(true);
  const size_t after = MemoryUsage();
  return before > after ? before - after : 0;
}

ListStats PackedList::Stats() const {
  ListStats s;
  s.encoding = quicklist_ ? "quicklist" : "listpack";
  s.size = size_;
  s.bytes = MemoryUsage();
  for (const Node* node : nodes_) {
    s.payload_bytes += node->bytes();
    s.capacity_bytes += node->capacity;
    s.compressed_nodes += node->raw_bytes != 0 ? 1 : 0;
  }
  s.fill = s.capacity_bytes == 0
               ? 0
               : static_cast<double>(s.payload_bytes) / static_cast<double>(s.capacity_bytes);
  s.nodes = nodes_.size();
  s.index_bytes = nodes_.capacity() * sizeof(Node*) + fenwick_.capacity() * sizeof(uint32_t);
  return s;
}

void PackedList::Dump(std::string* out) const {
  AppendVar(out, quicklist_ ? 1 : 0);
  AppendVar(out, size_);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    const Node* node = Readable(n);
    out->append(reinterpret_cast<const char*>(node->data() + node->begin), node->bytes());
  }
}

bool PackedList::Restore(std::string_view data, const ListLimits& limits, PackedList* out) {
  ByteReader reader(data);
  uint64_t form, count;
  if (!reader.Var(&form) || form > 1 || !reader.Var(&count) || count > data.size()) return false;
  PackedList list;
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view value;
    if (!reader.LengthPrefixed(&value)) return false;
    list.PushBack(value, limits);
  }
  if (!reader.done()) return false;
  // Redis 7.2 picks the encoding afresh when it loads a list: a list within the limits (not
  // halved) is a listpack, whatever it was when saved.
  (void)form;
  list.quicklist_ = !list.FitsListpack(limits, 1);
  *out = std::move(list);
  return true;
}

}  // namespace goblin
