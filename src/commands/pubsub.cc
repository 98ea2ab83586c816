// Publish/subscribe commands: SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUNSUBSCRIBE SSUBSCRIBE
// SUNSUBSCRIBE PUBLISH SPUBLISH PUBSUB (the registry is server/pubsub.h).
#include <string>
#include <vector>

#include "commands/command_util.h"
#include "commands/families.h"
#include "server/cluster/cluster.h"
#include "server/errors.h"

namespace goblin {
namespace {

struct Verbs {
  PubSub::Kind kind;
  const char* subscribe;
  const char* unsubscribe;
};

constexpr Verbs kChannels{PubSub::kChannel, "subscribe", "unsubscribe"};
constexpr Verbs kPatterns{PubSub::kPattern, "psubscribe", "punsubscribe"};
constexpr Verbs kShards{PubSub::kShard, "ssubscribe", "sunsubscribe"};

// The count each confirmation carries: channels and patterns together, shard channels apart.
size_t SubscriptionCount(const Client& client, PubSub::Kind kind) {
  if (kind == PubSub::kShard) return client.shard_channels.size();
  return client.channels.size() + client.patterns.size();
}

void Confirm(CommandContext& ctx, const char* verb, const std::string* name, PubSub::Kind kind) {
  ctx.reply.Push(3);
  ctx.reply.Bulk(verb);
  if (name != nullptr) {
    ctx.reply.Bulk(*name);
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Integer(static_cast<int64_t>(SubscriptionCount(ctx.client, kind)));
}

void Subscribe(CommandContext& ctx, const Verbs& verbs) {
  for (size_t i = 1; i < ctx.argc(); ++i) {
    const std::string name(ctx.arg(i));
    ctx.server.pubsub.Subscribe(ctx.client, verbs.kind, name);
    Confirm(ctx, verbs.subscribe, &name, verbs.kind);
  }
}

void Unsubscribe(CommandContext& ctx, const Verbs& verbs) {
  std::vector<std::string> names;
  if (ctx.argc() > 1) {
    for (size_t i = 1; i < ctx.argc(); ++i) names.emplace_back(ctx.arg(i));
  } else {
    const auto& all = PubSub::SetOf(ctx.client, verbs.kind);
    names.assign(all.begin(), all.end());
    if (names.empty()) {
      Confirm(ctx, verbs.unsubscribe, nullptr, verbs.kind);
      return;
    }
  }
  for (const std::string& name : names) {
    ctx.server.pubsub.Unsubscribe(ctx.client, verbs.kind, name);
    Confirm(ctx, verbs.unsubscribe, &name, verbs.kind);
  }
}

void SubscribeCommand(CommandContext& ctx) { Subscribe(ctx, kChannels); }
void UnsubscribeCommand(CommandContext& ctx) { Unsubscribe(ctx, kChannels); }
void PsubscribeCommand(CommandContext& ctx) { Subscribe(ctx, kPatterns); }
void PunsubscribeCommand(CommandContext& ctx) { Unsubscribe(ctx, kPatterns); }
void SsubscribeCommand(CommandContext& ctx) { Subscribe(ctx, kShards); }
void SunsubscribeCommand(CommandContext& ctx) { Unsubscribe(ctx, kShards); }

void Publish(CommandContext& ctx, PubSub::Kind kind) {
  // The publisher's own copy follows its reply (and the whole EXEC or script around it).
  const size_t receivers = ctx.server.Publish(kind, ctx.arg(1), ctx.arg(2));
  ctx.reply.Integer(static_cast<int64_t>(receivers));
  // The other nodes' subscribers get the message too: a cluster relays it on the bus (every
  // node for PUBLISH, the shard's for SPUBLISH), else each replica publishes it again.
  if (ctx.server.cluster_mode != nullptr) {
    ctx.server.cluster_mode->PropagatePublish(kind == PubSub::kShard, ctx.arg(1), ctx.arg(2));
  } else {
    ctx.server.effects.ReplicateUnchanged();
  }
}

void PublishCommand(CommandContext& ctx) { Publish(ctx, PubSub::kChannel); }
void SpublishCommand(CommandContext& ctx) { Publish(ctx, PubSub::kShard); }

// PUBSUB CHANNELS / SHARDCHANNELS [pattern].
void ListNames(CommandContext& ctx, PubSub::Kind kind) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(errors::UnknownSubcommandOrArity(ctx.arg(1), "PUBSUB"));
    return;
  }
  const std::string pattern = ctx.argc() == 3 ? std::string(ctx.arg(2)) : std::string();
  const std::vector<std::string> names =
      ctx.server.pubsub.Names(kind, ctx.argc() == 3 ? &pattern : nullptr);
  ctx.reply.Array(names.size());
  for (const std::string& name : names) ctx.reply.Bulk(name);
}

// PUBSUB NUMSUB / SHARDNUMSUB [name ...].
void CountSubscribers(CommandContext& ctx, PubSub::Kind kind) {
  ctx.reply.Array((ctx.argc() - 2) * 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Bulk(ctx.arg(i));
    ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub.Subscribers(kind, ctx.arg(i))));
  }
}

void PubsubChannelsCommand(CommandContext& ctx) { ListNames(ctx, PubSub::kChannel); }
void PubsubShardchannelsCommand(CommandContext& ctx) { ListNames(ctx, PubSub::kShard); }
void PubsubNumsubCommand(CommandContext& ctx) { CountSubscribers(ctx, PubSub::kChannel); }
void PubsubShardnumsubCommand(CommandContext& ctx) { CountSubscribers(ctx, PubSub::kShard); }
void PubsubNumpatCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.server.pubsub.Count(PubSub::kPattern)));
}

void PubsubHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx,
            {"CHANNELS [<pattern>]",
             "    Return the currently active channels matching a <pattern> (default: '*').",
             "NUMPAT", "    Return number of subscriptions to patterns.", "NUMSUB [<channel> ...]",
             "    Return the number of subscribers for the specified channels, excluding",
             "    pattern subscriptions(default: no channels).", "SHARDCHANNELS [<pattern>]",
             "    Return the currently active shard level channels matching a <pattern> "
             "(default: '*').",
             "SHARDNUMSUB [<shardchannel> ...]",
             "    Return the number of subscribers for the specified shard level "
             "channel(s)"});
}

}  // namespace

void RegisterPubsubCommands(CommandTable* table) {
  constexpr uint32_t kSub = kCmdPubsub | kCmdNoscript | kCmdLoading | kCmdStale;
  constexpr uint32_t kPub = kCmdPubsub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate;
  constexpr uint32_t kInfo = kCmdPubsub | kCmdLoading | kCmdStale;
  CommandAdder add{table, "pubsub"};
  add("subscribe", -2, kSub, {}, SubscribeCommand, "Listens for messages published to channels.",
      "2.0.0", "O(N) where N is the number of channels to subscribe to.", "channel [channel ...]");
  add("unsubscribe", -1, kSub, {}, UnsubscribeCommand,
      "Stops listening to messages posted to channels.", "2.0.0",
      "O(N) where N is the number of channels to unsubscribe.", "[channel [channel ...]]");
  add("psubscribe", -2, kSub, {}, PsubscribeCommand,
      "Listens for messages published to channels that match one or more patterns.", "2.0.0",
      "O(N) where N is the number of patterns to subscribe to.", "pattern [pattern ...]");
  add("punsubscribe", -1, kSub, {}, PunsubscribeCommand,
      "Stops listening to messages published to channels that match one or more patterns.", "2.0.0",
      "O(N) where N is the number of patterns to unsubscribe.", "[pattern [pattern ...]]");
  add("ssubscribe", -2, kSub, {KeySpec{kKeyNotKey, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}},
      SsubscribeCommand, "Listens for messages published to shard channels.", "7.0.0",
      "O(N) where N is the number of shard channels to subscribe to.",
      "shardchannel [shardchannel ...]");
  add("sunsubscribe", -1, kSub, {KeySpec{kKeyNotKey, KeyBegin::Index(1), KeyFind::Range(-1, 1, 0)}},
      SunsubscribeCommand, "Stops listening to messages posted to shard channels.", "7.0.0",
      "O(N) where N is the number of shard channels to unsubscribe.",
      "[shardchannel [shardchannel ...]]");
  add("publish", 3, kPub, {}, PublishCommand, "Posts a message to a channel.", "2.0.0",
      "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the "
      "total number of subscribed patterns (by any client).",
      "channel message");
  add("spublish", 3, kPub, {KeyAt(1, kKeyNotKey)}, SpublishCommand,
      "Post a message to a shard channel", "7.0.0",
      "O(N) where N is the number of clients subscribed to the receiving shard channel.",
      "shardchannel message");
  Command* pubsub = add("pubsub", -2, 0, {}, nullptr, "A container for Pub/Sub commands.", "2.8.0",
                        "Depends on subcommand.", "");
  add.Sub(pubsub, "channels", -2, kInfo, {}, PubsubChannelsCommand, "Returns the active channels.",
          "2.8.0",
          "O(N) where N is the number of active channels, and assuming constant time pattern "
          "matching (relatively short channels and patterns)",
          "[pattern]");
  add.Sub(pubsub, "numsub", -2, kInfo, {}, PubsubNumsubCommand,
          "Returns a count of subscribers to channels.", "2.8.0",
          "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
          "[channel [channel ...]]");
  add.Sub(pubsub, "numpat", 2, kInfo, {}, PubsubNumpatCommand,
          "Returns a count of unique pattern subscriptions.", "2.8.0", "O(1)", "");
  add.Sub(pubsub, "shardchannels", -2, kInfo, {}, PubsubShardchannelsCommand,
          "Returns the active shard channels.", "7.0.0",
          "O(N) where N is the number of active shard channels, and assuming constant time "
          "pattern matching (relatively short shard channels).",
          "[pattern]");
  add.Sub(pubsub, "shardnumsub", -2, kInfo, {}, PubsubShardnumsubCommand,
          "Returns the count of subscribers of shard channels.", "7.0.0",
          "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
          "[shardchannel [shardchannel ...]]");
  add.Sub(pubsub, "help", 2, kCmdLoading | kCmdStale, {}, PubsubHelpCommand,
          "Returns helpful text about the different subcommands.", "6.2.0", "O(1)", "");
}

}  // namespace goblin
