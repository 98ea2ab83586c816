#!/usr/bin/env python3
"""Keyspace notifications on: SET throughput with `notify-keyspace-events KEA` and one subscriber
of `__key*__:*`, goblin-server against redis-server in the same run, as a ratio.

Each server (pinned to CPU --cpu, Unix socket, persistence off) gets the notification classes
and a redis-cli PSUBSCRIBE on CPU --subscriber-cpu writing what it receives to /dev/null; then
redis-benchmark (on the server's CPU) runs `SET key:__rand_int__ <16 bytes>` at -c 1 -P 16 on a
flushed server, each SET publishing two messages. Rounds alternate A B, B A; medians and goblin/redis are reported,
with the same run without notifications for reference.

    bench/keyspace_events.py --server build/goblin-server [--redis /usr/bin/redis-server]
                             [--rounds 4] [--requests 1000000] [--cpu 1] [--subscriber-cpu 0]
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

from pinned_server import redis_benchmark, start

SET = ["SET", "key:__rand_int__", "v" * 16]


def subscribe(sock, cpu):
    """A redis-cli subscriber of every keyspace channel, discarding what it reads."""
    return subprocess.Popen(["taskset", "-c", str(cpu), "redis-cli", "-s", sock, "PSUBSCRIBE", "__key*__:*"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_subscribed(conn):
    deadline = time.time() + 10
    while conn.call("PUBSUB", "NUMPAT") != b":1":
        if time.time() > deadline:
            raise RuntimeError("the subscriber did not subscribe")
        time.sleep(0.02)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--subscriber-cpu", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="goblin-keyspace-events-")
    servers = {}
    subscribers = []
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            servers[name] = start(binary, args.cpu, os.path.join(work, name))
        results = {}
        order = ["goblin", "redis"]
        for mode in ("off", "KEA"):
            for name, (_, sock, conn) in servers.items():
                conn.call("CONFIG", "SET", "notify-keyspace-events", "" if mode == "off" else mode)
                if mode != "off":
                    subscribers.append(subscribe(sock, args.subscriber_cpu))
                    wait_subscribed(conn)
            for round_index in range(args.rounds):
                for name in order if round_index % 2 == 0 else order[::-1]:
                    _, sock, conn = servers[name]
                    conn.call("FLUSHALL")  # every run inserts the same keys afresh
                    rate = redis_benchmark(sock, args.cpu, SET, args.requests)
                    if mode != "off" and conn.call("PUBSUB", "NUMPAT") != b":1":
                        raise RuntimeError(f"{name}: the subscriber was dropped (output buffer limit?)")
                    results.setdefault((mode, name), []).append(rate)
                    print(f"{mode} {name} round {round_index}: {rate:,.0f}/s", file=sys.stderr)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if args.markdown:
            print(f"`bench/keyspace_events.py --server {args.server} --rounds {args.rounds}` ({stamp}, server "
                  f"and redis-benchmark on CPU {args.cpu}, subscriber on CPU {args.subscriber_cpu})\n")
            print("| SET, -c 1 -P 16 | goblin | redis | goblin/redis |")
            print("|---|---:|---:|---:|")
        for mode in ("off", "KEA"):
            g = statistics.median(results[(mode, "goblin")])
            r = statistics.median(results[(mode, "redis")])
            label = "notifications off" if mode == "off" else "KEA, one subscriber"
            if args.markdown:
                print(f"| {label} | {g:,.0f} req/s | {r:,.0f} req/s | {g / r:.2f}x |")
            else:
                print(f"{label:22} goblin {g:12,.0f}  redis {r:12,.0f}  req/s  ratio {g / r:.2f}")
    finally:
        for sub in subscribers:
            sub.kill()
            sub.wait()
        for proc, _, _ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
