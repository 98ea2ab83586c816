// Hash field deadlines, as Redis 7.4 gives them: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT (set,
// with NX | XX | GT | LT), HTTL HPTTL HEXPIRETIME HPEXPIRETIME (read), HPERSIST (clear).
//
// A deadline rides on its field's value in the packed hash (core/packed_hash.h). Every command
// here names its fields as `FIELDS numfields field ...` and answers one code per field:
//   set      -2 no such field (or the key is missing), 0 the condition was not met,
//            1 the deadline was set, 2 the field was deleted (a time not in the future)
//   read     -2 no such field, -1 no deadline, else the time
//   persist  -2 no such field, -1 no deadline, 1 cleared
// A field whose deadline has passed counts as absent. The effects are absolute: a set is logged
// as HPEXPIREAT of the fields it changed (condition kept), a deletion as HDEL of that field.
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "commands/hash_family.h"
#include "server/errors.h"

namespace goblin {
namespace {

// The largest deadline Redis 7.4 accepts for a field, in unix ms (2^46 - 1, the year 4199).
constexpr int64_t kMaxFieldDeadline = (int64_t{1} << 46) - 1;

constexpr std::string_view kFieldsMissing =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
constexpr std::string_view kFieldsMismatch =
    "ERR The `numfields` parameter must match the number of arguments";

// Reads `FIELDS numfields field ...` starting at argv[at]: the fields must be exactly the rest
// of the arguments. On error replies (with count_error for a bad numfields) and returns false.
bool ParseFields(CommandContext& ctx, size_t at, std::string_view count_error, size_t* first) {
  if (at + 1 >= ctx.argc() || !EqualsIgnoreCase(ctx.arg(at), "fields")) {
    ctx.reply.Error(kFieldsMissing);
    return false;
  }
  int64_t count;
  if (!ParseInt64(ctx.arg(at + 1), &count) || count < 1) {
    ctx.reply.Error(count_error);
    return false;
  }
  if (static_cast<uint64_t>(count) != ctx.argc() - at - 2) {
    ctx.reply.Error(kFieldsMismatch);
    return false;
  }
  *first = at + 2;
  return true;
}

// The deadline of a field that is there at now_ms (0: none), or nullopt when it is absent or
// its deadline has passed.
std::optional<int64_t> LiveDeadline(const PackedHash* hash, std::string_view field,
                                    int64_t now_ms) {
  if (hash == nullptr) return std::nullopt;
  const std::optional<int64_t> deadline = hash->Deadline(field);
  if (!deadline || !FieldAlive(*deadline, now_ms)) return std::nullopt;
  return deadline;
}

enum class Condition { kNone, kNx, kXx, kGt, kLt };

// Whether a new deadline may replace `current` (0: none, which counts as infinite).
bool ConditionMet(Condition condition, int64_t current, int64_t wanted) {
  switch (condition) {
    case Condition::kNone:
      return true;
    case Condition::kNx:
      return current == 0;
    case Condition::kXx:
      return current != 0;
    case Condition::kGt:
      return current != 0 && wanted > current;
    case Condition::kLt:
      return current == 0 || wanted < current;
  }
  return false;
}

// HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT key time [NX|XX|GT|LT] FIELDS numfields field ...
// base_ms is now for the relative forms, 0 for the absolute ones.
void ExpireFields(CommandContext& ctx, std::string_view name, int64_t base_ms, bool seconds) {
  // The key's type is checked first, then the arguments, as Redis 7.4 does.
  const std::string_view key = ctx.arg(1);
  PackedHash* hash;
  if (!LookupHash(ctx, key, &hash, false)) return;
  int64_t when;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &when)) return;
  const std::string invalid = "ERR invalid expire time in '" + std::string(name) + "' command";
  if (when < 0) {
    ctx.reply.Error("ERR invalid expire time, must be >= 0");
    return;
  }
  if (when > (seconds ? kMaxFieldDeadline / 1000 : kMaxFieldDeadline)) {
    ctx.reply.Error(invalid);
    return;
  }
  if (seconds) when *= 1000;
  if (when > kMaxFieldDeadline - base_ms) {
    ctx.reply.Error(invalid);
    return;
  }
  const int64_t deadline = when + base_ms;
  Condition condition = Condition::kNone;
  const std::string_view word = ctx.arg(3);
  if (EqualsIgnoreCase(word, "nx")) {
    condition = Condition::kNx;
  } else if (EqualsIgnoreCase(word, "xx")) {
    condition = Condition::kXx;
  } else if (EqualsIgnoreCase(word, "gt")) {
    condition = Condition::kGt;
  } else if (EqualsIgnoreCase(word, "lt")) {
    condition = Condition::kLt;
  }
  const size_t fields_at = condition == Condition::kNone ? 3 : 4;
  size_t first;
  if (!ParseFields(ctx, fields_at, "ERR Parameter `numFields` should be greater than 0", &first)) {
    return;
  }
  ctx.reply.Array(ctx.argc() - first);
  if (hash == nullptr) {
    for (size_t i = first; i < ctx.argc(); ++i) ctx.reply.Integer(-2);
    return;
  }
  // Any of these commands gives a small hash Redis's "listpackex" form, changed or not.
  hash->EnableFieldExpiry();
  std::vector<std::string_view> updated;
  size_t deleted = 0;
  for (size_t i = first; i < ctx.argc(); ++i) {
    const std::string_view field = ctx.arg(i);
    const std::optional<int64_t> current = LiveDeadline(hash, field, ctx.now_ms);
    if (!current) {
      ctx.reply.Integer(-2);
    } else if (!ConditionMet(condition, *current, deadline)) {
      ctx.reply.Integer(0);
    } else if (deadline <= ctx.now_ms) {
      hash->Delete(field);
      ctx.Propagate({"HDEL", key, field});
      ++deleted;
      ctx.reply.Integer(2);
    } else {
      hash->SetDeadline(field, deadline);
      updated.push_back(field);
      ctx.reply.Integer(1);
    }
  }
  if (updated.empty() && deleted == 0) return;
  MarkDirty(ctx, updated.size() + deleted);
  if (!updated.empty()) ctx.db().NoteElementDeadlines(key);
  if (!updated.empty()) {
    if (ctx.propagating()) {
      const std::string at = std::to_string(deadline);
      const std::string count = std::to_string(updated.size());
      std::vector<std::string_view> effect = {"HPEXPIREAT", key, at};
      if (condition != Condition::kNone) effect.push_back(word);
      effect.push_back("FIELDS");
      effect.push_back(count);
      effect.insert(effect.end(), updated.begin(), updated.end());
      ctx.Propagate(effect);
    }
    Notify(ctx, kNotifyHash, "hexpire", key);
  }
  if (deleted > 0) Notify(ctx, kNotifyHash, "hdel", key);
  if (hash->empty()) {
    ctx.db().Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
  } else {
    ctx.db().Touch(key);
  }
}

void HexpireCommand(CommandContext& ctx) { ExpireFields(ctx, "hexpire", ctx.now_ms, true); }
void HpexpireCommand(CommandContext& ctx) { ExpireFields(ctx, "hpexpire", ctx.now_ms, false); }
void HexpireatCommand(CommandContext& ctx) { ExpireFields(ctx, "hexpireat", 0, true); }
void HpexpireatCommand(CommandContext& ctx) { ExpireFields(ctx, "hpexpireat", 0, false); }

// The shape HTTL and HPERSIST share: looks the hash up, reads `FIELDS numfields field ...`,
// replies -2 for a field that is not there and -1 for one without a deadline, and lets
// on_deadline(hash, field, deadline) reply for the others.
template <typename Fn>
void ForEachFieldDeadline(CommandContext& ctx, bool for_read, Fn&& on_deadline) {
  PackedHash* hash;
  if (!LookupHash(ctx, ctx.arg(1), &hash, for_read)) return;
  size_t first;
  if (!ParseFields(ctx, 2, "ERR Number of fields must be a positive integer", &first)) return;
  ctx.reply.Array(ctx.argc() - first);
  for (size_t i = first; i < ctx.argc(); ++i) {
    const std::optional<int64_t> deadline = LiveDeadline(hash, ctx.arg(i), ctx.now_ms);
    if (!deadline) {
      ctx.reply.Integer(-2);
    } else if (*deadline == 0) {
      ctx.reply.Integer(-1);
    } else {
      on_deadline(*hash, ctx.arg(i), *deadline);
    }
  }
}

// HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME key FIELDS numfields field ...: the time left (or the
// deadline, absolute) in seconds rounded up, as Redis 7.4 rounds field times, or ms.
void ReadDeadlines(CommandContext& ctx, bool remaining, bool seconds) {
  ForEachFieldDeadline(ctx, true, [&](PackedHash&, std::string_view, int64_t deadline) {
    const int64_t ms = remaining ? deadline - ctx.now_ms : deadline;
    ctx.reply.Integer(seconds ? (ms + 999) / 1000 : ms);
  });
}

void HttlCommand(CommandContext& ctx) { ReadDeadlines(ctx, true, true); }
void HpttlCommand(CommandContext& ctx) { ReadDeadlines(ctx, true, false); }
void HexpiretimeCommand(CommandContext& ctx) { ReadDeadlines(ctx, false, true); }
void HpexpiretimeCommand(CommandContext& ctx) { ReadDeadlines(ctx, false, false); }

// HPERSIST key FIELDS numfields field ...: logged as it came when it cleared anything.
void HpersistCommand(CommandContext& ctx) {
  uint64_t cleared = 0;
  ForEachFieldDeadline(ctx, false, [&](PackedHash& hash, std::string_view field, int64_t) {
    hash.SetDeadline(field, 0);
    ++cleared;
    ctx.reply.Integer(1);
  });
  if (cleared == 0) return;
  MarkDirty(ctx, cleared);
  ctx.db().Touch(ctx.arg(1));
  Notify(ctx, kNotifyHash, "hpersist", ctx.arg(1));
}

}  // namespace

void RegisterHashFieldExpiryCommands(CommandTable* table) {
  constexpr uint32_t kWriteFast = kCmdWrite | kCmdDenyOom | kCmdFast;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "hash", kAclHash};
  struct Setter {
    const char* name;
    CommandHandler handler;
    const char* summary;
    const char* arguments;
  };
  for (const Setter& setter : {
           Setter{"hexpire", HexpireCommand, "Set expiry for hash field using relative time to expire (seconds)",
                  "key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"},
           Setter{"hpexpire", HpexpireCommand,
                  "Set expiry for hash field using relative time to expire (milliseconds)",
                  "key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"},
           Setter{"hexpireat", HexpireatCommand,
                  "Set expiry for hash field using an absolute Unix timestamp (seconds)",
                  "key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"},
           Setter{"hpexpireat", HpexpireatCommand,
                  "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
                  "key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"},
       }) {
    add(setter.name, -6, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, setter.handler,
        setter.summary, "7.4.0", "O(N) where N is the number of specified fields",
        setter.arguments);
  }
  struct Reader {
    const char* name;
    CommandHandler handler;
    const char* summary;
  };
  for (const Reader& reader : {
           Reader{"httl", HttlCommand, "Returns the TTL in seconds of a hash field."},
           Reader{"hpttl", HpttlCommand, "Returns the TTL in milliseconds of a hash field."},
           Reader{"hexpiretime", HexpiretimeCommand,
                  "Returns the expiration time of a hash field as a Unix timestamp, in seconds."},
           Reader{"hpexpiretime", HpexpiretimeCommand,
                  "Returns the expiration time of a hash field as a Unix timestamp, in msec."},
       }) {
    add(reader.name, -5, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, reader.handler,
        reader.summary, "7.4.0", "O(N) where N is the number of specified fields",
        "key FIELDS numfields field [field ...]");
  }
  add("hpersist", -5, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, HpersistCommand,
      "Removes the expiration time for each specified field", "7.4.0",
      "O(N) where N is the number of specified fields", "key FIELDS numfields field [field ...]");
}

}  // namespace goblin
