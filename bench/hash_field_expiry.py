#!/usr/bin/env python3
"""What a field deadline costs: bytes per field of a hash of N fields (16-byte field names and
values) before and after every field gets its own HPEXPIREAT in the year 2100, the method of
Redis 7.4.1's figures in tests/fixtures/redis-7.4 (its README: one key, HSET per field
pipelined 1,000 at a time, then HPEXPIREAT per field the same way; used_memory deltas).
Then how much of the server's time active expiry takes while those deadlines are distant:
CPU seconds of the server process over --idle seconds.

    bench/hash_field_expiry.py --server build/goblin-server [--fields 1000000] [--idle 10] [--cpu 1]

Redis 7.4.1's figures for the same load (no server of that version here): 80.44 B per field
without deadlines, 101.61 with them.
"""

import argparse
import datetime
import os
import random
import shutil
import tempfile
import time

from pinned_server import Conn, info_memory, start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--fields", type=int, default=1_000_000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--cpu", type=int, default=1)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gob-hfe-bench-")
    proc, sock, monitor = start(args.server, args.cpu, work)
    try:
        rng = random.Random(7)
        letters = b"abcdefghijklmnop"
        fields = [bytes(rng.choice(letters) for _ in range(16)) for _ in range(args.fields)]
        before = info_memory(monitor)["used_memory"]
        loader = Conn(sock)
        for i in range(0, len(fields), 1000):
            loader.pipeline([(b"HSET", b"mem:h", f, f[::-1]) for f in fields[i:i + 1000]])
        plain = info_memory(monitor)["used_memory"]
        base = 4102444800000
        for i in range(0, len(fields), 1000):
            batch = [(b"HPEXPIREAT", b"mem:h", str(base + rng.randrange(31536000000)).encode(),
                      b"FIELDS", b"1", f) for f in fields[i:i + 1000]]
            loader.pipeline(batch)  # each reply's array header
            for _ in batch:
                loader.reply(raise_errors=True)  # and its one code
        timed = info_memory(monitor)["used_memory"]
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu_seconds():
            with open(f"/proc/{proc.pid}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            return (int(parts[11]) + int(parts[12])) / ticks

        started = cpu_seconds()
        time.sleep(args.idle)  # the measurement: the server alone with its distant deadlines
        busy = cpu_seconds() - started
        n = len(set(fields))
        print(f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {n:,} distinct fields")
        print("| bytes per field | without deadlines | with deadlines | per deadline |")
        print("|---|---:|---:|---:|")
        print(f"| goblin | {(plain - before) / n:.2f} | {(timed - before) / n:.2f} | {(timed - plain) / n:.2f} |")
        print("| Redis 7.4.1 (reference) | 80.44 | 101.61 | 21.17 |")
        print(f"server CPU while idle with {n:,} distant deadlines: {busy:.3f} s over {args.idle:.0f} s "
              f"({100 * busy / args.idle:.2f}%)")
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
