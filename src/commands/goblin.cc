// Goblin's own commands: GOBLIN.STATS key (how a value is really stored) and
// GOBLIN.OPTIMIZE [key] (repack to the tightest form; replies with the bytes saved).
#include <string>
#include <string_view>

#ifdef GOBLIN_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/value_types.h"
#include "server/errors.h"

namespace goblin {

namespace {

void GoblinStatsCommand(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().Find(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  // Every value reports its type, encoding and bytes (MEMORY USAGE: the key's block and the
  // value); a collection adds its layout (Collection::Describe).
  StatFields fields = {{"type", InfoOf(entry->type()).name},
                       {"encoding", entry->EncodingName()},
                       {"bytes", static_cast<int64_t>(entry->MemoryUsage())}};
  if (entry->type() != ValueType::kString) entry->object()->Describe(&fields);
  ReplyBuilder& r = ctx.reply;
  r.Map(fields.size());
  for (const StatField& field : fields) {
    r.Bulk(field.name);
    if (const auto* integer = std::get_if<int64_t>(&field.value)) {
      r.Integer(*integer);
    } else if (const auto* real = std::get_if<double>(&field.value)) {
      r.Double(*real);
    } else {
      r.Bulk(std::get<std::string_view>(field.value));
    }
  }
}

// Bytes saved by repacking one value; values with nothing to repack save 0.
size_t Optimize(KeyEntry* entry) {
  if (entry->type() == ValueType::kString) return 0;
  return entry->object()->Optimize();
}

// A repack frees the old layout at once; hand its pages back to the kernel now rather than at
// the allocator's next decay tick, so RSS shows the saving.
void ReturnFreedPages() {
#ifdef GOBLIN_HAVE_JEMALLOC
  const std::string purge = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(purge.c_str(), nullptr, nullptr, nullptr, 0);
#endif
}

void GoblinOptimizeCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.reply.Error(errors::WrongArity(CommandName(ctx)));
    return;
  }
  size_t saved = 0;
  if (ctx.argc() == 2) {
    if (KeyEntry* entry = ctx.db().Find(ctx.arg(1), ctx.now_ms)) saved = Optimize(entry);
  } else {
    // Every key of every database; expired keys are left for expiry to reclaim.
    for (size_t i = 0; i < ctx.server.database_count(); ++i) {
      ctx.server.db(static_cast<int>(i)).ForEach([&](KeyEntry* entry) {
        if (!Database::Expired(entry, ctx.now_ms)) saved += Optimize(entry);
      });
    }
  }
  if (saved > 0) ReturnFreedPages();
  ctx.reply.Integer(static_cast<int64_t>(saved));
}

}  // namespace

void RegisterGoblinCommands(CommandTable* table) {
  CommandAdder add{table, "server"};
  add("goblin.stats", 2, kCmdReadonly, {KeyAt(1, kKeyRO | kKeyAccess)}, GoblinStatsCommand,
      "Reports how a value is stored: its real layout, bytes, fill and node counts.", "0.1.0",
      "O(N) for a large sorted set (walks its node tables), O(1) otherwise.", "key");
  add("goblin.optimize", -1, 0, {KeyAt(1, kKeyRO | kKeyAccess)}, GoblinOptimizeCommand,
      "Repacks one value, or every value, to its tightest form; replies with the bytes saved.",
      "0.1.0", "O(N) where N is the number of elements repacked.", "[key]");
}

}  // namespace goblin
