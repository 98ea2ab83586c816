// The connection layer: the event loop's dispatch (handlers unwatched mid-round are not called,
// nested rounds keep the outer round's events) and a file sent through a connection, directly
// or read and written when the connection cannot send files (as TLS will).
#include "net/connection.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "net/event_loop.h"

namespace goblin::net {
namespace {

// A connected pair of non-blocking stream sockets: first is watched, second writes to it.
struct SocketPair {
  SocketPair() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    first = std::make_unique<PlainConnection>(fds[0]);
    second = std::make_unique<PlainConnection>(fds[1]);
  }
  std::unique_ptr<PlainConnection> first;
  std::unique_ptr<PlainConnection> second;
};

class CallbackHandler final : public EventHandler {
 public:
  explicit CallbackHandler(std::function<void(uint32_t)> callback)
      : callback_(std::move(callback)) {}
  void OnReady(uint32_t readiness) override { callback_(readiness); }

 private:
  std::function<void(uint32_t)> callback_;
};

TEST(EventLoopTest, ReadableAndWritableReachTheHandler) {
  EventLoop loop;
  ASSERT_TRUE(loop.Open());
  SocketPair pair;
  std::vector<uint32_t> seen;
  CallbackHandler handler([&](uint32_t readiness) { seen.push_back(readiness); });
  ASSERT_TRUE(pair.first->Watch(loop, &handler, /*writable=*/false));
  EXPECT_EQ(loop.Wait(0), 0);
  ASSERT_EQ(pair.second->Write("x", 1), 1);
  EXPECT_EQ(loop.Wait(0), 1);
  loop.Dispatch();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], kReadable);
  char byte;
  EXPECT_EQ(pair.first->Read(&byte, 1), 1);
  pair.first->SetWritable(true);
  EXPECT_EQ(loop.Wait(0), 1);
  loop.Dispatch();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], kWritable);
  // A closed connection unwatches itself: nothing more arrives.
  pair.first->Close();
  EXPECT_EQ(loop.Wait(0), 0);
}

TEST(EventLoopTest, AHandlerUnwatchedEarlierInTheRoundIsNotCalled) {
  EventLoop loop;
  ASSERT_TRUE(loop.Open());
  SocketPair a, b;
  int calls = 0;
  // Whichever is dispatched first closes the other, as a round closing a client does.
  CallbackHandler first([&](uint32_t) {
    ++calls;
    b.first->Close();
  });
  CallbackHandler second([&](uint32_t) {
    ++calls;
    a.first->Close();
  });
  ASSERT_TRUE(a.first->Watch(loop, &first, false));
  ASSERT_TRUE(b.first->Watch(loop, &second, false));
  ASSERT_EQ(a.second->Write("x", 1), 1);
  ASSERT_EQ(b.second->Write("x", 1), 1);
  EXPECT_EQ(loop.Wait(0), 2);
  loop.Dispatch();
  EXPECT_EQ(calls, 1);
}

TEST(EventLoopTest, ANestedRoundKeepsTheOuterRoundsEvents) {
  EventLoop loop;
  ASSERT_TRUE(loop.Open());
  SocketPair a, b, c;
  std::vector<char> order;
  char byte;
  CallbackHandler on_a([&](uint32_t) {
    order.push_back('a');
    a.first->Read(&byte, 1);
    // A round inside a handler, as a long script serves the other clients.
    ASSERT_EQ(c.second->Write("x", 1), 1);
    loop.Wait(0);
    loop.Dispatch();
  });
  CallbackHandler on_b([&](uint32_t) {
    order.push_back('b');
    b.first->Read(&byte, 1);
  });
  CallbackHandler on_c([&](uint32_t) {
    order.push_back('c');
    c.first->Read(&byte, 1);
  });
  ASSERT_TRUE(a.first->Watch(loop, &on_a, false));
  ASSERT_TRUE(b.first->Watch(loop, &on_b, false));
  ASSERT_TRUE(c.first->Watch(loop, &on_c, false));
  ASSERT_EQ(a.second->Write("x", 1), 1);
  ASSERT_EQ(b.second->Write("x", 1), 1);
  EXPECT_EQ(loop.Wait(0), 2);
  loop.Dispatch();
  // Each ran; b, ready before the nested round, is served whichever came first (when a came
  // first the nested round serves b too, and the outer round's event for b finds nothing).
  EXPECT_EQ(std::count(order.begin(), order.end(), 'a'), 1);
  EXPECT_EQ(std::count(order.begin(), order.end(), 'c'), 1);
  EXPECT_GE(std::count(order.begin(), order.end(), 'b'), 1);
}

// Forwards to a plain connection but says it cannot send files, as a TLS connection will.
class NoSendFileConnection final : public Connection {
 public:
  explicit NoSendFileConnection(Connection& inner) : inner_(inner) {}
  ssize_t Read(char* buffer, size_t size) override { return inner_.Read(buffer, size); }
  ssize_t Write(const char* data, size_t size) override { return inner_.Write(data, size); }
  ssize_t Writev(const iovec* vectors, int count) override { return inner_.Writev(vectors, count); }
  bool CanSendFile() const override { return false; }
  ssize_t SendFile(int, off_t*, size_t) override {
    ADD_FAILURE() << "SendFile on a connection that cannot send files";
    return -1;
  }
  bool Watch(EventLoop& loop, EventHandler* handler, bool writable) override {
    return inner_.Watch(loop, handler, writable);
  }
  void SetWritable(bool writable) override { inner_.SetWritable(writable); }
  void Unwatch() override { inner_.Unwatch(); }
  int WaitReady(bool writable, int64_t timeout_ms) override {
    return inner_.WaitReady(writable, timeout_ms);
  }
  int ConnectError() override { return inner_.ConnectError(); }
  void Close() override { inner_.Close(); }
  int fd() const override { return inner_.fd(); }
  std::string LocalAddress() const override { return inner_.LocalAddress(); }

 private:
  Connection& inner_;
};

std::string SendWholeFile(Connection& sender, Connection& receiver, const std::string& bytes) {
  FILE* file = tmpfile();
  EXPECT_EQ(fwrite(bytes.data(), 1, bytes.size(), file), bytes.size());
  fflush(file);
  std::vector<char> buffer;
  std::string received;
  off_t offset = 0;
  while (static_cast<size_t>(offset) < bytes.size() || received.size() < bytes.size()) {
    if (static_cast<size_t>(offset) < bytes.size()) {
      const ssize_t sent = SendFileChunk(sender, fileno(file), &offset,
                                         bytes.size() - static_cast<size_t>(offset), &buffer);
      EXPECT_TRUE(sent > 0 || (sent < 0 && errno == EAGAIN));
    }
    char chunk[4096];
    const ssize_t got = receiver.Read(chunk, sizeof(chunk));
    if (got > 0) received.append(chunk, static_cast<size_t>(got));
  }
  fclose(file);
  return received;
}

TEST(SendFileChunkTest, SendsTheFileDirectlyOrThroughTheConnection) {
  std::string bytes;
  for (int i = 0; i < 300000; ++i) bytes.push_back(static_cast<char>('a' + i % 26));
  SocketPair direct;
  EXPECT_EQ(SendWholeFile(*direct.first, *direct.second, bytes), bytes);
  SocketPair relayed;
  NoSendFileConnection through(*relayed.first);
  EXPECT_EQ(SendWholeFile(through, *relayed.second, bytes), bytes);
}

}  // namespace
}  // namespace goblin::net
