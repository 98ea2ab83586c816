"""Systematic edge cases, sent to both servers and compared like the random streams.

Where the random streams sample, these enumerate: number formatting and overflow, ranges and
offsets, every SET and EXPIRE option combination, glob patterns, value encodings, arity and
unknown-command errors. Each Op resets the keys it uses, so a corpus runs on past a mismatch
(reporting every kind it meets) and a failure shrinks to one Op.
"""

import itertools
import time

import pytest

from support.differ import (ANY_INTEGER, CLIENT_INFO, CONFIG_PAIRS, FULL_SCAN, HELLO, IDLETIME, MULTISET,
                            OBJECT_ENCODING, PTTL, TTL, Op, Step, investigate, run_ops)

from .generators import FLOAT_INCRS, GLOB_PATTERNS, INT_EDGES, NUMBER_TEXTS


def S(*args, compare=None):
    args = tuple(a if isinstance(a, bytes) else str(a).encode() for a in args)
    return Step(args, compare) if compare else Step(args)


@pytest.fixture
def check(pair, shrink_budget, reported_mismatches):
    def run(name, ops):
        mismatches = run_ops(pair, ops, independent=True)
        if not mismatches:
            return
        report = investigate(pair, ops, mismatches, title=f"DIFFERENTIAL MISMATCH in corpus '{name}'",
                             reproduce=f"/usr/bin/python3 -m pytest -q tests/differential/test_edge_corpora.py "
                                       f"-k {name}",
                             budget=shrink_budget, reported=reported_mismatches, label=f"corpus {name}")
        pytest.fail(report, pytrace=False)
    return run


NUMERIC_STARTS = [b"0", b"1", b"-1", b"10.5", b"5.0e3", b"3", b"1e20", b"0.1", b"-0", b"007", b"abc", b"",
                  b"9223372036854775807", b"-9223372036854775808", b"1.7976931348623157e308", b"inf", b"1 ",
                  None]


def _reset(key, start):
    return S("DEL", key) if start is None else S("SET", key, start)


def test_incrbyfloat_formatting(check):
    ops = [Op([_reset("f", start), S("INCRBYFLOAT", "f", incr), S("GET", "f")])
           for start in NUMERIC_STARTS for incr in FLOAT_INCRS]
    check("incrbyfloat", ops)


def test_integer_arithmetic(check):
    args = [str(x).encode() for x in INT_EDGES] + NUMBER_TEXTS[:20]
    ops = []
    for start in NUMERIC_STARTS:
        for cmd in ("INCR", "DECR"):
            ops.append(Op([_reset("n", start), S(cmd, "n"), S("GET", "n"), S("OBJECT", "ENCODING", "n",
                                                                               compare=OBJECT_ENCODING)]))
        for cmd in ("INCRBY", "DECRBY"):
            for arg in args:
                ops.append(Op([_reset("n", start), S(cmd, "n", arg), S("GET", "n")]))
    check("integer_arithmetic", ops)


RANGE_VALUES = [None, b"", b"a", b"Hello World", b"12345", b"x" * 100, b"\x00\r\n\xff"]
RANGE_INDEXES = [-100, -12, -11, -10, -2, -1, 0, 1, 2, 10, 11, 12, 100, 2**63 - 1, -2**63]


def test_getrange_substr(check):
    ops = []
    for value in RANGE_VALUES:
        steps = [_reset("s", value)]
        for start, end in itertools.product(RANGE_INDEXES, repeat=2):
            steps.append(S("GETRANGE", "s", start, end))
        steps += [S("SUBSTR", "s", 0, -1), S("GETRANGE", "s", "x", 1), S("GETRANGE", "s", 0, 2**63)]
        ops.append(Op(steps))
    check("getrange", ops)


def test_setrange_and_append(check):
    ops = []
    for start in (None, b"", b"abc", b"12345", b"x" * 50):
        for offset in (0, 1, 2, 3, 4, 10, 44, 45, -1, 536870912, 536870913, "x"):
            for value in (b"", b"Z", b"\x00\x00", b"long" * 20):
                ops.append(Op([_reset("s", start), S("SETRANGE", "s", offset, value), S("GET", "s"),
                               S("STRLEN", "s"), S("EXISTS", "s")]))
        for value in (b"", b"Z", b"123", b"x" * 60):
            ops.append(Op([_reset("s", start), S("APPEND", "s", value), S("GET", "s"),
                           S("OBJECT", "ENCODING", "s", compare=OBJECT_ENCODING)]))
    check("setrange_append", ops)


SET_TOKENS = [[b"NX"], [b"XX"], [b"GET"], [b"KEEPTTL"], [b"EX", b"1000000"], [b"PX", b"2000000000"],
              [b"EXAT", b"%d"], [b"PXAT", b"%d000"], [b"EX", b"0"], [b"PX", b"-5"], [b"EXAT", b"1"],
              [b"EX"], [b"FOO"], [b"ex", b"abc"], [b"EX", b"9223372036854775807"], [b"get"]]


def test_set_option_combinations(check):
    deadline = int(time.time()) + 5000000
    tokens = [[t.replace(b"%d", str(deadline).encode()) for t in tok] for tok in SET_TOKENS]
    ops = []
    for initial in ("missing", "plain", "volatile"):
        setup = {"missing": [S("DEL", "k")], "plain": [S("SET", "k", "old")],
                 "volatile": [S("SET", "k", "old", "EX", "3000000")]}[initial]
        for n in (0, 1, 2):
            for combo in itertools.permutations(tokens, n):
                args = [b"SET", b"k", b"new"] + [x for tok in combo for x in tok]
                ops.append(Op(setup + [S(*args), S("GET", "k"), S("TTL", "k", compare=TTL),
                                       S("PTTL", "k", compare=PTTL)]))
    check("set_options", ops)


def test_expire_option_combinations(check):
    now = int(time.time())
    times = {
        "EXPIRE": [b"1000000", b"2000000", b"0", b"-1", b"x", b"9223372036854775807"],
        "PEXPIRE": [b"1000000000", b"2000000000", b"0", b"-1", b"x", b"9223372036854775807"],
        "EXPIREAT": [str(now + 1000000).encode(), str(now + 2000000).encode(), b"1", b"0", b"x",
                     b"9223372036854775807"],
        "PEXPIREAT": [str((now + 1000000) * 1000).encode(), str((now + 2000000) * 1000).encode(), b"1", b"0",
                      b"x", b"9223372036854775807"],
    }
    flag_sets = [[], [b"NX"], [b"XX"], [b"GT"], [b"LT"], [b"NX", b"XX"], [b"GT", b"LT"], [b"XX", b"GT"],
                 [b"NX", b"GT"], [b"XX", b"LT"], [b"FOO"], [b"gt"], [b"NX", b"NX"]]
    setups = {"missing": [S("DEL", "k")], "plain": [S("SET", "k", "v")],
              "volatile": [S("SET", "k", "v", "EX", "1500000")]}
    ops = []
    for setup in setups.values():
        for cmd, ts in times.items():
            for t in ts:
                for flags in flag_sets:
                    ops.append(Op(setup + [S(cmd, "k", t, *flags), S("TTL", "k", compare=TTL),
                                           S("EXISTS", "k")]))
    for setup in setups.values():
        ops.append(Op(setup + [S("PERSIST", "k"), S("TTL", "k"), S("EXPIRETIME", "k", compare=TTL),
                               S("PEXPIRETIME", "k", compare=PTTL), S("PERSIST", "k")]))
    check("expire_options", ops)


GLOB_KEYS = [b"hello", b"hallo", b"hxllo", b"hllo", b"heeeello", b"h*llo", b"h?llo", b"h[a]llo", b"[x]",
             b"a\\b", b"\x00bin", b"", b"k0", b"k1", b"k2", b"k*", b"kk", b"k", b"K0", b"-", b"]", b"^",
             b"{k}\r\n", b"key with space", b"\xff"]
EXTRA_PATTERNS = [b"h?llo", b"h*llo", b"h[ae]llo", b"h[^e]llo", b"h[a-b]llo", b"h\\*llo", b"\\[x\\]",
                  b"a\\\\b", b"[", b"]", b"[]]", b"[^]", b"[a-]", b"[-a]", b"*[", b"\\", b"h[", b"h[a", b"[\\]]",
                  b"[z-a]llo",
                  b"*llo", b"h*", b"*o", b"?????", b"*?*?*", b"[hk]*", b"[!h]*", b"\xff", b"\x00*",
                  b"[[]x]", b"h[a-z][a-z]lo", b"K*", b"k[0-9]", b"*\\**"]


def test_glob_patterns(check):
    # One op per key and per pattern, so a failure shrinks to the keys and the pattern involved.
    ops = [Op([S("SET", k, "1")]) for k in GLOB_KEYS]
    ops += [Op([S("KEYS", p, compare=MULTISET)]) for p in GLOB_PATTERNS + EXTRA_PATTERNS]
    ops += [Op([S("SCAN", "0", "MATCH", p, "COUNT", "3", compare=FULL_SCAN)])
            for p in GLOB_PATTERNS + EXTRA_PATTERNS]
    check("glob", ops)


ENCODING_VALUES = [b"0", b"1", b"9999", b"10000", b"-1", b"-10000", b"123456789012345678", b"9223372036854775807",
                   b"9223372036854775808", b"-9223372036854775808", b"007", b"+1", b"1.5", b" 1", b"",
                   b"x" * 20, b"x" * 44, b"x" * 45, b"x" * 100, b"12345678901234567890123"]


def test_object_encoding_and_refcount(check):
    ops = []
    for maxmemory in (("0", "noeviction"), ("1gb", "allkeys-lru")):
        config = S("CONFIG", "SET", "maxmemory", maxmemory[0], "maxmemory-policy", maxmemory[1])
        for v in ENCODING_VALUES:
            for how in (["SET", "k", v], ["SETNX", "k", v], ["GETSET", "k", v], ["MSET", "k", v],
                        ["SETEX", "k", "1000000", v], ["APPEND", "k", v], ["SETRANGE", "k", "0", v],
                        ["INCRBYFLOAT", "k", v if v else "1"], ["INCRBY", "k", v]):
                ops.append(Op([config, S("DEL", "k"), S(*how),
                               S("OBJECT", "ENCODING", "k", compare=OBJECT_ENCODING),
                               S("OBJECT", "REFCOUNT", "k"), S("GET", "k")]))
            ops.append(Op([config, S("SET", "k", v), S("COPY", "k", "c", "REPLACE"), S("RENAME", "k", "r"),
                           S("OBJECT", "ENCODING", "c", compare=OBJECT_ENCODING), S("OBJECT", "REFCOUNT", "c"),
                           S("OBJECT", "ENCODING", "r", compare=OBJECT_ENCODING), S("OBJECT", "REFCOUNT", "r"),
                           S("MEMORY", "USAGE", "r", compare=ANY_INTEGER)]))
    check("object_encoding", ops)


ARITY_COMMANDS = """get set setnx setex psetex getset getdel getex mget mset msetnx append strlen getrange
substr setrange incr decr incrby decrby incrbyfloat del unlink exists type rename renamenx keys scan
randomkey dbsize flushdb flushall select move swapdb copy touch object expire pexpire expireat pexpireat
ttl pttl expiretime pexpiretime persist ping echo hello auth reset client config time lastsave memory
module""".split()
ARG_SETS = [[], [b"k0"], [b"k0", b"1"], [b"k0", b"1", b"1"], [b"k0", b"1", b"k1", b"1"],
            [b"k0", b"1", b"k1", b"1", b"k2"]]


def test_arity_and_syntax_errors(check):
    ops = []
    for name in ARITY_COMMANDS:
        for args in ARG_SETS:
            for spelled in (name.encode(), name.upper().encode()):
                compare = {"keys": MULTISET, "lastsave": ANY_INTEGER, "time": ANY_INTEGER, "hello": HELLO,
                           "ttl": TTL, "pttl": PTTL}.get(name)
                if name == "time" and not args:
                    continue
                if name == "scan" and args[:1] == [b"k0"]:
                    continue
                if name == "randomkey" and not args:
                    continue
                # FLUSHALL first: a valid "SETEX k0 1 ..." leaves a key that expires a second later.
                ops.append(Op([S("FLUSHALL"), S(spelled, *args, compare=compare)]))
    for container, subs in {"client": ["id", "setname", "getname", "info", "kill", "no-evict", "reply", "foo"],
                            "config": ["get", "set", "resetstat", "rewrite", "foo"],
                            "object": ["encoding", "refcount", "idletime", "freq", "help", "foo"],
                            "memory": ["usage", "foo"], "module": ["list", "load", "foo"]}.items():
        for sub in subs:
            for args in ARG_SETS[:4]:
                if container == "client" and sub in ("kill", "reply") and args:
                    continue
                if (container, sub) == ("client", "id") and not args:
                    continue
                compare = {("client", "info"): CLIENT_INFO, ("client", "id"): ANY_INTEGER,
                           ("config", "get"): CONFIG_PAIRS, ("memory", "usage"): ANY_INTEGER,
                           ("object", "encoding"): OBJECT_ENCODING, ("object", "idletime"): IDLETIME,
                           ("object", "freq"): ANY_INTEGER}.get((container, sub))
                ops.append(Op([S("FLUSHALL"), S(container, sub, *args, compare=compare)]))
    check("arity", ops)


def test_unknown_command_errors(check):
    names = [b"FOO", b"foo", b"", b"GETT", b"SET\x00", b"get ", b"\xff\xfe", b"x" * 300, b"a\r\nb", b"'q'",
             b"\"dq\"", b"{}"]
    arg_sets = [[], [b"a"], [b"a", b"b"], [b"x" * 200], [b"a\r\nb", b"\x00"], [b"'", b"\""], [b"a"] * 20,
                [b"y" * 60, b"z" * 60, b"w" * 60]]
    ops = [Op([S(n, *a)], "unknown command") for n in names for a in arg_sets]
    check("unknown", ops)


def test_multi_database_commands(check):
    ops = []
    for db in (b"0", b"1", b"15", b"16", b"-1", b"x"):
        ops.append(Op([S("SELECT", "0"), S("FLUSHALL"), S("SET", "k", "v", "EX", "1000000"), S("SET", "j", "w"),
                       S("MOVE", "k", db), S("COPY", "j", "k", "DB", db), S("COPY", "j", "j", "DB", db, "REPLACE"),
                       S("SWAPDB", "0", db), S("DBSIZE"), S("GET", "k"), S("TTL", "k", compare=TTL),
                       S("SELECT", db), S("DBSIZE"), S("GET", "k"), S("GET", "j"), S("TTL", "k", compare=TTL),
                       S("KEYS", "*", compare=MULTISET), S("FLUSHDB"), S("SELECT", "0"), S("DBSIZE")]))
    check("multi_db", ops)


def test_debug_subcommands(check):
    """The DEBUG subcommands client test suites use, with their argument errors. (DEBUG
    STRINGMATCH-LEN is newer than the 7.0 reference: test_debug_stringmatch_len holds it to 7.2.)"""
    calls = [("LOG", "a message"), ("LOG",), ("CHANGE-REPL-ID",), ("CHANGE-REPL-ID", "x"),
             ("PAUSE-CRON", "0"), ("PAUSE-CRON", "1"), ("PAUSE-CRON", "0"),
             ("QUICKLIST-PACKED-THRESHOLD", "100"), ("QUICKLIST-PACKED-THRESHOLD", "1k"),
             ("QUICKLIST-PACKED-THRESHOLD", "0"), ("QUICKLIST-PACKED-THRESHOLD", "4gb"),
             ("QUICKLIST-PACKED-THRESHOLD", "4095mb"), ("QUICKLIST-PACKED-THRESHOLD", "-1"),
             ("QUICKLIST-PACKED-THRESHOLD", "x"), ("QUICKLIST-PACKED-THRESHOLD", "1gb"),
             ("LISTPACK", "nokey"), ("LISTPACK", "s"), ("NO-SUCH-SUBCOMMAND",), ("SLEEP", "0"),
             ("SLEEP", "x"), ("ERROR", "ERR custom"), ("DIGEST-VALUE", "nokey")]
    ops = [Op([S("SET", "s", "v"), S("DEBUG", *call)]) for call in calls]
    check("debug_subcommands", ops)


def test_lolwut_errors(check):
    """LOLWUT's argument errors (its art is random, and its version line names each server's
    own version: test_server.py checks those)."""
    calls = [("VERSION", "x"), ("VERSION", "5", "x"), ("VERSION", "6", "1", "y"), ("VERSION", "5", "1", "1", "1.5"),
             ("VERSION", "99999999999999999999"), ("VERSION", "")]
    check("lolwut_errors", [Op([S("LOLWUT", *call)]) for call in calls])
