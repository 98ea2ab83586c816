// Pieces shared by the hash command files: hash.cc (the fields and values) and
// hash_field_expiry.cc (Redis 7.4's field deadlines: HEXPIRE, HTTL, HPERSIST and their kin).
//
// A field whose deadline has passed is gone for every command, whether or not it was deleted
// yet (lazy expiry, as Redis 7.4): lookups of one field delete it (ExpireFieldIfDue), walks
// skip it (FieldAlive), and HLEN counts it until it is deleted, as Redis's does.
#pragma once

#include <cstdint>
#include <string_view>

#include "commands/command_util.h"
#include "core/hash_object.h"

namespace goblin {

// hash-max-listpack-entries / hash-max-listpack-value as they are now.
HashLimits HashLimitsOf(const CommandContext& ctx);

// The hash at key. Returns false after replying WRONGTYPE; *hash is nullptr when the key is
// missing. Reads count keyspace hits and misses.
bool LookupHash(CommandContext& ctx, std::string_view key, PackedHash** hash, bool for_read);

// The hash at key for a write, stored empty first when the key is missing (the caller adds a
// field before replying, or deletes the key, so no empty hash outlives the command). Returns
// nullptr after replying WRONGTYPE.
PackedHash* HashForWrite(CommandContext& ctx, std::string_view key);

// Whether a field with this deadline (0: none) is still there at now_ms. A deadline is passed
// once the clock is beyond it, as Redis 7.4 reads fields.
inline bool FieldAlive(int64_t deadline_ms, int64_t now_ms) {
  return deadline_ms == 0 || deadline_ms >= now_ms;
}

// Lazy expiry of one field: when field's deadline has passed, deletes it (hexpired event, an
// HDEL effect, the key deleted with its last field: *hash becomes nullptr) and returns true.
// The HDEL is recorded with ctx.Propagate, so a write command that goes on to change the hash
// records itself too (effects.h: a recorded effect replaces the command's own).
bool ExpireFieldIfDue(CommandContext& ctx, std::string_view key, PackedHash** hash,
                      std::string_view field);

}  // namespace goblin
