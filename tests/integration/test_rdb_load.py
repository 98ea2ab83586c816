"""Switching from Redis: goblin-server started on a Redis data directory loads its dump.rdb (or the RDB base of
its append-only directory) and serves what redis-server serves from the same file, key by key: type, value
(lists in order, sets and hashes as sets, sorted sets with scores as doubles, streams entry by entry with
XINFO STREAM FULL for their groups), PEXPIRETIME exactly, function libraries, and the encoding Redis 7.2 gives
the value as it loads it.

The files come from Debian's redis-server 7.0 (every type and form, forced both ways with the encoding knobs,
the same knobs on both servers) and, for the encodings 7.0 no longer writes (ziplists, zipmaps, linked
lists, quicklists of ziplists, text scores, stream v1) or does not write yet (7.2's listpack sets and stream
v3, 7.4's slot information), from support/rdb_build.py, which builds them byte by byte from the format's
description. The reference for what a file holds is always a redis-server that loaded the same file (its own
loader re-encodes too), except for RDB 11 and 12 files, which 7.0 refuses: those are checked against the
values the builder wrote.

Redis 7.0 against 7.2 (Goblin follows 7.2): 7.0 calls every list "quicklist" and has no listpack sets, where
7.2 makes a list of one node that fits a listpack and a set of few short strings a listpack; 7.0's XINFO
STREAM FULL has no consumer active-time, which 7.2 sets to the seen-time when the file has none.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import struct
import time

import pytest

from support import rdb_build as rb
from support.rdb_data import (KNOBS, LIBRARY_LONG, LIBRARY_SHORT, LoadedServer, assert_same_data, dump, fill,
                              functions, run)
from support.server import (REFERENCE_BINARY, ServerProcess, free_port, goblin_binary, run_until_exit,
                            samples_until_loaded, stop_and_check, wait_for)
from support.stream_state import stream_full_state

# The knob sets of test_rdb_export.py; set-max-listpack-* (7.2 names) keep their defaults on both sides.
SET_LISTPACK_ENTRIES, SET_LISTPACK_VALUE = 128, 64


def list_nodes(conn, key: bytes) -> tuple[int, int]:
    """(nodes, bytes of their listpacks) of a list in a redis-server 7.0, from DEBUG OBJECT."""
    text = conn.call("DEBUG", "OBJECT", key).value.decode()
    fields = dict(re.findall(r"(\w+):(\S+)", text))
    return int(fields["ql_nodes"]), int(fields["ql_uncompressed_size"])


def expected_goblin_encoding(kind: str, redis_encoding: str, value, knobs: dict, nodes=None) -> str:
    """The encoding Redis 7.2 gives a value that Redis 7.0 loaded from the same file as redis_encoding."""
    if kind == "list":
        count, size = nodes
        limit = int(knobs.get("list-max-listpack-size", -2))
        fits = size <= 4096 << min(-limit - 1, 4) if limit < 0 else size <= 8192 and len(value) <= limit
        return "listpack" if count == 1 and fits else "quicklist"
    if kind == "set" and redis_encoding == "hashtable":
        small = len(value) <= SET_LISTPACK_ENTRIES and all(len(m) <= SET_LISTPACK_VALUE for m in value)
        return "listpack" if small and len(value) <= int(knobs.get("set-max-intset-entries", 512)) else "hashtable"
    return redis_encoding


def loaded_state(path: str, knobs: dict, binary: str, options: dict | None = None):
    """(dump, functions, list nodes, stream active times) of a server started on a copy of the file."""
    with LoadedServer(path, knobs, binary=binary, options=options) as srv:
        with srv.raw() as conn:
            state = dump(conn)
            libraries = functions(conn)
            nodes, active = {}, {}
            for (db, key), (kind, _, _, _) in state.items():
                run(conn, [("SELECT", db)])
                if kind == "list" and binary == REFERENCE_BINARY:
                    nodes[(db, key)] = list_nodes(conn, key)
                if kind == "stream":
                    active[(db, key)] = stream_full_state(conn, key)
            run(conn, [("SELECT", 0)])
            log = srv.logs(limit=20000)
    return state, libraries, nodes, active, log


def assert_goblin_serves_what_redis_serves(path: str, knobs: dict, goblin_extra: dict | None = None) -> str:
    """Loads path into redis-server and goblin-server; returns goblin's log."""
    redis_state, redis_functions, nodes, _, _ = loaded_state(path, knobs, REFERENCE_BINARY)
    goblin_state, goblin_functions, _, streams, log = loaded_state(path, {**knobs, **(goblin_extra or {})},
                                                                   goblin_binary())
    assert_same_data(redis_state, goblin_state, lambda name, kind, encoding, value: expected_goblin_encoding(
        kind, encoding, value, knobs, nodes.get(name)), "loaded by goblin")
    # 7.2 gives a consumer of a file without active times its seen time.
    for name, info in streams.items():
        for group in info[b"groups"].values():
            for consumer_name, consumer in group[b"consumers"].items():
                assert consumer[b"active-time"] == consumer[b"seen-time"], (name, consumer_name, consumer)
    assert goblin_functions == redis_functions
    return log


def saved_by_redis(make_server, knobs: dict, fill_commands) -> str:
    redis = make_server(binary=REFERENCE_BINARY, name="redis-writer", unix=False, options=knobs)
    with redis.raw() as conn:
        fill_commands(conn)
        assert conn.call("SAVE").raw == b"+OK\r\n"
    return os.path.join(redis.dir, "dump.rdb")


# ---- files redis-server writes -----------------------------------------------------------------------------

@pytest.mark.parametrize("knobs", list(KNOBS))
def test_goblin_loads_what_redis_saved(make_server, knobs):
    def commands(conn):
        # Elements from this length on get a plain quicklist node.
        run(conn, [("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1000")])
        fill(conn)
        run(conn, [("SELECT", 2), ("RPUSH", "l:plain", "p" * 2000, "small", "q" * 3000, "s2"), ("SELECT", 0)])
    path = saved_by_redis(make_server, KNOBS[knobs], commands)
    log = assert_goblin_serves_what_redis_serves(path, KNOBS[knobs])
    assert "Loading RDB produced by version 7.0" in log, log
    assert re.search(r"Done loading RDB, keys loaded: \d+, keys expired: 0\.", log), log


def now_ms() -> int:
    return int(time.time() * 1000)


def test_expired_keys_are_dropped_and_counted(make_server):
    started = now_ms()

    def commands(conn):
        run(conn, [("SET", "gone", "x", "PX", "150"), ("HSET", "gone-hash", "f", "v"),
                   ("PEXPIRE", "gone-hash", "150"), ("SET", "kept", "y", "EX", "3600"), ("SET", "plain", "z")])
    path = saved_by_redis(make_server, {}, commands)
    wait_for(lambda: now_ms() > started + 400, timeout=5, what="the deadlines to pass")
    state, _, _, _, log = loaded_state(path, {}, goblin_binary())
    assert sorted(key for _, key in state) == [b"kept", b"plain"]
    assert "keys loaded: 2, keys expired: 2." in log, log


def test_clients_see_loading_while_an_rdb_file_loads(make_server):
    def commands(conn):
        run(conn, [("MSET", *[x for i in range(j, j + 500) for x in (f"load:{i}", "v" * 200)])
                   for j in range(0, 10000, 500)])
    path = saved_by_redis(make_server, {}, commands)
    size = os.path.getsize(path)
    # 100 microseconds per key: about a second of loading, during which clients get -LOADING.
    srv = LoadedServer(path, {"key-load-delay": "100"}, binary=goblin_binary()).srv
    srv.start()
    try:
        with srv.raw(timeout=30) as conn:
            samples = samples_until_loaded(conn)
            loading = [(p, f) for p, f in samples if f["loading"] == "1"]
            assert loading, f"no reply arrived while the file loaded; samples {samples}"
            loaded = [int(f["loading_loaded_bytes"]) for _, f in loading]
            assert all(p.startswith(b"-LOADING ") for p, _ in loading)
            assert loaded == sorted(loaded) and 0 < loaded[-1] <= size, loaded
            assert all(int(f["loading_total_bytes"]) == size for _, f in loading)
            assert samples[-1][0] == b"+PONG\r\n" and conn.call("DBSIZE").value == 10000
        assert "keys loaded: 10000" in srv.logs(limit=20000)
    finally:
        stop_and_check(srv)


def test_round_trip_redis_to_goblin_to_redis(make_server, tmp_path):
    """redis-server's file loaded into goblin-server, saved by it as RDB, loaded by redis-server again: the
    same data as the first redis-server loading the first file."""
    knobs = KNOBS["tight"]
    first = saved_by_redis(make_server, knobs, fill)
    goblin = LoadedServer(first, knobs, binary=goblin_binary(), options={"snapshot-format": "rdb"})
    with goblin as srv:
        with srv.raw() as conn:
            assert conn.call("SAVE").raw == b"+OK\r\n"
        second = str(tmp_path / "second.rdb")
        shutil.copyfile(os.path.join(srv.dir, "dump.rdb"), second)
    assert open(second, "rb").read(9) == b"REDIS0010"
    before, before_functions, _, _, _ = loaded_state(first, knobs, REFERENCE_BINARY)
    after, after_functions, _, _, _ = loaded_state(second, knobs, REFERENCE_BINARY)
    assert sorted(before) == sorted(after)
    for name, (kind, encoding, value, expire_at) in before.items():
        assert after[name] == (kind, encoding, value, expire_at), f"{name} changed on the round trip"
    assert after_functions == before_functions


def test_append_only_directory_with_an_rdb_base(make_server, tmp_path):
    """A Redis 7 append-only directory (aof-use-rdb-preamble yes: an RDB base, RESP incr files): goblin-server
    loads the base and replays the rest; the result is what redis-server gives from the same directory."""
    redis = make_server(binary=REFERENCE_BINARY, name="redis-aof", unix=False,
                        options={"appendonly": "yes", "aof-use-rdb-preamble": "yes"})
    with redis.raw() as conn:
        fill(conn, seed=3)
        assert conn.call("BGREWRITEAOF").raw.startswith(b"+Background append only file rewriting")

        def rewritten():
            info = redis.info("persistence")
            return info["aof_rewrite_in_progress"] == "0" and info.get("aof_rewrite_scheduled", "0") == "0"
        wait_for(rewritten, timeout=60, what="the AOF rewrite")
        run(conn, [("SET", "after-rewrite", "1"), ("ZADD", "z:small", "99", "new"), ("DEL", "h:big"),
                   ("SELECT", 2), ("RPUSH", "l:small", "tail")])
    assert redis.stop() == 0
    aof_dir = str(tmp_path / "appendonlydir")
    shutil.copytree(os.path.join(redis.dir, "appendonlydir"), aof_dir)
    names = os.listdir(aof_dir)
    assert any(n.endswith(".base.rdb") for n in names) and any(n.endswith(".incr.aof") for n in names), names
    states = {}
    for binary in (REFERENCE_BINARY, goblin_binary()):
        srv = ServerProcess(binary, name="aof-loader", unix=False, options={"appendonly": "yes"},
                            startup_timeout=120)
        shutil.copytree(aof_dir, os.path.join(srv.dir, "appendonlydir"))
        srv.start()
        try:
            wait_for(lambda: srv.info("persistence")["loading"] == "0", timeout=60, what="the AOF to load")
            with srv.raw() as conn:
                states[binary] = dump(conn)
            log = srv.logs(limit=20000)
        finally:
            stop_and_check(srv)
    redis_state, goblin_state = states[REFERENCE_BINARY], states[goblin_binary()]
    assert sorted(redis_state) == sorted(goblin_state)
    for name, (kind, _, value, expire_at) in redis_state.items():
        assert goblin_state[name][0] == kind and goblin_state[name][2] == value, name
        assert goblin_state[name][3] == expire_at, name
    assert "RDB is base AOF" in log and "Loading RDB produced by version 7.0" in log, log


# ---- files built byte by byte ------------------------------------------------------------------------------

def legacy_body(rng: random.Random) -> bytes:
    """Every encoding Redis 7.0 still loads but no longer writes, and the current ones written by hand,
    over three databases, with expiries in seconds and milliseconds and LRU/LFU records."""
    # Seconds are a signed 32-bit field: 2033 is within it.
    far_s, far_ms = 2000000000, 4102444800123
    words = [b"alpha", b"b", b"", b"007", b"-0", b"12", b"-300", b"70000", b"9000000000", b"x" * 70,
             b"\x00\xffbin", b"y" * 300]
    ints = [3, -5, 127, 128, -32768, 40000, -2147483648, 2147483647]
    body = rb.aux("redis-ver", "2.8.24") + rb.aux("redis-bits", "64") + rb.aux("ctime", "1600000000")
    body += bytes([rb.OP_FUNCTION2]) + rb.string(LIBRARY_SHORT)
    for db in (0, 3, 9):
        body += bytes([rb.OP_SELECTDB]) + rb.length(db) + bytes([rb.OP_RESIZEDB]) + rb.length(30) + rb.length(4)
        t = f"{db}".encode()
        # Strings in every encoding.
        body += rb.record(rb.T_STRING, b"s:raw" + t, rb.string(b"plain text " + t))
        body += rb.record(rb.T_STRING, b"s:int8" + t, rb.int_string(-100))
        body += rb.record(rb.T_STRING, b"s:int16" + t, rb.int_string(30000))
        body += rb.record(rb.T_STRING, b"s:int32" + t, rb.int_string(-2000000000))
        body += rb.record(rb.T_STRING, b"s:lzf" + t, rb.lzf_string(b"head" + b"z" * 500 + b"mid" + b"q" * 40 + t))
        body += bytes([rb.OP_EXPIRETIME]) + struct.pack("<i", far_s + db)
        body += rb.record(rb.T_STRING, b"s:expire-seconds" + t, rb.string(b"v"))
        body += bytes([rb.OP_IDLE]) + rb.length(3600) + rb.record(rb.T_STRING, b"s:idle" + t, rb.string(b"v"))
        body += bytes([rb.OP_FREQ, 42]) + rb.record(rb.T_STRING, b"s:freq" + t, rb.string(b"v"))
        # Lists: linked, ziplist, quicklist of ziplists (one node and three), with integers.
        elements = [rng.choice(words) for _ in range(25)] + [str(i).encode() for i in ints]
        body += rb.record(rb.T_LIST, b"l:linked" + t,
                          rb.length(len(elements)) + b"".join(rb.string(e) for e in elements), far_ms + db)
        body += rb.record(rb.T_LIST_ZIPLIST, b"l:ziplist" + t, rb.string(rb.ziplist(elements)))
        body += rb.record(rb.T_LIST_QUICKLIST, b"l:quicklist1" + t, rb.length(1) + rb.string(rb.ziplist(elements)))
        body += rb.record(rb.T_LIST_QUICKLIST, b"l:quicklist3" + t, rb.length(3) + b"".join(
            rb.string(rb.ziplist(elements[i::3])) for i in range(3)))
        body += rb.record(rb.T_LIST_QUICKLIST_2, b"l:quicklist2" + t, rb.length(2) + rb.length(2) +
                          rb.lzf_string(rb.listpack(elements)) + rb.length(1) + rb.string(b"P" * 100))
        # Sets: intsets of every width, a hashtable of text and of integers.
        body += rb.record(rb.T_SET_INTSET, b"set:i16" + t, rb.string(rb.intset([1, -2, 300], 2)))
        body += rb.record(rb.T_SET_INTSET, b"set:i32" + t, rb.string(rb.intset([1, 70000, -2147483648], 4)))
        body += rb.record(rb.T_SET_INTSET, b"set:i64" + t, rb.string(rb.intset([1, 2**40, -2**63], 8)),
                          far_ms + 100 + db)
        body += rb.record(rb.T_SET_INTSET, b"set:wide-small" + t, rb.string(rb.intset([5, 6], 8)))
        members = sorted({rng.choice(words) + bytes([65 + i % 26]) for i in range(40)})
        body += rb.record(rb.T_SET, b"set:table" + t, rb.length(len(members)) + b"".join(map(rb.string, members)))
        body += rb.record(rb.T_SET, b"set:table-ints" + t, rb.length(3) + b"".join(
            rb.int_string(v) for v in (7, -8, 9)))
        # Sorted sets: text scores, binary scores, ziplist, listpack.
        pairs = [(m, float(rng.randrange(-50, 50)) / 4) for m in members[:20]]
        special = [(b"pinf", float("inf")), (b"ninf", float("-inf"))]
        text = b"".join(rb.string(m) + (bytes([254 if s > 0 else 255]) if abs(s) == float("inf") else
                                        bytes([len(repr(s))]) + repr(s).encode()) for m, s in pairs + special)
        body += rb.record(rb.T_ZSET, b"z:text" + t, rb.length(len(pairs) + 2) + text, far_ms + 200 + db)
        body += rb.record(rb.T_ZSET_2, b"z:binary" + t, rb.length(len(pairs)) + b"".join(
            rb.string(m) + struct.pack("<d", s) for m, s in pairs))
        ranked = sorted(pairs, key=lambda p: (p[1], p[0]))
        flat_z = [x for m, s in ranked for x in (m, repr(s).encode() if s != int(s) else str(int(s)).encode())]
        body += rb.record(rb.T_ZSET_ZIPLIST, b"z:ziplist" + t, rb.string(rb.ziplist(flat_z)))
        body += rb.record(rb.T_ZSET_LISTPACK, b"z:listpack" + t, rb.string(rb.listpack(flat_z)))
        # Hashes: zipmap, ziplist, listpack, hashtable.
        fields = [(m, rng.choice(words)) for m in members[:15]]
        flat_h = [x for pair in fields for x in pair]
        body += rb.record(rb.T_HASH_ZIPMAP, b"h:zipmap" + t, rb.string(rb.zipmap(fields)))
        body += rb.record(rb.T_HASH_ZIPLIST, b"h:ziplist" + t, rb.lzf_string(rb.ziplist(flat_h)), far_ms + 300 + db)
        body += rb.record(rb.T_HASH_LISTPACK, b"h:listpack" + t, rb.string(rb.listpack(flat_h)))
        body += rb.record(rb.T_HASH, b"h:table" + t, rb.length(len(fields)) + b"".join(
            rb.string(f) + rb.string(v) for f, v in fields))
        # A stream v1 (type 15): two nodes, a deleted entry, entries with their own fields, a group whose
        # pending entries belong to two consumers.
        node1 = rb.stream_node((1000, 0), [b"a", b"b"], [
            (1000, 0, [(b"a", b"1"), (b"b", b"2")], False), (1000, 1, [(b"a", b"3"), (b"b", b"4")], True),
            (1001, 0, [(b"c", b"5")], False)])
        node2 = rb.stream_node((2000, 5), [b"a"], [(2000, 5, [(b"a", b"6")], False),
                                                   (2001, 0, [(b"a", b"7"), (b"z", b"8")], False)])
        stream = (rb.length(2) + rb.string(rb.stream_id(1000, 0)) + rb.string(node1) +
                  rb.string(rb.stream_id(2000, 5)) + rb.lzf_string(node2) +
                  rb.length(4) + rb.length(2001) + rb.length(0))
        stream += rb.length(1) + rb.string(b"workers") + rb.length(2000) + rb.length(5)
        stream += rb.length(2) + rb.stream_id(1000, 0) + rb.millisecond_time(1600000000000) + rb.length(1)
        stream += rb.stream_id(2000, 5) + rb.millisecond_time(1600000000500) + rb.length(3)
        stream += rb.length(2) + rb.string(b"ann") + rb.millisecond_time(1600000001000) + rb.length(1)
        stream += rb.stream_id(2000, 5) + rb.string(b"bo") + rb.millisecond_time(1600000002000) + rb.length(1)
        stream += rb.stream_id(1000, 0)
        body += rb.record(rb.T_STREAM_LISTPACKS, b"st:v1" + t, stream)
    return body


def test_legacy_encodings_built_by_hand(tmp_path):
    path = str(tmp_path / "legacy.rdb")
    with open(path, "wb") as f:
        f.write(rb.rdb_file(legacy_body(random.Random(5)), 10))
    log = assert_goblin_serves_what_redis_serves(path, {})
    assert "Loading RDB produced by version 2.8.24" in log, log


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu"])
def test_idle_and_frequency_records_set_the_access_stamps(tmp_path, policy):
    """An RDB file's LRU idle time and LFU counter records, read under the policy that uses them (the
    other is ignored, as by Redis): OBJECT IDLETIME / OBJECT FREQ as redis-server reports them."""
    body = bytes([rb.OP_IDLE]) + rb.length(7200) + rb.record(rb.T_STRING, "idle", rb.string("v"))
    body += bytes([rb.OP_FREQ, 42]) + rb.record(rb.T_STRING, "freq", rb.string("v"))
    body += bytes([rb.OP_IDLE]) + rb.length(100) + bytes([rb.OP_FREQ, 9]) + rb.record(rb.T_STRING, "both",
                                                                                      rb.string("v"))
    path = str(tmp_path / "access.rdb")
    with open(path, "wb") as f:
        f.write(rb.rdb_file(body, 10))
    read = "FREQ" if policy == "allkeys-lfu" else "IDLETIME"
    replies = {}
    for binary in (REFERENCE_BINARY, goblin_binary()):
        with LoadedServer(path, {"maxmemory-policy": policy}, binary=binary) as srv:
            with srv.raw() as conn:
                replies[binary] = [conn.call("OBJECT", read, key).value for key in ("idle", "freq", "both")]
    assert replies[goblin_binary()] == replies[REFERENCE_BINARY], replies
    if policy == "allkeys-lfu":
        # freq's counter is the file's; the others start as a new key's (5).
        assert replies[goblin_binary()] == [5, 42, 9]
    else:
        idle = replies[goblin_binary()]
        assert 7200 <= idle[0] <= 7201 and 0 <= idle[1] <= 1 and 100 <= idle[2] <= 101, idle


@pytest.mark.parametrize("version", [6, 9])
def test_older_rdb_versions(tmp_path, version):
    """A version 6 and a version 9 header on the same records (7.0 reads versions 1 to 10)."""
    body = b"".join(rb.record(rb.T_LIST_ZIPLIST, f"l{i}", rb.string(rb.ziplist([b"a", b"%d" % i]))) +
                    rb.record(rb.T_HASH_ZIPMAP, f"h{i}", rb.string(rb.zipmap([(b"f", b"%d" % i)])))
                    for i in range(20))
    path = str(tmp_path / "old.rdb")
    with open(path, "wb") as f:
        f.write(rb.rdb_file(bytes([rb.OP_SELECTDB, 0]) + body, version))
    assert_goblin_serves_what_redis_serves(path, {})


def test_rdb_11_and_12_features(tmp_path):
    """7.2's listpack set and stream v3 (consumer active times), 7.4's slot information, in a version 12
    file: 7.0 refuses the file, so goblin's state is checked against what was written."""
    far_ms = 4102444800000
    body = rb.aux("redis-ver", "7.4.1") + bytes([rb.OP_SELECTDB, 0, rb.OP_RESIZEDB, 3, 1])
    body += bytes([rb.OP_SLOT_INFO]) + rb.length(1234) + rb.length(3) + rb.length(1)
    body += rb.record(rb.T_SET_LISTPACK, "set:lp", rb.string(rb.listpack([b"a", b"7", b"", b"-12", b"zz"])))
    body += rb.record(rb.T_SET_LISTPACK, "set:lp-ints", rb.string(rb.listpack([b"1", b"2", b"3"])), far_ms)
    node = rb.stream_node((5, 0), [b"f"], [(5, 0, [(b"f", b"v")], False), (6, 1, [(b"f", b"w")], False)])
    stream = rb.length(1) + rb.string(rb.stream_id(5, 0)) + rb.string(node)
    stream += rb.length(2) + rb.length(9) + rb.length(0)          # length, last id 9-0
    stream += rb.length(5) + rb.length(0) + rb.length(8) + rb.length(3) + rb.length(12)  # first, max deleted, added
    stream += rb.length(1) + rb.string(b"g") + rb.length(5) + rb.length(0) + rb.length(11)  # group, entries read
    stream += rb.length(1) + rb.stream_id(5, 0) + rb.millisecond_time(1700000000000) + rb.length(4)
    stream += rb.length(1) + rb.string(b"c") + rb.millisecond_time(1700000000100)
    stream += rb.millisecond_time(1700000000050) + rb.length(1) + rb.stream_id(5, 0)
    body += rb.record(rb.T_STREAM_LISTPACKS_3, "st:v3", stream)
    path = str(tmp_path / "v12.rdb")
    with open(path, "wb") as f:
        f.write(rb.rdb_file(body, 12))
    state, _, _, streams, log = loaded_state(path, {}, goblin_binary())
    assert state[(0, b"set:lp")][:3] == ("set", "listpack", sorted([b"a", b"7", b"", b"-12", b"zz"]))
    # A listpack set of integers stays a listpack, as 7.2 keeps it.
    assert state[(0, b"set:lp-ints")] == ("set", "listpack", [b"1", b"2", b"3"], far_ms)
    info = streams[(0, b"st:v3")]
    assert info[b"length"] == 2 and info[b"last-generated-id"] == b"9-0"
    assert info[b"max-deleted-entry-id"] == b"8-3" and info[b"entries-added"] == 12
    assert info[b"entries"] == [(b"5-0", (b"f", b"v")), (b"6-1", (b"f", b"w"))]
    group = info[b"groups"][b"g"]
    assert group[b"entries-read"] == 11 and group[b"pending"] == [(b"5-0", b"c", 1700000000000, 4)]
    consumer = group[b"consumers"][b"c"]
    assert consumer[b"seen-time"] == 1700000000100 and consumer[b"active-time"] == 1700000000050
    assert "(RDB format version 12)" in log, log
    # --export-rdb takes an RDB file too: the version 12 file becomes one Redis 7.0 loads.
    out = str(tmp_path / "v10.rdb")
    status, output = run_until_exit([goblin_binary(), "--export-rdb", path, out], timeout=60)
    assert status == 0 and output.startswith(f"OK {out}: 3 keys"), output
    assert open(out, "rb").read(9) == b"REDIS0010"
    redis_state, _, _, redis_streams, _ = loaded_state(out, {}, REFERENCE_BINARY)
    assert {k: v[2:] for k, v in redis_state.items()} == {k: v[2:] for k, v in state.items()}
    assert redis_streams[(0, b"st:v3")][b"entries"] == info[b"entries"]


# ---- refusals ----------------------------------------------------------------------------------------------

def start_refused(path: str, options: dict | None = None) -> str:
    """goblin-server started on a copy of path must exit with status 1; returns its log."""
    srv = LoadedServer(path, {}, binary=goblin_binary(), options=options).srv
    status, output = run_until_exit(srv.command_line(free_port()), timeout=60, cwd=srv.dir)
    shutil.rmtree(srv.dir, ignore_errors=True)
    assert status == 1, f"exit {status}:\n{output}"
    return output


def check(path: str) -> tuple[int, str]:
    return run_until_exit([goblin_binary(), "--check-snapshot", path], timeout=60)


def test_refusals_name_the_problem(tmp_path):
    module_id = 0
    for c in "ReJSON-RL":
        module_id = module_id << 6 | "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(c)
    module_id = module_id << 10 | 3
    cases = {
        "module.rdb": (rb.rdb_file(rb.record(rb.T_MODULE_2, "doc", rb.length(module_id) + b"\x00" * 8), 10),
                       "module type 'ReJSON-RL'", {}),
        "hfe.rdb": (rb.rdb_file(rb.record(rb.T_HASH_METADATA, "h", b"\x00" * 8 + rb.length(1)), 12),
                    "truncated or bad field deadline", {}),
        "db.rdb": (rb.rdb_file(bytes([rb.OP_SELECTDB, 9]) + rb.record(rb.T_STRING, "k", rb.string("v")), 10),
                   "database 9 is out of range (the server has 4 databases", {"databases": "4"}),
        "version.rdb": (b"REDIS0013" + bytes([rb.OP_EOF]) + b"\x00" * 8,
                        "RDB format version 13 is not supported", {}),
        "dup.rdb": (rb.rdb_file(rb.record(rb.T_SET, "s", rb.length(2) + rb.string("a") + rb.string("a")), 10),
                    "key 's': a set member appears twice", {}),
    }
    for name, (content, what, options) in cases.items():
        path = str(tmp_path / name)
        with open(path, "wb") as f:
            f.write(content)
        log = start_refused(path, options)
        assert "dump.rdb: offset " in log and what in log, f"{name}:\n{log}"
        if not options:
            status, output = check(path)
            assert status == 1 and f"{path}: offset " in output and what in output, f"{name}: {output}"


def every_type_file(make_server) -> tuple[str, list[bytes]]:
    """A small file redis-server wrote holding every type, and the names of its keys."""
    def commands(conn):
        run(conn, [("SET", "str", "hello"), ("SET", "num", "12345"), ("RPUSH", "list", "a", "b", "1"),
                   ("SADD", "iset", "1", "2", "3"), ("SADD", "tset", "a", "b"), ("ZADD", "zset", "1", "a", "2.5", "b"),
                   ("HSET", "hash", "f", "v", "g", "12"), ("XADD", "stream", "1-1", "f", "v"),
                   ("XADD", "stream", "2-1", "f", "w"), ("XGROUP", "CREATE", "stream", "grp", "0"),
                   ("XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "stream", ">"),
                   ("SET", "ttl", "v", "EX", "100000"), ("SELECT", 5), ("SET", "db5", "x"),
                   ("FUNCTION", "LOAD", LIBRARY_LONG)])
    keys = [b"str", b"num", b"list", b"iset", b"tset", b"zset", b"hash", b"stream", b"ttl", b"db5"]
    return saved_by_redis(make_server, {}, commands), keys


def test_corruption_matrix(make_server, tmp_path):
    """Cut at every record boundary (and inside every record) and seeded byte flips over a file of every
    type: --check-snapshot names the file and an offset and exits 1, never crashing; the server refuses to
    start on a few of them."""
    source, keys = every_type_file(make_server)
    data = open(source, "rb").read()
    status, output = check(source)
    assert status == 0 and output.startswith(f"OK {source}: 10 keys, 1 function libraries"), output
    # Record boundaries: each key record starts with its type byte before the key's length byte.
    starts = sorted(data.index(b"%c%s" % (len(k), k)) - 1 for k in keys)
    cuts = {9, len(data) - 9, len(data) - 4, len(data) - 1}
    for start in starts:
        cuts |= {start, start + 1, start + 3}
    for a, b in zip(starts, starts[1:] + [len(data) - 9]):
        cuts.add((a + b) // 2)
    cuts |= {data.index(b"\xfa"), data.index(b"\xf5"), data.index(b"\xfe")}
    damaged = []
    for cut in sorted(c for c in cuts if 0 < c < len(data)):
        damaged.append((f"cut at {cut}", data[:cut]))
    rng = random.Random(2024)
    for offset in sorted(rng.sample(range(9, len(data)), 40)):
        flipped = bytearray(data)
        flipped[offset] ^= rng.randrange(1, 256)
        damaged.append((f"byte {offset} flipped", bytes(flipped)))
    path = str(tmp_path / "damaged.rdb")
    for what, content in damaged:
        with open(path, "wb") as f:
            f.write(content)
        status, output = check(path)
        assert status == 1, f"{what}: exit {status}\n{output}"
        assert re.match(re.escape(path) + r": offset \d+: ", output), f"{what}: {output}"
    for what, content in damaged[::15]:
        with open(path, "wb") as f:
            f.write(content)
        log = start_refused(path)
        assert re.search(r"dump\.rdb: offset \d+: ", log), f"{what}:\n{log}"


def test_check_snapshot_reports_an_rdb_file(make_server):
    source, _ = every_type_file(make_server)
    status, output = check(source)
    assert status == 0, output
    assert output.strip() == (f"OK {source}: 10 keys, 1 function libraries, {os.path.getsize(source)} bytes, "
                              "RDB version 10, written by Redis 7.0.15"), output


def test_debug_reload_after_loading_an_rdb_file(make_server):
    source, keys = every_type_file(make_server)
    with LoadedServer(source, {}, binary=goblin_binary()) as srv:
        with srv.raw() as conn:
            before = dump(conn)
            assert conn.call("DEBUG", "RELOAD").raw == b"+OK\r\n"
            assert dump(conn) == before
            assert open(os.path.join(srv.dir, "dump.rdb"), "rb").read(8) == b"GOBLNSNP"
    assert sorted(key for _, key in before) == sorted(keys)
