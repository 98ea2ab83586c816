#!/usr/bin/python3
"""Bytes per element of goblin-server against redis-server, DESIGN.md's standard workloads.

For every workload and size, each server is started fresh on a Unix socket with
persistence off, INFO memory is read before and after loading the same seeded
commands (RESP generated once, streamed pipelined over the socket), and

    bytes/element = (used_memory after - used_memory before) / N
    RSS bytes/element = (used_memory_rss after - used_memory_rss before) / N

is printed for both servers with the ratio goblin/redis.  See bench/README.md.

Only the Python standard library is used (Debian's /usr/bin/python3).
"""

import argparse
import datetime
import os
import random
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

WORKLOADS = ("zset", "hash", "set", "string", "list", "stream", "stream-pel", "geo")
# The "online users" pattern: integer user ids 10000001.. and integer unix timestamps, as a
# hash (id -> ts), as sets of ids per timestamp, and as a sorted set.
ONLINE_WORKLOADS = ("online-hash", "online-set", "online-zset")
ONLINE_TIMESTAMPS = 100  # online-set: users spread over this many per-timestamp sets
ONLINE_BASE_TS = 1679800725
RAW_BYTES = {"zset": 21, "hash": 32, "set": 13, "string": 28, "list": 16, "stream": 17,
             "stream-pel": 16, "geo": 21,
             "online-hash": 18, "online-set": 8, "online-zset": 18}
LOAD_COMMAND = {"zset": "ZADD", "hash": "HSET", "set": "SADD", "string": "MSET", "list": "RPUSH",
                "stream": "XADD", "stream-pel": "XREADGROUP", "geo": "GEOADD",
                "online-hash": "HSET", "online-set": "SADD", "online-zset": "ZADD"}
KEY = {"zset": b"bench:zset", "hash": b"bench:hash", "set": b"bench:set", "list": b"bench:list",
       "stream": b"bench:stream", "stream-pel": b"bench:stream", "geo": b"bench:geo",
       "online-hash": b"h:online:main", "online-zset": b"z:online:main"}


def online_set_key(slot):
    return b"s:online:main:%d" % (ONLINE_BASE_TS + slot)
SEED = 20240229


def setup(workload, n, batch, seed=SEED):
    """Commands loaded before the 'before' measurement, so a workload measures only its own bytes.

    stream-pel: the stream workload's n entries and XGROUP CREATE key g 0 (the group's pending
    entries are what is measured, not the entries).
    """
    if workload == "stream-pel":
        return generate("stream", n, batch, seed) + [resp([b"XGROUP", b"CREATE", KEY["stream"], b"g", b"0"])]
    return []


# Workloads whose replies are more than one line (read in full, not counted by lines).
MULTILINE_REPLIES = ("stream", "stream-pel")


def resp(args):
    """Encode one command (a list of bytes) as a RESP multibulk."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def generate(workload, n, batch, seed=SEED):
    """The seeded load for one workload: a list of RESP-encoded commands.

    zset:   members user:%08d over a random permutation of 0..n-1, scores uniform
            in [0, 1e6) written with 6 decimals
    hash:   16-byte field names field:%010d (permuted), 16-byte values (random hex)
    set:    members user:%08d (permuted)
    string: n keys key:%08d (permuted), 16-byte values (random hex)
    list:   RPUSH of n random 16-byte values (random hex) into one key
    stream: XADD of n entries into one key, explicit ids four per millisecond in order, one
            field "f" with a random 16-byte value (hex)
    stream-pel: XREADGROUP GROUP g c COUNT batch STREAMS key > until all n entries are pending
            (the stream workload's entries and XGROUP CREATE are the setup; see SETUP)
    geo:    GEOADD of members user:%08d (permuted) at positions uniform over the globe (longitude
            in [-180, 180), latitude in [-85, 85)), each coordinate with 6 decimals
    """
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    added = 0  # stream entries generated so far (their ids must increase)
    cmds = []
    for start in range(0, n, batch):
        chunk = order[start:start + batch]
        if workload == "zset":
            parts = [b"*%d\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n" % (2 + 2 * len(chunk), len(KEY["zset"]), KEY["zset"])]
            for i in chunk:
                s = rng.randrange(1000000000000)  # micro-units in [0, 1e6)
                score = b"%d.%06d" % (s // 1000000, s % 1000000)
                parts.append(b"$%d\r\n%s\r\n$13\r\nuser:%08d\r\n" % (len(score), score, i))
        elif workload == "geo":
            parts = [b"*%d\r\n$6\r\nGEOADD\r\n$%d\r\n%s\r\n" % (2 + 3 * len(chunk), len(KEY["geo"]), KEY["geo"])]
            for i in chunk:
                lon = b"%.6f" % (rng.randrange(360000000) / 1e6 - 180)
                lat = b"%.6f" % (rng.randrange(170000000) / 1e6 - 85)
                parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n$13\r\nuser:%08d\r\n" % (len(lon), lon, len(lat), lat, i))
        elif workload == "hash":
            parts = [b"*%d\r\n$4\r\nHSET\r\n$%d\r\n%s\r\n" % (2 + 2 * len(chunk), len(KEY["hash"]), KEY["hash"])]
            for i in chunk:
                parts.append(b"$16\r\nfield:%010d\r\n$16\r\n%016x\r\n" % (i, rng.getrandbits(64)))
        elif workload == "set":
            parts = [b"*%d\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n" % (2 + len(chunk), len(KEY["set"]), KEY["set"])]
            for i in chunk:
                parts.append(b"$13\r\nuser:%08d\r\n" % i)
        elif workload in ("online-hash", "online-zset"):
            # online-hash: HSET key <id> <ts>; online-zset: ZADD key <ts> <id>
            verb = b"HSET" if workload == "online-hash" else b"ZADD"
            parts = [b"*%d\r\n$4\r\n%s\r\n$%d\r\n%s\r\n" % (2 + 2 * len(chunk), verb, len(KEY[workload]), KEY[workload])]
            for i in chunk:
                uid = b"%d" % (10000001 + i)
                ts = b"%d" % (ONLINE_BASE_TS + rng.randrange(86400))
                first, second = (uid, ts) if workload == "online-hash" else (ts, uid)
                parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(first), first, len(second), second))
        elif workload == "online-set":
            # One SADD per timestamp set in this chunk.
            by_slot = {}
            for i in chunk:
                by_slot.setdefault(i % ONLINE_TIMESTAMPS, []).append(b"%d" % (10000001 + i))
            # Each element of the load is one command (one reply is read per element).
            cmds.extend(resp([b"SADD", online_set_key(slot)] + ids) for slot, ids in sorted(by_slot.items()))
            continue
        elif workload == "stream":
            # One XADD per entry, explicit ids four per millisecond, one field "f", 16 bytes.
            for _ in chunk:
                entry_id = b"%d-%d" % (1 + added // 4, added % 4)
                added += 1
                cmds.append(resp([b"XADD", KEY["stream"], entry_id, b"f", b"%016x" % rng.getrandbits(64)]))
            continue
        elif workload == "stream-pel":
            cmds.append(resp([b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"%d" % len(chunk),
                              b"STREAMS", KEY["stream-pel"], b">"]))
            continue
        elif workload == "list":
            parts = [b"*%d\r\n$5\r\nRPUSH\r\n$%d\r\n%s\r\n" % (2 + len(chunk), len(KEY["list"]), KEY["list"])]
            for _ in chunk:
                parts.append(b"$16\r\n%016x\r\n" % rng.getrandbits(64))
        elif workload == "string":
            parts = [b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * len(chunk))]
            for i in chunk:
                parts.append(b"$12\r\nkey:%08d\r\n$16\r\n%016x\r\n" % (i, rng.getrandbits(64)))
        else:
            raise ValueError(workload)
        cmds.append(b"".join(parts))
    return cmds


class Conn:
    """A minimal RESP client over a Unix socket (replies parsed just enough for INFO and errors)."""

    def __init__(self, path, timeout=600):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("server closed the connection")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b":", b"-", b"_", b",", b"#", b"("):
            return line  # keep the type byte so errors are visible
        if t in (b"$", b"=", b"!"):
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if t in (b"*", b"~", b">", b"%"):
            n = int(rest)
            if t == b"%":
                n *= 2
            return [self.reply() for _ in range(max(n, 0))]
        raise ValueError("bad reply line %r" % line[:80])

    def call(self, *args):
        self.sock.sendall(resp([a if isinstance(a, bytes) else str(a).encode() for a in args]))
        return self.reply()

    def stream_replies(self, cmds):
        """Like stream, for replies of any shape (each parsed in full); return the error lines."""
        errors = []
        t = threading.Thread(target=lambda: [self.sock.sendall(c) for c in cmds], daemon=True)
        t.start()
        for _ in cmds:
            r = self.reply()
            if isinstance(r, bytes) and r.startswith(b"-"):
                errors.append(r.decode(errors="replace"))
        t.join()
        return errors

    def stream(self, cmds):
        """Send cmds pipelined (a writer thread) while counting replies; return the error lines."""
        errors = []
        failure = []

        def writer():
            try:
                for c in cmds:
                    self.sock.sendall(c)
            except OSError as e:  # the reader will report the short count
                failure.append(e)

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        got = 0
        want = len(cmds)
        while got < want:
            if b"\r\n" not in self.buf:
                self._fill()
            # every load reply is one line (:n, +OK or -ERR ...); see MULTILINE_REPLIES
            lines = self.buf.split(b"\r\n")
            self.buf = lines.pop()
            for ln in lines:
                if ln.startswith(b"-"):
                    errors.append(ln.decode(errors="replace"))
            got += len(lines)
        t.join()
        if failure:
            raise failure[0]
        return errors


def is_unknown_command(reply):
    return isinstance(reply, bytes) and reply.startswith(b"-") and b"unknown command" in reply.lower()


def parse_info(text):
    out = {}
    for ln in text.decode(errors="replace").splitlines():
        if ":" in ln and not ln.startswith("#"):
            k, v = ln.split(":", 1)
            out[k] = v
    return out


def proc_rss(pid):
    with open("/proc/%d/statm" % pid) as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Server:
    def __init__(self, binary, cpu):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="goblin-membench-")
        self.sock = os.path.join(self.dir, "s.sock")
        cmd = [binary, "--port", "0", "--unixsocket", self.sock, "--save", "", "--appendonly", "no", "--dir", self.dir]
        if cpu is not None:
            cmd = ["taskset", "-c", str(cpu)] + cmd
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s at startup:\n%s" % (binary, self.proc.returncode, self.tail()))
            try:
                c = Conn(self.sock, timeout=5)
                if c.call("PING") in (b"+PONG", b"PONG"):
                    c.close()
                    break
                c.close()
            except OSError:
                pass
            if time.time() > deadline:
                self.stop()
                raise RuntimeError("%s did not answer PING on %s:\n%s" % (binary, self.sock, self.tail()))
            time.sleep(0.05)

    def tail(self):
        try:
            with open(os.path.join(self.dir, "server.log"), "rb") as f:
                return f.read()[-2000:].decode(errors="replace")
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def memory(conn, pid):
    """(used_memory, used_memory_rss, rss from /proc) after letting cached figures refresh."""
    time.sleep(0.3)  # redis-server refreshes its used_memory_rss in serverCron (every 100 ms)
    info = parse_info(conn.call("INFO", "memory"))
    return int(info["used_memory"]), int(info.get("used_memory_rss", 0)), proc_rss(pid)


def version(conn):
    try:
        info = parse_info(conn.call("INFO", "server"))
    except Exception:  # noqa: BLE001 - a server without INFO server still gets measured
        return "?"
    for k in ("goblin_version", "redis_version"):
        if k in info:
            return info[k]
    return "?"


def measure(binary, workload, n, cmds, cpu, optimize, setup_cmds=()):
    """Load setup_cmds, then cmds into a fresh server; return a result dict (or one with 'skip')."""
    srv = Server(binary, cpu)
    try:
        ctl = Conn(srv.sock)
        ver = version(ctl)
        load = Conn(srv.sock)
        if setup_cmds:
            errors = load.stream_replies(setup_cmds)
            if errors:
                raise RuntimeError("%s replied %d errors in the setup of %s, first: %s" % (binary, len(errors), workload, errors[0]))
        before = memory(ctl, srv.proc.pid)
        load.sock.sendall(cmds[0])  # the first command goes alone, so an unknown one is seen cleanly
        r = load.reply()
        if is_unknown_command(r):
            load.close()
            why = r[1:].decode(errors="replace").split(", with args")[0]
            return {"skip": "%s: %s" % (LOAD_COMMAND[workload], why), "version": ver}
        errors = [r.decode(errors="replace")] if isinstance(r, bytes) and r.startswith(b"-") else []
        t0 = time.time()
        errors += (load.stream_replies if workload in MULTILINE_REPLIES else load.stream)(cmds[1:])
        load_s = time.time() - t0
        load.close()
        if errors:
            raise RuntimeError("%s replied %d errors while loading %s, first: %s" % (binary, len(errors), workload, errors[0]))
        if workload == "online-set":
            total = sum(int(ctl.call(b"SCARD", online_set_key(s))[1:]) for s in range(ONLINE_TIMESTAMPS))
            count = b":%d" % total
        else:
            check = (b"ZCARD", KEY.get(workload)) if workload in ("zset", "online-zset", "geo") else \
                    (b"HLEN", KEY.get(workload)) if workload in ("hash", "online-hash") else \
                    (b"SCARD", KEY.get(workload)) if workload == "set" else \
                    (b"LLEN", KEY.get(workload)) if workload == "list" else \
                    (b"XLEN", KEY.get(workload)) if workload == "stream" else \
                    (b"XPENDING", KEY.get(workload), b"g") if workload == "stream-pel" else (b"DBSIZE",)
            count = ctl.call(*check)
            if workload == "stream-pel":
                count = count[0]  # the summary's pending count
        if count != b":%d" % n:
            raise RuntimeError("%s holds %r elements after loading %s, expected %d" % (binary, count, workload, n))
        after = memory(ctl, srv.proc.pid)
        res = {"version": ver, "before": before, "after": after, "load_s": load_s}
        if optimize:
            r = ctl.call("GOBLIN.OPTIMIZE")
            if is_unknown_command(r):
                res["opt_note"] = "GOBLIN.OPTIMIZE: unknown command"
            elif isinstance(r, bytes) and r.startswith(b"-"):
                res["opt_note"] = "GOBLIN.OPTIMIZE: " + r[1:].decode(errors="replace")
            else:
                res["optimized"] = memory(ctl, srv.proc.pid)
        ctl.close()
        return res
    finally:
        srv.stop()


def per_el(res, n, which="after"):
    b, a = res["before"], res[which]
    return (a[0] - b[0]) / n, (a[1] - b[1]) / n, (a[2] - b[2]) / n


def fmt_ratio(g, r):
    return "%.2f" % (g / r) if r > 0 else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", required=True, help="the goblin-server binary (any redis-compatible server works)")
    ap.add_argument("--redis", default="/usr/bin/redis-server", help="the reference redis-server (default %(default)s)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--sizes", default="500000,1000000,1100000,2000000")
    ap.add_argument("--batch", type=int, default=1000, help="members (or keys) per ZADD/HSET/SADD/MSET (default %(default)s)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--cpu", default="1", help="pin servers with taskset -c CPU ('' for no pinning; default %(default)s)")
    ap.add_argument("--goblin-optimize", action="store_true", help="also measure goblin after GOBLIN.OPTIMIZE")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table for docs/BENCHMARKS.md")
    args = ap.parse_args()

    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    for w in workloads:
        if w not in WORKLOADS + ONLINE_WORKLOADS:
            ap.error("unknown workload %r (known: %s)" % (w, ", ".join(WORKLOADS + ONLINE_WORKLOADS)))
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    cpu = args.cpu if args.cpu != "" else None
    if cpu is not None and shutil.which("taskset") is None:
        cpu = None
    for b in (args.server, args.redis):
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error("not an executable: %s" % b)

    cmdline = shlex.join([sys.argv[0]] + sys.argv[1:])
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    notes = {}  # text -> sizes it applies to
    versions = {"goblin_bin": args.server, "redis_bin": args.redis}

    def log(msg):
        print(msg, file=sys.stderr if args.markdown else sys.stdout, flush=True)

    log("# %s\n# %s, batch %d, seed %d, servers pinned to cpu %s" % (cmdline, started, args.batch, args.seed, cpu))
    if not args.markdown:
        hdr = "%-7s %9s %4s | %-14s %8s %8s | %-14s %8s %8s | %6s %6s" % (
            "work", "N", "raw", "redis", "used B/el", "rss B/el", "goblin", "used B/el", "rss B/el", "used x", "rss x")
        print(hdr)
    for w in workloads:
        for n in sizes:
            t0 = time.time()
            cmds = generate(w, n, args.batch, args.seed)
            before_cmds = setup(w, n, args.batch, args.seed)
            gen_s = time.time() - t0
            red = measure(args.redis, w, n, cmds, cpu, False, before_cmds)
            gob = measure(args.server, w, n, cmds, cpu, args.goblin_optimize, before_cmds)
            del cmds, before_cmds
            versions["redis"] = red.get("version", "?")
            versions["goblin"] = gob.get("version", "?")
            row = {"w": w, "n": n, "red": red, "gob": gob}
            rows.append(row)
            for name, res in (("redis", red), ("goblin", gob)):
                if "skip" in res:
                    add_note(notes, "%s %s skipped: %s" % (name, w, res["skip"]), n)
                if "opt_note" in res:
                    add_note(notes, "%s %s: %s" % (name, w, res["opt_note"]), n)
                if "after" in res:
                    used, rss, prss = per_el(res, n)
                    if abs(rss - prss) * n > max(0.02 * abs(res["after"][2]), 1 << 20):
                        add_note(notes, "%s %s: INFO used_memory_rss delta %.1f B/el disagrees with /proc statm %.1f B/el"
                                 % (name, w, rss, prss), n)
            if not args.markdown:
                print(text_row(row, n))
                if args.goblin_optimize and "optimized" in gob:
                    gu, gr, _ = per_el(gob, n, "optimized")
                    ru, rr, _ = per_el(red, n)
                    print("%-7s %9s %4s | %-14s %8s %8s | %-14s %8.1f %8.1f | %6s %6s" % (
                        "", "", "", "", "", "", "+OPTIMIZE", gu, gr, fmt_ratio(gu, ru), fmt_ratio(gr, rr)))
                sys.stdout.flush()
            log("#   %s N=%d: generated in %.1fs, redis load %.1fs, goblin load %s" % (
                w, n, gen_s, red.get("load_s", 0), ("%.1fs" % gob["load_s"]) if "load_s" in gob else "skipped"))

    if args.markdown:
        print(markdown(rows, cmdline, started, versions, args.goblin_optimize, notes))
    else:
        for nt in note_lines(notes):
            print("note: " + nt)
        print("# goblin %s (%s), redis %s (%s)" % (versions.get("goblin"), args.server, versions.get("redis"), args.redis))


def add_note(notes, text, n):
    notes.setdefault(text, []).append(n)


def note_lines(notes):
    return ["%s (N = %s)" % (t, ", ".join("{:,}".format(n) for n in ns)) for t, ns in notes.items()]


def text_row(row, n):
    red, gob = row["red"], row["gob"]
    cells = []
    for name, res in (("redis", red), ("goblin", gob)):
        if "after" in res:
            u, r, _ = per_el(res, n)
            cells.append("%-14s %8.1f %8.1f" % (name, u, r))
        else:
            cells.append("%-14s %8s %8s" % (name, "n/a", "n/a"))
    if "after" in red and "after" in gob:
        ru, rr, _ = per_el(red, n)
        gu, gr, _ = per_el(gob, n)
        ratio = "%6s %6s" % (fmt_ratio(gu, ru), fmt_ratio(gr, rr))
    else:
        ratio = "%6s %6s" % ("n/a", "n/a")
    return "%-7s %9d %4d | %s | %s | %s" % (row["w"], n, RAW_BYTES[row["w"]], cells[0], cells[1], ratio)


def markdown(rows, cmdline, started, versions, optimize, notes):
    out = []
    out.append("Memory, bytes per element: `%s` (%s; goblin = `%s` %s, redis = `%s` %s; "
               "one fresh server per row, Unix socket, persistence off)."
               % (cmdline, started, versions.get("goblin_bin"), versions.get("goblin"),
                  versions.get("redis_bin"), versions.get("redis")))
    out.append("")
    out.append("used = (used_memory after load − before) / N; RSS = (used_memory_rss after − before) / N; "
               "ratio = goblin / redis.")
    out.append("")
    head = ["workload", "N", "raw B", "redis used", "goblin used", "used ratio", "redis RSS", "goblin RSS", "RSS ratio"]
    if optimize:
        head += ["goblin used after OPTIMIZE", "ratio"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join(["---"] * 3 + ["---:"] * (len(head) - 3)) + "|")
    for row in rows:
        n, red, gob = row["n"], row["red"], row["gob"]
        ru = rr = gu = gr = None
        if "after" in red:
            ru, rr, _ = per_el(red, n)
        if "after" in gob:
            gu, gr, _ = per_el(gob, n)
        f = lambda v: "n/a" if v is None else "%.1f" % v  # noqa: E731
        rt = lambda g, r: "n/a" if g is None or r is None else fmt_ratio(g, r)  # noqa: E731
        cells = [row["w"], "{:,}".format(n), str(RAW_BYTES[row["w"]]), f(ru), f(gu), rt(gu, ru), f(rr), f(gr), rt(gr, rr)]
        if optimize:
            if "optimized" in gob:
                ou, _, _ = per_el(gob, n, "optimized")
                cells += [f(ou), rt(ou, ru)]
            else:
                cells += ["n/a", "n/a"]
        out.append("| " + " | ".join(cells) + " |")
    if notes:
        out.append("")
        for nt in note_lines(notes):
            out.append("- " + nt)
    return "\n".join(out)


if __name__ == "__main__":
    main()
