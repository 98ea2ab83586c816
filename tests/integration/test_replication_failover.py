"""FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], Redis 6.2+'s coordinated failover, against Debian's
redis-server 7.0: every scenario runs with redis-server as well as goblin-server in each role, so the replies,
INFO's master_failover_state, the roles and the sync counters expected are Redis's.

The master pauses writes, waits for the target to acknowledge its offset, becomes the target's replica and
sends PSYNC <replid> <offset> FAILOVER; the target promotes itself and answers +CONTINUE. A writer that runs
through the hand-over sees every write it was told OK for on the new master, and READONLY for the writes the
pause held. The other replica follows the old master, now its chained master, with +CONTINUE.
"""

from __future__ import annotations

import random
import threading

import pytest

from support.replication import (assert_same_keyspace, log_has, random_writes, send_all, start_node, stopped,
                                 sync_counters, wait_caught_up)
from support.resp import RawConnection
from support.server import wait_for

KINDS = ("goblin", "redis")
# A master pings its replicas every second, through the failover too (without TIMEOUT Redis keeps pinging
# while it waits): the target's acknowledgement has to name the offset after the latest PING.
OPTIONS = {"repl-ping-replica-period": "1"}


def start(make_server, kind: str, name: str, master=None, **options):
    return start_node(make_server, kind, name, master, **{**OPTIONS, **options})


def wait_online(master, count: int):
    def online():
        info = master.info("replication")
        return all("state=online" in info.get(f"slave{i}", "") for i in range(count))
    wait_for(online, timeout=20, what=f"{count} replicas online")


def state(server) -> str:
    return server.info("replication")["master_failover_state"]


def role(server) -> tuple:
    info = server.info("replication")
    return (info["role"],) if info["role"] == "master" else (info["role"], int(info["master_port"]))


def held(conn: RawConnection, name: str) -> bool:
    """Whether client name's command waits: Redis parks it (flags=b, its input read), goblin-server leaves it
    unread in the client's input (qbuf)."""
    for line in conn.call("CLIENT", "LIST").value.decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split())
        if fields["name"] == name:
            return "b" in fields["flags"] or int(fields["qbuf"]) > 0
    raise AssertionError(f"no client named {name}")


# ---- replies ---------------------------------------------------------------------------------------------------

NO_REPLICA_CASES = [
    ("FAILOVER",), ("FAILOVER", "ABORT"), ("failover", "abort"), ("FAILOVER", "TO", "127.0.0.1", "1"),
    ("FAILOVER", "FORCE"), ("FAILOVER", "TIMEOUT", "0"), ("FAILOVER", "TIMEOUT", "-1"),
    ("FAILOVER", "TIMEOUT", "abc"), ("FAILOVER", "TIMEOUT"), ("FAILOVER", "TO", "h"), ("FAILOVER", "TO", "h", "p"),
    ("FAILOVER", "ABORT", "TIMEOUT", "5"), ("FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6"),
    ("FAILOVER", "FORCE", "FORCE"), ("FAILOVER", "TO", "a", "1", "TO", "b", "2"), ("FAILOVER", "FORCE", "TIMEOUT", "100"),
    ("FAILOVER", "NOW"), ("PSYNC", "abc", "1", "FAILOVER"),
]


def replica_cases(port: int) -> list:
    return [
        ("FAILOVER", "FORCE", "TIMEOUT", "100"), ("FAILOVER", "TO", "127.0.0.1", port, "FORCE"),
        ("FAILOVER", "TO", "127.0.0.1", 1), ("FAILOVER", "TO", "localhost", port),
        ("FAILOVER", "TIMEOUT", "100", "FORCE"), ("FAILOVER", "ABORT"),
    ]


def failover_replies(make_server, kind: str) -> dict:
    master = start(make_server, kind, "master", **{"repl-ping-replica-period": "3600"})
    out = {}
    with master.raw() as conn:
        out["alone"] = [conn.call(*c).raw for c in NO_REPLICA_CASES]
        out["info-field"] = state(master)
        target = start(make_server, kind, "target", master)
        wait_online(master, 1)
        out["with-replica"] = [conn.call(*c).raw for c in replica_cases(target.port)]
        with target.raw() as t:
            out["on-replica"] = [t.call(*c).raw for c in [
                ("FAILOVER",), ("FAILOVER", "ABORT"), ("FAILOVER", "TO", "127.0.0.1", master.port),
                ("FAILOVER", "FORCE"), ("PSYNC", "abc", "1", "FAILOVER")]]
        with stopped(target), RawConnection(master.port) as writer, RawConnection(master.port) as syncer:
            # The stopped target acknowledges nothing after this write: the failover waits.
            conn.call("SET", "k", "1")
            out["start"] = conn.call("FAILOVER", "TO", "127.0.0.1", target.port, "TIMEOUT", "60000").raw
            out["waiting"] = state(master)
            writer.call("CLIENT", "SETNAME", "writer")
            writer.send_command("SET", "k", "2")
            wait_for(lambda: held(conn, "writer"), what="the SET held by the failover's pause")
            out["during"] = [conn.call(*c).raw for c in [
                ("FAILOVER",), ("FAILOVER", "TO", "127.0.0.1", target.port), ("FAILOVER", "ABORT", "TIMEOUT", "1"),
                ("REPLICAOF", "NO", "ONE"), ("REPLICAOF", "127.0.0.1", target.port), ("GET", "k"),
                ("CLIENT", "UNPAUSE")]]
            out["sync"] = syncer.call("SYNC").raw
            with RawConnection(master.port) as psyncer:
                out["psync"] = psyncer.call("PSYNC", "?", "-1").raw
            # CLIENT UNPAUSE ends CLIENT PAUSE only: the failover's pause holds the SET still.
            out["after-unpause"] = (state(master), held(conn, "writer"))
            out["abort"] = conn.call("FAILOVER", "ABORT").raw
            out["held-write"] = writer.read_reply(timeout=10).raw
            out["aborted"] = (state(master), role(master), conn.call("GET", "k").raw)
            out["abort-again"] = conn.call("FAILOVER", "ABORT").raw
            # Without FORCE the timeout rolls back.
            conn.call("SET", "k", "3")
            out["timeout"] = conn.call("FAILOVER", "TO", "127.0.0.1", target.port, "TIMEOUT", "100").raw
            wait_for(lambda: state(master) == "no-failover", what="the timeout")
            out["timed-out"] = (role(master), log_has(master, "aborted: Replica never caught up before timeout"))
    assert (role(master), role(target)) == (("master",), ("slave", master.port))
    return out


def test_failover_replies_are_redis_s(make_server):
    got = {kind: failover_replies(make_server, kind) for kind in KINDS}
    assert got["goblin"] == got["redis"]
    expected = got["redis"]
    # Spot checks of what the comparison covers, so that a reference that changed would be noticed.
    assert expected["alone"][0] == b"-ERR FAILOVER requires connected replicas.\r\n"
    assert expected["alone"][1] == b"-ERR No failover in progress.\r\n"
    assert expected["with-replica"][0] == \
        b"-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n"
    assert expected["on-replica"][0] == b"-ERR FAILOVER is not valid when server is a replica.\r\n"
    assert expected["waiting"] == "waiting-for-sync"
    assert expected["during"][0] == b"-ERR FAILOVER already in progress.\r\n"
    assert expected["during"][3] == b"-ERR REPLICAOF not allowed while failing over.\r\n"
    assert expected["sync"] == b"-NOMASTERLINK Can't SYNC while failing over\r\n"
    assert expected["after-unpause"] == ("waiting-for-sync", True)
    assert expected["held-write"] == b"+OK\r\n" and expected["aborted"] == ("no-failover", ("master",), b"$1\r\n2\r\n")
    assert expected["timed-out"] == (("master",), True)


def test_command_info_is_redis_s(make_server, reference_server):
    goblin = start(make_server, "goblin", "alone")
    with goblin.raw() as g, reference_server.raw() as r:
        assert g.call("COMMAND", "INFO", "failover").py() == r.call("COMMAND", "INFO", "failover").py()


# ---- the hand-over ---------------------------------------------------------------------------------------------

def counter_writer(server, results: list, stop: threading.Event):
    """INCRs c until a write is refused (the server turned replica) or stop is set; results gets every reply."""
    with RawConnection(server.port, timeout=30) as conn:
        conn.call("CLIENT", "SETNAME", "counter")
        while not stop.is_set() and len(results) < 1_000_000:
            reply = conn.call("INCR", "c")
            results.append(reply)
            if reply.is_error:
                return


def run_failover(make_server, kinds: tuple, target_named: bool):
    """kinds: (master, target, sibling). Returns the servers, with the hand-over checked."""
    master_kind, target_kind, sibling_kind = kinds
    master = start(make_server, master_kind, "master")
    target = start(make_server, target_kind, "target", master)
    sibling = start(make_server, sibling_kind, "sibling", master)
    wait_online(master, 2)
    with master.raw() as conn:
        send_all(conn, [c for c in random_writes(random.Random(5), 1500) if "PX" not in c])
    wait_caught_up(master, target)
    wait_caught_up(master, sibling)
    before = {s: sync_counters(s) for s in (master, target, sibling)}
    results, stop = [], threading.Event()
    writer = threading.Thread(target=counter_writer, args=(master, results, stop))
    writer.start()
    try:
        wait_for(lambda: len(results) >= 50, what="the writer's first writes")
        # The target falls behind, so that the failover has to wait for it to catch up.
        with stopped(target):
            done = len(results)
            wait_for(lambda: len(results) >= done + 200, what="writes the stopped target misses")
        with master.raw() as conn:
            command = ("FAILOVER", "TO", "127.0.0.1", target.port) if target_named else ("FAILOVER",)
            assert conn.call(*command).raw == b"+OK\r\n"
        try:
            wait_for(lambda: state(master) == "no-failover", timeout=20, what="the failover to end")
        except AssertionError as error:
            # What the master waits for: the target's acknowledged offset to reach its own.
            raise AssertionError(f"{error}; master: {master.info('replication')}; "
                                 f"target (port {target.port}): {target.info('replication')}") from None
        writer.join(timeout=30)
    finally:
        stop.set()
        writer.join(timeout=30)
    if not target_named and role(master) == ("slave", sibling.port):
        target, sibling = sibling, target  # any replica: the one that caught up first
    assert role(master) == ("slave", target.port) and role(target) == ("master",)
    # The sibling stays with its master, now a replica: a chain.
    assert role(sibling) == ("slave", master.port)
    # The new master's +CONTINUE named a new id: the sibling reconnects to learn it.
    wait_for(lambda: sync_counters(master)[:2] != before[master][:2], what="the sibling to reconnect")
    wait_caught_up(target, master)
    wait_caught_up(master, sibling)
    # Every write the writer was told OK for is on the new master; the held one was refused.
    oks = [r for r in results if not r.is_error]
    assert oks and all(r.value == i + 1 for i, r in enumerate(oks))
    assert results[-1].is_error and results[-1].raw.startswith(b"-READONLY ")
    with target.raw() as conn:
        assert conn.call("GET", "c").py() == str(len(oks)).encode()
        assert conn.call("SET", "after", "1").raw == b"+OK\r\n"
    wait_caught_up(target, master)
    wait_caught_up(master, sibling)
    ids = {s.info("replication")["master_replid"] for s in (master, target, sibling)}
    assert len(ids) == 1
    # The old master continued with the target, the sibling with the old master: no full sync anywhere.
    full, partial, _ = sync_counters(target)
    assert (full, partial) == (before[target][0], before[target][1] + 1)
    full, partial, _ = sync_counters(master)
    assert (full, partial) == (before[master][0], before[master][1] + 1)
    assert_same_keyspace(target, master)
    assert_same_keyspace(target, sibling)
    return master, target, sibling


TRIOS = [("goblin", "goblin", "goblin"), ("redis", "redis", "redis"), ("goblin", "redis", "goblin"),
         ("redis", "goblin", "redis")]


@pytest.mark.parametrize("kinds", TRIOS, ids=["-".join(t) for t in TRIOS])
def test_failover_to_a_named_replica(make_server, kinds):
    master, target, _ = run_failover(make_server, kinds, target_named=True)
    assert log_has(master, f"Failover target 127.0.0.1:{target.port} is synced, failing over.")
    assert log_has(target, "MASTER MODE enabled (failover request from")


@pytest.mark.parametrize("kinds", TRIOS[:2], ids=["-".join(t) for t in TRIOS[:2]])
def test_failover_to_any_replica(make_server, kinds):
    master, _, _ = run_failover(make_server, kinds, target_named=False)
    assert log_has(master, "FAILOVER requested to any replica.")


@pytest.mark.parametrize("kind", KINDS)
def test_force_fails_over_after_the_timeout(make_server, kind):
    """With FORCE the master hands over at the timeout though the target did not catch up; it stays in
    failover-in-progress while the target cannot answer (never two masters)."""
    master = start(make_server, kind, "master")
    target = start(make_server, kind, "target", master)
    wait_online(master, 1)
    with master.raw() as conn:
        conn.call("SET", "a", "1")
        wait_caught_up(master, target)
        with stopped(target):
            conn.call("SET", "case", "2")  # never acknowledged before the timeout
            assert conn.call("FAILOVER", "TO", "127.0.0.1", target.port, "TIMEOUT", "100", "FORCE").raw == b"+OK\r\n"
            wait_for(lambda: state(master) == "failover-in-progress", what="the timeout")
            assert role(master) == ("slave", target.port)
        wait_for(lambda: state(master) == "no-failover", timeout=20, what="the target to take over")
    assert role(target) == ("master",) and role(master) == ("slave", target.port)
    assert log_has(master, "time out exceeded, failing over.")
    wait_caught_up(target, master)
    assert_same_keyspace(target, master)


@pytest.mark.parametrize("kind", KINDS)
def test_a_refused_psync_failover_rolls_back(make_server, kind):
    """The target (a redis-server whose default user may not PSYNC) refuses: the master aborts, is a master
    again with a new replication id, and both replicas continue from it (+CONTINUE); the write the pause held
    runs."""
    master = start(make_server, kind, "master")
    target = start(make_server, "redis", "target", master)
    sibling = start(make_server, kind, "sibling", master)
    wait_online(master, 2)
    wait_caught_up(master, target)
    wait_caught_up(master, sibling)
    before = sync_counters(master)
    old_id = master.info("replication")["master_replid"]
    with target.raw() as t:
        assert t.call("ACL", "SETUSER", "default", "-psync").raw == b"+OK\r\n"
    with RawConnection(master.port) as writer, master.raw() as conn:
        writer.call("CLIENT", "SETNAME", "writer")
        with stopped(target):
            conn.call("SET", "before", "1")
            assert conn.call("FAILOVER", "TO", "127.0.0.1", target.port).raw == b"+OK\r\n"
            writer.send_command("SET", "foo", "bar")
            wait_for(lambda: held(conn, "writer"), what="the SET held by the failover's pause")
            assert conn.call("EXISTS", "foo").py() == 0
        try:
            wait_for(lambda: state(master) == "no-failover", timeout=20, what="the failover to end")
        except AssertionError as error:
            # What the master waits for: the target's acknowledged offset to reach its own.
            raise AssertionError(f"{error}; master: {master.info('replication')}; "
                                 f"target: {target.info('replication')}") from None
        assert writer.read_reply(timeout=10).raw == b"+OK\r\n"
    with target.raw() as t:
        t.call("ACL", "SETUSER", "default", "+psync")
    assert role(master) == ("master",)
    assert log_has(master, "Failover target rejected psync request")
    info = master.info("replication")
    assert info["master_replid"] != old_id and info["master_replid2"] == old_id
    wait_for(lambda: sync_counters(master)[:2] != before[:2], what="the replicas to reconnect")
    wait_caught_up(master, target)
    wait_caught_up(master, sibling)
    full, partial, _ = sync_counters(master)
    assert (full, partial) == (before[0], before[1] + 2)
    assert_same_keyspace(master, target)
    assert_same_keyspace(master, sibling)
