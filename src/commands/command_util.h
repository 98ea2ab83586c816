// Small pieces every command family uses: argument parsing that replies Redis's error on
// failure, typed key lookup, and the registration helper.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ascii.h"
#include "core/key_entry.h"
#include "server/command_table.h"
#include "server/keyspace_notify.h"
#include "server/server.h"

namespace goblin {

// HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with a negative count draw this many elements at a
// time: a count may ask for billions, which neither the draws nor the reply may hold at once.
inline constexpr size_t kRandomDrawSlice = 1024;

// Parses a strict int64 argument; on failure replies kNotInteger and returns false.
bool ParseIntegerArg(CommandContext& ctx, std::string_view text, int64_t* value);

// The count of SRANDMEMBER, HRANDFIELD and ZRANDMEMBER (argv[2]): an integer whose negation
// fits, as Redis reads it. Replies the error and returns false otherwise.
bool ParseRandomCount(CommandContext& ctx, int64_t* count);

// HRANDFIELD key count [WITHVALUES] and ZRANDMEMBER key count [WITHSCORES] (argc >= 3): the
// count, then the option `with_word` (case-insensitive), which replies pairs, so a count
// must stay countable when doubled. Replies Redis's error in Redis's order and returns false
// when malformed.
bool ParseRandomCountArgs(CommandContext& ctx, std::string_view with_word, int64_t* count,
                          bool* with_pairs);

// Parses an argument that must fit in a 32-bit int (database indexes and the like), with
// Redis's two errors: not an integer, or an integer outside the int range.
bool ParseInt32Arg(CommandContext& ctx, std::string_view text, int* value);

// A SCAN/HSCAN/SSCAN/ZSCAN cursor, read as Redis's parseScanCursorOrReply does (strtoull over
// the whole text); replies "ERR invalid cursor" and returns false otherwise.
bool ParseScanCursor(CommandContext& ctx, std::string_view text, uint64_t* cursor);

// The options after a SCAN-family cursor: MATCH pattern, COUNT n (>= 1), and where the
// command takes them, TYPE name (SCAN) and NOVALUES (HSCAN). Anything else is a syntax error.
struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;  // a pattern other than "*"
  std::string_view type_name;
  bool has_type = false;
  bool no_values = false;
  bool Matches(std::string_view text) const;
};
enum ScanOptionSet : uint32_t { kScanMatchCount = 0, kScanType = 1, kScanNoValues = 2 };
// Parses argv[first..]; replies the error and returns false on bad input.
bool ParseScanOptions(CommandContext& ctx, size_t first, uint32_t allowed, ScanOptions* out);

// Looks up key; returns false (after replying WRONGTYPE) when it holds another type than
// `type`. *entry is nullptr when the key is missing. Reads count keyspace hits and misses.
bool LookupTyped(CommandContext& ctx, std::string_view key, ValueType type, KeyEntry** entry,
                 bool for_read = true);

// Redis's expiry argument rule shared by SET, SETEX, GETEX and EXPIRE: text -> an absolute
// deadline in ms. `seconds` multiplies by 1000; `relative` adds now. Replies the error (not an
// integer / invalid expire time in '<command>' command) and returns nullopt on failure.
std::optional<int64_t> ParseDeadlineArg(CommandContext& ctx, std::string_view text, bool seconds,
                                        bool relative);

void ReplyInvalidExpire(CommandContext& ctx);

// The timeout argument of a blocking command (seconds, fractions allowed) as Redis's
// getTimeoutFromObjectOrReply reads it: an absolute deadline in ms, or 0 for "wait forever".
// Replies the error and returns nullopt on failure.
std::optional<int64_t> ParseBlockTimeout(CommandContext& ctx, std::string_view text);

// ZMPOP, BZMPOP, LMPOP, BLMPOP: numkeys key [key ...] <first_word>|<second_word> [COUNT count],
// starting at argv[first]. Replies Redis's error and returns false when malformed.
struct MultiPopArgs {
  size_t first_key = 0;
  size_t key_count = 0;
  bool first_end = true;  // first_word (MIN, LEFT) rather than second_word (MAX, RIGHT)
  int64_t count = 1;
};
bool ParseMultiPopArgs(CommandContext& ctx, size_t first, std::string_view first_word,
                       std::string_view second_word, MultiPopArgs* out);

// The full name Redis puts in errors: "set", "config|get".
inline const std::string& CommandName(const CommandContext& ctx) { return ctx.command.name; }

// Registers the rows of one command family: add(name, arity, flags, key specs, handler,
// summary, since, complexity, syntax[, tips]). Each row gets the family's ACL categories
// (@string for the string family), or those of add.In(categories) for a row that names its own.
struct CommandAdder {
  CommandTable* table;
  const char* group;
  uint32_t categories = 0;  // AclCategory bits beyond those the flags imply

  // An adder whose rows belong to `other` categories instead of the family's.
  CommandAdder In(uint32_t other) const { return {table, group, other}; }

  Command* operator()(const char* name, int arity, uint32_t flags, std::vector<KeySpec> keys,
                      CommandHandler handler, const char* summary, const char* since,
                      const char* complexity, const char* syntax,
                      std::vector<std::string_view> tips = {}) const {
    return table->Add(Make(name, arity, flags, std::move(keys), handler, summary, since, complexity,
                           syntax, std::move(tips)));
  }
  // A subcommand row of a container command (CONFIG GET, CLIENT LIST, ...).
  Command* Sub(Command* parent, const char* name, int arity, uint32_t flags,
               std::vector<KeySpec> keys, CommandHandler handler, const char* summary,
               const char* since, const char* complexity, const char* syntax,
               std::vector<std::string_view> tips = {}) const {
    return table->AddSubcommand(parent, Make(name, arity, flags, std::move(keys), handler, summary,
                                             since, complexity, syntax, std::move(tips)));
  }

 private:
  Command Make(const char* name, int arity, uint32_t flags, std::vector<KeySpec> keys,
               CommandHandler handler, const char* summary, const char* since,
               const char* complexity, const char* syntax,
               std::vector<std::string_view> tips) const {
    Command command;
    command.name = name;
    command.arity = arity;
    command.flags = flags;
    command.acl_categories = categories;
    command.key_specs = std::move(keys);
    command.tips = std::move(tips);
    command.handler = handler;
    command.group = group;
    command.summary = summary;
    command.since = since;
    command.complexity = complexity;
    command.syntax = syntax;
    return command;
  }
};

// A HELP reply as Redis's addReplyHelp builds it: a title line naming the container command,
// the given lines, then "HELP / Prints this help.".
void ReplyHelp(CommandContext& ctx, std::initializer_list<const char*> lines);


// Marks a write for persistence bookkeeping (changes since the last save).
inline void MarkDirty(CommandContext& ctx, uint64_t changes = 1) { ctx.server.dirty += changes; }

// Announces keyspace event `event` (class `type`, server/keyspace_notify.h) for key, in the
// client's database or in db; a branch when the class is off.
inline void Notify(CommandContext& ctx, uint32_t type, std::string_view event,
                   std::string_view key) {
  if (ctx.server.config.notify_keyspace_events & type) {
    ctx.server.NotifyKeyspaceEvent(type, event, key, ctx.client.db);
  }
}
inline void NotifyIn(CommandContext& ctx, int db, uint32_t type, std::string_view event,
                     std::string_view key) {
  if (ctx.server.config.notify_keyspace_events & type) {
    ctx.server.NotifyKeyspaceEvent(type, event, key, db);
  }
}

// Resizes the kRaw string `entry` stored at `key` in place to `length` bytes (new bytes zero),
// growing its block with headroom when needed, and returns the bytes (KeyEntry invariant 4):
// APPEND, SETRANGE. Records the change for WATCH and blocked clients.
char* ResizeStringInPlace(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                          size_t length);
// The same without recording a change, for a command that may change nothing (SETBIT,
// BITFIELD): it calls ctx.db().Touch(key) itself once it has.
char* ResizeStringUnrecorded(CommandContext& ctx, std::string_view key, KeyEntry* entry,
                             size_t length);

}  // namespace goblin
