// The one table of commands: name, arity, flags, key positions and documentation.
//
// Every command family (src/commands/*.cc) registers its rows here at startup (main.cc calls
// RegisterAllCommands, commands/families.h); dispatch,
// COMMAND (COUNT, INFO, DOCS, LIST), INFO commandstats and arity errors all read the same rows.
// Container commands (CONFIG, CLIENT, ...) own their subcommands as child rows, named
// "config|get" as Redis names them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/latency_histogram.h"

namespace goblin {

struct CommandContext;
struct CommandKeySpecs;
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
  kCmdMovableKeys = 1 << 17,  // keys found by parsing the arguments (ZUNION, ZMPOP, ...)
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
  int first_key = 0;  // 0 when the command takes no key
  int last_key = 0;   // negative counts from the end
  int key_step = 0;
  // Movable keys counted by an argument (ZUNION numkeys key ...): its index, the keys follow
  // it; 0 for none. COMMAND INFO reports only first_key..last_key, as Redis does.
  int keynum_index = 0;
  // Movable keys after a keyword (XREAD ... STREAMS key [key ...] id [id ...]): the first half
  // of the arguments after it; empty for none.
  std::string_view keys_after_keyword;
  // Keys only the command's own parser can find (GEORADIUS ... STORE key): the positions of a
  // call, replacing the rules above; nullptr for none.
  std::optional<std::vector<size_t>> (*find_keys)(const std::vector<std::string_view>& argv) =
      nullptr;
  // Redis's key specs and tips for the command (server/key_specs.h); nullptr for a command
  // Redis describes with neither.
  const CommandKeySpecs* key_specs = nullptr;
  CommandHandler handler = nullptr;
  std::string group;  // "string", "generic", "connection", "server", "sorted-set", ...
  std::string summary;
  std::string since;
  std::string complexity;
  std::string syntax;  // the arguments after the name, as redis.io writes them
  std::string acl;     // ACL categories beyond those implied by group and flags ("@dangerous")
  std::vector<std::unique_ptr<Command>> subcommands;
  Command* parent = nullptr;
  mutable CommandStats stats;

  bool HasSubcommands() const { return !subcommands.empty(); }
  const Command* FindSubcommand(std::string_view name) const;
  bool ArityOk(size_t argc) const {
    return arity > 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
  // The key positions of a concrete call (indexes into argv, argv[0] the name): first_key..
  // last_key, then the keys a keynum argument counts; nullopt when that count is not a number
  // of keys the call holds. Pub/sub's shard channels are not keys.
  std::optional<std::vector<size_t>> KeyPositions(const std::vector<std::string_view>& argv) const;
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

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, std::unique_ptr<Command>, NameHash, std::equal_to<>> commands_;
  std::vector<const Command*> ordered_;
};

}  // namespace goblin
