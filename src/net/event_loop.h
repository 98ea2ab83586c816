// The event loop: one epoll instance and, for every descriptor it watches, the handler its
// readiness goes to. The serving thread alone uses it (docs/DESIGN.md, "Threads").
//
// A round is Wait (the kernel's ready list into a batch) then Dispatch (each ready descriptor's
// handler, in the kernel's order). The server does its per-round work between the two.
//
// Invariants:
//  1. The handler of a descriptor is looked up when its event is dispatched, in a table indexed
//     by descriptor. Unwatch clears the slot at once, so an event the kernel returned for a
//     descriptor that was unwatched (and its handler freed) earlier in the same round reaches
//     nobody.
//  2. A descriptor closed and reused within one round may receive the old one's event: every
//     handler tolerates a readiness that turns out to be spurious (its non-blocking I/O finds
//     nothing to do).
//  3. Rounds nest: a handler may run Wait and Dispatch again (a script that runs long serves
//     the other clients; a snapshot load answers -LOADING). Each depth has its own batch, so
//     the outer round's remaining events are intact when the inner round returns.
//  4. Unwatch comes before the descriptor's close: a forked child holding a copy of the
//     descriptor would otherwise keep it registered, and its events would go on arriving.
#pragma once

#include <sys/epoll.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace goblin::net {

// What a readiness event says. An error or a hang-up counts as readable: the read that follows
// reports it.
enum Readiness : uint32_t { kReadable = 1, kWritable = 2 };

// Receives the readiness of a descriptor (or of a Connection, connection.h).
class EventHandler {
 public:
  // readiness holds Readiness bits.
  virtual void OnReady(uint32_t readiness) = 0;

 protected:
  ~EventHandler() = default;
};

class EventLoop {
 public:
  EventLoop() = default;
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Creates the epoll instance; false (errno set) when the kernel refused.
  bool Open();
  // Starts watching fd for readability, and for writability too when writable; its events go
  // to handler. Watching a descriptor again replaces its handler and interest.
  bool Watch(int fd, EventHandler* handler, bool writable);
  // Changes whether a watched fd is also watched for writability.
  void SetWritable(int fd, bool writable);
  // Stops watching fd (invariant 1). Harmless for a descriptor not watched.
  void Unwatch(int fd);

  // Waits up to timeout_ms (-1: no limit) for ready descriptors and keeps them for Dispatch.
  // Returns how many, or -1 with errno set (EINTR when a signal arrived).
  int Wait(int timeout_ms);
  // Calls the handler of each descriptor the last Wait at this depth found ready, then of
  // those marked pending.
  void Dispatch();
  // fd has bytes ready that its socket will not announce (a TLS connection's decrypted
  // buffer): its handler gets kReadable at the end of the next Dispatch, and the next Wait
  // does not sleep.
  void MarkPending(int fd);

 private:
  struct Batch {
    std::vector<epoll_event> events;
    int count = 0;
  };

  Batch& CurrentBatch();

  int epoll_fd_ = -1;
  std::vector<EventHandler*> handlers_;  // by descriptor; null when not watched
  // One batch per depth of nested rounds (invariant 3).
  std::vector<std::unique_ptr<Batch>> batches_;
  std::vector<int> pending_;  // MarkPending's descriptors, until the next Dispatch
  size_t depth_ = 0;
};

}  // namespace goblin::net
