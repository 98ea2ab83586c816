"""WAITAOF numlocal numreplicas timeout follows Redis 7.2, where it first appeared: Debian's redis-server 7.0
has no such command (the first test shows it), so the expected replies come from the command's redis.io page
and Redis 7.2's behaviour (see /work/shared/REDIS-7.0-VS-7.2.md for the 7.0/7.2 rule):

- the reply is an array of two integers: whether the local append-only file fsynced the client's last write
  (0 or 1), and how many replicas did;
- numlocal is 0 or 1 ("value is out of range, value must between 0 and 1"), numreplicas not negative ("value
  is out of range, must be positive"), the timeout as WAIT's; then, on a replica, "WAITAOF cannot be used with
  replica instances. ..."; with numlocal 1 and appendonly no, "WAITAOF cannot be used when numlocal is set but
  appendonly is disabled." (also to a client already waiting when appendonly is turned off);
- a replica with appendonly yes reports its fsynced offset in its acknowledgements as
  REPLCONF ACK <offset> FACK <fsynced offset>; a 7.0 replica sends no FACK and is never counted;
- with appendonly yes and no replicas, master_repl_offset counts one per logged command, so that a write has
  an offset to wait for;
- inside MULTI it does not block; appendfsync no never fsyncs by itself, so a local wait times out.
"""

from __future__ import annotations

import pytest

from support import rdb_build as rdb
from support.replication import FakeMaster, master_offset, start_node as start, wait_caught_up
from support.resp import RawConnection
from support.server import goblin_binary, wait_for

pytestmark = pytest.mark.redis72

ON_REPLICA = (b"-ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas "
              b"are just local and are not propagated.\r\n")
WITHOUT_LOG = b"-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"


def test_the_reference_has_no_waitaof(reference_server):
    with reference_server.raw() as conn:
        assert conn.call("WAITAOF", 0, 0, 0).raw.startswith(b"-ERR unknown command 'WAITAOF'")


def test_argument_errors_and_where_it_is_refused(make_server):
    master = start(make_server, "goblin", "master")
    with master.raw() as conn:
        cases = {
            ("WAITAOF", 2, 0, 0): b"-ERR value is out of range, value must between 0 and 1\r\n",
            ("WAITAOF", -1, 0, 0): b"-ERR value is out of range, value must between 0 and 1\r\n",
            ("WAITAOF", "x", 0, 0): b"-ERR value is not an integer or out of range\r\n",
            ("WAITAOF", 0, -1, 0): b"-ERR value is out of range, must be positive\r\n",
            ("WAITAOF", 0, "x", 0): b"-ERR value is not an integer or out of range\r\n",
            ("WAITAOF", 0, 0, -1): b"-ERR timeout is negative\r\n",
            ("WAITAOF", 0, 0, "x"): b"-ERR timeout is not an integer or out of range\r\n",
            # Arguments first: a bad timeout wins over appendonly no.
            ("WAITAOF", 1, 0, -5): b"-ERR timeout is negative\r\n",
            ("WAITAOF", 1, 0, 0): WITHOUT_LOG,
            ("WAITAOF", 0, 0): b"-ERR wrong number of arguments for 'waitaof' command\r\n",
            ("WAITAOF", 0, 0, 0): b"*2\r\n:0\r\n:0\r\n",
        }
        for command, reply in cases.items():
            assert conn.call(*command).raw == reply, command
        assert conn.call("COMMAND", "INFO", "waitaof").py()[0][:3] == [b"waitaof", 4, [b"noscript"]]
    replica = start(make_server, "goblin", "replica", master)
    with replica.raw() as conn:
        assert conn.call("WAITAOF", 0, 0, 0).raw == ON_REPLICA
        assert conn.call("WAITAOF", 3, 0, 0).raw == b"-ERR value is out of range, value must between 0 and 1\r\n"


@pytest.mark.parametrize("fsync", ["always", "everysec"])
def test_the_local_fsync(make_server, fsync):
    master = start(make_server, "goblin", "master", appendonly="yes", appendfsync=fsync)
    with master.raw() as conn:
        assert conn.call("WAITAOF", 1, 0, 0).raw == b"*2\r\n:1\r\n:0\r\n"  # nothing written yet
        before = master_offset(master)
        conn.call("SET", "k", "v")
        conn.pipeline([("MULTI",), ("SET", "a", "1"), ("INCR", "n"), ("EXEC",)])
        # One per logged command, MULTI and EXEC included: the write has an offset to wait for.
        assert master_offset(master) == before + 5
        # everysec: the background fsync within a second releases it (no timeout: it must come).
        assert conn.call("WAITAOF", 1, 0, 0, timeout=10).raw == b"*2\r\n:1\r\n:0\r\n"
        # No replica: asking for one waits out the timeout, with the local fsync counted.
        assert conn.call("WAITAOF", 1, 1, 100).raw == b"*2\r\n:1\r\n:0\r\n"
        # Inside MULTI nothing blocks; the transaction's own SET is not logged before EXEC ends.
        assert conn.pipeline([("MULTI",), ("SET", "k", "w"), ("WAITAOF", 1, 1, 0), ("EXEC",)])[-1].py() == \
            [b"OK", [1, 0]]


def test_appendfsync_no_leaves_the_local_wait_to_its_timeout(make_server):
    master = start(make_server, "goblin", "master", appendonly="yes", appendfsync="no")
    with master.raw() as conn, RawConnection(master.port) as waiter:
        conn.call("INCR", "foo")
        assert conn.call("WAITAOF", 1, 0, 50).raw == b"*2\r\n:0\r\n:0\r\n"
        # A client waiting for the local fsync gets the error once appendonly is turned off.
        waiter.call("INCR", "foo")
        waiter.send_command("WAITAOF", 1, 0, 0)
        wait_for(lambda: master.info("clients")["blocked_clients"] == "1", what="the WAITAOF to block")
        assert conn.call("CONFIG", "SET", "appendonly", "no").raw == b"+OK\r\n"
        assert waiter.read_reply(timeout=10).raw == WITHOUT_LOG
        # appendfsync always from now on: the same wait succeeds at once.
        conn.pipeline([("CONFIG", "SET", "appendfsync", "always"), ("CONFIG", "SET", "appendonly", "yes")])
        wait_for(lambda: master.info("persistence")["aof_rewrite_in_progress"] == "0", what="the AOF base")
        conn.call("INCR", "foo")
        assert conn.call("WAITAOF", 1, 0, 0, timeout=10).raw == b"*2\r\n:1\r\n:0\r\n"


def test_replicas_report_their_fsyncs(make_server):
    """Four replicas of a goblin master: goblin with and without the AOF, redis-server 7.0 with and without it.
    Only the goblin one with the AOF sends FACK, so it alone counts."""
    master = start(make_server, "goblin", "master", appendonly="yes", appendfsync="always")
    replicas = [start(make_server, "goblin", "aof-replica", master, appendonly="yes", appendfsync="always"),
                start(make_server, "goblin", "replica", master),
                start(make_server, "redis", "aof-replica", master, appendonly="yes", appendfsync="always"),
                start(make_server, "redis", "replica", master)]
    with master.raw() as conn:
        conn.call("SET", "k", "v")
        for replica in replicas:
            wait_caught_up(master, replica)
        assert conn.call("WAITAOF", 1, 1, 0, timeout=10).raw == b"*2\r\n:1\r\n:1\r\n"
        assert conn.call("WAITAOF", 0, 2, 300).raw == b"*2\r\n:1\r\n:1\r\n"
        # WAIT still counts every replica: FACK rides on the same acknowledgement.
        assert conn.call("WAIT", 4, 0, timeout=10).raw == b":4\r\n"
        # The replica that fsyncs is stopped from acknowledging: the next write waits out the timeout.
        replicas[0].stop()
        wait_for(lambda: master.info("replication")["connected_slaves"] == "3", what="the master to see three")
        conn.call("SET", "k", "w")
        assert conn.call("WAITAOF", 1, 1, 200).raw == b"*2\r\n:1\r\n:0\r\n"


def test_a_redis_7_0_master_takes_the_fack(make_server):
    """Redis 7.0 reads REPLCONF ACK <offset> and ignores the FACK after it: WAIT counts the goblin replica."""
    master = start(make_server, "redis", "master")
    replica = start(make_server, "goblin", "aof-replica", master, appendonly="yes")
    with master.raw() as conn:
        conn.call("SET", "k", "v")
        wait_caught_up(master, replica)
        assert conn.call("WAIT", 1, 0, timeout=10).raw == b":1\r\n"
        offset = master_offset(master)
    wait_for(lambda: f"offset={offset}," in master.info("replication")["slave0"], what="the ACK of the offset")


SET_K = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"


def empty_rdb() -> bytes:
    return rdb.rdb_file(rdb.aux("redis-ver", "7.2.4"), 10)


@pytest.mark.parametrize("appendonly", ["yes", "no"])
def test_the_acknowledgement_s_bytes(make_server, appendonly):
    """As Redis 7.2 writes it: REPLCONF ACK <offset>, with FACK <fsynced offset> when the AOF is on."""
    acks = []

    def serve(fake, conn, reader, attempt):
        fake.handshake(conn, reader)
        payload = empty_rdb()
        conn.sendall(b"+FULLRESYNC " + FakeMaster.REPLID.encode() + b" 100\r\n$%d\r\n" % len(payload) + payload)
        conn.sendall(SET_K)
        while len(acks) < 3:
            acks.append(fake.read_command(reader))

    fake = FakeMaster(serve)
    try:
        make_server(binary=goblin_binary(), name="goblin-replica", unix=False,
                    options={"appendonly": appendonly, "appendfsync": "always"},
                    extra_args=["--replicaof", "127.0.0.1", str(fake.port)])
        wait_for(lambda: len(acks) >= 3, timeout=20, what="three acknowledgements")
    finally:
        fake.close()
    assert acks[0][:2] == [b"REPLCONF", b"ACK"]
    # The last one comes after the SET was applied and logged.
    offset = str(100 + len(SET_K)).encode()
    expected = [b"REPLCONF", b"ACK", offset] + ([b"FACK", offset] if appendonly == "yes" else [])
    assert acks[-1] == expected
