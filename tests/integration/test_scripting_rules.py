"""Redis's rules for scripts and function libraries, case by case, as redis-server's own suites
(functions.tcl, scripting.tcl) check them: how FUNCTION LOAD and EVAL read their shebang line,
function names, DEBUG RELOAD with libraries, scripts on a stale replica, what getmetatable shows
of the read-only tables, how refused calls inside a script are counted, and the order RESP3 maps
reach Lua in. Every test passes against Debian's redis-server 7.0 too, except those marked."""

from __future__ import annotations

import pytest
import redis

NAME_RULE = "names can only contain letters, numbers, or underscores(_) and must be at least one character long"


def load(client, code, replace=False):
    args = ["FUNCTION", "LOAD"] + (["REPLACE"] if replace else []) + [code]
    return client.execute_command(*args)


def library(name, body="return 1", function=None):
    return f"#!lua name={name}\nredis.register_function('{function or name}', function(KEYS, ARGV) {body} end)"


def error_of(call, *args):
    with pytest.raises(redis.exceptions.ResponseError) as info:
        call(*args)
    return str(info.value)


@pytest.fixture
def fresh(r):
    r.execute_command("FUNCTION", "FLUSH")
    yield r
    r.execute_command("FUNCTION", "FLUSH")
    r.config_set("maxmemory", 0)


# ---- names ---------------------------------------------------------------------------------------

def test_function_names_are_one_namespace_without_case(fresh):
    r = fresh
    assert load(r, library("test", "return 'hello1'")) == b"test"
    assert r.execute_command("FCALL", "TEST", 0) == b"hello1"
    # A failed REPLACE keeps the old library, still found in any case.
    assert error_of(load, r, library("test", "error"), True).startswith("Error compiling function")
    assert r.execute_command("FCALL", "Test", 0) == b"hello1"
    # Another library may not take the name in another case...
    assert error_of(load, r, library("other", function="TEST")) == "Function TEST already exists"
    # ...while library names keep their case.
    assert load(r, library("TEST", function="f2")) == b"TEST"
    assert error_of(r.execute_command, "FUNCTION", "DELETE", "Test") == "Library not found"
    assert r.execute_command("FUNCTION", "DELETE", "TEST") == b"OK"


def test_a_bad_function_name_is_worded_with_the_library_name_rule(fresh):
    # Redis's functionLibCreateFunction words it so; a name is read whole, past a zero byte.
    for name in ("'bad name'", "'test\\0test'", "'test\\0'", "''"):
        assert error_of(load, fresh, f"#!lua name=lib2\nredis.register_function({name}, function() return 1 end)") \
            == "Error registering functions: ERR Library " + NAME_RULE
    assert fresh.execute_command("FUNCTION", "LIST") == []


# ---- shebang lines -------------------------------------------------------------------------------

def test_library_metadata_is_split_as_redis_splits_arguments(fresh):
    r = fresh
    body = "\nredis.register_function('foo', function() return 1 end)"
    assert load(r, '#!lua name="foo"' + body) == b"foo"
    assert load(r, "#!lua NAME=up" + body.replace("foo", "up")) == b"up"
    assert load(r, "#!lua  name=spaced\t" + body.replace("foo", "spaced")) == b"spaced"
    assert error_of(load, r, '#!lua name="foo' + body) == "Invalid library metadata"
    assert error_of(load, r, "#!lua name=\"a\"b" + body) == "Invalid library metadata"
    # The name is checked before the engine is looked up.
    assert error_of(load, r, "#!bad name=bad-name" + body) == "Library " + NAME_RULE
    assert error_of(load, r, "#!bad name=good" + body) == "Engine 'bad' not found"
    assert error_of(load, r, "#!lua name=x flags=no-writes" + body) == "Invalid metadata value given: flags=no-writes"


def test_eval_shebang_is_split_as_redis_splits_arguments(r):
    assert r.eval('#!lua flags="no-writes"\nreturn 1', 0) == 1
    text = error_of(r.eval, "#!lua flags='no-writes'\nreturn redis.call('set', KEYS[1], 1)", 1, "x")
    assert text.startswith("Write commands are not allowed from read-only scripts.")
    assert error_of(r.eval, '#!lua "flags=no-writes\nreturn 1', 0) == "Invalid engine in script shebang"
    assert error_of(r.eval, "#!lua flags=no-writes,\nreturn 1", 0) == "Unexpected flag in script shebang: "
    assert error_of(r.eval, "#!lua flags=no-writes,,allow-oom\nreturn 1", 0) == "Unexpected flag in script shebang: "
    assert error_of(r.eval, "#!lua name=x\nreturn 1", 0) == "Unknown lua shebang option: name=x"
    assert r.eval("#!lua flags=\nreturn 1", 0) == 1


# ---- FUNCTION subcommands ------------------------------------------------------------------------

def test_function_flush_with_an_extra_argument_is_a_wrong_call(fresh):
    assert error_of(fresh.execute_command, "FUNCTION", "flush", "sync", "extra") == \
        "unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP."
    assert error_of(fresh.execute_command, "FUNCTION", "FLUSH", "bad") == \
        "FUNCTION FLUSH only supports SYNC|ASYNC option"
    # SCRIPT FLUSH words both as a bad mode.
    assert error_of(fresh.execute_command, "SCRIPT", "FLUSH", "sync", "extra") == \
        "SCRIPT FLUSH only support SYNC|ASYNC option"


def test_debug_reload_noflush_keeps_the_libraries_and_merge_replaces_them(fresh):
    r = fresh
    load(r, library("test", "return 'saved'"))
    r.execute_command("DEBUG", "RELOAD")
    assert r.execute_command("FCALL", "test", 0) == b"saved"
    # Without MERGE a library of the file that is loaded already fails the load.
    assert error_of(r.execute_command, "DEBUG", "RELOAD", "NOFLUSH").startswith(
        "Error trying to load the RDB dump")
    assert r.execute_command("FCALL", "test", 0) == b"saved"
    assert r.execute_command("DEBUG", "RELOAD", "NOFLUSH", "MERGE") == b"OK"
    assert [lib[1] for lib in r.execute_command("FUNCTION", "LIST")] == [b"test"]
    # NOSAVE NOFLUSH MERGE adds the saved file to what is loaded now.
    r.execute_command("FUNCTION", "DELETE", "test")
    r.set("x", 1)
    load(r, library("test1", "return 'one'"))
    r.execute_command("DEBUG", "RELOAD")
    load(r, library("test2", "return 'two'"))
    assert r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"OK"
    assert r.execute_command("FCALL", "test1", 0) == b"one"
    assert r.execute_command("FCALL", "test2", 0) == b"two"
    assert r.get("x") == b"1"
    assert r.execute_command("FUNCTION", "STATS")[3] == [b"LUA", [b"libraries_count", 2, b"functions_count", 2]]


# ---- a stale replica -----------------------------------------------------------------------------

def test_only_allow_stale_scripts_run_on_a_stale_replica(make_server):
    srv = make_server(options={"replica-serve-stale-data": "no"})
    r = srv.client()
    load(r, """#!lua name=test
redis.register_function{function_name='f1', callback=function() return 'hello' end, flags={'no-writes'}}
redis.register_function{function_name='f2', callback=function() return 'hello' end, flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') end, flags={'allow-stale', 'no-writes'}}
redis.register_function{function_name='f4', callback=function() return redis.call('info', 'server') end, flags={'allow-stale', 'no-writes'}}""")
    sha = r.script_load("#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','foobar')")
    r.execute_command("REPLICAOF", "127.0.0.1", "1")     # nothing listens there: the link stays down
    masterdown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
    assert error_of(r.execute_command, "FCALL", "f1", 0) == masterdown
    assert r.execute_command("FCALL", "f2", 0) == b"hello"
    assert error_of(r.execute_command, "FCALL", "f3", 1, "x") == \
        "Can not execute the command on a stale replica script: f3, on @user_function:4."
    assert b"redis_version" in r.execute_command("FCALL", "f4", 0)
    assert error_of(r.eval, "return redis.call('get','x')", 1, "x") == masterdown
    assert error_of(r.eval, "#!lua flags=no-writes\nreturn 1", 0) == masterdown
    assert r.eval("#!lua flags=allow-stale,no-writes\nreturn 1", 0) == 1
    assert "Can not execute the command on a stale replica" in \
        error_of(r.eval, "#!lua flags=allow-stale,no-writes\nreturn redis.call('get','x')", 1, "x")
    assert r.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('echo','foobar')", 0) == b"foobar"
    assert r.evalsha(sha, 0) == b"foobar"
    assert error_of(r.eval, "#!lua flags=allow-stale\nreturn 1", 0) == "You can't write against a read only replica."
    r.execute_command("REPLICAOF", "NO", "ONE")
    assert r.execute_command("FCALL", "f1", 0) == b"hello"
    assert r.eval("return redis.call('get','x')", 1, "x") is None


def test_declared_flags_admit_a_script_as_a_command_with_those_flags(make_server):
    srv = make_server()
    r = srv.client()
    # A script that may write is refused before it runs under maxmemory, as a rejected EVAL.
    r.config_set("maxmemory", 1)
    r.config_resetstat()
    assert error_of(r.eval, "#!lua\nreturn 1", 0) == "OOM command not allowed when used memory > 'maxmemory'."
    assert r.eval("#!lua flags=no-writes\nreturn 1", 0) == 1
    assert command_stats(r, "eval") == (1, 1, 0)
    r.config_set("maxmemory", 0)
    # Queued while a master, run once a read-only replica: EXEC of a script that may write is
    # refused whole; a script without a shebang fails inside EXEC at its first write.
    declared, compat, reader = srv.client(), srv.client(), srv.client()
    for client, script, keys in ((declared, "#!lua\nreturn 1", []),
                                 (compat, "redis.call('set', KEYS[1], 1) return 1", ["x"]),
                                 (reader, "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", ["x"])):
        client.execute_command("MULTI")
        assert client.execute_command("EVAL", script, len(keys), *keys) == b"QUEUED"
    r.execute_command("REPLICAOF", "127.0.0.1", "1")
    assert error_of(declared.execute_command, "EXEC") == \
        "Transaction discarded because of: READONLY You can't write against a read only replica."
    (failure,) = compat.execute_command("EXEC")
    assert str(failure).startswith("You can't write against a read only replica. script: ")
    assert reader.execute_command("EXEC") == [None]
    r.execute_command("REPLICAOF", "NO", "ONE")


# ---- the sandbox ---------------------------------------------------------------------------------

GETMETATABLE = ("local mt = getmetatable(_G) "
                "return {tostring(getmetatable(redis)), tostring(getmetatable(cjson)), tostring(getmetatable(bit)), "
                "type(mt), type(mt.__index), tostring(getmetatable(mt))}")
EXPECTED_METATABLES = [b"nil", b"nil", b"nil", b"table", b"function", b"nil"]


def test_getmetatable_shows_the_read_only_tables_as_redis_does(fresh):
    r = fresh
    assert r.eval(GETMETATABLE, 0) == EXPECTED_METATABLES
    load(r, library("meta", GETMETATABLE))
    assert r.execute_command("FCALL", "meta", 0) == EXPECTED_METATABLES
    for attack in ("local g = getmetatable(_G) g.__index = {}",
                   "rawset(getmetatable(_G), '__index', {})",
                   "setmetatable(getmetatable(_G), {})"):
        assert "Attempt to modify a readonly table" in error_of(r.eval, attack, 0)
    # Its __index is the error for a global that does not exist, whatever is asked.
    assert "Script attempted to access nonexistent global variable 'redis'" in \
        error_of(r.eval, "return getmetatable(_G).__index(_G, 'redis')", 0)
    # Tables of the script's own keep Lua's rules.
    assert r.eval("return getmetatable(setmetatable({}, {__metatable = 'mine'}))", 0) == b"mine"
    # Loading a library reaches no getmetatable at all.
    assert "Script attempted to access nonexistent global variable 'getmetatable'" in \
        error_of(load, r, "#!lua name=test1\nmt = getmetatable(_G)")


def test_replicate_commands_exists_for_eval_only(fresh):
    assert fresh.eval("return redis.replicate_commands()", 0) == 1
    load(fresh, library("repl", "return redis.replicate_commands()"))
    assert "attempt to call field 'replicate_commands' (a nil value)" in \
        error_of(fresh.execute_command, "FCALL", "repl", 0)


# ---- stats of refused calls ----------------------------------------------------------------------

def command_stats(r, name):
    stats = r.info("commandstats").get(f"cmdstat_{name}")
    return None if stats is None else (stats["calls"], stats["rejected_calls"], stats["failed_calls"])


def error_stats(r):
    # redis-py leaves "count=N" as text.
    return {key[len("errorstat_"):]: int(str(value).split("=")[1]) if not isinstance(value, dict) else value["count"]
            for key, value in r.info("errorstats").items()}


def test_a_refused_call_is_counted_once_as_a_rejected_command(fresh):
    r = fresh
    oom = "OOM command not allowed when used memory > 'maxmemory'."
    r.config_set("maxmemory", 1)
    for script, raises in (("return redis.call('set','x','y')", True),
                           ("local t = redis.pcall('set','x','y') return t['err']", False),
                           ("return redis.pcall('set','x','y')", True)):
        r.config_resetstat()
        if raises:
            assert error_of(r.eval, script, 1, "x").startswith(oom)
        else:
            assert r.eval(script, 1, "x") == oom.encode()
        assert error_stats(r) == {"OOM": 1}
        assert r.info("stats")["total_error_replies"] == 1
        assert command_stats(r, "set") == (0, 1, 0)
        assert command_stats(r, "eval") == (1, 0, 1 if raises else 0)
    r.config_set("maxmemory", 0)
    r.config_resetstat()
    assert r.eval_ro("local t = redis.pcall('set','x','y') return t['err']", 1, "x") == \
        b"ERR Write commands are not allowed from read-only scripts."
    assert error_stats(r) == {"ERR": 1}
    assert command_stats(r, "set") == (0, 1, 0) and command_stats(r, "eval_ro") == (1, 0, 0)
    r.config_resetstat()
    assert error_of(r.eval, "return redis.call('get','a','b')", 0).startswith(
        "Wrong number of args calling Redis command from script")
    assert error_stats(r) == {"ERR": 1}
    assert command_stats(r, "get") == (0, 1, 0) and command_stats(r, "eval") == (1, 0, 1)


def test_an_error_reply_without_a_code_counts_as_err(r):
    r.config_resetstat()
    assert error_of(r.eval, "return {err='bad'}", 0) == "bad"
    assert error_of(r.eval, "return redis.error_reply('MY_ERR_CODE custom msg')", 0) == "MY_ERR_CODE custom msg"
    assert error_of(r.eval, "return {err='" + "X" * 40 + " long'}", 0) == "X" * 40 + " long"
    assert error_stats(r) == {"ERR": 2, "MY_ERR_CODE": 1}


# ---- RESP3 replies inside Lua --------------------------------------------------------------------

def test_maps_and_sets_reach_lua_in_redis_table_order(r):
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    try:
        walk = ("redis.setresp(3) local out = {} "
                "for k, v in pairs(redis.call('debug', 'protocol', ARGV[1])[ARGV[2]]) do "
                "out[#out + 1] = tostring(k) .. '=' .. tostring(v) end return out")
        assert r.eval(walk, 0, "map", "map") == [b"1=true", b"2=false", b"0=false"]
        assert r.eval(walk, 0, "set", "set") == [b"1=true", b"2=true", b"0=true"]
    finally:
        r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)


# ---- DEBUG OBJECT --------------------------------------------------------------------------------

def test_debug_object_finds_a_key_past_its_deadline_that_nothing_expired(r):
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    try:
        r.set("key", "value", px=1)
        r.execute_command("DEBUG", "SLEEP", "0.01")    # the server's own clock passes the deadline
        assert r.execute_command("DEBUG", "OBJECT", "key").startswith(b"Value at:")
        assert r.eval("return redis.call('EXISTS', 'key')", 1, "key") == 0
        assert error_of(r.execute_command, "DEBUG", "OBJECT", "key") == "no such key"
    finally:
        r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
