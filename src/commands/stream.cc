// Stream commands: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XREAD XSETID.
//
// Every command works on the Stream inside the key's StreamObject (core/stream_object.h).
// Arguments are checked in Redis's order, so a command with several faults reports the one
// Redis reports. A stream key stays when its last entry is deleted, as in Redis.
//
// Effects: XADD with an id the server chose (`*`, `<ms>-*`) is logged with that id, and an
// approximate trim (`~`, LIMIT) as the exact trim it turned out to be (MAXLEN = <length left>
// or MINID = <first id left>), so the append-only file replays to the same stream.
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {
namespace {

constexpr std::string_view kInvalidId =
    "ERR Invalid stream ID specified as stream command argument";

// Redis's string2ull: a decimal that string2ll reads as non-negative, or else what strtoull
// accepts whole (which admits a leading '+' or spaces, as Redis does).
bool ParseUint64(std::string_view text, uint64_t* value) {
  int64_t signed_value = 0;
  if (ParseInt64(text, &signed_value)) {
    if (signed_value < 0) return false;
    *value = static_cast<uint64_t>(signed_value);
    return true;
  }
  if (text.empty() || text.size() > 64 || text.find('\0') != std::string_view::npos) return false;
  std::string copy(text);
  errno = 0;
  char* end = nullptr;
  *value = std::strtoull(copy.c_str(), &end, 10);
  return errno != EINVAL && errno != ERANGE && end == copy.c_str() + copy.size();
}

// An id argument. "-" and "+" are the extremes unless strict; a missing seq is missing_seq;
// "<ms>-*" is allowed only where seq_auto is given (XADD), which it then sets.
bool ParseId(std::string_view text, StreamId* id, uint64_t missing_seq, bool strict,
             bool* seq_auto = nullptr) {
  if (seq_auto != nullptr) *seq_auto = false;
  if (!strict && text == "-") {
    *id = StreamId::Min();
    return true;
  }
  if (!strict && text == "+") {
    *id = StreamId::Max();
    return true;
  }
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    id->seq = missing_seq;
    return ParseUint64(text, &id->ms);
  }
  if (!ParseUint64(text.substr(0, dash), &id->ms)) return false;
  std::string_view seq = text.substr(dash + 1);
  if (seq_auto != nullptr && seq == "*") {
    *seq_auto = true;
    id->seq = 0;
    return true;
  }
  return ParseUint64(seq, &id->seq);
}

bool ParseIdOrReply(CommandContext& ctx, std::string_view text, StreamId* id, uint64_t missing_seq,
                    bool strict, bool* seq_auto = nullptr) {
  if (ParseId(text, id, missing_seq, strict, seq_auto)) return true;
  ctx.reply.Error(kInvalidId);
  return false;
}

// The stream at key. Returns false after replying WRONGTYPE; *stream is nullptr when the key
// is missing.
bool LookupStream(CommandContext& ctx, std::string_view key, Stream** stream, bool for_read) {
  KeyEntry* entry;
  *stream = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kStream, &entry, for_read)) return false;
  if (entry != nullptr) *stream = &static_cast<StreamObject*>(entry->object())->stream();
  return true;
}

Stream::Limits StreamLimitsOf(const CommandContext& ctx) {
  return StreamLimitsOf(ctx.server.config);
}

void ReplyEntry(ReplyBuilder& reply, const StreamEntryView& entry) {
  reply.Array(2);
  reply.Bulk(entry.id.ToString());
  reply.Array(entry.fields.size() * 2);
  for (const auto& [field, value] : entry.fields) {
    reply.Bulk(field);
    reply.Bulk(value);
  }
}

// --- XADD and XTRIM's trimming options --------------------------------------------------------

enum class Trim { kNone, kMaxLen, kMinId };

struct AddTrimArgs {
  Trim trim = Trim::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId min_id;
  int64_t limit = 0;
  bool no_mkstream = false;
  bool id_given = false;
  bool seq_auto = false;
  StreamId id;
};

// Redis's streamParseAddOrTrimArgsOrReply: the options from argv[2]. For XADD returns the
// index of the id argument; 0 after replying an error.
size_t ParseAddOrTrimArgs(CommandContext& ctx, bool xadd, AddTrimArgs* args) {
  size_t i = 2;
  bool limit_given = false;
  for (; i < ctx.argc(); ++i) {
    const size_t more = ctx.argc() - 1 - i;
    std::string_view option = ctx.arg(i);
    if (xadd && option == "*") break;
    if ((EqualsIgnoreCase(option, "maxlen") || EqualsIgnoreCase(option, "minid")) && more > 0) {
      if (args->trim != Trim::kNone) {
        ctx.reply.Error(
            "ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        return 0;
      }
      const bool maxlen = EqualsIgnoreCase(option, "maxlen");
      args->approx = false;
      std::string_view next = ctx.arg(i + 1);
      if (more >= 2 && (next == "~" || next == "=")) {
        args->approx = next == "~";
        ++i;
      }
      if (maxlen) {
        if (!ParseInt64(ctx.arg(i + 1), &args->maxlen)) {
          ctx.reply.Error(errors::kNotInteger);
          return 0;
        }
        if (args->maxlen < 0) {
          ctx.reply.Error("ERR The MAXLEN argument must be >= 0.");
          return 0;
        }
      } else if (!ParseIdOrReply(ctx, ctx.arg(i + 1), &args->min_id, 0, true)) {
        return 0;
      }
      ++i;
      args->trim = maxlen ? Trim::kMaxLen : Trim::kMinId;
    } else if (EqualsIgnoreCase(option, "limit") && more > 0) {
      if (!ParseInt64(ctx.arg(i + 1), &args->limit)) {
        ctx.reply.Error(errors::kNotInteger);
        return 0;
      }
      if (args->limit < 0) {
        ctx.reply.Error("ERR The LIMIT argument must be >= 0.");
        return 0;
      }
      limit_given = true;
      ++i;
    } else if (xadd && EqualsIgnoreCase(option, "nomkstream")) {
      args->no_mkstream = true;
    } else if (xadd) {
      if (!ParseIdOrReply(ctx, option, &args->id, 0, true, &args->seq_auto)) return 0;
      args->id_given = true;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return 0;
    }
  }
  if (args->limit != 0 && args->trim == Trim::kNone) {
    ctx.reply.Error(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
    return 0;
  }
  if (!xadd && args->trim == Trim::kNone) {
    ctx.reply.Error("ERR syntax error, XTRIM must be called with a trimming strategy");
    return 0;
  }
  if (!ctx.client.is_connection()) {
    args->limit = 0;  // a replay trims exactly what was logged
  } else if (limit_given) {
    if (!args->approx) {
      ctx.reply.Error("ERR syntax error, LIMIT cannot be used without the special ~ option");
      return 0;
    }
  } else if (args->approx) {
    const int64_t entries = ctx.server.config.stream_node_max_entries;
    args->limit = (entries <= 0 || 100 * entries > 10000) ? 10000 : 100 * entries;
  }
  return i;
}

// Trims stream as args say; returns the entries removed.
size_t ApplyTrim(Stream& stream, const AddTrimArgs& args) {
  const size_t limit = static_cast<size_t>(args.limit);
  if (args.trim == Trim::kMaxLen) {
    return stream.TrimMaxLen(static_cast<size_t>(args.maxlen), args.approx, limit);
  }
  return stream.TrimMinId(args.min_id, args.approx, limit);
}

// The trim as the log records it: exact, at the length (or first id) the stream was left with,
// so that a replay removes the same entries whatever its nodes look like.
void AppendExactTrim(const Stream& stream, const AddTrimArgs& args,
                     std::vector<std::string>* argv) {
  if (args.trim == Trim::kMaxLen) {
    argv->insert(argv->end(), {"MAXLEN", "=", std::to_string(stream.size())});
  } else {
    const StreamId last = stream.last_id();
    const StreamId first = !stream.empty()           ? stream.first_id()
                           : last == StreamId::Max() ? last
                                                     : last.Next();
    argv->insert(argv->end(), {"MINID", "=", first.ToString()});
  }
}

void Propagate(CommandContext& ctx, const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  ctx.Propagate(views);
}

void XaddCommand(CommandContext& ctx) {
  AddTrimArgs args;
  const size_t id_index = ParseAddOrTrimArgs(ctx, true, &args);
  if (id_index == 0) return;
  const size_t field_index = id_index + 1;
  if (ctx.argc() < field_index + 2 || (ctx.argc() - field_index) % 2 == 1) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return;
  }
  if (args.id_given && !args.seq_auto && args.id == StreamId::Min()) {
    ctx.reply.Error("ERR The ID specified in XADD must be greater than 0-0");
    return;
  }
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, false)) return;
  if (stream == nullptr) {
    if (args.no_mkstream) {
      ctx.reply.Null();
      return;
    }
    auto* object = new StreamObject(Stream(StreamLimitsOf(ctx)));
    ctx.db().Put(ctx.arg(1), EntryValue::Object(object), std::nullopt);
    stream = &object->stream();
  }
  const StreamId last = stream->last_id();
  if (last == StreamId::Max()) {
    ctx.reply.Error("ERR The stream has exhausted the last possible ID, unable to add more items");
    return;
  }
  StreamId id;
  if (!args.id_given) {
    const uint64_t now = static_cast<uint64_t>(ctx.now_ms);
    id = now > last.ms ? StreamId{now, 0} : last.Next();
  } else if (args.seq_auto) {
    if (args.id.ms < last.ms || (args.id.ms == last.ms && last.seq == UINT64_MAX)) {
      ctx.reply.Error(
          "ERR The ID specified in XADD is equal or smaller than the target stream top item");
      return;
    }
    id = args.id.ms == last.ms ? StreamId{last.ms, last.seq + 1} : StreamId{args.id.ms, 0};
  } else {
    id = args.id;
    if (id <= last) {
      ctx.reply.Error(
          "ERR The ID specified in XADD is equal or smaller than the target stream top item");
      return;
    }
  }
  std::vector<StreamField> fields;
  fields.reserve((ctx.argc() - field_index) / 2);
  for (size_t i = field_index; i + 1 < ctx.argc(); i += 2)
    fields.emplace_back(ctx.arg(i), ctx.arg(i + 1));
  stream->Append(id, fields);
  const std::string id_text = id.ToString();
  ctx.reply.Bulk(id_text);
  MarkDirty(ctx);
  if (args.trim != Trim::kNone) ApplyTrim(*stream, args);
  ctx.db().Touch(ctx.arg(1));
  // The log gets the id chosen here and the trim as it turned out.
  if (ctx.propagating() && (args.approx || !args.id_given || args.seq_auto)) {
    std::vector<std::string> argv = {std::string(ctx.arg(0)), std::string(ctx.arg(1))};
    if (args.trim != Trim::kNone) AppendExactTrim(*stream, args, &argv);
    argv.push_back(id_text);
    argv.insert(argv.end(), ctx.argv.begin() + static_cast<std::ptrdiff_t>(field_index),
                ctx.argv.end());
    Propagate(ctx, argv);
  }
}

void XtrimCommand(CommandContext& ctx) {
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, false)) return;
  if (stream == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  AddTrimArgs args;
  if (ParseAddOrTrimArgs(ctx, false, &args) == 0) return;
  const size_t removed = ApplyTrim(*stream, args);
  if (removed > 0) {
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx, removed);
    if (ctx.propagating() && args.approx) {
      std::vector<std::string> argv = {std::string(ctx.arg(0)), std::string(ctx.arg(1))};
      AppendExactTrim(*stream, args, &argv);
      Propagate(ctx, argv);
    }
  }
  ctx.reply.Integer(static_cast<int64_t>(removed));
}

void XlenCommand(CommandContext& ctx) {
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, true)) return;
  ctx.reply.Integer(stream == nullptr ? 0 : static_cast<int64_t>(stream->size()));
}

// XRANGE key start end [COUNT n] / XREVRANGE key end start [COUNT n].
void RangeGeneric(CommandContext& ctx, bool reverse) {
  std::string_view start_text = ctx.arg(reverse ? 3 : 2);
  std::string_view end_text = ctx.arg(reverse ? 2 : 3);
  const bool start_exclusive = start_text.starts_with('(');
  const bool end_exclusive = end_text.starts_with('(');
  if (start_exclusive) start_text.remove_prefix(1);
  if (end_exclusive) end_text.remove_prefix(1);
  StreamId start;
  StreamId end;
  // After "(" an id is strict: "(-" and "(+" are invalid.
  if (!ParseIdOrReply(ctx, start_text, &start, 0, start_exclusive)) return;
  if (start_exclusive) {
    if (start == StreamId::Max()) {
      ctx.reply.Error("ERR invalid start ID for the interval");
      return;
    }
    start = start.Next();
  }
  if (!ParseIdOrReply(ctx, end_text, &end, UINT64_MAX, end_exclusive)) return;
  if (end_exclusive) {
    if (end == StreamId::Min()) {
      ctx.reply.Error("ERR invalid end ID for the interval");
      return;
    }
    end = end.Previous();
  }
  int64_t count = -1;
  for (size_t i = 4; i < ctx.argc(); ++i) {
    if (EqualsIgnoreCase(ctx.arg(i), "count") && i + 1 < ctx.argc()) {
      if (!ParseInt64(ctx.arg(i + 1), &count)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (count < 0) count = 0;
      ++i;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, true)) return;
  if (stream == nullptr) {
    ctx.reply.Array(0);
    return;
  }
  if (count == 0) {
    ctx.reply.NullArray();  // Redis's reply to COUNT 0 (or less) on an existing stream
    return;
  }
  if (start > end) {
    ctx.reply.Array(0);
    return;
  }
  std::vector<StreamEntryView> entries;
  stream->Range(start, end, reverse, count < 0 ? 0 : static_cast<size_t>(count),
                [&](const StreamEntryView& entry) {
                  entries.push_back(entry);
                  return true;
                });
  ctx.reply.Array(entries.size());
  for (const StreamEntryView& entry : entries) ReplyEntry(ctx.reply, entry);
}

void XrangeCommand(CommandContext& ctx) { RangeGeneric(ctx, false); }
void XrevrangeCommand(CommandContext& ctx) { RangeGeneric(ctx, true); }

void XdelCommand(CommandContext& ctx) {
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, false)) return;
  if (stream == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  std::vector<StreamId> ids(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!ParseIdOrReply(ctx, ctx.arg(i), &ids[i - 2], 0, true)) return;
  }
  int64_t deleted = 0;
  for (const StreamId& id : ids) deleted += stream->Delete(id) ? 1 : 0;
  if (deleted > 0) {
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx, static_cast<uint64_t>(deleted));
  }
  ctx.reply.Integer(deleted);
}

// XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]. A client that
// blocks waits with `$` resolved to each stream's last id at the time it blocked (its argv is
// rewritten for the retry), so entries added meanwhile are what it gets.
void XreadCommand(CommandContext& ctx) {
  int64_t count = 0;
  std::optional<int64_t> block_ms;
  size_t streams_at = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    const bool more = i + 1 < ctx.argc();
    std::string_view option = ctx.arg(i);
    if (EqualsIgnoreCase(option, "block") && more) {
      if (ctx.client.kind == ClientKind::kScript) {
        ctx.reply.Error("ERR XREAD command is not allowed with BLOCK option from scripts");
        return;
      }
      int64_t timeout = 0;
      if (!ParseInt64(ctx.arg(++i), &timeout)) {
        ctx.reply.Error(errors::kTimeoutNotInteger);
        return;
      }
      if (timeout < 0) {
        ctx.reply.Error(errors::kTimeoutNegative);
        return;
      }
      block_ms = timeout;
    } else if (EqualsIgnoreCase(option, "count") && more) {
      if (!ParseInt64(ctx.arg(++i), &count)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (count < 0) count = 0;
    } else if (EqualsIgnoreCase(option, "streams") && more) {
      streams_at = i + 1;
      break;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if (streams_at == 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if ((ctx.argc() - streams_at) % 2 != 0) {
    ctx.reply.Error(
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be "
        "specified.");
    return;
  }
  const size_t streams = (ctx.argc() - streams_at) / 2;
  std::vector<StreamId> after(streams);
  std::vector<Stream*> found(streams, nullptr);
  bool resolved_last = false;
  for (size_t i = 0; i < streams; ++i) {
    std::string_view key = ctx.arg(streams_at + i);
    std::string_view id = ctx.arg(streams_at + streams + i);
    if (!LookupStream(ctx, key, &found[i], true)) return;
    if (id == "$") {
      after[i] = found[i] != nullptr ? found[i]->last_id() : StreamId::Min();
      resolved_last = true;
      continue;
    }
    if (id == ">") {
      ctx.reply.Error(
          "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
          "<consumer> option.");
      return;
    }
    if (!ParseIdOrReply(ctx, id, &after[i], 0, true)) return;
  }
  // Served at once when any stream holds an entry after its id.
  struct Served {
    size_t stream;
    std::vector<StreamEntryView> entries;
  };
  std::vector<Served> served;
  for (size_t i = 0; i < streams; ++i) {
    Stream* stream = found[i];
    if (stream == nullptr || stream->empty() || stream->last_live_id() <= after[i]) continue;
    Served part{i, {}};
    stream->Range(after[i].Next(), StreamId::Max(), false, static_cast<size_t>(count),
                  [&](const StreamEntryView& entry) {
                    part.entries.push_back(entry);
                    return true;
                  });
    served.push_back(std::move(part));
  }
  if (!served.empty()) {
    if (ctx.reply.resp3()) {
      ctx.reply.Map(served.size());
    } else {
      ctx.reply.Array(served.size());
    }
    for (const Served& part : served) {
      if (!ctx.reply.resp3()) ctx.reply.Array(2);
      ctx.reply.Bulk(ctx.arg(streams_at + part.stream));
      ctx.reply.Array(part.entries.size());
      for (const StreamEntryView& entry : part.entries) ReplyEntry(ctx.reply, entry);
    }
    return;
  }
  if (!block_ms || !ctx.client.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  const int64_t deadline = *block_ms == 0 ? 0 : ctx.now_ms + *block_ms;
  std::vector<std::string_view> keys(
      ctx.argv.begin() + static_cast<std::ptrdiff_t>(streams_at),
      ctx.argv.begin() + static_cast<std::ptrdiff_t>(streams_at + streams));
  if (!resolved_last) {
    ctx.server.BlockClient(ctx.client, ctx.argv, keys, deadline, ValueType::kStream);
    return;
  }
  std::vector<std::string> texts;
  texts.reserve(streams);
  for (size_t i = 0; i < streams; ++i) texts.push_back(after[i].ToString());
  std::vector<std::string_view> retry(ctx.argv.begin(), ctx.argv.end());
  for (size_t i = 0; i < streams; ++i) retry[streams_at + streams + i] = texts[i];
  ctx.server.BlockClient(ctx.client, retry, keys, deadline, ValueType::kStream);
}

void XsetidCommand(CommandContext& ctx) {
  StreamId id;
  if (!ParseIdOrReply(ctx, ctx.arg(2), &id, 0, true)) return;
  std::optional<uint64_t> entries_added;
  StreamId max_deleted;
  for (size_t i = 3; i < ctx.argc(); i += 2) {
    const bool more = i + 1 < ctx.argc();
    if (EqualsIgnoreCase(ctx.arg(i), "entriesadded") && more) {
      int64_t value = 0;
      if (!ParseInt64(ctx.arg(i + 1), &value)) {
        ctx.reply.Error(errors::kNotInteger);
        return;
      }
      if (value < 0) {
        ctx.reply.Error("ERR entries_added must be positive");
        return;
      }
      entries_added = static_cast<uint64_t>(value);
    } else if (EqualsIgnoreCase(ctx.arg(i), "maxdeletedid") && more) {
      if (!ParseIdOrReply(ctx, ctx.arg(i + 1), &max_deleted, 0, true)) return;
      if (id < max_deleted) {
        ctx.reply.Error(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
        return;
      }
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  Stream* stream;
  if (!LookupStream(ctx, ctx.arg(1), &stream, false)) return;
  if (stream == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  if (id < stream->max_deleted_id()) {
    ctx.reply.Error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
    return;
  }
  if (!stream->empty()) {
    if (id < stream->last_live_id()) {
      ctx.reply.Error("ERR The ID specified in XSETID is smaller than the target stream top item");
      return;
    }
    if (entries_added && stream->size() > *entries_added) {
      ctx.reply.Error(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
      return;
    }
  }
  stream->SetLastId(id, entries_added,
                    max_deleted == StreamId::Min() ? std::nullopt : std::optional(max_deleted));
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx);
  ctx.reply.Ok();
}

}  // namespace

void RegisterStreamCommands(CommandTable* table) {
  CommandAdder add{table, "stream"};
  add("xadd", -5, kCmdWrite | kCmdDenyOom | kCmdFast, 1, 1, 1, XaddCommand,
      "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0",
      "O(1) when adding a new entry, O(N) when trimming where N being the number of entries "
      "evicted.",
      "key [NOMKSTREAM] [<MAXLEN | MINID> [= | ~] threshold [LIMIT count]] <* | id> field value "
      "[field value ...]");
  add("xlen", 2, kCmdReadonly | kCmdFast, 1, 1, 1, XlenCommand,
      "Return the number of messages in a stream.", "5.0.0", "O(1)", "key");
  add("xrange", -4, kCmdReadonly, 1, 1, 1, XrangeCommand,
      "Returns the messages from a stream within a range of IDs.", "5.0.0",
      "O(N) with N being the number of elements being returned. If N is constant (e.g. always "
      "asking for the first 10 elements with COUNT), you can consider it O(1).",
      "key start end [COUNT count]");
  add("xrevrange", -4, kCmdReadonly, 1, 1, 1, XrevrangeCommand,
      "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0",
      "O(N) with N being the number of elements returned. If N is constant (e.g. always asking "
      "for the first 10 elements with COUNT), you can consider it O(1).",
      "key end start [COUNT count]");
  add("xdel", -3, kCmdWrite | kCmdFast, 1, 1, 1, XdelCommand,
      "Returns the number of messages after removing them from a stream.", "5.0.0",
      "O(1) for each single item to delete in the stream, regardless of the stream size.",
      "key id [id ...]");
  add("xtrim", -4, kCmdWrite, 1, 1, 1, XtrimCommand,
      "Deletes messages from the beginning of a stream.", "5.0.0",
      "O(N), with N being the number of evicted entries. Constant times are very small however, "
      "since entries are organized in macro nodes containing multiple entries that can be "
      "released with a single deallocation.",
      "key <MAXLEN | MINID> [= | ~] threshold [LIMIT count]");
  Command* xread = add.Counted(
      0, "xread", -4, kCmdReadonly | kCmdBlocking | kCmdMovableKeys, 0, 0, 0, XreadCommand,
      "Returns messages from multiple streams with IDs greater than the ones requested. "
      "Blocks until a message is available otherwise.",
      "5.0.0",
      "For each stream mentioned: O(N) with N being the number of elements being returned, "
      "it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option "
      "is used, XADD will pay O(M) time in order to serve the M clients blocked on the "
      "stream getting new data.",
      "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]");
  xread->keys_after_keyword = "streams";
  add("xsetid", -3, kCmdWrite | kCmdDenyOom | kCmdFast, 1, 1, 1, XsetidCommand,
      "An internal command for replicating stream values.", "5.0.0", "O(1)",
      "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]");
}

}  // namespace goblin
