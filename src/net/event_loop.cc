#include "net/event_loop.h"

#include <unistd.h>

#include <algorithm>

namespace goblin::net {

namespace {

// The outer round takes up to this many events at once; a nested round, which runs between
// the steps of a script, fewer.
constexpr size_t kOuterBatch = 256;
constexpr size_t kNestedBatch = 64;

epoll_event Interest(int fd, bool writable) {
  epoll_event event{};
  event.events = writable ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  event.data.fd = fd;
  return event;
}

}  // namespace

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool EventLoop::Open() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  return epoll_fd_ >= 0;
}

bool EventLoop::Watch(int fd, EventHandler* handler, bool writable) {
  const auto slot = static_cast<size_t>(fd);
  if (slot >= handlers_.size()) handlers_.resize(slot + 1, nullptr);
  epoll_event event = Interest(fd, writable);
  const int operation = handlers_[slot] != nullptr ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
  if (epoll_ctl(epoll_fd_, operation, fd, &event) != 0 &&
      epoll_ctl(epoll_fd_, operation == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
                &event) != 0) {
    return false;
  }
  handlers_[slot] = handler;
  return true;
}

void EventLoop::SetWritable(int fd, bool writable) {
  epoll_event event = Interest(fd, writable);
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event);
}

void EventLoop::Unwatch(int fd) {
  const auto slot = static_cast<size_t>(fd);
  if (fd < 0 || slot >= handlers_.size() || handlers_[slot] == nullptr) return;
  handlers_[slot] = nullptr;
  std::erase(pending_, fd);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

namespace {

// Adds the batches of the depths up to depth, the first time a round nests that deep. Kept out
// of line: CurrentBatch runs twice a round, and only its first calls at a depth get here.
template <typename Batches>
[[gnu::noinline]] void AddBatches(Batches& batches, size_t depth) {
  while (batches.size() <= depth) {
    auto batch = std::make_unique<typename Batches::value_type::element_type>();
    batch->events.resize(batches.empty() ? kOuterBatch : kNestedBatch);
    batches.push_back(std::move(batch));
  }
}

}  // namespace

EventLoop::Batch& EventLoop::CurrentBatch() {
  if (depth_ >= batches_.size()) AddBatches(batches_, depth_);
  return *batches_[depth_];
}

int EventLoop::Wait(int timeout_ms) {
  Batch& batch = CurrentBatch();
  // Bytes already waiting in a connection's own buffer are ready now.
  if (!pending_.empty()) timeout_ms = 0;
  const int n =
      epoll_wait(epoll_fd_, batch.events.data(), static_cast<int>(batch.events.size()), timeout_ms);
  batch.count = n < 0 ? 0 : n;
  return n;
}

void EventLoop::Dispatch() {
  Batch& batch = CurrentBatch();
  const int count = batch.count;
  batch.count = 0;
  ++depth_;
  for (int i = 0; i < count; ++i) {
    const epoll_event& event = batch.events[static_cast<size_t>(i)];
    const auto slot = static_cast<size_t>(event.data.fd);
    EventHandler* handler = slot < handlers_.size() ? handlers_[slot] : nullptr;
    if (handler == nullptr) continue;
    uint32_t readiness = 0;
    if (event.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) readiness |= kReadable;
    if (event.events & EPOLLOUT) readiness |= kWritable;
    handler->OnReady(readiness);
  }
  // Then the connections that said they hold bytes the socket's readiness cannot announce.
  std::vector<int> pending = std::move(pending_);
  pending_.clear();
  for (int fd : pending) {
    const auto slot = static_cast<size_t>(fd);
    if (slot < handlers_.size() && handlers_[slot] != nullptr) handlers_[slot]->OnReady(kReadable);
  }
  --depth_;
}

void EventLoop::MarkPending(int fd) {
  if (std::find(pending_.begin(), pending_.end(), fd) == pending_.end()) pending_.push_back(fd);
}

}  // namespace goblin::net
