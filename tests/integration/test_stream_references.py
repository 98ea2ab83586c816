"""What removing stream entries does about consumer groups' references (Redis 8.2): XDELEX,
XACKDEL, and the KEEPREF / DELREF / ACKED options of XADD and XTRIM; and XREAD's `+` id (7.4).
The examples of the redis.io pages, the scenarios Redis's own suite runs, errors, RESP3, the
append-only file's record and the keyspace events.
"""

import pytest

from integration.test_effects import AOF
from support.aof import incr_commands
from support.expect import SYNTAX, WRONGTYPE, arity, err
from support.server import wait_for

pytestmark = pytest.mark.redis72  # Redis 7.4 / 8.2 behaviour: Debian's redis-server 7.0 lacks it

PLUS_IN_GROUP = ("ERR The + ID is meaningless in the context of XREADGROUP: you want to read the "
                 "history of this consumer by specifying a proper ID, or use the > ID to get new "
                 "messages. The + ID would just return an empty result set.")


class ServerError(Exception):
    pass


def x(conn, *args):
    """The reply to one command as plain Python values; an error reply raises ServerError."""
    reply = conn.call(*args)
    if reply.is_error:
        raise ServerError(reply.error_text)
    return reply.py()


def pending(r, key, group):
    return x(r, "XPENDING", key, group)[0]


def two_groups_reading(r, ids=("1-0", "2-0")):
    x(r, "DEL", "mystream")
    for id_ in ids:
        x(r, "XADD", "mystream", id_, "f", "v")
    for group, consumer in (("group1", "consumer1"), ("group2", "consumer2")):
        x(r, "XGROUP", "CREATE", "mystream", group, "0")
        x(r, "XREADGROUP", "GROUP", group, consumer, "STREAMS", "mystream", ">")


def entries_and_group(r, n):
    """mystream anew with entries 1-0 .. n-0 and mygroup created at 0 (nothing delivered)."""
    x(r, "DEL", "mystream")
    for j in range(1, n + 1):
        x(r, "XADD", "mystream", f"{j}-0", "f", "v")
    x(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")


def test_xdelex_page_example(raw):
    r = raw
    ids = [x(r, "XADD", "mystream", "*", f"field{i}", f"value{i}") for i in (1, 2, 3)]
    assert x(r, "XDELEX", "mystream", "KEEPREF", "IDS", "2", "1526919030474-55",
             "1526919030474-56") == [-1, -1]
    assert [entry[0] for entry in x(r, "XRANGE", "mystream", "-", "+")] == ids


def test_xackdel_page_example(raw):
    r = raw
    first = x(r, "XADD", "mystream", "*", "field1", "value1")
    second = x(r, "XADD", "mystream", "*", "field2", "value2")
    assert x(r, "XGROUP", "CREATE", "mystream", "mygroup", "0") == b"OK"
    read = x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "2", "STREAMS", "mystream", ">")
    assert [entry[0] for entry in read[0][1]] == [first, second]
    assert x(r, "XPENDING", "mystream", "mygroup") == [2, first, second, [[b"consumer1", b"2"]]]
    assert x(r, "XACKDEL", "mystream", "mygroup", "KEEPREF", "IDS", "2", first, second) == [1, 1]
    assert x(r, "XPENDING", "mystream", "mygroup") == [0, None, None, None]
    assert x(r, "XRANGE", "mystream", "-", "+") == []


def test_xdelex_policies(raw):
    r = raw
    two_groups_reading(r, ("1-0", "2-0", "3-0"))
    # ACKED: both groups hold the entries.
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "2", "1-0", "9-0") == [2, -1]
    assert x(r, "XLEN", "mystream") == 3
    # KEEPREF (the default) deletes and leaves the references.
    assert x(r, "XDELEX", "mystream", "IDS", "1", "1-0") == [1]
    assert pending(r, "mystream", "group1") == 3
    # DELREF deletes and drops them; for an entry already gone it still drops them (-1).
    assert x(r, "XDELEX", "mystream", "DELREF", "IDS", "2", "2-0", "1-0") == [1, -1]
    assert pending(r, "mystream", "group1") == 1
    assert pending(r, "mystream", "group2") == 1
    # Once acknowledged everywhere, ACKED deletes.
    x(r, "XACK", "mystream", "group1", "3-0")
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "1", "3-0") == [2]
    x(r, "XACK", "mystream", "group2", "3-0")
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "1", "3-0") == [1]
    assert x(r, "XLEN", "mystream") == 0
    assert x(r, "XDELEX", "nokey", "IDS", "2", "1-0", "2-0") == [-1, -1]


def test_xdelex_acked_waits_for_undelivered_entries_and_groups(raw):
    r = raw
    # Redis's "XGROUP DESTROY removes all consumer group references".
    for j in range(5):
        x(r, "XADD", "mystream", f"{j}-1", "item", str(j))
    x(r, "XGROUP", "CREATE", "mystream", "mygroup", "0")
    x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">")
    ids = [f"{j}-1" for j in range(5)]
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [2] * 5
    x(r, "XGROUP", "DESTROY", "mystream", "mygroup")
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "5", *ids) == [1] * 5
    # A group created at 0 has not been delivered the entry yet: it still needs it.
    x(r, "XADD", "mystream", "9-1", "f", "v")
    x(r, "XGROUP", "CREATE", "mystream", "late", "0")
    assert x(r, "XDELEX", "mystream", "ACKED", "IDS", "1", "9-1") == [2]


def test_xackdel_policies(raw):
    r = raw
    # Redis's DELREF, ACKED and KEEPREF scenarios with two groups.
    two_groups_reading(r)
    assert x(r, "XACKDEL", "mystream", "group1", "DELREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x(r, "XLEN", "mystream") == 0
    assert x(r, "XPENDING", "mystream", "group2") == [0, None, None, None]
    assert x(r, "XACKDEL", "mystream", "group2", "DELREF", "IDS", "2", "1-0", "2-0") == [-1, -1]

    two_groups_reading(r)
    assert x(r, "XACKDEL", "mystream", "group1", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert x(r, "XLEN", "mystream") == 2
    assert x(r, "XPENDING", "mystream", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    assert x(r, "XACKDEL", "mystream", "group2", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x(r, "XLEN", "mystream") == 0

    two_groups_reading(r)
    assert x(r, "XACKDEL", "mystream", "group1", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x(r, "XLEN", "mystream") == 0
    assert x(r, "XPENDING", "mystream", "group2") == [2, b"1-0", b"2-0", [[b"consumer2", b"2"]]]
    assert x(r, "XACKDEL", "mystream", "group2", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x(r, "XPENDING", "mystream", "group2") == [0, None, None, None]

    x(r, "DEL", "s")
    assert x(r, "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]  # no key
    x(r, "XADD", "s", "1-0", "f", "v")
    assert x(r, "XACKDEL", "s", "g", "IDS", "2", "1-1", "2-2") == [-1, -1]  # no group


def test_reference_commands_errors(raw):
    for command in (["XDELEX", "s"], ["XACKDEL", "s", "g"]):
        name = command[0].lower()
        steps = [
            (command[:-1] if name == "xdelex" else command[:2], arity(name)),
            (command + ["IDS"], arity(name)),
            (command + ["IDS", "abc", "1-1"], err("ERR Number of IDs must be a positive integer")),
            (command + ["IDS", "0", "1-1"], err("ERR Number of IDs must be a positive integer")),
            (command + ["IDS", "-5", "1-1"], err("ERR Number of IDs must be a positive integer")),
            (command + ["IDS", "3", "1-1", "2-2"],
             err("ERR The `numids` parameter must match the number of arguments")),
            (command + ["IDS", "1", "1-1", "2-2"], SYNTAX),
            (command + ["KEEPREF", "DELREF", "IDS", "1", "1-1"], SYNTAX),
            (command + ["KEEPREF", "ACKED", "IDS", "1", "1-1"], SYNTAX),
            (command + ["DELREF", "ACKED", "IDS", "1", "1-1"], SYNTAX),
            (command + ["BOGUS", "IDS", "1", "1-1"], SYNTAX),
            (command + ["IDS", "1", "1-1", "IDS", "1", "2-2"], SYNTAX),
            (command + ["IDS", "1", "not-an-id"],
             err("ERR Invalid stream ID specified as stream command argument")),
            (command + ["IDS", "1", "1-1", "ACKED"], lambda reply: reply.py() == [-1]),
        ]
        for args, expected in steps:
            reply = raw.call(*args)
            if callable(expected):
                assert expected(reply), (args, reply)
            else:
                assert reply.raw == expected, (args, reply.raw)
    raw.call("RPUSH", "l", "a")
    assert raw.call("XDELEX", "l", "IDS", "1", "1-1").raw == WRONGTYPE
    assert raw.call("XACKDEL", "l", "g", "IDS", "1", "1-1").raw == WRONGTYPE


def test_resp3_replies(raw):
    raw.call("HELLO", "3")
    raw.call("XADD", "s", "1-0", "f", "v")
    assert raw.call("XDELEX", "s", "IDS", "2", "1-0", "2-0").raw == b"*2\r\n:1\r\n:-1\r\n"
    assert raw.call("XACKDEL", "s", "g", "IDS", "1", "1-0").raw == b"*1\r\n:-1\r\n"


def test_xadd_trim_policies(raw):
    r = raw
    # Redis's "XADD with MAXLEN option and ACKED option".
    entries_and_group(r, 5)
    x(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "6-0", "f", "v")
    assert x(r, "XLEN", "mystream") == 6  # nothing delivered, nothing acknowledged
    records = x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "1", "STREAMS", "mystream", ">")
    x(r, "XACK", "mystream", "mygroup", records[0][1][0][0])
    x(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "7-0", "f", "v")
    assert x(r, "XLEN", "mystream") == 6  # only 1-0 could go
    records = x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "STREAMS", "mystream", ">")
    x(r, "XACK", "mystream", "mygroup", *[entry[0] for entry in records[0][1]])
    x(r, "XADD", "mystream", "MAXLEN", "=", "1", "ACKED", "*", "f", "v")
    assert x(r, "XLEN", "mystream") == 1

    # Redis's "XADD with MAXLEN option and DELREF option".
    entries_and_group(r, 5)
    x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "1", "STREAMS", "mystream", ">")
    x(r, "XADD", "mystream", "MAXLEN", "=", "1", "DELREF", "*", "f", "v")
    assert x(r, "XLEN", "mystream") == 1
    assert pending(r, "mystream", "mygroup") == 0

    # KEEPREF (the default) leaves the reference to a trimmed entry.
    entries_and_group(r, 3)
    x(r, "XREADGROUP", "GROUP", "mygroup", "consumer1", "COUNT", "1", "STREAMS", "mystream", ">")
    x(r, "XADD", "mystream", "KEEPREF", "MAXLEN", "1", "4-0", "f", "v")
    assert x(r, "XLEN", "mystream") == 1
    assert pending(r, "mystream", "mygroup") == 1


def test_xtrim_policies(raw):
    r = raw
    two_groups_reading(r, ("1-0", "2-0", "3-0"))
    x(r, "XADD", "mystream", "4-0", "f", "v")
    assert x(r, "XTRIM", "mystream", "MAXLEN", "0", "ACKED") == 0
    x(r, "XACK", "mystream", "group1", "1-0", "2-0")
    x(r, "XACK", "mystream", "group2", "1-0")
    assert x(r, "XTRIM", "mystream", "MINID", "4", "ACKED") == 1  # 2-0 is still pending in group2
    assert x(r, "XTRIM", "mystream", "MAXLEN", "1", "DELREF") == 2
    assert x(r, "XPENDING", "mystream", "group1") == [0, None, None, None]
    assert x(r, "XPENDING", "mystream", "group2") == [0, None, None, None]
    assert x(r, "XTRIM", "mystream", "MAXLEN", "0", "KEEPREF") == 1
    assert x(r, "XTRIM", "nokey", "MAXLEN", "0", "ACKED") == 0
    with pytest.raises(ServerError, match="syntax error"):
        x(r, "XTRIM", "mystream", "ACKED", "DELREF")


def test_xread_plus_reads_the_last_entry(raw):
    r = raw
    for key, count in (("streamA", 3), ("streamB", 1)):
        for j in range(1, count + 1):
            x(r, "XADD", key, f"{j}-0", "n", str(j))
    x(r, "XADD", "streamC", "1-0", "f", "v")
    x(r, "XDEL", "streamC", "1-0")  # an emptied stream has no last entry
    reply = x(r, "XREAD", "COUNT", "5", "STREAMS", "streamA", "streamB", "streamC", "streamD",
              "+", "+", "+", "+")
    assert reply == [[b"streamA", [[b"3-0", [b"n", b"3"]]]], [b"streamB", [[b"1-0", [b"n", b"1"]]]]]
    x(r, "XADD", "streamA", "4-0", "n", "4")
    x(r, "XDEL", "streamA", "4-0")  # the last id stays 4-0, the last entry is 3-0
    assert x(r, "XREAD", "STREAMS", "streamA", "+") == [[b"streamA", [[b"3-0", [b"n", b"3"]]]]]
    x(r, "XGROUP", "CREATE", "streamA", "g", "0")
    with pytest.raises(ServerError, match="The \\+ ID is meaningless"):
        x(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "streamA", "+")


def test_xread_plus_blocks_on_an_empty_stream(server, raw):
    r = raw
    waiter = server.raw()
    waiter.send_command("XREAD", "BLOCK", "0", "STREAMS", "empty", "+")
    # The waiter is blocked once CLIENT LIST says so; then an entry serves it.
    wait_for(lambda: b"cmd=xread" in x(r, "CLIENT", "LIST"), what="XREAD blocked")
    x(r, "XADD", "empty", "5-0", "f", "v")
    assert waiter.read_reply().py() == [[b"empty", [[b"5-0", [b"f", b"v"]]]]]
    waiter.close()


def test_xreadgroup_plus_error_text(raw):
    raw.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert raw.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+").raw == err(PLUS_IN_GROUP)


def test_logged_forms(make_server):
    srv = make_server(options=AOF)
    c = srv.raw()
    for j in range(1, 5):
        x(c, "XADD", "s", f"{j}-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    x(c, "XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert x(c, "XDELEX", "s", "DELREF", "IDS", "1", "1-0") == [1]
    assert x(c, "XDELEX", "s", "IDS", "1", "9-0") == [-1]  # no change, not logged
    assert x(c, "XACKDEL", "s", "g", "ACKED", "IDS", "1", "2-0") == [1]
    assert x(c, "XTRIM", "s", "MAXLEN", "~", "0", "ACKED") == 0  # no change, not logged
    assert x(c, "XADD", "s", "DELREF", "MAXLEN", "1", "5-0", "f", "v") == b"5-0"
    c.close()
    logged = [command[1:] for command in incr_commands(srv) if command[1] in (b"XDELEX", b"XACKDEL", b"XADD")]
    assert logged[-3:] == [
        (b"XDELEX", b"s", b"DELREF", b"IDS", b"1", b"1-0"),
        (b"XACKDEL", b"s", b"g", b"ACKED", b"IDS", b"1", b"2-0"),
        (b"XADD", b"s", b"DELREF", b"MAXLEN", b"1", b"5-0", b"f", b"v"),
    ]


def test_logged_approximate_trim_keeps_the_policy(make_server):
    srv = make_server(options=dict(AOF, **{"stream-node-max-entries": "2"}))
    c = srv.raw()
    for j in range(1, 7):
        x(c, "XADD", "s", f"{j}-0", "f", "v")
    x(c, "XGROUP", "CREATE", "s", "g", "0")
    x(c, "XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")
    x(c, "XACK", "s", "g", "1-0", "2-0", "3-0")
    assert x(c, "XTRIM", "s", "MAXLEN", "~", "0", "ACKED") == 2  # the node of 3-0 holds 4-0
    c.close()
    # Redis rewrites the command in place (streamRewriteApproxSpecifier, streamRewriteTrimArgument):
    # the options stay where the client put them.
    assert incr_commands(srv)[-1] == (0, b"XTRIM", b"s", b"MAXLEN", b"=", b"4", b"ACKED")


def test_events(raw, r):
    subscriber = r
    r = raw
    x(r, "CONFIG", "SET", "notify-keyspace-events", "KEA")
    p = subscriber.pubsub()
    p.psubscribe("__keyevent@0__:*")
    assert p.get_message(timeout=10)["type"] == "psubscribe"
    x(r, "XADD", "s", "1-0", "f", "v")
    x(r, "XADD", "s", "2-0", "f", "v")
    x(r, "XGROUP", "CREATE", "s", "g", "0")
    x(r, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x(r, "XDELEX", "s", "IDS", "1", "9-0")            # nothing deleted: no event
    x(r, "XDELEX", "s", "IDS", "1", "1-0")
    x(r, "XACKDEL", "s", "g", "IDS", "1", "2-0")
    x(r, "XADD", "s", "DELREF", "MAXLEN", "0", "3-0", "f", "v")
    seen = []
    for _ in range(8):
        message = p.get_message(timeout=10)
        assert message is not None
        seen.append(message["channel"].split(b":", 1)[1])
    assert seen == [b"xadd", b"xadd", b"xgroup-create", b"xgroup-createconsumer", b"xdel", b"xdel",
                    b"xadd", b"xtrim"]
    p.close()
    x(r, "CONFIG", "SET", "notify-keyspace-events", "")
