"""A master's shutdown waits for its replicas (Redis 7): SHUTDOWN, SIGTERM and SIGINT pause writes, ask the replicas
for their offsets and wait up to shutdown-timeout seconds until every one acknowledged master_repl_offset, then save
and exit; NOW does not wait, ABORT cancels. Every scenario runs against Debian's redis-server 7.0 as well, so the
replies and log lines expected are Redis's.
"""

from __future__ import annotations

import signal

import pytest

from support.replication import log_has, start_node, stopped, wait_caught_up
from support.resp import RawConnection
from support.server import wait_for

KINDS = ("goblin", "redis")
OPTIONS = {"save": ""}
CANCELLED = b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"


def start(make_server, kind: str, name: str, master=None, **options):
    return start_node(make_server, kind, name, master, **{**OPTIONS, **options})


def pair(make_server, kind: str, **options):
    """A master and one replica of kind, the replica caught up with a first write."""
    master = start(make_server, kind, "master", **options)
    replica = start(make_server, kind, "replica", master)
    wait_for(lambda: "state=online" in master.info("replication").get("slave0", ""), timeout=20,
             what="the replica online")
    with master.raw() as conn:
        assert conn.call("SET", "first", "1").raw == b"+OK\r\n"
    wait_caught_up(master, replica)
    return master, replica


def waiting(master) -> bool:
    return log_has(master, "Waiting for replicas before shutting down.")


def exits(server, timeout: float = 20) -> int:
    server.proc.wait(timeout=timeout)
    return server.proc.returncode


def exited_with_the_last_write(master, replica):
    """The master exited cleanly once its replica had caught up, and the replica holds the last write."""
    assert exits(master) == 0
    assert log_has(master, "1 of 1 replicas are in sync when shutting down.")
    with replica.raw() as r:
        assert r.call("GET", "last").raw == b"$1\r\n2\r\n"


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_waits_for_a_lagging_replica(make_server, kind):
    """The last write reaches the replica before the master exits; meanwhile reads are served and the SHUTDOWN
    client has no answer."""
    master, replica = pair(make_server, kind)
    with RawConnection(master.port, timeout=30) as shutting:
        with stopped(replica), master.raw() as conn:
            assert conn.call("SET", "last", "2").raw == b"+OK\r\n"
            master.stop_requested = True
            shutting.send_command("SHUTDOWN")
            wait_for(lambda: waiting(master), what="the master to wait")
            assert conn.call("GET", "last").raw == b"$1\r\n2\r\n"
            assert master.proc.poll() is None
        assert shutting.read_until_closed(timeout=20) == b""
    exited_with_the_last_write(master, replica)


@pytest.mark.parametrize("kind", KINDS)
def test_writes_wait_and_abort_cancels(make_server, kind):
    """While the shutdown waits, writes are held; SHUTDOWN ABORT answers the waiting clients with an error, and the
    held write runs."""
    master, replica = pair(make_server, kind)
    with master.raw() as conn:
        assert conn.call("SHUTDOWN", "ABORT").raw == b"-ERR No shutdown in progress.\r\n"
        assert conn.call("SHUTDOWN", "NOW", "ABORT").raw == b"-ERR syntax error\r\n"
        assert conn.call("SHUTDOWN", "SAVE", "NOSAVE").raw == b"-ERR syntax error\r\n"
    with stopped(replica), master.raw() as conn, RawConnection(master.port, timeout=30) as first, \
            RawConnection(master.port, timeout=30) as second, RawConnection(master.port, timeout=30) as writer:
        assert conn.call("SET", "unacked", "1").raw == b"+OK\r\n"
        first.send_command("SHUTDOWN")
        wait_for(lambda: waiting(master), what="the master to wait")
        second.send_command("SHUTDOWN", "NOSAVE")
        writer.send_command("SET", "held", "1")
        assert conn.call("PING").raw == b"+PONG\r\n"  # the three requests were read before it
        assert conn.call("EXISTS", "held").raw == b":0\r\n"
        assert conn.call("SHUTDOWN", "ABORT").raw == b"+OK\r\n"
        assert first.read_reply(timeout=10).raw == CANCELLED
        assert second.read_reply(timeout=10).raw == CANCELLED
        assert writer.read_reply(timeout=10).raw == b"+OK\r\n"
        assert conn.call("SHUTDOWN", "ABORT").raw == b"-ERR No shutdown in progress.\r\n"
    assert log_has(master, "Shutdown manually aborted.")
    assert master.proc.poll() is None
    wait_caught_up(master, replica)


@pytest.mark.parametrize("kind", KINDS)
def test_the_wait_ends_at_shutdown_timeout(make_server, kind):
    master, replica = pair(make_server, kind, **{"shutdown-timeout": "1"})
    with stopped(replica):
        with master.raw() as conn:
            assert conn.call("SET", "lost", "1").raw == b"+OK\r\n"
            offset = int(master.info("replication")["master_repl_offset"])
            acked = int(master.info("replication")["slave0"].split("offset=")[1].split(",")[0])
            master.stop_requested = True
            conn.send_command("SHUTDOWN")
            assert conn.read_until_closed(timeout=20) == b""
        assert exits(master) == 0
    assert log_has(master, "Waiting for replicas before shutting down.")
    # The GETACK the master sent when it began waiting is in the gap too.
    behind = offset + len(b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n") - acked
    assert log_has(master, f"Lagging replica 127.0.0.1:{replica.port} reported offset {behind} behind master, "
                           f"lag=")
    assert log_has(master, "0 of 1 replicas are in sync when shutting down.")


@pytest.mark.parametrize("kind", KINDS)
def test_now_does_not_wait(make_server, kind):
    master, replica = pair(make_server, kind)
    with stopped(replica), master.raw() as conn:
        assert conn.call("SET", "lost", "1").raw == b"+OK\r\n"
        master.stop_requested = True
        conn.send_command("SHUTDOWN", "NOW")
        assert conn.read_until_closed(timeout=20) == b""
        assert exits(master) == 0
    assert not waiting(master)
    assert log_has(master, "0 of 1 replicas are in sync when shutting down.")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_waits_as_shutdown_does(make_server, kind, sig):
    master, replica = pair(make_server, kind)
    with stopped(replica):
        with master.raw() as conn:
            assert conn.call("SET", "last", "2").raw == b"+OK\r\n"
        master.stop_requested = True
        master.proc.send_signal(sig)
        wait_for(lambda: waiting(master), what="the master to wait")
        with master.raw() as conn:
            assert conn.call("GET", "last").raw == b"$1\r\n2\r\n"
    exited_with_the_last_write(master, replica)


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_on_sigterm_now_does_not_wait(make_server, kind):
    master, replica = pair(make_server, kind, **{"shutdown-on-sigterm": "now"})
    with stopped(replica):
        master.stop_requested = True
        master.proc.send_signal(signal.SIGTERM)
        assert exits(master) == 0
    assert not waiting(master)


CONFIG_CASES = [
    ("CONFIG", "GET", "shutdown*"),
    ("CONFIG", "SET", "shutdown-on-sigterm", "bogus"),
    ("CONFIG", "SET", "shutdown-on-sigterm", "nosave,now"),
    ("CONFIG", "SET", "shutdown-on-sigterm", ""),
    ("CONFIG", "SET", "shutdown-on-sigterm", "force nosave"),
    ("CONFIG", "GET", "shutdown-on-sigterm"),
    ("CONFIG", "SET", "shutdown-on-sigint", "NOW SAVE default"),
    ("CONFIG", "GET", "shutdown-on-sigint"),
    ("CONFIG", "SET", "shutdown-on-sigint", "default"),
    ("CONFIG", "GET", "shutdown-on-sigint"),
    ("CONFIG", "SET", "shutdown-timeout", "-1"),
    ("CONFIG", "SET", "shutdown-timeout", "0"),
    ("CONFIG", "GET", "shutdown-timeout"),
]


def test_config_is_redis_s(make_server, reference_server):
    goblin = start(make_server, "goblin", "alone")
    with goblin.raw() as g, reference_server.raw() as r:
        for case in CONFIG_CASES:
            mine, theirs = g.call(*case), r.call(*case)
            if case[1] == "GET":  # pairs in the order of Redis's dict: compared as a map
                assert dict(zip(*[iter(mine.py())] * 2)) == dict(zip(*[iter(theirs.py())] * 2)), case
            else:
                assert mine.raw == theirs.raw, case
