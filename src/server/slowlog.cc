// SLOWLOG and LATENCY: what a command that took long leaves behind.
#include <algorithm>

#include "server/server.h"

namespace goblin {

namespace {

constexpr size_t kSlowlogArgs = 32;
constexpr size_t kSlowlogArgBytes = 128;
constexpr size_t kLatencyHistory = 160;

}  // namespace

void Server::RecordSlowlog(const Client& client, const Command& command,
                           const std::vector<std::string_view>& argv, int64_t duration_us) {
  if (config.slowlog_log_slower_than < 0 || duration_us < config.slowlog_log_slower_than) return;
  SlowlogEntry entry;
  entry.id = next_slowlog_id++;
  entry.unix_time = NowMs() / 1000;
  entry.duration_us = duration_us;
  const std::vector<bool> redacted = SecretArguments(command, argv);
  size_t shown = std::min(argv.size(), kSlowlogArgs);
  for (size_t i = 0; i < shown; ++i) {
    if (shown < argv.size() && i == shown - 1) {
      entry.args.push_back("... (" + std::to_string(argv.size() - shown + 1) + " more arguments)");
      break;
    }
    const std::string_view shown_arg = redacted[i] ? std::string_view("(redacted)") : argv[i];
    std::string arg(shown_arg.substr(0, kSlowlogArgBytes));
    if (shown_arg.size() > kSlowlogArgBytes) {
      arg += "... (" + std::to_string(shown_arg.size() - kSlowlogArgBytes) + " more bytes)";
    }
    entry.args.push_back(std::move(arg));
  }
  entry.peer = client.address;
  entry.client_name = client.name;
  slowlog.push_front(std::move(entry));
  while (slowlog.size() > static_cast<size_t>(config.slowlog_max_len)) slowlog.pop_back();
}

void Server::RecordLatency(std::string_view event, int64_t duration_ms) {
  LatencyEvent& record = latency_events[std::string(event)];
  int64_t now = NowMs() / 1000;
  if (!record.history.empty() && record.history.back().unix_time == now) {
    record.history.back().latency_ms = std::max(record.history.back().latency_ms, duration_ms);
  } else {
    record.history.push_back({now, duration_ms});
    if (record.history.size() > kLatencyHistory) record.history.pop_front();
  }
  record.max_ms = std::max(record.max_ms, duration_ms);
}

// Background work, in bounded slices.

}  // namespace goblin
