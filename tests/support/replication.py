"""Shared by the replication tests: starting goblin-server or redis-server nodes, stopping a process for a while,
its log, a master's offset and sync counters, waiting for a replica to catch up, a seeded random write stream of every type, a server's whole keyspace read back for comparison, line reads
on a raw replication link, and a scripted fake master."""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
from contextlib import contextmanager

from support.rdb_data import read_value, scan_keys
from support.resp import RawConnection
from support.server import REFERENCE_BINARY, goblin_binary, wait_for

FAR_MS = 4102444800000  # 2100-01-01


# ---- nodes ---------------------------------------------------------------------------------------------------

def start_node(make_server, kind: str, name: str, master=None, **options):
    """A goblin-server or redis-server (kind) over TCP, with disk-based full syncs unless options say otherwise;
    master's replica when master is given."""
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    extra = ["--replicaof", "127.0.0.1", str(master.port)] if master is not None else []
    return make_server(binary=binary, name=f"{kind}-{name}", unix=False,
                       options={"repl-diskless-sync": "no", **options}, extra_args=extra)


@contextmanager
def stopped(server):
    """server's process stopped (SIGSTOP): it reads nothing and acknowledges nothing until it resumes."""
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)


def log_has(server, text: str) -> bool:
    return text in server.logs(limit=1_000_000)


# ---- offsets -------------------------------------------------------------------------------------------------

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

# A script whose redis.set_repl sends writes to the AOF, the replicas, both or neither.
SET_REPL_SCRIPT = ("redis.set_repl(redis.REPL_AOF) redis.call('set', 'aof-only', '1') redis.call('publish', 'c', 'x') "
                   "redis.set_repl(redis.REPL_REPLICA) redis.call('set', 'replica-only', '1') "
                   "redis.call('publish', 'c', 'y') redis.set_repl(redis.REPL_NONE) redis.call('set', 'nowhere', '1') "
                   "redis.set_repl(redis.REPL_ALL) redis.call('set', 'everywhere', '1')")

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


def evict_some(master, conn: RawConnection):
    """A phase of evictions under a maxmemory just above the master's use: they reach replicas as deletions."""
    used = int(master.info("memory")["used_memory"])
    conn.pipeline([("CONFIG", "SET", "maxmemory-policy", "allkeys-random"),
                   ("CONFIG", "SET", "maxmemory", used + 2_000_000)])
    send_all(conn, [("SET", f"filler:{i}", "y" * 1000) for i in range(6000)])
    conn.call("CONFIG", "SET", "maxmemory", 0)
    assert int(master.info("stats")["evicted_keys"]) > 0, "the eviction phase evicted nothing"


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
    # A key due within a second may have been alive for one read and gone for the other.
    horizon = time.time() * 1000 + 1000
    for state in (expected, actual):
        for name in [name for name, (_, _, expire_at) in state.items() if 0 <= expire_at < horizon]:
            del state[name]
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


# ---- raw links -------------------------------------------------------------------------------------------------

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


# ---- a fake master ---------------------------------------------------------------------------------------------

class FakeMaster:
    """A TCP server that answers a replica's handshake and then runs `serve(conn, attempt)` for each of its
    connections (attempt counts them from 0); every command the replica sent is kept in `commands`."""

    REPLID = "f" * 40

    def __init__(self, serve):
        self.serve = serve
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.commands: list[list[bytes]] = []
        self.attempts = 0
        self.failures: list[str] = []
        self.psyncs: list[list[bytes]] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            attempt = self.attempts
            try:
                with conn:
                    conn.settimeout(10)
                    reader = conn.makefile("rb")
                    self.serve(self, conn, reader, attempt)
            except Exception as exc:  # a replica that hangs up mid-handshake is part of some scenarios
                self.failures.append(repr(exc))
            self.attempts += 1

    def read_command(self, reader) -> list[bytes]:
        header = reader.readline()
        assert header.startswith(b"*"), header
        argv = []
        for _ in range(int(header[1:])):
            size = int(reader.readline()[1:])
            argv.append(reader.read(size + 2)[:-2])
        self.commands.append(argv)
        return argv

    def handshake(self, conn, reader) -> list[bytes]:
        """Answers until PSYNC, which it returns."""
        while True:
            argv = self.read_command(reader)
            if argv[0].upper() == b"PSYNC":
                return argv
            conn.sendall(b"+PONG\r\n" if argv[0].upper() == b"PING" else b"+OK\r\n")

    def close(self):
        self.listener.close()
