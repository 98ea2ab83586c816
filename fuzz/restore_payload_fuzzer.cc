// RESTORE's payload (commands/dump_restore.cc): a value in RDB form, its RDB version and its
// CRC-64, from any client. The decoding is persist/rdb_reader.h's RdbReadValue, read the way
// RESTORE reads it: from the whole payload, trailer included.
//
// Input: [mode][payload]. With mode bit 0 the target appends the trailer DUMP writes (version
// and CRC-64 of the bytes before it), so the mutations reach the decoders instead of stopping
// at the CRC; without it the payload is taken as sent. A value that restores must DUMP again,
// and that payload must restore to a value of the same type whose DUMP is as long.
#include <string>

#include "core/key_entry.h"
#include "fuzz_support.h"
#include "persist/rdb_reader.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"

namespace {

// RESTORE's steps: the trailer, then the value. Returns the entry, or nullptr when RESTORE
// would refuse the payload.
goblin::KeyEntry* Restore(std::string_view payload) {
  std::string_view body;
  if (!goblin::RdbCheckPayload(payload, &body)) return nullptr;
  FUZZ_CHECK(!payload.empty() && body.size() < payload.size());
  goblin::RdbValue value;
  goblin::RdbReadError error;
  size_t pos = 1;
  if (!goblin::RdbReadValue(static_cast<uint8_t>(payload[0]), payload, &pos,
                            goblin::EncodingLimits{}, &value, &error)) {
    FUZZ_CHECK(!error.what.empty() || error.empty);
    return nullptr;
  }
  FUZZ_CHECK(pos <= payload.size());
  return goblin::KeyEntry::Make("key", value.Take());
}

std::string Dump(const goblin::KeyEntry& entry) {
  goblin::RdbOutput out;
  goblin::RdbAppendValue(&out, entry, goblin::RdbWriteOptions{});
  goblin::RdbAppendPayloadTrailer(&out.bytes);
  return std::move(out.bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  goblin::fuzz::InputReader input(data, size);
  const uint8_t mode = input.Byte();
  std::string payload(input.Rest());
  if (mode & 1) goblin::RdbAppendPayloadTrailer(&payload);

  goblin::KeyEntry* first = Restore(payload);
  if (first == nullptr) return 0;
  const std::string dumped = Dump(*first);
  goblin::KeyEntry::Destroy(first);
  goblin::KeyEntry* second = Restore(dumped);
  FUZZ_CHECK(second != nullptr);
  const std::string dumped_again = Dump(*second);
  goblin::KeyEntry::Destroy(second);
  // A set or hash in a hash table comes out in the table's order, which the order the
  // elements went in changes (as Redis's dict order does), so the two payloads may differ in
  // order. Elements are written one by one, so the same elements take the same bytes.
  FUZZ_CHECK(dumped_again.size() == dumped.size() && dumped_again[0] == dumped[0]);
  return 0;
}
