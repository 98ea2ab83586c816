// Generic key commands and expiry: DEL UNLINK EXISTS TYPE RENAME RENAMENX KEYS SCAN RANDOMKEY
// DBSIZE FLUSHDB FLUSHALL MOVE SWAPDB COPY TOUCH OBJECT, EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL
// PTTL EXPIRETIME PEXPIRETIME PERSIST.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/glob.h"
#include "core/string_number.h"
#include "core/value_types.h"
#include "server/errors.h"
#include "server/persistence.h"

namespace goblin {

namespace {

void DelCommand(CommandContext& ctx) {
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    if (ctx.db().Find(ctx.arg(i), ctx.now_ms) != nullptr && ctx.db().Delete(ctx.arg(i))) {
      ++deleted;
      Notify(ctx, kNotifyGeneric, "del", ctx.arg(i));
    }
  }
  MarkDirty(ctx, static_cast<uint64_t>(deleted));
  ctx.reply.Integer(deleted);
}

void ExistsCommand(CommandContext& ctx) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    if (ctx.db().FindForRead(ctx.arg(i), ctx.now_ms) != nullptr) ++count;
  }
  ctx.reply.Integer(count);
}

void TypeCommand(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().FindForRead(ctx.arg(1), ctx.now_ms);
  ctx.reply.Simple(entry == nullptr ? "none" : InfoOf(entry->type()).name);
}

void RenameGeneric(CommandContext& ctx, bool nx) {
  Database& db = ctx.db();
  if (db.Find(ctx.arg(1), ctx.now_ms) == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  if (ctx.arg(1) == ctx.arg(2)) {
    if (nx) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Ok();
    }
    return;
  }
  if (nx && db.Find(ctx.arg(2), ctx.now_ms) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // Redis deletes a target that exists and adds the key anew: `new` either way.
  if (db.Find(ctx.arg(2), ctx.now_ms) != nullptr) Notify(ctx, kNotifyNew, "new", ctx.arg(2));
  uint32_t stamp = 0;  // the key keeps its access stamp under its new name, as in Redis
  KeyEntry* source = db.Take(ctx.arg(1), &stamp);
  db.Adopt(KeyEntry::WithKey(source, ctx.arg(2)), stamp);
  KeyEntry::FreeBlock(source);
  MarkDirty(ctx);
  Notify(ctx, kNotifyGeneric, "rename_from", ctx.arg(1));
  Notify(ctx, kNotifyGeneric, "rename_to", ctx.arg(2));
  if (nx) {
    ctx.reply.Integer(1);
  } else {
    ctx.reply.Ok();
  }
}

void RenameCommand(CommandContext& ctx) { RenameGeneric(ctx, false); }
void RenamenxCommand(CommandContext& ctx) { RenameGeneric(ctx, true); }

void KeysCommand(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  bool all = pattern == "*";
  std::vector<std::string> keys;
  // Names beyond what the client may still receive are not copied: the reply stops at its
  // limit anyway, and the client is closed for it (reply_builder.h).
  const size_t room = ctx.reply.room();
  size_t bytes = 0;
  ctx.db().ForEach([&](const KeyEntry* entry) {
    if (bytes > room || Database::Expired(entry, ctx.now_ms)) return;
    if (all || GlobMatch(pattern, entry->key())) {
      keys.emplace_back(entry->key());
      bytes += entry->key().size();
    }
  });
  ctx.reply.Array(keys.size());
  for (const std::string& key : keys) ctx.reply.Bulk(key);
}

void ScanCommand(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.arg(1), &cursor)) return;
  ScanOptions options;
  if (!ParseScanOptions(ctx, 2, kScanType, &options)) return;
  // An unknown type name matches no key (Redis keeps this for compatibility rather than
  // failing the command).
  std::optional<ValueType> type_filter;
  if (options.has_type) {
    if (const ValueTypeInfo* info = ValueTypeNamed(options.type_name)) type_filter = info->type;
  }
  const bool unknown_type = options.has_type && !type_filter;
  const int64_t count = options.count;
  Database& db = ctx.db();
  ctx.server.effects.LeaveUnwrapped();
  std::vector<std::string> keys;
  // Like Redis, visit about COUNT entries, bounded so a sparse pattern cannot stall the loop.
  size_t visited = 0;
  const size_t budget = static_cast<size_t>(std::min<int64_t>(count, 1 << 20));
  do {
    cursor = db.Scan(cursor, [&](KeyEntry* entry) {
      ++visited;
      if (options.Matches(entry->key())) keys.emplace_back(entry->key());
    });
  } while (cursor != 0 && visited < budget);
  // As Redis, after the pattern: TYPE looks each key up as a read, then a key past its deadline
  // is expired here (and announced) rather than returned; neither counts as an access.
  std::erase_if(keys, [&](const std::string& key) {
    if (options.has_type) {
      const KeyEntry* entry = db.FindForRead(key, ctx.now_ms, /*touch=*/false);
      return unknown_type || entry == nullptr || entry->type() != *type_filter;
    }
    return db.Find(key, ctx.now_ms, /*touch=*/false) == nullptr;
  });
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(cursor));
  ctx.reply.Array(keys.size());
  for (const std::string& key : keys) ctx.reply.Bulk(key);
}

void RandomkeyCommand(CommandContext& ctx) {
  Database& db = ctx.db();
  ctx.server.effects.LeaveUnwrapped();
  // Expired keys met on the way are deleted; give up after a bounded number of tries, as Redis
  // does when every key is volatile and expired.
  for (int tries = 0; tries < 100 && db.size() > 0; ++tries) {
    KeyEntry* entry = db.Random(ctx.server.Random64());
    if (entry == nullptr) break;
    if (!Database::Expired(entry, ctx.now_ms)) {
      ctx.reply.Bulk(entry->key());
      return;
    }
    std::string key(entry->key());
    db.Find(key, ctx.now_ms, /*touch=*/false);  // deletes it
  }
  ctx.reply.Null();
}

void DbsizeCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.db().size()));
}

bool ParseFlushMode(CommandContext& ctx) {
  if (ctx.argc() > 2 || (ctx.argc() == 2 && !EqualsIgnoreCase(ctx.arg(1), "sync") &&
                         !EqualsIgnoreCase(ctx.arg(1), "async"))) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

void FlushdbCommand(CommandContext& ctx) {
  if (!ParseFlushMode(ctx)) return;
  MarkDirty(ctx, ctx.db().size());
  // Logged even when the database was empty, as Redis forces it.
  ctx.server.effects.LogUnchanged();
  ctx.server.tracking.InvalidateAll();
  ctx.db().Clear();
  ctx.reply.Ok();
}

void FlushallCommand(CommandContext& ctx) {
  if (!ParseFlushMode(ctx)) return;
  for (size_t i = 0; i < ctx.server.database_count(); ++i) {
    MarkDirty(ctx, ctx.server.db(static_cast<int>(i)).size());
  }
  ctx.server.FlushAll();
  // As Redis: a snapshot being written of the old keyspace is stopped, and with save rules the
  // emptied keyspace is saved at once, so a restart does not bring the old data back; and
  // FLUSHALL always reaches the append-only file.
  ctx.server.persistence->StopSnapshotChild();
  if (!ctx.server.config.save.empty()) ctx.server.persistence->Save();
  MarkDirty(ctx);
  ctx.reply.Ok();
}

// A database index argument; replies Redis's errors.
bool ParseDbIndex(CommandContext& ctx, std::string_view text, int* index) {
  int value;
  if (!ParseInt32Arg(ctx, text, &value)) return false;
  if (value < 0 || value >= static_cast<int64_t>(ctx.server.database_count())) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return false;
  }
  *index = value;
  return true;
}

void MoveCommand(CommandContext& ctx) {
  if (ctx.server.cluster_mode != nullptr) {
    ctx.reply.Error("ERR MOVE is not allowed in cluster mode");
    return;
  }
  int target;
  if (!ParseDbIndex(ctx, ctx.arg(2), &target)) return;
  if (target == ctx.client.db) {
    ctx.reply.Error(errors::kSameObject);
    return;
  }
  Database& source = ctx.db();
  Database& destination = ctx.server.db(target);
  if (source.Find(ctx.arg(1), ctx.now_ms) == nullptr ||
      destination.Find(ctx.arg(1), ctx.now_ms) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  uint32_t stamp = 0;
  KeyEntry* moved = source.Take(ctx.arg(1), &stamp);
  destination.Adopt(moved, stamp);
  MarkDirty(ctx);
  Notify(ctx, kNotifyGeneric, "move_from", ctx.arg(1));
  NotifyIn(ctx, target, kNotifyGeneric, "move_to", ctx.arg(1));
  ctx.reply.Integer(1);
}

void SwapdbCommand(CommandContext& ctx) {
  if (ctx.server.cluster_mode != nullptr) {
    ctx.reply.Error("ERR SWAPDB is not allowed in cluster mode");
    return;
  }
  int64_t a, b;
  if (!ParseInt64(ctx.arg(1), &a) || a < INT32_MIN || a > INT32_MAX) {
    ctx.reply.Error("ERR invalid first DB index");
    return;
  }
  if (!ParseInt64(ctx.arg(2), &b) || b < INT32_MIN || b > INT32_MAX) {
    ctx.reply.Error("ERR invalid second DB index");
    return;
  }
  int64_t count = static_cast<int64_t>(ctx.server.database_count());
  if (a < 0 || a >= count || b < 0 || b >= count) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return;
  }
  if (a != b) ctx.server.SwapDatabases(static_cast<int>(a), static_cast<int>(b));
  MarkDirty(ctx);
  ctx.reply.Ok();
}

void CopyCommand(CommandContext& ctx) {
  bool replace = false;
  int target = ctx.client.db;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(ctx.arg(i), "db") && i + 1 < ctx.argc()) {
      if (!ParseDbIndex(ctx, ctx.arg(++i), &target)) return;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (ctx.server.cluster_mode != nullptr && (ctx.client.db != 0 || target != 0)) {
    ctx.reply.Error("ERR Copying to another database is not allowed in cluster mode");
    return;
  }
  if (target == ctx.client.db && ctx.arg(1) == ctx.arg(2)) {
    ctx.reply.Error(errors::kSameObject);
    return;
  }
  KeyEntry* source = ctx.db().FindForRead(ctx.arg(1), ctx.now_ms);
  if (source == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  Database& destination = ctx.server.db(target);
  const bool replaced = destination.Find(ctx.arg(2), ctx.now_ms) != nullptr;
  if (replaced && !replace) {
    ctx.reply.Integer(0);
    return;
  }
  // As RENAME: a replaced target is deleted and added anew.
  if (replaced) NotifyIn(ctx, target, kNotifyNew, "new", ctx.arg(2));
  destination.Adopt(KeyEntry::Clone(source, ctx.arg(2), /*keep_expire=*/true));
  MarkDirty(ctx);
  NotifyIn(ctx, target, kNotifyGeneric, "copy_to", ctx.arg(2));
  ctx.reply.Integer(1);
}

// --- OBJECT -------------------------------------------------------------------------------

KeyEntry* ObjectTarget(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().Find(ctx.arg(2), ctx.now_ms);
  if (entry == nullptr) ctx.reply.Null();
  return entry;
}

void ObjectEncodingCommand(CommandContext& ctx) {
  if (KeyEntry* entry = ObjectTarget(ctx)) ctx.reply.Bulk(entry->EncodingName());
}

void ObjectRefcountCommand(CommandContext& ctx) {
  KeyEntry* entry = ObjectTarget(ctx);
  if (entry == nullptr) return;
  // Redis shares the integer objects 0..9999; tools see them with refcount INT_MAX.
  const Config& config = ctx.server.config;
  bool sharing =
      config.maxmemory == 0 || (config.maxmemory_policy.find("lru") == std::string::npos &&
                                config.maxmemory_policy.find("lfu") == std::string::npos);
  bool shared = sharing && entry->type() == ValueType::kString &&
                entry->string_encoding() == StringEncoding::kInt && !entry->unshared_int() &&
                entry->int_value() >= 0 && entry->int_value() < 10000;
  ctx.reply.Integer(shared ? INT32_MAX : 1);
}

bool LfuPolicy(const CommandContext& ctx) { return ctx.server.access_clock.lfu; }

void ObjectIdletimeCommand(CommandContext& ctx) {
  KeyEntry* entry = ObjectTarget(ctx);
  if (entry == nullptr) return;
  if (LfuPolicy(ctx)) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    return;
  }
  const uint32_t stamp = ctx.db().AccessStamp(ctx.arg(2));
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.access_clock.IdleMs(stamp) / 1000));
}

void ObjectFreqCommand(CommandContext& ctx) {
  KeyEntry* entry = ObjectTarget(ctx);
  if (entry == nullptr) return;
  if (LfuPolicy(ctx)) {
    const uint32_t stamp = ctx.db().AccessStamp(ctx.arg(2));
    ctx.reply.Integer(ctx.server.access_clock.DecayedCounter(stamp));
    return;
  }
  ctx.reply.Error(
      "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
      "that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.");
}

void ObjectHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"ENCODING <key>",
                  "    Return the kind of internal representation used in order to store the value",
                  "    associated with a <key>.", "FREQ <key>",
                  "    Return the access frequency index of the <key>. The returned integer is",
                  "    proportional to the logarithm of the recent access frequency of the key.",
                  "IDLETIME <key>",
                  "    Return the idle time of the <key>, that is the approximated number of",
                  "    seconds elapsed since the last access to the key.", "REFCOUNT <key>",
                  "    Return the number of references of the value associated with the specified",
                  "    <key>."});
}

void TouchCommand(CommandContext& ctx) { ExistsCommand(ctx); }

// --- Expiry -------------------------------------------------------------------------------

enum ExpireFlag : uint32_t { kExpireNx = 1, kExpireXx = 2, kExpireGt = 4, kExpireLt = 8 };

void ExpireGeneric(CommandContext& ctx, int64_t base_ms, bool seconds) {
  uint32_t flags = 0;
  for (size_t i = 3; i < ctx.argc(); ++i) {
    std::string_view option = ctx.arg(i);
    if (EqualsIgnoreCase(option, "nx")) {
      flags |= kExpireNx;
    } else if (EqualsIgnoreCase(option, "xx")) {
      flags |= kExpireXx;
    } else if (EqualsIgnoreCase(option, "gt")) {
      flags |= kExpireGt;
    } else if (EqualsIgnoreCase(option, "lt")) {
      flags |= kExpireLt;
    } else {
      ctx.reply.Error("ERR Unsupported option " + errors::Quote(option));
      return;
    }
  }
  if ((flags & kExpireNx) && (flags & (kExpireXx | kExpireGt | kExpireLt))) {
    ctx.reply.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return;
  }
  if ((flags & kExpireGt) && (flags & kExpireLt)) {
    ctx.reply.Error("ERR GT and LT options at the same time are not compatible");
    return;
  }
  int64_t when;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &when)) return;
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
      ReplyInvalidExpire(ctx);
      return;
    }
    when *= 1000;
  }
  if (when > INT64_MAX - base_ms) {
    ReplyInvalidExpire(ctx);
    return;
  }
  when += base_ms;
  Database& db = ctx.db();
  KeyEntry* entry = db.Find(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  int64_t current = entry->has_expire() ? entry->expire_ms() : -1;
  if (((flags & kExpireNx) && current != -1) || ((flags & kExpireXx) && current == -1) ||
      ((flags & kExpireGt) && (current == -1 || when <= current)) ||
      ((flags & kExpireLt) && current != -1 && when >= current)) {
    ctx.reply.Integer(0);
    return;
  }
  MarkDirty(ctx);
  if (when <= ctx.now_ms) {
    db.Delete(ctx.arg(1));
    ctx.Propagate({ctx.server.config.lazyfree.expire ? "UNLINK" : "DEL", ctx.arg(1)});
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  } else {
    db.SetExpire(ctx.arg(1), when);
    // A relative time replays to another deadline: the log holds the absolute one, as
    // PEXPIREAT with the condition options as they arrived; PEXPIREAT itself is logged as is.
    if (ctx.propagating() && (seconds || base_ms != 0)) {
      const std::string when_text = std::to_string(when);
      std::vector<std::string_view> logged = {"PEXPIREAT", ctx.arg(1), when_text};
      for (size_t i = 3; i < ctx.argc(); ++i) logged.push_back(ctx.arg(i));
      ctx.Propagate(logged);
    }
    Notify(ctx, kNotifyGeneric, "expire", ctx.arg(1));
  }
  ctx.reply.Integer(1);
}

void ExpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, ctx.now_ms, true); }
void PexpireCommand(CommandContext& ctx) { ExpireGeneric(ctx, ctx.now_ms, false); }
void ExpireatCommand(CommandContext& ctx) { ExpireGeneric(ctx, 0, true); }
void PexpireatCommand(CommandContext& ctx) { ExpireGeneric(ctx, 0, false); }

void TtlGeneric(CommandContext& ctx, bool milliseconds, bool absolute) {
  KeyEntry* entry = ctx.db().FindForRead(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Integer(-2);
    return;
  }
  if (!entry->has_expire()) {
    ctx.reply.Integer(-1);
    return;
  }
  int64_t ttl = absolute ? entry->expire_ms() : entry->expire_ms() - ctx.now_ms;
  if (ttl < 0) ttl = 0;
  // Seconds round half up, as Redis's (ttl+500)/1000, without overflowing near INT64_MAX.
  ctx.reply.Integer(milliseconds ? ttl : ttl / 1000 + (ttl % 1000 >= 500 ? 1 : 0));
}

void TtlCommand(CommandContext& ctx) { TtlGeneric(ctx, false, false); }
void PttlCommand(CommandContext& ctx) { TtlGeneric(ctx, true, false); }
void ExpiretimeCommand(CommandContext& ctx) { TtlGeneric(ctx, false, true); }
void PexpiretimeCommand(CommandContext& ctx) { TtlGeneric(ctx, true, true); }

void PersistCommand(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().Find(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr || !entry->has_expire()) {
    ctx.reply.Integer(0);
    return;
  }
  ctx.db().SetExpire(ctx.arg(1), std::nullopt);
  MarkDirty(ctx);
  Notify(ctx, kNotifyGeneric, "persist", ctx.arg(1));
  ctx.reply.Integer(1);
}

}  // namespace

void RegisterKeyCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite;
  constexpr uint32_t kWriteFast = kCmdWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "generic", kAclKeyspace};
  add("del", -2, kWrite,
      {KeySpec{kKeyRM | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, DelCommand,
      "Deletes one or more keys.", "1.0.0",
      "O(N) where N is the number of keys that will be removed.", "key [key ...]",
      {"request_policy:multi_shard", "response_policy:agg_sum"});
  add("unlink", -2, kWriteFast,
      {KeySpec{kKeyRM | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, DelCommand,
      "Asynchronously deletes one or more keys.", "4.0.0",
      "O(1) for each key removed regardless of its size.", "key [key ...]",
      {"request_policy:multi_shard", "response_policy:agg_sum"});
  add("exists", -2, kReadFast | kCmdNoTouch,
      {KeySpec{kKeyRO, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, ExistsCommand,
      "Determines whether one or more keys exist.", "1.0.0",
      "O(N) where N is the number of keys to check.", "key [key ...]",
      {"request_policy:multi_shard", "response_policy:agg_sum"});
  add("type", 2, kReadFast | kCmdNoTouch, {KeyAt(1, kKeyRO)}, TypeCommand,
      "Determines the type of value stored at a key.", "1.0.0", "O(1)", "key");
  add("rename", 3, kWrite,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyOW | kKeyUpdate)}, RenameCommand,
      "Renames a key and overwrites the destination.", "1.0.0", "O(1)", "key newkey");
  add("renamenx", 3, kWriteFast,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyOW | kKeyInsert)}, RenamenxCommand,
      "Renames a key only when the target key name doesn't exist.", "1.0.0", "O(1)", "key newkey");
  add.In(kAclKeyspace | kAclDangerous)(
      "keys", 2, kRead, {}, KeysCommand, "Returns all key names that match a pattern.", "1.0.0",
      "O(N) with N being the number of keys in the database.", "pattern",
      {"request_policy:all_shards", "nondeterministic_output_order"});
  add("scan", -2, kRead, {}, ScanCommand, "Iterates over the key names in the database.", "2.8.0",
      "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
      "the cursor to return back to 0.",
      "cursor [MATCH pattern] [COUNT count] [TYPE type]",
      {"nondeterministic_output", "request_policy:special"});
  add("randomkey", 1, kRead, {}, RandomkeyCommand, "Returns a random key name from the database.",
      "1.0.0", "O(1)", "", {"request_policy:all_shards", "nondeterministic_output"});
  add("dbsize", 1, kReadFast, {}, DbsizeCommand, "Returns the number of keys in the database.",
      "1.0.0", "O(1)", "", {"request_policy:all_shards", "response_policy:agg_sum"});
  CommandAdder server_add{table, "server"};
  server_add.In(kAclKeyspace | kAclDangerous)(
      "flushdb", -1, kWrite, {}, FlushdbCommand, "Remove all keys from the current database.",
      "1.0.0", "O(N) where N is the number of keys in the selected database", "[ASYNC | SYNC]",
      {"request_policy:all_shards", "response_policy:all_succeeded"});
  server_add.In(kAclKeyspace | kAclDangerous)(
      "flushall", -1, kWrite, {}, FlushallCommand, "Removes all keys from all databases.", "1.0.0",
      "O(N) where N is the total number of keys in all databases", "[ASYNC | SYNC]",
      {"request_policy:all_shards", "response_policy:all_succeeded"});
  add("move", 3, kWriteFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)}, MoveCommand,
      "Moves a key to another database.", "1.0.0", "O(1)", "key db");
  add.In(kAclKeyspace | kAclDangerous)(
      "swapdb", 3, kWriteFast, {}, SwapdbCommand, "Swaps two Redis databases.", "4.0.0",
      "O(N) where N is the count of clients watching or blocking on keys from both databases.",
      "index1 index2");
  add("copy", -3, kWrite | kCmdDenyOom,
      {KeyAt(1, kKeyRO | kKeyAccess), KeyAt(2, kKeyOW | kKeyUpdate)}, CopyCommand,
      "Copies the value of a key to a new key.", "6.2.0",
      "O(N) worst case for collections, where N is the number of nested items. O(1) for string "
      "values.",
      "source destination [DB destination-db] [REPLACE]");
  add("touch", -2, kReadFast, {KeySpec{kKeyRO, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}},
      TouchCommand,
      "Returns the number of existing keys out of those specified after updating the time they "
      "were last accessed.",
      "3.2.1", "O(N) where N is the number of keys that will be touched.", "key [key ...]",
      {"request_policy:multi_shard", "response_policy:agg_sum"});
  Command* object =
      add("object", -2, 0, {}, nullptr, "A container for object introspection commands.", "2.2.3",
          "Depends on subcommand.", "");
  add.Sub(object, "encoding", 3, kRead | kCmdNoTouch, {KeyAt(2, kKeyRO)}, ObjectEncodingCommand,
          "Returns the internal encoding of a Redis object.", "2.2.3", "O(1)", "key",
          {"nondeterministic_output"});
  add.Sub(object, "freq", 3, kRead | kCmdNoTouch, {KeyAt(2, kKeyRO)}, ObjectFreqCommand,
          "Returns the logarithmic access frequency counter of a Redis object.", "4.0.0", "O(1)",
          "key", {"nondeterministic_output"});
  add.Sub(object, "idletime", 3, kRead | kCmdNoTouch, {KeyAt(2, kKeyRO)}, ObjectIdletimeCommand,
          "Returns the time since the last access to a Redis object.", "2.2.3", "O(1)", "key",
          {"nondeterministic_output"});
  add.Sub(object, "refcount", 3, kRead | kCmdNoTouch, {KeyAt(2, kKeyRO)}, ObjectRefcountCommand,
          "Returns the reference count of a value of a key.", "2.2.3", "O(1)", "key",
          {"nondeterministic_output"});
  add.Sub(object, "help", 2, kCmdLoading | kCmdStale, {}, ObjectHelpCommand,
          "Returns helpful text about the different subcommands.", "6.2.0", "O(1)", "");

  add("expire", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, ExpireCommand,
      "Sets the expiration time of a key in seconds.", "1.0.0", "O(1)",
      "key seconds [NX | XX | GT | LT]");
  add("pexpire", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, PexpireCommand,
      "Sets the expiration time of a key in milliseconds.", "2.6.0", "O(1)",
      "key milliseconds [NX | XX | GT | LT]");
  add("expireat", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, ExpireatCommand,
      "Sets the expiration time of a key to a Unix timestamp.", "1.2.0", "O(1)",
      "key unix-time-seconds [NX | XX | GT | LT]");
  add("pexpireat", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, PexpireatCommand,
      "Sets the expiration time of a key to a Unix milliseconds timestamp.", "2.6.0", "O(1)",
      "key unix-time-milliseconds [NX | XX | GT | LT]");
  add("ttl", 2, kReadFast | kCmdNoTouch, {KeyAt(1, kKeyRO | kKeyAccess)}, TtlCommand,
      "Returns the expiration time in seconds of a key.", "1.0.0", "O(1)", "key",
      {"nondeterministic_output"});
  add("pttl", 2, kReadFast | kCmdNoTouch, {KeyAt(1, kKeyRO | kKeyAccess)}, PttlCommand,
      "Returns the expiration time in milliseconds of a key.", "2.6.0", "O(1)", "key",
      {"nondeterministic_output"});
  add("expiretime", 2, kReadFast | kCmdNoTouch, {KeyAt(1, kKeyRO | kKeyAccess)}, ExpiretimeCommand,
      "Returns the expiration time of a key as a Unix timestamp.", "7.0.0", "O(1)", "key");
  add("pexpiretime", 2, kReadFast | kCmdNoTouch, {KeyAt(1, kKeyRO | kKeyAccess)},
      PexpiretimeCommand, "Returns the expiration time of a key as a Unix milliseconds timestamp.",
      "7.0.0", "O(1)", "key");
  add("persist", 2, kWriteFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, PersistCommand,
      "Removes the expiration time of a key.", "2.2.0", "O(1)", "key");
}

}  // namespace goblin
