"""EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL side by side with redis-server, in RESP2 and RESP3:
the conversions between Lua and RESP in both directions, Redis's error texts (raised and returned,
pcall, error tables), the sandbox, shebang flags and the *_RO refusals, script effects on keys of
every type, and the cjson, cmsgpack, bit and struct libraries' edge cases.

Where the reference (7.0) and Redis 7.2 differ, the 7.2 behaviour is asserted by the integration
suite (tests/integration/test_scripting.py) and left out here: blocking commands inside scripts
(7.0 refuses them), the text for a bad function name, the frozen clock, FUNCTION DUMP's RDB version.
Each Op resets its keys, scripts and libraries, so a failure shrinks to one Op.
"""

import random

import pytest

from support.differ import MULTISET, SCORES, Comparator, Op, Step


class FunctionListing(Comparator):
    """FUNCTION LIST: Redis lists libraries, and functions inside them, in hash order. Both
    replies are compared with every list of aggregates sorted."""

    name = "function-listing"

    @staticmethod
    def canonical(reply):
        if reply.kind in "*~>" and reply.value is not None:
            items = [FunctionListing.canonical(e) for e in reply.value]
            if items and all(isinstance(i, tuple) for i in items):
                items.sort(key=repr)
            return (reply.kind, tuple(items))
        if reply.kind == "%":
            return ("%", tuple((FunctionListing.canonical(k), FunctionListing.canonical(v))
                               for k, v in reply.value))
        return reply.raw

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or self.canonical(g) != self.canonical(r):
            return "different listings (compared with lists sorted)"
        return None


LISTING = FunctionListing()


def S(*args, compare=None):
    data = tuple(a if isinstance(a, bytes) else str(a).encode() for a in args)
    return Step(data) if compare is None else Step(data, compare)


def EVAL(script, *keys_then_args, keys=0):
    return S("EVAL", script, keys, *keys_then_args)


KEYS = ["k", "s", "h", "l", "z", "st", "cnt", "a", "b", "c"]


def op(name, *steps):
    return Op([S("FUNCTION", "FLUSH"), S("SCRIPT", "FLUSH"), S("SELECT", "0"), S("DEL", *KEYS)] + list(steps),
              name)


@pytest.fixture
def check(corpus):
    return lambda name, ops: corpus("scripting", name, ops)


# ---- Lua to RESP ---------------------------------------------------------------------------------

RETURNS = [
    "return 1", "return -7", "return 3.99", "return -3.99", "return 1e20", "return -1e20", "return 0/0",
    "return 2^53 + 1", "return 'str'", "return ''", "return true", "return false", "return nil", "return",
    "return {}", "return {1, 2, 3}", "return {1, 2, nil, 4}", "return {1, 'a', true, false, {2, {3}}}",
    "return {a = 1}", "return {[0] = 'z', 'a'}", "return {[1] = 'a', [3] = 'c'}",
    "return {ok = 'fine'}", "return {ok = 'a\\r\\nb'}", "return {err = 'My Error'}", "return {err = '-My Error'}",
    "return {err = ''}", "return {err = 'a\\nb'}", "return {ok = 'a', err = 'b'}", "return {err = 1}",
    "return {err = {}}", "return {ok = 1}", "return {1, {err = 'inner'}, 3}", "return {1, {ok = 'inner'}, 3}",
    "return redis.error_reply('My Error')", "return redis.error_reply('-My Error')",
    "return redis.error_reply('-ERR My Error')", "return redis.error_reply('boom')", "return redis.error_reply('')",
    "return redis.error_reply('-')", "return redis.error_reply('x\\ny')", "return redis.error_reply()",
    "return redis.error_reply(1)", "return redis.status_reply('FINE')", "return redis.status_reply('-FINE')",
    "return redis.status_reply('')", "return redis.status_reply(1)", "return {redis.error_reply('E inner')}",
    "return {big_number = '123456789012345678901234567890'}", "return {big_number = 'a\\nb'}",
    "return {map = {}}", "return {map = {a = 1}}", "return {set = {}}", "return {set = {x = true}}",
    "return {map = {a = {1, 2}}}", "return {verbatim_string = {format = 'txt', string = 'hello'}}",
    "return {verbatim_string = {format = 'txt'}}", "return function() end", "return coroutine.create(function() end)",
]


def test_lua_values_reach_the_client_as_redis_converts_them(check):
    ops = []
    for script in RETURNS:
        ops.append(op(script, EVAL(script)))
    ops.append(op("doubles", EVAL("return {double = 3.5}"), EVAL("return {double = -0.25}"),
                  S("EVAL", "return {double = 1e300}", "0", compare=SCORES)))
    ops.append(op("double text", S("EVAL", "return {double = 0.1}", "0", compare=SCORES)))
    ops.append(op("booleans under setresp 3", EVAL("redis.setresp(3) return true"),
                  EVAL("redis.setresp(3) return false"), EVAL("redis.setresp(3) return {true, false}")))
    ops.append(op("self reference", EVAL("local t = {} t[1] = t return #tostring(t) > 0")))
    check("lua_values", ops)


# ---- RESP to Lua -----------------------------------------------------------------------------------

def inspect(expr):
    """A script that describes a Lua value in text both servers must spell the same."""
    return ("local function d(v) local t = type(v) if t == 'table' then local keys = {} "
            "for k in pairs(v) do keys[#keys + 1] = tostring(k) end table.sort(keys) local out = {} "
            "for _, k in ipairs(keys) do local val = v[k] if val == nil then val = v[tonumber(k)] end "
            "out[#out + 1] = k .. '=' .. d(val) end return '{' .. table.concat(out, ',') .. '}' end "
            "return t .. ':' .. tostring(v) end "
            "return d(" + expr + ")")


CALLS = [
    "redis.call('set', 'k', 'v')", "redis.call('get', 'k')", "redis.call('get', 'nokey')", "redis.call('incr', 'cnt')",
    "redis.call('ping')", "redis.pcall('incr', 's')", "redis.call('hgetall', 'h')", "redis.call('smembers', 'nokey')",
    "redis.call('lrange', 'l', 0, -1)", "redis.call('zrange', 'z', 0, -1, 'withscores')", "redis.call('zscore', 'z', 'a')",
    "redis.call('exists', 'k', 'nokey')", "redis.call('type', 'h')", "redis.call('hrandfield', 'nokey')",
    "redis.call('lpop', 'nokey')", "redis.call('mget', 'k', 'nokey')", "redis.pcall('nosuch')",
    "redis.pcall()", "redis.pcall({})", "redis.pcall('get')",
]


def fill():
    return [S("SET", "s", "text"), S("HSET", "h", "f", "1"), S("RPUSH", "l", "x", "y"), S("ZADD", "z", "1.5", "a"),
            S("SADD", "st", "m")]


def test_replies_reach_lua_as_redis_converts_them(check):
    ops = []
    for call in CALLS:
        ops.append(op(call, *fill(), EVAL(inspect(call))))
        ops.append(op(call + " resp3", *fill(), EVAL("redis.setresp(3) " + inspect(call))))
        ops.append(op(call + " returned", *fill(), EVAL("return " + call)))
    ops.append(op("resp3 doubles and maps", *fill(),
                  EVAL("redis.setresp(3) local r = redis.call('zscore', 'z', 'a') return {r.double == 1.5, type(r)}"),
                  EVAL("redis.setresp(3) return redis.call('hgetall', 'h')"),
                  EVAL("redis.setresp(3) return redis.call('zrange', 'z', 0, -1, 'withscores')"),
                  EVAL("redis.setresp(3) return redis.call('smembers', 'st')")))
    check("replies_to_lua", ops)


# ---- errors ---------------------------------------------------------------------------------------

ERRORS = [
    "return redis.call('nosuch')", "return redis.call('incr', 'a', 'b')", "return redis.call('incr', 's')",
    "return redis.call()", "return redis.call({})", "return redis.call('get', nil)", "return redis.call('get', true)",
    "return redis.call('subscribe', 'x')", "return redis.call('eval', 'return 1', 0)", "return redis.call('multi')",
    "return redis.call('script', 'flush')", "return redis.call('function', 'flush')",
    "return x.y", "a = 1", "_G.a = 1", "rawset(_G, 'a', 5)", "setmetatable(_G, nil)", "rawset(string, 'x', 1)",
    "local t = setmetatable({}, {__index = function() return 7 end}) return t.x", "return rawset({}, 'a', 1).a",
    "return {setmetatable({}, {__metatable = 'locked'}) ~= nil, pcall(setmetatable, "
    "setmetatable({}, {__metatable = 1}), {})}", "redis = 1", "redis.call = 1", "string.x = 1", "return print",
    "return debug", "return require", "return loadfile", "return dofile", "return io",
    "error('boom')", "error('x', 0)", "error(1)", "error()", "error(nil)", "error({err = 'boom'})",
    "error({err = 'CODE msg'})", "error(redis.error_reply('msg'))", "error('a\\nb')", "error({err = 1})",
    "local x = nil + 1", "assert(false)", "assert(false, 'why')", "return 1 +", "return '",
    "return redis.sha1hex()", "redis.log()", "redis.log('a', 'x')", "redis.log(9, 'x')", "redis.setresp()",
    "redis.setresp(4)", "redis.set_repl(9)", "return redis.acl_check_cmd('nosuch')", "return redis.acl_check_cmd()",
    "return math.random(1, 2, 3)", "return math.random(0)", "return cjson.decode('x')", "return cjson.decode('{')",
    "return cmsgpack.unpack('\\196')", "return struct.pack('>i9', 1)", "return struct.unpack('i4', 'ab')",
    "return {pcall(redis.call, 'nosuch')}", "return {pcall(error, {err = 'T x'})}", "return {pcall(error, 'm')}",
    "local ok, e = pcall(redis.call, 'incr', 's') return e", "return redis.pcall('incr', 's').err",
    "return {xpcall(function() error('x') end, function(e) return e end)}",
    "return loadstring('return 1')()", "return loadstring('x +')", "return type(load)",
    "local f = loadstring('return 1 +') return f == nil",
]


def test_errors_carry_redis_texts(check):
    ops = [op(script, S("SET", "s", "text"), EVAL(script)) for script in ERRORS]
    check("errors", ops)


def test_eval_arguments_and_evalsha(check):
    body = "return {KEYS[1], ARGV[1], #KEYS, #ARGV}"
    sha = __import__("hashlib").sha1(body.encode()).hexdigest()
    ops = [
        op("numkeys", S("EVAL", body, "2", "k1", "k2", "a1"), S("EVAL", body, "0"), S("EVAL", body, "3", "a", "b"),
           S("EVAL", body, "-1"), S("EVAL", body, "x"), S("EVAL", body, "1.5", "k"), S("EVAL", body)),
        op("evalsha", S("EVALSHA", sha, "0"), S("SCRIPT", "LOAD", body), S("EVALSHA", sha, "1", "k", "a"),
           S("EVALSHA", sha.upper(), "0"), S("EVALSHA", "nosuch", "0"), S("EVALSHA", "nosuch", "9"),
           S("EVALSHA", "f" * 40, "9"), S("EVALSHA", "f" * 40, "0"), S("EVALSHA", sha, "5")),
        op("script exists flush", S("SCRIPT", "EXISTS", sha, "f" * 40), S("SCRIPT", "LOAD", body),
           S("SCRIPT", "EXISTS", sha, sha.upper(), "x"), S("SCRIPT", "FLUSH", "ASYNC"), S("SCRIPT", "EXISTS", sha),
           S("SCRIPT", "FLUSH", "SYNC"), S("SCRIPT", "FLUSH", "foo"), S("SCRIPT", "FLUSH", "SYNC", "x"),
           S("SCRIPT", "EXISTS"), S("SCRIPT", "LOAD", "return 1 +"), S("SCRIPT", "LOAD"), S("SCRIPT", "KILL"),
           S("SCRIPT", "HELP"), S("SCRIPT", "NOSUCH")),
        op("eval caches", EVAL(body), S("SCRIPT", "EXISTS", sha)),
        op("getkeys", S("COMMAND", "GETKEYS", "EVAL", body, "2", "a", "b", "c"),
           S("COMMAND", "GETKEYS", "EVAL", body, "0", "a"), S("COMMAND", "GETKEYS", "EVAL", body, "3", "a"),
           S("COMMAND", "GETKEYS", "EVALSHA_RO", sha, "1", "a"), S("COMMAND", "GETKEYS", "FCALL", "f", "1", "a", "b"),
           S("COMMAND", "GETKEYS", "FCALL_RO", "f", "-1", "a"), S("COMMAND", "GETKEYS", "EVAL", body, "x")),
        op("binary arguments", S("EVAL", "return {ARGV[1], #ARGV[1]}", "0", b"a\x00b\xff")),
        op("numbers as arguments", EVAL("redis.call('set', 'k', 0.1) return redis.call('get', 'k')"),
           EVAL("redis.call('set', 'k', 1e20) return redis.call('get', 'k')"),
           EVAL("redis.call('set', 'k', -0.0) return redis.call('get', 'k')"),
           EVAL("redis.call('set', 'k', 1/0) return redis.call('get', 'k')"),
           EVAL("redis.call('set', 'k', 3) return redis.call('get', 'k')")),
    ]
    check("eval_arguments", ops)


# ---- the sandbox -------------------------------------------------------------------------------------

GLOBALS = ["loadstring", "collectgarbage", "coroutine", "unpack", "gcinfo", "load", "pcall", "xpcall", "select",
           "rawset", "rawget", "rawequal", "next", "ipairs", "pairs", "tonumber", "tostring", "type", "assert",
           "error", "getmetatable", "setmetatable", "_G", "_VERSION", "bit", "cjson", "cmsgpack", "struct",
           "string", "table", "math", "redis", "KEYS", "ARGV", "__redis__err__handler"]
REDIS_FIELDS = ["call", "pcall", "log", "setresp", "sha1hex", "error_reply", "status_reply", "set_repl",
                "acl_check_cmd", "breakpoint", "debug", "replicate_commands", "register_function", "LOG_DEBUG",
                "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REPL_NONE", "REPL_AOF", "REPL_SLAVE", "REPL_REPLICA",
                "REPL_ALL", "nosuch"]


def test_the_sandbox(check):
    ops = [op("global " + name, EVAL(f"return type({name})")) for name in GLOBALS]
    ops += [op("redis." + name, EVAL(f"return tostring(redis.{name})" if name.isupper() else
                                     f"return type(redis.{name})")) for name in REDIS_FIELDS]
    ops += [
        op("math.random with a seed", EVAL("math.randomseed(7) return {math.random(1000), math.random(1, 5), "
                                           "tostring(math.random())}"),
           EVAL("math.randomseed(42) local t = {} for i = 1, 20 do t[i] = math.random(100) end return t")),
        op("helpers", EVAL("return redis.sha1hex('')"), EVAL("return redis.sha1hex('abc')"),
           EVAL("return redis.sha1hex(12)"), EVAL("return redis.replicate_commands()"),
           EVAL("return redis.breakpoint()"), EVAL("return redis.debug('x')"),
           EVAL("return redis.acl_check_cmd('get', 'x')"), EVAL("return redis.log(redis.LOG_WARNING, 'from a test')"),
           EVAL("return redis.set_repl(redis.REPL_ALL)")),
        op("string methods", EVAL("return ('x'):rep(3) .. string.format('%05.1f|%s|%d', 3.14159, 'a', 42)")),
        op("library contents", EVAL("local t = {} for k in pairs(string) do t[#t + 1] = k end "
                                    "table.sort(t) return t"),
           EVAL("local t = {} for k in pairs(table) do t[#t + 1] = k end table.sort(t) return t"),
           EVAL("local t = {} for k in pairs(bit) do t[#t + 1] = k end table.sort(t) return t")),
        op("select stays in the script", S("SELECT", "0"),
           EVAL("redis.call('select', 3) redis.call('set', 'k', 'in3') return redis.call('get', 'k')"),
           S("GET", "k"), S("SELECT", "3"), S("GET", "k"), S("DEL", "k"), S("SELECT", "0")),
        op("tostring of numbers", EVAL("return {tostring(1/3), tostring(1e100), tostring(-0.0), tostring(2^63)}")),
    ]
    check("sandbox", ops)


# ---- flags and read-only runs -------------------------------------------------------------------------

def test_shebang_flags_and_read_only_commands(check):
    write = "redis.call('set', 'k', '1') return redis.call('get', 'k')"
    read = "return redis.call('get', 'k')"
    ops = [
        op("shebangs", EVAL("#!lua\nreturn 1"), EVAL("#!lua flags=no-writes\nreturn 1"), EVAL("#!lua flags=\nreturn 1"),
           EVAL("#!lua  flags=no-writes\nreturn 1"), EVAL("#!lua flags=bad\nreturn 1"),
           EVAL("#!lua foo=bar\nreturn 1"), EVAL("#!js\nreturn 1"), EVAL("#!luax\nreturn 1"), EVAL("#!lua"),
           EVAL("#!lua name=x\nreturn 1"), EVAL("#!lua\nreturn x"), EVAL("#!\nreturn 1"),
           EVAL("#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1"),
           EVAL("#!lua flags=No-Writes\nreturn 1")),
        op("no-writes", EVAL("#!lua flags=no-writes\n" + write), EVAL("#!lua flags=no-writes\n" + read),
           EVAL("#!lua flags=no-writes\nreturn redis.call('publish', 'ch', 'm')"),
           EVAL("#!lua flags=no-writes\nreturn redis.pcall('del', 'k')")),
        op("eval_ro", S("EVAL_RO", write, "0"), S("EVAL_RO", read, "0"), S("EVAL_RO", "#!lua\nreturn 1", "0"),
           S("EVAL_RO", "#!lua flags=no-writes\n" + read, "0"), S("EVAL_RO", "return redis.call('publish', 'c', 'm')", "0"),
           S("EVAL_RO", "return redis.pcall('set', 'k', 'v')", "0")),
        op("evalsha_ro", S("SCRIPT", "LOAD", write), S("EVALSHA_RO", __import__("hashlib").sha1(write.encode()).hexdigest(), "0"),
           S("GET", "k")),
    ]
    check("flags", ops)


# ---- effects on every type ------------------------------------------------------------------------

def test_scripts_change_keys_of_every_type(check):
    body = """
        redis.call('set', 'k', ARGV[1])
        redis.call('incrby', 'cnt', 5)
        redis.call('hset', 'h', 'f', ARGV[1], 'g', 2)
        redis.call('rpush', 'l', 'a', 'b', ARGV[1])
        redis.call('sadd', 'st', 'm1', 'm2')
        redis.call('zadd', 'z', 1, 'a', 2, 'b')
        redis.call('zincrby', 'z', 3, 'a')
        redis.call('lpop', 'l')
        redis.call('expire', 'k', 100)
        return {redis.call('get', 'k'), redis.call('hget', 'h', 'f'), redis.call('llen', 'l'),
                redis.call('scard', 'st'), redis.call('zrank', 'z', 'a'), redis.call('ttl', 'k')}
    """
    rng = random.Random(1301)
    ops = []
    for i in range(12):
        value = str(rng.randrange(10 ** 6))
        ops.append(op(f"writes {i}", EVAL(body, value), S("GET", "k"), S("HGETALL", "h", compare=MULTISET),
                      S("LRANGE", "l", "0", "-1"), S("SMEMBERS", "st", compare=MULTISET),
                      S("ZRANGE", "z", "0", "-1", "WITHSCORES"), S("GET", "cnt"), S("TYPE", "z")))
    ops.append(op("wrongtype inside", S("SET", "k", "x"), EVAL("return redis.pcall('lpush', 'k', 'a')"),
                  EVAL("return redis.call('hget', 'k', 'f')")))
    ops.append(op("partial writes stay", EVAL("redis.call('set', 'a', '1') error('stop')"), S("GET", "a")))
    ops.append(op("blocking stays out", EVAL("return redis.pcall('subscribe', 'x')")))
    check("effects", ops)


# ---- libraries -----------------------------------------------------------------------------------

LIBRARY_CASES = [
    "return cjson.encode({1, 2, 3})", "return cjson.encode({a = 'x'})", "return cjson.encode('a\"b')",
    "return cjson.encode({})", "return cjson.encode(cjson.null)", "return cjson.encode(1.5)",
    "return cjson.encode({[1] = 1, [3] = 3})", "return cjson.decode('[1,2,{\"a\":null}]')[3].a == cjson.null",
    "return cjson.decode('\"x\"')", "return cjson.decode('12.5') * 2", "return #cjson.decode('[1,2,3]')",
    "return cjson.encode(cjson.decode('{\"a\":[1,2,{\"b\":true}]}'))",
    "return cmsgpack.pack(1, 'a', {1, 2}, {a = 1})", "return {cmsgpack.unpack(cmsgpack.pack(1, 'a', true))}",
    "return cmsgpack.pack(0.5)", "return cmsgpack.pack(-1, -33, 128, 65536, 2^32)", "return cmsgpack.pack({})",
    "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 0)}", "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
    "return bit.band(7, 3)", "return bit.bor(1, 2, 4)", "return bit.bxor(5, 3)", "return bit.lshift(1, 40)",
    "return bit.tohex(255)", "return bit.tohex(-1, 4)", "return bit.bnot(0)", "return bit.tobit(2^32 + 1)",
    "return bit.arshift(-256, 4)", "return bit.rol(1, 33)", "return bit.bswap(0x12345678)",
    "return struct.pack('>I2', 300)", "return struct.pack('<i4', -2)", "return {struct.unpack('>I2', '\\1\\44')}",
    "return struct.size('>i4i8')", "return struct.pack('s', 'ab')", "return {struct.unpack('c2', 'abc')}",
    "return struct.pack('!4 i1 i4', 1, 2)", "return struct.pack('d', 1.5)", "return struct.pack('bBhH', -1, 255, -2, 65535)",
]


def test_bundled_libraries(check):
    ops = [op(script, EVAL(script)) for script in LIBRARY_CASES]
    check("libraries", ops)


# ---- functions ----------------------------------------------------------------------------------

LIB = "#!lua name=lib1\n"


def load(code, *options):
    return S("FUNCTION", "LOAD", *options, code)


def test_function_load_errors(check):
    f1 = "redis.register_function('f1', function(keys, args) return 1 end)"
    ops = [op(code[:40], load(code)) for code in [
        "return 1", "#!lua\nreturn 1", LIB + "return 1", "#!lua name=lib1 foo=bar\n" + f1, "#!js name=lib1\n" + f1,
        "#!lua name=lib1", "#!lua name=a name=b\n" + f1, "#! name=lib1\n" + f1, "#!  lua name=lib1\n" + f1,
        "#!lua  name=lib1\n" + f1, "#!\n" + f1, "#!lua name=lib@1\n" + f1, "#!LUA name=lib1\n" + f1,
        LIB + "return 1 +", LIB + "redis.call('ping')", LIB + "return x", LIB + "x = 1", LIB + "error('boom')",
        LIB + "local s = string.format('%d', 5)", LIB + "redis.setresp(3)",
        LIB + "redis.register_function('f1', function() return 1 end, 1)",
        LIB + "redis.register_function('f1')", LIB + "redis.register_function('f1', 'notfn')",
        LIB + "redis.register_function(1, function() return 1 end)",
        LIB + "redis.register_function()", LIB + "redis.register_function({})",
        LIB + "redis.register_function{function_name='f2'}", LIB + "redis.register_function{callback=function() end}",
        LIB + "redis.register_function{function_name='f2', callback=function() return 1 end, flags={'bad'}}",
        LIB + "redis.register_function{function_name='f2', callback=function() return 1 end, flags='x'}",
        LIB + "redis.register_function{function_name='f2', callback=function() return 1 end, foo=1}",
        LIB + "redis.register_function{function_name=1, callback=function() return 1 end}",
        LIB + "redis.register_function{function_name='f2', callback=1}",
        LIB + "redis.register_function{function_name='f2', callback=function() end, description={}}",
        LIB + "redis.register_function{'f2', function() end}",
        LIB + f1 + "\n" + f1,
        LIB + "redis.log(redis.LOG_NOTICE, 'loading') " + f1,
        LIB + "local v = redis.REDIS_VERSION_NUM " + f1,
        LIB + "local v = redis.sha1hex " + f1,
    ]]
    ops.append(op("load replace", load(LIB + f1), load(LIB + f1), load(LIB + f1, "REPLACE"), load(LIB + f1, "replace"),
                  load("#!lua name=lib2\n" + f1), load(LIB + f1, "FOO"), S("FUNCTION", "LOAD"),
                  load(LIB + f1, "REPLACE", "x")))
    check("function_load_errors", ops)


def test_functions_run_and_list(check):
    code = (LIB + "redis.register_function('f1', function(keys, args) return {keys[1], args[1], #keys} end)\n"
            "redis.register_function{function_name='f2', callback=function(keys, args) "
            "return redis.call('set', keys[1], args[1]) end, description='sets a key'}\n"
            "redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, "
            "flags={'no-writes'}}\n"
            "redis.register_function('bad', function() return KEYS end)\n"
            "redis.register_function('boom', function() error('boom') end)\n"
            "redis.register_function('rw', function(keys) return redis.call('del', keys[1]) end)\n"
            "local helper = function() return redis.call('ping') end\n"
            "redis.register_function('uses_helper', function() return helper() end)\n")
    ops = [
        op("fcall", load(code), S("FCALL", "f1", "1", "k", "a"), S("FCALL", "f2", "1", "k", "v"), S("GET", "k"),
           S("FCALL", "ro", "1", "k"), S("FCALL_RO", "ro", "1", "k"), S("FCALL_RO", "f2", "1", "k", "v"),
           S("FCALL", "bad", "0"), S("FCALL", "boom", "0"), S("FCALL", "uses_helper", "0"),
           S("FCALL", "nosuch", "0"), S("FCALL", "nosuch", "x"), S("FCALL", "f1", "x"), S("FCALL", "f1", "-1"),
           S("FCALL", "f1", "5", "a"), S("FCALL", "f1"), S("FCALL_RO", "rw", "1", "k")),
        op("list", load(code), S("FUNCTION", "LIST", compare=LISTING),
           S("FUNCTION", "LIST", "WITHCODE", compare=LISTING),
           S("FUNCTION", "LIST", "LIBRARYNAME", "lib*", compare=LISTING),
           S("FUNCTION", "LIST", "LIBRARYNAME", "nomatch"),
           S("FUNCTION", "LIST", "LIBRARYNAME"), S("FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
           S("FUNCTION", "LIST", "foo"), S("FUNCTION", "STATS")),
        op("flags order", load(LIB + "redis.register_function{function_name='g', callback=function() return 1 end, "
                                     "flags={'allow-stale', 'no-writes', 'allow-oom'}}"),
           S("FUNCTION", "LIST", compare=LISTING)),
        op("delete and flush", load(code), S("FUNCTION", "DELETE", "lib1"), S("FCALL", "f1", "0"),
           S("FUNCTION", "DELETE", "lib1"), load(code), S("FUNCTION", "FLUSH", "ASYNC"), S("FUNCTION", "LIST"),
           S("FUNCTION", "FLUSH", "foo"), S("FUNCTION", "FLUSH", "SYNC"), S("FUNCTION", "KILL"),
           S("FUNCTION", "HELP"), S("FUNCTION", "NOSUCH"), S("FUNCTION", "DELETE")),
        op("names collide across libraries", load(code),
           load("#!lua name=lib2\nredis.register_function('f1', function() return 2 end)"),
           load("#!lua name=lib2\nredis.register_function('g1', function() return 2 end)"),
           S("FCALL", "g1", "0"), load("#!lua name=lib2\nredis.register_function('f1', function() return 2 end)", "REPLACE")),
        op("restore errors", S("FUNCTION", "RESTORE", "garbage"), S("FUNCTION", "RESTORE", "x", "BADPOLICY"),
           S("FUNCTION", "RESTORE", "x", "FLUSH", "extra")),
    ]
    check("functions", ops)


def test_function_dump_round_trip(pair):
    """DUMP payloads differ in their RDB version byte (7.0 writes 10, so does Goblin; 7.2 writes
    11), so each server restores its own payload and the other's, and the listings must agree."""
    code = LIB + "redis.register_function('f1', function(keys, args) return 'from dump ' .. #args end)"
    connections = [pair.goblin_server.raw(), pair.reference_server.raw()]
    for conn in connections:
        conn.call("FUNCTION", "FLUSH")
        assert conn.call("FUNCTION", "LOAD", code).raw == b"$4\r\nlib1\r\n"
    payloads = [conn.call("FUNCTION", "DUMP").value for conn in connections]
    # Redis may compress the code with LZF, Goblin does not: only the trailer's version agrees.
    assert [p[-10:-8] for p in payloads] == [b"\x0a\x00", b"\x0a\x00"]
    for conn in connections:
        for payload in payloads:
            conn.call("FUNCTION", "FLUSH")
            assert conn.call("FUNCTION", "RESTORE", payload).raw == b"+OK\r\n"
            assert conn.call("FCALL", "f1", "0", "a", "b").value == b"from dump 2"
            assert conn.call("FUNCTION", "RESTORE", payload).raw == b"-ERR Library lib1 already exists\r\n"
            assert conn.call("FUNCTION", "RESTORE", payload, "REPLACE").raw == b"+OK\r\n"
            assert conn.call("FUNCTION", "RESTORE", payload, "FLUSH").raw == b"+OK\r\n"
            corrupt = payload[:-1] + bytes([payload[-1] ^ 1])
            assert conn.call("FUNCTION", "RESTORE", corrupt).raw == \
                b"-ERR DUMP payload version or checksum are wrong\r\n"
        conn.call("FUNCTION", "FLUSH")
        conn.close()
