"""A master's shutdown waits for its replicas (Redis 7): SHUTDOWN, SIGTERM and SIGINT pause writes, ask the replicas
for their offsets and wait up to shutdown-timeout seconds until every one acknowledged master_repl_offset, then save
and exit; NOW does not wait, ABORT cancels. Every scenario runs against Debian's redis-server 7.0 as well, so the
replies and log lines expected are Redis's.
"""

from __future__ import annotations

import os
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


# ---- the final save --------------------------------------------------------------------------------------------

SAVING = {"save": "3600 1"}
SAVE_FAILED = "Error trying to save the DB, can't exit."


def break_the_snapshot(server):
    """A directory where the snapshot goes: the save writes its temporary file, then cannot rename it."""
    path = os.path.join(server.dir, "dump.rdb")
    if os.path.isfile(path):  # a replica's full sync left one
        os.unlink(path)
    os.makedirs(path)


def log_count(server, text: str) -> int:
    return server.logs(limit=1_000_000).count(text)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ending", ["NOSAVE", "FORCE"])
def test_a_failed_final_save_cancels_the_shutdown(make_server, kind, ending):
    """SHUTDOWN and SIGTERM whose save fails leave the server running and writable (a failed foreground save is
    no MISCONF); NOSAVE or FORCE end it."""
    server = start(make_server, kind, "alone", **SAVING)
    break_the_snapshot(server)
    with server.raw() as conn:
        assert conn.call("SET", "k", "1").raw == b"+OK\r\n"
        assert conn.call("SHUTDOWN").raw == CANCELLED
        assert log_count(server, SAVE_FAILED) == 1
        assert conn.call("PING").raw == b"+PONG\r\n"
        assert conn.call("SAVE").raw == b"-ERR\r\n"
        assert conn.call("INCR", "k").raw == b":2\r\n"
        assert server.info("persistence")["rdb_last_bgsave_status"] == "ok"
        server.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: log_count(server, SAVE_FAILED) == 2, what="the signal's save to fail")
        assert conn.call("INCR", "k").raw == b":3\r\n"
        assert server.proc.poll() is None
        server.stop_requested = True
        conn.send_command("SHUTDOWN", ending)
        assert conn.read_until_closed(timeout=20) == b""
    assert exits(server) == 0


@pytest.mark.parametrize("kind", KINDS)
def test_the_save_comes_after_the_wait_for_replicas(make_server, kind):
    """The master waits for its lagging replica first and saves then: while it waits nothing is saved; once the
    replica caught up the save fails, the SHUTDOWN client gets the error, and writes run again."""
    master, replica = pair(make_server, kind, **SAVING)
    break_the_snapshot(master)
    with RawConnection(master.port, timeout=30) as shutting:
        with stopped(replica), master.raw() as conn:
            assert conn.call("SET", "last", "2").raw == b"+OK\r\n"
            shutting.send_command("SHUTDOWN")
            wait_for(lambda: waiting(master), what="the master to wait")
            assert not log_has(master, "Saving the final")
            assert log_count(master, SAVE_FAILED) == 0
        assert shutting.read_reply(timeout=20).raw == CANCELLED
    assert log_has(master, "1 of 1 replicas are in sync when shutting down.")
    assert log_count(master, SAVE_FAILED) == 1
    with master.raw() as conn:
        assert conn.call("INCR", "after").raw == b":1\r\n"
    wait_caught_up(master, replica)
    with replica.raw() as r:
        assert r.call("MGET", "last", "after").raw == b"*2\r\n$1\r\n2\r\n$1\r\n1\r\n"
    assert master.proc.poll() is None


@pytest.mark.parametrize("kind", KINDS)
def test_shutdown_abort_cancels_a_signal_the_paused_cron_holds(make_server, kind):
    """A SIGTERM's shutdown begins in the cron: while DEBUG PAUSE-CRON holds it, SHUTDOWN ABORT cancels it, and
    the server goes on once the cron runs again."""
    server = start(make_server, kind, "alone")
    with server.raw() as conn:
        assert conn.call("DEBUG", "PAUSE-CRON", "1").raw == b"+OK\r\n"
        server.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: log_has(server, "Received SIGTERM scheduling shutdown..."), what="the signal")
        assert conn.call("SHUTDOWN", "ABORT").raw == b"+OK\r\n"
        assert log_has(server, "Shutdown manually aborted.")
        assert conn.call("SHUTDOWN", "ABORT").raw == b"-ERR No shutdown in progress.\r\n"
        assert conn.call("DEBUG", "PAUSE-CRON", "0").raw == b"+OK\r\n"
        # Two seconds of the server's clock: its cron ran many times meanwhile.
        start_uptime = int(server.info("server")["uptime_in_seconds"])
        wait_for(lambda: int(server.info("server")["uptime_in_seconds"]) >= start_uptime + 2, what="two seconds")
        assert conn.call("PING").raw == b"+PONG\r\n"
    assert server.proc.poll() is None
    assert not log_has(server, "User requested shutdown...")
