"""Many and misbehaving clients: ten thousand connections, readers that never read, clients that
half-close, a pipeline of a million commands, a 512 MB bulk, and the output and query buffer
limits as Redis applies them. Through all of it a fresh client gets answers, and nothing a
client was told is done goes missing. Every run is bounded in count and time and stays on the
loopback; how fast PING answers under the same load is bench/many_clients.py's to measure."""

from __future__ import annotations

import resource
import socket
import threading

import pytest

from support.resp import ConnectionClosed, encode_command
from support.server import wait_for

CONNECTIONS = 10_000


def fresh_ping(server):
    with server.raw(timeout=10) as conn:
        assert conn.call("PING").raw == b"+PONG\r\n"


def info_int(server, section, field) -> int:
    return int(server.info(section)[field])


@pytest.fixture
def many_files():
    """Room for ten thousand sockets in this process, given back afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = CONNECTIONS + 1000
    if hard != resource.RLIM_INFINITY and hard < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        wanted = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield wanted
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_ten_thousand_connections(make_server, many_files):
    assert many_files > CONNECTIONS, "the test process cannot hold ten thousand sockets"
    server = make_server(options={"maxclients": CONNECTIONS + 100})
    sockets = []
    try:
        for _ in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sockets.append(s)
        fresh_ping(server)
        assert info_int(server, "clients", "connected_clients") == CONNECTIONS + 1
        # Every thousandth of them is served, in the order asked.
        for i, s in enumerate(sockets[::1000]):
            s.sendall(encode_command("INCR", "seen"))
        for i, s in enumerate(sockets[::1000]):
            assert s.recv(64) == b":%d\r\n" % (i + 1)
    finally:
        for s in sockets:
            s.close()
    fresh_ping(server)


def test_readers_that_never_read_meet_the_output_limit(make_server):
    server = make_server()
    with server.raw() as admin:
        admin.call("CONFIG", "SET", "client-output-buffer-limit", "normal 4mb 2mb 10")
        admin.call("SET", "big", "x" * (1 << 20))
    before = info_int(server, "stats", "client_output_buffer_limit_disconnections")
    slow = []
    for _ in range(20):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.sendall(encode_command("GET", "big") * 64)   # 64 MB of replies nobody reads
        slow.append(s)
    fresh_ping(server)
    # Each one passes the 4 MB hard limit and is closed.
    wait_for(lambda: info_int(server, "stats", "client_output_buffer_limit_disconnections") - before == 20,
             timeout=30, what="the 20 readers to be closed")
    assert info_int(server, "clients", "connected_clients") == 1   # the INFO connection itself
    for s in slow:
        s.close()
    assert info_int(server, "memory", "used_memory") < 64 << 20


def test_half_closed_clients_are_served_and_released(make_server):
    server = make_server()
    for i in range(50):
        s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        s.sendall(encode_command("INCR", "half"))
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(64):
            data += chunk
        assert data in (b":%d\r\n" % (i + 1), b""), data
        s.close()
    with server.raw() as conn:
        assert int(conn.call("GET", "half").value) == 50   # every INCR that arrived was applied
        assert b"connected_clients:1\r\n" in conn.call("INFO", "clients").value
    fresh_ping(server)


def test_a_million_pipelined_commands(server, r):
    count = 1_000_000
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    request = encode_command("INCR", "pipelined")
    received = bytearray()
    expected = sum(len(b":%d\r\n" % i) for i in range(1, count + 1))

    def read_all():
        while len(received) < expected:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            received.extend(chunk)

    reader = threading.Thread(target=read_all)
    reader.start()
    batch = request * 10_000
    for _ in range(count // 10_000):
        s.sendall(batch)
    reader.join(timeout=120)
    assert not reader.is_alive(), f"only {len(received)} of {expected} reply bytes arrived"
    s.close()
    assert len(received) == expected
    assert received.endswith(b":%d\r\n" % count)
    assert r.get("pipelined") == b"%d" % count
    fresh_ping(server)


def test_a_512_megabyte_bulk(server, r):
    size = 512 << 20   # proto-max-bulk-len's default, the largest bulk a client may send
    with server.raw(timeout=120) as conn:
        conn.send(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % size)
        chunk = b"y" * (8 << 20)
        for _ in range(size // len(chunk)):
            conn.send(chunk)
        conn.send(b"\r\n")
        assert conn.read_reply(timeout=120).raw == b"+OK\r\n"
        assert conn.call("STRLEN", "big").raw == b":%d\r\n" % size
        assert conn.call("GETRANGE", "big", size - 3, -1).raw == b"$3\r\nyyy\r\n"
        conn.send(b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % (size + 1))
        assert conn.read_reply().raw == b"-ERR Protocol error: invalid bulk length\r\n"
        with pytest.raises(ConnectionClosed):
            conn.read_reply(timeout=10)
    r.delete("big")
    fresh_ping(server)


def test_the_query_buffer_limit_closes_a_client_that_passes_it(make_server):
    server = make_server()
    with server.raw() as admin:
        admin.call("CONFIG", "SET", "client-query-buffer-limit", "1mb")
    before = info_int(server, "stats", "client_query_buffer_limit_disconnections")
    with server.raw() as conn:
        # A bulk announced at 4 MB whose bytes keep coming: the request never completes, and
        # the server stops buffering it at the limit.
        conn.send(b"*2\r\n$3\r\nGET\r\n$%d\r\n" % (4 << 20))
        with pytest.raises((ConnectionClosed, BrokenPipeError, ConnectionResetError)):
            for _ in range(64):
                conn.send(b"z" * (64 << 10))
            conn.read_reply(timeout=10)
    assert info_int(server, "stats", "client_query_buffer_limit_disconnections") == before + 1
    fresh_ping(server)
