"""MIGRATE against redis-server's: every scenario runs twice, from goblin-server and from Debian's
redis-server 7.0, each moving keys to its own target, and the two sources' replies must be the same bytes and
the two targets must end up with the same data. Targets are redis-server and goblin-server; sources are
both, so every direction goblin->redis, redis->goblin and goblin->goblin is covered.

Then what only a clock or a socket shows: a target that does not listen, one that never answers and one that
never accepts each cost at most the call's timeout (Redis waits twice the timeout for the last); the
connection is kept for the next MIGRATE (SELECT sent only when the database changes) and closed after 10 s
unused; a cached connection the target dropped is replaced within the call. MIGRATE is logged as DEL of the
keys it moved, announced as `del` events, seen by WATCH and by client-side caching, and its passwords are
redacted in MONITOR and SLOWLOG.
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from support.aof import incr_commands
from support.rdb_data import read_value, run, scan_keys
from support.server import REFERENCE_BINARY, goblin_binary, wait_for

GOBLIN = "goblin"
REDIS = "redis"


def without_times(kind: str, value):
    """A value as read_value reads it, without the times of a stream's groups (each source ran the
    commands at its own moment): delivery times of pending entries, consumers' seen times."""
    if kind != "stream":
        return value
    entries, info = value
    for group in info[b"groups"].values():
        group[b"pending"] = [(p[0], p[1], p[3]) for p in group[b"pending"]]
        for consumer in group[b"consumers"].values():
            consumer.pop(b"seen-time")
            consumer[b"pending"] = [(p[0], p[2]) for p in consumer[b"pending"]]
    return entries, info


def state(conn, db: int) -> dict:
    """{key: (type, value without times, has a deadline)} of one database."""
    run(conn, [("SELECT", db)])
    out = {}
    for key in scan_keys(conn):
        kind = conn.call("TYPE", key).value.decode()
        out[key] = (kind, without_times(kind, read_value(conn, kind, key)), conn.call("PTTL", key).value > 0)
    run(conn, [("SELECT", 0)])
    return out


class Route:
    """A source and the target it migrates to."""

    def __init__(self, source, target):
        self.source, self.target = source, target
        self.conn = source.raw()
        self.target_conn = target.raw()

    def migrate(self, *args, key=None, db=0, timeout=5000):
        """MIGRATE to the target; args after the timeout."""
        return self.conn.call("MIGRATE", "127.0.0.1", self.target.port, key if key is not None else "", db,
                              timeout, *args, timeout=30)

    def close(self):
        self.conn.close()
        self.target_conn.close()


@pytest.fixture(params=[(GOBLIN, REDIS), (REDIS, GOBLIN), (GOBLIN, GOBLIN)], ids=lambda p: f"{p[0]}-to-{p[1]}")
def routes(request, make_server):
    """(route under test, the same route with redis-server as the source): the first's source is goblin or
    redis-server, its target goblin or redis-server; the second always goes redis-server -> redis-server."""
    source_kind, target_kind = request.param
    binaries = {GOBLIN: goblin_binary(), REDIS: REFERENCE_BINARY}

    def server(kind, name):
        return make_server(name=name, binary=binaries[kind], unix=kind == GOBLIN)

    tested = Route(server(source_kind, "source"), server(target_kind, "target"))
    reference = Route(server(REDIS, "reference-source"), server(REDIS, "reference-target"))
    yield tested, reference
    tested.close()
    reference.close()


def both(routes, setup, call):
    """Runs setup (commands) on both sources, then call(route) on both; the replies must be the same bytes.
    Returns the tested route's reply."""
    tested, reference = routes
    for route in (tested, reference):
        run(route.conn, setup)
    replies = [call(route) for route in (tested, reference)]
    assert replies[0].raw == replies[1].raw, f"{replies[0].raw!r} but redis-server replies {replies[1].raw!r}"
    return replies[0]


def assert_same_targets(routes, db: int = 0):
    tested, reference = routes
    assert state(tested.target_conn, db) == state(reference.target_conn, db)
    assert state(tested.conn, db) == state(reference.conn, db)


EVERY_TYPE = [("SET", "s", "value"), ("SET", "n", "12345"), ("RPUSH", "l", *range(200)), ("SADD", "set", "a", "b"),
              ("SADD", "ints", 1, 2, 3), ("ZADD", "z", 1, "a", 2.5, "b"), ("HSET", "h", "f", "v", "g", "w"),
              ("XADD", "st", "1-1", "f", "v"), ("XGROUP", "CREATE", "st", "g", "0"),
              ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "st", ">"), ("SET", "big", "x" * 200000),
              ("PEXPIRE", "l", 100000000)]
EVERY_KEY = ["s", "n", "l", "set", "ints", "z", "h", "st", "big"]


def test_a_key_moves_with_its_ttl_and_leaves_the_source(routes):
    tested, _ = routes
    reply = both(routes, [("SET", "k", "v", "PX", 100000)], lambda r: r.migrate(key="k", db=3))
    assert reply.raw == b"+OK\r\n"
    assert tested.conn.call("EXISTS", "k").value == 0
    run(tested.target_conn, [("SELECT", 3)])
    assert tested.target_conn.call("GET", "k").value == b"v"
    assert 90000 < tested.target_conn.call("PTTL", "k").value <= 100000
    # The largest timeout a long holds, and a timeout of 0 (1000 ms, as in Redis).
    for key, timeout in (("k2", 2 ** 63 - 1), ("k3", 0), ("k4", -5)):
        assert both(routes, [("SET", key, "v")], lambda r: r.migrate(key=key, db=3, timeout=timeout)).raw == \
            b"+OK\r\n"
    assert_same_targets(routes, 3)


def test_every_type_moves_with_keys_and_copy_keeps_the_source(routes):
    tested, _ = routes
    both(routes, EVERY_TYPE, lambda r: r.conn.call("DBSIZE"))
    expected = {}
    for key in EVERY_KEY:
        kind = tested.conn.call("TYPE", key).value.decode()
        expected[key] = without_times(kind, read_value(tested.conn, kind, key))
    reply = both(routes, [], lambda r: r.migrate("COPY", "KEYS", *EVERY_KEY, "missing", db=1))
    assert reply.raw == b"+OK\r\n"
    assert tested.conn.call("EXISTS", *EVERY_KEY).value == len(EVERY_KEY)
    moved = state(tested.target_conn, 1)
    assert {key.decode(): value for key, (kind, value, _) in moved.items()} == expected
    assert moved[b"l"][2] and not moved[b"s"][2]
    assert_same_targets(routes, 1)
    # The keys exist there now: without REPLACE the target refuses each, and the source keeps them.
    reply = both(routes, [], lambda r: r.migrate("KEYS", "s", "z", db=1))
    assert reply.raw == b"-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
    assert tested.conn.call("EXISTS", "s", "z").value == 2
    reply = both(routes, [("SET", "s", "new")], lambda r: r.migrate("REPLACE", "KEYS", *EVERY_KEY, db=1))
    assert reply.raw == b"+OK\r\n"
    assert tested.conn.call("EXISTS", *EVERY_KEY).value == 0
    run(tested.target_conn, [("SELECT", 1)])
    assert tested.target_conn.call("GET", "s").value == b"new"
    assert_same_targets(routes, 1)


def test_an_error_for_one_key_still_moves_the_others(routes):
    tested, _ = routes
    for route in routes:
        run(route.target_conn, [("SET", "b", "taken")])
    reply = both(routes, [("SET", "a", "1"), ("SET", "b", "2"), ("SET", "c", "3")],
                 lambda r: r.migrate("KEYS", "a", "b", "c"))
    assert reply.raw == b"-ERR Target instance replied with error: BUSYKEY Target key name already exists.\r\n"
    assert [tested.conn.call("EXISTS", k).value for k in "abc"] == [0, 1, 0]
    assert_same_targets(routes)


@pytest.mark.parametrize("call", [
    ("MIGRATE", "h", "1", "k", "0", "10", "KEYS", "a"),
    ("MIGRATE", "h", "1", "", "0", "10", "AUTH"),
    ("MIGRATE", "h", "1", "", "0", "10", "AUTH2", "user"),
    ("MIGRATE", "h", "1", "", "0", "10", "BOGUS"),
    ("MIGRATE", "h", "1", "", "0", "10", "COPY", "BOGUS", "KEYS", "a"),
    ("MIGRATE", "h", "1", "", "0", "ten"),
    ("MIGRATE", "h", "1", "", "zero", "10"),
    ("MIGRATE", "h", "1", "", "zero", "ten"),
    ("MIGRATE", "h", "1", "", "0", "99999999999999999999"),
    ("MIGRATE", "h", "1", "", "0", "10", "KEYS"),
    ("MIGRATE", "h", "1", "", "0", "10", "KEYS", "missing"),
    ("MIGRATE", "h", "1", "missing", "0", "10", "COPY", "REPLACE", "AUTH2", "u", "p"),
    ("MIGRATE", "h", "1", "k", "0"),
    ("MIGRATE",),
], ids=lambda c: " ".join(c[4:]) or "no arguments")
def test_bad_calls_and_missing_keys_reply_as_redis(make_server, call):
    goblin = make_server()
    redis = make_server(name="redis-source", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g, redis.raw() as r:
        assert g.call(*call).raw == r.call(*call).raw


def target_command_calls(route, command: str) -> int:
    stats = route.target.info("commandstats").get(f"cmdstat_{command}", "calls=0")
    return int(stats.split(",")[0].split("=")[1])


def test_the_connection_is_kept_and_select_sent_only_when_the_database_changes(routes):
    tested, reference = routes
    selects = []
    for i, db in enumerate((0, 0, 4, 4, 0)):
        reply = both(routes, [("SET", f"k{i}", "v")], lambda r, i=i, db=db: r.migrate(key=f"k{i}", db=db))
        assert reply.raw == b"+OK\r\n"
        both(routes, [], lambda r, db=db: r.migrate(key="nothing", db=db))  # NOKEY: no connection needed
        selects.append([target_command_calls(route, "select") for route in routes])
    assert [s[0] for s in selects] == [s[1] for s in selects] == [1, 1, 2, 2, 3]
    assert tested.source.info("stats")["migrate_cached_sockets"] == "1"
    # A target error forgets the database: the next MIGRATE selects it again.
    for route in routes:
        run(route.target_conn, [("SET", "busy", "x")])
    assert both(routes, [("SET", "busy", "y")], lambda r: r.migrate(key="busy")).is_error
    assert both(routes, [("SET", "k", "v")], lambda r: r.migrate(key="k")).raw == b"+OK\r\n"
    assert [target_command_calls(route, "select") for route in routes] == [4, 4]
    assert target_command_calls(tested, "restore") == target_command_calls(reference, "restore") == 7


def test_a_connection_the_target_dropped_is_replaced_within_the_call(routes):
    tested, _ = routes
    both(routes, [("SET", "a", "1")], lambda r: r.migrate(key="a"))
    for route in routes:
        run(route.target_conn, [("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")])
        route.target_conn.close()
        route.target_conn = route.target.raw()
    reply = both(routes, [("SET", "b", "2")], lambda r: r.migrate(key="b"))
    assert reply.raw == b"+OK\r\n"
    assert tested.target_conn.call("MGET", "a", "b").py() == [b"1", b"2"]


@pytest.mark.parametrize("target_kind", [REDIS, GOBLIN])
def test_auth_and_auth2_reach_a_target_that_requires_them(make_server, target_kind):
    """A redis-server target with an ACL user for AUTH2; a goblin-server target (no ACL users) takes
    AUTH2 with the default user."""
    password = "s3cret"
    user, user_password = ("mover", "pw2") if target_kind == REDIS else ("default", password)
    replies = {}
    for kind, binary in ((GOBLIN, goblin_binary()), (REDIS, REFERENCE_BINARY)):
        source = make_server(name=f"{kind}-source", binary=binary, unix=kind == GOBLIN)
        target = make_server(name="locked-target", binary=REFERENCE_BINARY if target_kind == REDIS else goblin_binary(),
                             unix=target_kind == GOBLIN, options={"requirepass": password}, password=password)
        if target_kind == REDIS:
            with target.raw() as t:
                run(t, [("AUTH", password), ("ACL", "SETUSER", user, "on", f">{user_password}", "~*", "+@all")])
        with source.raw() as conn:
            run(conn, [("SET", "a", "1"), ("SET", "b", "2"), ("SET", "c", "3")])
            m = ("MIGRATE", "127.0.0.1", target.port)
            replies[kind] = [conn.call(*m, "a", 0, 5000).raw,
                             conn.call(*m, "a", 0, 5000, "AUTH", "wrong").raw,
                             conn.call(*m, "a", 0, 5000, "AUTH2", user, "wrong").raw,
                             conn.call(*m, "a", 0, 5000, "AUTH", password).raw,
                             conn.call(*m, "", 0, 5000, "AUTH2", user, user_password, "KEYS", "b", "c").raw]
        with target.raw() as t:
            run(t, [("AUTH", password)])
            assert t.call("MGET", "a", "b", "c").py() == [b"1", b"2", b"3"]
    assert replies[GOBLIN] == replies[REDIS]
    assert replies[GOBLIN][0] == b"-ERR Target instance replied with error: NOAUTH Authentication required.\r\n"
    assert replies[GOBLIN][1].startswith(b"-ERR Target instance replied with error: WRONGPASS")
    assert replies[GOBLIN][3:] == [b"+OK\r\n", b"+OK\r\n"]


# ---- targets that fail --------------------------------------------------------------------------------------

class SilentTarget:
    """Two listeners that never answer: one accepts connections and never reads or writes, the other never
    accepts (its backlog is full), so a connect to it never completes."""

    def __init__(self):
        self.accepting = socket.socket()
        self.accepting.bind(("127.0.0.1", 0))
        self.accepting.listen(16)
        self.full = socket.socket()
        self.full.bind(("127.0.0.1", 0))
        self.full.listen(0)
        self.fillers = []
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            try:
                filler.connect(self.full.getsockname())
            except BlockingIOError:
                pass
            self.fillers.append(filler)
        self.held = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        self.accepting.settimeout(0.1)
        while not self.stopped.is_set():
            try:
                self.held.append(self.accepting.accept()[0])
            except (socket.timeout, OSError):
                pass

    def close(self):
        self.stopped.set()
        self.thread.join()
        for s in [self.accepting, self.full, *self.fillers, *self.held]:
            s.close()


@pytest.fixture
def silent():
    target = SilentTarget()
    yield target
    target.close()


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_target_costs_at_most_the_timeout(make_server, silent):
    goblin = make_server()
    redis = make_server(name="redis-source", binary=REFERENCE_BINARY, unix=False)
    cases = [("not listening", unused_port(), b"-IOERR error or timeout writing to target instance\r\n"),
             ("never answers", silent.accepting.getsockname()[1],
              b"-IOERR error or timeout reading to target instance\r\n"),
             ("never accepts", silent.full.getsockname()[1],
              b"-IOERR error or timeout writing to target instance\r\n")]
    timeout_ms = 400
    with goblin.raw() as g, redis.raw() as r, goblin.raw() as other:
        for conn in (g, r):
            run(conn, [("SET", "k", "v")])
        for what, port, expected in cases:
            replies = []
            for conn in (g, r):
                started = time.monotonic()
                replies.append(conn.call("MIGRATE", "127.0.0.1", port, "k", 0, timeout_ms, timeout=10).raw)
                elapsed = time.monotonic() - started
                if conn is g:
                    assert elapsed < timeout_ms / 1000 + 0.3, f"{what}: MIGRATE took {elapsed:.2f} s"
                    # The server serves again at once, and kept the key.
                    assert other.call("PING", timeout=1).raw == b"+PONG\r\n"
            assert replies == [expected, expected], what
            assert g.call("GET", "k").value == b"v"
        assert goblin.info("stats")["migrate_cached_sockets"] == "0"
        assert g.call("MIGRATE", "no-such-host.invalid", 1, "k", 0, 100).raw == \
            r.call("MIGRATE", "no-such-host.invalid", 1, "k", 0, 100).raw == \
            b"-IOERR error or timeout connecting to the client\r\n"
        # A target that is the server itself cannot answer while it waits: the timeout ends it.
        started = time.monotonic()
        assert g.call("MIGRATE", "127.0.0.1", goblin.port, "k", 0, timeout_ms).raw == cases[1][2]
        assert time.monotonic() - started < timeout_ms / 1000 + 0.3
        assert g.call("GET", "k").value == b"v"


def test_an_unused_connection_is_closed_after_ten_seconds(make_server):
    goblin = make_server()
    target = make_server(name="target", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g:
        run(g, [("SET", "k", "v")])
        assert g.call("MIGRATE", "127.0.0.1", target.port, "k", 0, 1000).raw == b"+OK\r\n"
        used = time.monotonic()
        assert goblin.info("stats")["migrate_cached_sockets"] == "1"
        # (INFO's own connection is one of the target's clients.)
        assert target.info("clients")["connected_clients"] == "2"
        wait_for(lambda: goblin.info("stats")["migrate_cached_sockets"] == "0", timeout=15,
                 what="the idle connection to close")
        assert time.monotonic() - used > 9.5
        wait_for(lambda: target.info("clients")["connected_clients"] == "1", what="the target to see it close")


# ---- what the source records --------------------------------------------------------------------------------

def test_migrate_is_logged_as_del_of_the_moved_keys_as_redis_logs_it(make_server):
    logged = {}
    for kind, binary in ((GOBLIN, goblin_binary()), (REDIS, REFERENCE_BINARY)):
        source = make_server(name=f"{kind}-aof", binary=binary, unix=kind == GOBLIN,
                             options={"appendonly": "yes", "appendfsync": "always"})
        target = make_server(name="target", binary=REFERENCE_BINARY, unix=False)
        with source.raw() as conn, target.raw() as t:
            run(t, [("SET", "taken", "x")])
            m = ("MIGRATE", "127.0.0.1", target.port)
            run(conn, [("SET", "a", "1"), ("SET", "b", "2"), ("SET", "taken", "y"), ("SELECT", 2), ("SET", "c", "3")])
            assert conn.call(*m, "", 0, 5000, "COPY", "KEYS", "c").raw == b"+OK\r\n"
            assert conn.call(*m, "", 0, 5000, "REPLACE", "KEYS", "c", "nothing").raw == b"+OK\r\n"
            run(conn, [("SELECT", 0)])
            assert conn.call(*m, "", 0, 5000, "KEYS", "a", "taken", "b").is_error
            assert conn.call(*m, "nothing", 0, 5000).raw == b"+NOKEY\r\n"
        logged[kind] = incr_commands(source)
    assert logged[GOBLIN] == logged[REDIS]
    assert logged[GOBLIN][-2:] == [(2, b"DEL", b"c"), (0, b"DEL", b"a", b"b")]


def test_migrate_announces_del_and_invalidates_watchers_and_caches(make_server):
    goblin = make_server(options={"notify-keyspace-events": "KEA"})
    target = make_server(name="target", binary=REFERENCE_BINARY, unix=False)
    with goblin.raw() as g, goblin.raw() as events, goblin.raw() as watcher, goblin.raw() as cache:
        run(g, [("SET", "a", "1"), ("SET", "b", "2")])
        assert events.call("PSUBSCRIBE", "__key*@0__:*").py() == [b"psubscribe", b"__key*@0__:*", 1]
        run(watcher, [("WATCH", "a"), ("MULTI",), ("GET", "a")])
        run(cache, [("HELLO", "3"), ("CLIENT", "TRACKING", "ON"), ("GET", "b")])
        assert g.call("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS", "a", "b").raw == b"+OK\r\n"
        got = [events.read_reply(timeout=5).py()[2:] for _ in range(4)]
        assert got == [[b"__keyspace@0__:a", b"del"], [b"__keyevent@0__:del", b"a"],
                       [b"__keyspace@0__:b", b"del"], [b"__keyevent@0__:del", b"b"]]
        assert watcher.call("EXEC").raw == b"*-1\r\n"
        assert cache.read_reply(timeout=5).py() == [b"invalidate", [b"b"]]


def test_monitor_and_slowlog_redact_migrate_passwords_as_redis_does(make_server):
    shown = {}
    for kind, binary in ((GOBLIN, goblin_binary()), (REDIS, REFERENCE_BINARY)):
        source = make_server(name=f"{kind}-source", binary=binary, unix=kind == GOBLIN,
                             options={"slowlog-log-slower-than": "0"})
        with source.raw() as conn, source.raw() as monitor:
            assert monitor.call("MONITOR").raw == b"+OK\r\n"
            calls = [("MIGRATE", "h", "1", "", "0", "10", "AUTH2", "user", "pw", "KEYS", "x"),
                     ("MIGRATE", "h", "1", "", "0", "10", "COPY", "AUTH", "pw", "KEYS", "y"),
                     ("MIGRATE", "h", "1", "", "0", "10", "AUTH2", "only-one"),
                     ("AUTH", "user", "pw")]
            for call in calls:
                conn.call(*call)
            lines = [monitor.read_reply(timeout=5).value.split(b"] ", 1)[1] for _ in calls]
            slowlog = [entry[3] for entry in conn.call("SLOWLOG", "GET", 4).py()]
        shown[kind] = lines, slowlog
    assert shown[GOBLIN] == shown[REDIS]
    assert shown[GOBLIN][0][0].endswith(b'"AUTH2" "(redacted)" "(redacted)" "KEYS" "x"')


def test_redis_py_migrate(make_server):
    goblin = make_server()
    target = make_server(name="target", binary=REFERENCE_BINARY, unix=False, options={"requirepass": "pw"},
                         password="pw")
    client = goblin.client()
    client.set("one", "1")
    client.rpush("many:1", "a", "b")
    client.hset("many:2", mapping={"f": "v"})
    assert client.migrate("127.0.0.1", target.port, "one", 0, 5000, auth="pw") == b"OK"
    assert client.migrate("127.0.0.1", target.port, ["many:1", "many:2", "none"], 0, 5000, copy=True,
                          auth="pw") == b"OK"
    assert client.migrate("127.0.0.1", target.port, ["many:1", "many:2"], 0, 5000, replace=True,
                          auth="pw") == b"OK"
    assert client.migrate("127.0.0.1", target.port, "none", 0, 5000) == b"NOKEY"
    assert client.exists("one", "many:1", "many:2") == 0
    remote = target.client()
    assert remote.get("one") == b"1" and remote.lrange("many:1", 0, -1) == [b"a", b"b"]
    assert remote.hgetall("many:2") == {b"f": b"v"}
    client.close()
    remote.close()
