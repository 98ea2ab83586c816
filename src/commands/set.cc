// Set commands: SADD SREM SISMEMBER SMISMEMBER SCARD SMEMBERS SPOP SRANDMEMBER SMOVE SINTER
// SINTERCARD SINTERSTORE SUNION SUNIONSTORE SDIFF SDIFFSTORE SSCAN.
//
// Every command works on the PackedSet inside the key's SetObject (core/set_object.h). The
// conversion limits are read from the configuration at every write, so CONFIG SET applies to
// the next command. A command that removes the last member deletes the key. The set
// operations build their result as Redis does (an empty intset that grows through the usual
// conversions), so a stored result has the encoding Redis would give it.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/glob.h"
#include "core/set_object.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {
namespace {

// set-max-intset-entries / set-max-listpack-entries / set-max-listpack-value as they are now.
SetLimits SetLimitsOf(const CommandContext& ctx) { return SetLimitsOf(ctx.server.config); }

// The set at key. Returns false after replying WRONGTYPE; *set is nullptr when the key is
// missing. Reads count keyspace hits and misses.
bool LookupSet(CommandContext& ctx, std::string_view key, PackedSet** set, bool for_read) {
  KeyEntry* entry;
  *set = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kSet, &entry, for_read)) return false;
  if (entry != nullptr) *set = &static_cast<SetObject*>(entry->object())->set();
  return true;
}

// Stores a new, empty set under key in the form Redis's setTypeCreate picks for a first member
// and a size hint; the caller adds members before replying.
PackedSet* CreateSet(CommandContext& ctx, std::string_view key, std::string_view first_member,
                     size_t size_hint) {
  auto* object = new SetObject(PackedSet(first_member, size_hint, SetLimitsOf(ctx)));
  ctx.db().Put(key, EntryValue::Object(object), std::nullopt);
  return &object->set();
}

// After members left the set at key: announces event, deletes the key when it is empty
// (announcing del), else records the in-place change.
void AfterRemoval(CommandContext& ctx, std::string_view key, const PackedSet& set, uint64_t removed,
                  std::string_view event) {
  if (removed == 0) return;
  Notify(ctx, kNotifySet, event, key);
  if (set.empty()) {
    ctx.db().Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
  } else {
    ctx.db().Touch(key);
  }
  MarkDirty(ctx, removed);
}

// A whole set as SMEMBERS replies it: a set in RESP3, an array in RESP2.
void ReplyMembers(CommandContext& ctx, const PackedSet& set) {
  ctx.reply.Set(set.size());
  set.ForEach([&](std::string_view member) { ctx.reply.Bulk(member); });
}

// --- Single-key commands ----------------------------------------------------------------------

void SaddCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, false)) return;
  const SetLimits limits = SetLimitsOf(ctx);
  if (set == nullptr) {
    set = CreateSet(ctx, ctx.arg(1), ctx.arg(2), ctx.argc() - 2);
  } else {
    set->PrepareForInsert(ctx.argc() - 2, limits);
  }
  int64_t added = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) added += set->Add(ctx.arg(i), limits) ? 1 : 0;
  if (added > 0) {
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx, static_cast<uint64_t>(added));
    Notify(ctx, kNotifySet, "sadd", ctx.arg(1));
  }
  ctx.reply.Integer(added);
}

void SremCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, false)) return;
  int64_t removed = 0;
  if (set != nullptr) {
    for (size_t i = 2; i < ctx.argc() && !set->empty(); ++i) {
      removed += set->Remove(ctx.arg(i)) ? 1 : 0;
    }
    AfterRemoval(ctx, ctx.arg(1), *set, static_cast<uint64_t>(removed), "srem");
  }
  ctx.reply.Integer(removed);
}

void SismemberCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(2)) ? 1 : 0);
}

void SmismemberCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(i)) ? 1 : 0);
  }
}

void ScardCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  ctx.reply.Integer(set != nullptr ? static_cast<int64_t>(set->size()) : 0);
}

void SmembersCommand(CommandContext& ctx) {
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr) {
    ctx.reply.Set(0);
    return;
  }
  ReplyMembers(ctx, *set);
}

void SmoveCommand(CommandContext& ctx) {
  PackedSet* source;
  PackedSet* destination;
  // Redis looks both keys up, then replies 0 for a missing source before checking types.
  KeyEntry* source_entry = ctx.db().Find(ctx.arg(1), ctx.now_ms);
  ctx.db().Find(ctx.arg(2), ctx.now_ms);  // the destination's lookup (an access, or its expiry)
  if (source_entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (!LookupSet(ctx, ctx.arg(1), &source, false) ||
      !LookupSet(ctx, ctx.arg(2), &destination, false)) {
    return;
  }
  const std::string_view member = ctx.arg(3);
  if (ctx.arg(1) == ctx.arg(2)) {
    ctx.reply.Integer(source->Contains(member) ? 1 : 0);
    return;
  }
  if (!source->Remove(member)) {
    ctx.reply.Integer(0);
    return;
  }
  AfterRemoval(ctx, ctx.arg(1), *source, 1, "srem");
  if (destination == nullptr) {
    destination = CreateSet(ctx, ctx.arg(2), member, 1);
  }
  if (destination->Add(member, SetLimitsOf(ctx))) {
    ctx.db().Touch(ctx.arg(2));
    MarkDirty(ctx);
    Notify(ctx, kNotifySet, "sadd", ctx.arg(2));
  }
  ctx.reply.Integer(1);
}

// --- SPOP and SRANDMEMBER ---------------------------------------------------------------------

void SpopWithCount(CommandContext& ctx) {
  int64_t count;
  // Redis's getPositiveLongFromObjectOrReply with one message for text and negatives alike.
  if (!ParseInt64(ctx.arg(2), &count) || count < 0) {
    ctx.reply.Error(errors::kPositive);
    return;
  }
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, false)) return;
  if (set == nullptr || count == 0) {
    ctx.reply.Set(0);
    return;
  }
  if (static_cast<uint64_t>(count) >= set->size()) {
    ReplyMembers(ctx, *set);
    const uint64_t removed = set->size();
    Notify(ctx, kNotifySet, "spop", ctx.arg(1));
    ctx.db().Delete(ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
    MarkDirty(ctx, removed);
    ctx.Propagate({ctx.server.config.lazyfree.server_del ? "UNLINK" : "DEL", ctx.arg(1)});
    return;
  }
  std::vector<std::string> popped;
  popped.reserve(static_cast<size_t>(count));
  uint64_t random_state = ctx.server.Random64();
  set->RandomDistinct(static_cast<size_t>(count), &random_state,
                      [&](std::string_view member) { popped.emplace_back(member); });
  ctx.reply.Set(popped.size());
  for (const std::string& member : popped) {
    set->Remove(member);
    ctx.reply.Bulk(member);
  }
  AfterRemoval(ctx, ctx.arg(1), *set, popped.size(), "spop");
  // The effects record which members went, not the random draw: SREMs of up to 1024 members
  // each, as Redis 7.2 batches them.
  if (ctx.propagating()) {
    constexpr size_t kSremBatch = 1024;
    std::vector<std::string_view> srem;
    for (size_t first = 0; first < popped.size(); first += kSremBatch) {
      const size_t last = std::min(popped.size(), first + kSremBatch);
      srem.assign({"SREM", ctx.arg(1)});
      srem.insert(srem.end(), popped.begin() + first, popped.begin() + last);
      ctx.Propagate(srem);
    }
  }
}

void SpopCommand(CommandContext& ctx) {
  if (ctx.argc() == 3) {
    SpopWithCount(ctx);
    return;
  }
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, false)) return;
  if (set == nullptr) {
    ctx.reply.Null();
    return;
  }
  uint64_t random_state = ctx.server.Random64();
  std::string member;
  set->PopRandom(&random_state, &member);
  AfterRemoval(ctx, ctx.arg(1), *set, 1, "spop");
  ctx.reply.Bulk(member);
  ctx.Propagate({"SREM", ctx.arg(1), member});
}

void SrandmemberCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (ctx.argc() == 3) {
    int64_t count;
    if (!ParseRandomCount(ctx, &count)) return;
    PackedSet* set;
    if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
    if (set == nullptr || count == 0) {
      ctx.reply.Array(0);
      return;
    }
    uint64_t random_state = ctx.server.Random64();
    auto emit = [&](std::string_view member) { ctx.reply.Bulk(member); };
    if (count < 0) {
      ctx.reply.Array(static_cast<size_t>(-count));
      // In slices: the draws held at once stay few, and a reply past the client's limit stops
      // being drawn (reply_builder.h).
      for (uint64_t left = static_cast<uint64_t>(-count); left > 0 && !ctx.reply.over_limit();) {
        const size_t slice = std::min<uint64_t>(left, kRandomDrawSlice);
        set->RandomWithRepetition(slice, &random_state, emit);
        left -= slice;
      }
    } else {
      const size_t replied = std::min<uint64_t>(static_cast<uint64_t>(count), set->size());
      ctx.reply.Array(replied);
      set->RandomDistinct(replied, &random_state, emit);
    }
    return;
  }
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr) {
    ctx.reply.Null();
    return;
  }
  uint64_t random_state = ctx.server.Random64();
  set->RandomDistinct(1, &random_state, [&](std::string_view member) { ctx.reply.Bulk(member); });
}

// --- Set operations ---------------------------------------------------------------------------

// The sets named by argv[first, first + count): nullptr for a missing key. Returns false after
// replying WRONGTYPE (every key is looked up first, as Redis does). The STORE forms read their
// sources as reads too (a miss counts and is announced), as in Redis 7.
bool LookupSets(CommandContext& ctx, size_t first, size_t count, bool for_read,
                std::vector<const PackedSet*>* sets) {
  sets->clear();
  for (size_t i = first; i < first + count; ++i) {
    PackedSet* set;
    if (!LookupSet(ctx, ctx.arg(i), &set, for_read)) return false;
    sets->push_back(set);
  }
  return true;
}

// Stores result under key (or deletes the key when it is empty), replies its size and
// announces event (or del).
void StoreResult(CommandContext& ctx, std::string_view key, PackedSet&& result,
                 std::string_view event) {
  if (result.empty()) {
    ctx.reply.Integer(0);
    if (ctx.db().Delete(key)) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyGeneric, "del", key);
    }
    return;
  }
  const int64_t size = static_cast<int64_t>(result.size());
  ctx.db().Put(key, EntryValue::Object(new SetObject(std::move(result))), std::nullopt);
  MarkDirty(ctx);
  Notify(ctx, kNotifySet, event, key);
  ctx.reply.Integer(size);
}

// Calls fn(member) for each member of the intersection of sets (none missing), stopping after
// `limit` members when limit > 0. Walks the smallest set and probes the others.
template <typename Fn>
void ForEachInIntersection(std::vector<const PackedSet*> sets, uint64_t limit, Fn&& fn) {
  std::sort(sets.begin(), sets.end(),
            [](const PackedSet* a, const PackedSet* b) { return a->size() < b->size(); });
  uint64_t found = 0;
  std::vector<std::string> members;
  members.reserve(sets[0]->size());
  sets[0]->ForEach([&](std::string_view member) { members.emplace_back(member); });
  for (const std::string& member : members) {
    if (limit > 0 && found >= limit) return;
    bool everywhere = true;
    for (size_t i = 1; i < sets.size() && everywhere; ++i) everywhere = sets[i]->Contains(member);
    if (!everywhere) continue;
    ++found;
    fn(member);
  }
}

// SINTER and SINTERSTORE: keys are argv[first..]; destination is empty for SINTER.
void InterGeneric(CommandContext& ctx, size_t first, std::string_view destination) {
  const bool store = !destination.empty() || first == 2;
  std::vector<const PackedSet*> sets;
  if (!LookupSets(ctx, first, ctx.argc() - first, true, &sets)) return;
  const bool any_missing = std::find(sets.begin(), sets.end(), nullptr) != sets.end();
  if (any_missing) {
    if (store) {
      StoreResult(ctx, destination, PackedSet(), "sinterstore");
    } else {
      ctx.reply.Set(0);
    }
    return;
  }
  if (store) {
    const SetLimits limits = SetLimitsOf(ctx);
    PackedSet result;
    ForEachInIntersection(sets, 0, [&](std::string_view member) { result.Add(member, limits); });
    StoreResult(ctx, destination, std::move(result), "sinterstore");
    return;
  }
  std::vector<std::string> members;
  ForEachInIntersection(sets, 0, [&](std::string_view member) { members.emplace_back(member); });
  ctx.reply.Set(members.size());
  for (const std::string& member : members) ctx.reply.Bulk(member);
}

void SinterCommand(CommandContext& ctx) { InterGeneric(ctx, 1, {}); }
void SinterstoreCommand(CommandContext& ctx) { InterGeneric(ctx, 2, ctx.arg(1)); }

void SintercardCommand(CommandContext& ctx) {
  int64_t numkeys;
  if (!ParseInt64(ctx.arg(1), &numkeys) || numkeys < 1) {
    ctx.reply.Error(errors::kNumkeysNotPositive);
    return;
  }
  if (static_cast<uint64_t>(numkeys) > ctx.argc() - 2) {
    ctx.reply.Error(errors::kTooManyKeys);
    return;
  }
  int64_t limit = 0;
  for (size_t i = 2 + static_cast<size_t>(numkeys); i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "limit") && i + 1 < ctx.argc()) {
      if (!ParseInt64(ctx.arg(++i), &limit) || limit < 0) {
        ctx.reply.Error(errors::kNegativeLimit);
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  std::vector<const PackedSet*> sets;
  if (!LookupSets(ctx, 2, static_cast<size_t>(numkeys), true, &sets)) return;
  int64_t cardinality = 0;
  if (std::find(sets.begin(), sets.end(), nullptr) == sets.end()) {
    ForEachInIntersection(sets, static_cast<uint64_t>(limit),
                          [&](std::string_view) { ++cardinality; });
  }
  ctx.reply.Integer(cardinality);
}

enum class SetOperation { kUnion, kDiff };

// SUNION, SDIFF and their STORE forms: keys are argv[first..]; the result is built as an
// intset that converts as it grows, as in Redis.
void UnionDiffGeneric(CommandContext& ctx, size_t first, SetOperation operation, bool store) {
  std::vector<const PackedSet*> sets;
  if (!LookupSets(ctx, first, ctx.argc() - first, true, &sets)) return;
  const SetLimits limits = SetLimitsOf(ctx);
  PackedSet result;
  if (operation == SetOperation::kUnion) {
    for (const PackedSet* set : sets) {
      if (set != nullptr)
        set->ForEach([&](std::string_view member) { result.Add(member, limits); });
    }
  } else if (sets[0] != nullptr) {
    sets[0]->ForEach([&](std::string_view member) {
      for (size_t i = 1; i < sets.size(); ++i) {
        if (sets[i] != nullptr && sets[i]->Contains(member)) return;
      }
      result.Add(member, limits);
    });
  }
  if (store) {
    StoreResult(ctx, ctx.arg(1), std::move(result),
                operation == SetOperation::kUnion ? "sunionstore" : "sdiffstore");
  } else {
    ReplyMembers(ctx, result);
  }
}

void SunionCommand(CommandContext& ctx) { UnionDiffGeneric(ctx, 1, SetOperation::kUnion, false); }
void SunionstoreCommand(CommandContext& ctx) {
  UnionDiffGeneric(ctx, 2, SetOperation::kUnion, true);
}
void SdiffCommand(CommandContext& ctx) { UnionDiffGeneric(ctx, 1, SetOperation::kDiff, false); }
void SdiffstoreCommand(CommandContext& ctx) { UnionDiffGeneric(ctx, 2, SetOperation::kDiff, true); }

// --- SSCAN ------------------------------------------------------------------------------------

void SscanCommand(CommandContext& ctx) {
  uint64_t cursor;
  if (!ParseScanCursor(ctx, ctx.arg(2), &cursor)) return;
  PackedSet* set;
  if (!LookupSet(ctx, ctx.arg(1), &set, true)) return;
  if (set == nullptr) {
    ctx.reply.Raw("*2\r\n$1\r\n0\r\n*0\r\n");
    return;
  }
  ScanOptions options;
  if (!ParseScanOptions(ctx, 3, kScanMatchCount, &options)) return;
  std::vector<std::string> found;
  const uint64_t next =
      set->Scan(cursor, static_cast<size_t>(options.count), [&](std::string_view member) {
        if (options.Matches(member)) found.emplace_back(member);
      });
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(next));
  ctx.reply.Array(found.size());
  for (const std::string& member : found) ctx.reply.Bulk(member);
}

}  // namespace

void RegisterSetCommands(CommandTable* table) {
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kWriteFast = kWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  CommandAdder add{table, "set", kAclSet};
  add("sadd", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, SaddCommand,
      "Adds one or more members to a set. Creates the key if it doesn't exist.", "1.0.0",
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.",
      "key member [member ...]");
  add("srem", -3, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, SremCommand,
      "Removes one or more members from a set. Deletes the set if the last member was removed.",
      "1.0.0", "O(N) where N is the number of members to be removed.", "key member [member ...]");
  add("sismember", 3, kReadFast, {KeyAt(1, kKeyRO)}, SismemberCommand,
      "Determines whether a member belongs to a set.", "1.0.0", "O(1)", "key member");
  add("smismember", -3, kReadFast, {KeyAt(1, kKeyRO | kKeyAccess)}, SmismemberCommand,
      "Determines whether multiple members belong to a set.", "6.2.0",
      "O(N) where N is the number of elements being checked for membership",
      "key member [member ...]");
  add("scard", 2, kReadFast, {KeyAt(1, kKeyRO)}, ScardCommand,
      "Returns the number of members in a set.", "1.0.0", "O(1)", "key");
  add("smembers", 2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, SmembersCommand,
      "Returns all members of a set.", "1.0.0", "O(N) where N is the set cardinality.", "key",
      {"nondeterministic_output_order"});
  add("spop", -2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)}, SpopCommand,
      "Returns one or more random members from a set after removing them. Deletes the set if the "
      "last member was popped.",
      "1.0.0",
      "Without the count argument O(1), otherwise O(N) where N is the value of the passed "
      "count.",
      "key [count]", {"nondeterministic_output"});
  add("srandmember", -2, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, SrandmemberCommand,
      "Get one or multiple random members from a set", "1.0.0",
      "Without the count argument O(1), otherwise O(N) where N is the absolute value of the "
      "passed count.",
      "key [count]", {"nondeterministic_output"});
  add("smove", 4, kCmdWrite | kCmdFast,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)}, SmoveCommand,
      "Moves a member from one set to another.", "1.0.0", "O(1)", "source destination member");
  add("sinter", -2, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, SinterCommand,
      "Returns the intersect of multiple sets.", "1.0.0",
      "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
      "sets.",
      "key [key ...]", {"nondeterministic_output_order"});
  add("sintercard", -3, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}},
      SintercardCommand, "Returns the number of members of the intersect of multiple sets.",
      "7.0.0",
      "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
      "sets.",
      "numkeys key [key ...] [LIMIT limit]");
  add("sinterstore", -3, kWrite,
      {KeyAt(1, kKeyRW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Range(-1, 1, 0)}},
      SinterstoreCommand, "Stores the intersect of multiple sets in a key.", "1.0.0",
      "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
      "sets.",
      "destination key [key ...]");
  add("sunion", -2, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, SunionCommand,
      "Returns the union of multiple sets.", "1.0.0",
      "O(N) where N is the total number of elements in all given sets.", "key [key ...]",
      {"nondeterministic_output_order"});
  add("sunionstore", -3, kWrite,
      {KeyAt(1, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Range(-1, 1, 0)}},
      SunionstoreCommand, "Stores the union of multiple sets in a key.", "1.0.0",
      "O(N) where N is the total number of elements in all given sets.",
      "destination key [key ...]");
  add("sdiff", -2, kRead,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}}, SdiffCommand,
      "Returns the difference of multiple sets.", "1.0.0",
      "O(N) where N is the total number of elements in all given sets.", "key [key ...]",
      {"nondeterministic_output_order"});
  add("sdiffstore", -3, kWrite,
      {KeyAt(1, kKeyOW | kKeyUpdate),
       KeySpec{kKeyRO | kKeyAccess, KeyBegin::Index(2), KeyFind::Range(-1, 1, 0)}},
      SdiffstoreCommand, "Stores the difference of multiple sets in a key.", "1.0.0",
      "O(N) where N is the total number of elements in all given sets.",
      "destination key [key ...]");
  add("sscan", -3, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, SscanCommand,
      "Iterates over members of a set.", "2.0.0",
      "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
      "the cursor to return back to 0. N is the number of elements inside the collection.",
      "key cursor [MATCH pattern] [COUNT count]", {"nondeterministic_output"});
}

}  // namespace goblin
