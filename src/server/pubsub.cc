#include "server/pubsub.h"

#include <algorithm>

#include "core/glob.h"
#include "server/client.h"

namespace goblin {

std::unordered_set<std::string>& PubSub::SetOf(Client& client, Kind kind) {
  switch (kind) {
    case kChannel:
      return client.channels;
    case kPattern:
      return client.patterns;
    case kShard:
      break;
  }
  return client.shard_channels;
}

bool PubSub::Matches(std::string_view pattern, std::string_view channel) {
  return GlobMatch(pattern, channel);
}

bool PubSub::Subscribe(Client& client, Kind kind, std::string_view name) {
  if (!SetOf(client, kind).emplace(name).second) return false;
  subscribers_[kind][std::string(name)].push_back(&client);
  return true;
}

bool PubSub::Unsubscribe(Client& client, Kind kind, std::string_view name) {
  const std::string key(name);
  if (SetOf(client, kind).erase(key) == 0) return false;
  auto it = subscribers_[kind].find(key);
  if (it != subscribers_[kind].end()) {
    std::erase(it->second, &client);
    if (it->second.empty()) subscribers_[kind].erase(it);
  }
  return true;
}

void PubSub::RemoveClient(Client& client) {
  for (Kind kind : {kChannel, kPattern, kShard}) {
    std::unordered_set<std::string>& names = SetOf(client, kind);
    for (const std::string& name : names) {
      auto it = subscribers_[kind].find(name);
      if (it == subscribers_[kind].end()) continue;
      std::erase(it->second, &client);
      if (it->second.empty()) subscribers_[kind].erase(it);
    }
    names.clear();
  }
}

void PubSub::AppendMessage(const Client& client, OutputBuffer* buffer, Kind kind,
                           std::string_view pattern, std::string_view channel,
                           std::string_view message) {
  ReplyBuilder out(buffer);
  out.set_protocol(client.reply.protocol());
  switch (kind) {
    case kChannel:
      out.Push(3);
      out.Bulk("message");
      break;
    case kPattern:
      out.Push(4);
      out.Bulk("pmessage");
      out.Bulk(pattern);
      break;
    case kShard:
      out.Push(3);
      out.Bulk("smessage");
      break;
  }
  out.Bulk(channel);
  out.Bulk(message);
}

std::vector<std::string> PubSub::Names(Kind kind, const std::string* pattern) const {
  std::vector<std::string> names;
  for (const auto& [name, clients] : subscribers_[kind]) {
    if (pattern == nullptr || Matches(*pattern, name)) names.push_back(name);
  }
  return names;
}

size_t PubSub::Subscribers(Kind kind, std::string_view name) const {
  auto it = subscribers_[kind].find(std::string(name));
  return it == subscribers_[kind].end() ? 0 : it->second.size();
}

}  // namespace goblin
