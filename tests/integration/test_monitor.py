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
