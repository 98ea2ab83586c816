#!/usr/bin/env python3
"""A capped stream's memory over time: XADD bench:capped MAXLEN ~ 1000 * f <16 bytes>, run by
redis-benchmark (-c 1 -P 16) in CHUNKS chunks of REQUESTS each, on goblin-server and on
redis-server (pinned to one CPU, Unix socket, persistence off). After every chunk the stream's
length and INFO used_memory are printed; a trim that works keeps both flat.

    bench/stream_trim.py --server build/goblin-server [--redis /usr/bin/redis-server]
                         [--chunks 5] [--requests 1000000] [--cpu 1] [--markdown]
"""

import argparse
import datetime
import os
import shutil
import tempfile

from pinned_server import info_memory, redis_benchmark, start

KEY = "bench:capped"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--requests", type=int, default=1000000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="goblin-stream-trim-")
    rows = {}
    try:
        for name, binary in (("goblin", args.server), ("redis", args.redis)):
            os.makedirs(os.path.join(work, name))
            proc, sock, conn = start(binary, args.cpu, os.path.join(work, name))
            try:
                base = info_memory(conn)["used_memory"]
                for chunk in range(1, args.chunks + 1):
                    redis_benchmark(sock, args.cpu, ["XADD", KEY, "MAXLEN", "~", "1000", "*", "f", "v" * 16],
                                    args.requests)
                    length = int(conn.call("XLEN", KEY)[1:])
                    rows.setdefault(chunk, {})[name] = (length, info_memory(conn)["used_memory"] - base)
            finally:
                proc.kill()
                proc.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if args.markdown:
        print(f"`bench/stream_trim.py --server {args.server} --chunks {args.chunks} --requests {args.requests}` "
              f"({stamp}, CPU {args.cpu})\n")
        print("| XADDs | goblin XLEN | goblin used bytes | redis XLEN | redis used bytes |")
        print("|---:|---:|---:|---:|---:|")
    for chunk, by in sorted(rows.items()):
        (gl, gm), (rl, rm) = by["goblin"], by["redis"]
        if args.markdown:
            print(f"| {chunk * args.requests:,} | {gl:,} | {gm:,} | {rl:,} | {rm:,} |")
        else:
            print(f"{chunk * args.requests:>12,} XADDs: goblin len {gl:,} used +{gm:,} B; "
                  f"redis len {rl:,} used +{rm:,} B")


if __name__ == "__main__":
    main()
