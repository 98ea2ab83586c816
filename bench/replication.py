#!/usr/bin/python3
"""Replication against redis-server, the same run: full-sync time, write throughput with replicas attached and
their lag, and a failover soak.

sync (default)  For each workload of bench/memory.py (default: the 1M-member zset; the same seeded commands for
                every master) the master is loaded over a Unix socket; a replica, already started, is then told
                REPLICAOF the master. The time is from that command until the replica's INFO replication says
                master_link_status:up and master_sync_in_progress:0 (polled every 2 ms); the replica's
                cardinality is checked. Pairs: goblin -> goblin, redis -> redis, goblin -> redis. Masters use
                repl-diskless-sync yes with delay 0 (Redis 7's default mode, without its 5 s wait for more
                replicas), or no with --disk. Master on CPU 0, replica on CPU 1.
throughput      A master with two replicas of its own kind attached (--replicas); redis-benchmark -c 50 -P 16 SET with 16-byte
                values over 1M random keys against the master, master and benchmark on CPU 1, replicas on CPU 0.
                Meanwhile a probe writes a counter to the master every 50 ms and times how long until the
                first replica serves it (replication lag as a client sees it): median and maximum.
failover        A master and two replicas of one kind; a writer does SET then WAIT 1 200, remembering every
                write WAIT acknowledged; after a random 50-300 writes the master gets kill -9, the replica with
                the larger offset is promoted (REPLICAOF NO ONE), the other follows it and the old master comes
                back as a replica. --kills times; every acknowledged write must be on each new master.

Servers alternate A B, B A over --rounds; medians are reported as Markdown on stdout, progress on stderr.
See bench/README.md. Needs python3-redis (run with Debian's /usr/bin/python3).
"""

import argparse
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory  # noqa: E402  -- bench/memory.py: the workloads (generate, KEY)

try:
    import redis
except ImportError:
    sys.exit("replication.py needs redis-py: apt-get install python3-redis, and run it with /usr/bin/python3")

CARD = {"zset": "ZCARD", "hash": "HLEN", "set": "SCARD", "list": "LLEN", "stream": "XLEN"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server pinned to cpu in a directory of its own (kept across restart), TCP and Unix socket."""

    def __init__(self, binary, cpu, extra=(), diskless=True):
        self.binary = os.path.abspath(binary) if os.sep in binary else binary
        self.dir = tempfile.mkdtemp(prefix="bench-repl-")
        self.port = free_port()
        self.sock = os.path.join(self.dir, "s.sock")
        self.cpu = cpu
        self.args = ["--port", str(self.port), "--bind", "127.0.0.1", "--unixsocket", self.sock, "--save", "",
                     "--appendonly", "no", "--dir", self.dir, "--repl-diskless-sync", "yes" if diskless else "no",
                     "--repl-diskless-sync-delay", "0", *extra]
        self.start()

    def start(self, extra=()):
        self.proc = subprocess.Popen(["taskset", "-c", str(self.cpu), self.binary, *self.args, *extra],
                                     stdout=open(os.path.join(self.dir, "log"), "a"), stderr=subprocess.STDOUT,
                                     cwd=self.dir)
        self.client = redis.Redis(unix_socket_path=self.sock, socket_timeout=600)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.client.ping():
                    return
            except (redis.ConnectionError, redis.BusyLoadingError, FileNotFoundError):
                pass
            if time.monotonic() > deadline:
                sys.exit(f"{self.binary} did not start")
            time.sleep(0.001)

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def replication(self):
        return self.client.info("replication")


def fill(r, cmds, window=64):
    conn = r.connection_pool.get_connection("fill")
    try:
        for s in range(0, len(cmds), window):
            chunk = cmds[s:s + window]
            conn.send_packed_command(chunk, check_health=False)
            for _ in chunk:
                conn.read_response()
    finally:
        r.connection_pool.release(conn)


def synced(replica):
    try:
        info = replica.replication()
    except redis.BusyLoadingError:
        return False
    return info.get("master_link_status") == "up" and info.get("master_sync_in_progress") == 0


def wait_synced(replica, timeout=600):
    deadline = time.monotonic() + timeout
    while not synced(replica):
        if time.monotonic() > deadline:
            sys.exit("a replica did not finish its sync")
        time.sleep(0.002)


# ---- full sync ---------------------------------------------------------------------------------------------------

def sync_seconds(binaries, master_kind, replica_kind, workload, n, cmds, diskless):
    master = Server(binaries[master_kind], 0, diskless=diskless)
    replica = Server(binaries[replica_kind], 1)
    try:
        fill(master.client, cmds)
        start = time.monotonic()
        replica.client.replicaof("127.0.0.1", master.port)
        wait_synced(replica)
        seconds = time.monotonic() - start
        card = replica.client.execute_command(CARD[workload], memory.KEY[workload])
        assert card == n, f"the replica holds {card} of {n}"
        return seconds
    finally:
        master.stop()
        replica.stop()


def run_sync(args, binaries):
    cmds = memory.generate(args.workload, args.n, 1000)
    pairs = [("goblin", "goblin"), ("redis", "redis"), ("goblin", "redis")]
    results = {pair: [] for pair in pairs}
    for round_ in range(args.rounds):
        for pair in pairs if round_ % 2 == 0 else reversed(pairs):
            seconds = sync_seconds(binaries, *pair, args.workload, args.n, cmds, not args.disk)
            log(f"round {round_ + 1} {pair[0]} -> {pair[1]}: full sync {seconds:.3f} s")
            results[pair].append(seconds)
    median = {pair: statistics.median(times) for pair, times in results.items()}
    base = median[("redis", "redis")]
    mode = "disk-based" if args.disk else "diskless"
    print(f"| full sync ({mode}), {args.workload} N={args.n:,} | seconds (median of {args.rounds}) | "
          "against redis -> redis |")
    print("|---|---:|---:|")
    for pair in pairs:
        print(f"| {pair[0]}-server -> {pair[1]}-server | {median[pair]:.3f} | {median[pair] / base:.2f}x |")


# ---- throughput with replicas ------------------------------------------------------------------------------------

def lag_probe(master, replica, stop, lags):
    """Every 50 ms: a write to the master, then the time until the replica serves it."""
    seq = 0
    while not stop.is_set():
        seq += 1
        master.set("lag:probe", seq)
        start = time.monotonic()
        while int(replica.get("lag:probe") or 0) < seq:
            if time.monotonic() - start > 30:
                break
        lags.append(time.monotonic() - start)
        time.sleep(0.05)


def throughput(binary, requests, replica_count):
    master = Server(binary, 1)
    replicas = [Server(binary, 0) for _ in range(replica_count)]
    try:
        for replica in replicas:
            replica.client.replicaof("127.0.0.1", master.port)
        for replica in replicas:
            wait_synced(replica)
        stop, lags = threading.Event(), []
        if replicas:
            probe = threading.Thread(target=lag_probe, args=(
                redis.Redis(unix_socket_path=master.sock), redis.Redis(unix_socket_path=replicas[0].sock), stop,
                lags))
            probe.start()
        out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-s", master.sock, "-c", "50", "-P", "16",
                              "-n", str(requests), "-r", "1000000", "-d", "16", "-q", "-t", "set"],
                             capture_output=True, text=True, check=True).stdout
        stop.set()
        if replicas:
            probe.join()
        rate = float(re.findall(r"([0-9.]+) requests per second", out)[-1])
        offset = master.replication()["master_repl_offset"]
        for replica in replicas:
            deadline = time.monotonic() + 60
            while replica.replication().get("slave_repl_offset", -1) < offset:
                assert time.monotonic() < deadline, "a replica did not catch up"
                time.sleep(0.01)
        for replica in replicas:
            assert replica.client.dbsize() == master.client.dbsize()
        lags = lags or [0.0]
        return rate, statistics.median(lags) * 1000, max(lags) * 1000
    finally:
        master.stop()
        for replica in replicas:
            replica.stop()


def run_throughput(args, binaries):
    results = {"goblin": [], "redis": []}
    for round_ in range(args.rounds):
        for kind in ("goblin", "redis") if round_ % 2 == 0 else ("redis", "goblin"):
            rate, lag_median, lag_max = throughput(binaries[kind], args.requests, args.replicas)
            log(f"round {round_ + 1} {kind}: {rate:,.0f} SET/s, lag median {lag_median:.1f} ms, max {lag_max:.1f} ms")
            results[kind].append((rate, lag_median, lag_max))
    row = {kind: [statistics.median(column) for column in zip(*rows)] for kind, rows in results.items()}
    g, r = row["goblin"], row["redis"]
    print(f"| master with {args.replicas} replicas, SET -c 50 -P 16 (median of {args.rounds}) | goblin | redis | "
          "goblin/redis |")
    print("|---|---:|---:|---:|")
    print(f"| requests per second | {g[0]:,.0f} | {r[0]:,.0f} | {g[0] / r[0]:.2f}x |")
    print(f"| replica lag, median | {g[1]:.1f} ms | {r[1]:.1f} ms | |")
    print(f"| replica lag, maximum | {g[2]:.1f} ms | {r[2]:.1f} ms | |")


# ---- failover soak -----------------------------------------------------------------------------------------------

def promote(nodes, old_master):
    """The surviving replica with the larger offset becomes the master; the others follow it."""
    survivors = [node for node in nodes if node is not old_master]
    offsets = {id(node): node.replication().get("slave_repl_offset", -1) for node in survivors}
    new_master = max(survivors, key=lambda node: offsets[id(node)])
    new_master.client.replicaof("no", "one")
    for node in survivors:
        if node is not new_master:
            node.client.replicaof("127.0.0.1", new_master.port)
    old_master.start(["--replicaof", "127.0.0.1", str(new_master.port)])
    return new_master


def failover_soak(binary, kills, seed):
    rng = random.Random(seed)
    nodes = [Server(binary, i % 2) for i in range(3)]
    master = nodes[0]
    try:
        for node in nodes[1:]:
            node.client.replicaof("127.0.0.1", master.port)
            wait_synced(node)
        acknowledged, unacknowledged, key = [], 0, 0
        promote_seconds = []
        for _ in range(kills):
            for _ in range(rng.randrange(50, 300)):
                key += 1
                master.client.set(f"w:{key}", key)
                if master.client.wait(1, 200) >= 1:
                    acknowledged.append(key)
                else:
                    unacknowledged += 1
            master.kill()
            start = time.monotonic()
            new_master = promote(nodes, master)
            promote_seconds.append(time.monotonic() - start)
            pipe = new_master.client.pipeline(transaction=False)
            for k in acknowledged:
                pipe.exists(f"w:{k}")
            missing = [k for k, present in zip(acknowledged, pipe.execute()) if not present]
            assert not missing, f"acknowledged writes missing after a failover: {missing[:10]}"
            master = new_master
            for node in nodes:
                if node is not master:
                    wait_synced(node)
        return len(acknowledged), unacknowledged, statistics.median(promote_seconds)
    finally:
        for node in nodes:
            node.stop()


def run_failover(args, binaries):
    print(f"| failover soak, {args.kills} kill -9 of the master, WAIT 1 200 after each SET | acknowledged writes | "
          "not acknowledged | missing after failovers | promotion and restart (median) |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("goblin", "redis"):
        acked, unacked, seconds = failover_soak(binaries[kind], args.kills, args.seed)
        log(f"{kind}: {acked} acknowledged writes survived {args.kills} failovers")
        print(f"| {kind}-server | {acked:,} | {unacked:,} | 0 | {seconds * 1000:.0f} ms |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", default="sync", choices=["sync", "throughput", "failover"])
    parser.add_argument("--server", default="build/goblin-server")
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--workload", default="zset", choices=sorted(CARD))
    parser.add_argument("-n", type=int, default=1_000_000)
    parser.add_argument("--disk", action="store_true", help="sync: disk-based full syncs")
    parser.add_argument("--requests", type=int, default=2_000_000, help="throughput: SETs per run")
    parser.add_argument("--replicas", type=int, default=2, help="throughput: replicas attached (0: the master alone)")
    parser.add_argument("--kills", type=int, default=50, help="failover: master kills")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    binaries = {"goblin": args.server, "redis": args.redis}
    {"sync": run_sync, "throughput": run_throughput, "failover": run_failover}[args.mode](args, binaries)


if __name__ == "__main__":
    main()
