"""MONITOR through redis-cli and a raw connection: one line per command executed, in Redis's
format (`+<seconds>.<micros> [<db> <client address>] "arg" ...`), arguments escaped as Redis
escapes them, passwords redacted, admin commands and rejected commands left out."""

import re
import subprocess

from support.server import wait_for

LINE = re.compile(rb'^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$')


def read_lines(conn, n):
    return [conn.read_reply(timeout=10).raw.rstrip(b"\r\n") for _ in range(n)]


def test_monitor_lines_follow_redis_format(server, r):
    mon = server.raw()
    try:
        assert mon.call("MONITOR").raw == b"+OK\r\n"
        r.set("a b", b'x"y\n\x01\xff\\')
        r.execute_command("CONFIG", "GET", "hz")      # admin: not shown
        try:
            r.execute_command("AUTH", "someone", "secret")
        except Exception:
            pass
        try:
            r.execute_command("GET")  # an arity error: never reaches MONITOR
        except Exception:
            pass
        pipe = r.pipeline(transaction=True)
        pipe.select(3)
        pipe.set("k", "v")
        pipe.execute()
        lines = read_lines(mon, 6)
        parsed = [LINE.match(line) for line in lines]
        assert all(parsed), lines
        assert [m.group(5) for m in parsed] == [
            b'"SET" "a b" "x\\"y\\n\\x01\\xff\\\\"',
            b'"AUTH" "(redacted)" "(redacted)"',
            b'"MULTI"', b'"SELECT" "3"', b'"SET" "k" "v"', b'"EXEC"']
        # The database is the one the command ran in; the address is the client's.
        assert [m.group(3) for m in parsed] == [b"0", b"0", b"0", b"3", b"3", b"3"]
        assert all(m.group(4).startswith(b"127.0.0.1:") for m in parsed)
        # The monitor cannot touch keys, a second MONITOR is ignored, RESET ends it.
        assert mon.call("GET", "x").raw == b"-ERR Replica can't interact with the keyspace\r\n"
        mon.send_command("MONITOR")
        assert mon.call("RESET").raw == b"+RESET\r\n"
        r.set("after", "reset")
        assert mon.call("PING").raw == b"+PONG\r\n"  # no monitor line came in between
    finally:
        mon.close()


def test_redis_cli_monitor_shows_unix_socket_clients(server, r):
    cli = subprocess.Popen(["redis-cli", *server.cli_args(), "MONITOR"], stdout=subprocess.PIPE, text=True)
    try:
        assert cli.stdout.readline().strip() == "OK"
        wait_for(lambda: b"flags=O" in r.execute_command("CLIENT", "LIST"), what="redis-cli monitoring")
        unix = server.client(unix=True)
        unix.ping()
        line = cli.stdout.readline().strip()
        assert re.match(r'^\d+\.\d{6} \[0 unix:' + re.escape(server.unix_path) + r'\] "PING"$', line), line
    finally:
        cli.kill()
        cli.wait()


def test_a_monitor_does_not_see_its_own_quit(start_either):
    """Redis drops output to a client that is closing after its reply, so a monitor's own QUIT
    never reaches it; another client's QUIT does."""
    srv = start_either()
    with srv.raw() as monitor, srv.raw() as watcher, srv.raw() as other:
        assert watcher.call("MONITOR").raw == b"+OK\r\n"
        assert monitor.call("MONITOR").raw == b"+OK\r\n"
        monitor.send_command("QUIT")
        assert monitor.read_until_closed(timeout=10) == b"+OK\r\n"
        other.call("PING")
        # The watcher sees the monitor's QUIT, then the PING: the QUIT ran and was fed.
        lines = [reply.raw.split(b"] ", 1)[1] for reply in watcher.read_replies(2, timeout=10)]
        assert lines == [b'"QUIT"\r\n', b'"PING"\r\n']


def test_a_monitor_may_not_run_a_script_that_may_write(start_either):
    """EVAL and FCALL may replicate unless the script declares no-writes: a monitor (a replica
    underneath) may not run them, as it may not run a read or a write."""
    srv = start_either()
    with srv.raw() as monitor:
        assert monitor.call("MONITOR").raw == b"+OK\r\n"
        refused = b"-ERR Replica can't interact with the keyspace\r\n"
        assert monitor.call("EVAL", "return 1", 0).raw == refused
        assert monitor.call("EVAL", "#!lua\nreturn 1", 0).raw == refused
        assert monitor.call("FCALL", "nosuchfunction", 0).raw == refused
        # A script that declares no-writes runs (and is shown to the monitor first, as scripts are).
        monitor.send_command("EVAL", "#!lua flags=no-writes\nreturn 1", 0)
        line, reply = monitor.read_replies(2, timeout=10)
        assert line.raw.endswith(b'"EVAL" "#!lua flags=no-writes\\nreturn 1" "0"\r\n') and reply.raw == b":1\r\n"
