#!/usr/bin/env python3
"""What a field deadline costs: bytes per field of a hash of N fields (16-byte field names and
values) before and after every field gets its own HPEXPIREAT in the year 2100, the method of
Redis 7.4.1's figures in tests/fixtures/redis-7.4 (its README: one key, HSET per field
pipelined 1,000 at a time, then HPEXPIREAT per field the same way; used_memory deltas).
Then how much of the server's time active expiry takes while those deadlines are distant:
CPU seconds of the server process over --idle seconds.

    bench/hash_field_expiry.py --server build/goblin-server [--fields 1000000] [--idle 10]

Redis 7.4.1's figures for the same load (no server of that version here): 80.44 B per field
without deadlines, 101.61 with them.
"""

import argparse
import datetime
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.buf = b""

    def pipeline(self, commands):
        self.sock.sendall(b"".join(commands))
        lines = 0
        while lines < len(commands):
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed")
            self.buf += data
            # Every reply of these commands is one line, or an array of one line after its header.
            while b"\r\n" in self.buf:
                line, self.buf = self.buf.split(b"\r\n", 1)
                if line.startswith(b"-"):
                    raise RuntimeError(line.decode())
                if not line.startswith(b"*"):
                    lines += 1

    def info_memory(self):
        self.sock.sendall(command("INFO", "memory"))
        while b"\r\n" not in self.buf:
            self.buf += self.sock.recv(1 << 16)
        header, self.buf = self.buf.split(b"\r\n", 1)
        size = int(header[1:])
        while len(self.buf) < size + 2:
            self.buf += self.sock.recv(1 << 16)
        text, self.buf = self.buf[:size].decode(), self.buf[size + 2:]
        return int(text.split("used_memory:")[1].split("\r\n")[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--fields", type=int, default=1_000_000)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gob-hfe-bench-")
    path = os.path.join(work, "s.sock")
    proc = subprocess.Popen([args.server, "--port", "0", "--unixsocket", path, "--save", "",
                             "--appendonly", "no", "--dir", work],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        monitor = Conn(path)
        rng = random.Random(7)
        letters = b"abcdefghijklmnop"
        fields = [bytes(rng.choice(letters) for _ in range(16)) for _ in range(args.fields)]
        before = monitor.info_memory()
        loader = Conn(path)
        for i in range(0, len(fields), 1000):
            loader.pipeline([command("HSET", "mem:h", f, f[::-1]) for f in fields[i:i + 1000]])
        plain = monitor.info_memory()
        base = 4102444800000
        for i in range(0, len(fields), 1000):
            loader.pipeline([command("HPEXPIREAT", "mem:h", base + rng.randrange(31536000000), "FIELDS", 1, f)
                             for f in fields[i:i + 1000]])
        timed = monitor.info_memory()
        ticks = os.sysconf("SC_CLK_TCK")

        def cpu_seconds():
            with open(f"/proc/{proc.pid}/stat") as f:
                parts = f.read().rsplit(")", 1)[1].split()
            return (int(parts[11]) + int(parts[12])) / ticks

        start = cpu_seconds()
        time.sleep(args.idle)  # the measurement: the server alone with its distant deadlines
        busy = cpu_seconds() - start
        n = len(set(fields))
        print(f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {n:,} distinct fields")
        print(f"| bytes per field | without deadlines | with deadlines | per deadline |")
        print(f"|---|---:|---:|---:|")
        print(f"| goblin | {(plain - before) / n:.2f} | {(timed - before) / n:.2f} | {(timed - plain) / n:.2f} |")
        print(f"| Redis 7.4.1 (reference) | 80.44 | 101.61 | 21.17 |")
        print(f"server CPU while idle with {n:,} distant deadlines: {busy:.3f} s over {args.idle:.0f} s "
              f"({100 * busy / args.idle:.2f}%)")
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
