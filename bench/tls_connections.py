#!/usr/bin/env python3
"""What a TLS connection costs, goblin-server against redis-server in the same run.

  resident  --clients TLS clients (mutual TLS, TLS 1.3) connect, each PINGs once and stays
            idle; the server's resident size (VmRSS) before and after, per client.
  handshakes redis-benchmark --tls -k 0 (a new connection, handshake included, for every
            PING), -c 1 and -c 20, server and benchmark pinned to --cpu: connections per second.

Servers alternate A B B A (--rounds runs each); medians are compared. Certificates are made
with openssl in a temporary directory.

    bench/tls_connections.py --server build/goblin-server [--redis /usr/bin/redis-server]
                             [--clients 1000] [--requests 4000] [--rounds 2] [--cpu 1]
"""

import argparse
import datetime
import os
import re
import resource
import shutil
import socket
import ssl
import statistics
import subprocess
import tempfile
import time


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(directory):
    openssl("genrsa", "-out", "ca.key", "2048", cwd=directory)
    openssl("req", "-x509", "-new", "-nodes", "-sha256", "-key", "ca.key", "-days", "30",
            "-subj", "/O=Goblin Bench/CN=ca", "-out", "ca.crt", cwd=directory)
    for name in ("server", "client"):
        openssl("genrsa", "-out", f"{name}.key", "2048", cwd=directory)
        csr = subprocess.run(["openssl", "req", "-new", "-sha256", "-subj", f"/CN={name}",
                              "-key", f"{name}.key"], cwd=directory, check=True,
                             capture_output=True).stdout
        subprocess.run(["openssl", "x509", "-req", "-sha256", "-CA", "ca.crt", "-CAkey", "ca.key",
                        "-CAcreateserial", "-days", "30", "-out", f"{name}.crt"],
                       input=csr, cwd=directory, check=True, capture_output=True)
    return {name: os.path.join(directory, name) for name in
            ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def client_context(certs):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(certs["ca.crt"])
    context.check_hostname = False
    context.load_cert_chain(certs["client.crt"], certs["client.key"])
    return context


def ping(context, port):
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
    sock.sendall(b"PING\r\n")
    if sock.recv(16) != b"+PONG\r\n":
        raise RuntimeError("no PONG")
    return sock


def start(binary, certs, cpu, work):
    port = free_port()
    proc = subprocess.Popen(
        ["taskset", "-c", str(cpu), binary, "--port", "0", "--tls-port", str(port),
         "--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
         "--tls-ca-cert-file", certs["ca.crt"], "--save", "", "--appendonly", "no",
         "--dir", work, "--maxclients", "10000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    context = client_context(certs)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            ping(context, port).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(binary + " did not start")


def resident_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def measure(binary, certs, args):
    work = tempfile.mkdtemp(prefix="gob-tls-conn-")
    proc, port = start(binary, certs, args.cpu, work)
    try:
        context = client_context(certs)
        # One connection first, so that the first client's one-time costs are in the baseline.
        warm = ping(context, port)
        before = resident_kb(proc.pid)
        clients = [ping(context, port) for _ in range(args.clients)]
        after = resident_kb(proc.pid)
        for sock in clients + [warm]:
            sock.close()
        result = {"bytes_per_client": (after - before) * 1024 / args.clients}
        tls = ["--tls", "--cert", certs["client.crt"], "--key", certs["client.key"],
               "--cacert", certs["ca.crt"]]
        for c in (1, 20):
            out = subprocess.run(
                ["taskset", "-c", str(args.cpu), "redis-benchmark", "-p", str(port), *tls, "-k", "0",
                 "-c", str(c), "-n", str(args.requests), "-t", "ping_inline", "-q"],
                capture_output=True, text=True, timeout=600).stdout
            found = re.findall(r"([\d.]+) requests per second", out)
            if not found:
                raise RuntimeError("redis-benchmark: " + out)
            result[f"handshakes_c{c}"] = float(found[-1])
        return result
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cpu", type=int, default=1)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.clients + 100)), hard))

    work = tempfile.mkdtemp(prefix="gob-tls-certs-")
    try:
        certs = make_certificates(work)
        runs = {"goblin": [], "redis": []}
        order = ["goblin", "redis", "redis", "goblin"] * args.rounds
        for name in order[: 2 * args.rounds]:
            binary = args.server if name == "goblin" else args.redis
            runs[name].append(measure(binary, certs, args))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {args.clients} idle TLS clients, "
          f"{args.requests} connections per handshake run, rounds {args.rounds}")
    print("| measure | goblin | redis | goblin/redis |")
    print("|---|---:|---:|---:|")
    for key, label in (("bytes_per_client", "resident bytes per idle TLS client"),
                       ("handshakes_c1", "connections/s, -c 1 -k 0"),
                       ("handshakes_c20", "connections/s, -c 20 -k 0")):
        g = statistics.median(r[key] for r in runs["goblin"])
        r = statistics.median(r[key] for r in runs["redis"])
        print(f"| {label} | {g:,.0f} | {r:,.0f} | {g / r:.2f} |")


if __name__ == "__main__":
    main()
