"""What a replica counts and expires of its own: the command statistics of the commands its master sends
(calls, rejected_calls, failed_calls), and the deadlines of keys on a writable replica (replica-read-only no).

Redis 7's replica never expires its master's keys: a key past its deadline reads as missing but stays stored
until the master's DEL comes. The keys its own clients write with deadlines are its alone, and its cron
expires them; a write of its own that meets an expired key deletes it first. Every scenario runs against
Debian's redis-server 7.0 as well, master and replica of one kind, so the counts expected are Redis's.
"""

from __future__ import annotations

import pytest

from support.replication import master_offset, start_node, wait_caught_up
from support.server import wait_for

KINDS = ("goblin", "redis")
# No PING in the stream: a PING from the master would be one call more on the replica.
QUIET = {"repl-ping-replica-period": "3600"}


def pair(make_server, kind: str, **replica_options):
    master = start_node(make_server, kind, "master", **QUIET)
    replica = start_node(make_server, kind, "replica", master, **{**QUIET, **replica_options})
    wait_caught_up(master, replica)
    return master, replica


def command_stats(server, names) -> dict:
    """{command: (calls, rejected_calls, failed_calls)} for names, (0, 0, 0) for a command never called."""
    stats = {}
    info = server.info("commandstats")
    for name in names:
        fields = dict(item.split("=") for item in info.get(f"cmdstat_{name}", "").split(",") if item)
        stats[name] = tuple(int(fields.get(f, 0)) for f in ("calls", "rejected_calls", "failed_calls"))
    return stats


def counted(server, field: str, section: str = "stats") -> int:
    return int(server.info(section).get(field, 0))


@pytest.mark.parametrize("kind", KINDS)
def test_a_replica_counts_its_master_s_commands(make_server, kind):
    """Each command of the stream is a call on the replica, a transaction's commands and EXEC included; one that
    fails there (the replica's own key is of another type) is a failed call and an unexpected error reply, not
    a rejected one. The replica's clients refused with READONLY are its rejected calls."""
    master, replica = pair(make_server, kind, **{"replica-read-only": "no"})
    with master.raw() as m, replica.raw() as r:
        assert r.call("CONFIG", "RESETSTAT").raw == b"+OK\r\n"
        assert r.call("RPUSH", "clash", "x").raw == b":1\r\n"  # the replica's own key
        m.call("SET", "a", "1")
        m.call("INCR", "a")
        m.pipeline([("MULTI",), ("SET", "b", "2"), ("INCR", "b"), ("EXEC",)])
        assert m.call("INCR", "clash").raw == b":1\r\n"  # a string on the master, a list on the replica
        m.call("DEL", "nothing")  # deletes nothing: not sent at all
        wait_caught_up(master, replica)
        assert r.call("LRANGE", "clash", 0, -1).raw == b"*1\r\n$1\r\nx\r\n"
        assert command_stats(replica, ["set", "incr", "multi", "exec", "rpush", "del", "select"]) == {
            "set": (2, 0, 0), "incr": (3, 0, 1), "multi": (1, 0, 0), "exec": (1, 0, 0), "rpush": (1, 0, 0),
            "del": (0, 0, 0), "select": (1, 0, 0)}
        assert replica.info("errorstats") == {"errorstat_WRONGTYPE": "count=1"}
        assert counted(replica, "total_error_replies") == 1
        assert counted(replica, "unexpected_error_replies") == 1
        # Read-only again: the replica's own writes are refused before they run.
        assert r.call("CONFIG", "SET", "replica-read-only", "yes").raw == b"+OK\r\n"
        assert r.call("SET", "a", "2").raw.startswith(b"-READONLY ")
        assert r.call("INCR", "a").raw.startswith(b"-READONLY ")
        m.call("INCR", "a")
        wait_caught_up(master, replica)
        assert command_stats(replica, ["set", "incr"]) == {"set": (2, 1, 0), "incr": (4, 1, 1)}
        assert replica.info("errorstats") == {"errorstat_READONLY": "count=2", "errorstat_WRONGTYPE": "count=1"}
        assert counted(replica, "unexpected_error_replies") == 1
        assert r.call("GET", "a").raw == b"$1\r\n3\r\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_writable_replica_expires_only_the_keys_its_clients_wrote(make_server, kind):
    """The master expires nothing (active expiry off, no reads): its key past its deadline stays on the replica,
    hidden from reads, while the replica's own keys with earlier or later deadlines go by its cron, counted in
    expired_keys. A key whose deadline the replica's client removed again stays."""
    master, replica = pair(make_server, kind, **{"replica-read-only": "no"})
    with master.raw() as m, replica.raw() as r:
        assert m.call("DEBUG", "SET-ACTIVE-EXPIRE", "0").raw == b"+OK\r\n"
        m.call("SET", "from-master", "v", "PX", "30")
        m.call("SET", "master-lasting", "v")
        wait_caught_up(master, replica)
        # Deadlines given by the replica's clients, in several ways; the last ones come after the master's key's.
        assert r.call("SET", "own-set", "v", "PX", "60").raw == b"+OK\r\n"
        assert r.call("RPUSH", "own-list", "a", "b").raw == b":2\r\n"
        assert r.call("PEXPIRE", "own-list", "80").raw == b":1\r\n"
        assert r.call("SET", "own-kept", "v", "PX", "80").raw == b"+OK\r\n"
        assert r.call("PERSIST", "own-kept").raw == b":1\r\n"
        assert r.call("PEXPIRE", "master-lasting", "100").raw == b":1\r\n"  # the master's key, the replica's deadline
        wait_for(lambda: counted(replica, "expired_keys") == 3, what="the replica's cron to expire its own keys")
        assert r.call("DBSIZE").raw == b":2\r\n"  # from-master and own-kept
        assert r.call("EXISTS", "own-set", "own-list", "master-lasting").raw == b":0\r\n"
        assert r.call("GET", "own-kept").raw == b"$1\r\nv\r\n"
        # The master's key: its deadline passed before the others', and the cron left it.
        assert r.call("GET", "from-master").raw == b"$-1\r\n"
        assert r.call("EXISTS", "from-master").raw == b":0\r\n"
        assert counted(replica, "expired_keys") == 3
        assert r.call("INFO", "keyspace").py().decode().split("\r\n")[1] == "db0:keys=2,expires=1,avg_ttl=0"


@pytest.mark.parametrize("kind", KINDS)
def test_a_writable_replica_s_own_write_deletes_the_expired_key_it_meets(make_server, kind):
    """A write of the replica's client on a key past its deadline finds no key (the expired one is deleted and
    counted), while reads only hide it; the master's later DEL of that key finds nothing."""
    master, replica = pair(make_server, kind, **{"replica-read-only": "no"})
    with master.raw() as m, replica.raw() as r:
        assert m.call("DEBUG", "SET-ACTIVE-EXPIRE", "0").raw == b"+OK\r\n"
        m.call("SET", "k", "old", "PX", "30")
        m.call("SET", "other", "old", "PX", "30")
        wait_caught_up(master, replica)
        wait_for(lambda: r.call("PTTL", "k").raw == b":-2\r\n", what="the deadline to pass")
        assert r.call("GET", "k").raw == b"$-1\r\n"
        assert r.call("DBSIZE").raw == b":2\r\n"
        assert r.call("RPUSH", "k", "new").raw == b":1\r\n"  # a string would answer WRONGTYPE
        assert counted(replica, "expired_keys") == 1
        assert r.call("DBSIZE").raw == b":2\r\n"
        assert r.call("LRANGE", "k", 0, -1).raw == b"*1\r\n$3\r\nnew\r\n"
        # The master's read expires both: its DELs reach the replica, and remove the list the replica wrote.
        assert m.call("GET", "other").raw == b"$-1\r\n"
        assert m.call("GET", "k").raw == b"$-1\r\n"
        offset = master_offset(master)
        wait_for(lambda: int(replica.info("replication")["slave_repl_offset"]) >= offset, what="the DELs")
        assert r.call("DBSIZE").raw == b":0\r\n"
        assert counted(replica, "expired_keys") == 1
