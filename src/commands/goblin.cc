// Goblin's own commands: GOBLIN.STATS key (how a value is really stored) and
// GOBLIN.OPTIMIZE [key] (repack to the tightest form; replies with the bytes saved).
#include <string>
#include <string_view>

#ifdef GOBLIN_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/hash_object.h"
#include "core/set_object.h"
#include "core/zset_object.h"
#include "server/errors.h"

namespace goblin {

std::string_view TypeName(ValueType type);  // keys.cc

namespace {

void IntField(ReplyBuilder& r, std::string_view name, int64_t value) {
  r.Bulk(name);
  r.Integer(value);
}

template <typename Number>
void IntField(ReplyBuilder& r, std::string_view name, Number value) {
  IntField(r, name, static_cast<int64_t>(value));
}

void ReplyZsetStats(ReplyBuilder& r, const KeyEntry& entry, const SortedSet& set) {
  const ZsetStats s = set.Stats();
  r.Map(19);
  r.Bulk("type");
  r.Bulk("zset");
  r.Bulk("encoding");
  r.Bulk(s.encoding);
  r.Bulk("layout");
  r.Bulk(s.layout);
  IntField(r, "members", s.size);
  IntField(r, "bytes", entry.MemoryUsage());  // MEMORY USAGE: the key's block and the value
  IntField(r, "value_bytes", s.bytes);
  IntField(r, "payload_bytes", s.payload_bytes);
  IntField(r, "capacity_bytes", s.capacity_bytes);
  r.Bulk("fill");
  r.Double(s.fill);
  IntField(r, "leaves", s.leaves);
  IntField(r, "jumbo_leaves", s.jumbo_leaves);
  IntField(r, "inner_nodes", s.inner_nodes);
  IntField(r, "height", s.height);
  IntField(r, "leaf_bytes", s.leaf_bytes);
  IntField(r, "inner_bytes", s.inner_bytes);
  IntField(r, "table_bytes", s.table_bytes);
  IntField(r, "index_bytes", s.index_bytes);
  IntField(r, "index_segments", s.index_segments);
  IntField(r, "index_slots", s.index_slots);
}

// Hashes and sets share one layout report (src/core/paged_table.h PackedStats).
void ReplyPackedStats(ReplyBuilder& r, std::string_view type, const KeyEntry& entry,
                      const PackedStats& s) {
  r.Map(14);
  r.Bulk("type");
  r.Bulk(type);
  r.Bulk("encoding");
  r.Bulk(s.encoding);
  r.Bulk("layout");
  r.Bulk(s.layout);
  IntField(r, "elements", s.size);
  IntField(r, "bytes", entry.MemoryUsage());  // MEMORY USAGE: the key's block and the value
  IntField(r, "value_bytes", s.bytes);
  IntField(r, "payload_bytes", s.payload_bytes);
  IntField(r, "dead_bytes", s.dead_bytes);
  IntField(r, "capacity_bytes", s.capacity_bytes);
  r.Bulk("fill");
  r.Double(s.fill);
  IntField(r, "pages", s.pages);
  IntField(r, "index_segments", s.index_segments);
  IntField(r, "index_slots", s.index_slots);
  IntField(r, "index_bytes", s.index_bytes);
}

void GoblinStatsCommand(CommandContext& ctx) {
  KeyEntry* entry = ctx.db().Find(ctx.arg(1), ctx.now_ms);
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ReplyBuilder& r = ctx.reply;
  if (entry->type() == ValueType::kZSet) {
    ReplyZsetStats(r, *entry, static_cast<const ZsetObject*>(entry->object())->set());
    return;
  }
  if (entry->type() == ValueType::kHash) {
    ReplyPackedStats(r, "hash", *entry,
                     static_cast<const HashObject*>(entry->object())->hash().Stats());
    return;
  }
  if (entry->type() == ValueType::kSet) {
    ReplyPackedStats(r, "set", *entry,
                     static_cast<const SetObject*>(entry->object())->set().Stats());
    return;
  }
  r.Map(3);
  r.Bulk("type");
  r.Bulk(TypeName(entry->type()));
  r.Bulk("encoding");
  r.Bulk(entry->EncodingName());
  IntField(r, "bytes", entry->MemoryUsage());
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
  add("goblin.stats", 2, kCmdReadonly, 1, 1, 1, GoblinStatsCommand,
      "Reports how a value is stored: its real layout, bytes, fill and node counts.", "0.1.0",
      "O(N) for a large sorted set (walks its node tables), O(1) otherwise.", "key");
  add("goblin.optimize", -1, 0, 1, 1, 1, GoblinOptimizeCommand,
      "Repacks one value, or every value, to its tightest form; replies with the bytes saved.",
      "0.1.0", "O(N) where N is the number of elements repacked.", "[key]");
}

}  // namespace goblin
