#include "persist/rdb_loader.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <thread>

#include "core/crc64.h"
#include "core/key_entry.h"
#include "keyspace/database.h"
#include "persist/file_util.h"
#include "persist/rdb_format.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_string.h"

namespace goblin {

namespace {

constexpr size_t kMagicBytes = 9;  // "REDIS" and four digits
constexpr uint32_t kFirstVersionWithChecksum = 5;
// A record this long reports progress on its own (the server answers -LOADING meanwhile).
constexpr size_t kBigRecordBytes = size_t{1} << 20;

uint64_t LoadLittle(std::string_view data, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(data[at + i])} << (8 * i);
  return v;
}

// A key as error messages show it: its first 128 bytes.
std::string Shown(std::string_view key) {
  return key.size() <= 128 ? std::string(key) : std::string(key.substr(0, 128)) + "...";
}

class RdbFileReader {
 public:
  RdbFileReader(const std::string& file_name, std::string_view data,
                const std::vector<Database*>& dbs, const RdbLoadOptions& options,
                RdbLoadStats* stats)
      : file_name_(file_name), data_(data), dbs_(dbs), options_(options), stats_(stats) {}

  bool Run(std::string* error) {
    if (RunChecked()) return true;
    *error = file_name_ + ": offset " + std::to_string(error_offset_) + ": " + error_what_;
    if (!stats_->checksum_verified && ChecksumContradicts()) {
      *error += " (and the file's checksum does not match its bytes: it is damaged)";
    }
    return false;
  }

 private:
  bool Fail(size_t at, std::string what) {
    error_offset_ = at;
    error_what_ = std::move(what);
    return false;
  }
  bool Truncated(const char* what) {
    return Fail(pos_, std::string("truncated: the file ends inside ") + what);
  }
  bool Length(uint64_t* n, const char* what) {
    const size_t at = pos_;
    if (!RdbReadLength(data_, &pos_, n)) {
      pos_ = at;
      return pos_ >= data_.size() ? Truncated(what)
                                  : Fail(at, std::string("bad length encoding in ") + what);
    }
    return true;
  }
  bool String(std::string* out, const char* what) {
    const size_t at = pos_;
    if (!RdbReadString(data_, &pos_, out)) {
      return Fail(at, std::string("truncated or corrupt string in ") + what);
    }
    return true;
  }
  bool Fixed(uint64_t* v, int bytes, const char* what) {
    if (data_.size() - pos_ < static_cast<size_t>(bytes)) return Truncated(what);
    *v = LoadLittle(data_, pos_, bytes);
    pos_ += bytes;
    return true;
  }

  // With the last 9 bytes as the end marker and a checksum written by the writer, whether that
  // checksum disagrees with the bytes before it: said beside an error, as a hint that the file
  // was damaged rather than written wrong.
  bool ChecksumContradicts() const {
    if (stats_->version < kFirstVersionWithChecksum || data_.size() < kMagicBytes + 9 ||
        options_.commands_may_follow) {
      return false;
    }
    const size_t crc_at = data_.size() - 8;
    const uint64_t stored = LoadLittle(data_, crc_at, 8);
    return stored != 0 && Crc64(0, data_.substr(0, crc_at)) != stored;
  }

  bool RunChecked() {
    stats_->bytes = data_.size();
    if (!IsRdbFile(data_)) return Fail(0, "not an RDB file (it does not start with REDIS)");
    if (data_.size() < kMagicBytes) return Fail(data_.size(), "truncated inside the RDB header");
    uint32_t version = 0;
    for (size_t i = 5; i < kMagicBytes; ++i) {
      const char digit = data_[i];
      if (digit < '0' || digit > '9') return Fail(5, "the RDB version is not four digits");
      version = version * 10 + static_cast<uint32_t>(digit - '0');
    }
    stats_->version = version;
    if (version < 1 || version > kRdbFileVersionRead) {
      return Fail(5, "RDB format version " + std::to_string(version) +
                         " is not supported (this build reads versions 1 to " +
                         std::to_string(kRdbFileVersionRead) + ")");
    }
    pos_ = kMagicBytes;
    while (true) {
      if (pos_ >= data_.size()) {
        return Fail(pos_, "truncated: the file ends before its end-of-file marker");
      }
      const size_t at = pos_;
      const uint8_t op = static_cast<uint8_t>(data_[pos_++]);
      // Records that are not part of a key's record see every key before them stored.
      if (!RdbIsValueType(op) && op != rdb::kOpExpireTime && op != rdb::kOpExpireTimeMs &&
          op != rdb::kOpFreq && op != rdb::kOpIdle && !Flush()) {
        return false;
      }
      switch (op) {
        case rdb::kOpExpireTime: {
          uint64_t seconds = 0;
          if (!Fixed(&seconds, 4, "an expiry")) return false;
          deadline_ = int64_t{static_cast<int32_t>(seconds)} * 1000;
          break;
        }
        case rdb::kOpExpireTimeMs: {
          uint64_t ms = 0;
          if (!Fixed(&ms, 8, "an expiry")) return false;
          deadline_ = static_cast<int64_t>(ms);
          break;
        }
        case rdb::kOpFreq: {
          uint64_t counter = 0;
          if (!Fixed(&counter, 1, "an LFU counter")) return false;
          access_.frequency = static_cast<uint8_t>(counter);
          break;
        }
        case rdb::kOpIdle: {
          uint64_t seconds = 0;
          if (!Length(&seconds, "an LRU idle time")) return false;
          access_.idle_seconds = seconds;
          break;
        }
        case rdb::kOpEof:
          return End();
        case rdb::kOpSelectDb: {
          uint64_t index = 0;
          if (!Length(&index, "a database selector")) return false;
          if (index >= dbs_.size()) {
            return Fail(at, "database " + std::to_string(index) +
                                " is out of range (the server has " + std::to_string(dbs_.size()) +
                                " databases; raise `databases`)");
          }
          db_ = static_cast<size_t>(index);
          break;
        }
        case rdb::kOpResizeDb: {
          uint64_t keys = 0, expires = 0;
          if (!Length(&keys, "a database size") || !Length(&expires, "a database size")) {
            return false;
          }
          // A key record takes a few bytes at least: a count the file cannot hold is not
          // believed.
          dbs_[db_]->Reserve(std::min<uint64_t>(keys, (data_.size() - pos_) / 4));
          break;
        }
        case rdb::kOpSlotInfo: {
          uint64_t slot = 0, keys = 0, expires = 0;
          if (!Length(&slot, "slot information") || !Length(&keys, "slot information") ||
              !Length(&expires, "slot information")) {
            return false;
          }
          break;
        }
        case rdb::kOpAux: {
          std::string name, value;
          if (!String(&name, "an aux field") || !String(&value, "an aux field")) return false;
          stats_->aux.emplace_back(std::move(name), std::move(value));
          break;
        }
        case rdb::kOpModuleAux: {
          uint64_t id = 0;
          if (!Length(&id, "module data")) return false;
          return Fail(at, "auxiliary data of module type '" + RdbModuleTypeName(id) +
                              "': Goblin loads no modules");
        }
        case rdb::kOpFunctionPreGa: {
          std::string name, engine, description, code;
          uint64_t has_description = 0;
          if (!String(&name, "a function library") || !String(&engine, "a function library") ||
              !Length(&has_description, "a function library") ||
              (has_description != 0 && !String(&description, "a function library")) ||
              !String(&code, "a function library")) {
            return false;
          }
          // 7.0's release candidates kept the name and engine beside the code; since 7.0 the
          // code's shebang line holds them.
          stats_->libraries.push_back("#!" + engine + " name=" + name + "\n" + code);
          break;
        }
        case rdb::kOpFunction2: {
          std::string code;
          if (!String(&code, "a function library")) return false;
          stats_->libraries.push_back(std::move(code));
          break;
        }
        default:
          if (!RdbIsValueType(op)) {
            return Fail(at, "unknown record type " + std::to_string(op));
          }
          if (!Key(op, at)) return false;
      }
    }
  }

  // A key record is decoded into the ring, its table bucket prefetched, and stored a few
  // records later, when that bucket is in cache: the table's buckets are a cache miss each, and
  // the records in between hide it.
  bool Key(uint8_t type, size_t at) {
    Pending& pending = ring_[(ring_head_ + ring_size_) % kAhead];
    std::string_view key;
    if (!RdbReadStringView(data_, &pos_, &key_scratch_, &key)) {
      return Flushed(Fail(pos_, "truncated or corrupt key"));
    }
    pending.at = at;
    pending.db = db_;
    pending.key.assign(key);
    pending.deadline = deadline_;
    pending.access = access_;
    deadline_.reset();
    access_ = RdbKeyAccess();
    RdbReadError value_error;
    size_t value_end = pos_;
    const bool ok =
        RdbReadValue(type, data_, &value_end, options_.limits, &pending.value, &value_error);
    if (!ok && !value_error.empty) {
      return Flushed(Fail(value_error.offset, "key '" + Shown(key) + "': " + value_error.what));
    }
    pos_ = value_end;
    ++keys_seen_;
    if (!ok) {
      ++stats_->keys_empty;
    } else if (options_.skip_expired &&
               ((pending.deadline && *pending.deadline < options_.now_ms) ||
                !pending.value.DropExpiredFields(options_.now_ms))) {
      ++stats_->keys_expired;
      if (options_.name_expired) {
        stats_->expired_names.emplace_back(static_cast<int>(db_), std::string(pending.key));
      }
    } else {
      dbs_[db_]->Prefetch(pending.key);
      if (++ring_size_ == kAhead && !StoreOldest()) return false;
    }
    const int64_t delay = options_.key_load_delay_us ? *options_.key_load_delay_us : 0;
    SleepPerKey(delay);
    if (options_.progress &&
        (keys_seen_ % 1024 == 0 || pos_ - at >= kBigRecordBytes || delay != 0)) {
      if (!Flush()) return false;
      if (!options_.progress(pos_, keys_seen_)) {
        return Fail(pos_, "loading interrupted by a shutdown");
      }
    }
    return true;
  }

  bool StoreOldest() {
    Pending& pending = ring_[ring_head_];
    ring_head_ = (ring_head_ + 1) % kAhead;
    --ring_size_;
    const EntryValue entry = pending.value.Take();
    if (options_.replace_existing) dbs_[pending.db]->Delete(pending.key);
    if (!dbs_[pending.db]->AddNew(pending.key, entry, pending.deadline)) {
      delete entry.object;
      return Fail(pending.at, "key '" + Shown(pending.key) + "' appears twice in database " +
                                  std::to_string(pending.db));
    }
    ++stats_->keys_read;
    if (options_.key_access && (pending.access.idle_seconds || pending.access.frequency)) {
      options_.key_access(pending.db, pending.key, pending.access);
    }
    return true;
  }

  // Stores every decoded key; false at the first that cannot be.
  bool Flush() {
    while (ring_size_ > 0) {
      if (!StoreOldest()) return false;
    }
    return true;
  }

  // After a failure at a later record: the keys before it are stored first, so that a problem
  // among them (a key twice) is the one reported, as in file order.
  bool Flushed(bool failure) {
    const size_t offset = error_offset_;
    std::string what = std::move(error_what_);
    if (Flush()) {
      error_offset_ = offset;
      error_what_ = std::move(what);
    }
    return failure;
  }

  bool End() {
    if (stats_->version >= kFirstVersionWithChecksum) {
      const size_t crc_at = pos_;
      uint64_t stored = 0;
      if (!Fixed(&stored, 8, "the checksum")) return false;
      if (stored != 0 && options_.verify_checksum) {
        const uint64_t actual = Crc64(0, data_.substr(0, crc_at));
        if (actual != stored) {
          return Fail(crc_at, "checksum mismatch (the file is damaged)");
        }
        stats_->checksum_verified = true;
      }
    }
    if (pos_ != data_.size() && !options_.commands_may_follow) {
      return Fail(pos_, "bytes after the end of the RDB file");
    }
    stats_->bytes = pos_;
    if (options_.progress && !options_.progress(pos_, keys_seen_)) {
      return Fail(pos_, "loading interrupted by a shutdown");
    }
    return true;
  }

  const std::string& file_name_;
  std::string_view data_;
  const std::vector<Database*>& dbs_;
  const RdbLoadOptions& options_;
  RdbLoadStats* stats_;
  size_t pos_ = 0;
  size_t db_ = 0;
  uint64_t keys_seen_ = 0;
  std::optional<int64_t> deadline_;
  RdbKeyAccess access_;
  std::string key_scratch_;
  // Keys decoded and not stored yet (see Key).
  struct Pending {
    size_t at = 0;
    size_t db = 0;
    std::string key;
    RdbValue value;
    std::optional<int64_t> deadline;
    RdbKeyAccess access;
  };
  static constexpr size_t kAhead = 8;
  std::array<Pending, kAhead> ring_;
  size_t ring_head_ = 0;
  size_t ring_size_ = 0;
  size_t error_offset_ = 0;
  std::string error_what_;
};

}  // namespace

std::string RdbLoadStats::Aux(std::string_view name) const {
  for (const auto& [field, value] : aux) {
    if (field == name) return value;
  }
  return "";
}

bool LoadRdb(const std::string& file_name, std::string_view data, const std::vector<Database*>& dbs,
             const RdbLoadOptions& options, RdbLoadStats* stats, std::string* error) {
  *stats = RdbLoadStats();
  RdbFileReader reader(file_name, data, dbs, options, stats);
  return reader.Run(error);
}

bool LoadRdbFile(const std::string& path, const std::vector<Database*>& dbs,
                 const RdbLoadOptions& options, RdbLoadStats* stats, bool* missing,
                 std::string* error) {
  *stats = RdbLoadStats();
  MappedFile file;
  if (!file.Open(path, missing, error)) return false;
  return LoadRdb(path, file.data(), dbs, options, stats, error);
}

}  // namespace goblin
