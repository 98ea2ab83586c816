// Pieces shared by the hash command files: hash.cc (the fields and values) and
// hash_field_expiry.cc (Redis 7.4's field deadlines: HEXPIRE, HTTL, HPERSIST and their kin).
//
// A field whose deadline has passed is gone for every command, whether or not it was deleted
// yet (lazy expiry, as Redis 7.4): lookups of one field delete it (ExpireFieldIfDue), walks
// skip it (FieldAlive), and HLEN counts it until it is deleted, as Redis's does. A replica
// and a load follow the keyspace's rules for keys (LapsedFieldRule).
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

// What the running command makes of a field whose deadline has passed, by the keyspace's expiry
// rules (Database::ExpiryRules), as for keys: live while a load replays the log and for a
// replica's master (whose HDEL will come), hidden but kept for a replica's other clients and
// while writes are paused, else gone (and deleted where it is looked up).
enum class LapsedField { kLive, kHidden, kGone };
LapsedField LapsedFieldRule(const CommandContext& ctx);

// Whether a field with this deadline (0: none) is there for the running command. A deadline is
// passed once the clock is beyond it, as Redis 7.4 reads fields.
inline bool FieldAlive(const CommandContext& ctx, int64_t deadline_ms) {
  return deadline_ms == 0 || deadline_ms >= ctx.now_ms || LapsedFieldRule(ctx) == LapsedField::kLive;
}

// Lazy expiry of one field: true when field's deadline has passed (the caller treats it as
// absent). Under kGone it is deleted too: an hexpired event, an HDEL effect, the key deleted
// with its last field (*hash becomes nullptr). The HDEL is recorded with ctx.Propagate, so a
// write command that goes on to change the hash records itself too (effects.h: a recorded
// effect replaces the command's own).
bool ExpireFieldIfDue(CommandContext& ctx, std::string_view key, PackedHash** hash,
                      std::string_view field);

}  // namespace goblin
