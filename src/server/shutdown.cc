#include "server/shutdown.h"

#include <string>

#include "server/errors.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/replication.h"
#include "server/server.h"

namespace goblin {

Shutdown::Outcome Shutdown::Begin(uint32_t flags, Client* waiter) {
  if (waiting()) {  // the one in progress decides for both
    Wait(waiter);
    return Outcome::kWaiting;
  }
  flags_ = flags;
  LogNotice("User requested shutdown...");
  const int64_t timeout_ms = server_.config.shutdown_timeout * 1000;
  if ((flags & kShutdownNow) == 0 && timeout_ms > 0 && !server_.replication->AllAcknowledged()) {
    deadline_ms_ = server_.NowMs() + timeout_ms;
    server_.replication->RequestAcks();
    server_.SetWritePause(WritePause::kShutdown, true);
    LogNotice("Waiting for replicas before shutting down.");
    Wait(waiter);
    return Outcome::kWaiting;
  }
  return Finish() ? Outcome::kExit : Outcome::kFailed;
}

void Shutdown::Wait(Client* waiter) {
  if (waiter == nullptr) return;
  server_.BlockForShutdown(*waiter);
  waiters_.push_back(waiter->id);
}

bool Shutdown::Abort() {
  if (waiting()) {
    Cancel();
  } else if (!server_.CancelShutdownSignal()) {
    return false;
  }
  LogNotice("Shutdown manually aborted.");
  return true;
}

void Shutdown::Update(int64_t now_ms) {
  if (!waiting()) return;
  if (now_ms < deadline_ms_ && !server_.replication->AllAcknowledged()) return;
  if (Finish()) server_.RequestShutdown();
}

bool Shutdown::Finish() {
  server_.replication->LogLaggingReplicas();
  std::string error;
  const bool save = (flags_ & kShutdownSave) != 0;
  const bool nosave = (flags_ & kShutdownNoSave) != 0;
  if (!server_.persistence->PrepareShutdown(save, nosave, &error) &&
      (flags_ & kShutdownForce) == 0) {
    LogWarning("Error trying to save the DB, can't exit.");
    LogWarning("Errors trying to shut down the server. Check the logs for more information.");
    Cancel();
    return false;
  }
  // The waiting clients get no reply: their connections close as the server exits.
  for (uint64_t id : waiters_) {
    if (Client* client = server_.FindClient(id)) server_.CloseClientLater(*client);
  }
  waiters_.clear();
  return true;
}

void Shutdown::Cancel() {
  deadline_ms_ = 0;
  flags_ = 0;
  server_.SetWritePause(WritePause::kShutdown, false);
  const std::vector<uint64_t> waiting = std::move(waiters_);
  waiters_.clear();
  for (uint64_t id : waiting) {
    Client* client = server_.FindClient(id);
    if (client == nullptr || !client->blocked || !client->block.waits_for_shutdown) continue;
    server_.ReleaseShutdownWait(*client, errors::kShutdownFailed);
  }
}

}  // namespace goblin
