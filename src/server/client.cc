#include "server/client.h"

#include <algorithm>

#include "core/string_number.h"
#include "server/acl/user.h"
#include "server/command_table.h"

namespace goblin {

size_t ClientMemory(const Client& c) {
  // Per entry of a hash set or vector of strings: the string object and the node around it,
  // as Redis counts a dict entry and the pointers to its shared strings.
  constexpr size_t kEntryOverhead = sizeof(std::string) + 2 * sizeof(void*);
  const size_t subscriptions = c.channels.size() + c.patterns.size() + c.shard_channels.size();
  size_t memory = sizeof(Client) + c.input.capacity() + c.output.allocated();
  memory += c.queued_bytes + c.queued.size() * sizeof(std::vector<std::string>);
  memory += c.watched_key_bytes + c.watched.size() * kEntryOverhead;
  memory += subscriptions * kEntryOverhead;
  memory += c.tracking.prefixes.size() * kEntryOverhead;
  return memory;
}

std::string ClientInfoLine(const Client& c, int64_t now_ms) {
  std::string line;
  line.reserve(300);
  auto field = [&line](std::string_view name, std::string_view value) {
    if (!line.empty()) line += ' ';
    line.append(name).append("=").append(value);
  };
  auto number = [&field](std::string_view name, int64_t value) {
    field(name, Int64ToString(value));
  };
  number("id", static_cast<int64_t>(c.id));
  field("addr", c.address);
  field("laddr", c.local_address);
  number("fd", c.fd);
  field("name", c.name);
  number("age", (now_ms - c.created_ms) / 1000);
  number("idle", (now_ms - c.last_interaction_ms) / 1000);
  std::string flags;  // in Redis's order
  if (c.is_replica()) flags += 'S';
  if (c.kind == ClientKind::kMaster) flags += 'M';
  if (c.monitor) flags += 'O';
  if (c.subscribed()) flags += 'P';
  if (c.in_multi || c.in_exec) flags += 'x';
  if (c.blocked) flags += 'b';
  if (c.tracking.on) flags += 't';
  if (c.tracking.broken_redirect) flags += 'R';
  if (c.tracking.bcast) flags += 'B';
  if (c.watch_dirty) flags += 'd';
  if (c.close_after_reply) flags += 'c';
  if (c.unix_socket) flags += 'U';
  if (c.no_evict) flags += 'e';
  if (c.no_touch) flags += 'T';
  field("flags", flags.empty() ? std::string_view("N") : std::string_view(flags));
  number("db", c.db);
  number("sub", static_cast<int64_t>(c.channels.size()));
  number("psub", static_cast<int64_t>(c.patterns.size()));
  number("ssub", static_cast<int64_t>(c.shard_channels.size()));
  number("multi", c.in_multi  ? static_cast<int64_t>(c.queued.size())
                  : c.in_exec ? static_cast<int64_t>(c.exec_size)
                              : -1);
  number("qbuf", static_cast<int64_t>(c.input.size()));
  number("qbuf-free", static_cast<int64_t>(c.input.capacity() - c.input.size()));
  number("argv-mem", 0);
  number("multi-mem", static_cast<int64_t>(c.queued_bytes));
  number("rbs", static_cast<int64_t>(c.output.allocated()));
  number("rbp", static_cast<int64_t>(c.output.size()));
  // Redis keeps a reply in a 16 KB buffer (obl) and then in a list of 16 KB blocks (oll,
  // omem). Here blocks may be larger (one per big reply): the figures are Redis's cut of the
  // unsent bytes.
  constexpr int64_t kReplyChunk = 16 * 1024;
  const auto pending = static_cast<int64_t>(c.pending_output());
  const int64_t in_buffer = std::min(pending, kReplyChunk);
  number("obl", in_buffer);
  number("oll", (pending - in_buffer + kReplyChunk - 1) / kReplyChunk);
  number("omem", pending - in_buffer);
  number("tot-mem", static_cast<int64_t>(ClientMemory(c)));
  field("events", c.want_write ? "rw" : "r");
  field("cmd", c.last_command != nullptr ? std::string_view(c.last_command->name) : "NULL");
  // A client with no user may run anything: the master's link (Redis's "superuser").
  field("user", c.user != nullptr ? std::string_view(c.user->name()) : "(superuser)");
  number("redir", c.tracking.on ? static_cast<int64_t>(c.tracking.redirect) : -1);
  number("resp", c.reply.protocol());
  field("lib-name", c.lib_name);
  field("lib-ver", c.lib_ver);
  return line;
}

}  // namespace goblin
