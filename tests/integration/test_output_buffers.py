"""Clients that pipeline large replies and read slowly (resp/output_buffer.h).

Ten clients each pipeline 64 GETs of a 1 MB value and read nothing, so the server holds 64 MB of unsent
replies for each. Their replies must cost the server about what they hold, not the doubled capacity of a
growing string (whose copies and page faults kept every other client waiting for seconds); a reader that
drains part of its replies must give the part it read back at once; another client is answered meanwhile;
and once they go the server's memory returns near where it started.

No assertion is on timing but the deadline that tells a stuck server from a busy one.
"""

from __future__ import annotations

import socket

import pytest

from support.resp import encode_command
from support.server import wait_for

DEADLINE = 10.0
VALUE_SIZE = 1 << 20
GETS = 64
READERS = 10
# One GET's reply: "$1048576\r\n", the value, "\r\n".
REPLY_SIZE = VALUE_SIZE + len(b"$1048576\r\n") + 2
MB = 1 << 20


def parse_client_list(text: bytes) -> dict[str, dict]:
    clients = {}
    for line in text.decode().splitlines():
        fields = dict(item.partition("=")[::2] for item in line.split(" "))
        clients[fields["name"]] = fields
    return clients


def unsent(fields: dict) -> int:
    return int(fields["obl"]) + int(fields["omem"])


def slow_reader(srv, name: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=DEADLINE)
    sock.sendall(encode_command("CLIENT", "SETNAME", name) + encode_command("GET", "big") * GETS)
    return sock


def used_memory(srv) -> int:
    return int(srv.info("memory")["used_memory"])


def test_slow_readers_cost_what_they_hold_and_give_back_what_they_read(make_server):
    srv = make_server()
    with srv.raw(timeout=DEADLINE) as control:
        control.call("CLIENT", "SETNAME", "control")
        control.call("SET", "big", "x" * VALUE_SIZE)
        baseline = used_memory(srv)
        readers = [slow_reader(srv, f"slow{i}") for i in range(READERS)]
        try:
            # A fresh client is answered while the readers' replies pile up.
            with srv.raw(timeout=DEADLINE) as fresh:
                assert fresh.call("PING", timeout=DEADLINE).value == b"PONG"

            # Every GET has run once each reader's input is consumed and its last command was GET.
            def all_built():
                clients = parse_client_list(control.call("CLIENT", "LIST", timeout=DEADLINE).value)
                slow = [clients.get(f"slow{i}") for i in range(READERS)]
                done = all(c is not None and c["cmd"] == "get" and c["qbuf"] == "0" for c in slow)
                return slow if done else None

            slow = wait_for(all_built, timeout=DEADLINE, what="every reader's GETs to run")
            # The kernel's socket buffers hold what was written; the rest stays in the server.
            pending = [unsent(c) for c in slow]
            assert min(pending) > GETS * REPLY_SIZE - 16 * MB, pending
            # Held in blocks filled in turn: the allocation is about what is unsent, where a string
            # doubled to 128 MB for each reader.
            held = int(srv.info("memory")["mem_clients_normal"])
            assert held < sum(pending) * 1.05 + READERS * MB, (held, sum(pending))

            # The first reader takes 48 MB of its replies: the server keeps little more than the rest.
            first = readers[0]
            first.settimeout(DEADLINE)
            received = 0
            while received < 48 * MB:
                chunk = first.recv(1 << 20)
                assert chunk, "the server closed a reader"
                received += len(chunk)
            fields = parse_client_list(control.call("CLIENT", "LIST", timeout=DEADLINE).value)["slow0"]
            assert unsent(fields) < 20 * MB, fields
            assert int(fields["tot-mem"]) < unsent(fields) + 4 * MB, fields
        finally:
            for sock in readers:
                sock.close()

        # The readers' replies are freed with them.
        wait_for(lambda: len(parse_client_list(control.call("CLIENT", "LIST").value)) == 1,
                 timeout=DEADLINE, what="the readers to be closed")
        after = used_memory(srv)
        assert after < baseline + 8 * MB, (baseline, after)


@pytest.mark.goblin
def test_an_idle_client_gives_its_reply_block_back_unless_resizing_is_off(raw):
    # Redis's client cron shrinks a reply buffer whose peak stayed small (CLIENT LIST's rbs,
    # INFO's reply_buffer_shrinks); Goblin's tick gives the block an idle client keeps back.
    my_id = raw.call("CLIENT", "ID").value

    def own_rbs() -> int:
        fields = parse_client_list(raw.call("CLIENT", "LIST", "ID", str(my_id)).value)
        return int(next(iter(fields.values()))["rbs"])

    def stat(section: str, name: str) -> int:
        info = raw.call("INFO", section).value.decode()
        return int(next(line for line in info.splitlines() if line.startswith(name + ":")).split(":")[1])

    wait_for(lambda: own_rbs() == 0, DEADLINE, what="the idle reply block given back")
    assert stat("stats", "reply_buffer_shrinks") >= 1
    assert raw.call("DEBUG", "REPLYBUFFER", "RESIZING", "0").raw == b"+OK\r\n"
    counted = stat("stats", "reply_buffer_shrinks")
    # Two seconds of the server's clock hold at least one of the tick's once-a-second passes.
    start = stat("server", "uptime_in_seconds")
    wait_for(lambda: stat("server", "uptime_in_seconds") >= start + 2, DEADLINE, what="two seconds")
    assert own_rbs() == 16384
    assert stat("stats", "reply_buffer_shrinks") == counted
    raw.call("DEBUG", "REPLYBUFFER", "RESIZING", "1")


# ---- client-output-buffer-limit normal -------------------------------------------------------------------------
#
# Each runs against Debian's redis-server 7.0 too (start_either). A socket with a small receive buffer reads
# nothing: past what the kernel's buffers take, the replies stay in the server, where the limits apply.

def reader(srv, *commands) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", srv.port))
    sock.settimeout(DEADLINE)
    sock.sendall(b"".join(encode_command(*c) for c in commands))
    return sock


def received_until_closed(sock: socket.socket) -> bytes:
    data = bytearray()
    while True:
        try:
            chunk = sock.recv(1 << 20)
        except ConnectionResetError:
            return bytes(data)
        if not chunk:
            return bytes(data)
        data += chunk


def client_fields(control, name: str) -> dict | None:
    return parse_client_list(control.call("CLIENT", "LIST", "TYPE", "normal", timeout=DEADLINE).value).get(name)


def limit_disconnections(srv) -> int | None:
    """INFO's client_output_buffer_limit_disconnections (Redis 7.2; None on 7.0, which lacks it)."""
    value = srv.info("stats").get("client_output_buffer_limit_disconnections")
    return None if value is None else int(value)


@pytest.mark.parametrize("pipeline", ["alone", "after-ping", "transaction"])
def test_past_the_hard_limit_a_client_gets_nothing_more(start_either, pipeline):
    """A reply past the hard limit closes the client without a byte of it, nor of the replies before it in the
    same batch; the rest of its pipeline does not run, but a transaction runs whole."""
    srv = start_either()
    with srv.raw(timeout=DEADLINE) as control:
        control.call("CONFIG", "SET", "client-output-buffer-limit", "normal 100000 0 0")
        control.call("SET", "big", "x" * 200_000)
        before = limit_disconnections(srv)
        commands = {
            "alone": [("GET", "big"), ("SET", "after", "1")],
            "after-ping": [("PING",), ("GET", "big"), ("SET", "after", "1")],
            "transaction": [("MULTI",), ("SET", "before", "1"), ("GET", "big"), ("SET", "after", "1"), ("EXEC",)],
        }[pipeline]
        with reader(srv, *commands) as sock:
            assert received_until_closed(sock) == b""
        ran = control.call("EXISTS", "after").value
        assert ran == (1 if pipeline == "transaction" else 0)
        assert control.call("PING").raw == b"+PONG\r\n"
        if before is not None:
            assert limit_disconnections(srv) == before + 1


def fill_past(control, sock_name: str, size: int):
    wait_for(lambda: (client_fields(control, sock_name) or {}).get("omem", "0") != "0" and
             int(client_fields(control, sock_name)["omem"]) > size, timeout=DEADLINE,
             what=f"{sock_name}'s unsent replies past {size} bytes")


def test_the_soft_limit_closes_a_client_that_stays_over_it(start_either):
    """Over the soft limit for longer than its seconds, a client is closed whether it goes on asking or sends
    nothing more (the cron judges it then)."""
    srv = start_either()
    with srv.raw(timeout=DEADLINE) as control:
        control.call("SET", "big", "x" * 500_000)
        assert control.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 1mb 1").raw == b"+OK\r\n"
        before = limit_disconnections(srv)
        busy = reader(srv, ("CLIENT", "SETNAME", "busy"), *[("GET", "big")] * 20)
        quiet = reader(srv, ("CLIENT", "SETNAME", "quiet"), *[("GET", "big")] * 20)
        try:
            fill_past(control, "busy", MB)
            fill_past(control, "quiet", MB)

            def busy_closed():
                if client_fields(control, "busy") is None:
                    return True
                try:
                    busy.sendall(encode_command("GET", "big"))
                except OSError:
                    return True
                return False

            wait_for(busy_closed, timeout=DEADLINE, interval=0.1, what="the busy client to be closed")
            wait_for(lambda: client_fields(control, "quiet") is None, timeout=DEADLINE,
                     what="the quiet client to be closed")
        finally:
            busy.close()
            quiet.close()
        if before is not None:
            assert limit_disconnections(srv) == before + 2
        assert control.call("PING").raw == b"+PONG\r\n"


def test_a_client_within_the_soft_limit_s_seconds_gets_every_reply(start_either):
    """Over the soft limit but for less than its seconds (an hour), the client is served: once it reads, its
    replies arrive whole."""
    srv = start_either()
    with srv.raw(timeout=DEADLINE) as control:
        control.call("SET", "big", "x" * 500_000)
        control.call("CONFIG", "SET", "client-output-buffer-limit", "normal 0 1mb 3600")
        with reader(srv, ("CLIENT", "SETNAME", "slow"), *[("GET", "big")] * 20) as sock:
            fill_past(control, "slow", MB)
            expected = b"+OK\r\n" + (b"$500000\r\n" + b"x" * 500_000 + b"\r\n") * 20
            data = bytearray()
            while len(data) < len(expected):
                chunk = sock.recv(1 << 20)
                assert chunk, f"closed after {len(data)} bytes"
                data += chunk
            assert bytes(data) == expected
        if limit_disconnections(srv) is not None:
            assert limit_disconnections(srv) == 0
