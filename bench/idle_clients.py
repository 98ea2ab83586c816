#!/usr/bin/env python3
"""What a connected client that has sent one request and then waits costs each server:
goblin-server against redis-server, the same run.

--clients connections each send PING, read the reply and stay open; after --settle seconds
(both servers give idle buffers back from a once-a-second pass, and jemalloc returns freed pages
to the system about ten seconds later) the servers' used_memory and RSS are read again. The
deltas per client are printed as a Markdown table.

    bench/idle_clients.py --server build/goblin-server [--redis /usr/bin/redis-server]
                          [--clients 3000] [--settle 12]
"""

import argparse
import datetime
import resource
import shutil
import socket
import subprocess
import tempfile
import time

from many_clients import start


def info_memory(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "memory"], capture_output=True,
                         text=True, check=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return int(fields["used_memory"]), int(fields["used_memory_rss"])


def measure(binary, port, clients, settle):
    work = tempfile.mkdtemp(prefix="idle-clients-")
    proc = start(binary, port, work)  # maxclients 20,000
    socks = []
    try:
        used_before, rss_before = info_memory(port)
        for _ in range(clients):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"PING\r\n")
            assert sock.recv(16) == b"+PONG\r\n"
            socks.append(sock)
        time.sleep(settle)  # the servers' once-a-second passes over their clients
        used_after, rss_after = info_memory(port)
        return (used_after - used_before) / clients, (rss_after - rss_before) / clients
    finally:
        for sock in socks:
            sock.close()
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--clients", type=int, default=3000)
    parser.add_argument("--settle", type=float, default=12.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 2 * args.clients + 1000), hard))
    goblin = measure(args.server, 7461, args.clients, args.settle)
    redis = measure(args.redis, 7462, args.clients, args.settle)
    print(f"{args.clients} clients, one PING each, then idle "
          f"({datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC)\n")
    print("| bytes per idle client | goblin | redis | goblin/redis |")
    print("|---|---:|---:|---:|")
    for name, g, r in (("used_memory", goblin[0], redis[0]), ("RSS", goblin[1], redis[1])):
        print(f"| {name} | {g:,.0f} | {r:,.0f} | {g / r:.2f} |")


if __name__ == "__main__":
    main()
