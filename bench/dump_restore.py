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
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory  # noqa: E402  -- bench/memory.py: the workloads (generate, KEY, SEED)
from pinned_server import ServerPair, print_ratios  # noqa: E402

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
    with ServerPair({"goblin": args.server, "redis": args.redis}, args.cpu, "goblin-dump-restore-") as servers:
        conns = {name: conn for name, (_, _, conn) in servers.items()}
        for conn in conns.values():
            fill(conn, args.members)
        payload = conns["redis"].call("DUMP", KEY)
        if conns["goblin"].call("DUMP", KEY) != payload:
            raise RuntimeError("the two servers' payloads differ: the comparison would not be like for like")
        expected = conns["redis"].call("ZCARD", KEY)
        commands = {"DUMP": (b"DUMP", KEY), "RESTORE": (b"RESTORE", b"bench:copy", b"0", payload, b"REPLACE")}
        results = {}
        for command, argv in commands.items():
            for round_index in range(args.rounds):
                for name in ("goblin", "redis") if round_index % 2 == 0 else ("redis", "goblin"):
                    rate = timed(conns[name], argv, args.calls, args.batch)
                    results.setdefault((command, name), []).append(rate)
                    print(f"{command} {name} round {round_index}: {rate:,.0f}/s", file=sys.stderr)
        # The restored set holds every member with its score: its own DUMP is the payload again.
        for name, conn in conns.items():
            if conn.call("ZCARD", b"bench:copy") != expected or conn.call("DUMP", b"bench:copy") != payload:
                raise RuntimeError(f"{name}: the restored set is not the dumped one")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    title = (f"`bench/dump_restore.py --server {args.server} --members {args.members} --rounds {args.rounds} "
             f"--calls {args.calls} --batch {args.batch}` ({stamp}; payload {len(payload):,} bytes)")
    print_ratios([(command, statistics.median(results[(command, "goblin")]),
                   statistics.median(results[(command, "redis")]), "calls/s") for command in commands],
                 args.markdown, title)


if __name__ == "__main__":
    main()
