"""DIGEST, DELEX, SET's IFEQ / IFNE / IFDEQ / IFDNE and MSETEX (Redis 8.4): the examples of their
redis.io pages, errors, RESP3 replies, what the append-only file records (a conditional SET as a
plain SET, DELEX as DEL, MSETEX with an absolute deadline) and the keyspace events.

Digests are XXH3-64 values computed outside Goblin (`xxhsum -H3`); "Hello world" is the DIGEST
page's own example.
"""

import pytest

from integration.test_effects import AOF
from support.aof import incr_commands
from support.expect import WRONGTYPE, SYNTAX, arity, arr, bulk, err, integer, nil, ok, resp3_null, run_steps

pytestmark = pytest.mark.redis72  # Redis 8.4 commands: Debian's redis-server 7.0 has none

HELLO_DIGEST = "b6acb9d84a38ff74"  # xxhsum -H3 of "Hello world"
V25_DIGEST = "037b301ec980ad5f"    # of "v25": the reply keeps the leading zero


def test_digest_page_example(raw):
    run_steps(raw, [
        ('SET key1 "Hello world"', ok),
        ("DIGEST key1", bulk(HELLO_DIGEST)),
    ])


def test_digest_replies(raw):
    run_steps(raw, [
        ("DIGEST missing", nil),
        ("SET v v25", ok),
        ("DIGEST v", bulk(V25_DIGEST)),
        ("SET n 12345", ok),  # an integer-encoded value hashes its text
        ("DIGEST n", bulk("f34099ede96b5581")),
        ("SET e ''", ok),
        ("DIGEST e", bulk("2d06800538d394c2")),
        ("RPUSH l a", integer(1)),
        ("DIGEST l", WRONGTYPE),
        ("DIGEST", arity("digest")),
        ("DIGEST a b", arity("digest")),
    ])
    raw.call("HELLO", "3")
    run_steps(raw, [("DIGEST missing", resp3_null), ("DIGEST v", bulk(V25_DIGEST))])


def test_set_compare_conditions(raw):
    run_steps(raw, [
        # IFEQ and IFDEQ never create the key; IFNE and IFDNE do.
        ("SET k v1 IFEQ v1", nil),
        ("SET k v1 IFDEQ " + HELLO_DIGEST, nil),
        ("EXISTS k", integer(0)),
        ("SET k v1 IFNE x", ok),
        ("SET k2 v IFDNE " + HELLO_DIGEST, ok),
        ("SET k v2 IFEQ other", nil),
        ("SET k v2 IFEQ v1", ok),
        ("GET k", bulk("v2")),
        ("SET k v3 IFNE v2", nil),
        ("SET k v3 IFNE v1", ok),
        ("SET h 'Hello world'", ok),
        ("SET h x IFDNE " + HELLO_DIGEST, nil),
        ("SET h x IFDEQ " + HELLO_DIGEST.upper(), ok),  # hex digits in either case
        ("SET h y IFDEQ " + HELLO_DIGEST, nil),
        ("GET h", bulk("x")),
        # GET replies the old value whether the condition held or not.
        ("SET k v4 IFEQ nope GET", bulk("v3")),
        ("SET k v4 IFEQ v3 GET", bulk("v3")),
        ("GET k", bulk("v4")),
        ("SET fresh v IFNE x GET", nil),
        ("GET fresh", bulk("v")),
        # The conditions exclude each other and NX / XX.
        ("SET k v IFEQ a IFNE b", SYNTAX),
        ("SET k v NX IFEQ a", SYNTAX),
        ("SET k v IFDEQ a XX", SYNTAX),
        ("SET k v IFEQ", SYNTAX),
        ("RPUSH l a", integer(1)),
        ("SET l v IFEQ a", WRONGTYPE),
        ("SET l v IFNE a", WRONGTYPE),
        ("SET l v", ok),  # without a condition SET replaces any type
    ])


def test_set_compare_keeps_or_sets_the_lifetime(raw):
    run_steps(raw, [
        ("SET k v EX 1000", ok),
        ("SET k w IFEQ v KEEPTTL", ok),
        ("TTL k", lambda reply: 990 <= reply.py() <= 1000),
        ("SET k x IFEQ w", ok),
        ("TTL k", integer(-1)),
        ("SET k y IFEQ x PX 500000", ok),
        ("PTTL k", lambda reply: 400000 < reply.py() <= 500000),
    ])


def test_delex(raw):
    run_steps(raw, [
        ("DELEX missing", integer(0)),
        ("DELEX missing IFEQ v", integer(0)),
        ("SET k v", ok),
        ("DELEX k IFEQ w", integer(0)),
        ("DELEX k IFNE v", integer(0)),
        ("DELEX k IFDNE " + bulk_digest_of_v(), integer(0)),
        ("DELEX k IFDEQ " + bulk_digest_of_v(), integer(1)),
        ("EXISTS k", integer(0)),
        ("SET k v", ok),
        ("DELEX k IFNE w", integer(1)),
        ("SET k v", ok),
        ("DELEX k ifeq v", integer(1)),
        ("SET k v", ok),
        ("DELEX k", integer(1)),
        ("RPUSH l a", integer(1)),
        ("DELEX l IFEQ a", WRONGTYPE),
        ("DELEX l", integer(1)),  # no condition: any type goes
        ("DELEX k IFEQ", SYNTAX),
        ("DELEX k IFEQ a b", SYNTAX),
        ("DELEX k BOGUS a", SYNTAX),
        ("DELEX", arity("delex")),
    ])


def bulk_digest_of_v():
    return "f7042be43fb80714"  # xxhsum -H3 of "v"


def test_msetex(raw):
    run_steps(raw, [
        ("MSETEX 2 a 1 b 2", integer(1)),
        ("MGET a b", arr(bulk("1"), bulk("2"))),
        ("TTL a", integer(-1)),
        ("MSETEX 2 a 3 b 4 EX 1000", integer(1)),
        ("TTL b", lambda reply: 990 <= reply.py() <= 1000),
        ("MSETEX 1 a 5 KEEPTTL", integer(1)),
        ("TTL a", lambda reply: 990 <= reply.py() <= 1000),
        ("MSETEX 1 a 6", integer(1)),
        ("TTL a", integer(-1)),
        # NX: none may exist; XX: all must. Either refuses the whole call.
        ("MSETEX 2 a 7 c 8 NX", integer(0)),
        ("EXISTS c", integer(0)),
        ("MSETEX 2 c 8 d 9 NX PX 500000", integer(1)),
        ("PTTL d", lambda reply: 400000 < reply.py() <= 500000),
        ("MSETEX 2 a 1 e 2 XX", integer(0)),
        ("MSETEX 2 a 1 c 2 EXAT 4102444800 XX", integer(1)),  # options in any order
        ("EXPIRETIME c", integer(4102444800)),
        ("MSETEX 2 a 1 c 2 PXAT 4102444800000", integer(1)),
        ("PEXPIRETIME a", integer(4102444800000)),
        ("RPUSH l x", integer(1)),
        ("MSETEX 1 l v", integer(1)),  # like MSET, any type is replaced
        ("TYPE l", b"+string\r\n"),
    ])


def test_msetex_errors(raw):
    run_steps(raw, [
        ("MSETEX 1 a", arity("msetex")),
        ("MSETEX 2 a 1", arity("msetex")),
        ("MSETEX 2 a 1 b", arity("msetex")),
        ("MSETEX x a 1", err("ERR value is not an integer or out of range")),
        ("MSETEX 0 a 1", err("ERR invalid numkeys value")),
        ("MSETEX -1 a 1", err("ERR invalid numkeys value")),
        ("MSETEX 1 a 1 NX XX", SYNTAX),
        ("MSETEX 1 a 1 EX 10 PX 10", SYNTAX),
        ("MSETEX 1 a 1 EX 10 KEEPTTL", SYNTAX),
        ("MSETEX 1 a 1 KEEPTTL EX 10", SYNTAX),
        ("MSETEX 1 a 1 EX", SYNTAX),
        ("MSETEX 1 a 1 b", SYNTAX),
        ("MSETEX 1 a 1 EX 0", err("ERR invalid expire time in 'msetex' command")),
        ("MSETEX 1 a 1 EX x", err("ERR value is not an integer or out of range")),
        ("EXISTS a", integer(0)),
    ])


def test_command_rows(raw):
    info = {name: raw.call("COMMAND", "INFO", name).py()[0] for name in ("digest", "delex", "msetex")}
    assert info["digest"][1:3] == [2, [b"readonly", b"fast"]]
    assert info["delex"][1:3] == [-2, [b"write", b"fast"]]
    assert info["msetex"][1] == -4
    assert set(info["msetex"][2]) == {b"write", b"denyoom", b"movablekeys"}
    assert raw.call("COMMAND", "GETKEYS", "MSETEX", "2", "a", "1", "b", "2", "EX", "5").py() == [
        b"a", b"b"]
    docs = raw.call("COMMAND", "DOCS", "digest", "delex", "msetex").py()
    since = {docs[i]: dict(zip(docs[i + 1][0::2], docs[i + 1][1::2]))[b"since"]
             for i in range(0, len(docs), 2)}
    assert since == {b"digest": b"8.4.0", b"delex": b"8.4.0", b"msetex": b"8.4.0"}


def test_logged_forms(make_server):
    srv = make_server(options=AOF)
    c = srv.client()
    assert c.execute_command("SET", "k", "v1", "IFNE", "x") is True
    assert c.execute_command("SET", "k", "v2", "IFEQ", "v1", "KEEPTTL") is True
    assert c.execute_command("SET", "k", "v3", "IFEQ", "nope") is None  # refused: nothing logged
    assert c.execute_command("SET", "k", "v3", "IFDEQ", "8f7e2b4d1d2b3d9a") is None
    assert c.execute_command("DELEX", "k", "IFEQ", "v2") == 1
    assert c.execute_command("DELEX", "k") == 0
    assert c.execute_command("MSETEX", "2", "a", "1", "b", "2") == 1
    assert c.execute_command("MSETEX", "1", "a", "3", "PXAT", "4102444800000") == 1
    assert c.execute_command("SET", "t", "x") is True
    assert c.execute_command("SET", "t", "y", "IFEQ", "x", "EXAT", "4102444800") is True
    c.close()
    assert incr_commands(srv) == [
        (0, b"SET", b"k", b"v1"),
        (0, b"SET", b"k", b"v2", b"KEEPTTL"),
        (0, b"DEL", b"k"),
        (0, b"MSETEX", b"2", b"a", b"1", b"b", b"2"),
        (0, b"MSETEX", b"1", b"a", b"3", b"PXAT", b"4102444800000"),
        (0, b"SET", b"t", b"x"),
        (0, b"SET", b"t", b"y", b"PXAT", b"4102444800000"),
    ]


def test_msetex_relative_deadline_is_logged_absolute(make_server):
    srv = make_server(options=AOF)
    c = srv.client()
    before_ms = int(c.execute_command("TIME")[0]) * 1000
    assert c.execute_command("MSETEX", "2", "a", "1", "b", "2", "NX", "EX", "100000") == 1
    c.close()
    [(db, name, *args)] = incr_commands(srv)
    assert (db, name, args[:5], args[5]) == (0, b"MSETEX", [b"2", b"a", b"1", b"b", b"2"], b"PXAT")
    assert before_ms + 100_000_000 <= int(args[6]) <= before_ms + 100_000_000 + 60_000


def test_events(r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=10)["type"] == "psubscribe"
    r.execute_command("SET", "k", "v", "IFNE", "x")
    r.execute_command("SET", "k", "w", "IFEQ", "nope")  # refused: no event
    r.execute_command("DELEX", "k", "IFEQ", "v")
    r.execute_command("MSETEX", "2", "a", "1", "b", "2", "EX", "100")
    seen = []
    for _ in range(6):
        message = p.get_message(timeout=10)
        assert message is not None
        seen.append((message["channel"], message["data"]))
    assert seen == [
        (b"__keyevent@0__:set", b"k"), (b"__keyevent@0__:del", b"k"),
        (b"__keyevent@0__:set", b"a"), (b"__keyevent@0__:expire", b"a"),
        (b"__keyevent@0__:set", b"b"), (b"__keyevent@0__:expire", b"b"),
    ]
    p.close()
    r.config_set("notify-keyspace-events", "")
