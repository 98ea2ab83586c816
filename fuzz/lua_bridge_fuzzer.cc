// The Lua side of scripting (scripting/lua_vm.h): what crosses between a script and the
// server, and the libraries scripts use to take apart bytes from clients.
//
// Input: [mode][arguments]. Each mode runs one fixed script in an EVAL interpreter, with the
// fuzzed bytes as ARGV:
//   0, 1  redis.call returns the bytes as the command's reply, RESP2 or RESP3: PushRespAsLua
//         turns them into Lua values, and returning them runs ReplyFromLua
//   2     cjson.decode, then cjson.encode and the reply of the decoded value
//   3     cmsgpack.unpack, then cmsgpack.pack of what it gave
//   4     cmsgpack.unpack_one and unpack_limit from a fuzzed offset
//   5     struct.unpack with a fuzzed format ([format] NUL [data]), struct.pack back, struct.size
//   6     the bit library on numbers parsed from the arguments
//   7     cjson.decode into cmsgpack.pack and cmsgpack.unpack back into cjson.encode
// The scripts only use the public scripting API; a script that raises an error is fine (the
// caller gets an error reply), a crash, hang or sanitizer report is not.
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

extern "C" {
#include <lua.h>
}

#include "fuzz_support.h"
#include "resp/reply_builder.h"
#include "scripting/lua_vm.h"

namespace {

using goblin::LuaVm;

constexpr std::array<std::string_view, 8> kScripts = {
    "return redis.call('raw', ARGV[1])",
    "redis.setresp(3) return redis.call('raw', ARGV[1])",
    "local v = cjson.decode(ARGV[1]) return {cjson.encode(v), v}",
    "local t = {cmsgpack.unpack(ARGV[1])} return {cmsgpack.pack(unpack(t)), t}",
    "local offset = tonumber(ARGV[2]) or 0\n"
    "return {{cmsgpack.unpack_one(ARGV[1], offset)}, {cmsgpack.unpack_limit(ARGV[1], 2, offset)}}",
    "local t = {struct.unpack(ARGV[1], ARGV[2])}\n"
    "local packed = struct.pack(ARGV[1], unpack(t, 1, #t - 1))\n"
    "return {packed, t, struct.size(ARGV[1])}",
    // corpus/lua_bridge/crash-bit-tohex-int-min holds the digit count of -2^31 that crashed
    // Debian's lua-bitop (CVE-2024-31449) before `bit` became Goblin's own.
    "local a, b = tonumber(ARGV[1]) or 0, tonumber(ARGV[2]) or 0\n"
    "return {bit.tobit(a), bit.bnot(a), bit.band(a, b), bit.bor(a, b), bit.bxor(a, b),\n"
    "  bit.lshift(a, b), bit.rshift(a, b), bit.arshift(a, b), bit.rol(a, b), bit.ror(a, b),\n"
    "  bit.bswap(a), bit.tohex(a), bit.tohex(a, b)}",
    "local packed = cmsgpack.pack(cjson.decode(ARGV[1]))\n"
    "return {packed, cjson.encode(cmsgpack.unpack(packed))}",
};

// redis.call('raw', reply) answers with reply's bytes; every other command is unknown.
class RawReplyHost : public goblin::ScriptHost {
 public:
  void Call(std::span<const std::string_view> argv, int, std::string* reply) override {
    if (argv.size() == 2 && argv[0] == "raw") {
      *reply = std::string(argv[1]);
    } else {
      *reply = "-ERR unknown command\r\n";
    }
  }
  void Log(int, std::string_view) override {}
  bool Interrupted(std::string*) override { return false; }
  // "raw" is the one command, and the script may run it.
  std::optional<bool> AclCheck(std::span<const std::string_view> argv) override {
    if (argv[0] == "raw") return true;
    return std::nullopt;
  }
  void SetReplication(int) override {}
};

// One interpreter for the whole run, as a server keeps one: state a script leaves behind
// (there should be none) carries over to the next input.
struct Interpreter {
  LuaVm vm{LuaVm::Purpose::kEval};
  RawReplyHost host;
  std::array<int, kScripts.size()> handles{};

  Interpreter() {
    for (size_t i = 0; i < kScripts.size(); ++i) {
      std::string error;
      FUZZ_CHECK(vm.Compile(kScripts[i], &error, &handles[i]));
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Interpreter* interpreter = new Interpreter;
  goblin::fuzz::InputReader input(data, size);
  const size_t mode = input.Byte() % kScripts.size();
  std::vector<std::string_view> args;
  switch (mode) {
    case 4:
    case 5:
      args.push_back(input.Until('\0'));
      args.push_back(input.Rest());
      // struct's format comes first, the bytes second; unpack_one takes them the other way.
      if (mode == 4) std::swap(args[0], args[1]);
      break;
    case 6:
      args.push_back(input.Until(' '));
      args.push_back(input.Rest());
      break;
    default:
      args.push_back(input.Rest());
  }
  goblin::OutputBuffer out;
  goblin::ReplyBuilder reply(&out);
  reply.set_protocol(mode == 1 ? 3 : 2);
  LuaVm::Invocation invocation;
  invocation.handle = interpreter->handles[mode];
  invocation.args = args;
  invocation.name = "fuzz";
  invocation.host = &interpreter->host;
  invocation.reply = &reply;
  // A script may build big values from a few bytes (cmsgpack's array headers); the limit
  // turns that into Lua's "not enough memory" rather than the fuzzer's out-of-memory.
  invocation.memory_limit = 64 << 20;
  const int top = lua_gettop(interpreter->vm.state());
  interpreter->vm.Run(invocation);
  FUZZ_CHECK(!out.empty());
  // Nothing a call pushed stays behind for the next one.
  FUZZ_CHECK(lua_gettop(interpreter->vm.state()) == top);
  return 0;
}
