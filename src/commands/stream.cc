// Stream commands on entries: XADD XLEN XRANGE XREVRANGE XDEL XTRIM XSETID, and the helpers the
// other stream files share (stream_family.h).
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
#include "commands/stream_family.h"
#include "core/ascii.h"
#include "core/stream_object.h"
#include "core/string_number.h"
#include "server/encoding_limits.h"
#include "server/errors.h"

namespace goblin {

bool ParseStreamUint64(std::string_view text, uint64_t* value) {
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

bool ParseStreamId(std::string_view text, StreamId* id, uint64_t missing_seq, bool strict,
                   bool* seq_auto) {
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
    return ParseStreamUint64(text, &id->ms);
  }
  if (!ParseStreamUint64(text.substr(0, dash), &id->ms)) return false;
  std::string_view seq = text.substr(dash + 1);
  if (seq_auto != nullptr && seq == "*") {
    *seq_auto = true;
    id->seq = 0;
    return true;
  }
  return ParseStreamUint64(seq, &id->seq);
}

bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view text, StreamId* id,
                          uint64_t missing_seq, bool strict, bool* seq_auto) {
  if (ParseStreamId(text, id, missing_seq, strict, seq_auto)) return true;
  ctx.reply.Error(kInvalidStreamId);
  return false;
}

bool LookupStreamObject(CommandContext& ctx, std::string_view key, StreamObject** object,
                        bool for_read) {
  KeyEntry* entry;
  *object = nullptr;
  if (!LookupTyped(ctx, key, ValueType::kStream, &entry, for_read)) return false;
  if (entry != nullptr) *object = static_cast<StreamObject*>(entry->object());
  return true;
}

void ReplyStreamEntry(ReplyBuilder& reply, const StreamEntryView& entry, size_t extra) {
  reply.Array(2 + extra);
  reply.Bulk(entry.id.ToString());
  reply.Array(entry.fields.size() * 2);
  for (const auto& [field, value] : entry.fields) {
    reply.Bulk(field);
    reply.Bulk(value);
  }
}

bool ParseRangeBoundOrReply(CommandContext& ctx, std::string_view text, bool is_end, StreamId* id) {
  const bool exclusive = text.starts_with('(');
  if (exclusive) text.remove_prefix(1);
  // After "(" an id is strict: "(-" and "(+" are invalid.
  if (!ParseStreamIdOrReply(ctx, text, id, is_end ? UINT64_MAX : 0, exclusive)) return false;
  if (!exclusive) return true;
  if (!is_end) {
    if (*id == StreamId::Max()) {
      ctx.reply.Error("ERR invalid start ID for the interval");
      return false;
    }
    *id = id->Next();
  } else {
    if (*id == StreamId::Min()) {
      ctx.reply.Error("ERR invalid end ID for the interval");
      return false;
    }
    *id = id->Previous();
  }
  return true;
}

void PropagateStrings(CommandContext& ctx, const std::vector<std::string>& argv) {
  std::vector<std::string_view> views(argv.begin(), argv.end());
  ctx.Propagate(views);
}

std::optional<RefPolicy> ParseRefPolicy(std::string_view word) {
  if (EqualsIgnoreCase(word, "keepref")) return RefPolicy::kKeepRef;
  if (EqualsIgnoreCase(word, "delref")) return RefPolicy::kDelRef;
  if (EqualsIgnoreCase(word, "acked")) return RefPolicy::kAcked;
  return std::nullopt;
}

std::string_view RefPolicyWord(RefPolicy policy) {
  switch (policy) {
    case RefPolicy::kDelRef:
      return "DELREF";
    case RefPolicy::kAcked:
      return "ACKED";
    default:
      return "KEEPREF";
  }
}

Stream::TrimRefs TrimRefsOf(RefPolicy policy, StreamObject& object) {
  StreamGroups* groups = object.groups();
  if (groups == nullptr || groups->empty()) return {};
  if (policy == RefPolicy::kAcked)
    return {[groups](StreamId id) { return groups->References(id); }, {}};
  if (policy == RefPolicy::kDelRef)
    return {{}, [groups](StreamId id) { groups->RemoveEverywhere(id); }};
  return {};
}

bool StartRefCommand(CommandContext& ctx, size_t first, RefPolicy* policy,
                     std::vector<StreamId>* ids, StreamObject** object) {
  bool policy_given = false;
  bool ids_given = false;
  size_t ids_at = 0;
  int64_t count = 0;
  for (size_t i = first; i < ctx.argc(); ++i) {
    const std::string_view word = ctx.arg(i);
    const std::optional<RefPolicy> named = ParseRefPolicy(word);
    if (named && !policy_given) {
      *policy = *named;
      policy_given = true;
    } else if (EqualsIgnoreCase(word, "ids") && !ids_given && i + 1 < ctx.argc()) {
      if (!ParseInt64(ctx.arg(i + 1), &count) || count <= 0) {
        ctx.reply.Error("ERR Number of IDs must be a positive integer");
        return false;
      }
      ids_at = i + 2;
      if (static_cast<uint64_t>(count) > ctx.argc() - ids_at) {
        ctx.reply.Error("ERR The `numids` parameter must match the number of arguments");
        return false;
      }
      ids_given = true;
      i = ids_at + static_cast<size_t>(count) - 1;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  if (!ids_given) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  if (!policy_given) *policy = RefPolicy::kKeepRef;
  ids->resize(static_cast<size_t>(count));
  for (size_t k = 0; k < ids->size(); ++k) {
    if (!ParseStreamIdOrReply(ctx, ctx.arg(ids_at + k), &(*ids)[k], 0, true)) return false;
  }
  return LookupStreamObject(ctx, ctx.arg(1), object, false);
}

void SeeConsumer(CommandContext& ctx, ConsumerGroup& group, std::string_view key,
                 std::string_view group_name, std::string_view consumer) {
  if (!group.SeeConsumer(consumer, ctx.now_ms)) return;
  MarkDirty(ctx);
  Notify(ctx, kNotifyStream, "xgroup-createconsumer", key);
  if (ctx.propagating()) ctx.Propagate({"XGROUP", "CREATECONSUMER", key, group_name, consumer});
}

namespace {

Stream::Limits StreamLimitsOf(const CommandContext& ctx) {
  return StreamLimitsOf(ctx.server.config);
}

// --- XADD and XTRIM's trimming options --------------------------------------------------------

enum class Trim { kNone, kMaxLen, kMinId };

struct AddTrimArgs {
  Trim trim = Trim::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamId min_id;
  int64_t limit = 0;
  size_t threshold_index = 0;  // argv index of MAXLEN's or MINID's value
  bool no_mkstream = false;
  bool id_given = false;
  bool seq_auto = false;
  StreamId id;
  RefPolicy refs = RefPolicy::kKeepRef;
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
      } else if (!ParseStreamIdOrReply(ctx, ctx.arg(i + 1), &args->min_id, 0, true)) {
        return 0;
      }
      ++i;
      args->threshold_index = i;
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
    } else if (const std::optional<RefPolicy> policy = ParseRefPolicy(option)) {
      args->refs = *policy;
    } else if (xadd) {
      if (!ParseStreamIdOrReply(ctx, option, &args->id, 0, true, &args->seq_auto)) return 0;
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

// Trims the object's stream as args say, minding its groups' references as args.refs says;
// returns the entries removed.
size_t ApplyTrim(StreamObject& object, const AddTrimArgs& args) {
  const size_t limit = static_cast<size_t>(args.limit);
  const Stream::TrimRefs refs = TrimRefsOf(args.refs, object);
  Stream& stream = object.stream();
  if (args.trim == Trim::kMaxLen) {
    return stream.TrimMaxLen(static_cast<size_t>(args.maxlen), args.approx, limit, refs);
  }
  return stream.TrimMinId(args.min_id, args.approx, limit, refs);
}

// The command as the log records it: an approximate trim made exact in place, `~` turned into
// `=` and the value into the length (or first id) the stream was left with, so that a replay
// removes the same entries whatever its nodes look like (the other arguments, LIMIT and the
// reference policy among them, stay as they arrived; a replay ignores LIMIT). As Redis's
// streamRewriteTrimArgument: the first id counts deleted entries still in the first node, and
// an empty stream's is the largest id.
std::vector<std::string> ExactTrimArgv(CommandContext& ctx, const Stream& stream,
                                       const AddTrimArgs& args) {
  std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
  if (!args.approx) return argv;
  argv[args.threshold_index - 1] = "=";
  if (args.trim == Trim::kMaxLen) {
    argv[args.threshold_index] = std::to_string(stream.size());
  } else {
    const StreamId first = stream.empty() ? StreamId::Max() : stream.first_id_with_deleted();
    argv[args.threshold_index] = first.ToString();
  }
  return argv;
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
  StreamObject* object;
  if (!LookupStreamObject(ctx, ctx.arg(1), &object, false)) return;
  if (object == nullptr) {
    if (args.no_mkstream) {
      ctx.reply.Null();
      return;
    }
    object = new StreamObject(Stream(StreamLimitsOf(ctx)));
    ctx.db().Put(ctx.arg(1), EntryValue::Object(object), std::nullopt);
  }
  Stream* stream = &object->stream();
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
      ctx.reply.Error(errors::kStreamIdTooSmall);
      return;
    }
    id = args.id.ms == last.ms ? StreamId{last.ms, last.seq + 1} : StreamId{args.id.ms, 0};
  } else {
    id = args.id;
    if (id <= last) {
      ctx.reply.Error(errors::kStreamIdTooSmall);
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
  Notify(ctx, kNotifyStream, "xadd", ctx.arg(1));
  if (args.trim != Trim::kNone && ApplyTrim(*object, args) > 0) {
    Notify(ctx, kNotifyStream, "xtrim", ctx.arg(1));
  }
  ctx.db().Touch(ctx.arg(1));
  // The log gets the id chosen here and the trim as it turned out.
  if (ctx.propagating() && (args.approx || !args.id_given || args.seq_auto)) {
    std::vector<std::string> argv = ExactTrimArgv(ctx, *stream, args);
    argv[id_index] = id_text;
    PropagateStrings(ctx, argv);
  }
}

void XtrimCommand(CommandContext& ctx) {
  // The arguments are checked before the key, as Redis does: a malformed XTRIM of a missing
  // key is a syntax error, not 0.
  AddTrimArgs args;
  if (ParseAddOrTrimArgs(ctx, false, &args) == 0) return;
  StreamObject* object;
  if (!LookupStreamObject(ctx, ctx.arg(1), &object, false)) return;
  if (object == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  const Stream* stream = &object->stream();
  const size_t removed = ApplyTrim(*object, args);
  if (removed > 0) {
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx, removed);
    Notify(ctx, kNotifyStream, "xtrim", ctx.arg(1));
    if (ctx.propagating() && args.approx) PropagateStrings(ctx, ExactTrimArgv(ctx, *stream, args));
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
  StreamId start;
  StreamId end;
  if (!ParseRangeBoundOrReply(ctx, ctx.arg(reverse ? 3 : 2), false, &start) ||
      !ParseRangeBoundOrReply(ctx, ctx.arg(reverse ? 2 : 3), true, &end)) {
    return;
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
  for (const StreamEntryView& entry : entries) ReplyStreamEntry(ctx.reply, entry);
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
    if (!ParseStreamIdOrReply(ctx, ctx.arg(i), &ids[i - 2], 0, true)) return;
  }
  int64_t deleted = 0;
  for (const StreamId& id : ids) deleted += stream->Delete(id) ? 1 : 0;
  if (deleted > 0) {
    ctx.db().Touch(ctx.arg(1));
    MarkDirty(ctx, static_cast<uint64_t>(deleted));
    Notify(ctx, kNotifyStream, "xdel", ctx.arg(1));
  }
  ctx.reply.Integer(deleted);
}

// XDELEX key [KEEPREF | DELREF | ACKED] IDS numids id ...: per id -1 (no such entry), 1
// (deleted) or 2 (ACKED: a group still refers to it). DELREF drops the references of an id
// whose entry is already gone as well.
void XdelexCommand(CommandContext& ctx) {
  RefPolicy policy;
  std::vector<StreamId> ids;
  StreamObject* object;
  if (!StartRefCommand(ctx, 2, &policy, &ids, &object)) return;
  ctx.reply.Array(ids.size());
  if (object == nullptr) {
    for (size_t k = 0; k < ids.size(); ++k) ctx.reply.Integer(-1);
    return;
  }
  Stream& stream = object->stream();
  StreamGroups* groups = object->groups();
  uint64_t deleted = 0;
  uint64_t dropped_refs = 0;
  for (const StreamId id : ids) {
    if (policy == RefPolicy::kAcked && groups != nullptr && stream.Find(id) &&
        groups->References(id)) {
      ctx.reply.Integer(2);
      continue;
    }
    const bool gone = stream.Delete(id);
    if (policy == RefPolicy::kDelRef && groups != nullptr)
      dropped_refs += groups->RemoveEverywhere(id);
    deleted += gone ? 1 : 0;
    ctx.reply.Integer(gone ? 1 : -1);
  }
  if (deleted + dropped_refs == 0) return;
  ctx.db().Touch(ctx.arg(1));
  MarkDirty(ctx, std::max<uint64_t>(deleted, 1));
  if (deleted > 0) Notify(ctx, kNotifyStream, "xdel", ctx.arg(1));
}

void XsetidCommand(CommandContext& ctx) {
  StreamId id;
  if (!ParseStreamIdOrReply(ctx, ctx.arg(2), &id, 0, true)) return;
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
      if (!ParseStreamIdOrReply(ctx, ctx.arg(i + 1), &max_deleted, 0, true)) return;
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
  Notify(ctx, kNotifyStream, "xsetid", ctx.arg(1));
  ctx.reply.Ok();
}

}  // namespace

void RegisterStreamCommands(CommandTable* table) {
  CommandAdder add{table, "stream", kAclStream};
  auto reference_policy = [] {
    return docs::Optional(
        docs::OneOf("condition", {docs::Token("keepref", "KEEPREF"),
                                  docs::Token("delref", "DELREF"), docs::Token("acked", "ACKED")}));
  };
  Command* xadd =
      add("xadd", -5, kCmdWrite | kCmdDenyOom | kCmdFast,
          {KeySpec{kKeyRW | kKeyUpdate, KeyBegin::Index(1), KeyFind::Range(0, 1, 0),
                   "UPDATE instead of INSERT because of the optional trimming feature"}},
          XaddCommand, "Appends a new message to a stream. Creates the key if it doesn't exist.",
          "5.0.0",
          "O(1) when adding a new entry, O(N) when trimming where N being the number of entries "
          "evicted.",
          "key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [<MAXLEN | MINID> [= | ~] threshold [LIMIT "
          "count]] <* | id> field value [field value ...]",
          {"nondeterministic_output"});
  xadd->history = {
      {"6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."},
      {"7.0.0", "Added support for the `<ms>-*` explicit ID form."},
      {"8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options."}};
  xadd->arguments = {
      docs::Key("key", 0),
      docs::Optional(docs::Token("nomkstream", "NOMKSTREAM")).Since("6.2.0"),
      reference_policy(),
      docs::Optional(docs::Block(
          "trim", {docs::OneOf("strategy", {docs::Token("maxlen", "MAXLEN"),
                                            docs::Token("minid", "MINID").Since("6.2.0")}),
                   docs::Optional(docs::OneOf(
                       "operator", {docs::Token("equal", "="), docs::Token("approximately", "~")})),
                   docs::String("threshold"),
                   docs::Optional(docs::Integer("count", "LIMIT")).Since("6.2.0")})),
      docs::OneOf("id-selector", {docs::Token("auto-id", "*"), docs::String("id")}),
      docs::Multiple(docs::Block("data", {docs::String("field"), docs::String("value")}))};
  add("xlen", 2, kCmdReadonly | kCmdFast, {KeyAt(1, kKeyRO)}, XlenCommand,
      "Return the number of messages in a stream.", "5.0.0", "O(1)", "key");
  add("xrange", -4, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, XrangeCommand,
      "Returns the messages from a stream within a range of IDs.", "5.0.0",
      "O(N) with N being the number of elements being returned. If N is constant (e.g. always "
      "asking for the first 10 elements with COUNT), you can consider it O(1).",
      "key start end [COUNT count]");
  add("xrevrange", -4, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, XrevrangeCommand,
      "Returns the messages from a stream within a range of IDs in reverse order.", "5.0.0",
      "O(N) with N being the number of elements returned. If N is constant (e.g. always asking "
      "for the first 10 elements with COUNT), you can consider it O(1).",
      "key end start [COUNT count]");
  add("xdel", -3, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, XdelCommand,
      "Returns the number of messages after removing them from a stream.", "5.0.0",
      "O(1) for each single item to delete in the stream, regardless of the stream size.",
      "key id [id ...]");
  add("xtrim", -4, kCmdWrite, {KeyAt(1, kKeyRW | kKeyDelete)}, XtrimCommand,
      "Deletes messages from the beginning of a stream.", "5.0.0",
      "O(N), with N being the number of evicted entries. Constant times are very small however, "
      "since entries are organized in macro nodes containing multiple entries that can be "
      "released with a single deallocation.",
      "key <MAXLEN | MINID> [= | ~] threshold [LIMIT count] [KEEPREF | DELREF | ACKED]",
      {"nondeterministic_output"});
  Command* xdelex =
      add("xdelex", -5, kCmdWrite | kCmdFast, {KeyAt(1, kKeyRW | kKeyDelete)}, XdelexCommand,
          "Deletes one or multiple entries from the stream.", "8.2.0",
          "O(1) for each single item to delete in the stream, regardless of the stream size.",
          "key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]");
  xdelex->arguments = {
      docs::Key("key", 0), reference_policy(),
      docs::Block("ids", {docs::Integer("numids"), docs::Multiple(docs::String("id"))}, "IDS")};
  RegisterStreamReadCommands(table);
  RegisterStreamGroupCommands(table);
  RegisterStreamInfoCommand(table);
  add("xsetid", -3, kCmdWrite | kCmdDenyOom | kCmdFast, {KeyAt(1, kKeyRW | kKeyUpdate)},
      XsetidCommand, "An internal command for replicating stream values.", "5.0.0", "O(1)",
      "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]");
}

}  // namespace goblin
