"""redis-cli (one-shot, --pipe, interactive with hints) and redis-benchmark against the server."""

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time

from support.resp import encode_command
from support.server import REDIS_BENCHMARK, REDIS_CLI


def cli(server, *args, stdin=None, unix=False, timeout=30):
    target = ["-s", server.unix_path] if unix else server.cli_args()
    proc = subprocess.run([REDIS_CLI, *target, *args], input=stdin, capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def test_one_shot_commands(server, r):
    assert cli(server, "SET", "greeting", "hello world") == (0, b"OK\n", b"")
    assert cli(server, "GET", "greeting") == (0, b"hello world\n", b"")
    assert cli(server, "INCR", "counter") == (0, b"1\n", b"")
    assert cli(server, "--no-raw", "INCR", "counter") == (0, b"(integer) 2\n", b"")
    assert cli(server, "--no-raw", "GET", "missing") == (0, b"(nil)\n", b"")
    assert cli(server, "--no-raw", "GET", "greeting") == (0, b'"hello world"\n', b"")
    assert cli(server, "-n", "3", "SET", "in3", "x")[1] == b"OK\n"
    assert r.get("in3") is None
    assert cli(server, "-n", "3", "GET", "in3")[1] == b"x\n"
    assert cli(server, "MSET", "a", "1", "b", "2")[1] == b"OK\n"
    assert cli(server, "--no-raw", "MGET", "a", "b", "zz")[1] == b'1) "1"\n2) "2"\n3) (nil)\n'
    code, out, _ = cli(server, "NOSUCHCOMMAND", "x")
    assert out.rstrip(b"\n") == b"ERR unknown command 'NOSUCHCOMMAND', with args beginning with: 'x' "
    assert cli(server, "PING") == (0, b"PONG\n", b"")
    code, out, _ = cli(server, "--no-raw", "TTL", "greeting")
    assert out == b"(integer) -1\n"


def test_one_shot_over_unix_socket(server, r):
    assert cli(server, "SET", "via", "unix", unix=True)[1] == b"OK\n"
    assert r.get("via") == b"unix"


def test_cli_reads_last_argument_from_stdin(server, r):
    code, out, _ = cli(server, "-x", "SET", "from-stdin", stdin=b"line one\nline two\n")
    assert out == b"OK\n"
    assert r.get("from-stdin") == b"line one\nline two\n"


def test_cli_info_and_scan_helpers(server, r):
    r.mset({b"scan:%d" % i: b"v" for i in range(300)})
    code, out, _ = cli(server, "--scan", "--pattern", "scan:*")
    assert code == 0
    assert sorted(out.split()) == sorted(b"scan:%d" % i for i in range(300))
    code, out, _ = cli(server, "INFO", "server")
    assert b"redis_mode:standalone" in out


def test_cli_pipe_mass_insert(server, r):
    n = 20000
    payload = b"".join(encode_command("SET", f"mass:{i}", f"value-{i}") for i in range(n))
    payload += encode_command("INCRBY", "mass-counter", 5) * 100
    code, out, err = cli(server, "--pipe", stdin=payload, timeout=120)
    assert code == 0, (out, err)
    assert b"errors: 0, replies: %d" % (n + 100) in out, out
    assert r.dbsize() == n + 1
    assert r.get("mass:12345") == b"value-12345"
    assert r.get("mass-counter") == b"500"


def test_cli_pipe_counts_errors(server, r):
    payload = encode_command("SET", "ok", "1") + encode_command("INCR", "ok") + encode_command("NOSUCH")
    payload += encode_command("SET", "s", "abc") + encode_command("INCR", "s")
    code, out, _ = cli(server, "--pipe", stdin=payload)
    assert b"errors: 2, replies: 5" in out, out
    assert r.get("ok") == b"2"


def test_redis_benchmark_runs_without_errors(server, r):
    tests = "set,get,ping,incr,mset"
    proc = subprocess.run([REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(server.port), "-t", tests,
                           "-n", "2000", "-q"], capture_output=True, timeout=180)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "rror" not in out, out
    for name in ("PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "MSET (10 keys)"):
        lines = [line for line in out.replace("\r", "\n").splitlines()
                 if line.strip().startswith(name + ":") and "requests per second" in line]
        assert lines, f"no result line for {name}:\n{out}"
    # Without -r every INCR hits the same key, so the counter proves all 2000 ran.
    assert r.get("counter:__rand_int__") == b"2000"
    assert len(r.get("key:__rand_int__")) == 3


def test_redis_benchmark_pipelined_over_unix_socket(server, r):
    proc = subprocess.run([REDIS_BENCHMARK, "-s", server.unix_path, "-t", "set,get", "-n", "2000", "-P", "16",
                           "-c", "4", "-q"], capture_output=True, timeout=180)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0 and "rror" not in out, out
    assert out.count("requests per second") == 2, out


class Terminal:
    """redis-cli in a pseudo-terminal, so it runs its interactive line editor (with hints)."""

    def __init__(self, args):
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave,
                                     env=dict(os.environ, TERM="xterm", HOME=os.environ.get("HOME", "/tmp")))
        os.close(slave)
        self.output = b""

    def expect(self, needle: bytes, timeout=15.0) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{needle!r} not seen; terminal output: {self.output[-2000:]!r}")
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                self.output += chunk
        assert needle in self.output, f"{needle!r} not seen; terminal output: {self.output[-2000:]!r}"
        seen = self.output
        self.output = b""
        return seen

    def expect_reply(self, needle: bytes, timeout=15.0) -> bytes:
        """Waits for needle and then for the prompt printed after it."""
        seen = self.expect(needle, timeout)
        tail = seen[seen.index(needle) + len(needle):]
        if b"> " not in tail:
            self.output = tail + self.output
            seen += self.expect(b"> ", timeout)
        return seen

    def type(self, text: bytes):
        os.write(self.master, text)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        os.close(self.master)


def test_interactive_cli_with_hints(server, r, tmp_path):
    term = Terminal([REDIS_CLI, *server.cli_args()])
    try:
        term.expect(b"> ")
        term.type(b"set ")
        hint = term.expect(b"value")  # redis-cli shows the argument hint for SET
        assert b"key" in hint
        # Each reply is awaited together with the next prompt: linenoise flushes typeahead
        # when it re-enters raw mode, so a command typed before the prompt would be lost.
        term.type(b"cli-key cli-value\r")
        term.expect_reply(b"OK")
        term.type(b"get cli-key\r")
        term.expect_reply(b'"cli-value"')
        term.type(b"incr cli-key\r")
        term.expect_reply(b"ERR value is not an integer or out of range")
        term.type(b"quit\r")
        assert term.proc.wait(timeout=15) == 0
    finally:
        term.close()
    assert r.get("cli-key") == b"cli-value"
