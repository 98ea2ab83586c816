"""Leaving for Redis: goblin-server writes Redis's RDB (version 10) with `snapshot-format rdb` (SAVE,
BGSAVE, SHUTDOWN) and with `goblin-server --export-rdb SNAPSHOT OUT.rdb`. Every file must pass Debian's
redis-check-rdb, and Debian's redis-server 7.0 (started on it with sanitize-dump-payload yes, so every
listpack, intset and stream node is validated entry by entry) must serve the same data as goblin-server,
key by key: type, value (lists in order, sets and hashes as sets, sorted sets with their scores as doubles,
streams entry by entry with XINFO STREAM FULL for their groups), PEXPIRETIME exactly, and the encoding
Redis 7.0 gives the value (which tells that the small and large forms were written as intended).

The data set covers every type and form, forced both ways with the encoding knobs (the same knobs on both
servers: Redis re-encodes by its own limits as it loads), edge values (empty strings, binary bytes, integers
at the 32- and 64-bit edges, -0, inf and -inf scores, huge members, stream ids whose deltas wrap), several
databases, expiries and function libraries. One test moves 1M-member collections of every type.

Redis 7.0 against 7.2 (Goblin follows 7.2): 7.0 has no listpack sets and calls every list "quicklist";
its XINFO STREAM FULL has no consumer active-time; radix-tree-keys/-nodes are each server's own.
"""

from __future__ import annotations

import os
import socket

import pytest

from support import rdb_data
from support.rdb_data import (GOBLIN_ONLY_KNOBS, KNOBS, LoadedRedis, canonical_integer, check_rdb, dump, fill,
                              functions, keys_loaded, rdb_version, run)
from support.resp import encode_command
from support.server import goblin_binary, run_until_exit, wait_for


def expected_encoding_after_load(kind: str, encoding: str, value, knobs: dict) -> str:
    """The encoding Redis 7.0 gives a value goblin holds in `encoding` once it loads it: 7.0 has no
    listpack lists or sets; a set whose members are all integers, few enough for an intset, loads as one
    (Redis's own loader makes the same intset of a hashtable set it saved); a string is encoded by its
    bytes."""
    if kind == "string":
        # Redis's loader encodes a string by its bytes alone (tryObjectEncoding), whatever made it.
        return "int" if canonical_integer(value) else "embstr" if len(value) <= 44 else "raw"
    if kind == "list":
        return "quicklist"
    if kind == "set":
        limit = int(knobs.get("set-max-intset-entries", 512))
        return "intset" if len(value) <= limit and all(map(canonical_integer, value)) else "hashtable"
    return encoding


def assert_same_data(goblin: dict, redis: dict, knobs: dict):
    rdb_data.assert_same_data(goblin, redis, lambda name, kind, encoding, value:
                              expected_encoding_after_load(kind, encoding, value, knobs), "loaded by redis")


def goblin_options(knobs: str, **extra) -> dict:
    return {**KNOBS[knobs], **(GOBLIN_ONLY_KNOBS if knobs == "tight" else {}), **extra}


# ---- tests -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("knobs", list(KNOBS))
def test_save_with_snapshot_format_rdb_loads_into_redis_with_the_same_data(make_server, knobs):
    knob_values = KNOBS[knobs]
    goblin = make_server(options=goblin_options(knobs, **{"snapshot-format": "rdb"}))
    with goblin.raw() as conn:
        # List elements from this length on get a plain quicklist node, as in Redis.
        run(conn, [("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1000")])
        fill(conn)
        run(conn, [("SELECT", 2), ("RPUSH", "l:plain", "p" * 2000, "small", "q" * 3000, "s2"), ("SELECT", 0)])
        expected = dump(conn)
        expected_functions = functions(conn)
        assert conn.call("SAVE").raw == b"+OK\r\n"
    path = os.path.join(goblin.dir, "dump.rdb")
    assert rdb_version(path) == b"REDIS0010"
    report = check_rdb(path)
    assert f"{len(expected)} keys read" in report, report[-2000:]
    with LoadedRedis(path, knob_values) as redis_srv:
        with redis_srv.raw() as conn:
            assert_same_data(expected, dump(conn), knob_values)
            assert functions(conn) == expected_functions
            assert conn.call("FCALL", "echo1", 0, "hi").value == b"hi"
            assert conn.call("FCALL_RO", "count_keys", 2, "a", "b").value == 2


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lfu"])
def test_access_times_and_counters_reach_redis(make_server, policy):
    """Under an LRU policy every key's record carries its idle time, under an LFU one its counter
    (RDB_OPCODE_IDLE / RDB_OPCODE_FREQ): a redis-server with the same policy reports them."""
    # lfu-decay-time 0: a minute boundary between the GETs and the SAVE must not decay the counter.
    options = {"snapshot-format": "rdb", "maxmemory-policy": policy, "lfu-log-factor": "0",
               "lfu-decay-time": "0"}
    goblin = make_server(options=options)
    with goblin.raw() as conn:
        run(conn, [("SET", "old", "v"), ("HSET", "h", "f", "v"), ("DEBUG", "SLEEP", "2"), ("SET", "new", "v")])
        run(conn, [("GET", "new")] * 7)  # 5 for a new key, one more per access: 12
        assert conn.call("SAVE").raw == b"+OK\r\n"
    path = os.path.join(goblin.dir, "dump.rdb")
    report = check_rdb(path)
    assert "3 keys read" in report, report[-2000:]
    with LoadedRedis(path, {"maxmemory-policy": policy}) as redis_srv:
        with redis_srv.raw() as conn:
            if policy == "allkeys-lru":
                assert conn.call("OBJECT", "IDLETIME", "old").value >= 2
                assert conn.call("OBJECT", "IDLETIME", "h").value >= 2
                assert conn.call("OBJECT", "IDLETIME", "new").value <= 1
            else:
                assert conn.call("OBJECT", "FREQ", "new").value == 12
                assert conn.call("OBJECT", "FREQ", "old").value == 5


def test_export_rdb_converts_a_goblin_snapshot(make_server, tmp_path):
    knob_values = KNOBS["tight"]
    goblin = make_server(options=goblin_options("tight"))
    with goblin.raw() as conn:
        fill(conn, seed=11)
        expected = dump(conn)
        expected_functions = functions(conn)
        assert conn.call("SAVE").raw == b"+OK\r\n"
    snapshot = os.path.join(goblin.dir, "dump.rdb")
    assert open(snapshot, "rb").read(8) == b"GOBLNSNP"
    out = str(tmp_path / "exported.rdb")
    args = [goblin_binary(), "--export-rdb", snapshot, out]
    for name, value in {**knob_values, **GOBLIN_ONLY_KNOBS}.items():
        args += [f"--{name}", value]
    status, output = run_until_exit(args, timeout=60)
    assert status == 0, output
    assert output.startswith(f"OK {out}: {len(expected)} keys, 2 function libraries, "), output
    assert rdb_version(out) == b"REDIS0010"
    check_rdb(out)
    with LoadedRedis(out, knob_values) as redis_srv:
        with redis_srv.raw() as conn:
            assert_same_data(expected, dump(conn), knob_values)
            assert functions(conn) == expected_functions


def test_export_rdb_without_compression_or_checksum(make_server, tmp_path):
    goblin = make_server()
    with goblin.raw() as conn:
        run(conn, [("SET", "compressible", "z" * 5000), ("RPUSH", "list", *["w" * 100] * 50)])
        expected = dump(conn)
        assert conn.call("SAVE").raw == b"+OK\r\n"
    snapshot = os.path.join(goblin.dir, "dump.rdb")
    plain = str(tmp_path / "plain.rdb")
    packed = str(tmp_path / "packed.rdb")
    status, output = run_until_exit([goblin_binary(), "--export-rdb", snapshot, plain,
                                     "--rdbcompression", "no", "--rdbchecksum", "no"])
    assert status == 0, output
    status, output = run_until_exit([goblin_binary(), "--export-rdb", snapshot, packed])
    assert status == 0, output
    data = open(plain, "rb").read()
    assert data.endswith(b"\xff" + b"\x00" * 8), "rdbchecksum no writes a zero checksum"
    assert b"z" * 5000 in data, "rdbcompression no stores strings as they are"
    assert os.path.getsize(packed) < len(data) - 4000, "rdbcompression yes compresses the long strings"
    for path in (plain, packed):
        check_rdb(path)
        with LoadedRedis(path, {}) as redis_srv:
            with redis_srv.raw() as conn:
                assert_same_data(expected, dump(conn), {})


def test_export_rdb_errors_are_clear_and_fail(tmp_path):
    binary = goblin_binary()
    status, output = run_until_exit([binary, "--export-rdb"])
    assert status == 2 and "usage: goblin-server --export-rdb SNAPSHOT OUT.rdb" in output, output
    missing = str(tmp_path / "nothing.snap")
    status, output = run_until_exit([binary, "--export-rdb", missing, str(tmp_path / "out.rdb")])
    assert status == 1 and f"{missing}: no such file" in output, output
    garbage = tmp_path / "garbage.snap"
    garbage.write_bytes(b"this is not a snapshot of any kind")
    status, output = run_until_exit([binary, "--export-rdb", str(garbage), str(tmp_path / "out.rdb")])
    assert status == 1 and str(garbage) in output, output
    status, output = run_until_exit([binary, "--export-rdb", str(garbage), str(tmp_path / "out.rdb"),
                                     "--no-such-option", "1"])
    assert status == 2 and "no-such-option" in output, output
    assert not (tmp_path / "out.rdb").exists()


def test_export_rdb_reports_an_unwritable_destination(make_server, tmp_path):
    goblin = make_server()
    with goblin.raw() as conn:
        run(conn, [("SET", "k", "v")])
        assert conn.call("SAVE").raw == b"+OK\r\n"
    out = str(tmp_path / "no-such-dir" / "out.rdb")
    status, output = run_until_exit([goblin_binary(), "--export-rdb", os.path.join(goblin.dir, "dump.rdb"), out])
    assert status == 1 and "no-such-dir" in output, output


def test_bgsave_and_shutdown_write_rdb_and_the_option_is_configurable(make_server):
    config = "snapshot-format rdb\nsave 3600 1\n"
    goblin = make_server(config_text=config, options={"save": None})
    path = os.path.join(goblin.dir, "dump.rdb")
    with goblin.raw() as conn:
        assert conn.call("CONFIG", "GET", "snapshot-format").py() == [b"snapshot-format", b"rdb"]
        assert conn.call("CONFIG", "SET", "snapshot-format", "json").is_error
        run(conn, [("SET", "before", "bgsave"), ("ZADD", "z", "1", "a", "2", "b"), ("XADD", "st", "1-1", "f", "v")])
        saves = int(goblin.info("persistence")["rdb_saves"])
        assert conn.call("BGSAVE").raw == b"+Background saving started\r\n"
        wait_for(lambda: goblin.info("persistence")["rdb_bgsave_in_progress"] == "0", timeout=30,
                 what="the BGSAVE to end")
        info = goblin.info("persistence")
        assert info["rdb_last_bgsave_status"] == "ok" and int(info["rdb_saves"]) == saves + 1, info
        assert rdb_version(path) == b"REDIS0010"
        check_rdb(path)
        # DEBUG RELOAD saves an RDB file and loads it back.
        assert conn.call("DEBUG", "RELOAD").raw == b"+OK\r\n"
        assert rdb_version(path) == b"REDIS0010"
        assert conn.call("GET", "before").value == b"bgsave"
        assert conn.call("ZRANGE", "z", "0", "-1", "WITHSCORES").py() == [b"a", b"1", b"b", b"2"]
        assert conn.call("XLEN", "st").value == 1
        # CONFIG REWRITE keeps the choice; goblin again writes Goblin's format.
        assert conn.call("CONFIG", "SET", "snapshot-format", "GOBLIN").raw == b"+OK\r\n"
        assert conn.call("CONFIG", "GET", "snapshot-format").py() == [b"snapshot-format", b"goblin"]
        assert conn.call("SAVE").raw == b"+OK\r\n"
        assert open(path, "rb").read(8) == b"GOBLNSNP"
        assert conn.call("CONFIG", "SET", "snapshot-format", "rdb").raw == b"+OK\r\n"
        assert conn.call("CONFIG", "REWRITE").raw == b"+OK\r\n"
        assert "snapshot-format rdb" in open(goblin.config_path).read()
        run(conn, [("SET", "after", "shutdown"), ("SELECT", 4), ("HSET", "h", "f", "v")])
        goblin.stop_requested = True
        conn.send_command("SHUTDOWN")
        assert conn.read_until_closed(timeout=30) == b""
    assert goblin.proc.wait(30) == 0
    assert rdb_version(path) == b"REDIS0010"
    check_rdb(path)
    with LoadedRedis(path, {}) as redis_srv:
        with redis_srv.raw() as conn:
            assert keys_loaded(redis_srv) == 5
            assert conn.call("GET", "after").value == b"shutdown"
            assert conn.call("ZSCORE", "z", "b").value == b"2"
            assert conn.call("XRANGE", "st", "-", "+").py() == [[b"1-1", [b"f", b"v"]]]
            run(conn, [("SELECT", 4)])
            assert conn.call("HGET", "h", "f").value == b"v"


def test_million_member_collections_of_every_type(make_server):
    """The large forms at 1M members: a sorted set, a hash, a set and a list, compared in full."""
    n = 1_000_000
    goblin = make_server(options={"snapshot-format": "rdb"})
    with BulkConnection(goblin.unix_path) as conn:
        conn.fill(million_member_commands(n, batch=10_000), count=4 * n // 10_000)
        expected = {key: conn.array(*read) for key, read in FULL_READS.items()}
    with goblin.raw() as conn:
        assert conn.call("SAVE", timeout=120).raw == b"+OK\r\n"
    # redis-check-rdb reads the large forms in the other tests; here the loading redis-server, which
    # validates as deeply, is the check (redis-check-rdb would add seconds).
    path = os.path.join(goblin.dir, "dump.rdb")
    with LoadedRedis(path, {}) as redis_srv:
        with redis_srv.raw() as conn:
            assert [conn.call("OBJECT", "ENCODING", k).value for k in FULL_READS] == \
                [b"skiplist", b"hashtable", b"hashtable", b"quicklist"]
        with BulkConnection(port=redis_srv.port) as conn:
            for key, read in FULL_READS.items():
                assert conn.array(*read) == expected[key], f"{key} differs"


# The replies compared in full: integer scores print alike in 7.0 and 7.2; hash and set orders are each
# server's own, so those compare as sets.
FULL_READS = {"zset": ("ZRANGE", "zset", 0, -1, "WITHSCORES"), "hash": ("HGETALL", "hash"),
              "set": ("SMEMBERS", "set"), "list": ("LRANGE", "list", 0, -1)}


def million_member_commands(n: int, batch: int) -> bytes:
    """RESP for ZADD / HSET / SADD / RPUSH of n members each, built as bytes (a per-argument encoder
    would take longer than the servers)."""
    parts = []
    for start in range(0, n, batch):
        members = range(start, start + batch)
        parts.append(b"*%d\r\n$4\r\nZADD\r\n$4\r\nzset\r\n" % (2 + 2 * batch))
        parts.append(b"".join(b"$%d\r\n%d\r\n$13\r\nuser:%08d\r\n" % (len(b"%d" % (i % 9973)), i % 9973, i)
                              for i in members))
        parts.append(b"*%d\r\n$4\r\nHSET\r\n$4\r\nhash\r\n" % (2 + 2 * batch))
        parts.append(b"".join(b"$16\r\nfield:%010d\r\n$16\r\n%016x\r\n" % (i, i * 7919 % 1000003) for i in members))
        parts.append(b"*%d\r\n$4\r\nSADD\r\n$3\r\nset\r\n" % (2 + batch))
        parts.append(b"".join(b"$13\r\nuser:%08d\r\n" % i for i in members))
        parts.append(b"*%d\r\n$5\r\nRPUSH\r\n$4\r\nlist\r\n" % (2 + batch))
        parts.append(b"".join(b"$%d\r\nitem:%d\r\n" % (5 + len(b"%d" % i), i) for i in members))
    return b"".join(parts)


class BulkConnection:
    """A bare socket for replies of millions of elements: arrays of bulk strings without CRLF inside,
    split with bytes.split rather than parsed element by element."""

    def __init__(self, unix_path: str | None = None, port: int | None = None, timeout: float = 120.0):
        if unix_path:
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.connect(unix_path)
        else:
            self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.settimeout(timeout)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def _read_lines(self, count: int, data: bytes = b"") -> bytes:
        """Reads on after data until it holds `count` CRLF-terminated lines."""
        chunks, seen = [data], data.count(b"\r\n")
        last = data[-1:]
        while seen < count:
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed"
            seen += chunk.count(b"\r\n") + (1 if last == b"\r" and chunk[:1] == b"\n" else 0)
            last = chunk[-1:]
            chunks.append(chunk)
        return b"".join(chunks)

    def fill(self, commands: bytes, count: int):
        """Sends `count` pipelined commands whose replies are one line each; none may fail."""
        self.sock.sendall(commands)
        replies = self._read_lines(count).split(b"\r\n")
        assert not [r for r in replies if r.startswith(b"-")], replies[:5]

    def array(self, *args) -> list:
        """The elements of an array reply; a hash's pairs and a set's members as sets."""
        self.sock.sendall(encode_command(*args))
        head = self._read_lines(1)
        count = int(head[1:head.index(b"\r\n")])
        rest = self._read_lines(2 * count, head[head.index(b"\r\n") + 2:])
        lines = rest.split(b"\r\n")
        values = lines[1:2 * count:2]
        assert len(values) == count and all(h[:1] == b"$" for h in lines[0:2 * count:2]), "not bulk strings"
        if args[0] == "HGETALL":
            return set(zip(values[0::2], values[1::2]))
        if args[0] == "SMEMBERS":
            return set(values)
        return values
