// String commands: GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX DIGEST DELEX MGET MSET MSETNX
// MSETEX APPEND STRLEN GETRANGE SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT LCS. The
// digest of SET's and DELEX's IFDEQ / IFDNE is core/string_digest.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/lcs.h"
#include "core/string_digest.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

// Options of SET and GETEX, parsed with Redis's rules: later EX/PX/EXAT/PXAT/KEEPTTL/PERSIST
// conflict with each other, and the conditions NX, XX, IFEQ, IFNE, IFDEQ and IFDNE with each
// other; anything else is a syntax error.
struct StringOptions {
  enum Flag : uint32_t {
    kNx = 1,
    kXx = 2,
    kGet = 4,
    kKeepTtl = 8,
    kPersist = 16,
    kEx = 32,
    kPx = 64,
    kExAt = 128,
    kPxAt = 256,
    kIfEq = 512,    // the current value equals compare_text
    kIfNe = 1024,   // the key is missing or its value differs from compare_text
    kIfDeq = 2048,  // the current value's digest is compare_text
    kIfDne = 4096,  // the key is missing or its value's digest is not compare_text
  };
  uint32_t flags = 0;
  std::string_view expire_text;
  std::string_view compare_text;

  static constexpr uint32_t kAnyExpire = kEx | kPx | kExAt | kPxAt;
  static constexpr uint32_t kAnyCompare = kIfEq | kIfNe | kIfDeq | kIfDne;
  static constexpr uint32_t kAnyCondition = kNx | kXx | kAnyCompare;
};

// IFEQ, IFNE, IFDEQ, IFDNE: the compare flag an argument names (case-insensitive), or 0.
uint32_t CompareFlagOf(std::string_view word) {
  using O = StringOptions;
  if (EqualsIgnoreCase(word, "ifeq")) return O::kIfEq;
  if (EqualsIgnoreCase(word, "ifne")) return O::kIfNe;
  if (EqualsIgnoreCase(word, "ifdeq")) return O::kIfDeq;
  if (EqualsIgnoreCase(word, "ifdne")) return O::kIfDne;
  return 0;
}

// Whether a string key passes a compare condition; value is nullopt for a missing key.
bool PassesCompare(uint32_t compare, std::optional<std::string_view> value, std::string_view text) {
  using O = StringOptions;
  switch (compare) {
    case O::kIfEq:
      return value && *value == text;
    case O::kIfNe:
      return !value || *value != text;
    case O::kIfDeq:
      return value && DigestMatches(*value, text);
    case O::kIfDne:
      return !value || !DigestMatches(*value, text);
    default:
      return true;
  }
}

enum class StringCommandKind { kSet, kGetEx };

bool ParseStringOptions(CommandContext& ctx, size_t first, StringCommandKind kind,
                        StringOptions* options) {
  using O = StringOptions;
  uint32_t& flags = options->flags;
  const bool is_set = kind == StringCommandKind::kSet;
  for (size_t j = first; j < ctx.argc(); ++j) {
    std::string_view opt = ctx.arg(j);
    bool has_next = j + 1 < ctx.argc();
    auto expire_option = [&](uint32_t flag) {
      // Each expiry form excludes the others, KEEPTTL and PERSIST, but not itself.
      uint32_t conflicts = (O::kAnyExpire & ~flag) | O::kKeepTtl | O::kPersist;
      if ((flags & conflicts) || !has_next) return false;
      flags |= flag;
      options->expire_text = ctx.arg(++j);
      return true;
    };
    const uint32_t compare = is_set ? CompareFlagOf(opt) : 0;
    if (is_set && EqualsIgnoreCase(opt, "nx") && !(flags & (O::kAnyCondition & ~O::kNx))) {
      flags |= O::kNx;
    } else if (is_set && EqualsIgnoreCase(opt, "xx") && !(flags & (O::kAnyCondition & ~O::kXx))) {
      flags |= O::kXx;
    } else if (compare != 0 && has_next && !(flags & (O::kAnyCondition & ~compare))) {
      flags |= compare;
      options->compare_text = ctx.arg(++j);
    } else if (is_set && EqualsIgnoreCase(opt, "get")) {
      flags |= O::kGet;
    } else if (is_set && EqualsIgnoreCase(opt, "keepttl") &&
               !(flags & (O::kPersist | O::kAnyExpire))) {
      flags |= O::kKeepTtl;
    } else if (!is_set && EqualsIgnoreCase(opt, "persist") &&
               !(flags & (O::kKeepTtl | O::kAnyExpire))) {
      flags |= O::kPersist;
    } else if (EqualsIgnoreCase(opt, "ex") && expire_option(O::kEx)) {
    } else if (EqualsIgnoreCase(opt, "px") && expire_option(O::kPx)) {
    } else if (EqualsIgnoreCase(opt, "exat") && expire_option(O::kExAt)) {
    } else if (EqualsIgnoreCase(opt, "pxat") && expire_option(O::kPxAt)) {
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

std::optional<int64_t> DeadlineOf(CommandContext& ctx, const StringOptions& options) {
  using O = StringOptions;
  bool seconds = options.flags & (O::kEx | O::kExAt);
  bool relative = options.flags & (O::kEx | O::kPx);
  return ParseDeadlineArg(ctx, options.expire_text, seconds, relative);
}

void ReplyStringValue(CommandContext& ctx, const KeyEntry* entry) {
  char scratch[kInt64TextMax];
  ctx.reply.Bulk(entry->string_value(scratch));
}

// SET's core, shared with SETNX/SETEX/PSETEX: stores value unless NX/XX forbid it.
void SetGeneric(CommandContext& ctx, std::string_view key, std::string_view value,
                const StringOptions& options, std::string_view ok_reply,
                std::string_view abort_reply) {
  using O = StringOptions;
  std::optional<int64_t> deadline;
  if (options.flags & O::kAnyExpire) {
    deadline = DeadlineOf(ctx, options);
    if (!deadline) return;
  }
  Database& db = ctx.db();
  // GET reads the old value as GET does (a miss counts, and is announced).
  KeyEntry* existing =
      (options.flags & O::kGet) ? db.FindForRead(key, ctx.now_ms) : db.Find(key, ctx.now_ms);
  if (options.flags & O::kGet) {
    if (existing != nullptr && existing->type() != ValueType::kString) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    if (existing == nullptr) {
      ctx.reply.Null();
    } else {
      ReplyStringValue(ctx, existing);
    }
  }
  bool found = existing != nullptr;
  bool refused = ((options.flags & O::kNx) && found) || ((options.flags & O::kXx) && !found);
  if (const uint32_t compare = options.flags & O::kAnyCompare) {
    // The compare conditions read the value: a key of another type is an error.
    if (found && existing->type() != ValueType::kString) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    char scratch[kInt64TextMax];
    const std::optional<std::string_view> current =
        found ? std::optional(existing->string_value(scratch)) : std::nullopt;
    refused = !PassesCompare(compare, current, options.compare_text);
  }
  if (refused) {
    if (!(options.flags & O::kGet)) {
      if (abort_reply.empty()) {
        ctx.reply.Null();
      } else {
        ctx.reply.Raw(abort_reply);
      }
    }
    return;
  }
  db.Put(key, EntryValue::String(value), deadline, options.flags & O::kKeepTtl);
  MarkDirty(ctx);
  Notify(ctx, kNotifyString, "set", key);
  if (deadline) Notify(ctx, kNotifyGeneric, "expire", key);
  // EX, PX, SETEX and PSETEX count from now: the log holds the absolute deadline. A compare
  // condition held here: the log holds the plain SET.
  if (ctx.propagating()) {
    if (deadline) {
      ctx.Propagate({"SET", key, value, "PXAT", std::to_string(*deadline)});
    } else if ((options.flags & O::kAnyCompare) && (options.flags & O::kKeepTtl)) {
      ctx.Propagate({"SET", key, value, "KEEPTTL"});
    } else if (options.flags & O::kAnyCompare) {
      ctx.Propagate({"SET", key, value});
    } else if (options.flags & O::kGet) {
      // GET changes nothing a replay needs: the log holds SET without it (GETSET as SET), as
      // Redis's does.
      std::vector<std::string_view> logged = {ctx.argc() == 3 ? "SET" : ctx.arg(0), key, value};
      for (size_t i = 3; i < ctx.argc(); ++i) {
        if (!EqualsIgnoreCase(ctx.arg(i), "get")) logged.push_back(ctx.arg(i));
      }
      ctx.Propagate(logged);
    }
  }
  if (!(options.flags & O::kGet)) ctx.reply.Raw(ok_reply);
}

void GetCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    ctx.reply.Null();
  } else {
    ReplyStringValue(ctx, entry);
  }
}

void SetCommand(CommandContext& ctx) {
  StringOptions options;
  if (!ParseStringOptions(ctx, 3, StringCommandKind::kSet, &options)) return;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options, "+OK\r\n", "");
}

void SetnxCommand(CommandContext& ctx) {
  StringOptions options;
  options.flags = StringOptions::kNx;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options, ":1\r\n", ":0\r\n");
}

void SetexCommand(CommandContext& ctx) {
  StringOptions options;
  options.flags = StringOptions::kEx;
  options.expire_text = ctx.arg(2);
  SetGeneric(ctx, ctx.arg(1), ctx.arg(3), options, "+OK\r\n", "");
}

void PsetexCommand(CommandContext& ctx) {
  StringOptions options;
  options.flags = StringOptions::kPx;
  options.expire_text = ctx.arg(2);
  SetGeneric(ctx, ctx.arg(1), ctx.arg(3), options, "+OK\r\n", "");
}

void GetsetCommand(CommandContext& ctx) {
  StringOptions options;
  options.flags = StringOptions::kGet;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options, "+OK\r\n", "");
}

void GetdelCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ReplyStringValue(ctx, entry);
  ctx.db().Delete(ctx.arg(1));
  MarkDirty(ctx);
  Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  ctx.Propagate({ctx.server.config.lazyfree.user_del ? "UNLINK" : "DEL", ctx.arg(1)});
}

void DigestCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  char scratch[kInt64TextMax];
  ctx.reply.Bulk(StringDigestHex(entry->string_value(scratch)));
}

// DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest]: deletes the key (of any
// type without a condition, a string with one) when the condition holds. Logged as DEL.
void DelexCommand(CommandContext& ctx) {
  const std::string_view key = ctx.arg(1);
  uint32_t compare = 0;
  if (ctx.argc() == 4) compare = CompareFlagOf(ctx.arg(2));
  if (ctx.argc() != 2 && compare == 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  Database& db = ctx.db();
  KeyEntry* entry = db.Find(key, ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (compare != 0) {
    if (entry->type() != ValueType::kString) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    char scratch[kInt64TextMax];
    if (!PassesCompare(compare, entry->string_value(scratch), ctx.arg(3))) {
      ctx.reply.Integer(0);
      return;
    }
  }
  db.Delete(key);
  MarkDirty(ctx);
  Notify(ctx, kNotifyGeneric, "del", key);
  ctx.Propagate({"DEL", key});
  ctx.reply.Integer(1);
}

void GetexCommand(CommandContext& ctx) {
  StringOptions options;
  if (!ParseStringOptions(ctx, 2, StringCommandKind::kGetEx, &options)) return;
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  std::optional<int64_t> deadline;
  if (options.flags & StringOptions::kAnyExpire) {
    deadline = DeadlineOf(ctx, options);
    if (!deadline) return;
  }
  ReplyStringValue(ctx, entry);
  Database& db = ctx.db();
  if (deadline && *deadline <= ctx.now_ms) {
    db.Delete(ctx.arg(1));
    MarkDirty(ctx);
    ctx.Propagate({ctx.server.config.lazyfree.expire ? "UNLINK" : "DEL", ctx.arg(1)});
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  } else if (deadline) {
    db.SetExpire(ctx.arg(1), deadline);
    MarkDirty(ctx);
    if (ctx.propagating()) ctx.Propagate({"PEXPIREAT", ctx.arg(1), std::to_string(*deadline)});
    Notify(ctx, kNotifyGeneric, "expire", ctx.arg(1));
  } else if ((options.flags & StringOptions::kPersist) && entry->has_expire()) {
    db.SetExpire(ctx.arg(1), std::nullopt);
    MarkDirty(ctx);
    ctx.Propagate({"PERSIST", ctx.arg(1)});
    Notify(ctx, kNotifyGeneric, "persist", ctx.arg(1));
  }
}

void MgetCommand(CommandContext& ctx) {
  ctx.reply.Array(ctx.argc() - 1);
  for (size_t i = 1; i < ctx.argc(); ++i) {
    KeyEntry* entry = ctx.db().FindForRead(ctx.arg(i), ctx.now_ms);
    if (entry == nullptr || entry->type() != ValueType::kString) {
      ctx.reply.Null();
    } else {
      ReplyStringValue(ctx, entry);
    }
  }
}

bool CheckPairs(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return false;
  }
  return true;
}

void MsetCommand(CommandContext& ctx) {
  if (!CheckPairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    ctx.db().Put(ctx.arg(i), EntryValue::String(ctx.arg(i + 1)), std::nullopt);
    Notify(ctx, kNotifyString, "set", ctx.arg(i));
  }
  MarkDirty(ctx, (ctx.argc() - 1) / 2);
  ctx.reply.Ok();
}

void MsetnxCommand(CommandContext& ctx) {
  if (!CheckPairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    if (ctx.db().Find(ctx.arg(i), ctx.now_ms) != nullptr) {
      ctx.reply.Integer(0);
      return;
    }
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    ctx.db().Put(ctx.arg(i), EntryValue::String(ctx.arg(i + 1)), std::nullopt);
    Notify(ctx, kNotifyString, "set", ctx.arg(i));
  }
  MarkDirty(ctx, (ctx.argc() - 1) / 2);
  ctx.reply.Integer(1);
}

// MSETEX numkeys key value [key value ...] [NX | XX] [EX seconds | PX milliseconds |
// EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]: sets every key, or none when
// NX or XX fails for one of them; 1 when set, else 0. The options follow the pairs, in any
// order. A deadline is logged absolute (PXAT).
void MsetexCommand(CommandContext& ctx) {
  using O = StringOptions;
  int64_t count;
  if (!ParseIntegerArg(ctx, ctx.arg(1), &count)) return;
  if (count < 1) {
    ctx.reply.Error("ERR invalid numkeys value");
    return;
  }
  if (static_cast<uint64_t>(count) > (ctx.argc() - 2) / 2) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return;
  }
  const size_t options_at = 2 + 2 * static_cast<size_t>(count);
  uint32_t flags = 0;
  std::string_view expire_text;
  for (size_t j = options_at; j < ctx.argc(); ++j) {
    const std::string_view opt = ctx.arg(j);
    const bool has_next = j + 1 < ctx.argc();
    uint32_t expire = 0;
    if (EqualsIgnoreCase(opt, "ex")) expire = O::kEx;
    if (EqualsIgnoreCase(opt, "px")) expire = O::kPx;
    if (EqualsIgnoreCase(opt, "exat")) expire = O::kExAt;
    if (EqualsIgnoreCase(opt, "pxat")) expire = O::kPxAt;
    if (EqualsIgnoreCase(opt, "nx") && !(flags & O::kXx)) {
      flags |= O::kNx;
    } else if (EqualsIgnoreCase(opt, "xx") && !(flags & O::kNx)) {
      flags |= O::kXx;
    } else if (EqualsIgnoreCase(opt, "keepttl") && !(flags & O::kAnyExpire)) {
      flags |= O::kKeepTtl;
    } else if (expire != 0 && has_next && !(flags & ((O::kAnyExpire & ~expire) | O::kKeepTtl))) {
      flags |= expire;
      expire_text = ctx.arg(++j);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::optional<int64_t> deadline;
  if (flags & O::kAnyExpire) {
    deadline =
        ParseDeadlineArg(ctx, expire_text, flags & (O::kEx | O::kExAt), flags & (O::kEx | O::kPx));
    if (!deadline) return;
  }
  Database& db = ctx.db();
  if (flags & (O::kNx | O::kXx)) {
    for (size_t i = 2; i < options_at; i += 2) {
      const bool found = db.Find(ctx.arg(i), ctx.now_ms) != nullptr;
      if (found == static_cast<bool>(flags & O::kNx)) {
        ctx.reply.Integer(0);
        return;
      }
    }
  }
  for (size_t i = 2; i < options_at; i += 2) {
    db.Put(ctx.arg(i), EntryValue::String(ctx.arg(i + 1)), deadline, flags & O::kKeepTtl);
    Notify(ctx, kNotifyString, "set", ctx.arg(i));
    if (deadline) Notify(ctx, kNotifyGeneric, "expire", ctx.arg(i));
  }
  MarkDirty(ctx, static_cast<uint64_t>(count));
  if (deadline && ctx.propagating()) {
    const std::string deadline_text = std::to_string(*deadline);
    std::vector<std::string_view> logged(ctx.argv.begin(),
                                         ctx.argv.begin() + static_cast<ptrdiff_t>(options_at));
    logged.insert(logged.end(), {"PXAT", deadline_text});
    ctx.Propagate(logged);
  }
  ctx.reply.Integer(1);
}

// Redis's checkStringLength: a string may not grow past proto-max-bulk-len.
bool CheckStringLength(CommandContext& ctx, int64_t size, int64_t append) {
  int64_t total;
  if (__builtin_add_overflow(size, append, &total) ||
      total > ctx.server.config.proto_max_bulk_len) {
    ctx.reply.Error(errors::kStringTooLong);
    return false;
  }
  return true;
}

void AppendCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry, false)) return;
  std::string_view suffix = ctx.arg(2);
  if (entry == nullptr) {
    ctx.db().Put(ctx.arg(1), EntryValue::String(suffix), std::nullopt);
    MarkDirty(ctx);
    Notify(ctx, kNotifyString, "append", ctx.arg(1));
    ctx.reply.Integer(static_cast<int64_t>(suffix.size()));
    return;
  }
  char scratch[kInt64TextMax];
  std::string_view current = entry->string_value(scratch);
  if (!CheckStringLength(ctx, static_cast<int64_t>(current.size()),
                         static_cast<int64_t>(suffix.size()))) {
    return;
  }
  const size_t length = current.size() + suffix.size();
  if (entry->string_encoding() == StringEncoding::kRaw) {
    char* bytes = ResizeStringInPlace(ctx, ctx.arg(1), entry, length);
    std::memcpy(bytes + current.size(), suffix.data(), suffix.size());
  } else {
    std::string joined;
    joined.reserve(length);
    joined.append(current).append(suffix);
    ctx.db().Put(ctx.arg(1), EntryValue::RawString(joined), std::nullopt, /*keep_ttl=*/true);
  }
  MarkDirty(ctx);
  Notify(ctx, kNotifyString, "append", ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(length));
}

void StrlenCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  char scratch[kInt64TextMax];
  ctx.reply.Integer(entry ? static_cast<int64_t>(entry->string_value(scratch).size()) : 0);
}

void GetrangeCommand(CommandContext& ctx) {
  int64_t start, end;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &start) || !ParseIntegerArg(ctx, ctx.arg(3), &end)) {
    return;
  }
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry)) return;
  if (entry == nullptr) {
    ctx.reply.Bulk("");
    return;
  }
  char scratch[kInt64TextMax];
  std::string_view value = entry->string_value(scratch);
  int64_t length = static_cast<int64_t>(value.size());
  if (start < 0 && end < 0 && start > end) {
    ctx.reply.Bulk("");
    return;
  }
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= length) end = length - 1;
  if (start > end || length == 0) {
    ctx.reply.Bulk("");
    return;
  }
  ctx.reply.Bulk(value.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

void SetrangeCommand(CommandContext& ctx) {
  int64_t offset;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &offset)) return;
  if (offset < 0) {
    ctx.reply.Error(errors::kOffsetOutOfRange);
    return;
  }
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry, false)) return;
  std::string_view patch = ctx.arg(3);
  char scratch[kInt64TextMax];
  const std::string_view current = entry ? entry->string_value(scratch) : std::string_view();
  if (patch.empty()) {
    ctx.reply.Integer(static_cast<int64_t>(current.size()));
    return;
  }
  if (!CheckStringLength(ctx, offset, static_cast<int64_t>(patch.size()))) return;
  const size_t length = std::max(current.size(), static_cast<size_t>(offset) + patch.size());
  if (entry != nullptr && entry->string_encoding() == StringEncoding::kRaw) {
    char* bytes = ResizeStringInPlace(ctx, ctx.arg(1), entry, length);
    std::memcpy(bytes + offset, patch.data(), patch.size());
  } else {
    std::string value(current);
    value.resize(length, '\0');
    value.replace(static_cast<size_t>(offset), patch.size(), patch);
    ctx.db().Put(ctx.arg(1), EntryValue::RawString(value), std::nullopt, /*keep_ttl=*/true);
  }
  MarkDirty(ctx);
  Notify(ctx, kNotifyString, "setrange", ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(length));
}

void IncrDecr(CommandContext& ctx, int64_t increment) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry, false)) return;
  int64_t value = 0;
  if (entry != nullptr) {
    char scratch[kInt64TextMax];
    if (entry->string_encoding() == StringEncoding::kInt) {
      value = entry->int_value();
    } else if (!ParseInt64(entry->string_value(scratch), &value)) {
      ctx.reply.Error(errors::kNotInteger);
      return;
    }
  }
  int64_t result;
  if (__builtin_add_overflow(value, increment, &result)) {
    ctx.reply.Error(errors::kOverflow);
    return;
  }
  ctx.db().Put(ctx.arg(1), EntryValue::Integer(result), std::nullopt, /*keep_ttl=*/true);
  MarkDirty(ctx);
  Notify(ctx, kNotifyString, "incrby", ctx.arg(1));
  ctx.reply.Integer(result);
}

void IncrCommand(CommandContext& ctx) { IncrDecr(ctx, 1); }
void DecrCommand(CommandContext& ctx) { IncrDecr(ctx, -1); }

void IncrbyCommand(CommandContext& ctx) {
  int64_t increment;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &increment)) return;
  IncrDecr(ctx, increment);
}

void DecrbyCommand(CommandContext& ctx) {
  int64_t decrement;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &decrement)) return;
  if (decrement == INT64_MIN) {
    ctx.reply.Error(errors::kDecrementOverflow);
    return;
  }
  IncrDecr(ctx, -decrement);
}

void IncrbyfloatCommand(CommandContext& ctx) {
  KeyEntry* entry;
  if (!LookupTyped(ctx, ctx.arg(1), ValueType::kString, &entry, false)) return;
  long double value = 0, increment;
  char scratch[kInt64TextMax];
  if ((entry != nullptr && !ParseLongDouble(entry->string_value(scratch), &value)) ||
      !ParseLongDouble(ctx.arg(2), &increment)) {
    ctx.reply.Error(errors::kNotFloat);
    return;
  }
  value += increment;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply.Error(errors::kNotFloatOrInf);
    return;
  }
  std::string text = FormatLongDoubleHuman(value);
  // Redis stores the formatted text as a plain string (embstr when short), never as an int.
  EntryValue stored = EntryValue::RawString(text);
  if (text.size() <= kEmbstrMaxLength) stored.encoding = StringEncoding::kEmbstr;
  ctx.db().Put(ctx.arg(1), stored, std::nullopt, /*keep_ttl=*/true);
  MarkDirty(ctx);
  Notify(ctx, kNotifyString, "incrbyfloat", ctx.arg(1));
  // Logged as the value it produced, as Redis does: float arithmetic need not replay exactly.
  ctx.Propagate({"SET", ctx.arg(1), text, "KEEPTTL"});
  ctx.reply.Bulk(text);
}

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN], checked in Redis's order: the
// keys' types, the options, LEN with IDX, the strings' lengths, then the memory Redis's table
// would take ((|a| + 1) * (|b| + 1) uint32 cells), so the same calls fail; Goblin's own table
// takes 1/32 of that (core/lcs.h).
void LcsCommand(CommandContext& ctx) {
  Database& db = ctx.db();
  const KeyEntry* first = db.FindForRead(ctx.arg(1), ctx.now_ms);
  const KeyEntry* second = db.FindForRead(ctx.arg(2), ctx.now_ms);
  if ((first != nullptr && first->type() != ValueType::kString) ||
      (second != nullptr && second->type() != ValueType::kString)) {
    ctx.reply.Error("ERR The specified keys must contain string values");
    return;
  }
  bool want_length = false, want_ranges = false, with_match_length = false;
  int64_t min_match_length = 0;
  for (size_t j = 3; j < ctx.argc(); ++j) {
    const std::string_view option = ctx.arg(j);
    if (EqualsIgnoreCase(option, "idx")) {
      want_ranges = true;
    } else if (EqualsIgnoreCase(option, "len")) {
      want_length = true;
    } else if (EqualsIgnoreCase(option, "withmatchlen")) {
      with_match_length = true;
    } else if (EqualsIgnoreCase(option, "minmatchlen") && j + 1 < ctx.argc()) {
      if (!ParseIntegerArg(ctx, ctx.arg(++j), &min_match_length)) return;
      min_match_length = std::max<int64_t>(min_match_length, 0);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (want_length && want_ranges) {
    ctx.reply.Error("ERR If you want both the length and indexes, please just use IDX.");
    return;
  }
  char first_scratch[kInt64TextMax], second_scratch[kInt64TextMax];
  const std::string_view a = first ? first->string_value(first_scratch) : std::string_view();
  const std::string_view b = second ? second->string_value(second_scratch) : std::string_view();
  if (a.size() >= UINT32_MAX - 1 || b.size() >= UINT32_MAX - 1) {
    ctx.reply.Error("ERR String too long for LCS");
    return;
  }
  const auto redis_table_bytes = static_cast<unsigned __int128>(a.size() + 1) * (b.size() + 1) * 4;
  if (redis_table_bytes > static_cast<uint64_t>(ctx.server.config.proto_max_bulk_len)) {
    ctx.reply.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  if (want_length) {
    ctx.reply.Integer(LcsLength(a, b));
    return;
  }
  const LcsMatches matches = LcsWalk(a, b);
  if (!want_ranges) {
    ctx.reply.Bulk(matches.text);
    return;
  }
  auto shown = [&](const LcsRange& range) {
    return min_match_length == 0 || range.length() >= min_match_length;
  };
  ctx.reply.Map(2);
  ctx.reply.Bulk("matches");
  ctx.reply.Array(
      static_cast<size_t>(std::count_if(matches.ranges.begin(), matches.ranges.end(), shown)));
  for (const LcsRange& range : matches.ranges) {
    if (!shown(range)) continue;
    ctx.reply.Array(with_match_length ? 3 : 2);
    ctx.reply.Array(2);
    ctx.reply.Integer(range.a_start);
    ctx.reply.Integer(range.a_end);
    ctx.reply.Array(2);
    ctx.reply.Integer(range.b_start);
    ctx.reply.Integer(range.b_end);
    if (with_match_length) ctx.reply.Integer(range.length());
  }
  ctx.reply.Bulk("len");
  ctx.reply.Integer(static_cast<int64_t>(matches.text.size()));
}

}  // namespace

void RegisterStringCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kWriteFast = kWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "string", kAclString};
  add("get", 2, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, GetCommand,
      "Returns the string value of a key.", "1.0.0", "O(1)", "key");
  Command* set = add(
      "set", -3, kWrite,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags, KeyBegin::Index(1),
               KeyFind::Range(0, 1, 0), "RW and ACCESS due to the optional `GET` argument"}},
      SetCommand,
      "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
      "1.0.0", "O(1)",
      "key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | "
      "IFDNE ifdne-digest] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | "
      "PXAT unix-time-milliseconds | KEEPTTL]");
  set->history = {{"2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."},
                  {"6.0.0", "Added the `KEEPTTL` option."},
                  {"6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."},
                  {"7.0.0", "Allowed the `NX` and `GET` options to be used together."},
                  {"8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."}};
  // Redis types the digests of IFDEQ and IFDNE as integers though they are written in hex.
  set->arguments = {
      docs::Key("key", 0), docs::String("value"),
      docs::Optional(
          docs::OneOf("condition", {docs::Token("nx", "NX"), docs::Token("xx", "XX"),
                                    docs::String("ifeq-value", "IFEQ").Since("8.4.0"),
                                    docs::String("ifne-value", "IFNE").Since("8.4.0"),
                                    docs::Integer("ifdeq-digest", "IFDEQ").Since("8.4.0"),
                                    docs::Integer("ifdne-digest", "IFDNE").Since("8.4.0")}))
          .Since("2.6.12"),
      docs::Optional(docs::Token("get", "GET")).Since("6.2.0"),
      docs::Optional(docs::OneOf("expiration",
                                 {docs::Integer("seconds", "EX").Since("2.6.12"),
                                  docs::Integer("milliseconds", "PX").Since("2.6.12"),
                                  docs::UnixTime("unix-time-seconds", "EXAT").Since("6.2.0"),
                                  docs::UnixTime("unix-time-milliseconds", "PXAT").Since("6.2.0"),
                                  docs::Token("keepttl", "KEEPTTL").Since("6.0.0")}))};
  add("setnx", 3, kWriteFast, {KeyAt(1, kKeyOW | kKeyInsert)}, SetnxCommand,
      "Set the string value of a key only when the key doesn't exist.", "1.0.0", "O(1)",
      "key value");
  add("setex", 4, kWrite, {KeyAt(1, kKeyOW | kKeyUpdate)}, SetexCommand,
      "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
      "2.0.0", "O(1)", "key seconds value");
  add("psetex", 4, kWrite, {KeyAt(1, kKeyOW | kKeyUpdate)}, PsetexCommand,
      "Sets both string value and expiration time in milliseconds of a key. The key is created "
      "if it doesn't exist.",
      "2.6.0", "O(1)", "key milliseconds value");
  add("getset", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, GetsetCommand,
      "Returns the previous string value of a key after setting it to a new value.", "1.0.0",
      "O(1)", "key value");
  add("getdel", 2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)},
      GetdelCommand, "Returns the string value of a key after deleting the key.", "6.2.0", "O(1)",
      "key");
  Command* digest = add("digest", 2, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, DigestCommand,
                        "Returns the XXH3 hash of a string value.", "8.4.0",
                        "O(N) where N is the length of the string value.", "key");
  digest->arguments = {docs::Key("key", 0)};
  // DELEX without a condition removes the key blindly, with one it reads the value first: the
  // flags of a call depend on its arguments, as SET's do.
  Command* delex =
      add("delex", -2, kCmdWrite | kCmdFast,
          {KeySpec{kKeyRW | kKeyDelete | kKeyVariableFlags, KeyBegin::Index(1),
                   KeyFind::Range(0, 1, 0)}},
          DelexCommand,
          "Conditionally removes the specified key based on value or digest comparison.", "8.4.0",
          "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
          "key [IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest]");
  delex->arguments = {
      docs::Key("key", 0),
      docs::Optional(docs::OneOf(
          "condition",
          {docs::String("ifeq-value", "IFEQ"), docs::String("ifne-value", "IFNE"),
           docs::Integer("ifdeq-digest", "IFDEQ"), docs::Integer("ifdne-digest", "IFDNE")}))};
  add("getex", -2, kCmdWrite | kCmdFast,
      {KeySpec{kKeyRW | kKeyAccess | kKeyUpdate, KeyBegin::Index(1), KeyFind::Range(0, 1, 0),
               "RW and UPDATE because it changes the TTL"}},
      GetexCommand, "Returns the string value of a key after setting its expiration time.", "6.2.0",
      "O(1)",
      "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds "
      "| PERSIST]");
  add("mget", -2, kReadFast,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, MgetCommand,
      "Atomically returns the string values of one or more keys.", "1.0.0",
      "O(N) where N is the number of keys to retrieve.", "key [key ...]",
      {"request_policy:multi_shard"});
  add("mset", -3, kWrite,
      {KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Index(1), KeyFind::Range(-1, 2, 0)}}, MsetCommand,
      "Atomically creates or modifies the string values of one or more keys.", "1.0.1",
      "O(N) where N is the number of keys to set.", "key value [key value ...]",
      {"request_policy:multi_shard", "response_policy:all_succeeded"});
  add("msetnx", -3, kWrite,
      {KeySpec{kKeyOW | kKeyInsert, KeyBegin::Index(1), KeyFind::Range(-1, 2, 0)}}, MsetnxCommand,
      "Atomically modifies the string values of one or more keys only when all keys don't "
      "exist.",
      "1.0.1", "O(N) where N is the number of keys to set.", "key value [key value ...]",
      {"request_policy:multi_shard", "response_policy:agg_min"});
  Command* msetex = add(
      "msetex", -4, kWrite,
      {KeySpec{kKeyOW | kKeyUpdate, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 2)}}, MsetexCommand,
      "Atomically sets multiple string keys with a shared expiration in a single operation. "
      "Supports flexible argument parsing where condition and expiration flags can appear in "
      "any order.",
      "8.4.0", "O(N) where N is the number of keys to set.",
      "numkeys key value [key value ...] [NX | XX] [EX seconds | PX milliseconds | "
      "EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]",
      {"request_policy:multi_shard", "response_policy:all_succeeded"});
  msetex->arguments = {
      docs::Integer("numkeys"),
      docs::Multiple(docs::Block("data", {docs::Key("key", 0), docs::String("value")})),
      docs::Optional(docs::OneOf("condition", {docs::Token("nx", "NX"), docs::Token("xx", "XX")})),
      docs::Expiration(docs::Token("keepttl", "KEEPTTL"))};
  add("append", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, AppendCommand,
      "Appends a string to the value of a key. Creates the key if it doesn't exist.", "2.0.0",
      "O(1).", "key value");
  add("strlen", 2, kReadFast, {KeyAt(1, kKeyRO)}, StrlenCommand,
      "Returns the length of a string value.", "2.2.0", "O(1)", "key");
  add("getrange", 4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, GetrangeCommand,
      "Returns a substring of the string stored at a key.", "2.4.0",
      "O(N) where N is the length of the returned string.", "key start end");
  add("substr", 4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, GetrangeCommand,
      "Returns a substring from a string value.", "1.0.0",
      "O(N) where N is the length of the returned string.", "key start end");
  add("setrange", 4, kWrite, {KeyAt(1, kKeyRW | kKeyUpdate)}, SetrangeCommand,
      "Overwrites a part of a string value with another by an offset. Creates the key if it "
      "doesn't exist.",
      "2.2.0", "O(1), not counting the time taken to copy the new string in place.",
      "key offset value");
  add("incr", 2, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, IncrCommand,
      "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't "
      "exist.",
      "1.0.0", "O(1)", "key");
  add("decr", 2, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, DecrCommand,
      "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't "
      "exist.",
      "1.0.0", "O(1)", "key");
  add("incrby", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, IncrbyCommand,
      "Increments the integer value of a key by a number. Uses 0 as initial value if the key "
      "doesn't exist.",
      "1.0.0", "O(1)", "key increment");
  add("decrby", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, DecrbyCommand,
      "Decrements a number from the integer value of a key. Uses 0 as initial value if the key "
      "doesn't exist.",
      "1.0.0", "O(1)", "key decrement");
  add("incrbyfloat", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)},
      IncrbyfloatCommand,
      "Increment the floating point value of a key by a number. Uses 0 as initial value if the "
      "key doesn't exist.",
      "2.6.0", "O(1)", "key increment");
  add("lcs", -3, kRead, {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(1, 1, 0)}},
      LcsCommand, "Finds the longest common substring.", "7.0.0",
      "O(N*M) where N and M are the lengths of s1 and s2, respectively",
      "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]");
}

}  // namespace goblin
