"""HyperLogLog commands side by side with redis-server, byte for byte: a HyperLogLog is a string,
so after every step GET must return Redis's bytes (header, cached cardinality, sparse opcodes,
dense registers), not only the same counts.

Seeded PFADD streams with a GET after each command, PFCOUNT of one key (which writes the cache)
and of several (which writes nothing), PFMERGE combinations, the sparse-to-dense promotion
under CONFIG SET hll-sparse-max-bytes, PFDEBUG, corrupt values SET by a client, strings taken
from Redis's GET, wrong types, WATCH and PFSELFTEST. The random streams in
test_random_streams.py mix PF commands into everything else (generators.py).
"""

import random

import pytest

from support.differ import EXACT, HELLO, OBJECT_ENCODING, TTL, Op, Step

from .streams import run_stream, stream_seeds

KEYS = ["h", "h2", "h3", "dst", "str", "lst", "c", "nokey"]
HEADER = b"HYLL\x01\x00\x00\x00" + b"\x00" * 8        # sparse, cache valid and 0
STALE = b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80"  # sparse, cache stale
DENSE_HEADER = b"HYLL\x00\x00\x00\x00" + b"\x00" * 7 + b"\x80"
# An element whose hash gives a run of 35 (register 11247), found by search: no sparse VAL holds it.
BIG_RUNS = [b"big:3244251397"]


def S(*args, compare=EXACT):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), compare)


def op(name, *steps):
    return Op([S("DEL", *KEYS), S("CONFIG", "SET", "hll-sparse-max-bytes", "3000"), S("SET", "str", "plain"),
               S("RPUSH", "lst", "a")] + list(steps), name)


def elements(rng, n, space=10**6):
    return [b"e%d" % rng.randrange(space) for _ in range(n)]


@pytest.fixture
def check(corpus):
    return lambda name, ops: corpus("hyperloglog", name, ops)


# ---- seeded streams ----------------------------------------------------------------------

def pf_stream(seed: int, length: int) -> list:
    """PFADDs of 0..40 elements (now and then hundreds), each followed by GET of its key; PFCOUNT of
    one or several keys, PFMERGE and CONFIG SET of the sparse limit among them, with GETs after."""
    rng = random.Random(seed)
    keys = [b"h", b"h2", b"h3"]
    ops = [Op([S("DEL", *keys), S("CONFIG", "SET", "hll-sparse-max-bytes", "3000")], "reset")]
    space = rng.choice([50, 1000, 10**6])
    while len(ops) < length:
        r = rng.random()
        key = rng.choice(keys)
        if r < 0.6:
            n = rng.choice([0, 1, 1, 2, 3, 5, 10, 40]) if rng.random() < 0.9 else rng.randrange(100, 900)
            ops.append(Op([S("PFADD", key, *elements(rng, n, space)), S("GET", key)], "pfadd"))
        elif r < 0.75:
            ops.append(Op([S("PFCOUNT", key), S("GET", key), S("PFCOUNT", key)], "pfcount"))
        elif r < 0.85:
            ops.append(Op([S("PFCOUNT", *rng.sample(keys + [b"nokey"], rng.randint(2, 4))), S("GET", key)],
                          "pfcount of several"))
        elif r < 0.95:
            dest = rng.choice(keys + [b"dst"])
            sources = rng.sample(keys + [b"nokey"], rng.randint(0, 3))
            ops.append(Op([S("PFMERGE", dest, *sources), S("GET", dest), S("PFDEBUG", "ENCODING", dest)],
                          "pfmerge"))
        else:
            limit = rng.choice([0, 20, 100, 300, 1000, 3000, 6000])
            ops.append(Op([S("CONFIG", "SET", "hll-sparse-max-bytes", limit)], "sparse limit"))
    ops.append(Op([S("GET", k) for k in keys + [b"dst"]] + [S("CONFIG", "SET", "hll-sparse-max-bytes", "3000")],
                  "final"))
    return ops


@pytest.mark.parametrize("protocol,seed", stream_seeds("GOBLIN_HLL_SEEDS", [1, 2, 3, 4, 5, 6], [7]),
                         ids=lambda x: str(x))
def test_pf_streams(pair, shrink_budget, reported_mismatches, protocol, seed):
    ops = pf_stream(seed, 400)
    if protocol == 3:
        ops.insert(0, Op([S("HELLO", "3", compare=HELLO)], "hello"))
    run_stream(pair, ops, family="hyperloglog", seed=seed, protocol=protocol, seeds_env="GOBLIN_HLL_SEEDS",
               test_path="tests/differential/test_hyperloglog.py", selector=f"{protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


# ---- counting, merging, the promotion ---------------------------------------------------------

def test_pfcount(check):
    rng = random.Random(11)
    small, big = elements(rng, 30), elements(rng, 3000)
    fill = [S("PFADD", "h", *small), S("PFADD", "h2", *big), S("PFADD", "h3", *small[:10], *big[:100])]
    ops = [
        op("one key writes its cache", *fill, S("GET", "h"), S("PFCOUNT", "h"), S("GET", "h"), S("PFCOUNT", "h"),
           S("PFCOUNT", "h2"), S("GET", "h2"), S("PFADD", "h", "new"), S("GET", "h"), S("PFCOUNT", "h"),
           S("PFADD", "h", *small), S("GET", "h")),
        op("several keys write nothing", *fill, S("PFCOUNT", "h", "h2"), S("PFCOUNT", "h", "h2", "h3", "nokey"),
           S("PFCOUNT", "h3", "h3"), S("PFCOUNT", "nokey", "nokey2"), S("GET", "h"), S("GET", "h2"), S("GET", "h3"),
           S("PFCOUNT", "h", "str"), S("PFCOUNT", "h", "lst"), S("PFCOUNT", "lst", "h")),
        op("missing and empty", S("PFCOUNT", "nokey"), S("PFADD", "h"), S("GET", "h"), S("PFCOUNT", "h"), S("GET", "h"),
           S("PFADD", "h"), S("PFCOUNT", "h", "nokey"), S("TYPE", "h"), S("OBJECT", "ENCODING", "h"), S("STRLEN", "h")),
        op("expiry stays", S("PFADD", "h", "a"), S("EXPIRE", "h", 100000), S("PFADD", "h", "b", "c"),
           S("TTL", "h", compare=TTL), S("PFCOUNT", "h"), S("TTL", "h", compare=TTL),
           S("PFADD", "h", *big), S("TTL", "h", compare=TTL), S("PFMERGE", "h", "h2"), S("TTL", "h", compare=TTL)),
    ]
    check("pfcount", ops)


def test_pfmerge(check):
    rng = random.Random(12)
    sets = {"sparse": elements(rng, 50), "dense": elements(rng, 4000), "other": elements(rng, 70)}
    ops = []
    setups = {
        "missing": [],
        "sparse": [S("PFADD", "dst", *sets["other"])],
        "dense": [S("PFADD", "dst", *sets["dense"][:2000], *sets["other"])],
        "stale": [S("PFADD", "dst", "x")],
        "counted": [S("PFADD", "dst", "x", "y"), S("PFCOUNT", "dst"), S("EXPIRE", "dst", 100000)],
    }
    sources = [[], ["nokey"], ["h"], ["h2"], ["h", "h2"], ["h", "h3"], ["dst"], ["h", "dst", "h"], ["str"],
               ["h", "lst"], ["h3", "c"]]
    for dest_name, setup in setups.items():
        for source in sources:
            ops.append(op(f"into {dest_name} from {'+'.join(source) or 'nothing'}",
                          S("PFADD", "h", *sets["sparse"]), S("PFADD", "h2", *sets["dense"]),
                          S("PFADD", "h3", *sets["other"][:5]), S("SET", "c", HEADER + b"\x7f\xfe"), *setup,
                          S("PFMERGE", "dst", *source), S("GET", "dst"), S("PFDEBUG", "ENCODING", "dst"),
                          S("PFCOUNT", "dst"), S("TTL", "dst", compare=TTL), S("OBJECT", "ENCODING", "dst")))
    ops.append(op("sparse inputs past the limit", S("CONFIG", "SET", "hll-sparse-max-bytes", "200"),
                  S("PFADD", "h", *sets["sparse"][:25]), S("PFADD", "h3", *sets["other"][:30]),
                  S("PFMERGE", "dst", "h", "h3"), S("GET", "dst"), S("PFDEBUG", "ENCODING", "dst")))
    ops.append(op("wrong destination", S("PFADD", "h", "a"), S("PFMERGE", "str", "h"), S("PFMERGE", "lst", "h"),
                  S("PFMERGE", "lst"), S("GET", "str"), S("PFMERGE"), S("PFMERGE", "dst", "nokey", "nokey"),
                  S("GET", "dst")))
    check("pfmerge", ops)


def test_the_sparse_limit(check):
    rng = random.Random(13)
    ops = []
    for limit in [0, 1, 17, 18, 19, 20, 21, 25, 100, 1000, 3000, 5000]:
        steps = [S("CONFIG", "SET", "hll-sparse-max-bytes", limit), S("CONFIG", "GET", "hll-sparse-max-bytes")]
        batch = 1 if limit <= 100 else 9
        for _ in range(min(60, 4 + limit // batch)):
            steps += [S("PFADD", "h", *elements(rng, batch)), S("GET", "h")]
        steps += [S("PFDEBUG", "ENCODING", "h"), S("PFCOUNT", "h")]
        ops.append(op(f"limit {limit}", *steps))
    # A limit lowered under a value's length turns it dense at its next growth, not before.
    grow = elements(rng, 200)
    ops.append(op("lowered under the value", S("PFADD", "h", *grow), S("STRLEN", "h"),
                  S("CONFIG", "SET", "hll-sparse-max-bytes", "100"), S("PFDEBUG", "ENCODING", "h"),
                  S("PFADD", "h", *grow[:50]), S("PFDEBUG", "ENCODING", "h"), S("PFADD", "h", "zz"),
                  S("GET", "h"), S("PFDEBUG", "ENCODING", "h")))
    for big in BIG_RUNS:
        ops.append(op(f"a run above 32 ({big})", S("PFADD", "h", "a", "b"), S("GET", "h"), S("PFADD", "h", big),
                      S("GET", "h"), S("PFDEBUG", "ENCODING", "h"), S("PFCOUNT", "h"), S("PFADD", "h2", big),
                      S("GET", "h2"), S("PFMERGE", "h3", "h"), S("GET", "h3")))
    # lua-time-limit is busy-reply-threshold's old name, not a name of the options around it.
    ops.append(op("config errors and names", S("CONFIG", "SET", "hll-sparse-max-bytes", "-1"),
                  S("CONFIG", "SET", "hll-sparse-max-bytes", "x"), S("CONFIG", "SET", "hll-sparse-max-bytes", "1k"),
                  S("CONFIG", "GET", "hll-sparse-max-bytes"), S("CONFIG", "SET", "lua-time-limit", "6000"),
                  S("CONFIG", "GET", "busy-reply-threshold"), S("CONFIG", "GET", "hll-sparse-max-bytes"),
                  S("CONFIG", "GET", "stream-node-max-entries"), S("CONFIG", "SET", "busy-reply-threshold", "5000"),
                  S("CONFIG", "SET", "hll-sparse-max-bytes", "3000")))
    check("sparse-limit", ops)


# ---- PFDEBUG, PFSELFTEST ------------------------------------------------------------------

def test_pfdebug(check):
    rng = random.Random(14)
    many = elements(rng, 5000)
    ops = [
        op("sparse", S("PFADD", "h", "a", "b", "c", *elements(rng, 40, 60)), S("PFDEBUG", "DECODE", "h"),
           S("PFDEBUG", "encoding", "h"), S("PFDEBUG", "GetReg", "h"), S("GET", "h"), S("PFDEBUG", "ENCODING", "h"),
           S("PFDEBUG", "DECODE", "h")),
        op("todense", S("PFADD", "h", "a"), S("PFDEBUG", "TODENSE", "h"), S("GET", "h"), S("PFDEBUG", "TODENSE", "h"),
           S("PFCOUNT", "h"), S("PFADD", "h", "b"), S("GET", "h")),
        op("dense", S("PFADD", "h", *many), S("PFDEBUG", "ENCODING", "h"), S("PFDEBUG", "GETREG", "h"),
           S("PFDEBUG", "DECODE", "h")),
        op("empty sparse", S("PFADD", "h"), S("PFDEBUG", "DECODE", "h"), S("SET", "c", HEADER),
           S("PFDEBUG", "DECODE", "c"), S("PFDEBUG", "ENCODING", "c"), S("PFDEBUG", "GETREG", "c"),
           S("PFDEBUG", "TODENSE", "c"), S("GET", "c")),
        op("errors", S("PFDEBUG", "GETREG", "nokey"), S("PFDEBUG", "NOPE", "nokey"), S("PFDEBUG", "NOPE", "str"),
           S("PFADD", "h", "a"), S("PFDEBUG", "NOPE", "h"), S("PFDEBUG", b"x\x00y", "h"), S("PFDEBUG", "", "h"),
           S("PFDEBUG", "GETREG"), S("PFDEBUG", "GETREG", "h", "h"), S("PFDEBUG", "ENCODING", "lst"),
           S("PFDEBUG", "TODENSE", "str"), S("PFDEBUG"), S("GET", "h")),
        op("selftest arity", S("PFSELFTEST", "x"), S("PFADD"), S("PFCOUNT")),
    ]
    check("pfdebug", ops)


def test_pfselftest(pair):
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        assert g.call("PFSELFTEST", timeout=60).raw == r.call("PFSELFTEST", timeout=60).raw == b"+OK\r\n"


# ---- corrupt values, wrong types, strings from Redis --------------------------------------------

def corrupt_values() -> dict:
    rng = random.Random(15)
    dense_63 = DENSE_HEADER + bytes([0xff]) * 12288
    values = {
        "empty": b"", "magic only": b"HYLL", "15 bytes": HEADER[:15], "header only": HEADER,
        "stale header only": STALE, "bad magic": b"HYLl" + HEADER[4:] + b"\x7f\xff",
        "encoding 2": b"HYLL\x02" + HEADER[5:] + b"\x7f\xff", "encoding 255": b"HYLL\xff" + HEADER[5:],
        "dense short": DENSE_HEADER + b"\x00" * 12287, "dense long": DENSE_HEADER + b"\x00" * 12289,
        "dense of 63s": dense_63, "integer": b"12345678901234567",
        "one register short": HEADER + b"\x7f\xfe", "one register short, stale": STALE + b"\x7f\xfe",
        "two XZERO 16384": STALE + b"\x7f\xff\x7f\xff", "overflow by a VAL": STALE + b"\x7f\xff\x80",
        "XZERO cut short": STALE + b"\x40\xfe\x7f", "XZERO cut short and short": STALE + b"\x7f",
        "lone XZERO byte first": STALE + b"\x40",
        "4096 VALs of run 4": STALE + b"\x8f" * 4096,
        "VALs then zeros": STALE + b"\x80\x84\x88\x8c\x90" + b"\x7f\xfa",
        "valid but unused bytes set": b"HYLL\x01abc" + b"\x05" + b"\x00" * 7 + b"\x7f\xff",
        "huge cached cardinality": b"HYLL\x01\x00\x00\x00" + b"\xff" * 7 + b"\x7f" + b"\x7f\xff",
        "first half only": STALE + b"\x5f\xff",
        "zeros past the end": STALE + b"\x3f" * 300,
    }
    for i in range(12):
        values[f"random opcodes {i}"] = STALE + bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 60)))
    for i in range(6):
        # A valid code with one byte changed.
        code = bytearray(b"\x5c\x7b\x80\x44\x76\x80\x50\xb1\x84\x49\x8c\x80\x42\x6d\x80\x42\x5a")
        code[rng.randrange(len(code))] = rng.getrandbits(8)
        values[f"mangled code {i}"] = STALE + bytes(code)
    return values


COMMANDS_ON_C = [("PFADD", "c", "a", "b", "e1", "e2", "e3"), ("PFADD", "c"), ("PFCOUNT", "c"), ("PFCOUNT", "c", "h"),
                 ("PFCOUNT", "h", "c"), ("PFMERGE", "dst", "c"), ("PFMERGE", "c", "h"), ("PFMERGE", "c"),
                 ("PFDEBUG", "GETREG", "c"), ("PFDEBUG", "DECODE", "c"), ("PFDEBUG", "ENCODING", "c"),
                 ("PFDEBUG", "TODENSE", "c")]


# Commands that edit c's sparse code in place.
EDITS_OF_C = {("PFADD", "c", "a", "b", "e1", "e2", "e3"), ("PFMERGE", "c", "h"), ("PFMERGE", "c")}
# A code ending in an XZERO cut short reads the missing byte as 0 in both servers. An edit that
# splits that XZERO leaves the new code's last byte past the string's end in Redis (in its
# buffer's terminator), where Redis's later reads find it and Goblin's do not (core/hyperloglog.h,
# Invariant 4): for these values an edit is compared by its reply and the bytes it leaves, and
# nothing reads the code after it.
CUT_SHORT = {"XZERO cut short", "XZERO cut short and short"}


@pytest.mark.parametrize("name,value", list(corrupt_values().items()), ids=lambda x: x if isinstance(x, str) else "")
def test_corrupt_and_odd_values(check, name, value):
    ops = []
    for command in COMMANDS_ON_C:
        steps = [S("PFADD", "h", "a", "zz"), S("SET", "c", value), S(*command), S("GET", "c"),
                 S("OBJECT", "ENCODING", "c")]
        if name in CUT_SHORT and command in EDITS_OF_C:
            steps = steps if command == ("PFMERGE", "c", "h") else steps[:2]
        else:
            steps += [S("PFCOUNT", "c"), S("GET", "c"), S("GET", "dst")]
        ops.append(op(" ".join(command), *steps))
    check("corrupt " + name.replace(" ", "-"), ops)


def test_wrong_types(check):
    ops = []
    for kind, create in [("list", ("RPUSH", "w", "a")), ("hash", ("HSET", "w", "f", "v")), ("set", ("SADD", "w", "m")),
                         ("zset", ("ZADD", "w", "1", "m")), ("int", ("SET", "w", "123")), ("text", ("SET", "w", "hello")),
                         ("long text", ("SET", "w", "x" * 100))]:
        ops.append(Op([S("DEL", "w", "h", "dst"), S(*create), S("PFADD", "h", "a"), S("PFADD", "w", "a"), S("PFADD", "w"),
                       S("PFCOUNT", "w"), S("PFCOUNT", "h", "w"), S("PFCOUNT", "w", "h"), S("PFMERGE", "w", "h"),
                       S("PFMERGE", "dst", "h", "w"), S("EXISTS", "dst"), S("PFMERGE", "w"),
                       S("PFDEBUG", "ENCODING", "w"), S("PFDEBUG", "NOPE", "w"), S("TYPE", "w"),
                       S("OBJECT", "ENCODING", "w", compare=OBJECT_ENCODING)], "wrong type " + kind))
    ops.append(Op([S("DEL", "h"), S("PFADD", "h", "a", "b"), S("APPEND", "h", "x"), S("PFCOUNT", "h"),
                   S("PFADD", "h", "c"), S("SETRANGE", "h", 4, "\x00"), S("PFCOUNT", "h"), S("SETRANGE", "h", 0, "X"),
                   S("PFADD", "h", "z"), S("GETRANGE", "h", 0, 3)], "string commands on a HyperLogLog"))
    ops.append(Op([S("DEL", "h"), S("SET", "h", HEADER + b"\x7f\xff"), S("OBJECT", "ENCODING", "h"),
                   S("PFCOUNT", "h"), S("OBJECT", "ENCODING", "h"), S("SET", "h", HEADER + b"\x7f\xff"),
                   S("PFADD", "h", "a"), S("OBJECT", "ENCODING", "h"), S("SET", "h", HEADER + b"\x7f\xff"),
                   S("PFADD", "h"), S("OBJECT", "ENCODING", "h"), S("SET", "h", HEADER + b"\x7f\xff"),
                   S("PFCOUNT", "h", "h"), S("OBJECT", "ENCODING", "h"), S("PFDEBUG", "ENCODING", "h"),
                   S("OBJECT", "ENCODING", "h")], "a short value SET by a client"))
    check("wrong-types", ops)


def test_strings_taken_from_redis(pair):
    """A value built by Redis, SET into both servers, then counted and grown: the bytes stay Redis's."""
    rng = random.Random(16)
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        for size in [0, 3, 100, 800, 2000, 20000]:
            r.call("DEL", "src")
            r.call("PFADD", "src", *elements(rng, size))
            if size % 2:
                r.call("PFCOUNT", "src")
            value = r.call("GET", "src").value
            for step in [("SET", "k", value), ("PFCOUNT", "k"), ("GET", "k"), ("PFADD", "k", *elements(rng, 30)),
                         ("GET", "k"), ("PFCOUNT", "k"), ("GET", "k"), ("PFMERGE", "m", "k"), ("GET", "m"),
                         ("DEL", "m")]:
                assert g.call(*step).raw == r.call(*step).raw, (size, step[:2])


def test_watch_sees_the_cache_write(pair):
    """PFCOUNT of one key with a stale cache changes the string: a transaction watching it fails."""
    results = []
    for server in (pair.goblin_server, pair.reference_server):
        with server.raw() as a, server.raw() as b:
            a.call("DEL", "w1", "w2")
            a.call("PFADD", "w1", "x")
            a.call("PFADD", "w2", "x")
            a.call("PFCOUNT", "w2")  # cache now valid
            row = []
            for key in ("w1", "w2"):
                a.call("WATCH", key)
                b.call("PFCOUNT", key)
                a.call("MULTI")
                a.call("PING")
                row.append(a.call("EXEC").raw)
            results.append(row)
    assert results[0] == results[1]
    assert results[0][0] in (b"*-1\r\n", b"_\r\n") and results[0][1] == b"*1\r\n+PONG\r\n"
