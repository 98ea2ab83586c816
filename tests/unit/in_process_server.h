// A goblin Server inside the test process: built without sockets (its constructor opens none,
// only Run() does), every command family registered, clients that exist only here. A test
// sends RESP bytes as a client would and reads back the bytes of the replies, in microseconds
// instead of a process start; it may also reach into the server (its config, its effects
// stream) between two commands.
//
// What needs the event loop does not happen here: blocked clients are never woken by a timer,
// published messages queued for another client stay in its output, replication links never
// connect.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/families.h"
#include "resp/request_parser.h"
#include "server/effects.h"
#include "server/log.h"
#include "server/server.h"

namespace goblin {

class InProcessServer {
 public:
  explicit InProcessServer(Config config = Defaults()) : server_(std::move(config)) {
    RegisterAllCommands(&server_.commands);
  }

  // Redis's defaults, but no save points (FLUSHALL would write dump.rdb into the working
  // directory) and only warnings in the log.
  static Config Defaults() {
    Config config;
    config.save.clear();
    config.loglevel = "warning";
    SetLogLevel(config.loglevel);
    return config;
  }
  InProcessServer(const InProcessServer&) = delete;
  InProcessServer& operator=(const InProcessServer&) = delete;

  Server& server() { return server_; }

  // A client as a connection is (ClientKind::kConnection), with no socket behind it.
  Client& Connect() {
    clients_.push_back(std::make_unique<Client>(next_id_++, -1));
    server_.StartAsDefaultUser(*clients_.back());
    return *clients_.back();
  }

  // Feeds bytes to client as if read from its socket; returns the replies the requests they
  // complete produced. A request left incomplete waits for the next Send.
  std::string Send(Client& client, std::string_view bytes) {
    pending_[&client].append(bytes);
    std::string& input = pending_[&client];
    ProtocolLimits limits;
    std::vector<std::string_view> argv;
    while (!input.empty() && !client.paused) {
      size_t consumed = 0;
      limits.authenticated = client.authenticated;
      const RequestParser::Status status = client.parser.Parse(input, limits, &argv, &consumed);
      if (status == RequestParser::Status::kIncomplete) break;
      if (status == RequestParser::Status::kError) {
        client.reply.Error(client.parser.error());
        input.clear();
        break;
      }
      if (!argv.empty()) server_.Execute(client, argv);
      if (client.paused) break;  // the request waits, unconsumed, as in the server's loop
      input.erase(0, consumed);
    }
    std::string replies = client.output.ToString();
    client.output.clear();
    return replies;
  }

  // One command, sent as a RESP array: returns its reply.
  std::string Call(Client& client, std::initializer_list<std::string_view> argv) {
    return Send(client, Encode(argv));
  }

  static std::string Encode(std::initializer_list<std::string_view> argv) {
    return Encode(std::span<const std::string_view>(argv.begin(), argv.size()));
  }
  // argv as a RESP array of bulk strings; Words is any range of strings or views.
  template <typename Words>
  static std::string Encode(const Words& argv) {
    std::string request = "*" + std::to_string(std::size(argv)) + "\r\n";
    for (std::string_view arg : argv) {
      request += "$" + std::to_string(arg.size()) + "\r\n";
      request.append(arg);
      request += "\r\n";
    }
    return request;
  }

 private:
  // Declared before the server so that they outlive it: it keeps pointers to them (monitors,
  // subscribers) until its destructor has run.
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<const Client*, std::string> pending_;
  Server server_;
  uint64_t next_id_ = 1;
};

// An effects consumer that keeps every unit it is given, each effect as one line of its words
// separated by spaces.
class RecordedEffects : public EffectConsumer {
 public:
  explicit RecordedEffects(EffectStream* stream) : stream_(stream) { stream_->AddConsumer(this); }
  ~RecordedEffects() override { stream_->RemoveConsumer(this); }
  RecordedEffects(const RecordedEffects&) = delete;
  RecordedEffects& operator=(const RecordedEffects&) = delete;

  void ConsumeEffects(std::span<const Effect> effects) override {
    for (const Effect& effect : effects) {
      std::string line;
      for (const std::string& word : effect.argv) line += (line.empty() ? "" : " ") + word;
      lines_.push_back(line);
    }
  }
  // The effects so far, and forgets them.
  std::vector<std::string> Take() { return std::exchange(lines_, {}); }

 private:
  EffectStream* stream_;
  std::vector<std::string> lines_;
};

}  // namespace goblin
