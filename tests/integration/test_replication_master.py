"""Replication, the master's side: Debian's redis-server 7.0 follows a master through PSYNC, and redis-cli's
--rdb and raw PSYNC links read what a replica reads. Every test runs against a goblin-server master and against
a redis-server master (repl-diskless-sync no, the disk-based sync both then make), so the expected values come
from Redis: the stream's bytes, INFO's fields, the sync counters, the replies of REPLCONF, WAIT and PSYNC.

The replica's data is compared with the master's key by key (type, value, PEXPIRETIME within a second) after a
seeded random write stream of every type (transactions, scripts, expiries, SWAPDB, evictions), once the
replica's slave_repl_offset equals the master's master_repl_offset.
"""

from __future__ import annotations

import random
import re
import select
import subprocess
import time

import pytest

from support.rdb_data import check_rdb, fill
from support.replication import (FAR_MS, SET_REPL_SCRIPT, assert_same_keyspace, evict_some, master_offset,
                                 random_writes, read_exactly, read_line, send_all, sync_counters, wait_caught_up)
from support.resp import RawConnection, encode_command
from support.server import REDIS_CLI, REFERENCE_BINARY, goblin_binary, run_until_exit, wait_for

MASTERS = ("goblin", "redis")
PING = encode_command("PING")
GETACK = encode_command("REPLCONF", "GETACK", "*")


def start_master(make_server, kind: str, **options):
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    return make_server(binary=binary, name=f"{kind}-master", unix=False,
                       options={"repl-diskless-sync": "no", **options})


def start_replica(make_server, master):
    return make_server(binary=REFERENCE_BINARY, name="redis-replica", unix=False,
                       extra_args=["--replicaof", "127.0.0.1", str(master.port)])


# ---- a redis-server replica ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", MASTERS)
def test_redis_replica_follows_a_random_write_stream(make_server, kind):
    rng = random.Random(20240611)
    master = start_master(make_server, kind)
    with master.raw() as conn:
        # Data before the replica comes travels in the full sync's RDB.
        send_all(conn, random_writes(rng, 1500))
        replica = start_replica(make_server, master)
        wait_caught_up(master, replica)
        assert sync_counters(master) == (1, 0, 0)
        send_all(conn, random_writes(rng, 4000))
        # Evictions reach the replica as deletions.
        evict_some(master, conn)
    wait_caught_up(master, replica)
    assert_same_keyspace(master, replica)


@pytest.mark.parametrize("kind", MASTERS)
def test_a_lost_link_resumes_from_the_backlog_or_syncs_again(make_server, kind):
    master = start_master(make_server, kind)
    replica = start_replica(make_server, master)
    wait_caught_up(master, replica)
    with master.raw() as conn:
        conn.call("SET", "before", "1")
        # The link goes and writes go on before the replica comes back: the backlog holds them.
        conn.pipeline([("CLIENT", "KILL", "TYPE", "replica"), ("SET", "during", "2"), ("RPUSH", "l", "a", "b")])
        wait_caught_up(master, replica)
        assert sync_counters(master) == (1, 1, 0)
        assert_same_keyspace(master, replica)
        # Now more is written than the smallest backlog holds: a full sync again.
        conn.call("CONFIG", "SET", "repl-backlog-size", "1")
        assert conn.call("CONFIG", "GET", "repl-backlog-size").py() == [b"repl-backlog-size", b"16384"]
        conn.pipeline([("CLIENT", "KILL", "TYPE", "replica"),
                       *[("SET", f"big:{i}", "z" * 1000) for i in range(40)]])
        wait_caught_up(master, replica)
        assert sync_counters(master) == (2, 1, 1)
        info = master.info("replication")
        assert info["repl_backlog_size"] == "16384"
        # Redis trims its shared buffer by whole blocks, so it may hold a little more.
        assert int(info["repl_backlog_histlen"]) >= 16384
    assert_same_keyspace(master, replica)


@pytest.mark.parametrize("kind", MASTERS)
def test_info_role_wait_and_min_replicas(make_server, kind):
    master = start_master(make_server, kind)
    with master.raw() as conn:
        before = master.info("replication")
        assert before["connected_slaves"] == "0" and before["repl_backlog_active"] == "0"
        assert conn.call("WAIT", 0, 0).py() == 0
        replica = start_replica(make_server, master)
        wait_caught_up(master, replica)
        info = master.info("replication")
        # The backlog comes with the first replica, under a new replication id.
        assert info["master_replid"] != before["master_replid"]
        assert info["repl_backlog_active"] == "1" and info["repl_backlog_first_byte_offset"] == "1"
        assert int(info["repl_backlog_histlen"]) == int(info["master_repl_offset"])
        assert info["connected_slaves"] == "1"
        replica_port = replica.port
        assert re.fullmatch(rf"ip=127\.0\.0\.1,port={replica_port},state=online,offset=\d+,lag=\d+",
                            info["slave0"]), info["slave0"]
        memory = master.info("memory")
        assert int(memory["mem_replication_backlog"]) > 0
        assert conn.call("SET", "k", "v").py() == b"OK"
        assert conn.call("WAIT", 1, 5000).py() == 1
        offset = master_offset(master)
        role = conn.call("ROLE").py()
        assert role[0] == b"master" and role[1] >= offset - 100
        assert role[2] == [[b"127.0.0.1", str(replica_port).encode(), role[2][0][2]]]
        # Two replicas cannot acknowledge: WAIT gives up at its timeout with the one it has.
        assert conn.call("WAIT", 2, 200).py() == 1
        # In a transaction WAIT answers at once.
        assert len([r.py() for r in conn.pipeline([("MULTI",), ("WAIT", 5, 0), ("EXEC",)])][2]) == 1
        conn.call("CONFIG", "SET", "min-replicas-to-write", 2)
        refused = conn.call("SET", "k", "w")
        assert refused.is_error and refused.error_text == "NOREPLICAS Not enough good replicas to write."
        assert conn.call("EVAL", "return redis.call('set', 'k', 'w')", 0).is_error
        assert conn.call("GET", "k").py() == b"v", "reads are still served"
        conn.call("CONFIG", "SET", "min-replicas-to-write", 1)
        assert conn.call("SET", "k", "w").py() == b"OK"
        assert [line for line in conn.call("CLIENT", "LIST", "TYPE", "replica").py().decode().splitlines()
                if " flags=S " in line], "the replica is not listed as one"
        assert conn.call("CLIENT", "KILL", "TYPE", "slave").py() == 1


@pytest.mark.parametrize("kind", MASTERS)
def test_a_replica_that_does_not_read_is_dropped_at_its_output_limit(make_server, kind):
    master = start_master(make_server, kind, **{"client-output-buffer-limit": "replica 1mb 0 0"})
    link, _, _, _ = attach(master)  # and then reads nothing more
    with master.raw() as conn:
        for i in range(64):
            conn.call("SET", f"big:{i}", "v" * 1_000_000)
            if master.info("replication")["connected_slaves"] == "0":
                break
    wait_for(lambda: master.info("replication")["connected_slaves"] == "0", what="the replica to be dropped")
    if kind == "goblin":  # a Redis 7.2 field, which 7.0 lacks
        assert master.info("stats")["client_output_buffer_limit_disconnections"] == "1"
    link.close()


def test_info_replication_has_redis_fields(make_server):
    """Field names and order of INFO replication for a master with one online replica, as Redis's."""
    fields = {}
    for kind in MASTERS:
        master = start_master(make_server, kind)
        replica = start_replica(make_server, master)
        wait_caught_up(master, replica)
        fields[kind] = list(master.info("replication"))
    assert fields["goblin"] == fields["redis"]


# ---- raw links: the stream's bytes -----------------------------------------------------------------------------

def attach(master) -> tuple[RawConnection, bytes, int, bytes]:
    """A raw replica: handshake, PSYNC ? -1; returns the link, the replication id, the offset, the RDB."""
    link = master.raw()
    assert link.call("REPLCONF", "listening-port", "4444").py() == b"OK"
    assert link.call("REPLCONF", "capa", "eof", "capa", "psync2").py() == b"OK"
    link.send_command("PSYNC", "?", "-1")
    match = re.fullmatch(rb"\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n", read_line(link))
    assert match, "no +FULLRESYNC"
    size = re.fullmatch(rb"\$(\d+)\r\n", read_line(link))
    assert size, "no RDB size line"
    rdb = read_exactly(link, int(size.group(1)))
    assert rdb.startswith(b"REDIS00"), rdb[:20]
    return link, match.group(1), int(match.group(2)), rdb


def stream_until(link: RawConnection, last: bytes) -> bytes:
    """Stream bytes up to and including the command last (PINGs may come between)."""
    deadline = time.monotonic() + link.timeout
    while not bytes(link.buf[link.pos:]).replace(PING, b"").endswith(last):
        link._fill(deadline)
    data = bytes(link.buf[link.pos:])
    link.pos = len(link.buf)
    return data


STREAM_COMMANDS = [
    ("SET", "a", "1"), ("SELECT", 3), ("MULTI",), ("SET", "b", "2"), ("SELECT", 4), ("SET", "c", "3"), ("EXEC",),
    ("SET", "x", "1", "PXAT", FAR_MS), ("EVAL", "redis.call('set','k','v') redis.call('incr','n')", 0),
    ("INCRBYFLOAT", "f", "1.5"), ("SELECT", 0), ("DEL", "nokey"), ("RPUSH", "l", "a", "b"), ("LPOP", "l"),
    ("PEXPIREAT", "l", FAR_MS), ("HSET", "h", "f", "v"), ("HINCRBYFLOAT", "h", "g", "2.5"), ("SELECT", 9),
    ("FLUSHALL",), ("MULTI",), ("SET", "single", "1"), ("GET", "single"), ("EXEC",),
    ("EVAL", SET_REPL_SCRIPT, 0), ("SET", "end", "1"),
]


@pytest.mark.parametrize("kind", MASTERS)
def test_raw_link_stream_and_continue(make_server, kind):
    master = start_master(make_server, kind)
    link, replid, offset, _ = attach(master)
    with master.raw() as client:
        client.pipeline(STREAM_COMMANDS)
    data = stream_until(link, encode_command("SET", "end", "1"))
    stream = data.replace(PING, b"")
    assert master_offset(master) == offset + len(data)
    # A second link asking for what came after the first SET gets it from the backlog.
    first = encode_command("SELECT", "0") + encode_command("SET", "a", "1")
    assert stream.startswith(first)
    with master.raw() as again:
        assert again.call("REPLCONF", "capa", "psync2").py() == b"OK"
        again.send_command("PSYNC", replid, offset + len(first) + 1)
        assert read_line(again) == b"+CONTINUE " + replid + b"\r\n"
        rest = read_exactly(again, len(data) - len(first))
        assert rest == data[len(first):]
    assert sync_counters(master) == (1, 1, 0)
    # An unknown id or an offset past the stream gets a full sync.
    for asked in ((b"f" * 40, offset + 1), (replid, offset + len(data) + 100)):
        with master.raw() as other:
            other.send_command("PSYNC", *asked)
            assert read_line(other).startswith(b"+FULLRESYNC " + replid + b" ")
    wait_for(lambda: sync_counters(master) == (3, 1, 2), what="the sync counters")
    link.close()


@pytest.mark.parametrize("kind", MASTERS)
def test_a_long_stream_to_a_reader_that_lags_arrives_whole(make_server, kind):
    """Megabytes more than the sockets hold, read only afterwards: the stream is every write, in order."""
    master = start_master(make_server, kind)
    link, _, offset, _ = attach(master)
    link.timeout = 60
    expected = [encode_command("SELECT", "0")]
    with master.raw() as conn:
        for batch in range(40):
            commands = [("SET", f"k{batch}:{i}", f"{batch}:{i}:" + "v" * 500) for i in range(500)]
            conn.pipeline(commands)
            expected += [encode_command(*command) for command in commands]
    data = stream_until(link, expected[-1])
    assert data.replace(PING, b"") == b"".join(expected)
    assert master_offset(master) == offset + len(data)
    link.close()


@pytest.mark.parametrize("kind", MASTERS)
def test_wait_asks_replicas_for_their_offset_and_an_ack_releases_it(make_server, kind):
    master = start_master(make_server, kind)
    link, _, offset, _ = attach(master)
    with master.raw() as client:
        client.call("SET", "k", "v")
        client.send_command("WAIT", 1, 0)
        # The master asks for acknowledgements in the stream, after the write.
        data = stream_until(link, GETACK)
        assert data.replace(PING, b"").endswith(encode_command("SELECT", "0") + encode_command("SET", "k", "v") +
                                                GETACK), data
        assert not client.has_pending_bytes(0.2), "WAIT answered before any acknowledgement"
        link.send_command("REPLCONF", "ACK", offset + len(data) - len(GETACK))
        assert client.read_reply().py() == 1
        info = master.info("replication")
        assert re.search(rf",offset={offset + len(data) - len(GETACK)},", info["slave0"]), info["slave0"]
    link.close()


def streams_of(make_server, commands) -> dict:
    """{kind: the stream a raw replica of a fresh master of that kind gets for commands (ending SET end 1)}."""
    streams = {}
    for kind in MASTERS:
        master = start_master(make_server, kind)
        link, _, _, _ = attach(master)
        with master.raw() as client:
            client.pipeline(commands)
        streams[kind] = stream_until(link, encode_command("SET", "end", "1")).replace(PING, b"")
        link.close()
    return streams


def test_the_stream_is_redis_s_byte_for_byte(make_server):
    streams = streams_of(make_server, STREAM_COMMANDS)
    assert streams["goblin"] == streams["redis"]


# A message published on the master is published again by every replica to its own subscribers: it travels in
# the stream in its place among the writes (Sentinel's hello messages reach a sentinel subscribed to a replica).
PUBLISH_COMMANDS = [
    ("PUBLISH", "ch", "one"), ("SELECT", 3), ("SPUBLISH", "shard", "two"),
    ("MULTI",), ("SET", "k", "v"), ("PUBLISH", "ch", "three"), ("EXEC",),
    ("EVAL", "redis.call('set', 'k2', 'v') redis.call('publish', 'ch', 'four')", 0),
    ("EVAL", "return redis.call('publish', 'ch', 'five')", 0), ("SET", "end", "1"),
]


def test_publish_is_in_the_stream_as_redis_sends_it(make_server):
    streams = streams_of(make_server, PUBLISH_COMMANDS)
    assert streams["goblin"] == streams["redis"]
    assert encode_command("SPUBLISH", "shard", "two") in streams["goblin"]


@pytest.mark.parametrize("kind", MASTERS)
def test_a_replica_s_subscribers_get_what_the_master_publishes(make_server, kind):
    master = start_master(make_server, kind)
    replica = start_replica(make_server, master)
    wait_caught_up(master, replica)
    with replica.raw() as subscriber, master.raw() as publisher:
        subscriber.call("SUBSCRIBE", "ch")
        subscriber.call("SSUBSCRIBE", "shard")
        # No subscriber on the master itself: the message still goes to the replicas.
        assert publisher.call("PUBLISH", "ch", "hello").raw == b":0\r\n"
        assert publisher.call("SPUBLISH", "shard", "world").raw == b":0\r\n"
        assert subscriber.read_reply().py() == [b"message", b"ch", b"hello"]
        assert subscriber.read_reply().py() == [b"smessage", b"shard", b"world"]
    wait_caught_up(master, replica)


# ---- diskless full syncs ---------------------------------------------------------------------------------------

DISKLESS = {"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "0"}
# A round of two, started by the second replica's arrival.
ROUND_OF_TWO = {"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "3600", "repl-diskless-sync-max-replicas": "2"}


def attach_raw(master, *capas: str, port: str = "4444", timeout: float = 10.0) -> RawConnection:
    """A raw replica announcing capa eof, psync2 and capas, that sent PSYNC ? -1."""
    link = master.raw(timeout=timeout)
    assert link.call("REPLCONF", "listening-port", port).py() == b"OK"
    assert link.call("REPLCONF", *[word for capa in ("eof", "psync2", *capas) for word in ("capa", capa)]).py() == b"OK"
    link.send_command("PSYNC", "?", "-1")
    return link


def read_fullresync(link: RawConnection) -> tuple[bytes, int]:
    match = re.fullmatch(rb"\+FULLRESYNC ([0-9a-f]{40}) (\d+)\r\n", read_line(link))
    assert match, "no +FULLRESYNC"
    return match.group(1), int(match.group(2))


def read_eof_payload(link: RawConnection) -> bytes:
    """A diskless snapshot: "$EOF:<mark>\\r\\n", the snapshot, the mark; returns the snapshot."""
    header = read_line(link)
    match = re.fullmatch(rb"\$EOF:([0-9a-f]{40})\r\n", header)
    assert match, f"no $EOF header: {header!r}"
    mark = match.group(1)
    deadline = time.monotonic() + link.timeout
    while not link.buf.endswith(mark) or len(link.buf) - link.pos < len(mark):
        link._fill(deadline)
    payload = bytes(link.buf[link.pos:len(link.buf) - len(mark)])
    link.pos = len(link.buf)
    return payload


def fill_incompressible(conn: RawConnection, megabytes: int):
    """Values no snapshot compresses: a transfer of this size outgrows the sockets' buffers."""
    rng = random.Random(megabytes)
    for i in range(megabytes):
        conn.call("SET", f"big:{i}", rng.randbytes(1 << 20))


@pytest.mark.parametrize("kind", MASTERS)
def test_a_diskless_sync_frames_the_rdb_with_an_end_mark_and_streams_after_the_first_ack(make_server, kind,
                                                                                         tmp_path):
    master = start_master(make_server, kind, **DISKLESS)
    with master.raw() as conn:
        fill(conn)
        keys = sum(int(v.split(",")[0].split("=")[1]) for v in master.info("keyspace").values())
    link = attach_raw(master)
    _, offset = read_fullresync(link)
    path = tmp_path / "sync.rdb"
    path.write_bytes(read_eof_payload(link))
    assert f"{keys} keys read" in check_rdb(str(path))
    wait_for(lambda: "state=online" in master.info("replication").get("slave0", ""), what="the replica online")
    with master.raw() as conn:
        conn.call("SET", "after", "1")
    # The stream waits until the replica says it loaded the snapshot.
    assert not link.has_pending_bytes(0.3), "the stream came before the first REPLCONF ACK"
    link.send_command("REPLCONF", "ACK", offset)
    data = stream_until(link, encode_command("SET", "after", "1"))
    assert data.replace(PING, b"") == encode_command("SELECT", "0") + encode_command("SET", "after", "1")
    assert master_offset(master) == offset + len(data)
    link.close()


@pytest.mark.parametrize("kind", MASTERS)
def test_a_diskless_round_starts_with_its_last_replica_or_after_its_delay(make_server, kind):
    master = start_master(make_server, kind, **ROUND_OF_TWO)
    with master.raw() as conn:
        conn.call("SET", "k", "v")
    first = attach_raw(master, port="4441")
    wait_for(lambda: "state=wait_bgsave" in master.info("replication").get("slave0", ""), what="a waiting replica")
    assert master.info("persistence")["rdb_bgsave_in_progress"] == "0", "the round started with one replica of two"
    second = attach_raw(master, port="4442")
    # One child for both: the same history, the same snapshot.
    assert read_fullresync(first) == read_fullresync(second)
    assert read_eof_payload(first) == read_eof_payload(second)
    assert sync_counters(master) == (2, 0, 0)
    # Alone, a replica waits for the delay; a delay of 0 starts its round.
    with master.raw() as conn:
        conn.call("CONFIG", "SET", "repl-diskless-sync-max-replicas", "0")
        third = attach_raw(master, port="4443")
        wait_for(lambda: "slave2" in master.info("replication") and
                 master.info("persistence")["rdb_bgsave_in_progress"] == "0",
                 what="the third replica, and the first round's child to end")
        assert "state=wait_bgsave" in master.info("replication").get("slave2", ""), "the round started at once"
        conn.call("CONFIG", "SET", "repl-diskless-sync-delay", "0")
    read_fullresync(third)
    assert read_eof_payload(third).startswith(b"REDIS00")
    for link in (first, second, third):
        link.close()


@pytest.mark.parametrize("kind", MASTERS)
def test_a_stalled_replica_is_dropped_and_its_round_goes_on(make_server, kind):
    master = start_master(make_server, kind, **ROUND_OF_TWO, **{"repl-timeout": "1"})
    with master.raw() as conn:
        fill_incompressible(conn, 32)
    reader = attach_raw(master, port="4441", timeout=60)
    stalled = attach_raw(master, port="4442")  # reads nothing more
    read_fullresync(reader)
    assert len(read_eof_payload(reader)) > 32 << 20
    # (redis-server puts the replica online once it reaped the child)
    wait_for(lambda: "port=4441,state=online" in master.info("replication")["slave0"], what="the reader online")
    assert master.info("replication")["connected_slaves"] == "1"
    reader.close()
    stalled.close()


@pytest.mark.parametrize("kind", MASTERS)
def test_the_last_replica_leaving_stops_the_transfer(make_server, kind):
    master = start_master(make_server, kind, **DISKLESS)
    with master.raw() as conn:
        fill_incompressible(conn, 32)
    link = attach_raw(master)
    read_fullresync(link)
    link.close()
    wait_for(lambda: master.info("replication")["connected_slaves"] == "0" and
             master.info("persistence")["rdb_bgsave_in_progress"] == "0", what="the transfer to stop")
    # The next replica gets a whole snapshot.
    replica = start_replica(make_server, master)
    wait_caught_up(master, replica, timeout=60)
    assert replica.info("keyspace") == master.info("keyspace")


def test_replicas_announcing_goblin_snapshot_get_goblin_s_format(make_server):
    for options in (DISKLESS, {"repl-diskless-sync": "no"}):
        master = start_master(make_server, "goblin", **options)
        with master.raw() as conn:
            conn.call("SET", "k", "v")
        link = attach_raw(master, "goblin-snapshot")
        read_fullresync(link)
        if options is DISKLESS:
            payload = read_eof_payload(link)
        else:
            size = re.fullmatch(rb"\$(\d+)\r\n", read_line(link))
            assert size, "no snapshot size line"
            payload = read_exactly(link, int(size.group(1)))
        assert payload.startswith(b"GOBLNSNP"), (options, payload[:16])
        link.close()
    # A round with one replica that reads RDB only is RDB for all.
    master = start_master(make_server, "goblin", **ROUND_OF_TWO)
    links = [attach_raw(master, "goblin-snapshot", port="4441"), attach_raw(master, port="4442")]
    for link in links:
        read_fullresync(link)
        assert read_eof_payload(link).startswith(b"REDIS00")
        link.close()


# ---- handshake replies -----------------------------------------------------------------------------------------

HANDSHAKE_CASES = [
    ("REPLCONF",), ("REPLCONF", "listening-port"), ("REPLCONF", "listening-port", "x"),
    ("REPLCONF", "listening-port", "6380", "capa", "eof", "capa", "psync2", "capa", "unknown"),
    ("REPLCONF", "ip-address", "10.0.0.1"), ("REPLCONF", "ip-address", "a" * 300),
    ("REPLCONF", "nosuch", "1"), ("REPLCONF", "rdb-only", "2"), ("REPLCONF", "rdb-only", "x"),
    ("REPLCONF", "rdb-only", "0"), ("REPLCONF", "rdb-filter-only", ""),
    ("REPLCONF", "rdb-filter-only", "functions"), ("REPLCONF", "rdb-filter-only", "functions keys"),
    ("REPLCONF", "rdb-filter-only", '"open'),
    ("WAIT",), ("WAIT", "x", "0"), ("WAIT", "0", "x"), ("WAIT", "0", "-1"), ("WAIT", "0", "0"),
    ("PSYNC", "?"), ("PSYNC", "?", "x"),
    ("MULTI",), ("SYNC",), ("PSYNC", "?", "-1"), ("DISCARD",),
]


def test_handshake_replies_are_redis_s(make_server, reference_server):
    goblin = make_server()
    with goblin.raw() as g, reference_server.raw() as r:
        for command in HANDSHAKE_CASES:
            assert g.call(*command).raw == r.call(*command).raw, command
        # ACK and GETACK from a client that is no replica get no reply at all.
        for conn in (g, r):
            conn.send_command("REPLCONF", "ACK", "5")
            conn.send_command("REPLCONF", "GETACK", "*")
            assert conn.call("PING").raw == b"+PONG\r\n"


# ---- redis-cli -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("diskless", ["no", "yes"])
@pytest.mark.parametrize("kind", MASTERS)
def test_redis_cli_rdb_writes_a_file_redis_check_rdb_accepts(make_server, kind, diskless, tmp_path):
    master = start_master(make_server, kind, **{"repl-diskless-sync": diskless, "repl-diskless-sync-delay": "0"})
    with master.raw() as conn:
        fill(conn)
        keys = sum(int(v.split(",")[0].split("=")[1]) for k, v in master.info("keyspace").items())
    path = str(tmp_path / "out.rdb")
    code, out = run_until_exit([REDIS_CLI, *master.cli_args(), "--rdb", path], timeout=60)
    assert code == 0 and "Transfer finished with success" in out, out
    report = check_rdb(path)
    assert f"{keys} keys read" in report, report[-2000:]
    # The rdb-only link was closed once the file was sent: no replica is left.
    wait_for(lambda: master.info("replication")["connected_slaves"] == "0", what="the rdb-only link to close")


@pytest.mark.parametrize("kind", MASTERS)
def test_redis_cli_replica_prints_the_stream(make_server, kind):
    master = start_master(make_server, kind)
    proc = subprocess.Popen([REDIS_CLI, *master.cli_args(), "--replica"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    out = b""
    try:
        wait_for(lambda: "state=online" in master.info("replication").get("slave0", ""),
                 what="redis-cli to come online")
        with master.raw() as conn:
            conn.call("SET", "seen", "by-cli")
        deadline = time.monotonic() + 10
        while b'"SET","seen","by-cli"' not in out:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"redis-cli did not print the write: {out!r}"
            ready, _, _ = select.select([proc.stdout], [], [], remaining)
            if ready:
                chunk = proc.stdout.read1(65536)
                assert chunk, f"redis-cli exited: {out!r}"
                out += chunk
    finally:
        proc.kill()
        proc.wait()
    assert re.search(rb"SYNC done.*Logging commands from master.", out), out
    # (redis-server sends a filtered snapshot diskless and starts that stream without a SELECT)
    assert b'"SET","seen","by-cli"\n' in out, out
