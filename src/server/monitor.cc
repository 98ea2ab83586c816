// MONITOR: every command executed is written to the monitoring clients, in Redis's format,
// passwords redacted.
#include <chrono>
#include <cstdio>
#include <memory>

#include "core/ascii.h"
#include "server/server.h"

namespace goblin {

void MarkSecretArguments(const Command& command, const std::vector<std::string_view>& argv,
                         bool* secret, size_t count) {
  auto mark = [&](size_t i) {
    if (i < count) secret[i] = true;
  };
  if (command.name == "auth") {
    for (size_t i = 1; i < argv.size(); ++i) mark(i);
  } else if (command.name == "acl|setuser") {
    // The user's name and rules: passwords and what the user may reach.
    for (size_t i = 2; i < argv.size(); ++i) mark(i);
  } else if (command.name == "hello") {
    for (size_t i = 2; i + 2 < argv.size(); ++i) {
      if (EqualsIgnoreCase(argv[i], "auth")) {
        mark(i + 1);
        mark(i + 2);
      }
    }
  } else if (command.name == "migrate") {
    // As MIGRATE's parser walks its options: up to KEYS or the first word it does not know.
    for (size_t i = 6; i < argv.size(); ++i) {
      const size_t more = argv.size() - 1 - i;
      if (EqualsIgnoreCase(argv[i], "auth") && more >= 1) {
        mark(++i);
      } else if (EqualsIgnoreCase(argv[i], "auth2") && more >= 2) {
        mark(++i);
        mark(++i);
      } else if (!EqualsIgnoreCase(argv[i], "copy") && !EqualsIgnoreCase(argv[i], "replace")) {
        break;
      }
    }
  } else if (command.name == "config|set") {
    // Redis's sensitive options: their values never reach a log.
    static constexpr std::string_view kSensitive[] = {
        "masterauth", "masteruser", "requirepass", "tls-key-file-pass", "tls-client-key-file-pass"};
    for (size_t i = 2; i + 1 < argv.size(); i += 2) {
      for (std::string_view name : kSensitive) {
        if (EqualsIgnoreCase(argv[i], name)) mark(i + 1);
      }
    }
  }
}

std::vector<bool> SecretArguments(const Command& command,
                                  const std::vector<std::string_view>& argv) {
  std::unique_ptr<bool[]> marks(new bool[argv.size()]());
  MarkSecretArguments(command, argv, marks.get(), argv.size());
  return std::vector<bool>(marks.get(), marks.get() + argv.size());
}

void Server::AddMonitor(Client& client) {
  client.monitor = true;
  monitors_.push_back(&client);
}

void Server::RemoveMonitor(Client& client) {
  if (!client.monitor) return;
  client.monitor = false;
  std::erase(monitors_, &client);
}

void Server::FeedMonitors(const Client& client, const Command& command,
                          const std::vector<std::string_view>& argv) {
  if (monitors_.empty()) return;
  const std::vector<bool> redacted = SecretArguments(command, argv);
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  char stamp[64];
  std::snprintf(stamp, sizeof(stamp), "+%lld.%06lld [%d ", static_cast<long long>(micros / 1000000),
                static_cast<long long>(micros % 1000000), client.db);
  std::string line = stamp;
  if (client.kind == ClientKind::kScript) {
    line += "lua";
  } else {
    line += client.unix_socket ? "unix:" + config.unixsocket : client.address;
  }
  line += ']';
  for (size_t i = 0; i < argv.size(); ++i) {
    line += ' ';
    AppendRepr(&line, redacted[i] ? std::string_view("(redacted)") : argv[i]);
  }
  line += "\r\n";
  for (Client* monitor : monitors_) {
    // A monitor that is closing takes no more output, as in Redis: its own QUIT is not shown.
    if (monitor->close_after_reply) continue;
    monitor->reply.Raw(line);
    if (monitor != &client) QueueWrite(*monitor);
  }
}

}  // namespace goblin
