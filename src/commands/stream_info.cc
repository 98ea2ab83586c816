// XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP, with Redis 7.2's
// fields in Redis's order. Records are maps (flat arrays in RESP2).
//
// radix-tree-keys and radix-tree-nodes describe Redis's radix tree of listpacks; Goblin reports
// its own packed nodes there (keys: the nodes, nodes: the nodes plus the index's root), so the
// numbers are of the same kind but not Redis's.
#include <algorithm>
#include <cstdint>
#include <string>

#include "commands/families.h"
#include "commands/stream_family.h"
#include "core/ascii.h"
#include "core/string_number.h"
#include "server/errors.h"

namespace goblin {
namespace {

void XinfoHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, {"CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.",
                  "GROUPS <key>", "    Show the stream consumer groups.",
                  "STREAM <key> [FULL [COUNT <count>]", "    Show information about the stream."});
}

// The stream at argv[2], or false after replying "no such key" or WRONGTYPE.
bool LookupInfoTarget(CommandContext& ctx, StreamObject** object) {
  if (!LookupStreamObject(ctx, ctx.arg(2), object, true)) return false;
  if (*object != nullptr) return true;
  ctx.reply.Error(errors::kNoSuchKey);
  return false;
}

void ReplyEntryOrNull(ReplyBuilder& reply, const Stream& stream, bool last) {
  if (stream.empty()) {
    reply.Null();
    return;
  }
  ReplyStreamEntry(reply, *stream.Find(last ? stream.last_live_id() : stream.first_id()));
}

void ReplyOptionalCount(ReplyBuilder& reply, std::optional<int64_t> value) {
  if (value) {
    reply.Integer(*value);
  } else {
    reply.Null();
  }
}

// The fields XINFO STREAM and its FULL form share, in order.
void ReplyStreamHeader(ReplyBuilder& reply, const Stream& stream) {
  const int64_t nodes = static_cast<int64_t>(stream.node_count());
  reply.Bulk("length");
  reply.Integer(static_cast<int64_t>(stream.size()));
  reply.Bulk("radix-tree-keys");
  reply.Integer(nodes);
  reply.Bulk("radix-tree-nodes");
  reply.Integer(nodes + 1);
  reply.Bulk("last-generated-id");
  reply.Bulk(stream.last_id().ToString());
  reply.Bulk("max-deleted-entry-id");
  reply.Bulk(stream.max_deleted_id().ToString());
  reply.Bulk("entries-added");
  reply.Integer(static_cast<int64_t>(stream.entries_added()));
  reply.Bulk("recorded-first-entry-id");
  reply.Bulk(stream.empty() ? StreamId::Min().ToString() : stream.first_id().ToString());
}

void ReplyGroupCounters(ReplyBuilder& reply, const Stream& stream, const ConsumerGroup& group) {
  reply.Bulk("entries-read");
  const int64_t read = group.entries_read();
  ReplyOptionalCount(reply, read == kEntriesReadUnknown ? std::nullopt : std::optional(read));
  reply.Bulk("lag");
  ReplyOptionalCount(reply, group.Lag(stream));
}

// XINFO STREAM key FULL [COUNT n]: n entries, and per group n pending entries and per
// consumer n of its own (0: all).
void ReplyStreamFull(CommandContext& ctx, const StreamObject& object, size_t count) {
  ReplyBuilder& reply = ctx.reply;
  const Stream& stream = object.stream();
  const size_t limit = count == 0 ? SIZE_MAX : count;
  reply.Map(9);
  ReplyStreamHeader(reply, stream);
  reply.Bulk("entries");
  std::vector<StreamEntryView> entries;
  stream.Range(StreamId::Min(), StreamId::Max(), false, count, [&](const StreamEntryView& entry) {
    entries.push_back(entry);
    return true;
  });
  reply.Array(entries.size());
  for (const StreamEntryView& entry : entries) ReplyStreamEntry(reply, entry);
  reply.Bulk("groups");
  const StreamGroups* groups = object.groups();
  reply.Array(groups == nullptr ? 0 : groups->size());
  if (groups == nullptr) return;
  groups->ForEach([&](std::string_view name, const ConsumerGroup& group) {
    reply.Map(7);
    reply.Bulk("name");
    reply.Bulk(name);
    reply.Bulk("last-delivered-id");
    reply.Bulk(group.last_delivered_id().ToString());
    ReplyGroupCounters(reply, stream, group);
    reply.Bulk("pel-count");
    reply.Integer(static_cast<int64_t>(group.pending_count()));
    reply.Bulk("pending");
    const auto pending =
        group.PendingRange(StreamId::Min(), StreamId::Max(), limit, std::nullopt, 0, ctx.now_ms);
    reply.Array(pending.size());
    for (const PendingEntry& entry : pending) {
      reply.Array(4);
      reply.Bulk(entry.id.ToString());
      reply.Bulk(entry.consumer);
      reply.Integer(entry.delivery_time_ms);
      reply.Integer(static_cast<int64_t>(entry.delivery_count));
    }
    reply.Bulk("consumers");
    reply.Array(group.consumer_count());
    group.ForEachConsumer([&](const ConsumerInfo& consumer) {
      reply.Map(5);
      reply.Bulk("name");
      reply.Bulk(consumer.name);
      reply.Bulk("seen-time");
      reply.Integer(consumer.seen_time_ms);
      reply.Bulk("active-time");
      reply.Integer(consumer.active_time_ms);
      reply.Bulk("pel-count");
      reply.Integer(static_cast<int64_t>(consumer.pending));
      reply.Bulk("pending");
      const auto own =
          group.PendingRange(StreamId::Min(), StreamId::Max(), limit, consumer.name, 0, ctx.now_ms);
      reply.Array(own.size());
      for (const PendingEntry& entry : own) {
        reply.Array(3);
        reply.Bulk(entry.id.ToString());
        reply.Integer(entry.delivery_time_ms);
        reply.Integer(static_cast<int64_t>(entry.delivery_count));
      }
    });
  });
}

// XINFO STREAM key [FULL [COUNT count]]
void XinfoStreamCommand(CommandContext& ctx) {
  StreamObject* object;
  if (!LookupInfoTarget(ctx, &object)) return;
  const size_t argc = ctx.argc();
  const bool full = argc > 3;
  int64_t count = 10;
  if (full) {
    if (!EqualsIgnoreCase(ctx.arg(3), "full") ||
        (argc > 4 && (argc != 6 || !EqualsIgnoreCase(ctx.arg(4), "count")))) {
      ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "XINFO"));
      return;
    }
    if (argc == 6) {
      if (!ParseInt64(ctx.arg(5), &count)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (count < 0) count = 10;
    }
    ReplyStreamFull(ctx, *object, static_cast<size_t>(count));
    return;
  }
  const Stream& stream = object->stream();
  ctx.reply.Map(10);
  ReplyStreamHeader(ctx.reply, stream);
  ctx.reply.Bulk("groups");
  ctx.reply.Integer(object->groups() == nullptr ? 0
                                                : static_cast<int64_t>(object->groups()->size()));
  ctx.reply.Bulk("first-entry");
  ReplyEntryOrNull(ctx.reply, stream, false);
  ctx.reply.Bulk("last-entry");
  ReplyEntryOrNull(ctx.reply, stream, true);
}

void XinfoGroupsCommand(CommandContext& ctx) {
  StreamObject* object;
  if (!LookupInfoTarget(ctx, &object)) return;
  const StreamGroups* groups = object->groups();
  ctx.reply.Array(groups == nullptr ? 0 : groups->size());
  if (groups == nullptr) return;
  groups->ForEach([&](std::string_view name, const ConsumerGroup& group) {
    ctx.reply.Map(6);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("consumers");
    ctx.reply.Integer(static_cast<int64_t>(group.consumer_count()));
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(group.pending_count()));
    ctx.reply.Bulk("last-delivered-id");
    ctx.reply.Bulk(group.last_delivered_id().ToString());
    ReplyGroupCounters(ctx.reply, object->stream(), group);
  });
}

void XinfoConsumersCommand(CommandContext& ctx) {
  StreamObject* object;
  if (!LookupInfoTarget(ctx, &object)) return;
  const ConsumerGroup* group = object->FindGroup(ctx.arg(3));
  if (group == nullptr) {
    ctx.reply.Error(NoSuchGroupError(ctx.arg(2), ctx.arg(3)));
    return;
  }
  ctx.reply.Array(group->consumer_count());
  group->ForEachConsumer([&](const ConsumerInfo& consumer) {
    ctx.reply.Map(4);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(consumer.name);
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(consumer.pending));
    ctx.reply.Bulk("idle");
    ctx.reply.Integer(std::max<int64_t>(0, ctx.now_ms - consumer.seen_time_ms));
    ctx.reply.Bulk("inactive");
    ctx.reply.Integer(consumer.active_time_ms == -1 ? -1 : ctx.now_ms - consumer.active_time_ms);
  });
}

}  // namespace

void RegisterStreamInfoCommand(CommandTable* table) {
  CommandAdder add{table, "stream", kAclStream};
  Command* xinfo =
      add("xinfo", -2, 0, {}, nullptr, "A container for stream introspection commands.", "5.0.0",
          "Depends on subcommand.", "");
  add.Sub(xinfo, "consumers", 4, kCmdReadonly, {KeyAt(2, kKeyRO | kKeyAccess)},
          XinfoConsumersCommand, "Returns a list of the consumers in a consumer group.", "5.0.0",
          "O(1)", "key group", {"nondeterministic_output"});
  add.Sub(xinfo, "groups", 3, kCmdReadonly, {KeyAt(2, kKeyRO | kKeyAccess)}, XinfoGroupsCommand,
          "Returns a list of the consumer groups of a stream.", "5.0.0", "O(1)", "key");
  add.Sub(xinfo, "help", 2, kCmdLoading | kCmdStale, {}, XinfoHelpCommand,
          "Returns helpful text about the different subcommands.", "5.0.0", "O(1)", "");
  add.Sub(xinfo, "stream", -3, kCmdReadonly, {KeyAt(2, kKeyRO | kKeyAccess)}, XinfoStreamCommand,
          "Returns information about a stream.", "5.0.0", "O(1)", "key [FULL [COUNT count]]");
}

}  // namespace goblin
