// Consumer-group commands: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
// XACK, XACKDEL, XPENDING, XCLAIM, XAUTOCLAIM. The groups live beside the entries in the key's
// StreamObject (core/stream_groups.h holds the pending entries lists).
//
// Arguments are checked in Redis's order, so a command with several faults reports the one
// Redis reports. As in Redis, none of them counts as a change of the key for WATCH (only
// XGROUP CREATE MKSTREAM making the key does), and only XGROUP DESTROY wakes blocked
// readers (which then answer NOGROUP).
//
// Effects: XCLAIM and XAUTOCLAIM are logged entry by entry, as Redis propagates them: a claimed
// entry as `XCLAIM key group consumer 0 id TIME <delivery ms> RETRYCOUNT <count> FORCE JUSTID
// LASTID <last delivered id>` (the exact state, whatever the idle test saw), a pending entry
// dropped because its stream entry is gone as `XACK key group id`; XCLAIM's LASTID alone as
// `XGROUP SETID`. XGROUP's subcommands and XACK replay as they arrived.
#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/stream_family.h"
#include "core/ascii.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {
namespace {

// The stream object and group named by argv[1] and argv[2], for XCLAIM / XAUTOCLAIM /
// XPENDING. Returns false after replying WRONGTYPE or NOGROUP.
bool LookupGroupOrReply(CommandContext& ctx, StreamObject** object, ConsumerGroup** group) {
  if (!LookupStreamObject(ctx, ctx.arg(1), object, true)) return false;
  *group = *object == nullptr ? nullptr : (*object)->FindGroup(ctx.arg(2));
  if (*group != nullptr) return true;
  ctx.reply.Error(NoSuchKeyOrGroupError(ctx.arg(1), ctx.arg(2)));
  return false;
}

// An integer argument, replying "ERR <message>" (or the generic message) when it is not one.
bool ParseIntegerOrReply(CommandContext& ctx, std::string_view text, int64_t* value,
                         std::string_view message = {}) {
  if (ParseInt64(text, value)) return true;
  ctx.reply.Error(message.empty() ? std::string(errors::kNotInteger)
                                  : "ERR " + std::string(message));
  return false;
}

// --- XGROUP -----------------------------------------------------------------------------------

void XgroupHelpCommand(CommandContext& ctx) {
  ReplyHelp(
      ctx, {"CREATE <key> <groupname> <id|$> [option]",
            "    Create a new consumer group. Options are:", "    * MKSTREAM",
            "      Create the empty stream if it does not exist.", "    * ENTRIESREAD entries_read",
            "      Set the group's entries_read counter (internal use).",
            "CREATECONSUMER <key> <groupname> <consumer>",
            "    Create a new consumer in the specified group.",
            "DELCONSUMER <key> <groupname> <consumer>", "    Remove the specified consumer.",
            "DESTROY <key> <groupname>", "    Remove the specified group.",
            "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
            "    Set the current group ID and entries_read counter."});
}

bool ParseEntriesReadOrReply(CommandContext& ctx, std::string_view text, int64_t* entries_read) {
  if (!ParseIntegerOrReply(ctx, text, entries_read)) return false;
  if (*entries_read < 0 && *entries_read != kEntriesReadUnknown) {
    ctx.reply.Error("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  return true;
}

// Redis's xgroupCommand: the options first, then the key and the group, then the subcommand.
void XgroupCommand(CommandContext& ctx) {
  const std::string subcommand = AsciiLower(ctx.arg(1));
  const std::string_view key = ctx.arg(2);
  const std::string_view name = ctx.arg(3);
  auto syntax_error = [&] {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "XGROUP"));
  };
  // MKSTREAM (CREATE) and ENTRIESREAD (CREATE, SETID), repeatable; the argument count is
  // checked with the subcommand, after the key.
  bool mkstream = false;
  int64_t entries_read = kEntriesReadUnknown;
  const bool create = subcommand == "create";
  if (create || subcommand == "setid") {
    for (size_t i = 5; i < ctx.argc();) {
      if (create && EqualsIgnoreCase(ctx.arg(i), "mkstream")) {
        mkstream = true;
        ++i;
      } else if (EqualsIgnoreCase(ctx.arg(i), "entriesread") && i + 1 < ctx.argc()) {
        if (!ParseEntriesReadOrReply(ctx, ctx.arg(i + 1), &entries_read)) return;
        i += 2;
      } else {
        syntax_error();
        return;
      }
    }
  }
  StreamObject* object;
  if (!LookupStreamObject(ctx, key, &object, false)) return;
  ConsumerGroup* group = object == nullptr ? nullptr : object->FindGroup(name);
  if (!mkstream) {
    if (object == nullptr) {
      ctx.reply.Error(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
          "want to use the MKSTREAM option to create an empty stream automatically.");
      return;
    }
    if (group == nullptr &&
        (subcommand == "setid" || subcommand == "createconsumer" || subcommand == "delconsumer")) {
      ctx.reply.Error(NoSuchGroupError(key, name));
      return;
    }
  }

  if (create && ctx.argc() >= 5 && ctx.argc() <= 8) {
    StreamId id;
    if (ctx.arg(4) == "$") {
      id = object != nullptr ? object->stream().last_id() : StreamId::Min();
    } else if (!ParseStreamIdOrReply(ctx, ctx.arg(4), &id, 0, true)) {
      return;
    }
    if (object == nullptr) {  // MKSTREAM: the command can no longer fail
      object = new StreamObject(Stream(StreamLimitsOf(ctx.server.config)));
      ctx.db().Put(key, EntryValue::Object(object), std::nullopt);
    }
    if (object->EnsureGroups().Create(name, id, entries_read) == nullptr) {
      ctx.reply.Error("BUSYGROUP Consumer Group name already exists");
      return;
    }
    MarkDirty(ctx);
    Notify(ctx, kNotifyStream, "xgroup-create", key);
    ctx.reply.Ok();
  } else if (subcommand == "setid" && (ctx.argc() == 5 || ctx.argc() == 7)) {
    StreamId id;
    if (ctx.arg(4) == "$") {
      id = object->stream().last_id();
    } else if (!ParseStreamIdOrReply(ctx, ctx.arg(4), &id, 0, false)) {
      return;
    }
    group->SetId(id, entries_read);
    MarkDirty(ctx);
    Notify(ctx, kNotifyStream, "xgroup-setid", key);
    ctx.reply.Ok();
  } else if (subcommand == "destroy" && ctx.argc() == 4) {
    if (group == nullptr) {
      ctx.reply.Integer(0);
      return;
    }
    object->groups()->Destroy(name);
    ctx.db().WakeBlocked(key);  // its XREADGROUP waiters run again and get NOGROUP
    MarkDirty(ctx);
    Notify(ctx, kNotifyStream, "xgroup-destroy", key);
    ctx.reply.Integer(1);
  } else if (subcommand == "createconsumer" && ctx.argc() == 5) {
    const bool created = group->CreateConsumer(ctx.arg(4), ctx.now_ms);
    if (created) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyStream, "xgroup-createconsumer", key);
    }
    ctx.reply.Integer(created ? 1 : 0);
  } else if (subcommand == "delconsumer" && ctx.argc() == 5) {
    const std::optional<uint64_t> pending = group->DeleteConsumer(ctx.arg(4));
    if (pending) {
      MarkDirty(ctx);
      Notify(ctx, kNotifyStream, "xgroup-delconsumer", key);
    }
    ctx.reply.Integer(static_cast<int64_t>(pending.value_or(0)));
  } else {
    syntax_error();
  }
}

// --- XACK -------------------------------------------------------------------------------------

void XackCommand(CommandContext& ctx) {
  StreamObject* object;
  if (!LookupStreamObject(ctx, ctx.arg(1), &object, true)) return;
  ConsumerGroup* group = object == nullptr ? nullptr : object->FindGroup(ctx.arg(2));
  if (group == nullptr) {  // no key or no group: nothing to acknowledge, ids unchecked
    ctx.reply.Integer(0);
    return;
  }
  // Every id is parsed before any is acknowledged: the reply is a count or an error.
  std::vector<StreamId> ids(ctx.argc() - 3);
  for (size_t i = 3; i < ctx.argc(); ++i) {
    if (!ParseStreamIdOrReply(ctx, ctx.arg(i), &ids[i - 3], 0, true)) return;
  }
  const size_t acknowledged = group->Ack(ids);
  MarkDirty(ctx, acknowledged);
  ctx.reply.Integer(static_cast<int64_t>(acknowledged));
}

// XACKDEL key group [KEEPREF | DELREF | ACKED] IDS numids id ...: acknowledges each id in the
// group, then deletes its entry as the policy allows. Per id -1 (not pending in the group, or
// no such key or group), 1 (acknowledged, and the entry deleted or already gone) or 2
// (acknowledged; ACKED keeps the entry another group still refers to).
void XackdelCommand(CommandContext& ctx) {
  RefPolicy policy;
  std::vector<StreamId> ids;
  StreamObject* object;
  if (!StartRefCommand(ctx, 3, &policy, &ids, &object)) return;
  ConsumerGroup* group = object == nullptr ? nullptr : object->FindGroup(ctx.arg(2));
  ctx.reply.Array(ids.size());
  if (group == nullptr) {
    for (size_t k = 0; k < ids.size(); ++k) ctx.reply.Integer(-1);
    return;
  }
  Stream& stream = object->stream();
  StreamGroups& groups = *object->groups();
  uint64_t acknowledged = 0;
  uint64_t deleted = 0;
  for (const StreamId id : ids) {
    if (!group->Remove(id)) {
      ctx.reply.Integer(-1);
      continue;
    }
    ++acknowledged;
    if (policy == RefPolicy::kAcked && groups.References(id)) {
      ctx.reply.Integer(2);
      continue;
    }
    deleted += stream.Delete(id) ? 1 : 0;
    if (policy == RefPolicy::kDelRef) groups.RemoveEverywhere(id);
    ctx.reply.Integer(1);
  }
  if (acknowledged == 0) return;
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx, acknowledged + deleted);
  if (deleted > 0) Notify(ctx, kNotifyStream, "xdel", ctx.arg(1));
}

// --- XPENDING ---------------------------------------------------------------------------------

void ReplyPendingSummary(CommandContext& ctx, const ConsumerGroup& group) {
  const PendingSummary summary = group.Summary();
  ctx.reply.Array(4);
  ctx.reply.Integer(static_cast<int64_t>(summary.count));
  if (summary.count == 0) {
    ctx.reply.Null();
    ctx.reply.Null();
    ctx.reply.NullArray();
    return;
  }
  ctx.reply.Bulk(summary.min_id.ToString());
  ctx.reply.Bulk(summary.max_id.ToString());
  ctx.reply.Array(summary.consumers.size());
  for (const auto& [consumer, pending] : summary.consumers) {
    ctx.reply.Array(2);
    ctx.reply.Bulk(consumer);
    ctx.reply.Bulk(std::to_string(pending));
  }
}

// XPENDING key group [[IDLE min-idle-time] start end count [consumer]]
void XpendingCommand(CommandContext& ctx) {
  const bool summary = ctx.argc() == 3;
  if (!summary && (ctx.argc() < 6 || ctx.argc() > 9)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  int64_t min_idle = 0;
  int64_t count = 0;
  StreamId start;
  StreamId end;
  std::optional<std::string_view> consumer;
  if (!summary) {
    size_t at = 3;
    if (EqualsIgnoreCase(ctx.arg(3), "idle")) {
      if (!ParseIntegerOrReply(ctx, ctx.arg(4), &min_idle)) return;
      if (ctx.argc() < 8) {  // IDLE needs start, end and count after it
        ctx.reply.Error(errors::kSyntax);
        return;
      }
      at += 2;
    }
    if (!ParseIntegerOrReply(ctx, ctx.arg(at + 2), &count)) return;
    if (count < 0) count = 0;
    if (!ParseRangeBoundOrReply(ctx, ctx.arg(at), false, &start) ||
        !ParseRangeBoundOrReply(ctx, ctx.arg(at + 1), true, &end)) {
      return;
    }
    if (at + 3 < ctx.argc()) consumer = ctx.arg(at + 3);
  }
  StreamObject* object;
  ConsumerGroup* group;
  if (!LookupGroupOrReply(ctx, &object, &group)) return;
  if (summary) {
    ReplyPendingSummary(ctx, *group);
    return;
  }
  const std::vector<PendingEntry> entries =
      group->PendingRange(start, end, static_cast<size_t>(count), consumer, min_idle, ctx.now_ms);
  ctx.reply.Array(entries.size());
  for (const PendingEntry& entry : entries) {
    ctx.reply.Array(4);
    ctx.reply.Bulk(entry.id.ToString());
    ctx.reply.Bulk(entry.consumer);
    ctx.reply.Integer(std::max<int64_t>(0, ctx.now_ms - entry.delivery_time_ms));
    ctx.reply.Integer(static_cast<int64_t>(entry.delivery_count));
  }
}

// --- XCLAIM and XAUTOCLAIM --------------------------------------------------------------------

// Logs one claimed entry in the form that sets its state exactly.
void LogClaimed(CommandContext& ctx, const ConsumerGroup& group, StreamId id) {
  if (!ctx.propagating()) return;
  const std::optional<PendingEntry> entry = group.FindPending(id);
  if (!entry) return;
  const std::string id_text = id.ToString();
  const std::string time = std::to_string(entry->delivery_time_ms);
  const std::string count = std::to_string(entry->delivery_count);
  const std::string last = group.last_delivered_id().ToString();
  ctx.Propagate({"XCLAIM", ctx.arg(1), ctx.arg(2), entry->consumer, "0", id_text, "TIME", time,
                 "RETRYCOUNT", count, "FORCE", "JUSTID", "LASTID", last});
}

void LogDropped(CommandContext& ctx, StreamId id) {
  if (!ctx.propagating()) return;
  const std::string id_text = id.ToString();
  ctx.Propagate({"XACK", ctx.arg(1), ctx.arg(2), id_text});
}

// A claimed entry in the reply: its id alone (JUSTID) or the entry.
void ReplyClaimed(CommandContext& ctx, const Stream& stream, StreamId id, bool justid) {
  if (justid) {
    ctx.reply.Bulk(id.ToString());
    return;
  }
  ReplyStreamEntry(ctx.reply, *stream.Find(id));
}

// XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds]
//        [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]
void XclaimCommand(CommandContext& ctx) {
  StreamObject* object;
  ConsumerGroup* group;
  if (!LookupGroupOrReply(ctx, &object, &group)) return;
  int64_t min_idle = 0;
  if (!ParseIntegerOrReply(ctx, ctx.arg(4), &min_idle,
                           "Invalid min-idle-time argument for XCLAIM")) {
    return;
  }
  // The ids run up to the first argument that is not one; the options follow.
  std::vector<StreamId> ids;
  size_t i = 5;
  for (StreamId id; i < ctx.argc() && ParseStreamId(ctx.arg(i), &id, 0, true); ++i) {
    ids.push_back(id);
  }
  const int64_t now = ctx.now_ms;
  std::optional<int64_t> delivery_time;
  int64_t retry_count = -1;
  bool force = false;
  bool justid = false;
  std::optional<StreamId> last_id;
  for (; i < ctx.argc(); ++i) {
    const bool more = i + 1 < ctx.argc();
    std::string_view option = ctx.arg(i);
    int64_t value = 0;
    if (EqualsIgnoreCase(option, "force")) {
      force = true;
    } else if (EqualsIgnoreCase(option, "justid")) {
      justid = true;
    } else if (EqualsIgnoreCase(option, "idle") && more) {
      if (!ParseIntegerOrReply(ctx, ctx.arg(++i), &value,
                               "Invalid IDLE option argument for XCLAIM")) {
        return;
      }
      // Wrapping as Redis's long long arithmetic does: an absurd IDLE becomes "now" below.
      delivery_time =
          static_cast<int64_t>(static_cast<uint64_t>(now) - static_cast<uint64_t>(value));
    } else if (EqualsIgnoreCase(option, "time") && more) {
      if (!ParseIntegerOrReply(ctx, ctx.arg(++i), &value,
                               "Invalid TIME option argument for XCLAIM")) {
        return;
      }
      delivery_time = value;
    } else if (EqualsIgnoreCase(option, "retrycount") && more) {
      if (!ParseIntegerOrReply(ctx, ctx.arg(++i), &retry_count,
                               "Invalid RETRYCOUNT option argument for XCLAIM")) {
        return;
      }
    } else if (EqualsIgnoreCase(option, "lastid") && more) {
      StreamId last;
      if (!ParseStreamIdOrReply(ctx, ctx.arg(++i), &last, 0, true)) return;
      last_id = last;
    } else {
      ctx.reply.Error("ERR Unrecognized XCLAIM option '" + errors::Quote(option) + "'");
      return;
    }
  }
  // A time in the future or before the epoch means now (clients compute it from their clocks).
  if (!delivery_time || *delivery_time < 0 || *delivery_time > now) delivery_time = now;
  // LASTID moves the group forward only (its read counter stays).
  bool log_last_id = false;
  if (last_id && *last_id > group->last_delivered_id()) {
    group->SetId(*last_id, group->entries_read());
    log_last_id = true;
  }

  ctx.PropagateOnlyRecorded();
  SeeConsumer(ctx, *group, ctx.arg(1), ctx.arg(2), ctx.arg(3));
  const Stream& stream = object->stream();
  ClaimOptions options;
  options.now_ms = now;
  options.min_idle_ms = std::max<int64_t>(min_idle, 0);
  options.delivery_time_ms = *delivery_time;
  if (retry_count >= 0) options.retry_count = static_cast<uint64_t>(retry_count);
  options.increment_count = !justid;
  options.force = force;
  std::vector<StreamId> claimed;
  for (const StreamId& id : ids) {
    switch (group->Claim(id, ctx.arg(3), options, stream.Find(id).has_value())) {
      case ClaimResult::kClaimed:
        claimed.push_back(id);
        LogClaimed(ctx, *group, id);
        log_last_id = false;  // each XCLAIM logged carries LASTID
        MarkDirty(ctx);
        break;
      case ClaimResult::kRemoved:
        LogDropped(ctx, id);
        MarkDirty(ctx);
        break;
      case ClaimResult::kNotPending:
      case ClaimResult::kTooRecent:
        break;
    }
  }
  if (log_last_id) {
    MarkDirty(ctx);
    if (ctx.propagating()) {
      const std::string last = group->last_delivered_id().ToString();
      const std::string read = std::to_string(group->entries_read());
      ctx.Propagate({"XGROUP", "SETID", ctx.arg(1), ctx.arg(2), last, "ENTRIESREAD", read});
    }
  }
  ctx.reply.Array(claimed.size());
  for (const StreamId& id : claimed) ReplyClaimed(ctx, stream, id, justid);
}

// XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]
void XautoclaimCommand(CommandContext& ctx) {
  int64_t min_idle = 0;
  if (!ParseIntegerOrReply(ctx, ctx.arg(4), &min_idle,
                           "Invalid min-idle-time argument for XAUTOCLAIM")) {
    return;
  }
  StreamId start;
  if (!ParseRangeBoundOrReply(ctx, ctx.arg(5), false, &start)) return;
  int64_t count = 100;
  bool justid = false;
  // COUNT's ceiling keeps count * 10 attempts (and the reply's ids) within a long.
  constexpr int64_t kMaxCount = INT64_MAX / 16;
  for (size_t i = 6; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "count") && i + 1 < ctx.argc()) {
      if (!ParseInt64(ctx.arg(i + 1), &count) || count < 1 || count > kMaxCount) {
        ctx.reply.Error(errors::kCountMustBePositive);
        return;
      }
      ++i;
    } else if (EqualsIgnoreCase(ctx.arg(i), "justid")) {
      justid = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  StreamObject* object;
  ConsumerGroup* group;
  if (!LookupGroupOrReply(ctx, &object, &group)) return;
  // Redis allocates COUNT ids up front and refuses a COUNT no machine could map (16 bytes an id
  // past the 2^47 bytes of an x86-64 process's address space). Smaller counts cost nothing
  // here: ids are gathered as found.
  constexpr int64_t kUnmappableCount = int64_t{1} << 43;
  if (count >= kUnmappableCount) {
    ctx.reply.Error("ERR Insufficient memory, failed allocating transient memory, COUNT too high.");
    return;
  }
  ctx.PropagateOnlyRecorded();
  SeeConsumer(ctx, *group, ctx.arg(1), ctx.arg(2), ctx.arg(3));
  const Stream& stream = object->stream();
  const AutoClaimResult result = group->AutoClaim(
      ctx.arg(3), start, static_cast<size_t>(count), std::max<int64_t>(min_idle, 0), ctx.now_ms,
      justid, [&](StreamId id) { return stream.Find(id).has_value(); });
  for (const StreamId& id : result.claimed) LogClaimed(ctx, *group, id);
  for (const StreamId& id : result.deleted) LogDropped(ctx, id);
  const size_t changes = result.claimed.size() + result.deleted.size();
  MarkDirty(ctx, changes);
  ctx.reply.Array(3);
  ctx.reply.Bulk(result.next.ToString());
  ctx.reply.Array(result.claimed.size());
  for (const StreamId& id : result.claimed) ReplyClaimed(ctx, stream, id, justid);
  ctx.reply.Array(result.deleted.size());
  for (const StreamId& id : result.deleted) ctx.reply.Bulk(id.ToString());
}

}  // namespace

void RegisterStreamGroupCommands(CommandTable* table) {
  CommandAdder add{table, "stream", kAclStream};
  Command* xgroup = add("xgroup", -2, 0, {}, nullptr, "A container for consumer groups commands.",
                        "5.0.0", "Depends on subcommand.", "");
  add.Sub(xgroup, "create", -5, kCmdWrite | kCmdDenyOom, {KeyAt(2, kKeyRW | kKeyInsert)},
          XgroupCommand, "Creates a consumer group.", "5.0.0", "O(1)",
          "key group <id | $> [MKSTREAM] [ENTRIESREAD entries-read]");
  add.Sub(xgroup, "createconsumer", 5, kCmdWrite | kCmdDenyOom, {KeyAt(2, kKeyRW | kKeyInsert)},
          XgroupCommand, "Creates a consumer in a consumer group.", "6.2.0", "O(1)",
          "key group consumer");
  add.Sub(xgroup, "delconsumer", 5, kCmdWrite, {KeyAt(2, kKeyRW | kKeyDelete)}, XgroupCommand,
          "Deletes a consumer from a consumer group.", "5.0.0", "O(1)", "key group consumer");
  add.Sub(xgroup, "destroy", 4, kCmdWrite, {KeyAt(2, kKeyRW | kKeyDelete)}, XgroupCommand,
          "Destroys a consumer group.", "5.0.0",
          "O(N) where N is the number of entries in the group's pending entries list (PEL).",
          "key group");
  add.Sub(xgroup, "help", 2, kCmdLoading | kCmdStale, {}, XgroupHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
  add.Sub(xgroup, "setid", -5, kCmdWrite, {KeyAt(2, kKeyRW | kKeyUpdate)}, XgroupCommand,
          "Sets the last-delivered ID of a consumer group.", "5.0.0", "O(1)",
          "key group <id | $> [ENTRIESREAD entries-read]");
  add("xack", -4, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, XackCommand,
      "Returns the number of messages that were successfully acknowledged by the consumer group "
      "member of a stream.",
      "5.0.0", "O(1) for each message ID processed.", "key group id [id ...]");
  Command* xackdel =
      add("xackdel", -6, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate | kKeyDelete)},
          XackdelCommand,
          "Acknowledges and deletes one or multiple messages for a stream consumer group.", "8.2.0",
          "O(1) for each message ID processed.",
          "key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]");
  xackdel->arguments = {
      docs::Key("key", 0), docs::String("group"),
      docs::Optional(docs::OneOf(
          "condition", {docs::Token("keepref", "KEEPREF"), docs::Token("delref", "DELREF"),
                        docs::Token("acked", "ACKED")})),
      docs::Block("ids", {docs::Integer("numids"), docs::Multiple(docs::String("id"))}, "IDS")};
  add("xpending", -3, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, XpendingCommand,
      "Returns the information and entries from a stream consumer group's pending entries list.",
      "5.0.0",
      "O(N) with N being the number of elements returned, so asking for a small fixed number of "
      "entries per call is O(1). O(M), where M is the total number of entries scanned when used "
      "with the IDLE filter. When the command returns just the summary and the list of consumers "
      "is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every "
      "consumer.",
      "key group [[IDLE min-idle-time] start end count [consumer]]", {"nondeterministic_output"});
  add("xclaim", -6, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate)}, XclaimCommand,
      "Changes, or acquires, ownership of a message in a consumer group, as if the message was "
      "delivered a consumer group member.",
      "5.0.0", "O(log N) with N being the number of messages in the PEL of the consumer group.",
      "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] "
      "[RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]",
      {"nondeterministic_output"});
  add("xautoclaim", -6, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, XautoclaimCommand,
      "Changes, or acquires, ownership of messages in a consumer group, as if the messages were "
      "delivered to as consumer group member.",
      "6.2.0", "O(1) if COUNT is small.",
      "key group consumer min-idle-time start [COUNT count] [JUSTID]", {"nondeterministic_output"});
}

}  // namespace goblin
