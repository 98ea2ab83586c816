"""The data set of the RDB tests (every type and form, edge values, several databases, expiries, function
libraries), the encoding knobs they are run under, and the readers of a server's whole state: shared by
test_rdb_export.py (Goblin writes RDB, redis-server loads it) and test_rdb_load.py (redis-server writes RDB,
Goblin loads it)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess

from support.resp import RawConnection
from support.server import REFERENCE_BINARY, ServerProcess, stop_and_check, wait_for
from support.stream_state import as_map, stream_full_state

REDIS_CHECK_RDB = shutil.which("redis-check-rdb") or "/usr/bin/redis-check-rdb"
DATABASES = (0, 2, 15)
# Every key's deadline is in the far future (PEXPIRETIME is compared exactly) and distinct.
FAR_MS = 4102444800000   # 2100-01-01

# Knob sets, given to goblin-server and to the redis-server that loads the file. set-max-listpack-*
# are 7.2 names (goblin only): for RDB 10 only set-max-intset-entries matters.
KNOBS = {
    "defaults": {},
    "tight": {"list-max-listpack-size": "3", "zset-max-listpack-entries": "4", "zset-max-listpack-value": "8",
              "hash-max-listpack-entries": "4", "hash-max-listpack-value": "8", "set-max-intset-entries": "4",
              "stream-node-max-entries": "3", "stream-node-max-bytes": "200"},
    "roomy": {"list-max-listpack-size": "-5", "zset-max-listpack-entries": "5000", "zset-max-listpack-value": "200",
              "hash-max-listpack-entries": "5000", "hash-max-listpack-value": "200", "set-max-intset-entries": "5000",
              "stream-node-max-entries": "0", "stream-node-max-bytes": "0"},
}
GOBLIN_ONLY_KNOBS = {"set-max-listpack-entries": "4", "set-max-listpack-value": "8"}

LIBRARY_SHORT = "#!lua name=shortlib\nredis.register_function('echo1', function(keys, args) return args[1] end)"
LIBRARY_LONG = ("#!lua name=longlib\n" + "-- padding that LZF compresses well\n" * 40 +
                "redis.register_function{function_name='count_keys', callback=function(keys, args) "
                "return #keys end, flags={'no-writes'}}")


# ---- the data set ----------------------------------------------------------------------------------------

def flat(pairs):
    return [x for pair in pairs for x in pair]


def dataset(db: int, rng: random.Random) -> list:
    """Commands writing every type and form into one database (keys tagged with db where it matters)."""
    tag = f"db{db}"
    small_zset = ["1", "one", "0.5", "half", "-1.5", "neg", "0", "zero", "-0", "negzero", "inf", "pinf",
                  "-inf", "ninf", "1e300", "huge", "5e-324", "tiny", "0.1", "tenth", "3", "42", "-7", "-3",
                  "1e18", "e18", "4611686018427387904", "2p62", "9007199254740993", "2p53+1", "1.1", "onepointone"]
    cmds = [
        # strings: integer encodings at their edges, embstr/raw, LZF and its threshold, binary
        ("SET", "s:empty", ""), ("SET", "s:binary", b"\x00\xff\r\n\x80" + tag.encode()),
        ("SET", "s:int", 12345 + db), ("SET", "s:i8", "-128"), ("SET", "s:i16", "32767"),
        ("SET", "s:i32max", "2147483647"), ("SET", "s:i32min", "-2147483648"), ("SET", "s:i32over", "2147483648"),
        ("SET", "s:i64max", "9223372036854775807"), ("SET", "s:i64min", "-9223372036854775808"),
        ("SET", "s:i64over", "9223372036854775808"), ("SET", "s:lead0", "007"), ("SET", "s:negzero", "-0"),
        ("SET", "s:20", "a" * 20), ("SET", "s:21", "a" * 21), ("SET", "s:44", "b" * 44), ("SET", "s:45", "c" * 45),
        ("SET", "s:noise", rng.randbytes(3000)), ("SET", "s:big", b"xyz" * 40000),
        ("SET", b"\x00bin\xffkey", tag), ("SET", "12345", "an integer key"), ("SET", "k" * 300, "a long key"),
        ("INCRBY", "s:counter", -77), ("PFADD", "s:hll", "a", "b", "c", tag),
        # lists: small, many nodes, integers, elements longer than a node, pushed at the head
        ("RPUSH", "l:small", "a", "1", "-5", "", b"\x00\xff", "9223372036854775807", "007", tag),
        ("RPUSH", "l:big", *[f"e{i}" for i in range(3000)]),
        ("RPUSH", "l:ints", *range(-3000, 3000, 7)),
        ("RPUSH", "l:long-elements", *[bytes([65 + i]) * 5000 for i in range(5)]),
        ("LPUSH", "l:pushed-left", *[f"p{i}" for i in range(400)]),
        # sets: intsets of each width, text, mixed, large of both kinds, a huge member
        ("SADD", "set:i16", 1, 2, -3, 32767, -32768), ("SADD", "set:i32", 1, 100000, -2147483648),
        ("SADD", "set:i64", 1, 9223372036854775807, -9223372036854775808),
        ("SADD", "set:text", "a", "b", "", b"\x00\xff", tag), ("SADD", "set:mixed", "1", "a", "007"),
        ("SADD", "set:big-int", *range(1000)), ("SADD", "set:big-text", *[f"m{i}" for i in range(1000)]),
        ("SADD", "set:huge-member", "h" * 100000, "x"),
        ("SADD", "set:was-text", "a", "1", "2"), ("SREM", "set:was-text", "a"),
        # sorted sets: edge scores, large with -0 and infinities, long members, equal scores
        ("ZADD", "z:small", *small_zset),
        ("ZADD", "z:big", *flat((str(i * 0.5 - 100), f"m{i}") for i in range(500)), "-0", "negzero", "inf", "pinf",
         "-inf", "ninf"),
        ("ZADD", "z:long-member", "1", "m" * 100, "2", "n"),
        ("ZADD", "z:same-score", *flat(("5", f"k{i:03d}") for i in range(200))),
        ("ZADD", "z:huge-member", "1", "M" * 50000, "2", "small"),
        # hashes: small, large, integer fields and values, a long value, a huge value
        ("HSET", "h:small", "a", "1", "10", "-5", "f", tag, "empty", "", b"\x00", b"\xff"),
        ("HSET", "h:big", *flat((f"f{i}", f"v{i}") for i in range(1000))),
        ("HSET", "h:int-fields", *flat((str(i), str(i * i - 1000)) for i in range(300))),
        ("HSET", "h:long-value", "short", "x", "long", "v" * 100),
        ("HSET", "h:huge-value", "k", "V" * 100000),
    ]
    cmds += stream_commands("st:groups")
    cmds += [
        # a stream whose deltas wrap: ms up to 2^64 - 1, a seq below the master's
        ("XADD", "st:edges", "5-10", "f", "v"), ("XADD", "st:edges", "6-0", "f", "w"),
        ("XADD", "st:edges", "18446744073709551615-0", "other", "fields", "x", "y"),
        # an empty stream that keeps its last id and groups
        ("XADD", "st:emptied", "7-1", "a", "b"), ("XDEL", "st:emptied", "7-1"),
        ("XGROUP", "CREATE", "st:emptied", "g", "$"),
        ("XGROUP", "CREATE", "st:made", "g", "$", "MKSTREAM"),
    ]
    # expiries on one key of every type
    for i, key in enumerate(("s:int", "s:44", "l:small", "set:i16", "set:text", "z:small", "z:big", "h:small",
                             "h:big", "st:groups")):
        cmds.append(("PEXPIREAT", key, FAR_MS + 1000 * db + i))
    return cmds


def stream_commands(key: str) -> list:
    """A stream of 300 entries (two field layouts alternating in runs, so nodes mix same-field and other
    entries), deletions and a trim, and three groups: pending entries of two consumers, acks, a claim with a
    big retry count, an idle consumer, a group whose entries-read is unknown."""
    cmds = []
    for i in range(300):
        ms = 1000 + i // 3
        fields = ("name", f"n{i}", "qty", str(i)) if (i // 10) % 2 == 0 else ("other", f"o{i}")
        cmds.append(("XADD", key, f"{ms}-{i % 3}", *fields))
    cmds += [("XDEL", key, "1010-1", "1050-0", "1099-2"), ("XTRIM", key, "MINID", "1003-0"),
             ("XGROUP", "CREATE", key, "g1", "0"),
             ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "25", "STREAMS", key, ">"),
             ("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "10", "STREAMS", key, ">"),
             ("XACK", key, "g1", "1003-0", "1004-1", "1005-2"),
             ("XCLAIM", key, "g1", "bob", "0", "1006-0", "RETRYCOUNT", "5000000000"),
             ("XGROUP", "CREATECONSUMER", key, "g1", "idle-carol"),
             ("XGROUP", "CREATE", key, "g2", "$"),
             ("XGROUP", "CREATE", key, "g3", "1020-0"),
             ("XREADGROUP", "GROUP", "g3", "dave", "COUNT", "3", "STREAMS", key, ">")]
    return cmds


def fill(conn: RawConnection, seed: int = 7):
    rng = random.Random(seed)
    for db in DATABASES:
        run(conn, [("SELECT", db), *dataset(db, rng)])
    run(conn, [("SELECT", 0), ("FUNCTION", "LOAD", LIBRARY_SHORT), ("FUNCTION", "LOAD", LIBRARY_LONG)])


def run(conn: RawConnection, commands, timeout: float = 60.0) -> list:
    replies = conn.pipeline([tuple(c) for c in commands], timeout=timeout)
    for cmd, reply in zip(commands, replies):
        assert not reply.is_error, f"{cmd[:3]!r}... -> {reply!r}"
    return replies


# ---- reading a server's state ----------------------------------------------------------------------------

def stream_groups(conn: RawConnection, key: bytes) -> dict:
    """The stream's full state without each server's own radix-tree sizes and 7.2's active-time."""
    info = stream_full_state(conn, key)
    for own in (b"radix-tree-keys", b"radix-tree-nodes"):
        info.pop(own)
    for group in info[b"groups"].values():
        for consumer in group[b"consumers"].values():
            consumer.pop(b"active-time", None)
    return info


def score(text: bytes) -> str:
    """A score as the double it names (7.0 prints 17 digits, 7.2 the shortest text), -0 kept."""
    return repr(float(text))


def read_value(conn: RawConnection, kind: str, key: bytes):
    if kind == "string":
        return conn.call("GET", key).value
    if kind == "list":
        return [e.value for e in conn.call("LRANGE", key, 0, -1).elements()]
    if kind == "set":
        return sorted(e.value for e in conn.call("SMEMBERS", key).elements())
    if kind == "zset":
        items = [e.value for e in conn.call("ZRANGE", key, 0, -1, "WITHSCORES").elements()]
        return [(m, score(s)) for m, s in zip(items[0::2], items[1::2])]
    if kind == "hash":
        items = [e.value for e in conn.call("HGETALL", key).elements()]
        return sorted(zip(items[0::2], items[1::2]))
    if kind == "stream":
        entries = [(e[0], tuple(e[1])) for e in conn.call("XRANGE", key, "-", "+").py()]
        return entries, stream_groups(conn, key)
    raise AssertionError(f"{key!r}: unexpected type {kind}")


def scan_keys(conn: RawConnection) -> list:
    keys, cursor = set(), b"0"
    while True:
        reply = conn.call("SCAN", cursor, "COUNT", 1000)
        cursor = reply.value[0].value
        keys.update(e.value for e in reply.value[1].value)
        if cursor == b"0":
            return sorted(keys)


def dump(conn: RawConnection) -> dict:
    """{(db, key): (type, OBJECT ENCODING, value, PEXPIRETIME)} of every key of every database."""
    state = {}
    for db in range(16):
        run(conn, [("SELECT", db)])
        for key in scan_keys(conn):
            kind = conn.call("TYPE", key).value.decode()
            encoding = conn.call("OBJECT", "ENCODING", key).value.decode()
            state[(db, key)] = (kind, encoding, read_value(conn, kind, key), conn.call("PEXPIRETIME", key).value)
    run(conn, [("SELECT", 0)])
    return state


def functions(conn: RawConnection) -> list:
    libraries = [as_map(lib) for lib in conn.call("FUNCTION", "LIST", "WITHCODE").py()]
    return sorted((lib[b"library_name"], lib[b"library_code"]) for lib in libraries)


def assert_same_data(before: dict, after: dict, expected_encoding, what: str = "loaded"):
    """after (a dump() of the server that loaded the file) holds before's keys with their types, values and
    deadlines; expected_encoding(name, kind, encoding, value) gives the encoding after should report for a
    value before held in encoding."""
    missing = sorted(set(before) - set(after))
    extra = sorted(set(after) - set(before))
    assert not missing and not extra, f"keys missing once {what} {missing[:10]}, extra {extra[:10]}"
    for name, (kind, encoding, value, expire_at) in before.items():
        a_kind, a_encoding, a_value, a_expire_at = after[name]
        assert a_kind == kind, f"{name}: type {kind} became {a_kind}"
        assert a_value == value, f"{name}: value {value!r:.300} became {a_value!r:.300}"
        assert a_expire_at == expire_at, f"{name}: PEXPIRETIME {expire_at} became {a_expire_at}"
        expected = expected_encoding(name, kind, encoding, value)
        assert a_encoding == expected, f"{name}: {encoding} {what} as {a_encoding}, not {expected}"


def canonical_integer(member: bytes) -> bool:
    """Whether Redis takes member for an integer (string2ll: no '+', no leading zeros, no "-0")."""
    try:
        value = int(member)
    except ValueError:
        return False
    return str(value).encode() == member and -2**63 <= value < 2**63


# ---- files and servers loading them ----------------------------------------------------------------------

def check_rdb(path: str) -> str:
    """redis-check-rdb must accept the file; returns its report."""
    proc = subprocess.run([REDIS_CHECK_RDB, path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0 and "RDB looks OK" in out, f"redis-check-rdb refused {path}:\n{out[-3000:]}"
    return out


def rdb_version(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(9)


class LoadedServer:
    """A server (Debian's redis-server unless binary is given) started on a copy of an RDB file; redis-server
    validates every payload deeply."""

    def __init__(self, path: str, knobs: dict, binary: str = REFERENCE_BINARY, options: dict | None = None):
        extra = {"sanitize-dump-payload": "yes"} if binary == REFERENCE_BINARY else {}
        self.srv = ServerProcess(binary, name="redis-loaded" if binary == REFERENCE_BINARY else "goblin-loaded",
                                 unix=False, options={**knobs, **extra, "dbfilename": "dump.rdb", **(options or {})},
                                 startup_timeout=120)
        shutil.copyfile(path, os.path.join(self.srv.dir, "dump.rdb"))

    def __enter__(self) -> ServerProcess:
        self.srv.start()
        wait_for(lambda: self.srv.info("persistence")["loading"] == "0", timeout=120, what="redis to load the file")
        return self.srv

    def __exit__(self, *exc):
        stop_and_check(self.srv)


def keys_loaded(srv: ServerProcess) -> int:
    return sum(int(v.split(",")[0].split("=")[1]) for k, v in srv.info("keyspace").items() if k.startswith("db"))




def LoadedRedis(path: str, knobs: dict) -> LoadedServer:
    return LoadedServer(path, knobs)
