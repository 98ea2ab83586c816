#!/usr/bin/python3
"""Full-sync time of a redis-server replica from a goblin-server master against from a redis-server master,
the same run.

For each workload of bench/memory.py (default: the 1M-member zset; same seeded commands for both masters),
the master is loaded over a Unix socket, then a redis-server replica is started with --replicaof it. The
time is from the replica's start until its INFO replication says master_link_status:up and
master_sync_in_progress:0 (polled every 5 ms), the replica's own startup (measured alone first, median of
3) subtracted. Both masters use repl-diskless-sync no (disk-based: a child writes the RDB, the master
sends the file). The replica's key count and the collection's cardinality are checked. Masters alternate
A B, B A over --rounds; medians are reported as a Markdown table on stdout, progress on stderr.

See bench/README.md. Needs python3-redis (run with Debian's /usr/bin/python3).
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
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
    def __init__(self, binary, extra):
        binary = os.path.abspath(binary) if os.sep in binary else binary
        self.dir = tempfile.mkdtemp(prefix="bench-repl-")
        self.port = free_port()
        self.sock = os.path.join(self.dir, "s.sock")
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--unixsocket", self.sock,
                "--save", "", "--appendonly", "no", "--dir", self.dir, "--repl-diskless-sync", "no", *extra]
        self.proc = subprocess.Popen(args, stdout=open(os.path.join(self.dir, "log"), "w"),
                                     stderr=subprocess.STDOUT, cwd=self.dir)
        self.client = redis.Redis(unix_socket_path=self.sock, socket_timeout=600)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.client.ping():
                    break
            except (redis.ConnectionError, redis.BusyLoadingError, FileNotFoundError):
                pass
            if time.monotonic() > deadline:
                sys.exit(f"{binary} did not start")
            time.sleep(0.001)

    def stop(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


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


def replica_sync_seconds(master_port, replica_binary, workload, n):
    start = time.monotonic()
    replica = Server(replica_binary, ["--replicaof", "127.0.0.1", str(master_port)])
    try:
        while True:
            info = replica.client.info("replication")
            if info.get("master_link_status") == "up" and info.get("master_sync_in_progress") == 0:
                break
            time.sleep(0.005)
        seconds = time.monotonic() - start
        card = replica.client.execute_command(CARD[workload], memory.KEY[workload])
        assert card == n, f"the replica holds {card} of {n}"
        return seconds
    finally:
        replica.stop()


def replica_startup_seconds(replica_binary):
    times = []
    for _ in range(3):
        start = time.monotonic()
        Server(replica_binary, []).stop()
        times.append(time.monotonic() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="build/goblin-server")
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--workload", default="zset", choices=sorted(CARD))
    parser.add_argument("-n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cmds = memory.generate(args.workload, args.n, 1000)
    startup = replica_startup_seconds(args.redis)
    log(f"replica startup alone: {startup:.3f} s")
    results = {"goblin": [], "redis": []}
    for round_ in range(args.rounds):
        order = ["goblin", "redis"] if round_ % 2 == 0 else ["redis", "goblin"]
        for kind in order:
            master = Server(args.server if kind == "goblin" else args.redis, [])
            try:
                fill(master.client, cmds)
                seconds = replica_sync_seconds(master.port, args.redis, args.workload, args.n) - startup
                log(f"round {round_ + 1} {kind} master: full sync {seconds:.3f} s")
                results[kind].append(seconds)
            finally:
                master.stop()
    g, r = statistics.median(results["goblin"]), statistics.median(results["redis"])
    print(f"| full sync to a redis-server replica, {args.workload} N={args.n} | goblin master | "
          f"redis-server master | ratio |")
    print("|---|---|---|---|")
    print(f"| seconds (median of {args.rounds}) | {g:.3f} | {r:.3f} | {g / r:.2f}x |")


if __name__ == "__main__":
    main()
