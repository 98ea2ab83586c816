#include "persist/rdb_writer.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/bytes.h"
#include "core/crc64.h"
#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/list_object.h"
#include "core/listpack.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "core/version.h"
#include "core/zset_object.h"
#include "keyspace/database.h"
#include "persist/file_util.h"
#include "persist/rdb_format.h"
#include "persist/rdb_string.h"

namespace goblin {

namespace {

// Keys whose entries are prefetched before the first of them is written.
constexpr size_t kPrefetchWindow = 16;
// Redis's LISTPACK_MAX_SAFETY_SIZE: a value whose listpack would pass it takes its large form.
constexpr size_t kListpackMaxBytes = size_t{1} << 30;
// Redis's SIZE_ESTIMATE_OVERHEAD: what the quicklist adds to an element's length when it asks
// whether the element still fits a node.
constexpr size_t kQuicklistElementOverhead = 8;
// STREAM_LISTPACK_MAX_SIZE: a stream node is cut here when stream-node-max-bytes is 0 or above.
constexpr size_t kStreamNodeMaxBytes = size_t{1} << 30;
// STREAM_ITEM_FLAG_SAMEFIELDS: the entry has the master entry's field names (omitted).
constexpr int64_t kStreamSameFields = 2;

// The elements of one stream entry, against its node's master id and field names (Redis's
// streamAppendItem), into a ListpackWriter or a ListpackSizer.
template <typename Listpack>
void AppendStreamEntry(Listpack* lp, const StreamEntryView& entry, StreamId master,
                       const std::vector<std::string_view>& master_fields) {
  bool same = entry.fields.size() == master_fields.size();
  for (size_t i = 0; same && i < master_fields.size(); ++i) {
    same = entry.fields[i].first == master_fields[i];
  }
  const auto fields = static_cast<int64_t>(entry.fields.size());
  lp->AppendInteger(same ? kStreamSameFields : 0);
  // Unsigned differences, as Redis stores them: a reader adds them back modulo 2^64.
  lp->AppendInteger(static_cast<int64_t>(entry.id.ms - master.ms));
  lp->AppendInteger(static_cast<int64_t>(entry.id.seq - master.seq));
  if (!same) lp->AppendInteger(fields);
  for (const auto& [field, value] : entry.fields) {
    if (!same) lp->AppendString(field);
    lp->AppendString(value);
  }
  // The entry's element count, so that a reader can walk the node backwards.
  lp->AppendInteger(same ? fields + 3 : 2 * fields + 4);
}

// The master entry of a node of `count` live entries whose first entry has these field names.
template <typename Listpack>
void AppendStreamMaster(Listpack* lp, size_t count,
                        const std::vector<std::string_view>& master_fields) {
  lp->AppendInteger(static_cast<int64_t>(count));
  lp->AppendInteger(0);  // deleted entries: only live ones are written
  lp->AppendInteger(static_cast<int64_t>(master_fields.size()));
  for (std::string_view field : master_fields) lp->AppendString(field);
  lp->AppendInteger(0);
}

// A stream id as Redis keys its radix trees: 16 bytes, ms and seq big-endian.
constexpr size_t kStreamIdBytes = 16;
void EncodeStreamId(StreamId id, char* out) {
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>(id.ms >> (56 - 8 * i));
    out[8 + i] = static_cast<char>(id.seq >> (56 - 8 * i));
  }
}

void FieldNames(const StreamEntryView& entry, std::vector<std::string_view>* names) {
  names->clear();
  for (const auto& field : entry.fields) names->push_back(field.first);
}

// Encodes values into an RdbOutput. A file's record has the key between the value-type byte
// and the value: Record writes it there, Value (DUMP) leaves it out.
class Encoder {
 public:
  Encoder(RdbOutput* out, const RdbWriteOptions& options) : out_(out), options_(options) {}

  void Record(const KeyEntry& entry) {
    key_ = entry.key();
    Value(entry);
    key_.reset();
  }

  void Value(const KeyEntry& entry) {
    switch (entry.type()) {
      case ValueType::kString: {
        char digits[kInt64TextMax];
        Type(rdb::kTypeString);
        String(entry.string_value(digits));
        break;
      }
      case ValueType::kList:
        List(static_cast<const ListObject*>(entry.object())->list());
        break;
      case ValueType::kSet:
        Set(static_cast<const SetObject*>(entry.object())->set());
        break;
      case ValueType::kZSet:
        Zset(static_cast<const ZsetObject*>(entry.object())->set());
        break;
      case ValueType::kHash:
        Hash(static_cast<const HashObject*>(entry.object())->hash());
        break;
      case ValueType::kStream:
        Stream(*static_cast<const StreamObject*>(entry.object()));
        break;
    }
  }

 private:
  std::string* bytes() { return &out_->bytes; }
  void Byte(uint8_t byte) { bytes()->push_back(static_cast<char>(byte)); }
  void Length(uint64_t length) { RdbAppendLength(bytes(), length); }
  void String(std::string_view s) { RdbAppendEncodedString(bytes(), s, options_.compress); }
  void Type(uint8_t type) {
    Byte(type);
    if (key_) String(*key_);
  }
  void RawId(StreamId id) {
    char raw[kStreamIdBytes];
    EncodeStreamId(id, raw);
    bytes()->append(raw, sizeof(raw));
  }
  void MillisecondTime(int64_t ms) { AppendFixed(bytes(), static_cast<uint64_t>(ms), 8); }

  void List(const PackedList& list);
  void Set(const PackedSet& set);
  void Zset(const SortedSet& set);
  void Hash(const PackedHash& hash);
  // Types 25 and 24.
  bool HashWithFieldExpiry(const PackedHash& hash, bool small);
  void Stream(const StreamObject& object);

  RdbOutput* out_;
  const RdbWriteOptions& options_;
  std::optional<std::string_view> key_;
  ListpackWriter listpack_;
};

void Encoder::List(const PackedList& list) {
  const size_t node_bytes = options_.limits.list.NodeBytes();
  const size_t node_entries = options_.limits.list.NodeEntries();
  const uint64_t plain_threshold = options_.quicklist_packed_threshold;
  // The node count comes first: plan the nodes, then write them.
  struct Node {
    size_t entries;
    bool plain;
  };
  std::vector<Node> nodes;
  size_t open_bytes = 0;  // the last node's listpack bytes
  list.ForEach(0, list.size(), [&](std::string_view element) {
    if (element.size() >= plain_threshold) {
      nodes.push_back({1, true});
      return;
    }
    if (!nodes.empty() && !nodes.back().plain && nodes.back().entries < node_entries &&
        open_bytes + element.size() + kQuicklistElementOverhead <= node_bytes) {
      ++nodes.back().entries;
      open_bytes += listpack::ElementSize(element);
      return;
    }
    nodes.push_back({1, false});
    open_bytes = listpack::kHeaderBytes + 1 + listpack::ElementSize(element);
  });
  Type(rdb::kTypeListQuicklist2);
  Length(nodes.size());
  size_t node = 0;
  listpack_.Clear();
  list.ForEach(0, list.size(), [&](std::string_view element) {
    if (nodes[node].plain) {
      Length(rdb::kQuicklistNodePlain);
      String(element);
      ++node;
      out_->Checkpoint();
      return;
    }
    listpack_.AppendString(element);
    if (listpack_.count() == nodes[node].entries) {
      Length(rdb::kQuicklistNodePacked);
      String(listpack_.Finish());
      listpack_.Clear();
      ++node;
      out_->Checkpoint();
    }
  });
}

void Encoder::Set(const PackedSet& set) {
  if (set.size() <= options_.limits.set.max_intset_entries) {
    std::vector<int64_t> values;
    values.reserve(set.size());
    bool integers = true;
    set.ForEach([&](std::string_view member) {
      int64_t value;
      if (integers && ParseInt64(member, &value)) {
        values.push_back(value);
      } else {
        integers = false;
      }
    });
    if (integers) {
      std::sort(values.begin(), values.end());
      const int64_t low = values.front();
      const int64_t high = values.back();
      const int width = low >= INT16_MIN && high <= INT16_MAX   ? 2
                        : low >= INT32_MIN && high <= INT32_MAX ? 4
                                                                : 8;
      std::string intset;
      intset.reserve(8 + values.size() * static_cast<size_t>(width));
      AppendFixed(&intset, static_cast<uint64_t>(width), 4);
      AppendFixed(&intset, values.size(), 4);
      for (int64_t value : values) AppendFixed(&intset, static_cast<uint64_t>(value), width);
      Type(rdb::kTypeSetIntset);
      String(intset);
      return;
    }
  }
  Type(rdb::kTypeSet);
  Length(set.size());
  set.ForEach([&](std::string_view member) {
    String(member);
    out_->Checkpoint();
  });
}

void Encoder::Zset(const SortedSet& set) {
  const ZsetLimits& limits = options_.limits.zset;
  if (set.size() <= limits.max_listpack_entries) {
    listpack_.Clear();
    bool fits = true;
    set.ForEachInRankRange(0, set.size(), false, [&](double score, std::string_view member) {
      if (member.size() > limits.max_listpack_value) return fits = false;
      listpack_.AppendString(member);
      listpack_.AppendString(FormatDouble(score));
      return fits = listpack_.bytes() <= kListpackMaxBytes;
    });
    if (fits) {
      Type(rdb::kTypeZsetListpack);
      String(listpack_.Finish());
      return;
    }
  }
  Type(rdb::kTypeZset2);
  Length(set.size());
  set.ForEachInRankRange(0, set.size(), true, [&](double score, std::string_view member) {
    String(member);
    AppendFixed(bytes(), std::bit_cast<uint64_t>(score), 8);
    out_->Checkpoint();
  });
}

void Encoder::Hash(const PackedHash& hash) {
  const HashLimits& limits = options_.limits.hash;
  const bool small = hash.size() <= limits.max_listpack_entries;
  if (hash.fields_with_deadline() > 0 && HashWithFieldExpiry(hash, small)) return;
  if (small) {
    listpack_.Clear();
    bool fits = true;
    hash.ForEach([&](std::string_view field, std::string_view value) {
      if (!fits) return;
      if (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value) {
        fits = false;
        return;
      }
      listpack_.AppendString(field);
      listpack_.AppendString(value);
      fits = listpack_.bytes() <= kListpackMaxBytes;
    });
    if (fits) {
      Type(rdb::kTypeHashListpack);
      String(listpack_.Finish());
      return;
    }
  }
  Type(rdb::kTypeHash);
  Length(hash.size());
  hash.ForEach([&](std::string_view field, std::string_view value) {
    String(field);
    String(value);
    out_->Checkpoint();
  });
}

bool Encoder::HashWithFieldExpiry(const PackedHash& hash, bool small) {
  // REQUIRES: hash.fields_with_deadline() > 0 (a file's header says 12 only then).
  const HashLimits& limits = options_.limits.hash;
  struct Field {
    std::string field, value;
    int64_t deadline;
  };
  std::vector<Field> fields;
  fields.reserve(hash.size());
  int64_t earliest = 0;
  bool fits = small;
  hash.ForEachWithDeadline([&](std::string_view field, std::string_view value, int64_t deadline) {
    fits = fits && field.size() <= limits.max_listpack_value &&
           value.size() <= limits.max_listpack_value;
    if (deadline != 0) earliest = earliest == 0 ? deadline : std::min(earliest, deadline);
    fields.push_back({std::string(field), std::string(value), deadline});
  });
  if (fits) {
    // Redis 7.4 keeps a listpackex ordered by deadline, the fields without one last.
    std::stable_sort(fields.begin(), fields.end(), [](const Field& a, const Field& b) {
      return (a.deadline == 0 ? INT64_MAX : a.deadline) < (b.deadline == 0 ? INT64_MAX : b.deadline);
    });
    listpack_.Clear();
    for (const Field& f : fields) {
      listpack_.AppendString(f.field);
      listpack_.AppendString(f.value);
      listpack_.AppendInteger(f.deadline);
    }
    if (listpack_.bytes() <= kListpackMaxBytes) {
      Type(rdb::kTypeHashListpackEx);
      AppendFixed(bytes(), static_cast<uint64_t>(earliest), 8);
      String(listpack_.Finish());
      return true;
    }
  }
  Type(rdb::kTypeHashMetadata);
  AppendFixed(bytes(), static_cast<uint64_t>(earliest), 8);
  Length(fields.size());
  for (const Field& f : fields) {
    Length(f.deadline == 0 ? 0 : static_cast<uint64_t>(f.deadline - earliest + 1));
    String(f.field);
    String(f.value);
    out_->Checkpoint();
  }
  return true;
}

void Encoder::Stream(const StreamObject& object) {
  const goblin::Stream& stream = object.stream();
  const Stream::Limits& cut = options_.limits.stream;
  const size_t max_bytes = cut.max_node_bytes == 0 || cut.max_node_bytes > kStreamNodeMaxBytes
                               ? kStreamNodeMaxBytes
                               : cut.max_node_bytes;
  const size_t max_entries = cut.max_node_entries;
  // The node count comes first: plan the nodes (XADD's cuts, sizes only), then write them.
  std::vector<size_t> nodes;  // live entries per node
  std::vector<std::string_view> master_fields;
  StreamId master;
  ListpackSizer master_entry;  // the master entry, its live count 0
  ListpackSizer entries;
  stream.Range(StreamId::Min(), StreamId::Max(), false, 0, [&](const StreamEntryView& entry) {
    if (!nodes.empty()) {
      size_t data = 0;
      for (const auto& [field, value] : entry.fields) data += field.size() + value.size();
      // The node's listpack as XADD sees it: the master entry with its current live count.
      const size_t node_bytes = master_entry.bytes() + entries.bytes() - listpack::kHeaderBytes -
                                1 - listpack::IntegerElementSize(0) +
                                listpack::IntegerElementSize(static_cast<int64_t>(nodes.back()));
      if (node_bytes + data >= max_bytes || (max_entries != 0 && nodes.back() >= max_entries)) {
        nodes.push_back(0);
      }
    } else {
      nodes.push_back(0);
    }
    if (nodes.back() == 0) {
      master = entry.id;
      FieldNames(entry, &master_fields);
      master_entry.Clear();
      AppendStreamMaster(&master_entry, 0, master_fields);
      entries.Clear();
    }
    ++nodes.back();
    AppendStreamEntry(&entries, entry, master, master_fields);
    return true;
  });

  Type(rdb::kTypeStreamListpacks2);
  Length(nodes.size());
  size_t node = 0;
  size_t in_node = 0;
  stream.Range(StreamId::Min(), StreamId::Max(), false, 0, [&](const StreamEntryView& entry) {
    if (in_node == 0) {
      master = entry.id;
      FieldNames(entry, &master_fields);
      listpack_.Clear();
      AppendStreamMaster(&listpack_, nodes[node], master_fields);
    }
    AppendStreamEntry(&listpack_, entry, master, master_fields);
    if (++in_node == nodes[node]) {
      char key[kStreamIdBytes];
      EncodeStreamId(master, key);
      String(std::string_view(key, sizeof(key)));
      String(listpack_.Finish());
      in_node = 0;
      ++node;
      out_->Checkpoint();
    }
    return true;
  });

  Length(stream.size());
  Length(stream.last_id().ms);
  Length(stream.last_id().seq);
  const StreamId first = stream.empty() ? StreamId::Min() : stream.first_id();
  Length(first.ms);
  Length(first.seq);
  Length(stream.max_deleted_id().ms);
  Length(stream.max_deleted_id().seq);
  Length(stream.entries_added());

  const StreamGroups* groups = object.groups();
  Length(groups == nullptr ? 0 : groups->size());
  if (groups == nullptr) return;
  groups->ForEach([&](std::string_view name, const ConsumerGroup& group) {
    String(name);
    Length(group.last_delivered_id().ms);
    Length(group.last_delivered_id().seq);
    Length(static_cast<uint64_t>(group.entries_read()));
    const std::vector<PendingEntry> pending = group.PendingRange(
        StreamId::Min(), StreamId::Max(), SIZE_MAX, std::nullopt, /*min_idle_ms=*/0, /*now=*/0);
    std::unordered_map<std::string_view, std::vector<StreamId>> owned;
    Length(pending.size());
    for (const PendingEntry& entry : pending) {
      RawId(entry.id);
      MillisecondTime(entry.delivery_time_ms);
      Length(entry.delivery_count);
      owned[entry.consumer].push_back(entry.id);
      out_->Checkpoint();
    }
    Length(group.consumer_count());
    group.ForEachConsumer([&](const ConsumerInfo& consumer) {
      String(consumer.name);
      MillisecondTime(consumer.seen_time_ms);
      const auto it = owned.find(consumer.name);
      Length(it == owned.end() ? 0 : it->second.size());
      if (it == owned.end()) return;
      for (StreamId id : it->second) RawId(id);
      out_->Checkpoint();
    });
  });
}

// Writes drained bytes to a file descriptor, keeping the CRC-64 of everything written.
class FileSink {
 public:
  FileSink(int fd, bool checksum) : fd_(fd), checksum_(checksum) {}

  void Drain(std::string* bytes) {
    if (checksum_) crc_ = Crc64(crc_, *bytes);
    if (ok_) ok_ = WriteAll(fd_, bytes->data(), bytes->size(), &error_);
    written_ += bytes->size();
    bytes->clear();
  }

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  uint64_t crc() const { return crc_; }
  uint64_t written() const { return written_; }

 private:
  int fd_;
  bool checksum_;
  bool ok_ = true;
  uint64_t crc_ = 0;
  uint64_t written_ = 0;
  std::string error_;
};

}  // namespace

uint16_t RdbVersionOfValueType(uint8_t type) {
  return type == rdb::kTypeHashMetadata || type == rdb::kTypeHashListpackEx
             ? kRdbVersionFieldExpiry
             : kRdbVersionWritten;
}

void RdbAppendValue(RdbOutput* out, const KeyEntry& entry, const RdbWriteOptions& options) {
  Encoder(out, options).Value(entry);
}

bool WriteRdbToFd(const std::vector<const Database*>& dbs,
                  const std::vector<std::string_view>& libraries, int fd, int64_t now_ms,
                  const RdbWriteOptions& options, SnapshotSaveStats* stats, std::string* error) {
  FileSink sink(fd, options.checksum);
  RdbOutput out;
  out.bytes.reserve(out.drain_at + (out.drain_at >> 4));
  out.drain = [&](std::string* bytes) { sink.Drain(bytes); };
  std::string* bytes = &out.bytes;
  const bool compress = options.compress;
  bool field_expiry = false;
  for (const Database* db : dbs) field_expiry = field_expiry || db->element_deadline_keys() > 0;
  bytes->append(field_expiry ? kRdbMagicFieldExpiry : kRdbMagic);
  auto aux = [&](std::string_view name, std::string_view value) {
    bytes->push_back(static_cast<char>(rdb::kOpAux));
    RdbAppendEncodedString(bytes, name, compress);
    RdbAppendEncodedString(bytes, value, compress);
  };
  aux("redis-ver", kRedisVersion);
  aux("redis-bits", "64");
  aux("ctime", Int64ToString(now_ms / 1000));
  aux("used-mem", std::to_string(options.used_memory));
  if (options.replication.present()) {
    aux("repl-stream-db", std::to_string(options.replication.stream_db));
    aux("repl-id", options.replication.replid);
    aux("repl-offset", std::to_string(options.replication.offset));
  }
  aux("aof-base", "0");
  for (std::string_view code : libraries) RdbAppendFunction(bytes, code, compress);

  Encoder encoder(&out, options);
  uint64_t keys = 0;
  for (size_t index = 0; index < dbs.size(); ++index) {
    const Database& db = *dbs[index];
    if (db.size() == 0) continue;
    keys += db.size();
    bytes->push_back(static_cast<char>(rdb::kOpSelectDb));
    RdbAppendLength(bytes, index);
    bytes->push_back(static_cast<char>(rdb::kOpResizeDb));
    RdbAppendLength(bytes, db.size());
    RdbAppendLength(bytes, db.expires());
    using Access = RdbWriteOptions::AccessRecords;
    auto record = [&](const KeyEntry* entry, uint32_t stamp) {
      SleepPerKey(options.key_save_delay_us);
      if (entry->has_expire()) {
        bytes->push_back(static_cast<char>(rdb::kOpExpireTimeMs));
        AppendFixed(bytes, static_cast<uint64_t>(entry->expire_ms()), 8);
      }
      if (options.access_records == Access::kIdle) {
        bytes->push_back(static_cast<char>(rdb::kOpIdle));
        RdbAppendLength(bytes, options.clock->IdleMs(stamp) / 1000);
      } else if (options.access_records == Access::kFreq) {
        bytes->push_back(static_cast<char>(rdb::kOpFreq));
        bytes->push_back(static_cast<char>(options.clock->DecayedCounter(stamp)));
      }
      encoder.Record(*entry);
      out.Checkpoint();
    };
    // The table lists entries in hash order, scattered over the heap: each one read at once
    // would be a cache miss. They are prefetched a window ahead and written in the same order.
    std::pair<const KeyEntry*, uint32_t> window[kPrefetchWindow];
    size_t next = 0;
    size_t held = 0;
    db.ForEachWithStamp([&](const KeyEntry* entry, uint32_t stamp) {
      __builtin_prefetch(entry);
      __builtin_prefetch(reinterpret_cast<const char*>(entry) + 63);
      if (held == kPrefetchWindow) {
        record(window[next].first, window[next].second);
      } else {
        ++held;
      }
      window[next] = {entry, stamp};
      next = (next + 1) % kPrefetchWindow;
    });
    for (size_t i = 0; i < held; ++i) {
      const auto& [entry, stamp] = window[(next + kPrefetchWindow - held + i) % kPrefetchWindow];
      record(entry, stamp);
    }
  }
  bytes->push_back(static_cast<char>(rdb::kOpEof));
  sink.Drain(bytes);
  AppendFixed(bytes, options.checksum ? sink.crc() : 0, 8);
  sink.Drain(bytes);
  if (!sink.ok()) {
    *error = sink.error();
    return false;
  }
  stats->keys = keys;
  stats->bytes = sink.written();
  return true;
}

bool WriteRdbFile(const std::vector<const Database*>& dbs,
                  const std::vector<std::string_view>& libraries, const std::string& path,
                  int64_t now_ms, const RdbWriteOptions& options, SnapshotSaveStats* stats,
                  std::string* error) {
  return ReplaceFile(
      path,
      [&](int fd, std::string* write_error) {
        return WriteRdbToFd(dbs, libraries, fd, now_ms, options, stats, write_error);
      },
      error);
}

}  // namespace goblin
