// LOLWUT [VERSION v] [...]: computer art and the version. Version 5 draws Schotter
// (LOLWUT VERSION 5 [columns] [squares-per-row] [squares-per-col]), version 6 a skyline
// (LOLWUT VERSION 6 [columns] [rows]); any other version, as in Redis 7, only the version line.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/lolwut_art.h"
#include "core/string_number.h"
#include "core/version.h"
#include "server/errors.h"

namespace goblin {
namespace {

// The numeric arguments after the version, defaults where absent, each clamped to its range;
// false once an error is sent.
bool ReadArtArguments(CommandContext& ctx, size_t first, std::initializer_list<int> defaults,
                      std::initializer_list<int> maxima, std::vector<int>* values) {
  auto max_it = maxima.begin();
  size_t i = first;
  for (int fallback : defaults) {
    int64_t value = fallback;
    if (i < ctx.argc() && !ParseInt64(ctx.arg(i), &value)) {
      ctx.reply.Error(errors::kNotInteger);
      return false;
    }
    values->push_back(static_cast<int>(std::clamp<int64_t>(value, 1, *max_it)));
    ++max_it;
    ++i;
  }
  return true;
}

void LolwutCommand(CommandContext& ctx) {
  int64_t version = 7;
  size_t first = 1;
  if (ctx.argc() >= 3 && EqualsIgnoreCase(ctx.arg(1), "version")) {
    if (!ParseInt64(ctx.arg(2), &version)) {
      ctx.reply.Error(errors::kNotInteger);
      return;
    }
    first = 3;
  }
  const std::string version_line = std::string("Redis ver. ") + kRedisVersion + "\n";
  std::random_device seed;
  std::mt19937_64 rng((static_cast<uint64_t>(seed()) << 32) ^ seed());
  std::vector<int> values;
  if (version == 5) {
    if (!ReadArtArguments(ctx, first, {66, 8, 12}, {1000, 200, 200}, &values)) return;
    ctx.reply.Verbatim(DrawSchotter(values[0], values[1], values[2], rng) +
                       "\nGeorg Nees - schotter, plotter on paper, 1968. " + version_line);
  } else if (version == 6) {
    if (!ReadArtArguments(ctx, first, {80, 20}, {1000, 1000}, &values)) return;
    ctx.reply.Verbatim(DrawSkyline(values[0], values[1], rng) +
                       "\nA city at night, in four shades of gray. " + version_line);
  } else {
    ctx.reply.Verbatim(version_line);
  }
}

}  // namespace

void RegisterLolwutCommand(CommandTable* table) {
  CommandAdder add{table, "server"};
  add("lolwut", -1, kCmdReadonly | kCmdFast, {}, LolwutCommand,
      "Display some computer art and the Redis version", "5.0.0", "", "[VERSION version]");
}

}  // namespace goblin
