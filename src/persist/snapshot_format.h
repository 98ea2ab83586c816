// The bytes of a Goblin snapshot (docs/FORMAT.md is the byte-by-byte reference; this header
// is the code's copy of it).
//
//   file    := magic section* end-section
//   magic   := "GOBLNSNP" (8 bytes)
//   section := [kind u8][body length u64 LE][body][check u32 LE]
//              check = low 32 bits of XXH3-64 over kind, length and body
//
//   kind 'H' header    [version u32][created unix ms u64][databases with keys: varint]
//                      [keys: varint][creator: varint length + text]   (always first)
//   kind 'R' replication [replication id: varint length + text][offset u64 LE]
//                      [stream db: varint]   (version 2 only, right after the header, when
//                      the server had a replication history to continue: Redis's repl-id,
//                      repl-offset and repl-stream-db RDB aux fields)
//   kind 'F' functions [libraries: varint] then per library [code: varint length + bytes]
//                      (FUNCTION LOAD's text; only when there are libraries, after the header)
//   kind 'D' database  [index: varint][keys: varint][keys with expiry: varint]
//                      the key sections that follow, up to the next 'D' or 'E', belong to it
//   kind 'K' keys      one or more key records back to back (small keys share a section of
//                      up to kBatchBytes; a key whose record is bigger gets a section alone)
//   kind 'E' end       [sections before it: varint][file check u64 LE]
//                      file check = XXH3-64 over the checks of every earlier section, in order
//                      (every byte is covered once by its section; the chain also catches a
//                      section lost, repeated or moved). Nothing may follow it.
//
//   key record := [tag u8][expire unix ms i64 LE, if tag bit 7][key: varint length + bytes]
//                 [value]
//     tag bits 0-2  ValueType (0 string, 2 set, 3 sorted set, 4 hash)
//     tag bit 3     string stored as a zigzag varint integer rather than bytes
//     tag bit 7     has an expiry
//   value:
//     string        varint length + bytes, or the zigzag varint (bit 3)
//     sorted set    [value length: varint][form u8: 0 small, 1 large][members: varint]
//                   [longest member: varint][runs: varint] then per run
//                   [entries: varint][bytes: varint][packed run bytes (zset_packed.h)]
//                   runs are the set's own packed runs (one per B+tree leaf), so loading
//                   is a copy per leaf plus the member index build
//     hash, set     [value length: varint][PackedHash::Dump / PackedSet::Dump bytes]
//
// Invariants a sound file keeps (the loader checks each one and names the offset otherwise):
//  1. Every section's check matches; the end section's chain check matches.
//  2. A database index appears once and is below the server's `databases`; its key count
//     and expiry count equal the records that follow it.
//  3. No key appears twice in a database; sorted-set runs are strictly increasing across the
//     whole set; collection counts equal the elements present; no collection is empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/varint.h"

namespace goblin::snapshot {

inline constexpr std::string_view kMagic = "GOBLNSNP";
// Version 2 adds the 'R' section and nothing else. A file without one is still written as
// version 1, so that builds reading only version 1 read every file that does not need more.
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kVersionWithReplication = 2;

enum class SectionKind : uint8_t {
  kHeader = 'H',
  kReplication = 'R',
  kFunctions = 'F',
  kDatabase = 'D',
  kKeys = 'K',
  kEnd = 'E',
};

// kind (1) + body length (8) before the body, check (4) after it.
inline constexpr size_t kSectionHead = 9;
inline constexpr size_t kSectionTail = 4;
inline constexpr size_t kSectionOverhead = kSectionHead + kSectionTail;

// Small keys are batched into sections of about this many bytes.
inline constexpr size_t kBatchBytes = 64 * 1024;

// A key record's tag byte: the type's registry tag (core/value_types.h) in the low bits. The
// value field of a collection is the type's own (Collection::AppendSnapshotValue).
inline constexpr uint8_t kTagTypeMask = 0x07;
inline constexpr uint8_t kTagIntegerString = 0x08;
inline constexpr uint8_t kTagHasExpire = 0x80;

using goblin::UnZigZag;
using goblin::ZigZag;

const char* SectionKindName(uint8_t kind);

}  // namespace goblin::snapshot
