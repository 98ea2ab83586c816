// Turns a command's syntax line, as redis.io writes it ("key value [NX | XX] [EX seconds |
// KEEPTTL]"), into the argument tree COMMAND DOCS reports, so clients such as redis-cli 7.2
// can show hints without a second hand-written table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace goblin {

struct CommandArgument {
  std::string name;
  std::string type;   // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  std::string token;  // the literal keyword before the value ("EX"), or empty
  bool optional = false;
  bool multiple = false;
  std::vector<CommandArgument> children;  // oneof / block
};

// Parses a syntax line; malformed input yields the arguments parsed before the error.
std::vector<CommandArgument> ParseCommandSyntax(std::string_view syntax);

}  // namespace goblin
