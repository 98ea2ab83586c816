"""The append-only file's multi-part layout as Redis 7 reads it, on goblin-server and on Debian's
redis-server 7.0 alike: directories prepared by hand (manifest lines, base and incr files, a pre-7.0
single file) are refused or loaded as Redis does, with the log lines Redis's own tests look for; a
log found at startup is kept as it is; rewrites run under a continuous write load of every type and
the data set reloads to the same DEBUG DIGEST.

Redis 7.0 and 7.2 log the same texts for all of this. The one difference kept on purpose: Goblin's
base files are Goblin snapshots named `.base.gsnap` where Redis writes `.base.rdb`, so manifest
names are compared with either suffix.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time

import pytest

from integration.test_persistence import start_expecting_refusal
from support.resp import ConnectionClosed
from support.server import REFERENCE_BINARY, ServerProcess, goblin_binary, parse_info, wait_for

AOF_DIR = "appendonlydir"
BASE1 = "appendonly.aof.1.base.aof"
BASE2 = "appendonly.aof.2.base.aof"
INCR1 = "appendonly.aof.1.incr.aof"
INCR2 = "appendonly.aof.2.incr.aof"
INCR3 = "appendonly.aof.3.incr.aof"
OLD = "appendonly.aof"   # the pre-7.0 log's name, in the server's dir
DEADLINE = 60


def command(*args) -> bytes:
    """One command as RESP, the bytes an AOF holds."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def sets(*pairs) -> bytes:
    return b"".join(command("SET", k, v) for k, v in pairs)


@pytest.fixture(params=[pytest.param("goblin", id="goblin"), pytest.param("redis", id="redis-7.0")])
def unstarted(request, make_server):
    """unstarted(**options) makes a server with appendonly yes that is not started yet, so that its
    dir can be prepared (goblin-server, then Debian's redis-server)."""
    binary = goblin_binary() if request.param == "goblin" else REFERENCE_BINARY

    def make(**options):
        return make_server(binary=binary, name=request.param, start=False,
                           options={"appendonly": "yes", "auto-aof-rewrite-percentage": "0", **options})

    return make


def prepare(srv: ServerProcess, files: dict, manifest: str | None = None):
    """Writes files (name -> bytes) and the manifest text into srv's AOF directory."""
    path = os.path.join(srv.dir, AOF_DIR)
    os.makedirs(path, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)
    if manifest is not None:
        with open(os.path.join(path, "appendonly.aof.manifest"), "w") as f:
            f.write(manifest)


def manifest_entries(srv: ServerProcess, filename: str = OLD) -> list[tuple]:
    """(file, seq, type) of each manifest line, in order."""
    text = open(os.path.join(srv.dir, AOF_DIR, filename + ".manifest")).read()
    entries = []
    for line in text.splitlines():
        fields = line.split()
        keys = dict(zip(fields[0::2], fields[1::2]))
        entries.append((keys["file"], int(keys["seq"]), keys["type"]))
    return entries


def base_name(name: str) -> str:
    """A base's name with Goblin's suffix written as Redis's, for comparisons."""
    return re.sub(r"\.base\.gsnap$", ".base.rdb", name)


def in_aof_dir(srv: ServerProcess, name: str) -> bool:
    return os.path.exists(os.path.join(srv.dir, AOF_DIR, name))


def info(conn) -> dict:
    return parse_info(conn.call("INFO", "persistence").value)


def wait_rewrite_done(conn, rewrites_before: int):
    def done():
        fields = info(conn)
        return (int(fields["aof_rewrites"]) > rewrites_before and fields["aof_rewrite_in_progress"] == "0"
                and fields["aof_rewrite_scheduled"] == "0")
    wait_for(done, DEADLINE, what="the AOF rewrite to finish")
    assert info(conn)["aof_last_bgrewrite_status"] == "ok"


def rewrite(conn):
    before = int(info(conn)["aof_rewrites"])
    reply = conn.call("BGREWRITEAOF")
    assert reply.raw.startswith(b"+Background append only file rewriting"), reply
    wait_rewrite_done(conn, before)


def digest_survives_loadaof(conn) -> bytes:
    digest = conn.call("DEBUG", "DIGEST").value
    assert conn.call("DEBUG", "LOADAOF").raw == b"+OK\r\n"
    assert conn.call("DEBUG", "DIGEST").value == digest
    return digest


# ---- manifests and files the server must refuse ----------------------------------------------------

# name: (files, manifest, what the log must say, and for a refused manifest the number of the line
# Redis shows (0: none shown); None when the manifest is sound but a file is missing)
REFUSALS = {
    "an incr file is missing": (
        {BASE1: sets(("k1", "v1")), INCR2: sets(("k2", "v2"))},
        f"file {BASE1} seq 1 type b\nfile {INCR1} seq 1 type i\nfile {INCR2} seq 2 type i\n",
        r"appendonly\.aof\.1\.incr\.aof .*No such file or directory", None),
    "the last incr file is missing": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k2", "v2"))},
        f"file {BASE1} seq 1 type b\nfile {INCR1} seq 1 type i\nfile {INCR2} seq 2 type i\n",
        r"appendonly\.aof\.2\.incr\.aof .*No such file or directory", None),
    "the base is missing": (
        {INCR1: sets(("k1", "v1"))},
        f"file {BASE1} seq 1 type b\nfile {INCR1} seq 1 type i\n",
        r"appendonly\.aof\.1\.base\.aof .*No such file or directory", None),
    "the old file is named but exists nowhere": (
        {}, f"file {OLD} seq 1 type b\n", r"appendonly\.aof .*No such file or directory", None),
    "incr seqs do not increase": (
        {INCR1: sets(("k1", "v1")), INCR2: sets(("k2", "v2"))},
        f"file {INCR2} seq 2 type i\nfile {INCR1} seq 1 type i\n",
        r"Found a non-monotonic sequence number", 2),
    "a blank line": (
        {INCR1: sets(("k1", "v1")), INCR3: sets(("k2", "v2"))},
        f"file {INCR1} seq 1 type i\n\nfile {INCR3} seq 3 type i\n",
        r"Invalid AOF manifest file format", 2),
    "two bases": (
        {BASE1: sets(("k1", "v1")), BASE2: sets(("k2", "v2")), INCR1: sets(("k3", "v3"))},
        f"file {BASE1} seq 1 type b\nfile {BASE2} seq 2 type b\nfile {INCR1} seq 1 type i\n",
        r"Found duplicate base file information", 2),
    "an unknown type": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k3", "v3"))},
        f"file {BASE1} seq 1 type x\nfile {INCR1} seq 1 type i\n", r"Unknown AOF file type", 1),
    "a misspelled key": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k3", "v3"))},
        f"filx {BASE1} seq 1 type b\nfile {INCR1} seq 1 type i\n", r"Invalid AOF manifest file format", 1),
    "a line without its seq": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k3", "v3"))},
        f"file {BASE1} seq 1 type b\nfile {INCR1} type i\n", r"Invalid AOF manifest file format", 2),
    "an odd number of fields": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k3", "v3"))},
        f"file {BASE1} seq 1 type b\nfile {INCR1} seq 1 type i newkey\n",
        r"Invalid AOF manifest file format", 2),
    "a line over 1023 bytes": (
        {BASE1: sets(("k1", "v1")), INCR1: sets(("k3", "v3"))},
        f"file {BASE1} seq 1 type b " * 40 + f"\nfile {INCR1} seq 1 type i\n",
        r"The AOF manifest file contains too long line", 0),
    "an empty manifest": ({}, "", r"Found an empty AOF manifest", 0),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_a_broken_layout_is_refused_with_redis_s_log_lines(unstarted, case):
    files, manifest, expected, shown_line = REFUSALS[case]
    srv = unstarted()
    prepare(srv, files, manifest)
    before = {name: open(os.path.join(srv.dir, AOF_DIR, name), "rb").read() for name in files}
    output = start_expecting_refusal(srv)
    assert len(re.findall(expected, output)) >= 1, f"{expected!r} not in the log:\n{output}"
    assert ("*** FATAL AOF MANIFEST FILE ERROR ***" in output) == (shown_line is not None), output
    shown = re.findall(r"Reading the manifest file, at line (\d+)", output)
    assert shown == ([str(shown_line)] if shown_line else []), output
    # Nothing was changed on the way out.
    after = {name: open(os.path.join(srv.dir, AOF_DIR, name), "rb").read() for name in files}
    assert after == before
    assert open(os.path.join(srv.dir, AOF_DIR, "appendonly.aof.manifest")).read() == manifest


# ---- layouts that load, and stay as they were ------------------------------------------------------

def test_gaps_unknown_keys_and_empty_files_load_and_the_layout_is_kept(unstarted):
    srv = unstarted()
    manifest = (f"file {BASE1} seq 1 type b newkey newvalue\nfile {INCR1} seq 1 type i\n"
                f"file {INCR3} seq 3 type i\n")
    prepare(srv, {BASE1: sets(("k1", "v1")), INCR1: b"", INCR3: sets(("k3", "v3"))}, manifest)
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2", "k3").py() == [b"v1", None, b"v3"]
        # The log was found whole: no new base, writes go on at the end of the last incr file.
        assert manifest_entries(srv) == [(BASE1, 1, "b"), (INCR1, 1, "i"), (INCR3, 3, "i")]
        size = os.path.getsize(os.path.join(srv.dir, AOF_DIR, INCR3))
        assert conn.call("SET", "k4", "v4").raw == b"+OK\r\n"
        wait_for(lambda: os.path.getsize(os.path.join(srv.dir, AOF_DIR, INCR3)) > size, DEADLINE,
                 what="the write in the last incr file")
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2", "k3", "k4").py() == [b"v1", None, b"v3", b"v4"]


def test_a_log_of_incr_files_only_gets_no_base_at_startup(unstarted):
    srv = unstarted()
    manifest = f"file {INCR1} seq 1 type i\nfile {INCR2} seq 2 type i\n"
    prepare(srv, {INCR1: sets(("k1", "v1")), INCR2: sets(("k2", "v2"))}, manifest)
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2").py() == [b"v1", b"v2"]
        assert manifest_entries(srv) == [(INCR1, 1, "i"), (INCR2, 2, "i")]
        assert sorted(os.listdir(os.path.join(srv.dir, AOF_DIR))) == sorted(
            ["appendonly.aof.manifest", INCR1, INCR2])
        assert conn.call("SET", "k3", "v3").raw == b"+OK\r\n"
        assert conn.call("DEBUG", "LOADAOF").raw == b"+OK\r\n"
        assert conn.call("MGET", "k1", "k2", "k3").py() == [b"v1", b"v2", b"v3"]
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2", "k3").py() == [b"v1", b"v2", b"v3"]
        assert manifest_entries(srv) == [(INCR1, 1, "i"), (INCR2, 2, "i")]


def test_an_empty_aof_directory_starts_a_new_log(unstarted):
    srv = unstarted()
    os.makedirs(os.path.join(srv.dir, AOF_DIR))
    srv.start()
    entries = manifest_entries(srv)
    assert [(base_name(f), s, t) for f, s, t in entries] == [
        ("appendonly.aof.1.base.rdb", 1, "b"), (INCR1, 1, "i")]
    assert all(in_aof_dir(srv, f) for f, _, _ in entries)
    with srv.raw() as conn:
        assert conn.call("SET", "foo", "behavior").raw == b"+OK\r\n"
        digest_survives_loadaof(conn)


# ---- the upgrade of a pre-7.0 log ------------------------------------------------------------------

def old_style_log(make_server, preamble: bool) -> bytes:
    """A pre-7.0 appendonly.aof holding k1, k2 and k3: commands, or an RDB file that redis-server
    wrote (k1, k2) followed by a command (k3), as aof-use-rdb-preamble yes left it."""
    if not preamble:
        return sets(("k1", "v1"), ("k2", "v2"), ("k3", "v3"))
    reference = make_server(binary=REFERENCE_BINARY, name="rdb-writer")
    with reference.raw() as conn:
        assert conn.call("MSET", "k1", "v1", "k2", "v2").raw == b"+OK\r\n"
        assert conn.call("SAVE").raw == b"+OK\r\n"
    rdb = open(os.path.join(reference.dir, "dump.rdb"), "rb").read()
    assert rdb.startswith(b"REDIS")
    return rdb + command("SELECT", 0) + sets(("k3", "v3"))


@pytest.mark.parametrize("preamble", [False, True], ids=["commands", "rdb-preamble"])
def test_a_pre_7_log_moves_into_the_directory_as_its_base(unstarted, make_server, preamble):
    srv = unstarted()
    with open(os.path.join(srv.dir, OLD), "wb") as f:
        f.write(old_style_log(make_server, preamble))
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2", "k3").py() == [b"v1", b"v2", b"v3"]
        assert not os.path.exists(os.path.join(srv.dir, OLD)) and in_aof_dir(srv, OLD)
        assert manifest_entries(srv) == [(OLD, 1, "b"), (INCR1, 1, "i")]
        assert conn.call("SET", "k4", "v4").raw == b"+OK\r\n"
        rewrite(conn)
        assert conn.call("SET", "k5", "v5").raw == b"+OK\r\n"
        assert [(base_name(f), s, t) for f, s, t in manifest_entries(srv)] == [
            ("appendonly.aof.2.base.rdb", 2, "b"), (INCR2, 2, "i")]
        digest_survives_loadaof(conn)
        assert conn.call("DBSIZE").value == 5
    assert ("Successfully migrated an old-style AOF file (appendonly.aof) into the AOF directory "
            "(appendonlydir).") in srv.logs(limit=100000)


def test_an_interrupted_upgrade_is_finished(unstarted):
    # The manifest was written, the old file not moved yet.
    srv = unstarted()
    with open(os.path.join(srv.dir, OLD), "wb") as f:
        f.write(sets(("k1", "v1"), ("k2", "v2")))
    prepare(srv, {}, f"file {OLD} seq 1 type b\n")
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k2").py() == [b"v1", b"v2"]
    assert not os.path.exists(os.path.join(srv.dir, OLD)) and in_aof_dir(srv, OLD)
    assert manifest_entries(srv) == [(OLD, 1, "b"), (INCR1, 1, "i")]


def test_a_finished_upgrade_ignores_an_old_file_left_in_the_dir(unstarted):
    srv = unstarted()
    with open(os.path.join(srv.dir, OLD), "wb") as f:
        f.write(sets(("k1", "v1")))
    prepare(srv, {OLD: sets(("k4", "v4"))}, f"file {OLD} seq 1 type b\n")
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "k4").py() == [None, b"v4"]
    assert os.path.exists(os.path.join(srv.dir, OLD))
    assert manifest_entries(srv) == [(OLD, 1, "b"), (INCR1, 1, "i")]


def test_two_servers_upgrade_their_own_old_logs_in_one_dir(unstarted):
    first = unstarted()
    with open(os.path.join(first.dir, OLD), "wb") as f:
        f.write(sets(("k1", "v1")))
    with open(os.path.join(first.dir, OLD + "2"), "wb") as f:
        f.write(sets(("k4", "v4")))
    second = unstarted(**{"appendfilename": OLD + "2", "dir": first.dir})
    for srv, mine, other, name in ((first, "k1", "k4", OLD), (second, "k4", "k1", OLD + "2")):
        srv.start()
        with srv.raw() as conn:
            wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
            assert conn.call("MGET", mine, other).py() == [b"v" + mine[1:].encode(), None]
            assert manifest_entries(first, name) == [(name, 1, "b"), (f"{name}.1.incr.aof", 1, "i")]
            rewrite(conn)
            assert [(base_name(f), s, t) for f, s, t in manifest_entries(first, name)] == [
                (f"{name}.2.base.rdb", 2, "b"), (f"{name}.2.incr.aof", 2, "i")]
            digest_survives_loadaof(conn)


# ---- torn and damaged files ------------------------------------------------------------------------

FOO = command("SET", "foo", "hello")
BAR = command("SET", "bar", "world")


def incr_log(srv: ServerProcess, incr: bytes, *more: bytes):
    """A RESP base setting k1, then incr files: incr, and more after it."""
    names = [INCR1, INCR2, INCR3][:1 + len(more)]
    prepare(srv, {BASE1: sets(("k1", "v1")), **dict(zip(names, (incr, *more)))},
            f"file {BASE1} seq 1 type b\n" + "".join(f"file {n} seq {i + 1} type i\n" for i, n in enumerate(names)))


@pytest.mark.parametrize("torn", ["command", "multi"])
def test_a_torn_last_file_is_cut_and_loaded_with_aof_load_truncated(unstarted, torn):
    srv = unstarted(**{"aof-load-truncated": "yes"})
    tail = BAR[:-1] if torn == "command" else command("MULTI") + BAR
    incr_log(srv, FOO + tail)
    srv.start()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("MGET", "k1", "foo", "bar").py() == [b"v1", b"hello", None]
    log = srv.logs(limit=100000)
    lines = [f"!!! Warning: short read while loading the AOF file {INCR1}!!!",
             f"!!! Truncating the AOF {INCR1} at offset {len(FOO)} !!!",
             f"AOF {INCR1} loaded anyway because aof-load-truncated is enabled"]
    if torn == "multi":
        lines.insert(0, f"Revert incomplete MULTI/EXEC transaction in AOF file {INCR1}")
    found = [log.find(line) for line in lines]
    assert -1 not in found and found == sorted(found), f"{lines} in that order:\n{log}"
    assert os.path.getsize(os.path.join(srv.dir, AOF_DIR, INCR1)) == len(FOO)


def last_log_line(output: str) -> str:
    return [line for line in output.splitlines() if line.strip()][-1]


# name: (aof-load-truncated, incr files, the last line of the log, an earlier line or None)
DAMAGE = {
    "a torn command": ("no", [FOO + BAR[:-1]],
                       f"Unexpected end of file reading the append only file {INCR1}", None),
    "an unfinished MULTI": ("no", [FOO + command("MULTI") + BAR],
                            f"Unexpected end of file reading the append only file {INCR1}",
                            f"Revert incomplete MULTI/EXEC transaction in AOF file {INCR1}"),
    "bad format": ("yes", [FOO + b"!garbage\r\n" + BAR],
                   f"Bad file format reading the append only file {INCR1}", None),
    "an unknown command": ("yes", [FOO + command("bla", "x")],
                           f"Unknown command 'bla' reading the append only file {INCR1}", None),
    "a torn file before the last": ("yes", [FOO + BAR[:-1], BAR],
                                    "Fatal error: the truncated file is not the last file",
                                    f"!!! Warning: short read while loading the AOF file {INCR1}!!!"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_stops_the_start_with_redis_s_last_log_line(unstarted, case):
    truncated, incrs, last, earlier = DAMAGE[case]
    srv = unstarted(**{"aof-load-truncated": truncated})
    incr_log(srv, *incrs)
    output = start_expecting_refusal(srv)
    assert last in last_log_line(output), f"{last!r} is not the last line:\n{output}"
    if earlier is not None:
        assert earlier in output, output


# ---- rewrites under a write load -------------------------------------------------------------------

class TypedWriter(threading.Thread):
    """Writes keys of every type from a seeded stream until stopped; counts acknowledged commands."""

    def __init__(self, srv: ServerProcess, seed: int):
        super().__init__(daemon=True)
        self.conn = srv.raw(timeout=30)
        self.rng = random.Random(seed)
        self.acks = 0
        self.stop = threading.Event()
        self.error = None

    def commands(self) -> list:
        rng = self.rng
        n = rng.randrange(200)
        value = rng.choice([str(rng.randrange(-1000, 1000)), "x" * rng.randrange(1, 80)])
        return rng.choice([
            [("SET", f"s{n}", value), ("APPEND", f"s{n}", "+"), ("INCRBY", f"i{n}", rng.randrange(9))],
            [("RPUSH", f"l{n}", value, value + "!"), ("LPOP", f"l{n}"), ("LSET", f"l{n}", 0, "first")],
            [("HSET", f"h{n}", f"f{rng.randrange(300)}", value), ("HINCRBY", f"h{n}", "n", 1),
             ("HDEL", f"h{n}", f"f{rng.randrange(300)}")],
            [("SADD", f"t{n}", value, rng.randrange(1000)), ("SREM", f"t{n}", rng.randrange(1000))],
            [("ZADD", f"z{n}", rng.uniform(-100, 100), value), ("ZINCRBY", f"z{n}", 1.5, value),
             ("ZREM", f"z{n}", f"m{rng.randrange(100)}")],
            [("XADD", f"x{n}", "*", "f", value), ("XTRIM", f"x{n}", "MAXLEN", 50)],
            [("PFADD", f"p{n}", value), ("SETBIT", f"b{n}", rng.randrange(4096), 1)],
            [("SET", f"e{n}", value, "PX", 3_600_000 + rng.randrange(1000)), ("PERSIST", f"s{n}")],
            [("MULTI",), ("INCR", f"i{n}"), ("LPUSH", f"l{n}", "tx"), ("EXEC",)],
        ])

    def run(self):
        try:
            while not self.stop.is_set():
                batch = self.commands()
                replies = self.conn.pipeline(batch)
                for cmd, reply in zip(batch, replies):
                    # LSET on a list LPOP emptied, and the like, fail on both servers alike.
                    if reply.is_error and not reply.error_text.startswith(("ERR no such key", "ERR index")):
                        raise AssertionError(f"{cmd} -> {reply!r}")
                self.acks += len(batch)
        except (ConnectionClosed, OSError) as exc:
            self.error = exc
        except Exception as exc:
            self.error = exc
        finally:
            self.conn.close()


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_a_rewrite_under_a_write_load_reloads_to_the_same_digest(unstarted, preamble):
    srv = unstarted(**{"aof-use-rdb-preamble": preamble})
    srv.start()
    with srv.raw() as conn:
        assert conn.call("DEBUG", "POPULATE", 2000, "pop", 64).raw == b"+OK\r\n"
        # The rewrite lasts about a second: writes keep arriving while the child writes the base.
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 500).raw == b"+OK\r\n"
        writer = TypedWriter(srv, seed=7)
        writer.start()
        overlapped = False
        for _ in range(5):  # until one rewrite ran while writes were acknowledged
            before = int(info(conn)["aof_rewrites"])
            assert conn.call("BGREWRITEAOF").raw.startswith(b"+Background append only file rewriting")
            acks_at_start = writer.acks
            deadline = time.monotonic() + DEADLINE
            while True:
                acks = writer.acks
                fields = info(conn)
                if fields["aof_rewrite_in_progress"] == "0" and fields["aof_rewrite_scheduled"] == "0":
                    break
                # Acknowledged after the rewrite began and before it was seen still running.
                overlapped = overlapped or acks > acks_at_start
                assert writer.is_alive(), writer.error
                assert time.monotonic() < deadline, "the rewrite did not finish"
                time.sleep(0.01)  # polling interval, bounded by the deadline
            wait_rewrite_done(conn, before)
            if overlapped:
                break
        assert overlapped, "no write was acknowledged while a rewrite ran"
        wait_for(lambda: writer.acks > acks + 100 or not writer.is_alive(), DEADLINE,
                 what="writes after the rewrite")
        writer.stop.set()
        writer.join(DEADLINE)
        assert writer.error is None, writer.error
        assert conn.call("CONFIG", "SET", "rdb-key-save-delay", 0).raw == b"+OK\r\n"
        digest = digest_survives_loadaof(conn)
        assert conn.call("DBSIZE").value > 2000
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: info(conn)["loading"] == "0", DEADLINE, what="the load to end")
        assert conn.call("DEBUG", "DIGEST").value == digest
