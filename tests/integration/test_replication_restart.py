"""A replica's snapshot carries its replication history, as Redis's does (the repl-stream-db, repl-id and
repl-offset aux fields of its RDB): restarted from it, the replica asks its master to continue, and gets
+CONTINUE rather than a full sync. Debian's redis-server 7.0 replica runs the same scenario, so the expected
sync counters and RDB fields are Redis's; goblin-server replicas save both of its formats (snapshot-format rdb
writes those aux fields, goblin a version 2 file with an 'R' section, docs/FORMAT.md).

The master goes on writing while the replica is down, in the database its stream last selected: the backlog
sends those commands without a SELECT, so the replica must also remember which database the stream was in.
"""

from __future__ import annotations

import os
import random

import pytest

from support.replication import (assert_same_keyspace, master_offset, random_writes, send_all, start_node as start,
                                 sync_counters, wait_caught_up)
from support.server import wait_for

MASTERS = ("goblin", "redis")
REPLICAS = [("redis", None), ("goblin", "rdb"), ("goblin", "goblin")]


def rdb_aux(path: str) -> list:
    """The aux fields (name, value) at the start of an RDB file, in order (string or integer encoded)."""
    data = open(path, "rb").read()
    assert data[:5] == b"REDIS", data[:9]
    pos, fields = 9, []

    def string():
        nonlocal pos
        first = data[pos]
        pos += 1
        kind = first >> 6
        if kind == 0:
            n = first & 0x3F
        elif kind == 1:
            n = ((first & 0x3F) << 8) | data[pos]
            pos += 1
        elif kind == 2:
            n = int.from_bytes(data[pos:pos + 4], "big")
            pos += 4
        else:
            width = {0: 1, 1: 2, 2: 4}[first & 0x3F]
            value = int.from_bytes(data[pos:pos + width], "little", signed=True)
            pos += width
            return str(value).encode()
        text = data[pos:pos + n]
        pos += n
        return text

    while data[pos] == 0xFA:
        pos += 1
        fields.append((string(), string()))
    return fields


@pytest.mark.parametrize("master_kind", MASTERS)
@pytest.mark.parametrize("replica_kind,fmt", REPLICAS, ids=["redis", "goblin-rdb", "goblin-snapshot"])
def test_a_restarted_replica_continues_its_history(make_server, master_kind, replica_kind, fmt):
    master = start(make_server, master_kind, "master", **{"repl-ping-replica-period": "3600"})
    options = {"snapshot-format": fmt} if fmt else {}
    replica = start(make_server, replica_kind, "replica", master, **options)
    # Synced first, so that the writes come through the stream (written before the sync they would come in the
    # snapshot, and the stream would still be in database 0).
    wait_caught_up(master, replica)
    with master.raw() as conn:
        conn.pipeline([("SET", "a", "1"), ("SELECT", 3), ("SET", "b", "2"), ("RPUSH", "l", "x", "y")])
        wait_caught_up(master, replica)
        before = sync_counters(master)
        assert before[0] == 1
        with replica.raw() as r:
            assert r.call("SAVE").raw == b"+OK\r\n"
        replica.stop()
        wait_for(lambda: master.info("replication")["connected_slaves"] == "0", what="the replica to go")
        # Still in database 3: the backlog holds these without a SELECT before them.
        conn.pipeline([("SET", "c", "3"), ("INCR", "n"), ("LPOP", "l")])
    path = os.path.join(replica.dir, "dump.rdb")
    if fmt != "goblin":
        names = [name for name, _ in rdb_aux(path)]
        assert names[names.index(b"used-mem") + 1:] == [b"repl-stream-db", b"repl-id", b"repl-offset", b"aof-base"]
        aux = dict(rdb_aux(path))
        assert aux[b"repl-stream-db"] == b"3" and len(aux[b"repl-id"]) == 40
    else:
        with open(path, "rb") as f:
            head = f.read(8 + 9 + 4)
        assert head[:8] == b"GOBLNSNP" and head[17:21] == b"\x02\x00\x00\x00"
    replica.restart()
    wait_caught_up(master, replica)
    # One partial resync more, no full one.
    assert sync_counters(master) == (before[0], before[1] + 1, before[2])
    assert_same_keyspace(master, replica)
    with replica.raw() as r:
        r.call("SELECT", 3)
        assert r.call("GET", "c").py() == b"3" and r.call("LRANGE", "l", 0, -1).py() == [b"y"]


def test_a_master_s_snapshot_carries_its_history_while_it_has_a_backlog(make_server):
    """As Redis: a master's RDB has the repl fields only while a backlog exists (replicas came)."""
    fields = {}
    for kind in MASTERS:
        master = start(make_server, kind, "master", **({"snapshot-format": "rdb"} if kind == "goblin" else {}))
        with master.raw() as conn:
            conn.call("SET", "k", "v")
            assert conn.call("SAVE").raw == b"+OK\r\n"
            alone = [name for name, _ in rdb_aux(os.path.join(master.dir, "dump.rdb"))]
            replica = start(make_server, kind, "replica", master)
            wait_caught_up(master, replica)
            assert conn.call("SAVE").raw == b"+OK\r\n"
            aux = dict(rdb_aux(os.path.join(master.dir, "dump.rdb")))
            info = master.info("replication")
        assert aux[b"repl-id"] == info["master_replid"].encode()
        assert aux[b"repl-offset"] == info["master_repl_offset"].encode()
        fields[kind] = (alone, sorted(aux))
    assert fields["goblin"] == fields["redis"]


@pytest.mark.parametrize("master_kind", MASTERS)
@pytest.mark.parametrize("replica_kind", ["goblin", "redis"])
def test_a_dropped_link_continues_in_the_stream_s_database(make_server, master_kind, replica_kind):
    """The same without a restart: the link drops and comes back with +CONTINUE; the master's next commands
    come without a SELECT and belong to the database its stream was in."""
    master = start(make_server, master_kind, "master", **{"repl-ping-replica-period": "3600"})
    replica = start(make_server, replica_kind, "replica", master)
    with master.raw() as conn:
        conn.pipeline([("SELECT", 3), ("SET", "a", "1")])
        wait_caught_up(master, replica)
        before = sync_counters(master)
        with replica.raw() as r:
            assert r.call("CLIENT", "KILL", "TYPE", "master").py() == 1
        wait_for(lambda: sync_counters(master) != before, what="the replica to reconnect")
        conn.call("SET", "b", "2")
        wait_caught_up(master, replica)
    assert sync_counters(master) == (before[0], before[1] + 1, before[2])
    with replica.raw() as r:
        r.call("SELECT", 3)
        assert r.call("GET", "b").py() == b"2"
    assert_same_keyspace(master, replica)


@pytest.mark.parametrize("master_kind", MASTERS)
def test_a_restarted_master_s_replicas_continue(make_server, master_kind):
    """A master saved at shutdown comes back with its history as replid2: its replicas continue with +CONTINUE."""
    master = start(make_server, master_kind, "master", **{"repl-ping-replica-period": "3600"})
    replicas = [start(make_server, kind, "replica", master) for kind in ("goblin", "redis")]
    with master.raw() as conn:
        conn.pipeline([("SET", "a", "1"), ("SELECT", 3), ("SET", "b", "2")])
    for replica in replicas:
        wait_caught_up(master, replica)
    old_id = master.info("replication")["master_replid"]
    offset = int(master.info("replication")["master_repl_offset"])
    with master.raw() as conn:
        conn.send_command("SHUTDOWN", "SAVE")
    master.proc.wait(timeout=30)
    master.restart(keep_port=True)
    info = master.info("replication")
    # (redis-server's SHUTDOWN asks its replicas for an ACK first: its saved offset is past that REPLCONF GETACK)
    saved = int(info["master_repl_offset"])
    assert info["master_replid2"] == old_id and info["second_repl_offset"] == str(saved + 1)
    assert saved >= offset and info["master_replid"] != old_id
    with master.raw() as conn:
        conn.call("SET", "after", "1")
    for replica in replicas:
        wait_caught_up(master, replica, timeout=30)
    assert sync_counters(master) == (0, 2, 0)
    for replica in replicas:
        assert_same_keyspace(master, replica)


def restart_saved(master):
    """SHUTDOWN NOW SAVE (NOW: no REPLCONF GETACK moves the offset first), then the same port again."""
    with master.raw() as conn:
        master.stop_requested = True
        conn.send_command("SHUTDOWN", "NOW", "SAVE")
        assert conn.read_until_closed(timeout=30) == b""
    master.proc.wait(timeout=30)
    master.restart(keep_port=True)


def all_at(master, *replicas) -> bool:
    offset = master_offset(master)
    return all(r.info("replication").get("master_link_status") == "up" and
               int(r.info("replication")["master_repl_offset"]) == offset for r in replicas)


def digest(server) -> bytes:
    with server.raw() as conn:
        return conn.call("DEBUG", "DIGEST").value


def chain(make_server, kind: str, **master_options):
    """master -> replica -> sub-replica, all of one kind, caught up with a seeded write stream."""
    master = start(make_server, kind, "master", **{"repl-ping-replica-period": "3600", "repl-diskless-sync": "no",
                                                   **master_options})
    replica = start(make_server, kind, "replica", master)
    sub_replica = start(make_server, kind, "sub-replica", replica)
    with master.raw() as conn:
        send_all(conn, [c for c in random_writes(random.Random(11), 800) if "PX" not in c])
    wait_for(lambda: all_at(master, replica, sub_replica), timeout=30, what="the chain to catch up")
    return master, replica, sub_replica


def expire_while_down(master, replica, sub_replica, count: int):
    """count keys whose deadlines pass at once, on a master that expires nothing by itself."""
    with master.raw() as conn:
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        send_all(conn, [("SET", f"gone:{i}", "v", "PX", "10") for i in range(count)])
    wait_for(lambda: all_at(master, replica, sub_replica), timeout=30, what="the chain to catch up")


def restart_and_follow(master, replica, sub_replica, expired: int, full: bool):
    """Restarts the master from its snapshot and checks its history and how the chain follows it."""
    before = master.info("replication")
    offset, replid = int(before["master_repl_offset"]), before["master_replid"]
    with replica.raw() as r:
        r.call("CONFIG", "RESETSTAT")
    restart_saved(master)
    info = master.info("replication")
    assert master.info("persistence")["rdb_last_load_keys_expired"] == str(expired)
    assert info["master_replid"] != replid and info["master_replid2"] == replid
    assert info["second_repl_offset"] == str(offset + 1)
    assert info["repl_backlog_active"] == "1"
    # The history goes on at the saved offset: the DELs of what expired at the load come after it.
    assert int(info["master_repl_offset"]) == offset + int(info["repl_backlog_histlen"]) or full
    assert (int(info["master_repl_offset"]) > offset) == (expired > 0)
    wait_for(lambda: all_at(master, replica, sub_replica), timeout=30, what="the chain to catch up")
    assert sync_counters(master)[:2] == ((1, 0) if full else (0, 1))
    # The replica, taking the new id, drops its sub-replica, which continues; or, synced in full, syncs it in
    # full.
    assert sync_counters(replica)[:2] == ((1, 0) if full else (0, 1))
    assert digest(master) == digest(replica) == digest(sub_replica)
    return info


@pytest.mark.parametrize("kind", MASTERS)
def test_a_chain_continues_after_its_master_restarts_and_expires_what_it_loaded(make_server, kind):
    """The master restarts from its snapshot with its history: its backlog starts empty at the saved offset and
    the replica continues. Keys whose deadlines passed while it was down are expired as it loads, their DELs in
    the new history, which the backlog holds: the replica continues again, and the three data sets agree."""
    master, replica, sub_replica = chain(make_server, kind)
    offset = master_offset(master)
    info = restart_and_follow(master, replica, sub_replica, expired=0, full=False)
    assert int(info["repl_backlog_first_byte_offset"]) == offset + 1
    assert info["repl_backlog_histlen"] == "0"
    expire_while_down(master, replica, sub_replica, 300)
    restart_and_follow(master, replica, sub_replica, expired=300, full=False)


@pytest.mark.redis72
def test_a_master_restart_whose_expiries_outgrow_the_backlog_syncs_in_full(make_server):
    """The DELs of 2048 keys expired at the load do not fit a 16 KB backlog: the replica cannot continue from
    the saved offset and syncs in full (Redis 7.2; 7.0's backlog was not trimmed to its size while it loaded,
    and let the replica continue)."""
    master, replica, sub_replica = chain(make_server, "goblin", **{"repl-backlog-size": "16384"})
    expire_while_down(master, replica, sub_replica, 2048)
    info = restart_and_follow(master, replica, sub_replica, expired=2048, full=True)
    assert int(info["repl_backlog_first_byte_offset"]) > int(info["second_repl_offset"])
