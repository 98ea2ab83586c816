#!/usr/bin/env python3
"""Client-side caching: what CLIENT TRACKING costs, goblin-server against redis-server in the
same run, as ratios.

Each server (pinned to CPU --cpu, Unix socket, persistence off) is loaded with --keys string
keys `key:%012d` (redis-benchmark's __rand_int__ names). Then, per round (servers alternating
A B, B A):
  - off: redis-benchmark SET and GET of `key:__rand_int__` at -c 1 -P 16, nobody tracking;
  - tracked: one RESP2 client turns on CLIENT TRACKING REDIRECT to a redis-cli subscriber of
    __redis__:invalidate (CPU --subscriber-cpu, output to /dev/null) and reads every key
    (EXISTS of 1000 keys a command, pipelined: keys/s of remembering), so the table holds all
    of them; then the same SET run (each first write of a key looks it up, forgets it and sends
    the subscriber a message) and GET run (reads of clients that do not track: the hook only).
Bytes per tracked key: INFO used_memory before and after the tracking client's first full read
(the server's own table), divided by --keys.

    bench/tracking.py --server build/goblin-server [--redis /usr/bin/redis-server] [--rounds 3]
                      [--keys 1000000] [--requests 1000000] [--cpu 1] [--subscriber-cpu 0]
                      [--markdown]
"""

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pinned_server import Conn, info_memory, redis_benchmark, start

BATCH = 1000


def key(i):
    return b"key:%012d" % i


def load(conn, keys):
    for first in range(0, keys, BATCH):
        args = [b"MSET"]
        for i in range(first, min(keys, first + BATCH)):
            args += [key(i), b"v" * 16]
        conn.pipeline([args])


def track_all(conn, keys):
    """Reads every key through the tracking connection; returns keys remembered per second."""
    commands = [[b"EXISTS", *(key(i) for i in range(first, min(keys, first + BATCH)))]
                for first in range(0, keys, BATCH)]
    start_time = time.perf_counter()
    for at in range(0, len(commands), 50):
        conn.pipeline(commands[at:at + 50])
    return keys / (time.perf_counter() - start_time)


def stat(conn, field):
    conn.send("INFO", "everything")
    for line in conn.reply().decode().splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    raise RuntimeError(field + " not in INFO")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keys", type=int, default=1000000)
    parser.add_argument("--requests", type=int, default=1000000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--subscriber-cpu", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="goblin-tracking-")
    servers, subscribers, bytes_per_key = {}, [], {}
    results = {}
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            proc, sock, conn = start(binary, args.cpu, os.path.join(work, name))
            load(conn, args.keys)
            sub = subprocess.Popen(["taskset", "-c", str(args.subscriber_cpu), "redis-cli", "-s", sock,
                                    "SUBSCRIBE", "__redis__:invalidate"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subscribers.append(sub)
            deadline = time.time() + 10
            while stat(conn, "pubsub_channels") != 1:
                if time.time() > deadline:
                    raise RuntimeError("the subscriber did not subscribe")
                time.sleep(0.02)
            conn.send("CLIENT", "LIST")
            listing = conn.reply().decode()
            sub_id = next(line.split()[0].split("=")[1] for line in listing.splitlines() if "flags=P" in line)
            tracker = Conn(sock)
            servers[name] = (proc, sock, conn, tracker, sub_id)
        order = ["goblin", "redis"]
        for round_index in range(args.rounds):
            for name in order if round_index % 2 == 0 else order[::-1]:
                _, sock, conn, tracker, sub_id = servers[name]
                for command in ("SET", "GET"):
                    words = ["SET", "key:__rand_int__", "v" * 16] if command == "SET" else ["GET", "key:__rand_int__"]
                    rate = redis_benchmark(sock, args.cpu, words, args.requests, args.keys)
                    results.setdefault(("off", command, name), []).append(rate)
                for command in ("SET", "GET"):
                    if tracker.call("CLIENT", "TRACKING", "on", "REDIRECT", sub_id) != b"+OK":
                        raise RuntimeError(f"{name}: CLIENT TRACKING refused")
                    before = info_memory(conn)["used_memory"]
                    remember = track_all(tracker, args.keys)
                    if stat(conn, "tracking_total_keys") != args.keys:
                        raise RuntimeError(f"{name}: the table does not hold every key")
                    if round_index == 0 and command == "SET":
                        bytes_per_key[name] = (info_memory(conn)["used_memory"] - before) / args.keys
                    results.setdefault(("remember", "EXISTS", name), []).append(remember)
                    words = ["SET", "key:__rand_int__", "v" * 16] if command == "SET" else ["GET", "key:__rand_int__"]
                    rate = redis_benchmark(sock, args.cpu, words, args.requests, args.keys)
                    results.setdefault(("tracked", command, name), []).append(rate)
                    tracker.call("CLIENT", "TRACKING", "off")
                    conn.call("FLUSHALL")  # empties the table; the keys come back below
                    load(conn, args.keys)
                    print(f"{name} round {round_index} {command}: tracked {rate:,.0f}/s", file=sys.stderr)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        rows = [("SET, nobody tracking", ("off", "SET")), ("GET, nobody tracking", ("off", "GET")),
                ("SET, one client tracks every key (REDIRECT to a subscriber)", ("tracked", "SET")),
                ("GET by other clients, one client tracks every key", ("tracked", "GET")),
                ("the tracking client's reads: keys remembered/s (EXISTS of 1000 keys, 50 pipelined)",
                 ("remember", "EXISTS"))]
        if args.markdown:
            print(f"`bench/tracking.py --server {args.server} --rounds {args.rounds} --keys {args.keys}` "
                  f"({stamp}, server and redis-benchmark on CPU {args.cpu}, subscriber on CPU "
                  f"{args.subscriber_cpu}; redis-benchmark -c 1 -P 16 over {args.keys:,} keys)\n")
            print("| | goblin | redis | goblin/redis |")
            print("|---|---:|---:|---:|")
        for label, (mode, command) in rows:
            g = statistics.median(results[(mode, command, "goblin")])
            r = statistics.median(results[(mode, command, "redis")])
            if args.markdown:
                print(f"| {label} | {g:,.0f}/s | {r:,.0f}/s | {g / r:.2f}x |")
            else:
                print(f"{label:90} goblin {g:12,.0f}  redis {r:12,.0f}  ratio {g / r:.2f}")
        g, r = bytes_per_key["goblin"], bytes_per_key["redis"]
        if args.markdown:
            print(f"| bytes per tracked key (used_memory delta / {args.keys:,}) | {g:.1f} | {r:.1f} | {g / r:.2f}x |")
        else:
            print(f"{'bytes per tracked key':90} goblin {g:12.1f}  redis {r:12.1f}  ratio {g / r:.2f}")
    finally:
        for sub in subscribers:
            sub.kill()
            sub.wait()
        for proc, *_ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
