// CLIENT PAUSE and CLIENT UNPAUSE, and the pauses of writes of FAILOVER and of a shutdown
// waiting for its replicas: paused commands wait unread in their clients' input and run, in
// arrival order, once every pause ends. The pauses are kept apart, as Redis keeps a pause per
// purpose: CLIENT UNPAUSE leaves a failover's in force.
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

void Server::SetWritePause(WritePause reason, bool on) {
  const auto bit = static_cast<uint8_t>(reason);
  const uint8_t before = write_pauses_;
  write_pauses_ = on ? (write_pauses_ | bit) : (write_pauses_ & ~bit);
  if (before != 0 && write_pauses_ == 0) resume_paused_ = true;
}

// A WRITE pause holds what would change data or reach replicas: writes and what may replicate
// (PUBLISH, PFCOUNT writing its cache), and EXEC of a transaction holding either, as Redis
// pauses them.
bool Server::PausesCommand(uint32_t any_flags) const {
  return pause_all_ || (any_flags & (kCmdWrite | kCmdMayReplicate)) != 0;
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
