#!/usr/bin/env python3
"""How fast a fresh client's PING is answered while the server carries many and misbehaving
clients, goblin-server against redis-server, the same run.

Load, built up before the PINGs and kept while they run:
  idle     --idle connections that never send anything (default 10,000)
  slow     --slow clients, each pipelining 64 GETs of a 1 MB value and never reading
           (client-output-buffer-limit normal 8mb 4mb 10, so each is closed at the limit)
  flood    one client sending a pipeline of INCRs without pause, reading its replies
Then --pings PINGs, one at a time, on a fresh connection: p50, p99 and the maximum, in ms.
Server and load run unpinned (the load is the point); loopback only, bounded in count.

    bench/many_clients.py --server build/goblin-server [--redis /usr/bin/redis-server]
                          [--idle 10000] [--slow 20] [--pings 2000]
"""

import argparse
import datetime
import os
import resource
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def start(binary, port, work):
    proc = subprocess.Popen([binary, "--port", str(port), "--save", "", "--appendonly", "no",
                             "--dir", work, "--maxclients", "20000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(command("PING"))
                if s.recv(16) == b"+PONG\r\n":
                    return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(binary + " did not start")


def measure(binary, port, idle, slow, pings):
    work = tempfile.mkdtemp(prefix="gob-many-")
    proc = start(binary, port, work)
    sockets, stop = [], threading.Event()
    try:
        admin = socket.create_connection(("127.0.0.1", port))
        for cmd in (command("CONFIG", "SET", "client-output-buffer-limit", "normal 8mb 4mb 10"),
                    command("SET", "big", b"x" * (1 << 20))):
            admin.sendall(cmd)
            admin.recv(64)
        for _ in range(idle):
            sockets.append(socket.create_connection(("127.0.0.1", port)))
        for _ in range(slow):
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(command("GET", "big") * 64)
            sockets.append(s)

        def flood():
            s = socket.create_connection(("127.0.0.1", port))
            batch = command("INCR", "flood") * 1000
            while not stop.is_set():
                s.sendall(batch)
                need = 1000
                while need > 0:
                    need -= s.recv(1 << 16).count(b"\r\n")
            s.close()
        flooder = threading.Thread(target=flood)
        flooder.start()
        probe = socket.create_connection(("127.0.0.1", port))
        times = []
        for _ in range(pings):
            t0 = time.perf_counter()
            probe.sendall(b"*1\r\n$4\r\nPING\r\n")
            probe.recv(16)
            times.append((time.perf_counter() - t0) * 1000)
        stop.set()
        flooder.join()
        times.sort()
        return statistics.median(times), times[int(len(times) * 0.99)], times[-1]
    finally:
        for s in sockets:
            s.close()
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--idle", type=int, default=10000)
    parser.add_argument("--slow", type=int, default=20)
    parser.add_argument("--pings", type=int, default=2000)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.idle + args.slow + 1000), hard))
    print(f"{datetime.date.today()}  idle={args.idle} slow={args.slow} pings={args.pings}")
    print("| server | PING p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|")
    for name, binary, port in (("goblin", args.server, 17100), ("redis", args.redis, 17101),
                               ("redis", args.redis, 17101), ("goblin", args.server, 17100)):
        p50, p99, worst = measure(os.path.abspath(binary), port, args.idle, args.slow, args.pings)
        print(f"| {name} | {p50:.2f} | {p99:.2f} | {worst:.1f} |")


if __name__ == "__main__":
    main()
