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

from integration.test_rdb_export import (GOBLIN_ONLY_KNOBS, KNOBS, canonical_integer, dataset,
                                         expected_encoding_after_load, read_value, run, scan_keys)
from support import rdb_payload
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
        assert rdb_payload.version(payload) == 10, f"{key!r}: payload version {rdb_payload.version(payload)}"
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
