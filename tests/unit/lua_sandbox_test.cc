// The published advisories against Redis's embedded Lua, each replayed against Goblin's
// interpreter (deps/lua, deps/lua-cjson and the libraries in src/scripting): every one must end
// in an error reply or a correct result, leave the interpreter serving the next script, and
// leave the sandbox as it was. Run under ASan (make test-sanitize), an out-of-bounds access or
// a use after free in any of them fails the test. Triggers that need gigabytes of input live in
// tests/integration/test_lua_sandbox.py and bench/hostile_scripts.py.
#include <gtest/gtest.h>

#include <string>

#include "fake_script_host.h"
#include "scripting/eval_scripts.h"

extern "C" {
#include "lstring.h"
}

namespace goblin {
namespace {

class LuaSandboxTest : public ::testing::Test {
 protected:
  LuaVm vm{LuaVm::Purpose::kEval};
  MapHost host;
  std::string Run(std::string_view body) { return Eval(vm, host, body); }
  // Whether a script's reply is an error whose text contains message.
  ::testing::AssertionResult FailsWith(std::string_view body, std::string_view message) {
    const std::string reply = Run(body);
    if (reply.starts_with("-") && reply.find(message) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << body << " answered " << reply;
  }
};

std::string Bulk(std::string_view text) {
  return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}

// CVE-2024-31449: bit.tohex negated the width -2^31 into itself and wrote past its buffer.
TEST_F(LuaSandboxTest, BitToHexClampsTheMostNegativeWidth) {
  EXPECT_EQ(Run("return bit.tohex(65535, -2147483648)"), Bulk("0000FFFF"));
  EXPECT_EQ(Run("return bit.tohex(65535, 2147483647)"), Bulk("0000ffff"));
  EXPECT_EQ(Run("return bit.tohex(-1, -9)"), Bulk("FFFFFFFF"));
  EXPECT_EQ(Run("return bit.tohex(255, -3)"), Bulk("0FF"));
  EXPECT_EQ(Run("return bit.tohex(255, 0)"), Bulk(""));
  EXPECT_EQ(Run("return bit.tohex(1)"), Bulk("00000001"));
}

// The rest of the bit library, which Goblin now owns, as LuaBitOp computes it.
TEST_F(LuaSandboxTest, BitOperationsWorkOnSigned32BitIntegers) {
  EXPECT_EQ(Run("return bit.tobit(2^32 + 5)"), ":5\r\n");
  EXPECT_EQ(Run("return bit.tobit(0xffffffff)"), ":-1\r\n");
  EXPECT_EQ(Run("return bit.tobit('12')"), ":12\r\n");
  EXPECT_EQ(Run("return bit.bnot(0)"), ":-1\r\n");
  EXPECT_EQ(Run("return bit.band(0xff, 0x0f, 0x3c)"), ":12\r\n");
  EXPECT_EQ(Run("return bit.bor(1, 2, 4, 8)"), ":15\r\n");
  EXPECT_EQ(Run("return bit.bxor(0xf0, 0xff)"), ":15\r\n");
  EXPECT_EQ(Run("return bit.lshift(1, 31)"), ":-2147483648\r\n");
  EXPECT_EQ(Run("return bit.lshift(1, 33)"), ":2\r\n");  // counts are taken modulo 32
  EXPECT_EQ(Run("return bit.rshift(-1, 28)"), ":15\r\n");
  EXPECT_EQ(Run("return bit.arshift(-256, 4)"), ":-16\r\n");
  EXPECT_EQ(Run("return bit.rol(0x12345678, 8)"), ":878082066\r\n");   // 0x34567812
  EXPECT_EQ(Run("return bit.ror(0x12345678, 8)"), ":2014458966\r\n");  // 0x78123456
  EXPECT_EQ(Run("return bit.rol(0x12345678, 0)"), ":305419896\r\n");
  EXPECT_EQ(Run("return bit.bswap(0x12345678)"), ":2018915346\r\n");  // 0x78563412
  EXPECT_TRUE(FailsWith("return bit.band(1, {})", "bad argument #2 to 'band' (number expected"));
  EXPECT_TRUE(FailsWith("return bit.tobit()", "bad argument #1 to 'tobit' (number expected"));
}

// CVE-2025-46817: unpack's element count overflowed for wide ranges.
TEST_F(LuaSandboxTest, UnpackRefusesRangesTooWideToCount) {
  EXPECT_TRUE(FailsWith("return {unpack({1,2,3}, -2, 2147483647)}", "too many results to unpack"));
  EXPECT_TRUE(FailsWith("return {unpack({1,2,3}, 0, 2147483647)}", "too many results to unpack"));
  EXPECT_TRUE(FailsWith("return {unpack({1,2,3}, -2147483648, -2)}", "too many results to unpack"));
  EXPECT_TRUE(
      FailsWith("return {unpack({1,2,3}, -2147483648, 2147483647)}", "too many results to unpack"));
  EXPECT_EQ(Run("return select('#', unpack({1,2,3}, -1, 5))"), ":7\r\n");
  EXPECT_EQ(Run("return select('#', unpack({}, -2147483648, -2147483646))"), ":3\r\n");
  EXPECT_EQ(Run("return select('#', unpack({}, 2147483646, 2147483647))"), ":2\r\n");
  EXPECT_EQ(Run("return select('#', unpack({1,2,3}, 1, -1))"), ":0\r\n");
  EXPECT_EQ(Run("return {unpack({1,2,3}, 2)}"), "*2\r\n:2\r\n:3\r\n");
}

// CVE-2025-46818: the metatable strings share was writable, so one script could plant code that
// a later script (another user's) ran on its first string method call.
TEST_F(LuaSandboxTest, TheStringMetatableIsReadOnly) {
  for (const char* attack : {
           "getmetatable('').__index = function() return 'planted' end",
           "getmetatable('').__index.upper = function() return 'planted' end",
           "getmetatable('').__add = function() return 'planted' end",
           "rawset(getmetatable(''), '__index', {})",
           "setmetatable(getmetatable(''), {})",
       }) {
    EXPECT_TRUE(FailsWith(attack, "Attempt to modify a readonly table"));
  }
  EXPECT_EQ(Run("return ('x'):upper()"), Bulk("X"));
  EXPECT_EQ(Run("return ('%d'):format(7)"), Bulk("7"));
  EXPECT_EQ(Run("return getmetatable('').__index == string"), ":1\r\n");
  // No other basic type has a metatable to plant code in.
  for (const char* value :
       {"nil", "123.222", "true", "function() end", "coroutine.create(function() end)"}) {
    EXPECT_TRUE(FailsWith(std::string("getmetatable(") + value + ").__index = 1",
                          "attempt to index a nil value"));
  }
}

// CVE-2025-46819: long brackets counted their '=' in an int; the counting is checked here at
// sizes a test can afford (the 2^30 '=' case runs in bench/hostile_scripts.py).
TEST_F(LuaSandboxTest, LongBracketsOfEveryLevelStillParse) {
  EXPECT_EQ(Run("return #loadstring('return [' .. string.rep('=', 5000) .. '[xy]' .. "
                "string.rep('=', 5000) .. ']')()"),
            ":2\r\n");
  EXPECT_EQ(Run("return [==[a]=]b]==]"), Bulk("a]=]b"));
  EXPECT_EQ(Run("return [[\nline]]"), Bulk("line"));
  EXPECT_EQ(Run("--[==[ comment ]==] return 1"), ":1\r\n");
  EXPECT_EQ(Run("--[= not long\nreturn 2"), ":2\r\n");
  EXPECT_EQ(Run("local t = {1} return t[1]"), ":1\r\n");
  EXPECT_EQ(Run("return select(2, loadstring('return [==x'))"),
            Bulk("[string \"return [==x\"]:1: invalid long string delimiter near '[=='"));
  EXPECT_EQ(Run("return select(2, loadstring('return [==[x]='))"),
            Bulk("[string \"return [==[x]=\"]:1: unfinished long string near '<eof>'"));
  EXPECT_EQ(Run("return select(2, loadstring('x = [[ [[ ]]'))"),
            Bulk("[string \"x = [[ [[ ]]\"]:1: nesting of [[...]] is deprecated near '['"));
}

// CVE-2025-49844: the chunk name was not anchored while the parser ran, and a reader function
// can run a full collection before the parser stores it. Under ASan a freed name fails here.
TEST_F(LuaSandboxTest, TheChunkNameOutlivesACollectionDuringParsing) {
  EXPECT_EQ(Run("local calls = 0 "
                "local f = load(function() "
                "  calls = calls + 1 "
                "  if calls == 1 then collectgarbage('collect') return 'error(\"boom\")' end "
                "end) "
                "local ok, e = pcall(f) return e"),
            Bulk("(load):1: boom"));
  EXPECT_EQ(Run("local f = load(function() collectgarbage('collect') end, '=name') "
                "return tostring(f ~= nil)"),
            Bulk("true"));
}

// CVE-2024-46981: SCRIPT FLUSH closed an interpreter whose collector a script had stopped or
// left mid-cycle. Flushing after such scripts frees everything (ASan checks), and the new
// interpreter serves scripts.
TEST(LuaSandboxFlushTest, FlushAfterScriptsThatStoppedTheCollector) {
  EvalScripts scripts;
  MapHost host;
  for (const char* body : {
           "collectgarbage('stop') local t = {} for i = 1, 10000 do t[i] = {i} end return 1",
           "collectgarbage('restart') collectgarbage('step') local s = {} "
           "for i = 1, 1000 do s[i] = tostring(i) end return 1",
           "collectgarbage('stop') return 1",
       }) {
    EXPECT_EQ(Eval(scripts.vm(), host, body), ":1\r\n");
  }
  scripts.Flush();
  EXPECT_EQ(Eval(scripts.vm(), host, "return collectgarbage('count') > 0"), ":1\r\n");
  EXPECT_EQ(Eval(scripts.vm(), host, "return newproxy"),
            "-ERR user_script:1: Script attempted to access nonexistent global variable "
            "'newproxy' script: testscript, on @user_script:1.\r\n");
}

// CVE-2022-24834: cjson's buffer lengths were ints. Encoding and decoding still round-trip
// escapes and long strings (the 2 GB case runs in tests/integration/test_lua_sandbox.py).
TEST_F(LuaSandboxTest, CjsonEncodesEscapesAndLongStrings) {
  EXPECT_EQ(Run("return cjson.encode({'a\"\\\\\\n\\1'})"), Bulk("[\"a\\\"\\\\\\n\\u0001\"]"));
  EXPECT_EQ(Run("return #cjson.encode(string.rep('\\1', 100000))"), ":600002\r\n");
  EXPECT_EQ(Run("return #cjson.decode(cjson.encode(string.rep('x', 3000000)))"), ":3000000\r\n");
}

// CVE-2022-24735: one user's script could replace what another's calls (the globals, library
// functions) or, when EVAL wrapped the body in a function, close the wrapper and define more.
TEST_F(LuaSandboxTest, NoScriptChangesWhatTheNextOneRuns) {
  for (const char* attack : {
           "redis.call = function() return 'planted' end",
           "string.format = function() return 'planted' end",
           "cjson.encode = nil",
           "bit.lshift = nil",
           "_G.tostring = nil",
           "tostring = nil",
           "setmetatable(_G, {})",
           "rawset(_G, 'x', 1)",
           "rawset(string, 'format', nil)",
       }) {
    EXPECT_TRUE(FailsWith(attack, "Attempt to modify a readonly table")) << attack;
  }
  EXPECT_EQ(Run("redis.call('set', 'k', 'v') return redis.call('get', 'k')"), Bulk("v"));
  EXPECT_EQ(Run("return string.format('%d', 5)"), Bulk("5"));
  // The body is compiled alone, so it cannot close a wrapper and define a global function.
  const std::string injected = Run("return 1 end function f_0123() return 2");
  EXPECT_TRUE(injected.starts_with("compile error: user_script:1: '<eof>' expected near 'end'"))
      << injected;
}

// CVE-2021-32626: values were pushed on the Lua stack without checking its room.
TEST_F(LuaSandboxTest, DeepValuesStopAtTheStackLimit) {
  const std::string reply = Run("local a = {} local b = {a} a[1] = b return a");
  EXPECT_TRUE(reply.starts_with("*1\r\n*1\r\n*1\r\n")) << reply.substr(0, 40);
  EXPECT_TRUE(reply.ends_with("-ERR reached lua stack limit\r\n"));
  // A reply nested deeper than the stack allows becomes an error, not an overflow.
  EXPECT_TRUE(FailsWith("return redis.pcall('raw', string.rep('*1\\r\\n', 100000) .. ':1\\r\\n')",
                        "Unparsable reply from the server"));
  // A call with as many arguments as the stack holds still has room for its reply.
  EXPECT_EQ(Run("local a = {} for i = 1, 7999 do a[i] = 'x' end "
                "return redis.pcall('nosuch', unpack(a)).err"),
            Bulk("ERR unknown command"));
  EXPECT_EQ(Run("return 7"), ":7\r\n");
}

// CVE-2020-14147 and CVE-2018-11219: struct's sizes and offsets overflowed.
TEST_F(LuaSandboxTest, StructRefusesOverflowingSizesAndOffsets) {
  EXPECT_TRUE(FailsWith("return struct.pack('>I2147483648', 10)", "integral size"));
  EXPECT_TRUE(FailsWith("return struct.pack('i99999999999999999999', 1)", "integral size"));
  EXPECT_TRUE(
      FailsWith("return struct.pack('c99999999999999999999', 'x')", "integral size overflow"));
  EXPECT_TRUE(FailsWith("return struct.unpack('b', 'x', 0)", "offset must be 1 or greater"));
  EXPECT_TRUE(FailsWith("return struct.unpack('b', 'x', -2^40)", "data string too short"));
  EXPECT_TRUE(FailsWith("return struct.unpack('i4', 'abc')", "data string too short"));
  EXPECT_TRUE(FailsWith("return struct.unpack('b', 'x', 2^53)", "data string too short"));
  EXPECT_TRUE(FailsWith("return struct.unpack('c2147483647', 'x')", "data string too short"));
  EXPECT_EQ(Run("return {struct.unpack('>i2', struct.pack('>i2', -2))}"), "*2\r\n:-2\r\n:3\r\n");
}

// CVE-2018-11218: cmsgpack pushed one value per argument, per nesting level and per decoded
// object without checking the stack.
TEST_F(LuaSandboxTest, CmsgpackSurvivesManyArgumentsAndDeepNesting) {
  EXPECT_EQ(Run("local t = {} for i = 1, 3000 do t[i] = i end "
                "return #cmsgpack.pack(unpack(t))"),
            ":8618\r\n");
  EXPECT_TRUE(
      FailsWith("local t = {} for i = 1, 7000 do t[i] = i end "
                "return cmsgpack.pack(unpack(t))",
                "Too many arguments for MessagePack pack."));
  const std::string many =
      Run("local t = {} for i = 1, 100000 do t[i] = i % 100 end "
          "local s = '' for i = 1, 100000 do s = s .. string.char(i % 100) end "
          "return select('#', cmsgpack.unpack(s))");
  EXPECT_TRUE(many == ":100000\r\n" || many.find("stack overflow") != std::string::npos) << many;
  const std::string deep =
      Run("local r = cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1') "
          "return type(r)");
  EXPECT_TRUE(deep == Bulk("table") || deep.starts_with("-")) << deep;
  EXPECT_EQ(Run("local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end "
                "return #cmsgpack.pack(t) > 0"),
            ":1\r\n");
  EXPECT_EQ(Run("return 7"), ":7\r\n");
}

// CVE-2015-4335: Lua 5.1 runs bytecode without verifying it; chunks are source text only.
TEST_F(LuaSandboxTest, BytecodeIsNeverLoaded) {
  EXPECT_TRUE(FailsWith("return loadstring(string.dump(function() return 1 end))()",
                        "attempt to call a nil value"));
  const std::string error =
      Run("local f, e = loadstring(string.dump(function() return 1 end)) return e");
  EXPECT_NE(error.find("unexpected symbol near 'char(27)'"), std::string::npos) << error;
  EXPECT_EQ(
      Run("local done = false "
          "return load(function() if not done then done = true return '\\27Lua' end end) == nil"),
      ":1\r\n");
  EXPECT_TRUE(Run("\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00").starts_with("compile error: "));
}

// Lua 5.1 hashed only 32 characters of a long string, so a script could make any number of
// distinct strings share one bucket of the string table. Every character counts now.
TEST_F(LuaSandboxTest, StringHashCoversEveryCharacter) {
  lua_State* lua = vm.state();
  std::string text(4096, 'a');
  const unsigned int first = luaS_newlstr(lua, text.data(), text.size())->tsv.hash;
  for (size_t position : {1ul, 100ul, 2047ul, 4094ul}) {
    std::string other = text;
    other[position] = 'b';
    EXPECT_NE(luaS_newlstr(lua, other.data(), other.size())->tsv.hash, first) << position;
  }
}

}  // namespace
}  // namespace goblin
