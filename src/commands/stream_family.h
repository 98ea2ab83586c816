// Pieces shared by the stream command files: stream.cc (entries: XADD XLEN XRANGE XREVRANGE
// XDEL XDELEX XTRIM XSETID), stream_read.cc (XREAD, XREADGROUP), stream_groups.cc (XGROUP XACK
// XACKDEL XPENDING XCLAIM XAUTOCLAIM) and stream_info.cc (XINFO).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "commands/command_util.h"
#include "core/stream.h"
#include "core/stream_object.h"
#include "server/command_table.h"
#include "server/errors.h"

namespace goblin {

inline constexpr std::string_view kInvalidStreamId =
    "ERR Invalid stream ID specified as stream command argument";

// Redis's three NOGROUP texts (names shown up to a NUL, as its "%s" shows them): XGROUP's and
// XINFO CONSUMERS'; XPENDING's, XCLAIM's and XAUTOCLAIM's; XREADGROUP's.
inline std::string NoSuchGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such consumer group '" + errors::Quote(group) + "' for key name '" +
         errors::Quote(key) + "'";
}
inline std::string NoSuchKeyOrGroupError(std::string_view key, std::string_view group) {
  return "NOGROUP No such key '" + errors::Quote(key) + "' or consumer group '" +
         errors::Quote(group) + "'";
}
inline std::string NoSuchKeyOrGroupForReadError(std::string_view key, std::string_view group) {
  return NoSuchKeyOrGroupError(key, group) + " in XREADGROUP with GROUP option";
}

// Redis's string2ull: a decimal that string2ll reads as non-negative, or else what strtoull
// accepts whole (which admits a leading '+' or spaces, as Redis does).
bool ParseStreamUint64(std::string_view text, uint64_t* value);

// An id argument. "-" and "+" are the extremes unless strict; a missing seq is missing_seq;
// "<ms>-*" is allowed only where seq_auto is given (XADD), which it then sets.
bool ParseStreamId(std::string_view text, StreamId* id, uint64_t missing_seq, bool strict,
                   bool* seq_auto = nullptr);
// The same, replying Redis's invalid-id error when the text is not an id.
bool ParseStreamIdOrReply(CommandContext& ctx, std::string_view text, StreamId* id,
                          uint64_t missing_seq, bool strict, bool* seq_auto = nullptr);

// A range bound of XRANGE, XPENDING and XAUTOCLAIM's start: "(" makes it exclusive (and the id
// strict); an incomplete id gets seq 0 as a start, UINT64_MAX as an end. Replies Redis's errors
// ("invalid start/end ID for the interval" when "(" leaves no id).
bool ParseRangeBoundOrReply(CommandContext& ctx, std::string_view text, bool is_end, StreamId* id);

// The stream object at key. Returns false after replying WRONGTYPE; *object is nullptr when
// the key is missing.
bool LookupStreamObject(CommandContext& ctx, std::string_view key, StreamObject** object,
                        bool for_read);
inline bool LookupStream(CommandContext& ctx, std::string_view key, Stream** stream,
                         bool for_read) {
  StreamObject* object;
  if (!LookupStreamObject(ctx, key, &object, for_read)) return false;
  *stream = object == nullptr ? nullptr : &object->stream();
  return true;
}

// What removing an entry does about the consumer groups' references to it: KEEPREF leaves
// them pending, DELREF drops them from every PEL, ACKED removes only entries every group was
// delivered and acknowledged (StreamGroups::References).
enum class RefPolicy { kKeepRef, kDelRef, kAcked };

// KEEPREF, DELREF or ACKED, case-insensitively; nullopt for any other word.
std::optional<RefPolicy> ParseRefPolicy(std::string_view word);
// The word of a policy other than the default KEEPREF, for logged commands.
std::string_view RefPolicyWord(RefPolicy policy);
// The trim a policy asks for over object's groups (none without groups: nothing refers).
Stream::TrimRefs TrimRefsOf(RefPolicy policy, StreamObject& object);

// XDELEX's and XACKDEL's start: the tail from argv[first], [KEEPREF | DELREF | ACKED] IDS
// numids id ... (the policy once and IDS once, in either order; the ids parsed too), then the
// stream at argv[1] (*object nullptr when missing). Replies Redis's error and returns false when
// the arguments are malformed or the key holds another type.
bool StartRefCommand(CommandContext& ctx, size_t first, RefPolicy* policy,
                     std::vector<StreamId>* ids, StreamObject** object);

// [id, [field, value, ...]], in an array of extra more elements that the caller then writes
// (XREADGROUP CLAIM's idle time and delivery count).
void ReplyStreamEntry(ReplyBuilder& reply, const StreamEntryView& entry, size_t extra = 0);

// Records argv as (one of) the command's effects.
void PropagateStrings(CommandContext& ctx, const std::vector<std::string>& argv);

// XREADGROUP, XCLAIM and XAUTOCLAIM meeting a consumer: its seen time becomes now, and one met
// for the first time is created (Redis 7.2 creates it even when nothing is then read or
// claimed). A creation is a change, logged as XGROUP CREATECONSUMER: Redis 7.2 propagates it
// only from NOACK reads, so its replicas can miss a consumer that a log here keeps.
void SeeConsumer(CommandContext& ctx, ConsumerGroup& group, std::string_view key,
                 std::string_view group_name, std::string_view consumer);

void RegisterStreamReadCommands(CommandTable* table);
void RegisterStreamGroupCommands(CommandTable* table);
void RegisterStreamInfoCommand(CommandTable* table);

}  // namespace goblin
