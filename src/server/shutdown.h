// SHUTDOWN and SIGTERM / SIGINT, as Redis 7 shuts down: a master whose replicas have not all
// acknowledged master_repl_offset first lets them catch up, so that a planned restart loses
// no write a replica could have had.
//
//   1. Begin: unless NOW, shutdown-timeout is 0 or every replica acknowledged the offset, the
//      server pauses writes (CLIENT PAUSE WRITE's rules, with a pause of its own), asks the
//      replicas for their offsets (REPLCONF GETACK *) and waits, serving reads. The SHUTDOWN
//      client waits unanswered; a second SHUTDOWN waits with it.
//   2. Update, at the end of each event-loop round: once every replica acknowledged the
//      offset, or shutdown-timeout seconds passed, Finish logs the replicas still lagging, runs
//      the final save (SAVE / NOSAVE / the save rules) and the server exits; the waiting
//      clients' connections close unanswered, as Redis's do.
//   3. A failed save without FORCE, or SHUTDOWN ABORT while waiting, cancels: the pause ends
//      and every waiting client gets "ERR Errors trying to SHUTDOWN. Check logs.".
// A signal starts the same sequence with shutdown-on-sigterm's (or -sigint's) flags, where
// Redis's cron starts it: not while DEBUG PAUSE-CRON holds the cron.
#pragma once

#include <cstdint>
#include <vector>

namespace goblin {

class Server;
struct Client;

class Shutdown {
 public:
  explicit Shutdown(Server& server) : server_(server) {}
  Shutdown(const Shutdown&) = delete;
  Shutdown& operator=(const Shutdown&) = delete;

  enum class Outcome {
    kExit,     // the final save is done (or not wanted): the server exits now
    kWaiting,  // for the replicas; the waiter, blocked, is answered only if it is cancelled
    kFailed,   // the final save failed (logged) and FORCE was not given: the server goes on
  };
  // Starts a shutdown with ShutdownFlags (config.h), or joins the one waiting; waiter is the
  // SHUTDOWN client, nullptr for a signal.
  Outcome Begin(uint32_t flags, Client* waiter);
  // SHUTDOWN ABORT: cancels the shutdown that waits, or a signal's not yet begun (DEBUG
  // PAUSE-CRON holds it); false when there is neither.
  bool Abort();
  // The end of each event-loop round: exits once the replicas caught up or time ran out.
  void Update(int64_t now_ms);
  bool waiting() const { return deadline_ms_ != 0; }

 private:
  // The final save; true when the server may exit. A failure without FORCE cancels.
  bool Finish();
  void Wait(Client* waiter);
  void Cancel();

  Server& server_;
  int64_t deadline_ms_ = 0;  // while waiting: when the wait ends
  uint32_t flags_ = 0;
  std::vector<uint64_t> waiters_;  // the SHUTDOWN clients, by id
};

}  // namespace goblin
