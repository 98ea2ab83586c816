#include "server/tracking.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>

#include "core/ascii.h"
#include "core/string_number.h"
#include "server/script_runner.h"
#include "server/server.h"

namespace goblin {

namespace {

// Redis's radix tree of ids compares their little-endian bytes: the byte-swapped ids ascend.
bool RadixBefore(uint64_t a, uint64_t b) { return __builtin_bswap64(a) < __builtin_bswap64(b); }

// The executing client of a script's commands (Redis's script client), never a connection's id:
// a BCAST NOLOOP client still hears of the keys its scripts change, as in Redis.
constexpr uint64_t kScriptModifier = ~uint64_t{0};

}  // namespace

// --- TrackedKey ---------------------------------------------------------------------------------

size_t TrackedKey::Capacity(uint32_t count) { return count <= 1 ? 1 : std::bit_ceil(count); }

TrackedKey* TrackedKey::Make(std::string_view key, uint64_t id) {
  void* memory = std::malloc(BlockBytes(key.size(), 1));
  if (memory == nullptr) std::abort();
  auto* block = new (memory) TrackedKey();
  block->key_size_ = static_cast<uint32_t>(key.size());
  block->count_ = 1;
  std::memcpy(block + 1, key.data(), key.size());
  std::memcpy(block->ids(), &id, sizeof(id));
  return block;
}

void TrackedKey::Destroy(TrackedKey* block) { std::free(block); }

uint64_t TrackedKey::id(size_t i) const {
  uint64_t value;
  std::memcpy(&value, ids() + 8 * i, sizeof(value));
  return value;
}

TrackedKey* TrackedKey::Add(TrackedKey* block, uint64_t id, bool* added) {
  size_t low = 0, high = block->count_;
  while (low < high) {
    size_t mid = (low + high) / 2;
    if (RadixBefore(block->id(mid), id)) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  *added = low == block->count_ || block->id(low) != id;
  if (!*added) return block;
  if (block->count_ == Capacity(block->count_)) {
    void* grown = std::realloc(block, BlockBytes(block->key_size_, Capacity(block->count_ + 1)));
    if (grown == nullptr) std::abort();
    block = static_cast<TrackedKey*>(grown);
  }
  char* at = block->ids() + 8 * low;
  std::memmove(at + 8, at, 8 * (block->count_ - low));
  std::memcpy(at, &id, sizeof(id));
  ++block->count_;
  return block;
}

// --- TrackingTable ------------------------------------------------------------------------------

bool TrackingTable::Add(std::string_view key, uint64_t id) {
  auto slot = table_.FindSlot(key);
  if (!slot) {
    TrackedKey* block = TrackedKey::Make(key, id);
    block_bytes_ += block->AllocatedBytes();
    table_.Insert(block);
    ++items_;
    return true;
  }
  TrackedKey* block = slot.entry();
  const size_t before = block->AllocatedBytes();
  bool added = false;
  TrackedKey* after = TrackedKey::Add(block, id, &added);
  if (!added) return false;
  block_bytes_ += after->AllocatedBytes() - before;
  if (after != block) slot.Replace(after);
  ++items_;
  return true;
}

bool TrackingTable::Take(std::string_view key, std::vector<uint64_t>* ids) {
  TrackedKey* block = table_.Erase(key);
  if (block == nullptr) return false;
  for (uint32_t i = 0; i < block->count(); ++i) ids->push_back(block->id(i));
  items_ -= block->count();
  block_bytes_ -= block->AllocatedBytes();
  TrackedKey::Destroy(block);
  return true;
}

std::optional<std::string> TrackingTable::RandomKey(uint64_t random_bits) const {
  const TrackedKey* block = table_.Random(random_bits);
  if (block == nullptr) return std::nullopt;
  return std::string(block->key());
}

void TrackingTable::Clear() {
  table_.Clear([](TrackedKey* block) { TrackedKey::Destroy(block); });
  items_ = 0;
  block_bytes_ = 0;
}

// --- Tracking: modes ----------------------------------------------------------------------------

void Tracking::Enable(Client& client, uint64_t redirect, bool bcast, bool optin, bool optout,
                      bool noloop, const std::vector<std::string_view>& prefixes) {
  Client::Tracking& state = client.tracking;
  if (!state.on) ++tracking_clients_;
  state.on = true;
  // As Redis's enableTracking: the mode is replaced, a CLIENT CACHING given stays.
  state.broken_redirect = state.bcast = state.optin = state.optout = state.noloop = false;
  state.redirect = redirect;
  if (bcast) {
    state.bcast = true;
    if (prefixes.empty()) AddPrefix(client, "");
    for (std::string_view prefix : prefixes) AddPrefix(client, prefix);
  }
  state.optin = optin;
  state.optout = optout;
  state.noloop = noloop;
  UpdateListening();
}

void Tracking::AddPrefix(Client& client, std::string_view prefix) {
  auto it = prefixes_.find(prefix);
  if (it == prefixes_.end()) it = prefixes_.emplace(std::string(prefix), PrefixState{}).first;
  std::vector<uint64_t>& ids = it->second.clients;
  auto at = std::lower_bound(ids.begin(), ids.end(), client.id);
  if (at != ids.end() && *at == client.id) return;
  ids.insert(at, client.id);
  client.tracking.prefixes.emplace(prefix);
}

void Tracking::Disable(Client& client) {
  Client::Tracking& state = client.tracking;
  for (const std::string& prefix : state.prefixes) {
    auto it = prefixes_.find(prefix);
    if (it == prefixes_.end()) continue;
    std::erase(it->second.clients, client.id);
    if (it->second.clients.empty()) prefixes_.erase(it);
  }
  state.prefixes.clear();
  if (state.on) {
    --tracking_clients_;
    state.on = state.broken_redirect = state.bcast = state.optin = state.optout = false;
    state.caching = state.noloop = false;
  }
  UpdateListening();
}

std::string Tracking::PrefixOverlap(const Client& client,
                                    const std::vector<std::string_view>& prefixes) {
  // Redis formats the prefixes with %s: each stops at its first NUL byte.
  auto text = [](std::string_view prefix) {
    return std::string(prefix.substr(0, prefix.find('\0')));
  };
  auto overlap = [](std::string_view a, std::string_view b) {
    return a.substr(0, b.size()) == b.substr(0, a.size());
  };
  static constexpr std::string_view kRule = ". Prefixes for a single client must not overlap.";
  for (size_t i = 0; i < prefixes.size(); ++i) {
    for (const std::string& existing : client.tracking.prefixes) {
      if (overlap(existing, prefixes[i])) {
        return "ERR Prefix '" + text(prefixes[i]) + "' overlaps with an existing prefix '" +
               text(existing) + "'" + std::string(kRule);
      }
    }
    // Redis 7.2 replies this error and then enables tracking and replies +OK as well when the
    // pair's first prefix is not the first in the list (checkPrefixCollisionsOrReply returns
    // its index as success): two replies to one command. Goblin refuses the command whole.
    for (size_t j = i + 1; j < prefixes.size(); ++j) {
      if (overlap(prefixes[i], prefixes[j])) {
        return "ERR Prefix '" + text(prefixes[i]) + "' overlaps with another provided prefix '" +
               text(prefixes[j]) + "'" + std::string(kRule);
      }
    }
  }
  return "";
}

void Tracking::UpdateListening() {
  const bool listening = table_.keys() > 0 || !prefixes_.empty();
  if (listening == listening_) return;
  listening_ = listening;
  server_.SetKeyChangeListener(listening ? this : nullptr);
}

// --- Tracking: commands -------------------------------------------------------------------------

Tracking::Frame Tracking::Enter(Client& client) {
  Frame outer{current_, executing_, pending_.size()};
  current_ = &client;
  executing_ = false;
  if (tracking_clients_ > 0) LimitTableSize();
  executing_ = true;
  return outer;
}

void Tracking::Leave(const Frame& outer, const std::vector<std::string_view>& argv) {
  Client& client = *current_;
  executing_ = false;
  if (pending_.size() > outer.pending_mark) {
    std::vector<Pending> mine(std::make_move_iterator(pending_.begin() + outer.pending_mark),
                              std::make_move_iterator(pending_.end()));
    pending_.resize(outer.pending_mark);
    // Redis sends the pending keys first, then the pushes held back for the client.
    for (const Pending& pending : mine) {
      if (!pending.raw) Send(client, pending.data);
    }
    for (const Pending& pending : mine) {
      if (pending.raw) client.output.append(pending.push);
    }
    server_.QueueWrite(client);
  }
  // CLIENT CACHING lasts for the next command, or the whole of MULTI ... EXEC; another CLIENT
  // subcommand does not end it (Redis's resetClient).
  if (client.tracking.caching && !client.in_multi && !client.paused && !client.blocked) {
    const Command* command = argv.empty() ? nullptr : server_.commands.Find(argv[0]);
    const bool client_subcommand = command != nullptr && command->name == "client" &&
                                   argv.size() >= 2 && command->FindSubcommand(argv[1]) != nullptr;
    if (!client_subcommand) client.tracking.caching = false;
  }
  current_ = outer.client;
  executing_ = outer.executing;
}

void Tracking::RememberKeys(const Command& command, const std::vector<std::string_view>& argv) {
  if (!(command.flags & kCmdReadonly) || (command.flags & kCmdPubsub)) return;
  // A read-only script's own keys are not remembered, only those of the commands it calls.
  if (command.name == "eval_ro" || command.name == "evalsha_ro" || command.name == "fcall_ro") {
    return;
  }
  const Client::Tracking& state = current_->tracking;
  if ((state.optin && !state.caching) || (state.optout && state.caching)) return;
  std::optional<std::vector<KeyReference>> keys = command.Keys(argv);
  if (!keys || keys->empty()) return;
  for (const KeyReference& key : *keys) table_.Add(argv[key.position], current_->id);
  UpdateListening();
}

// --- Tracking: invalidation ---------------------------------------------------------------------

void Tracking::KeyChanged(std::string_view key, bool expired) {
  // A snapshot being loaded (DEBUG RELOAD) is not a change of the keys: Redis loads without
  // signalling them.
  if (server_.loading()) return;
  if (!prefixes_.empty()) {
    uint64_t modifier = 0;  // expiry: nobody's change
    if (!expired && current_ != nullptr) {
      modifier = server_.scripts->running() ? kScriptModifier : current_->id;
    }
    for (auto& [prefix, state] : prefixes_) {
      if (key.starts_with(prefix)) state.changed.insert_or_assign(std::string(key), modifier);
    }
  }
  Invalidate(key);
}

void Tracking::Invalidate(std::string_view key) {
  ids_.clear();
  if (!table_.Take(key, &ids_)) return;
  for (uint64_t id : ids_) {
    Client* target = server_.FindClient(id);
    if (target == nullptr || !target->tracking.on || target->tracking.bcast) continue;
    if (target == current_ && target->tracking.noloop) continue;
    if (target == current_ && executing_) {
      pending_.push_back({false, KeyPayload(key), OutputBuffer()});
    } else {
      Send(*target, KeyPayload(key));
    }
  }
  UpdateListening();
}

void Tracking::InvalidateAll() {
  if (tracking_clients_ > 0) {
    for (Client* client : server_.ClientsById()) {
      if (!client->tracking.on) continue;
      std::string null = client->reply.resp3() ? "_\r\n" : "$-1\r\n";
      if (client == current_ && executing_) {
        pending_.push_back({false, std::move(null), OutputBuffer()});
      } else {
        Send(*client, null);
      }
    }
  }
  table_.Clear();
  UpdateListening();
}

void Tracking::LimitTableSize() {
  const auto limit = static_cast<size_t>(server_.config.tracking_table_max_keys);
  if (limit == 0) return;
  if (table_.keys() <= limit) {
    limit_rounds_ = 0;
    return;
  }
  for (unsigned effort = 100 * (limit_rounds_ + 1); effort > 0; --effort) {
    std::optional<std::string> key = table_.RandomKey(server_.Random64());
    if (!key) break;
    Invalidate(*key);
    if (table_.keys() <= limit) {
      limit_rounds_ = 0;
      return;
    }
  }
  ++limit_rounds_;
}

void Tracking::Broadcast() {
  if (tracking_clients_ == 0) return;
  for (auto& [prefix, state] : prefixes_) {
    if (state.changed.empty()) continue;
    const std::string all = BroadcastPayload(state.changed, 0);
    for (uint64_t id : state.clients) {
      Client* client = server_.FindClient(id);
      if (client == nullptr) continue;
      if (!client->tracking.noloop) {
        Send(*client, all);
        continue;
      }
      const std::string others = BroadcastPayload(state.changed, id);
      if (!others.empty()) Send(*client, others);
    }
    state.changed.clear();
  }
}

// --- Tracking: delivery -------------------------------------------------------------------------

std::string Tracking::KeyPayload(std::string_view key) {
  std::string payload = "*1\r\n$" + Int64ToString(static_cast<int64_t>(key.size())) + "\r\n";
  payload.append(key);
  payload += "\r\n";
  return payload;
}

std::string Tracking::BroadcastPayload(const std::map<std::string, uint64_t>& changed,
                                       uint64_t skip_id) {
  size_t count = 0;
  for (const auto& [key, modifier] : changed) count += skip_id == 0 || modifier != skip_id;
  if (count == 0) return "";
  std::string payload = "*" + Int64ToString(static_cast<int64_t>(count)) + "\r\n";
  for (const auto& [key, modifier] : changed) {
    if (skip_id != 0 && modifier == skip_id) continue;
    payload += "$" + Int64ToString(static_cast<int64_t>(key.size())) + "\r\n";
    payload += key;
    payload += "\r\n";
  }
  return payload;
}

OutputBuffer* Tracking::OutputOf(Client& target) {
  if (&target != current_ || !executing_) return &target.output;
  pending_.push_back({true, "", OutputBuffer()});
  return &pending_.back().push;
}

void Tracking::Delivered(Client& target, const OutputBuffer* out) {
  if (out == &target.output) server_.QueueWrite(target);
}

void Tracking::Send(Client& tracker, std::string_view payload) {
  Client* target = &tracker;
  const bool redirected = tracker.tracking.redirect != 0;
  if (redirected) {
    target = server_.FindClient(tracker.tracking.redirect);
    if (target == nullptr) {
      // The target has gone: the tracker learns it (RESP3 only) and shows the R flag.
      tracker.tracking.broken_redirect = true;
      if (!tracker.reply.resp3()) return;
      OutputBuffer* out = OutputOf(tracker);
      ReplyBuilder reply(out);
      reply.set_protocol(3);
      reply.Push(2);
      reply.Bulk("tracking-redir-broken");
      reply.Integer(static_cast<int64_t>(tracker.tracking.redirect));
      Delivered(tracker, out);
      return;
    }
  }
  // RESP2 has no pushes: only a redirect target in the subscribed context can be told, by a
  // message on __redis__:invalidate.
  if (!target->reply.resp3() && !(redirected && target->subscribed())) return;
  OutputBuffer* out = OutputOf(*target);
  ReplyBuilder reply(out);
  reply.set_protocol(target->reply.protocol());
  if (target->reply.resp3()) {
    reply.Push(2);
    reply.Bulk("invalidate");
  } else {
    reply.Push(3);
    reply.Bulk("message");
    reply.Bulk("__redis__:invalidate");
  }
  reply.Raw(payload);
  Delivered(*target, out);
}

}  // namespace goblin
