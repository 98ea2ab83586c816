// Shared by the RDB unit tests: byte builders (RDB lengths and strings, fixed-width integers, a
// whole file written by Goblin's RDB writer, read back as bytes) and the check that a decoded
// value's structure is sound.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "core/hash_object.h"
#include "core/key_entry.h"
#include "core/set_object.h"
#include "core/stream_object.h"
#include "core/zset_object.h"
#include "keyspace/database.h"
#include "persist/rdb_string.h"
#include "persist/rdb_writer.h"

namespace goblin::rdb_test {

inline std::string Str(std::string_view s) {
  std::string out;
  RdbAppendString(&out, s);
  return out;
}

inline std::string Len(uint64_t n) {
  std::string out;
  RdbAppendLength(&out, n);
  return out;
}

// One byte: an opcode or a value type.
inline std::string Byte(uint8_t b) { return std::string(1, static_cast<char>(b)); }

inline std::string Le(uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

inline std::string Be(uint64_t v, int bytes) {
  std::string out;
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>(v >> (8 * i)));
  return out;
}

// What WriteRdbToFd writes for dbs and one function library, through a temporary file.
inline std::string WrittenRdb(const std::vector<const Database*>& dbs,
                              const RdbWriteOptions& options, SnapshotSaveStats* stats) {
  char path[] = "/tmp/rdb_test_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::string error;
  EXPECT_TRUE(WriteRdbToFd(dbs, {"#!lua name=lib\nredis.register_function('f', function() end)"},
                           fd, 1700000000123, options, stats, &error))
      << error;
  close(fd);
  std::string bytes;
  FILE* file = std::fopen(path, "rb");
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;) bytes.append(buffer, n);
  std::fclose(file);
  unlink(path);
  return bytes;
}

// Every invariant of entry's structure holds (the structures' own checks).
inline void ExpectSound(const KeyEntry& entry) {
  switch (entry.type()) {
    case ValueType::kSet:
      EXPECT_EQ(static_cast<const SetObject*>(entry.object())->set().Validate(), "");
      break;
    case ValueType::kHash:
      EXPECT_EQ(static_cast<const HashObject*>(entry.object())->hash().Validate(), "");
      break;
    case ValueType::kZSet:
      EXPECT_EQ(static_cast<const ZsetObject*>(entry.object())->set().Validate(), "");
      break;
    case ValueType::kStream: {
      const auto* object = static_cast<const StreamObject*>(entry.object());
      EXPECT_TRUE(object->stream().CheckInvariants());
      if (object->groups() != nullptr) {
        EXPECT_TRUE(object->groups()->CheckInvariants());
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace goblin::rdb_test
