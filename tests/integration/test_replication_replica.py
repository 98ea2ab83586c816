"""Replication, the replica's side: goblin-server follows a goblin-server or a redis-server master (Debian's
7.0) through PSYNC2. The replicas' data is compared key by key with the master's after seeded random write
streams of every type; a lost link continues from the backlog; a promoted replica continues its siblings'
and its old master's history; and a goblin replica answers its clients as a redis-server replica of the same
master does, reply for reply. A scripted fake master feeds the replica garbage, truncated and lying
snapshots: the replica drops the link, retries, and never serves a half-loaded data set.
"""

from __future__ import annotations

import random
import re

import pytest

from support import rdb_build as rdb
from support.replication import (FakeMaster, assert_same_keyspace, evict_some, master_offset, random_writes,
                                 send_all, sync_counters, wait_caught_up)
from support.resp import encode_command
from support.server import REFERENCE_BINARY, goblin_binary, wait_for

MASTERS = ("goblin", "redis")
# No PING in the stream during a test: a promotion test needs the old master's offset to stay put.
QUIET = {"repl-diskless-sync": "no", "repl-ping-replica-period": "3600"}


def start_master(make_server, kind: str, **options):
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    return make_server(binary=binary, name=f"{kind}-master", unix=False, options={**QUIET, **options})


def start_replica(make_server, master_port: int, kind: str = "goblin", name: str | None = None, **options):
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    return make_server(binary=binary, name=name or f"{kind}-replica", unix=False, options={**QUIET, **options},
                       extra_args=["--replicaof", "127.0.0.1", str(master_port)])


def replication_id(server) -> str:
    return server.info("replication")["master_replid"]


def digest(server) -> bytes:
    with server.raw() as conn:
        return conn.call("DEBUG", "DIGEST").value


def link_down(server) -> bool:
    return server.info("replication").get("master_link_status") == "down"


# ---- following a write stream ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", MASTERS)
def test_goblin_replicas_follow_a_random_write_stream(make_server, kind):
    """A goblin replica of the master, and a goblin replica of that replica (a chain carries one stream)."""
    rng = random.Random(20261203)
    master = start_master(make_server, kind)
    with master.raw() as conn:
        send_all(conn, random_writes(rng, 1500))  # travels in the full sync's snapshot
        first = start_replica(make_server, master.port, name="goblin-replica")
        second = start_replica(make_server, first.port, name="goblin-subreplica")
        wait_caught_up(master, first)
        wait_caught_up(master, second)
        assert sync_counters(master) == (1, 0, 0)
        assert sync_counters(first) == (1, 0, 0)
        send_all(conn, random_writes(rng, 4000))
        # Evictions reach the replicas as deletions; the replicas themselves evict nothing.
        evict_some(master, conn)
        # The digests are taken at rest: no deletion of an expired key comes between them.
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    wait_caught_up(master, first)
    wait_caught_up(master, second)
    if kind == "goblin":
        assert digest(first) == digest(master) and digest(second) == digest(master)
    assert_same_keyspace(master, first)
    assert_same_keyspace(master, second)
    assert int(first.info("stats")["evicted_keys"]) == 0 and int(first.info("stats")["expired_keys"]) == 0


def test_a_diskless_snapshot_from_redis_is_loaded(make_server):
    """redis-server streams the snapshot with $EOF:<mark> framing to a replica that announced capa eof."""
    master = start_master(make_server, "redis", **{"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "0"})
    with master.raw() as conn:
        send_all(conn, random_writes(random.Random(7), 2000))
    replica = start_replica(make_server, master.port)
    wait_caught_up(master, replica)
    assert "receiving streamed RDB from master with EOF" in replica.logs(limit=100000)
    assert_same_keyspace(master, replica)


def test_a_diskless_goblin_master_syncs_goblin_and_redis_replicas(make_server):
    """One round for a redis-server and a goblin replica is RDB; a round of goblin replicas is Goblin's format."""
    rng = random.Random(20261204)
    master = start_master(make_server, "goblin", **{"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "3600",
                                                    "repl-diskless-sync-max-replicas": "2"})
    with master.raw() as conn:
        send_all(conn, random_writes(rng, 2000))
        mixed = [start_replica(make_server, master.port, "redis"), start_replica(make_server, master.port)]
        for replica in mixed:
            wait_caught_up(master, replica)
        goblins = [start_replica(make_server, master.port, name=f"goblin-replica-{i}") for i in range(2)]
        for replica in goblins:
            wait_caught_up(master, replica)
        assert sync_counters(master) == (4, 0, 0)
        send_all(conn, random_writes(rng, 3000))
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    log = master.logs(limit=200000)
    assert log.count("target: replicas sockets\n") == 1, log
    assert log.count("target: replicas sockets (Goblin snapshot format)") == 1, log
    for replica in [*mixed, *goblins]:
        wait_caught_up(master, replica)
        assert_same_keyspace(master, replica)
    for replica in goblins:
        assert digest(replica) == digest(master)
        assert "Loading Goblin snapshot" in replica.logs(limit=100000)


@pytest.mark.parametrize("kind", MASTERS)
def test_messages_published_on_the_master_reach_the_subscribers_of_replicas(make_server, kind):
    """A goblin replica publishes the master's PUBLISH again to its subscribers, and passes it down a chain."""
    master = start_master(make_server, kind)
    replica = start_replica(make_server, master.port, name="goblin-replica")
    subreplica = start_replica(make_server, replica.port, name="goblin-subreplica")
    wait_caught_up(master, subreplica)
    with replica.raw() as near, subreplica.raw() as far, master.raw() as publisher:
        for subscriber in (near, far):
            assert subscriber.call("PSUBSCRIBE", "news.*").py() == [b"psubscribe", b"news.*", 1]
        assert publisher.call("PUBLISH", "news.today", "hello").py() == 0
        publisher.call("EVAL", "redis.call('set', 'k', 'v') return redis.call('publish', 'news.late', 'x')", 0)
        for subscriber in (near, far):
            assert subscriber.read_reply().py() == [b"pmessage", b"news.*", b"news.today", b"hello"]
            assert subscriber.read_reply().py() == [b"pmessage", b"news.*", b"news.late", b"x"]
    wait_caught_up(master, subreplica)


# ---- the link lost and restored ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", MASTERS)
def test_a_lost_link_continues_from_the_backlog_or_syncs_again(make_server, kind):
    master = start_master(make_server, kind)
    replica = start_replica(make_server, master.port)
    wait_caught_up(master, replica)
    with master.raw() as conn, replica.raw() as local:
        conn.call("SET", "before", "1")
        # The replica drops its master, which goes on writing: the backlog holds the gap.
        local.call("CLIENT", "KILL", "TYPE", "master")
        conn.pipeline([("SET", "during", "2"), ("RPUSH", "l", "a", "b")])
        wait_caught_up(master, replica)
        assert sync_counters(master) == (1, 1, 0)
        assert_same_keyspace(master, replica)
        # More than the smallest backlog holds: a full sync again.
        conn.call("CONFIG", "SET", "repl-backlog-size", "1")
        conn.pipeline([("CLIENT", "KILL", "TYPE", "replica"),
                       *[("SET", f"big:{i}", "z" * 1000) for i in range(40)]])
        wait_caught_up(master, replica)
        assert sync_counters(master) == (2, 1, 1)
    assert_same_keyspace(master, replica)


@pytest.mark.parametrize("kind", MASTERS)
def test_a_promoted_replica_continues_the_history_of_its_sibling_and_old_master(make_server, kind):
    master = start_master(make_server, kind)
    promoted = start_replica(make_server, master.port, name="goblin-promoted")
    sibling = start_replica(make_server, master.port, name="goblin-sibling")
    with master.raw() as conn:
        # An expiry on the old master after the promotion would put a DEL past the history the promoted
        # replica holds, and its old master would rightly need a full sync.
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        send_all(conn, random_writes(random.Random(11), 800))
    wait_caught_up(master, promoted)
    wait_caught_up(master, sibling)
    old_id, old_offset = replication_id(master), master_offset(master)
    with promoted.raw() as conn:
        assert conn.call("REPLICAOF", "NO", "ONE").raw == b"+OK\r\n"
        info = promoted.info("replication")
        assert info["role"] == "master" and info["master_replid"] != old_id
        assert info["master_replid2"] == old_id and info["second_repl_offset"] == str(old_offset + 1)
        assert conn.call("SET", "after-promotion", "1").raw == b"+OK\r\n"
        # The sibling and the old master both ask to continue the old id: +CONTINUE with the new one.
        followers = (sibling, master)
        for follower in followers:
            with follower.raw() as f:
                assert f.call("REPLICAOF", "127.0.0.1", promoted.port).raw == b"+OK\r\n"
            wait_caught_up(promoted, follower)
            assert replication_id(follower) == replication_id(promoted)
    assert sync_counters(promoted) == (0, len(followers), 0)
    for follower in followers:
        assert_same_keyspace(promoted, follower)


def test_a_running_redis_moves_to_goblin_by_replication(make_server):
    """The README's recipe: goblin joins a redis-server master under writes, writes pause, goblin is promoted,
    and redis-server becomes its replica."""
    rng = random.Random(5)
    redis_master = start_master(make_server, "redis", **{"repl-diskless-sync": "yes", "repl-diskless-sync-delay": "0"})
    with redis_master.raw() as conn:
        send_all(conn, random_writes(rng, 1500))
        goblin = start_replica(make_server, redis_master.port)
        send_all(conn, random_writes(rng, 1500))  # writes go on while goblin syncs
        wait_for(lambda: goblin.info("replication")["master_link_status"] == "up", what="goblin's link up")
        assert conn.call("CLIENT", "PAUSE", 30000, "WRITE").raw == b"+OK\r\n"
        wait_caught_up(redis_master, goblin)
        with goblin.raw() as g:
            assert g.call("REPLICAOF", "NO", "ONE").raw == b"+OK\r\n"
            assert g.call("SET", "written-on-goblin", "1").raw == b"+OK\r\n"
        conn.call("CLIENT", "UNPAUSE")
        # The way back: redis-server follows goblin.
        assert conn.call("REPLICAOF", "127.0.0.1", goblin.port).raw == b"+OK\r\n"
    wait_caught_up(goblin, redis_master)
    assert_same_keyspace(goblin, redis_master)
    with redis_master.raw() as conn:
        assert conn.call("GET", "written-on-goblin").raw == b"$1\r\n1\r\n"


@pytest.mark.parametrize("kind", MASTERS)
def test_wait_counts_the_acknowledgements_of_goblin_replicas(make_server, kind):
    master = start_master(make_server, kind)
    replicas = [start_replica(make_server, master.port, name=f"goblin-replica-{i}") for i in range(2)]
    for replica in replicas:
        wait_caught_up(master, replica)
    with master.raw() as conn:
        assert conn.call("SET", "k", "v").raw == b"+OK\r\n"
        assert conn.call("WAIT", 2, 10000).py() == 2
        replicas[1].stop()
        wait_for(lambda: master.info("replication")["connected_slaves"] == "1", what="the master to see one")
        assert conn.call("INCR", "n").py() == 1
        assert conn.call("WAIT", 2, 300).py() == 1
    # The ACK a replica sends every second reports the stream up to its end (WAIT's GETACK included).
    wait_for(lambda: re.search(rf"port={replicas[0].port},state=online,offset={master_offset(master)},",
                               master.info("replication")["slave0"]), what="the replica's ACK")


# ---- a replica's clients, against a redis-server replica of the same master -------------------------------------

FLAGGED_WRITE = "#!lua\nreturn redis.call('set', KEYS[1], 'x')"
FLAGGED_READ = "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])"
FLAGGED_READ_WRITING = "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'x')"

READ_ONLY_CASES = [
    ("SET", "k", "v"), ("DEL", "k"), ("INCR", "n"), ("EXPIRE", "k", 100), ("FLUSHALL",), ("GET", "k"),
    ("EVAL", "return redis.call('set', KEYS[1], 'x')", 1, "k"),
    ("EVAL", "return redis.pcall('set', KEYS[1], 'x')", 1, "k"),
    ("EVAL", "return redis.call('get', KEYS[1])", 1, "k"),
    ("EVAL", FLAGGED_WRITE, 1, "k"), ("EVAL", FLAGGED_READ, 1, "k"), ("EVAL", FLAGGED_READ_WRITING, 1, "k"),
    ("EVAL_RO", "return redis.call('get', KEYS[1])", 1, "k"),
    ("MULTI",), ("SET", "k", "v"), ("GET", "k"), ("EXEC",),
    ("MULTI",), ("GET", "k"), ("EXEC",),
    ("PUBLISH", "ch", "m"), ("SELECT", 3), ("SELECT", 0), ("DBSIZE",),
    ("WAIT", 0, 0), ("REPLICAOF",), ("REPLICAOF", "127.0.0.1"), ("REPLICAOF", "127.0.0.1", "port"),
    ("REPLICAOF", "127.0.0.1", "70000"), ("SLAVEOF", "NO"),
    ("CONFIG", "GET", "replica-read-only"), ("CONFIG", "GET", "slave-read-only"), ("CONFIG", "GET", "masterauth"),
    ("CONFIG", "GET", "replica-serve-stale-data"), ("CONFIG", "GET", "replica-priority"),
    ("CONFIG", "SET", "min-replicas-to-write", "1"), ("SET", "k", "v"), ("CONFIG", "SET", "min-replicas-to-write", "0"),
    ("CONFIG", "SET", "replica-read-only", "no"), ("SET", "local", "1"), ("GET", "local"), ("DEL", "local"),
    ("CONFIG", "SET", "replica-read-only", "yes"),
]

STALE_CASES = [
    ("GET", "k"), ("SET", "k", "v"), ("PING",), ("ECHO", "x"), ("DBSIZE",), ("CONFIG", "GET", "maxmemory"),
    ("MULTI",), ("GET", "k"), ("EXEC",), ("SUBSCRIBE", "ch"), ("UNSUBSCRIBE", "ch"),
]


def replies(server, commands) -> list:
    with server.raw() as conn:
        return [conn.call(*command).raw for command in commands]


@pytest.mark.parametrize("kind", MASTERS)
def test_a_replica_answers_its_clients_as_redis_s_does(make_server, kind):
    master = start_master(make_server, kind, **{"repl-timeout": "2"})
    goblin = start_replica(make_server, master.port, "goblin", **{"repl-timeout": "2"})
    redis = start_replica(make_server, master.port, "redis", **{"repl-timeout": "2"})
    with master.raw() as conn:
        conn.pipeline([("SET", "k", "v"), ("RPUSH", "l", "a"), ("SET", "n", "5")])
    for replica in (goblin, redis):
        wait_caught_up(master, replica)
    assert replies(goblin, READ_ONLY_CASES) == replies(redis, READ_ONLY_CASES)
    with goblin.raw() as conn:
        assert conn.call("REPLICAOF", "127.0.0.1", master.port).raw == b"+OK Already connected to specified master\r\n"
    assert list(goblin.info("replication")) == list(redis.info("replication"))
    # A key whose deadline passed on a master that did not expire it yet: the replicas hide it from reads
    # but keep it (DBSIZE counts it) until the master's DEL comes.
    with master.raw() as conn:
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        conn.call("SET", "gone", "v", "PX", "50")
        offset = master_offset(master)
    for replica in (goblin, redis):
        wait_for(lambda r=replica: int(r.info("replication")["slave_repl_offset"]) >= offset, what="the SET")
        wait_for(lambda r=replica: replies(r, [("PTTL", "gone")]) == [b":-2\r\n"], what="the deadline")
    hidden = [("GET", "gone"), ("EXISTS", "gone"), ("TTL", "gone"), ("TYPE", "gone"), ("DBSIZE",),
              ("KEYS", "*"), ("SCAN", 0, "COUNT", 100)]
    got, expected = replies(goblin, hidden), replies(redis, hidden)
    assert got[:5] == expected[:5] and got[4] == b":4\r\n"
    for g, r in zip(got[5:], expected[5:]):
        assert sorted(g.split(b"\r\n")) == sorted(r.split(b"\r\n"))  # the order of keys is each server's own
    # replica-serve-stale-data no: with the master gone only the commands flagged stale run.
    for replica in (goblin, redis):
        with replica.raw() as conn:
            conn.call("CONFIG", "SET", "replica-serve-stale-data", "no")
    master.stop()
    for replica in (goblin, redis):
        wait_for(lambda r=replica: link_down(r), what="the replicas to see the link down")
    assert replies(goblin, STALE_CASES) == replies(redis, STALE_CASES)
    assert list(goblin.info("replication")) == list(redis.info("replication"))


def test_config_rewrite_keeps_the_master(make_server):
    master = start_master(make_server, "goblin")
    replica = make_server(name="goblin-rewritten", unix=False, config_text="# goblin.conf\n")
    with replica.raw() as conn:
        assert conn.call("CONFIG", "GET", "replicaof").py() == [b"replicaof", b""]
        assert conn.call("CONFIG", "SET", "replicaof", f"127.0.0.1 {master.port}").is_error
        assert conn.call("REPLICAOF", "127.0.0.1", master.port).raw == b"+OK\r\n"
        assert conn.call("CONFIG", "GET", "slaveof").py() == [b"slaveof", f"127.0.0.1 {master.port}".encode()]
        assert conn.call("CONFIG", "REWRITE").raw == b"+OK\r\n"
        with open(replica.config_path) as f:
            assert f"\nreplicaof 127.0.0.1 {master.port}\n" in f.read()
        wait_caught_up(master, replica)
        assert conn.call("REPLICAOF", "NO", "ONE").raw == b"+OK\r\n"
        assert conn.call("CONFIG", "REWRITE").raw == b"+OK\r\n"
        with open(replica.config_path) as f:
            assert "replicaof" not in f.read()
    # Started on a file naming a master, the server follows it.
    with replica.raw() as conn:
        conn.call("REPLICAOF", "127.0.0.1", master.port)
        conn.call("CONFIG", "REWRITE")
    replica.restart()
    wait_caught_up(master, replica)


# ---- a fake master ----------------------------------------------------------------------------------------------

def snapshot(keys: dict) -> bytes:
    body = rdb.aux("redis-ver", "7.0.15") + bytes([rdb.OP_SELECTDB, 0])
    for key, value in keys.items():
        body += rdb.record(rdb.T_STRING, key, rdb.string(value))
    return rdb.rdb_file(body, 10)


GOOD = snapshot({"synced": "1", "other": "2"})


def wait_attempts(fake: FakeMaster, n: int):
    wait_for(lambda: fake.attempts >= n, timeout=30, what=f"{n} connections from the replica")


def goblin_with_data(make_server):
    replica = make_server(name="goblin-replica", unix=False, options={"repl-timeout": "2"})
    with replica.raw() as conn:
        conn.call("SET", "old", "data")
    return replica


def keys_of(server) -> list:
    with server.raw() as conn:
        return sorted(conn.call("KEYS", "*").py())


def test_a_master_that_answers_garbage_is_dropped_and_retried(make_server):
    def serve(fake, conn, reader, attempt):
        fake.read_command(reader)                     # PING
        conn.sendall(b"this is not redis\r\n" * 3)   # ... and everything after it
        fake.handshake(conn, reader)
        conn.sendall(b"$5\r\nhello\r\n")               # no +FULLRESYNC
    fake = FakeMaster(serve)
    replica = goblin_with_data(make_server)
    with replica.raw() as conn:
        assert conn.call("REPLICAOF", "127.0.0.1", fake.port).raw == b"+OK\r\n"
        wait_attempts(fake, 2)
        assert conn.call("GET", "old").raw == b"$4\r\ndata\r\n"
    assert link_down(replica)
    fake.close()


@pytest.mark.parametrize("case", ["truncated", "eof-mark-missing", "huge-size", "not-a-payload"])
def test_an_incomplete_snapshot_leaves_the_old_data(make_server, case):
    """The transfer ends before its last byte: nothing of it is loaded, the old data set keeps being served."""
    def serve(fake, conn, reader, attempt):
        psync = fake.handshake(conn, reader)
        assert psync[:2] == [b"PSYNC", b"?"], psync
        conn.sendall(f"+FULLRESYNC {fake.REPLID} 0\r\n".encode() + b"\n\n")
        if case == "truncated":
            conn.sendall(b"$%d\r\n" % len(GOOD) + GOOD[:-5])
        elif case == "eof-mark-missing":
            conn.sendall(b"$EOF:" + b"a" * 40 + b"\r\n" + GOOD + b"b" * 40)
        elif case == "huge-size":
            conn.sendall(b"$99999999999999\r\n" + GOOD)
        else:
            conn.sendall(b"+OK\r\n" + GOOD)
    fake = FakeMaster(serve)
    replica = goblin_with_data(make_server)
    with replica.raw() as conn:
        conn.call("REPLICAOF", "127.0.0.1", fake.port)
        wait_attempts(fake, 2)
        assert keys_of(replica) == [b"old"]
        assert conn.call("REPLICAOF", "NO", "ONE").raw == b"+OK\r\n"
    assert keys_of(replica) == [b"old"]
    fake.close()


def test_a_lying_snapshot_is_not_served_half_loaded(make_server):
    """A whole payload that does not load (good records, then garbage, then a wrong checksum): the old data
    set is gone (it was flushed for the new one) and none of the records read before the error is served."""
    half = snapshot({"half": "1", "loaded": "2"})
    lying = half[:-9] + bytes([rdb.T_STRING]) + b"\xc5garbage" + half[-9:]

    def serve(fake, conn, reader, attempt):
        fake.handshake(conn, reader)
        conn.sendall(f"+FULLRESYNC {fake.REPLID} 0\r\n${len(lying)}\r\n".encode() + lying)
        reader.read()  # until the replica drops the link
    fake = FakeMaster(serve)
    replica = goblin_with_data(make_server)
    with replica.raw() as conn:
        conn.call("REPLICAOF", "127.0.0.1", fake.port)
        wait_attempts(fake, 2)
        assert keys_of(replica) == []
        assert conn.call("DBSIZE").raw == b":0\r\n"
    assert "Failed trying to load the MASTER synchronization DB from disk" in replica.logs(limit=100000)
    assert link_down(replica)
    fake.close()


def test_garbage_in_the_stream_drops_the_link_and_the_replica_asks_to_continue(make_server):
    def serve(fake, conn, reader, attempt):
        psync = fake.handshake(conn, reader)
        if attempt == 0:
            conn.sendall(f"+FULLRESYNC {fake.REPLID} 100\r\n${len(GOOD)}\r\n".encode() + GOOD)
            assert fake.read_command(reader)[:2] == [b"REPLCONF", b"ACK"]
            conn.sendall(encode_command("SET", "a", "1") + b"*1\r\n$abc\r\n")
        else:
            # 100, then the SET's bytes: the replica asks for the byte after them.
            expected = 100 + len(encode_command("SET", "a", "1")) + 1
            fake.psyncs.append(psync)
            assert psync == [b"PSYNC", fake.REPLID.encode(), str(expected).encode()], psync
            conn.sendall(b"+CONTINUE\r\n" + encode_command("SET", "b", "2"))
        while fake.read_command(reader):
            pass
    fake = FakeMaster(serve)
    replica = goblin_with_data(make_server)
    with replica.raw() as conn:
        conn.call("REPLICAOF", "127.0.0.1", fake.port)
        wait_for(lambda: b"b" in keys_of(replica), timeout=30, what="the continued stream")
    assert fake.psyncs, fake.failures
    assert keys_of(replica) == [b"a", b"b", b"other", b"synced"]
    fake.close()
