"""Blocking list commands: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP, with CLIENT UNBLOCK and CLIENT KILL.

Clients block on raw connections or in redis-py threads; the test waits until the server reports them
blocked (INFO clients blocked_clients, polled with a deadline) instead of sleeping, then writes from
another client and reads what each blocked client receives. No test asserts how long anything took.
Expected replies are Redis's (checked against 7.0); `redis72` marks what 7.2 changed: a woken client
runs its command again, so it is served from the first non-empty key in its own argument order; a
timeout too large for the clock is "timeout is out of range"; INFO counts total_blocking_keys.
"""

from __future__ import annotations

import glob
import os
import threading

import pytest

from support.expect import SYNTAX, WRONGTYPE, arr, bulk, bulks, err, integer, nil, null_array, ok, resp3_null
from support.server import wait_for

TIMEOUT_NOT_FLOAT = err("ERR timeout is not a float or out of range")
TIMEOUT_NEGATIVE = err("ERR timeout is negative")


def blocked_clients(r) -> int:
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, count: int):
    wait_for(lambda: blocked_clients(r) == count, what=f"blocked_clients == {count}")


def client_id(conn) -> int:
    return conn.call("CLIENT", "ID").value


@pytest.fixture
def connect(server, r):
    """Opens raw connections that are closed at teardown, so a failed test leaves nobody blocked."""
    opened = []

    def open_one():
        conn = server.raw()
        opened.append(conn)
        return conn
    yield open_one
    for conn in opened:
        conn.close()
    wait_blocked(r, 0)


# ---- served at once -----------------------------------------------------------------------------------

def test_served_at_once_when_data_exists(r, raw):
    r.rpush("l", "a", "b", "c", "d", "e", "f")
    assert raw.call("BLPOP", "missing", "l", "0").raw == arr(bulk("l"), bulk("a"))
    assert raw.call("BRPOP", "l", "missing", "0").raw == arr(bulk("l"), bulk("f"))
    assert raw.call("BLMOVE", "l", "dst", "LEFT", "RIGHT", "0").raw == bulk("b")
    assert raw.call("BRPOPLPUSH", "l", "dst", "0").raw == bulk("e")
    assert raw.call("BLMPOP", "0", "2", "missing", "l", "RIGHT", "COUNT", "5").raw == arr(bulk("l"),
                                                                                        bulks("d", "c"))
    assert r.exists("l") == 0
    assert r.lrange("dst", 0, -1) == [b"e", b"b"]
    r.rpush("a", "1")
    r.rpush("b", "2")
    assert raw.call("BLPOP", "b", "a", "0").raw == arr(bulk("b"), bulk("2"))   # argument order decides
    assert blocked_clients(r) == 0


def test_timeouts_reply_null_array(server, r, raw):
    # Every blocking list command answers a timeout with a null array, BLMOVE and BRPOPLPUSH included.
    assert raw.call("BLPOP", "never", "0.01").raw == null_array
    assert raw.call("BRPOP", "never", "other", "0.01").raw == null_array
    assert raw.call("BLMOVE", "never", "dst", "LEFT", "LEFT", "0.01").raw == null_array
    assert raw.call("BRPOPLPUSH", "never", "dst", "0.01").raw == null_array
    assert raw.call("BLMPOP", "0.01", "1", "never", "LEFT").raw == null_array
    assert r.exists("dst") == 0
    with server.raw() as c:
        assert c.call("HELLO", "3").kind == "%"
        assert c.call("BLPOP", "never", "0.01").raw == resp3_null
        assert c.call("BLMOVE", "never", "dst", "LEFT", "LEFT", "0.01").raw == resp3_null
    assert blocked_clients(r) == 0


def test_inside_multi_does_not_block(raw):
    assert raw.call("MULTI").raw == ok
    for command in (("BLPOP", "never", "0"), ("BRPOP", "never", "0"), ("BLMOVE", "never", "d", "LEFT", "LEFT", "0"),
                    ("BRPOPLPUSH", "never", "d", "0"), ("BLMPOP", "0", "1", "never", "LEFT")):
        assert raw.call(*command).raw == b"+QUEUED\r\n"
    # Inside a transaction the move commands answer as LMOVE does on an empty source.
    assert raw.call("EXEC").raw == arr(null_array, null_array, nil, nil, null_array)
    # A list made earlier in the same transaction serves them at once.
    assert raw.call("MULTI").raw == ok
    for command in (("RPUSH", "q", "a", "b", "c", "d"), ("BLMOVE", "q", "d", "LEFT", "LEFT", "0"),
                    ("BLPOP", "q", "0"), ("BLMPOP", "0", "1", "q", "RIGHT", "COUNT", "5")):
        assert raw.call(*command).raw == b"+QUEUED\r\n"
    assert raw.call("EXEC").raw == arr(integer(4), bulk("a"), arr(bulk("q"), bulk("b")),
                                       arr(bulk("q"), bulks("d", "c")))
    assert raw.call("LRANGE", "d", "0", "-1").raw == bulks("a")


def test_errors(r, raw):
    r.set("s", "v")
    assert raw.call("BLPOP", "s", "0").raw == WRONGTYPE
    assert raw.call("BLPOP", "missing", "s", "0").raw == WRONGTYPE
    assert raw.call("BLPOP", "k", "-1").raw == TIMEOUT_NEGATIVE
    assert raw.call("BRPOP", "k", "abc").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BLPOP", "k", "").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BLPOP", "k", "nan").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BLMOVE", "k", "d", "LEFT", "LEFT", "-0.5").raw == TIMEOUT_NEGATIVE
    assert raw.call("BLMOVE", "k", "d", "UP", "LEFT", "0").raw == SYNTAX
    assert raw.call("BLMOVE", "k", "d", "LEFT", "LEFT", "x").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BRPOPLPUSH", "k", "d", "x").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BLMPOP", "x", "1", "k", "LEFT").raw == TIMEOUT_NOT_FLOAT
    assert raw.call("BLMPOP", "-1", "1", "k", "LEFT").raw == TIMEOUT_NEGATIVE
    assert raw.call("BLMPOP", "0", "0", "k", "LEFT").raw == err("ERR numkeys should be greater than 0")
    assert raw.call("BLMPOP", "0", "1", "k", "MID").raw == SYNTAX
    assert raw.call("BLMPOP", "0", "2", "k", "LEFT").raw == SYNTAX
    assert raw.call("BLMPOP", "0", "1", "k", "LEFT", "COUNT", "0").raw == err("ERR count should be greater than 0")
    assert raw.call("BLMPOP", "0", "1", "k", "LEFT", "COUNT", "1", "COUNT", "1").raw == SYNTAX
    assert blocked_clients(r) == 0


@pytest.mark.redis72
def test_timeout_past_the_clock_is_out_of_range(r, raw):
    # 7.2 (redis#11338) refuses a timeout whose milliseconds overflow; 7.0 called it negative.
    assert raw.call("BLPOP", "k", "9999999999999999").raw == err("ERR timeout is out of range")
    assert raw.call("BLMPOP", "9999999999999999", "1", "k", "LEFT").raw == err("ERR timeout is out of range")
    assert raw.call("BRPOP", "k", "inf").raw == err("ERR timeout is out of range")
    assert raw.call("BLMOVE", "k", "d", "LEFT", "LEFT", "1e400").raw == err("ERR timeout is out of range")
    assert blocked_clients(r) == 0


# ---- woken by writes ----------------------------------------------------------------------------------

def test_each_push_command_wakes_a_waiter(server, r, connect):
    writers = [("LPUSH", "q", "v"), ("RPUSH", "q", "v"), ("LMOVE", "src", "q", "LEFT", "RIGHT"),
               ("RPOPLPUSH", "src", "q"), ("LMPOP", "1", "q", "LEFT")]
    for writer in writers[:4]:
        r.delete("q")
        r.rpush("src", "v")
        waiter = connect()
        waiter.send_command("BLPOP", "q", "0")
        wait_blocked(r, 1)
        r.execute_command(*writer)
        assert waiter.read_reply().raw == arr(bulk("q"), bulk("v")), writer
        wait_blocked(r, 0)
        assert r.exists("q") == 0, writer
        waiter.close()


def test_waiters_are_served_first_come_first_served(server, r, connect):
    first, second, third = connect(), connect(), connect()
    first.send_command("BLPOP", "q", "0")
    wait_blocked(r, 1)
    second.send_command("BRPOP", "q", "0")
    wait_blocked(r, 2)
    third.send_command("BLMPOP", "0", "1", "q", "LEFT", "COUNT", "10")
    wait_blocked(r, 3)
    assert r.rpush("q", "a", "b", "c", "d", "e") == 5
    assert first.read_reply().raw == arr(bulk("q"), bulk("a"))
    assert second.read_reply().raw == arr(bulk("q"), bulk("e"))
    assert third.read_reply().raw == arr(bulk("q"), bulks("b", "c", "d"))
    assert r.exists("q") == 0
    wait_blocked(r, 0)


def test_one_element_serves_one_waiter(server, r, connect):
    first, second = connect(), connect()
    first.send_command("BRPOP", "q", "0")
    wait_blocked(r, 1)
    second.send_command("BRPOP", "q", "0")
    wait_blocked(r, 2)
    r.lpush("q", "only")
    assert first.read_reply().raw == arr(bulk("q"), bulk("only"))
    wait_blocked(r, 1)                      # the second still waits: the list was emptied by the first
    assert not second.has_pending_bytes(wait=0.05)
    r.lpush("q", "next")
    assert second.read_reply().raw == arr(bulk("q"), bulk("next"))


def test_waiter_on_several_keys(server, r, connect):
    waiter = connect()
    waiter.send_command("BLPOP", "a", "b", "c", "0")
    wait_blocked(r, 1)
    r.rpush("b", "from-b")
    assert waiter.read_reply().raw == arr(bulk("b"), bulk("from-b"))
    waiter.send_command("BRPOP", "a", "b", "c", "0")
    wait_blocked(r, 1)
    r.rpush("c", "c1", "c2")
    assert waiter.read_reply().raw == arr(bulk("c"), bulk("c2"))
    assert r.lrange("c", 0, -1) == [b"c1"]


@pytest.mark.redis72
def test_woken_client_runs_its_command_again(server, r, connect):
    # 7.2 re-executes the blocked command, so the first non-empty key in its arguments wins; 7.0
    # served the key that became ready first.
    waiter = connect()
    waiter.send_command("BLPOP", "a", "b", "0")
    wait_blocked(r, 1)
    pipe = r.pipeline()
    pipe.rpush("b", "from-b")
    pipe.rpush("a", "from-a")
    pipe.execute()
    assert waiter.read_reply().raw == arr(bulk("a"), bulk("from-a"))
    assert r.lrange("b", 0, -1) == [b"from-b"]


def test_blmove_and_brpoplpush_waiters(server, r, connect):
    mover = connect()
    mover.send_command("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
    wait_blocked(r, 1)
    r.rpush("src", "a", "b")
    assert mover.read_reply().raw == bulk("b")
    assert r.lrange("src", 0, -1) == [b"a"] and r.lrange("dst", 0, -1) == [b"b"]
    r.delete("src")
    mover.send_command("BRPOPLPUSH", "src", "dst", "0")
    wait_blocked(r, 1)
    r.lpush("src", "c")
    assert mover.read_reply().raw == bulk("c")
    assert r.lrange("dst", 0, -1) == [b"c", b"b"] and r.exists("src") == 0


def test_chain_of_movers(server, r, connect):
    # Serving the first mover pushes to b, which serves the second in the same round.
    first, second, popper = connect(), connect(), connect()
    first.send_command("BLMOVE", "a", "b", "LEFT", "RIGHT", "0")
    wait_blocked(r, 1)
    second.send_command("BLMOVE", "b", "c", "LEFT", "RIGHT", "0")
    wait_blocked(r, 2)
    popper.send_command("BLPOP", "c", "0")
    wait_blocked(r, 3)
    r.rpush("a", "x")
    assert first.read_reply().raw == bulk("x")
    assert second.read_reply().raw == bulk("x")
    assert popper.read_reply().raw == arr(bulk("c"), bulk("x"))
    wait_blocked(r, 0)
    assert r.exists("a", "b", "c") == 0


def test_circular_mover_on_one_list(server, r, connect):
    rotator = connect()
    rotator.send_command("BLMOVE", "ring", "ring", "LEFT", "RIGHT", "0")
    wait_blocked(r, 1)
    r.rpush("ring", "1", "2", "3")
    assert rotator.read_reply().raw == bulk("1")
    assert r.lrange("ring", 0, -1) == [b"2", b"3", b"1"]


def test_blmove_to_a_wrong_type_destination_when_woken(server, r, connect):
    r.set("dst", "string")
    waiter = connect()
    waiter.send_command("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
    wait_blocked(r, 1)
    r.rpush("src", "x")
    assert waiter.read_reply().raw == WRONGTYPE
    assert r.lrange("src", 0, -1) == [b"x"] and r.get("dst") == b"string"
    wait_blocked(r, 0)


def test_push_and_pop_in_one_transaction_wakes_nobody(server, r, connect):
    waiter = connect()
    waiter.send_command("BLPOP", "q", "0")
    wait_blocked(r, 1)
    pipe = r.pipeline()
    pipe.rpush("q", "a")
    pipe.lpop("q")
    assert pipe.execute() == [1, b"a"]
    r.rpush("other", "x")                   # a write after the transaction: the waiter had its chance
    assert blocked_clients(r) == 1
    assert not waiter.has_pending_bytes(wait=0.05)
    r.rpush("q", "b")
    assert waiter.read_reply().raw == arr(bulk("q"), bulk("b"))


def test_key_of_another_type_keeps_the_waiter_blocked(server, r, connect):
    waiter = connect()
    waiter.send_command("BLPOP", "k", "0")
    wait_blocked(r, 1)
    r.set("k", "string")
    r.sadd("k2", "m")
    r.rename("k2", "k")
    assert blocked_clients(r) == 1
    r.delete("k")
    r.rpush("k", "list-now")
    assert waiter.read_reply().raw == arr(bulk("k"), bulk("list-now"))


def test_push_to_another_database_does_not_wake(server, r, connect):
    waiter = connect()
    assert waiter.call("SELECT", "2").raw == ok
    waiter.send_command("BLPOP", "q", "0")
    wait_blocked(r, 1)
    r.rpush("q", "in-db-0")
    assert blocked_clients(r) == 1
    other = server.client(db=2)
    other.rpush("q", "in-db-2")
    assert waiter.read_reply().raw == arr(bulk("q"), bulk("in-db-2"))
    assert r.lrange("q", 0, -1) == [b"in-db-0"]
    other.close()


@pytest.mark.parametrize("how", ["rename", "copy", "move", "swapdb", "sort-store"])
def test_keyspace_commands_that_create_the_key_wake(server, r, how, connect):
    db1 = server.client(db=1)
    if how in ("move", "swapdb"):
        db1.rpush("q", "x")
    else:
        r.rpush("src", "x")
    waiter = connect()
    waiter.send_command("BLPOP", "q", "0")
    wait_blocked(r, 1)
    if how == "rename":
        r.rename("src", "q")
    elif how == "copy":
        r.copy("src", "q")
    elif how == "move":
        db1.move("q", 0)
    elif how == "swapdb":
        r.swapdb(0, 1)
    else:
        r.sort("src", alpha=True, store="q")
    assert waiter.read_reply().raw == arr(bulk("q"), bulk("x")), how
    wait_blocked(r, 0)
    assert r.exists("q") == 0
    db1.close()


# ---- CLIENT UNBLOCK, CLIENT KILL, disconnects ---------------------------------------------------------

def test_client_unblock(server, r, raw, connect):
    waiter = connect()
    waiter_id = client_id(waiter)
    for command in (("BLPOP", "u", "0"), ("BLMOVE", "u", "d", "LEFT", "LEFT", "0"), ("BLMPOP", "0", "1", "u", "LEFT")):
        waiter.send_command(*command)
        wait_blocked(r, 1)
        assert raw.call("CLIENT", "UNBLOCK", waiter_id).raw == integer(1)
        assert waiter.read_reply().raw == null_array, command     # as if it timed out
        waiter.send_command(*command)
        wait_blocked(r, 1)
        assert raw.call("CLIENT", "UNBLOCK", waiter_id, "ERROR").raw == integer(1)
        assert waiter.read_reply().raw == err("UNBLOCKED client unblocked via CLIENT UNBLOCK"), command
    assert raw.call("CLIENT", "UNBLOCK", waiter_id).raw == integer(0)     # not blocked now
    assert raw.call("CLIENT", "UNBLOCK", "999999").raw == integer(0)
    assert waiter.call("PING").raw == b"+PONG\r\n"
    r.rpush("u", "left-alone")
    assert r.lrange("u", 0, -1) == [b"left-alone"]


def test_client_kill_of_a_blocked_client(server, r, raw, connect):
    victim, survivor = connect(), connect()
    victim_id = client_id(victim)
    victim.send_command("BLPOP", "k", "0")
    wait_blocked(r, 1)
    survivor.send_command("BLPOP", "k", "0")
    wait_blocked(r, 2)
    assert raw.call("CLIENT", "KILL", "ID", victim_id).raw == integer(1)
    wait_blocked(r, 1)
    assert victim.read_until_closed() == b""
    r.rpush("k", "for-the-survivor")
    assert survivor.read_reply().raw == arr(bulk("k"), bulk("for-the-survivor"))
    assert r.exists("k") == 0


def test_blocked_client_that_disconnects_is_forgotten(server, r, connect):
    gone = connect()
    gone.send_command("BRPOPLPUSH", "d", "dst", "0")
    wait_blocked(r, 1)
    gone.close()
    wait_blocked(r, 0)
    r.rpush("d", "kept")
    assert r.lrange("d", 0, -1) == [b"kept"] and r.exists("dst") == 0


def test_pipelined_commands_wait_behind_a_blocked_one(server, r, connect):
    conn = connect()
    conn.send(b"*3\r\n$5\r\nBLPOP\r\n$1\r\np\r\n$1\r\n0\r\n*2\r\n$4\r\nLLEN\r\n$1\r\np\r\n")
    wait_blocked(r, 1)
    r.rpush("p", "x", "y")
    assert conn.read_reply().raw == arr(bulk("p"), bulk("x"))
    assert conn.read_reply().raw == integer(1)
    # A timeout lets the pipeline go on too.
    conn.send(b"*3\r\n$5\r\nBRPOP\r\n$5\r\nnever\r\n$4\r\n0.01\r\n*1\r\n$4\r\nPING\r\n")
    assert conn.read_reply().raw == null_array
    assert conn.read_reply().raw == b"+PONG\r\n"


def test_client_list_shows_the_blocked_command(server, r, connect):
    waiter = connect()
    waiter.call("CLIENT", "SETNAME", "waiting-worker")
    waiter.send_command("BLMOVE", "q", "d", "LEFT", "RIGHT", "0")
    wait_blocked(r, 1)
    entry = next(c for c in r.client_list() if c["name"] == "waiting-worker")
    assert "b" in entry["flags"] and entry["cmd"] == "blmove"
    r.rpush("q", "x")
    assert waiter.read_reply().raw == bulk("x")


# ---- redis-py in threads ------------------------------------------------------------------------------

def test_redis_py_blpop_woken_by_another_thread(server, r):
    results = {}

    def consumer(name, command):
        client = server.client()
        try:
            results[name] = command(client)
        except Exception as exc:    # reported by the test
            results[name] = exc
        finally:
            client.close()

    threads = [threading.Thread(target=consumer, args=("blpop", lambda c: c.blpop(["jobs", "other"], timeout=30))),
               threading.Thread(target=consumer, args=("brpop", lambda c: c.brpop("jobs", timeout=30)))]
    threads[0].start()
    wait_blocked(r, 1)
    threads[1].start()
    wait_blocked(r, 2)

    def producer():
        client = server.client()
        client.rpush("jobs", "first", "second")
        client.close()
    threading.Thread(target=producer).start()
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    assert results == {"blpop": (b"jobs", b"first"), "brpop": (b"jobs", b"second")}
    assert r.exists("jobs") == 0


def test_redis_py_timeouts_return_none(server, r):
    results = {}

    def run(name, command):
        client = server.client()
        results[name] = command(client)
        client.close()

    calls = {"blpop": lambda c: c.blpop("never", timeout=1),
             "brpop": lambda c: c.brpop(["never", "nor-this"], timeout=0.2),
             "blmove": lambda c: c.blmove("never", "dst", 0.1, "LEFT", "RIGHT"),
             "brpoplpush": lambda c: c.brpoplpush("never", "dst", timeout=1),
             "blmpop": lambda c: c.blmpop(0.1, 1, "never", direction="LEFT")}
    threads = [threading.Thread(target=run, args=item) for item in calls.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    assert results == {name: None for name in calls}
    assert r.exists("dst") == 0 and blocked_clients(r) == 0


def test_redis_py_blmpop_and_blmove_in_threads(server, r):
    results = []
    lock = threading.Lock()

    def worker():
        client = server.client()
        got = client.blmpop(30, 2, "high", "low", direction="LEFT", count=2)
        moved = client.blmove("low", "done", 30, "RIGHT", "LEFT")
        with lock:
            results.append((got, moved))
        client.close()

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    wait_blocked(r, 3)
    r.rpush("low", *[f"low-{i}" for i in range(9)])
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    popped = sorted(x for got, _ in results for x in got[1])
    moved = sorted(m for _, m in results)
    assert all(got[0] == b"low" and len(got[1]) == 2 for got, _ in results)
    assert len(set(popped) | set(moved)) == 9 and r.exists("low") == 0
    assert sorted(r.lrange("done", 0, -1)) == moved


# ---- many waiters, duplicates, server-wide events -----------------------------------------------------

def test_fifty_waiters_in_arrival_order(r, connect):
    waiters = []
    for i in range(50):
        waiter = connect()
        waiter.send_command("BLPOP", "q", "other", "0")
        wait_blocked(r, i + 1)
        waiters.append(waiter)
    assert r.rpush("q", *[f"job-{i}" for i in range(60)]) == 60
    for i, waiter in enumerate(waiters):
        assert waiter.read_reply().raw == arr(bulk("q"), bulk(f"job-{i}"))
    assert r.lrange("q", 0, -1) == [b"job-%d" % i for i in range(50, 60)]
    wait_blocked(r, 0)


def test_same_key_twice_in_one_command(r, connect):
    waiter = connect()
    waiter.send_command("BLPOP", "k", "k", "k", "0")
    wait_blocked(r, 1)
    r.rpush("k", "a", "b")
    assert waiter.read_reply().raw == arr(bulk("k"), bulk("a"))
    wait_blocked(r, 0)
    assert r.lrange("k", 0, -1) == [b"b"]
    waiter.send_command("BLMPOP", "0", "2", "j", "j", "LEFT", "COUNT", "3")
    wait_blocked(r, 1)
    r.rpush("j", "1", "2")
    assert waiter.read_reply().raw == arr(bulk("j"), bulks("1", "2"))


def test_waiters_survive_flushall_and_debug_reload(r, connect):
    waiter = connect()
    waiter.send_command("BRPOP", "q", "0")
    wait_blocked(r, 1)
    r.rpush("unrelated", "x")
    r.flushall()
    assert r.execute_command("DEBUG", "RELOAD")
    assert blocked_clients(r) == 1
    r.rpush("q", "after")
    assert waiter.read_reply().raw == arr(bulk("q"), bulk("after"))


@pytest.mark.redis72
def test_info_counts_blocking_keys(r, connect):
    first, second = connect(), connect()
    first.send_command("BLPOP", "a", "b", "0")
    wait_blocked(r, 1)
    second.send_command("BLMOVE", "b", "c", "LEFT", "LEFT", "0")
    wait_blocked(r, 2)
    info = r.info("clients")
    assert info["total_blocking_keys"] == 2 and info["total_blocking_keys_on_nokey"] == 0   # a and b
    r.rpush("b", "x")
    assert first.read_reply().raw == arr(bulk("b"), bulk("x"))
    wait_blocked(r, 1)
    assert r.info("clients")["total_blocking_keys"] == 1


# ---- the append-only file -----------------------------------------------------------------------------

def test_served_blocking_commands_replay_from_the_aof(make_server):
    """A blocked command that is served later is logged as the plain command it amounted to, so the log
    replays to the same lists; one that timed out logs nothing."""
    srv = make_server(options={"appendonly": "yes", "appendfsync": "always"})
    r = srv.client()
    waiters = []
    for command in (("BLPOP", "a", "0"), ("BRPOP", "b", "0"), ("BLMOVE", "c", "moved", "RIGHT", "LEFT", "0"),
                    ("BRPOPLPUSH", "d", "moved", "0"), ("BLMPOP", "0", "2", "e", "f", "RIGHT", "COUNT", "2"),
                    ("BLMOVE", "g", "g", "LEFT", "RIGHT", "0")):
        waiter = srv.raw()
        waiter.send_command(*command)
        waiters.append(waiter)
        wait_blocked(r, len(waiters))
    with srv.raw() as c:
        assert c.call("BLPOP", "never", "0.01").raw == null_array
        assert c.call("BLMPOP", "0.01", "1", "never", "LEFT").raw == null_array
    for key in "abcdfg":
        r.rpush(key, f"{key}1", f"{key}2", f"{key}3")
    replies = [w.read_reply().raw for w in waiters]
    assert replies == [arr(bulk("a"), bulk("a1")), arr(bulk("b"), bulk("b3")), bulk("c3"), bulk("d3"),
                       arr(bulk("f"), bulks("f3", "f2")), bulk("g1")]
    with srv.raw() as c:   # and the same commands served at once
        assert c.call("BLMPOP", "0", "1", "a", "LEFT", "COUNT", "5").raw == arr(bulk("a"), bulks("a2", "a3"))
        assert c.call("BLMOVE", "b", "moved", "LEFT", "RIGHT", "0").raw == bulk("b1")
    for w in waiters:
        w.close()
    keys = sorted(r.keys("*"))
    before = {k: r.lrange(k, 0, -1) for k in keys}
    assert before[b"moved"] == [b"d3", b"c3", b"b1"] and before[b"g"] == [b"g2", b"g3", b"g1"]
    r.connection_pool.disconnect()
    srv.stop_requested = True
    srv.proc.kill()
    srv.proc.wait()
    srv.restart()
    r = srv.client()
    wait_for(lambda: r.ping(), what="the restarted server")
    assert sorted(r.keys("*")) == keys
    assert {k: r.lrange(k, 0, -1) for k in keys} == before
    logged = b"".join(open(path, "rb").read() for path in glob.glob(os.path.join(srv.dir, "**", "*.aof*"),
                                                                     recursive=True))
    assert b"RPUSH" in logged.upper(), "no append-only file was read"
    for name in (b"BLPOP", b"BRPOP", b"BLMOVE", b"BRPOPLPUSH", b"BLMPOP"):
        assert name not in logged.upper(), f"{name.decode()} is in the append-only file"
    r.close()


def test_a_blocked_command_counts_once_in_commandstats(start_either):
    # Once when served, once when it times out, once when CLIENT UNBLOCK ends it: never for the
    # call that blocked and again for the run that answered.
    srv = start_either()
    control = srv.raw()
    waiter = srv.raw()
    waiter_id = waiter.call("CLIENT", "ID").value

    def calls(command: str) -> int:
        text = control.call("INFO", "commandstats").value.decode()
        line = next((l for l in text.splitlines() if l.startswith(f"cmdstat_{command}:")), None)
        return 0 if line is None else int(line.split("calls=")[1].split(",")[0])

    def blocked() -> bool:
        return b"blocked_clients:1\r\n" in control.call("INFO", "clients").value

    waiter.send_command("BLPOP", "q", "0")
    wait_for(blocked, 10, what="the waiter blocked")
    control.call("RPUSH", "q", "a")
    assert waiter.read_reply().raw == b"*2\r\n$1\r\nq\r\n$1\r\na\r\n"
    assert calls("blpop") == 1
    waiter.send_command("BLPOP", "q", "0.01")
    assert waiter.read_reply().raw == b"*-1\r\n"
    assert calls("blpop") == 2
    waiter.send_command("BRPOP", "q", "0")
    wait_for(blocked, 10, what="the waiter blocked")
    assert control.call("CLIENT", "UNBLOCK", str(waiter_id)).raw == b":1\r\n"
    assert waiter.read_reply().raw == b"*-1\r\n"
    assert calls("brpop") == 1
    waiter.close()
    control.close()


def changes(conn) -> int:
    text = conn.call("INFO", "persistence").value.decode()
    return int(text.split("rdb_changes_since_last_save:")[1].split()[0])


def test_a_move_between_lists_is_one_change(start_either):
    srv = start_either()
    conn = srv.raw()
    conn.call("RPUSH", "src", "a", "b")
    before = changes(conn)
    conn.call("LMOVE", "src", "dst", "LEFT", "RIGHT")
    conn.call("RPOPLPUSH", "src", "dst")  # and the source goes
    assert changes(conn) - before == 2
    conn.close()


@pytest.mark.redis72
def test_a_served_blmove_is_one_change_after_the_push(server, r):
    # Redis 7.2 runs the woken command again and counts it; 7.0 counted only the push.
    control = server.raw()
    waiter = server.raw()
    waiter.send_command("BLMOVE", "src", "dst", "LEFT", "RIGHT", "0")
    wait_for(lambda: b"blocked_clients:1\r\n" in control.call("INFO", "clients").value, 10,
             what="the waiter blocked")
    before = changes(control)
    control.call("RPUSH", "src", "x")
    assert waiter.read_reply().raw == b"$1\r\nx\r\n"
    assert changes(control) - before == 2
    waiter.close()
    control.close()


def test_a_key_whose_deadline_passed_in_the_filling_transaction_serves_nobody(start_either):
    # The waiters are served after EXEC, against the time then: the key has expired.
    srv = start_either(**{"enable-debug-command": "yes"})
    control = srv.raw()
    waiter = srv.raw()
    waiter.send_command("BLPOP", "k", "0")
    wait_for(lambda: b"blocked_clients:1\r\n" in control.call("INFO", "clients").value, 10,
             what="the waiter blocked")
    control.call("MULTI")
    for command in (("RPUSH", "k", "x"), ("PEXPIRE", "k", "100"), ("DEBUG", "SLEEP", "0.2")):
        assert control.call(*command).raw == b"+QUEUED\r\n"
    assert control.call("EXEC").raw == b"*3\r\n:1\r\n:1\r\n+OK\r\n"
    assert b"blocked_clients:1\r\n" in control.call("INFO", "clients").value
    assert control.call("EXISTS", "k").raw == b":0\r\n"
    control.call("RPUSH", "k", "y")
    assert waiter.read_reply().raw == b"*2\r\n$1\r\nk\r\n$1\r\ny\r\n"
    waiter.close()
    control.close()
