#include "persist/snapshot_loader.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "core/bytes.h"
#include "core/key_entry.h"
#include "core/value_types.h"
#include "keyspace/database.h"
#include "persist/file_util.h"
#include "persist/snapshot_format.h"

namespace goblin {

namespace {

using snapshot::SectionKind;

constexpr const char* kInterrupted = "loading interrupted by a shutdown";

// One failure: where and what.
struct LoadError {
  uint64_t offset = 0;
  std::string what;
};

class Loading {
 public:
  Loading(const std::string& file_name, std::string_view data, const EncodingLimits& limits,
          const std::vector<Database*>& dbs, int64_t now_ms,
          const SnapshotLoader::Progress& progress, const int64_t* key_load_delay_us,
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
        return Fail(
            0, "this is a Redis RDB file, not a Goblin snapshot (read it with the RDB loader)");
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
          if (!ReadHeader(ByteReader(body, body_at))) return false;
          have_header = true;
          break;
        case SectionKind::kReplication:
          if (version_ < snapshot::kVersionWithReplication || sections_->size() != 2) {
            return Fail(pos, "a replication section out of place");
          }
          if (!ReadReplication(ByteReader(body, body_at))) return false;
          break;
        case SectionKind::kFunctions:
          if (functions_seen_ || db_ != nullptr) {
            return Fail(pos, "a functions section out of place");
          }
          if (!ReadFunctions(ByteReader(body, body_at))) return false;
          functions_seen_ = true;
          break;
        case SectionKind::kDatabase:
          if (!CloseDatabase(pos) || !OpenDatabase(ByteReader(body, body_at))) return false;
          break;
        case SectionKind::kKeys:
          if (db_ == nullptr) return Fail(pos, "keys before any database section");
          if (!ReadKeys(ByteReader(body, body_at))) return false;
          break;
        case SectionKind::kEnd: {
          if (!CloseDatabase(pos)) return false;
          ByteReader reader(body, body_at);
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

  bool ReadFunctions(ByteReader reader) {
    uint64_t count = 0;
    if (!reader.Var(&count)) return Fail(reader.offset(), "malformed functions section");
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view code;
      if (!reader.LengthPrefixed(&code)) return Fail(reader.offset(), "malformed library code");
      stats_->libraries.emplace_back(code);
    }
    if (!reader.done()) return Fail(reader.offset(), "bytes after the last library");
    return true;
  }

  bool ReadReplication(ByteReader reader) {
    std::string_view replid;
    uint64_t offset, db;
    if (!reader.LengthPrefixed(&replid) || replid.empty() || !reader.Fixed(&offset, 8) ||
        !reader.Var(&db) || !reader.done()) {
      return Fail(reader.offset(), "malformed replication section");
    }
    if (db >= dbs_.size()) {
      return Fail(reader.offset(),
                  "replication stream database " + std::to_string(db) + " is out of range");
    }
    stats_->replication = {std::string(replid), offset, static_cast<int>(db)};
    return true;
  }

  bool ReadHeader(ByteReader reader) {
    uint64_t version, created, databases;
    std::string_view creator;
    if (!reader.Fixed(&version, 4)) return Fail(reader.offset(), "malformed header");
    if (version != snapshot::kVersion && version != snapshot::kVersionWithReplication) {
      return Fail(reader.offset() - 4, "format version " + std::to_string(version) +
                                           " is not supported (this build reads versions " +
                                           std::to_string(snapshot::kVersion) + " and " +
                                           std::to_string(snapshot::kVersionWithReplication) + ")");
    }
    version_ = static_cast<uint32_t>(version);
    if (!reader.Fixed(&created, 8) || !reader.Var(&databases) || !reader.Var(&total_keys_) ||
        !reader.LengthPrefixed(&creator) || !reader.done()) {
      return Fail(reader.offset(), "malformed header");
    }
    databases_announced_ = databases;
    stats_->created_ms = static_cast<int64_t>(created);
    stats_->creator = std::string(creator);
    return true;
  }

  bool OpenDatabase(ByteReader reader) {
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
    db_index_ = static_cast<int>(index);
    // A key record takes a few bytes at least: a count the file cannot hold is not believed.
    db_->Reserve(std::min<uint64_t>(db_keys_, data_.size() / 4));
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

  bool ReadKeys(ByteReader reader) {
    while (!reader.done()) {
      if (!ReadKey(reader)) return false;
      ++keys_seen_;
      const int64_t delay = key_load_delay_us_ ? *key_load_delay_us_ : 0;
      SleepPerKey(delay);
      if (progress_ && (keys_seen_ % 1024 == 0 || delay != 0)) {
        if (!progress_(reader.offset(), keys_seen_)) return Fail(reader.offset(), kInterrupted);
      }
    }
    if (progress_ && !progress_(reader.offset(), keys_seen_)) {
      return Fail(reader.offset(), kInterrupted);
    }
    return true;
  }

  bool ReadKey(ByteReader& reader) {
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
    const ValueTypeInfo* type = ValueTypeWithSnapshotTag(tag & snapshot::kTagTypeMask);
    if (type == nullptr) {
      return Fail(at, "unknown value type " + std::to_string(tag & snapshot::kTagTypeMask));
    }
    const bool is_string = type->type == ValueType::kString;
    if ((tag & snapshot::kTagIntegerString) && !is_string) {
      return Fail(at, "the integer bit is set on a key that is not a string");
    }
    std::optional<int64_t> deadline;
    if (has_expire) deadline = static_cast<int64_t>(expire);
    ++db_read_;
    db_expires_read_ += has_expire ? 1 : 0;
    EntryValue value;
    Collection* object = nullptr;
    if (!is_string) {
      std::string_view bytes;
      const uint64_t value_at = reader.offset();
      if (!reader.LengthPrefixed(&bytes)) return Fail(at, "truncated collection value");
      std::string what;
      object = type->decode_snapshot(bytes, limits_, &what);
      if (object == nullptr) return Fail(value_at, "key '" + std::string(key) + "': " + what);
      value = EntryValue::Object(object);
    } else if (tag & snapshot::kTagIntegerString) {
      uint64_t zigzag;
      if (!reader.Var(&zigzag)) return Fail(at, "truncated integer string");
      value = EntryValue::Integer(snapshot::UnZigZag(zigzag));
    } else {
      std::string_view bytes;
      if (!reader.LengthPrefixed(&bytes)) return Fail(at, "truncated string value");
      value = EntryValue::String(bytes);
    }
    if (replace_existing) {
      // A key of the file that expired leaves the database's own in place.
      if (deadline && *deadline <= now_ms_) {
        delete object;
        ++stats_->keys_expired;
        return true;
      }
      db_->Delete(key);
    }
    if (!db_->AddNew(key, value, deadline)) {
      delete object;
      return Fail(at, "key '" + std::string(key) + "' appears twice");
    }
    if (deadline && *deadline <= now_ms_) {
      // Dropped as Redis drops it, when the database ends: until then it still answers the
      // duplicate check.
      expired_.emplace_back(key);
      if (name_expired) stats_->expired_names.emplace_back(db_index_, std::string(key));
      ++stats_->keys_expired;
      return true;
    }
    ++stats_->keys_read;
    return true;
  }

  const std::string& file_name_;
  std::string_view data_;
  const EncodingLimits& limits_;
  const std::vector<Database*>& dbs_;
  int64_t now_ms_;
  const SnapshotLoader::Progress& progress_;
  const int64_t* key_load_delay_us_;
  SnapshotLoadStats* stats_;
  std::vector<SnapshotSection>* sections_;

 public:
  bool replace_existing = false;  // SnapshotLoader::set_replace_existing
  bool name_expired = false;      // SnapshotLoader::set_name_expired

 private:
  LoadError error_;
  uint64_t total_keys_ = 0;
  uint32_t version_ = 0;  // the header's
  uint64_t databases_announced_ = 0;
  uint64_t databases_seen_ = 0;
  uint64_t keys_seen_ = 0;
  std::vector<bool> seen_db_;
  bool functions_seen_ = false;
  Database* db_ = nullptr;
  int db_index_ = 0;
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
    case SectionKind::kReplication:
      return "replication";
    case SectionKind::kFunctions:
      return "functions";
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
                          const Progress& progress, const int64_t* key_load_delay_us,
                          std::string* error) {
  stats_ = SnapshotLoadStats();
  sections_.clear();
  Loading loading(file_name_, data_, limits_, dbs, now_ms, progress, key_load_delay_us, &stats_,
                  &sections_);
  loading.replace_existing = replace_existing_;
  loading.name_expired = name_expired_;
  return loading.Run(error);
}

bool LoadSnapshotFile(const std::string& path, const std::vector<Database*>& dbs,
                      const EncodingLimits& limits, int64_t now_ms,
                      const SnapshotLoader::Progress& progress, const int64_t* key_load_delay_us,
                      SnapshotLoadStats* stats, std::vector<SnapshotSection>* sections,
                      bool* missing, std::string* error) {
  MappedFile file;
  if (!file.Open(path, missing, error)) return false;
  SnapshotLoader loader(path, file.data(), limits);
  const bool ok = loader.Load(dbs, now_ms, progress, key_load_delay_us, error);
  if (stats != nullptr) *stats = loader.stats();
  if (sections != nullptr) *sections = loader.sections();
  return ok;
}

}  // namespace goblin
