// XREAD and XREADGROUP: one parser and one serving loop, as in Redis, since they differ only in
// where a stream's read starts and in the group bookkeeping of what is served.
//
// XREADGROUP with `>` delivers the entries after the group's last delivered id: each advances
// that id (and the group's read counter) and, unless NOACK, becomes a pending entry of the
// consumer. With any other id it reads the consumer's own pending entries after that id (a
// pending entry whose stream entry is gone is served as [id, nil]), and counts a delivery for
// each entry served. A consumer named for the first time is created in the group.
//
// CLAIM min-idle-time (Redis 8.4), with `>` only: the group's pending entries idle for at least
// that long are claimed first, the longest idle first (delivery time, then id), and the new
// entries follow; COUNT bounds the two together. Each claimed entry moves to the consumer with
// its delivery time now and its count + 1, NOACK or not, and is served as [id, fields, idle ms,
// deliveries before this one]; with CLAIM every new entry is [id, fields, 0, 0]. A claimed
// entry whose stream entry is gone is skipped and stays pending, though it counts against
// COUNT (Redis takes the COUNT oldest first, then reads them). A stream is served when it has
// new entries or when its oldest pending entry still in the stream is idle enough. A history
// read ignores CLAIM, and so do the streams after it in the same call (Redis clears the option
// there). A waiting reader with CLAIM runs again when the earliest of those oldest entries
// becomes idle enough (or after min-idle-time, when nothing is pending).
//
// Blocking: a client waits only when nothing can be served and BLOCK was given (never in MULTI
// or from a script). `$` (XREAD) is resolved to each stream's last id when the client blocks;
// its argv is rewritten for the retry. A waiting XREADGROUP runs again, as in Redis 7.2, when
// an entry arrives, its group is destroyed, or its key goes or changes type, and answers what
// that run answers (entries, NOGROUP, WRONGTYPE); with nothing to serve it waits on, keeping
// its place and its deadline (Redis 7.2.0-7.2.4 restart the timeout there, 7.4 keeps it).
//
// Effects, as Redis propagates them (the command itself never is): a consumer created is
// `XGROUP CREATECONSUMER key group consumer` (stream_family.h: SeeConsumer); each entry
// delivered without NOACK, and each entry claimed, is `XCLAIM key group consumer 0 id TIME
// <delivery ms> RETRYCOUNT <count> FORCE JUSTID LASTID <last delivered id>`; a read that
// advanced the group ends with `XGROUP SETID key group <last delivered id> ENTRIESREAD <read
// counter>` (Redis 7.4 and later; 7.2 logs it after NOACK reads only, so its replicas' read
// counters can drift). History reads log nothing.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/stream_family.h"
#include "core/ascii.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

struct ReadArgs {
  bool group_read = false;  // XREADGROUP
  int64_t count = 0;        // 0: no limit
  std::optional<int64_t> block_ms;
  bool noack = false;
  std::optional<int64_t> claim_min_idle;  // CLAIM
  std::string_view group;
  std::string_view consumer;
  size_t streams_at = 0;  // argv index of the first key
  size_t streams = 0;
};

// Redis's xreadCommand option loop. Returns false after replying an error.
bool ParseReadArgs(CommandContext& ctx, ReadArgs* args) {
  const std::string_view name = args->group_read ? "xreadgroup" : "xread";
  for (size_t i = 1; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - i - 1;
    std::string_view option = ctx.arg(i);
    if (EqualsIgnoreCase(option, "claim") && more > 0) {
      if (!args->group_read) {
        ctx.reply.Error(
            "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      int64_t min_idle = 0;
      if (!ParseInt64(ctx.arg(++i), &min_idle)) {
        ctx.reply.Error("ERR min-idle-time is not an integer or out of range");
        return false;
      }
      if (min_idle < 0) {
        ctx.reply.Error("ERR min-idle-time must be a positive integer");
        return false;
      }
      args->claim_min_idle = min_idle;
    } else if (EqualsIgnoreCase(option, "block") && more > 0) {
      if (ctx.client.kind == ClientKind::kScript) {  // the name as the script wrote it
        ctx.reply.Error("ERR " + errors::Quote(ctx.arg(0)) +
                        " command is not allowed with BLOCK option from scripts");
        return false;
      }
      int64_t timeout = 0;
      if (!ParseInt64(ctx.arg(++i), &timeout)) {
        ctx.reply.Error(errors::kTimeoutNotInteger);
        return false;
      }
      if (timeout < 0) {
        ctx.reply.Error(errors::kTimeoutNegative);
        return false;
      }
      if (timeout > INT64_MAX - ctx.now_ms) {
        ctx.reply.Error(errors::kTimeoutOutOfRange);
        return false;
      }
      args->block_ms = timeout;
    } else if (EqualsIgnoreCase(option, "count") && more > 0) {
      if (!ParseInt64(ctx.arg(++i), &args->count)) {
        ctx.reply.Error(errors::kNotInteger);
        return false;
      }
      if (args->count < 0) args->count = 0;
    } else if (EqualsIgnoreCase(option, "streams") && more > 0) {
      args->streams_at = i + 1;
      if ((ctx.argc() - args->streams_at) % 2 != 0) {
        ctx.reply.Error("ERR Unbalanced '" + std::string(name) +
                        "' list of streams: for each stream key an ID or '" +
                        (args->group_read ? ">" : "$") + "' must be specified.");
        return false;
      }
      args->streams = (ctx.argc() - args->streams_at) / 2;
      break;
    } else if (EqualsIgnoreCase(option, "group") && more >= 2) {
      if (!args->group_read) {
        ctx.reply.Error(
            "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      args->group = ctx.arg(i + 1);
      args->consumer = ctx.arg(i + 2);
      i += 2;
    } else if (EqualsIgnoreCase(option, "noack")) {
      if (!args->group_read) {
        ctx.reply.Error(
            "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.");
        return false;
      }
      args->noack = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (args->streams_at == 0) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  if (args->group_read && args->group.data() == nullptr) {
    ctx.reply.Error("ERR Missing GROUP option for XREADGROUP");
    return false;
  }
  return true;
}

// One stream of the call as parsed.
struct ReadTarget {
  std::string_view key;
  StreamObject* object = nullptr;
  ConsumerGroup* group = nullptr;
  bool new_entries = false;  // `>`
  StreamId after;            // serve ids above this (XREAD, history reads)
};

// One entry of a stream's part of the reply.
struct ServedEntry {
  StreamEntryView entry;
  bool gone = false;  // a history entry no longer in the stream: [id, nil]
  // CLAIM: [id, fields, idle ms, deliveries before this one] (0 and 0 for a new entry).
  bool with_delivery = false;
  int64_t idle_ms = 0;
  uint64_t delivery_count = 0;
};

struct ServedPart {
  std::string_view key;
  std::vector<ServedEntry> entries;
};

class GroupReader {
 public:
  GroupReader(CommandContext& ctx, const ReadArgs& args) : ctx_(ctx), args_(args) {}

  void See(const ReadTarget& target) {
    SeeConsumer(ctx_, *target.group, target.key, args_.group, args_.consumer);
  }

  // `>`: with claim_min_idle (CLAIM), first the pending entries idle that long; then, unless
  // claims_only, what follows the group's last delivered id, COUNT counting both.
  void ServeNew(const ReadTarget& target, std::optional<int64_t> claim_min_idle, bool claims_only,
                ServedPart* part) {
    if (claim_min_idle) ClaimIdle(target, *claim_min_idle, part);
    if (claims_only || (Count() > 0 && part->entries.size() >= Count())) return;
    const Stream& stream = target.object->stream();
    ConsumerGroup& group = *target.group;
    bool advanced = false;
    const size_t room = Count() == 0 ? 0 : Count() - part->entries.size();
    stream.Range(group.last_delivered_id().Next(), StreamId::Max(), false, room,
                 [&](const StreamEntryView& entry) {
                   if (entry.id > group.last_delivered_id()) {
                     group.AdvanceLastDelivered(stream, entry.id);
                     advanced = true;
                   }
                   part->entries.push_back(
                       ServedEntry{.entry = entry, .with_delivery = claim_min_idle.has_value()});
                   if (!args_.noack) {
                     group.Deliver(args_.consumer, entry.id, ctx_.now_ms);
                     LogDelivery(target, entry.id, 1);
                   }
                   return true;
                 });
    if (advanced && ctx_.propagating()) {
      const std::string last = group.last_delivered_id().ToString();
      const std::string read = std::to_string(group.entries_read());
      Log({"XGROUP", "SETID", target.key, args_.group, last, "ENTRIESREAD", read});
    }
  }

  // Any other id: the consumer's pending entries after target.after.
  void ServeHistory(const ReadTarget& target, ServedPart* part) {
    const Stream& stream = target.object->stream();
    ConsumerGroup& group = *target.group;
    if (target.after == StreamId::Max()) return;
    for (StreamId id : group.ConsumerPendingFrom(args_.consumer, target.after.Next(), Count())) {
      std::optional<StreamEntryView> entry = stream.Find(id);
      if (entry) {
        group.Redeliver(id, ctx_.now_ms);
        part->entries.push_back(ServedEntry{.entry = std::move(*entry)});
      } else {
        part->entries.push_back(ServedEntry{.entry = StreamEntryView{id, {}}, .gone = true});
      }
    }
  }

 private:
  size_t Count() const { return static_cast<size_t>(args_.count); }

  // CLAIM: the pending entries idle for min_idle_ms, longest idle first, move to the consumer.
  void ClaimIdle(const ReadTarget& target, int64_t min_idle_ms, ServedPart* part) {
    const Stream& stream = target.object->stream();
    ConsumerGroup& group = *target.group;
    ClaimOptions options;
    options.now_ms = ctx_.now_ms;
    options.delivery_time_ms = ctx_.now_ms;
    for (const PendingEntry& pending : group.IdleEntries(min_idle_ms, ctx_.now_ms, Count())) {
      std::optional<StreamEntryView> entry = stream.Find(pending.id);
      if (!entry) continue;
      const auto idle = static_cast<int64_t>(UnsignedIdle(ctx_.now_ms, pending.delivery_time_ms));
      part->entries.push_back(ServedEntry{.entry = std::move(*entry),
                                          .with_delivery = true,
                                          .idle_ms = idle,
                                          .delivery_count = pending.delivery_count});
      group.Claim(pending.id, args_.consumer, options, true);
      LogDelivery(target, pending.id, group.FindPending(pending.id)->delivery_count);
    }
  }

  void LogDelivery(const ReadTarget& target, StreamId id, uint64_t count) {
    if (!ctx_.propagating()) return;
    const std::string id_text = id.ToString();
    const std::string time = std::to_string(ctx_.now_ms);
    const std::string retry = std::to_string(count);
    const std::string last = target.group->last_delivered_id().ToString();
    Log({"XCLAIM", target.key, args_.group, args_.consumer, "0", id_text, "TIME", time,
         "RETRYCOUNT", retry, "FORCE", "JUSTID", "LASTID", last});
  }
  void Log(std::initializer_list<std::string_view> argv) {
    if (ctx_.propagating()) ctx_.Propagate(argv);
  }

  CommandContext& ctx_;
  const ReadArgs& args_;
};

void ReplyParts(CommandContext& ctx, const std::vector<ServedPart>& parts) {
  if (ctx.reply.resp3()) {
    ctx.reply.Map(parts.size());
  } else {
    ctx.reply.Array(parts.size());
  }
  for (const ServedPart& part : parts) {
    if (!ctx.reply.resp3()) ctx.reply.Array(2);
    ctx.reply.Bulk(part.key);
    ctx.reply.Array(part.entries.size());
    for (const ServedEntry& served : part.entries) {
      if (served.gone) {
        ctx.reply.Array(2);
        ctx.reply.Bulk(served.entry.id.ToString());
        ctx.reply.NullArray();
      } else if (served.with_delivery) {
        ReplyStreamEntry(ctx.reply, served.entry, /*extra=*/2);
        ctx.reply.Integer(served.idle_ms);
        ctx.reply.Integer(static_cast<int64_t>(served.delivery_count));
      } else {
        ReplyStreamEntry(ctx.reply, served.entry);
      }
    }
  }
}

// XREADGROUP's refusal of `$` and `+`: they name places in the stream, not in a consumer's
// history.
std::string MeaninglessInGroupError(std::string_view id) {
  const std::string text(id);
  return "ERR The " + text +
         " ID is meaningless in the context of XREADGROUP: you want to read the history of this "
         "consumer by specifying a proper ID, or use the > ID to get new messages. The " +
         text + " ID would just return an empty result set.";
}

// Looks up every stream and parses its id, in Redis's order (key by key: its type, its group,
// then its id). Returns false after replying an error.
bool ResolveTargets(CommandContext& ctx, const ReadArgs& args, std::vector<ReadTarget>* targets,
                    bool* resolved_last) {
  targets->resize(args.streams);
  for (size_t i = 0; i < args.streams; ++i) {
    ReadTarget& target = (*targets)[i];
    target.key = ctx.arg(args.streams_at + i);
    std::string_view id = ctx.arg(args.streams_at + args.streams + i);
    if (!LookupStreamObject(ctx, target.key, &target.object, true)) return false;
    if (args.group_read) {
      if (target.object != nullptr) target.group = target.object->FindGroup(args.group);
      if (target.group == nullptr) {
        ctx.reply.Error(NoSuchKeyOrGroupForReadError(target.key, args.group));
        return false;
      }
    }
    if (id == "$") {
      if (args.group_read) {
        ctx.reply.Error(MeaninglessInGroupError(id));
        return false;
      }
      target.after = target.object != nullptr ? target.object->stream().last_id() : StreamId::Min();
      *resolved_last = true;
      continue;
    }
    if (id == "+") {
      if (args.group_read) {
        ctx.reply.Error(MeaninglessInGroupError(id));
        return false;
      }
      // The last entry: read past the id just before it, or from the start of an empty stream.
      const bool has_entries = target.object != nullptr && !target.object->stream().empty();
      target.after =
          has_entries ? target.object->stream().last_live_id().Previous() : StreamId::Min();
      *resolved_last = true;
      continue;
    }
    if (id == ">") {
      if (!args.group_read) {
        ctx.reply.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
        return false;
      }
      target.new_entries = true;
      continue;
    }
    if (!ParseStreamIdOrReply(ctx, id, &target.after, 0, true)) return false;
    // Redis marks `>` as the largest id, so that id given in full means `>` too.
    target.new_entries = args.group_read && target.after == StreamId::Max();
  }
  return true;
}

void ReadGeneric(CommandContext& ctx, bool group_read) {
  ReadArgs args;
  args.group_read = group_read;
  if (!ParseReadArgs(ctx, &args)) return;
  std::vector<ReadTarget> targets;
  bool resolved_last = false;
  if (!ResolveTargets(ctx, args, &targets, &resolved_last)) return;
  // The group bookkeeping is logged through the XCLAIM / XGROUP forms only.
  if (group_read) ctx.PropagateOnlyRecorded();

  GroupReader reader(ctx, args);
  std::vector<ServedPart> parts;
  std::optional<int64_t> claim_min_idle = args.claim_min_idle;  // cleared by a history read
  std::optional<int64_t> first_delivery;  // of the streams' oldest pending entries (CLAIM)
  for (const ReadTarget& target : targets) {
    if (target.object == nullptr) continue;
    const Stream& stream = target.object->stream();
    if (!group_read) {
      if (stream.empty() || stream.last_live_id() <= target.after) continue;
      ServedPart part{target.key, {}};
      stream.Range(target.after.Next(), StreamId::Max(), false, static_cast<size_t>(args.count),
                   [&](const StreamEntryView& entry) {
                     part.entries.push_back(ServedEntry{.entry = entry});
                     return true;
                   });
      parts.push_back(std::move(part));
      continue;
    }
    // A history read is always served; `>` when the stream holds entries past the group's
    // last delivered id, or with CLAIM when its oldest pending entry still in the stream is
    // idle enough. The consumer is seen either way.
    const bool has_new =
        !stream.empty() && stream.last_live_id() > target.group->last_delivered_id();
    bool claimable = false;
    if (target.new_entries && claim_min_idle) {
      const std::optional<PendingEntry> oldest =
          target.group->FirstDelivered([&](StreamId id) { return stream.Find(id).has_value(); });
      if (oldest) {
        first_delivery = std::min(first_delivery.value_or(INT64_MAX), oldest->delivery_time_ms);
        claimable = UnsignedIdle(ctx.now_ms, oldest->delivery_time_ms) >=
                    static_cast<uint64_t>(*claim_min_idle);
      }
    }
    reader.See(target);
    if (target.new_entries && !has_new && !claimable) continue;
    ServedPart part{target.key, {}};
    if (target.new_entries) {
      reader.ServeNew(target, claim_min_idle, /*claims_only=*/!has_new, &part);
    } else {
      claim_min_idle.reset();
      reader.ServeHistory(target, &part);
    }
    parts.push_back(std::move(part));
    MarkDirty(ctx);
  }
  if (!parts.empty()) {
    ReplyParts(ctx, parts);
    return;
  }
  if (!args.block_ms || !ctx.client.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  const int64_t deadline = *args.block_ms == 0 ? 0 : ctx.now_ms + *args.block_ms;
  // CLAIM: run again once the oldest pending entry is idle enough (none pending: after the
  // minimum idle time); a time past the clock's range never comes.
  int64_t retry_at = 0;
  if (claim_min_idle &&
      __builtin_add_overflow(first_delivery.value_or(ctx.now_ms), *claim_min_idle, &retry_at)) {
    retry_at = 0;
  }
  const auto first_key = ctx.argv.begin() + static_cast<std::ptrdiff_t>(args.streams_at);
  std::vector<std::string_view> keys(first_key,
                                     first_key + static_cast<std::ptrdiff_t>(args.streams));
  if (!resolved_last) {
    ctx.server.BlockClient(ctx.client, ctx.argv, keys, deadline, ValueType::kStream, group_read,
                           retry_at);
    return;
  }
  std::vector<std::string> texts;
  texts.reserve(args.streams);
  for (const ReadTarget& target : targets) texts.push_back(target.after.ToString());
  std::vector<std::string_view> retry(ctx.argv.begin(), ctx.argv.end());
  for (size_t i = 0; i < args.streams; ++i) retry[args.streams_at + args.streams + i] = texts[i];
  ctx.server.BlockClient(ctx.client, retry, keys, deadline, ValueType::kStream, group_read);
}

void XreadCommand(CommandContext& ctx) { ReadGeneric(ctx, false); }
void XreadgroupCommand(CommandContext& ctx) { ReadGeneric(ctx, true); }

}  // namespace

void RegisterStreamReadCommands(CommandTable* table) {
  CommandAdder add{table, "stream", kAclStream};
  add("xread", -4, kCmdReadonly | kCmdBlocking,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Keyword("STREAMS", 1), KeyFind::Range(-1, 1, 2)}},
      XreadCommand,
      "Returns messages from multiple streams with IDs greater than the ones requested. "
      "Blocks until a message is available otherwise.",
      "5.0.0",
      "For each stream mentioned: O(N) with N being the number of elements being returned, "
      "it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option "
      "is used, XADD will pay O(M) time in order to serve the M clients blocked on the "
      "stream getting new data.",
      "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]");
  add("xreadgroup", -7, kCmdWrite | kCmdBlocking,
      {KeySpec{kKeyRO | kKeyAccess, KeyBegin::Keyword("STREAMS", 4), KeyFind::Range(-1, 1, 2)}},
      XreadgroupCommand,
      "Returns new or historical messages from a stream for a consumer in a group. Blocks "
      "until a message is available otherwise.",
      "5.0.0",
      "For each stream mentioned: O(M) with M being the number of elements returned. If M is "
      "constant (e.g. always asking for the first 10 elements with COUNT), you can consider it "
      "O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to "
      "serve the N clients blocked on the stream getting new data.",
      "GROUP group consumer [COUNT count] [BLOCK milliseconds] [CLAIM min-idle-time] [NOACK] "
      "STREAMS key [key ...] id [id ...]");
}

}  // namespace goblin
