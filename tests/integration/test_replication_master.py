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

from support.rdb_data import check_rdb, fill, read_value, scan_keys
from support.resp import RawConnection, encode_command
from support.server import REDIS_CLI, REFERENCE_BINARY, goblin_binary, run_until_exit, wait_for

MASTERS = ("goblin", "redis")
FAR_MS = 4102444800000  # 2100-01-01
PING = encode_command("PING")
GETACK = encode_command("REPLCONF", "GETACK", "*")


def start_master(make_server, kind: str, **options):
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    return make_server(binary=binary, name=f"{kind}-master", unix=False,
                       options={"repl-diskless-sync": "no", **options})


def start_replica(make_server, master):
    return make_server(binary=REFERENCE_BINARY, name="redis-replica", unix=False,
                       extra_args=["--replicaof", "127.0.0.1", str(master.port)])


def master_offset(master) -> int:
    return int(master.info("replication")["master_repl_offset"])


def caught_up(master, replica) -> bool:
    info = replica.info("replication")
    return (info.get("master_link_status") == "up"
            and int(info["slave_repl_offset"]) == master_offset(master))


def wait_caught_up(master, replica, timeout: float = 20.0):
    wait_for(lambda: caught_up(master, replica), timeout=timeout, what="the replica to reach the master's offset")


def sync_counters(master) -> tuple:
    stats = master.info("stats")
    return int(stats["sync_full"]), int(stats["sync_partial_ok"]), int(stats["sync_partial_err"])


# ---- the write stream -----------------------------------------------------------------------------------------

def random_writes(rng: random.Random, count: int) -> list:
    """Writes of every type over databases 0, 1 and 5, keys prefixed by their type."""
    def key(kind):
        return f"{kind}:{rng.randrange(12)}"

    def value():
        return rng.choice([str(rng.randrange(-1000, 1000)), f"v{rng.randrange(100)}", "x" * rng.randrange(1, 90)])

    script = ("redis.call('set', KEYS[1], ARGV[1]) "
              "redis.call('rpush', KEYS[2], ARGV[1]) return redis.call('incr', KEYS[3])")
    generators = [
        lambda: ("SET", key("s"), value()),
        lambda: ("SET", key("s"), value(), "EX", rng.randrange(100, 1000)),
        lambda: ("SET", key("s"), value(), "PX", rng.randrange(1, 30)),  # expires during the run
        lambda: ("APPEND", key("s"), value()),
        lambda: ("INCRBY", key("n"), rng.randrange(-50, 50)),
        lambda: ("INCRBYFLOAT", key("f"), f"{rng.uniform(-10, 10):.4f}"),
        lambda: ("SETRANGE", key("s"), rng.randrange(20), value()),
        lambda: ("SETBIT", key("bits"), rng.randrange(500), rng.randrange(2)),
        lambda: ("RPUSH", key("l"), *[value() for _ in range(rng.randrange(1, 5))]),
        lambda: ("LPUSH", key("l"), value()),
        lambda: ("LPOP", key("l")),
        lambda: ("LMOVE", key("l"), key("l"), "LEFT", "RIGHT"),
        lambda: ("LTRIM", key("l"), 0, rng.randrange(2, 30)),
        lambda: ("HSET", key("h"), *[x for _ in range(rng.randrange(1, 4)) for x in (f"f{rng.randrange(20)}", value())]),
        lambda: ("HDEL", key("h"), f"f{rng.randrange(20)}"),
        lambda: ("HINCRBYFLOAT", key("h"), "float", f"{rng.uniform(-5, 5):.3f}"),
        lambda: ("SADD", key("set"), *[str(rng.randrange(40)) for _ in range(rng.randrange(1, 5))]),
        lambda: ("SADD", key("set"), f"m{rng.randrange(40)}"),
        lambda: ("SREM", key("set"), str(rng.randrange(40))),
        lambda: ("SPOP", key("set")),
        lambda: ("SINTERSTORE", key("set"), key("set"), key("set")),
        lambda: ("ZADD", key("z"), *[x for _ in range(rng.randrange(1, 4))
                                     for x in (f"{rng.uniform(-100, 100):.3f}", f"m{rng.randrange(60)}")]),
        lambda: ("ZINCRBY", key("z"), f"{rng.uniform(-3, 3):.2f}", f"m{rng.randrange(60)}"),
        lambda: ("ZPOPMIN", key("z")),
        lambda: ("ZUNIONSTORE", key("z"), 2, key("z"), key("z")),
        lambda: ("GEOADD", key("geo"), f"{rng.uniform(-180, 180):.5f}", f"{rng.uniform(-85, 85):.5f}",
                 f"p{rng.randrange(30)}"),
        lambda: ("PFADD", key("hll"), *[f"e{rng.randrange(5000)}" for _ in range(rng.randrange(1, 8))]),
        lambda: ("XADD", key("st"), "*", "f", value()),
        lambda: ("XADD", key("st"), "MAXLEN", "~", "20", "*", "a", value(), "b", value()),
        lambda: ("XGROUP", "CREATE", key("st"), "g", "0", "MKSTREAM"),
        lambda: ("XREADGROUP", "GROUP", "g", f"c{rng.randrange(3)}", "COUNT", 2, "STREAMS", key("st"), ">"),
        lambda: ("EXPIRE", key(rng.choice("slhz")), rng.randrange(100, 1000)),
        lambda: ("PEXPIREAT", key(rng.choice("slhz")), FAR_MS + rng.randrange(10**6)),
        lambda: ("PERSIST", key(rng.choice("slhz"))),
        lambda: ("DEL", key(rng.choice(["s", "l", "h", "set", "z"]))),
        lambda: ("COPY", key("h"), key("h"), "REPLACE"),
        lambda: ("RENAME", key("l"), key("l")),
        lambda: ("EVAL", script, 3, key("s"), key("l"), key("n"), value()),
        lambda: ("SELECT", rng.choice([0, 0, 1, 5])),
    ]
    commands = []
    while len(commands) < count:
        roll = rng.random()
        if roll < 0.05:
            commands += [("MULTI",), *[rng.choice(generators)() for _ in range(rng.randrange(1, 5))], ("EXEC",)]
        elif roll < 0.052:
            commands.append(("SWAPDB", 1, 5))
        else:
            commands.append(rng.choice(generators)())
    return commands + [("SELECT", 0)]


def send_all(conn: RawConnection, commands, batch: int = 500):
    for start in range(0, len(commands), batch):
        conn.pipeline(commands[start:start + batch], timeout=60)


# ---- reading a keyspace ----------------------------------------------------------------------------------------

def stream_state(conn: RawConnection, key: bytes):
    entries = [(e[0], tuple(e[1])) for e in conn.call("XRANGE", key, "-", "+").py()]
    groups = []
    for group in conn.call("XINFO", "GROUPS", key).py():
        fields = dict(zip(group[0::2], group[1::2]))
        name = fields[b"name"]
        pending = [(p[0], p[1], p[3]) for p in conn.call("XPENDING", key, name, "-", "+", 1000).py()]
        groups.append((name, fields[b"last-delivered-id"], pending))
    return entries, sorted(groups)


def keyspace(conn: RawConnection) -> dict:
    """{(db, key): (type, value, PEXPIRETIME)} of every key of every database."""
    state = {}
    for db in range(16):
        conn.call("SELECT", db)
        for key in scan_keys(conn):
            kind = conn.call("TYPE", key).value.decode()
            if kind == "none":  # expired between SCAN and TYPE
                continue
            value = stream_state(conn, key) if kind == "stream" else read_value(conn, kind, key)
            state[(db, key)] = (kind, value, conn.call("PEXPIRETIME", key).value)
    conn.call("SELECT", 0)
    return state


def assert_same_keyspace(master, replica):
    with master.raw() as m, replica.raw() as r:
        expected, actual = keyspace(m), keyspace(r)
    assert expected, "the master holds no data: the comparison would prove nothing"
    missing = sorted(set(expected) - set(actual))[:10]
    extra = sorted(set(actual) - set(expected))[:10]
    assert not missing and not extra, f"keys missing on the replica {missing}, extra {extra}"
    for name, (kind, value, expire_at) in expected.items():
        r_kind, r_value, r_expire_at = actual[name]
        assert r_kind == kind, f"{name}: {kind} on the master, {r_kind} on the replica"
        assert r_value == value, f"{name}: {value!r:.300} on the master, {r_value!r:.300} on the replica"
        assert (expire_at == -1) == (r_expire_at == -1) and abs(expire_at - r_expire_at) <= 1000, \
            f"{name}: PEXPIRETIME {expire_at} on the master, {r_expire_at} on the replica"


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
        used = int(master.info("memory")["used_memory"])
        conn.pipeline([("CONFIG", "SET", "maxmemory-policy", "allkeys-random"),
                       ("CONFIG", "SET", "maxmemory", used + 2_000_000)])
        send_all(conn, [("SET", f"filler:{i}", "y" * 1000) for i in range(6000)])
        conn.call("CONFIG", "SET", "maxmemory", 0)
        assert int(master.info("stats")["evicted_keys"]) > 0, "the eviction phase evicted nothing"
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

def read_line(link: RawConnection) -> bytes:
    """The next line, skipping the newlines a master sends while a snapshot is made."""
    while True:
        while b"\n" not in link.buf[link.pos:]:
            link._fill(time.monotonic() + link.timeout)
        end = link.buf.index(b"\n", link.pos)
        line = bytes(link.buf[link.pos:end + 1])
        link.pos = end + 1
        if line != b"\n":
            return line


def read_exactly(link: RawConnection, n: int) -> bytes:
    deadline = time.monotonic() + link.timeout
    while len(link.buf) - link.pos < n:
        link._fill(deadline)
    data = bytes(link.buf[link.pos:link.pos + n])
    link.pos += n
    return data


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
    ("FLUSHALL",), ("SET", "end", "1"),
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


def test_the_stream_is_redis_s_byte_for_byte(make_server):
    streams = {}
    for kind in MASTERS:
        master = start_master(make_server, kind)
        link, _, _, _ = attach(master)
        with master.raw() as client:
            client.pipeline(STREAM_COMMANDS)
        streams[kind] = stream_until(link, encode_command("SET", "end", "1")).replace(PING, b"")
        link.close()
    assert streams["goblin"] == streams["redis"]


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

@pytest.mark.parametrize("kind", MASTERS)
def test_redis_cli_rdb_writes_a_file_redis_check_rdb_accepts(make_server, kind, tmp_path):
    master = start_master(make_server, kind)
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
