// Hash field deadlines, as Redis 7.4 gives them: HEXPIRE HPEXPIRE HEXPIREAT HPEXPIREAT (set,
// with NX | XX | GT | LT), HTTL HPTTL HEXPIRETIME HPEXPIRETIME (read), HPERSIST (clear); and
// Redis 8.0's HGETEX (read fields, set or clear their deadlines) and HSETEX (write fields with
// a deadline, FNX | FXX).
//
// A deadline rides on its field's value in the packed hash (core/packed_hash.h). Every command
// here names its fields as `FIELDS numfields field ...` and answers one code per field:
//   set      -2 no such field (or the key is missing), 0 the condition was not met,
//            1 the deadline was set, 2 the field was deleted (a time not in the future)
//   read     -2 no such field, -1 no deadline, else the time
//   persist  -2 no such field, -1 no deadline, 1 cleared
// A field whose deadline has passed counts as absent. The effects are absolute: a set is logged
// as HPEXPIREAT of the fields it changed (condition kept), a deletion as HDEL of that field.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
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

// The deadline of a field that is there for the running command (0: none), or nullopt when it
// is absent or its deadline has passed (hash_family.h, LapsedFieldRule).
std::optional<int64_t> LiveDeadline(const CommandContext& ctx, const PackedHash* hash,
                                    std::string_view field) {
  if (hash == nullptr) return std::nullopt;
  const std::optional<int64_t> deadline = hash->Deadline(field);
  if (!deadline || !FieldAlive(ctx, *deadline)) return std::nullopt;
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
// Reads a deadline argument as Redis 7.4 checks it: an integer, not negative, in seconds or ms,
// after base_ms (now for relative times, 0 for absolute ones), at most kMaxFieldDeadline.
// Replies the error and returns false otherwise.
bool ParseDeadline(CommandContext& ctx, std::string_view text, std::string_view name,
                   int64_t base_ms, bool seconds, int64_t* deadline) {
  int64_t when;
  if (!ParseIntegerArg(ctx, text, &when)) return false;
  if (when < 0) {
    ctx.reply.Error("ERR invalid expire time, must be >= 0");
    return false;
  }
  if (when > (seconds ? kMaxFieldDeadline / 1000 : kMaxFieldDeadline) ||
      (seconds ? when * 1000 : when) > kMaxFieldDeadline - base_ms) {
    ctx.reply.Error("ERR invalid expire time in '" + std::string(name) + "' command");
    return false;
  }
  *deadline = (seconds ? when * 1000 : when) + base_ms;
  return true;
}

// Deletes field when its deadline has passed, as a read inside HGETEX and HSETEX finds it:
// an HDEL effect; the caller sends one hexpired event and deletes the key if it emptied.
bool DropIfExpired(CommandContext& ctx, std::string_view key, PackedHash* hash,
                   std::string_view field) {
  if (hash->fields_with_deadline() == 0) return false;
  const std::optional<int64_t> deadline = hash->Deadline(field);
  if (!deadline || FieldAlive(ctx, *deadline)) return false;
  if (LapsedFieldRule(ctx) == LapsedField::kGone) {
    hash->Delete(field);
    ctx.Propagate({"HDEL", key, field});
  }
  return true;
}

// The end of a write to the hash at key: the key goes with its last field (del event), else
// it is touched; deadlines given are noted for active expiry.
void Finish(CommandContext& ctx, std::string_view key, PackedHash* hash) {
  if (hash->empty()) {
    ctx.db().Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
    return;
  }
  ctx.db().Touch(key);
  if (hash->fields_with_deadline() > 0) ctx.db().NoteElementDeadlines(key);
}

void ExpireFields(CommandContext& ctx, std::string_view name, int64_t base_ms, bool seconds) {
  // The key's type is checked first, then the arguments, as Redis 7.4 does.
  const std::string_view key = ctx.arg(1);
  PackedHash* hash;
  if (!LookupHash(ctx, key, &hash, false)) return;
  int64_t deadline;
  if (!ParseDeadline(ctx, ctx.arg(2), name, base_ms, seconds, &deadline)) return;
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
    const std::optional<int64_t> current = LiveDeadline(ctx, hash, field);
    if (!current) {
      ctx.reply.Integer(-2);
    } else if (!ConditionMet(condition, *current, deadline)) {
      ctx.reply.Integer(0);
    } else if (deadline <= ctx.now_ms && LapsedFieldRule(ctx) != LapsedField::kLive) {
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
  Finish(ctx, key, hash);
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
    const std::optional<int64_t> deadline = LiveDeadline(ctx, hash, ctx.arg(i));
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

// EX, PX, EXAT or PXAT: the unit of the time that follows, and whether it counts from now.
struct TimeOption {
  bool seconds;
  bool relative;
};
std::optional<TimeOption> TimeOptionOf(std::string_view word) {
  for (auto [name, seconds, relative] : {std::tuple{"ex", true, true},
                                         {"px", false, true},
                                         {"exat", true, false},
                                         {"pxat", false, false}}) {
    if (EqualsIgnoreCase(word, name)) return TimeOption{seconds, relative};
  }
  return std::nullopt;
}

// HGETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST] FIELDS numfields field ...: the values
// (nil for a missing or expired field), giving the fields found the deadline, or clearing it.
// Logged as HPEXPIREAT (absolute) or HPERSIST of the fields named, HDEL of those that a time
// in the past deleted or that had expired.
void HgetexCommand(CommandContext& ctx) {
  const std::string_view key = ctx.arg(1);
  PackedHash* hash;
  if (!LookupHash(ctx, key, &hash, false)) return;
  enum class Action { kNone, kDeadline, kPersist } action = Action::kNone;
  const std::optional<TimeOption> time = TimeOptionOf(ctx.arg(2));
  int64_t deadline = 0;
  size_t fields_at = 2;
  if (time) {
    if (!ParseDeadline(ctx, ctx.arg(3), "hgetex", time->relative ? ctx.now_ms : 0, time->seconds,
                       &deadline)) {
      return;
    }
    action = Action::kDeadline;
    fields_at = 4;
  } else if (EqualsIgnoreCase(ctx.arg(2), "persist")) {
    action = Action::kPersist;
    fields_at = 3;
  }
  size_t first;
  if (!ParseFields(ctx, fields_at, "ERR Number of fields must be a positive integer", &first)) {
    return;
  }
  ctx.reply.Array(ctx.argc() - first);
  if (hash == nullptr) {
    for (size_t i = first; i < ctx.argc(); ++i) ctx.reply.Null();
    return;
  }
  size_t expired = 0, deleted = 0, updated = 0;
  char scratch[kInt64TextMax];
  for (size_t i = first; i < ctx.argc(); ++i) {
    const std::string_view field = ctx.arg(i);
    if (DropIfExpired(ctx, key, hash, field)) {
      ++expired;
      ctx.reply.Null();
      continue;
    }
    const std::optional<std::string_view> value = hash->Get(field, scratch);
    if (!value) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(*value);
    if (action == Action::kPersist) {
      if (hash->Deadline(field).value_or(0) != 0) {
        hash->SetDeadline(field, 0);
        ++updated;
      }
    } else if (action == Action::kDeadline) {
      if (deadline <= ctx.now_ms && LapsedFieldRule(ctx) != LapsedField::kLive) {
        hash->Delete(field);
        ctx.Propagate({"HDEL", key, field});
        ++deleted;
      } else {
        hash->SetDeadline(field, deadline);
        ++updated;
      }
    }
  }
  if (expired == 0 && deleted == 0 && updated == 0) return;
  MarkDirty(ctx, deleted + updated);
  if (expired > 0) Notify(ctx, kNotifyHash, "hexpired", key);
  if (updated > 0) {
    std::vector<std::string_view> effect;
    const std::string at = std::to_string(deadline);
    if (action == Action::kPersist) {
      effect = {"HPERSIST", key};
      Notify(ctx, kNotifyHash, "hpersist", key);
    } else {
      effect = {"HPEXPIREAT", key, at};
      Notify(ctx, kNotifyHash, "hexpire", key);
    }
    effect.insert(effect.end(), ctx.argv.begin() + static_cast<std::ptrdiff_t>(fields_at),
                  ctx.argv.end());
    ctx.Propagate(effect);
  } else if (deleted > 0) {
    Notify(ctx, kNotifyHash, "hdel", key);
  }
  Finish(ctx, key, hash);
}

// HSETEX's options, in any order before FIELDS.
struct HsetexArgs {
  enum class Exists { kAny, kNone, kAll } exists = Exists::kAny;
  enum class Ttl { kClear, kKeep, kDeadline } ttl = Ttl::kClear;
  int64_t deadline = 0;
  bool absolute_ms = false;  // PXAT: logged as it came
  size_t time_at = 0;        // the position of the time argument
  size_t first = 0;          // the first field
};

// Parses HSETEX's arguments as Redis 8 does, before the key is looked at; replies the error
// and returns false when they are wrong.
bool ParseHsetex(CommandContext& ctx, HsetexArgs* args) {
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const std::string_view word = ctx.arg(i);
    if (EqualsIgnoreCase(word, "fields")) {
      int64_t count;
      if (i + 3 >= ctx.argc()) {
        ctx.reply.Error(errors::WrongArity("hsetex"));
        return false;
      }
      if (!ParseInt64(ctx.arg(i + 1), &count) || count < 1 || count > INT32_MAX) {
        ctx.reply.Error("ERR invalid number of fields");
        return false;
      }
      const size_t remaining = ctx.argc() - i - 2;
      if (remaining % 2 != 0 || static_cast<uint64_t>(count) != remaining / 2) {
        ctx.reply.Error(errors::WrongArity("hsetex"));
        return false;
      }
      args->first = i + 2;
      return true;
    }
    const std::optional<TimeOption> time = TimeOptionOf(word);
    if (time || EqualsIgnoreCase(word, "keepttl")) {
      if (args->ttl != HsetexArgs::Ttl::kClear) {
        ctx.reply.Error("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
        return false;
      }
      if (!time) {
        args->ttl = HsetexArgs::Ttl::kKeep;
        continue;
      }
      if (i + 1 >= ctx.argc()) {
        ctx.reply.Error("ERR missing expire time");
        return false;
      }
      ++i;
      if (!ParseDeadline(ctx, ctx.arg(i), "hsetex", time->relative ? ctx.now_ms : 0, time->seconds,
                         &args->deadline)) {
        return false;
      }
      args->ttl = HsetexArgs::Ttl::kDeadline;
      args->absolute_ms = !time->seconds && !time->relative;
      args->time_at = i;
    } else if (EqualsIgnoreCase(word, "fxx") || EqualsIgnoreCase(word, "fnx")) {
      if (args->exists != HsetexArgs::Exists::kAny) {
        ctx.reply.Error("ERR Only one of FXX or FNX arguments can be specified");
        return false;
      }
      args->exists =
          EqualsIgnoreCase(word, "fxx") ? HsetexArgs::Exists::kAll : HsetexArgs::Exists::kNone;
    } else {
      ctx.reply.Error("ERR unknown argument: " + std::string(word));
      return false;
    }
  }
  ctx.reply.Error(kFieldsMissing);
  return false;
}

// HSETEX key [FNX | FXX] [EX | PX | EXAT | PXAT time | KEEPTTL] FIELDS numfields field value ...:
// 1 when every field was written, 0 when FNX or FXX held them all back. Without a time or
// KEEPTTL a written field loses its deadline, as with HSET. Logged with the deadline absolute
// (PXAT), or as the HDELs of the fields a time in the past deleted.
void HsetexCommand(CommandContext& ctx) {
  HsetexArgs args;
  if (!ParseHsetex(ctx, &args)) return;
  const std::string_view key = ctx.arg(1);
  PackedHash* hash;
  if (!LookupHash(ctx, key, &hash, false)) return;
  if (hash == nullptr && args.exists == HsetexArgs::Exists::kAll) {
    ctx.reply.Integer(0);
    return;
  }
  hash = HashForWrite(ctx, key);
  size_t expired = 0;
  if (args.exists != HsetexArgs::Exists::kAny) {
    size_t found = 0;
    for (size_t i = args.first; i < ctx.argc(); i += 2) {
      if (DropIfExpired(ctx, key, hash, ctx.arg(i))) {
        ++expired;
      } else if (hash->Contains(ctx.arg(i))) {
        ++found;
      }
    }
    const size_t fields = (ctx.argc() - args.first) / 2;
    if ((args.exists == HsetexArgs::Exists::kNone && found > 0) ||
        (args.exists == HsetexArgs::Exists::kAll && found < fields)) {
      ctx.reply.Integer(0);
      if (expired > 0) {
        MarkDirty(ctx, expired);
        Notify(ctx, kNotifyHash, "hexpired", key);
      }
      if (expired > 0 || hash->empty()) Finish(ctx, key, hash);
      return;
    }
  }
  const HashLimits limits = HashLimitsOf(ctx);
  size_t longest = 0;
  for (size_t i = args.first; i < ctx.argc(); ++i) longest = std::max(longest, ctx.arg(i).size());
  hash->PrepareForInsert((ctx.argc() - args.first) / 2, longest, limits);
  size_t deleted = 0, updated = 0;
  for (size_t i = args.first; i < ctx.argc(); i += 2) {
    const std::string_view field = ctx.arg(i);
    hash->Set(field, ctx.arg(i + 1), limits, args.ttl != HsetexArgs::Ttl::kClear);
    if (args.ttl != HsetexArgs::Ttl::kDeadline) continue;
    if (args.deadline <= ctx.now_ms && LapsedFieldRule(ctx) != LapsedField::kLive) {
      hash->Delete(field);
      ctx.Propagate({"HDEL", key, field});
      ++deleted;
    } else {
      hash->SetDeadline(field, args.deadline);
      ++updated;
    }
  }
  MarkDirty(ctx, (ctx.argc() - args.first) / 2);
  // With fields deleted, their HDELs are the whole effect. Otherwise the command is logged,
  // its relative time made absolute, after the HDELs of fields found expired, if any.
  const std::string at = std::to_string(args.deadline);
  if (deleted == 0 && args.ttl == HsetexArgs::Ttl::kDeadline && !args.absolute_ms) {
    std::vector<std::string_view> effect(ctx.argv.begin(), ctx.argv.end());
    effect[args.time_at - 1] = "PXAT";
    effect[args.time_at] = at;
    ctx.Propagate(effect);
  } else if (deleted == 0 && expired > 0) {
    ctx.Propagate(std::span<const std::string_view>(ctx.argv));
  }
  ctx.reply.Integer(1);
  if (expired > 0) Notify(ctx, kNotifyHash, "hexpired", key);
  Notify(ctx, kNotifyHash, "hset", key);
  if (deleted > 0 || updated > 0) Notify(ctx, kNotifyHash, deleted > 0 ? "hdel" : "hexpire", key);
  Finish(ctx, key, hash);
}

}  // namespace

void RegisterHashFieldExpiryCommands(CommandTable* table) {
  constexpr uint32_t kWriteFast = kCmdWrite | kCmdDenyOom | kCmdFast;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "hash", kAclHash};
  // COMMAND DOCS's trees are Redis's (src/commands/h*.json): every command names its fields
  // in a FIELDS block, and HGETEX and HSETEX group their options as "condition" and
  // "expiration".
  auto fields = [] {
    return docs::Block(
        "fields", {docs::Integer("numfields"), docs::Multiple(docs::String("field"))}, "FIELDS");
  };
  auto condition = [] {
    return docs::Optional(
        docs::OneOf("condition", {docs::Token("nx", "NX"), docs::Token("xx", "XX"),
                                  docs::Token("gt", "GT"), docs::Token("lt", "LT")}));
  };
  struct Setter {
    const char* name;
    CommandHandler handler;
    const char* summary;
    const char* arguments;
    CommandArgument deadline;
  };
  for (const Setter& setter : {
           Setter{"hexpire", HexpireCommand,
                  "Set expiry for hash field using relative time to expire (seconds)",
                  "key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
                  docs::Integer("seconds")},
           Setter{"hpexpire", HpexpireCommand,
                  "Set expiry for hash field using relative time to expire (milliseconds)",
                  "key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
                  docs::Integer("milliseconds")},
           Setter{"hexpireat", HexpireatCommand,
                  "Set expiry for hash field using an absolute Unix timestamp (seconds)",
                  "key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
                  docs::UnixTime("unix-time-seconds")},
           Setter{
               "hpexpireat", HpexpireatCommand,
               "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
               "key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
               docs::UnixTime("unix-time-milliseconds")},
       }) {
    Command* command = add(setter.name, -6, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)},
                           setter.handler, setter.summary, "7.4.0",
                           "O(N) where N is the number of specified fields", setter.arguments);
    command->arguments = {docs::Key("key", 0), setter.deadline, condition(), fields()};
  }
  struct Reader {
    const char* name;
    CommandHandler handler;
    const char* summary;
    std::vector<std::string_view> tips;
  };
  // HTTL and HPTTL answer a time left, which changes from one call to the next: Redis marks
  // them nondeterministic_output, and the absolute times not.
  for (const Reader& reader : {
           Reader{"httl",
                  HttlCommand,
                  "Returns the TTL in seconds of a hash field.",
                  {"nondeterministic_output"}},
           Reader{"hpttl",
                  HpttlCommand,
                  "Returns the TTL in milliseconds of a hash field.",
                  {"nondeterministic_output"}},
           Reader{"hexpiretime",
                  HexpiretimeCommand,
                  "Returns the expiration time of a hash field as a Unix timestamp, in seconds.",
                  {}},
           Reader{"hpexpiretime",
                  HpexpiretimeCommand,
                  "Returns the expiration time of a hash field as a Unix timestamp, in msec.",
                  {}},
       }) {
    Command* command =
        add(reader.name, -5, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, reader.handler,
            reader.summary, "7.4.0", "O(N) where N is the number of specified fields",
            "key FIELDS numfields field [field ...]", reader.tips);
    command->arguments = {docs::Key("key", 0), fields()};
  }
  Command* hgetex = add(
      "hgetex", -5, kCmdWrite | kCmdFast,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate, KeyBegin::Index(1), KeyFind::Range(0, 1, 0),
               "RW and UPDATE because it changes the TTL"}},
      HgetexCommand,
      "Get the value of one or more fields of a given hash key, and optionally set "
      "their expiration.",
      "8.0.0", "O(N) where N is the number of specified fields",
      "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds "
      "| PERSIST] FIELDS numfields field [field ...]");
  hgetex->arguments = {docs::Key("key", 0), docs::Expiration(docs::Token("persist", "PERSIST")),
                       fields()};
  Command* hsetex =
      add("hsetex", -6, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, HsetexCommand,
          "Set the value of one or more fields of a given hash key, and optionally set their "
          "expiration.",
          "8.0.0", "O(N) where N is the number of fields being set.",
          "key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
          "unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]");
  hsetex->arguments = {
      docs::Key("key", 0),
      docs::Optional(
          docs::OneOf("condition", {docs::Token("fnx", "FNX"), docs::Token("fxx", "FXX")})),
      docs::Expiration(docs::Token("keepttl", "KEEPTTL")),
      docs::Block(
          "fields",
          {docs::Integer("numfields"),
           docs::Multiple(docs::Block("data", {docs::String("field"), docs::String("value")}))},
          "FIELDS")};
  Command* hpersist = add("hpersist", -5, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate)},
                          HpersistCommand, "Removes the expiration time for each specified field",
                          "7.4.0", "O(N) where N is the number of specified fields",
                          "key FIELDS numfields field [field ...]");
  hpersist->arguments = {docs::Key("key", 0), fields()};
}

}  // namespace goblin
