// Key specifications: where a command's keys sit among its arguments and what the command does
// to each, as Redis 7 describes them (COMMAND INFO's key_specs, COMMAND GETKEYSANDFLAGS), with
// the command tips COMMAND INFO reports beside them.
//
// Each command row carries its specs (server/command_table.h, written beside the name in the
// family's file as Redis's command JSON writes them): they are the one description of a
// command's keys, from which Command::Keys finds the keys of a call and their flags, and
// COMMAND INFO's legacy first key, last key and step are derived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace goblin {

// Redis's key-spec flags, in the order COMMAND INFO prints them.
enum KeySpecFlag : uint32_t {
  kKeyRO = 1 << 0,  // the value is read, not changed
  kKeyRW = 1 << 1,
  kKeyOW = 1 << 2,  // overwritten without being read
  kKeyRM = 1 << 3,  // removed
  kKeyAccess = 1 << 4,
  kKeyUpdate = 1 << 5,
  kKeyInsert = 1 << 6,
  kKeyDelete = 1 << 7,
  kKeyNotKey = 1 << 8,  // a shard channel, sitting where a key would for cluster routing
  kKeyIncomplete = 1 << 9,
  kKeyVariableFlags = 1 << 10,  // the flags of a call depend on its arguments (SET ... GET)
};

std::vector<std::string_view> KeySpecFlagNames(uint32_t flags);

// Where the search for a spec's keys begins: a fixed argument, or the argument after a keyword
// found searching forward from `index` (backward from argc + index when it is negative).
struct KeyBegin {
  enum class Type : uint8_t { kIndex, kKeyword, kUnknown };
  Type type = Type::kUnknown;
  int index = 0;
  std::string_view keyword;

  static constexpr KeyBegin Index(int index) { return {Type::kIndex, index, {}}; }
  static constexpr KeyBegin Keyword(std::string_view keyword, int start_from) {
    return {Type::kKeyword, start_from, keyword};
  }
  static constexpr KeyBegin Unknown() { return {}; }
};

// How many keys follow the beginning. Range: last key relative to the first (negative: from
// the end; with limit > 1, only 1/limit of the remaining arguments), key step. Keynum: the
// count's offset from the beginning, the first key's offset from the count, key step.
struct KeyFind {
  enum class Type : uint8_t { kRange, kKeynum, kUnknown };
  Type type = Type::kUnknown;
  int a = 0;
  int b = 0;
  int c = 0;

  static constexpr KeyFind Range(int last_key, int key_step, int limit) {
    return {Type::kRange, last_key, key_step, limit};
  }
  static constexpr KeyFind Keynum(int keynum_index, int first_key, int key_step) {
    return {Type::kKeynum, keynum_index, first_key, key_step};
  }
  static constexpr KeyFind Unknown() { return {}; }
};

struct KeySpec {
  constexpr KeySpec(uint32_t flags, KeyBegin begin, KeyFind find, std::string_view notes = {})
      : flags(flags), begin(begin), find(find), notes(notes) {}

  uint32_t flags = 0;
  KeyBegin begin;
  KeyFind find;
  std::string_view notes;

  bool complete() const {
    return !(flags & kKeyIncomplete) && begin.type != KeyBegin::Type::kUnknown &&
           find.type != KeyFind::Type::kUnknown;
  }
  // The positions this spec names in argv (argv[0] the command name): first, first + step, ...
  // up to last, none when the spec is not complete. Returns false when the call contradicts
  // the spec: a count that is not a count of keys the call holds, a keyword with nothing after
  // it, or a tail that does not split into `limit` equal parts (XREAD's keys and ids).
  struct Span {
    size_t first = 0;
    size_t last = 0;  // inclusive
    size_t step = 0;  // 0: no keys
    bool empty() const { return step == 0; }
  };
  bool Find(const std::vector<std::string_view>& argv, Span* span) const;
  // The same positions, appended to *out.
  bool Positions(const std::vector<std::string_view>& argv, std::vector<size_t>* out) const;
};

// The most common spec: one key, at argv[index].
constexpr KeySpec KeyAt(int index, uint32_t flags) {
  return KeySpec(flags, KeyBegin::Index(index), KeyFind::Range(0, 1, 0));
}

// A key of a call: its index in argv and what the command does to it (KeySpecFlag).
struct KeyReference {
  size_t position;
  uint32_t flags;
  bool operator==(const KeyReference&) const = default;
};

// The flags of the key at argv[position], a key of the call that `specs` describes: those of
// the complete spec that names the position, else those of the last spec that could (the
// incomplete or unknown one: SORT ... STORE).
uint32_t KeyFlagsOf(const std::vector<KeySpec>& specs, const std::vector<std::string_view>& argv,
                    size_t position);

// Variable flags resolved for a call of `command` as Redis resolves them (SET without GET
// overwrites; BITFIELD with only GETs reads); `flags` unchanged for other commands.
uint32_t ResolveVariableFlags(std::string_view command, const std::vector<std::string_view>& argv,
                              uint32_t flags);

}  // namespace goblin
