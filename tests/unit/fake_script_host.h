// A ScriptHost for tests of the scripting layer alone: redis.call answers from a std::map, and
// Eval runs one EVAL script through a LuaVm and returns the reply bytes.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "resp/reply_builder.h"
#include "scripting/lua_vm.h"

namespace goblin {

// GET and SET on a map, ECHO of a ready-made RESP reply, everything else an unknown command.
class MapHost : public ScriptHost {
 public:
  void Call(std::span<const std::string_view> argv, int resp, std::string* reply) override {
    last_resp = resp;
    std::string name(argv[0]);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    if (name == "set" && argv.size() == 3) {
      data[std::string(argv[1])] = std::string(argv[2]);
      *reply = "+OK\r\n";
    } else if (name == "get" && argv.size() == 2) {
      auto it = data.find(std::string(argv[1]));
      *reply = it == data.end()
                   ? (resp == 3 ? "_\r\n" : "$-1\r\n")
                   : "$" + std::to_string(it->second.size()) + "\r\n" + it->second + "\r\n";
    } else if (name == "raw" && argv.size() == 2) {
      *reply = std::string(argv[1]);
    } else {
      *reply = "-ERR unknown command\r\n";
    }
  }
  void Log(int, std::string_view message) override { logged.emplace_back(message); }
  bool Interrupted(std::string* error) override {
    if (++polls < kill_after_polls) return false;
    *error = "Script killed by user with SCRIPT KILL...";
    return true;
  }
  // The fake's user may run GET but not SET.
  std::optional<bool> AclCheck(std::span<const std::string_view> argv) override {
    if (argv[0] == "get") return true;
    if (argv[0] == "set") return false;
    return std::nullopt;
  }
  void SetReplication(int flags) override { replication = flags; }

  std::map<std::string, std::string> data;
  std::vector<std::string> logged;
  int last_resp = 0;
  int replication = 3;
  int polls = 0;
  int kill_after_polls = 1 << 30;
};

// Runs body as an EVAL script; returns the reply bytes (protocol for the caller).
inline std::string Eval(LuaVm& vm, MapHost& host, std::string_view body, int protocol = 2,
                        std::vector<std::string_view> keys = {},
                        std::vector<std::string_view> args = {}) {
  int handle = 0;
  std::string error;
  if (!vm.Compile(body, &error, &handle)) return "compile error: " + error;
  OutputBuffer out;
  ReplyBuilder reply(&out);
  reply.set_protocol(protocol);
  LuaVm::Invocation invocation;
  invocation.handle = handle;
  invocation.keys = keys;
  invocation.args = args;
  invocation.name = "testscript";
  invocation.host = &host;
  invocation.reply = &reply;
  vm.Run(invocation);
  vm.Release(handle);
  return out.ToString();
}

}  // namespace goblin
