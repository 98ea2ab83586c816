"""Starting, watching and stopping server processes for the Python suites.

A `ServerProcess` runs a redis-server-compatible binary (goblin-server, or
redis-server itself) on a free TCP port on 127.0.0.1 and/or a Unix socket in a
short temporary directory, waits until it answers PING (polling with a
deadline), verifies through INFO that the process answering is the one it
started (another engineer's server may hold the port), and retries with a new
port when the bind fails. Every server started in the session is recorded so
a failing test can show the logs of the servers it talked to.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from .resp import ConnectionClosed, RawConnection, ReplyTimeout

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE_BINARY = os.environ.get("REDIS_REFERENCE_SERVER", "/usr/bin/redis-server")
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
REDIS_BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"

# Markers a sanitizer build prints when it finds a bug; a server log holding one fails the test.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "SUMMARY: UndefinedBehaviorSanitizer", "SUMMARY: AddressSanitizer")

_STARTED: list["ServerProcess"] = []


def goblin_binary() -> str:
    """The binary under test: $GOBLIN_SERVER, else build/goblin-server of this tree."""
    path = os.environ.get("GOBLIN_SERVER") or str(REPO_ROOT / "build" / "goblin-server")
    return path


def started_servers() -> list["ServerProcess"]:
    return list(_STARTED)


def free_port() -> int:
    """A TCP port that was free a moment ago (the caller retries if it is taken meanwhile)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StartupError(Exception):
    pass


class ServerProcess:
    """One server process with its own directory, port, Unix socket and log files."""

    def __init__(self, binary: str, *, name: str = "goblin", options: dict | None = None, extra_args=(),
                 config_text: str | None = None, tcp: bool = True, unix: bool = True,
                 password: str | None = None, startup_timeout: float = 20.0):
        """`options` override the default command-line options (a value of None drops that option);
        `extra_args` are appended verbatim after them."""
        self.binary = binary
        self.name = name
        self.options = dict(options or {})
        self.extra_args = [str(a) for a in extra_args]
        self.config_text = config_text
        self.tcp = tcp
        self.unix = unix
        self.password = password
        self.startup_timeout = startup_timeout
        self.dir = tempfile.mkdtemp(prefix=f"gob-{name}-")
        self.unix_path = os.path.join(self.dir, "s.sock") if unix else None
        self.config_path = os.path.join(self.dir, "server.conf") if config_text is not None else None
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.stop_requested = False
        self.attempts = 0
        # Attach this server's log to every failing test's report (servers shared by many
        # tests, like the differential pair, set this off: their logs matter only on a crash).
        self.show_log_on_failure = True
        if self.config_path:
            Path(self.config_path).write_text(config_text)

    # ---- lifecycle -------------------------------------------------------------------------

    def command_line(self, port: int) -> list[str]:
        args = [self.binary]
        if self.config_path:
            args.append(self.config_path)
        options = {"port": str(port), "bind": "127.0.0.1", "save": "", "appendonly": "no", "dir": self.dir,
                   "enable-debug-command": "yes"}
        if self.unix_path:
            options["unixsocket"] = self.unix_path
        options.update(self.options)
        for name, value in options.items():
            if value is not None:
                args += [f"--{name}", str(value)]
        return args + self.extra_args

    def start(self, keep_port: bool = False) -> "ServerProcess":
        """Starts the process on a free port, or on the port it had before when `keep_port` is set
        (a node that must come back at its old address; a conflict is then not retried)."""
        if not (os.path.isfile(self.binary) and os.access(self.binary, os.X_OK)):
            raise StartupError(f"server binary {self.binary!r} does not exist or is not executable "
                               f"(set GOBLIN_SERVER to the goblin-server path)")
        _STARTED.append(self)
        last = ""
        for _ in range(6):
            self.attempts += 1
            if not (keep_port and self.port):
                self.port = free_port() if self.tcp else 0
            outcome = self._launch_and_wait()
            if outcome == "ready":
                return self
            last = outcome
            self._kill()
            if keep_port or outcome not in ("port-conflict", "wrong-process"):
                break
        raise StartupError(f"{self.name} ({self.binary}) did not start: {last}\n"
                           f"command line: {self.command_line(self.port)}\n{self.logs()}")

    def _launch_and_wait(self) -> str:
        out = open(os.path.join(self.dir, "stdout.log"), "ab")
        err = open(os.path.join(self.dir, "stderr.log"), "ab")
        try:
            self.proc = subprocess.Popen(self.command_line(self.port), stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, cwd=self.dir)
        finally:
            out.close()
            err.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                text = self.logs().lower()
                if "in use" in text or "eaddrinuse" in text:
                    return "port-conflict"
                return f"exited with status {self.proc.returncode} before answering PING"
            state = self._probe()
            if state in ("ready", "wrong-process"):
                return state
            time.sleep(0.02)  # polling interval while waiting for the listener, bounded by the deadline
        return f"did not answer PING within {self.startup_timeout}s"

    def _probe(self) -> str:
        try:
            conn = self._connect(timeout=2.0)
        except OSError:
            return "not-listening"
        try:
            if self.password is not None:
                conn.call("AUTH", self.password)
            pong = conn.call("PING")
            if not (pong.raw == b"+PONG\r\n" or pong.raw.startswith(b"-NOAUTH")
                    or pong.raw.startswith(b"-LOADING")):
                return "not-ready"
            info = conn.call("INFO", "server")
            if info.kind in "$=" and info.value:
                fields = parse_info(info.value)
                pid = fields.get("process_id")
                if pid is not None and pid != str(self.proc.pid):
                    return "wrong-process"
            return "ready"
        except (OSError, ConnectionClosed, ReplyTimeout):
            return "not-ready"
        finally:
            conn.close()

    def _connect(self, timeout: float = 10.0) -> RawConnection:
        if self.tcp:
            return RawConnection(self.port, timeout=timeout)
        return RawConnection(unix_path=self.unix_path, timeout=timeout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def crashed(self) -> bool:
        """True if the process exited without being asked to."""
        return self.proc is not None and self.proc.poll() is not None and not self.stop_requested

    def stop(self, timeout: float = 10.0) -> int | None:
        """Asks the server to exit (SIGTERM), then kills it; returns the exit status."""
        self.stop_requested = True
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def _kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def restart(self, keep_port: bool = False) -> "ServerProcess":
        """Kills the process (whatever its state) and starts a fresh one with the same settings
        (and the same port with `keep_port`)."""
        self._kill()
        self.stop_requested = False
        return self.start(keep_port=keep_port)

    def kill_hard(self):
        """SIGKILL, as a crash would end the process: no shutdown work runs (a test's own doing, so
        the harness does not report it as a crash)."""
        self.stop_requested = True
        self._kill()

    def cleanup(self):
        if not self.alive():
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- logs -----------------------------------------------------------------------------

    def logs(self, limit: int = 6000) -> str:
        parts = []
        for name in ("stdout.log", "stderr.log"):
            p = os.path.join(self.dir, name)
            try:
                data = Path(p).read_bytes()
            except OSError:
                continue
            if len(data) > limit:
                data = b"...(%d bytes cut)...\n" % (len(data) - limit) + data[-limit:]
            parts.append(f"--- {name} ---\n{data.decode('utf-8', 'replace')}")
        return "\n".join(parts)

    def sanitizer_report(self) -> str | None:
        text = self.logs(limit=200000)
        for marker in SANITIZER_MARKERS:
            if marker in text:
                return text
        return None

    def describe(self) -> str:
        if self.proc is None:
            return f"{self.name} (never started)"
        state = "running" if self.alive() else f"exited ({self.proc.returncode})"
        return f"{self.name} pid={self.proc.pid} port={self.port} unix={self.unix_path} {state}"

    # ---- clients --------------------------------------------------------------------------

    def raw(self, unix: bool = False, timeout: float = 10.0) -> RawConnection:
        if unix:
            return RawConnection(unix_path=self.unix_path, timeout=timeout)
        return self._connect(timeout=timeout)

    def client(self, unix: bool = False, **kwargs):
        import redis

        kwargs.setdefault("socket_timeout", 15)
        kwargs.setdefault("socket_connect_timeout", 5)
        if self.password is not None:
            kwargs.setdefault("password", self.password)
        if unix or not self.tcp:
            return redis.Redis(unix_socket_path=self.unix_path, **kwargs)
        return redis.Redis(host="127.0.0.1", port=self.port, **kwargs)

    def info(self, section: str | None = None) -> dict:
        with self.raw() as c:
            if self.password is not None:
                c.call("AUTH", self.password)
            reply = c.call("INFO", section) if section else c.call("INFO")
            assert reply.kind in "$=", f"INFO replied {reply!r}"
            return parse_info(reply.value)

    def cli_args(self) -> list[str]:
        """redis-cli arguments that reach this server."""
        if self.tcp:
            args = ["-h", "127.0.0.1", "-p", str(self.port)]
        else:
            args = ["-s", self.unix_path]
        if self.password is not None:
            args += ["--no-auth-warning", "-a", self.password]
        return args


def stop_and_check(server: ServerProcess):
    """Stops a server; raises AssertionError if it had crashed or its log holds a sanitizer report."""
    crashed = server.crashed()
    server.stop()
    if crashed:
        raise AssertionError(f"{server.name} had died before teardown (status {server.proc.returncode}):\n"
                             f"{server.logs()}")
    report = server.sanitizer_report()
    if report:
        raise AssertionError(f"sanitizer report from {server.name}:\n{report}")
    server.cleanup()


def parse_info(text: bytes | str) -> dict:
    """INFO text -> {field: value-string}; section headers and blank lines are dropped."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.startswith("txt:"):
        text = text[4:]
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        out[k] = v
    return out


def info_sections(text: bytes | str) -> list[str]:
    """The section names ('# Server' -> 'server') of an INFO reply, in order."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return [line[2:].strip().lower() for line in text.splitlines() if line.startswith("# ")]


def run_until_exit(args, timeout: float = 20.0, cwd: str | None = None):
    """Runs a server command line that is expected to stop by itself; returns (status, output).

    Raises AssertionError if the process is still running at the deadline (it is killed).
    """
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=cwd)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"{args} still running after {timeout}s; output:\n"
                             f"{out.decode('utf-8', 'replace')[-3000:]}")
    return proc.returncode, out.decode("utf-8", "replace")


def samples_until_loaded(conn: RawConnection, timeout: float = 60.0) -> list:
    """(PING's raw reply, INFO persistence fields) every 10 ms until loading:0, sent in one packet so that
    both are answered at the same point of the load; the last sample is the first with loading:0."""
    samples = []
    deadline = time.monotonic() + timeout
    while True:
        ping, info = conn.pipeline([("PING",), ("INFO", "persistence")])
        fields = parse_info(info.value)
        samples.append((ping.raw, fields))
        if fields["loading"] == "0":
            return samples
        assert time.monotonic() < deadline, f"still loading after {timeout} s"
        time.sleep(0.01)  # polling interval, bounded by the deadline


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    """Polls `predicate` until it returns a truthy value or the deadline passes; returns that value."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (last value {last!r})")
        time.sleep(interval)
