"""Command line and config file: redis-server's syntax, overrides, aliases, and startup errors."""

import os
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from support.expect import err, ok, run_steps, simple
from support.resp import RawConnection
from support.server import REFERENCE_BINARY, free_port, goblin_binary, run_until_exit, wait_for


def config_value(conn, name):
    reply = conn.call("CONFIG", "GET", name).py()
    assert len(reply) == 2, reply
    return reply[1]


def test_config_file_with_command_line_overrides(make_server):
    text = ("# goblin test config\n"
            "hz 15\n"
            "timeout 120\n"
            "databases 4\n"
            'requirepass "pass word"\n'
            "loglevel warning\n"
            "tcp-keepalive 60\n"
            "dbfilename snapshot.rdb\n")
    srv = make_server(config_text=text, options={"hz": "25"}, password="pass word")
    with srv.raw() as conn:
        run_steps(conn, [("PING", err("NOAUTH Authentication required.")),
                         (["AUTH", "pass word"], ok)])
        assert config_value(conn, "hz") == b"25", "--hz on the command line overrides the file"
        assert config_value(conn, "timeout") == b"120"
        assert config_value(conn, "databases") == b"4"
        assert config_value(conn, "loglevel") == b"warning"
        assert config_value(conn, "tcp-keepalive") == b"60"
        assert config_value(conn, "dbfilename") == b"snapshot.rdb"
        assert config_value(conn, "port") == str(srv.port).encode()
        assert conn.call("SELECT", "3").raw == ok
        assert conn.call("SELECT", "4").raw == err("ERR DB index is out of range")
        fields = conn.call("INFO", "server").value
        assert b"config_file:" + os.path.realpath(srv.config_path).encode() in fields


def test_config_file_syntax(make_server):
    text = ("   hz    13   \n"
            "\n"
            "# comment line\n"
            "save \"\"\n"
            "appendonly no\n"
            "SAVE \"\"\n"
            "maxmemory 64mb\n"
            "maxmemory-policy allkeys-lru\n")
    srv = make_server(config_text=text)
    with srv.raw() as conn:
        assert config_value(conn, "hz") == b"13"
        assert config_value(conn, "save") == b""
        assert config_value(conn, "maxmemory") == str(64 << 20).encode()
        assert config_value(conn, "maxmemory-policy") == b"allkeys-lru"


def test_ziplist_aliases_are_accepted(make_server):
    srv = make_server(options={"hash-max-ziplist-entries": "100", "zset-max-ziplist-value": "32"})
    with srv.raw() as conn:
        assert config_value(conn, "hash-max-listpack-entries") == b"100"
        assert config_value(conn, "hash-max-ziplist-entries") == b"100"
        assert config_value(conn, "zset-max-listpack-value") == b"32"


def _startup_failure(args, timeout=20):
    status, output = run_until_exit([goblin_binary()] + args, timeout=timeout)
    assert status != 0, f"expected a failed startup, got status 0:\n{output}"
    return output


def test_unknown_option_on_command_line_stops_startup():
    output = _startup_failure(["--port", str(free_port()), "--save", "", "--nosuchoption", "1"])
    assert "nosuchoption" in output, output


def test_unknown_directive_in_config_file_names_it_and_the_line():
    with tempfile.TemporaryDirectory(prefix="gob-conf-") as d:
        path = os.path.join(d, "bad.conf")
        with open(path, "w") as f:
            f.write(f"port {free_port()}\nsave \"\"\nfrobnicate yes\n")
        output = _startup_failure([path])
        assert "frobnicate" in output, output
        assert "line 3" in output, output


@pytest.mark.parametrize("args,name", [
    (["--port", "abc"], "port"),
    (["--databases", "0"], "databases"),
    (["--hz", "fast"], "hz"),
    (["--appendonly", "maybe"], "appendonly"),
    (["--maxclients", "-5"], "maxclients"),
    (["--port"], "port"),
])
def test_malformed_option_stops_startup(args, name):
    output = _startup_failure(["--save", ""] + args)
    assert name in output, output


def test_missing_config_file_stops_startup():
    output = _startup_failure(["/nonexistent/dir/goblin.conf"])
    assert "/nonexistent/dir/goblin.conf" in output, output


def test_port_zero_serves_only_the_unix_socket(make_server):
    srv = make_server(tcp=False)
    with srv.raw(unix=True) as conn:
        assert conn.call("PING").raw == simple("PONG")
        assert config_value(conn, "port") == b"0"
    # The process's own socket inodes, matched against the kernel's table of TCP listeners.
    inodes = set()
    for fd in os.listdir(f"/proc/{srv.proc.pid}/fd"):
        try:
            target = os.readlink(f"/proc/{srv.proc.pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    tcp_listeners = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # state 0A = LISTEN
                tcp_listeners.append(parts[1])
    assert tcp_listeners == [], f"--port 0 must not open a TCP listener, found {tcp_listeners}"


def test_unixsocketperm(make_server):
    srv = make_server(options={"unixsocketperm": "700"})
    mode = stat.S_IMODE(os.stat(srv.unix_path).st_mode)
    assert mode == 0o700, oct(mode)
    with srv.raw(unix=True) as conn:
        assert config_value(conn, "unixsocketperm") == b"700"


def test_bind_ipv6_loopback(make_server):
    srv = make_server(options={"bind": "127.0.0.1 ::1"})
    sock = socket.create_connection(("::1", srv.port), timeout=5)
    sock.sendall(b"PING\r\n")
    assert sock.recv(100) == b"+PONG\r\n"
    sock.close()
    with srv.raw() as conn:
        assert conn.call("PING").raw == simple("PONG")


def test_default_bind_is_loopback_v4_and_v6(make_server):
    srv = make_server(options={"bind": None})
    for host in ("127.0.0.1", "::1"):
        sock = socket.create_connection((host, srv.port), timeout=5)
        sock.sendall(b"PING\r\n")
        assert sock.recv(100) == b"+PONG\r\n", host
        sock.close()


def test_maxclients_rejects_extra_connections(make_server):
    srv = make_server(options={"maxclients": "3"})
    first = srv.raw()
    # The start-up probe's connection must be gone before counting to three.
    wait_for(lambda: b"connected_clients:1\r\n" in first.call("INFO", "clients").value,
             what="connected_clients to drop to 1")
    conns = [first, srv.raw(), srv.raw()]
    for c in conns:
        assert c.call("PING").raw == simple("PONG")
    extra = srv.raw()
    data = extra.read_until_closed(timeout=10)
    assert data == err("ERR max number of clients reached")
    extra.close()
    conns.pop().close()
    # Once a slot is free a new client is accepted again.
    wait_for(lambda: _ping_ok(srv), what="a client slot to be freed")
    for c in conns:
        c.close()


def _ping_ok(srv):
    try:
        with srv.raw(timeout=2) as c:
            return c.call("PING").raw == simple("PONG")
    except Exception:
        return False


def test_timeout_closes_idle_clients(make_server):
    srv = make_server(options={"timeout": "1"})
    idle = srv.raw()
    assert idle.call("PING").raw == simple("PONG")
    started = time.monotonic()
    assert idle.read_until_closed(timeout=15) == b""
    assert time.monotonic() - started >= 0.9, "closed before the idle timeout"
    idle.close()
    with srv.raw() as c:
        assert c.call("PING").raw == simple("PONG")


def test_logfile(make_server, tmp_path):
    path = str(tmp_path / "server.log")
    srv = make_server(options={"logfile": path, "loglevel": "verbose"})
    wait_for(lambda: os.path.exists(path) and os.path.getsize(path) > 0, what="the log file to be written")
    with srv.raw() as c:
        assert config_value(c, "logfile") == path.encode()


def test_daemonize_and_pidfile(tmp_path):
    work = str(tmp_path)
    pidfile = os.path.join(work, "goblin.pid")
    port = free_port()
    args = [goblin_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", work,
            "--daemonize", "yes", "--pidfile", pidfile, "--logfile", os.path.join(work, "log")]
    status, output = run_until_exit(args, timeout=20)
    assert status == 0, output
    pid = None
    try:
        wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(), what="the pidfile")
        pid = int(open(pidfile).read().strip())
        wait_for(lambda: _ping_port(port), what="the daemon to answer PING")
        with RawConnection(port) as c:
            info = c.call("INFO", "server").value
            assert b"process_id:%d\r\n" % pid in info
            assert config_value(c, "daemonize") == b"yes"
            c.send_command("SHUTDOWN", "NOSAVE")
            c.read_until_closed(timeout=10)
        wait_for(lambda: not os.path.exists(f"/proc/{pid}") or _is_zombie(pid), what="the daemon to exit")
        pid = None
    finally:
        if pid is not None and os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGKILL)


def _ping_port(port):
    try:
        with RawConnection(port, timeout=2) as c:
            return c.call("PING").raw == simple("PONG")
    except OSError:
        return False


def _is_zombie(pid):
    try:
        return open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def started_under_nofile(binary: str, soft: int, hard: int):
    """A server started with RLIMIT_NOFILE soft:hard (prlimit, util-linux); returns (process, port)."""
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="gob-nofile-")
    proc = subprocess.Popen(["prlimit", f"--nofile={soft}:{hard}", binary, "--port", str(port), "--save", "",
                             "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers():
        try:
            with RawConnection(port=port, timeout=1) as conn:
                return conn.call("PING").raw == b"+PONG\r\n"
        except OSError:
            return False
    wait_for(answers, what=f"{binary} to answer under --nofile={soft}:{hard}")
    return proc, port


def maxclients_under_nofile(binary: str, soft: int, hard: int) -> tuple[int, int]:
    """(CONFIG GET maxclients, the process's soft open-files limit) of a server started so."""
    proc, port = started_under_nofile(binary, soft, hard)
    try:
        with RawConnection(port=port) as conn:
            maxclients = int(conn.call("CONFIG", "GET", "maxclients").value[1].value)
            open_files = [line for line in open(f"/proc/{proc.pid}/limits") if line.startswith("Max open files")]
            conn.send_command("SHUTDOWN", "NOSAVE")
        return maxclients, int(open_files[0].split()[3])
    finally:
        proc.wait(timeout=20)


def test_maxclients_follows_the_open_files_limit():
    # As Redis: the soft limit is raised to maxclients + 32 where the hard limit allows, and
    # maxclients shrinks to what the limit holds where it does not (whether the hard limit can be
    # raised depends on the machine, so the reference decides the second case).
    goblin, soft_limit = maxclients_under_nofile(goblin_binary(), 200, 20000)
    assert goblin == 10000 and soft_limit >= 10032
    goblin, soft_limit = maxclients_under_nofile(goblin_binary(), 200, 300)
    reference, _ = maxclients_under_nofile(REFERENCE_BINARY, 200, 300)
    assert goblin == reference and soft_limit >= goblin + 32
