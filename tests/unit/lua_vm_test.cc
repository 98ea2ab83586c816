// The scripting layer alone, with a host that answers redis.call from a std::map: the sandbox,
// the error shapes, the conversions between RESP and Lua (a seeded model test sends random
// RESP3 replies through Lua and back), shebang parsing, the script cache and the function
// libraries with their DUMP payload, CRC-64 and the RDB string encodings.
#include "scripting/lua_vm.h"

#include <gtest/gtest.h>
#include <liblzf/lzf.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/crc64.h"
#include "fake_script_host.h"
#include "persist/rdb_string.h"
#include "resp/reply_builder.h"
#include "scripting/eval_scripts.h"
#include "scripting/function_libraries.h"
#include "scripting/script_flags.h"

namespace goblin {
namespace {

class LuaVmTest : public ::testing::Test {
 protected:
  LuaVm vm{LuaVm::Purpose::kEval};
  MapHost host;
  std::string Run(std::string_view body, int protocol = 2) {
    return Eval(vm, host, body, protocol);
  }
};

TEST_F(LuaVmTest, KeysArgvAndCalls) {
  EXPECT_EQ(Eval(vm, host, "return {KEYS[1], ARGV[2], #KEYS, #ARGV}", 2, {"k"}, {"a", "b"}),
            "*4\r\n$1\r\nk\r\n$1\r\nb\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Run("redis.call('set', 'x', 42) return redis.call('get', 'x')"), "$2\r\n42\r\n");
  EXPECT_EQ(host.data["x"], "42");
  EXPECT_EQ(Run("redis.call('set', 'y', 0.1) return redis.call('get', 'y')"),
            "$19\r\n0.10000000000000001\r\n");
  EXPECT_EQ(Run("return redis.call('get', 'missing')"), "$-1\r\n");
  EXPECT_EQ(Run("return type(redis.call('get', 'missing'))"), "$7\r\nboolean\r\n");
  EXPECT_EQ(Run("redis.setresp(3) return type(redis.call('get', 'missing'))"), "$3\r\nnil\r\n");
  EXPECT_EQ(host.last_resp, 3);
}

TEST_F(LuaVmTest, ErrorsHaveRedisShapes) {
  EXPECT_EQ(Run("return redis.call('nosuch')"),
            "-ERR unknown command script: testscript, on @user_script:1.\r\n");
  EXPECT_EQ(Run("return redis.pcall('nosuch')"), "-ERR unknown command\r\n");
  EXPECT_EQ(Run("error('boom')"),
            "-ERR user_script:1: boom script: testscript, on @user_script:1.\r\n");
  EXPECT_EQ(Run("\n\nerror({err = 'CODE x'})"),
            "-CODE x script: testscript, on @user_script:3.\r\n");
  EXPECT_EQ(Run("error({})"), "-ERR unknown error script: testscript, on @user_script:1.\r\n");
  EXPECT_EQ(Run("return {err = 'My Error'}"), "-My Error\r\n");
  EXPECT_EQ(Run("return redis.error_reply('My Error')"), "-My Error\r\n");
  EXPECT_EQ(Run("return redis.error_reply('x')"), "-ERR x\r\n");
  EXPECT_EQ(
      Run("return redis.call()"),
      "-ERR Please specify at least one argument for this redis lib call script: testscript, on "
      "@user_script:1.\r\n");
  EXPECT_EQ(
      Run("return redis.call({})"),
      "-ERR Lua redis lib command arguments must be strings or integers script: testscript, on "
      "@user_script:1.\r\n");
  EXPECT_EQ(Run("local ok, e = pcall(redis.call, 'nosuch') return e"),
            "$19\r\nERR unknown command\r\n");
}

TEST_F(LuaVmTest, GlobalsAreReadOnlyAndUnknownNamesAreErrors) {
  EXPECT_EQ(Run("x = 1"),
            "-ERR user_script:1: Attempt to modify a readonly table script: testscript, on "
            "@user_script:1.\r\n");
  EXPECT_EQ(Run("string.upper = nil"),
            "-ERR user_script:1: Attempt to modify a readonly table script: testscript, on "
            "@user_script:1.\r\n");
  EXPECT_EQ(Run("return io"),
            "-ERR user_script:1: Script attempted to access nonexistent global variable 'io' "
            "script: testscript, on @user_script:1.\r\n");
  // Of Lua's os library only clock is there (Redis 7.4), and it is as read-only as string.
  EXPECT_EQ(Run("return {type(os.clock()), type(os.getenv), type(os.exit)}"),
            "*3\r\n$6\r\nnumber\r\n$3\r\nnil\r\n$3\r\nnil\r\n");
  EXPECT_EQ(Run("os.clock = nil"),
            "-ERR user_script:1: Attempt to modify a readonly table script: testscript, on "
            "@user_script:1.\r\n");
  for (const char* removed : {"print", "dofile", "loadfile", "require", "io", "debug", "setfenv"}) {
    EXPECT_NE(Run(std::string("return ") + removed).find("nonexistent global"), std::string::npos)
        << removed;
  }
  EXPECT_EQ(Run("local n = 0 for k in pairs(string) do n = n + 1 end return n > 10"), ":1\r\n");
  EXPECT_EQ(Run("return rawget(string, 'rep') ~= nil"), ":1\r\n");
  // getmetatable answers as Redis's read-only flag would: a read-only table for the globals,
  // nil for a library table.
  EXPECT_EQ(Run("return {type(getmetatable(_G)), tostring(getmetatable(redis))}"),
            "*2\r\n$5\r\ntable\r\n$3\r\nnil\r\n");
  EXPECT_NE(Run("getmetatable(_G).__index = {}").find("Attempt to modify a readonly table"),
            std::string::npos);
  // A script's writes to its own locals and tables are its own; the next script starts clean.
  EXPECT_EQ(Run("local t = {} t.x = 1 return t.x"), ":1\r\n");
}

TEST_F(LuaVmTest, MathRandomIsOneSequenceAndRandomseedRestartsIt) {
  const std::string first = Run("math.randomseed(3) return {math.random(1000), math.random(1000)}");
  EXPECT_EQ(Run("math.randomseed(3) return {math.random(1000), math.random(1000)}"), first);
  const std::string next = Run("return math.random(1000)");
  EXPECT_NE(Run("math.randomseed(3) return math.random(1000)"), next);
  EXPECT_NE(Run("return math.random(0)").find("interval is empty"), std::string::npos);
}

TEST_F(LuaVmTest, LuaValuesBecomeReplies) {
  EXPECT_EQ(Run("return 3.99"), ":3\r\n");
  EXPECT_EQ(Run("return -3.99"), ":-3\r\n");
  EXPECT_EQ(Run("return 1e20"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Run("return 0/0"), ":-9223372036854775808\r\n");
  EXPECT_EQ(Run("return {1, 2, nil, 4}"), "*2\r\n:1\r\n:2\r\n");
  EXPECT_EQ(Run("return true"), ":1\r\n");
  EXPECT_EQ(Run("return false"), "$-1\r\n");
  EXPECT_EQ(Run("return false", 3), "_\r\n");
  EXPECT_EQ(Run("redis.setresp(3) return false", 3), "#f\r\n");
  EXPECT_EQ(Run("redis.setresp(3) return false", 2), ":0\r\n");
  EXPECT_EQ(Run("return {ok = 'a\\r\\nb'}"), "+a  b\r\n");
  EXPECT_EQ(Run("return {double = 1.5}", 3), ",1.5\r\n");
  EXPECT_EQ(Run("return {double = 1.5}", 2), "$3\r\n1.5\r\n");
  EXPECT_EQ(Run("return {big_number = '123'}", 3), "(123\r\n");
  EXPECT_EQ(Run("return {map = {a = 1}}", 3), "%1\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Run("return {map = {a = 1}}", 2), "*2\r\n$1\r\na\r\n:1\r\n");
  EXPECT_EQ(Run("return {set = {a = true}}", 3), "~1\r\n$1\r\na\r\n");
  EXPECT_EQ(Run("return {verbatim_string = {format = 'txt', string = 'hi'}}", 3),
            "=6\r\ntxt:hi\r\n");
  const std::string nested = Run("local t = {} t[1] = t return t");
  EXPECT_TRUE(nested.ends_with("-ERR reached lua stack limit\r\n"));
}

TEST_F(LuaVmTest, HelpersAndLogging) {
  EXPECT_EQ(Run("return redis.sha1hex('')"), "$40\r\nda39a3ee5e6b4b0d3255bfef95601890afd80709\r\n");
  EXPECT_EQ(Run("redis.log(redis.LOG_WARNING, 'a', 1, nil, 'b') return 1"), ":1\r\n");
  ASSERT_EQ(host.logged.size(), 1u);
  EXPECT_EQ(host.logged[0], "a 1 b");
  EXPECT_EQ(Run("redis.set_repl(redis.REPL_NONE) return 1"), ":1\r\n");
  EXPECT_EQ(host.replication, 0);
  EXPECT_EQ(Run("return redis.acl_check_cmd('get', 'x')"), ":1\r\n");
  EXPECT_NE(Run("return redis.acl_check_cmd('nosuch')").find("Invalid command passed"),
            std::string::npos);
}

TEST_F(LuaVmTest, AnInterruptedScriptStopsAndPcallCannotSwallowIt) {
  host.kill_after_polls = 2;
  const std::string reply =
      Run("local n = 0 while true do pcall(function() for i = 1, 1000 do n = n + i end end) end");
  EXPECT_TRUE(
      reply.starts_with("-ERR Script killed by user with SCRIPT KILL... script: testscript"))
      << reply;
  host.kill_after_polls = 1 << 30;
  EXPECT_EQ(Run("return 7"), ":7\r\n");  // the interpreter serves the next script
}

// --- RESP3 -> Lua -> RESP3, a seeded model test ----------------------------------------------

// A random RESP3 reply whose Lua conversion converts back to itself (maps and sets with
// distinct string keys; no nulls inside aggregates, as Lua tables end at the first nil).
std::string RandomReply(std::mt19937& rng, int depth) {
  auto text = [&] {
    std::string s(rng() % 6, 'a');
    for (char& c : s) c = static_cast<char>('a' + rng() % 26);
    return s;
  };
  const int kind = static_cast<int>(rng() % (depth > 3 ? 6 : 10));
  switch (kind) {
    case 0:
      return ":" + std::to_string(static_cast<int32_t>(rng())) + "\r\n";
    case 1: {
      std::string s = text();
      return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
    }
    case 2:
      return "+" + text() + "ok\r\n";
    case 3:
      return "-ERR " + text() + "\r\n";
    case 4:
      return rng() % 2 ? "#t\r\n" : "#f\r\n";
    case 5:
      return "(" + std::to_string(rng()) + std::to_string(rng()) + "\r\n";
    case 6: {
      size_t n = rng() % 4;
      std::string out = "*" + std::to_string(n) + "\r\n";
      for (size_t i = 0; i < n; ++i) out += RandomReply(rng, depth + 1);
      return out;
    }
    case 7:
    case 8: {
      const bool map = kind == 7;
      std::map<std::string, std::string> entries;
      for (size_t i = rng() % 4; i > 0; --i) {
        std::string key = text() + "k";
        entries[key] = map ? RandomReply(rng, depth + 1) : "";
      }
      std::string out = (map ? "%" : "~") + std::to_string(entries.size()) + "\r\n";
      for (const auto& [key, value] : entries) {
        out += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n" + value;
      }
      return out;
    }
    default: {
      std::string s = text();
      return "=" + std::to_string(s.size() + 4) + "\r\ntxt:" + s + "\r\n";
    }
  }
}

// Parses one RESP3 reply into a canonical text: map and set entries sorted.
std::string Canonical(std::string_view data, size_t* pos) {
  size_t end = data.find("\r\n", *pos);
  const char type = data[*pos];
  const std::string line(data.substr(*pos + 1, end - *pos - 1));
  *pos = end + 2;
  if (type == '$' || type == '=') {
    const size_t length = std::stoul(line);
    std::string body(data.substr(*pos, length));
    *pos += length + 2;
    return std::string(1, type) + body;
  }
  if (type == '*' || type == '%' || type == '~') {
    const size_t n = std::stoul(line) * (type == '%' ? 2 : 1);
    std::vector<std::string> items;
    for (size_t i = 0; i < n; ++i) items.push_back(Canonical(data, pos));
    if (type == '%') {
      std::vector<std::string> pairs;
      for (size_t i = 0; i < n; i += 2) pairs.push_back(items[i] + "=>" + items[i + 1]);
      items = pairs;
    }
    if (type != '*') std::sort(items.begin(), items.end());
    std::string out(1, type);
    for (const std::string& item : items) out += "[" + item + "]";
    return out;
  }
  return std::string(1, type) + line;
}

TEST(LuaConversionModelTest, Resp3RepliesSurviveTheTripThroughLua) {
  LuaVm vm(LuaVm::Purpose::kEval);
  MapHost host;
  std::mt19937 rng(20261201);
  for (int round = 0; round < 2000; ++round) {
    const std::string reply = RandomReply(rng, 0);
    const std::string got =
        Eval(vm, host, "redis.setresp(3) return redis.pcall('raw', ARGV[1])", 3, {}, {reply});
    size_t a = 0;
    size_t b = 0;
    ASSERT_EQ(Canonical(got, &a), Canonical(reply, &b))
        << "round " << round << " (seed 20261201)\nsent " << reply << "\ngot  " << got;
  }
}

TEST(LuaConversionModelTest, MalformedRepliesBecomeErrorsNotCrashes) {
  LuaVm vm(LuaVm::Purpose::kEval);
  MapHost host;
  for (const char* bad :
       {"$5\r\nab\r\n", "*2\r\n:1\r\n", "?\r\n", "", "$-x\r\n", ":12", "%1\r\n:1\r\n"}) {
    const std::string got = Eval(vm, host, "return redis.pcall('raw', ARGV[1])", 2, {}, {bad});
    EXPECT_TRUE(got.starts_with("-")) << bad << " -> " << got;
  }
}

// --- shebangs, the script cache, libraries -------------------------------------------------

TEST(ScriptFlagsTest, EvalShebangs) {
  uint32_t flags = 0;
  size_t offset = 0;
  std::string error;
  ASSERT_TRUE(ParseEvalShebang("return 1", &flags, &offset, &error));
  EXPECT_EQ(flags, kScriptCompatMode);
  EXPECT_EQ(offset, 0u);
  ASSERT_TRUE(
      ParseEvalShebang("#!lua flags=no-writes,allow-oom\nreturn 1", &flags, &offset, &error));
  EXPECT_EQ(flags, kScriptNoWrites | kScriptAllowOom);
  EXPECT_EQ(offset, 31u);
  EXPECT_FALSE(ParseEvalShebang("#!lua flags=nope\nx", &flags, &offset, &error));
  EXPECT_EQ(error, "ERR Unexpected flag in script shebang: nope");
  EXPECT_FALSE(ParseEvalShebang("#!lua", &flags, &offset, &error));
  EXPECT_EQ(error, "ERR Invalid script shebang");
  // Split as sdssplitargs splits: quotes group, and a line that does not split is refused.
  ASSERT_TRUE(ParseEvalShebang("#!lua flags=\"no-writes\"\nreturn 1", &flags, &offset, &error));
  EXPECT_EQ(flags, kScriptNoWrites);
  EXPECT_FALSE(ParseEvalShebang("#!lua \"flags=no-writes\nx", &flags, &offset, &error));
  EXPECT_EQ(error, "ERR Invalid engine in script shebang");
  EXPECT_FALSE(ParseEvalShebang("#!lua flags=no-writes,\nx", &flags, &offset, &error));
  EXPECT_EQ(error, "ERR Unexpected flag in script shebang: ");
  std::string engine;
  std::string name;
  EXPECT_TRUE(ParseLibraryShebang("#!lua name=mylib\n", &engine, &name, &offset, &error));
  EXPECT_EQ(engine, "lua");
  EXPECT_EQ(name, "mylib");
  EXPECT_TRUE(ParseLibraryShebang("#!LUA NAME='my lib'\n", &engine, &name, &offset, &error));
  EXPECT_EQ(engine, "LUA");
  EXPECT_EQ(name, "my lib");
  EXPECT_FALSE(ParseLibraryShebang("#!lua\n", &engine, &name, &offset, &error));
  EXPECT_EQ(error, "ERR Library name was not given");
  EXPECT_FALSE(ParseLibraryShebang("#!lua name=\"x\n", &engine, &name, &offset, &error));
  EXPECT_EQ(error, "ERR Invalid library metadata");
  EXPECT_TRUE(ValidScriptName("a_9"));
  EXPECT_FALSE(ValidScriptName("a-9"));
  EXPECT_FALSE(ValidScriptName(""));
}

TEST(EvalScriptsTest, CachesBySha1AndFlushes) {
  EvalScripts scripts;
  std::string sha;
  std::string error;
  const EvalScript* script = scripts.Add("return 1", &sha, &error);
  ASSERT_NE(script, nullptr);
  EXPECT_EQ(sha, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  EXPECT_EQ(scripts.Find("E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"), script);
  EXPECT_EQ(scripts.Add("return 1", &sha, &error), script);
  EXPECT_EQ(scripts.size(), 1u);
  EXPECT_EQ(scripts.Add("return 1 +", &sha, &error), nullptr);
  EXPECT_EQ(
      error,
      "ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'");
  scripts.Flush();
  EXPECT_EQ(scripts.size(), 0u);
  EXPECT_EQ(scripts.Find("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"), nullptr);
}

TEST(FunctionLibrariesTest, LoadReplaceDeleteAndDumpRoundTrip) {
  FunctionLibraries libraries;
  std::string name;
  std::string error;
  const std::string code =
      "#!lua name=lib\nredis.register_function('f', function(keys, args) return #args end)\n"
      "redis.register_function{function_name='g', callback=function() return 1 end, "
      "flags={'no-writes'}, description='the g'}";
  ASSERT_TRUE(libraries.Load(code, false, &name, &error)) << error;
  EXPECT_EQ(name, "lib");
  EXPECT_FALSE(libraries.Load(code, false, &name, &error));
  EXPECT_EQ(error, "ERR Library 'lib' already exists");
  ASSERT_TRUE(libraries.Load(code, true, &name, &error)) << error;
  const ScriptFunction* g = libraries.FindFunction("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->flags, kScriptNoWrites);
  EXPECT_EQ(g->description, "the g");
  EXPECT_FALSE(libraries.Load("#!lua name=other\nredis.register_function('f', function() end)",
                              false, &name, &error));
  EXPECT_EQ(error, "ERR Function f already exists");

  const std::string payload = libraries.Dump();
  EXPECT_EQ(static_cast<uint8_t>(payload[0]), 245);
  EXPECT_EQ(payload.substr(payload.size() - 10, 2), std::string("\x0a\x00", 2));
  FunctionLibraries copy;
  ASSERT_TRUE(copy.Restore(payload, FunctionLibraries::RestorePolicy::kAppend, &error)) << error;
  EXPECT_EQ(copy.function_count(), 2u);
  EXPECT_FALSE(copy.Restore(payload, FunctionLibraries::RestorePolicy::kAppend, &error));
  EXPECT_EQ(error, "ERR Library lib already exists");
  EXPECT_EQ(copy.function_count(), 2u);  // a failed restore changes nothing
  std::string corrupt = payload;
  corrupt[3] ^= 1;
  EXPECT_FALSE(copy.Restore(corrupt, FunctionLibraries::RestorePolicy::kFlush, &error));
  EXPECT_EQ(error, "ERR DUMP payload version or checksum are wrong");
  EXPECT_TRUE(copy.Delete("lib"));
  EXPECT_FALSE(copy.Delete("lib"));
  EXPECT_EQ(copy.FindFunction("f"), nullptr);
}

// --- CRC-64 and RDB strings -----------------------------------------------------------------

TEST(Crc64Test, RedisTestVector) {
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  // Continuing a CRC over pieces equals one pass over the whole.
  const std::string text = "The quick brown fox jumps over the lazy dog, many times over.";
  EXPECT_EQ(Crc64(Crc64(0, text.substr(0, 13)), text.substr(13)), Crc64(0, text));
}

TEST(RdbStringTest, LengthsIntegersAndLzfRoundTrip) {
  std::mt19937 rng(7);
  for (uint64_t length : {0ull, 1ull, 63ull, 64ull, 16383ull, 16384ull, 70000ull}) {
    std::string value(length, 'x');
    for (char& c : value) c = static_cast<char>(rng());
    std::string out;
    RdbAppendString(&out, value);
    size_t pos = 0;
    std::string read;
    ASSERT_TRUE(RdbReadString(out, &pos, &read));
    EXPECT_EQ(read, value);
    EXPECT_EQ(pos, out.size());
  }
  // Redis's integer encodings: C0 int8, C1 int16, C2 int32, little-endian.
  for (const auto& [bytes, text] : std::vector<std::pair<std::string, std::string>>{
           {std::string("\xc0\xf6", 2), "-10"},
           {std::string("\xc1\x39\x30", 3), "12345"},
           {std::string("\xc2\x15\xcd\x5b\x07", 5), "123456789"}}) {
    size_t pos = 0;
    std::string read;
    ASSERT_TRUE(RdbReadString(bytes, &pos, &read));
    EXPECT_EQ(read, text);
  }
  // An LZF-compressed string, as Redis writes long repetitive text.
  const std::string text(1000, 'a');
  std::string compressed(text.size(), '\0');
  const unsigned int n =
      lzf_compress(text.data(), text.size(), compressed.data(), compressed.size());
  ASSERT_GT(n, 0u);
  std::string encoded = "\xc3";
  RdbAppendLength(&encoded, n);
  RdbAppendLength(&encoded, text.size());
  encoded.append(compressed.data(), n);
  size_t pos = 0;
  std::string read;
  ASSERT_TRUE(RdbReadString(encoded, &pos, &read));
  EXPECT_EQ(read, text);
  // Truncated or lying encodings fail instead of reading past the end.
  for (size_t cut = 0; cut < encoded.size(); ++cut) {
    pos = 0;
    EXPECT_FALSE(RdbReadString(encoded.substr(0, cut), &pos, &read)) << cut;
  }
}

}  // namespace
}  // namespace goblin
