"""WATCH of keys past their deadline, as Redis 7.2's multi.tcl checks it: a key watched while live that
passes its deadline fails EXEC; a key already past its deadline when watched counts as gone, so deleting it
(lazy expiry, DEL, FLUSHDB) or SWAPDB putting nothing or another stale key in its place changes nothing.
Active expiry is off and stale keys are made with a deadline in the past (SET ... PXAT 1), so no test
waits for a deadline except the one that needs a live key to pass its own."""

from __future__ import annotations

import time

import pytest

from support.server import wait_for

OPTIONS = {"enable-debug-command": "yes"}
PONG = b"*1\r\n+PONG\r\n"
ABORTED = b"*-1\r\n"


def exec_after(conn) -> bytes:
    assert conn.call("MULTI").raw == b"+OK\r\n"
    assert conn.call("PING").raw == b"+QUEUED\r\n"
    return conn.call("EXEC").raw


@pytest.fixture
def conns(start_either):
    srv = start_either(**OPTIONS)
    watcher, other = srv.raw(), srv.raw()
    assert watcher.call("DEBUG", "SET-ACTIVE-EXPIRE", "0").raw == b"+OK\r\n"
    yield watcher, other
    watcher.close()
    other.close()


def stale(conn, key="x", db=0):
    conn.call("SELECT", db)
    assert conn.call("SET", key, "old", "PXAT", 1).raw == b"+OK\r\n"


def test_exec_fails_on_a_watched_key_that_passed_its_deadline(conns):
    watcher, _ = conns
    deadline_ms = int(time.time() * 1000) + 20
    watcher.call("SET", "x", "1", "PXAT", deadline_ms)
    watcher.call("WATCH", "x")
    wait_for(lambda: time.time() * 1000 > deadline_ms + 1, interval=0.005, what="the deadline to pass")
    assert exec_after(watcher) == ABORTED


@pytest.mark.parametrize("deletion", ["none", "exists", "get-by-other", "del-by-other", "flushdb", "flushall",
                                      "expire-by-other"])
def test_deleting_a_watched_stale_key_does_not_fail_exec(conns, deletion):
    watcher, other = conns
    stale(watcher)
    watcher.call("WATCH", "x")
    if deletion == "exists":
        assert watcher.call("EXISTS", "x").raw == b":0\r\n"
    elif deletion == "get-by-other":
        assert other.call("GET", "x").raw == b"$-1\r\n"
    elif deletion == "del-by-other":
        assert other.call("DEL", "x").raw == b":0\r\n"
    elif deletion == "expire-by-other":
        assert other.call("EXPIRE", "x", "-1").raw == b":0\r\n"
    elif deletion in ("flushdb", "flushall"):
        other.call(deletion.upper())
    assert exec_after(watcher) == PONG


@pytest.mark.parametrize("write", [("SET", "x", "new"), ("RENAME", "y", "x")])
def test_storing_over_a_watched_stale_key_fails_exec(conns, write):
    watcher, other = conns
    stale(watcher)
    other.call("SET", "y", "v")
    watcher.call("WATCH", "x")
    assert other.call(*write).raw == b"+OK\r\n"
    assert exec_after(watcher) == ABORTED


@pytest.mark.parametrize("case", ["stale-by-none", "none-by-stale", "stale-by-stale", "live-by-none",
                                  "none-by-live"])
def test_swapdb_and_watched_stale_keys(conns, case):
    watcher, other = conns
    watched_db = 1
    if case == "stale-by-none":
        stale(watcher, db=1)
    elif case == "none-by-stale":
        stale(watcher, db=0)
    elif case == "stale-by-stale":
        stale(watcher, db=1)
        stale(watcher, db=0)
    elif case == "live-by-none":
        watcher.call("SELECT", 1)
        watcher.call("SET", "x", "30")
    else:
        watcher.call("SELECT", 0)
        watcher.call("SET", "x", "30")
    watcher.call("SELECT", watched_db)
    watcher.call("WATCH", "x")
    assert other.call("SWAPDB", 0, 1).raw == b"+OK\r\n"
    assert exec_after(watcher) == (ABORTED if case.startswith("live") or case.endswith("live") else PONG)
