"""String commands: GET SET (all options) SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX
APPEND STRLEN GETRANGE SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT.

Expected replies are Redis 7's, written out by hand from its documentation and
error texts; exact bytes are compared over a raw connection.
"""

import pytest
import redis

from support.expect import (NOT_FLOAT, NOT_INTEGER, SYNTAX, WRONGTYPE, arity, bulk, bulks, err, integer,
                            nil, ok, run_steps)
from support.types import OTHER_TYPE_CREATORS, create_other_type

INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
I64_MAX = 2**63 - 1
I64_MIN = -2**63


def test_set_get_roundtrip_with_redis_py(r):
    assert r.set("greeting", "hello") is True
    assert r.get("greeting") == b"hello"
    assert r.get("missing") is None
    assert r.strlen("greeting") == 5


def test_binary_keys_and_values_roundtrip(r):
    every_byte = bytes(range(256))
    assert r.set(every_byte, every_byte[::-1])
    assert r.get(every_byte) == every_byte[::-1]
    assert r.set(b"\r\n$3\r\n*1", b"\x00\r\n\x00")
    assert r.get(b"\r\n$3\r\n*1") == b"\x00\r\n\x00"
    assert r.set(b"", b"empty key")
    assert r.get(b"") == b"empty key"
    assert r.set(b"empty value", b"")
    assert r.get(b"empty value") == b""
    assert r.exists(b"empty value") == 1


def test_large_value_roundtrip(r):
    value = bytes((i * 7 + 3) % 256 for i in range(3 * 1024 * 1024))
    assert r.set("big", value)
    assert r.get("big") == value
    assert r.strlen("big") == len(value)


SET_CASES = {
    "nx-on-missing": [("SET k v NX", ok), ("GET k", bulk("v"))],
    "nx-on-existing": [("SET k v", ok), ("SET k w NX", nil), ("GET k", bulk("v"))],
    "xx-on-missing": [("SET k v XX", nil), ("EXISTS k", integer(0))],
    "xx-on-existing": [("SET k v", ok), ("SET k w XX", ok), ("GET k", bulk("w"))],
    "get-returns-old": [("SET k v", ok), ("SET k w GET", bulk("v")), ("GET k", bulk("w"))],
    "get-on-missing": [("SET k w GET", nil), ("GET k", bulk("w"))],
    "get-with-nx-existing": [("SET k v", ok), ("SET k w NX GET", bulk("v")), ("GET k", bulk("v"))],
    "get-with-nx-missing": [("SET k w NX GET", nil), ("GET k", bulk("w"))],
    "get-with-xx-missing": [("SET k w XX GET", nil), ("EXISTS k", integer(0))],
    "lowercase-options": [("set k v ex 100 nx", ok), ("ttl k", integer(100))],
    "nx-and-xx": [("SET k v NX XX", SYNTAX)],
    "ex-and-px": [("SET k v EX 10 PX 100", SYNTAX)],
    "ex-and-exat": [("SET k v EX 10 EXAT 100", SYNTAX)],
    "px-and-pxat": [("SET k v PX 10 PXAT 100", SYNTAX)],
    "keepttl-and-ex": [("SET k v KEEPTTL EX 10", SYNTAX)],
    "ex-missing-value": [("SET k v EX", SYNTAX)],
    "unknown-option": [("SET k v FOO", SYNTAX)],
    "ex-zero": [("SET k v EX 0", err(INVALID_EXPIRE.format("set")))],
    "ex-negative": [("SET k v EX -5", err(INVALID_EXPIRE.format("set")))],
    "exat-zero": [("SET k v EXAT 0", err(INVALID_EXPIRE.format("set")))],
    "px-overflow": [(f"SET k v PX {I64_MAX}", err(INVALID_EXPIRE.format("set")))],
    "ex-overflow": [(f"SET k v EX {I64_MAX // 1000 + 1}", err(INVALID_EXPIRE.format("set")))],
    "ex-not-integer": [("SET k v EX 1.5", NOT_INTEGER)],
    "ex-garbage": [("SET k v EX abc", NOT_INTEGER)],
    "syntax-error-changes-nothing": [("SET k v", ok), ("SET k w NX XX", SYNTAX), ("GET k", bulk("v"))],
    "arity": [("SET k", arity("set")), ("SET", arity("set"))],
}


@pytest.mark.parametrize("steps", SET_CASES.values(), ids=SET_CASES.keys())
def test_set_options(raw, steps):
    run_steps(raw, steps)


def test_set_expiry_options_set_ttl(raw):
    run_steps(raw, [
        ("SET a v EX 100", ok), ("TTL a", integer(100)),
        ("SET b v PX 100000", ok), ("TTL b", lambda x: x.value in (99, 100)),
        ("SET c v EXAT 4102444800", ok), ("EXPIRETIME c", integer(4102444800)),
        ("SET d v PXAT 4102444800123", ok), ("PEXPIRETIME d", integer(4102444800123)),
        ("SET d w", ok), ("TTL d", integer(-1)),
        ("SET a w KEEPTTL", ok), ("TTL a", lambda x: x.value in (99, 100)), ("GET a", bulk("w")),
        ("SET c w KEEPTTL GET", bulk("v")), ("EXPIRETIME c", integer(4102444800)),
    ])


def test_setnx_setex_psetex(raw):
    run_steps(raw, [
        ("SETNX k v", integer(1)), ("SETNX k w", integer(0)), ("GET k", bulk("v")),
        ("SETEX k 100 w", ok), ("GET k", bulk("w")), ("TTL k", integer(100)),
        ("PSETEX k 100000 x", ok), ("GET k", bulk("x")), ("PTTL k", lambda x: 99000 < x.value <= 100000),
        ("SETEX k 0 v", err(INVALID_EXPIRE.format("setex"))),
        ("SETEX k -1 v", err(INVALID_EXPIRE.format("setex"))),
        ("PSETEX k 0 v", err(INVALID_EXPIRE.format("psetex"))),
        ("SETEX k abc v", NOT_INTEGER),
        ("GET k", bulk("x")),
        ("SETNX k", arity("setnx")), ("SETEX k 10", arity("setex")), ("PSETEX k", arity("psetex")),
    ])


def test_getset_getdel(raw):
    run_steps(raw, [
        ("GETSET k v", nil), ("GETSET k w", bulk("v")), ("GET k", bulk("w")),
        ("EXPIRE k 100", integer(1)), ("GETSET k x", bulk("w")), ("TTL k", integer(-1)),
        ("GETDEL k", bulk("x")), ("GETDEL k", nil), ("EXISTS k", integer(0)),
        ("GETDEL", arity("getdel")), ("GETSET k", arity("getset")),
    ])


def test_getex(raw):
    run_steps(raw, [
        ("GETEX k", nil), ("SET k v", ok), ("GETEX k", bulk("v")), ("TTL k", integer(-1)),
        ("GETEX k EX 100", bulk("v")), ("TTL k", integer(100)),
        ("GETEX k PERSIST", bulk("v")), ("TTL k", integer(-1)),
        ("GETEX k PX 50000", bulk("v")), ("PTTL k", lambda x: 49000 < x.value <= 50000),
        ("GETEX k EXAT 4102444800", bulk("v")), ("EXPIRETIME k", integer(4102444800)),
        ("GETEX k PXAT 4102444800555", bulk("v")), ("PEXPIRETIME k", integer(4102444800555)),
        ("GETEX k EX 10 PX 10", SYNTAX), ("GETEX k PERSIST EX 10", SYNTAX), ("GETEX k FOO", SYNTAX),
        ("GETEX k EX 0", err(INVALID_EXPIRE.format("getex"))),
        ("GETEX k EX abc", NOT_INTEGER),
        ("GETEX k EXAT 1", bulk("v")), ("EXISTS k", integer(0)),
        ("GETEX", arity("getex")),
    ])


def test_mget_mset_msetnx(raw):
    run_steps(raw, [
        ("MSET a 1 b 2 c 3", ok), ("MGET a b c missing", bulks("1", "2", "3", None)),
        ("MSET a x a y", ok), ("GET a", bulk("y")),
        ("MSETNX d 4 e 5", integer(1)), ("MSETNX e 6 f 7", integer(0)),
        ("MGET d e f", bulks("4", "5", None)),
        ("MSET a", arity("mset")), ("MSET a 1 b", arity("mset")), ("MSETNX a", arity("msetnx")),
        ("MGET", arity("mget")),
    ])


def test_append_strlen(raw):
    run_steps(raw, [
        ("APPEND k hello", integer(5)), ("APPEND k ' world'", integer(11)),
        ("APPEND k !", integer(12)), ("STRLEN k", integer(12)),
        ("GET k", bulk("hello world!")), ("STRLEN missing", integer(0)),
        ("SET n 42", ok), ("APPEND n 7", integer(3)), ("GET n", bulk("427")), ("INCR n", integer(428)),
        ("EXPIRE n 100", integer(1)), ("APPEND n x", integer(4)), ("TTL n", integer(100)),
        ("APPEND k", arity("append")), ("STRLEN", arity("strlen")),
    ])


GETRANGE_CASES = [
    ("0 3", "This"), ("-3 -1", "ing"), ("0 -1", "This is a string"), ("10 100", "string"),
    ("5 3", ""), ("-100 3", "This"), ("-1 -5", ""), ("100 200", ""), ("-1 -1", "g"),
    (f"0 {I64_MAX}", "This is a string"), (f"{I64_MIN} 2", "Thi"), ("3 3", "s"),
]


@pytest.mark.parametrize("span,expected", GETRANGE_CASES)
def test_getrange_and_substr(raw, span, expected):
    raw.call("SET", "k", "This is a string")
    start, end = span.split()
    assert raw.call("GETRANGE", "k", start, end).raw == bulk(expected)
    assert raw.call("SUBSTR", "k", start, end).raw == bulk(expected)


def test_getrange_errors_and_missing(raw):
    run_steps(raw, [
        ("GETRANGE missing 0 10", bulk("")), ("SET k abc", ok), ("GETRANGE k a 1", NOT_INTEGER),
        (f"GETRANGE k 0 {2**63}", NOT_INTEGER), ("GETRANGE k 0", arity("getrange")),
        ("SET n 12345", ok),
        ("GETRANGE n 1 2", bulk("23")),
    ])


def test_setrange(raw):
    run_steps(raw, [
        ("SET k 'Hello World'", ok),
        ("SETRANGE k 6 Redis", integer(11)), ("GET k", bulk("Hello Redis")),
        ("SETRANGE pad 5 x", integer(6)), ("GET pad", bulk(b"\x00\x00\x00\x00\x00x")),
        ("SETRANGE k 20 !", integer(21)), ("GET k", bulk(b"Hello Redis" + b"\x00" * 9 + b"!")),
        ("SETRANGE empty 3 ''", integer(0)), ("EXISTS empty", integer(0)),
    ])
    # An empty value neither creates the key nor pads it.
    assert raw.call("SETRANGE", "nothing", 10, "").raw == integer(0)
    assert raw.call("EXISTS", "nothing").raw == integer(0)
    assert raw.call("SETRANGE", "k", 100, "").raw == integer(21)
    run_steps(raw, [
        ("SETRANGE k -1 x", err("ERR offset is out of range")),
        ("SETRANGE k 536870912 x", err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")),
        ("SETRANGE k abc x", NOT_INTEGER),
        ("SET n 1234", ok), ("SETRANGE n 1 x", integer(4)), ("GET n", bulk("1x34")),
        ("SETRANGE k 0", arity("setrange")),
    ])


def test_incr_decr_family(raw):
    run_steps(raw, [
        ("INCR c", integer(1)), ("INCR c", integer(2)), ("DECR c", integer(1)),
        ("INCRBY c 10", integer(11)), ("DECRBY c 20", integer(-9)), ("INCRBY c -1", integer(-10)),
        ("GET c", bulk("-10")), ("DECR fresh", integer(-1)),
    ])
    for value in (" 1", "1 ", "1.0", "abc", "", "0x10", "1e3", "+1", "99999999999999999999"):
        raw.call("SET", "c", value)
        assert raw.call("INCR", "c").raw == NOT_INTEGER, value
        assert raw.call("GET", "c").raw == bulk(value), "a failed INCR must not change the value"
    run_steps(raw, [
        (f"SET c {I64_MAX}", ok), ("INCR c", err("ERR increment or decrement would overflow")),
        (f"SET c {I64_MIN}", ok), ("DECR c", err("ERR increment or decrement would overflow")),
        ("SET c 0", ok), (f"DECRBY c {I64_MIN}", err("ERR decrement would overflow")),
        (f"INCRBY c {I64_MIN}", integer(I64_MIN)), (f"INCRBY c {2**63}", NOT_INTEGER),
        ("INCRBY c x", NOT_INTEGER), ("SET c -0", ok), ("INCR c", NOT_INTEGER),
        ("SET c 007", ok), ("INCR c", NOT_INTEGER), ("SET c -5", ok), ("INCR c", integer(-4)),
        ("EXPIRE c 100", integer(1)), ("INCR c", integer(-3)), ("TTL c", integer(100)),
        ("INCR", arity("incr")), ("INCRBY c", arity("incrby")), ("DECR", arity("decr")),
        ("DECRBY c", arity("decrby")),
    ])


INCRBYFLOAT_CASES = [
    ("10.50", "0.1", "10.6"),
    ("5.0e3", "2.0e2", "5200"),
    ("0", "3.0e3", "3000"),
    ("0.1", "0.2", "0.3"),
    ("1", "-1", "0"),
    ("0", "1.5e-5", "0.000015"),
    ("10", "-0.0000001", "9.9999999"),
    ("1e20", "1", "100000000000000000000"),
    ("3", "0.5", "3.5"),
    ("-1", "-0.25", "-1.25"),
    ("1", "1e-17", "1.00000000000000001"),  # long double, printed with 17 decimals
]


@pytest.mark.parametrize("start,incr,expected", INCRBYFLOAT_CASES)
def test_incrbyfloat_formatting(raw, start, incr, expected):
    raw.call("SET", "f", start)
    assert raw.call("INCRBYFLOAT", "f", incr).raw == bulk(expected)
    assert raw.call("GET", "f").raw == bulk(expected)


def test_incrbyfloat_errors(raw):
    run_steps(raw, [
        ("INCRBYFLOAT missing 2.5", bulk("2.5")),
        ("SET f 1.5", ok),
        ("INCRBYFLOAT f abc", NOT_FLOAT), ("INCRBYFLOAT f ''", NOT_FLOAT),
        ("INCRBYFLOAT f inf", err("ERR increment would produce NaN or Infinity")),
        ("INCRBYFLOAT f nan", NOT_FLOAT),
        ("GET f", bulk("1.5")),
        ("SET s hello", ok), ("INCRBYFLOAT s 1", NOT_FLOAT),
        ("INCRBYFLOAT f", arity("incrbyfloat")),
    ])


def test_redis_py_numeric_helpers(r):
    assert r.incr("n") == 1
    assert r.incrby("n", 41) == 42
    assert r.decrby("n", 2) == 40
    assert r.incrbyfloat("x", 1.25) == 1.25
    with pytest.raises(redis.ResponseError, match="not an integer"):
        r.incr("x")


STRING_COMMANDS_ON_K = ["GET k", "SET k v GET", "GETSET k v", "GETDEL k", "GETEX k", "GETEX k PERSIST",
                        "APPEND k x", "STRLEN k", "GETRANGE k 0 1", "SUBSTR k 0 1", "SETRANGE k 0 x",
                        "INCR k", "DECR k", "INCRBY k 1", "DECRBY k 1", "INCRBYFLOAT k 1"]


@pytest.mark.parametrize("type_name", OTHER_TYPE_CREATORS)
def test_string_commands_on_other_types(raw, type_name):
    """Every string command answers WRONGTYPE on a key of another type and leaves it alone.

    Keys of other types exist only once their family lands; until then the creating command
    must be an unknown command, both to the dispatcher and to COMMAND INFO.
    """
    created = create_other_type(raw, "k", type_name)
    if not created:
        return
    for command in STRING_COMMANDS_ON_K:
        reply = raw.call(*command.split())
        assert reply.raw == WRONGTYPE, f"{command} on a {type_name}: {reply!r}"
    assert raw.call("TYPE", "k").raw == b"+%s\r\n" % type_name.encode()
    assert raw.call("MGET", "k", "missing").raw == bulks(None, None)
    assert raw.call("SET", "k", "v").raw == ok
    assert raw.call("GET", "k").raw == bulk("v")


def test_long_append_and_setrange_runs_keep_value_ttl_and_watchers(r):
    """APPEND and SETRANGE on a raw string change it in place (with headroom): the value, its
    deadline and WATCH must behave as if a new value had been stored each time."""
    r.set("log", "raw-start:")
    r.append("log", "x")  # now raw
    r.expire("log", 1000)
    model = b"raw-start:x"
    pipe = r.pipeline(transaction=False)
    for i in range(5000):
        piece = b"%d," % i
        pipe.append("log", piece)
        model += piece
    assert pipe.execute()[-1] == len(model)
    assert r.get("log") == model
    assert 990 <= r.ttl("log") <= 1000
    assert r.object("encoding", "log") == b"raw"
    assert r.setrange("log", len(model) + 3, "end") == len(model) + 6
    model += b"\x00\x00\x00end"
    assert r.setrange("log", 4, "S") == len(model)
    model = model[:4] + b"S" + model[5:]
    assert r.get("log") == model
    watcher = r.pipeline(transaction=True)
    watcher.watch("log")
    r.append("log", "!")  # another client's in-place change
    watcher.multi()
    watcher.get("log")
    with pytest.raises(redis.WatchError):
        watcher.execute()
