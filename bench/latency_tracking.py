#!/usr/bin/env python3
"""What per-command latency tracking (latency-tracking yes, the default) costs on the dispatch
path: the same goblin-server with the option on and off in one run, as ratios. Redis itself
records each call into an hdr_histogram the same way, so there is no redis-server column.

Both servers (pinned to CPU --cpu, Unix sockets, persistence off) get --keys string keys
`key:%012d` (redis-benchmark's __rand_int__ names), then per round, alternating A B, B A,
redis-benchmark -c 1 -P 16 runs SET and GET of `key:__rand_int__`. Reported per command: the
median requests/s, and the median CPU time the server process spent per request (user + system
from /proc/<pid>/stat around each run), which other load on the machine disturbs less than the
rate.

    bench/latency_tracking.py --server build/goblin-server [--baseline OTHER_BINARY]
                              [--rounds 6] [--keys 1000000] [--requests 2000000] [--cpu 1]
                              [--callgrind 100000] [--markdown]

--baseline compares against another binary (run without options, e.g. a build from before the
histograms) instead of --server with --latency-tracking no.

--callgrind N counts instead: each variant runs under valgrind's callgrind, and the
instructions of Server::Dispatch itself (where the recording is inlined; not its callees) are
counted over N requests of SET over 1000 keys (nearly all overwrites) and, on another server
started empty, N of GET (misses). Instruction counts do not depend on the machine's other load,
so they show a difference of a few instructions per request that the rates cannot.
"""

import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pinned_server import Conn, redis_benchmark, start

BATCH = 1000
TICKS = os.sysconf("SC_CLK_TCK")


def load(conn, keys):
    for first in range(0, keys, BATCH):
        args = [b"MSET"]
        for i in range(first, min(keys, first + BATCH)):
            args += [b"key:%012d" % i, b"v" * 16]
        conn.pipeline([args])


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def dispatch_instructions(binary, extra, command, requests, cpu, workdir):
    """Instructions executed inside Server::Dispatch per request of command, under callgrind."""
    sock = os.path.join(workdir, "s.sock")
    out = os.path.join(workdir, "callgrind.out")
    proc = subprocess.Popen(["taskset", "-c", str(cpu), "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                             "--toggle-collect=*Server::Dispatch*", binary, "--port", "0", "--unixsocket", sock,
                             "--save", "", "--appendonly", "no", "--dir", workdir,
                             # A call slowed past 10 ms by valgrind would add a slow log entry.
                             "--slowlog-log-slower-than", "-1", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            conn = Conn(sock)
            if conn.call("PING") == b"+PONG":
                break
        except OSError:
            if time.time() > deadline:
                proc.kill()
                raise RuntimeError(binary + " did not start under valgrind")
            time.sleep(0.1)
    redis_benchmark(sock, cpu, command, requests, keyspace=1000)
    conn.send("SHUTDOWN", "NOSAVE")
    proc.wait(timeout=120)
    # Dispatch's own instructions: the recording is inlined there, while the callees' counts move
    # with the keys redis-benchmark happened to draw (hash collisions, table growth).
    report = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True, check=True).stdout
    own = re.search(r"^\s*([\d,]+) .*goblin::Server::Dispatch\(", report, re.M)
    return int(own.group(1).replace(",", "")) / requests


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--baseline")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--keys", type=int, default=1000000)
    parser.add_argument("--requests", type=int, default=2000000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--callgrind", type=int, metavar="N")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    out = sys.stderr if args.markdown else sys.stdout
    print("# " + " ".join(sys.argv), file=out)
    print(f"# {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, cpu {args.cpu}, rounds {args.rounds}, "
          f"keys {args.keys}, -n {args.requests}", file=out)

    variants = {"tracking": (args.server, []),
                "baseline": (args.baseline, []) if args.baseline else (args.server, ["--latency-tracking", "no"])}
    commands = {"SET": ["SET", "key:__rand_int__", "v" * 16], "GET": ["GET", "key:__rand_int__"]}
    if args.callgrind:
        lines = [f"instructions per request in Server::Dispatch itself (callgrind, -c 1 -P 16, {args.callgrind} "
                 "requests)",
                 "| command | tracking | baseline | difference |", "|---|---|---|---|"]
        for command, words in commands.items():
            counts = {}
            for name, (binary, extra) in variants.items():
                workdir = tempfile.mkdtemp(prefix=f"goblin-latency-{name}-")
                try:
                    counts[name] = dispatch_instructions(binary, extra, words, args.callgrind, args.cpu, workdir)
                finally:
                    shutil.rmtree(workdir, ignore_errors=True)
            lines.append(f"| {command} | {counts['tracking']:.1f} | {counts['baseline']:.1f} | "
                         f"{counts['tracking'] - counts['baseline']:+.1f} |")
        print("\n".join(lines))
        return
    servers = {}
    dirs = []
    try:
        for name, (binary, extra) in variants.items():
            workdir = tempfile.mkdtemp(prefix=f"goblin-latency-{name}-")
            dirs.append(workdir)
            proc, sock, conn = start(binary, args.cpu, workdir, *extra)
            servers[name] = (proc, sock)
            load(conn, args.keys)
            print(f"# {name}: {binary} {' '.join(extra)}".rstrip(), file=out)
        rate = {(n, c): [] for n in variants for c in commands}
        cost = {(n, c): [] for n in variants for c in commands}
        for r in range(args.rounds):
            order = list(variants) if r % 2 == 0 else list(reversed(list(variants)))
            for command, words in commands.items():
                for name in order:
                    proc, sock = servers[name]
                    before = cpu_seconds(proc.pid)
                    rate[name, command].append(redis_benchmark(sock, args.cpu, words, args.requests, args.keys))
                    cost[name, command].append((cpu_seconds(proc.pid) - before) * 1e9 / args.requests)
        for key in rate:
            print(f"# {key[0]} {key[1]}: req/s {[round(x) for x in rate[key]]} "
                  f"ns/request {[round(x) for x in cost[key]]}", file=out)
        lines = [f"-c 1 -P 16, median of {args.rounds} runs",
                 "| command | tracking req/s | baseline req/s | ratio | tracking ns/req (server CPU) | "
                 "baseline ns/req | ratio |", "|---|---|---|---|---|---|---|"]
        for command in commands:
            tr, br = (statistics.median(rate[n, command]) for n in ("tracking", "baseline"))
            tc, bc = (statistics.median(cost[n, command]) for n in ("tracking", "baseline"))
            lines.append(f"| {command} | {tr:.0f} | {br:.0f} | {tr / br:.3f} | {tc:.0f} | {bc:.0f} | {tc / bc:.3f} |")
        print("\n".join(lines))
    finally:
        for proc, _ in servers.values():
            proc.kill()
            proc.wait()
        for workdir in dirs:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
