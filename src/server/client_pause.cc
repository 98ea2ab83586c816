// CLIENT PAUSE and CLIENT UNPAUSE, and FAILOVER's pause of writes: paused commands wait unread
// in their clients' input and run, in arrival order, once the pause ends. The two pauses are
// kept apart, as Redis keeps a pause per purpose: CLIENT UNPAUSE leaves a failover's in force.
#include <algorithm>

#include "server/server.h"

namespace goblin {

void Server::PauseClients(int64_t until_ms, bool all) {
  pause_until_ms_ = std::max(pause_until_ms_, until_ms);
  pause_all_ = pause_all_ || all;
}

void Server::UnpauseClients() {
  pause_until_ms_ = 0;
  pause_all_ = false;
  // Served at the end of the event loop round, not inside a command. What the other pause
  // still holds waits again.
  resume_paused_ = true;
}

void Server::SetFailoverPause(bool on) {
  if (failover_pause_ && !on) resume_paused_ = true;
  failover_pause_ = on;
}

// A WRITE pause holds what would change data or reach replicas: writes, PUBLISH, and EXEC of a
// transaction holding either.
bool Server::PausesCommand(const Client& client, const Command& command) const {
  if (pause_all_) return true;
  // Writes and what may replicate (PUBLISH, PFCOUNT writing its cache), as Redis pauses them.
  auto writes = [](const Command& c) { return (c.flags & (kCmdWrite | kCmdMayReplicate)) != 0; };
  if (writes(command)) return true;
  return command.name == "exec" && QueuedAny(client, writes);
}

void Server::ResumePausedClients() {
  resume_paused_ = false;
  std::vector<uint64_t> ids = std::move(paused_clients_);
  paused_clients_.clear();
  for (uint64_t id : ids) {
    Client* client = FindClient(id);
    if (client == nullptr || !client->paused) continue;
    client->paused = false;
    ResumeClient(*client);
  }
}

}  // namespace goblin
