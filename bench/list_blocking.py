#!/usr/bin/env python3
"""Blocked consumers, goblin-server against redis-server: C clients wait in BRPOP on K keys
(client i on key i % K), one producer LPUSHes M elements round-robin over the keys, each
consumer re-issues its BRPOP after every element. Checked: every element is delivered exactly
once, and each consumer sees a key's elements in the order they were pushed (FIFO). Reported:
elements per second from the first push to the last delivery.

Server pinned to one CPU (taskset), the client to another, Unix socket, persistence off.

    bench/list_blocking.py --server build/goblin-server [--redis /usr/bin/redis-server]
                           [--clients 1000] [--keys 100] [--elements 1000000]
                           [--server-cpu 1] [--client-cpu 0]
"""

import argparse
import datetime
import os
import selectors
import shutil
import socket
import tempfile
import time

from pinned_server import start


def brpop(key):
    return b"*3\r\n$5\r\nBRPOP\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(key), key)


def parse_replies(buf):
    """Complete BRPOP replies (*2 $key $value) at the start of buf: (list of values, rest)."""
    out = []
    while True:
        if not buf.startswith(b"*2\r\n"):
            if buf and not buf.startswith(b"*"):
                raise RuntimeError("unexpected reply: %r" % buf[:80])
            return out, buf
        pos = 4
        parts = []
        for _ in range(2):
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return out, buf
            n = int(buf[pos + 1:end])
            if len(buf) < end + 2 + n + 2:
                return out, buf
            parts.append(buf[end + 2:end + 2 + n])
            pos = end + 2 + n + 2
        out.append(parts[1])
        buf = buf[pos:]


def measure(binary, clients, keys, elements, server_cpu):
    workdir = tempfile.mkdtemp(prefix="goblin-blocking.")
    proc, path, _ = start(binary, server_cpu, workdir, "--maxclients", "10000")
    try:
        key_names = [b"q:%d" % k for k in range(keys)]
        sel = selectors.DefaultSelector()
        consumers = []
        for i in range(clients):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.setblocking(False)
            key = key_names[i % keys]
            state = {"sock": s, "key": key, "buf": b"", "last": {}}
            consumers.append(state)
            sel.register(s, selectors.EVENT_READ, state)
            s.sendall(brpop(key))
        control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        control.connect(path)
        # Wait until every consumer is blocked (INFO clients).
        while True:
            control.sendall(b"INFO clients\r\n")
            info = control.recv(1 << 16).decode(errors="replace")
            blocked = [line for line in info.splitlines() if line.startswith("blocked_clients:")]
            if blocked and int(blocked[0].split(":")[1]) == clients:
                break
            time.sleep(0.01)
        producer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        producer.connect(path)
        producer.setblocking(False)
        pushed = 0
        delivered = 0
        seen = set()
        order_errors = 0
        batch = 200
        out = b""
        t0 = time.time()
        while delivered < elements:
            if pushed < elements and len(out) < (1 << 16):
                for _ in range(min(batch, elements - pushed)):
                    key = key_names[pushed % keys]
                    value = b"%d" % pushed
                    out += b"*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value)
                    pushed += 1
            if out:
                try:
                    sent = producer.send(out)
                    out = out[sent:]
                except BlockingIOError:
                    pass
            try:
                producer.recv(1 << 20)  # LPUSH replies, discarded
            except BlockingIOError:
                pass
            for event, _ in sel.select(timeout=0.001):
                state = event.data
                data = state["sock"].recv(1 << 16)
                if not data:
                    raise RuntimeError("consumer connection closed")
                values, state["buf"] = parse_replies(state["buf"] + data)
                for value in values:
                    n = int(value)
                    if n in seen:
                        raise RuntimeError("element %d delivered twice" % n)
                    seen.add(n)
                    if n <= state["last"].get(state["key"], -1):
                        order_errors += 1
                    state["last"][state["key"]] = n
                    delivered += 1
                    state["sock"].send(brpop(state["key"]))
        elapsed = time.time() - t0
        for state in consumers:
            state["sock"].close()
        return {"rate": elements / elapsed, "elapsed": elapsed, "exactly_once": len(seen) == elements,
                "order_errors": order_errors}
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--client-cpu", type=int, default=0)
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.client_cpu})
    results = {}
    # A B B A: whichever runs first in a pair is not favoured.
    for label, binary in (("goblin", args.server), ("redis", args.redis), ("redis", args.redis),
                          ("goblin", args.server)):
        results.setdefault(label, []).append(measure(binary, args.clients, args.keys, args.elements,
                                                     args.server_cpu))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("Blocked consumers (`bench/list_blocking.py --server %s --clients %d --keys %d --elements %d`, %s):"
          % (args.server, args.clients, args.keys, args.elements, stamp))
    print()
    print("| server | elements/s (runs) | exactly once | FIFO violations |")
    print("|---|---|---|---:|")
    for label in ("goblin", "redis"):
        runs = results[label]
        print("| %s | %s | %s | %d |" % (label, " / ".join("%.0f" % r["rate"] for r in runs),
                                         all(r["exactly_once"] for r in runs), sum(r["order_errors"] for r in runs)))
    g = sum(r["rate"] for r in results["goblin"]) / 2
    r = sum(r["rate"] for r in results["redis"]) / 2
    print()
    print("ratio goblin/redis (mean of the two runs each): %.2f" % (g / r))


if __name__ == "__main__":
    main()
