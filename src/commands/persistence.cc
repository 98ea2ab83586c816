// Persistence commands: SAVE BGSAVE BGREWRITEAOF LASTSAVE GOBLIN.SAVE (the work is in
// src/persist/persistence.h; these parse arguments and reply as Redis does).
#include "server/persistence.h"

#include "commands/command_util.h"
#include "commands/families.h"
#include "core/ascii.h"
#include "server/errors.h"

namespace goblin {

namespace {

void SaveCommand(CommandContext& ctx) {
  const std::string error = ctx.server.persistence->Save();
  if (!error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

void BgsaveCommand(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argc() == 2) {
    if (!EqualsIgnoreCase(ctx.arg(1), "schedule")) {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
    schedule = true;
  } else if (ctx.argc() > 2) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  bool scheduled = false;
  const std::string error = ctx.server.persistence->BackgroundSave(schedule, &scheduled);
  if (!error.empty()) {
    ctx.reply.Error(error);
  } else if (scheduled) {
    ctx.reply.Simple("Background saving scheduled");
  } else {
    ctx.reply.Simple("Background saving started");
  }
}

void BgrewriteaofCommand(CommandContext& ctx) {
  bool scheduled = false;
  const std::string error = ctx.server.persistence->RewriteLog(&scheduled);
  if (!error.empty()) {
    ctx.reply.Error(error);
  } else if (scheduled) {
    ctx.reply.Simple("Background append only file rewriting scheduled");
  } else {
    ctx.reply.Simple("Background append only file rewriting started");
  }
}

void LastsaveCommand(CommandContext& ctx) { ctx.reply.Integer(ctx.server.last_save_unix); }

}  // namespace

void RegisterPersistenceCommands(CommandTable* table) {
  CommandAdder add{table, "server"};
  constexpr uint32_t kSaving = kCmdAdmin | kCmdNoscript | kCmdNoAsyncLoading;
  add("save", 1, kSaving | kCmdNoMulti, {}, SaveCommand,
      "Synchronously saves the database(s) to disk.", "1.0.0",
      "O(N) where N is the total number of keys in all databases", "");
  add("bgsave", -1, kSaving, {}, BgsaveCommand, "Asynchronously saves the database(s) to disk.",
      "1.0.0", "O(1)", "[SCHEDULE]");
  add("bgrewriteaof", 1, kSaving, {}, BgrewriteaofCommand,
      "Asynchronously rewrites the append-only file to disk.", "1.0.0", "O(1)", "");
  add.In(kAclAdmin | kAclDangerous)(
      "lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, {}, LastsaveCommand,
      "Returns the Unix timestamp of the last successful save to disk.", "1.0.0", "O(1)", "",
      {"nondeterministic_output"});
  add("goblin.save", 1, kSaving | kCmdNoMulti, {}, SaveCommand,
      "Writes a snapshot in the foreground, as fast as the disk allows (SAVE does the same).",
      "0.1.0", "O(N) where N is the total number of bytes in all databases", "");
}

}  // namespace goblin
