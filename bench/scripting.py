#!/usr/bin/env python3
"""Scripting, goblin-server against redis-server, the same run, as ratios.

Throughput (redis-benchmark, -c 1 -P 16, server and client pinned to one CPU, Unix socket,
persistence off), each script loaded with SCRIPT LOAD and called with EVALSHA over random keys:
  incr         return redis.call('INCR', KEYS[1])
  ratelimit    INCR, PEXPIRE on the first hit, PTTL: a fixed-window rate limiter
  leaderboard  ZADD of a random score, then ZREMRANGEBYRANK keeping the top 100 of one board
Load time (a Python client on its own CPU, the median of ROUNDS timed batches):
  script-load    SCRIPT LOAD of a 10 KB script, a different one each time (no cache hit)
  function-load  FUNCTION LOAD REPLACE of a library registering 10 functions

Memory: SCRIPT LOAD of 10,000 distinct rate-limiter scripts (about 150 bytes each); bytes per
script from INFO memory (used_memory_vm_eval + used_memory_scripts_eval), against an empty cache.

Runs alternate A B, B A, ... per workload; medians per server and goblin/redis are reported.

    bench/scripting.py --server build/goblin-server [--redis /usr/bin/redis-server]
                       [--rounds 4] [--requests 1000000] [--cpu 1] [--markdown]
"""

import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time

from pinned_server import info_memory, redis_benchmark, start

SCRIPTS = {
    "incr": "return redis.call('INCR', KEYS[1])",
    "ratelimit": ("local n = redis.call('INCR', KEYS[1]) "
                  "if n == 1 then redis.call('PEXPIRE', KEYS[1], 60000) end "
                  "return {n, redis.call('PTTL', KEYS[1])}"),
    "leaderboard": ("redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2]) "
                    "return redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -101)"),
}
CALLS = {
    "incr": ["1", "counter:__rand_int__"],
    "ratelimit": ["1", "rate:__rand_int__"],
    "leaderboard": ["1", "board", "__rand_int__", "player:__rand_int__"],
}


def ten_kb_script(i):
    body = [f"-- variant {i}"]
    n = 0
    while sum(len(x) + 1 for x in body) < 10 * 1024:
        body.append(f"local v{n} = redis.call('GET', KEYS[1]) or '{n}' if #v{n} > {n} then v{n} = v{n}:sub(1, 1) end")
        n += 1
    body.append("return 1")
    return "\n".join(body)


def ten_function_library():
    lines = ["#!lua name=benchlib"]
    for i in range(10):
        lines.append(f"redis.register_function('f{i}', function(keys, args) "
                     f"local n = redis.call('INCRBY', keys[1], {i}) return n + #args end)")
    return "\n".join(lines)


def time_loads(conn, kind, count, offset):
    start = time.perf_counter()
    if kind == "script-load":
        for i in range(count):
            conn.send("SCRIPT", "LOAD", ten_kb_script(offset + i))
        replies = [conn.reply() for _ in range(count)]
    else:
        code = ten_function_library()
        for _ in range(count):
            conn.send("FUNCTION", "LOAD", "REPLACE", code)
        replies = [conn.reply() for _ in range(count)]
    elapsed = time.perf_counter() - start
    bad = [r for r in replies if r.startswith(b"-")]
    if bad:
        raise RuntimeError(f"{kind}: {bad[0]!r}")
    return count / elapsed


def cache_bytes_per_script(conn, count=10000):
    conn.call("SCRIPT", "FLUSH")
    before = info_memory(conn)
    for i in range(count):
        conn.send("SCRIPT", "LOAD", SCRIPTS["ratelimit"] + f" -- {i}")
    for _ in range(count):
        conn.reply()
    after = info_memory(conn)
    fields = ("used_memory_vm_eval", "used_memory_scripts_eval")
    return sum(after[f] - before[f] for f in fields) / count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=1000000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="goblin-scripting-")
    servers = {}
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            servers[name] = start(binary, args.cpu, os.path.join(work, name))
        shas = {}
        for name, (_, _, conn) in servers.items():
            for workload, body in SCRIPTS.items():
                shas[workload] = conn.call("SCRIPT", "LOAD", body).decode()
        results = {}
        order = ["goblin", "redis"]
        for workload in list(SCRIPTS) + ["script-load", "function-load"]:
            for round_index in range(args.rounds):
                for name in order if round_index % 2 == 0 else order[::-1]:
                    proc, sock, conn = servers[name]
                    if workload in SCRIPTS:
                        rate = redis_benchmark(sock, args.cpu, ["EVALSHA", shas[workload], *CALLS[workload]],
                                              args.requests)
                    else:
                        os.sched_setaffinity(0, {args.client_cpu})
                        count = 200 if workload == "script-load" else 2000
                        rate = time_loads(conn, workload, count, round_index * 1000)
                    results.setdefault((workload, name), []).append(rate)
                    print(f"{workload} {name} round {round_index}: {rate:,.0f}/s", file=sys.stderr)
        memory = {name: cache_bytes_per_script(conn) for name, (_, _, conn) in servers.items()}
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        unit = {"script-load": "loads/s", "function-load": "loads/s"}
        if args.markdown:
            print(f"`bench/scripting.py --server {args.server} --rounds {args.rounds}` ({stamp})\n")
            print("| workload | goblin | redis | goblin/redis |")
            print("|---|---:|---:|---:|")
        for workload in list(SCRIPTS) + ["script-load", "function-load"]:
            g = statistics.median(results[(workload, "goblin")])
            r = statistics.median(results[(workload, "redis")])
            what = unit.get(workload, "calls/s")
            if args.markdown:
                print(f"| {workload} | {g:,.0f} {what} | {r:,.0f} {what} | {g / r:.2f}x |")
            else:
                print(f"{workload:14} goblin {g:12,.0f}  redis {r:12,.0f}  {what}  ratio {g / r:.2f}")
        g, r = memory["goblin"], memory["redis"]
        if args.markdown:
            print(f"| cached script | {g:,.0f} B | {r:,.0f} B | {g / r:.2f}x |")
        else:
            print(f"{'cached script':14} goblin {g:12,.0f}  redis {r:12,.0f}  bytes  ratio {g / r:.2f}")
    finally:
        for proc, _, _ in servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
