#!/usr/bin/env python3
"""DUMP and RESTORE of one sorted set, goblin-server against redis-server, the same run, as ratios.

The set is bench/memory.py's zset workload at --members members (default 10,000: members
user:%08d over a seeded permutation, scores uniform in [0, 1e6) with 6 decimals), past the
listpack limit, so both servers hold a skiplist-class set and write the same payload (RDB 10,
type 5: count, then member and binary score from the highest rank down). Each server is pinned to
--cpu, the client to --client-cpu, Unix socket, persistence off.

  dump     DUMP bench:zset, --batch calls per pipeline, calls/s
  restore  RESTORE bench:copy 0 <payload> REPLACE, --batch calls per pipeline, calls/s; the
           payload is redis-server's DUMP, the same bytes for both servers (checked), and the
           restored set is checked member for member

Runs alternate A B, B A, ... (--rounds per server); medians and goblin/redis are reported.

    bench/dump_restore.py --server build/goblin-server [--redis /usr/bin/redis-server]
                          [--members 10000] [--rounds 4] [--calls 400] [--batch 20]
                          [--cpu 1] [--client-cpu 0] [--markdown]
"""

import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory  # noqa: E402  -- bench/memory.py: the workloads (generate, KEY, SEED)
from pinned_server import start  # noqa: E402

KEY = memory.KEY["zset"]


def fill(conn, members):
    commands = memory.generate("zset", members, 1000)
    conn.sock.sendall(b"".join(commands))
    for _ in commands:
        reply = conn.reply()
        if reply.startswith(b"-"):
            raise RuntimeError(reply.decode())


def timed(conn, command, calls, batch):
    """calls/s of command, sent batch at a time, every reply checked."""
    start = time.perf_counter()
    for done in range(0, calls, batch):
        replies = conn.pipeline([command] * min(batch, calls - done))
        if replies[0] is None:
            raise RuntimeError(f"{command[0]!r} replied nil")
    return calls / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--members", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    os.sched_setaffinity(0, {args.client_cpu})
    work = tempfile.mkdtemp(prefix="goblin-dump-restore-")
    servers = {}
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            servers[name] = start(binary, args.cpu, os.path.join(work, name))
            fill(servers[name][2], args.members)
        payloads = {name: conn.call("DUMP", KEY) for name, (_, _, conn) in servers.items()}
        if payloads["goblin"] != payloads["redis"]:
            raise RuntimeError("the two servers' payloads differ: the comparison would not be like for like")
        payload = payloads["redis"]
        expected = servers["redis"][2].call("ZCARD", KEY)
        commands = {"dump": (b"DUMP", KEY), "restore": (b"RESTORE", b"bench:copy", b"0", payload, b"REPLACE")}
        results = {}
        order = ["goblin", "redis"]
        for workload, command in commands.items():
            for round_index in range(args.rounds):
                for name in order if round_index % 2 == 0 else order[::-1]:
                    conn = servers[name][2]
                    rate = timed(conn, command, args.calls, args.batch)
                    results.setdefault((workload, name), []).append(rate)
                    print(f"{workload} {name} round {round_index}: {rate:,.0f}/s", file=sys.stderr)
        # The restored set holds every member with its score: its own DUMP is the payload again.
        for name, (_, _, conn) in servers.items():
            if conn.call("ZCARD", b"bench:copy") != expected or conn.call("DUMP", b"bench:copy") != payload:
                raise RuntimeError(f"{name}: the restored set is not the dumped one")
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        if args.markdown:
            print(f"`bench/dump_restore.py --server {args.server} --members {args.members} --rounds {args.rounds} "
                  f"--calls {args.calls} --batch {args.batch}` ({stamp}; payload {len(payload):,} bytes)\n")
            print("| command | goblin | redis | goblin/redis |")
            print("|---|---:|---:|---:|")
        for workload in commands:
            g = statistics.median(results[(workload, "goblin")])
            r = statistics.median(results[(workload, "redis")])
            if args.markdown:
                print(f"| {workload.upper()} | {g:,.0f} calls/s | {r:,.0f} calls/s | {g / r:.2f}x |")
            else:
                print(f"{workload:8} goblin {g:10,.0f}  redis {r:10,.0f}  calls/s  ratio {g / r:.2f}")
    finally:
        for proc, _, _ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
