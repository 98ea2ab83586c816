// An ACL selector: one set of permissions, as Redis 7 keeps them. A user holds a root selector
// (the rules written outside parentheses) and any number of further selectors ("(~tmp:* +set)");
// a command is allowed when one selector allows all of it: the command, every key with the
// access the key specs say it needs, every channel.
//
//   commands   a bit per command row (Command::acl_id, subcommands included), plus a reserved
//              bit that +@all sets and every later rule keeps: it says whether the selector
//              started from everything, so that the description starts with +@all or -@all.
//              "+select|0" allows one first argument of an otherwise refused command.
//   rules      the command rules as given (lowercased), a later rule about a command replacing
//              an earlier one: the description reproduces them in order, as Redis 7.2 does.
//   keys       glob patterns, each for reading, writing or both (%R~, %W~, ~); or all keys.
//   channels   glob patterns of Pub/Sub channels; or all channels.
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/command_table.h"

namespace goblin::acl {

// Why a rule was refused, as Redis's ACLSetUserStringError names it.
enum class RuleError : uint8_t {
  kNone,
  kSyntax,                 // EINVAL: unknown word, spaces in a pattern, ...
  kUnknownCommand,         // ENOENT: no such command, subcommand or category
  kKeyAfterAllKeys,        // EEXIST
  kChannelAfterAll,        // EISDIR
  kNoSuchPassword,         // ENODEV
  kBadHash,                // EBADMSG
  kFirstArgOfSubcommand,   // ECHILD
};
std::string_view RuleErrorText(RuleError error);

// Whether text holds a blank or a NUL, which user names and patterns may not: rules are
// written back space separated (ACL LIST, the ACL file).
bool HasSpaces(std::string_view text);

// Why a command was refused, in the order Redis ranks them when no selector allows a command:
// the highest kind wins (its ACL_DENIED_* values).
enum class Denial : uint8_t { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };

// Access a key pattern grants.
enum KeyPermission : uint8_t { kKeyRead = 1, kKeyWrite = 2, kKeyReadWrite = 3 };

// How a command names Pub/Sub channels, as Redis's commands_with_channels lists them.
enum class ChannelUse : uint8_t { kNone, kPublish, kSubscribe, kSubscribePattern };
ChannelUse ChannelUseOf(const Command& command);

class Selector {
 public:
  static constexpr size_t kCommandBits = 1024;
  // The reserved bit: set by +@all, kept by every later rule (no command takes it).
  static constexpr size_t kFutureCommandsBit = kCommandBits - 1;

  enum Flag : uint32_t {
    kRoot = 1,
    kAllKeys = 2,
    kAllChannels = 4,
    kAllCommands = 8,
  };

  // flags: kRoot or 0, with kAllChannels when acl-pubsub-default is allchannels.
  explicit Selector(uint32_t flags) : flags_(flags) {}

  // Applies one rule (Redis's ACLSetSelector): a key or channel pattern, a command, a category,
  // or one of the words allkeys, resetkeys, allchannels, resetchannels, allcommands,
  // nocommands. On error the selector may be half changed: callers work on a copy.
  RuleError Apply(std::string_view rule, const CommandTable& commands);

  // ACL LIST's form: key patterns, channels, then the command rules.
  std::string Describe() const;
  // ACL GETUSER's fields.
  std::string DescribeCommands() const;
  std::string DescribeKeys() const;
  std::string DescribeChannels() const;

  // Whether this selector allows the call (argv[0] the command's name); on refusal, *position
  // is the index in argv of the key or channel refused (0 for the command itself).
  Denial Check(const Command& command, const std::vector<std::string_view>& argv,
               size_t* position) const;
  bool AllowsKey(std::string_view key, uint32_t key_spec_flags) const;
  bool AllowsChannel(std::string_view channel, bool is_pattern) const;
  // Whether every key may be accessed as key_spec_flags says (SORT's BY and GET patterns).
  bool AllowsAnyKey(uint32_t key_spec_flags) const;

  uint32_t flags() const { return flags_; }
  bool root() const { return flags_ & kRoot; }
  // All commands, keys and channels: no check can refuse anything.
  bool unrestricted() const {
    return (flags_ & (kAllKeys | kAllChannels | kAllCommands)) ==
           (kAllKeys | kAllChannels | kAllCommands);
  }
  // The channel patterns (none when all channels are allowed).
  std::vector<std::string_view> channels() const;
  bool AllowsCommandBit(uint32_t id) const { return id < kCommandBits && allowed_[id]; }
  const std::bitset<kCommandBits>& command_bits() const { return allowed_; }

 private:
  RuleError ApplyKeyPattern(std::string_view rule);
  RuleError ApplyChannelPattern(std::string_view rule);
  RuleError AllowWithArgument(std::string_view rule, const CommandTable& commands);
  void SetAll(bool allow);
  void SetCommand(const Command& command, bool allow);
  void SetCategory(uint32_t category, bool allow, const CommandTable& commands);
  void RecordRule(std::string_view rule, bool allow);
  bool AllowsCommand(const Command& command, const std::vector<std::string_view>& argv) const;

  uint32_t flags_;
  std::bitset<kCommandBits> allowed_;
  // Command id -> the first arguments allowed although the command is not ("+select|0").
  std::vector<std::pair<uint32_t, std::vector<std::string>>> first_args_;
  // Key patterns (each a head byte, its KeyPermission and how it matches, the length, the
  // pattern) and channel patterns (each ended by a NUL: a pattern holds none), one allocation
  // for each list, a few bytes a pattern.
  std::string patterns_;
  std::string channels_;
  std::string rules_;  // "+get -@write +config|get", lowercase
};

}  // namespace goblin::acl
