// Publish/subscribe: who listens to which channel, pattern or shard channel, and delivery.
//
// Three namespaces, as in Redis: channels (SUBSCRIBE, PUBLISH), patterns (PSUBSCRIBE, glob
// matched against the channel a PUBLISH names) and shard channels (SSUBSCRIBE, SPUBLISH; without
// a cluster they are simply a namespace of their own). Each name maps to its subscribers in the
// order they subscribed, which is the order PUBLISH delivers in: channel subscribers first, then
// each matching pattern's.
//
// A message goes into the subscriber's output buffer as a push (RESP3 `>`, RESP2 an array) and
// the subscriber is queued for a write at the end of the event loop round (Server), so a burst
// of PUBLISHes reaches a subscriber in one write. A message to the client whose command runs
// waits for that command's reply (Server::Publish).
//
// Invariants:
//  1. Client c is in subscribers_[kind][name] exactly when name is in c's set of that kind
//     (Client::channels, patterns, shard_channels); empty subscriber lists are erased.
//  2. A client leaves every list before it is destroyed (RemoveClient).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace goblin {

struct Client;
class OutputBuffer;

class PubSub {
 public:
  enum Kind { kChannel = 0, kPattern = 1, kShard = 2 };

  // Returns false (and changes nothing) when client already subscribed to name.
  bool Subscribe(Client& client, Kind kind, std::string_view name);
  // Returns false when client was not subscribed to name.
  bool Unsubscribe(Client& client, Kind kind, std::string_view name);
  void RemoveClient(Client& client);

  // Delivers message; returns the number of deliveries (a client subscribed to the channel and
  // to a matching pattern counts twice, as in Redis). Each copy is written to
  // output_of(client), an OutputBuffer*; deliver(client, buffer) follows, so that the caller
  // can schedule the write.
  template <typename OutputOf, typename Deliver>
  size_t Publish(Kind kind, std::string_view channel, std::string_view message,
                 OutputOf&& output_of, Deliver&& deliver);

  // The names of `kind` client is subscribed to (Client::channels, patterns or shard_channels).
  static std::unordered_set<std::string>& SetOf(Client& client, Kind kind);

  // PUBSUB CHANNELS / SHARDCHANNELS: names with subscribers, matching pattern when given.
  std::vector<std::string> Names(Kind kind, const std::string* pattern) const;
  size_t Subscribers(Kind kind, std::string_view name) const;
  size_t Count(Kind kind) const { return subscribers_[kind].size(); }

 private:
  static void AppendMessage(const Client& client, OutputBuffer* out, Kind kind,
                            std::string_view pattern, std::string_view channel,
                            std::string_view message);
  static bool Matches(std::string_view pattern, std::string_view channel);

  std::unordered_map<std::string, std::vector<Client*>> subscribers_[3];
};

template <typename OutputOf, typename Deliver>
size_t PubSub::Publish(Kind kind, std::string_view channel, std::string_view message,
                       OutputOf&& output_of, Deliver&& deliver) {
  size_t receivers = 0;
  const std::string name(channel);
  if (auto it = subscribers_[kind].find(name); it != subscribers_[kind].end()) {
    for (Client* client : it->second) {
      OutputBuffer* out = output_of(*client);
      AppendMessage(*client, out, kind, {}, channel, message);
      deliver(*client, out);
      ++receivers;
    }
  }
  if (kind == kChannel) {
    for (const auto& [pattern, clients] : subscribers_[kPattern]) {
      if (!Matches(pattern, channel)) continue;
      for (Client* client : clients) {
        OutputBuffer* out = output_of(*client);
        AppendMessage(*client, out, kPattern, pattern, channel, message);
        deliver(*client, out);
        ++receivers;
      }
    }
  }
  return receivers;
}

}  // namespace goblin
