#include "persist/snapshot_writer.h"

#include <xxhash.h>

#include <string_view>

#include "core/bytes.h"
#include "core/key_entry.h"
#include "core/value_types.h"
#include "core/version.h"
#include "keyspace/database.h"
#include "persist/file_util.h"
#include "persist/snapshot_format.h"

namespace goblin {

namespace {

using snapshot::SectionKind;

// Buffered sequential output to a file descriptor that also keeps the chain of section checks.
class SectionSink {
 public:
  explicit SectionSink(int fd) : fd_(fd) { buffer_.reserve(kBufferBytes); }

  bool Write(std::string_view bytes) {
    if (buffer_.size() + bytes.size() > kBufferBytes && !Drain()) return false;
    if (bytes.size() >= kBufferBytes) return Put(bytes.data(), bytes.size());
    buffer_.append(bytes);
    return true;
  }

  // Writes one section: head, body, check.
  bool Section(SectionKind kind, std::string_view body) {
    char head[snapshot::kSectionHead];
    head[0] = static_cast<char>(kind);
    const uint64_t length = body.size();
    for (int i = 0; i < 8; ++i) head[1 + i] = static_cast<char>(length >> (8 * i));
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    XXH3_64bits_update(state, head, sizeof(head));
    XXH3_64bits_update(state, body.data(), body.size());
    const uint32_t check = static_cast<uint32_t>(XXH3_64bits_digest(state));
    XXH3_freeState(state);
    char tail[snapshot::kSectionTail];
    for (int i = 0; i < 4; ++i) tail[i] = static_cast<char>(check >> (8 * i));
    checks_.append(tail, sizeof(tail));
    ++sections_;
    return Write(std::string_view(head, sizeof(head))) && Write(body) &&
           Write(std::string_view(tail, sizeof(tail)));
  }

  bool Finish() { return Drain(); }

  uint64_t written() const { return written_ + buffer_.size(); }
  uint64_t sections() const { return sections_; }
  uint64_t ChainCheck() const { return XXH3_64bits(checks_.data(), checks_.size()); }
  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kBufferBytes = 1 << 20;

  bool Drain() {
    if (buffer_.empty()) return true;
    const bool ok = Put(buffer_.data(), buffer_.size());
    buffer_.clear();
    return ok;
  }

  bool Put(const char* data, size_t size) {
    if (!WriteAll(fd_, data, size, &error_)) return false;
    written_ += size;
    return true;
  }

  int fd_;
  std::string buffer_;
  std::string checks_;  // the 4-byte check of every section written, in order
  uint64_t written_ = 0;
  uint64_t sections_ = 0;
  std::string error_;
};

void AppendKeyRecord(std::string* out, const KeyEntry* entry, std::string* scratch) {
  uint8_t tag = InfoOf(entry->type()).snapshot_tag;
  const bool integer =
      entry->type() == ValueType::kString && entry->string_encoding() == StringEncoding::kInt;
  if (integer) tag |= snapshot::kTagIntegerString;
  if (entry->has_expire()) tag |= snapshot::kTagHasExpire;
  AppendU8(out, tag);
  if (entry->has_expire()) AppendFixed(out, static_cast<uint64_t>(entry->expire_ms()), 8);
  AppendLengthPrefixed(out, entry->key());
  if (entry->type() != ValueType::kString) {
    entry->object()->AppendSnapshotValue(out, scratch);
  } else if (integer) {
    AppendVar(out, snapshot::ZigZag(entry->int_value()));
  } else {
    char digits[32];
    AppendLengthPrefixed(out, entry->string_value(digits));
  }
}

}  // namespace

bool WriteSnapshotToFd(const std::vector<const Database*>& dbs,
                       const std::vector<std::string_view>& libraries, int fd, int64_t now_ms,
                       SnapshotSaveStats* stats, std::string* error,
                       const SavedReplication& replication, int64_t key_save_delay_us) {
  SectionSink sink(fd);
  auto fail = [&] {
    *error = sink.error();
    return false;
  };
  if (!sink.Write(snapshot::kMagic)) return fail();
  uint64_t total_keys = 0;
  uint64_t databases = 0;
  for (const Database* db : dbs) {
    total_keys += db->size();
    databases += db->size() > 0 ? 1 : 0;
  }
  std::string body;
  AppendFixed(&body, replication.present() ? snapshot::kVersionWithReplication : snapshot::kVersion,
              4);
  AppendFixed(&body, static_cast<uint64_t>(now_ms), 8);
  AppendVar(&body, databases);
  AppendVar(&body, total_keys);
  AppendLengthPrefixed(&body, std::string("goblin-") + kGoblinVersion);
  if (!sink.Section(SectionKind::kHeader, body)) return fail();
  if (replication.present()) {
    body.clear();
    AppendLengthPrefixed(&body, replication.replid);
    AppendFixed(&body, replication.offset, 8);
    AppendVar(&body, static_cast<uint64_t>(replication.stream_db));
    if (!sink.Section(SectionKind::kReplication, body)) return fail();
  }
  if (!libraries.empty()) {
    body.clear();
    AppendVar(&body, libraries.size());
    for (std::string_view code : libraries) AppendLengthPrefixed(&body, code);
    if (!sink.Section(SectionKind::kFunctions, body)) return fail();
  }

  std::string scratch;
  for (size_t index = 0; index < dbs.size(); ++index) {
    const Database& db = *dbs[index];
    if (db.size() == 0) continue;
    body.clear();
    AppendVar(&body, index);
    AppendVar(&body, db.size());
    AppendVar(&body, db.expires());
    if (!sink.Section(SectionKind::kDatabase, body)) return fail();
    body.clear();
    bool ok = true;
    std::string record;
    db.ForEach([&](const KeyEntry* entry) {
      if (!ok) return;
      SleepPerKey(key_save_delay_us);
      record.clear();
      AppendKeyRecord(&record, entry, &scratch);
      if (!body.empty() && body.size() + record.size() > snapshot::kBatchBytes) {
        ok = sink.Section(SectionKind::kKeys, body);
        body.clear();
      }
      if (record.size() > snapshot::kBatchBytes) {
        ok = ok && sink.Section(SectionKind::kKeys, record);
        record = std::string();  // a big collection's copy is not kept around
      } else {
        body.append(record);
      }
    });
    if (!ok) return fail();
    if (!body.empty() && !sink.Section(SectionKind::kKeys, body)) return fail();
  }
  body.clear();
  AppendVar(&body, sink.sections());
  AppendFixed(&body, sink.ChainCheck(), 8);
  if (!sink.Section(SectionKind::kEnd, body) || !sink.Finish()) return fail();
  stats->keys = total_keys;
  stats->bytes = sink.written();
  return true;
}

bool WriteSnapshotFile(const std::vector<const Database*>& dbs,
                       const std::vector<std::string_view>& libraries, const std::string& path,
                       int64_t now_ms, SnapshotSaveStats* stats, std::string* error,
                       const SavedReplication& replication, int64_t key_save_delay_us) {
  return ReplaceFile(
      path,
      [&](int fd, std::string* write_error) {
        return WriteSnapshotToFd(dbs, libraries, fd, now_ms, stats, write_error, replication,
                                 key_save_delay_us);
      },
      error);
}

}  // namespace goblin
