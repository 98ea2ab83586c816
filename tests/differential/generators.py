"""The table of command generators for the differential tester.

Each `Gen` row names the command it exercises (as COMMAND INFO knows it, so
"client|setname" for a subcommand), a weight, and a function that turns the
random source `g` into an Op (a list of Steps, or simply a list of arguments).
A stream only uses rows whose command both servers report in COMMAND INFO,
so coverage grows by itself as command families land in Goblin.

Adding a family = appending rows to GENERATORS, e.g.

    Gen("sadd", 4, lambda g: ["SADD", g.key(), *g.values(1, 4)]),
    Gen("smembers", 2, lambda g: ["SMEMBERS", g.key()], compare=MULTISET),

and, if the reply depends on hashing or time, picking a comparator from
support/differ.py (or writing one there).

Determinism rules the generators follow, so that both servers must agree:
  * relative TTLs and absolute deadlines come from one pool of unique values
    spaced 1000 s apart (`g.rel_seconds()`, `g.abs_seconds()`...), far from
    "now": no two expiry times can tie and no key expires during a stream,
    except through deadlines in the past, which take effect at once;
  * replies that count keys (DBSIZE, MEMORY USAGE) are preceded by EXISTS on
    the whole key space, so keys whose deadline passed are gone on both sides
    before counting (Redis keeps them until lazy or active expiry runs);
  * SCAN is always run to completion (FULL_SCAN), never compared call by call;
  * no command blocks, kills this connection, or changes how replies are sent (blocking list
    commands run inside MULTI, where they answer at once, or right after a push to one of their
    keys: see the list section).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

from support.differ import (ANY_INTEGER, CLIENT_INFO, CONFIG_PAIRS, EXACT, FULL_SCAN, GEO_DISTANCES,
                            GEO_STORED_SCORES, HELLO, IDLETIME,
                            MULTISET, OBJECT_ENCODING, PTTL, RANDOMKEY, RANK, RANK_WITHSCORE, SCORES, TIME, TTL,
                            ZRANDMEMBER, ZSCAN_FULL, Comparator, Op, Step)

KEYS = [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5", b"", b"\x00\xff", b"key with space", b"{k}\r\n", b"k*"]
COMMON_KEYS = KEYS[:6]

WORDS = [b"a", b"v", b"hello", b"Hello World", b"foo", b"bar", b"x", b"\xe2\x82\xac", b"OK", b"nil", b"-ERR"]

INT_EDGES = [0, 1, -1, 2, 3, 7, 10, 42, 99, 100, 123, -123, 9999, 10000, 10001, 65535, 2**31 - 1, 2**31,
             -2**31, 2**32, 2**53, 2**53 + 1, 2**62, 2**63 - 1, -2**63, -2**63 + 1, 2**63, -2**63 - 1,
             10**19, 10**20, 18446744073709551615]
NUMBER_TEXTS = [b"+1", b"-0", b"007", b" 1", b"1 ", b"1e3", b"0x10", b"1.0", b"1.5", b"-2.5", b"3.14159",
                b"1e308", b"1e309", b"-1e309", b"inf", b"-inf", b"+inf", b"nan", b"-nan", b"5e-324", b".5",
                b"5.", b"1E3", b"0.1", b"1e-17", b"0e0", b"-0.0", b"12345678901234567890123", b"1_000",
                b"0.30000000000000004", b"2.5e-5", b"100000000000000000000", b"1.7976931348623157e308",
                b"", b"abc", b"1a", b"--1", b"9223372036854775808", b"-9223372036854775809",
                b"Infinity", b"1e", b"e1", b"0.0000001", b"123456789.123456789"]
FLOAT_INCRS = [b"0.1", b"-0.1", b"1", b"-1", b"0", b"1.5", b"2.0e2", b"3.0e3", b"1e-17", b"-1e-17", b"1e20",
               b"1e308", b"-1e308", b"1e400", b"5e-324", b"0.0000001", b"10.5", b"3", b"-3.75", b"inf", b"-inf",
               b"nan", b"abc", b"", b" 1", b"1 ", b"0x1p3", b"1e", b"123456789012345678"]
GLOB_PATTERNS = [b"*", b"k*", b"k?", b"k[0-2]", b"k[^0-2]", b"k[!0]", b"*\x00*", b"\\*", b"k\\*", b"k[",
                 b"k[]", b"[k]*", b"*e*", b"?", b"", b"key*", b"{*", b"*[\r]*", b"k[2-0]", b"k[a-z0-9]",
                 b"[\\k]0", b"k[*]", b"**", b"*?*"]
EXPIRE_FLAGS = [b"NX", b"XX", b"GT", b"LT"]
CONFIG_GETTABLE = [b"hz", b"timeout", b"tcp-keepalive", b"loglevel", b"maxmemory", b"maxmemory-policy",
                   b"databases", b"save", b"appendonly", b"dbfilename", b"requirepass", b"protected-mode",
                   b"daemonize", b"logfile", b"pidfile", b"enable-debug-command", b"nosuchparam", b"h?",
                   b"databas*", b"HZ"]
CONFIG_SETTABLE = {
    b"hz": [b"1", b"10", b"50", b"500", b"1000", b"0", b"-1", b"abc", b"1.5"],
    b"timeout": [b"0", b"100000", b"-1", b"abc", b"2147483648"],
    b"tcp-keepalive": [b"0", b"300", b"60", b"-5", b"x"],
    b"loglevel": [b"notice", b"verbose", b"warning", b"debug", b"loud", b""],
    b"maxmemory-policy": [b"noeviction", b"allkeys-lru", b"allkeys-lfu", b"volatile-ttl", b"bogus"],
    b"maxmemory": [b"0", b"1gb", b"2GB", b"1xb", b"-1"],
    b"databases": [b"4"],
    b"port": [b"abc"],
    b"nosuchparam": [b"1"],
}


class G:
    """The random source a generator draws from (one per stream, seeded)."""

    def __init__(self, seed: int, now: float | None = None):
        self.rng = random.Random(seed)
        self.now = int(now if now is not None else time.time())
        pool = list(range(1, 200000))
        self.rng.shuffle(pool)
        self._unique = pool

    # -- primitive choices --
    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def choice(self, seq):
        return self.rng.choice(seq)

    def int(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def case(self, word: bytes) -> bytes:
        """Option and command names in random letter case (Redis ignores case)."""
        r = self.rng.random()
        if r < 0.7:
            return word
        if r < 0.85:
            return word.lower()
        return bytes(c ^ 0x20 if 65 <= (c & 0xDF) <= 90 and self.rng.random() < 0.5 else c for c in word)

    # -- keys and values --
    def key(self) -> bytes:
        return self.choice(COMMON_KEYS) if self.maybe(0.85) else self.choice(KEYS)

    def keys(self, lo: int, hi: int) -> list:
        return [self.key() for _ in range(self.int(lo, hi))]

    def number(self) -> bytes:
        if self.maybe(0.6):
            return str(self.choice(INT_EDGES)).encode()
        return self.choice(NUMBER_TEXTS)

    def integer_arg(self) -> bytes:
        r = self.rng.random()
        if r < 0.6:
            return str(self.int(-20, 20)).encode()
        if r < 0.9:
            return str(self.choice(INT_EDGES)).encode()
        return self.choice(NUMBER_TEXTS)

    def value(self) -> bytes:
        r = self.rng.random()
        if r < 0.28:
            return self.choice(WORDS)
        if r < 0.55:
            return self.number()
        if r < 0.70:
            return bytes(self.choice(b"\x00\r\n\xffab \"'\\$*:+-") for _ in range(self.int(0, 12)))
        if r < 0.82:
            return b"y" * self.choice([1, 20, 43, 44, 45, 46, 63, 64, 65, 100])
        if r < 0.86:
            return bytes(self.rng.getrandbits(8) for _ in range(self.int(200, 1500)))
        return str(self.int(0, 20000)).encode()

    def values(self, lo: int, hi: int) -> list:
        return [self.value() for _ in range(self.int(lo, hi))]

    def index(self) -> bytes:
        r = self.rng.random()
        if r < 0.85:
            return str(self.int(-25, 25)).encode()
        return self.choice([b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
                            b"x", b"1.5", b"", b"-0"])

    def offset(self) -> bytes:
        r = self.rng.random()
        if r < 0.85:
            return str(self.choice([0, 0, 1, 2, 3, 5, 7, 10, 43, 44, 45, 64, 100, 1000])).encode()
        return self.choice([b"-1", b"536870912", b"536870913", b"4294967296", b"9223372036854775808",
                            b"x", b""])

    # -- time: unique values, far from now, so servers can never disagree on order --
    def _unique_k(self) -> int:
        return self._unique.pop()

    def rel_seconds(self) -> bytes:
        return str(1000 * self._unique_k()).encode()

    def rel_ms(self) -> bytes:
        return str(1000 * 1000 * self._unique_k()).encode()

    def abs_seconds(self) -> bytes:
        return str(self.now + 1000 * self._unique_k()).encode()

    def abs_ms(self) -> bytes:
        return str((self.now + 1000 * self._unique_k()) * 1000).encode()

    def past_seconds(self) -> bytes:
        return str(self.choice([1, 100, self.now - 1000 * (1 + self._unique_k() % 1000)])).encode()

    def past_ms(self) -> bytes:
        return str(self.choice([1, 100, (self.now - 100000) * 1000])).encode()

    def bad_time(self) -> bytes:
        return self.choice([b"0", b"-1", b"-100", b"x", b"1.5", b"", b"9223372036854775807",
                            b"9223372036854775808", b"-9223372036854775808", b"9223372036854775"])

    def db(self) -> bytes:
        if self.maybe(0.9):
            return str(self.int(0, 3)).encode()
        return self.choice([b"15", b"16", b"-1", b"x", b"1.5", b"", b"2147483648"])


@dataclass
class Gen:
    command: str                   # COMMAND INFO name ("get", "client|setname")
    weight: float
    make: Callable[[G], object]    # -> list of args | Step | list of Steps | Op
    compare: Comparator = EXACT    # comparator for plain argument lists
    mutate: bool = True            # may the fuzzer mangle its arguments (arity and syntax errors)?
    creates_type: str | None = None  # set for the rows that create keys of other types
    covers: tuple = ()             # further subcommands this row exercises (for the coverage check)
    readonly: bool = False         # changes no data: the stream may go on after a mismatch here


def to_op(gen: Gen, made) -> Op:
    if isinstance(made, Op):
        op = made
    elif isinstance(made, Step):
        op = Op([made], gen.command)
    elif made and isinstance(made[0], Step):
        op = Op(list(made), gen.command)
    else:
        op = Op([Step(tuple(made), gen.compare)], gen.command)
    if gen.readonly:
        for step in op.steps:
            step.readonly = True
    return op


# ---- strings ----------------------------------------------------------------------------------

def _set(g: G):
    args = [g.case(b"SET"), g.key(), g.value()]
    if g.maybe(0.15):
        tokens = [b"NX", b"XX", b"GET", b"KEEPTTL", b"EX", b"PX", b"EXAT", b"PXAT", b"FOO", g.rel_seconds(),
                  g.bad_time(), b"PERSIST"]
        args += [g.case(g.choice(tokens)) for _ in range(g.int(1, 4))]
        return args
    opts = []
    cond = g.choice([None, None, b"NX", b"XX"])
    if cond:
        opts.append([cond])
    if g.maybe(0.3):
        opts.append([b"GET"])
    expiry = g.choice([None, None, "EX", "PX", "EXAT", "PXAT", "KEEPTTL", "PAST", "BAD"])
    if expiry == "EX":
        opts.append([b"EX", g.rel_seconds()])
    elif expiry == "PX":
        opts.append([b"PX", g.rel_ms()])
    elif expiry == "EXAT":
        opts.append([b"EXAT", g.abs_seconds()])
    elif expiry == "PXAT":
        opts.append([b"PXAT", g.abs_ms()])
    elif expiry == "KEEPTTL":
        opts.append([b"KEEPTTL"])
    elif expiry == "PAST":
        opts.append(g.choice([[b"EXAT", g.past_seconds()], [b"PXAT", g.past_ms()]]))
    elif expiry == "BAD":
        opts.append([g.choice([b"EX", b"PX", b"EXAT", b"PXAT"]), g.bad_time()])
    g.rng.shuffle(opts)
    for opt in opts:
        args += [g.case(opt[0])] + opt[1:]
    return args


def _getex(g: G):
    args = [g.case(b"GETEX"), g.key()]
    r = g.rng.random()
    if r < 0.2:
        pass
    elif r < 0.35:
        args += [g.case(b"EX"), g.rel_seconds()]
    elif r < 0.45:
        args += [g.case(b"PX"), g.rel_ms()]
    elif r < 0.55:
        args += [g.case(b"EXAT"), g.choice([g.abs_seconds(), g.past_seconds()])]
    elif r < 0.65:
        args += [g.case(b"PXAT"), g.choice([g.abs_ms(), g.past_ms()])]
    elif r < 0.8:
        args += [g.case(b"PERSIST")]
    elif r < 0.9:
        args += [g.choice([b"EX", b"PX", b"EXAT", b"PXAT"]), g.bad_time()]
    else:
        args += [g.case(g.choice([b"EX", b"PERSIST", b"FOO", b"KEEPTTL", b"NX"])) for _ in range(g.int(1, 3))]
    return args


def _setex(g: G, name: bytes, ms: bool):
    t = g.bad_time() if g.maybe(0.15) else (g.rel_ms() if ms else g.rel_seconds())
    return [g.case(name), g.key(), t, g.value()]


def _mset(g: G, name: bytes):
    args = [g.case(name)]
    for _ in range(g.int(1, 4)):
        args += [g.key(), g.value()]
    if g.maybe(0.1):
        args.append(g.key())  # odd number of arguments: wrong arity
    return args


STRING_GENERATORS = [
    Gen("get", 8, lambda g: [g.case(b"GET"), g.key()], readonly=True),
    Gen("set", 10, _set),
    Gen("setnx", 2, lambda g: [g.case(b"SETNX"), g.key(), g.value()]),
    Gen("setex", 2, lambda g: _setex(g, b"SETEX", False)),
    Gen("psetex", 2, lambda g: _setex(g, b"PSETEX", True)),
    Gen("getset", 2, lambda g: [g.case(b"GETSET"), g.key(), g.value()]),
    Gen("getdel", 2, lambda g: [g.case(b"GETDEL"), g.key()]),
    Gen("getex", 3, _getex),
    Gen("mget", 3, lambda g: [g.case(b"MGET"), *g.keys(1, 5)], readonly=True),
    Gen("mset", 3, lambda g: _mset(g, b"MSET")),
    Gen("msetnx", 2, lambda g: _mset(g, b"MSETNX")),
    Gen("append", 4, lambda g: [g.case(b"APPEND"), g.key(), g.value()]),
    Gen("strlen", 3, lambda g: [g.case(b"STRLEN"), g.key()], readonly=True),
    Gen("getrange", 4, lambda g: [g.case(b"GETRANGE"), g.key(), g.index(), g.index()], readonly=True),
    Gen("substr", 1, lambda g: [g.case(b"SUBSTR"), g.key(), g.index(), g.index()], readonly=True),
    Gen("setrange", 4, lambda g: [g.case(b"SETRANGE"), g.key(), g.offset(),
                                  g.choice([b"", b"x", b"abc", b"\x00\r\n", g.value()])]),
    Gen("incr", 4, lambda g: [g.case(b"INCR"), g.key()]),
    Gen("decr", 2, lambda g: [g.case(b"DECR"), g.key()]),
    Gen("incrby", 3, lambda g: [g.case(b"INCRBY"), g.key(), g.integer_arg()]),
    Gen("decrby", 2, lambda g: [g.case(b"DECRBY"), g.key(), g.integer_arg()]),
    Gen("incrbyfloat", 4, lambda g: [g.case(b"INCRBYFLOAT"), g.key(),
                                     g.choice(FLOAT_INCRS) if g.maybe(0.8) else g.number()]),
]


# ---- keys ------------------------------------------------------------------------------------------

def _exists_all() -> Step:
    """Touches every key so lazy expiry removes the ones whose deadline passed (see module doc)."""
    return Step((b"EXISTS", *KEYS))


def _flush(g: G, name: bytes):
    args = [g.case(name)]
    if g.maybe(0.5):
        args.append(g.case(g.choice([b"ASYNC", b"SYNC", b"async", b"FOO"])))
    return args


def _copy(g: G):
    args = [g.case(b"COPY"), g.key(), g.key()]
    extras = []
    if g.maybe(0.4):
        extras.append([g.case(b"DB"), g.db()])
    if g.maybe(0.4):
        extras.append([g.case(b"REPLACE")])
    if g.maybe(0.05):
        extras.append([g.case(b"FOO")])
    g.rng.shuffle(extras)
    for e in extras:
        args += e
    return args


def _scan(g: G):
    args = [g.case(b"SCAN"), b"0"]
    opts = []
    if g.maybe(0.5):
        opts.append([g.case(b"MATCH"), g.choice(GLOB_PATTERNS)])
    if g.maybe(0.5):
        opts.append([g.case(b"COUNT"), g.choice([b"1", b"2", b"10", b"1000"])])
    if g.maybe(0.4):
        opts.append([g.case(b"TYPE"), g.choice([b"string", b"list", b"set", b"hash", b"zset", b"none",
                                                 b"STRING", b"nosuchtype"])])
    g.rng.shuffle(opts)
    for o in opts:
        args += o
    return Step(tuple(args), FULL_SCAN)


def _scan_errors(g: G):
    # (an empty cursor is cursor 0 to Redis, so it is not an error case)
    return [g.case(b"SCAN"), g.choice([b"x", b"1.5", b"18446744073709551616", b"-x", b" 0"]),
            *g.choice([[], [b"COUNT", b"0"], [b"COUNT", b"-1"], [b"COUNT", b"x"], [b"MATCH"], [b"FOO", b"1"]])]


def _object(g: G):
    sub = g.choice([b"ENCODING", b"ENCODING", b"REFCOUNT", b"IDLETIME", b"FREQ", b"HELP", b"FOO"])
    args = [g.case(b"OBJECT"), g.case(sub)]
    if sub != b"HELP":
        args.append(g.key())
    compare = {b"ENCODING": OBJECT_ENCODING, b"IDLETIME": IDLETIME, b"FREQ": ANY_INTEGER}.get(sub, EXACT)
    return Step(tuple(args), compare)


KEY_GENERATORS = [
    Gen("del", 3, lambda g: [g.case(b"DEL"), *g.keys(1, 3)]),
    Gen("unlink", 2, lambda g: [g.case(b"UNLINK"), *g.keys(1, 3)]),
    Gen("exists", 3, lambda g: [g.case(b"EXISTS"), *g.keys(1, 4)], readonly=True),
    Gen("type", 3, lambda g: [g.case(b"TYPE"), g.key()], readonly=True),
    Gen("rename", 2, lambda g: [g.case(b"RENAME"), g.key(), g.key()]),
    Gen("renamenx", 2, lambda g: [g.case(b"RENAMENX"), g.key(), g.key()]),
    Gen("keys", 2, lambda g: [g.case(b"KEYS"), g.choice(GLOB_PATTERNS)], compare=MULTISET, readonly=True),
    Gen("scan", 2, _scan, mutate=False, readonly=True),
    # Not mutated: a mangled cursor can become a valid non-zero one, whose reply depends on hashing.
    Gen("scan", 0.5, _scan_errors, mutate=False, readonly=True),
    Gen("randomkey", 1, lambda g: [g.case(b"RANDOMKEY")], compare=RANDOMKEY, readonly=True),
    Gen("dbsize", 2, lambda g: [_exists_all(), Step((g.case(b"DBSIZE"),))], mutate=False, readonly=True),
    Gen("flushdb", 0.3, lambda g: _flush(g, b"FLUSHDB")),
    Gen("flushall", 0.15, lambda g: _flush(g, b"FLUSHALL")),
    Gen("select", 2, lambda g: [g.case(b"SELECT"), g.db()]),
    Gen("move", 2, lambda g: [g.case(b"MOVE"), g.key(), g.db()]),
    Gen("swapdb", 1, lambda g: [g.case(b"SWAPDB"), g.db(), g.db()]),
    Gen("copy", 2, _copy),
    Gen("touch", 1, lambda g: [g.case(b"TOUCH"), *g.keys(1, 3)], readonly=True),
    Gen("object", 3, _object, covers=("object|encoding", "object|refcount", "object|idletime", "object|freq",
                                      "object|help"), readonly=True),
]


# ---- expiry ----------------------------------------------------------------------------------------

def _expire(g: G, name: bytes):
    absolute = name.endswith(b"AT")
    ms = name.startswith(b"P")
    r = g.rng.random()
    if r < 0.7:
        if absolute:
            t = g.abs_ms() if ms else g.abs_seconds()
        else:
            t = g.rel_ms() if ms else g.rel_seconds()
    elif r < 0.85:
        t = (g.past_ms() if ms else g.past_seconds()) if absolute else g.choice([b"0", b"-1", b"-1000"])
    else:
        t = g.bad_time()
    args = [g.case(name), g.key(), t]
    if g.maybe(0.5):
        args.append(g.case(g.choice(EXPIRE_FLAGS)))
        if g.maybe(0.15):
            args.append(g.case(g.choice(EXPIRE_FLAGS + [b"FOO"])))
    return args


EXPIRY_GENERATORS = [
    Gen("expire", 4, lambda g: _expire(g, b"EXPIRE")),
    Gen("pexpire", 2, lambda g: _expire(g, b"PEXPIRE")),
    Gen("expireat", 2, lambda g: _expire(g, b"EXPIREAT")),
    Gen("pexpireat", 2, lambda g: _expire(g, b"PEXPIREAT")),
    Gen("ttl", 3, lambda g: [g.case(b"TTL"), g.key()], compare=TTL, readonly=True),
    Gen("pttl", 2, lambda g: [g.case(b"PTTL"), g.key()], compare=PTTL, readonly=True),
    Gen("expiretime", 2, lambda g: [g.case(b"EXPIRETIME"), g.key()], compare=TTL, readonly=True),
    Gen("pexpiretime", 2, lambda g: [g.case(b"PEXPIRETIME"), g.key()], compare=PTTL, readonly=True),
    Gen("persist", 2, lambda g: [g.case(b"PERSIST"), g.key()]),
]


# ---- connection ------------------------------------------------------------------------------------

def _hello(g: G):
    args = [g.case(b"HELLO")]
    valid_name = False
    if g.maybe(0.85):
        args.append(g.choice([b"2", b"3", b"3", b"2", b"1", b"4", b"x", b"-1"]))
        if g.maybe(0.3):
            name = g.choice([b"conn", b"a b", b"", b"x\n"])
            valid_name = name in (b"conn", b"")
            args += [g.case(b"SETNAME"), name]
        if g.maybe(0.2):
            args += [g.case(b"AUTH"), b"default", g.choice([b"anything", b""])]
        # A bad option after a valid SETNAME: Redis 7.0 has already renamed the connection when
        # it rejects the option, 7.2 has not (it validates everything first), so that case is
        # left out; after an invalid name both must report the name error first.
        if g.maybe(0.05) and not valid_name:
            args.append(b"FOO")
    return Step(tuple(args), HELLO)


def _auth(g: G):
    return g.choice([[b"AUTH", b"secret"], [b"AUTH", b"default", b"whatever"], [b"AUTH", b"nosuchuser", b"pw"],
                     [b"AUTH", b"a", b"b", b"c"], [b"auth", b""]])


def _client_kill(g: G):
    return g.choice([[b"CLIENT", b"KILL", b"1.2.3.4:5"], [b"CLIENT", b"KILL", b"ID", b"999999999"],
                     [b"CLIENT", b"KILL", b"ID", b"0"], [b"CLIENT", b"KILL", b"ID", b"x"],
                     [b"CLIENT", b"KILL", b"ADDR", b"1.2.3.4:5", b"SKIPME", b"yes"],
                     [b"CLIENT", b"KILL", b"USER", b"nosuchuser"], [b"CLIENT", b"KILL", b"TYPE", b"pubsub"],
                     [b"CLIENT", b"KILL", b"TYPE", b"bogus"], [b"CLIENT", b"KILL", b"FOO", b"bar"],
                     [b"CLIENT", b"KILL", b"LADDR", b"1.2.3.4:5"], [b"CLIENT", b"KILL", b"SKIPME", b"maybe"]])


CONNECTION_GENERATORS = [
    Gen("ping", 1, lambda g: [g.case(b"PING")] + ([g.value()] if g.maybe(0.5) else []), readonly=True),
    Gen("echo", 1, lambda g: [g.case(b"ECHO"), g.value()], readonly=True),
    Gen("hello", 0.5, _hello, mutate=False),
    Gen("auth", 0.3, _auth),
    Gen("reset", 0.2, lambda g: [g.case(b"RESET")], mutate=False),
    Gen("client|id", 0.3, lambda g: [b"CLIENT", g.case(b"ID")], compare=ANY_INTEGER, readonly=True),
    Gen("client|setname", 0.5, lambda g: [b"CLIENT", g.case(b"SETNAME"),
                                          g.choice([b"worker", b"a b", b"", b"x\ny", b"\xff", b"n-1"])]),
    Gen("client|getname", 0.5, lambda g: [b"CLIENT", g.case(b"GETNAME")], readonly=True),
    Gen("client|info", 0.3, lambda g: [b"CLIENT", g.case(b"INFO")], compare=CLIENT_INFO, readonly=True),
    Gen("client|kill", 0.3, _client_kill, mutate=False, readonly=True),  # never names an existing client
    Gen("client|no-evict", 0.2, lambda g: [b"CLIENT", b"NO-EVICT", g.choice([b"on", b"off", b"ON", b"maybe"])]),
    Gen("client|reply", 0.1, lambda g: [b"CLIENT", b"REPLY", g.choice([b"ON", b"on", b"maybe"])], mutate=False),
    Gen("client", 0.1, lambda g: [b"CLIENT", g.choice([b"FOO", b"setnam", b""])]),
]


# ---- server ----------------------------------------------------------------------------------------

def _config_set(g: G):
    name = g.choice(list(CONFIG_SETTABLE))
    args = [b"CONFIG", g.case(b"SET"), g.case(name), g.choice(CONFIG_SETTABLE[name])]
    if g.maybe(0.15):
        other = g.choice(list(CONFIG_SETTABLE))
        args += [other, g.choice(CONFIG_SETTABLE[other])]
    return args


def _memory_usage(g: G):
    args = [b"MEMORY", g.case(b"USAGE"), g.key()]
    if g.maybe(0.2):
        args += [g.case(b"SAMPLES"), g.choice([b"0", b"5", b"x", b"-1"])]
    return [_exists_all(), Step(tuple(args), ANY_INTEGER)]


SERVER_GENERATORS = [
    Gen("config|get", 1, lambda g: [b"CONFIG", g.case(b"GET"), *[g.choice(CONFIG_GETTABLE)
                                                                 for _ in range(g.int(1, 3))]],
        compare=CONFIG_PAIRS, readonly=True),
    Gen("config|set", 0.5, _config_set, mutate=False),
    Gen("config|resetstat", 0.1, lambda g: [b"CONFIG", g.case(b"RESETSTAT")]),
    Gen("config|rewrite", 0.1, lambda g: [b"CONFIG", g.case(b"REWRITE")]),  # no config file: an error
    Gen("time", 0.3, lambda g: [g.case(b"TIME")], compare=TIME, readonly=True),
    Gen("lastsave", 0.2, lambda g: [g.case(b"LASTSAVE")], compare=ANY_INTEGER, readonly=True),
    Gen("memory|usage", 0.5, _memory_usage, mutate=False, readonly=True),
    Gen("module|list", 0.1, lambda g: [b"MODULE", g.case(b"LIST")], readonly=True),
    Gen("module|load", 0.1, lambda g: [b"MODULE", b"LOAD", b"/nonexistent/goblin-module.so"]),
]


# ---- sorted sets ------------------------------------------------------------------------------------
#
# Scores come from a few small integers (long runs of ties, ordered by member bytes), edge values
# (+-inf, -0, subnormals, 1e308, integers past 2^53) and random 6-decimal values; members from a
# small pool (frequent updates), a 300-member pool (sets grow past the 128-entry listpack limit,
# with bulk ZADDs of up to 100 pairs) and long members (past the 64-byte value limit). The zset
# commands use the common key space, so they meet string keys (WRONGTYPE) and each other.
#
# Lex ranges are defined by Redis only when all scores are equal, so BYLEX commands run on their
# own keys (LEX_KEYS), which only ever receive score 0: written by unmutated ZADD ... 0 rows and by
# ZRANGESTORE from another lex key, never by the rows that draw from the common key space.
#
# ZADD never carries more than 100 pairs and zset-max-listpack-entries is never set below 100:
# Redis 7.2 converts a small set before adding more pairs than that limit even when they repeat
# members, 7.0 only once a member past the limit is added (integration tests cover 7.2's rule).

LEX_KEYS = [b"lex0", b"lex1", b"lex2"]
ZSCORE_TIES = [b"0", b"1", b"2", b"-1", b"3", b"10", b"100"]
ZSCORE_EDGES = [b"inf", b"-inf", b"+inf", b"-0", b"0.0", b"1.5", b"-2.5", b"0.1", b"0.3", b"1e-7", b"1e20",
                b"1e17", b"1.7976931348623157e308", b"5e-324", b"3.141592653589793", b"123456.789012",
                b"9007199254740993", b"1e308", b"-1e308", b"0x10", b"1E3", b".5", b"4611686018427387904",
                b"-4611686018427387905", b"1.1", b"2.2250738585072014e-308"]
ZSCORE_BAD = [b"nan", b"-nan", b"abc", b"", b" 1", b"1 ", b"(1", b"1e", b"inf1", b"1e309", b"1,5", b"\x00"]
ZBOUND_BAD = [b"abc", b"(abc", b"nan", b"(nan", b"1 ", b"[1", b"1e", b"((1", b"(-nan"]
ZLEX_BAD = [b"a", b"", b"+a", b"-a", b"1", b"]a", b"*"]
ZLIMITS = [b"0", b"1", b"2", b"3", b"5", b"10", b"-1", b"-2", b"9223372036854775807", b"-9223372036854775808",
           b"9223372036854775808", b"x", b"1.5"]


def zmember(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.55:
        return b"m%d" % g.int(0, 40)
    if r < 0.85:
        return b"m%d" % g.int(0, 299)
    if r < 0.94:
        return g.choice(WORDS + [b"", b"a\x00b", b"\xff", b"m1 ", b"M1", b"m10\r\n"])
    return g.choice([b"L" * 64, b"L" * 65, b"x" * 100, g.value()])


def zscore(g: G, bad: float = 0.06) -> bytes:
    r = g.rng.random()
    if r < bad:
        return g.choice(ZSCORE_BAD)
    if r < 0.45:
        return g.choice(ZSCORE_TIES)
    if r < 0.7:
        return g.choice(ZSCORE_EDGES)
    return b"%.6f" % g.rng.uniform(-1000, 1000)


def zbound(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.05:
        return g.choice(ZBOUND_BAD)
    if r < 0.08:
        return g.choice([b"(", b"", b" 1", b"0x1p3", b"1e400", b"(-inf", b"(+inf", b"-0", b"(0"])
    text = g.choice(ZSCORE_TIES + ZSCORE_EDGES[:12]) if r < 0.75 else b"%.3f" % g.rng.uniform(-1000, 1000)
    return b"(" + text if g.maybe(0.3) else text


def zlex(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.05:
        return g.choice(ZLEX_BAD)
    if r < 0.3:
        return g.choice([b"-", b"+"])
    return g.choice([b"[", b"("]) + zmember(g)[:10]


def zindex(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.8:
        return str(g.choice([g.int(-10, 10), g.int(-150, 150)])).encode()
    return g.choice([b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"x", b"1.5",
                     b"", b"-0"])


def zcount_arg(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.7:
        return str(g.int(0, 12)).encode()
    if r < 0.85:
        return g.choice([b"100", b"200", b"9223372036854775807"])
    return g.choice([b"-1", b"x", b"1.5", b"", b"9223372036854775808", b"-9223372036854775808"])


def zkeys(g: G, lex_ok: bool = True) -> list:
    n = g.int(1, 3)
    return [g.choice(LEX_KEYS) if lex_ok and g.maybe(0.1) else g.key() for _ in range(n)]


def _zadd(g: G):
    args = [g.case(b"ZADD"), g.key()]
    if g.maybe(0.35):
        flags = g.choice([[b"NX"], [b"XX"], [b"GT"], [b"LT"], [b"CH"], [b"INCR"], [b"XX", b"CH"], [b"GT", b"CH"],
                          [b"XX", b"GT"], [b"LT", b"XX", b"CH"], [b"NX", b"INCR"], [b"XX", b"INCR"],
                          [b"GT", b"INCR"], [b"LT", b"INCR"], [b"NX", b"XX"], [b"GT", b"LT"], [b"NX", b"GT"],
                          [b"NX", b"LT"], [b"CH", b"CH"]])
        args += [g.case(f) for f in flags]
    r = g.rng.random()
    n = 1 if r < 0.55 else (g.int(2, 6) if r < 0.8 else g.int(40, 100))
    for _ in range(n):
        args += [zscore(g), zmember(g) if n < 20 else b"m%d" % g.int(0, 299)]
    if g.maybe(0.03):
        args.append(zscore(g))  # an odd number of arguments
    return Step(tuple(args), SCORES)


def _zadd_lex(g: G):
    args = [g.case(b"ZADD"), g.choice(LEX_KEYS)]
    if g.maybe(0.15):
        args.append(g.case(g.choice([b"NX", b"XX", b"CH", b"GT", b"LT"])))
    n = g.int(1, 5) if g.maybe(0.7) else g.int(40, 100)
    for _ in range(n):
        args += [g.choice([b"0", b"0", b"-0", b"0.0"]), zmember(g) if n <= 5 else b"w%d" % g.int(0, 299)]
    return args


def _zincrby(g: G):
    return Step((g.case(b"ZINCRBY"), g.key(), zscore(g, bad=0.08), zmember(g)), SCORES)


def _zscore(g: G):
    return Step((g.case(b"ZSCORE"), g.key(), zmember(g)), SCORES)


def _zmscore(g: G):
    return Step((g.case(b"ZMSCORE"), g.key(), *[zmember(g) for _ in range(g.int(1, 5))]), SCORES)


def _zcount(g: G):
    return [g.case(b"ZCOUNT"), g.key(), zbound(g), zbound(g)]


def _zlexcount(g: G):
    if g.maybe(0.9):
        return [g.case(b"ZLEXCOUNT"), g.choice(LEX_KEYS), zlex(g), zlex(g)]
    # Other keys only with a malformed range: the error comes before the key is read.
    return [g.case(b"ZLEXCOUNT"), g.key(), g.choice(ZLEX_BAD), zlex(g)]


def _zrank(g: G):
    return Step((g.case(g.choice([b"ZRANK", b"ZREVRANK"])), g.key(), zmember(g)), RANK)


def _zrank_withscore(g: G):
    return Step((g.case(g.choice([b"ZRANK", b"ZREVRANK"])), g.key(), zmember(g), g.case(b"WITHSCORE")),
                RANK_WITHSCORE)


def _range_options(g: G, allowed: list) -> list:
    """Optional tokens of the ZRANGE family in random order, sometimes one that does not belong."""
    opts = []
    for token in allowed:
        if token == b"LIMIT":
            if g.maybe(0.35):
                opts.append([g.case(b"LIMIT"), zcount_arg(g) if g.maybe(0.7) else g.choice(ZLIMITS),
                             zcount_arg(g) if g.maybe(0.6) else g.choice(ZLIMITS)])
        elif g.maybe(0.4):
            opts.append([g.case(token)])
    if g.maybe(0.04):
        opts.append([g.case(g.choice([b"FOO", b"LIMIT", b"BYSCORE", b"REV", b"WITHSCORES", b"BYLEX"]))])
    g.rng.shuffle(opts)
    return [x for opt in opts for x in opt]


def _zrange(g: G):
    kind = g.choice(["rank", "rank", "score", "lex"])
    if kind == "rank":
        args = [g.case(b"ZRANGE"), g.key(), zindex(g), zindex(g)]
        args += _range_options(g, [b"REV", b"WITHSCORES"])
        if g.maybe(0.03):
            args += [b"LIMIT", b"0", g.choice([b"1", b"-1"])]
    elif kind == "score":
        args = [g.case(b"ZRANGE"), g.key(), zbound(g), zbound(g), g.case(b"BYSCORE")]
        args += _range_options(g, [b"REV", b"WITHSCORES", b"LIMIT"])
    else:
        args = [g.case(b"ZRANGE"), g.choice(LEX_KEYS), zlex(g), zlex(g), g.case(b"BYLEX")]
        args += _range_options(g, [b"REV", b"LIMIT"] + ([b"WITHSCORES"] if g.maybe(0.1) else []))
    return Step(tuple(args), SCORES)


def _zrangestore(g: G):
    kind = g.choice(["rank", "score", "lex"])
    if kind == "lex":
        src = g.choice(LEX_KEYS)
        dst = g.choice(LEX_KEYS) if g.maybe(0.5) else g.key()
        args = [g.case(b"ZRANGESTORE"), dst, src, zlex(g), zlex(g), g.case(b"BYLEX")]
        args += _range_options(g, [b"REV", b"LIMIT"])
    elif kind == "score":
        args = [g.case(b"ZRANGESTORE"), g.key(), g.key(), zbound(g), zbound(g), g.case(b"BYSCORE")]
        args += _range_options(g, [b"REV", b"LIMIT"] + ([b"WITHSCORES"] if g.maybe(0.1) else []))
    else:
        args = [g.case(b"ZRANGESTORE"), g.key(), g.key(), zindex(g), zindex(g)]
        args += _range_options(g, [b"REV"])
    return args


def _zrangebyscore(g: G, name: bytes):
    args = [g.case(name), g.key(), zbound(g), zbound(g)] + _range_options(g, [b"WITHSCORES", b"LIMIT"])
    return Step(tuple(args), SCORES)


def _zrangebylex(g: G, name: bytes):
    if g.maybe(0.95):
        return [g.case(name), g.choice(LEX_KEYS), zlex(g), zlex(g)] + _range_options(g, [b"LIMIT"])
    return [g.case(name), g.key(), g.choice(ZLEX_BAD), zlex(g)]


def _zrevrange(g: G):
    args = [g.case(b"ZREVRANGE"), g.key(), zindex(g), zindex(g)] + _range_options(g, [b"WITHSCORES"])
    return Step(tuple(args), SCORES)


def _zrem(g: G):
    key = g.choice(LEX_KEYS) if g.maybe(0.15) else g.key()
    return [g.case(b"ZREM"), key, *[zmember(g) for _ in range(g.int(1, 4))]]


def _zremrangebylex(g: G):
    if g.maybe(0.95):
        return [g.case(b"ZREMRANGEBYLEX"), g.choice(LEX_KEYS), zlex(g), zlex(g)]
    return [g.case(b"ZREMRANGEBYLEX"), g.key(), g.choice(ZLEX_BAD), zlex(g)]


def _zpop(g: G):
    args = [g.case(g.choice([b"ZPOPMIN", b"ZPOPMAX"])), g.choice(LEX_KEYS) if g.maybe(0.1) else g.key()]
    if g.maybe(0.6):
        args.append(zcount_arg(g))
    return Step(tuple(args), SCORES)


def _zmpop(g: G):
    keys = zkeys(g)
    r = g.rng.random()
    numkeys = str(len(keys)).encode() if r < 0.9 else g.choice([b"0", b"-1", b"x", b"5", b"9223372036854775807"])
    args = [g.case(b"ZMPOP"), numkeys, *keys, g.case(g.choice([b"MIN", b"MAX", b"MIN", b"MAX", b"FOO"]))]
    if g.maybe(0.6):
        args += [g.case(b"COUNT"), zcount_arg(g)]
    if g.maybe(0.03):
        args += [g.case(b"COUNT"), b"1"]
    return Step(tuple(args), SCORES)


def _zrandmember(g: G):
    args = [g.case(b"ZRANDMEMBER"), g.key()]
    r = g.rng.random()
    if r < 0.2:
        return Step(tuple(args), ZRANDMEMBER)
    count = g.choice([b"0", b"1", b"2", b"3", b"5", b"10", b"-1", b"-3", b"-10", b"100", b"200", b"-150",
                      b"9223372036854775807"])
    args.append(count)
    if g.maybe(0.5):
        args.append(g.case(b"WITHSCORES"))
    if g.maybe(0.05):
        # Errors only: a huge negative count on a real set would ask for that many elements.
        args = [g.case(b"ZRANDMEMBER"), g.key(),
                *g.choice([[b"-9223372036854775808"], [b"-9223372036854775807", b"WITHSCORES"],
                           [b"4611686018427387904", b"WITHSCORES"], [b"x"], [b"1", b"FOO"],
                           [b"1", b"WITHSCORES", b"X"]])]
    return Step(tuple(args), ZRANDMEMBER)


def _zscan(g: G):
    args = [g.case(b"ZSCAN"), g.key(), b"0"]
    opts = []
    if g.maybe(0.4):
        opts.append([g.case(b"MATCH"), g.choice([b"*", b"m1*", b"m?", b"*0", b"[a-m]*", b"L*", b""])])
    if g.maybe(0.5):
        opts.append([g.case(b"COUNT"), g.choice([b"1", b"2", b"10", b"1000"])])
    g.rng.shuffle(opts)
    for o in opts:
        args += o
    return Step(tuple(args), ZSCAN_FULL)


def _zscan_errors(g: G):
    # ("-1" is no error: strtoull wraps it to a valid cursor, whose reply depends on hashing.)
    return Step((g.case(b"ZSCAN"), g.key(), *g.choice([[b"x"], [b"1.5"], [b"18446744073709551616"], [b" 0"],
                                                       [b"0", b"COUNT", b"0"], [b"0", b"COUNT", b"x"],
                                                       [b"0", b"TYPE", b"zset"], [b"0", b"MATCH"],
                                                       [b"0", b"FOO", b"1"]])), SCORES)


def _weights(g: G, n: int) -> list:
    values = [b"1", b"2", b"0", b"-1", b"0.5", b"inf", b"-inf", b"1e308", b"3"]
    out = [g.case(b"WEIGHTS")] + [g.choice(values) for _ in range(n)]
    if g.maybe(0.05):
        out[-1] = g.choice([b"x", b"nan", b""])
    if g.maybe(0.03):
        out.pop()  # one weight short
    return out


def _setop(g: G, name: bytes, store: bool, weighted: bool, withscores_ok: bool):
    keys = zkeys(g)
    r = g.rng.random()
    numkeys = str(len(keys)).encode() if r < 0.92 else g.choice([b"0", b"-1", b"x", b"9", b"9223372036854775807"])
    args = [g.case(name)] + ([g.key()] if store else []) + [numkeys, *keys]
    opts = []
    if weighted and g.maybe(0.4):
        opts.append(_weights(g, len(keys)))
    if weighted and g.maybe(0.4):
        opts.append([g.case(b"AGGREGATE"), g.case(g.choice([b"SUM", b"MIN", b"MAX", b"SUM", b"AVG"]))])
    if withscores_ok and g.maybe(0.5):
        opts.append([g.case(b"WITHSCORES")])
    if g.maybe(0.04):
        opts.append([g.case(g.choice([b"WEIGHTS", b"AGGREGATE", b"WITHSCORES", b"LIMIT", b"FOO"]))])
    g.rng.shuffle(opts)
    for o in opts:
        args += o
    return Step(tuple(args), SCORES)


def _zintercard(g: G):
    keys = zkeys(g)
    numkeys = str(len(keys)).encode() if g.maybe(0.92) else g.choice([b"0", b"-1", b"x", b"9"])
    args = [g.case(b"ZINTERCARD"), numkeys, *keys]
    if g.maybe(0.5):
        args += [g.case(b"LIMIT"), g.choice([b"0", b"1", b"2", b"5", b"-1", b"x", b"9223372036854775807"])]
    return args


def _zset_config(g: G):
    # Entries never below 100 (see the section comment); values anywhere.
    if g.maybe(0.5):
        return [b"CONFIG", b"SET", b"zset-max-listpack-entries", g.choice([b"100", b"128", b"150", b"1000"])]
    return [b"CONFIG", b"SET", b"zset-max-listpack-value", g.choice([b"0", b"1", b"3", b"8", b"64", b"100"])]


def _zdump(g: G):
    """A whole set, so that a divergence in content shows up even without a read of that member."""
    key = g.choice(LEX_KEYS) if g.maybe(0.2) else g.key()
    return [Step((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"), GEO_STORED_SCORES),
            Step((b"OBJECT", b"ENCODING", key), OBJECT_ENCODING)]


ZSET_GENERATORS = [
    Gen("zadd", 14, _zadd),
    Gen("zadd", 4, _zadd_lex, mutate=False),
    Gen("zincrby", 5, _zincrby),
    Gen("zscore", 4, _zscore, readonly=True),
    Gen("zmscore", 2, _zmscore, readonly=True),
    Gen("zcard", 2, lambda g: [g.case(b"ZCARD"), g.choice(LEX_KEYS) if g.maybe(0.1) else g.key()], readonly=True),
    Gen("zcount", 3, _zcount, readonly=True),
    Gen("zlexcount", 2, _zlexcount, readonly=True),
    Gen("zrank", 3, _zrank, readonly=True, covers=("zrevrank",)),
    Gen("zrank", 1, _zrank_withscore, mutate=False, readonly=True, covers=("zrevrank",)),
    Gen("zrange", 7, _zrange, readonly=True),
    Gen("zrangestore", 2, _zrangestore),
    Gen("zrangebyscore", 2, lambda g: _zrangebyscore(g, b"ZRANGEBYSCORE"), readonly=True),
    Gen("zrevrangebyscore", 2, lambda g: _zrangebyscore(g, b"ZREVRANGEBYSCORE"), readonly=True),
    Gen("zrangebylex", 2, lambda g: _zrangebylex(g, b"ZRANGEBYLEX"), readonly=True),
    Gen("zrevrangebylex", 1.5, lambda g: _zrangebylex(g, b"ZREVRANGEBYLEX"), readonly=True),
    Gen("zrevrange", 2, _zrevrange, readonly=True),
    Gen("zrem", 4, _zrem),
    Gen("zremrangebyrank", 1.5, lambda g: [g.case(b"ZREMRANGEBYRANK"), g.key(), zindex(g), zindex(g)]),
    Gen("zremrangebyscore", 1.5, lambda g: [g.case(b"ZREMRANGEBYSCORE"), g.key(), zbound(g), zbound(g)]),
    Gen("zremrangebylex", 1.5, _zremrangebylex),
    Gen("zpopmin", 3, _zpop, covers=("zpopmax",)),
    Gen("zmpop", 2, _zmpop),
    Gen("zrandmember", 2.5, _zrandmember, readonly=True),
    Gen("zscan", 2, _zscan, mutate=False, readonly=True),
    Gen("zscan", 0.5, _zscan_errors, mutate=False, readonly=True),
    Gen("zunion", 1.5, lambda g: _setop(g, b"ZUNION", False, True, True), readonly=True),
    Gen("zinter", 1.5, lambda g: _setop(g, b"ZINTER", False, True, True), readonly=True),
    Gen("zdiff", 1.5, lambda g: _setop(g, b"ZDIFF", False, False, True), readonly=True),
    Gen("zunionstore", 1.5, lambda g: _setop(g, b"ZUNIONSTORE", True, True, False)),
    Gen("zinterstore", 1.5, lambda g: _setop(g, b"ZINTERSTORE", True, True, False)),
    Gen("zdiffstore", 1.5, lambda g: _setop(g, b"ZDIFFSTORE", True, False, False)),
    Gen("zintercard", 1.5, _zintercard, readonly=True),
    Gen("config|set", 0.3, _zset_config, mutate=False),
    Gen("zrange", 3, _zdump, mutate=False, readonly=True),
    Gen("set", 0.3, lambda g: [b"SET", g.choice(LEX_KEYS), g.value()]),  # WRONGTYPE for the lex rows
]


# The zset rows with the key and string commands that meet them (WRONGTYPE, RENAME, COPY, DEL,
# expiry, encodings): the mix of tests/differential/test_zset_streams.py, where sorted sets are
# most of the stream rather than one family among many.
ZSET_STREAM_GENERATORS = ZSET_GENERATORS + [
    gen for gen in STRING_GENERATORS + KEY_GENERATORS + EXPIRY_GENERATORS + SERVER_GENERATORS
    if gen.command in {"set", "get", "incr", "append", "del", "exists", "type", "rename", "renamenx", "copy",
                       "move", "swapdb", "flushdb", "expire", "pexpire", "ttl", "persist", "memory|usage"}]


# ---- keys of other types (used only when both servers have the family) -------------------------

OTHER_TYPE_GENERATORS = [
    Gen("rpush", 0.7, lambda g: [b"RPUSH", g.key(), *g.values(1, 3)], creates_type="list"),
    Gen("sadd", 0.7, lambda g: [b"SADD", g.key(), *g.values(1, 3)], creates_type="set"),
    Gen("hset", 0.7, lambda g: [b"HSET", g.key(), g.value(), g.value()], creates_type="hash"),
    Gen("zadd", 0.7, lambda g: [b"ZADD", g.key(), g.choice([b"1", b"2.5", b"-3"]), g.value()],
        creates_type="zset"),
]


# ---- errors: unknown commands and mangled arguments -------------------------------------------

UNKNOWN_NAMES = [b"FOO", b"GETT", b"", b"SET\x00", b"get ", b"\xff\xfe", b"x" * 60, b"CLIENTS", b"KEYZ",
                 b"sett", b"\r\n"]


def _unknown(g: G):
    extra = [g.choice([g.value(), b"x" * 200, b"a\r\nb", b"\x00", b"'quoted'", b""]) for _ in range(g.int(0, 3))]
    return [g.choice(UNKNOWN_NAMES)] + extra


# The string, key, expiry, connection and server rows (test_command_table.py checks that they
# cover its STRING_KEY_SERVER_COMMANDS).
STRING_KEY_SERVER_GENERATORS = STRING_GENERATORS + KEY_GENERATORS + EXPIRY_GENERATORS + \
    CONNECTION_GENERATORS + SERVER_GENERATORS
GENERATORS = STRING_KEY_SERVER_GENERATORS + ZSET_GENERATORS + OTHER_TYPE_GENERATORS

# String, key and server commands the random streams do not send, and why (integration tests
# cover them).
NOT_IN_STREAMS = {
    "quit": "closes the connection",
    "shutdown": "stops the server",
    "debug": "DEBUG SLEEP/SET-ACTIVE-EXPIRE change timing; DIGEST is implementation-specific",
    "slowlog": "depends on command durations",
    "latency": "depends on command durations",
    "info": "reports per-process figures",
    "command": "Goblin has fewer commands than Redis (compared per command in test_command_table)",
    "client|list": "lists other connections",
    "client|setinfo": "Redis 7.2 only; the 7.0 reference lacks it",
    "memory|stats": "reports per-process figures",
}


def mutated(g: G, gen: Gen) -> Op:
    """Mangles a generated command: wrong arity, extra or missing arguments, junk in place of numbers."""
    op = to_op(gen, gen.make(g))
    step = op.steps[-1]
    args = list(step.args)
    how = g.int(0, 4)
    if how == 0:
        args = args[:1]
    elif how == 1 and len(args) > 1:
        args = args[:-1]
    elif how == 2:
        args.append(g.choice([g.value(), b"EX", b"NX", b"COUNT", b"1"]))
    elif how == 3 and len(args) > 1:
        i = g.int(1, len(args) - 1)
        args[i] = g.choice(NUMBER_TEXTS + [b"", b"\x00"])
    else:
        args = args + args[1:]
    return Op([Step(tuple(args), step.compare, step.readonly)], "mutated " + gen.command)


def make_stream(seed: int, length: int, generators, protocol: int = 2, now: float | None = None) -> list:
    """A seeded list of Ops drawn from `generators` (rows the servers lack already filtered out)."""
    g = G(seed, now)
    weights = [gen.weight for gen in generators]
    mutable = [gen for gen in generators if gen.mutate]
    ops = []
    if protocol == 3:
        ops.append(Op([Step((b"HELLO", b"3"), HELLO)], "hello"))
    while len(ops) < length:
        r = g.rng.random()
        if r < 0.04:
            ops.append(Op([Step(tuple(_unknown(g)))], "unknown"))
        elif r < 0.10 and mutable:
            ops.append(mutated(g, g.choice(mutable)))
        else:
            gen = g.rng.choices(generators, weights)[0]
            ops.append(to_op(gen, gen.make(g)))
    if any(gen.command in ("zadd", "geoadd") for gen in generators):
        # Every set must end identical on both servers, whatever was read along the way.
        ops.append(Op([Step((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"), SCORES, True) for key in KEYS + LEX_KEYS] +
                      [Step((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"), GEO_STORED_SCORES, True) for key in GEO_KEYS],
                      "final zset contents"))
    if any(gen.command == "pfadd" for gen in generators):
        # Every string too, HyperLogLogs among them.
        ops.append(Op([Step((b"GET", key), EXACT, True) for key in KEYS], "final string contents"))
    if any(gen.command in LIST_WRITERS for gen in generators):
        # Every list too (the list section below defines LIST_WRITERS).
        ops.append(Op([Step((b"LRANGE", key, b"0", b"-1"), EXACT, True) for key in KEYS], "final list contents"))
    return ops


# ---- hashes and sets -------------------------------------------------------------------------
#
# Fields, values and members come from small pools so that reads and deletes hit existing
# elements; a few rows write 130-600 elements or long values to cross the listpack and intset
# limits. Replies whose order depends on hashing compare as multisets (MULTISET, HASH_PAIRS),
# scans run to completion (KEYED_SCAN), random picks are checked for their properties only
# (RANDOM_PICK), and SPOP puts back what it popped (SPOP_RESTORED) so the data sets stay equal.
# These comparators live here, beside their only users, rather than in support/differ.py.

from support.differ import _multiset_delta  # noqa: E402
from support.resp import Reply  # noqa: E402

HASH_FIELDS = [b"f", b"g", b"h", b"1", b"2", b"-1", b"007", b"10000001", b"", b"\x00", b"field with space",
               b"y" * 70, b"9223372036854775807"]
SET_MEMBERS = [b"1", b"2", b"3", b"-5", b"42", b"10000001", b"9223372036854775807", b"-9223372036854775808",
               b"007", b"-0", b"a", b"b", b"hello", b"", b"\x00\xff", b"y" * 70]
SET_FLOATS = [b"1", b"-1", b"0.5", b"1e3", b"1.5e300", b"1e400", b"inf", b"-inf", b"nan", b"abc", b"", b" 1",
              b"0x10", b"-0.0", b"3.0e3", b"1e-17"]


def hfield(g: G) -> bytes:
    return g.choice(HASH_FIELDS) if g.maybe(0.85) else g.value()


def smember(g: G) -> bytes:
    return g.choice(SET_MEMBERS) if g.maybe(0.85) else g.value()


def _pairs_of(reply) -> list | None:
    if reply.kind == "%":
        return sorted((a.raw, b.raw) for a, b in reply.value)
    if reply.kind != "*" or reply.value is None or len(reply.value) % 2:
        return None
    items = reply.value
    return sorted((items[i].raw, items[i + 1].raw) for i in range(0, len(items), 2))


class HashPairs(Comparator):
    """HGETALL: the same reply type and the same (field, value) pairs, in any order."""

    name = "hash-pairs"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or g.kind != r.kind:
            return "replies differ"
        pg, pr = _pairs_of(g), _pairs_of(r)
        if pg is None or pg != pr:
            return "different pairs: " + _multiset_delta([repr(p) for p in pg or []], [repr(p) for p in pr or []])
        return None


class KeyedScan(Comparator):
    """HSCAN / SSCAN key 0 [options] iterated to cursor 0 on each server: the same items."""

    name = "keyed-scan"
    pipelinable = False

    def execute(self, step, ctx):
        return ctx.each(lambda conn: self._scan(conn, step.args))

    @staticmethod
    def _scan(conn, args) -> Reply:
        cursor, seen, rounds = b"0", set(), 0
        pairs = args[0].upper() == b"HSCAN"
        while True:
            reply = conn.call(args[0], args[1], cursor, *args[3:])
            if reply.is_error:
                return reply
            if reply.kind != "*" or len(reply.value) != 2 or reply.value[0].kind != "$" or \
                    reply.value[1].value is None or (pairs and len(reply.value[1].value) % 2):
                text = b"bad scan reply " + reply.raw[:200]
                return Reply("!", text, b"<" + text + b">")
            cursor = reply.value[0].value
            items = [e.value for e in reply.value[1].value]
            seen.update(zip(items[::2], items[1::2]) if pairs else items)
            rounds += 1
            if cursor == b"0" or rounds > 100000:
                break
        summary = b"SCAN-ITEMS " + b" ".join(repr(p).encode() for p in sorted(seen, key=repr))
        return Reply("+", summary, summary)


class RandomPick(Comparator):
    """SRANDMEMBER / HRANDFIELD: random choices, so only their properties are compared: the same
    shape and length, elements of the collection (with their values), distinct for a positive
    count, the whole collection when the count covers it."""

    name = "random-pick"
    pipelinable = False

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or g.kind != r.kind:
            return "replies differ"
        hash_key = step.args[0].upper() == b"HRANDFIELD"
        dump = (b"HGETALL" if hash_key else b"SMEMBERS", step.args[1])
        dg, dr = ctx.both(dump)
        if hash_key:
            content = dict(_pairs_of(dr) or [])
            if _pairs_of(dg) != _pairs_of(dr):
                return "the hashes differ"
        else:
            content = {e.raw: None for e in dr.value or []}
            if sorted(e.raw for e in dg.value or []) != sorted(content):
                return "the sets differ"
        if len(step.args) == 2:
            return None if g.kind == "$" and g.raw in content else f"{g.raw!r} is not an element"
        count = int(step.args[2])
        if g.value is None or r.value is None or len(g.value) != len(r.value):
            return "different reply lengths"
        if len(step.args) == 4:
            items = g.value
            if items and items[0].kind == "*":
                picks = [(e.value[0].raw, e.value[1].raw) for e in items]
            else:
                picks = [(items[i].raw, items[i + 1].raw) for i in range(0, len(items) - 1, 2)]
        else:
            picks = [(e.raw, None) for e in g.value]
        for element, value in picks:
            if element not in content:
                return f"{element!r} is not an element"
            if value is not None and content[element] != value:
                return f"{element!r} comes with {value!r}, not {content[element]!r}"
        elements = [e for e, _ in picks]
        if count > 0 and len(set(elements)) != len(elements):
            return "repeated elements for a positive count"
        if count > 0 and count >= len(content) and set(elements) != set(content):
            return "not the whole collection"
        return None


class SpopRestored(Comparator):
    """SPOP key count: each server pops, then gets its popped members back with SADD; compared
    are the reply's type and length, and that the members were distinct members of the set."""

    name = "spop-restored"
    pipelinable = False

    def execute(self, step, ctx):
        return ctx.each(lambda conn: self._pop(conn, step.args))

    @staticmethod
    def _pop(conn, args) -> Reply:
        before = conn.call(b"SMEMBERS", args[1])
        reply = conn.call(*args)
        if reply.is_error or reply.value is None:
            return reply
        popped = [reply.value] if reply.kind == "$" else [e.value for e in reply.value]
        if popped and conn.call(b"SADD", args[1], *popped).raw.startswith(b"-OOM"):
            # Under maxmemory SPOP runs but SADD may not (it can grow memory): the restore runs with
            # the limit lifted, so the servers keep the same set whatever member each drew.
            limit = conn.call(b"CONFIG", b"GET", b"maxmemory").elements()[1].value
            conn.call(b"CONFIG", b"SET", b"maxmemory", b"0")
            conn.call(b"SADD", args[1], *popped)
            conn.call(b"CONFIG", b"SET", b"maxmemory", limit)
        members = {e.value for e in before.value or []} if not before.is_error else set()
        ok = set(popped) <= members and len(set(popped)) == len(popped)
        summary = b"SPOP %s %d %s" % (reply.kind.encode(), len(popped), b"ok" if ok else b"not members")
        return Reply("+", summary, summary)


HASH_PAIRS = HashPairs()
KEYED_SCAN = KeyedScan()
RANDOM_PICK = RandomPick()
SPOP_RESTORED = SpopRestored()


def _hset(g: G):
    r = g.rng.random()
    n = 1 if r < 0.6 else (g.int(2, 5) if r < 0.93 else g.int(130, 200))
    args = [g.case(g.choice([b"HSET", b"HSET", b"HMSET"])), g.key()]
    # Distinct fields: Redis 7.2 converts before a write of more pairs than
    # hash-max-listpack-entries, 7.0 (the reference) only once that many fields exist.
    fields = []
    while len(fields) < n:
        field = hfield(g) if n < 10 else b"f%d" % len(fields)
        if field not in fields:
            fields.append(field)
    for field in fields:
        args += [field, g.value() if n < 10 else str(g.int(0, 99)).encode()]
    return args


def _hincrby(g: G):
    return [g.case(b"HINCRBY"), g.key(), hfield(g), g.integer_arg()]


def _hincrbyfloat(g: G):
    return [g.case(b"HINCRBYFLOAT"), g.key(), hfield(g), g.choice(FLOAT_INCRS) if g.maybe(0.8) else g.number()]


def _hrandfield(g: G):
    args = [g.case(b"HRANDFIELD"), g.key()]
    if g.maybe(0.8):
        args.append(g.choice([b"1", b"2", b"3", b"5", b"0", b"-1", b"-3", b"-7", b"200", b"x",
                              b"-9223372036854775808", b"9223372036854775807"]))
        if g.maybe(0.4):
            args.append(g.case(g.choice([b"WITHVALUES", b"WITHVALUES", b"WITHSCORES"])))
    return Step(tuple(args), RANDOM_PICK)


def _scan_options(g: G) -> list:
    opts = []
    if g.maybe(0.4):
        opts += [g.case(b"MATCH"), g.choice([b"*", b"f*", b"?", b"1*", b"*0*", b"[a-h]", b""])]
    if g.maybe(0.4):
        opts += [g.case(b"COUNT"), g.choice([b"1", b"2", b"10", b"100"])]
    return opts


def _hscan(g: G):
    return Step((g.case(b"HSCAN"), g.key(), b"0", *_scan_options(g)), KEYED_SCAN)


def _sscan(g: G):
    return Step((g.case(b"SSCAN"), g.key(), b"0", *_scan_options(g)), KEYED_SCAN)


def _scan_errors(g: G):
    command = g.choice([b"HSCAN", b"SSCAN"])
    return [command, g.key(), g.choice([b"0", b"x", b"-1", b"18446744073709551616", b" 0"]),
            *g.choice([[b"COUNT", b"0"], [b"COUNT", b"x"], [b"MATCH"], [b"TYPE", b"string"], [b"FOO", b"1"]])]


def _sadd(g: G):
    # Distinct members: Redis 7.2 picks a set's form from the number of arguments (a new set
    # of 2 > set-max-intset-entries members starts as a listpack), 7.0 from the members added.
    r = g.rng.random()
    if r < 0.9:
        members = [smember(g) for _ in range(g.int(1, 5))]
    elif r < 0.95:
        members = [str(g.int(0, 999)).encode() for _ in range(g.int(130, 600))]
    else:
        members = [b"m%d" % g.int(0, 299) for _ in range(g.int(100, 200))]
    return [g.case(b"SADD"), g.key(), *dict.fromkeys(members)]


def _srandmember(g: G):
    args = [g.case(b"SRANDMEMBER"), g.key()]
    if g.maybe(0.8):
        args.append(g.choice([b"1", b"2", b"3", b"5", b"0", b"-1", b"-3", b"-7", b"700", b"x",
                              b"-9223372036854775808"]))
    return Step(tuple(args), RANDOM_PICK)


def _spop(g: G):
    args = [g.case(b"SPOP"), g.key()]
    if g.maybe(0.7):
        args.append(g.choice([b"1", b"2", b"3", b"0"]))
    return Step(tuple(args), SPOP_RESTORED)


def _spop_all(g: G):
    r = g.rng.random()
    if r < 0.7:
        return Step((g.case(b"SPOP"), g.key(), b"1000"), MULTISET)
    return [g.case(b"SPOP"), g.key(), g.choice([b"-1", b"x", b"1.5", b"-9223372036854775808"])]


def _sintercard(g: G):
    keys = g.keys(1, 3)
    numkeys = str(len(keys)).encode() if g.maybe(0.85) else g.choice([b"0", b"-1", b"x", b"9"])
    args = [g.case(b"SINTERCARD"), numkeys, *keys]
    if g.maybe(0.4):
        args += [g.case(b"LIMIT"), g.choice([b"0", b"1", b"2", b"-1", b"x"])]
    return args


def _hash_set_config(g: G):
    name, values = g.choice([(b"hash-max-listpack-entries", [b"0", b"1", b"4", b"128", b"1000"]),
                             (b"hash-max-listpack-value", [b"0", b"3", b"8", b"64", b"100"]),
                             (b"set-max-intset-entries", [b"1", b"5", b"512", b"1000"])])
    return [b"CONFIG", b"SET", name, g.choice(values)]


def _hash_set_dump(g: G):
    key = g.key()
    return [Step((b"HGETALL", key), HASH_PAIRS), Step((b"SMEMBERS", key), MULTISET),
            Step((b"OBJECT", b"ENCODING", key), OBJECT_ENCODING)]


HASH_SET_GENERATORS = [
    Gen("hset", 10, _hset, covers=("hmset",)),
    Gen("hsetnx", 2, lambda g: [g.case(b"HSETNX"), g.key(), hfield(g), g.value()]),
    Gen("hget", 5, lambda g: [g.case(b"HGET"), g.key(), hfield(g)], readonly=True),
    Gen("hmget", 2, lambda g: [g.case(b"HMGET"), g.key(), *[hfield(g) for _ in range(g.int(1, 4))]],
        readonly=True),
    Gen("hdel", 4, lambda g: [g.case(b"HDEL"), g.key(), *[hfield(g) for _ in range(g.int(1, 4))]]),
    Gen("hlen", 2, lambda g: [g.case(b"HLEN"), g.key()], readonly=True),
    Gen("hstrlen", 2, lambda g: [g.case(b"HSTRLEN"), g.key(), hfield(g)], readonly=True),
    Gen("hexists", 2, lambda g: [g.case(b"HEXISTS"), g.key(), hfield(g)], readonly=True),
    Gen("hkeys", 1.5, lambda g: [g.case(b"HKEYS"), g.key()], compare=MULTISET, readonly=True),
    Gen("hvals", 1.5, lambda g: [g.case(b"HVALS"), g.key()], compare=MULTISET, readonly=True),
    Gen("hgetall", 2, lambda g: [g.case(b"HGETALL"), g.key()], compare=HASH_PAIRS, readonly=True),
    Gen("hincrby", 4, _hincrby),
    Gen("hincrbyfloat", 3, _hincrbyfloat),
    Gen("hrandfield", 2, _hrandfield, mutate=False, readonly=True),
    Gen("hscan", 1.5, _hscan, mutate=False, readonly=True),
    Gen("hscan", 0.5, _scan_errors, mutate=False, readonly=True, covers=("sscan",)),
    Gen("sadd", 10, _sadd),
    Gen("srem", 4, lambda g: [g.case(b"SREM"), g.key(), *[smember(g) for _ in range(g.int(1, 4))]]),
    Gen("sismember", 3, lambda g: [g.case(b"SISMEMBER"), g.key(), smember(g)], readonly=True),
    Gen("smismember", 2, lambda g: [g.case(b"SMISMEMBER"), g.key(), *[smember(g) for _ in range(g.int(1, 4))]],
        readonly=True),
    Gen("scard", 2, lambda g: [g.case(b"SCARD"), g.key()], readonly=True),
    Gen("smembers", 2, lambda g: [g.case(b"SMEMBERS"), g.key()], compare=MULTISET, readonly=True),
    Gen("spop", 2, _spop, mutate=False),
    Gen("spop", 1, _spop_all, mutate=False),
    Gen("srandmember", 2, _srandmember, mutate=False, readonly=True),
    Gen("smove", 3, lambda g: [g.case(b"SMOVE"), g.key(), g.key(), smember(g)]),
    Gen("sinter", 1.5, lambda g: [g.case(b"SINTER"), *g.keys(1, 3)], compare=MULTISET, readonly=True),
    Gen("sintercard", 1.5, _sintercard, readonly=True),
    Gen("sinterstore", 1.5, lambda g: [g.case(b"SINTERSTORE"), g.key(), *g.keys(1, 3)]),
    Gen("sunion", 1.5, lambda g: [g.case(b"SUNION"), *g.keys(1, 3)], compare=MULTISET, readonly=True),
    Gen("sunionstore", 1.5, lambda g: [g.case(b"SUNIONSTORE"), g.key(), *g.keys(1, 3)]),
    Gen("sdiff", 1.5, lambda g: [g.case(b"SDIFF"), *g.keys(1, 3)], compare=MULTISET, readonly=True),
    Gen("sdiffstore", 1.5, lambda g: [g.case(b"SDIFFSTORE"), g.key(), *g.keys(1, 3)]),
    Gen("sscan", 1.5, _sscan, mutate=False, readonly=True),
    Gen("config|set", 0.3, _hash_set_config, mutate=False),
    Gen("hgetall", 2, _hash_set_dump, mutate=False, readonly=True, covers=("smembers",)),
]

GENERATORS = GENERATORS + HASH_SET_GENERATORS


# ---- bitmaps -------------------------------------------------------------------------------------
#
# SETBIT/GETBIT/BITCOUNT/BITPOS/BITOP over the same keys the string rows write, so bit commands
# meet integers, embstr and raw values, other types (WRONGTYPE) and missing keys.

class BitRangeOnMissingKey(Comparator):
    """Redis 7.2 checks BITCOUNT's and BITPOS's arguments before looking the key up (#11734);
    7.0 (the reference) looks first: a missing key gets 0 or -1 and another type WRONGTYPE,
    whatever the arguments. Goblin follows 7.2: its argument error where the reference gave one
    of those is accepted (with a string there, 7.0 reports the same argument error)."""

    def differs(self, step, g, r, ctx):
        if (hasattr(g, "kind") and hasattr(r, "kind") and g.raw.startswith(b"-ERR ") and
                (r.raw in (b":0\r\n", b":-1\r\n") or r.raw.startswith(b"-WRONGTYPE "))):
            return None
        return super().differs(step, g, r, ctx)


BIT_RANGE_ON_MISSING_KEY = BitRangeOnMissingKey()


def bit_offset(g: G) -> bytes:
    if g.maybe(0.9):
        return str(g.choice([0, 1, 5, 7, 8, 9, 15, 16, 63, 64, 100, 200, 1000, 5000])).encode()
    return g.choice([b"-1", b"4294967295", b"4294967296", b"x", b"1.0", b""])


def bit_range(g: G) -> list:
    """[start end [BYTE|BIT]] or nothing, sometimes malformed."""
    r = g.rng.random()
    if r < 0.3:
        return []
    args = [g.index(), g.index()]
    if g.maybe(0.5):
        args.append(g.choice([b"BYTE", b"bit", b"BIT", b"byte", b"bits"]))
    if g.maybe(0.03):
        args.append(b"extra")
    return args


def _bitpos(g: G) -> list:
    args = [g.case(b"BITPOS"), g.key(), g.choice([b"0", b"1", b"1", b"2", b"-1", b"x"])]
    r = g.rng.random()
    if r < 0.3:
        args.append(g.index())
    elif r < 0.8:
        args += bit_range(g) or [g.index()]
    return args


BITMAP_GENERATORS = [
    Gen("setbit", 4, lambda g: [g.case(b"SETBIT"), g.key(), bit_offset(g),
                                g.choice([b"0", b"1", b"1", b"2", b"-1", b"x"])]),
    Gen("getbit", 2, lambda g: [g.case(b"GETBIT"), g.key(), bit_offset(g)], readonly=True),
    Gen("bitcount", 2, lambda g: [g.case(b"BITCOUNT"), g.key(), *bit_range(g)],
        compare=BIT_RANGE_ON_MISSING_KEY, readonly=True),
    Gen("bitpos", 2, _bitpos, compare=BIT_RANGE_ON_MISSING_KEY, readonly=True),
    Gen("bitop", 2, lambda g: [g.case(b"BITOP"), g.choice([b"AND", b"or", b"XOR", b"NOT", b"NOT", b"nand"]),
                               g.key(), *g.keys(1, 3)]),
]

GENERATORS = GENERATORS + BITMAP_GENERATORS


# ---- BITFIELD, BITFIELD_RO, LCS ------------------------------------------------------------------
#
# BITFIELD calls of one to five subcommands over every type (i1..i64, u1..u63), plain and "#"
# offsets mostly within the first 140 bits (fields straddle bytes and the end of short values),
# values at and just past each type's bounds and at the int64 extremes, every OVERFLOW mode, and
# now and then a malformed type, offset, value or subcommand (Redis checks them in argument order,
# all before the key). Far offsets (up to the last bit below proto-max-bulk-len) go to GET only: a
# write there would grow the string to 512 MB. The rows with a GET after the call show a wrong bit
# at once. LCS compares values drawn from small alphabets (lcs_value), so matches are long and
# ties between equally long subsequences many.

BITFIELD_TYPES = [b"i%d" % n for n in range(1, 65)] + [b"u%d" % n for n in range(1, 64)]
BITFIELD_COMMON_TYPES = [b"u8", b"i8", b"u1", b"i1", b"u4", b"i5", b"u16", b"i16", b"i32", b"u63", b"i64"]
BITFIELD_BAD_TYPES = [b"u64", b"i65", b"i0", b"u0", b"I8", b"U8", b"x8", b"i", b"", b"i08", b"i-1", b"i+8", b"8",
                      b"i8\x00x", b"u8 "]
BITFIELD_BAD_OFFSETS = [b"-1", b"#-1", b"#", b"", b"x", b"1.0", b"+1", b"01", b"# 1", b"#x", b"##1",
                        b"4294967296", b"9223372036854775808", b"#9223372036854775807"]
# Valid for GET, far from the value: the last bytes below 512 MB, and an i64 "#" count whose
# product wraps around 2^64 to offset 64 (Redis multiplies in 64-bit C arithmetic).
BITFIELD_FAR_OFFSETS = [b"4294967295", b"4294967232", b"#536870911", b"#288230376151711745", b"#67108863"]
BITFIELD_BAD_NUMBERS = [b"x", b"1.5", b"", b"9223372036854775808", b"-9223372036854775809", b"+1", b" 1", b"0x10"]


def bitfield_type(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.04:
        return g.choice(BITFIELD_BAD_TYPES)
    if r < 0.5:
        return g.choice(BITFIELD_COMMON_TYPES)
    return g.choice(BITFIELD_TYPES)


def bitfield_bounds(ftype: bytes):
    """(min, max) of a valid type, or None."""
    if ftype not in BITFIELD_TYPES:
        return None
    bits = int(ftype[1:])
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ftype[:1] == b"i" else (0, (1 << bits) - 1)


def bitfield_offset(g: G, write: bool) -> bytes:
    r = g.rng.random()
    if r < 0.45:
        return str(g.int(0, 140)).encode()
    if r < 0.8:
        return b"#%d" % g.int(0, 12)
    if r < 0.93:
        return str(g.choice([0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 1000])).encode()
    if r < 0.97 and not write:
        return g.choice(BITFIELD_FAR_OFFSETS)
    return g.choice(BITFIELD_BAD_OFFSETS)


def _clamp64(v: int) -> int:
    return max(-2**63, min(2**63 - 1, v))


def bitfield_number(g: G, ftype: bytes, increment: bool) -> bytes:
    """A SET value or INCRBY increment: the type's bounds and their neighbours, small numbers,
    the int64 extremes (and, for SET, the values below INT64_MIN + max whose check wraps)."""
    bounds = bitfield_bounds(ftype) or (-128, 127)
    lo, hi = bounds
    r = g.rng.random()
    if r < 0.03:
        return g.choice(BITFIELD_BAD_NUMBERS)
    if r < 0.33:
        v = g.choice([hi, hi + 1, lo, lo - 1, hi - 1, lo + 1, hi - lo, lo - hi, hi + 2, lo - 2])
    elif r < 0.6:
        v = g.int(-3, 3)
    elif r < 0.75:
        v = g.choice([2**63 - 1, -2**63, -2**63 + hi, -2**63 + hi + 1, 2**63 - 2, -2**63 + 1])
    elif r < 0.9 and not increment:
        v = g.int(lo, hi)
    else:
        v = g.rng.getrandbits(64) - 2**63 if g.maybe(0.5) else g.int(-1000, 1000)
    return str(_clamp64(v)).encode()


def bitfield_subcommands(g: G, writes: bool = True) -> list:
    args = []
    for _ in range(g.int(1, 5)):
        r = g.rng.random()
        ftype = bitfield_type(g)
        if r < 0.15:
            mode = g.choice([b"WRAP", b"SAT", b"FAIL"]) if g.maybe(0.96) else g.choice([b"wrapp", b"", b"SAT "])
            args += [g.case(b"OVERFLOW"), g.case(mode)]
        elif r < 0.45 or not writes:
            args += [g.case(b"GET"), ftype, bitfield_offset(g, write=False)]
        elif r < 0.72:
            args += [g.case(b"SET"), ftype, bitfield_offset(g, write=True), bitfield_number(g, ftype, False)]
        else:
            args += [g.case(b"INCRBY"), ftype, bitfield_offset(g, write=True), bitfield_number(g, ftype, True)]
    if g.maybe(0.03):
        # A subcommand cut short, or one Redis does not have.
        args += g.choice([[b"GET"], [b"GET", b"u8"], [b"SET", b"u8", b"0"], [b"INCRBY", b"i8"], [b"OVERFLOW"],
                          [b"FOO", b"u8", b"0"], [b"u8", b"0"]])
    return args


def _bitfield_then_get(g: G):
    key = g.key()
    return [Step((g.case(b"BITFIELD"), key, *bitfield_subcommands(g))), Step((b"GET", key), readonly=True)]


def _bitfield_ro(g: G):
    # Now and then a write subcommand, which BITFIELD_RO refuses after parsing everything.
    return [g.case(b"BITFIELD_RO"), g.key(), *bitfield_subcommands(g, writes=g.maybe(0.1))]


LCS_ALPHABETS = [b"ab", b"abc", b"acgt", b"ab\x00\xff"]


def lcs_value(g: G) -> bytes:
    alphabet = g.choice(LCS_ALPHABETS)
    return bytes(g.choice(alphabet) for _ in range(g.choice([0, 1, 3, 8, 20, 40, 70])))


def lcs_options(g: G) -> list:
    args = []
    for _ in range(g.int(0, 4)):
        r = g.rng.random()
        if r < 0.3:
            args.append(g.case(b"IDX"))
        elif r < 0.45:
            args.append(g.case(b"LEN"))
        elif r < 0.7:
            args.append(g.case(b"WITHMATCHLEN"))
        elif r < 0.97:
            args += [g.case(b"MINMATCHLEN"), g.choice([b"0", b"1", b"2", b"3", b"5", b"-1", b"x", b"",
                                                       b"9223372036854775807", b"-9223372036854775808"])]
        else:
            args.append(g.choice([b"FOO", b"MINMATCHLEN", b"IDXX"]))
    return args


BITFIELD_LCS_GENERATORS = [
    Gen("bitfield", 2, lambda g: [g.case(b"BITFIELD"), g.key(), *bitfield_subcommands(g)]),
    Gen("bitfield_ro", 1.5, _bitfield_ro, readonly=True),
    Gen("set", 1, lambda g: [b"SET", g.key(), lcs_value(g)]),
    Gen("lcs", 2, lambda g: [g.case(b"LCS"), g.key(), g.key(), *lcs_options(g)], readonly=True),
]

GENERATORS = GENERATORS + BITFIELD_LCS_GENERATORS

# The bitfield and LCS rows with the string, bitmap and key commands that meet them (integers,
# embstr and raw values, growth by SETRANGE and APPEND, WRONGTYPE, expiry, RENAME): the mix of
# tests/differential/test_bitfield_lcs.py's streams. Most BITFIELD calls are followed by a GET of
# the whole value, so SETBIT stays below bit 5000 here (BITMAP_GENERATORS' SETBIT reaches the last
# bit below 512 MB, and every GET would then move half a gigabyte).
BITFIELD_LCS_STREAM_GENERATORS = BITFIELD_LCS_GENERATORS + [
    Gen("bitfield", 5, _bitfield_then_get, mutate=False),
    Gen("setbit", 3, lambda g: [g.case(b"SETBIT"), g.key(), str(g.int(0, 200) if g.maybe(0.9) else 5000).encode(),
                                g.choice([b"0", b"1", b"1", b"2", b"x"])]),
] + [gen for gen in BITMAP_GENERATORS if gen.command != "setbit"] + OTHER_TYPE_GENERATORS + [
    gen for gen in STRING_GENERATORS + KEY_GENERATORS + EXPIRY_GENERATORS
    if gen.command in {"set", "get", "incr", "incrby", "append", "setrange", "getrange", "strlen", "del", "exists",
                       "type", "rename", "copy", "expire", "ttl", "persist", "object"}]


# ---- HyperLogLog -------------------------------------------------------------------------------
#
# HyperLogLogs are strings in the common key space, so they meet GET, APPEND, SETRANGE, expiry and
# WRONGTYPE both ways (a key holding other text is "not a valid HyperLogLog string value").
# Elements mostly come from a small pool, so that adds often change nothing; a few rows add
# hundreds, past the 3000-byte sparse limit into the dense encoding. Every stream with these rows
# ends with a GET of every key (make_stream): the bytes, cache included, must be Redis's.

def _pf_elements(g: G) -> list:
    if g.maybe(0.08):
        return [b"e%d" % g.int(0, 100000) for _ in range(g.int(100, 1500))]
    return [g.choice(WORDS) if g.maybe(0.5) else g.value() for _ in range(g.int(0, 4))]


HYPERLOGLOG_GENERATORS = [
    Gen("pfadd", 4, lambda g: [g.case(b"PFADD"), g.key(), *_pf_elements(g)]),
    Gen("pfcount", 2, lambda g: [g.case(b"PFCOUNT"), *g.keys(1, 3)]),
    Gen("pfmerge", 1.5, lambda g: [g.case(b"PFMERGE"), *g.keys(1, 4)]),
    Gen("pfdebug", 0.6, lambda g: [g.case(b"PFDEBUG"), g.case(g.choice([b"ENCODING", b"DECODE", b"TODENSE",
                                                                          b"GETREG", b"NOPE"])), g.key()]),
]

GENERATORS = GENERATORS + HYPERLOGLOG_GENERATORS

# ROLE: a master without replicas, in both servers.
GENERATORS = GENERATORS + [Gen("role", 0.5, lambda g: [g.case(b"ROLE")], readonly=True)]


# ---- lists -------------------------------------------------------------------------------------
#
# Elements come mostly from a small pool, so that LREM, LPOS, LINSERT pivots and moves hit existing
# values: integer-looking texts a listpack stores as integers and must give back unchanged ("007",
# "-0", "+1" and "9223372036854775808" are not integers to Redis), empty, binary and CRLF elements;
# the rest from g.value(), and rarely 9000- or 70000-byte elements, past the 8 kB listpack of the
# default list-max-listpack-size -2. A few pushes carry 100-300 elements. Lists share the common
# key space with the other families (WRONGTYPE both ways, RENAME, COPY, expiry, OBJECT ENCODING,
# whose "listpack" for small lists OBJECT_ENCODING accepts against 7.0's "quicklist").
#
# No row may block the stream's connection. BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP are sent
# inside MULTI ... EXEC, where they answer at once, with timeouts on which 7.0 and 7.2 agree, or
# with a timeout beyond a long long's milliseconds, which both reject before looking at a key
# (BLOCKING_TIMEOUT: 7.2 and 7.0 word it differently). LIST_PUSH_THEN_BLOCK_GENERATORS send them
# right after a push to one of their keys, so that there is something to pop; those rows are kept
# out of GENERATORS because test_maxmemory.py runs GENERATORS under a 1-byte maxmemory, where the
# push is refused and the blocking command would wait forever. No blocking or MULTI row is mutated:
# the mutator keeps only an Op's last step, which would lose the MULTI or the push.

import dataclasses  # noqa: E402

from support.differ import BLOCKING_TIMEOUT, LPOS_RANK  # noqa: E402

LIST_ELEMENTS = [b"a", b"b", b"c", b"x", b"hello", b"Hello World", b"1", b"2", b"-1", b"0", b"10", b"-100",
                 b"12345", b"007", b"-0", b"+1", b"1.5", b"0x10", b"9223372036854775807", b"-9223372036854775808",
                 b"9223372036854775808", b"4294967296", b"", b"\x00", b"a\r\nb", b"\xff\xfe", b"y" * 64,
                 b"long " * 20]
LIST_INDEXES = [b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808", b"-9223372036854775809",
                b"2147483648", b"-2147483649", b"x", b"1.5", b"", b" 1", b"+1", b"-0", b"0x1", b"1e3"]
LIST_POP_COUNTS = [b"0", b"1", b"1", b"2", b"3", b"5", b"10", b"100", b"-1", b"x", b"1.5", b"", b"+2",
                   b"9223372036854775807", b"-9223372036854775808", b"2147483648"]
LPOS_RANKS = [b"1", b"2", b"3", b"-1", b"-2", b"-3", b"5", b"-5", b"0", b"100", b"-100", b"9223372036854775807",
              b"-9223372036854775807", b"-9223372036854775808", b"x", b"1.5"]
LPOS_COUNTS = [b"0", b"0", b"1", b"2", b"3", b"10", b"-1", b"-9223372036854775808", b"9223372036854775807", b"x"]
LPOS_MAXLENS = [b"0", b"1", b"2", b"3", b"5", b"100", b"-1", b"9223372036854775807", b"x"]
LIST_SIDES = [b"LEFT", b"RIGHT", b"left", b"Right"]
LIST_BAD_SIDES = [b"UP", b"", b"LEFTX", b"BEFORE", b"0"]
# Timeouts 7.0 and 7.2 read alike (inside MULTI, a valid one answers at once); a tiny one is 1 ms
# on both (rounded up), an unreadable one an error.
LIST_SAFE_TIMEOUTS = [b"0", b"0", b"0.1", b"1", b"5", b"1.5", b"0.0001", b"1e-400", b"0x10", b"-0", b"1e15",
                      b"-1", b"-2.5", b"-inf", b"x", b"", b"nan", b" 1", b"1e"]
# Milliseconds beyond a long long: "out of range" on 7.2, "negative" on 7.0 (BLOCKING_TIMEOUT).
LIST_HUGE_TIMEOUTS = [b"1e30", b"inf", b"+inf", b"1e16", b"1e308", b"9223372036854775807", b"1E20"]
LIST_CONFIG_VALUES = {
    b"list-max-listpack-size": [b"-2", b"-1", b"-3", b"-4", b"-5", b"-6", b"0", b"1", b"2", b"4", b"5", b"128",
                                b"1000", b"-2147483648", b"2147483647", b"2147483648", b"x", b""],
    b"list-max-ziplist-size": [b"-2", b"3", b"8", b"-1"],
    b"list-compress-depth": [b"0", b"0", b"1", b"2", b"3", b"100", b"-1", b"x", b"2147483648"],
}


def lelement(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.78:
        return g.choice(LIST_ELEMENTS)
    if r < 0.995:
        return g.value()
    return g.choice([b"B" * 9000, b"C" * 70000])


def lelements(g: G, lo: int = 1, hi: int = 4) -> list:
    return [lelement(g) for _ in range(g.int(lo, hi))]


def lindex(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.75:
        return str(g.int(-12, 12)).encode()
    if r < 0.85:
        return str(g.choice([50, -50, 150, -150, 299, -300, 1000, -1000])).encode()
    if r < 0.93:
        return str(g.choice(INT_EDGES)).encode()
    return g.choice(LIST_INDEXES)


def lside(g: G) -> bytes:
    return g.choice(LIST_BAD_SIDES) if g.maybe(0.03) else g.case(g.choice(LIST_SIDES))


def _lpush(g: G, name: bytes):
    r = g.rng.random()
    if r < 0.93:
        elements = lelements(g, 1, 5)
    elif r < 0.97:
        elements = [b"e%d" % g.int(0, 499) for _ in range(g.int(100, 300))]
    else:
        elements = [str(g.int(-70000, 70000)).encode() for _ in range(g.int(100, 300))]
    return [g.case(name), g.key(), *elements]


def _lpop(g: G, name: bytes):
    args = [g.case(name), g.key()]
    if g.maybe(0.6):
        args.append(g.choice(LIST_POP_COUNTS))
    return args


def _lset(g: G):
    return [g.case(b"LSET"), g.key(), lindex(g), lelement(g)]


def _linsert(g: G):
    where = g.case(g.choice([b"BEFORE", b"AFTER"])) if g.maybe(0.95) else g.choice([b"MIDDLE", b"", b"BEFOREX"])
    pivot = lelement(g) if g.maybe(0.85) else b"no such pivot"
    return [g.case(b"LINSERT"), g.key(), where, pivot, lelement(g)]


def _ltrim(g: G):
    if g.maybe(0.25):  # ranges that empty the list (and so delete the key)
        start, stop = g.choice([(b"1", b"0"), (b"5", b"2"), (b"-1", b"-2"), (b"1000", b"2000"), (b"0", b"-1000"),
                                (b"-9223372036854775808", b"-9223372036854775808"), (b"9223372036854775807", b"-1")])
        return [g.case(b"LTRIM"), g.key(), start, stop]
    return [g.case(b"LTRIM"), g.key(), lindex(g), lindex(g)]


def _lrem(g: G):
    r = g.rng.random()
    count = str(g.int(-3, 3)).encode() if r < 0.8 else (str(g.choice(INT_EDGES)).encode() if r < 0.95
                                                         else g.choice([b"x", b"1.5", b"", b"-0"]))
    return [g.case(b"LREM"), g.key(), count, lelement(g)]


def _lpos(g: G):
    args = [g.case(b"LPOS"), g.key(), lelement(g)]
    options = []
    if g.maybe(0.45):
        options.append([g.case(b"RANK"), g.choice(LPOS_RANKS)])
    if g.maybe(0.4):
        options.append([g.case(b"COUNT"), g.choice(LPOS_COUNTS)])
    if g.maybe(0.3):
        options.append([g.case(b"MAXLEN"), g.choice(LPOS_MAXLENS)])
    if g.maybe(0.05):
        options.append([g.case(g.choice([b"RANK", b"COUNT", b"MAXLEN"])), g.choice(LPOS_RANKS)])  # repeated
    g.rng.shuffle(options)
    for option in options:
        args += option
    if g.maybe(0.04):
        args.append(g.choice([b"RANK", b"COUNT", b"MAXLEN", b"FOO"]))  # an option without its value
    return Step(tuple(args), LPOS_RANK)


def _lmove_keys(g: G) -> tuple:
    source = g.key()
    return source, (source if g.maybe(0.25) else g.key())


def _lmove(g: G):
    source, destination = _lmove_keys(g)
    return [g.case(b"LMOVE"), source, destination, lside(g), lside(g)]


def _rpoplpush(g: G):
    source, destination = _lmove_keys(g)
    return [g.case(b"RPOPLPUSH"), source, destination]


def _numkeys(g: G, keys: list) -> bytes:
    if g.maybe(0.88):
        return str(len(keys)).encode()
    return g.choice([b"0", b"-1", b"x", b"", str(len(keys) + 1).encode(), str(len(keys) - 1).encode(),
                     b"9223372036854775807", b"2147483648"])


def _mpop_tail(g: G) -> list:
    args = [lside(g)]
    if g.maybe(0.6):
        args += [g.case(b"COUNT"), g.choice(LIST_POP_COUNTS)]
    if g.maybe(0.03):
        args += [g.case(b"COUNT"), b"1"]  # a second COUNT: a syntax error
    return args


def _lmpop(g: G):
    keys = g.keys(1, 3)
    return [g.case(b"LMPOP"), _numkeys(g, keys), *keys, *_mpop_tail(g)]


def blocking_list_command(g: G, name: bytes, timeout: bytes, key: bytes | None = None) -> tuple:
    """One blocking list command; `key`, if given, is among its keys (the source of a move)."""
    keys = g.keys(1, 3)
    if key is not None:
        keys[g.int(0, len(keys) - 1)] = key
    if name in (b"BLPOP", b"BRPOP"):
        return (g.case(name), *keys, timeout)
    if name == b"BLMPOP":
        return (g.case(name), timeout, _numkeys(g, keys), *keys, *_mpop_tail(g))
    source, destination = _lmove_keys(g)
    source = key if key is not None else source
    if name == b"BLMOVE":
        return (g.case(name), source, destination, lside(g), lside(g), timeout)
    return (g.case(name), source, destination, timeout)


def _blocking_in_multi(g: G, name: bytes):
    steps = [Step((b"MULTI",))]
    if g.maybe(0.5):
        steps.append(Step((b"RPUSH", g.key(), *lelements(g, 1, 3))))
    steps.append(Step(blocking_list_command(g, name, g.choice(LIST_SAFE_TIMEOUTS))))
    if g.maybe(0.4):
        other = g.choice([b"BLPOP", b"BRPOP", b"BLMOVE", b"BRPOPLPUSH", b"BLMPOP"])
        steps.append(Step(blocking_list_command(g, other, g.choice(LIST_SAFE_TIMEOUTS))))
    if g.maybe(0.3):
        steps.append(Step((b"LRANGE", g.key(), b"0", b"-1")))
    steps.append(Step((b"EXEC",)))
    return steps


def _blocking_huge_timeout(g: G, name: bytes):
    return Step(blocking_list_command(g, name, g.choice(LIST_HUGE_TIMEOUTS)), BLOCKING_TIMEOUT)


def _push_then_block(g: G, name: bytes):
    key = g.key()
    timeout = g.choice([b"0", b"0", b"0.1", b"1", b"1e15"]) if g.maybe(0.9) else g.choice(LIST_SAFE_TIMEOUTS)
    return [Step((g.choice([b"RPUSH", b"LPUSH"]), key, *lelements(g, 1, 3))),
            Step(blocking_list_command(g, name, timeout, key=key), BLOCKING_TIMEOUT)]


def _list_config(g: G):
    name = g.choice([b"list-max-listpack-size"] * 3 + [b"list-max-ziplist-size", b"list-compress-depth"])
    return [b"CONFIG", b"SET", name, g.choice(LIST_CONFIG_VALUES[name])]


def _list_dump(g: G):
    key = g.key()
    return [Step((b"LRANGE", key, b"0", b"-1")), Step((b"LLEN", key)),
            Step((b"OBJECT", b"ENCODING", key), OBJECT_ENCODING)]


LIST_GENERATORS = [
    Gen("lpush", 7, lambda g: _lpush(g, b"LPUSH")),
    Gen("rpush", 7, lambda g: _lpush(g, b"RPUSH")),
    Gen("lpushx", 2, lambda g: [g.case(b"LPUSHX"), g.key(), *lelements(g, 1, 3)]),
    Gen("rpushx", 2, lambda g: [g.case(b"RPUSHX"), g.key(), *lelements(g, 1, 3)]),
    Gen("lpop", 3, lambda g: _lpop(g, b"LPOP")),
    Gen("rpop", 3, lambda g: _lpop(g, b"RPOP")),
    Gen("llen", 2, lambda g: [g.case(b"LLEN"), g.key()], readonly=True),
    Gen("lindex", 3, lambda g: [g.case(b"LINDEX"), g.key(), lindex(g)], readonly=True),
    Gen("lset", 3, _lset),
    Gen("linsert", 3, _linsert),
    Gen("lrange", 5, lambda g: [g.case(b"LRANGE"), g.key(), lindex(g), lindex(g)], readonly=True),
    Gen("ltrim", 2, _ltrim),
    Gen("lrem", 3, _lrem),
    Gen("lpos", 4, _lpos, readonly=True),
    Gen("lmove", 3, _lmove),
    Gen("rpoplpush", 2, _rpoplpush),
    Gen("lmpop", 3, _lmpop),
    Gen("blpop", 1.5, lambda g: _blocking_in_multi(g, b"BLPOP"), mutate=False),
    Gen("brpop", 1, lambda g: _blocking_in_multi(g, b"BRPOP"), mutate=False),
    Gen("blmove", 1.5, lambda g: _blocking_in_multi(g, b"BLMOVE"), mutate=False),
    Gen("brpoplpush", 1, lambda g: _blocking_in_multi(g, b"BRPOPLPUSH"), mutate=False),
    Gen("blmpop", 1.5, lambda g: _blocking_in_multi(g, b"BLMPOP"), mutate=False),
    Gen("blpop", 0.5, lambda g: _blocking_huge_timeout(g, g.choice([b"BLPOP", b"BRPOP", b"BLMOVE", b"BRPOPLPUSH",
                                                                     b"BLMPOP"])),
        mutate=False, covers=("brpop", "blmove", "brpoplpush", "blmpop")),
    Gen("config|set", 0.4, _list_config, mutate=False),
    Gen("config|get", 0.2, lambda g: [b"CONFIG", b"GET", g.choice([b"list-*", b"list-max-listpack-size",
                                                                   b"list-max-ziplist-size", b"list-compress-depth"])],
        compare=CONFIG_PAIRS, readonly=True),
    Gen("lrange", 3, _list_dump, mutate=False, readonly=True, covers=("llen",)),
]

# Blocking commands on a key the same Op just pushed to: they pop at once (see the section comment
# for why these rows are not in GENERATORS).
LIST_PUSH_THEN_BLOCK_GENERATORS = [
    Gen("blpop", 1.5, lambda g: _push_then_block(g, b"BLPOP"), mutate=False),
    Gen("brpop", 1, lambda g: _push_then_block(g, b"BRPOP"), mutate=False),
    Gen("blmove", 1.5, lambda g: _push_then_block(g, b"BLMOVE"), mutate=False),
    Gen("brpoplpush", 1, lambda g: _push_then_block(g, b"BRPOPLPUSH"), mutate=False),
    Gen("blmpop", 1.5, lambda g: _push_then_block(g, b"BLMPOP"), mutate=False),
]

GENERATORS = GENERATORS + LIST_GENERATORS

# The list rows with the commands of other families that meet lists in the common key space (at a
# fifth of their weight; hashes, sets and sorted sets only small, from OTHER_TYPE_GENERATORS, since
# their own encodings are not the point here): the mix of tests/differential/test_list_streams.py,
# where lists are most of the stream.
LIST_STREAM_GENERATORS = LIST_GENERATORS + LIST_PUSH_THEN_BLOCK_GENERATORS + [
    dataclasses.replace(gen, weight=gen.weight / 5)
    for gen in STRING_GENERATORS + KEY_GENERATORS + EXPIRY_GENERATORS + SERVER_GENERATORS + HASH_SET_GENERATORS
    + ZSET_GENERATORS
    if gen.command in {"set", "get", "incr", "append", "strlen", "del", "exists", "type", "rename", "renamenx",
                       "copy", "move", "swapdb", "flushdb", "expire", "pexpire", "ttl", "persist", "object",
                       "memory|usage", "scard", "hget", "zcard"}
] + [gen for gen in OTHER_TYPE_GENERATORS if gen.creates_type != "list"]

# Commands whose presence in a stream ends it with a read of every list (make_stream).
LIST_WRITERS = {"lpush", "rpush", "lpushx", "rpushx", "linsert", "lset", "lmove", "rpoplpush"}


# ---- geo ---------------------------------------------------------------------------------------
#
# Geo sets are sorted sets whose scores are 52-bit geohashes, so the geo rows share the common keys
# with the zset rows (GEOPOS of a member ZADD gave a score of -3, GEOSEARCH over a set with
# infinite scores) and have keys of their own, geo0..geo2, that mostly hold real positions.
# Positions cluster where searches go wrong: around the antimeridian, at both latitude limits, at
# the exact grid edges (longitude 180, latitude 85.05112878, where a member gets a score past
# 2^52), and on repeated coordinates, whose equal distances test the order of both of Redis's
# sorts (qsort without COUNT, pqsort with it). Every reply is compared byte for byte: distances
# (4 decimals), coordinates ("%.17Lf" trimmed, RESP3 doubles) and hashes, except where Redis 7.2
# changed the distance of two positions on one meridian (GEO_DISTANCES: the last digit; support/
# differ.py says why). Searches store only into geo0..geo2, which are read back through
# GEO_STORED_SCORES for the same reason.

GEO_KEYS = [b"geo0", b"geo1", b"geo2"]
GEO_SPOTS = [(13.361389, 38.115556), (0.0, 0.0), (179.99, 10.0), (-179.99, -10.0), (45.0, 85.05),
             (-120.0, -85.05), (2.35, 48.85), (151.2, -33.87)]
GEO_EDGES = [b"180", b"-180", b"85.05112878", b"-85.05112878", b"0", b"-0", b"179.999999", b"-179.9999999",
             b"85.0511287", b"1e-10", b"0.000001"]
GEO_BAD_COORDINATES = [b"180.0000001", b"-180.0000001", b"85.05112879", b"-85.051128781", b"nan", b"inf",
                       b"-inf", b"abc", b"", b"1e400", b" 1", b"1,5", b"0x10", b"1e2"]
GEO_UNITS = [b"m", b"km", b"ft", b"mi", b"M", b"KM", b"Ft", b"mI"]
GEO_BAD_UNITS = [b"cm", b"", b"meters", b"m\x00", b"k"]


def geo_member(g: G) -> bytes:
    r = g.rng.random()
    if r < 0.85:
        return b"p%d" % g.int(0, 60)
    if r < 0.95:
        return b"p%d" % g.int(0, 300)
    return g.choice([b"", b"a\x00b", b"\xff", b"L" * 65, b"Palermo"])


def geo_position(g: G) -> list:
    """[longitude, latitude] texts: clustered, uniform, on the edges, or (rarely) invalid."""
    r = g.rng.random()
    if r < 0.03:
        return [g.choice(GEO_BAD_COORDINATES), g.choice(GEO_EDGES)] if g.maybe(0.5) else \
            [g.choice(GEO_EDGES), g.choice(GEO_BAD_COORDINATES)]
    if r < 0.13:
        return [g.choice(GEO_EDGES[:3] + GEO_EDGES[4:]), g.choice(GEO_EDGES[2:])]
    if r < 0.33:
        lon, lat = g.rng.uniform(-180, 180), g.rng.uniform(-85.05112878, 85.05112878)
    else:
        lon, lat = g.choice(GEO_SPOTS)
        spread = g.choice([0.0, 0.0001, 0.01, 0.5, 3.0])
        lon += g.rng.uniform(-spread, spread)
        lat += g.rng.uniform(-spread, spread) / 2
        lon = lon - 360 if lon > 180 else lon + 360 if lon < -180 else lon
        lat = max(-85.0511, min(85.0511, lat))  # the exact limits come from GEO_EDGES
    form = g.choice([b"%.6f", b"%.6f", b"%.10f", b"%.3f", b"%r"])
    return [form % lon if form != b"%r" else repr(lon).encode(), form % lat if form != b"%r" else repr(lat).encode()]


def geo_key(g: G) -> bytes:
    return g.choice(GEO_KEYS) if g.maybe(0.8) else g.key()


def geo_distance(g: G) -> list:
    """radius unit, sized from metres to a hemisphere; sometimes malformed."""
    r = g.rng.random()
    if r < 0.04:
        return [g.choice([b"-1", b"abc", b"nan", b"", b"-0.5"]), g.choice(GEO_UNITS)]
    if r < 0.07:
        return [b"10", g.choice(GEO_BAD_UNITS)]
    unit = g.choice(GEO_UNITS)
    metres = g.choice([0, 1, 50, 1000, 20000, 100000, 500000, 2000000, 8000000, 20000000]) if g.maybe(0.5) \
        else 10 ** g.rng.uniform(0, 7.3)
    per = {b"m": 1, b"km": 1000, b"ft": 0.3048, b"mi": 1609.34}[unit.lower()]
    value = metres / per
    text = b"%d" % round(value) if g.maybe(0.4) else b"%.4f" % value
    return [text if g.maybe(0.97) else b"inf", unit]


def geo_box(g: G) -> list:
    if g.maybe(0.05):
        return [g.choice([b"-1", b"x", b"10"]), g.choice([b"-1", b"y", b"10"]), g.choice(GEO_UNITS + GEO_BAD_UNITS)]
    width, unit = geo_distance(g)
    height, _ = geo_distance(g)
    if height.startswith(b"-") or height in (b"abc", b"nan", b""):
        height = b"10"
    return [width, height, unit]


def geo_options(g: G, store: str) -> list:
    """The options after a search's shape, in random order: WITH*, ASC|DESC, COUNT n [ANY], and the
    store options the command takes (store: "none", "radius" for STORE/STOREDIST key, "search" for
    GEOSEARCHSTORE's STOREDIST)."""
    opts = []
    for word in (b"WITHCOORD", b"WITHDIST", b"WITHHASH"):
        if g.maybe(0.3 if store == "none" else 0.03):
            opts.append([g.case(word)])
    if g.maybe(0.5):
        opts.append([g.case(g.choice([b"ASC", b"DESC"]))])
    if g.maybe(0.4):
        count = [g.case(b"COUNT"), str(g.choice([1, 2, 3, 5, 10, 100])).encode() if g.maybe(0.9)
                 else g.choice([b"0", b"-1", b"x", b"9223372036854775808"])]
        if g.maybe(0.35):
            count.append(g.case(b"ANY"))
        opts.append(count)
    elif g.maybe(0.03):
        opts.append([g.case(b"ANY")])
    if store == "radius" and g.maybe(0.5):
        opts.append([g.case(g.choice([b"STORE", b"STOREDIST"])), g.choice(GEO_KEYS)])
    if store == "search" and g.maybe(0.5):
        opts.append([g.case(b"STOREDIST")])
    if store == "ro" and g.maybe(0.05):
        opts.append([g.case(b"STORE"), geo_key(g)])
    if g.maybe(0.03):
        opts.append([g.case(g.choice([b"FOO", b"COUNT", b"BYBOX", b"STORE", b"WITHDIST"]))])
    g.rng.shuffle(opts)
    return [x for opt in opts for x in opt]


def geo_from_and_by(g: G) -> list:
    """GEOSEARCH's FROMMEMBER|FROMLONLAT and BYRADIUS|BYBOX, in either order, now and then missing,
    repeated or both."""
    froms = [[g.case(b"FROMMEMBER"), geo_member(g)], [g.case(b"FROMLONLAT"), *geo_position(g)]]
    bys = [[g.case(b"BYRADIUS"), *geo_distance(g)], [g.case(b"BYBOX"), *geo_box(g)]]
    parts = [g.choice(froms), g.choice(bys)]
    r = g.rng.random()
    if r < 0.03:
        parts.pop(g.int(0, 1))
    elif r < 0.06:
        parts.append(g.choice(froms + bys))
    g.rng.shuffle(parts)
    return [x for part in parts for x in part]


def _geoadd(g: G):
    args = [g.case(b"GEOADD"), geo_key(g)]
    if g.maybe(0.3):
        args += [g.case(f) for f in g.choice([[b"NX"], [b"XX"], [b"CH"], [b"NX", b"CH"], [b"CH", b"XX"],
                                              [b"XX", b"NX"], [b"CH", b"CH"], [b"GT"]])]
    n = g.int(1, 4) if g.maybe(0.85) else g.int(30, 150)
    for _ in range(n):
        args += [*geo_position(g), geo_member(g) if n < 30 else b"p%d" % g.int(0, 300)]
    if g.maybe(0.02):
        args.append(b"1")
    return args


def _geosearch(g: G):
    return [g.case(b"GEOSEARCH"), geo_key(g), *geo_from_and_by(g), *geo_options(g, "none")]


def _geosearchstore(g: G):
    return [g.case(b"GEOSEARCHSTORE"), g.choice(GEO_KEYS), geo_key(g), *geo_from_and_by(g),
            *geo_options(g, "search")]


def _georadius(g: G, name: bytes):
    store = "ro" if name.endswith(b"_RO") else "radius"
    return [g.case(name), geo_key(g), *geo_position(g), *geo_distance(g), *geo_options(g, store)]


def _georadiusbymember(g: G, name: bytes):
    store = "ro" if name.endswith(b"_RO") else "radius"
    return [g.case(name), geo_key(g), geo_member(g), *geo_distance(g), *geo_options(g, store)]


def _geodist(g: G):
    args = [g.case(b"GEODIST"), geo_key(g), geo_member(g), geo_member(g)]
    if g.maybe(0.6):
        args.append(g.choice(GEO_UNITS + GEO_BAD_UNITS[:2]))
    if g.maybe(0.02):
        args.append(b"km")
    return args


def _geo_dump(g: G):
    key = g.choice(GEO_KEYS)
    return [Step((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"), GEO_STORED_SCORES),
            Step((b"OBJECT", b"ENCODING", key), OBJECT_ENCODING)]


GEO_GENERATORS = [
    Gen("geoadd", 8, _geoadd),
    Gen("geopos", 2, lambda g: [g.case(b"GEOPOS"), geo_key(g), *[geo_member(g) for _ in range(g.int(0, 4))]],
        readonly=True),
    Gen("geohash", 2, lambda g: [g.case(b"GEOHASH"), geo_key(g), *[geo_member(g) for _ in range(g.int(0, 4))]],
        readonly=True),
    Gen("geodist", 2, _geodist, compare=GEO_DISTANCES, readonly=True),
    Gen("geosearch", 6, _geosearch, compare=GEO_DISTANCES, readonly=True),
    Gen("geosearchstore", 2, _geosearchstore),
    Gen("georadius", 2, lambda g: _georadius(g, b"GEORADIUS"), compare=GEO_DISTANCES),
    Gen("georadius_ro", 1.5, lambda g: _georadius(g, b"GEORADIUS_RO"), compare=GEO_DISTANCES, readonly=True),
    Gen("georadiusbymember", 2, lambda g: _georadiusbymember(g, b"GEORADIUSBYMEMBER"), compare=GEO_DISTANCES),
    Gen("georadiusbymember_ro", 1.5, lambda g: _georadiusbymember(g, b"GEORADIUSBYMEMBER_RO"),
        compare=GEO_DISTANCES, readonly=True),
    Gen("zrem", 1, lambda g: [b"ZREM", g.choice(GEO_KEYS), *[geo_member(g) for _ in range(g.int(1, 3))]]),
    Gen("zrange", 1, _geo_dump, mutate=False, readonly=True),
]

GENERATORS = GENERATORS + GEO_GENERATORS

# The geo rows with the zset and key rows that meet geo sets (ZADD of other scores, ZREM, ZSCORE,
# WRONGTYPE, RENAME, COPY, DEL, expiry): the mix of tests/differential/test_geo.py's streams.
GEO_STREAM_GENERATORS = GEO_GENERATORS + [
    dataclasses.replace(gen, weight=gen.weight / 4)
    for gen in STRING_GENERATORS + KEY_GENERATORS + EXPIRY_GENERATORS + ZSET_GENERATORS
    if gen.command in {"set", "del", "exists", "type", "rename", "copy", "expire", "persist", "zadd", "zscore",
                       "zrem", "zcard", "zrange", "zpopmin"}
]
