// Hash commands: HSET HSETNX HMSET HGET HMGET HGETDEL HDEL HLEN HSTRLEN HEXISTS HKEYS HVALS
// HGETALL HINCRBY HINCRBYFLOAT HRANDFIELD HSCAN. Field deadlines and the lazy expiry the reads
// here apply are described in hash_family.h; the deadline commands are hash_field_expiry.cc.
//
// Every command works on the PackedHash inside the key's HashObject (core/hash_object.h). The
// conversion limits are read from the configuration at every write, so CONFIG SET applies to
// the next command, and a write that brings several fields converts first, as Redis's
// hashTypeTryConversion does. A command that removes the last field deletes the key.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "commands/hash_family.h"
#include "core/glob.h"
#include "core/hash_object.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {

HashLimits HashLimitsOf(const CommandContext& ctx) { return HashLimitsOf(ctx.server.config); }

bool LookupHash(CommandContext& ctx, std::string_view key, PackedHash** hash, bool for_read) {
  KeyEntry* entry;
  *hash = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kHash, &entry, for_read)) return false;
  if (entry != nullptr) *hash = &static_cast<HashObject*>(entry->object())->hash();
  return true;
}

namespace {

// Deletes fields found expired (an HDEL effect each, one hexpired event), and the key with its
// last field (*hash becomes nullptr).
template <typename Fields>
void DeleteExpiredFields(CommandContext& ctx, std::string_view key, PackedHash** hash,
                         const Fields& fields) {
  for (std::string_view field : fields) {
    (*hash)->Delete(field);
    ctx.Propagate({"HDEL", key, field});
  }
  MarkDirty(ctx, std::size(fields));
  Notify(ctx, kNotifyHash, "hexpired", key);
  if ((*hash)->empty()) {
    ctx.db().Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
    *hash = nullptr;
  } else {
    ctx.db().Touch(key);
  }
}

}  // namespace

PackedHash* HashForWrite(CommandContext& ctx, std::string_view key) {
  PackedHash* hash;
  if (!LookupHash(ctx, key, &hash, false)) return nullptr;
  if (hash == nullptr) {
    auto* object = new HashObject();
    ctx.db().Put(key, EntryValue::Object(object), std::nullopt);
    hash = &object->hash();
  }
  return hash;
}

LapsedField LapsedFieldRule(const CommandContext& ctx) {
  const Database::ExpiryRules* rules = ctx.server.db(ctx.client.db).expiry_rules();
  if (rules == nullptr) return LapsedField::kGone;
  if (rules->keep || (rules->loading != nullptr && *rules->loading)) return LapsedField::kLive;
  return rules->hide ? LapsedField::kHidden : LapsedField::kGone;
}

bool ExpireFieldIfDue(CommandContext& ctx, std::string_view key, PackedHash** hash,
                      std::string_view field) {
  if (*hash == nullptr || (*hash)->fields_with_deadline() == 0) return false;
  const std::optional<int64_t> deadline = (*hash)->Deadline(field);
  if (!deadline || FieldAlive(ctx, *deadline)) return false;
  if (LapsedFieldRule(ctx) == LapsedField::kGone) {
    DeleteExpiredFields(ctx, key, hash, std::array<std::string_view, 1>{field});
  }
  return true;
}

namespace {

// Lazy expiry of every field whose deadline has passed (HRANDFIELD draws from live fields
// only, as Redis 7.4's does).
void ExpireDueFields(CommandContext& ctx, std::string_view key, PackedHash** hash) {
  if (*hash == nullptr || (*hash)->fields_with_deadline() == 0 ||
      LapsedFieldRule(ctx) != LapsedField::kGone) {
    return;
  }
  std::vector<std::string> due;
  (*hash)->ForEachWithDeadline([&](std::string_view field, std::string_view, int64_t deadline) {
    if (!FieldAlive(ctx, deadline)) due.emplace_back(field);
  });
  if (!due.empty()) DeleteExpiredFields(ctx, key, hash, due);
}

// Records an in-place change of the hash at key and announces it as event.
void Changed(CommandContext& ctx, std::string_view key, std::string_view event,
             uint64_t changes = 1) {
  ctx.db().Touch(key);
  MarkDirty(ctx, changes);
  Notify(ctx, kNotifyHash, event, key);
}

// --- Writes -----------------------------------------------------------------------------------

// HSET and HMSET: field/value pairs from argv[2]; returns the number of fields added, or -1
// after replying an error.
int64_t SetPairs(CommandContext& ctx) {
  if (ctx.argc() % 2 != 0) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return -1;
  }
  PackedHash* hash = HashForWrite(ctx, ctx.arg(1));
  if (hash == nullptr) return -1;
  const HashLimits limits = HashLimitsOf(ctx);
  size_t longest = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) longest = std::max(longest, ctx.arg(i).size());
  hash->PrepareForInsert((ctx.argc() - 2) / 2, longest, limits);
  int64_t added = 0;
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    added += hash->Set(ctx.arg(i), ctx.arg(i + 1), limits) ? 1 : 0;
  }
  Changed(ctx, ctx.arg(1), "hset", (ctx.argc() - 2) / 2);
  return added;
}

void HsetCommand(CommandContext& ctx) {
  const int64_t added = SetPairs(ctx);
  if (added >= 0) ctx.reply.Integer(added);
}

void HmsetCommand(CommandContext& ctx) {
  if (SetPairs(ctx) >= 0) ctx.reply.Ok();
}

void HsetnxCommand(CommandContext& ctx) {
  PackedHash* expiring;
  if (!LookupHash(ctx, ctx.arg(1), &expiring, false)) return;
  const bool expired = ExpireFieldIfDue(ctx, ctx.arg(1), &expiring, ctx.arg(2));
  PackedHash* hash = HashForWrite(ctx, ctx.arg(1));
  if (hash == nullptr) return;
  if (hash->Contains(ctx.arg(2))) {
    ctx.reply.Integer(0);
    return;
  }
  if (expired) ctx.Propagate(std::span<const std::string_view>(ctx.argv));
  const HashLimits limits = HashLimitsOf(ctx);
  hash->PrepareForInsert(1, std::max(ctx.arg(2).size(), ctx.arg(3).size()), limits);
  hash->Set(ctx.arg(2), ctx.arg(3), limits);
  Changed(ctx, ctx.arg(1), "hset");
  ctx.reply.Integer(1);
}

void HdelCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, false)) return;
  int64_t deleted = 0;
  if (hash != nullptr) {
    for (size_t i = 2; i < ctx.argc() && !hash->empty(); ++i) {
      deleted += hash->Delete(ctx.arg(i)) ? 1 : 0;
    }
    if (deleted > 0) Notify(ctx, kNotifyHash, "hdel", ctx.arg(1));
    if (hash->empty()) {
      ctx.db().Delete(ctx.arg(1));
      Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
    } else if (deleted > 0) {
      ctx.db().Touch(ctx.arg(1));
    }
    if (deleted > 0) MarkDirty(ctx, static_cast<uint64_t>(deleted));
  }
  ctx.reply.Integer(deleted);
}

// HGETDEL key FIELDS numfields field ...: each field's value (nil when absent), deleting those
// found; the key goes with its last field. Logged as HDEL of the fields.
void HgetdelCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, false)) return;
  if (!EqualsIgnoreCase(ctx.arg(2), "fields")) {
    ctx.reply.Error("ERR Mandatory argument FIELDS is missing or not at the right position");
    return;
  }
  int64_t count;
  if (!ParseInt64(ctx.arg(3), &count) || count < 1) {
    ctx.reply.Error("ERR Number of fields must be a positive integer");
    return;
  }
  if (static_cast<uint64_t>(count) != ctx.argc() - 4) {
    ctx.reply.Error("ERR The `numfields` parameter must match the number of arguments");
    return;
  }
  ctx.reply.Array(static_cast<size_t>(count));
  uint64_t deleted = 0;
  char scratch[kInt64TextMax];
  for (size_t i = 4; i < ctx.argc(); ++i) {
    const bool lapsed = ExpireFieldIfDue(ctx, ctx.arg(1), &hash, ctx.arg(i));
    const std::optional<std::string_view> value =
        hash != nullptr && !lapsed ? hash->Get(ctx.arg(i), scratch) : std::nullopt;
    if (!value) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(*value);
    hash->Delete(ctx.arg(i));
    ++deleted;
  }
  if (deleted == 0) return;
  MarkDirty(ctx, deleted);
  Notify(ctx, kNotifyHash, "hdel", ctx.arg(1));
  if (hash->empty()) {
    ctx.db().Delete(ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  } else {
    ctx.db().Touch(ctx.arg(1));
  }
  if (ctx.propagating()) {
    std::vector<std::string_view> hdel = {"HDEL", ctx.arg(1)};
    hdel.insert(hdel.end(), ctx.argv.begin() + 4, ctx.argv.end());
    ctx.Propagate(hdel);
  }
}

void HincrbyCommand(CommandContext& ctx) {
  int64_t increment;
  if (!ParseIntegerArg(ctx, ctx.arg(3), &increment)) return;
  PackedHash* expiring;
  if (!LookupHash(ctx, ctx.arg(1), &expiring, false)) return;
  const bool expired = ExpireFieldIfDue(ctx, ctx.arg(1), &expiring, ctx.arg(2));
  PackedHash* hash = HashForWrite(ctx, ctx.arg(1));
  if (hash == nullptr) return;
  int64_t value = 0;
  char scratch[kInt64TextMax];
  if (std::optional<std::string_view> old = hash->Get(ctx.arg(2), scratch)) {
    if (!ParseInt64(*old, &value)) {
      ctx.reply.Error(errors::kHashValueNotInteger);
      return;
    }
  }
  int64_t result;
  if (__builtin_add_overflow(value, increment, &result)) {
    ctx.reply.Error(errors::kOverflow);
    return;
  }
  const size_t length = FormatInt64(result, scratch);
  hash->Set(ctx.arg(2), std::string_view(scratch, length), HashLimitsOf(ctx),
            /*keep_deadline=*/true);
  Changed(ctx, ctx.arg(1), "hincrby");
  if (expired) ctx.Propagate(std::span<const std::string_view>(ctx.argv));
  ctx.reply.Integer(result);
}

void HincrbyfloatCommand(CommandContext& ctx) {
  long double increment;
  if (!ParseLongDouble(ctx.arg(3), &increment)) {
    ctx.reply.Error(errors::kNotFloat);
    return;
  }
  if (std::isnan(increment) || std::isinf(increment)) {
    ctx.reply.Error(errors::kNanOrInfinity);
    return;
  }
  PackedHash* expiring;
  if (!LookupHash(ctx, ctx.arg(1), &expiring, false)) return;
  ExpireFieldIfDue(ctx, ctx.arg(1), &expiring, ctx.arg(2));
  PackedHash* hash = HashForWrite(ctx, ctx.arg(1));
  if (hash == nullptr) return;
  long double value = 0;
  char scratch[kInt64TextMax];
  if (std::optional<std::string_view> old = hash->Get(ctx.arg(2), scratch)) {
    if (!ParseLongDouble(*old, &value)) {
      ctx.reply.Error(errors::kHashValueNotFloat);
      return;
    }
  }
  value += increment;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply.Error(errors::kNotFloatOrInf);
    return;
  }
  const std::string text = FormatLongDoubleHuman(value);
  // The deadline stays here; the HSET logged for it clears it on replay, as Redis 7.4 logs it.
  hash->Set(ctx.arg(2), text, HashLimitsOf(ctx), /*keep_deadline=*/true);
  Changed(ctx, ctx.arg(1), "hincrbyfloat");
  // Logged as the value it produced: float arithmetic need not replay to the same digits. The
  // field's deadline follows as HPEXPIREAT, since the HSET clears it on replay (Redis 7.4 logs
  // the HSET alone and so loses it; Redis 8 logs HSETEX KEEPTTL, which 7.x cannot read).
  ctx.Propagate({"HSET", ctx.arg(1), ctx.arg(2), text});
  if (const int64_t deadline = hash->Deadline(ctx.arg(2)).value_or(0); deadline != 0) {
    const std::string at = std::to_string(deadline);
    ctx.Propagate({"HPEXPIREAT", ctx.arg(1), at, "FIELDS", "1", ctx.arg(2)});
  }
  ctx.reply.Bulk(text);
}

// --- Reads ------------------------------------------------------------------------------------

void HgetCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  const bool lapsed = ExpireFieldIfDue(ctx, ctx.arg(1), &hash, ctx.arg(2));
  char scratch[kInt64TextMax];
  std::optional<std::string_view> value;
  if (hash != nullptr && !lapsed) value = hash->Get(ctx.arg(2), scratch);
  if (value) {
    ctx.reply.Bulk(*value);
  } else {
    ctx.reply.Null();
  }
}

void HmgetCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  ctx.reply.Array(ctx.argc() - 2);
  char scratch[kInt64TextMax];
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const bool lapsed = ExpireFieldIfDue(ctx, ctx.arg(1), &hash, ctx.arg(i));
    std::optional<std::string_view> value;
    if (hash != nullptr && !lapsed) value = hash->Get(ctx.arg(i), scratch);
    if (value) {
      ctx.reply.Bulk(*value);
    } else {
      ctx.reply.Null();
    }
  }
}

void HlenCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  ctx.reply.Integer(hash != nullptr ? static_cast<int64_t>(hash->size()) : 0);
}

void HstrlenCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  const bool lapsed = ExpireFieldIfDue(ctx, ctx.arg(1), &hash, ctx.arg(2));
  std::optional<size_t> length;
  if (hash != nullptr && !lapsed) length = hash->ValueLength(ctx.arg(2));
  ctx.reply.Integer(static_cast<int64_t>(length.value_or(0)));
}

void HexistsCommand(CommandContext& ctx) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  const bool lapsed = ExpireFieldIfDue(ctx, ctx.arg(1), &hash, ctx.arg(2));
  ctx.reply.Integer(hash != nullptr && !lapsed && hash->Contains(ctx.arg(2)) ? 1 : 0);
}

// HKEYS, HVALS and HGETALL: a map of every pair for HGETALL (a flat array in RESP2), an array
// of fields or of values otherwise.
void ReplyAll(CommandContext& ctx, bool fields, bool values) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  // Fields whose deadline has passed are left out, not deleted, as Redis 7.4 does.
  size_t size = hash != nullptr ? hash->size() : 0;
  const bool expiring = hash != nullptr && hash->fields_with_deadline() > 0;
  if (expiring) {
    hash->ForEachWithDeadline([&](std::string_view, std::string_view, int64_t deadline) {
      if (!FieldAlive(ctx, deadline)) --size;
    });
  }
  if (fields && values) {
    ctx.reply.Map(size);
  } else {
    ctx.reply.Array(size);
  }
  if (hash == nullptr) return;
  hash->ForEachWithDeadline([&](std::string_view field, std::string_view value, int64_t deadline) {
    if (expiring && !FieldAlive(ctx, deadline)) return;
    if (fields) ctx.reply.Bulk(field);
    if (values) ctx.reply.Bulk(value);
  });
}

void HkeysCommand(CommandContext& ctx) { ReplyAll(ctx, true, false); }
void HvalsCommand(CommandContext& ctx) { ReplyAll(ctx, false, true); }
void HgetallCommand(CommandContext& ctx) { ReplyAll(ctx, true, true); }

// --- HRANDFIELD -------------------------------------------------------------------------------

void HrandfieldWithCount(CommandContext& ctx, int64_t requested, bool with_values) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  ExpireDueFields(ctx, ctx.arg(1), &hash);
  if (hash == nullptr || requested == 0) {
    ctx.reply.Array(0);
    return;
  }
  ReplyBuilder& reply = ctx.reply;
  const bool unique = requested > 0;
  const uint64_t count =
      unique ? static_cast<uint64_t>(requested) : static_cast<uint64_t>(-requested);
  const size_t replied = unique ? std::min<uint64_t>(count, hash->size()) : count;
  reply.Array(with_values && !reply.resp3() ? replied * 2 : replied);
  auto emit = [&](std::string_view field, std::string_view value) {
    if (with_values && reply.resp3()) reply.Array(2);
    reply.Bulk(field);
    if (with_values) reply.Bulk(value);
  };
  uint64_t random_state = ctx.server.Random64();
  if (unique) {
    hash->RandomDistinct(replied, &random_state, emit);
    return;
  }
  // In slices: the draws held at once stay few, and a reply past the client's limit stops
  // being drawn (reply_builder.h).
  for (uint64_t left = replied; left > 0 && !reply.over_limit();) {
    const size_t slice = std::min<uint64_t>(left, kRandomDrawSlice);
    hash->RandomWithRepetition(slice, &random_state, emit);
    left -= slice;
  }
}

void HrandfieldCommand(CommandContext& ctx) {
  if (ctx.argc() >= 3) {
    int64_t count;
    bool with_values;
    if (!ParseRandomCountArgs(ctx, "withvalues", &count, &with_values)) return;
    HrandfieldWithCount(ctx, count, with_values);
    return;
  }
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  ExpireDueFields(ctx, ctx.arg(1), &hash);
  if (hash == nullptr) {
    ctx.reply.Null();
    return;
  }
  uint64_t random_state = ctx.server.Random64();
  hash->RandomDistinct(1, &random_state,
                       [&](std::string_view field, std::string_view) { ctx.reply.Bulk(field); });
}

// --- HSCAN ------------------------------------------------------------------------------------

void HscanCommand(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.arg(2), &cursor)) return;
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, true)) return;
  if (hash == nullptr) {
    ctx.reply.Raw("*2\r\n$1\r\n0\r\n*0\r\n");
    return;
  }
  ScanOptions options;
  if (!ParseScanOptions(ctx, 3, kScanNoValues, &options)) return;
  std::vector<std::string> found;
  const bool expiring = hash->fields_with_deadline() > 0;
  const uint64_t next =
      hash->Scan(cursor, static_cast<size_t>(options.count),
                 [&](std::string_view field, std::string_view value) {
                   if (!options.Matches(field)) return;
                   // A field whose deadline has passed is left out, not deleted (as HGETALL).
                   if (expiring && !FieldAlive(ctx, hash->Deadline(field).value_or(0))) return;
                   found.emplace_back(field);
                   if (!options.no_values) found.emplace_back(value);
                 });
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(next));
  ctx.reply.Array(found.size());
  for (const std::string& item : found) ctx.reply.Bulk(item);
}

}  // namespace

void RegisterHashCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kWriteFast = kWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "hash", kAclHash};
  add("hset", -4, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, HsetCommand,
      "Creates or modifies the value of a field in a hash.", "2.0.0",
      "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command "
      "is called with multiple field/value pairs.",
      "key field value [field value ...]");
  add("hsetnx", 4, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, HsetnxCommand,
      "Sets the value of a field in a hash only when the field doesn't exist.", "2.0.0", "O(1)",
      "key field value");
  add("hmset", -4, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, HmsetCommand,
      "Sets the values of multiple fields.", "2.0.0",
      "O(N) where N is the number of fields being set.", "key field value [field value ...]");
  add("hget", 3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, HgetCommand,
      "Returns the value of a field in a hash.", "2.0.0", "O(1)", "key field");
  add("hmget", -3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, HmgetCommand,
      "Returns the values of all fields in a hash.", "2.0.0",
      "O(N) where N is the number of fields being requested.", "key field [field ...]");
  Command* hgetdel = add(
      "hgetdel", -5, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)},
      HgetdelCommand, "Returns the value of a field and deletes it from the hash.", "8.0.0",
      "O(N) where N is the number of specified fields", "key FIELDS numfields field [field ...]");
  hgetdel->arguments = {
      docs::Key("key", 0),
      docs::Block("fields", {docs::Integer("numfields"), docs::Multiple(docs::String("field"))},
                  "FIELDS")};
  add("hdel", -3, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, HdelCommand,
      "Deletes one or more fields and their values from a hash. Deletes the hash if no fields "
      "remain.",
      "2.0.0", "O(N) where N is the number of fields to be removed.", "key field [field ...]");
  add("hlen", 2, kReadFast, {KeyAt(1, kKeyRO)}, HlenCommand,
      "Returns the number of fields in a hash.", "2.0.0", "O(1)", "key");
  add("hstrlen", 3, kReadFast, {KeyAt(1, kKeyRO)}, HstrlenCommand,
      "Returns the length of the value of a field.", "3.2.0", "O(1)", "key field");
  add("hexists", 3, kReadFast, {KeyAt(1, kKeyRO)}, HexistsCommand,
      "Determines whether a field exists in a hash.", "2.0.0", "O(1)", "key field");
  add("hkeys", 2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, HkeysCommand,
      "Returns all fields in a hash.", "2.0.0", "O(N) where N is the size of the hash.", "key",
      {"nondeterministic_output_order"});
  add("hvals", 2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, HvalsCommand,
      "Returns all values in a hash.", "2.0.0", "O(N) where N is the size of the hash.", "key",
      {"nondeterministic_output_order"});
  add("hgetall", 2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, HgetallCommand,
      "Returns all fields and values in a hash.", "2.0.0", "O(N) where N is the size of the hash.",
      "key", {"nondeterministic_output_order"});
  add("hincrby", 4, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, HincrbyCommand,
      "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if "
      "the field doesn't exist.",
      "2.0.0", "O(1)", "key field increment");
  add("hincrbyfloat", 4, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)},
      HincrbyfloatCommand,
      "Increments the floating point value of a field by a number. Uses 0 as initial value if "
      "the field doesn't exist.",
      "2.6.0", "O(1)", "key field increment");
  add("hrandfield", -2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, HrandfieldCommand,
      "Returns one or more random fields from a hash.", "6.2.0",
      "O(N) where N is the number of fields returned", "key [count [WITHVALUES]]",
      {"nondeterministic_output"});
  Command* hscan =
      add("hscan", -3, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, HscanCommand,
          "Iterates over fields and values of a hash.", "2.8.0",
          "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
          "the cursor to return back to 0. N is the number of elements inside the collection.",
          "key cursor [MATCH pattern] [COUNT count] [NOVALUES]", {"nondeterministic_output"});
  // Redis 7.4's hscan.json adds NOVALUES with neither a history entry nor a since.
  hscan->arguments = {docs::Key("key", 0), docs::Integer("cursor"),
                      docs::Optional(docs::Pattern("pattern", "MATCH")),
                      docs::Optional(docs::Integer("count", "COUNT")),
                      docs::Optional(docs::Token("novalues", "NOVALUES"))};
}

}  // namespace goblin
