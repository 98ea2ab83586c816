// Transactions: MULTI EXEC DISCARD WATCH UNWATCH.
#include "commands/command_util.h"
#include "commands/families.h"

namespace goblin {
namespace {

void ResetTransaction(CommandContext& ctx) {
  ctx.client.DiscardTransaction();
  ctx.server.UnwatchAll(ctx.client);
}

void MultiCommand(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ctx.client.in_multi = true;
  ctx.reply.Ok();
}

void ExecCommand(CommandContext& ctx) {
  Client& client = ctx.client;
  if (!client.in_multi) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  if (client.multi_failed) {
    ResetTransaction(ctx);
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (client.watch_dirty || ctx.server.WatchedKeyExpired(client)) {
    ResetTransaction(ctx);
    ctx.reply.NullArray();
    return;
  }
  std::vector<std::vector<std::string>> queued = std::move(client.queued);
  ResetTransaction(ctx);
  ctx.reply.Array(queued.size());
  std::vector<std::string_view> argv;
  client.in_exec = true;
  client.exec_size = queued.size();
  for (const std::vector<std::string>& command : queued) {
    argv.assign(command.begin(), command.end());
    ctx.server.RunQueued(client, argv);
  }
  client.in_exec = false;
}

void DiscardCommand(CommandContext& ctx) {
  if (!ctx.client.in_multi) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ResetTransaction(ctx);
  ctx.reply.Ok();
}

void WatchCommand(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  for (size_t i = 1; i < ctx.argc(); ++i) ctx.server.Watch(ctx.client, ctx.arg(i));
  ctx.reply.Ok();
}

void UnwatchCommand(CommandContext& ctx) {
  ctx.server.UnwatchAll(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable* table) {
  constexpr uint32_t kControl =
      kCmdNoscript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy | kCmdTransactionControl;
  CommandAdder add{table, "transactions", kAclTransaction};
  add("multi", 1, kControl, {}, MultiCommand, "Starts a transaction.", "1.2.0", "O(1)", "");
  add("exec", 1, kCmdNoscript | kCmdLoading | kCmdStale | kCmdSkipSlowlog | kCmdTransactionControl,
      {}, ExecCommand, "Executes all commands in a transaction.", "1.2.0",
      "Depends on commands in the transaction", "");
  add("discard", 1, kControl, {}, DiscardCommand, "Discards a transaction.", "2.0.0",
      "O(N), when N is the number of queued commands", "");
  add("watch", -2, kControl, {KeySpec{kKeyRO, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}},
      WatchCommand, "Monitors changes to keys to determine the execution of a transaction.",
      "2.2.0", "O(1) for every key.", "key [key ...]");
  add("unwatch", 1, kCmdNoscript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy, {},
      UnwatchCommand, "Forgets about watched keys of a transaction.", "2.2.0", "O(1)", "");
}

}  // namespace goblin
