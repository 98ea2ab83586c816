// The argument tree COMMAND DOCS reports, so clients such as redis-cli 7.2 can show hints.
//
// Most rows derive it from their syntax line, as redis.io writes it ("key value [NX | XX] [EX
// seconds | KEEPTTL]"), without a second hand-written table. A row whose tree must be Redis's
// exactly (names of oneof and block groups, key spec indexes, per-argument since) states it
// with the builders below instead, in the order and with the names of Redis's command JSON.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace goblin {

struct CommandArgument {
  std::string name;
  std::string type;   // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  std::string token;  // the literal keyword before the value ("EX"), or empty
  std::string since;  // the version that added the argument to an older command, or empty
  int key_spec_index = -1;  // a key argument's spec (Command::key_specs), or -1
  bool optional = false;
  bool multiple = false;
  std::vector<CommandArgument> children;  // oneof / block

  // Chained setters for the builders below: Optional(Int("count", "COUNT")).Since("6.2.0").
  CommandArgument Since(std::string_view version) && {
    since = version;
    return std::move(*this);
  }
};

// Builders of an explicit tree (see the top of this file). `token` is the keyword before the
// value, empty for none.
namespace docs {
CommandArgument Key(std::string_view name, int key_spec_index);
CommandArgument String(std::string_view name, std::string_view token = {});
CommandArgument Integer(std::string_view name, std::string_view token = {});
CommandArgument UnixTime(std::string_view name, std::string_view token = {});
CommandArgument Pattern(std::string_view name, std::string_view token = {});
CommandArgument Token(std::string_view name, std::string_view token);
CommandArgument OneOf(std::string_view name, std::vector<CommandArgument> choices);
CommandArgument Block(std::string_view name, std::vector<CommandArgument> parts,
                      std::string_view token = {});
CommandArgument Optional(CommandArgument argument);
CommandArgument Multiple(CommandArgument argument);
// Redis's optional "expiration" group: [EX seconds | PX milliseconds | EXAT unix-time-seconds |
// PXAT unix-time-milliseconds | last] (last: KEEPTTL or PERSIST).
CommandArgument Expiration(CommandArgument last);
}  // namespace docs

// Parses a syntax line; malformed input yields the arguments parsed before the error.
std::vector<CommandArgument> ParseCommandSyntax(std::string_view syntax);

}  // namespace goblin
