#!/usr/bin/env python3
"""Hostile scripts too large for make test, against goblin-server and redis-server side by side.

Each probe is one EVAL; the table says what each server answered (its reply, cut, or "crashed"
when the connection died and the process with it) and how long it took:
  hash-flood     100,000 strings of 1,000 bytes that differ only past Lua 5.1's 32 sampled
                 characters, interned into one table (a stock Lua puts them all in one bucket)
  long-bracket   a chunk whose long string is delimited by 2^30 '=' on each side
                 (CVE-2025-46819: 2 * (2 + sep) overflowed an int)
  many-lines     a chunk of 2^31 newlines ("chunk has too many lines", before any token)
  cjson-2gb      cjson.encode of a 358 MB string whose escaped worst case passes 2^31
                 (CVE-2022-24834)
  string-rep     string.rep('x', 2^31): goblin's lua-memory-limit refuses it

The large probes need about 8 GB of memory per server and run one server at a time; both
servers run with persistence off on a Unix socket, pinned to one CPU. A server that crashed is
restarted for the next probe.

    bench/hostile_scripts.py --server build/goblin-server [--redis /usr/bin/redis-server]
                             [--cpu 1] [--only hash-flood,cjson-2gb] [--markdown]
"""

import argparse
import datetime
import shutil
import tempfile
import time

from pinned_server import start

PROBES = {
    "hash-flood": (
        "local base = string.rep('x', 990) local t = {} "
        "for i = 1, 100000 do t[base .. string.format('%010d', i)] = true end "
        "local n = 0 for _ in pairs(t) do n = n + 1 end return n"),
    "long-bracket": (
        "local s = string.rep('=', 1024 * 1024) local t = {} for i = 1, 1024 do t[i] = s end "
        "local sep = table.concat(t) "
        "return #loadstring(table.concat({'return [', sep, '[x]', sep, ']'}))()"),
    "many-lines": (
        "local s = string.rep('\\n', 1024 * 1024) local t = {} for i = 1, 2048 do t[i] = s end "
        "local f, e = loadstring(table.concat(t)) return e"),
    "cjson-2gb": "return #cjson.encode(string.rep('a', (0x80000000 - 2) / 6))",
    "string-rep": "return #string.rep('x', 2^31)",
}


def run_probe(binary, cpu, body, *extra_args):
    work = tempfile.mkdtemp(prefix="gob-hostile-")
    proc, _, conn = start(binary, cpu, work, *extra_args)
    try:
        began = time.monotonic()
        try:
            answer = conn.call("EVAL", body, "0")
            answer = answer.decode(errors="replace")[:70] if answer is not None else "(nil)"
        except (ConnectionError, OSError):
            answer = "crashed"
        elapsed = time.monotonic() - began
        if answer != "crashed" and proc.poll() is not None:
            answer = "crashed"
        return answer, elapsed
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated probe names")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(PROBES)
    servers = {"goblin": args.server, "redis": args.redis}
    print(f"{datetime.date.today()}  {' '.join(f'{k}={v}' for k, v in servers.items())}\n")
    if args.markdown:
        print("| probe | goblin | s | redis | s |")
        print("|---|---|---:|---|---:|")
    for name in names:
        row = {}
        for server, binary in servers.items():
            # The probes test the interpreter, not goblin's memory limit: it is lifted for them.
            limit = ["--lua-memory-limit", "0"] if server == "goblin" and name != "string-rep" else []
            row[server] = run_probe(binary, args.cpu, PROBES[name], *limit)
        (ga, gt), (ra, rt) = row["goblin"], row["redis"]
        if args.markdown:
            print(f"| {name} | `{ga}` | {gt:.2f} | `{ra}` | {rt:.2f} |")
        else:
            print(f"{name:13} goblin {gt:7.2f}s {ga}\n{'':13} redis  {rt:7.2f}s {ra}")


if __name__ == "__main__":
    main()
