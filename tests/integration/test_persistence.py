"""Persistence: snapshots (SAVE, BGSAVE, DEBUG RELOAD, SHUTDOWN, save rules), the append-only file in
Redis 7's multi-part layout (appendonlydir/ with a manifest of base and incr files), loading, durability
of acknowledged writes across SIGKILL, damaged files, and Goblin's snapshot checker.

Every state comparison reads the keys back with ordinary commands (`dump_state`): type, OBJECT
ENCODING, the value, PEXPIRETIME (exact: deadlines are absolute) and PTTL (checked against the time
that passed). Expiry deadlines the test sets itself (PEXPIREAT) are also checked against the values
the test chose. Tests marked `goblin` use Goblin's own snapshot format and tools (--check-snapshot,
GOBLIN.SAVE); everything else passes against Debian's redis-server 7.0.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import threading
import time
from typing import NamedTuple

import pytest

from support.expect import err, ok
from support.resp import ConnectionClosed, RawConnection, ReplyTimeout, parse_reply
from support.server import (REFERENCE_BINARY, ServerProcess, goblin_binary, parse_info, run_until_exit,
                            samples_until_loaded, wait_for)

FILLED_DBS = (0, 3, 9)
DUE_MS = 800                      # lifetime of the key that must be expired when the data comes back
BGSAVE_STARTED = b"+Background saving started\r\n"
BGSAVE_RUNNING = err("ERR Background save already in progress")
REWRITE_STARTED = b"+Background append only file rewriting started\r\n"
TORN_COMMAND = b"*3\r\n$3\r\nSET\r\n$4\r\ntorn\r\n$5\r\nva"   # a SET cut in the middle of its value

# Score texts for the small (listpack) sorted set: integers, fractions, -0 and 0, infinities, huge and
# denormal values; members that look like integers.
SMALL_ZSET = ["1", "one", "0.5", "half", "-1.5", "neg", "0", "zero", "-0", "negzero", "inf", "plusinf",
              "-inf", "minusinf", "1e300", "huge", "-1e300", "neghuge", "5e-324", "tiny",
              "2.2250738585072009e-308", "maxdenormal", "0.1", "tenth", "3", "42", "-7", "-3"]

# Encodings the round-trip data set must reach (7.0 names; 7.2 adds listpack sets, which Goblin has).
REQUIRED_ENCODINGS = {"string": {"int", "embstr", "raw"}, "hash": {"listpack", "hashtable"},
                      "set": {"intset", "hashtable"}, "zset": {"listpack", "skiplist"}}


# ---- connections and small helpers ---------------------------------------------------------------------

def flat(pairs):
    return [x for pair in pairs for x in pair]


def run(conn: RawConnection, commands, timeout: float = 30.0) -> list:
    """Pipelines `commands`; fails on any error reply."""
    commands = [tuple(c) for c in commands]
    replies = conn.pipeline(commands, timeout=timeout)
    for cmd, reply in zip(commands, replies):
        assert not reply.is_error, f"{cmd[:3]!r}... -> {reply!r}"
    return replies


def now_ms() -> int:
    return int(time.time() * 1000)


def persistence_info(conn: RawConnection) -> dict:
    reply = conn.call("INFO", "persistence")
    assert reply.kind in "$=", reply
    return parse_info(reply.value)


def wait_bgsave_done(conn: RawConnection, timeout: float = 30.0):
    wait_for(lambda: persistence_info(conn)["rdb_bgsave_in_progress"] == "0", timeout=timeout,
             what="rdb_bgsave_in_progress:0")
    assert persistence_info(conn)["rdb_last_bgsave_status"] == "ok"


def wait_aof_rewrite_done(conn: RawConnection, timeout: float = 30.0):
    def done():
        f = persistence_info(conn)
        return f["aof_rewrite_in_progress"] == "0" and f.get("aof_rewrite_scheduled", "0") == "0"
    wait_for(done, timeout=timeout, what="aof_rewrite_in_progress:0")
    assert persistence_info(conn)["aof_last_bgrewrite_status"] == "ok"


def wait_until_past(deadline_ms: int):
    wait_for(lambda: now_ms() > deadline_ms + 5, timeout=DUE_MS / 1000 + 5, interval=0.01,
             what=f"the clock to pass {deadline_ms}")


def snapshot_path(srv: ServerProcess) -> str:
    """Where the snapshot must be: <dir>/<dbfilename> (the test's settings, Redis's default name)."""
    return os.path.join(srv.dir, srv.options.get("dbfilename") or "dump.rdb")


def kill_server(srv: ServerProcess):
    """SIGKILL and reap; the harness is told the exit was intended."""
    srv.stop_requested = True
    srv.proc.kill()
    srv.proc.wait()


def restart(srv: ServerProcess) -> ServerProcess:
    """SIGKILL (if running), start again with the same settings and dir, and wait until loading is over."""
    srv.restart()

    def loaded():
        with srv.raw() as conn:
            return conn.call("PING").raw == b"+PONG\r\n"
    wait_for(loaded, timeout=60, what="the data set to be loaded")
    return srv


def shutdown(srv: ServerProcess, *args) -> int:
    """SHUTDOWN [args]; returns the exit status once the process is gone."""
    srv.stop_requested = True
    with srv.raw() as conn:
        conn.send_command("SHUTDOWN", *args)
        data = conn.read_until_closed(timeout=30)
    assert data == b"", f"SHUTDOWN {' '.join(args)} replied {data!r}"
    return srv.proc.wait(30)


def start_expecting_refusal(srv: ServerProcess, timeout: float = 20.0) -> str:
    """Starts srv's command line (Unix socket only, so no port can be taken) on whatever its dir holds;
    asserts that the process exits non-zero without ever answering PING with PONG; returns its output."""
    log = os.path.join(srv.dir, "refused.log")
    args = srv.command_line(0)
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=srv.dir)
    served = None
    try:
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            assert time.monotonic() < deadline, f"still running after {timeout}s: {args}"
            try:
                with RawConnection(unix_path=srv.unix_path, timeout=2) as probe:
                    reply = probe.call("PING")
                    if reply.raw == b"+PONG\r\n":
                        served = probe.call("DBSIZE").raw
                        break
            except (OSError, ConnectionClosed, ReplyTimeout):
                pass
            time.sleep(0.005)  # polling interval while waiting for the exit, bounded by the deadline
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    output = open(log, "rb").read().decode("utf-8", "replace")
    assert served is None, f"the server started and served (DBSIZE {served!r}) instead of refusing:\n{output}"
    assert proc.returncode != 0, f"exit status 0 instead of a refusal:\n{output}"
    return output


# ---- the AOF directory ---------------------------------------------------------------------------------

def aof_dir(srv: ServerProcess) -> str:
    return os.path.join(srv.dir, "appendonlydir")


def read_manifest(srv: ServerProcess) -> list[dict]:
    """Lines `file <name> seq <n> type <b|h|i>` of appendonlydir/appendonly.aof.manifest, in order."""
    text = open(os.path.join(aof_dir(srv), "appendonly.aof.manifest")).read()
    entries = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens:
            fields = dict(zip(tokens[0::2], tokens[1::2]))
            assert {"file", "seq", "type"} <= fields.keys(), f"manifest line {line!r}"
            entries.append(fields)
    return entries


def last_incr_file(srv: ServerProcess) -> str:
    incr = [e for e in read_manifest(srv) if e["type"] == "i"]
    assert incr, f"no incr file in the manifest: {read_manifest(srv)}"
    return os.path.join(aof_dir(srv), incr[-1]["file"])


def command_offsets(data: bytes) -> list[int]:
    """Start offsets of the RESP commands an AOF incr file holds."""
    offsets, pos = [], 0
    while pos < len(data):
        offsets.append(pos)
        _, pos = parse_reply(data, pos)
    return offsets


# ---- the data set and its dump -------------------------------------------------------------------------

def dataset_commands(db: int, expire_at_ms: int, rng: random.Random) -> tuple[list, dict]:
    """Commands writing every type and encoding to one database; returns (commands, {key: PEXPIREAT})."""
    tag = f"db{db}"
    deadlines = {b"ttl:str": expire_at_ms + db, b"ttl:int": expire_at_ms + 1001 + db,
                 b"ttl:hash": expire_at_ms + 2002 + db, b"ttl:set": expire_at_ms + 3003 + db,
                 b"ttl:zset": expire_at_ms + 4004 + db}
    commands = [
        ("SET", "str:int", 12345 + db),
        ("SET", "str:int-min", "-9223372036854775808"),
        ("SET", "str:embstr", f"hello {tag}"),
        ("SET", "str:raw", f"raw-{tag}-" * 10),
        ("SET", "str:binary", b"\x00zero\r\nCRLF\xff" + tag.encode()),
        ("SET", "str:empty", b""),
        ("SET", "str:random", rng.randbytes(3000)),
        ("SET", "str:float-text", "3.14159"),
        ("SET", "str:leading-zero", "007"),
        ("SET", b"key\x00with\r\nbinary " + tag.encode(), "v"),
        ("HSET", "hash:small", "a", "1", "10", "-5", "f", tag, "empty", ""),
        ("HSET", "hash:big", *flat((str(i), str(i * 7 - 100)) for i in range(200))),
        ("HSET", "hash:long-value", "short", "x", "long", "v" * 100),
        ("HSET", "hash:binary", b"\x00\r\n", b"\xff\x00", b"k", b"\r\n"),
        ("SADD", "set:intset", 1, 2, 3, -7, 9223372036854775807, -9223372036854775808),
        ("SADD", "set:small-text", "a", "b", "10", "", tag),
        ("SADD", "set:big-int", *range(600)),
        ("SADD", "set:big-text", *(f"m{i}" for i in range(200))),
        ("SADD", "set:long-member", "x" * 100, "y", "-1"),
        ("ZADD", "zset:small", *SMALL_ZSET),
        ("ZADD", "zset:big", *flat((str((i % 40) * 0.25 - 3), f"m{i}") for i in range(200)), *SMALL_ZSET),
        ("ZADD", "zset:long-member", "1", "m" * 100, "2", "n"),
        ("SET", "ttl:str", "expiring"),
        ("SET", "ttl:int", 42),
        ("HSET", "ttl:hash", "f", "v", "g", "w"),
        ("SADD", "ttl:set", 1, 2, 3),
        ("ZADD", "ttl:zset", "1", "a", "2.5", "b"),
        *(("PEXPIREAT", key, at) for key, at in deadlines.items()),
        ("SET", "ttl:relative", "x", "PX", 10 * 86400 * 1000),
    ]
    return commands, deadlines


def fill_dataset(conn: RawConnection, expire_at_ms: int, seed: int = 1) -> dict:
    """Fills FILLED_DBS; returns {(db, key): the absolute deadline the test gave it}."""
    rng = random.Random(seed)
    deadlines = {}
    for db in FILLED_DBS:
        commands, keys = dataset_commands(db, expire_at_ms, rng)
        run(conn, [("SELECT", db), *commands])
        deadlines.update({(db, k): at for k, at in keys.items()})
    run(conn, [("SELECT", 0)])
    return deadlines


def far_future_ms() -> int:
    return (int(time.time()) + 30 * 86400) * 1000 + 123


class KeyState(NamedTuple):
    type: str
    encoding: bytes
    value: object
    expire_at: int     # PEXPIRETIME, -1 without a deadline
    pttl: int


class Dump(NamedTuple):
    state: dict        # {(db, key): KeyState}
    started: float     # time.monotonic() around the reads
    ended: float


READERS = {"string": lambda k: ("GET", k), "hash": lambda k: ("HGETALL", k), "set": lambda k: ("SMEMBERS", k),
           "zset": lambda k: ("ZRANGE", k, 0, -1, "WITHSCORES")}


def _value(kind: str, reply):
    if kind == "string":
        return reply.value
    items = [e.value for e in reply.elements()]
    if kind == "hash":
        return dict(zip(items[0::2], items[1::2]))
    if kind == "set":
        return frozenset(items)
    return tuple(zip(items[0::2], items[1::2]))   # zset: (member, score text) in rank order


def scan_keys(conn: RawConnection, pattern: str = "*") -> list:
    keys, cursor = set(), b"0"
    while True:
        reply = conn.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
        cursor, batch = reply.value[0].value, reply.value[1].value
        keys.update(e.value for e in batch)
        if cursor == b"0":
            return sorted(keys)


def dump_state(conn: RawConnection) -> dict:
    """Every key of every database: {(db, key): KeyState}, read with SCAN, TYPE, OBJECT ENCODING,
    GET/HGETALL/SMEMBERS/ZRANGE WITHSCORES, PEXPIRETIME and PTTL."""
    databases = int(conn.call("CONFIG", "GET", "databases").py()[1])
    state = {}
    for db in range(databases):
        run(conn, [("SELECT", db)])
        keys = scan_keys(conn)
        if not keys:
            continue
        types = [r.value.decode() for r in run(conn, [("TYPE", k) for k in keys])]
        present = [(k, t) for k, t in zip(keys, types) if t != "none"]  # "none": expired since SCAN
        for key, kind in present:
            assert kind in READERS, f"db {db} key {key!r} has unexpected type {kind}"
        replies = run(conn, [cmd for key, kind in present
                             for cmd in (("OBJECT", "ENCODING", key), READERS[kind](key),
                                         ("PEXPIRETIME", key), ("PTTL", key))])
        for i, (key, kind) in enumerate(present):
            enc, val, at, pttl = replies[4 * i:4 * i + 4]
            state[(db, key)] = KeyState(kind, enc.value, _value(kind, val), at.value, pttl.value)
    run(conn, [("SELECT", 0)])
    return state


def timed_dump(conn: RawConnection) -> Dump:
    started = time.monotonic()
    state = dump_state(conn)
    return Dump(state, started, time.monotonic())


def assert_same_state(before: Dump, after: Dump, what: str):
    """Same keys, types, encodings, values and absolute deadlines; PTTL shrank by the time that passed."""
    missing = sorted(set(before.state) - set(after.state))
    extra = sorted(set(after.state) - set(before.state))
    assert not missing and not extra, f"{what}: keys missing {missing[:10]}, keys that should not exist {extra[:10]}"
    min_ms = (after.started - before.ended) * 1000
    max_ms = (after.ended - before.started) * 1000
    for name, b in before.state.items():
        a = after.state[name]
        assert (a.type, a.encoding) == (b.type, b.encoding), f"{what}: {name}: {b[:2]} became {a[:2]}"
        assert a.value == b.value, f"{what}: {name}: value {b.value!r:.300} became {a.value!r:.300}"
        assert a.expire_at == b.expire_at, f"{what}: {name}: PEXPIRETIME {b.expire_at} became {a.expire_at}"
        if b.pttl < 0:
            assert a.pttl == b.pttl, f"{what}: {name}: PTTL {b.pttl} became {a.pttl}"
        else:
            # An absolute deadline: PTTL shrinks by exactly the time between the two reads (50 ms of slack
            # for clock granularity).
            assert b.pttl - max_ms - 50 <= a.pttl <= b.pttl - min_ms + 50, \
                f"{what}: {name}: PTTL {b.pttl} became {a.pttl} after {min_ms:.0f}..{max_ms:.0f} ms"


def assert_covers_encodings(state: dict):
    seen = {}
    for ks in state.values():
        seen.setdefault(ks.type, set()).add(ks.encoding.decode())
    for kind, needed in REQUIRED_ENCODINGS.items():
        assert needed <= seen.get(kind, set()), f"the data set lacks {kind} encodings {needed - seen[kind]}"


# ---- round trips -----------------------------------------------------------------------------------------

ROUND_TRIP_OPTIONS = {
    "save": {},
    "bgsave": {},
    "debug-reload": {},
    "shutdown-save-rule": {"save": "3600 1"},
    "aof": {"appendonly": "yes", "appendfsync": "always"},
    "aof-shutdown": {"appendonly": "yes"},
    "aof-rewrite": {"appendonly": "yes", "appendfsync": "always"},
}


def rewrite_aof_then_write_more(srv: ServerProcess, conn: RawConnection, deadlines: dict):
    """BGREWRITEAOF with writes while it runs and after it; `deadlines` follows the changes."""
    old_base = [e["file"] for e in read_manifest(srv) if e["type"] == "b"]
    assert conn.call("BGREWRITEAOF").raw == REWRITE_STARTED
    run(conn, [("SELECT", 3), ("SET", "str:embstr", "written during the rewrite"), ("HSET", "hash:big", "500", "x"),
               ("ZADD", "zset:small", "7", "new"), ("SELECT", 0)])
    wait_aof_rewrite_done(conn)
    manifest = read_manifest(srv)
    new_base = [e["file"] for e in manifest if e["type"] == "b"]
    assert len(new_base) == 1 and new_base != old_base, f"the rewrite left the manifest {manifest}"
    assert any(e["type"] == "i" for e in manifest), manifest
    new_deadline = deadlines[(0, b"ttl:set")] + 777
    run(conn, [("SREM", "set:intset", 2), ("DEL", "str:random"), ("INCRBY", "str:int", 5),
               ("PEXPIREAT", "ttl:set", new_deadline), ("PERSIST", "ttl:int"),
               ("SELECT", 9), ("ZINCRBY", "zset:big", "0.5", "m3"), ("HSET", "after:rewrite", "f", "v"),
               ("SELECT", 0)])
    deadlines[(0, b"ttl:set")] = new_deadline
    deadlines[(0, b"ttl:int")] = -1
    assert os.path.getsize(last_incr_file(srv)) > 0, "writes after the rewrite are not in the incr file"


def persist(srv: ServerProcess, conn: RawConnection, how: str):
    if how == "save":
        assert conn.call("SAVE").raw == ok
    elif how == "bgsave":
        assert conn.call("BGSAVE").raw == BGSAVE_STARTED
        wait_bgsave_done(conn)
    elif how in ("shutdown-save-rule", "aof-shutdown"):
        conn.close()
        assert shutdown(srv) == 0
    if how in ("save", "bgsave", "shutdown-save-rule"):
        assert os.path.exists(snapshot_path(srv)), f"{how} wrote no {snapshot_path(srv)}"


def bring_back(srv: ServerProcess, conn: RawConnection, how: str):
    if how == "debug-reload":
        assert conn.call("DEBUG", "RELOAD", timeout=30).raw == ok
    else:
        conn.close()
        restart(srv)


@pytest.mark.parametrize("how", list(ROUND_TRIP_OPTIONS))
def test_round_trip_keeps_every_type_encoding_and_deadline(make_server, how):
    srv = make_server(options=ROUND_TRIP_OPTIONS[how])
    conn = srv.raw()
    deadlines = fill_dataset(conn, far_future_ms())
    if how == "aof-rewrite":
        rewrite_aof_then_write_more(srv, conn, deadlines)
    before = timed_dump(conn)
    assert_covers_encodings(before.state)
    # A key whose deadline passes while the server is down (or before DEBUG RELOAD): it must not come back.
    run(conn, [("SELECT", 9), ("SET", "due:soon", "gone", "PX", DUE_MS), ("SELECT", 0)])
    due_at = now_ms() + DUE_MS
    persist(srv, conn, how)
    assert now_ms() < due_at - 50, f"{how} took longer than {DUE_MS} ms: the short-lived key expired before"
    wait_until_past(due_at)
    bring_back(srv, conn, how)
    conn = srv.raw()
    after = timed_dump(conn)
    assert_same_state(before, after, how)
    for name, at in deadlines.items():
        assert after.state[name].expire_at == at, f"{how}: {name} PEXPIRETIME {after.state[name].expire_at} != {at}"
    if how.startswith("aof"):
        assert not os.path.exists(snapshot_path(srv)), "appendonly alone must not write a snapshot"
        assert persistence_info(conn)["aof_enabled"] == "1"
    conn.close()


# ---- BGSAVE while a client keeps writing ----------------------------------------------------------------

HOT = 300  # fields of the hash and members of the sorted set that every step rewrites


class StepWriter(threading.Thread):
    """Step j (j = 1, 2, ...) is one MULTI/EXEC: SET w:j j, HSET hot:hash f<j%HOT> j, ZADD hot:zset j m<j%HOT>,
    SET counter j. `sent` is set before a step is sent, `acked` once its EXEC reply arrived."""

    def __init__(self, srv: ServerProcess):
        super().__init__(daemon=True)
        self.conn = srv.raw(timeout=20)
        self.sent = 0
        self.acked = 0
        self.error = None
        self.stop_flag = threading.Event()

    def run(self):
        try:
            j = 0
            while not self.stop_flag.is_set():
                j += 1
                self.sent = j
                replies = self.conn.pipeline([("MULTI",), ("SET", f"w:{j}", j), ("HSET", "hot:hash", f"f{j % HOT}", j),
                                              ("ZADD", "hot:zset", j, f"m{j % HOT}"), ("SET", "counter", j), ("EXEC",)])
                exec_reply = replies[-1]
                if exec_reply.kind != "*" or len(exec_reply.value) != 4 or any(e.is_error for e in exec_reply.value):
                    raise AssertionError(f"step {j}: EXEC replied {exec_reply!r}")
                self.acked = j
        except Exception as exc:  # reported by the test
            self.error = exc
        finally:
            self.conn.close()

    def finish(self):
        self.stop_flag.set()
        self.join(30)
        assert not self.is_alive(), "the writer thread did not stop"
        assert self.error is None, f"writer failed: {self.error!r}"


def expected_after_steps(c: int):
    fields = {f"f{i}".encode(): b"0" for i in range(HOT)}
    scores = {f"m{i}".encode(): 0.0 for i in range(HOT)}
    for j in range(1, c + 1):
        fields[f"f{j % HOT}".encode()] = str(j).encode()
        scores[f"m{j % HOT}".encode()] = float(j)
    return fields, scores


def test_bgsave_is_a_point_in_time_snapshot_under_concurrent_writes(make_server):
    srv = make_server()
    conn = srv.raw()
    rng = random.Random(11)
    bulk = {f"bulk:{i}".encode(): rng.randbytes(200) for i in range(40000)}
    items = list(bulk.items())
    run(conn, [("MSET", *flat(items[i:i + 1000])) for i in range(0, len(items), 1000)])
    run(conn, [("HSET", "hot:hash", *flat((f"f{i}", 0) for i in range(HOT))),
               ("ZADD", "hot:zset", *flat((0, f"m{i}") for i in range(HOT)))])

    writer = StepWriter(srv)
    writer.start()
    wait_for(lambda: writer.acked >= 50 or writer.error, what="the writer to get going")
    low = writer.acked                   # steps acknowledged before BGSAVE was sent: in the snapshot
    reply = conn.call("BGSAVE")
    high = writer.sent                   # steps sent after this point come after BGSAVE: not in it
    assert reply.raw == BGSAVE_STARTED
    wait_bgsave_done(conn)
    wait_for(lambda: writer.acked >= high + 50 or writer.error, what="writes after the BGSAVE")
    writer.finish()
    conn.close()

    restart(srv)
    conn = srv.raw()
    counter = int(conn.call("GET", "counter").value)
    assert low <= counter <= high, f"snapshot holds step {counter}, expected {low}..{high}"
    # The whole snapshot is the state right after step `counter`, no earlier, no later.
    w_keys = scan_keys(conn, "w:*")
    assert w_keys == sorted(f"w:{j}".encode() for j in range(1, counter + 1)), \
        f"counter {counter} but w:* keys {w_keys[:3]}..{w_keys[-3:]} ({len(w_keys)})"
    assert [r.value for r in conn.pipeline([("GET", k) for k in w_keys])] == [k[2:] for k in w_keys]
    fields, scores = expected_after_steps(counter)
    hv = conn.call("HGETALL", "hot:hash").py()
    assert dict(zip(hv[0::2], hv[1::2])) == fields, "hot:hash is not the state at the snapshot"
    zs = conn.call("ZRANGE", "hot:zset", 0, -1, "WITHSCORES").py()
    assert {m: float(s) for m, s in zip(zs[0::2], zs[1::2])} == scores, "hot:zset is not the state at the snapshot"
    keys = list(bulk)
    for i in range(0, len(keys), 2000):
        assert conn.call("MGET", *keys[i:i + 2000]).py() == [bulk[k] for k in keys[i:i + 2000]]
    assert conn.call("DBSIZE").value == len(bulk) + counter + 3
    conn.close()


# ---- persistence commands and INFO ---------------------------------------------------------------------

def test_save_lastsave_and_info_persistence(make_server):
    srv = make_server()
    conn = srv.raw()
    f = persistence_info(conn)
    assert (f["loading"], f["rdb_bgsave_in_progress"], f["aof_enabled"], f["aof_rewrite_in_progress"]) == \
        ("0", "0", "0", "0")
    assert (f["rdb_last_bgsave_status"], f["aof_last_bgrewrite_status"]) == ("ok", "ok")
    assert f["rdb_changes_since_last_save"] == "0"
    run(conn, [("SET", "k", "v")])
    assert persistence_info(conn)["rdb_changes_since_last_save"] == "1"
    run(conn, [("MSET", "a", "1", "b", "2")])
    assert persistence_info(conn)["rdb_changes_since_last_save"] == "3"

    first = conn.call("LASTSAVE").value
    assert int(f["rdb_last_save_time"]) == first
    # time(NULL) may lag time.time() by a coarse clock tick: wait a little past the next second.
    wait_for(lambda: time.time() > first + 1.1, timeout=3, what="the clock to move past LASTSAVE")
    t0 = time.time()
    assert conn.call("SAVE").raw == ok
    t1 = time.time()
    last = conn.call("LASTSAVE").value
    assert last > first and int(t0 - 0.1) <= last <= int(t1) + 1, (first, last, t0, t1)
    f = persistence_info(conn)
    assert f["rdb_changes_since_last_save"] == "0"
    assert int(f["rdb_last_save_time"]) == last
    assert os.path.exists(snapshot_path(srv))
    run(conn, [("DEL", "a")])
    assert persistence_info(conn)["rdb_changes_since_last_save"] == "1"
    conn.close()


def test_bgsave_while_one_runs_is_refused(make_server):
    srv = make_server()
    conn = srv.raw()
    rng = random.Random(3)
    run(conn, [("MSET", *flat((f"k{i}:{j}", rng.randbytes(500)) for j in range(1000))) for i in range(20)])
    # One packet: the second BGSAVE and the SAVE arrive while the first snapshot is being written.
    replies = conn.pipeline([("BGSAVE",), ("BGSAVE",), ("SAVE",), ("INFO", "persistence")])
    assert [r.raw for r in replies[:3]] == [BGSAVE_STARTED, BGSAVE_RUNNING, BGSAVE_RUNNING]
    assert parse_info(replies[3].value)["rdb_bgsave_in_progress"] == "1"
    wait_bgsave_done(conn)
    f = persistence_info(conn)
    assert f["rdb_changes_since_last_save"] == "0"
    assert f["rdb_last_bgsave_status"] == "ok"
    conn.close()
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("DBSIZE").value == 20000


def child_pids(srv: ServerProcess) -> list[int]:
    """The server's child processes (a save's or a rewrite's), from /proc."""
    path = f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children"
    return [int(pid) for pid in open(path).read().split()]


def kill_the_child(srv: ServerProcess):
    (pid,) = wait_for(lambda: child_pids(srv), timeout=30, what="the server's child")
    os.kill(pid, 9)


SLOW_KEYS = 200                 # with rdb-key-save-delay 1000000: a save that never ends by itself
MISCONF = ("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to "
           "disk. Commands that may modify the data set are disabled, because this instance is configured "
           "to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). "
           "Please check the Redis logs for details about the RDB error.")


def test_a_slow_bgsave_refuses_others_then_fails_when_its_child_is_killed(start_either):
    srv = start_either(**{"save": "3600 1000000"})
    with srv.raw() as conn:
        assert conn.call("DEBUG", "POPULATE", SLOW_KEYS).raw == ok
        # A second a key: the child runs until it is killed.
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 1_000_000).raw == ok
        assert conn.call("BGSAVE").raw == BGSAVE_STARTED
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 0).raw == ok
        for cmd in (("BGSAVE",), ("BGSAVE", "SCHEDULE"), ("SAVE",)):
            assert conn.call(*cmd).raw == BGSAVE_RUNNING, cmd
        assert conn.call("BGREWRITEAOF").raw == b"+Background append only file rewriting scheduled\r\n"
        f = persistence_info(conn)
        assert (f["rdb_bgsave_in_progress"], f["aof_rewrite_scheduled"], f["aof_rewrite_in_progress"]) == (
            "1", "1", "0")
        assert int(f["rdb_current_bgsave_time_sec"]) >= 0
        kill_the_child(srv)
        wait_for(lambda: persistence_info(conn)["rdb_bgsave_in_progress"] == "0", timeout=30,
                 what="the killed save reaped")
        assert persistence_info(conn)["rdb_last_bgsave_status"] == "err"
        # The rewrite that waited runs now.
        wait_aof_rewrite_done(conn)
        assert int(persistence_info(conn)["aof_rewrites"]) == 1
        # Save rules and a failed save: writes are refused until a save succeeds.
        assert conn.call("SET", "k", "v").error_text == MISCONF
        assert conn.call("GET", "key:1").value == b"value:1"
        assert conn.call("BGSAVE").raw == BGSAVE_STARTED
        wait_bgsave_done(conn)
        assert conn.call("SET", "k", "v").raw == ok
    assert os.path.exists(snapshot_path(srv))


@pytest.mark.parametrize("rules", ["", "3600 1000000"])
def test_flushall_stops_a_running_bgsave(start_either, rules):
    # The snapshot being written is of the data set FLUSHALL empties: Redis kills its child, so that
    # it never replaces dump.rdb with the old keys; with save rules the empty data set is saved.
    srv = start_either(save=rules)
    with srv.raw() as conn:
        assert conn.call("DEBUG", "POPULATE", SLOW_KEYS).raw == ok
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 1_000_000).raw == ok
        assert conn.call("BGSAVE").raw == BGSAVE_STARTED
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 0).raw == ok
        wait_for(lambda: child_pids(srv), timeout=30, what="the saving child")
        assert conn.call("FLUSHALL").raw == ok
        wait_for(lambda: persistence_info(conn)["rdb_bgsave_in_progress"] == "0" and not child_pids(srv),
                 timeout=30, what="the save stopped")
        assert persistence_info(conn)["rdb_last_bgsave_status"] == "ok"
        # No temporary file is left behind.
        wait_for(lambda: not [n for n in os.listdir(srv.dir) if "tmp" in n or n.startswith("temp-")],
                 timeout=30, what="the temporary file removed")
        assert os.path.exists(snapshot_path(srv)) == bool(rules)
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("DBSIZE").value == 0


def test_key_load_delay_serves_loading_until_it_is_lifted(start_either):
    srv = start_either(rdbcompression="no")   # about a kilobyte a key in the file, too
    with srv.raw() as conn:
        assert conn.call("DEBUG", "POPULATE", 1000, "key", 1024).raw == ok
        assert conn.call("SAVE").raw == ok
    size = os.path.getsize(snapshot_path(srv))
    # A tenth of a second a key, clients served after every key (about a kilobyte each): the load
    # lasts until CONFIG SET lifts the delay, which takes effect at the next key.
    srv.options.update({"key-load-delay": "100000", "loading-process-events-interval-bytes": "1024"})
    srv.restart()
    with srv.raw() as conn:
        def loading_reply():
            reply = conn.call("GET", "key:1")
            return reply.raw if reply.is_error else None
        assert wait_for(loading_reply, timeout=30, what="a -LOADING reply") == (
            b"-LOADING Redis is loading the dataset in memory\r\n")
        f = persistence_info(conn)
        assert f["loading"] == "1" and int(f["loading_total_bytes"]) == size
        assert 0 <= int(f["loading_loaded_bytes"]) < size
        assert conn.call("CONFIG", "SET", "key-load-delay", 0).raw == ok
        wait_for(lambda: persistence_info(conn)["loading"] == "0", timeout=60, what="the load to end")
        assert conn.call("DBSIZE").value == 1000
        assert conn.call("GET", "key:1").value.startswith(b"value:1")


def test_save_rule_saves_by_itself(make_server):
    srv = make_server(options={"save": "1 1"})
    path = snapshot_path(srv)
    conn = srv.raw()
    assert not os.path.exists(path)
    run(conn, [("SET", "auto", "saved")])
    wait_for(lambda: persistence_info(conn)["rdb_changes_since_last_save"] == "0" and os.path.exists(path),
             timeout=10, interval=0.05, what="the save rule to write the snapshot")
    conn.close()
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("GET", "auto").value == b"saved"


def test_shutdown_nosave_save_and_plain(make_server):
    # A save rule is configured, but SHUTDOWN NOSAVE writes nothing.
    srv = make_server(options={"save": "3600 1"})
    with srv.raw() as conn:
        run(conn, [("SET", "k", "v")])
    assert shutdown(srv, "NOSAVE") == 0
    assert not os.path.exists(snapshot_path(srv))
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("DBSIZE").value == 0

    # No save rule: a plain SHUTDOWN writes nothing, SHUTDOWN SAVE does.
    srv = make_server()
    with srv.raw() as conn:
        run(conn, [("SET", "k", "v")])
    assert shutdown(srv) == 0
    assert not os.path.exists(snapshot_path(srv))
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("DBSIZE").value == 0
        run(conn, [("SET", "k", "v2")])
    assert shutdown(srv, "SAVE") == 0
    assert os.path.exists(snapshot_path(srv))
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("GET", "k").value == b"v2"


def test_flushall_saves_at_once_under_save_rules(make_server):
    # Redis saves the emptied keyspace right away when save rules exist, so a crash does not
    # bring the old snapshot back.
    srv = make_server(options={"save": "3600 1"})
    with srv.raw() as conn:
        run(conn, [("SET", "k", "v"), ("SAVE",)])
        assert os.path.exists(snapshot_path(srv))
        assert conn.call("FLUSHALL").raw == ok
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("DBSIZE").value == 0


def test_appendonly_turned_on_at_runtime_keeps_what_was_there(make_server):
    srv = make_server()
    with srv.raw() as conn:
        expire_at = now_ms() + 3_600_000
        before = fill_dataset(conn, expire_at, seed=4)
        assert conn.call("CONFIG", "SET", "appendonly", "yes").raw == ok
        wait_aof_rewrite_done(conn)
        assert persistence_info(conn)["aof_enabled"] == "1"
        run(conn, [("SET", "after", "on"), ("INCR", "counter")])
        state = timed_dump(conn)
    srv.options["appendonly"] = "yes"
    restart(srv)
    with srv.raw() as conn:
        assert_same_state(state, timed_dump(conn), "appendonly turned on at runtime, then restart")
        assert conn.call("GET", "after").value == b"on"
        assert before  # the dataset was not empty
        # Turned off again: later writes are not logged, the server keeps serving.
        assert conn.call("CONFIG", "SET", "appendonly", "no").raw == ok
        assert persistence_info(conn)["aof_enabled"] == "0"
        run(conn, [("SET", "after-off", "1")])
    restart(srv)  # still appendonly yes on the command line: the log has what came before "no"
    with srv.raw() as conn:
        assert conn.call("GET", "after").value == b"on"
        assert conn.call("EXISTS", "after-off").value == 0


# ---- loading ------------------------------------------------------------------------------------------

def test_clients_see_loading_while_a_slow_snapshot_loads(make_server):
    srv = make_server()
    conn = srv.raw()
    rng = random.Random(5)
    data = {f"load:{i}".encode(): rng.randbytes(1000) for i in range(10000)}
    items = list(data.items())
    run(conn, [("MSET", *flat(items[i:i + 500])) for i in range(0, len(items), 500)])
    assert conn.call("SAVE").raw == ok
    conn.close()
    size = os.path.getsize(snapshot_path(srv))
    srv.options["key-load-delay"] = "100"     # microseconds per key: about a second of loading
    started = time.time()
    srv.restart()                              # returns once the server answers, -LOADING included

    conn = srv.raw(timeout=30)
    samples = samples_until_loaded(conn)
    loading = [(p, f) for p, f in samples if f["loading"] == "1"]
    assert loading, f"no reply arrived while the snapshot loaded; samples {samples}"
    last_perc = 0.0
    for ping, f in loading:
        assert ping.startswith(b"-LOADING "), ping
        assert int(f["loading_total_bytes"]) == size, (f["loading_total_bytes"], size)
        assert 0 < int(f["loading_loaded_bytes"]) <= size
        perc = float(f["loading_loaded_perc"])
        assert last_perc <= perc <= 100.0, (last_perc, perc)
        last_perc = perc
        assert int(started) - 1 <= int(f["loading_start_time"]) <= time.time() + 1
        assert int(f["loading_eta_seconds"]) >= 0
    assert samples[-1][0] == b"+PONG\r\n"
    assert conn.call("DBSIZE").value == len(data)
    for i in range(0, len(items), 2000):
        keys = [k for k, _ in items[i:i + 2000]]
        assert conn.call("MGET", *keys).py() == [data[k] for k in keys]
    conn.close()


# ---- AOF durability and damage -------------------------------------------------------------------------

class AckedWriter(threading.Thread):
    """Alternates INCR counter and SET <prefix>:<i>; records what was acknowledged until the server dies."""

    def __init__(self, srv: ServerProcess, prefix: str):
        super().__init__(daemon=True)
        self.conn = srv.raw(timeout=20)
        self.prefix = prefix
        self.acks = 0
        self.counter = None          # last INCR reply
        self.keys = {}               # acknowledged SETs
        self.in_flight = None        # key of the SET sent last
        self.error = None

    def run(self):
        i = 0
        try:
            while True:
                reply = self.conn.call("INCR", "counter")
                if reply.kind != ":":
                    raise AssertionError(f"INCR replied {reply!r}")
                self.counter = reply.value
                self.acks += 1
                key, value = f"{self.prefix}:{i}", f"value-{self.prefix}-{i}"
                self.in_flight = key.encode()
                reply = self.conn.call("SET", key, value)
                if reply.raw != ok:
                    raise AssertionError(f"SET replied {reply!r}")
                self.keys[key.encode()] = value.encode()
                self.acks += 1
                i += 1
        except (ConnectionClosed, OSError):
            pass                     # the server was killed
        except Exception as exc:
            self.error = exc
        finally:
            self.conn.close()


def test_aof_always_keeps_every_acknowledged_write_across_sigkill(make_server):
    rng = random.Random(2024)
    srv = make_server(options={"appendonly": "yes", "appendfsync": "always"})
    acked = {}
    counter_low = 0
    for cycle in range(3):
        kill_after = rng.randint(100, 800)
        writer = AckedWriter(srv, f"c{cycle}")
        writer.start()
        wait_for(lambda: writer.acks >= kill_after or writer.error or not writer.is_alive(), timeout=30,
                 interval=0.001, what=f"{kill_after} acknowledged writes")
        assert writer.error is None and writer.is_alive(), f"writer stopped early: {writer.error!r}"
        kill_server(srv)             # the writer is still going: a command is usually in flight
        writer.join(30)
        assert not writer.is_alive() and writer.error is None, f"writer: {writer.error!r}"
        acked.update(writer.keys)
        counter_low = writer.counter
        restart(srv)
        with srv.raw() as conn:
            counter = int(conn.call("GET", "counter").value)
            assert counter_low <= counter <= counter_low + 1, \
                f"cycle {cycle}: counter {counter}, {counter_low} INCRs acknowledged (one more may be in flight)"
            keys = list(acked)
            values = conn.call("MGET", *keys).py()
            lost = [k for k, v in zip(keys, values) if v != acked[k]]
            assert not lost, f"cycle {cycle}: acknowledged SETs lost or changed: {lost[:10]} of {len(keys)}"
            extra = set(scan_keys(conn, f"c{cycle}:*")) - set(writer.keys) - {writer.in_flight}
            assert not extra, f"keys that were never sent: {sorted(extra)[:10]}"


def aof_server_with_data(make_server, **options) -> tuple[ServerProcess, Dump]:
    """An AOF server (fsync always) holding a few types, killed; returns it and the state it had."""
    srv = make_server(options={"appendonly": "yes", "appendfsync": "always", **options})
    conn = srv.raw()
    run(conn, [("SET", f"s{i}", f"value {i}") for i in range(20)])
    run(conn, [("INCR", "n")] * 7 + [("HSET", "h", "a", "1", "b", "2"), ("SADD", "set", "x", "1"),
                                     ("ZADD", "z", "1.5", "m", "-inf", "low"), ("SELECT", 4),
                                     ("SET", "in-db-4", "yes"), ("PEXPIREAT", "in-db-4", far_future_ms())])
    before = timed_dump(conn)
    conn.close()
    kill_server(srv)
    return srv, before


def test_aof_wins_over_the_snapshot(make_server):
    # As Redis: with appendonly yes the log is the truth, whatever dump.rdb holds.
    srv = make_server(options={"appendonly": "yes"})
    with srv.raw() as conn:
        run(conn, [("SET", "k", "from-snapshot"), ("SAVE",), ("SET", "k", "from-log"),
                   ("SET", "only-in-log", "1")])
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("GET", "k").value == b"from-log"
        assert conn.call("GET", "only-in-log").value == b"1"


def test_aof_rewrites_itself_when_it_grows(make_server):
    # auto-aof-rewrite-percentage 100 with a 64 KB minimum: the log rewrites once it doubles.
    srv = make_server(options={"appendonly": "yes", "auto-aof-rewrite-min-size": "65536",
                               "auto-aof-rewrite-percentage": "100", "hz": "100"})
    with srv.raw() as conn:
        bases_before = [e["file"] for e in read_manifest(srv) if e["type"] == "b"]
        value = "x" * 100
        for batch in range(20):   # about 150 KB of SET commands on 200 keys
            run(conn, [("SET", f"k{i}", f"{batch}-{value}") for i in range(200)])
        wait_for(lambda: int(persistence_info(conn)["aof_rewrites"]) >= 1, timeout=10, interval=0.02,
                 what="an automatic AOF rewrite")
        wait_aof_rewrite_done(conn)
        bases_after = [e["file"] for e in read_manifest(srv) if e["type"] == "b"]
        assert bases_after != bases_before, (bases_before, bases_after)
        run(conn, [("SET", "after", "rewrite")])
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("GET", "k199").value == f"19-{value}".encode()
        assert conn.call("GET", "after").value == b"rewrite"
        assert conn.call("DBSIZE").value == 201


def test_aof_torn_tail_is_dropped_and_the_file_keeps_working(make_server):
    srv, before = aof_server_with_data(make_server)
    path = last_incr_file(srv)
    with open(path, "ab") as f:
        f.write(TORN_COMMAND)
    restart(srv)
    conn = srv.raw()
    after = timed_dump(conn)
    assert_same_state(before, after, "torn tail")
    assert conn.call("EXISTS", "torn").value == 0
    # Writes after the repair must not be glued to the torn bytes.
    run(conn, [("SET", "after-repair", "1"), ("INCR", "n")])
    conn.close()
    kill_server(srv)
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("GET", "after-repair").value == b"1"
        assert conn.call("GET", "n").value == b"8"
        assert conn.call("EXISTS", "torn").value == 0
        assert conn.call("DBSIZE").value == sum(1 for db, _ in before.state if db == 0) + 1


def test_aof_damage_in_the_middle_refuses_to_start(make_server):
    srv, _ = aof_server_with_data(make_server)
    path = last_incr_file(srv)
    data = open(path, "rb").read()
    offsets = command_offsets(data)
    assert len(offsets) >= 20, f"only {len(offsets)} commands in {path}"
    middle = offsets[len(offsets) // 2]
    assert data[middle:middle + 1] == b"*"
    with open(path, "wb") as f:
        f.write(data[:middle] + b"X" + data[middle + 1:])
    output = start_expecting_refusal(srv)
    assert os.path.basename(path) in output, f"the log does not name {os.path.basename(path)}:\n{output}"


def test_aof_torn_tail_refuses_to_start_without_aof_load_truncated(make_server):
    srv, _ = aof_server_with_data(make_server, **{"aof-load-truncated": "no"})
    path = last_incr_file(srv)
    with open(path, "ab") as f:
        f.write(TORN_COMMAND)
    output = start_expecting_refusal(srv)
    assert os.path.basename(path) in output, f"the log does not name {os.path.basename(path)}:\n{output}"


# ---- Goblin's snapshot file: checker and damage ---------------------------------------------------------

SECTION_LINE = re.compile(r"^section (\d+) (\d+) (\S+)$")
OFFSET = re.compile(r"\boffset \d+")


class Section(NamedTuple):
    offset: int
    length: int
    kind: str


def check_snapshot(path: str, *extra) -> tuple[int, str]:
    return run_until_exit([goblin_binary(), "--check-snapshot", path, *extra], timeout=30)


def snapshot_sections(path: str) -> list[Section]:
    status, output = check_snapshot(path, "--sections")
    assert status == 0, output
    lines = output.splitlines()
    sections = [Section(int(m[1]), int(m[2]), m[3]) for m in map(SECTION_LINE.match, lines) if m]
    ok_at = [i for i, line in enumerate(lines) if line.startswith("OK")]
    section_at = [i for i, line in enumerate(lines) if SECTION_LINE.match(line)]
    assert sections and ok_at and max(section_at) < ok_at[0], f"section lines, then the OK line:\n{output}"
    return sections


def saved_goblin_snapshot(make_server) -> tuple[ServerProcess, bytes]:
    """A goblin server's snapshot of the round-trip data set (server killed afterwards)."""
    srv = make_server()
    with srv.raw() as conn:
        fill_dataset(conn, far_future_ms())
        assert conn.call("SAVE").raw == ok
    kill_server(srv)
    return srv, open(snapshot_path(srv), "rb").read()


def assert_refused(srv: ServerProcess, content: bytes, what: str, log_names_offset: bool = False):
    """Writes `content` as srv's snapshot; the checker (naming the file and an offset) and the server
    (naming the file, and the offset too if `log_names_offset`) must both refuse it."""
    path = snapshot_path(srv)
    with open(path, "wb") as f:
        f.write(content)
    status, output = check_snapshot(path)
    assert status == 1, f"{what}: checker exit {status}:\n{output}"
    assert path in output and OFFSET.search(output), f"{what}: checker message lacks the file or offset:\n{output}"
    log = start_expecting_refusal(srv)
    assert os.path.basename(path) in log, f"{what}: the server log does not name the file:\n{log}"
    if log_names_offset:
        assert "offset" in log, f"{what}: the server log gives no offset:\n{log}"


@pytest.mark.goblin
def test_goblin_check_snapshot_accepts_a_sound_file_and_maps_it(make_server):
    srv, data = saved_goblin_snapshot(make_server)
    path = snapshot_path(srv)
    status, output = check_snapshot(path)
    assert status == 0 and any(line.startswith("OK") for line in output.splitlines()), output
    sections = snapshot_sections(path)
    assert sections[0].offset == 0 and sections[0].kind == "header", sections[:3]
    assert sections[-1].kind == "end" and sections[-1].offset + sections[-1].length == len(data), sections[-3:]
    covered = 0
    for s in sorted(sections):
        assert s.length > 0 and s.offset + s.length <= len(data), s
        assert s.offset <= covered, f"bytes {covered}..{s.offset} belong to no section"
        covered = max(covered, s.offset + s.length)
    assert covered == len(data)
    kinds = {s.kind for s in sections}
    assert {"header", "db", "keys", "end"} <= kinds, kinds


@pytest.mark.goblin
def test_goblin_truncated_snapshot_is_refused_at_every_boundary(make_server):
    srv, data = saved_goblin_snapshot(make_server)
    sections = snapshot_sections(snapshot_path(srv))
    cuts = {s.offset for s in sections} | {s.offset + s.length for s in sections}
    # Inside every section: in its head, in its body, in its check.
    for s in sections:
        cuts |= {s.offset + 3, s.offset + s.length // 2, s.offset + s.length - 2}
    cuts |= {1, len(data) - 1}
    cuts = sorted(c for c in cuts if 0 < c < len(data))
    assert len(cuts) >= 3 * len(sections), cuts
    for cut in cuts:
        assert_refused(srv, data[:cut], f"truncated at {cut} of {len(data)}", log_names_offset=True)


@pytest.mark.goblin
def test_goblin_flipped_bytes_are_detected(make_server):
    srv, data = saved_goblin_snapshot(make_server)
    rng = random.Random(99)
    for offset in sorted(rng.sample(range(len(data)), 200)):
        damaged = bytearray(data)
        damaged[offset] ^= rng.randrange(1, 256)
        assert_refused(srv, bytes(damaged), f"byte {offset} of {len(data)} flipped")


@pytest.mark.goblin
def test_goblin_empty_and_foreign_snapshot_files_are_refused(make_server):
    reference = make_server(binary=REFERENCE_BINARY, name="reference-rdb")
    with reference.raw() as conn:
        run(conn, [("SET", "k", "v"), ("HSET", "h", "f", "v")])
        assert conn.call("SAVE").raw == ok
    redis_rdb = open(snapshot_path(reference), "rb").read()
    assert redis_rdb.startswith(b"REDIS0010")
    srv, data = saved_goblin_snapshot(make_server)
    assert_refused(srv, b"", "zero-length file")
    # A Redis RDB file loads (test_rdb_load.py); one cut short is refused like a snapshot.
    assert_refused(srv, redis_rdb[:-3], "a truncated Redis RDB file", log_names_offset=True)
    assert_refused(srv, b"REDIS" + data[5:], "wrong magic")


@pytest.mark.goblin
def test_goblin_save_writes_a_loadable_snapshot(make_server):
    srv = make_server()
    conn = srv.raw()
    deadlines = fill_dataset(conn, far_future_ms())
    before = timed_dump(conn)
    assert conn.call("GOBLIN.SAVE").raw == ok
    conn.close()
    status, output = check_snapshot(snapshot_path(srv))
    assert status == 0, output
    restart(srv)
    with srv.raw() as conn:
        after = timed_dump(conn)
    assert_same_state(before, after, "GOBLIN.SAVE")
    assert all(after.state[name].expire_at == at for name, at in deadlines.items())


@pytest.mark.goblin
def test_goblin_loads_a_redis_append_only_directory_with_a_resp_base(make_server):
    # The migration path from Redis: with aof-use-rdb-preamble no, Redis's base is RESP, which
    # Goblin replays; the incr files and the manifest are Redis's own.
    redis = make_server(binary=REFERENCE_BINARY, options={"appendonly": "yes", "aof-use-rdb-preamble": "no"})
    with redis.raw() as conn:
        expire_at = now_ms() + 3_600_000
        fill_dataset(conn, expire_at, seed=9)
        assert conn.call("BGREWRITEAOF").raw.startswith(b"+Background append only file rewriting")
        wait_aof_rewrite_done(conn)
        run(conn, [("SET", "after-rewrite", "1"), ("ZADD", "after-z", "1.5", "m")])
        state = timed_dump(conn)
    assert shutdown(redis) == 0
    goblin = make_server(options={"appendonly": "yes", "dir": redis.dir})
    with goblin.raw() as conn:
        after = timed_dump(conn)
    # Encodings and score texts may differ (Redis 7.0 prints 17 digits, Goblin follows 7.2's
    # shortest text); members, score values and deadlines may not.
    def normal(v):
        if v.type == "zset":
            v = v._replace(value=tuple((m, float(score)) for m, score in v.value))
        return v._replace(encoding=b"")

    def strip(d):
        return {k: normal(v) for k, v in d.state.items()}
    assert_same_state(Dump(strip(state), state.started, state.ended),
                      Dump(strip(after), after.started, after.ended), "Redis AOF directory into Goblin")


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_empty_streams_and_idle_consumers_survive_an_aof_rewrite(start_either, preamble):
    # Redis's rewrite keeps a stream with no entries left, its groups and consumers with no
    # pending entries (XSETID, XGROUP CREATE, XGROUP CREATECONSUMER in a command-form base).
    srv = start_either(**{"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": preamble})
    with srv.raw() as conn:
        run(conn, [("XGROUP", "CREATE", "empty", "readers", "$", "MKSTREAM"),
                   ("XGROUP", "CREATECONSUMER", "empty", "readers", "alice"),
                   ("XADD", "drained", "5-1", "f", "v"), ("XDEL", "drained", "5-1"),
                   ("XGROUP", "CREATE", "drained", "workers", "0"),
                   ("XGROUP", "CREATECONSUMER", "drained", "workers", "bob")])
        assert conn.call("BGREWRITEAOF").raw == REWRITE_STARTED
        wait_aof_rewrite_done(conn)
    restart(srv)
    with srv.raw() as conn:
        assert conn.call("EXISTS", "empty", "drained").raw == b":2\r\n"
        stream = conn.call("XINFO", "STREAM", "drained").py()
        fields = dict(zip(stream[::2], stream[1::2]))
        assert (fields[b"length"], fields[b"last-generated-id"], fields[b"groups"]) == (0, b"5-1", 1)
        for key, group, consumer in (("empty", "readers", b"alice"), ("drained", "workers", b"bob")):
            consumers = conn.call("XINFO", "CONSUMERS", key, group).py()
            assert [dict(zip(c[::2], c[1::2]))[b"name"] for c in consumers] == [consumer]
            assert [dict(zip(c[::2], c[1::2]))[b"pending"] for c in consumers] == [0]
