"""Blocking sorted-set pops: BZPOPMIN, BZPOPMAX, BZMPOP and the server's blocking machinery.

Clients block on raw connections; the test waits for the server to report them blocked (INFO
blocked_clients, polled with a deadline) instead of sleeping, then writes from another client and
reads what each blocked client receives. Expected replies are Redis's (checked against 7.0).
"""

import time

from support.expect import WRONGTYPE, arr, bulk, err, integer

NULL_ARRAY = b"*-1\r\n"


def wait_blocked(r, count, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        blocked = int(r.info("clients")["blocked_clients"])
        if blocked == count:
            return
        assert time.monotonic() < deadline, f"blocked_clients stayed {blocked}, wanted {count}"
        time.sleep(0.005)


def test_served_at_once_when_data_exists(server, r, raw):
    r.zadd("z", {"a": 1, "b": 2})
    assert raw.call("BZPOPMIN", "missing", "z", "0").raw == arr(bulk("z"), bulk("a"), bulk("1"))
    assert raw.call("BZPOPMAX", "z", "0").raw == arr(bulk("z"), bulk("b"), bulk("2"))
    assert r.exists("z") == 0  # the last pop deleted the key


def test_waiters_are_served_first_come_first_served(server, r):
    first, second = server.raw(), server.raw()
    first.send_command("BZPOPMIN", "q", "0")
    wait_blocked(r, 1)
    second.send_command("BZPOPMIN", "q", "0")
    wait_blocked(r, 2)
    r.zadd("q", {"m1": 5})
    assert first.read_reply().raw == arr(bulk("q"), bulk("m1"), bulk("5"))
    wait_blocked(r, 1)  # the second still waits: the set was emptied by the first
    r.zadd("q", {"m2": 6, "m3": 7})
    assert second.read_reply().raw == arr(bulk("q"), bulk("m2"), bulk("6"))
    assert r.zrange("q", 0, -1) == [b"m3"]


def test_pipelined_commands_wait_behind_a_blocked_one(server, r):
    conn = server.raw()
    conn.send(b"*3\r\n$8\r\nBZPOPMAX\r\n$1\r\np\r\n$1\r\n0\r\n*1\r\n$4\r\nPING\r\n")
    wait_blocked(r, 1)
    r.zadd("p", {"x": 1})
    assert conn.read_reply().raw == arr(bulk("p"), bulk("x"), bulk("1"))
    assert conn.read_reply().raw == b"+PONG\r\n"


def test_timeout_replies_null_array(server, r, raw):
    assert raw.call("BZPOPMIN", "never", "0.05").raw == NULL_ARRAY
    assert int(r.info("clients")["blocked_clients"]) == 0


def test_inside_multi_does_not_block(server, r, raw):
    assert raw.call("MULTI").raw == b"+OK\r\n"
    assert raw.call("BZPOPMIN", "never", "0").raw == b"+QUEUED\r\n"
    assert raw.call("EXEC").raw == b"*1\r\n" + NULL_ARRAY


def test_bzmpop(server, r, raw):
    r.zadd("m", {"a": 1, "b": 2, "c": 3})
    reply = raw.call("BZMPOP", "0", "2", "none", "m", "MAX", "COUNT", "2").raw
    assert reply == arr(bulk("m"), arr(arr(bulk("c"), bulk("3")), arr(bulk("b"), bulk("2"))))
    waiter = server.raw()
    waiter.send_command("BZMPOP", "0", "1", "n", "MIN")
    wait_blocked(r, 1)
    r.zadd("n", {"z": 9})
    assert waiter.read_reply().raw == arr(bulk("n"), arr(arr(bulk("z"), bulk("9"))))


def test_errors(server, r, raw):
    r.set("s", "v")
    assert raw.call("BZPOPMIN", "s", "1").raw == WRONGTYPE
    assert raw.call("BZPOPMIN", "k", "-1").raw == err("ERR timeout is negative")
    assert raw.call("BZPOPMIN", "k", "abc").raw == err("ERR timeout is not a float or out of range")
    assert raw.call("BZMPOP", "0", "0", "k", "MIN").raw == err("ERR numkeys should be greater than 0")
    assert raw.call("BZMPOP", "0", "1", "k", "MID").raw == err("ERR syntax error")


def test_client_unblock(server, r, raw):
    waiter = server.raw()
    waiter_id = int(waiter.call("CLIENT", "ID").raw[1:-2])
    waiter.send_command("BZPOPMIN", "u", "0")
    wait_blocked(r, 1)
    assert raw.call("CLIENT", "UNBLOCK", str(waiter_id)).raw == integer(1)
    assert waiter.read_reply().raw == NULL_ARRAY
    waiter.send_command("BZPOPMIN", "u", "0")
    wait_blocked(r, 1)
    assert raw.call("CLIENT", "UNBLOCK", str(waiter_id), "ERROR").raw == integer(1)
    assert waiter.read_reply().raw == err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    assert raw.call("CLIENT", "UNBLOCK", str(waiter_id)).raw == integer(0)


def test_blocked_client_that_disconnects_is_forgotten(server, r):
    gone = server.raw()
    gone.send_command("BZPOPMIN", "d", "0")
    wait_blocked(r, 1)
    gone.close()
    wait_blocked(r, 0)
    r.zadd("d", {"kept": 1})
    assert r.zrange("d", 0, -1) == [b"kept"]
