#include "core/stream.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/bytes.h"
#include "core/varint.h"

namespace goblin {

namespace {

constexpr uint8_t kSameFields = 1;
constexpr uint8_t kDeleted = 2;
constexpr uint8_t kKnownFlags = kSameFields | kDeleted;

constexpr uint8_t kDumpVersion = 1;

// A fresh node's first block: big enough for a few small entries, small enough that a stream
// of one entry stays small. The block then grows geometrically toward the node's expected size.
constexpr size_t kFirstBlock = 64;

size_t SaturatingAdd(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }
size_t SaturatingMul(size_t a, size_t b) { return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b; }

size_t LengthPrefixedSize(std::string_view s) { return VarintSize(s.size()) + s.size(); }

// The heap block behind a string: none while it fits the inline buffer, else capacity() plus
// the terminator.
size_t HeapBytes(const std::string& s) {
  static const size_t kInline = std::string().capacity();
  return s.capacity() > kInline ? s.capacity() + 1 : 0;
}

// Parses a node's master block: [count varint] then count names, each [varint length][bytes].
bool ParseMaster(std::string_view bytes, std::vector<std::string_view>* names,
                 size_t* entries_start, uint64_t* master_count = nullptr) {
  ByteReader reader(bytes);
  uint64_t count = 0;
  if (!reader.Var(&count) || count == 0 || count > reader.remaining()) return false;
  if (names != nullptr) names->clear();
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view name;
    if (!reader.LengthPrefixed(&name)) return false;
    if (names != nullptr) names->push_back(name);
  }
  *entries_start = bytes.size() - reader.remaining();
  if (master_count != nullptr) *master_count = count;
  return true;
}

// Whether fields' names are the master names, in order (read straight from the master block).
bool SameNames(std::string_view bytes, std::span<const StreamField> fields) {
  ByteReader reader(bytes);
  uint64_t count;
  if (!reader.Var(&count) || count != fields.size()) return false;
  for (const StreamField& field : fields) {
    std::string_view name;
    if (!reader.LengthPrefixed(&name) || name != field.first) return false;
  }
  return true;
}

}  // namespace

// The fixed part of an entry as a scan reads it: where it starts, its id and flags, how many
// fields it has and where its field bytes start.
struct Stream::EntryHead {
  size_t offset = 0;  // of the flags byte, in the node's bytes
  size_t body = 0;    // of the first field byte
  size_t next = 0;    // of the next entry (set by ScanNode)
  StreamId id;
  uint64_t count = 0;
  uint8_t flags = 0;
  bool deleted() const { return (flags & kDeleted) != 0; }
};

// Walks the entries of one node. Every read is bounded by the node's bytes and every id rule of
// the layout is checked, so the same scanner serves trusted nodes and ones Restore is handed;
// on trusted nodes the checks never fail.
class Stream::EntryScanner {
 public:
  EntryScanner(std::string_view bytes, size_t entries_start, uint64_t master_count, StreamId first)
      : base_(reinterpret_cast<const uint8_t*>(bytes.data())),
        p_(base_ + entries_start),
        end_(base_ + bytes.size()),
        master_count_(master_count),
        first_(first) {}

  bool done() const { return p_ == end_; }
  size_t offset() const { return static_cast<size_t>(p_ - base_); }

  // Reads the next entry's flags, id and field count and leaves the scanner at its fields.
  bool ReadHead(EntryHead* head) {
    head->offset = offset();
    if (p_ >= end_) return false;
    head->flags = *p_++;
    if ((head->flags & ~kKnownFlags) != 0) return false;
    uint64_t ms_delta, seq;
    if (!Var(&ms_delta) || !Var(&seq)) return false;
    StreamId id;
    if (__builtin_add_overflow(first_.ms, ms_delta, &id.ms)) return false;
    if (!started_) {
      // The first entry's id is the node's first id: both deltas are zero.
      if (ms_delta != 0 || seq != 0) return false;
      id = first_;
      started_ = true;
    } else if (id.ms < previous_.ms) {
      return false;
    } else if (id.ms == previous_.ms) {
      if (seq == 0 || __builtin_add_overflow(previous_.seq, seq, &id.seq)) return false;
    } else {
      id.seq = seq;
    }
    previous_ = id;
    head->id = id;
    if ((head->flags & kSameFields) != 0) {
      head->count = master_count_;
    } else if (!Var(&head->count)) {
      return false;
    }
    if (head->count == 0) return false;
    head->body = offset();
    return true;
  }

  // Reads the fields of the entry whose head was just read. fields may be null (skip them);
  // master holds the node's master names when fields is not null.
  bool ReadBody(const EntryHead& head, const std::vector<std::string_view>& master,
                std::vector<StreamField>* fields) {
    const bool same = (head.flags & kSameFields) != 0;
    if (fields != nullptr) fields->clear();
    for (uint64_t i = 0; i < head.count; ++i) {
      std::string_view name, value;
      if (same) {
        if (fields != nullptr) name = master[i];
      } else if (!LengthPrefixed(&name)) {
        return false;
      }
      if (!LengthPrefixed(&value)) return false;
      if (fields != nullptr) fields->emplace_back(name, value);
    }
    return true;
  }

  // Moves to the fields of an entry read earlier (reverse walks revisit entries).
  void SeekBody(const EntryHead& head) { p_ = base_ + head.body; }

 private:
  bool Var(uint64_t* v) {
    p_ = GetVarintChecked(p_, end_, v);
    if (p_ == nullptr) {
      p_ = end_;
      return false;
    }
    return true;
  }
  bool LengthPrefixed(std::string_view* out) {
    uint64_t n;
    if (!Var(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *out = std::string_view(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return true;
  }

  const uint8_t* base_;
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t master_count_;
  StreamId first_;
  StreamId previous_;
  bool started_ = false;
};

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

// ---- reading nodes -------------------------------------------------------------------------

bool Stream::ScanNode(const Node& node, const std::function<bool(const EntryHead&)>& fn) {
  EntryScanner scanner(node.bytes, node.entries_start, node.master_fields, node.first);
  while (!scanner.done()) {
    EntryHead head;
    if (!scanner.ReadHead(&head) || !scanner.ReadBody(head, {}, nullptr)) return false;
    head.next = scanner.offset();
    if (!fn(head)) return true;
  }
  return true;
}

void Stream::ReadFields(const Node& node, const EntryHead& head, std::vector<StreamField>* fields) {
  std::vector<std::string_view> master;
  size_t entries_start;
  ParseMaster(node.bytes, &master, &entries_start);
  EntryScanner scanner(node.bytes, node.entries_start, node.master_fields, node.first);
  scanner.SeekBody(head);
  scanner.ReadBody(head, master, fields);
}

bool Stream::Locate(StreamId id, size_t* node_index, EntryHead* found) const {
  // The last node whose first id is <= id is the only one that can hold it.
  const auto it = std::partition_point(nodes_.begin(), nodes_.end(),
                                       [&](const Node& n) { return n.first <= id; });
  if (it == nodes_.begin()) return false;
  const Node& node = *(it - 1);
  if (node.last < id) return false;
  bool hit = false;
  ScanNode(node, [&](const EntryHead& head) {
    if (head.id < id) return true;
    if (head.id == id && !head.deleted()) {
      *found = head;
      hit = true;
    }
    return false;
  });
  *node_index = static_cast<size_t>(it - 1 - nodes_.begin());
  return hit;
}

StreamId Stream::first_id() const {
  StreamId id;
  ScanNode(nodes_.front(), [&](const EntryHead& head) {
    if (head.deleted()) return true;
    id = head.id;
    return false;
  });
  return id;
}

StreamId Stream::last_live_id() const { return LastLive(nodes_.back()).id; }

Stream::EntryHead Stream::LastLive(const Node& node) {
  EntryHead last;
  ScanNode(node, [&](const EntryHead& head) {
    if (!head.deleted()) last = head;
    return true;
  });
  return last;
}

// ---- appending -----------------------------------------------------------------------------

size_t Stream::EntryCap() const {
  const size_t cap = limits_.max_node_entries == 0 ? SIZE_MAX : limits_.max_node_entries;
  return std::min<size_t>(cap, std::numeric_limits<uint32_t>::max());
}

void Stream::Append(StreamId id, std::span<const StreamField> fields) {
  Node* tail = nodes_.empty() ? nullptr : &nodes_.back();
  bool same = tail != nullptr && SameNames(tail->bytes, fields);
  auto entry_size = [&](const Node& node) {
    size_t n = 1 + VarintSize(id.ms - node.first.ms);
    n += VarintSize(node.entries == 0       ? 0
                    : id.ms == node.last.ms ? id.seq - node.last.seq
                                            : id.seq);
    if (!same) n += VarintSize(fields.size());
    for (const StreamField& field : fields) {
      if (!same) n += LengthPrefixedSize(field.first);
      n += LengthPrefixedSize(field.second);
    }
    return n;
  };
  size_t size = tail == nullptr ? 0 : entry_size(*tail);
  const bool full =
      tail == nullptr || tail->entries >= EntryCap() ||
      (limits_.max_node_bytes != 0 && tail->bytes.size() + size > limits_.max_node_bytes);
  if (full) {
    // The old tail takes no more entries: give back its spare capacity.
    if (tail != nullptr) tail->bytes.shrink_to_fit();
    tail = &nodes_.emplace_back();
    tail->first = id;
    tail->master_fields = static_cast<uint32_t>(fields.size());
    size_t master_size = VarintSize(fields.size());
    for (const StreamField& field : fields) master_size += LengthPrefixedSize(field.first);
    same = true;
    size = entry_size(*tail);
    Reserve(tail, master_size + size);
    AppendVar(&tail->bytes, fields.size());
    for (const StreamField& field : fields) AppendLengthPrefixed(&tail->bytes, field.first);
    tail->entries_start = static_cast<uint32_t>(tail->bytes.size());
  } else {
    Reserve(tail, size);
  }
  std::string& bytes = tail->bytes;
  AppendU8(&bytes, same ? kSameFields : 0);
  AppendVar(&bytes, id.ms - tail->first.ms);
  AppendVar(&bytes, tail->entries == 0       ? 0
                    : id.ms == tail->last.ms ? id.seq - tail->last.seq
                                             : id.seq);
  if (!same) AppendVar(&bytes, fields.size());
  for (const StreamField& field : fields) {
    if (!same) AppendLengthPrefixed(&bytes, field.first);
    AppendLengthPrefixed(&bytes, field.second);
  }
  tail->last = id;
  ++tail->entries;
  ++tail->live;
  ++live_;
  ++entries_added_;
  last_id_ = id;
}

void Stream::Reserve(Node* node, size_t more) {
  std::string& bytes = node->bytes;
  const size_t needed = SaturatingAdd(bytes.size(), more);
  if (needed <= bytes.capacity()) return;
  // Geometric growth keeps appends amortized O(1); the node's expected full size caps each
  // step, so a node that fills up lands close to its final size instead of up to twice it.
  size_t target = std::max({needed, SaturatingMul(bytes.capacity(), 2), kFirstBlock});
  size_t expected = SIZE_MAX;
  if (limits_.max_node_entries != 0) {
    // The entries still to come are guessed to be the size of this one.
    const size_t after = node->entries + size_t{1};
    const size_t remaining = EntryCap() > after ? EntryCap() - after : 0;
    expected = SaturatingAdd(needed, SaturatingMul(more, remaining));
  }
  if (limits_.max_node_bytes != 0) expected = std::min(expected, limits_.max_node_bytes);
  target = std::max(needed, std::min(target, expected));
  // std::string::reserve may round a growing request up to twice the old capacity; a fresh
  // string takes the exact size.
  std::string grown;
  grown.reserve(target);
  grown.append(bytes);
  bytes.swap(grown);
}

// ---- ranges --------------------------------------------------------------------------------

size_t Stream::Range(StreamId start, StreamId end, bool reverse, size_t count,
                     const std::function<bool(const StreamEntryView&)>& visit) const {
  if (start > end || nodes_.empty()) return 0;
  size_t visited = 0;
  StreamEntryView view;
  std::vector<std::string_view> master;
  size_t entries_start;
  if (!reverse) {
    // The first node whose last id reaches start.
    auto it = std::partition_point(nodes_.begin(), nodes_.end(),
                                   [&](const Node& n) { return n.last < start; });
    for (; it != nodes_.end() && it->first <= end; ++it) {
      const Node& node = *it;
      ParseMaster(node.bytes, &master, &entries_start);
      EntryScanner scanner(node.bytes, node.entries_start, node.master_fields, node.first);
      while (!scanner.done()) {
        EntryHead head;
        if (!scanner.ReadHead(&head)) return visited;
        if (head.id > end) return visited;
        if (head.deleted() || head.id < start) {
          scanner.ReadBody(head, master, nullptr);
          continue;
        }
        scanner.ReadBody(head, master, &view.fields);
        view.id = head.id;
        ++visited;
        if (!visit(view) || visited == count) return visited;
      }
    }
    return visited;
  }
  // The last node whose first id is <= end, then toward the head.
  auto it = std::partition_point(nodes_.begin(), nodes_.end(),
                                 [&](const Node& n) { return n.first <= end; });
  std::vector<EntryHead> heads;
  while (it != nodes_.begin()) {
    const Node& node = *--it;
    if (node.last < start) break;
    // Entries can only be decoded forward (ids are deltas): collect the heads, walk them back.
    heads.clear();
    ScanNode(node, [&](const EntryHead& head) {
      if (head.id > end) return false;
      if (!head.deleted() && head.id >= start) heads.push_back(head);
      return true;
    });
    if (heads.empty()) continue;
    ParseMaster(node.bytes, &master, &entries_start);
    EntryScanner scanner(node.bytes, node.entries_start, node.master_fields, node.first);
    for (auto h = heads.rbegin(); h != heads.rend(); ++h) {
      scanner.SeekBody(*h);
      scanner.ReadBody(*h, master, &view.fields);
      view.id = h->id;
      ++visited;
      if (!visit(view) || visited == count) return visited;
    }
  }
  return visited;
}

std::optional<StreamEntryView> Stream::Find(StreamId id) const {
  size_t index;
  EntryHead head;
  if (!Locate(id, &index, &head)) return std::nullopt;
  StreamEntryView view;
  view.id = id;
  ReadFields(nodes_[index], head, &view.fields);
  return view;
}

size_t Stream::CountAfter(StreamId id) const {
  // The first node holding an id above id; whole nodes on the shorter side are summed.
  const auto it = std::partition_point(nodes_.begin(), nodes_.end(),
                                       [&](const Node& n) { return n.last <= id; });
  if (it == nodes_.end()) return 0;
  size_t in_node = 0;
  ScanNode(*it, [&](const EntryHead& head) {
    if (head.id > id && !head.deleted()) ++in_node;
    return true;
  });
  const size_t index = static_cast<size_t>(it - nodes_.begin());
  if (index >= nodes_.size() / 2) {
    size_t after = 0;
    for (auto next = it + 1; next != nodes_.end(); ++next) after += next->live;
    return in_node + after;
  }
  size_t before = 0;
  for (auto prev = nodes_.begin(); prev != it; ++prev) before += prev->live;
  return live_ - before - it->live + in_node;
}

// ---- removing ------------------------------------------------------------------------------

void Stream::MarkDeleted(Node* node, const EntryHead& head) {
  node->bytes[head.offset] = static_cast<char>(head.flags | kDeleted);
  --node->live;
  --live_;
}

bool Stream::Delete(StreamId id) {
  size_t index;
  EntryHead head;
  if (!Locate(id, &index, &head)) return false;
  MarkDeleted(&nodes_[index], head);
  max_deleted_id_ = std::max(max_deleted_id_, id);
  if (nodes_[index].live == 0) nodes_.erase(nodes_.begin() + static_cast<ptrdiff_t>(index));
  return true;
}

void Stream::DropHeadNodes(size_t count, const TrimRefs& refs) {
  if (count == 0) return;
  for (size_t i = 0; i < count; ++i) {
    if (refs.removed) {
      ScanNode(nodes_[i], [&](const EntryHead& entry) {
        if (!entry.deleted()) refs.removed(entry.id);
        return true;
      });
    }
    live_ -= nodes_[i].live;
  }
  nodes_.erase(nodes_.begin(), nodes_.begin() + static_cast<ptrdiff_t>(count));
}

bool Stream::HoldsKept(const Node& node, const TrimRefs& refs) {
  if (!refs.keep) return false;
  bool kept = false;
  ScanNode(node, [&](const EntryHead& entry) {
    kept = !entry.deleted() && refs.keep(entry.id);
    return !kept;
  });
  return kept;
}

void Stream::TrimHeadNode(const TrimRefs& refs, const std::function<bool(StreamId)>& more) {
  Node* head = &nodes_.front();
  ScanNode(*head, [&](const EntryHead& entry) {
    if (!more(entry.id)) return false;
    if (!entry.deleted() && !(refs.keep && refs.keep(entry.id))) {
      if (refs.removed) refs.removed(entry.id);
      MarkDeleted(head, entry);
    }
    return true;
  });
  if (head->live == 0) nodes_.erase(nodes_.begin());
}

size_t Stream::TrimMaxLen(size_t maxlen, bool approx, size_t limit, const TrimRefs& refs) {
  if (live_ <= maxlen) return 0;
  const size_t before = live_;
  size_t whole = 0, removed = 0;
  for (; whole < nodes_.size(); ++whole) {
    const Node& node = nodes_[whole];
    if (approx && limit != 0 && removed + node.live > limit) break;
    if (live_ - removed - node.live < maxlen) break;
    if (HoldsKept(node, refs)) break;
    removed += node.live;
  }
  DropHeadNodes(whole, refs);
  // Without kept entries the stop condition left more than maxlen - live_ live entries in the
  // head node, so the marking never empties it; with them it may stop short of maxlen.
  if (!approx && live_ > maxlen) TrimHeadNode(refs, [&](StreamId) { return live_ > maxlen; });
  return before - live_;
}

size_t Stream::TrimMinId(StreamId min_id, bool approx, size_t limit, const TrimRefs& refs) {
  const size_t before = live_;
  size_t whole = 0, removed = 0;
  for (; whole < nodes_.size(); ++whole) {
    const Node& node = nodes_[whole];
    if (approx && limit != 0 && removed + node.live > limit) break;
    if (node.last >= min_id) break;
    if (HoldsKept(node, refs)) break;
    removed += node.live;
  }
  DropHeadNodes(whole, refs);
  // Its entries at or above min_id may all have been deleted already: the node empties. The
  // next node starts above this one's last id, so nothing else is below min_id (unless kept
  // entries stopped the run of whole nodes: ACKED stops there too).
  if (!approx && !nodes_.empty() && nodes_.front().first < min_id) {
    TrimHeadNode(refs, [&](StreamId id) { return id < min_id; });
  }
  return before - live_;
}

// ---- ids and counters ----------------------------------------------------------------------

void Stream::SetLastId(StreamId id, std::optional<uint64_t> entries_added,
                       std::optional<StreamId> max_deleted_id) {
  if (!nodes_.empty() && nodes_.back().last > id) {
    // Deleted entries above the new last id would collide with ids appended later: cut the
    // tail node after its last live entry (id is at least that entry's id).
    Node& tail = nodes_.back();
    EntryHead last_live;
    size_t entries = 0, seen = 0;
    ScanNode(tail, [&](const EntryHead& head) {
      ++seen;
      if (!head.deleted()) {
        last_live = head;
        entries = seen;
      }
      return true;
    });
    tail.bytes.resize(last_live.next);
    tail.bytes.shrink_to_fit();
    tail.entries = static_cast<uint32_t>(entries);
    tail.last = last_live.id;
  }
  last_id_ = id;
  if (entries_added) entries_added_ = *entries_added;
  if (max_deleted_id) max_deleted_id_ = *max_deleted_id;
}

size_t Stream::MemoryUsage() const {
  size_t bytes = sizeof(Stream) + nodes_.capacity() * sizeof(Node);
  for (const Node& node : nodes_) bytes += HeapBytes(node.bytes);
  return bytes;
}

// ---- checks, dump and restore --------------------------------------------------------------

bool Stream::BuildNode(Node* node) {
  size_t entries_start;
  uint64_t master_count;
  if (!ParseMaster(node->bytes, nullptr, &entries_start, &master_count)) return false;
  if (master_count > std::numeric_limits<uint32_t>::max() ||
      node->bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  node->master_fields = static_cast<uint32_t>(master_count);
  node->entries_start = static_cast<uint32_t>(entries_start);
  uint64_t entries = 0, live = 0;
  const bool ok = ScanNode(*node, [&](const EntryHead& head) {
    ++entries;
    if (!head.deleted()) ++live;
    node->last = head.id;
    return true;
  });
  if (!ok || entries == 0 || live == 0 || entries > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  node->entries = static_cast<uint32_t>(entries);
  node->live = static_cast<uint32_t>(live);
  return true;
}

bool Stream::CheckInvariants() const {
  size_t live = 0;
  StreamId previous_last = StreamId::Min();
  for (const Node& node : nodes_) {
    Node rebuilt;
    rebuilt.first = node.first;
    rebuilt.bytes = node.bytes;
    if (!BuildNode(&rebuilt)) return false;
    if (rebuilt.last != node.last || rebuilt.entries != node.entries || rebuilt.live != node.live ||
        rebuilt.master_fields != node.master_fields ||
        rebuilt.entries_start != node.entries_start) {
      return false;
    }
    if (node.first <= previous_last) return false;  // also keeps every id above 0-0
    previous_last = node.last;
    live += node.live;
  }
  return live == live_ && previous_last <= last_id_;
}

void Stream::Dump(std::string* out) const {
  AppendU8(out, kDumpVersion);
  AppendVar(out, live_);
  AppendVar(out, entries_added_);
  AppendVar(out, last_id_.ms);
  AppendVar(out, last_id_.seq);
  AppendVar(out, max_deleted_id_.ms);
  AppendVar(out, max_deleted_id_.seq);
  AppendVar(out, nodes_.size());
  for (const Node& node : nodes_) {
    AppendVar(out, node.first.ms);
    AppendVar(out, node.first.seq);
    AppendLengthPrefixed(out, node.bytes);
  }
}

bool Stream::Restore(std::string_view data, Stream* out) {
  ByteReader reader(data);
  uint8_t version;
  uint64_t live, node_count;
  Stream stream(out->limits_);
  if (!reader.U8(&version) || version != kDumpVersion || !reader.Var(&live) ||
      !reader.Var(&stream.entries_added_) || !reader.Var(&stream.last_id_.ms) ||
      !reader.Var(&stream.last_id_.seq) || !reader.Var(&stream.max_deleted_id_.ms) ||
      !reader.Var(&stream.max_deleted_id_.seq) || !reader.Var(&node_count)) {
    return false;
  }
  // A node takes at least four bytes: bounds the count before anything is reserved for it.
  if (node_count > reader.remaining() / 4) return false;
  stream.nodes_.reserve(static_cast<size_t>(node_count));
  StreamId previous_last = StreamId::Min();
  uint64_t total = 0;
  for (uint64_t i = 0; i < node_count; ++i) {
    Node node;
    std::string_view bytes;
    if (!reader.Var(&node.first.ms) || !reader.Var(&node.first.seq) ||
        !reader.LengthPrefixed(&bytes)) {
      return false;
    }
    if (node.first <= previous_last) return false;
    node.bytes.assign(bytes);
    if (!BuildNode(&node)) return false;
    previous_last = node.last;
    total += node.live;
    stream.nodes_.push_back(std::move(node));
  }
  if (!reader.done() || total != live || previous_last > stream.last_id_) return false;
  stream.live_ = static_cast<size_t>(live);
  *out = std::move(stream);
  return true;
}

}  // namespace goblin
