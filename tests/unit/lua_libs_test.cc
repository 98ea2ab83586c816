// Unit tests for Goblin's cmsgpack and struct Lua libraries. Expected bytes and messages are the
// ones Redis 7.0's bundled modules produce (compare.py checks the same ground against a live
// redis-server); the randomized tests check round trips and that hostile input never crashes.

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "scripting/lua_cmsgpack.h"
#include "scripting/lua_struct.h"

namespace goblin {
namespace {

// Helpers available to every snippet.
constexpr char kPrelude[] = R"lua(
function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
function unhex(h)
  return (h:gsub('%x%x', function(x) return string.char(tonumber(x, 16)) end))
end
function join(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = tostring((select(i, ...))) end
  return table.concat(out, ',')
end
)lua";

class LuaLibsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L_ = luaL_newstate();
    // The libraries scripts get (goblin_lua has no io, os, package or debug to open).
    for (lua_CFunction open : {luaopen_base, luaopen_table, luaopen_string, luaopen_math}) {
      lua_pushcfunction(L_, open);
      lua_call(L_, 0, 0);
    }
    ASSERT_EQ(luaopen_cmsgpack(L_), 1);
    ASSERT_TRUE(lua_istable(L_, -1));
    ASSERT_EQ(luaopen_struct(L_), 1);
    ASSERT_TRUE(lua_istable(L_, -1));
    lua_settop(L_, 0);
    ASSERT_EQ(luaL_dostring(L_, kPrelude), 0);
  }
  void TearDown() override { lua_close(L_); }

  // Runs `code` (a chunk that returns one value) and gives tostring() of the result, or
  // "ERR: <message>" if it raised an error.
  std::string Eval(const std::string& code) {
    lua_settop(L_, 0);
    int rc = luaL_loadbuffer(L_, code.data(), code.size(), "=test");
    if (rc == 0) rc = lua_pcall(L_, 0, 1, 0);
    if (rc != 0) {
      std::string msg = "ERR: ";
      msg += lua_tostring(L_, -1);
      lua_settop(L_, 0);
      return msg;
    }
    lua_getglobal(L_, "tostring");
    lua_insert(L_, -2);
    lua_call(L_, 1, 1);
    std::string out = lua_tostring(L_, -1);
    lua_settop(L_, 0);
    return out;
  }

  // Error message of a failing call, without position prefix (pcall on a C function gives none).
  std::string ErrorOf(const std::string& call) {
    return Eval("local ok, e = pcall(" + call + ") if ok then return 'no error' end return e");
  }

  lua_State* L_ = nullptr;
};

// ----------------------------------------------------------------------------------------------
// cmsgpack.pack

TEST_F(LuaLibsTest, ModuleTablesAndGlobals) {
  EXPECT_EQ(Eval("return type(cmsgpack.pack) .. type(cmsgpack.unpack) .. "
                 "type(cmsgpack.unpack_one) .. type(cmsgpack.unpack_limit)"),
            "functionfunctionfunctionfunction");
  EXPECT_EQ(Eval("return cmsgpack._VERSION"), "lua-cmsgpack 0.4.0");
  EXPECT_EQ(Eval("return cmsgpack._NAME"), "cmsgpack");
  EXPECT_EQ(Eval("return type(struct.pack) .. type(struct.unpack) .. type(struct.size)"),
            "functionfunctionfunction");
}

TEST_F(LuaLibsTest, PackPositiveIntegerBoundaries) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(0))"), "00");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(127))"), "7f");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(128))"), "cc80");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(255))"), "ccff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(256))"), "cd0100");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(65535))"), "cdffff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(65536))"), "ce00010000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(2^32-1))"), "ceffffffff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(2^32))"), "cf0000000100000000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(2^53))"), "cf0020000000000000");
}

TEST_F(LuaLibsTest, PackNegativeIntegerBoundaries) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-1))"), "ff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-32))"), "e0");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-33))"), "d0df");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-128))"), "d080");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-129))"), "d1ff7f");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-32768))"), "d18000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-32769))"), "d2ffff7fff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-2^31))"), "d280000000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-2^31-1))"), "d3ffffffff7fffffff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-2^63))"), "d38000000000000000");
}

TEST_F(LuaLibsTest, PackFloatChoosesNarrowestLosslessEncoding) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(0.5))"), "ca3f000000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-1.5))"), "cabfc00000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(0.1))"), "cb3fb999999999999a");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(1e300))"), "cb7e37e43c8800759c");
  // Integral but outside int64: not an integer encoding.
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(2^63))"), "ca5f000000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(2^70))"), "ca62800000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(1/0))"), "ca7f800000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-1/0))"), "caff800000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(-0))"), "00");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(0/0)):sub(1, 2)"), "cb");
  // Just above FLT_MAX: narrowing overflows, so the double form is needed.
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(3.5e38)):sub(1, 2)"), "cb");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(3.4028234663852886e38))"), "ca7f7fffff");
}

TEST_F(LuaLibsTest, PackStringHeaders) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(''))"), "a0");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack('abc'))"), "a3616263");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 31)):sub(1, 2))"), "bf61");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 32)):sub(1, 2))"), "d920");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 255)):sub(1, 2))"), "d9ff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 256)):sub(1, 3))"), "da0100");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 65535)):sub(1, 3))"), "daffff");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(string.rep('a', 65536)):sub(1, 5))"), "db00010000");
  EXPECT_EQ(Eval("return #cmsgpack.pack(string.rep('a', 65536))"), "65541");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack('a\\0b'))"), "a3610062");
}

TEST_F(LuaLibsTest, PackScalarsAndUnsupportedTypes) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(true))"), "c3");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(false))"), "c2");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(nil))"), "c0");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(print))"), "c0");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(coroutine.create(function() end)))"), "c0");
}

TEST_F(LuaLibsTest, PackArraysVersusMaps) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({}))"), "90");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({1, 2, 3}))"), "93010203");
  EXPECT_EQ(Eval("local t = {} for i = 1, 16 do t[i] = 0 end "
                 "return hex(cmsgpack.pack(t):sub(1, 3))"),
            "dc0010");
  EXPECT_EQ(Eval("local t = {} for i = 1, 65536 do t[i] = 0 end "
                 "return hex(cmsgpack.pack(t):sub(1, 5))"),
            "dd00010000");
  // Holes, zero, negative, fractional and huge keys all force a map.
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({[2] = 2}))"), "810202");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({[0] = 0}))"), "810000");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({[-1] = 1}))"), "81ff01");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({[1.5] = 1}))"), "81ca3fc0000001");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({[2^31] = 1}))"), "81ce8000000001");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({a = 1}))"), "81a16101");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({['1'] = 1}))"), "81a13101");
  EXPECT_EQ(Eval("return hex(cmsgpack.pack({1, nil, 3})):sub(1, 2)"), "82");
  EXPECT_EQ(Eval("local t = {} for i = 1, 16 do t['k' .. i] = i end "
                 "return hex(cmsgpack.pack(t):sub(1, 3))"),
            "de0010");
}

TEST_F(LuaLibsTest, PackNestingLimitTurnsDeepTablesIntoNil) {
  const char* nest =
      "local function nest(n) local t = {} local c = t for i = 1, n do c[1] = {} c = c[1] end "
      "return t end ";
  // Levels 0..15 are tables; the 17th nested table (level 16) becomes nil.
  EXPECT_EQ(Eval(std::string(nest) + "return hex(cmsgpack.pack(nest(15)))"),
            "91919191919191919191919191919190");
  EXPECT_EQ(Eval(std::string(nest) + "return hex(cmsgpack.pack(nest(16)))"),
            "91919191919191919191919191919191c0");
  EXPECT_EQ(Eval(std::string(nest) + "return hex(cmsgpack.pack(nest(100)))"),
            "91919191919191919191919191919191c0");
  // Self references terminate thanks to the same limit.
  EXPECT_EQ(Eval("local t = {} t[1] = t return hex(cmsgpack.pack(t))"),
            "91919191919191919191919191919191c0");
  EXPECT_EQ(Eval("local t = {} t.s = t return #cmsgpack.pack(t)"), "49");
}

TEST_F(LuaLibsTest, PackMultipleArgumentsConcatenates) {
  EXPECT_EQ(Eval("return hex(cmsgpack.pack(1, 'a', {2}, nil, true))"), "01a1619102c0c3");
  EXPECT_EQ(ErrorOf("cmsgpack.pack"), "bad argument #0 to '?' (MessagePack pack needs input.)");
}

// ----------------------------------------------------------------------------------------------
// cmsgpack.unpack

TEST_F(LuaLibsTest, UnpackScalars) {
  EXPECT_EQ(Eval("return join(cmsgpack.unpack(unhex('c0c2c3')))"), "nil,false,true");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('cfffffffffffffffff'))"), "-1");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('cf8000000000000000'))"), "-9.2233720368548e+18");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('d3ffffffffffffffff'))"), "-1");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('d18000'))"), "-32768");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('d280000000'))"), "-2147483648");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('ce80000000'))"), "2147483648");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('e0'))"), "-32");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('ca3fc00000'))"), "1.5");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('cb3ff0000000000000'))"), "1");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('d903616263'))"), "abc");
  EXPECT_EQ(Eval("return cmsgpack.unpack(unhex('db00000003616263'))"), "abc");
}

TEST_F(LuaLibsTest, UnpackContainers) {
  EXPECT_EQ(Eval("local t = cmsgpack.unpack(unhex('93010203')) return join(#t, t[1], t[3])"),
            "3,1,3");
  EXPECT_EQ(Eval("local t = cmsgpack.unpack(unhex('82a16101a16292c3c2')) "
                 "return join(t.a, t.b[1], t.b[2])"),
            "1,true,false");
  EXPECT_EQ(Eval("local t = cmsgpack.unpack(unhex('dc0000')) return type(t) .. #t"), "table0");
  EXPECT_EQ(Eval("local t = cmsgpack.unpack(unhex('df00000001a17801')) return t.x"), "1");
}

TEST_F(LuaLibsTest, UnpackReturnsEveryTopLevelObject) {
  EXPECT_EQ(Eval("return join(cmsgpack.unpack(cmsgpack.pack(1, 'two', 3)))"), "1,two,3");
  EXPECT_EQ(Eval("return select('#', cmsgpack.unpack(''))"), "0");
  // Numbers are accepted and coerced to their string form, like the reference.
  EXPECT_EQ(Eval("return join(cmsgpack.unpack(12))"), "49,50");
}

TEST_F(LuaLibsTest, UnpackErrors) {
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\193'"), "Bad data format in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\196\\1a'"), "Bad data format in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\205\\1'"), "Missing bytes in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\163ab'"), "Missing bytes in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\147\\1\\2'"), "Missing bytes in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\129\\1'"), "Missing bytes in input.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, '\\129\\192\\1'"), "table index is nil");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, nil"), "bad argument #1 to '?' (string expected, got nil)");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack, string.rep('\\1', 9000)"),
            "stack overflow (too many return values at once; use unpack_one or unpack_limit "
            "instead.)");
}

TEST_F(LuaLibsTest, UnpackOneWalksAStream) {
  EXPECT_EQ(Eval("local s = cmsgpack.pack(1, 'two', {3}) return join(cmsgpack.unpack_one(s))"),
            "1,1");
  EXPECT_EQ(Eval("local s = cmsgpack.pack(1, 'two', {3}) "
                 "return join(cmsgpack.unpack_one(s, 1))"),
            "5,two");
  EXPECT_EQ(Eval("local s = cmsgpack.pack(1, 'two', {3}) "
                 "local o, t = cmsgpack.unpack_one(s, 5) return join(o, t[1])"),
            "-1,3");
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_one(''))"), "-1");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack_one, '\\1\\2', 3"),
            "Start offset 3 greater than input length 2.");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack_one, '\\1\\2', -1"),
            "Invalid request to unpack with offset of -1 and limit of 2.");
}

TEST_F(LuaLibsTest, UnpackLimit) {
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2))"), "2,1,2");
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 2, 2))"), "-1,3,4");
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 9))"), "-1,1,2,3,4");
  // limit 0 with offset 0 means "everything, no offset"; with an offset it decodes nothing.
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0))"), "1,2,3,4");
  EXPECT_EQ(Eval("return join(cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3, 4), 0, 1))"), "1");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack_limit, 'x'"),
            "bad argument #2 to '?' (number expected, got no value)");
  EXPECT_EQ(ErrorOf("cmsgpack.unpack_limit, '\\1\\2', -1"),
            "Invalid request to unpack with offset of 0 and limit of 2.");
}

// ----------------------------------------------------------------------------------------------
// struct

TEST_F(LuaLibsTest, StructPackIntegers) {
  EXPECT_EQ(Eval("return hex(struct.pack('>I2', 300))"), "012c");
  EXPECT_EQ(Eval("return hex(struct.pack('<I2', 300))"), "2c01");
  EXPECT_EQ(Eval("return hex(struct.pack('b', -1))"), "ff");
  EXPECT_EQ(Eval("return hex(struct.pack('B', 256))"), "00");
  EXPECT_EQ(Eval("return hex(struct.pack('>h', -2))"), "fffe");
  EXPECT_EQ(Eval("return hex(struct.pack('>i', 1))"), "00000001");
  EXPECT_EQ(Eval("return hex(struct.pack('>l', -1))"), "ffffffffffffffff");
  EXPECT_EQ(Eval("return hex(struct.pack('>T', 1))"), "0000000000000001");
  EXPECT_EQ(Eval("return hex(struct.pack('>i3', -2))"), "fffffe");
  EXPECT_EQ(Eval("return hex(struct.pack('>i0', 5))"), "");
  EXPECT_EQ(Eval("return hex(struct.pack('>i16', -1))"), "0000000000000000ffffffffffffffff");
  EXPECT_EQ(Eval("return hex(struct.pack('>l', 1.9))"), "0000000000000001");
  EXPECT_EQ(Eval("return hex(struct.pack('>I', '42'))"), "0000002a");
}

TEST_F(LuaLibsTest, StructPackOutOfRangeNumbersFollowX86Casts) {
  EXPECT_EQ(Eval("return hex(struct.pack('>l', 0/0))"), "8000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>l', 1/0))"), "0000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>l', -1/0))"), "8000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>L', 2^64))"), "0000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>L', 2^63))"), "8000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>L', 2^63 + 2^11))"), "8000000000000800");
}

TEST_F(LuaLibsTest, StructPackFloatsStringsPadding) {
  EXPECT_EQ(Eval("return hex(struct.pack('>f', 1.5))"), "3fc00000");
  EXPECT_EQ(Eval("return hex(struct.pack('<f', 1.5))"), "0000c03f");
  EXPECT_EQ(Eval("return hex(struct.pack('>d', 0.1))"), "3fb999999999999a");
  EXPECT_EQ(Eval("return hex(struct.pack('>f', 1e300))"), "7f800000");
  EXPECT_EQ(Eval("return hex(struct.pack('s', 'hi'))"), "686900");
  EXPECT_EQ(Eval("return hex(struct.pack('c0', 'hello'))"), "68656c6c6f");
  EXPECT_EQ(Eval("return hex(struct.pack('c3', 'hello'))"), "68656c");
  EXPECT_EQ(Eval("return hex(struct.pack('c', 'hi'))"), "68");
  EXPECT_EQ(Eval("return hex(struct.pack('xbx', 7))"), "000700");
  EXPECT_EQ(Eval("return hex(struct.pack(' b ', 7))"), "07");
}

TEST_F(LuaLibsTest, StructAlignment) {
  EXPECT_EQ(Eval("return hex(struct.pack('!bhi', 1, 2, 3))"),
            "010002000300"
            "0000");
  EXPECT_EQ(Eval("return hex(struct.pack('!2bi', 1, 2))"), "010002000000");
  EXPECT_EQ(Eval("return hex(struct.pack('!8bd', 1, 0))"), "01000000000000000000000000000000");
  EXPECT_EQ(Eval("return hex(struct.pack('!8bi3', 1, 2))"), "010000020000");
  EXPECT_EQ(Eval("return hex(struct.pack('!8c3i', 'abc', 5))"), "6162630005000000");
  EXPECT_EQ(Eval("return hex(struct.pack('>!4bh<i', 1, 2, 3))"), "0100000203000000");
  EXPECT_EQ(Eval("return struct.size('!8bd')"), "16");
  EXPECT_EQ(Eval("return struct.size('!2bd')"), "10");
  // i3 under !8 is "aligned" with the reference's power-of-two formula: 1 -> 3, then 6 -> 6.
  EXPECT_EQ(Eval("return struct.size('!8bi3i3')"), "9");
  EXPECT_EQ(Eval("return join(struct.unpack('!4bi', '\\1\\0\\0\\0\\2\\0\\0\\0'))"), "1,2,9");
}

TEST_F(LuaLibsTest, StructPackErrors) {
  EXPECT_EQ(ErrorOf("struct.pack, 'y', 1"), "bad argument #1 to '?' (invalid format option 'y')");
  EXPECT_EQ(ErrorOf("struct.pack, '=i', 1"), "bad argument #1 to '?' (invalid format option '=')");
  EXPECT_EQ(ErrorOf("struct.pack, 'i33', 1"), "integral size 33 is larger than limit of 32");
  EXPECT_EQ(ErrorOf("struct.pack, 'i99999999999', 1"), "integral size overflow");
  EXPECT_EQ(ErrorOf("struct.pack, '!3', 1"), "alignment 3 is not a power of 2");
  EXPECT_EQ(ErrorOf("struct.pack, '!0', 1"), "alignment 0 is not a power of 2");
  // pack pushes a nil separator after its arguments, so a missing one reads as nil.
  EXPECT_EQ(ErrorOf("struct.pack, 'i'"), "bad argument #2 to '?' (number expected, got nil)");
  EXPECT_EQ(ErrorOf("struct.pack, 'c5', 'abc'"), "bad argument #3 to '?' (string too short)");
  EXPECT_EQ(ErrorOf("struct.pack, 's', {}"), "bad argument #2 to '?' (string expected, got table)");
}

TEST_F(LuaLibsTest, StructUnpack) {
  EXPECT_EQ(Eval("return join(struct.unpack('>I2', '\\1\\44'))"), "300,3");
  EXPECT_EQ(Eval("return join(struct.unpack('b', '\\255'))"), "-1,2");
  EXPECT_EQ(Eval("return join(struct.unpack('B', '\\255'))"), "255,2");
  EXPECT_EQ(Eval("return join(struct.unpack('>i3', '\\255\\255\\254'))"), "-2,4");
  EXPECT_EQ(Eval("return join(struct.unpack('<L', string.rep('\\255', 8)))"),
            "1.844674407371e+19,9");
  EXPECT_EQ(Eval("return join(struct.unpack('>i9', string.rep('\\255', 9)))"), "-1,10");
  EXPECT_EQ(Eval("return join(struct.unpack('>i0', 'abc'))"), "0,1");
  EXPECT_EQ(Eval("return join(struct.unpack('bbb', 'abc', 2))").substr(0, 3), "ERR");
  EXPECT_EQ(Eval("return join(struct.unpack('bb', 'abc', 2))"), "98,99,4");
  EXPECT_EQ(Eval("return join(struct.unpack('s', 'abc\\0def'))"), "abc,5");
  EXPECT_EQ(Eval("return join(struct.unpack('bc0', '\\3abcd'))"), "abc,5");
  EXPECT_EQ(Eval("return join(struct.unpack('c1c0', '3abcd'))"), "abc,5");
  EXPECT_EQ(Eval("return join(struct.unpack('xb', '\\1\\2'))"), "2,3");
  EXPECT_EQ(Eval("return join(struct.unpack('', 'abc', 10))"), "10");
  EXPECT_EQ(Eval("return join(struct.unpack('>d', struct.pack('>d', 1/3)))"), "0.33333333333333,9");
}

TEST_F(LuaLibsTest, StructUnpackErrors) {
  EXPECT_EQ(ErrorOf("struct.unpack, 'b', 'abc', 0"),
            "bad argument #3 to '?' (offset must be 1 or greater)");
  EXPECT_EQ(ErrorOf("struct.unpack, 'b', 'abc', -1"),
            "bad argument #2 to '?' (data string too short)");
  EXPECT_EQ(ErrorOf("struct.unpack, 'b', 'abc', 4"),
            "bad argument #2 to '?' (data string too short)");
  EXPECT_EQ(ErrorOf("struct.unpack, 'c0', 'abc'"), "format 'c0' needs a previous size");
  EXPECT_EQ(ErrorOf("struct.unpack, 'bc0', '\\9ab'"),
            "bad argument #2 to '?' (data string too short)");
  EXPECT_EQ(ErrorOf("struct.unpack, 's', 'abc'"), "unfinished string in data");
  EXPECT_EQ(ErrorOf("struct.unpack, 'q', 'abc'"),
            "bad argument #1 to '?' (invalid format option 'q')");
  EXPECT_EQ(ErrorOf("struct.unpack, 'b'"),
            "bad argument #2 to '?' (string expected, got no value)");
}

TEST_F(LuaLibsTest, StructSize) {
  EXPECT_EQ(Eval("return struct.size('')"), "0");
  EXPECT_EQ(Eval("return struct.size('bhlifdT')"), "35");
  EXPECT_EQ(Eval("return struct.size('c10x')"), "11");
  EXPECT_EQ(Eval("return struct.size('I16')"), "16");
  // Unknown letters are not checked by size(), only non-alphanumerics are.
  EXPECT_EQ(Eval("return struct.size('yzq')"), "0");
  EXPECT_EQ(ErrorOf("struct.size, '='"), "bad argument #1 to '?' (invalid format option '=')");
  EXPECT_EQ(ErrorOf("struct.size, 's'"), "bad argument #1 to '?' (option 's' has no fixed size)");
  EXPECT_EQ(ErrorOf("struct.size, 'c0'"), "bad argument #1 to '?' (option 'c0' has no fixed size)");
}

// ----------------------------------------------------------------------------------------------
// Randomized tests (fixed seeds so failures reproduce).

class RandomValues {
 public:
  explicit RandomValues(uint32_t seed) : rng_(seed) {}

  // Pushes a random value that must survive pack+unpack unchanged: no NaN, no nil inside
  // tables, nesting well below the 16-level cap.
  void Push(lua_State* L, int depth) {
    switch (Pick(depth < 6 ? 9 : 6)) {
      case 0: {
        static const double kEdges[] = {0,
                                        1,
                                        127,
                                        128,
                                        255,
                                        256,
                                        65535,
                                        65536,
                                        4294967295.0,
                                        4294967296.0,
                                        -1,
                                        -32,
                                        -33,
                                        -128,
                                        -129,
                                        -32768,
                                        -32769,
                                        -2147483648.0,
                                        -2147483649.0,
                                        9007199254740993.0,
                                        -9223372036854775808.0,
                                        9223372036854775808.0,
                                        0.5,
                                        -0.25,
                                        1e300,
                                        1.0 / 0.0,
                                        -1.0 / 0.0,
                                        3.4028234663852886e38};
        lua_pushnumber(L, kEdges[Pick(sizeof(kEdges) / sizeof(kEdges[0]))]);
        break;
      }
      case 1:
        lua_pushnumber(L, static_cast<double>(static_cast<int64_t>(rng_()) >> Pick(64)));
        break;
      case 2:
        lua_pushnumber(L, std::uniform_real_distribution<double>(-1e9, 1e9)(rng_));
        break;
      case 3:
        lua_pushboolean(L, Pick(2));
        break;
      case 4:
      case 5: {
        static const size_t kLens[] = {0, 1, 31, 32, 33, 255, 256, 65535, 65536};
        size_t len = Pick(4) == 0 ? kLens[Pick(9)] : Pick(40);
        // Random bytes up front, then a repeated filler: the header boundaries are what matter
        // for long strings, and generating 64 KiB of randomness per string is slow.
        std::string s(len, static_cast<char>(Pick(256)));
        for (size_t i = 0; i < len && i < 64; ++i) s[i] = static_cast<char>(Pick(256));
        lua_pushlstring(L, s.data(), s.size());
        break;
      }
      case 6:
      case 7: {  // array
        lua_newtable(L);
        int n = static_cast<int>(Pick(20));
        for (int i = 1; i <= n; ++i) {
          Push(L, depth + 1);
          lua_rawseti(L, -2, i);
        }
        break;
      }
      default: {  // map with assorted key types
        lua_newtable(L);
        int n = static_cast<int>(Pick(12));
        for (int i = 0; i < n; ++i) {
          switch (Pick(4)) {
            case 0:
              lua_pushfstring(L, "k%d", static_cast<int>(Pick(100)));
              break;
            case 1:
              lua_pushnumber(L, static_cast<double>(Pick(40)) - 5);
              break;
            case 2:
              lua_pushnumber(L, 0.5 + static_cast<double>(Pick(10)));
              break;
            default:
              lua_pushboolean(L, Pick(2));
              break;
          }
          Push(L, depth + 1);
          lua_rawset(L, -3);
        }
        break;
      }
    }
  }

  uint32_t Pick(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  std::mt19937& rng() { return rng_; }

 private:
  std::mt19937 rng_;
};

// Deep equality of the values at absolute stack indexes a and b.
bool DeepEqual(lua_State* L, int a, int b) {
  if (lua_type(L, a) != lua_type(L, b)) return false;
  if (lua_type(L, a) != LUA_TTABLE) return lua_rawequal(L, a, b) != 0;
  // Every key of a must map to an equal value in b, and the key counts must agree.
  int count_a = 0, count_b = 0;
  lua_pushnil(L);
  while (lua_next(L, a)) {
    ++count_a;
    int value = lua_gettop(L);
    lua_pushvalue(L, value - 1);
    lua_rawget(L, b);
    bool same = DeepEqual(L, value, lua_gettop(L));
    lua_pop(L, 2);
    if (!same) {
      lua_pop(L, 1);
      return false;
    }
  }
  lua_pushnil(L);
  while (lua_next(L, b)) {
    ++count_b;
    lua_pop(L, 1);
  }
  return count_a == count_b;
}

TEST_F(LuaLibsTest, RandomizedRoundTrip) {
  RandomValues gen(0x601b1u);
  for (int iter = 0; iter < 2000; ++iter) {
    lua_settop(L_, 0);
    int nvalues = 1 + static_cast<int>(gen.Pick(4));
    lua_getglobal(L_, "cmsgpack");
    lua_getfield(L_, 1, "pack");
    for (int i = 0; i < nvalues; ++i) gen.Push(L_, 0);
    // Keep copies of the originals below the call.
    for (int i = 0; i < nvalues; ++i) lua_pushvalue(L_, 3 + i);
    for (int i = 0; i < nvalues; ++i) lua_insert(L_, 2);
    ASSERT_EQ(lua_pcall(L_, nvalues, 1, 0), 0) << lua_tostring(L_, -1);
    // Stack: cmsgpack, originals..., packed
    lua_getfield(L_, 1, "unpack");
    lua_insert(L_, -2);
    ASSERT_EQ(lua_pcall(L_, 1, LUA_MULTRET, 0), 0)
        << "iteration " << iter << ": " << lua_tostring(L_, -1);
    ASSERT_EQ(lua_gettop(L_), 1 + 2 * nvalues) << "iteration " << iter;
    for (int i = 0; i < nvalues; ++i) {
      EXPECT_TRUE(DeepEqual(L_, 2 + i, 2 + nvalues + i)) << "iteration " << iter << " value " << i;
    }
  }
}

TEST_F(LuaLibsTest, RandomizedStreamingMatchesUnpack) {
  // Decoding object by object with unpack_one must see what unpack sees, and end at -1.
  RandomValues gen(77u);
  for (int iter = 0; iter < 300; ++iter) {
    lua_settop(L_, 0);
    lua_getglobal(L_, "cmsgpack");
    lua_getfield(L_, 1, "pack");
    int n = 1 + static_cast<int>(gen.Pick(6));
    for (int i = 0; i < n; ++i) gen.Push(L_, 2);
    ASSERT_EQ(lua_pcall(L_, n, 1, 0), 0);
    int packed = lua_gettop(L_);
    lua_Integer offset = 0;
    int decoded = 0;
    while (offset != -1) {
      lua_getfield(L_, 1, "unpack_one");
      lua_pushvalue(L_, packed);
      lua_pushinteger(L_, offset);
      ASSERT_EQ(lua_pcall(L_, 2, 2, 0), 0) << lua_tostring(L_, -1);
      offset = lua_tointeger(L_, -2);
      lua_pop(L_, 2);
      ++decoded;
      ASSERT_LE(decoded, n);
    }
    EXPECT_EQ(decoded, n);
  }
}

TEST_F(LuaLibsTest, RandomGarbageNeverCrashesUnpack) {
  std::mt19937 rng(12345u);
  int errors = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string s(rng() % 24, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 256);
    lua_settop(L_, 0);
    lua_getglobal(L_, "cmsgpack");
    lua_getfield(L_, 1, iter % 3 == 0 ? "unpack" : "unpack_one");
    lua_pushlstring(L_, s.data(), s.size());
    if (lua_pcall(L_, 1, LUA_MULTRET, 0) != 0) {
      std::string msg = lua_tostring(L_, -1);
      EXPECT_TRUE(msg == "Missing bytes in input." || msg == "Bad data format in input." ||
                  msg == "table index is nil" || msg == "table index is NaN")
          << msg;
      ++errors;
    }
  }
  EXPECT_GT(errors, 0);  // The generator does hit the error paths.
}

TEST_F(LuaLibsTest, RandomizedStructRoundTrip) {
  std::mt19937 rng(4242u);
  const char* kInts[] = {"b", "B", "h", "H", "i", "I", "l", "i3", "I5", "i8", "I2"};
  for (int iter = 0; iter < 1000; ++iter) {
    std::string fmt = (rng() % 2) ? ">" : "<";
    if (rng() % 2) fmt += "!" + std::to_string(1 << (rng() % 4));
    std::string args;
    std::string expect;
    int fields = 1 + static_cast<int>(rng() % 6);
    for (int f = 0; f < fields; ++f) {
      if (!args.empty()) {
        args += ", ";
        expect += ",";
      }
      switch (rng() % 4) {
        case 0: {
          std::string opt = kInts[rng() % (sizeof(kInts) / sizeof(kInts[0]))];
          fmt += opt;
          bool is_signed = std::islower(static_cast<unsigned char>(opt[0])) != 0;
          int size = opt == "b" || opt == "B"   ? 1
                     : opt == "h" || opt == "H" ? 2
                     : opt.size() > 1           ? opt[1] - '0'
                     : opt == "l"               ? 8
                                                : 4;
          int bits = 8 * size - (is_signed ? 1 : 0) - (size == 8 ? 12 : 0);
          int64_t v = static_cast<int64_t>(rng() % (1ull << (bits > 31 ? 31 : bits)));
          if (is_signed && rng() % 2) v = -v;
          args += std::to_string(v);
          expect += std::to_string(v);
          break;
        }
        case 1:
          fmt += "d";
          args += "0.125";
          expect += "0.125";
          break;
        case 2:
          fmt += "s";
          args += "'str" + std::to_string(f) + "'";
          expect += "str" + std::to_string(f);
          break;
        default:
          fmt += "c3";
          args += "'xyz'";
          expect += "xyz";
          break;
      }
    }
    std::string code = "local s = struct.pack('" + fmt + "', " + args +
                       ") local r = {struct.unpack('" + fmt +
                       "', s)} "
                       "local n = table.remove(r) assert(n == #s + 1) return join(unpack(r))";
    EXPECT_EQ(Eval(code), expect) << fmt << " / " << args;
  }
}

}  // namespace
}  // namespace goblin
