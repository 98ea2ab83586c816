"""A master's limit on what a replica holds unsent (client-output-buffer-limit replica), and repl-backlog-size.

As in Redis 7, a replica's hard limit below repl-backlog-size counts as repl-backlog-size: a partial resync
puts up to a backlog's worth of the stream in the replica's output at once, and a smaller limit would drop
the replica it has just let continue. Past that size a replica that reads nothing is dropped. Every scenario
runs against Debian's redis-server 7.0 as well.
"""

from __future__ import annotations

import pytest

from support.replication import start_node, stopped, sync_counters, wait_caught_up
from support.resp import RawConnection
from support.server import wait_for

KINDS = ("goblin", "redis")
MB = 1 << 20


def replicas(master) -> int:
    return int(master.info("replication")["connected_slaves"])


@pytest.mark.parametrize("kind", KINDS)
def test_a_partial_resync_past_the_replica_limit_but_within_the_backlog_goes_on(make_server, kind):
    """The master writes 20 MB while its replica is away: the replica continues (+CONTINUE) with all of it in
    its output at once, past its 512 KB limit, and is not dropped; nor later for 20 MB written in one go."""
    master = start_node(make_server, kind, "master", **{
        "repl-backlog-size": "100mb", "client-output-buffer-limit": "replica 512kb 0 0",
        "repl-ping-replica-period": "3600"})
    replica = start_node(make_server, kind, "replica", master)
    wait_caught_up(master, replica)
    big = "x" * (10 * MB)
    with RawConnection(master.port, timeout=60) as conn:
        # One transaction: the replica cannot come back between the kill and the writes.
        replies = conn.pipeline([("MULTI",), ("CLIENT", "KILL", "TYPE", "replica"), ("SET", "key", big),
                                 ("SET", "key2", big), ("EXEC",)])
        assert replies[-1].py() == [1, b"OK", b"OK"]
        wait_for(lambda: sync_counters(master)[1] == 1, timeout=30, what="the replica to continue")
        wait_caught_up(master, replica, timeout=60)
        assert sync_counters(master) == (1, 1, 0)
        replies = conn.pipeline([("MULTI",), ("SET", "key", big), ("SET", "key2", big), ("EXEC",)])
        assert replies[-1].py() == [b"OK", b"OK"]
        wait_caught_up(master, replica, timeout=60)
    assert sync_counters(master) == (1, 1, 0)
    assert replicas(master) == 1


@pytest.mark.parametrize("kind", KINDS)
def test_a_replica_that_reads_nothing_is_dropped_past_the_backlog_size(make_server, kind):
    """With a limit of 1 MB and a backlog of 32 MB, a stopped replica holding 20 MB unsent stays (what the
    sockets take is at most about 10 MB); 60 MB more drop it."""
    master = start_node(make_server, kind, "master", **{
        "repl-backlog-size": "32mb", "client-output-buffer-limit": "replica 1mb 0 0",
        "repl-ping-replica-period": "3600", "repl-timeout": "600"})
    replica = start_node(make_server, kind, "replica", master, **{"repl-timeout": "600"})
    wait_caught_up(master, replica)
    big = "x" * MB
    with stopped(replica), RawConnection(master.port, timeout=60) as conn:
        conn.pipeline([("SET", f"k{i}", big) for i in range(20)])
        assert conn.call("PING").raw == b"+PONG\r\n"
        assert replicas(master) == 1
        conn.pipeline([("SET", f"more{i}", big) for i in range(60)])
        wait_for(lambda: replicas(master) == 0, timeout=30, what="the replica to be dropped")
        # A Redis 7.2 field, which 7.0 lacks.
        assert master.info("stats").get("client_output_buffer_limit_disconnections", "1") == "1"
