"""A server under benchmark, pinned to one CPU and listening on a Unix socket with persistence
off, the small RESP client the Python benchmarks drive it with, and redis-benchmark run against
it (list_positional.py, list_blocking.py, scripting.py, stream_groups.py, stream_trim.py), and
for dump_restore.py the pair of servers and the table of ratios."""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time


class Conn:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buf = b""

    def send(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(parts))

    def _line(self):
        while b"\r\n" not in self.buf:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("server closed the connection")
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self, raise_errors=False):
        """A bulk string's bytes (None for a null one), else the reply's first line (an error
        starts with b"-", or raises with raise_errors): enough for the benchmarks' commands."""
        line = self._line()
        if raise_errors and line[:1] == b"-":
            raise RuntimeError(line.decode())
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            value, self.buf = self.buf[:n], self.buf[n + 2:]
            return value
        return line

    def call(self, *args):
        self.send(*args)
        return self.reply()

    def pipeline(self, commands):
        """Sends every command at once; raises on the first error reply."""
        out = b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in c)
                       for c in commands)
        self.sock.sendall(out)
        return [self.reply(raise_errors=True) for _ in commands]


def start(binary, cpu, workdir, *extra_args):
    """Starts binary in workdir; returns (process, socket path, a connection to it)."""
    sock = os.path.join(workdir, "s.sock")
    proc = subprocess.Popen(["taskset", "-c", str(cpu), binary, "--port", "0", "--unixsocket", sock,
                             "--save", "", "--appendonly", "no", "--dir", workdir, *extra_args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            conn = Conn(sock)
            if conn.call("PING") == b"+PONG":
                return proc, sock, conn
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError(binary + " did not start")


def info_memory(conn):
    """INFO memory's integer fields."""
    conn.send("INFO", "memory")
    text = conn.reply().decode()
    return {k: int(v) for k, v in (line.split(":", 1) for line in text.splitlines() if ":" in line)
            if v.isdigit()}


def redis_benchmark(sock, cpu, command, requests, keyspace=1000000):
    """requests/s of redis-benchmark -c 1 -P 16 running command (a list of words, __rand_int__
    drawn below keyspace) on the server at sock, pinned to cpu."""
    out = subprocess.run(["taskset", "-c", str(cpu), "redis-benchmark", "-s", sock, "-c", "1", "-P", "16",
                          "-n", str(requests), "-r", str(keyspace), "-q", *command],
                         capture_output=True, text=True, check=True).stdout
    match = re.findall(r"([0-9.]+) requests per second", out)
    if not match:
        raise RuntimeError("redis-benchmark said: " + out[-300:])
    return float(match[-1])


class ServerPair:
    """goblin-server and redis-server started side by side in a temporary directory (start's
    settings), stopped and removed on leaving the with block. servers[name] = (proc, sock, conn)."""

    def __init__(self, binaries, cpu, prefix):
        self.binaries, self.cpu, self.prefix = binaries, cpu, prefix
        self.servers = {}

    def __enter__(self):
        self.work = tempfile.mkdtemp(prefix=self.prefix)
        try:
            for name, binary in self.binaries.items():
                os.makedirs(os.path.join(self.work, name))
                self.servers[name] = start(binary, self.cpu, os.path.join(self.work, name))
        except BaseException:
            self.__exit__()
            raise
        return self.servers

    def __exit__(self, *exc):
        for proc, _, _ in self.servers.values():
            proc.kill()
            proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def print_ratios(rows, markdown, title):
    """rows of (what, goblin, redis, unit): a markdown table under title, or one line each."""
    if markdown:
        print(title + "\n")
        print("| what | goblin | redis | goblin/redis |")
        print("|---|---:|---:|---:|")
    for what, g, r, unit in rows:
        if markdown:
            print(f"| {what} | {g:,.0f} {unit} | {r:,.0f} {unit} | {g / r:.2f}x |")
        else:
            print(f"{what:14} goblin {g:12,.0f}  redis {r:12,.0f}  {unit}  ratio {g / r:.2f}")
