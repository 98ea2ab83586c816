"""HGETDEL (Redis 8.0), BITOP's DIFF, DIFF1, ANDOR and ONE (8.2), HSCAN's NOVALUES and CLIENT
KILL's MAXAGE (7.4): the examples of their redis.io pages, errors, RESP3, the append-only file's
record and the keyspace events. The bit arithmetic itself is tests/unit/bitop_test.cc's.
"""

import pytest

from integration.test_effects import AOF
from support.aof import incr_commands
from support.expect import SYNTAX, WRONGTYPE, arity, arr, bulk, bulks, err, integer, nil, run_steps

pytestmark = pytest.mark.redis72  # Redis 7.4 / 8.x behaviour: Debian's redis-server 7.0 lacks it


def test_hgetdel_page_example(raw):
    run_steps(raw, [
        ('HSET mykey field1 "Hello" field2 "World" field3 "!"', integer(3)),
        ("HGETALL mykey", bulks("field1", "Hello", "field2", "World", "field3", "!")),
        ("HGETDEL mykey FIELDS 2 field3 field4", arr(bulk("!"), nil)),
        ("HGETALL mykey", bulks("field1", "Hello", "field2", "World")),
        ("HGETDEL mykey FIELDS 2 field1 field2", bulks("Hello", "World")),
        ("KEYS *", b"*0\r\n"),
    ])


def test_hgetdel_edges_and_errors(raw):
    run_steps(raw, [
        ("HGETDEL missing FIELDS 2 a b", arr(nil, nil)),
        ("HSET h a 1 b 2", integer(2)),
        ("HGETDEL h FIELDS 2 a a", arr(bulk("1"), nil)),  # deleted by the first mention
        ("HGETDEL h fields 1 b", bulks("2")),
        ("EXISTS h", integer(0)),
        ("HSET h a 1", integer(1)),
        ("HGETDEL h FIELDS 0 a", err("ERR Number of fields must be a positive integer")),
        ("HGETDEL h FIELDS -1 a", err("ERR Number of fields must be a positive integer")),
        ("HGETDEL h FIELDS x a", err("ERR Number of fields must be a positive integer")),
        ("HGETDEL h FIELDS 2 a", err("ERR The `numfields` parameter must match the number of arguments")),
        ("HGETDEL h FIELDS 1 a b", err("ERR The `numfields` parameter must match the number of arguments")),
        ("HGETDEL h FIELD 1 a", err("ERR Mandatory argument FIELDS is missing or not at the right position")),
        ("HGETDEL h FIELDS 1", arity("hgetdel")),
        ("SET s v", b"+OK\r\n"),
        ("HGETDEL s FIELD 1 a", WRONGTYPE),  # the type is checked first
        ("HGET h a", bulk("1")),
    ])
    raw.call("HELLO", "3")
    assert raw.call("HGETDEL", "h", "FIELDS", "2", "a", "zz").raw == b"*2\r\n$1\r\n1\r\n_\r\n"


def test_hgetdel_logged_as_hdel(make_server):
    srv = make_server(options=AOF)
    c = srv.raw()
    c.call("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c.call("HGETDEL", "h", "FIELDS", "2", "a", "zz").py() == [b"1", None]
    assert c.call("HGETDEL", "h", "FIELDS", "1", "zz").py() == [None]  # nothing deleted, not logged
    assert c.call("HGETDEL", "h", "FIELDS", "2", "b", "c").py() == [b"2", b"3"]
    c.close()
    assert incr_commands(srv) == [
        (0, b"HSET", b"h", b"a", b"1", b"b", b"2", b"c", b"3"),
        (0, b"HDEL", b"h", b"a", b"zz"),
        (0, b"HDEL", b"h", b"b", b"c"),
    ]


def test_hgetdel_events(r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=10)["type"] == "psubscribe"
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.execute_command("HGETDEL", "h", "FIELDS", "1", "zz")
    r.execute_command("HGETDEL", "h", "FIELDS", "1", "a")
    r.execute_command("HGETDEL", "h", "FIELDS", "1", "b")
    seen = [p.get_message(timeout=10)["channel"] for _ in range(4)]
    assert seen == [b"__keyevent@0__:hset", b"__keyevent@0__:hdel", b"__keyevent@0__:hdel",
                    b"__keyevent@0__:del"]
    p.close()
    r.config_set("notify-keyspace-events", "")


def test_bitop_page_examples(raw):
    run_steps(raw, [
        ("BITFIELD key1 SET i8 #0 255", arr(integer(0))),
        ("BITFIELD key2 SET i8 #0 85", arr(integer(0))),
        ("BITOP AND dest key1 key2", integer(1)),
        ("BITFIELD dest GET i8 #0", arr(integer(85))),
        # The ad audience: readers (LRB) interested in fantasy, adventure or science fiction.
        ("SETBIT LRB 0 1", integer(0)), ("SETBIT LRB 1 1", integer(0)), ("SETBIT LRB 2 1", integer(0)),
        ("SETBIT B:F 0 1", integer(0)), ("SETBIT B:A 3 1", integer(0)), ("SETBIT B:SF 2 1", integer(0)),
        ("BITOP ANDOR TA LRB B:F B:A B:SF", integer(1)),
        ("GET TA", bulk(b"\xa0")),  # readers 0 and 2; 1 reads but likes none, 3 likes but does not read
    ])


def test_bitop_new_operations(raw):
    raw.call("SET", "x", b"\xca")
    raw.call("SET", "y1", b"\xa6")
    raw.call("SET", "y2", b"\x63\xff")
    run_steps(raw, [
        ("BITOP DIFF d x y1 y2", integer(2)),
        ("GET d", bulk(b"\x08\x00")),
        ("BITOP diff1 d x y1 y2", integer(2)),
        ("GET d", bulk(b"\x25\xff")),
        ("BITOP AndOr d x y1 y2", integer(2)),
        ("GET d", bulk(b"\xc2\x00")),
        ("BITOP ONE d x y1 y2", integer(2)),
        ("GET d", bulk(b"\x0d\xff")),
        ("BITOP ONE d x", integer(1)),  # ONE takes a single source
        ("GET d", bulk(b"\xca")),
        ("BITOP DIFF d x", err("ERR BITOP DIFF must be called with at least two source keys.")),
        ("BITOP diff1 d x", err("ERR BITOP DIFF1 must be called with at least two source keys.")),
        ("BITOP andor d x", err("ERR BITOP ANDOR must be called with at least two source keys.")),
        ("BITOP NOT d x y1", err("ERR BITOP NOT must be called with a single source key.")),
        ("BITOP DIFF2 d x y1", SYNTAX),
        ("BITOP DIFF d", arity("bitop")),
        ("RPUSH l a", integer(1)),
        ("BITOP ANDOR d x l", WRONGTYPE),
        ("BITOP DIFF d nokey1 nokey2", integer(0)),
        ("EXISTS d", integer(0)),  # an empty result deletes the destination
    ])


def test_hscan_novalues_example(raw):
    run_steps(raw, [
        ("HSET myhash a 1 b 2", integer(2)),
        ("HSCAN myhash 0", arr(bulk("0"), bulks("a", "1", "b", "2"))),
        ("HSCAN myhash 0 NOVALUES", arr(bulk("0"), bulks("a", "b"))),
    ])


def test_client_kill_maxage(server, raw):
    others = [server.raw() for _ in range(2)]
    for conn in others:
        assert conn.call("PING").raw == b"+PONG\r\n"
    # Nobody is a day old: nothing goes.
    assert raw.call("CLIENT", "KILL", "MAXAGE", "86400").raw == integer(0)
    # Every connection is at least 0 s old: all others go (the fixture's own client too), the
    # caller stays (SKIPME yes).
    connected = raw.call("CLIENT", "LIST").py().count(b"\n")
    assert raw.call("CLIENT", "KILL", "MAXAGE", "0").raw == integer(connected - 1)
    assert raw.call("CLIENT", "LIST").py().count(b"\n") == 1
    assert raw.call("PING").raw == b"+PONG\r\n"
    assert raw.call("CLIENT", "KILL", "MAXAGE", "x").raw == SYNTAX
    for conn in others:
        conn.close()
