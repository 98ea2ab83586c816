"""Hashes and sets: what the differential streams cannot check against the 7.0 reference.

RESP3 reply shapes byte for byte (maps for HGETALL, sets for SMEMBERS, SPOP, SINTER...), Redis
7.2's encoding rules (listpack sets, conversion before a multi-element write), HSCAN NOVALUES
(7.4), integer-looking text stored as integers and given back unchanged, WATCH after in-place
changes, emptied keys, COPY and MEMORY USAGE, and HSCAN/SSCAN's guarantee while a collection
grows. Expected bytes are written out by hand from Redis 7.2's behaviour.
"""

import random

import pytest
import redis

from support.expect import WRONGTYPE, arr, bulk, bulks, err, integer, nil, run_steps

NULL3 = b"_\r\n"


def resp3(server):
    conn = server.raw()
    assert conn.call("HELLO", "3").kind == "%"
    conn.call("FLUSHALL")
    return conn


def encoding(r, key):
    return r.object("encoding", key).decode()


# ---- hashes --------------------------------------------------------------------------------------------

def test_hash_basics(raw):
    run_steps(raw, [
        ("HSET h a 1 b 2", integer(2)),
        ("HSET h a 3 c 4", integer(1)),
        ("HSETNX h a 9", integer(0)),
        ("HSETNX h d 007", integer(1)),
        ("HMSET h e -0", b"+OK\r\n"),
        ("HGET h a", bulk("3")),
        ("HGET h d", bulk("007")),
        ("HGET h e", bulk("-0")),
        ("HGET h nope", nil),
        ("HGET nokey a", nil),
        ("HMGET h a nope d", arr(bulk("3"), nil, bulk("007"))),
        ("HMGET nokey a b", arr(nil, nil)),
        ("HLEN h", integer(5)),
        ("HSTRLEN h d", integer(3)),
        ("HSTRLEN h nope", integer(0)),
        ("HEXISTS h b", integer(1)),
        ("HEXISTS h nope", integer(0)),
        ("HKEYS h", bulks("a", "b", "c", "d", "e")),
        ("HVALS h", bulks("3", "2", "4", "007", "-0")),
        ("HGETALL h", bulks("a", "3", "b", "2", "c", "4", "d", "007", "e", "-0")),
        ("HDEL h a nope b", integer(2)),
        ("HSET h odd", err("ERR wrong number of arguments for 'hset' command")),
        ("HSET h odd 1 even", err("ERR wrong number of arguments for 'hset' command")),
        ("HMSET h odd 1 even", err("ERR wrong number of arguments for 'hmset' command")),
        ("HDEL h c d e", integer(3)),
        ("EXISTS h", integer(0)),
        ("HGETALL h", b"*0\r\n"),
    ])


def test_hincrby_and_hincrbyfloat(raw):
    run_steps(raw, [
        ("HINCRBY h n 5", integer(5)),
        ("HINCRBY h n -7", integer(-2)),
        ("HSET h big 9223372036854775807 s abc f 1.5", integer(3)),
        ("HINCRBY h big 1", err("ERR increment or decrement would overflow")),
        ("HINCRBY h s 1", err("ERR hash value is not an integer")),
        ("HINCRBY h f 1", err("ERR hash value is not an integer")),
        ("HINCRBY h n x", err("ERR value is not an integer or out of range")),
        ("HINCRBYFLOAT h f 0.1", bulk("1.6")),
        ("HINCRBYFLOAT h n 2.5", bulk("0.5")),
        ("HINCRBYFLOAT h new 3.0e3", bulk("3000")),
        ("HINCRBYFLOAT h s 1", err("ERR hash value is not a float")),
        ("HINCRBYFLOAT h f x", err("ERR value is not a valid float")),
        ("HINCRBYFLOAT h f inf", err("ERR value is NaN or Infinity")),
        ("HINCRBYFLOAT h n -0.5", bulk("0")),
        ("HGET h n", bulk("0")),
        ("HINCRBY h n 1", integer(1)),
        ("SET str x", b"+OK\r\n"),
        ("HINCRBY str n 1", WRONGTYPE),
        ("HINCRBYFLOAT str n 1", WRONGTYPE),
        ("HSET str a b", WRONGTYPE),
        ("HGET str a", WRONGTYPE),
        ("HINCRBY nokey n x", err("ERR value is not an integer or out of range")),
        ("EXISTS nokey", integer(0)),
    ])


@pytest.mark.redis72
def test_resp3_hash_shapes(server):
    conn = resp3(server)
    run_steps(conn, [
        ("HSET h a 1 b 2", integer(2)),
        ("HGETALL h", b"%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
        ("HGETALL nokey", b"%0\r\n"),
        ("HKEYS nokey", b"*0\r\n"),
        ("HGET h nope", NULL3),
        ("HMGET h a nope", b"*2\r\n$1\r\n1\r\n_\r\n"),
        ("HRANDFIELD nokey", NULL3),
        ("HRANDFIELD h -2 WITHVALUES", lambda reply: reply.kind == "*" and len(reply.value) == 2
            and all(e.kind == "*" and len(e.value) == 2 for e in reply.value)),
        ("HSCAN h 0", b"*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
    ])
    conn.close()


def test_hrandfield(r):
    assert r.hrandfield("nokey") is None
    assert r.hrandfield("nokey", 3) == []
    fields = {f"f{i}": str(i) for i in range(50)}
    r.hset("h", mapping=fields)
    for key_size in (50, 300):
        if key_size == 300:
            r.hset("h", mapping={f"g{i}": str(i) for i in range(250)})
            fields.update({f"g{i}": str(i) for i in range(250)})
        assert r.hrandfield("h").decode() in fields
        picked = r.hrandfield("h", 10)
        assert len(picked) == 10 and len(set(picked)) == 10
        assert all(f.decode() in fields for f in picked)
        assert sorted(f.decode() for f in r.hrandfield("h", 1000)) == sorted(fields)
        repeated = r.hrandfield("h", -500)
        assert len(repeated) == 500 and all(f.decode() in fields for f in repeated)
        pairs = r.hrandfield("h", -20, withvalues=True)
        assert len(pairs) == 40
        assert all(fields[pairs[i].decode()] == pairs[i + 1].decode() for i in range(0, 40, 2))
    assert r.hrandfield("h", 0) == []
    with pytest.raises(redis.ResponseError, match="value is out of range"):
        r.execute_command("HRANDFIELD", "h", "-9223372036854775808")
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("HRANDFIELD", "h", "1", "WITHSCORES")


@pytest.mark.redis72  # NOVALUES is Redis 7.4's; Goblin has it with 7.2's other behaviour
def test_hscan_novalues(raw):
    run_steps(raw, [
        ("HSCAN h 0 NOVALUES", b"*2\r\n$1\r\n0\r\n*0\r\n"),
        ("HSET h a 1 b 2", integer(2)),
        ("HSCAN h 0 NOVALUES", arr(bulk("0"), bulks("a", "b"))),
        ("HSCAN h 0 MATCH a", arr(bulk("0"), bulks("a", "1"))),
        ("HSCAN h 0 COUNT 0", err("ERR syntax error")),
        ("HSCAN h x", err("ERR invalid cursor")),
        ("DEL h", integer(1)),
    ])


def test_hscan_guarantee(r):
    rng = random.Random(5)
    stable = {f"stable:{i}": str(i) for i in range(3000)}
    r.hset("h", mapping=stable)
    seen = {}
    cursor = 0
    added = 0
    while True:
        cursor, items = r.hscan("h", cursor, count=50)
        seen.update((f.decode(), v.decode()) for f, v in items.items())
        # The hash keeps growing (and losing other fields) while the scan runs.
        r.hset("h", mapping={f"new:{added + j}": "x" for j in range(40)})
        added += 40
        r.hdel("h", f"new:{rng.randrange(added)}")
        if cursor == 0:
            break
    assert all(seen.get(k) == v for k, v in stable.items())
    assert len(r.hscan("h", 0, count=100000)[1]) == r.hlen("h")


@pytest.mark.redis72
def test_hash_encodings(r):
    r.hset("h", mapping={f"f{i}": i for i in range(512)})  # the default hash-max-listpack-entries
    assert encoding(r, "h") == "listpack"
    r.hset("h", "one-more", 1)
    assert encoding(r, "h") == "hashtable"
    r.hset("v", "f", "x" * 64)
    assert encoding(r, "v") == "listpack"
    r.hset("v", "g", "x" * 65)
    assert encoding(r, "v") == "hashtable"
    r.config_set("hash-max-listpack-entries", 2)
    r.hset("d", mapping={"a": 1, "b": 1, "c": 1})  # converted before the write (7.2)
    assert encoding(r, "d") == "hashtable"
    r.hset("e", mapping={"a": 1, "b": 1})
    r.hincrby("e", "c", 1)
    assert encoding(r, "e") == "hashtable"
    r.config_set("hash-max-listpack-entries", 512)


# ---- sets ----------------------------------------------------------------------------------------------

def test_set_basics(raw):
    run_steps(raw, [
        ("SADD s 3 1 2 1", integer(3)),
        ("SADD s 2 a", integer(1)),
        ("SCARD s", integer(4)),
        ("SISMEMBER s a", integer(1)),
        ("SISMEMBER s z", integer(0)),
        ("SMISMEMBER s a z 1", arr(integer(1), integer(0), integer(1))),
        ("SMISMEMBER nokey a", arr(integer(0))),
        ("SREM s a z", integer(1)),
        ("SMEMBERS s", lambda reply: sorted(e.value for e in reply.value) == [b"1", b"2", b"3"]),
        ("SMOVE s t 2", integer(1)),
        ("SMOVE s t 2", integer(0)),
        ("SMOVE nokey t 2", integer(0)),
        ("SMOVE s s 1", integer(1)),
        ("SMEMBERS t", bulks("2")),
        ("SET str x", b"+OK\r\n"),
        ("SMOVE s str 1", WRONGTYPE),
        ("SMOVE nokey str 1", integer(0)),
        ("SMOVE str s 1", WRONGTYPE),
        ("SADD str a", WRONGTYPE),
        ("SMOVE t s 2", integer(1)),
        ("EXISTS t", integer(0)),
        ("SREM s 1 2 3", integer(3)),
        ("EXISTS s", integer(0)),
        ("SPOP nokey", nil),
        ("SPOP s -1", err("ERR value is out of range, must be positive")),
        ("SPOP s x", err("ERR value is out of range, must be positive")),
        ("SRANDMEMBER s 1 2", err("ERR syntax error")),
        ("SADD s 007 -0 10000001", integer(3)),
        ("SMEMBERS s", lambda reply: sorted(e.value for e in reply.value) == [b"-0", b"007", b"10000001"]),
        ("SPOP s 3", lambda reply: sorted(e.value for e in reply.value) == [b"-0", b"007", b"10000001"]),
        ("EXISTS s", integer(0)),
    ])


def test_set_operations(r):
    r.sadd("a", 1, 2, 3, "x")
    r.sadd("b", 2, 3, 4)
    r.sadd("c", 3, "x", "y")
    assert r.sinter("a", "b") == {b"2", b"3"}
    assert r.sinter("a", "b", "nokey") == set()
    assert r.sunion("a", "b", "nokey") == {b"1", b"2", b"3", b"4", b"x"}
    assert r.sdiff("a", "b", "nokey") == {b"1", b"x"}
    assert r.sdiff("nokey", "a") == set()
    assert r.sintercard(2, ["a", "c"]) == 2
    assert r.sintercard(3, ["a", "b", "c"]) == 1
    assert r.sintercard(2, ["a", "b"], limit=1) == 1
    assert r.sintercard(2, ["a", "nokey"]) == 0
    assert r.sinterstore("d", ["a", "b"]) == 2 and encoding(r, "d") == "intset"
    assert r.sunionstore("d", ["a", "c"]) == 5
    assert r.smembers("d") == {b"1", b"2", b"3", b"x", b"y"}
    assert r.sdiffstore("d", ["a", "a"]) == 0 and r.exists("d") == 0
    r.sadd("d", 1)
    r.expire("d", 100)
    assert r.sunionstore("d", ["d", "b"]) == 4 and r.ttl("d") == -1
    assert r.sinterstore("d", ["a", "nokey"]) == 0 and r.exists("d") == 0
    r.set("str", "x")
    for call in (lambda: r.sinter("a", "str"), lambda: r.sunion("str"), lambda: r.sdiff("nokey", "str"),
                 lambda: r.sinterstore("d", ["nokey", "str"]), lambda: r.sintercard(2, ["nokey", "str"])):
        with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
            call()
    for args, message in ((["0", "a"], "numkeys should be greater than 0"),
                          (["3", "a"], "Number of keys can't be greater than number of args"),
                          (["1", "a", "LIMIT", "-1"], "LIMIT can't be negative"),
                          (["1", "a", "LIMIT"], "syntax error")):
        with pytest.raises(redis.ResponseError, match=message):
            r.execute_command("SINTERCARD", *args)


@pytest.mark.redis72
def test_resp3_set_shapes(server):
    conn = resp3(server)
    run_steps(conn, [
        ("SADD s 1 2", integer(2)),
        ("SMEMBERS s", b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        ("SMEMBERS nokey", b"~0\r\n"),
        ("SINTER s nokey", b"~0\r\n"),
        ("SUNION s", b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        ("SDIFF s nokey", b"~2\r\n$1\r\n1\r\n$1\r\n2\r\n"),
        ("SRANDMEMBER nokey", NULL3),
        ("SRANDMEMBER nokey 2", b"*0\r\n"),
        ("SRANDMEMBER s 5", lambda reply: reply.kind == "*" and len(reply.value) == 2),
        ("SPOP nokey 2", b"~0\r\n"),
        ("SPOP s 0", b"~0\r\n"),
        ("SPOP s 1", lambda reply: reply.kind == "~" and len(reply.value) == 1),
        ("SPOP s 5", lambda reply: reply.kind == "~" and len(reply.value) == 1),
        ("EXISTS s", integer(0)),
    ])
    conn.close()


def test_srandmember_and_spop(r):
    members = {str(i) for i in range(40)} | {f"m{i}" for i in range(200)}
    r.sadd("s", *members)
    one = r.srandmember("s").decode()
    assert one in members
    picked = r.srandmember("s", 30)
    assert len(picked) == 30 and len(set(picked)) == 30 and all(m.decode() in members for m in picked)
    assert {m.decode() for m in r.srandmember("s", 1000)} == members
    repeated = r.srandmember("s", -1000)
    assert len(repeated) == 1000 and all(m.decode() in members for m in repeated)
    popped = r.spop("s", 100)
    assert len(popped) == 100 and len(set(popped)) == 100
    assert r.scard("s") == len(members) - 100
    assert not any(r.smismember("s", list(popped)))
    single = r.spop("s")
    assert single.decode() in members and r.sismember("s", single) == 0
    rest = r.spop("s", 10000)
    assert len(rest) == len(members) - 101 and r.exists("s") == 0


@pytest.mark.redis72
def test_set_encodings(r):
    r.sadd("i", *range(512))
    assert encoding(r, "i") == "intset"
    r.sadd("i", 512)
    assert encoding(r, "i") == "hashtable"
    r.sadd("l", 1, 2, "a")
    assert encoding(r, "l") == "listpack"
    r.sadd("l", *[f"m{i}" for i in range(125)])
    assert encoding(r, "l") == "listpack"
    r.sadd("l", "one-more")
    assert encoding(r, "l") == "hashtable"
    r.sadd("v", "x" * 65)
    assert encoding(r, "v") == "hashtable"
    r.config_set("set-max-intset-entries", 2)
    r.sadd("p", 1, 2, 2)  # the size hint (3 arguments) decides the form (7.2)
    assert encoding(r, "p") == "listpack"
    r.config_set("set-max-intset-entries", 512)


def test_sscan_guarantee(r):
    assert r.sscan("nokey") == (0, [])
    r.sadd("small", 1, 2, "a")
    cursor, items = r.sscan("small", 0, match="[0-9]")
    assert cursor == 0 and sorted(items) == [b"1", b"2"]
    stable = {f"stable:{i}" for i in range(3000)}
    r.sadd("s", *stable)
    seen = set()
    cursor = 0
    grown = 0
    while True:
        cursor, items = r.sscan("s", cursor, count=30)
        seen.update(m.decode() for m in items)
        r.sadd("s", *[f"new:{grown + j}" for j in range(50)])
        grown += 50
        if cursor == 0:
            break
    assert stable <= seen


# ---- both ----------------------------------------------------------------------------------------------

def test_copy_memory_and_type(r):
    r.hset("h", mapping={f"f{i}": i for i in range(600)})
    r.sadd("s", *range(100))
    assert r.type("h") == b"hash" and r.type("s") == b"set"
    assert r.copy("h", "h2") and r.copy("s", "s2")
    assert r.hgetall("h2") == r.hgetall("h") and r.smembers("s2") == r.smembers("s")
    r.hset("h2", "f0", "changed")
    assert r.hget("h", "f0") == b"0"
    assert encoding(r, "h2") == "hashtable" and encoding(r, "s2") == "intset"
    assert 0 < r.memory_usage("s") < r.memory_usage("h")
    assert sorted(r.scan_iter(_type="hash")) == [b"h", b"h2"]


def test_watch_sees_in_place_changes(server, r):
    r.hset("h", "a", 1)
    r.sadd("s", "a")
    other = server.client()

    def transaction_survives(key, change) -> bool:
        pipe = r.pipeline()
        pipe.watch(key)
        change()
        pipe.multi()
        pipe.exists(key)
        try:
            pipe.execute()
            return True
        except redis.WatchError:
            return False

    assert not transaction_survives("h", lambda: other.hset("h", "b", 2))
    assert not transaction_survives("h", lambda: other.hincrby("h", "a", 1))
    assert not transaction_survives("h", lambda: other.hdel("h", "b"))
    assert transaction_survives("h", lambda: other.hdel("h", "nope"))
    assert not transaction_survives("s", lambda: other.sadd("s", "b"))
    assert transaction_survives("s", lambda: other.sadd("s", "b"))  # nothing added
    assert not transaction_survives("s", lambda: other.srem("s", "b"))
    assert not transaction_survives("s", lambda: other.smove("s", "t", "a"))  # deletes the key
    other.close()


def test_online_users_pattern(r):
    """The design's "online users": integer ids -> unix times, RENAME, HGETALL / SMEMBERS."""
    n = 20000
    ts = 1732950000
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        user = 10000001 + i
        pipe.hset("h:online:main", user, ts + i % 60)
        pipe.sadd(f"s:online:main:{ts + i % 3}", user)
    pipe.execute()
    r.rename("h:online:main", "h:tmp")
    got = r.hgetall("h:tmp")
    assert len(got) == n and got[b"10000001"] == str(ts).encode()
    keys = sorted(r.keys("s:online:main:*"))
    assert len(keys) == 3 and sum(r.scard(k) for k in keys) == n
    assert b"10000001" in r.smembers(keys[0])


HASH_SET_COMMANDS = """hset hsetnx hmset hget hmget hdel hlen hstrlen hexists hkeys hvals hgetall hincrby
hincrbyfloat hrandfield hscan sadd srem sismember smismember scard smembers spop srandmember smove sinter
sintercard sinterstore sunion sunionstore sdiff sdiffstore sscan""".split()


@pytest.mark.parametrize("name", HASH_SET_COMMANDS)
def test_command_info_matches_reference(server, reference_server, name):
    """Arity, flags, key positions and ACL categories as the reference reports them."""
    def summary(srv):
        with srv.raw() as conn:
            info = conn.call("COMMAND", "INFO", name).value[0]
        assert not info.is_null, f"{name} is unknown"
        v = info.value
        return (v[0].value, v[1].value, sorted(x.value for x in v[2].value), v[3].value, v[4].value,
                v[5].value, sorted(x.value for x in v[6].value))
    assert summary(server) == summary(reference_server)


def test_goblin_stats_and_optimize_on_hashes_and_sets(r):
    r.hset("big:h", mapping={f"field:{i:05d}": f"value:{i:05d}" for i in range(3000)})
    r.sadd("big:s", *[f"user:{i:08d}" for i in range(3000)])
    for key, kind, size in (("big:h", b"hash", r.hlen("big:h")), ("big:s", b"set", r.scard("big:s"))):
        stats = dict(zip(*[iter(r.execute_command("GOBLIN.STATS", key))] * 2))
        assert stats[b"type"] == kind
        assert stats[b"encoding"] == r.object("encoding", key) == b"hashtable"
        assert stats[b"layout"] == b"paged-table"
        assert stats[b"elements"] == size == 3000
        assert stats[b"bytes"] == r.memory_usage(key)
    r.hdel("big:h", *[f"field:{i:05d}" for i in range(0, 3000, 2)])
    r.srem("big:s", *[f"user:{i:08d}" for i in range(0, 3000, 2)])
    before = r.memory_usage("big:h") + r.memory_usage("big:s")
    saved = r.execute_command("GOBLIN.OPTIMIZE")
    after = r.memory_usage("big:h") + r.memory_usage("big:s")
    assert saved >= 0 and after == before - saved
    assert r.hget("big:h", "field:00001") == b"value:00001" and r.hlen("big:h") == 1500
    assert r.sismember("big:s", "user:00000001") and r.scard("big:s") == 1500
