"""Sorted sets: what the differential streams cannot check against the 7.0 reference.

Redis 7.2's exact score texts (7.0 prints 17 digits), RESP3 reply shapes byte for byte, ZRANK
WITHSCORE (new in 7.2), 7.2's encoding rules at the listpack thresholds, GOBLIN.STATS and
GOBLIN.OPTIMIZE, MEMORY USAGE against the allocator's own count, WATCH, a 200k-member set read
back in full, and ZSCAN's guarantee while the set changes. Expected bytes are written out by hand
from Redis 7.2's behaviour.
"""

import random

import pytest
import redis

from support.expect import NOT_FLOAT, SYNTAX, WRONGTYPE, arity, arr, bulk, bulks, err, integer, nil, run_steps

NULL3 = b"_\r\n"


def double3(text) -> bytes:
    return b"," + (text if isinstance(text, bytes) else text.encode()) + b"\r\n"


def resp3(server):
    conn = server.raw()
    assert conn.call("HELLO", "3").kind == "%"
    return conn


# ---- Redis 7.2's double text -----------------------------------------------------------------------

SCORE_TEXTS = [
    # (argument, 7.2 text) -- 7.0 prints the 17-digit form for most of these.
    ("1.1", "1.1"), ("0.1", "0.1"), ("3.0", "3"), ("-2.5", "-2.5"), ("1e17", "100000000000000000"),
    ("1e20", "1e+20"), ("1e-7", "1e-7"), ("1e-6", "0.000001"), ("2.5e-5", "0.000025"),
    ("12345.678901234567", "1.2345678901234567e+4"), ("123456.789012", "123456.789012"),
    ("5e-324", "5e-324"), ("1.7976931348623157e308", "1.7976931348623157e+308"),
    ("4611686018427387904", "4611686018427387904"), ("9223372036854775808", "9223372036854776000"),
    ("inf", "inf"), ("+inf", "inf"), ("-inf", "-inf"), ("-0.5", "-0.5"), ("0x10", "16"),
]


@pytest.mark.redis72
@pytest.mark.parametrize("text,expected", SCORE_TEXTS)
def test_score_text_is_redis72(raw, text, expected):
    run_steps(raw, [
        (["ZADD", "z", text, "a"], integer(1)),
        ("ZSCORE z a", bulk(expected)),
        ("ZMSCORE z a nope", arr(bulk(expected), nil)),
        ("ZRANGE z 0 -1 WITHSCORES", bulks("a", expected)),
        ("ZRANGEBYSCORE z -inf +inf WITHSCORES", bulks("a", expected)),
        ("ZREVRANGE z 0 0 WITHSCORES", bulks("a", expected)),
        ("ZSCAN z 0", arr(bulk("0"), bulks("a", expected))),
        ("ZRANK z a WITHSCORE", arr(integer(0), bulk(expected))),
        ("ZUNION 1 z WITHSCORES", bulks("a", expected)),
        ("ZRANDMEMBER z 1 WITHSCORES", bulks("a", expected)),
        ("ZPOPMIN z", bulks("a", expected)),
    ])


@pytest.mark.redis72
def test_increments_print_shortest_text(raw):
    run_steps(raw, [
        ("ZADD z 0.1 a", integer(1)),
        ("ZINCRBY z 0.2 a", bulk("0.30000000000000004")),
        ("ZADD z INCR 0.7 a", bulk("1")),
        ("ZINCRBY z -1 a", bulk("0")),
        ("ZINCRBY z 1e-7 a", bulk("1e-7")),
        ("ZADD z INCR inf a", bulk("inf")),
        ("ZADD z INCR -inf a", err("ERR resulting score is not a number (NaN)")),
        ("ZINCRBY z -inf a", err("ERR resulting score is not a number (NaN)")),
        ("ZSCORE z a", bulk("inf")),
        ("ZINCRBY z nan a", NOT_FLOAT),
        ("ZADD z INCR XX 1 missing", nil),
        ("ZADD z INCR NX 1 a", nil),
        ("ZADD z INCR GT -1 a", nil),
    ])


def test_negative_zero_listpack_and_skiplist(raw, r):
    # A listpack stores an integral score as an integer, so -0 reads back as 0 there; the
    # skiplist keeps -0. The reply to the write itself carries the score as computed.
    run_steps(raw, [
        ("ZADD small -0 a", integer(1)),
        ("ZSCORE small a", bulk("0")),
        ("ZINCRBY small -0 b", bulk("-0")),
        ("ZSCORE small b", bulk("0")),
        ("ZUNION 1 small WEIGHTS -1 WITHSCORES", bulks("a", "-0", "b", "-0")),
        ("ZUNIONSTORE u 1 small WEIGHTS -1", integer(2)),
        ("ZRANGE u 0 -1 WITHSCORES", bulks("a", "0", "b", "0")),
    ])
    r.config_set("zset-max-listpack-entries", 0)
    try:
        run_steps(raw, [
            ("ZADD big -0 a", integer(1)),
            ("OBJECT ENCODING big", bulk("skiplist")),
            ("ZSCORE big a", bulk("-0")),
            ("ZADD big CH 0 a", integer(0)),  # 0 == -0: not an update, the stored -0 stays
            ("ZSCORE big a", bulk("-0")),
            ("ZADD big CH 1 a", integer(1)),
            ("ZADD big -0 a", integer(0)),
            ("ZSCORE big a", bulk("-0")),
        ])
    finally:
        r.config_set("zset-max-listpack-entries", 128)


# ---- RESP3 shapes -------------------------------------------------------------------------------------

@pytest.mark.redis72
def test_resp3_reply_shapes(server, r):
    r.zadd("z", {"a": 1.1, "b": 2, "c": 3})
    with resp3(server) as c:
        run_steps(c, [
            ("ZSCORE z a", double3("1.1")),
            ("ZSCORE z nope", NULL3),
            ("ZSCORE missing a", NULL3),
            ("ZMSCORE z a nope", arr(double3("1.1"), NULL3)),
            ("ZINCRBY z 1 c", double3("4")),
            ("ZADD z INCR 0 b", double3("2")),
            ("ZADD z XX INCR 1 nope", NULL3),
            ("ZRANGE z 0 1 WITHSCORES", arr(arr(bulk("a"), double3("1.1")), arr(bulk("b"), double3("2")))),
            ("ZRANGE z 0 1", bulks("a", "b")),
            ("ZRANGEBYSCORE z 2 +inf WITHSCORES", arr(arr(bulk("b"), double3("2")), arr(bulk("c"), double3("4")))),
            ("ZREVRANGE z 0 0 WITHSCORES", arr(arr(bulk("c"), double3("4")))),
            ("ZUNION 1 z WITHSCORES", arr(arr(bulk("a"), double3("1.1")), arr(bulk("b"), double3("2")),
                                          arr(bulk("c"), double3("4")))),
            ("ZRANK z b WITHSCORE", arr(integer(1), double3("2"))),
            ("ZREVRANK z b WITHSCORE", arr(integer(1), double3("2"))),
            ("ZRANK z nope WITHSCORE", NULL3),
            ("ZRANK z nope", NULL3),
            ("ZRANK missing a WITHSCORE", NULL3),
            ("ZSCAN z 0 MATCH a", arr(bulk("0"), bulks("a", "1.1"))),
            ("ZRANDMEMBER missing", NULL3),
            ("ZPOPMIN z", arr(bulk("a"), double3("1.1"))),
            ("ZPOPMAX z 1", arr(arr(bulk("c"), double3("4")))),
            ("ZADD z 5 d", integer(1)),
            ("ZMPOP 2 missing z MIN COUNT 5", arr(bulk("z"), arr(arr(bulk("b"), double3("2")),
                                                                 arr(bulk("d"), double3("5"))))),
            ("ZMPOP 1 z MIN", NULL3),
            ("ZPOPMIN z", b"*0\r\n"),
            ("ZPOPMIN z 3", b"*0\r\n"),
        ])
        r.zadd("z", {"a": 1})
        reply = c.call("ZRANDMEMBER", "z", "-2", "WITHSCORES")
        assert reply.raw == arr(arr(bulk("a"), double3("1")), arr(bulk("a"), double3("1")))
        assert c.call("ZRANDMEMBER", "z", "1").raw == bulks("a")


@pytest.mark.redis72
def test_resp2_reply_shapes(raw, r):
    r.zadd("z", {"a": 1.5, "b": 2})
    run_steps(raw, [
        ("ZPOPMAX z 1", bulks("b", "2")),
        ("ZRANK z nope WITHSCORE", b"*-1\r\n"),
        ("ZRANK missing a WITHSCORE", b"*-1\r\n"),
        ("ZRANK z a WITHSCORE", arr(integer(0), bulk("1.5"))),
        ("ZMPOP 1 missing MAX", b"*-1\r\n"),
        ("ZMPOP 1 z MAX", arr(bulk("z"), arr(bulks("a", "1.5")))),
        ("EXISTS z", integer(0)),
        ("ZSCAN missing 0", arr(bulk("0"), b"*0\r\n")),
    ])


# ---- ZRANK WITHSCORE (7.2) and other argument rules -----------------------------------------------------

@pytest.mark.redis72
def test_zrank_withscore_arguments(raw, r):
    r.zadd("z", {"a": 1, "b": 2})
    run_steps(raw, [
        ("ZRANK z b withscore", arr(integer(1), bulk("2"))),
        ("ZREVRANK z b WITHSCORE", arr(integer(0), bulk("2"))),
        ("ZRANK z b WITHSCORES", SYNTAX),
        ("ZRANK z b WITHSCORE x", arity("zrank")),
        ("ZREVRANK z b x y", arity("zrevrank")),
        ("ZRANK z", arity("zrank")),
    ])


def test_wrongtype_and_errors_change_nothing(raw, r):
    r.set("s", "v")
    r.zadd("z", {"a": 1})
    run_steps(raw, [
        ("ZADD s 1 a", WRONGTYPE),
        ("ZADD s XX 1 a", WRONGTYPE),
        ("ZRANGE s 0 -1", WRONGTYPE),
        ("ZUNIONSTORE z 2 z s", WRONGTYPE),
        ("ZADD z 1 b nan c", NOT_FLOAT),
        ("ZADD z 1 b (1 c", NOT_FLOAT),
        ("ZRANGEBYSCORE z (abc 1", err("ERR min or max is not a float")),
        ("ZRANGE z 0 -1 BYSCORE LIMIT -1 x", err("ERR value is not an integer or out of range")),
        ("ZRANGE z (1 +inf BYSCORE LIMIT -1 5", b"*0\r\n"),
        ("ZRANGE z -inf +inf BYSCORE LIMIT 0 9223372036854775807", bulks("a")),
        ("ZRANGE z -inf +inf BYSCORE LIMIT 9223372036854775807 1", b"*0\r\n"),
        ("ZRANGE z 0 -1 BYSCORE LIMIT 0 9223372036854775808", err("ERR value is not an integer or out of range")),
        ("ZPOPMIN z 9223372036854775808", err("ERR value is out of range, must be positive")),
        ("ZRANDMEMBER z 9223372036854775807 WITHSCORES", err("ERR value is out of range")),
        ("ZRANGE z 0 -1", bulks("a")),
        ("GET s", bulk("v")),
    ])


# ---- encodings at the thresholds (7.2 rules) -------------------------------------------------------------

def encoding(r, key):
    return r.object("encoding", key)


@pytest.mark.redis72
def test_conversion_at_entry_and_value_limits(r):
    r.config_set("zset-max-listpack-entries", 4)
    r.config_set("zset-max-listpack-value", 8)
    try:
        r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4})
        assert encoding(r, "z") == b"listpack"
        r.zadd("z", {"e": 5})
        assert encoding(r, "z") == b"skiplist"
        r.zrem("z", "a", "b", "c", "d")
        assert encoding(r, "z") == b"skiplist"  # never converts back
        r.zadd("v", {"12345678": 1})
        assert encoding(r, "v") == b"listpack"
        r.zadd("v", {"123456789": 1})
        assert encoding(r, "v") == b"skiplist"
        # A new key starts large when its first member is too long or it gets too many pairs.
        r.zadd("long", {"123456789": 1, "a": 2})
        assert encoding(r, "long") == b"skiplist"
        r.execute_command("ZADD", "dup", *(["1", "a"] * 5))
        assert encoding(r, "dup") == b"skiplist" and r.zcard("dup") == 1
        # 7.2: more pairs than the limit convert an existing small set, repeats or not.
        r.zadd("small", {"x": 1})
        r.execute_command("ZADD", "small", *(["2", "x"] * 5))
        assert encoding(r, "small") == b"skiplist" and r.zcard("small") == 1
        # Store results are packed small when they fit, whatever their sources.
        assert r.zunionstore("u", ["z"]) == 1
        assert encoding(r, "u") == b"listpack"
        assert r.zrangestore("rs", "z", 0, -1) == 1
        assert encoding(r, "rs") == b"listpack"
        # COPY and RENAME keep the form.
        assert r.copy("z", "zc") and encoding(r, "zc") == b"skiplist"
        r.config_set("zset-max-listpack-entries", 128)
        r.zadd("grow", {f"m{i}": i for i in range(10)})
        r.config_set("zset-max-listpack-entries", 4)
        assert r.copy("grow", "grow2") and encoding(r, "grow2") == b"listpack"
        r.rename("grow2", "grow3")
        assert encoding(r, "grow3") == b"listpack" and r.zcard("grow3") == 10
    finally:
        r.config_set("zset-max-listpack-entries", 128)
        r.config_set("zset-max-listpack-value", 64)


def test_default_thresholds(r):
    r.zadd("z", {f"m{i}": i for i in range(128)})
    assert encoding(r, "z") == b"listpack"
    r.zadd("z", {"m128": 128})
    assert encoding(r, "z") == b"skiplist"
    r.zadd("v", {"x" * 64: 1})
    assert encoding(r, "v") == b"listpack"
    r.zadd("v", {"y" * 65: 1})
    assert encoding(r, "v") == b"skiplist"
    assert r.type("z") == b"zset"


# ---- GOBLIN.STATS, GOBLIN.OPTIMIZE, MEMORY USAGE ------------------------------------------------------

def stats(r, key) -> dict:
    reply = r.execute_command("GOBLIN.STATS", key)
    return {reply[i].decode(): reply[i + 1] for i in range(0, len(reply), 2)}


@pytest.mark.goblin
def test_goblin_stats(r):
    assert r.execute_command("GOBLIN.STATS", "missing") is None
    r.zadd("small", {"a": 1, "b": 2})
    s = stats(r, "small")
    assert s["type"] == b"zset" and s["encoding"] == b"listpack" and s["layout"] == b"packed-run"
    assert s["members"] == 2 and s["leaves"] == 1 and s["bytes"] == r.memory_usage("small")
    assert 0 < float(s["fill"]) <= 1
    r.zadd("big", {f"user:{i:08d}": i * 0.5 for i in range(5000)})
    s = stats(r, "big")
    assert s["encoding"] == b"skiplist" and s["layout"] == b"bptree"
    assert s["members"] == 5000 and s["leaves"] > 1 and s["height"] >= 1 and s["index_bytes"] > 0
    assert s["bytes"] == r.memory_usage("big")
    assert s["payload_bytes"] <= s["capacity_bytes"]
    r.set("str", "hello")
    assert stats(r, "str") == {"type": b"string", "encoding": b"embstr", "bytes": r.memory_usage("str")}


@pytest.mark.goblin
def test_goblin_stats_resp3_map(server, r):
    r.zadd("z", {"a": 1})
    with resp3(server) as c:
        reply = c.call("GOBLIN.STATS", "z")
        assert reply.kind == "%"
        fields = {k.value: v for k, v in reply.value}
        assert fields[b"fill"].kind == "," and fields[b"members"].value == 1
        assert c.call("GOBLIN.STATS", "missing").raw == NULL3


@pytest.mark.goblin
def test_goblin_optimize(r):
    members = {f"user:{i:08d}": random.Random(i).random() * 1e6 for i in range(20000)}
    r.zadd("z", members)
    r.zrem("z", *list(members)[::2])  # half-empty leaves
    before_content = r.zrange("z", 0, -1, withscores=True)
    before = r.memory_usage("z")
    saved = r.execute_command("GOBLIN.OPTIMIZE", "z")
    after = r.memory_usage("z")
    assert saved > 0 and before - after == saved
    assert float(stats(r, "z")["fill"]) > 0.9
    assert r.zrange("z", 0, -1, withscores=True) == before_content
    assert r.execute_command("GOBLIN.OPTIMIZE", "z") >= 0  # safe to repeat
    assert r.execute_command("GOBLIN.OPTIMIZE", "missing") == 0
    r.set("s", "v")
    assert r.execute_command("GOBLIN.OPTIMIZE", "s") == 0
    r.zadd("z2", {"a": 1})
    assert r.execute_command("GOBLIN.OPTIMIZE") >= 0  # every key of every database
    assert r.zrange("z", 0, -1, withscores=True) == before_content
    assert r.zadd("z", {"new": 1}) == 1 and r.zscore("z", "new") == 1  # still writable
    with pytest.raises(redis.ResponseError, match="wrong number of arguments"):
        r.execute_command("GOBLIN.OPTIMIZE", "a", "b")


@pytest.mark.goblin
def test_memory_usage_matches_allocator(server, r):
    """MEMORY USAGE of a large set is within 5% of what the allocator says the set cost."""
    base = int(server.info("memory")["used_memory"])
    pipe = r.pipeline(transaction=False)
    for start in range(0, 200000, 1000):
        pipe.zadd("z", {f"user:{i:08d}": (i * 7919 % 1000003) / 7 for i in range(start, start + 1000)})
    pipe.execute()
    grown = int(server.info("memory")["used_memory"]) - base
    usage = r.memory_usage("z")
    assert abs(usage - grown) < 0.05 * grown, (usage, grown)
    r.zadd("s", {"a": 1})
    one = r.memory_usage("s")
    r.zadd("s", {f"m{i}": i for i in range(100)})
    assert r.memory_usage("s") > one + 100 * 3


# ---- WATCH, MULTI, emptied keys -----------------------------------------------------------------------

def test_watch_sees_in_place_changes(server, r):
    r.zadd("z", {"a": 1})
    other = server.client()

    def transaction_survives(change) -> bool:
        pipe = r.pipeline()
        pipe.watch("z")
        change()
        pipe.multi()
        pipe.zcard("z")
        try:
            pipe.execute()
            return True
        except redis.WatchError:
            return False

    assert not transaction_survives(lambda: other.zadd("z", {"b": 2}))
    assert not transaction_survives(lambda: other.zincrby("z", 1, "a"))
    assert not transaction_survives(lambda: other.zrem("z", "b"))
    assert not transaction_survives(lambda: other.zpopmin("z"))  # deletes the key
    r.zadd("z", {"a": 1, "b": 2})
    assert transaction_survives(lambda: other.zadd("z", {"a": 1}))          # same score: no change
    assert transaction_survives(lambda: other.zadd("z", {"a": 5}, nx=True))  # NX on existing
    assert transaction_survives(lambda: other.zrem("z", "nope"))
    assert transaction_survives(lambda: other.zremrangebyscore("z", 100, 200))
    assert not transaction_survives(lambda: other.zremrangebyrank("z", 0, 0))
    assert not transaction_survives(lambda: other.zunionstore("z", ["z", "z"]))
    other.close()


def test_multi_and_emptied_keys(r):
    pipe = r.pipeline()
    pipe.zadd("z", {"a": 1, "b": 2})
    pipe.zincrby("z", 2, "a")
    pipe.zrange("z", 0, -1, withscores=True)
    assert pipe.execute() == [2, 3.0, [(b"b", 2.0), (b"a", 3.0)]]
    assert r.zrem("z", "a", "b", "c") == 2 and r.exists("z") == 0
    r.zadd("z", {"a": 1})
    assert r.zremrangebyscore("z", "-inf", "+inf") == 1 and r.exists("z") == 0
    r.zadd("z", {"a": 1})
    assert r.zrangestore("z", "missing", 0, -1) == 0 and r.exists("z") == 0
    r.zadd("z", {"a": 1})
    assert r.zinterstore("z", ["z", "missing"]) == 0 and r.exists("z") == 0
    r.zadd("z", {"a": 1})
    r.expire("z", 100)
    assert r.zunionstore("z", ["z"]) == 1 and r.ttl("z") == -1  # the store replaces the deadline
    r.expire("z", 100)
    r.zadd("z", {"b": 2})
    assert r.ttl("z") > 0  # an in-place write keeps it


# ---- a large set read back in full ---------------------------------------------------------------------

@pytest.mark.redis72
def test_200k_member_set_read_back(r, raw):
    rng = random.Random(7)
    n = 200000
    scores = {f"user:{i:08d}": float(rng.randrange(2000)) if i % 2 else round(rng.uniform(0, 1e6), 6)
              for i in rng.sample(range(n), n)}
    pipe = r.pipeline(transaction=False)
    items = list(scores.items())
    for start in range(0, n, 1000):
        pipe.zadd("big", dict(items[start:start + 1000]))
    pipe.execute()
    assert r.zcard("big") == n
    expected = sorted(scores.items(), key=lambda kv: (kv[1], kv[0].encode()))
    got = r.zrange("big", 0, -1, withscores=True)
    assert [(m.decode(), s) for m, s in got] == expected
    assert [m.decode() for m in r.zrevrange("big", 0, -1)] == [m for m, _ in reversed(expected)]
    for rank in (0, 1, 777, n // 2, n - 1):
        member, score = expected[rank]
        assert r.zrank("big", member) == rank
        assert r.zrevrank("big", member) == n - 1 - rank
        assert r.zscore("big", member) == score
        reply = raw.call("ZRANK", "big", member, "WITHSCORE").value
        assert reply[0].value == rank and float(reply[1].value) == score
    # Paging by score with LIMIT walks the same order.
    paged, offset = [], 0
    while True:
        page = r.zrangebyscore("big", "-inf", "+inf", start=offset, num=5000)
        if not page:
            break
        paged += page
        offset += len(page)
    assert [m.decode() for m in paged] == [m for m, _ in expected]
    assert r.zcount("big", 500, "(1000") == sum(1 for _, s in expected if 500 <= s < 1000)
    # Removing by rank and score keeps everything else in order.
    assert r.zremrangebyrank("big", 0, 9999) == 10000
    assert r.zremrangebyscore("big", 1000, 1999) == sum(1 for _, s in expected[10000:] if 1000 <= s <= 1999)
    rest = [(m, s) for m, s in expected[10000:] if not 1000 <= s <= 1999]
    assert [(m.decode(), s) for m, s in r.zrange("big", 0, -1, withscores=True)] == rest


def test_zscan_returns_every_member_of_a_changing_set(r):
    n = 20000
    r.zadd("z", {f"m{i}": i % 50 for i in range(n)})  # long runs of ties
    stable = {f"m{i}".encode() for i in range(0, n, 2)}
    seen, cursor, calls = set(), 0, 0
    while True:
        cursor, page = r.zscan("z", cursor, count=100)
        assert 0 <= cursor < 2**64  # an unsigned 64-bit cursor, as clients parse it
        seen.update(m for m, _ in page)
        calls += 1
        # Meanwhile: remove odd members, add new ones.
        r.zrem("z", *[f"m{i}" for i in range(2 * calls - 1, n, 2 * 97)][:20])
        r.zadd("z", {f"new{calls}_{j}": j for j in range(5)})
        if cursor == 0:
            break
    assert stable <= seen
    assert calls > 10  # iterated in steps, not in one reply
    small_cursor, small = r.zscan("small-missing", 0)
    assert small_cursor == 0 and small == []


@pytest.mark.redis72
def test_long_replies_in_both_protocols(server, r):
    """Range replies are assembled in blocks: members of every size, across block boundaries."""
    members = {("m%d" % i) * (1 + i % 7) + "x" * (0 if i % 50 else 5000 + i): i / 4 for i in range(600)}
    r.zadd("z", members)
    ordered = sorted(members.items(), key=lambda kv: (kv[1], kv[0].encode()))

    def text(score):
        return repr(score).removesuffix(".0")

    flat = b"".join(bulk(m) + bulk(text(s)) for m, s in ordered)
    nested = b"".join(arr(bulk(m), double3(text(s))) for m, s in ordered)
    with server.raw() as c2, resp3(server) as c3:
        assert c2.call("ZRANGE", "z", 0, -1, "WITHSCORES").raw == b"*%d\r\n" % (2 * len(ordered)) + flat
        assert c3.call("ZRANGE", "z", 0, -1, "WITHSCORES").raw == b"*%d\r\n" % len(ordered) + nested
        assert c2.call("ZRANGE", "z", 0, -1).raw == b"*%d\r\n" % len(ordered) + b"".join(bulk(m) for m, _ in ordered)
        rev = b"".join(arr(bulk(m), double3(text(s))) for m, s in reversed(ordered))
        assert c3.call("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES").raw == \
            b"*%d\r\n" % len(ordered) + rev
