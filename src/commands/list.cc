// List commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN LINDEX LSET LINSERT LRANGE LTRIM LREM
// LPOS LMOVE RPOPLPUSH LMPOP and the blocking BLPOP BRPOP BRPOPLPUSH BLMOVE BLMPOP.
//
// Every command works on the PackedList inside the key's ListObject (core/list_object.h). The
// conversion limits (list-max-listpack-size) are read from the configuration at every write, so
// CONFIG SET applies to the next command. A command that removes the last element deletes the
// key. Arguments are checked in the order Redis checks them, so a command with several faults
// reports the one Redis reports.
//
// Blocking: a blocking command with nothing to serve blocks its client (Server::BlockClient)
// and runs again when one of its keys changes; inside a transaction it answers at once, as on
// timeout. A served blocking command is logged as its non-blocking form (BLPOP as LPOP, BLMOVE
// as LMOVE), so the append-only file replays without blocking.
#include <algorithm>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/list_object.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {
namespace {

constexpr std::string_view kIndexOutOfRange = "ERR index out of range";

enum class End { kLeft, kRight };

std::string_view PopName(End end) { return end == End::kLeft ? "LPOP" : "RPOP"; }
// The keyspace events of a pop and a push at end.
std::string_view PopEvent(End end) { return end == End::kLeft ? "lpop" : "rpop"; }
std::string_view PushEvent(End end) { return end == End::kLeft ? "lpush" : "rpush"; }
std::string_view EndName(End end) { return end == End::kLeft ? "LEFT" : "RIGHT"; }

ListLimits ListLimitsOf(const CommandContext& ctx) { return ListLimitsOf(ctx.server.config); }

// The list at key. Returns false after replying WRONGTYPE; *list is nullptr when the key is
// missing. Reads count keyspace hits and misses.
bool LookupList(CommandContext& ctx, std::string_view key, PackedList** list, bool for_read) {
  KeyEntry* entry;
  *list = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kList, &entry, for_read)) return false;
  if (entry != nullptr) *list = &static_cast<ListObject*>(entry->object())->list();
  return true;
}

// Stores a new, empty list under key; the caller pushes before the command ends (invariant 1
// of list_object.h).
PackedList* CreateList(CommandContext& ctx, std::string_view key) {
  auto* object = new ListObject();
  ctx.db().Put(key, EntryValue::Object(object), std::nullopt);
  return &object->list();
}

// After elements left the list at key: announces event, deletes the key when it is empty
// (announcing del), else records the in-place change.
void AfterRemoval(CommandContext& ctx, std::string_view key, const PackedList& list,
                  uint64_t removed, std::string_view event) {
  if (removed == 0) return;
  Notify(ctx, kNotifyList, event, key);
  if (list.empty()) {
    ctx.db().Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
  } else {
    ctx.db().Touch(key);
  }
  MarkDirty(ctx, removed);
}

void Push(PackedList& list, End end, std::string_view value, const ListLimits& limits) {
  if (end == End::kLeft) {
    list.PushFront(value, limits);
  } else {
    list.PushBack(value, limits);
  }
}

std::string Pop(PackedList& list, End end) {
  return end == End::kLeft ? list.PopFront() : list.PopBack();
}

// The raw bytes Redis's conversion check counts for an element moved from another list: its
// length, or nothing when it is an integer (Redis holds a popped integer as a number).
size_t MovedBytes(std::string_view value) {
  int64_t ignored;
  return ParseInt64(value, &ignored) ? 0 : value.size();
}

// LEFT or RIGHT (any case); false after replying a syntax error.
bool ParseEnd(CommandContext& ctx, std::string_view text, End* end) {
  if (EqualsIgnoreCase(text, "left")) {
    *end = End::kLeft;
  } else if (EqualsIgnoreCase(text, "right")) {
    *end = End::kRight;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  return true;
}

// Redis's index rule: negative counts from the end. nullopt when outside the list.
std::optional<size_t> Position(int64_t index, size_t size) {
  if (index < 0) index += static_cast<int64_t>(size);
  if (index < 0 || static_cast<uint64_t>(index) >= size) return std::nullopt;
  return static_cast<size_t>(index);
}

// LRANGE and LTRIM's range rule: [start, stop] with negative indexes from the end, clamped;
// empty when start > stop after that. Returns [first, last) in element positions.
std::pair<size_t, size_t> Span(int64_t start, int64_t stop, size_t size) {
  const auto n = static_cast<int64_t>(size);
  if (start < 0) start = std::max<int64_t>(0, start + n);
  if (stop < 0) stop += n;
  if (start > stop || start >= n) return {0, 0};
  stop = std::min(stop, n - 1);
  return {static_cast<size_t>(start), static_cast<size_t>(stop) + 1};
}

// --- Pushes -------------------------------------------------------------------------------------

void PushGeneric(CommandContext& ctx, End end, bool only_existing) {
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    if (only_existing) {
      ctx.reply.Integer(0);
      return;
    }
    list = CreateList(ctx, ctx.arg(1));
  }
  const ListLimits limits = ListLimitsOf(ctx);
  size_t bytes = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) bytes += ctx.arg(i).size();
  list->ConvertForGrowth(ctx.argc() - 2, bytes, limits);
  for (size_t i = 2; i < ctx.argc(); ++i) Push(*list, end, ctx.arg(i), limits);
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx, ctx.argc() - 2);
  Notify(ctx, kNotifyList, PushEvent(end), ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(list->size()));
}

void LpushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kLeft, false); }
void RpushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kRight, false); }
void LpushxCommand(CommandContext& ctx) { PushGeneric(ctx, End::kLeft, true); }
void RpushxCommand(CommandContext& ctx) { PushGeneric(ctx, End::kRight, true); }

// --- Pops ---------------------------------------------------------------------------------------

// Pops up to count elements from end of the list at key (which exists) and replies them as an
// array, or the one element as a bulk string when count is nullopt. The caller looked key up.
void PopAndReply(CommandContext& ctx, std::string_view key, PackedList& list, End end,
                 std::optional<int64_t> count) {
  if (!count) {
    ctx.reply.Bulk(Pop(list, end));
    list.ConvertForShrink(ListLimitsOf(ctx));
    AfterRemoval(ctx, key, list, 1, PopEvent(end));
    return;
  }
  const size_t n = std::min<uint64_t>(static_cast<uint64_t>(*count), list.size());
  ctx.reply.Array(n);
  for (size_t i = 0; i < n; ++i) ctx.reply.Bulk(Pop(list, end));
  list.ConvertForShrink(ListLimitsOf(ctx));
  AfterRemoval(ctx, key, list, n, PopEvent(end));
}

void PopGeneric(CommandContext& ctx, End end) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return;
  }
  std::optional<int64_t> count;
  if (ctx.argc() == 3) {
    int64_t n;
    if (!ParseInt64(ctx.arg(2), &n) || n < 0) {
      ctx.reply.Error(errors::kPositive);  // Redis gives this text for any bad count
      return;
    }
    count = n;
  }
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    if (count) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  if (count && *count == 0) {
    ctx.reply.Array(0);
    return;
  }
  PopAndReply(ctx, ctx.arg(1), *list, end, count);
}

void LpopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kLeft); }
void RpopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kRight); }

// LMPOP and BLMPOP: pops from the first non-empty list of args' keys and replies
// [key, [elements...]], logged as LPOP/RPOP key count. Returns false when every key is missing
// (nothing replied).
bool MultiPop(CommandContext& ctx, const MultiPopArgs& args) {
  const End end = args.first_end ? End::kLeft : End::kRight;
  for (size_t i = 0; i < args.key_count; ++i) {
    const std::string_view key = ctx.arg(args.first_key + i);
    PackedList* list;
    if (!LookupList(ctx, key, &list, false)) return true;
    if (list == nullptr) continue;
    const size_t n = std::min<uint64_t>(static_cast<uint64_t>(args.count), list->size());
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    PopAndReply(ctx, key, *list, end, static_cast<int64_t>(n));
    if (ctx.propagating()) ctx.Propagate({PopName(end), key, std::to_string(n)});
    return true;
  }
  return false;
}

void LmpopCommand(CommandContext& ctx) {
  MultiPopArgs args;
  if (!ParseMultiPopArgs(ctx, 1, "left", "right", &args)) return;
  if (!MultiPop(ctx, args)) ctx.reply.NullArray();
}

// --- Reads and positional writes ----------------------------------------------------------------

void LlenCommand(CommandContext& ctx) {
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, true)) return;
  ctx.reply.Integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

void LindexCommand(CommandContext& ctx) {
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, true)) return;
  if (list == nullptr) {
    ctx.reply.Null();
    return;
  }
  int64_t index;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &index)) return;
  const std::optional<size_t> at = Position(index, list->size());
  if (!at) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(list->At(*at));
}

void LsetCommand(CommandContext& ctx) {
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  int64_t index;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &index)) return;
  const std::optional<size_t> at = Position(index, list->size());
  if (!at) {
    ctx.reply.Error(kIndexOutOfRange);
    return;
  }
  const ListLimits limits = ListLimitsOf(ctx);
  // Redis checks the growth as for one element more, then the shrink after the replacement.
  list->ConvertForGrowth(1, ctx.arg(3).size(), limits);
  list->Set(*at, ctx.arg(3), limits);
  list->ConvertForShrink(limits);
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx);
  Notify(ctx, kNotifyList, "lset", ctx.arg(1));
  ctx.reply.Ok();
}

void LinsertCommand(CommandContext& ctx) {
  bool after;
  if (EqualsIgnoreCase(ctx.arg(2), "after")) {
    after = true;
  } else if (EqualsIgnoreCase(ctx.arg(2), "before")) {
    after = false;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const std::string_view pivot = ctx.arg(3);
  const size_t at =
      list->FindForward(0, [&](std::string_view element) { return element == pivot; });
  if (at == list->size()) {
    ctx.reply.Integer(-1);
    return;
  }
  const ListLimits limits = ListLimitsOf(ctx);
  list->ConvertForGrowth(1, ctx.arg(4).size(), limits);
  list->Insert(after ? at + 1 : at, ctx.arg(4), limits);
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx);
  Notify(ctx, kNotifyList, "linsert", ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(list->size()));
}

void LrangeCommand(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &start) || !ParseIntegerArg(ctx, ctx.arg(3), &stop)) {
    return;
  }
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, true)) return;
  if (list == nullptr) {
    ctx.reply.Array(0);
    return;
  }
  const auto [first, last] = Span(start, stop, list->size());
  ctx.reply.Array(last - first);
  // Stops at the range's end, or once the reply is past the client's limit (reply_builder.h).
  size_t left = last - first;
  list->FindForward(first, [&](std::string_view element) {
    if (left == 0 || ctx.reply.over_limit()) return true;
    ctx.reply.Bulk(element);
    --left;
    return false;
  });
}

void LtrimCommand(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &start) || !ParseIntegerArg(ctx, ctx.arg(3), &stop)) {
    return;
  }
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    ctx.reply.Ok();
    return;
  }
  const size_t size = list->size();
  const auto [first, last] = Span(start, stop, size);
  // The tail first: erasing it leaves the head's positions as they are.
  list->EraseRange(last, size);
  list->EraseRange(0, first);
  list->ConvertForShrink(ListLimitsOf(ctx));
  const size_t removed = size - list->size();
  Notify(ctx, kNotifyList, "ltrim", ctx.arg(1));
  if (list->empty()) {
    ctx.db().Delete(ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  } else {
    ctx.db().Touch(ctx.arg(1));  // Redis signals the key even when nothing went
  }
  MarkDirty(ctx, removed);
  ctx.reply.Ok();
}

void LremCommand(CommandContext& ctx) {
  int64_t count;
  if (!ParseIntegerArg(ctx, ctx.arg(2), &count)) return;
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, false)) return;
  if (list == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const std::string_view value = ctx.arg(3);
  // count > 0 removes the first count matches, < 0 the last -count, 0 all of them.
  const uint64_t limit =
      count == 0 ? UINT64_MAX
                 : (count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count));
  std::vector<size_t> matches;
  auto match = [&](std::string_view element) { return element == value; };
  if (count >= 0) {
    for (size_t at = 0; matches.size() < limit;) {
      at = list->FindForward(at, match);
      if (at == list->size()) break;
      matches.push_back(at++);
    }
  } else {
    for (size_t end = list->size(); matches.size() < limit && end > 0;) {
      const size_t at = list->FindBackward(end, match);
      if (at == list->size()) break;
      matches.push_back(at);
      end = at;
    }
  }
  // Highest position first, so the others stay where they were found.
  std::sort(matches.begin(), matches.end(), std::greater<>());
  for (size_t at : matches) list->EraseRange(at, at + 1);
  if (!matches.empty()) list->ConvertForShrink(ListLimitsOf(ctx));
  AfterRemoval(ctx, ctx.arg(1), *list, matches.size(), "lrem");
  ctx.reply.Integer(static_cast<int64_t>(matches.size()));
}

constexpr std::string_view kRankZero =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list";
constexpr std::string_view kCountNegative = "ERR COUNT can't be negative";
constexpr std::string_view kMaxlenNegative = "ERR MAXLEN can't be negative";

// LPOS's positions of value: from the head (rank > 0) or the tail (rank < 0), skipping the
// first |rank| - 1 matches, looking at no more than budget elements from that end, at most
// wanted of them.
std::vector<int64_t> Positions(const PackedList& list, std::string_view value, int64_t rank,
                               uint64_t wanted, size_t budget) {
  auto match = [&](std::string_view element) { return element == value; };
  uint64_t skip = (rank > 0 ? static_cast<uint64_t>(rank) : 0 - static_cast<uint64_t>(rank)) - 1;
  std::vector<int64_t> found;
  const size_t size = list.size();
  if (rank > 0) {
    for (size_t at = 0; found.size() < wanted; ++at) {
      at = list.FindForward(at, match);
      if (at >= budget) break;
      if (skip > 0) {
        --skip;
      } else {
        found.push_back(static_cast<int64_t>(at));
      }
    }
  } else {
    const size_t floor = size - budget;
    for (size_t end = size; found.size() < wanted && end > floor;) {
      const size_t at = list.FindBackward(end, match);
      if (at == size || at < floor) break;
      if (skip > 0) {
        --skip;
      } else {
        found.push_back(static_cast<int64_t>(at));
      }
      end = at;
    }
  }
  return found;
}

void LposCommand(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: no COUNT, a bare position
  for (size_t i = 3; i < ctx.argc(); ++i) {
    const std::string_view option = ctx.arg(i);
    const bool more = i + 1 < ctx.argc();
    if (EqualsIgnoreCase(option, "rank") && more) {
      if (!ParseIntegerArg(ctx, ctx.arg(++i), &rank)) return;
      if (rank == INT64_MIN) {
        ctx.reply.Error(errors::kOutOfCountRange);
        return;
      }
      if (rank == 0) {
        ctx.reply.Error(kRankZero);
        return;
      }
    } else if (EqualsIgnoreCase(option, "count") && more) {
      // Redis gives the same text for a count that is not a number.
      if (!ParseInt64(ctx.arg(++i), &count) || count < 0) {
        ctx.reply.Error(kCountNegative);
        return;
      }
    } else if (EqualsIgnoreCase(option, "maxlen") && more) {
      if (!ParseInt64(ctx.arg(++i), &maxlen) || maxlen < 0) {
        ctx.reply.Error(kMaxlenNegative);
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  PackedList* list;
  if (!LookupList(ctx, ctx.arg(1), &list, true)) return;
  if (list == nullptr) {
    if (count >= 0) {
      ctx.reply.Array(0);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  const uint64_t wanted = count < 0 ? 1 : (count == 0 ? UINT64_MAX : static_cast<uint64_t>(count));
  const size_t budget =
      maxlen == 0 ? list->size() : std::min<uint64_t>(list->size(), static_cast<uint64_t>(maxlen));
  const std::vector<int64_t> found = Positions(*list, ctx.arg(2), rank, wanted, budget);
  if (count < 0) {
    if (found.empty()) {
      ctx.reply.Null();
    } else {
      ctx.reply.Integer(found.front());
    }
    return;
  }
  ctx.reply.Array(found.size());
  for (int64_t at : found) ctx.reply.Integer(at);
}

// --- Moves --------------------------------------------------------------------------------------

// LMOVE's core: pops from the source's from end, pushes to the destination's to end, replies
// the element. The source exists and is not empty; the destination was checked to be a list
// or missing.
void Move(CommandContext& ctx, PackedList& source, End from, End to) {
  const std::string_view source_key = ctx.arg(1), destination_key = ctx.arg(2);
  const ListLimits limits = ListLimitsOf(ctx);
  const std::string value = Pop(source, from);
  source.ConvertForShrink(limits);
  PackedList* destination;
  LookupList(ctx, destination_key, &destination, false);
  if (destination == nullptr) destination = CreateList(ctx, destination_key);
  destination->ConvertForGrowth(1, MovedBytes(value), limits);
  Push(*destination, to, value, limits);
  ctx.db().Touch(destination_key);
  Notify(ctx, kNotifyList, PushEvent(to), destination_key);
  // The source is deleted only now: when it is the destination it is not empty any more.
  // (Objects live apart from the key table: creating the destination moved no list.) Its one
  // change is the move's one, as Redis counts LMOVE.
  AfterRemoval(ctx, source_key, source, 1, PopEvent(from));
  ctx.reply.Bulk(value);
}

// Looks up LMOVE's source and destination; false when a reply was given (WRONGTYPE, or the
// null of a missing source when reply_missing). *source is nullptr when it is missing.
bool MoveOperands(CommandContext& ctx, PackedList** source, bool reply_missing) {
  if (!LookupList(ctx, ctx.arg(1), source, false)) return false;
  if (*source == nullptr) {
    if (reply_missing) ctx.reply.Null();
    return !reply_missing;
  }
  PackedList* destination;
  return LookupList(ctx, ctx.arg(2), &destination, false);
}

void LmoveGeneric(CommandContext& ctx, End from, End to) {
  PackedList* source;
  if (!MoveOperands(ctx, &source, /*reply_missing=*/true)) return;
  Move(ctx, *source, from, to);
}

void LmoveCommand(CommandContext& ctx) {
  End from, to;
  if (!ParseEnd(ctx, ctx.arg(3), &from) || !ParseEnd(ctx, ctx.arg(4), &to)) return;
  LmoveGeneric(ctx, from, to);
}

void RpoplpushCommand(CommandContext& ctx) { LmoveGeneric(ctx, End::kRight, End::kLeft); }

// --- Blocking -----------------------------------------------------------------------------------

// Blocks the client on keys argv[first, first + count), or, inside a transaction, answers at
// once with reply_now (the null Redis gives there).
void BlockOrAnswer(CommandContext& ctx, size_t first, size_t count, int64_t deadline,
                   void (*reply_now)(ReplyBuilder&)) {
  if (!ctx.client.may_block()) {
    reply_now(ctx.reply);
    return;
  }
  std::vector<std::string_view> keys(ctx.argv.begin() + static_cast<std::ptrdiff_t>(first),
                                     ctx.argv.begin() + static_cast<std::ptrdiff_t>(first + count));
  ctx.server.BlockClient(ctx.client, ctx.argv, keys, deadline, ValueType::kList);
}

void ReplyNullArray(ReplyBuilder& reply) { reply.NullArray(); }
void ReplyNull(ReplyBuilder& reply) { reply.Null(); }

void BlockingPopGeneric(CommandContext& ctx, End end) {
  std::optional<int64_t> deadline = ParseBlockTimeout(ctx, ctx.arg(ctx.argc() - 1));
  if (!deadline) return;
  const size_t key_count = ctx.argc() - 2;
  for (size_t i = 0; i < key_count; ++i) {
    const std::string_view key = ctx.arg(1 + i);
    PackedList* list;
    if (!LookupList(ctx, key, &list, false)) return;
    if (list == nullptr) continue;
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    PopAndReply(ctx, key, *list, end, std::nullopt);
    ctx.Propagate({PopName(end), key});
    return;
  }
  BlockOrAnswer(ctx, 1, key_count, *deadline, ReplyNullArray);
}

void BlpopCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, End::kLeft); }
void BrpopCommand(CommandContext& ctx) { BlockingPopGeneric(ctx, End::kRight); }

void BlockingMoveGeneric(CommandContext& ctx, End from, End to, std::string_view timeout) {
  std::optional<int64_t> deadline = ParseBlockTimeout(ctx, timeout);
  if (!deadline) return;
  PackedList* source;
  if (!MoveOperands(ctx, &source, /*reply_missing=*/false)) return;
  if (source == nullptr) {
    BlockOrAnswer(ctx, 1, 1, *deadline, ReplyNull);
    return;
  }
  Move(ctx, *source, from, to);
  if (from == End::kRight && to == End::kLeft && ctx.argc() == 4) {
    ctx.Propagate({"RPOPLPUSH", ctx.arg(1), ctx.arg(2)});
  } else {
    ctx.Propagate({"LMOVE", ctx.arg(1), ctx.arg(2), EndName(from), EndName(to)});
  }
}

void BrpoplpushCommand(CommandContext& ctx) {
  BlockingMoveGeneric(ctx, End::kRight, End::kLeft, ctx.arg(3));
}

void BlmoveCommand(CommandContext& ctx) {
  End from, to;
  if (!ParseEnd(ctx, ctx.arg(3), &from) || !ParseEnd(ctx, ctx.arg(4), &to)) return;
  BlockingMoveGeneric(ctx, from, to, ctx.arg(5));
}

void BlmpopCommand(CommandContext& ctx) {
  // Redis reads the timeout after the other arguments.
  MultiPopArgs args;
  if (!ParseMultiPopArgs(ctx, 2, "left", "right", &args)) return;
  std::optional<int64_t> deadline = ParseBlockTimeout(ctx, ctx.arg(1));
  if (!deadline) return;
  if (MultiPop(ctx, args)) return;
  BlockOrAnswer(ctx, args.first_key, args.key_count, *deadline, ReplyNullArray);
}

}  // namespace

void RegisterListCommands(CommandTable* table) {
  CommandAdder add{table, "list", kAclList};
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kWriteFast = kWrite | kCmdFast;
  constexpr uint32_t kRead = kCmdReadonly;
  constexpr uint32_t kReadFast = kCmdReadonly | kCmdFast;
  constexpr uint32_t kBlocking = kCmdWrite | kCmdBlocking;
  add("lpush", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, LpushCommand,
      "Prepends one or more elements to a list. "
      "Creates the key if it doesn't exist.",
      "1.0.0",
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.",
      "key element [element ...]");
  add("rpush", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, RpushCommand,
      "Appends one or more elements to a list. "
      "Creates the key if it doesn't exist.",
      "1.0.0",
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.",
      "key element [element ...]");
  add("lpushx", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, LpushxCommand,
      "Prepends one or more elements to a list only when the list exists.", "2.2.0",
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.",
      "key element [element ...]");
  add("rpushx", -3, kWriteFast, {KeyAt(1, kKeyRW | kKeyInsert)}, RpushxCommand,
      "Appends an element to a list only when the list exists.", "2.2.0",
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.",
      "key element [element ...]");
  add("lpop", -2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)}, LpopCommand,
      "Returns the first elements in a list after removing it. Deletes the list if the last "
      "element was popped.",
      "1.0.0", "O(N) where N is the number of elements returned", "key [count]");
  add("rpop", -2, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)}, RpopCommand,
      "Returns and removes the last elements of a list. Deletes the list if the last element "
      "was popped.",
      "1.0.0", "O(N) where N is the number of elements returned", "key [count]");
  add("lmpop", -4, kCmdWrite,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Keynum(0, 1, 1)}},
      LmpopCommand,
      "Returns multiple elements from a list after removing them. Deletes the list if "
      "the last element was popped.",
      "7.0.0",
      "O(N+M) where N is the number of provided keys and M is the number of elements "
      "returned.",
      "numkeys key [key ...] <LEFT | RIGHT> [COUNT count]");
  add("llen", 2, kReadFast, {KeyAt(1, kKeyRO)}, LlenCommand, "Returns the length of a list.",
      "1.0.0", "O(1)", "key");
  add("lindex", 3, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, LindexCommand,
      "Returns an element from a list by its index.", "1.0.0",
      "O(N) where N is the number of elements to traverse to get to the element at index. This "
      "makes asking for the first or the last element of the list O(1).",
      "key index");
  add("lset", 4, kWrite, {KeyAt(1, kKeyRW | kKeyUpdate)}, LsetCommand,
      "Sets the value of an element in a list by its "
      "index.",
      "1.0.0",
      "O(N) where N is the length of the list. Setting either the first or the last element of "
      "the list is O(1).",
      "key index element");
  add("linsert", 5, kWrite, {KeyAt(1, kKeyRW | kKeyInsert)}, LinsertCommand,
      "Inserts an element before or after another element in a list.", "2.2.0",
      "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
      "means that inserting somewhere on the left end on the list (head) can be considered "
      "O(1) and inserting somewhere on the right end (tail) is O(N).",
      "key <BEFORE | AFTER> pivot element");
  add("lrange", 4, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, LrangeCommand,
      "Returns a range of elements from a list.", "1.0.0",
      "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest "
      "end (HEAD or TAIL) for large lists; and N is the number of elements in the specified "
      "range.",
      "key start stop");
  add("ltrim", 4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, LtrimCommand,
      "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
      "1.0.0", "O(N) where N is the number of elements to be removed by the operation.",
      "key start stop");
  add("lrem", 4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, LremCommand,
      "Removes elements from a list. Deletes the list if the last element was removed.", "1.0.0",
      "O(N+M) where N is the length of the list and M is the number of elements removed.",
      "key count element");
  add("lpos", -3, kRead, {KeyAt(1, kKeyRO | kKeyAccess)}, LposCommand,
      "Returns the index of matching elements in a "
      "list.",
      "6.0.6",
      "O(N) where N is the number of elements in the list, for the average case. When searching "
      "for elements near the head or the tail of the list, or when the MAXLEN option is "
      "provided, the command may run in constant time.",
      "key element [RANK rank] [COUNT num-matches] [MAXLEN len]");
  add("lmove", 5, kWrite,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)}, LmoveCommand,
      "Returns an element after popping it from one list and pushing it to another. Deletes "
      "the list if the last element was moved.",
      "6.2.0", "O(1)", "source destination <LEFT | RIGHT> <LEFT | RIGHT>");
  add("rpoplpush", 3, kWrite,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)}, RpoplpushCommand,
      "Returns the last element of a list after removing and pushing it to another list. "
      "Deletes the list if the last element was popped.",
      "1.2.0", "O(1)", "source destination");
  add("blpop", -3, kBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-2, 1, 0)}},
      BlpopCommand,
      "Removes and returns the first element in a list. Blocks until an element is available "
      "otherwise. Deletes the list if the last element was popped.",
      "2.0.0", "O(N) where N is the number of provided keys.", "key [key ...] timeout");
  add("brpop", -3, kBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(1), KeyFind::Range(-2, 1, 0)}},
      BrpopCommand,
      "Removes and returns the last element in a list. Blocks until an element is available "
      "otherwise. Deletes the list if the last element was popped.",
      "2.0.0", "O(N) where N is the number of provided keys.", "key [key ...] timeout");
  add("brpoplpush", 4, kBlocking | kCmdDenyOom,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)},
      BrpoplpushCommand,
      "Pops an element from a list, pushes it to another list and returns it. Block until an "
      "element is available otherwise. Deletes the list if the last element was popped.",
      "2.2.0", "O(1)", "source destination timeout");
  add("blmove", 6, kBlocking | kCmdDenyOom,
      {KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)}, BlmoveCommand,
      "Pops an element from a list, pushes it to another list and returns it. Blocks until an "
      "element is available otherwise. Deletes the list if the last element was moved.",
      "6.2.0", "O(1)", "source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout");
  add("blmpop", -5, kBlocking,
      {KeySpec{kKeyRW | kKeyAccess | kKeyDelete, KeyBegin::Index(2), KeyFind::Keynum(0, 1, 1)}},
      BlmpopCommand,
      "Pops the first element from one of multiple lists. Blocks until an element is "
      "available otherwise. Deletes the list if the last element was popped.",
      "7.0.0",
      "O(N+M) where N is the number of provided keys and M is the number of elements "
      "returned.",
      "timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]");
}

}  // namespace goblin
