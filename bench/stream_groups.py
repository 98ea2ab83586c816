#!/usr/bin/env python3
"""Stream consumer groups, goblin-server against redis-server, the same run, as ratios.

One stream bench:stream of 1M entries (ids <k>-<s>, k 1..100000, s 0..9, one field "f" with a
16-byte value) is loaded into each server. Every round, on each server in turn (A B, B A, ...):

  setup          XGROUP DESTROY / XGROUP CREATE bench:stream g 0: an empty group at the start
  xreadgroup_10  redis-benchmark -c 1 -P 16 -n 100000:
                 XREADGROUP GROUP g c COUNT 10 STREAMS bench:stream >
                 (100,000 reads of 10 entries: the whole stream goes into the group's PEL)
  xack_10        redis-benchmark -c 1 -P 16 -n 100000 -r 100000:
                 XACK bench:stream g __rand_int__-0 ... __rand_int__-9 (ten random ids of the
                 pending 1M, fewer of them pending as the run goes on, alike for both servers)

Server and redis-benchmark are pinned to one CPU, over a Unix socket, persistence off. Reported:
the median requests/s per server and goblin/redis for each, the pair's ratio (a read of 10 and
an ack of 10, 1/(1/read + 1/ack)), and the PEL's bytes per pending entry (INFO used_memory
around the first xreadgroup_10 run).

    bench/stream_groups.py --server build/goblin-server [--redis /usr/bin/redis-server]
                           [--rounds 4] [--cpu 1] [--markdown]
"""

import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile

from pinned_server import info_memory, redis_benchmark, start

KEY = "bench:stream"
BATCHES = 100000  # ms parts of the ids; ten entries each
READ = ["XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", KEY, ">"]
ACK = ["XACK", KEY, "g"] + [f"__rand_int__-{s}" for s in range(10)]


def preload(conn):
    value = b"v" * 16
    for first in range(1, BATCHES + 1, 1000):
        conn.pipeline([[b"XADD", KEY.encode(), b"%d-%d" % (k, s), b"f", value]
                       for k in range(first, min(first + 1000, BATCHES + 1)) for s in range(10)])
    length = conn.call("XLEN", KEY)
    if length != b":%d" % (BATCHES * 10):
        raise RuntimeError(f"XLEN after the preload: {length!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="goblin-stream-groups-")
    servers = {}
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            servers[name] = start(binary, args.cpu, os.path.join(work, name))
            preload(servers[name][2])
        results = {}
        pel_bytes = {}
        order = ["goblin", "redis"]
        for round_index in range(args.rounds):
            for name in order if round_index % 2 == 0 else order[::-1]:
                _, sock, conn = servers[name]
                conn.call("XGROUP", "DESTROY", KEY, "g")
                conn.call("XGROUP", "CREATE", KEY, "g", "0")
                before = info_memory(conn)["used_memory"]
                rate = redis_benchmark(sock, args.cpu, READ, BATCHES, BATCHES)
                if name not in pel_bytes:
                    pel_bytes[name] = (info_memory(conn)["used_memory"] - before) / (BATCHES * 10)
                results.setdefault(("xreadgroup_10", name), []).append(rate)
                results.setdefault(("xack_10", name), []).append(redis_benchmark(sock, args.cpu, ACK, BATCHES, BATCHES))
                print(f"round {round_index} {name}: read {rate:,.0f}/s, ack "
                      f"{results[('xack_10', name)][-1]:,.0f}/s", file=sys.stderr)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        rows = []
        for workload in ("xreadgroup_10", "xack_10"):
            g = statistics.median(results[(workload, "goblin")])
            r = statistics.median(results[(workload, "redis")])
            rows.append((workload, f"{g:,.0f} req/s", f"{r:,.0f} req/s", g / r))
        pair = {name: 1 / (1 / statistics.median(results[("xreadgroup_10", name)]) +
                           1 / statistics.median(results[("xack_10", name)])) for name in order}
        rows.append(("read 10 + ack 10", f"{pair['goblin']:,.0f} pairs/s", f"{pair['redis']:,.0f} pairs/s",
                     pair["goblin"] / pair["redis"]))
        rows.append(("PEL, 1M pending", f"{pel_bytes['goblin']:.1f} B/entry", f"{pel_bytes['redis']:.1f} B/entry",
                     pel_bytes["goblin"] / pel_bytes["redis"]))
        if args.markdown:
            print(f"`bench/stream_groups.py --server {args.server} --rounds {args.rounds}` ({stamp}, CPU {args.cpu})\n")
            print("| workload | goblin | redis | goblin/redis |")
            print("|---|---:|---:|---:|")
            for workload, g, r, ratio in rows:
                print(f"| {workload} | {g} | {r} | {ratio:.2f}x |")
        else:
            for workload, g, r, ratio in rows:
                print(f"{workload:18} goblin {g:>20}  redis {r:>20}  ratio {ratio:.2f}")
    finally:
        for proc, _, _ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
