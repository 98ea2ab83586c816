"""The published advisories against Redis's embedded Lua, each sent to a running goblin-server as a
client would send it: the reply is an error (or the right answer), the server stays up, and the
next script, another client's, runs in an unchanged sandbox. Where Debian's redis-server 7.0 is
fixed too, its reply is the expected one; where it is still exposed, the test says so and checks
Goblin alone. tests/unit/lua_sandbox_test.cc holds the same triggers in-process (run under ASan
by make test-sanitize); bench/hostile_scripts.py the ones that need several gigabytes."""

from __future__ import annotations

import sys

import pytest
import redis

SIMPLE_SCRIPTS = [
    ("return ('x'):upper()", b"X"),
    ("return string.format('%d-%s', 7, 'z')", b"7-z"),
    ("return cjson.encode({1, 2})", b"[1,2]"),
    ("return bit.band(12, 10)", 8),
    ("return struct.pack('>H', 258)", b"\x01\x02"),
    ("return #cmsgpack.pack({1, 2, 3})", 4),
]


def assert_sandbox_intact(client):
    """The server answers, and a fresh connection's scripts see the libraries as Redis gives them."""
    assert client.ping()
    other = redis.Redis(connection_pool=client.connection_pool)
    for body, expected in SIMPLE_SCRIPTS:
        assert other.eval(body, 0) == expected, body


def assert_error(client, body, message, *args):
    with pytest.raises(redis.exceptions.ResponseError) as raised:
        client.eval(body, *args) if args else client.eval(body, 0)
    assert message in str(raised.value), str(raised.value)
    return str(raised.value)


@pytest.fixture
def ref(reference_server):
    client = redis.Redis(unix_socket_path=None, host="127.0.0.1", port=reference_server.port)
    client.flushall()
    client.script_flush()
    yield client
    client.close()


def test_cve_2024_31449_bit_tohex_with_the_most_negative_width(r):
    # Debian's redis-server 7.0.15 predates the fix (its LuaBitOp writes past its buffer): Goblin
    # alone is checked, against the fixed Redis's answer.
    assert r.eval("return bit.tohex(65535, -2147483648)", 0) == b"0000FFFF"
    assert r.eval("return bit.tohex(1, -2147483648)", 0) == b"00000001"
    assert_sandbox_intact(r)


@pytest.mark.parametrize("body", [
    "return {unpack({1,2,3}, -2, 2147483647)}",
    "return {unpack({1,2,3}, 0, 2147483647)}",
    "return {unpack({1,2,3}, -2147483648, -2)}",
    "return {unpack({1,2,3}, -2147483648, 2147483647)}",
    "return pcall(unpack, {}, -2147483648, 2147483647)",
])
def test_cve_2025_46817_unpack_ranges_too_wide_to_count(r, body):
    if body.startswith("return pcall"):
        assert r.eval(body, 0) is None   # pcall's false, then the message: RESP2 reads false as nil
    else:
        assert_error(r, body, "too many results to unpack")
    assert r.eval("return select('#', unpack({}, -2147483648, -2147483646))", 0) == 3
    assert_sandbox_intact(r)


def test_cve_2025_46818_string_metatable_is_read_only(r, ref):
    attack = "getmetatable('').__index = function(s, k) redis.call('SET', 'planted', 1) end"
    for client in (r, ref):
        text = assert_error(client, attack, "Attempt to modify a readonly table")
        assert text.startswith("user_script:1: Attempt to modify a readonly table script: ")
        assert client.eval("return ('victim'):upper()", 0) == b"VICTIM"
        assert client.exists("planted") == 0
    assert_error(r, "getmetatable('').__index.upper = tostring", "Attempt to modify a readonly table")
    assert_error(r, "rawset(getmetatable(''), '__index', {})", "Attempt to modify a readonly table")
    for value in ("nil", "123.222", "true", "function() end"):
        for client in (r, ref):
            assert_error(client, f"getmetatable({value}).__index = 1", "attempt to index a nil value")
    assert_sandbox_intact(r)


def test_cve_2025_46818_function_libraries_share_no_metatable(r):
    r.function_load("#!lua name=attacker\n"
                    "redis.register_function('plant', function() "
                    "getmetatable('').__index = function() return 'planted' end end)")
    r.function_load("#!lua name=victim\n"
                    "redis.register_function('shout', function(keys, args) return args[1]:upper() end)")
    with pytest.raises(redis.exceptions.ResponseError, match="Attempt to modify a readonly table"):
        r.fcall("plant", 0)
    assert r.fcall("shout", 0, "quiet") == b"QUIET"
    r.function_flush()


def test_cve_2025_46819_long_brackets(r, ref):
    for client in (r, ref):
        assert client.eval("return #loadstring('return [' .. string.rep('=', 100000) .. '[x]' "
                           ".. string.rep('=', 100000) .. ']')()", 0) == 1
        assert client.eval("return select(2, loadstring('return [==x'))", 0) == \
            b"[string \"return [==x\"]:1: invalid long string delimiter near '[=='"
    assert_sandbox_intact(r)


def test_cve_2025_49844_chunk_name_survives_a_collection_while_parsing(r, ref):
    body = ("local n = 0 local f = load(function() n = n + 1 "
            "if n == 1 then collectgarbage('collect') return 'error(\"boom\")' end end) "
            "return select(2, pcall(f))")
    for client in (r, ref):
        assert client.eval(body, 0) == b"(load):1: boom"
    assert_sandbox_intact(r)


def test_cve_2024_46981_script_flush_after_the_collector_was_stopped(r):
    r.eval("collectgarbage('stop') local t = {} for i = 1, 100000 do t[i] = {i} end return 1", 0)
    r.eval("collectgarbage('restart') collectgarbage('step') return 1", 0)
    r.eval("collectgarbage('stop') return 1", 0)
    r.script_flush()
    r.function_load("#!lua name=gc\nredis.register_function('stop', function() "
                    "collectgarbage('stop') return 1 end)")
    assert r.fcall("stop", 0) == 1
    r.function_flush()
    assert_error(r, "return newproxy(true)", "nonexistent global variable 'newproxy'")
    assert_sandbox_intact(r)


def test_cve_2022_24834_cjson_encode_of_a_string_near_2_gb_escaped(r, server):
    # (2^31 - 2) / 6 bytes: the worst-case escaped length wrapped a 32-bit int. Debian's
    # redis-server 7.0.15 has the fix too; the 358 MB string makes one run enough, and a slow
    # (sanitized, shared) machine may take a while over it.
    length = (0x80000000 - 2) // 6
    patient = redis.Redis(unix_socket_path=server.unix_path, socket_timeout=300)
    patient.config_set("lua-memory-limit", 0)   # string.rep's buffer and the result pass 1 GB
    try:
        assert patient.eval("return #cjson.encode(string.rep('a', tonumber(ARGV[1])))", 0, length) == length + 2
    finally:
        patient.config_set("lua-memory-limit", "1gb")
        patient.close()
    assert r.eval("return #cjson.encode(string.rep('\\1', 1000))", 0) == 6002
    assert_sandbox_intact(r)


def test_cve_2022_24735_no_script_changes_what_another_runs(r, ref):
    for attack in ("redis.call = function() return 1 end", "string.format = nil",
                   "cjson.encode = nil", "bit.lshift = nil", "_G.x = 1", "x = 1",
                   "setmetatable(_G, {})", "rawset(_G, 'x', 1)"):
        for client in (r, ref):
            assert_error(client, attack, "Attempt to modify a readonly table")
    victim = "return redis.call('GET', KEYS[1])"
    sha = r.script_load(victim)
    for client in (r, ref):
        # The body is compiled alone: it cannot close a wrapper and define the victim's function.
        assert_error(client, f"return 1 end function f_{sha}() return 'planted'", "Error compiling script")
    r.set("k", "v")
    assert r.evalsha(sha, 1, "k") == b"v"
    assert_sandbox_intact(r)


def test_cve_2021_32626_values_deeper_than_the_lua_stack(r, raw, ref):
    raw.send_command("EVAL", "local a = {} local b = {a} a[1] = b return a", "0")
    depth = sys.getrecursionlimit()
    sys.setrecursionlimit(20000)   # the reader recurses once per level of the reply
    try:
        reply = raw.read_reply().raw
    finally:
        sys.setrecursionlimit(depth)
    assert reply.startswith(b"*1\r\n*1\r\n") and reply.endswith(b"-ERR reached lua stack limit\r\n")
    for client in (r, ref):
        assert client.eval("local a = {} for i = 1, 7999 do a[i] = 1 end "
                           "return redis.call('LPUSH', KEYS[1], unpack(a))", 1, "l") == 7999
        client.delete("l")
    assert_sandbox_intact(r)


@pytest.mark.parametrize("body, message", [
    ("return struct.pack('>I2147483648', 10)", "integral size"),
    ("return struct.pack('c99999999999999999999', 'x')", "integral size overflow"),
    ("return struct.unpack('b', 'x', 0)", "offset must be 1 or greater"),
    ("return struct.unpack('b', 'x', -1099511627776)", "data string too short"),
    ("return struct.unpack('i4', 'abc')", "data string too short"),
    ("return struct.unpack('c2147483647', 'x')", "data string too short"),
])
def test_cve_2020_14147_and_2018_11219_struct_sizes_and_offsets(r, ref, body, message):
    for client in (r, ref):
        assert_error(client, body, message)
    assert_sandbox_intact(r)


def test_cve_2018_11218_cmsgpack_many_arguments_and_deep_nesting(r, ref):
    for client in (r, ref):
        assert client.eval("local t = {} for i = 1, 3000 do t[i] = i end "
                           "return #cmsgpack.pack(unpack(t))", 0) == 8618
        assert_error(client, "local t = {} for i = 1, 7000 do t[i] = i end return cmsgpack.pack(unpack(t))",
                     "Too many arguments for MessagePack pack.")
        reply = client.eval("local ok, r = pcall(cmsgpack.unpack, string.rep('\\145', 100000) .. '\\1') "
                            "return tostring(ok)", 0)
        assert reply in (b"true", b"false")
    assert_sandbox_intact(r)


def test_cve_2015_4335_bytecode_is_never_loaded(r, ref):
    for client in (r, ref):
        assert_error(client, "return loadstring(string.dump(function() return 1 end))()",
                     "attempt to call a nil value")
        error = client.eval("return select(2, loadstring(string.dump(function() return 1 end)))", 0)
        assert error.endswith(b"unexpected symbol near 'char(27)'")
    with pytest.raises(redis.exceptions.ResponseError, match="Error compiling script"):
        r.eval(b"\x1bLuaQ\x00\x01\x04\x08\x04\x08\x00", 0)
    assert_sandbox_intact(r)


def test_many_long_strings_that_differ_late_hash_apart(r):
    # 20,000 strings of 1,000 bytes that differ only in their last characters: with Lua's
    # sampled hash they all shared one bucket. The count is what is checked; the time is
    # bench/hostile_scripts.py's to measure.
    body = ("local base = string.rep('x', 990) local t = {} "
            "for i = 1, 20000 do t[i] = base .. string.format('%010d', i) end "
            "local seen = {} local n = 0 for i = 1, #t do if not seen[t[i]] then seen[t[i]] = true n = n + 1 end end "
            "return n")
    assert r.eval(body, 0) == 20000
    assert_sandbox_intact(r)
