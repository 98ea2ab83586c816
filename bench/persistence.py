#!/usr/bin/python3
"""Snapshot save, load and BGSAVE copy-on-write of goblin-server against redis-server, the same run.

For each workload of bench/memory.py (zset, hash, set, string; same seeded
commands for both servers, pipelined through redis-py over a Unix socket):

  1. SAVE: wall clock around the command, size of dir/dbfilename; for goblin
     also GOBLIN.SAVE (foreground save, same file).
  2. load: startup time with the file present minus startup time with an empty
     dir (Popen until PING answers +PONG, polled every 1 ms; -LOADING is not
     ready), medians of 3 and 5 starts; DBSIZE and ZCARD/HLEN/SCARD verified.
  3. BGSAVE while a client keeps overwriting existing elements: duration
     (rdb_bgsave_in_progress polled every 5 ms), rdb_last_cow_size, writer ops/s.

Servers alternate A B, B A per workload (--rounds), pinned with the client to one
CPU (taskset -c 1).  Markdown tables go to stdout, progress to stderr.

With --export-rdb it measures leaving for Redis instead: per workload, the time of
`goblin-server --export-rdb SNAPSHOT OUT.rdb` (the whole process: loading the Goblin snapshot
SAVE wrote, writing the RDB file) and goblin's SAVE with snapshot-format rdb, against
redis-server's SAVE of the same data; each file goblin wrote is checked with redis-check-rdb.

With --load-rdb it measures switching from Redis: per workload, redis-server's SAVE makes a
dump.rdb, then goblin-server and redis-server each start on it (load time as above, the count
checked after the load).

With --crash-cycles N it runs the durability soak instead: the --server binary
with --appendonly yes and --appendfsync always (then everysec), acknowledged
INCR/SET writes, SIGKILL after a seeded random 50-500 ms, restart on the same
dir, every acknowledged write checked, snapshot files checked with
`goblin-server --check-snapshot FILE` (redis-check-rdb for redis-server).

See bench/README.md.  Needs python3-redis (run with Debian's /usr/bin/python3).
"""

import argparse
import datetime
import os
import random
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory  # noqa: E402  -- bench/memory.py: the workloads (generate, KEY, SEED)

try:
    import redis
except ImportError:
    sys.exit("persistence.py needs redis-py: apt-get install python3-redis, and run it with /usr/bin/python3")

WORKLOADS = ("zset", "hash", "set", "string")
CARD = {"zset": "ZCARD", "hash": "HLEN", "set": "SCARD"}
MB = 1e6

RUNNING = set()   # Server objects still running, killed on exit
TEMP_DIRS = []    # removed on exit unless --keep


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def parse_cpus(spec):
    cpus = set()
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-", 1)
            cpus.update(range(int(a), int(b) + 1))
        elif part.strip():
            cpus.add(int(part))
    return cpus


def fs_of(path):
    """'ext4 /dev/vda' for the mount holding path (the disk the snapshots go to)."""
    path = os.path.realpath(path)
    best = ("", "?", "?")
    try:
        with open("/proc/mounts") as f:
            for ln in f:
                dev, mnt, typ = ln.split()[:3]
                mnt = mnt.replace("\\040", " ")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
                    best = (mnt, typ, dev)
    except OSError:
        pass
    return "%s %s" % (best[1], best[2])


# ---------------------------------------------------------------- servers

PING = b"*1\r\n$4\r\nPING\r\n"


class ServerDied(RuntimeError):
    pass


def wait_ready(proc, path, limit_s=900):
    """Poll path every 1 ms until PING answers +PONG; return time.perf_counter() at the PONG.

    Not listening yet (no socket file, connection refused or reset) and -LOADING
    both mean not ready.  A PING that the server has not answered yet is waited
    for rather than re-sent."""
    end = time.perf_counter() + limit_s
    s, buf, outstanding = None, b"", 0
    try:
        while True:
            if proc.poll() is not None:
                raise ServerDied("exited with status %s before answering PING" % proc.returncode)
            if time.perf_counter() > end:
                raise RuntimeError("no +PONG within %d s" % limit_s)
            if s is None:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(0.2)
                try:
                    s.connect(path)
                except OSError:
                    s.close()
                    s = None
                    time.sleep(0.001)
                    continue
                buf, outstanding = b"", 0
            try:
                if outstanding == 0:
                    s.sendall(PING)
                    outstanding = 1
                while b"\r\n" not in buf:
                    chunk = s.recv(4096)
                    if not chunk:
                        raise ConnectionResetError("closed")
                    buf += chunk
            except socket.timeout:
                continue  # still busy (loading without serving): keep waiting for that reply
            except OSError:
                s.close()
                s = None
                time.sleep(0.001)
                continue
            line, buf = buf.split(b"\r\n", 1)
            outstanding = 0
            if line == b"+PONG":
                return time.perf_counter()
            if line.startswith(b"-LOADING"):
                time.sleep(0.001)
                continue
            raise RuntimeError("PING answered %r" % line[:100])
    finally:
        if s is not None:
            s.close()


class Server:
    """One server process on DIR/s.sock (no TCP), pinned with taskset; ready_s = Popen to +PONG."""

    def __init__(self, binary, d, cpu, extra):
        self.binary, self.dir = binary, d
        self.sock = os.path.join(d, "s.sock")
        cmd = [binary, "--port", "0", "--unixsocket", self.sock, "--dir", d] + list(extra)
        if cpu:
            cmd = ["taskset", "-c", cpu] + cmd
        self.log_path = os.path.join(d, "server.log")
        self.logf = open(self.log_path, "ab")
        t0 = time.perf_counter()
        # taskset execs the server, so proc.pid is the server's pid.  Its own session: a ^C
        # reaches only this script, which then stops the servers it started.
        self.proc = subprocess.Popen(cmd, stdout=self.logf, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        RUNNING.add(self)
        try:
            self.ready_s = wait_ready(self.proc, self.sock) - t0
        except Exception as e:
            self.kill()
            raise RuntimeError("%s: %s\n%s" % (binary, e, self.tail())) from None

    def client(self, timeout=None):
        return redis.Redis(unix_socket_path=self.sock, socket_timeout=timeout)

    def tail(self, n=1500):
        try:
            with open(self.log_path, "rb") as f:
                return f.read()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def shutdown(self):
        """SHUTDOWN NOSAVE and wait for the exit (SIGKILL if it does not come)."""
        if self.proc.poll() is None:
            try:
                self.client(timeout=60).shutdown(nosave=True)
            except redis.RedisError as e:
                log("#   %s: SHUTDOWN NOSAVE: %s; terminating" % (self.binary, e))
                self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._closed()

    def kill(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._closed()

    def _closed(self):
        RUNNING.discard(self)
        if not self.logf.closed:
            self.logf.close()


def server_info(r):
    info = r.info("server")
    kind = "goblin" if "goblin_version" in info else "redis"
    ver = info.get("goblin_version") or info.get("redis_version") or "?"
    return kind, str(ver)


def config_get(r, name, default):
    try:
        v = r.config_get(name).get(name)
    except redis.RedisError:
        v = None
    if isinstance(v, bytes):
        v = v.decode()
    return v or default


def err_text(e):
    return str(e).split(", with args")[0]


def mkdtemp(base, prefix):
    d = tempfile.mkdtemp(prefix=prefix, dir=base)
    TEMP_DIRS.append(d)
    return d


# ---------------------------------------------------------------- the benchmark

def fill(r, cmds, window=64):
    """Send the RESP commands of memory.generate() pipelined, `window` at a time; return the errors."""
    conn = r.connection_pool.get_connection("fill")
    errors = []
    try:
        for s in range(0, len(cmds), window):
            chunk = cmds[s:s + window]
            conn.send_packed_command(chunk, check_health=False)
            for _ in chunk:
                try:
                    conn.read_response()
                except redis.ResponseError as e:
                    errors.append(err_text(e))
    finally:
        r.connection_pool.release(conn)
    return errors


def check_count(r, w, n):
    """None if the server holds the whole workload, else what it holds."""
    dbsize = r.dbsize()
    if w == "string":
        return None if dbsize == n else "DBSIZE %d, expected %d" % (dbsize, n)
    card = r.execute_command(CARD[w], memory.KEY[w])
    if dbsize == 1 and card == n:
        return None
    return "DBSIZE %d, %s %s, expected 1 and %d" % (dbsize, CARD[w], card, n)


def write_batches(w, n, seed, pipeline, count):
    """Seeded overwrites of existing elements, `count` batches of `pipeline` commands each (RESP bytes, #commands).

    zset: ZADD a new score to an existing member; hash: HSET a new value to an existing
    field; string: SET a new value to an existing key; set: SREM then SADD the same
    existing member (a real write that keeps SCARD)."""
    rng = random.Random(seed ^ 0x5EED)
    key = memory.KEY.get(w)
    out = []
    for _ in range(count):
        parts = []
        k = 0
        while k < pipeline:
            i = rng.randrange(n)
            if w == "zset":
                s = rng.randrange(1000000000000)
                parts.append(memory.resp([b"ZADD", key, b"%d.%06d" % (s // 1000000, s % 1000000), b"user:%08d" % i]))
                k += 1
            elif w == "hash":
                parts.append(memory.resp([b"HSET", key, b"field:%010d" % i, b"%016x" % rng.getrandbits(64)]))
                k += 1
            elif w == "set":
                m = b"user:%08d" % i
                parts.append(memory.resp([b"SREM", key, m]) + memory.resp([b"SADD", key, m]))
                k += 2
            else:
                parts.append(memory.resp([b"SET", b"key:%08d" % i, b"%016x" % rng.getrandbits(64)]))
                k += 1
        out.append((b"".join(parts), k))
    return out


class Overwriter(threading.Thread):
    """Sends the batches over and over on its own connection; ops = commands acknowledged so far."""

    def __init__(self, sock, batches):
        super().__init__(daemon=True)
        self.sock, self.batches = sock, batches
        self.ops = 0
        self.errors = 0
        self.first_error = None
        self.failure = None
        self.stop = threading.Event()

    def run(self):
        try:
            r = redis.Redis(unix_socket_path=self.sock, socket_timeout=120)
            conn = r.connection_pool.get_connection("write")
            j = 0
            while not self.stop.is_set():
                data, k = self.batches[j % len(self.batches)]
                j += 1
                conn.send_packed_command([data], check_health=False)
                for _ in range(k):
                    try:
                        conn.read_response()
                    except redis.ResponseError as e:
                        self.errors += 1
                        self.first_error = self.first_error or err_text(e)
                self.ops += k
            conn.disconnect()
        except Exception as e:  # noqa: BLE001 - reported by the caller
            self.failure = e


def fork_children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return {int(x) for x in f.read().split()}
    except (OSError, ValueError):
        return None


def gone(pid):
    """True once the process exited (zombie or reaped)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def bgsave_under_writes(srv, r, batches, res, note):
    """BGSAVE while an Overwriter runs; fills res['bg_s'], 'bg_child_s', 'cow_bytes', 'write_ops', 'write_base_ops'."""
    before = fork_children(srv.proc.pid) or set()
    wr = Overwriter(srv.sock, batches)
    wr.start()
    time.sleep(0.1)
    o0, t0 = wr.ops, time.perf_counter()
    time.sleep(0.3)
    o1, t1 = wr.ops, time.perf_counter()
    res["write_base_ops"] = (o1 - o0) / (t1 - t0)
    try:
        if wr.failure is not None:
            note("BGSAVE not run: the writer failed: %s" % wr.failure)
            return
        bg0, ops0 = time.perf_counter(), wr.ops
        try:
            r.execute_command("BGSAVE")
        except redis.ResponseError as e:
            note("BGSAVE: " + err_text(e))
            return
        kids = (fork_children(srv.proc.pid) or set()) - before
        child = min(kids) if len(kids) == 1 else None
        child_end = None
        deadline = bg0 + 1800
        while True:
            time.sleep(0.005)
            now = time.perf_counter()
            if child is not None and child_end is None and gone(child):
                child_end = now
            if int(r.info("persistence").get("rdb_bgsave_in_progress", 0)) == 0:
                break
            if now > deadline or wr.failure is not None:
                note("BGSAVE: still in progress after %.0f s" % (now - bg0) if wr.failure is None
                     else "BGSAVE: writer failed: %s" % wr.failure)
                return
        bg1, ops1 = time.perf_counter(), wr.ops
    finally:
        wr.stop.set()
        wr.join(120)
    info = r.info("persistence")
    status = info.get("rdb_last_bgsave_status")
    if status not in (None, "ok", b"ok"):
        note("BGSAVE: rdb_last_bgsave_status:%s" % status)
        return
    res["bg_s"] = bg1 - bg0
    res["write_ops"] = (ops1 - ops0) / (bg1 - bg0)
    if child_end is not None:
        res["bg_child_s"] = child_end - bg0
    else:
        note("BGSAVE: no fork child seen" if child is None else "BGSAVE: the fork child outlived rdb_bgsave_in_progress")
    if "rdb_last_cow_size" in info:
        res["cow_bytes"] = int(info["rdb_last_cow_size"])
    else:
        note("INFO persistence has no rdb_last_cow_size")
    if wr.errors:
        note("writer during BGSAVE: %d error replies, first: %s" % (wr.errors, wr.first_error))


def start_plan(args):
    """The load step's starts: "E" with an empty dir, "F" with the file, interleaved."""
    plan = ["E", "F"] * min(args.empty_starts, args.file_starts)
    return plan + ["E"] * (args.empty_starts - len(plan) // 2) + ["F"] * (args.file_starts - len(plan) // 2)


def bench_run(binary, w, n, cmds, batches, args, notes):
    """One server, one workload: fill, [GOBLIN.SAVE], SAVE, BGSAVE under writes, load.  Returns a result dict."""
    res = {}
    base_args = ["--save", "", "--appendonly", "no"]

    def note(text):
        notes.append(text)
        log("#   note: " + text)

    d = mkdtemp(args.tmpdir, "goblin-persist-")
    srv = Server(binary, d, args.cpu, base_args)
    try:
        r = srv.client()
        res["kind"], res["version"] = server_info(r)
        path = os.path.join(config_get(r, "dir", d), config_get(r, "dbfilename", "dump.rdb"))
        t0 = time.perf_counter()
        errors = fill(r, cmds)
        res["fill_s"] = time.perf_counter() - t0
        if errors:
            note("load %s: %d error replies, first: %s" % (w, len(errors), errors[0]))
            return res
        bad = check_count(r, w, n)
        if bad:
            note("after the fill: " + bad)
            return res

        aside = path + ".goblin-save"
        if res["kind"] == "goblin":
            try:
                t0 = time.perf_counter()
                r.execute_command("GOBLIN.SAVE")
                res["gsave_s"] = time.perf_counter() - t0
                if os.path.exists(path):
                    res["gsave_bytes"] = os.path.getsize(path)
                    os.rename(path, aside)  # SAVE then writes a new file, as on redis-server
                else:
                    note("GOBLIN.SAVE wrote no %s" % path)
            except redis.ResponseError as e:
                note("GOBLIN.SAVE: " + err_text(e))
        try:
            t0 = time.perf_counter()
            r.execute_command("SAVE")
            res["save_s"] = time.perf_counter() - t0
            if os.path.exists(path):
                res["save_bytes"] = os.path.getsize(path)
            else:
                note("SAVE wrote no %s" % path)
        except redis.ResponseError as e:
            note("SAVE: " + err_text(e))
        if os.path.exists(aside):
            if os.path.exists(path):
                os.remove(aside)
            else:
                os.rename(aside, path)
                note("load measured on the GOBLIN.SAVE file")

        # BGSAVE writes into the same file: keep the SAVE file aside for the load step.
        saved = path + ".saved"
        if os.path.exists(path):
            os.rename(path, saved)
        bgsave_under_writes(srv, r, batches, res, note)
        srv.shutdown()
        if os.path.exists(path):
            os.remove(path)
        if not os.path.exists(saved):
            return res
        os.rename(saved, path)

        # Load: empty starts and starts on the file, interleaved.
        plan = start_plan(args)
        empty, full = [], []
        for step in plan:
            if step == "E":
                e = mkdtemp(args.tmpdir, "goblin-empty-")
                s2 = Server(binary, e, args.cpu, base_args)
                try:
                    if s2.client().dbsize() != 0:
                        note("an empty start holds keys")
                    empty.append(s2.ready_s)
                finally:
                    s2.shutdown()
                    shutil.rmtree(e, ignore_errors=True)
            else:
                s2 = Server(binary, d, args.cpu, base_args)
                try:
                    bad = check_count(s2.client(), w, n)
                    if bad:
                        res["load_bad"] = bad
                    full.append(s2.ready_s)
                finally:
                    s2.shutdown()
        res["empty_s"], res["file_s"] = median(empty), median(full)
        if "load_bad" in res:
            note("after loading the snapshot: " + res["load_bad"])
        else:
            res["load_s"] = res["file_s"] - res["empty_s"]
        return res
    finally:
        discard(srv, d, args)


def fmt_s(v):
    return "%.3f" % v


def fmt_mb(v):
    return "%.1f" % (v / MB) if v >= 10 * MB else "%.2f" % (v / MB)


def fmt_ops(v):
    return "{:,.0f}".format(v)


# key in goblin's result, title, format, key in redis's result
TABLES = [
    ("save_s", "SAVE, s (wall clock around the command)", fmt_s, "save_s"),
    ("save_bytes", "Snapshot file after SAVE, MB (10^6 B)", fmt_mb, "save_bytes"),
    ("gsave_s", "GOBLIN.SAVE, s (redis column: its SAVE)", fmt_s, "save_s"),
    ("gsave_bytes", "Snapshot file after GOBLIN.SAVE, MB (redis column: its SAVE file)", fmt_mb, "save_bytes"),
    ("load_s", "Load, s: startup with the file − startup with an empty dir (Popen to +PONG)", fmt_s, "load_s"),
    ("empty_s", "Startup with an empty dir, s (the part subtracted above)", fmt_s, "empty_s"),
    ("bg_s", "BGSAVE under writes, s (BGSAVE sent → rdb_bgsave_in_progress:0, 5 ms polls)", fmt_s, "bg_s"),
    ("bg_child_s", "BGSAVE under writes, s until the fork child exited", fmt_s, "bg_child_s"),
    ("cow_bytes", "BGSAVE copy-on-write, rdb_last_cow_size, MB", fmt_mb, "cow_bytes"),
    ("write_ops", "Writer during the BGSAVE, acknowledged writes/s", fmt_ops, "write_ops"),
    ("write_base_ops", "Writer just before the BGSAVE, acknowledged writes/s", fmt_ops, "write_base_ops"),
]


def discard(srv, d, args):
    """Stops a measured server and removes its directory (unless --keep)."""
    if srv.proc.poll() is None:
        srv.kill()
    srv._closed()
    if not args.keep:
        shutil.rmtree(d, ignore_errors=True)


def chosen_workloads(args):
    """--workloads as a list; exits on a name bench/memory.py does not know."""
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit("unknown workload %r (known: %s)" % (w, ", ".join(WORKLOADS)))
    return workloads


def run_bench(args, cmdline, started):
    workloads = chosen_workloads(args)
    servers = {"goblin": args.server, "redis": args.redis}
    results = {(w, s): [] for w in workloads for s in servers}
    notes = {}  # text -> workloads
    versions = {}
    log("# %s\n# %s, N %d, rounds %d, cpu %s, seed %d, temp dirs in %s (%s)" % (
        cmdline, started, args.n, args.rounds, args.cpu or "unpinned", args.seed, args.tmpdir, fs_of(args.tmpdir)))
    for w in workloads:
        t0 = time.time()
        cmds = memory.generate(w, args.n, args.batch, args.seed)
        batches = write_batches(w, args.n, args.seed, args.write_pipeline, 4000)
        log("# %s: %d commands generated in %.1f s" % (w, len(cmds), time.time() - t0))
        for rnd in range(args.rounds):
            order = ("goblin", "redis") if rnd % 2 == 0 else ("redis", "goblin")
            for s in order:
                run_notes = []
                try:
                    res = bench_run(servers[s], w, args.n, cmds, batches, args, run_notes)
                except Exception as e:  # noqa: BLE001 - one failed run must not lose the others
                    res = {}
                    run_notes.append("run failed: %s" % str(e).strip().splitlines()[0])
                    log("#   %s %s round %d failed: %s" % (s, w, rnd + 1, e))
                results[(w, s)].append(res)
                if "version" in res:
                    versions[s] = (res["kind"], res["version"])
                for t in run_notes:
                    notes.setdefault("%s: %s" % (s, t), [])
                    if w not in notes["%s: %s" % (s, t)]:
                        notes["%s: %s" % (s, t)].append(w)
                log("# %s %s round %d: %s" % (w, s, rnd + 1, summary(res)))
        del cmds, batches
    if versions.get("goblin", ("",))[0] != "goblin":
        notes.setdefault("goblin: GOBLIN.SAVE not measured: %s is not goblin-server (no goblin_version in INFO)"
                         % args.server, [])
    print(markdown(workloads, results, notes, versions, args, cmdline, started))


def summary(res):
    parts = []
    for key, label, f in (("fill_s", "fill", fmt_s), ("gsave_s", "GOBLIN.SAVE", fmt_s), ("save_s", "SAVE", fmt_s),
                          ("save_bytes", "MB", fmt_mb), ("bg_s", "BGSAVE", fmt_s), ("bg_child_s", "child", fmt_s),
                          ("cow_bytes", "cow MB", fmt_mb), ("write_ops", "writes/s", fmt_ops),
                          ("write_base_ops", "before", fmt_ops), ("file_s", "start with file", fmt_s),
                          ("empty_s", "empty", fmt_s), ("load_s", "load", fmt_s)):
        if key in res:
            parts.append("%s %s" % (label, f(res[key])))
    return ", ".join(parts) or "no result"


def markdown(workloads, results, notes, versions, args, cmdline, started):
    gk, gv = versions.get("goblin", ("?", "?"))
    rk, rv = versions.get("redis", ("?", "?"))
    out = ["Persistence: `%s` (%s; goblin = `%s` %s %s, redis = `%s` %s %s; N = {:,}, medians of %d rounds "
           "alternated A B B A; Unix socket, `--save '' --appendonly no`, servers and client pinned to CPU %s; "
           "files on %s)." .format(args.n)
           % (cmdline, started, args.server, gk, gv, args.redis, rk, rv, args.rounds, args.cpu or "none",
              fs_of(args.tmpdir))]
    skipped = []
    for key, title, f, rkey in TABLES:
        cells = []
        for w in workloads:
            g = median([res.get(key) for res in results[(w, "goblin")]])
            r = median([res.get(rkey) for res in results[(w, "redis")]])
            cells.append((w, g, r))
        if key in ("gsave_s", "gsave_bytes", "bg_child_s") and all(g is None for _, g, _ in cells):
            skipped.append(title.split(",")[0] if key != "bg_child_s" else "fork child lifetime")
            continue
        out += ["", "**%s**" % title, "", "| workload | goblin | redis | goblin/redis |", "|---|---:|---:|---:|"]
        for w, g, r in cells:
            ratio = "%.2f" % (g / r) if g is not None and r is not None and r > 0 and g >= 0 else "n/a"
            out.append("| %s | %s | %s | %s |" % (w, "n/a" if g is None else f(g), "n/a" if r is None else f(r), ratio))
    if skipped or notes:
        out.append("")
    if skipped:
        out.append("- not measured for goblin (tables left out): %s" % ", ".join(skipped))
    for t, ws in notes.items():
        out.append("- %s%s" % (t, " (%s)" % ", ".join(ws) if ws else ""))
    return "\n".join(out)


# ---------------------------------------------------------------- leaving for Redis

def export_run(binary, w, n, cmds, args, notes):
    """One server, one workload, for --export-rdb.  goblin: fill, SAVE (its format), SAVE with
    snapshot-format rdb, then `--export-rdb` of the first file, timed as a process.  redis: fill, SAVE."""
    res = {}

    def note(text):
        notes.append(text)
        log("#   note: " + text)

    d = mkdtemp(args.tmpdir, "goblin-export-")
    srv = Server(binary, d, args.cpu, ["--save", "", "--appendonly", "no"])
    try:
        r = srv.client()
        res["kind"], res["version"] = server_info(r)
        path = os.path.join(d, "dump.rdb")
        errors = fill(r, cmds)
        bad = check_count(r, w, n)
        if errors or bad:
            note("fill %s: %s" % (w, errors[0] if errors else bad))
            return res
        t0 = time.perf_counter()
        r.execute_command("SAVE")
        res["save_s"] = time.perf_counter() - t0
        res["save_bytes"] = os.path.getsize(path)
        if res["kind"] != "goblin":
            return res
        snapshot = os.path.join(d, "goblin.snapshot")
        os.rename(path, snapshot)
        r.config_set("snapshot-format", "rdb")
        t0 = time.perf_counter()
        r.execute_command("SAVE")
        res["rdb_save_s"] = time.perf_counter() - t0
        res["rdb_save_bytes"] = os.path.getsize(path)
        srv.shutdown()
        out = os.path.join(d, "exported.rdb")
        cmd = [binary, "--export-rdb", snapshot, out]
        if args.cpu:
            cmd = ["taskset", "-c", args.cpu] + cmd
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        res["export_s"] = time.perf_counter() - t0
        if proc.returncode != 0:
            note("--export-rdb failed: %s" % proc.stdout.decode(errors="replace").strip())
            res.pop("export_s")
            return res
        res["export_bytes"] = os.path.getsize(out)
        checker = shutil.which("redis-check-rdb")
        for f in (path, out):
            if checker is None:
                note("redis-check-rdb not found: files not checked")
                break
            check = subprocess.run([checker, f], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if check.returncode != 0 or b"RDB looks OK" not in check.stdout:
                note("redis-check-rdb refused %s: %s" % (os.path.basename(f),
                                                        check.stdout.decode(errors="replace")[-300:]))
        return res
    finally:
        discard(srv, d, args)


# key in goblin's result, title, format, key in redis's result
EXPORT_TABLES = [
    ("export_s", "`--export-rdb SNAPSHOT OUT.rdb`, s (the process: load the Goblin snapshot, write the RDB) "
     "against redis SAVE", fmt_s, "save_s"),
    ("rdb_save_s", "SAVE with snapshot-format rdb, s, against redis SAVE", fmt_s, "save_s"),
    ("save_s", "SAVE in Goblin's format, s, against redis SAVE", fmt_s, "save_s"),
    ("export_bytes", "RDB file written by goblin, MB, against redis's", fmt_mb, "save_bytes"),
]


def one_run(run, s, w, results, versions, notes):
    """run(notes) for server s and workload w: its result, the server's version and the notes kept (a
    failed run records its error, and the others go on); returns the result."""
    run_notes = []
    try:
        res = run(run_notes)
    except Exception as e:  # noqa: BLE001 - one failed run must not lose the others
        res = {}
        run_notes.append("run failed: %s" % str(e).strip().splitlines()[0])
    results[(w, s)].append(res)
    if "version" in res:
        versions[s] = (res["kind"], res["version"])
    for t in run_notes:
        notes.setdefault("%s: %s" % (s, t), [])
    return res


def run_export(args, cmdline, started):
    workloads = chosen_workloads(args)
    servers = {"goblin": args.server, "redis": args.redis}
    results = {(w, s): [] for w in workloads for s in servers}
    notes, versions = {}, {}
    log("# %s\n# %s, N %d, rounds %d, cpu %s" % (cmdline, started, args.n, args.rounds, args.cpu or "unpinned"))
    for w in workloads:
        cmds = memory.generate(w, args.n, args.batch, args.seed)
        for rnd in range(args.rounds):
            order = ("goblin", "redis") if rnd % 2 == 0 else ("redis", "goblin")
            for s in order:
                res = one_run(lambda run_notes, cmds=cmds: export_run(servers[s], w, args.n, cmds, args,
                                                                      run_notes),
                              s, w, results, versions, notes)
                log("# %s %s round %d: %s" % (w, s, rnd + 1, ", ".join(
                    "%s %s" % (k, fmt_s(v) if k.endswith("_s") else fmt_mb(v)) for k, v in res.items()
                    if k.endswith(("_s", "_bytes")))))
        del cmds
    gk, gv = versions.get("goblin", ("?", "?"))
    rk, rv = versions.get("redis", ("?", "?"))
    out = ["Leaving for Redis: `%s` (%s; goblin = `%s` %s %s, redis = `%s` %s %s; N = {:,}, medians of %d "
           "rounds alternated A B B A; servers and --export-rdb pinned to CPU %s; files on %s)."
           .format(args.n) % (cmdline, started, args.server, gk, gv, args.redis, rk, rv, args.rounds,
                              args.cpu or "none", fs_of(args.tmpdir)),
           "", "| workload | " + " | ".join(t[1].split(",")[0] for t in EXPORT_TABLES) + " |",
           "|---|" + "---:|" * len(EXPORT_TABLES)]
    for w in workloads:
        cells = []
        for key, _, f, rkey in EXPORT_TABLES:
            g = median([res.get(key) for res in results[(w, "goblin")]])
            r = median([res.get(rkey) for res in results[(w, "redis")]])
            if g is None or r is None:
                cells.append("n/a")
            else:
                cells.append("%s / %s, **%.2f**" % (f(g), f(r), g / r))
        out.append("| %s | %s |" % (w, " | ".join(cells)))
    out += ["", "Columns: " + "; ".join(t[1] for t in EXPORT_TABLES) + "."]
    for t in notes:
        out.append("- %s" % t)
    print("\n".join(out))


# ---------------------------------------------------------------- switching from Redis

def load_rdb_run(binary, d, w, n, args, notes):
    """Startup of binary on d (holding redis-server's dump.rdb) minus its startup on an empty dir,
    interleaved as in the load step of the benchmark; the loaded count is checked."""
    res = {}

    def note(text):
        notes.append(text)
        log("#   note: " + text)

    plan = start_plan(args)
    empty, full = [], []
    for step in plan:
        e = mkdtemp(args.tmpdir, "goblin-empty-") if step == "E" else d
        srv = Server(binary, e, args.cpu, ["--save", "", "--appendonly", "no"])
        try:
            r = srv.client()
            res["kind"], res["version"] = server_info(r)
            if step == "E":
                empty.append(srv.ready_s)
            else:
                bad = check_count(r, w, n)
                if bad:
                    note("after loading redis's file: " + bad)
                    return res
                full.append(srv.ready_s)
        finally:
            srv.shutdown()
            if step == "E":
                shutil.rmtree(e, ignore_errors=True)
    res["empty_s"], res["file_s"] = median(empty), median(full)
    res["load_s"] = res["file_s"] - res["empty_s"]
    return res


def run_load_rdb(args, cmdline, started):
    workloads = chosen_workloads(args)
    servers = {"goblin": args.server, "redis": args.redis}
    results = {(w, s): [] for w in workloads for s in servers}
    notes, versions, sizes = {}, {}, {}
    log("# %s\n# %s, N %d, rounds %d, cpu %s" % (cmdline, started, args.n, args.rounds, args.cpu or "unpinned"))
    for w in workloads:
        cmds = memory.generate(w, args.n, args.batch, args.seed)
        d = mkdtemp(args.tmpdir, "goblin-load-rdb-")
        writer = Server(args.redis, d, args.cpu, ["--save", "", "--appendonly", "no"])
        try:
            r = writer.client()
            errors = fill(r, cmds)
            bad = check_count(r, w, args.n)
            if errors or bad:
                sys.exit("redis-server could not hold the %s workload: %s" % (w, errors[0] if errors else bad))
            r.execute_command("SAVE")
        finally:
            writer.shutdown()
        del cmds
        sizes[w] = os.path.getsize(os.path.join(d, "dump.rdb"))
        for rnd in range(args.rounds):
            order = ("goblin", "redis") if rnd % 2 == 0 else ("redis", "goblin")
            for s in order:
                res = one_run(lambda run_notes: load_rdb_run(servers[s], d, w, args.n, args, run_notes),
                              s, w, results, versions, notes)
                log("# %s %s round %d: %s" % (w, s, rnd + 1, summary(res)))
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)
    gk, gv = versions.get("goblin", ("?", "?"))
    rk, rv = versions.get("redis", ("?", "?"))
    out = ["Switching from Redis: `%s` (%s; goblin = `%s` %s %s, redis = `%s` %s %s; N = {:,}; the file is "
           "redis-server's SAVE of the workload; load = startup with the file − startup with an empty dir (Popen "
           "to +PONG), medians of %d and %d starts per round, %d rounds alternated A B B A; Unix socket, servers "
           "and client pinned to CPU %s; files on %s)."
           .format(args.n) % (cmdline, started, args.server, gk, gv, args.redis, rk, rv, args.file_starts,
                              args.empty_starts, args.rounds, args.cpu or "none", fs_of(args.tmpdir)),
           "", "| workload | RDB file, MB | goblin load, s | redis load, s | goblin/redis |", "|---|---:|---:|---:|---:|"]
    for w in workloads:
        g = median([res.get("load_s") for res in results[(w, "goblin")]])
        r = median([res.get("load_s") for res in results[(w, "redis")]])
        ratio = "**%.2f**" % (g / r) if g is not None and r else "n/a"
        out.append("| %s | %s | %s | %s | %s |" % (w, fmt_mb(sizes[w]), "n/a" if g is None else fmt_s(g),
                                                 "n/a" if r is None else fmt_s(r), ratio))
    for t in notes:
        out.append("- %s" % t)
    print("\n".join(out))


# ---------------------------------------------------------------- the durability soak

class AckWriter(threading.Thread):
    """INCR counter, then SET k:<i> <i>, one command at a time; every reply is an acknowledgement.

    With pause > 0 it sleeps that long after the first INCR/SET pair (everysec: that pair
    must then survive the SIGKILL)."""

    def __init__(self, sock, first_i, pause=0.0):
        super().__init__(daemon=True)
        self.sock = sock
        self.pause = pause
        self.i = first_i
        self.incr = []   # (value returned, perf_counter at the reply)
        self.sets = []   # (i, perf_counter at the reply)
        self.error = None
        self.reply_error = None

    def run(self):
        try:
            r = redis.Redis(unix_socket_path=self.sock, socket_timeout=30)
            while True:
                v = r.incr("counter")
                self.incr.append((v, time.perf_counter()))
                i = self.i
                self.i += 1  # consumed even when unacknowledged: never reused
                r.set(b"k:%d" % i, b"%d" % i)
                self.sets.append((i, time.perf_counter()))
                if self.pause and len(self.sets) == 1:
                    time.sleep(self.pause)
        except redis.ResponseError as e:
            self.reply_error = err_text(e)
        except Exception as e:  # noqa: BLE001 - the SIGKILL ends it here
            self.error = e


def snapshot_files(d, dbfilename, aofdir):
    files = []
    p = os.path.join(d, dbfilename)
    if os.path.isfile(p):
        files.append(p)
    a = os.path.join(d, aofdir)
    if os.path.isdir(a):
        # the AOF base: Redis names it .base.rdb (an RDB), Goblin .base.gsnap (a Goblin snapshot)
        files += [os.path.join(a, f) for f in sorted(os.listdir(a)) if f.endswith((".rdb", ".gsnap"))]
    return files


def soak_pass(binary, fsync, args, seed):
    rng = random.Random(seed)
    lo, hi = (float(x) / 1000 for x in args.crash_delay.split(","))
    d = mkdtemp(args.tmpdir, "goblin-crash-%s-" % fsync)
    extra = ["--appendonly", "yes", "--appendfsync", fsync]
    st = {"fsync": fsync, "dir": d, "cycles": 0, "failures": [], "acked": 0, "lost": 0, "lost_max": 0,
          "window_max": 0.0, "checks": 0, "checks_ok": 0, "restart": [], "bgsaves": 0, "kind": "?", "version": "?",
          "notes": []}
    # everysec with cycles shorter than the loss window: write one pair, wait out the window, then the
    # random delay, so a server that keeps nothing fails the window check too.
    pause = args.max_loss_window + 0.1 if fsync != "always" and hi < args.max_loss_window else 0.0
    st["pause"] = pause
    fail_cycles = set()
    verified = 0            # the counter as read at the last restart
    sample_rng = random.Random(seed + 1)
    pending_incr, pending_set = [], []
    present = []            # key indices verified present at some restart
    t_kill = None
    next_i = 0
    checker = None
    dbfilename, aofdir = "dump.rdb", "appendonlydir"
    bgsave_ok = args.crash_bgsave > 0

    def fail(cycle, text):
        fail_cycles.add(cycle)
        st["failures"].append("cycle %d: %s" % (cycle, text))
        log("#   FAIL cycle %d: %s" % (cycle, text))

    for cycle in range(args.crash_cycles + 1):
        try:
            srv = Server(binary, d, args.cpu, extra)
        except RuntimeError as e:
            fail(cycle, "restart failed: %s" % str(e).strip().splitlines()[0])
            log(str(e))
            break
        try:
            r = srv.client(timeout=60)
            if cycle == 0:
                st["kind"], st["version"] = server_info(r)
                dbfilename = config_get(r, "dbfilename", dbfilename)
                aofdir = config_get(r, "appenddirname", aofdir)
                if st["kind"] == "goblin":
                    checker = [binary, "--check-snapshot"]
                elif shutil.which("redis-check-rdb"):
                    checker = [shutil.which("redis-check-rdb")]
            else:
                st["restart"].append(srv.ready_s)
                # 1. the counter: at least the last acknowledged INCR (or, with none, the value verified
                #    at the previous restart), at most one more (the INCR in flight at the SIGKILL)
                counter = int(r.get("counter") or 0)
                acked_max = pending_incr[-1][0] if pending_incr else verified
                lost = [(v, t) for v, t in pending_incr if v > counter]
                if counter < verified:
                    fail(cycle, "counter %d < %d, verified at the previous restart" % (counter, verified))
                if counter > acked_max + 1:
                    fail(cycle, "counter %d, but the last acknowledged INCR returned %d" % (counter, acked_max))
                # 2. every key acknowledged in the last cycle, with its value
                seen, lost_idx = [], []
                for s in range(0, len(pending_set), 1000):
                    chunk = pending_set[s:s + 1000]
                    vals = r.mget([b"k:%d" % i for i, _ in chunk])
                    for (i, t), v in zip(chunk, vals):
                        if v is None:
                            lost.append((i, t))
                            lost_idx.append(i)
                        elif v != b"%d" % i:
                            fail(cycle, "k:%d holds %r" % (i, v[:40]))
                        else:
                            seen.append(i)
                if lost_idx and seen and max(seen) > min(lost_idx):
                    fail(cycle, "not a prefix: k:%d lost but k:%d kept" % (min(lost_idx), max(seen)))
                # 3. keys seen at earlier restarts stay (a sample each cycle, all of them at the end)
                final = cycle == args.crash_cycles
                old = present if final or len(present) <= 2000 else sample_rng.sample(present, 2000)
                for s in range(0, len(old), 1000):
                    chunk = old[s:s + 1000]
                    for i, v in zip(chunk, r.mget([b"k:%d" % i for i in chunk])):
                        if v != b"%d" % i:
                            fail(cycle, "k:%d, present at an earlier restart, now %r" % (i, v))
                present += seen
                if lost:
                    window = t_kill - min(t for _, t in lost)
                    st["lost"] += len(lost)
                    st["lost_max"] = max(st["lost_max"], len(lost))
                    st["window_max"] = max(st["window_max"], max(0.0, window))
                    msg = "%d acknowledged writes lost, the oldest acknowledged %.0f ms before the SIGKILL, " \
                          "the newest %.0f ms" % (len(lost), max(0.0, window) * 1000,
                                                  max(0.0, t_kill - max(t for _, t in lost)) * 1000)
                    if fsync == "always":
                        fail(cycle, msg)
                    elif window > args.max_loss_window:
                        fail(cycle, msg + " (over %.1f s)" % args.max_loss_window)
                    else:
                        log("#   cycle %d: %s" % (cycle, msg))
                verified = counter
            # 4. the snapshot files, if any
            if checker:
                for f in snapshot_files(d, dbfilename, aofdir):
                    st["checks"] += 1
                    p = subprocess.run(checker + [f], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
                    if p.returncode == 0:
                        st["checks_ok"] += 1
                    else:
                        kept = f + ".bad-%d" % cycle
                        shutil.copyfile(f, kept)
                        last = (p.stdout.decode(errors="replace").strip().splitlines() or [""])[-1]
                        fail(cycle, "%s %s: exit status %d (copy kept as %s): %s" % (
                            os.path.basename(checker[0]), os.path.relpath(f, d), p.returncode, kept, last[:200]))
            if cycle == args.crash_cycles:
                srv.shutdown()
                break
            # 5. write, SIGKILL after a random delay
            st["cycles"] += 1
            delay = rng.uniform(lo, hi)
            bg_at = rng.uniform(0, delay) if bgsave_ok and rng.random() < args.crash_bgsave else None
            wr = AckWriter(srv.sock, next_i, pause)
            wr.start()
            time.sleep(pause)
            if bg_at is not None:
                time.sleep(bg_at)
                try:
                    r.execute_command("BGSAVE")
                    st["bgsaves"] += 1
                except redis.ResponseError as e:
                    log("#   BGSAVE: %s (no more BGSAVEs)" % err_text(e))
                    st["notes"].append("BGSAVE: %s, so no cycle sent one" % err_text(e))
                    bgsave_ok = False
                time.sleep(delay - bg_at)
            else:
                time.sleep(delay)
            t_kill = time.perf_counter()
            srv.kill()
            wr.join(30)
            if wr.reply_error:
                fail(cycle, "writer got an error reply: %s" % wr.reply_error)
            pending_incr, pending_set = wr.incr, wr.sets
            st["acked"] += len(wr.incr) + len(wr.sets)
            next_i = wr.i
            log("# %s cycle %d: %d ms, %d acknowledged writes%s" % (
                fsync, cycle + 1, delay * 1000, len(wr.incr) + len(wr.sets), ", BGSAVE at %d ms" % (bg_at * 1000)
                if bg_at is not None else ""))
        finally:
            if srv.proc.poll() is None:
                srv.kill()
            srv._closed()
    st["failed_cycles"] = len(fail_cycles)
    st["checker"] = os.path.basename(checker[0]) + (" --check-snapshot" if st["kind"] == "goblin" else "") \
        if checker else None
    return st


def run_soak(args, cmdline, started):
    passes = [f.strip() for f in args.crash_fsync.split(",") if f.strip()]
    log("# %s\n# %s: durability soak, %d cycles per pass (%s), seed %d, temp dirs in %s (%s)" % (
        cmdline, started, args.crash_cycles, ", ".join(passes), args.seed, args.tmpdir, fs_of(args.tmpdir)))
    results = []
    for k, fsync in enumerate(passes):
        st = soak_pass(args.server, fsync, args, args.seed * 31 + k)
        results.append(st)
        if st["failures"]:
            TEMP_DIRS.remove(st["dir"])  # kept for inspection
    st0 = results[0] if results else {}
    lo, hi = args.crash_delay.split(",")
    out = ["Durability soak: `%s` (%s; `%s` %s %s; each cycle writes acknowledged `INCR counter` / "
           "`SET k:<i> <i>` one at a time for a seeded random %s–%s ms, SIGKILLs the server and restarts it on "
           "the same dir with `--appendonly yes`; files on %s)."
           % (cmdline, started, args.server, st0.get("kind"), st0.get("version"), lo, hi, fs_of(args.tmpdir)),
           "",
           "| appendfsync | cycles | failed cycles | acknowledged writes | lost (total / max per cycle) | "
           "max loss window, ms | snapshot checks passed | restart median / max, ms |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for st in results:
        rs = st["restart"]
        out.append("| %s | %d | %d | {:,} | {:,} / {:,} | %.0f | %s | %s |".format(
            st["acked"], st["lost"], st["lost_max"]) % (
            st["fsync"], st["cycles"], st["failed_cycles"], st["window_max"] * 1000,
            "%d/%d" % (st["checks_ok"], st["checks"]) if st["checker"] else "n/a (no checker)",
            "%.0f / %.0f" % (statistics.median(rs) * 1000, max(rs) * 1000) if rs else "n/a"))
    out.append("")
    out.append("- loss window = SIGKILL time − acknowledgement time of the oldest lost write; appendfsync always "
               "fails a cycle on any loss, everysec on a window over %.1f s; any loss that is not a suffix, a "
               "changed value or a write lost after an earlier restart showed it fails too."
               % args.max_loss_window)
    for st in results:
        if st["pause"]:
            out.append("- %s: each cycle sends one INCR/SET pair, waits %.1f s, then writes for the random delay, "
                       "so losing that pair fails the window check" % (st["fsync"], st["pause"]))
    for st in results:
        if st["checker"]:
            out.append("- %s: snapshot files (dir/dbfilename, appendonlydir/*.rdb and *.gsnap) checked with `%s FILE` after every "
                       "restart%s" % (st["fsync"], st["checker"],
                                      "; %d cycles sent a BGSAVE before the SIGKILL" % st["bgsaves"]
                                      if args.crash_bgsave > 0 else ""))
        for f in st["notes"]:
            out.append("- %s: %s" % (st["fsync"], f))
        for f in st["failures"][:10]:
            out.append("- %s: %s" % (st["fsync"], f))
        if len(st["failures"]) > 10:
            out.append("- %s: ... %d more failures" % (st["fsync"], len(st["failures"]) - 10))
        if st["failures"]:
            out.append("- %s: dir kept: %s" % (st["fsync"], st["dir"]))
    print("\n".join(out))
    return 1 if any(st["failures"] for st in results) else 0


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="See bench/README.md.", formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", default="build/goblin-server", help="the goblin-server binary (default %(default)s)")
    ap.add_argument("--redis", default="/usr/bin/redis-server", help="the reference redis-server (default %(default)s)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="comma-separated subset of %(default)s")
    ap.add_argument("--n", type=int, default=1000000, help="elements (string: keys) per workload (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=2, help="runs per server and workload, alternated A B B A (default %(default)s)")
    ap.add_argument("--batch", type=int, default=1000, help="elements per fill command (default %(default)s)")
    ap.add_argument("--empty-starts", type=int, default=5, help="starts with an empty dir per run (default %(default)s)")
    ap.add_argument("--file-starts", type=int, default=3, help="starts with the snapshot per run (default %(default)s)")
    ap.add_argument("--write-pipeline", type=int, default=100, help="writes per round trip during BGSAVE (default %(default)s)")
    ap.add_argument("--seed", type=int, default=memory.SEED)
    ap.add_argument("--cpu", default="1", help="pin servers and this script with taskset -c CPU ('' for none; default %(default)s)")
    ap.add_argument("--tmpdir", default=tempfile.gettempdir(), help="where the server dirs go (default %(default)s)")
    ap.add_argument("--keep", action="store_true", help="keep the server dirs")
    ap.add_argument("--export-rdb", action="store_true",
                    help="measure --export-rdb and SAVE with snapshot-format rdb against redis SAVE instead")
    ap.add_argument("--load-rdb", action="store_true",
                    help="measure loading redis-server's RDB file of each workload, goblin against redis, instead")
    ap.add_argument("--crash-cycles", type=int, default=0, metavar="N",
                    help="run the durability soak with N SIGKILL cycles per pass instead of the benchmark")
    ap.add_argument("--crash-fsync", default="always,everysec", help="soak passes (default %(default)s)")
    ap.add_argument("--crash-delay", default="50,500", help="SIGKILL after uniform MIN,MAX ms of writes (default %(default)s)")
    ap.add_argument("--crash-bgsave", type=float, default=0.0, metavar="P",
                    help="fraction of soak cycles that also send a BGSAVE at a random moment before the SIGKILL (default 0)")
    ap.add_argument("--max-loss-window", type=float, default=1.0,
                    help="everysec: a cycle fails when acknowledged writes older than this many s are lost (default %(default)s)")
    args = ap.parse_args()

    binaries = [args.server] if args.crash_cycles > 0 else [args.server, args.redis]
    for b in binaries:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error("not an executable: %s" % b)
    if args.rounds < 1 or args.n < 1 or args.empty_starts < 1 or args.file_starts < 1:
        ap.error("--rounds, --n, --empty-starts and --file-starts must be at least 1")
    try:
        lo, hi = (float(x) for x in args.crash_delay.split(","))
        assert 0 <= lo <= hi
    except (ValueError, AssertionError):
        ap.error("--crash-delay wants MIN,MAX in ms")
    if args.cpu:
        if shutil.which("taskset") is None:
            ap.error("taskset not found (apt-get install util-linux), or pass --cpu ''")
        os.sched_setaffinity(0, parse_cpus(args.cpu))  # the client on the servers' CPU; threads inherit it

    cmdline = shlex.join([sys.argv[0]] + sys.argv[1:])
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    status = 0
    try:
        if args.crash_cycles > 0:
            status = run_soak(args, cmdline, started)
        elif args.export_rdb:
            run_export(args, cmdline, started)
        elif args.load_rdb:
            run_load_rdb(args, cmdline, started)
        else:
            run_bench(args, cmdline, started)
    except KeyboardInterrupt:
        status = 130
    finally:
        for s in list(RUNNING):
            s.kill()
        if not args.keep:
            for d in TEMP_DIRS:
                shutil.rmtree(d, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
