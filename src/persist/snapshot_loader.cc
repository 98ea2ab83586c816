#include "persist/snapshot_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "core/hash.h"
#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/set_object.h"
#include "core/string_number.h"
#include "core/varint.h"
#include "core/zset_object.h"
#include "keyspace/database.h"
#include "persist/snapshot_format.h"

namespace goblin {

namespace {

using snapshot::SectionKind;

constexpr const char* kInterrupted = "loading interrupted by a shutdown";

// Bounded little-endian reads over one section body; `base` is the body's file offset, so a
// failure can name the byte. Callers stop at the first failed read.
class BodyReader {
 public:
  BodyReader(std::string_view body, uint64_t base) : body_(body), base_(base) {}

  bool done() const { return pos_ == body_.size(); }
  uint64_t offset() const { return base_ + pos_; }
  size_t remaining() const { return body_.size() - pos_; }

  bool U8(uint8_t* v) {
    if (remaining() < 1) return false;
    *v = static_cast<uint8_t>(body_[pos_++]);
    return true;
  }
  bool Fixed(uint64_t* v, int bytes) {
    if (remaining() < static_cast<size_t>(bytes)) return false;
    uint64_t result = 0;
    for (int i = 0; i < bytes; ++i) {
      result |= uint64_t{static_cast<uint8_t>(body_[pos_ + i])} << (8 * i);
    }
    pos_ += bytes;
    *v = result;
    return true;
  }
  bool Var(uint64_t* v) {
    const auto* begin = reinterpret_cast<const uint8_t*>(body_.data());
    const uint8_t* next = GetVarintChecked(begin + pos_, begin + body_.size(), v);
    if (next == nullptr) return false;
    pos_ = static_cast<size_t>(next - begin);
    return true;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (remaining() < n) return false;
    *out = body_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool LengthPrefixed(std::string_view* out) {
    uint64_t n;
    return Var(&n) && n <= remaining() && Bytes(static_cast<size_t>(n), out);
  }

 private:
  std::string_view body_;
  uint64_t base_;
  size_t pos_ = 0;
};

// One failure: where and what.
struct LoadError {
  uint64_t offset = 0;
  std::string what;
};

// Decodes one packed run (zset_packed.h) with every bound checked, feeding each entry to fn.
// prev_key/prev_member carry the order check across the runs of one set.
template <typename Fn>
bool ReadRun(std::string_view run, uint64_t count, bool* have_prev, uint64_t* prev_key,
             std::string_view* prev_member, std::string* what, Fn&& fn) {
  BodyReader reader(run, 0);
  uint64_t key = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t delta, length;
    std::string_view member;
    if (!reader.Var(&delta) || !reader.Var(&length) || !reader.Bytes(length >> 1, &member)) {
      *what = "sorted set run ends inside an entry";
      return false;
    }
    if (i > 0 && key + delta < key) {
      *what = "sorted set score out of order";
      return false;
    }
    key = (i == 0) ? delta : key + delta;
    if (*have_prev && CompareZsetKeys(*prev_key, *prev_member, key, member) >= 0) {
      *what = "sorted set entries out of order or repeated";
      return false;
    }
    if ((length & 1) && key != ScoreToKey(0.0)) {
      *what = "sorted set entry marks a non-zero score as -0";
      return false;
    }
    const double score = KeyToScore(key, length & 1);
    if (std::isnan(score)) {
      *what = "sorted set score is NaN";
      return false;
    }
    *have_prev = true;
    *prev_key = key;
    *prev_member = member;
    fn(score, member);
  }
  if (!reader.done()) {
    *what = "sorted set run longer than its entries";
    return false;
  }
  return true;
}

class Loading {
 public:
  Loading(const std::string& file_name, std::string_view data, const SnapshotLimits& limits,
          const std::vector<Database*>& dbs, int64_t now_ms,
          const SnapshotLoader::Progress& progress, int64_t key_load_delay_us,
          SnapshotLoadStats* stats, std::vector<SnapshotSection>* sections)
      : file_name_(file_name),
        data_(data),
        limits_(limits),
        dbs_(dbs),
        now_ms_(now_ms),
        progress_(progress),
        key_load_delay_us_(key_load_delay_us),
        stats_(stats),
        sections_(sections) {}

  bool Run(std::string* error) {
    if (!RunChecked()) {
      *error = file_name_ + ": offset " + std::to_string(error_.offset) + ": " + error_.what;
      return false;
    }
    return true;
  }

 private:
  bool Fail(uint64_t offset, std::string what) {
    error_ = {offset, std::move(what)};
    return false;
  }

  bool RunChecked() {
    stats_->bytes = data_.size();
    if (data_.empty()) return Fail(0, "empty file (not a Goblin snapshot)");
    if (data_.size() < snapshot::kMagic.size() ||
        data_.substr(0, snapshot::kMagic.size()) != snapshot::kMagic) {
      if (data_.substr(0, 5) == "REDIS") {
        return Fail(0,
                    "this is a Redis RDB file, not a Goblin snapshot (Goblin does not read RDB)");
      }
      return Fail(0, "bad magic: not a Goblin snapshot");
    }
    uint64_t pos = snapshot::kMagic.size();
    bool have_header = false;
    std::string chain;
    while (true) {
      if (pos == data_.size()) return Fail(pos, "truncated: the file ends before its end section");
      if (data_.size() - pos < snapshot::kSectionOverhead) {
        return Fail(pos, "truncated inside a section head");
      }
      const uint8_t kind = static_cast<uint8_t>(data_[pos]);
      uint64_t length = 0;
      for (int i = 0; i < 8; ++i) {
        length |= uint64_t{static_cast<uint8_t>(data_[pos + 1 + i])} << (8 * i);
      }
      const uint64_t body_at = pos + snapshot::kSectionHead;
      if (length > data_.size() - body_at - snapshot::kSectionTail) {
        return Fail(pos, "truncated: " + std::string(snapshot::SectionKindName(kind)) +
                             " section of " + std::to_string(length) +
                             " bytes runs past the end of the file");
      }
      const uint64_t check_at = body_at + length;
      uint32_t stored = 0;
      for (int i = 0; i < 4; ++i) {
        stored |= uint32_t{static_cast<uint8_t>(data_[check_at + i])} << (8 * i);
      }
      const uint32_t actual =
          static_cast<uint32_t>(XXH3_64bits(data_.data() + pos, snapshot::kSectionHead + length));
      if (stored != actual) {
        return Fail(pos, "checksum mismatch in " + std::string(snapshot::SectionKindName(kind)) +
                             " section (the file is damaged)");
      }
      // The magic is listed as part of the header, so the listed sections cover the file.
      const uint64_t listed_at = sections_->empty() ? 0 : pos;
      sections_->push_back(
          {listed_at, check_at + snapshot::kSectionTail - listed_at, static_cast<char>(kind)});
      const std::string_view body = data_.substr(body_at, length);
      const uint64_t next = check_at + snapshot::kSectionTail;
      if (!have_header && kind != static_cast<uint8_t>(SectionKind::kHeader)) {
        return Fail(pos, "the first section is not a header");
      }
      switch (static_cast<SectionKind>(kind)) {
        case SectionKind::kHeader:
          if (have_header) return Fail(pos, "a second header section");
          if (!ReadHeader(BodyReader(body, body_at))) return false;
          have_header = true;
          break;
        case SectionKind::kDatabase:
          if (!CloseDatabase(pos) || !OpenDatabase(BodyReader(body, body_at))) return false;
          break;
        case SectionKind::kKeys:
          if (db_ == nullptr) return Fail(pos, "keys before any database section");
          if (!ReadKeys(BodyReader(body, body_at))) return false;
          break;
        case SectionKind::kEnd: {
          if (!CloseDatabase(pos)) return false;
          BodyReader reader(body, body_at);
          uint64_t count, file_check;
          if (!reader.Var(&count) || !reader.Fixed(&file_check, 8) || !reader.done()) {
            return Fail(body_at, "malformed end section");
          }
          if (count != sections_->size() - 1) {
            return Fail(body_at, "the end section counts " + std::to_string(count) +
                                     " sections, the file has " +
                                     std::to_string(sections_->size() - 1));
          }
          if (file_check != XXH3_64bits(chain.data(), chain.size())) {
            return Fail(body_at, "file checksum mismatch (sections lost, repeated or moved)");
          }
          if (databases_seen_ != databases_announced_) {
            return Fail(body_at, "the header announces " + std::to_string(databases_announced_) +
                                     " databases, the file holds " +
                                     std::to_string(databases_seen_));
          }
          if (keys_seen_ != total_keys_) {
            return Fail(body_at, "the header announces " + std::to_string(total_keys_) +
                                     " keys, the file holds " + std::to_string(keys_seen_));
          }
          if (next != data_.size()) return Fail(next, "bytes after the end section");
          return true;
        }
        default:
          return Fail(pos, "unknown section kind " + std::to_string(kind));
      }
      chain.append(data_.data() + check_at, snapshot::kSectionTail);
      pos = next;
    }
  }

  bool ReadHeader(BodyReader reader) {
    uint64_t version, created, databases;
    std::string_view creator;
    if (!reader.Fixed(&version, 4)) return Fail(reader.offset(), "malformed header");
    if (version != snapshot::kVersion) {
      return Fail(reader.offset() - 4, "format version " + std::to_string(version) +
                                           " is not supported (this build reads version " +
                                           std::to_string(snapshot::kVersion) + ")");
    }
    if (!reader.Fixed(&created, 8) || !reader.Var(&databases) || !reader.Var(&total_keys_) ||
        !reader.LengthPrefixed(&creator) || !reader.done()) {
      return Fail(reader.offset(), "malformed header");
    }
    databases_announced_ = databases;
    stats_->created_ms = static_cast<int64_t>(created);
    stats_->creator = std::string(creator);
    return true;
  }

  bool OpenDatabase(BodyReader reader) {
    const uint64_t at = reader.offset();
    uint64_t index;
    if (!reader.Var(&index) || !reader.Var(&db_keys_) || !reader.Var(&db_expires_) ||
        !reader.done()) {
      return Fail(at, "malformed database section");
    }
    if (index >= dbs_.size()) {
      return Fail(at, "database " + std::to_string(index) + " is out of range (the server has " +
                          std::to_string(dbs_.size()) + " databases; raise `databases`)");
    }
    if (seen_db_.size() < dbs_.size()) seen_db_.resize(dbs_.size());
    if (seen_db_[index]) return Fail(at, "database " + std::to_string(index) + " appears twice");
    seen_db_[index] = true;
    ++databases_seen_;
    db_ = dbs_[index];
    db_at_ = at;
    db_read_ = db_expires_read_ = 0;
    return true;
  }

  bool CloseDatabase(uint64_t at) {
    if (db_ == nullptr) return true;
    if (db_read_ != db_keys_ || db_expires_read_ != db_expires_) {
      return Fail(at, "the database section at offset " + std::to_string(db_at_) + " announces " +
                          std::to_string(db_keys_) + " keys (" + std::to_string(db_expires_) +
                          " with expiry), " + std::to_string(db_read_) + " (" +
                          std::to_string(db_expires_read_) + ") follow");
    }
    for (const std::string& key : expired_) db_->Delete(key);
    expired_.clear();
    db_ = nullptr;
    return true;
  }

  bool ReadKeys(BodyReader reader) {
    while (!reader.done()) {
      if (!ReadKey(reader)) return false;
      ++keys_seen_;
      if (key_load_delay_us_ > 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(key_load_delay_us_));
      }
      if (progress_ && (keys_seen_ % 1024 == 0 || key_load_delay_us_ > 0)) {
        if (!progress_(reader.offset(), keys_seen_)) return Fail(reader.offset(), kInterrupted);
      }
    }
    if (progress_ && !progress_(reader.offset(), keys_seen_)) {
      return Fail(reader.offset(), kInterrupted);
    }
    return true;
  }

  bool ReadKey(BodyReader& reader) {
    const uint64_t at = reader.offset();
    uint8_t tag;
    uint64_t expire = 0;
    std::string_view key;
    if (!reader.U8(&tag)) return Fail(at, "truncated key record");
    const bool has_expire = tag & snapshot::kTagHasExpire;
    if ((has_expire && !reader.Fixed(&expire, 8)) || !reader.LengthPrefixed(&key)) {
      return Fail(at, "truncated key record");
    }
    if (tag & ~(snapshot::kTagTypeMask | snapshot::kTagIntegerString | snapshot::kTagHasExpire)) {
      return Fail(at, "unknown bits in key tag " + std::to_string(tag));
    }
    const auto type = static_cast<ValueType>(tag & snapshot::kTagTypeMask);
    if ((tag & snapshot::kTagIntegerString) && type != ValueType::kString) {
      return Fail(at, "the integer bit is set on a key that is not a string");
    }
    std::optional<int64_t> deadline;
    if (has_expire) deadline = static_cast<int64_t>(expire);
    ++db_read_;
    db_expires_read_ += has_expire ? 1 : 0;
    EntryValue value;
    Collection* object = nullptr;
    std::string what;
    switch (type) {
      case ValueType::kString: {
        if (tag & snapshot::kTagIntegerString) {
          uint64_t zigzag;
          if (!reader.Var(&zigzag)) return Fail(at, "truncated integer string");
          value = EntryValue::Integer(snapshot::UnZigZag(zigzag));
        } else {
          std::string_view bytes;
          if (!reader.LengthPrefixed(&bytes)) return Fail(at, "truncated string value");
          value = EntryValue::String(bytes);
        }
        break;
      }
      case ValueType::kZSet:
      case ValueType::kHash:
      case ValueType::kSet: {
        std::string_view bytes;
        const uint64_t value_at = reader.offset();
        if (!reader.LengthPrefixed(&bytes)) return Fail(at, "truncated collection value");
        object = ReadCollection(type, bytes, &what);
        if (object == nullptr) return Fail(value_at, "key '" + std::string(key) + "': " + what);
        value = EntryValue::Object(type, object);
        break;
      }
      default:
        return Fail(at, "unknown value type " + std::to_string(tag & snapshot::kTagTypeMask));
    }
    if (!db_->AddNew(key, value, deadline)) {
      delete object;
      return Fail(at, "key '" + std::string(key) + "' appears twice");
    }
    if (deadline && *deadline <= now_ms_) {
      // Dropped as Redis drops it, when the database ends: until then it still answers the
      // duplicate check.
      expired_.emplace_back(key);
      ++stats_->keys_expired;
      return true;
    }
    ++stats_->keys_read;
    return true;
  }

  Collection* ReadCollection(ValueType type, std::string_view bytes, std::string* what) {
    switch (type) {
      case ValueType::kZSet:
        return ReadZset(bytes, what);
      case ValueType::kHash:
        return ReadHash(bytes, what);
      default:
        return ReadSet(bytes, what);
    }
  }

  struct RunRef {
    std::string_view bytes;
    uint32_t count;
  };

  Collection* ReadZset(std::string_view bytes, std::string* what) {
    BodyReader reader(bytes, 0);
    uint8_t form;
    uint64_t count, longest, runs;
    if (!reader.U8(&form) || !reader.Var(&count) || !reader.Var(&longest) || !reader.Var(&runs) ||
        form > snapshot::kZsetLarge) {
      *what = "malformed sorted set head";
      return nullptr;
    }
    if (count == 0 || count > bytes.size() || runs > count) {
      *what = "sorted set member count " + std::to_string(count) + " is impossible here";
      return nullptr;
    }
    std::vector<RunRef> refs;
    refs.reserve(static_cast<size_t>(runs));
    uint64_t listed = 0;
    bool leaf_sized = true;  // every run fits a leaf of the large form as it is
    for (uint64_t r = 0; r < runs; ++r) {
      uint64_t entries;
      std::string_view run;
      if (!reader.Var(&entries) || !reader.LengthPrefixed(&run) || entries == 0 ||
          entries > count - listed) {
        *what = "malformed sorted set run " + std::to_string(r);
        return nullptr;
      }
      listed += entries;
      leaf_sized = leaf_sized && (run.size() <= ZsetTree::kLeafPayload || entries == 1);
      refs.push_back({run, static_cast<uint32_t>(entries)});
    }
    if (!reader.done() || listed != count) {
      *what = "sorted set counts do not match its runs";
      return nullptr;
    }
    auto object = std::make_unique<ZsetObject>(static_cast<size_t>(count),
                                               static_cast<size_t>(longest), limits_.zset);
    SortedSet& set = object->set();
    const bool small = set.encoding() == SortedSet::Encoding::kListpack;
    if (!small && leaf_sized) {
      if (!CopyRuns(refs, longest, set, what)) return nullptr;
      return object.release();
    }
    bool have_prev = false;
    uint64_t prev_key = 0;
    std::string_view prev_member;
    size_t longest_seen = 0;
    for (const RunRef& ref : refs) {
      const bool ok =
          ReadRun(ref.bytes, ref.count, &have_prev, &prev_key, &prev_member, what,
                  [&](double score, std::string_view member) {
                    longest_seen = std::max(longest_seen, member.size());
                    // The small form never stores -0 (zset_object.h, invariant 2).
                    set.AppendSorted(small && score == 0 ? 0.0 : score, member, limits_.zset);
                  });
      if (!ok) return nullptr;
    }
    if (longest_seen != longest) {
      *what = "sorted set longest member does not match its runs";
      return nullptr;
    }
    set.FinishAppends();
    return object.release();
  }

  // The large form's fast path: each run becomes a leaf by one copy while the entries are
  // checked, hashed and indexed (on a second thread for big sets: the two halves touch
  // disjoint memory and take about as long each).
  static bool CopyRuns(const std::vector<RunRef>& refs, uint64_t longest, SortedSet& set,
                       std::string* what) {
    uint64_t count = 0;
    for (const RunRef& ref : refs) count += ref.count;
    ZsetMemberIndex index;
    std::string index_error;
    auto build_index = [&] {
      std::vector<std::pair<uint64_t, uint32_t>> entries;
      entries.reserve(static_cast<size_t>(count));
      bool have_prev = false;
      uint64_t prev_key = 0;
      std::string_view prev_member;
      size_t longest_seen = 0;
      for (size_t r = 0; r < refs.size(); ++r) {
        const uint32_t leaf = static_cast<uint32_t>(r);  // AppendRun numbers leaves in order
        const bool ok = ReadRun(refs[r].bytes, refs[r].count, &have_prev, &prev_key, &prev_member,
                                &index_error, [&](double, std::string_view member) {
                                  longest_seen = std::max(longest_seen, member.size());
                                  entries.emplace_back(HashBytes(member), leaf);
                                });
        if (!ok) return;
      }
      if (longest_seen != longest) {
        index_error = "sorted set longest member does not match its runs";
        return;
      }
      index.BulkLoad(entries);
    };
    constexpr uint64_t kThreadedMembers = 1 << 16;
    std::thread builder;
    if (count >= kThreadedMembers) {
      builder = std::thread(build_index);
    } else {
      build_index();
    }
    bool numbered_in_order = true;
    for (size_t r = 0; r < refs.size(); ++r) {
      const uint32_t leaf =
          set.AppendRun(reinterpret_cast<const uint8_t*>(refs[r].bytes.data()), refs[r].count,
                        static_cast<uint32_t>(refs[r].bytes.size()));
      numbered_in_order = numbered_in_order && leaf == r;
    }
    if (builder.joinable()) builder.join();
    if (!index_error.empty()) {
      *what = index_error;
      return false;
    }
    if (!numbered_in_order) {
      *what = "internal: leaves were not numbered in run order";
      return false;
    }
    set.AdoptIndex(index);
    return true;
  }

  Collection* ReadHash(std::string_view bytes, std::string* what) {
    PackedHash hash;
    if (!PackedHash::Restore(bytes, &hash) || hash.empty()) {
      *what = "malformed hash";
      return nullptr;
    }
    const HashLimits& limits = limits_.hash;
    bool fits_small = hash.size() <= limits.max_listpack_entries;
    if (fits_small) {
      hash.ForEach([&](std::string_view field, std::string_view value) {
        if (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value) {
          fits_small = false;
        }
      });
    }
    if (hash.encoding() == PackedHash::Encoding::kListpack && !fits_small) {
      hash.ConvertToLarge();
    } else if (hash.encoding() == PackedHash::Encoding::kHashtable && fits_small) {
      PackedHash small;
      hash.ForEach(
          [&](std::string_view field, std::string_view value) { small.Set(field, value, limits); });
      hash = std::move(small);
    }
    return new HashObject(std::move(hash));
  }

  Collection* ReadSet(std::string_view bytes, std::string* what) {
    PackedSet set;
    if (!PackedSet::Restore(bytes, &set) || set.empty()) {
      *what = "malformed set";
      return nullptr;
    }
    const SetLimits& limits = limits_.set;
    if (set.encoding() == PackedSet::Encoding::kHashtable) {
      // Redis re-adds a dumped hashtable's members when it may fit a smaller form.
      if (set.size() <= std::max(limits.max_intset_entries, limits.max_listpack_entries)) {
        std::optional<PackedSet> rebuilt;
        set.ForEach([&](std::string_view member) {
          if (!rebuilt) rebuilt.emplace(member, set.size(), limits);
          rebuilt->Add(member, limits);
        });
        set = std::move(*rebuilt);
      }
    } else {
      const size_t max_entries = set.encoding() == PackedSet::Encoding::kIntset
                                     ? limits.max_intset_entries
                                     : limits.max_listpack_entries;
      bool too_long = false;
      if (set.encoding() == PackedSet::Encoding::kListpack) {
        set.ForEach([&](std::string_view member) {
          too_long = too_long || member.size() > limits.max_listpack_value;
        });
      }
      if (set.size() > max_entries || too_long) set.ConvertToLarge();
    }
    return new SetObject(std::move(set));
  }

  const std::string& file_name_;
  std::string_view data_;
  const SnapshotLimits& limits_;
  const std::vector<Database*>& dbs_;
  int64_t now_ms_;
  const SnapshotLoader::Progress& progress_;
  int64_t key_load_delay_us_;
  SnapshotLoadStats* stats_;
  std::vector<SnapshotSection>* sections_;
  LoadError error_;
  uint64_t total_keys_ = 0;
  uint64_t databases_announced_ = 0;
  uint64_t databases_seen_ = 0;
  uint64_t keys_seen_ = 0;
  std::vector<bool> seen_db_;
  Database* db_ = nullptr;
  std::vector<std::string> expired_;  // keys of db_ loaded past their deadline
  uint64_t db_at_ = 0;
  uint64_t db_keys_ = 0, db_expires_ = 0, db_read_ = 0, db_expires_read_ = 0;
};

}  // namespace

namespace snapshot {

const char* SectionKindName(uint8_t kind) {
  switch (static_cast<SectionKind>(kind)) {
    case SectionKind::kHeader:
      return "header";
    case SectionKind::kDatabase:
      return "db";
    case SectionKind::kKeys:
      return "keys";
    case SectionKind::kEnd:
      return "end";
  }
  return "unknown";
}

}  // namespace snapshot

bool SnapshotLoader::Load(const std::vector<Database*>& dbs, int64_t now_ms,
                          const Progress& progress, int64_t key_load_delay_us, std::string* error) {
  stats_ = SnapshotLoadStats();
  sections_.clear();
  Loading loading(file_name_, data_, limits_, dbs, now_ms, progress, key_load_delay_us, &stats_,
                  &sections_);
  return loading.Run(error);
}

bool LoadSnapshotFile(const std::string& path, const std::vector<Database*>& dbs,
                      const SnapshotLimits& limits, int64_t now_ms,
                      const SnapshotLoader::Progress& progress, int64_t key_load_delay_us,
                      SnapshotLoadStats* stats, std::vector<SnapshotSection>* sections,
                      bool* missing, std::string* error) {
  *missing = false;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      *missing = true;
      return false;
    }
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = path + ": cannot stat: " + std::strerror(errno);
    close(fd);
    return false;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = nullptr;
  if (size > 0) {
    map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
      *error = path + ": cannot map: " + std::strerror(errno);
      close(fd);
      return false;
    }
  }
  close(fd);
  SnapshotLoader loader(path, std::string_view(static_cast<const char*>(map), size), limits);
  const bool ok = loader.Load(dbs, now_ms, progress, key_load_delay_us, error);
  if (map != nullptr) munmap(map, size);
  if (stats != nullptr) *stats = loader.stats();
  if (sections != nullptr) *sections = loader.sections();
  return ok;
}

}  // namespace goblin
