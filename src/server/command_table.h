// The one table of commands: name, arity, flags, key specs, ACL categories and documentation.
//
// Every command family (src/commands/*.cc) registers its rows here at startup (main.cc calls
// RegisterAllCommands, commands/families.h); dispatch,
// COMMAND (COUNT, INFO, DOCS, LIST, GETKEYS), INFO commandstats and arity errors all read the
// same rows. Container commands (CONFIG, CLIENT, ...) own their subcommands as child rows, named
// "config|get" as Redis names them.
//
// A row describes its keys once, as Redis 7's key specs (server/key_specs.h). Everything else
// about keys is derived from them:
//   1. Command::Keys finds the keys of a call, with the flags of the spec that names each: for
//      dispatch, tracking, COMMAND GETKEYS and GETKEYSANDFLAGS alike.
//   2. first_key, last_key and key_step (COMMAND INFO's legacy triple, and the prefetch of
//      pipelined keys) and the movablekeys flag are computed at registration as Redis computes
//      them (populateCommandLegacyRangeSpec).
//   3. A spec Redis marks incomplete (SORT ... STORE, MIGRATE ... KEYS) is completed by the
//      row's find_keys, the command's own parser, as Redis's getkeys_proc does.
// Likewise a row names its own ACL categories (its family's type, @dangerous, ...), and
// registration adds those its flags imply (@write, @read, @fast or @slow, ...).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/latency_histogram.h"
#include "server/acl_categories.h"
#include "server/command_syntax.h"
#include "server/key_specs.h"

namespace goblin {

struct CommandContext;
using CommandHandler = void (*)(CommandContext& ctx);

// Redis's command flags, reported by COMMAND INFO.
enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadonly = 1 << 1,
  kCmdDenyOom = 1 << 2,
  kCmdAdmin = 1 << 3,
  kCmdPubsub = 1 << 4,
  kCmdNoscript = 1 << 5,
  kCmdBlocking = 1 << 6,
  kCmdLoading = 1 << 7,  // allowed while a snapshot loads
  kCmdStale = 1 << 8,
  kCmdFast = 1 << 9,
  kCmdNoAuth = 1 << 10,  // allowed before AUTH
  kCmdSkipMonitor = 1 << 11,
  kCmdSkipSlowlog = 1 << 12,
  kCmdNoMulti = 1 << 13,
  kCmdAllowBusy = 1 << 14,
  // Goblin's own, not reported by COMMAND: runs at once inside MULTI instead of being queued.
  kCmdTransactionControl = 1 << 15,
  kCmdNoAsyncLoading = 1 << 16,
  // Keys found by parsing the arguments (ZUNION, ZMPOP, ...): derived from the key specs.
  kCmdMovableKeys = 1 << 17,
  // Goblin's own, not reported: looking keys up leaves them unused for the eviction clock
  // (Redis's LOOKUP_NOTOUCH: TYPE, EXISTS, OBJECT, MEMORY USAGE).
  kCmdNoTouch = 1 << 18,
  // A call may name no key at all (EVAL with numkeys 0): COMMAND GETKEYS answers an empty list.
  kCmdNoMandatoryKeys = 1 << 19,
  // Reaches replicas though it is not a write (PUBLISH): a read-only script may not run it.
  // Redis's may-replicate, which COMMAND INFO does not show.
  kCmdMayReplicate = 1 << 20,
  // Runs on a cluster node that is importing the key's slot (RESTORE-ASKING); Goblin has no
  // cluster mode, so the flag is reported only.
  kCmdAsking = 1 << 21,
  // Refused before authentication unless enable-debug-command (DEBUG) or enable-module-command
  // (MODULE LOAD, LOADEX, UNLOAD) allows it; COMMAND does not report it, as Redis does not.
  kCmdProtected = 1 << 22,
};

struct CommandStats {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
  // The calls' durations in nanoseconds while latency-tracking is on (LATENCY HISTOGRAM, INFO
  // latencystats); null until a call is recorded, as most commands are never called.
  std::unique_ptr<LatencyHistogram> latency;
};

struct Command {
  std::string name;  // lowercase; "config|get" for a subcommand
  int arity = 0;     // >0 exact argument count (name included), <0 at least -arity
  uint32_t flags = 0;
  // Redis's ACL categories (AclCategory): the row's own and those its flags imply.
  uint32_t acl_categories = 0;
  // The row's bit in an ACL selector's command set (server/acl/selector.h), given in order of
  // registration, subcommands included.
  uint32_t acl_id = 0;
  // Where the keys of a call sit and what the command does to each: the one description of
  // the command's keys (see the top of this file).
  std::vector<KeySpec> key_specs;
  // Completes the specs marked incomplete: the key positions of a call as the command's own
  // parser finds them, nullopt when the call is malformed; nullptr for a command whose specs
  // are all complete.
  std::optional<std::vector<size_t>> (*find_keys)(const std::vector<std::string_view>& argv) =
      nullptr;
  // Redis's command tips (COMMAND INFO): "nondeterministic_output", "request_policy:...".
  std::vector<std::string_view> tips;
  // Derived from key_specs at registration: COMMAND INFO's first key, last key (negative
  // counts from the end) and step; 0 for a command without a plain range of keys.
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  CommandHandler handler = nullptr;
  std::string group;  // "string", "generic", "connection", "server", "sorted-set", ...
  std::string summary;
  std::string since;
  std::string complexity;
  std::string syntax;  // the arguments after the name, as redis.io writes them
  // COMMAND DOCS's argument tree when it must be Redis's exactly; empty: derived from syntax.
  std::vector<CommandArgument> arguments;
  // COMMAND DOCS's history: (version, what changed), oldest first.
  std::vector<std::pair<std::string_view, std::string_view>> history;
  std::vector<std::unique_ptr<Command>> subcommands;
  Command* parent = nullptr;
  mutable CommandStats stats;

  bool HasSubcommands() const { return !subcommands.empty(); }
  const Command* FindSubcommand(std::string_view name) const;
  bool ArityOk(size_t argc) const {
    return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
  // Whether any spec names keys rather than shard channels (COMMAND GETKEYS's "no key
  // arguments").
  bool HasKeys() const { return has_keys; }
  bool has_keys = false;  // derived from key_specs at registration
  // The keys of a concrete call (positions into argv, argv[0] the name) in the order of the
  // specs, each with its spec's flags (variable flags resolved for the call); nullopt when the
  // call contradicts its specs (a count that is not a number of keys the call holds, or no key
  // where one is mandatory). Shard channels (not_key specs) are left out unless with_channels
  // (cluster routing: a shard channel belongs to a slot as a key does).
  std::optional<std::vector<KeyReference>> Keys(const std::vector<std::string_view>& argv,
                                                bool with_channels = false) const;
  // Whether any spec names keys or shard channels: the calls cluster mode routes by slot.
  bool HasKeysOrChannels() const { return !key_specs.empty(); }
  // Calls visit(position, flags) for each key of the call, as Keys finds them, until it returns
  // false; returns whether every call returned true (true for a call whose keys cannot be
  // found). The common row (one fixed range) is walked without building the list.
  template <typename Visit>
  bool AllKeys(const std::vector<std::string_view>& argv, Visit visit) const {
    if (PlainRange()) {
      const uint32_t key_flags = PlainRangeFlags(argv);
      const int argc = static_cast<int>(argv.size());
      const int last = std::min(last_key < 0 ? argc + last_key : last_key, argc - 1);
      for (int i = first_key; i <= last; i += key_step) {
        if (!visit(static_cast<size_t>(i), key_flags)) return false;
      }
      return true;
    }
    std::optional<std::vector<KeyReference>> keys = Keys(argv);
    if (!keys) return true;
    for (const KeyReference& key : *keys) {
      if (!visit(key.position, key.flags)) return false;
    }
    return true;
  }
  // One spec naming a fixed range of keys: its positions are the legacy range's (first_key,
  // last_key, key_step), all with the spec's flags (PlainRangeFlags).
  bool PlainRange() const {
    return key_specs.size() == 1 && !(flags & kCmdMovableKeys) && key_step > 0 &&
           !(key_specs[0].flags & kKeyNotKey) && key_specs[0].find.c <= 1;
  }
  uint32_t PlainRangeFlags(const std::vector<std::string_view>& argv) const {
    const uint32_t spec_flags = key_specs[0].flags;
    return spec_flags & kKeyVariableFlags ? ResolveVariableFlags(name, argv, spec_flags)
                                          : spec_flags;
  }
};

class CommandTable {
 public:
  CommandTable() = default;

  Command* Add(Command command);
  Command* AddSubcommand(Command* parent, Command command);

  const Command* Find(std::string_view name) const;  // case-insensitive
  // A command or, for "container|sub", its subcommand (Redis's lookupCommandBySds); null when
  // either part is unknown.
  const Command* FindFullName(std::string_view name) const;
  const std::vector<const Command*>& All() const { return ordered_; }
  size_t size() const { return ordered_.size(); }
  // How many ACL ids the rows took (Command::acl_id is below it).
  uint32_t acl_ids() const { return next_acl_id_; }

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, std::unique_ptr<Command>, NameHash, std::equal_to<>> commands_;
  std::vector<const Command*> ordered_;
  uint32_t next_acl_id_ = 0;
};

}  // namespace goblin
