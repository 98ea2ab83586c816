#!/usr/bin/env python3
"""LINDEX and LSET at random positions of one long list, goblin-server against redis-server.

Each server is started fresh (Unix socket, persistence off, pinned with taskset), a list of N
16-byte values is loaded with pipelined RPUSH, then K LINDEX and K LSET at seeded random positions
run pipelined. The speed compared is the server's own: INFO commandstats' usec_per_call, so the
Python client's pace does not cap the ratio (Redis walks its quicklist's nodes to a position,
Goblin finds the node through its index). Wall-clock rates are printed beside it.

    bench/list_positional.py --server build/goblin-server [--redis /usr/bin/redis-server]
                             [--n 10000000] [--k 20000] [--cpu 1] [--markdown]
"""

import argparse
import datetime
import random
import shutil
import tempfile
import time

from pinned_server import start


def commandstats(conn, name):
    text = conn.pipeline([[b"INFO", b"commandstats"]])[0]
    for line in text.decode().splitlines():
        if line.startswith("cmdstat_%s:" % name):
            fields = dict(part.split("=") for part in line.split(":", 1)[1].split(","))
            return float(fields["usec_per_call"])
    raise RuntimeError("no commandstats for " + name)


def measure(binary, n, k, cpu, seed):
    workdir = tempfile.mkdtemp(prefix="goblin-positional.")
    proc, _, conn = start(binary, cpu, workdir)
    try:
        rng = random.Random(seed)
        batch = 1000
        for start_at in range(0, n, batch):
            count = min(batch, n - start_at)
            conn.pipeline([[b"RPUSH", b"big"] + [b"%016x" % rng.getrandbits(64) for _ in range(count)]])
        assert conn.pipeline([[b"LLEN", b"big"]])[0] == b":%d" % n
        result = {}
        for name in ("lindex", "lset"):
            commands = []
            for _ in range(k):
                index = b"%d" % rng.randrange(n)
                commands.append([b"LINDEX", b"big", index] if name == "lindex" else
                                [b"LSET", b"big", index, b"%016x" % rng.getrandbits(64)])
            conn.pipeline([[b"CONFIG", b"RESETSTAT"]])
            t0 = time.time()
            for at in range(0, k, 16):
                conn.pipeline(commands[at:at + 16])
            wall = time.time() - t0
            result[name] = (commandstats(conn, name), k / wall)
        return result
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--k", type=int, default=20_000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    results = {}
    for label, binary in (("redis", args.redis), ("goblin", args.server)):
        results[label] = measure(binary, args.n, args.k, args.cpu, seed=11)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("Positional access on one %d-element list (`bench/list_positional.py --server %s --n %d --k %d`, %s): "
          "server time per call from INFO commandstats, and the pipelined wall-clock rate." %
          (args.n, args.server, args.n, args.k, stamp))
    print()
    print("| command | redis µs/call | goblin µs/call | server speed ratio | redis ops/s (wall) | goblin ops/s (wall) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in ("lindex", "lset"):
        r_us, r_wall = results["redis"][name]
        g_us, g_wall = results["goblin"][name]
        print("| %s | %.2f | %.2f | %.0fx | %.0f | %.0f |" % (name.upper(), r_us, g_us, r_us / max(g_us, 0.01),
                                                            r_wall, g_wall))


if __name__ == "__main__":
    main()
