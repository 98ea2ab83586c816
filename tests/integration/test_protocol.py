"""The wire: inline commands, pipelining, RESP3, the Unix socket, and bad input.

Bad input gets Redis's `-ERR Protocol error: ...` and that connection is
closed (or, for a 1 MB inline line, either that or a correct answer); the server never
crashes or hangs, and a client connected beforehand keeps working.
"""

import socket
import time

import pytest

from support.expect import bulk, bulks, err, integer, nil, ok, simple
from support.resp import encode_command


@pytest.fixture
def bystander(server, r):
    """A client connected before the bad input; it must be unaffected afterwards."""
    conn = server.raw()
    conn.call("SELECT", 9)
    conn.call("SET", "bystander", "still here")
    yield conn
    assert conn.call("GET", "bystander").raw == bulk("still here"), "another client's bad input hurt this one"
    assert conn.call("DEL", "bystander").raw == integer(1)
    conn.close()
    with server.raw() as fresh:
        assert fresh.call("PING").raw == simple("PONG"), "the server no longer accepts clients"


PROTOCOL_ERRORS = {
    "multibulk-length-not-a-number": (b"*abc\r\n", "invalid multibulk length"),
    "multibulk-length-too-large": (b"*99999999999\r\n", "invalid multibulk length"),
    "multibulk-length-over-int-max": (b"*2147483648\r\n", "invalid multibulk length"),
    "bulk-length-not-a-number": (b"*1\r\n$abc\r\n", "invalid bulk length"),
    "bulk-length-negative": (b"*1\r\n$-5\r\n", "invalid bulk length"),
    "bulk-length-minus-one": (b"*1\r\n$-1\r\n", "invalid bulk length"),
    "bulk-length-huge": (b"*1\r\n$999999999999\r\n", "invalid bulk length"),
    "bulk-length-over-proto-max-bulk-len": (b"*1\r\n$536870913\r\n", "invalid bulk length"),
    "expected-dollar": (b"*1\r\nfoo\r\n", "expected '$', got 'f'"),
    "integer-instead-of-bulk": (b"*1\r\n:5\r\n", "expected '$', got ':'"),
    "unbalanced-quotes": (b'SET "a b\r\n', "unbalanced quotes in request"),
    "quote-followed-by-text": (b'SET k "a"b\r\n', "unbalanced quotes in request"),
    "inline-line-too-long": (b"a" * 70000, "too big inline request"),
    "multibulk-count-line-too-long": (b"*" + b"1" * 70000, "too big mbulk count string"),
    "bulk-count-line-too-long": (b"*1\r\n$" + b"1" * 70000, "too big bulk count string"),
}


@pytest.mark.parametrize("name", PROTOCOL_ERRORS)
def test_protocol_errors_reply_and_close(server, bystander, name):
    data, message = PROTOCOL_ERRORS[name]
    with server.raw() as conn:
        conn.call("PING")
        conn.send(data)
        received = conn.read_until_closed(timeout=10)
    assert received == err("ERR Protocol error: " + message)


def test_commands_before_a_protocol_error_still_run(server, bystander):
    with server.raw() as conn:
        conn.send(encode_command("SET", "before", "1") + b"*1\r\n$x\r\n" + encode_command("SET", "after", "1"))
        received = conn.read_until_closed(timeout=10)
    assert received == ok + err("ERR Protocol error: invalid bulk length")
    with server.raw() as check:
        assert check.call("MGET", "before", "after").raw == bulks("1", None)


def test_empty_and_negative_multibulk_are_ignored(raw, bystander):
    raw.send(b"*0\r\n*-1\r\n*-10\r\nPING\r\n")
    assert raw.read_reply().raw == simple("PONG")
    assert not raw.has_pending_bytes(wait=0.1)


def test_one_megabyte_inline_line(server, bystander):
    value = b"a" * (1 << 20)
    with server.raw() as conn:
        conn.send(b"SET big " + value + b"\r\nGET big\r\n")
        first = conn.read_reply(timeout=20)
        if first.is_error:
            assert first.raw == err("ERR Protocol error: too big inline request")
            assert conn.read_until_closed(timeout=10) == b""
            with server.raw() as check:
                assert check.call("EXISTS", "big").raw == integer(0)
        else:
            assert first.raw == ok
            assert conn.read_reply(timeout=20).value == value


def test_inline_commands(raw, bystander):
    raw.send(b"PING\r\nPING\n   PING  \r\n\r\n\r\nSET k \"a\\x41\\n\"\r\nGET k\r\nSET k 'a b'\r\nGET k\r\n"
             b"ECHO \"\"\r\nset lower case\r\nGET lower\r\n")
    replies = raw.read_replies(10)
    assert [x.raw for x in replies] == [simple("PONG"), simple("PONG"), simple("PONG"), ok, bulk(b"aA\n"), ok,
                                        bulk("a b"), bulk(""), ok, bulk("case")]
    assert not raw.has_pending_bytes(wait=0.1)


def test_inline_and_multibulk_mixed_in_one_write(raw):
    raw.send(b"SET a 1\r\n" + encode_command("INCR", "a") + b"GET a\r\n" + encode_command("GET", "a"))
    assert [x.raw for x in raw.read_replies(4)] == [ok, integer(2), bulk("2"), bulk("2")]


def test_unknown_commands(raw):
    assert raw.call("NOSUCHCMD").raw == err("ERR unknown command 'NOSUCHCMD', with args beginning with: ")
    assert raw.call("nosuchcmd", "a", "b").raw == err(
        "ERR unknown command 'nosuchcmd', with args beginning with: 'a' 'b' ")
    assert raw.call("").raw == err("ERR unknown command '', with args beginning with: ")
    raw.send(b"$3\r\nfoo\r\n")
    assert [x.raw for x in raw.read_replies(2)] == [
        err("ERR unknown command '$3', with args beginning with: "),
        err("ERR unknown command 'foo', with args beginning with: ")]
    assert raw.call("PING").raw == simple("PONG")


def test_ten_thousand_pipelined_commands_in_one_write(raw):
    commands = []
    for i in range(10000):
        if i % 3 == 0:
            commands.append(("INCR", "counter"))
        elif i % 3 == 1:
            commands.append(("SET", f"key:{i}", f"value:{i}"))
        else:
            commands.append(("GET", f"key:{i - 1}"))
    payload = b"".join(encode_command(*c) for c in commands)
    raw.send(payload)
    replies = raw.read_replies(len(commands), timeout=60)
    counter = 0
    for i, (command, reply) in enumerate(zip(commands, replies)):
        if i % 3 == 0:
            counter += 1
            assert reply.raw == integer(counter), (i, reply)
        elif i % 3 == 1:
            assert reply.raw == ok, (i, reply)
        else:
            assert reply.raw == bulk(f"value:{i - 1}"), (i, reply)
    assert not raw.has_pending_bytes(wait=0.1)
    assert raw.call("DBSIZE").raw == integer(1 + 3333)


def test_pipelined_inline_commands(raw):
    raw.send(b"INCR n\r\n" * 5000)
    replies = raw.read_replies(5000, timeout=60)
    assert [x.value for x in replies] == list(range(1, 5001))


def test_binary_safe_keys_and_values_over_raw_protocol(raw):
    keys = [b"\x00", b"\r\n", b"key with spaces", bytes(range(256)), b"*1\r\n$4\r\nPING\r\n", b"\xff\xfe"]
    for i, key in enumerate(keys):
        value = key * 3 + bytes([i])
        assert raw.call("SET", key, value).raw == ok
        assert raw.call("GET", key).raw == bulk(value)
        assert raw.call("STRLEN", key).raw == integer(len(value))
    listed = sorted(x.value for x in raw.call("KEYS", "*").value)
    assert listed == sorted(keys)
    assert raw.call("ECHO", bytes(range(256))).raw == bulk(bytes(range(256)))


def test_split_writes_are_reassembled(raw):
    payload = encode_command("SET", "split", b"x" * 1000) + encode_command("GET", "split")
    for i in range(len(payload)):
        raw.send(payload[i:i + 1])
    assert raw.read_reply().raw == ok
    assert raw.read_reply().raw == bulk(b"x" * 1000)


def test_client_disconnects_mid_command(server, bystander):
    partial = [
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nab",                # inside a bulk
        b"*3\r\n$3\r\nSET\r\n$1\r\nk",                            # inside a bulk, no CRLF
        b"*3\r\n$3\r\nSET\r\n",                                    # between arguments
        b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$104857600\r\n" + b"x" * 100000,  # a 100 MB bulk, barely started
        b"*100000\r\n",                                            # a huge argument count
        b"SET k v",                                                 # inline without newline
    ]
    for data in partial:
        conn = server.raw()
        conn.send(data)
        conn.close()
    with server.raw() as check:
        assert check.call("EXISTS", "k").raw == integer(0), "a half-sent command must not run"
        assert check.call("PING").raw == simple("PONG")


def test_client_disconnects_before_reading_a_big_reply(server, r, bystander):
    r.set("big", b"z" * (8 << 20))
    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(encode_command("GET", "big") * 4)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # with linger 0: a reset while the server writes
    assert r.strlen("big") == 8 << 20


def test_stalled_client_does_not_block_others(server, r):
    r.set("k", "v")
    stalled = server.raw()
    stalled.send(b"*2\r\n$3\r\nGET\r\n")
    with server.raw() as other:
        t0 = time.monotonic()
        assert other.call("PING").raw == simple("PONG")
        assert time.monotonic() - t0 < 2
    stalled.send(b"$1\r\nk\r\n")
    assert stalled.read_reply().raw == bulk("v")
    stalled.close()


def test_many_concurrent_connections(server, r):
    conns = [server.raw() for _ in range(100)]
    for i, c in enumerate(conns):
        c.send_command("INCR", "hits")
    values = sorted(c.read_reply().value for c in conns)
    assert values == list(range(1, 101))
    for c in conns:
        c.close()


def test_large_multi_bulk_reply(raw):
    raw.pipeline([("SET", f"k{i}", b"v" * 1000) for i in range(1000)])
    reply = raw.call("MGET", *[f"k{i}" for i in range(1000)], "missing", timeout=30)
    assert len(reply.value) == 1001
    assert all(e.value == b"v" * 1000 for e in reply.value[:1000])
    assert reply.value[1000].raw == nil


# ---- RESP3 -----------------------------------------------------------------------------------------

def test_resp3_reply_types(raw):
    hello = raw.call("HELLO", "3")
    assert hello.kind == "%"
    assert raw.call("GET", "missing").raw == b"_\r\n"
    assert raw.call("SET", "k", "v").raw == ok
    assert raw.call("SET", "k2", "v", "GET").raw == b"_\r\n"
    assert raw.call("MGET", "k", "missing").raw == b"*2\r\n$1\r\nv\r\n_\r\n"
    assert raw.call("INCRBYFLOAT", "f", "1.5").raw == bulk("1.5")
    assert raw.call("TTL", "k").raw == integer(-1)
    assert raw.call("EXISTS", "k").raw == integer(1)
    config = raw.call("CONFIG", "GET", "hz")
    assert config.raw == b"%1\r\n$2\r\nhz\r\n$2\r\n10\r\n"
    info = raw.call("INFO", "server")
    assert info.kind == "=" and info.value.startswith(b"txt:# Server\r\n")
    client_info = raw.call("CLIENT", "INFO")
    assert client_info.kind == "=" and client_info.value.startswith(b"txt:id=")
    scan = raw.call("SCAN", "0")
    assert scan.kind == "*" and scan.value[0].kind == "$" and scan.value[1].kind == "*"
    assert raw.call("OBJECT", "ENCODING", "missing").raw == b"_\r\n"
    assert raw.call("COMMAND", "DOCS", "get").kind == "%"
    assert raw.call("MEMORY", "STATS").kind == "%"
    assert raw.call("NOSUCH").raw == err("ERR unknown command 'NOSUCH', with args beginning with: ")


def test_resp3_over_unix_socket(server, r):
    with server.raw(unix=True) as conn:
        assert conn.call("HELLO", "3").kind == "%"
        assert conn.call("GET", "nothing").raw == b"_\r\n"
        assert conn.call("HELLO", "2").kind == "*"
        assert conn.call("GET", "nothing").raw == nil


# ---- Unix socket ------------------------------------------------------------------------------------

def test_unix_socket_with_redis_py(server, r):
    client = server.client(unix=True)
    assert client.ping()
    client.set("via-unix", "yes")
    assert r.get("via-unix") == b"yes", "the Unix socket and TCP serve the same data"
    pipe = client.pipeline(transaction=False)
    for i in range(1000):
        pipe.incr("unix-counter")
    assert pipe.execute()[-1] == 1000
    client.close()
