"""DUMP and RESTORE against Debian's redis-server 7.0, in both directions.

A payload DUMP writes in Goblin restores in redis-server (started with sanitize-dump-payload yes, so every
listpack, intset and stream node is validated entry by entry) to the same value, with the encoding Redis 7.0
gives it; a payload redis-server writes restores in Goblin to the same value. Where both servers hold a value
in the same form, their payloads are the same bytes. Where they legitimately differ, the contents are
compared instead:
  - hashtable sets and hashes list their elements in each server's hash order;
  - a set of text members that Goblin holds as a listpack (Redis 7.2's form) is written as the hashtable
    set RDB 10 has; a set that became all-integer by SREM is written as the intset Redis would load it as;
  - a listpack sorted set whose scores Redis 7.0 prints with 17 digits (1.1 as 1.1000000000000001) holds
    those texts in Redis's payload and 7.2's shortest texts in Goblin's;
  - a stream from which entries were deleted keeps them, flagged, in Redis's nodes; Goblin writes the live
    entries only;
  - a list pushed at the head fills its nodes from the head in Redis; Goblin cuts nodes as a tail push would;
  - a ZADD of more members than a listpack holds makes a skiplist at once in Redis 7.2 (and Goblin), keeping
    a -0 score; 7.0 starts with a listpack, which stores -0 as the integer 0;
  - consumers' seen times and pending entries' delivery times are the moments each server ran the commands.
DEBUG DIGEST-VALUE is each server's own hash (it never agrees between them), so values are compared by
their contents: lists in order, sets and hashes as sets, sorted sets with scores as doubles, streams entry by
entry with XINFO STREAM FULL for their groups.

The random tests print their seed; GOBLIN_DUMP_SEED=<n> replays one.
"""

from __future__ import annotations

import os
import random

import pytest

from integration.test_effects import incr_commands
from integration.test_rdb_export import expected_encoding_after_load
from support.rdb_data import GOBLIN_ONLY_KNOBS, KNOBS, canonical_integer, dataset, read_value, run, scan_keys
from support import rdb_build
from support.rdb_build import dump_payload, payload_value, payload_version
from support.server import REFERENCE_BINARY

# The dataset keys whose payloads differ by design (see the module's docstring), beyond the hash-ordered
# forms every knob set gives.
DATASET_HISTORY = {
    b"l:pushed-left": "pushed at the head",
    b"st:groups": "entries deleted",
    b"set:was-text": "all-integer after SREM",
}



def seed_for(name: str) -> int:
    seed = int(os.environ.get("GOBLIN_DUMP_SEED", random.randrange(1 << 32)))
    print(f"{name}: seed {seed} (GOBLIN_DUMP_SEED={seed} replays it)")
    return seed


def nice_scores(value) -> bool:
    """Whether Redis 7.0 writes every score of a listpack sorted set as Goblin (7.2) does. 7.0 writes
    %.17g, 7.2 the shortest digits, in plain notation only while the digits after the point are at most
    6 or the number is below 10^4 (fpconv). Both agree on an infinity, a zero, an integer below 2^52,
    and a short decimal that plain notation writes the same both ways (quarters, say)."""
    def nice(text) -> bool:
        score = float(text)
        if score in (float("inf"), float("-inf"), 0.0):
            return True
        if score == int(score) and abs(score) < 2 ** 52:
            return True
        shortest = repr(score)
        fraction = shortest.split(".")[1] if "." in shortest else ""
        return (f"{score:.17g}" == shortest and "e" not in shortest and len(shortest.strip("-.0")) <= 15
                and (len(fraction) <= 6 or abs(score) < 1e4))
    return all(nice(s) for _, s in value)


def same_payload_expected(kind: str, redis_encoding: str, value, history: str | None) -> bool:
    """Whether both servers' payloads for a value must be the same bytes (the docstring's rules)."""
    if history is not None:
        return False
    if kind in ("set", "hash"):
        return redis_encoding not in ("hashtable",)
    if kind == "zset" and redis_encoding == "listpack":
        return nice_scores(value)
    return True


def state_of(conn, key: bytes) -> tuple:
    kind = conn.call("TYPE", key).value.decode()
    encoding = conn.call("OBJECT", "ENCODING", key).value.decode()
    return kind, encoding, read_value(conn, kind, key), conn.call("PEXPIRETIME", key).value


def restore_args(key: bytes, payload: bytes, expire_at: int) -> tuple:
    """RESTORE of a payload with the source's deadline, as an absolute time."""
    return ("RESTORE", key, max(expire_at, 0), payload, "REPLACE") + (("ABSTTL",) if expire_at > 0 else ())


def redis_restores_as(knobs: str):
    """The encoding redis-server 7.0 gives a restored value: the one its loader gives (a string by its
    bytes, a list a quicklist, a set of few integers an intset, else the form its own copy has)."""
    return lambda kind, encoding, value: expected_encoding_after_load(kind, encoding, value, KNOBS[knobs])


def goblin_restores_as(knobs: str):
    """The encoding goblin-server gives a restored value, as Redis 7.2's loader does: a string's by its
    bytes; a set an intset when its members are few enough integers, a listpack when they are few and short
    enough, else a hashtable, whatever form it had (SREM never turns a set back into an intset, a load does);
    anything else the form its own copy has."""
    limits = {"set-max-intset-entries": 512, "set-max-listpack-entries": 128, "set-max-listpack-value": 64,
              **{k: int(v) for k, v in {**KNOBS[knobs], **(GOBLIN_ONLY_KNOBS if knobs == "tight" else {})}.items()
                 if k.startswith("set-")}}

    def expected(kind: str, encoding: str, value) -> str:
        if kind == "string":
            return expected_encoding_after_load(kind, encoding, value, {})
        if kind == "set":
            if len(value) <= limits["set-max-intset-entries"] and all(map(canonical_integer, value)):
                return "intset"
            if len(value) <= limits["set-max-listpack-entries"] and \
                    all(len(m) <= limits["set-max-listpack-value"] for m in value):
                return "listpack"
            return "hashtable"
        return encoding
    return expected


def servers_with(make_server, knobs: str):
    goblin = make_server(options={**KNOBS[knobs], **(GOBLIN_ONLY_KNOBS if knobs == "tight" else {})})
    redis = make_server(name="redis-restore", binary=REFERENCE_BINARY, unix=False,
                        options={**KNOBS[knobs], "sanitize-dump-payload": "yes"})
    return goblin, redis


def assert_moved(source, target, keys, history: dict, prefix: bytes, expected_encoding) -> int:
    """DUMPs each key in source and RESTOREs it in target as prefix + key, with the source's deadline. The
    restored value must be the source's; its encoding expected_encoding(type, target's encoding of its own
    copy of the key, value) (both servers ran the same commands); the payload the bytes target's own DUMP
    gives, where they must agree. Returns the number of payloads compared byte for byte."""
    identical = 0
    for key in keys:
        payload = source.call("DUMP", key).value
        assert payload_version(payload) == 10, f"{key!r}: payload version {payload_version(payload)}"
        kind, _, value, expire_at = state_of(source, key)
        own_kind, own_encoding, _, _ = state_of(target, key)
        reply = target.call(*restore_args(prefix + key, payload, expire_at))
        assert reply.raw == b"+OK\r\n", f"RESTORE {key!r} ({own_kind} {own_encoding}) -> {reply!r}"
        restored = state_of(target, prefix + key)
        assert restored[0] == kind == own_kind, f"{key!r}: a {kind} became a {restored[0]}"
        assert restored[2] == value, f"{key!r}: {value!r:.300} became {restored[2]!r:.300}"
        assert restored[3] == expire_at, f"{key!r}: PEXPIRETIME {expire_at} became {restored[3]}"
        expected = expected_encoding(kind, own_encoding, value)
        assert restored[1] == expected, f"{key!r}: restored as {restored[1]}, not {expected} ({own_encoding} here)"
        redis_encoding = own_encoding if prefix == b"from-goblin:" else \
            source.call("OBJECT", "ENCODING", key).value.decode()
        if same_payload_expected(kind, redis_encoding, value, history.get(key)):
            assert target.call("DUMP", key).value == payload, f"{key!r} ({kind} {own_encoding}): payloads differ"
            identical += 1
    return identical


# ---- DUMP --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("knobs", ["defaults", "tight"])
def test_every_type_and_form_restores_both_ways(make_server, knobs):
    goblin, redis = servers_with(make_server, knobs)
    commands = dataset(0, random.Random(7))
    with goblin.raw() as g, redis.raw() as r:
        run(g, commands)
        run(r, commands)
        keys = scan_keys(g)
        assert scan_keys(r) == keys
        # The forms the data set was written to reach, as Goblin holds them.
        encodings = {(g.call("TYPE", k).value, g.call("OBJECT", "ENCODING", k).value) for k in keys}
        expected_forms = {(b"string", b"int"), (b"string", b"embstr"), (b"string", b"raw"), (b"list", b"quicklist"),
                          (b"set", b"intset"), (b"set", b"hashtable"), (b"zset", b"skiplist"),
                          (b"hash", b"hashtable"), (b"stream", b"stream")}
        if knobs == "defaults":
            expected_forms |= {(b"list", b"listpack"), (b"set", b"listpack"), (b"zset", b"listpack"),
                               (b"hash", b"listpack")}
        assert expected_forms <= encodings, expected_forms - encodings
        identical = assert_moved(g, r, keys, DATASET_HISTORY, b"from-goblin:", redis_restores_as(knobs))
        assert identical >= len(keys) * 2 // 3, f"only {identical} of {len(keys)} payloads were the same bytes"
        assert assert_moved(r, g, keys, DATASET_HISTORY, b"from-redis:", goblin_restores_as(knobs)) == identical


def test_dump_of_a_missing_or_expired_key_is_nil(make_server):
    goblin = make_server()
    with goblin.raw() as g:
        assert g.call("DUMP", "nothing").raw == b"$-1\r\n"
        run(g, [("SET", "gone", "v", "PX", "1"), ("DEBUG", "SLEEP", "0.01")])
        assert g.call("DUMP", "gone").raw == b"$-1\r\n"
        assert g.call("DUMP").raw == b"-ERR wrong number of arguments for 'dump' command\r\n"
        assert g.call("DUMP", "a", "b").raw == b"-ERR wrong number of arguments for 'dump' command\r\n"
        g.call("HELLO", "3")
        assert g.call("DUMP", "nothing").raw == b"_\r\n"


def test_dump_follows_rdbcompression_as_redis_does(make_server):
    goblin = make_server()
    redis = make_server(name="redis-dump", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g, redis.raw() as r:
        for conn in (g, r):
            run(conn, [("SET", "long", "ab" * 500), ("RPUSH", "list", *["xyz" * 30] * 20)])
        for setting in ("no", "yes"):
            for conn in (g, r):
                run(conn, [("CONFIG", "SET", "rdbcompression", setting)])
            for key in ("long", "list"):
                dumped = g.call("DUMP", key).value
                assert dumped == r.call("DUMP", key).value, (setting, key)
                assert (b"ab" * 500 in dumped or b"xyz" * 30 in dumped) == (setting == "no"), (setting, key)


# ---- random values of every type -----------------------------------------------------------------------------

def random_member(rng: random.Random, integers: bool) -> str | bytes:
    if integers:
        width = rng.choice((100, 1 << 15, 1 << 31, 1 << 63))
        return str(rng.randrange(-width, width))
    choice = rng.random()
    if choice < 0.1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 12)))
    if choice < 0.2:
        return "v" * rng.randrange(60, 400)
    return f"m{rng.randrange(10 ** rng.randrange(1, 7))}"


def random_score(rng: random.Random) -> str:
    choice = rng.random()
    if choice < 0.4:
        return str(rng.randrange(-1000, 1000))
    if choice < 0.6:
        return str(rng.randrange(-400, 400) / 4)
    if choice < 0.65:
        return rng.choice(("inf", "-inf", "-0", "1e300", "5e-324"))
    return repr(rng.uniform(-1e6, 1e6))


def random_value(rng: random.Random, key: str) -> tuple[list, str | None]:
    """Commands that build one random value at key, and its history (docstring) if any."""
    kind = rng.choice(("string", "list", "set", "zset", "hash", "stream"))
    size = rng.choice((1, 3, 10, 100, 700, 3000))
    history = None
    if kind == "string":
        value = rng.choice((str(rng.randrange(-1 << 63, 1 << 63)), "x" * rng.randrange(0, 100),
                            bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000))), "ab" * 5000))
        cmds = [("SET", key, value)]
    elif kind == "list":
        integers = rng.random() < 0.3
        elements = [random_member(rng, integers) for _ in range(size)]
        left = rng.random() < 0.2
        cmds = [("LPUSH" if left else "RPUSH", key, *elements)]
        history = "pushed at the head" if left else None
    elif kind == "set":
        integers = rng.random() < 0.5
        cmds = [("SADD", key, *[random_member(rng, integers) for _ in range(size)])]
    elif kind == "zset":
        scores = [random_score(rng) for _ in range(size)]
        cmds = [("ZADD", key, *[x for score in scores for x in (score, random_member(rng, False))])]
        if "-0" in scores and size > 1:
            history = "a -0 score in a ZADD past the listpack limit"
    elif kind == "hash":
        cmds = [("HSET", key, *[x for _ in range(size) for x in (random_member(rng, False),
                                                                  random_member(rng, rng.random() < 0.5))])]
    else:
        cmds, history = random_stream(rng, key, size)
    if rng.random() < 0.3:
        cmds.append(("PEXPIRE", key, rng.randrange(10 ** 6, 10 ** 9)))
    return cmds, history


def random_stream(rng: random.Random, key: str, size: int) -> tuple[list, str | None]:
    cmds, ms = [], rng.randrange(1, 10 ** 12)
    for i in range(size):
        ms += rng.choice((0, 0, 1, 1000))
        fields = rng.choice((("f", random_member(rng, rng.random() < 0.5)), ("a", "1", "b", "2"), ("name", f"n{i}")))
        cmds.append(("XADD", key, f"{ms}-{i}", *fields))
    history = None
    if rng.random() < 0.2:
        cmds.append(("XDEL", key, f"{ms}-{size - 1}"))
        history = "entries deleted"
    for g in range(rng.randrange(0, 3)):
        cmds.append(("XGROUP", "CREATE", key, f"g{g}", rng.choice(("0", "$"))))
        for consumer in range(rng.randrange(0, 3)):
            history = history or "consumers' times"
            cmds.append(("XREADGROUP", "GROUP", f"g{g}", f"c{consumer}", "COUNT", rng.randrange(1, 20),
                         "STREAMS", key, ">"))
    return cmds, history


@pytest.mark.parametrize("knobs", ["defaults", "tight"])
def test_random_values_restore_both_ways(make_server, knobs):
    rng = random.Random(seed_for(f"random values, {knobs}"))
    goblin, redis = servers_with(make_server, knobs)
    history = {}
    with goblin.raw() as g, redis.raw() as r:
        for i in range(60):
            key = f"k{i}"
            cmds, history[key.encode()] = random_value(rng, key)
            run(g, cmds)
            run(r, cmds)
        keys = scan_keys(g)
        assert len(keys) == 60
        assert assert_moved(g, r, keys, history, b"from-goblin:", redis_restores_as(knobs)) > 0
        assert assert_moved(r, g, keys, history, b"from-redis:", goblin_restores_as(knobs)) > 0


# ---- RESTORE's replies --------------------------------------------------------------------------------------

def restore_calls(dumped: bytes, zset: bytes, now_ms: int) -> list[tuple]:
    """RESTORE calls covering every option, error and order of checks; `dumped` is a string's payload."""
    bad_body = dump_payload
    return [
        ("k", 0, dumped), ("fresh", 0, dumped), ("fresh", -1, dumped), ("fresh", "abc", dumped),
        ("new1", -1, dumped), ("new2", "abc", dumped), ("new3", "1.5", dumped), ("new4", "9223372036854775808", dumped),
        ("i1", 0, dumped, "IDLETIME", 1, "FREQ", 2), ("i2", 0, dumped, "FREQ", 1, "IDLETIME", 2),
        ("i3", 0, dumped, "FREQ", 256), ("i4", 0, dumped, "FREQ", -1), ("i5", 0, dumped, "IDLETIME", -1),
        ("i6", 0, dumped, "IDLETIME", "abc"), ("i7", 0, dumped, "FREQ", "x"), ("i8", 0, dumped, "IDLETIME"),
        ("i9", 0, dumped, "FREQ"), ("i10", 0, dumped, "BOGUS"), ("i11", 0, dumped, "IDLETIME", 10, "IDLETIME", 20),
        ("i12", 0, dumped, "freq", 0, "FREQ", 255, "replace", "absttl", "REPLACE"),
        ("k", 0, dumped, "IDLETIME", -1), ("k", -1, b"garbage"), ("k", 0, b"garbage"),
        ("p1", 0, b"garbage"), ("p2", 0, b""), ("p3", 0, dumped[:-1]), ("p4", 0, dumped[:-10] + b"x" + dumped[-10:]),
        ("p5", 0, bad_body(b"\x00\x03abc", 13)), ("p6", 0, bad_body(b"\x00\x03abc", 9)),
        ("p7", 0, bad_body(b"\x00\x03abc", 0)),
        # Past the checksum: values that do not decode, and values read into the trailer or stopping short.
        ("d1", 0, bad_body(b"")), ("d2", 0, bad_body(b"\x63abc")), ("d3", 0, bad_body(b"\x0b\x00")),
        ("d4", 0, bad_body(b"\x02\x00")), ("d5", 0, bad_body(b"\x11\x00")), ("d6", 0, bad_body(b"\x04\x00")),
        ("d7", 0, bad_body(b"\x12\x00")), ("d8", 0, bad_body(b"\x00\x03ab")), ("d9", 0, bad_body(dumped[:-10] + b"x")),
        ("d10", 0, bad_body(b"\x06" + b"\x00" * 8)), ("d11", 0, bad_body(b"\x00\xc3\x05\x10\x01abc")),
        # Deadlines: relative, absolute, in the past, wrapping past the largest time.
        ("t1", 100000, dumped), ("t2", now_ms + 100000, dumped, "ABSTTL"), ("t3", 1, dumped, "ABSTTL"),
        ("k", 1, dumped, "ABSTTL", "REPLACE"), ("t4", 9223372036854775807, zset), ("t5", 9223372036854775806, zset,
                                                                                   "ABSTTL"),
        ("z", 0, zset, "REPLACE", "IDLETIME", 1000), ("z", 0, zset, "REPLACE", "FREQ", 7),
        ("z", now_ms - 10, zset, "ABSTTL", "REPLACE"), ("z", 0, zset), ("z", 0, zset, "REPLACE"),
    ]


def test_restore_replies_and_checks_as_redis(make_server):
    goblin = make_server()
    redis = make_server(name="redis-restore", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g, redis.raw() as r:
        for conn in (g, r):
            run(conn, [("SET", "k", "123"), ("ZADD", "z", 1, "a", 2, "b")])
        dumped, zset = r.call("DUMP", "k").value, r.call("DUMP", "z").value
        calls = restore_calls(dumped, zset, int(r.call("TIME").py()[0]) * 1000)
        for call in calls:
            assert g.call("RESTORE", *call).raw == r.call("RESTORE", *call).raw, call[:2] + call[3:]
        for key in {call[0] for call in calls}:
            assert [g.call(c, key).raw for c in ("TYPE", "GET")] == [r.call(c, key).raw for c in ("TYPE", "GET")], key
            assert (g.call("PTTL", key).value > 0) == (r.call("PTTL", key).value > 0), key
        assert g.call("RESTORE", "k", 0).raw == r.call("RESTORE", "k", 0).raw == \
            b"-ERR wrong number of arguments for 'restore' command\r\n"
        # RESTORE-ASKING is RESTORE outside a cluster.
        for conn in (g, r):
            assert conn.call("RESTORE-ASKING", "asked", 0, zset).raw == b"+OK\r\n"
            assert conn.call("RESTORE-ASKING", "asked", 0, zset).raw == b"-BUSYKEY Target key name already exists.\r\n"
            assert conn.call("ZRANGE", "asked", 0, -1).py() == [b"a", b"b"]


def test_idletime_and_freq_set_the_access_stamp_as_redis_does(make_server):
    """IDLETIME under an LRU (or no) policy, FREQ under an LFU one; each is ignored under the other."""
    seen = {}
    for kind, binary in (("goblin", None), ("redis", REFERENCE_BINARY)):
        srv = make_server(name=f"{kind}-stamps", **({"binary": binary, "unix": False} if binary else {}))
        with srv.raw() as conn:
            run(conn, [("SET", "s", "v")])
            payload = conn.call("DUMP", "s").value
            replies = []
            for policy, option, probe in [("noeviction", ("IDLETIME", 1000), "IDLETIME"),
                                          ("allkeys-lru", ("IDLETIME", 0), "IDLETIME"),
                                          ("noeviction", ("IDLETIME", 20_000_000), "IDLETIME"),
                                          ("noeviction", ("IDLETIME", 2 ** 63 - 1), "IDLETIME"),
                                          ("noeviction", ("FREQ", 7), "IDLETIME"),
                                          ("allkeys-lfu", ("FREQ", 7), "FREQ"), ("volatile-lfu", ("FREQ", 255), "FREQ"),
                                          ("allkeys-lfu", ("FREQ", 0), "FREQ"),
                                          ("allkeys-lfu", ("IDLETIME", 1000), "FREQ"), ("allkeys-lfu", (), "FREQ")]:
                run(conn, [("CONFIG", "SET", "maxmemory-policy", policy),
                           ("RESTORE", "k", 0, payload, "REPLACE", *option)])
                replies.append((probe, conn.call("OBJECT", probe, "k").value))
            seen[kind] = replies
    # (An idle time read across a second boundary is one more.)
    for (probe, g), (_, r) in zip(seen["goblin"], seen["redis"]):
        assert g == r or (probe == "IDLETIME" and abs(g - r) == 1), (seen["goblin"], seen["redis"])
    assert seen["goblin"][0][1] in (1000, 1001) and seen["goblin"][5][1] == 7


def older_encoding_payloads() -> dict:
    """Payload values in the encodings Redis 7 no longer writes but still restores (and 7.2's listpack set),
    built byte by byte (support/rdb_build.py)."""
    b = rdb_build
    text_scores = b"".join(b.string(m) + bytes([len(t)]) + t for m, t in ((b"a", b"1.5"), (b"b", b"-2"), (b"c", b"10")))
    return {
        "linked list": bytes([b.T_LIST]) + b.length(3) + b.string(b"x") + b.string(b"12") + b.string(b""),
        "ziplist list": bytes([b.T_LIST_ZIPLIST]) + b.string(b.ziplist([b"a", b"1", b"-70000", b"b" * 300])),
        "quicklist of ziplists": bytes([b.T_LIST_QUICKLIST]) + b.length(2) + b.string(b.ziplist([b"a", b"b"]))
        + b.string(b.ziplist([b"7", b"c" * 100])),
        "intset": bytes([b.T_SET_INTSET]) + b.string(b.intset([-3, 1, 70000], 4)),
        "listpack set (7.2)": bytes([b.T_SET_LISTPACK]) + b.string(b.listpack([b"m1", b"m2", 33])),
        "zset with text scores": bytes([b.T_ZSET]) + b.length(3) + text_scores,
        "ziplist zset": bytes([b.T_ZSET_ZIPLIST]) + b.string(b.ziplist([b"a", b"1", b"b", b"2.5", b"c", b"3"])),
        "zipmap hash": bytes([b.T_HASH_ZIPMAP]) + b.string(b.zipmap([(b"f", b"v"), (b"n", b"1")])),
        "ziplist hash": bytes([b.T_HASH_ZIPLIST]) + b.string(b.ziplist([b"f", b"v", b"g", b"12345"])),
    }


def test_restore_reads_payloads_in_older_encodings_as_redis_does(make_server):
    goblin = make_server()
    redis = make_server(name="redis-restore", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g, redis.raw() as r:
        for what, value in older_encoding_payloads().items():
            key = what.replace(" ", "-")
            # Redis 7.0 refuses RDB 11 payloads, which the 7.2 listpack set needs.
            version = 11 if "7.2" in what else 10
            reply = g.call("RESTORE", key, 0, dump_payload(value, version))
            assert reply.raw == b"+OK\r\n", (what, reply)
            kind = g.call("TYPE", key).value.decode()
            if version == 10:
                assert r.call("RESTORE", key, 0, dump_payload(value)).raw == b"+OK\r\n", what
                assert r.call("TYPE", key).value.decode() == kind, what
                assert read_value(g, kind, key) == read_value(r, kind, key), what
            else:
                assert read_value(g, kind, key) == [b"33", b"m1", b"m2"]


def test_sanitize_dump_payload_is_accepted_as_redis_accepts_it(make_server):
    """Goblin checks every payload whole whatever the option says; a configuration naming it must start."""
    goblin = make_server(options={"sanitize-dump-payload": "clients"})
    redis = make_server(name="redis-config", binary=REFERENCE_BINARY, unix=False,
                        options={"sanitize-dump-payload": "clients"})
    with goblin.raw() as g, redis.raw() as r:
        for call in [("CONFIG", "GET", "sanitize-dump-payload"), ("CONFIG", "SET", "sanitize-dump-payload", "yes"),
                     ("CONFIG", "GET", "sanitize-dump-payload"), ("CONFIG", "SET", "sanitize-dump-payload", "maybe"),
                     ("CONFIG", "SET", "sanitize-dump-payload", "NO"), ("CONFIG", "GET", "sanitize-dump-payload")]:
            assert g.call(*call).raw == r.call(*call).raw, call


@pytest.mark.redis72
def test_restore_reads_rdb_11_and_12_payloads_as_redis_7_4_does(make_server):
    """7.2 writes RDB 11 payloads and 7.4 version 12 (7.0 refuses both); Goblin writes 10 (12 for
    a hash with field deadlines) and reads up to 12."""
    goblin = make_server()
    with goblin.raw() as g:
        assert g.call("RESTORE", "eleven", 0, dump_payload(b"\x00\x03abc", 11)).raw == b"+OK\r\n"
        assert g.call("GET", "eleven").value == b"abc"
        assert g.call("RESTORE", "twelve", 0, dump_payload(b"\x00\x03abc", 12)).raw == b"+OK\r\n"
        assert g.call("RESTORE", "thirteen", 0, dump_payload(b"\x00\x03abc", 13)).raw == \
            b"-ERR DUMP payload version or checksum are wrong\r\n"


# ---- what a RESTORE changes besides the key -----------------------------------------------------------------

def logged_restores(srv, started_ms: int) -> list[tuple]:
    """The incr file's commands, a RESTORE's absolute deadline replaced by its distance from started_ms in
    whole 100 s (the servers ran at slightly different moments)."""
    out = []
    for command in incr_commands(srv):
        words = list(command)
        if words[1] == b"RESTORE" and int(words[3]) > 1:
            words[3] = f"now+{round((int(words[3]) - started_ms) / 100_000)}*100s"
        out.append(tuple(words))
    return out


def test_restore_is_logged_as_redis_logs_it(make_server):
    logged = {}
    for kind, binary in (("goblin", None), ("redis", REFERENCE_BINARY)):
        options = {"appendonly": "yes", "appendfsync": "always"}
        srv = make_server(name=f"{kind}-aof", options=options, **({"binary": binary, "unix": False} if binary else {}))
        with srv.raw() as conn:
            run(conn, [("SET", "source", "value")])
            payload = conn.call("DUMP", "source").value
            started_ms = int(conn.call("TIME").py()[0]) * 1000
            replies = [conn.call(*call).raw for call in [
                ("RESTORE", "a", 0, payload), ("RESTORE", "b", 100_000, payload),
                ("RESTORE", "c", started_ms + 200_000, payload, "ABSTTL"),
                ("RESTORE", "a", 1, payload, "ABSTTL", "REPLACE"), ("RESTORE", "d", 1, payload, "ABSTTL"),
                ("RESTORE", "b", 0, b"garbage", "REPLACE"), ("RESTORE", "e", 0, payload, "IDLETIME", 5),
                ("SELECT", 3), ("RESTORE", "b", 300_000, payload, "REPLACE", "FREQ", 3)]]
            assert replies == [b"+OK\r\n"] * 5 + [b"-ERR DUMP payload version or checksum are wrong\r\n"] + \
                [b"+OK\r\n"] * 3
        logged[kind] = logged_restores(srv, started_ms)
    assert logged["goblin"] == logged["redis"]
    assert (0, b"DEL", b"a") in logged["goblin"]
    assert logged["goblin"][2][-1] == b"ABSTTL" and logged["goblin"][2][3] == "now+1*100s"


def test_restore_announces_new_and_restore_and_is_seen_by_watch_and_tracking(make_server):
    events = {}
    for kind, binary in (("goblin", None), ("redis", REFERENCE_BINARY)):
        options = {"notify-keyspace-events": "KEAn"}
        srv = make_server(name=f"{kind}-events", options=options,
                          **({"binary": binary, "unix": False} if binary else {}))
        with srv.raw() as conn, srv.raw() as subscriber, srv.raw() as watcher, srv.raw() as cache:
            run(conn, [("SET", "source", "value"), ("SET", "old", "x")])
            payload = conn.call("DUMP", "source").value
            subscriber.call("PSUBSCRIBE", "__keyevent@0__:*")
            run(watcher, [("WATCH", "old"), ("MULTI",), ("GET", "old")])
            run(cache, [("HELLO", "3"), ("CLIENT", "TRACKING", "ON"), ("GET", "old")])
            for call in [("RESTORE", "fresh", 0, payload), ("RESTORE", "old", 0, payload, "REPLACE"),
                         ("RESTORE", "gone", 1, payload, "ABSTTL"), ("RESTORE", "fresh", 1, payload, "ABSTTL", "REPLACE"),
                         ("RESTORE", "fresh", 0, b"bad")]:
                conn.call(*call)
            run(conn, [("SET", "end", "1")])
            seen = []
            while not seen or seen[-1] != (b"set", b"end"):
                channel, key = subscriber.read_reply(timeout=5).py()[2:]
                seen.append((channel.split(b":")[1], key))
            events[kind] = seen
            assert watcher.call("EXEC").raw == b"*-1\r\n"
            assert cache.read_reply(timeout=5).py() == [b"invalidate", [b"old"]]
    assert events["goblin"] == events["redis"]
    assert events["goblin"] == [(b"new", b"fresh"), (b"restore", b"fresh"), (b"new", b"old"), (b"restore", b"old"),
                                (b"del", b"fresh"), (b"new", b"end"), (b"set", b"end")]


def test_redis_py_dump_and_restore(make_server):
    client = make_server().client()
    client.zadd("board", {"ann": 3, "bob": 1.5})
    client.expire("board", 1000)
    payload = client.dump("board")
    assert client.dump("nothing") is None
    assert client.restore("copy", 0, payload) == b"OK"
    assert client.zrange("copy", 0, -1, withscores=True) == [(b"bob", 1.5), (b"ann", 3.0)]
    with pytest.raises(Exception, match="BUSYKEY"):
        client.restore("copy", 0, payload)
    assert client.restore("copy", 5000, payload, replace=True, idletime=10) == b"OK"
    assert 0 < client.pttl("copy") <= 5000
    deadline_ms = int(client.time()[0]) * 1000 + 60_000
    assert client.restore("abs", deadline_ms, payload, absttl=True, frequency=5) == b"OK"
    assert client.pexpiretime("abs") == deadline_ms
    client.close()


# ---- payloads that lie --------------------------------------------------------------------------------------

CARDINALITY = {"list": "LLEN", "set": "SCARD", "zset": "ZCARD", "hash": "HLEN", "stream": "XLEN"}


def mutations(rng: random.Random, body: bytes, count: int):
    """Bodies derived from body: truncated, bits flipped, a length replaced by a huge or wrong one, the type
    changed, bytes inserted or repeated. Each gets a fresh trailer, so RESTORE's decoder sees it."""
    for _ in range(count):
        b = bytearray(body)
        choice = rng.randrange(6)
        at = rng.randrange(len(b))
        if choice == 0:
            del b[rng.randrange(len(b)):]
        elif choice == 1:
            for _ in range(rng.randrange(1, 4)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif choice == 2:
            b[at:at + 1] = rng.choice((b"\x80" + rng.randbytes(4), b"\x81" + rng.randbytes(8), b"\xbf\xff",
                                       bytes([rng.randrange(64)]), b"\x80\xff\xff\xff\xff"))
        elif choice == 3:
            b[0] = rng.randrange(32)
        elif choice == 4:
            b[at:at] = rng.randbytes(rng.randrange(1, 9))
        else:
            end = min(len(b), at + rng.randrange(1, 64))
            b[at:at] = b[at:end]
        yield bytes(b)


def assert_sound(conn, key: bytes):
    """A key a mutated payload created reads back whole and consistent, and DUMPs to a payload that
    restores to the same value."""
    kind = conn.call("TYPE", key).value.decode()
    value = read_value(conn, kind, key)
    for command in (("OBJECT", "ENCODING", key), ("MEMORY", "USAGE", key), ("DEBUG", "DIGEST-VALUE", key)):
        assert not conn.call(*command).is_error, command
    if kind in CARDINALITY:
        count = conn.call(CARDINALITY[kind], key).value
        assert count == len(value if kind != "stream" else value[0]), (kind, count)
        assert count > 0 or kind == "stream", f"an empty {kind}"  # (a stream may be empty, as in Redis)
    again = conn.call("DUMP", key).value
    assert conn.call("RESTORE", b"again", 0, again, "REPLACE").raw == b"+OK\r\n"
    assert read_value(conn, kind, b"again") == value


def test_mutated_payloads_never_crash_nor_create_half_a_key(make_server):
    rng = random.Random(seed_for("mutated payloads"))
    goblin = make_server(options={"list-max-listpack-size": "4", "stream-node-max-entries": "5"})
    redis = make_server(name="redis-source", binary=REFERENCE_BINARY, unix=False,
                        options={"zset-max-listpack-entries": "200", "hash-max-listpack-entries": "200"})
    commands = dataset(0, random.Random(3))
    for i in range(30):
        commands += random_value(rng, f"r{i}")[0]
    sources = []
    with goblin.raw() as g, redis.raw() as r:
        for conn in (g, r):
            run(conn, commands)
            sources += [payload_value(conn.call("DUMP", key).value) for key in scan_keys(conn)]
        sources += list(older_encoding_payloads().values())
        run(g, [("FLUSHALL",), ("HSET", "victim", "f", "v")])
        outcomes = {"restored": 0, "refused": 0}
        for n, body in enumerate(b for source in sources for b in mutations(rng, source, 60)):
            replace = n % 4 == 0
            key = b"victim" if replace else b"fuzz"
            reply = g.call("RESTORE", key, 0, dump_payload(body), *(("REPLACE",) if replace else ()))
            if reply.raw == b"+OK\r\n":
                outcomes["restored"] += 1
                assert_sound(g, key)
                run(g, [("DEL", key, "again"), ("HSET", "victim", "f", "v")])
            else:
                outcomes["refused"] += 1
                assert reply.raw == b"-ERR Bad data format\r\n", (body[:60], reply)
                assert g.call("EXISTS", "fuzz").value == 0, body[:60]
                assert g.call("HGETALL", "victim").py() == [b"f", b"v"], body[:60]
        assert g.call("DBSIZE").value == 1
    print(f"{len(sources)} payloads, {outcomes}")
    assert outcomes["restored"] > 100 and outcomes["refused"] > 1000, outcomes
