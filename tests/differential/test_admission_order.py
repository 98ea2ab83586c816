"""Which refusal a command gets when several apply at once, side by side with redis-server.

Redis checks a command in a fixed order before it runs it (processCommand): arity,
authentication, a command MULTI may not hold, maxmemory, MISCONF, min-replicas-to-write, a
read-only replica, the subscribed context, replica-serve-stale-data, loading, a busy script, a
monitor touching the keyspace, then CLIENT PAUSE and MULTI's queue. Each scenario below puts both
servers where two or more of these apply and compares every reply byte for byte. The commands
EXEC runs were judged when they were queued and are not judged again.

Where Redis 7.0 (the reference here) and 7.2 differ, the scenarios keep out of the difference:
7.2 also refuses writes with MISCONF on a replica, 7.0 does not, so MISCONF is only tried on a
master.
"""

import os
import re

import pytest

from support.server import REFERENCE_BINARY, ServerProcess, stop_and_check, wait_for

PASSWORD = "admission-secret"
MONITOR_LINE = re.compile(rb"^\+\d+\.\d+ \[")


def start_pair(server_binary, options):
    servers = []
    try:
        for binary, name in ((server_binary, "goblin-order"), (REFERENCE_BINARY, "reference-order")):
            servers.append(ServerProcess(binary, name=name, unix=False, options=options).start())
    except Exception:
        for srv in servers:
            stop_and_check(srv)
        raise
    return servers


@pytest.fixture
def compare(server_binary):
    """compare(options, scenario): runs scenario(server) -> [raw reply bytes] on goblin-server and
    redis-server started with the same options, and asserts the two lists are equal."""
    started = []

    def run(options, scenario):
        goblin, reference = start_pair(server_binary, options)
        started.extend([goblin, reference])
        expected = scenario(reference)
        got = scenario(goblin)
        assert len(got) == len(expected)
        for i, (mine, theirs) in enumerate(zip(got, expected)):
            assert mine == theirs, f"reply {i}: goblin {mine!r}, redis-server {theirs!r}"

    yield run
    for srv in started:
        stop_and_check(srv)


def authenticated(srv):
    conn = srv.raw()
    assert conn.call("AUTH", PASSWORD).raw == b"+OK\r\n"
    return conn


def monitor_call(conn, *args):
    """The reply of a command sent by a monitor, past the lines it is fed meanwhile."""
    conn.send_command(*args)
    while True:
        reply = conn.read_reply()
        if not MONITOR_LINE.match(reply.raw):
            return reply


def test_while_a_script_is_busy(compare):
    """NOAUTH before BUSY, the subscribed context before BUSY, BUSY before MULTI's queue and
    before a monitor's refusal; EXEC refused for BUSY ends its transaction."""
    def scenario(srv):
        subscriber = authenticated(srv)
        subscriber.call("SUBSCRIBE", "news")
        in_multi = authenticated(srv)
        in_multi.call("MULTI")
        monitor = authenticated(srv)
        monitor.call("MONITOR")
        runner = authenticated(srv)
        runner.send_command("EVAL", "while true do end", "0")
        probe = authenticated(srv)
        wait_for(lambda: probe.call("PING").raw.startswith(b"-BUSY"), what="the script to be busy")
        stranger = srv.raw()
        replies = [
            stranger.call("GET", "k"),
            stranger.call("PING"),
            probe.call("GET", "k"),
            subscriber.call("GET", "k"),
            subscriber.call("PING"),
            in_multi.call("GET", "k"),
            in_multi.call("EXEC"),
            in_multi.call("GET", "k"),
            monitor_call(monitor, "GET", "k"),
            monitor_call(monitor, "PUBLISH", "news", "x"),
        ]
        assert probe.call("SCRIPT", "KILL").raw == b"+OK\r\n"
        assert runner.read_reply().is_error
        replies += [monitor_call(monitor, "GET", "k"), monitor_call(monitor, "PUBLISH", "news", "x")]
        return [r.raw for r in replies]

    compare({"requirepass": PASSWORD, "busy-reply-threshold": "50"}, scenario)


def test_on_a_replica_whose_master_is_down(compare):
    """READONLY before the subscribed context, the subscribed context before MASTERDOWN,
    MASTERDOWN before MULTI's queue; a write refused in MULTI aborts its EXEC."""
    def scenario(srv):
        conn = srv.raw()
        # Set here: the harness's start-up PING would be refused.
        assert conn.call("CONFIG", "SET", "replica-serve-stale-data", "no").raw == b"+OK\r\n"
        subscriber = srv.raw()
        subscriber.call("SUBSCRIBE", "news")
        replies = [
            conn.call("SET", "k", "v"),
            conn.call("GET", "k"),
            conn.call("PING"),
            subscriber.call("SET", "k", "v"),
            subscriber.call("GET", "k"),
            subscriber.call("PING"),
            conn.call("MULTI"),
            conn.call("GET", "k"),
            conn.call("SET", "k", "v"),
            conn.call("EXEC"),
        ]
        return [r.raw for r in replies]

    # Port 1 refuses every connection: the link stays down.
    compare({"replicaof": "127.0.0.1 1"}, scenario)


def test_on_a_replica_over_maxmemory(compare):
    """With replica-ignore-maxmemory no a replica refuses for memory before it refuses a write
    as read-only; a read is refused for the stale link only."""
    def scenario(srv):
        conn = srv.raw()
        assert conn.call("CONFIG", "SET", "replica-serve-stale-data", "no").raw == b"+OK\r\n"
        replies = [conn.call("SET", "k", "v"), conn.call("GET", "k"), conn.call("LPUSH", "l", "x")]
        return [r.raw for r in replies]

    compare({"replicaof": "127.0.0.1 1", "replica-ignore-maxmemory": "no", "maxmemory": "1"},
            scenario)


def test_without_enough_good_replicas(compare):
    """OOM before NOREPLICAS, NOREPLICAS before the subscribed context and before MULTI's queue."""
    def scenario(srv):
        conn = srv.raw()
        subscriber = srv.raw()
        subscriber.call("SUBSCRIBE", "news")
        replies = [conn.call("SET", "k", "v"), subscriber.call("SET", "k", "v"),
                   conn.call("MULTI"), conn.call("SET", "k", "v"), conn.call("GET", "k"),
                   conn.call("EXEC"), conn.call("CONFIG", "SET", "maxmemory", "1"),
                   conn.call("SET", "k", "v"), conn.call("GET", "k"),
                   conn.call("CONFIG", "SET", "maxmemory", "0")]
        return [r.raw for r in replies]

    compare({"min-replicas-to-write": "1", "min-replicas-max-lag": "10"}, scenario)


def test_after_a_failed_background_save(compare):
    """MISCONF refuses writes and PING; OOM comes before it, NOREPLICAS after it."""
    def scenario(srv):
        conn = srv.raw()
        # A folder where the snapshot should go: the save cannot rename its file into place.
        os.makedirs(os.path.join(srv.dir, "dump.rdb", "blocked"), exist_ok=True)
        assert conn.call("SET", "k", "v").raw == b"+OK\r\n"
        conn.call("BGSAVE")
        wait_for(lambda: srv.info("persistence").get("rdb_bgsave_in_progress") == "0"
                 and srv.info("persistence").get("rdb_last_bgsave_status") == "err",
                 timeout=30, what="the background save to fail")
        replies = [conn.call("SET", "k", "w"), conn.call("PING"), conn.call("GET", "k"),
                   conn.call("CONFIG", "SET", "min-replicas-to-write", "1"),
                   conn.call("SET", "k", "w"),
                   conn.call("CONFIG", "SET", "min-replicas-to-write", "0"),
                   conn.call("CONFIG", "SET", "maxmemory", "1"),
                   conn.call("SET", "k", "w"), conn.call("PING"),
                   conn.call("CONFIG", "SET", "maxmemory", "0")]
        return [r.raw for r in replies]

    compare({"save": "3600 1", "min-replicas-max-lag": "10"}, scenario)


def test_inside_multi_over_maxmemory(compare):
    """A command MULTI may not hold is refused as such before memory is looked at."""
    def scenario(srv):
        conn = srv.raw()
        replies = [conn.call("SET", "k", "v"), conn.call("CONFIG", "SET", "maxmemory", "1"),
                   conn.call("MULTI"), conn.call("SAVE"), conn.call("GET", "k"), conn.call("EXEC"),
                   conn.call("MULTI"), conn.call("EXEC"),
                   conn.call("CONFIG", "SET", "maxmemory", "0")]
        return [r.raw for r in replies]

    compare({}, scenario)


def test_a_monitor_may_not_touch_the_keyspace(compare):
    def scenario(srv):
        monitor = srv.raw()
        replies = [monitor.call("MONITOR"), monitor.call("GET", "k"), monitor.call("SET", "k", "v"),
                   monitor.call("PUBLISH", "news", "x"), monitor.call("PING")]
        return [r.raw for r in replies]

    compare({}, scenario)


def test_commands_exec_runs_are_not_judged_again(compare):
    """A transaction that subscribes runs the read queued after the SUBSCRIBE."""
    def scenario(srv):
        conn = srv.raw()
        replies = [conn.call("SET", "k", "v"), conn.call("MULTI"), conn.call("SUBSCRIBE", "news"),
                   conn.call("GET", "k"), conn.call("EXEC"), conn.call("GET", "k")]
        return [r.raw for r in replies]

    compare({}, scenario)


def test_a_protected_command_before_authentication(compare):
    """DEBUG refused by enable-debug-command before NOAUTH, after arity."""
    def scenario(srv):
        conn = srv.raw()
        replies = [conn.call("DEBUG"), conn.call("DEBUG", "SLEEP", "0"), conn.call("GET", "k"),
                   conn.call("AUTH", PASSWORD), conn.call("DEBUG", "SLEEP", "0")]
        return [r.raw for r in replies]

    compare({"requirepass": PASSWORD, "enable-debug-command": "no"}, scenario)
