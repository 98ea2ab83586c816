"""Connection commands: PING ECHO QUIT HELLO AUTH RESET SELECT CLIENT (ID SETNAME GETNAME LIST INFO
KILL SETINFO NO-EVICT REPLY)."""

import pytest
import redis

from support.expect import SYNTAX, arity, bulk, err, integer, nil, ok, run_steps, simple
from support.server import wait_for

CLIENT_NAME_ERROR = err("ERR Client names cannot contain spaces, newlines or special characters.")


def parse_client_line(line: bytes) -> dict:
    fields = {}
    for item in line.decode().strip().split(" "):
        k, _, v = item.partition("=")
        fields[k] = v
    return fields


def client_info(conn) -> dict:
    reply = conn.call("CLIENT", "INFO")
    assert reply.kind in "$=" and reply.value.endswith(b"\n"), reply
    return parse_client_line(reply.value)


def test_ping_echo(raw):
    run_steps(raw, [("PING", simple("PONG")), ("PING hello", bulk("hello")), ("ping", simple("PONG")),
                    ("ECHO hi", bulk("hi")), ("ECHO ''", bulk("")),
                    ("PING a b", arity("ping")), ("ECHO", arity("echo")), ("ECHO a b", arity("echo"))])
    assert raw.call("ECHO", b"\x00\r\n\xff").raw == bulk(b"\x00\r\n\xff")


def test_quit_replies_ok_and_closes(server, r):
    conn = server.raw()
    conn.send(b"*1\r\n$4\r\nQUIT\r\n*1\r\n$4\r\nPING\r\n")
    data = conn.read_until_closed(timeout=10)
    assert data == ok, "QUIT answers +OK and nothing after it runs"
    conn.close()
    assert r.ping()


def test_hello_2_and_3(raw):
    reply = raw.call("HELLO", "2")
    assert reply.kind == "*"
    fields = reply.py()
    hello = dict(zip(fields[::2], fields[1::2]))
    assert hello[b"server"] == b"redis"
    assert hello[b"proto"] == 2
    assert hello[b"mode"] == b"standalone"
    assert hello[b"role"] == b"master"
    assert hello[b"modules"] == []
    assert isinstance(hello[b"id"], int) and hello[b"id"] == raw.call("CLIENT", "ID").value
    assert hello[b"version"].count(b".") == 2
    assert list(hello) == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]

    reply = raw.call("HELLO", "3")
    assert reply.kind == "%", "HELLO 3 answers with a RESP3 map"
    hello = reply.py()
    assert hello[b"proto"] == 3
    assert list(hello) == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
    assert raw.call("GET", "missing").raw == b"_\r\n"
    assert raw.call("HELLO").kind == "%", "HELLO without arguments keeps the protocol"
    assert raw.call("HELLO", "2").kind == "*"
    assert raw.call("GET", "missing").raw == nil


@pytest.mark.redis72
def test_hello_reports_redis_72_version(raw):
    hello = raw.call("HELLO", "3").py()
    major, minor, _ = hello[b"version"].split(b".")
    assert (int(major), int(minor)) >= (7, 2)


def test_hello_errors(raw):
    run_steps(raw, [
        ("HELLO 4", err("NOPROTO unsupported protocol version")),
        ("HELLO 1", err("NOPROTO unsupported protocol version")),
        ("HELLO abc", err("ERR Protocol version is not an integer or out of range")),
        ("HELLO 2 FOO", err("ERR Syntax error in HELLO option 'FOO'")),
        ("HELLO 3 SETNAME 'a b'", CLIENT_NAME_ERROR),
        ("HELLO 3 AUTH default", err("ERR Syntax error in HELLO option 'AUTH'")),
        ("GET missing", nil),  # failed HELLO calls did not switch the protocol
    ])


def test_hello_setname(raw):
    reply = raw.call("HELLO", "3", "SETNAME", "conn-a")
    assert reply.kind == "%"
    assert raw.call("CLIENT", "GETNAME").raw == bulk("conn-a")
    assert client_info(raw)["resp"] == "3"


def test_auth_without_password_configured(raw):
    run_steps(raw, [
        ("AUTH secret", err("ERR AUTH <password> called without any password configured for the default "
                            "user. Are you sure your configuration is correct?")),
        ("AUTH default anything", ok),
        ("AUTH nosuchuser pw", err("WRONGPASS invalid username-password pair or user is disabled.")),
        ("AUTH", arity("auth")), ("AUTH a b c", SYNTAX),
    ])


def test_requirepass_auth_and_hello(make_server):
    srv = make_server(options={"requirepass": "s3cret"}, password="s3cret")
    with srv.raw() as conn:
        run_steps(conn, [
            ("PING", err("NOAUTH Authentication required.")),
            ("GET k", err("NOAUTH Authentication required.")),
            ("AUTH wrong", err("WRONGPASS invalid username-password pair or user is disabled.")),
            ("AUTH default wrong", err("WRONGPASS invalid username-password pair or user is disabled.")),
            ("HELLO 3 AUTH default wrong", err("WRONGPASS invalid username-password pair or user is disabled.")),
            ("PING", err("NOAUTH Authentication required.")),
            ("AUTH s3cret", ok), ("PING", simple("PONG")), ("SET k v", ok),
        ])
    with srv.raw() as conn:
        reply = conn.call("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "myapp")
        assert reply.kind == "%" and reply.py()[b"proto"] == 3, reply
        assert conn.call("GET", "k").raw == bulk("v")
        assert conn.call("CLIENT", "GETNAME").raw == bulk("myapp")
    with srv.raw() as conn:
        reply = conn.call("HELLO", "2", "AUTH", "default", "s3cret")
        assert reply.kind == "*"
        assert conn.call("GET", "k").raw == bulk("v")
    # redis-py authenticates with AUTH on connect.
    client = srv.client()
    assert client.get("k") == b"v"
    client.close()
    bad = srv.client(password="nope")
    with pytest.raises((redis.AuthenticationError, redis.ResponseError), match="WRONGPASS|invalid"):
        bad.ping()
    bad.close()
    # The password can be changed at runtime.
    with srv.raw() as conn:
        run_steps(conn, [("AUTH s3cret", ok), ("CONFIG SET requirepass other", ok),
                         ("CONFIG GET requirepass", lambda x: x.py() == [b"requirepass", b"other"])])
    with srv.raw() as conn:
        run_steps(conn, [("AUTH s3cret", err("WRONGPASS invalid username-password pair or user is disabled.")),
                         ("AUTH other", ok)])


def test_unauthenticated_clients_get_small_limits(make_server):
    srv = make_server(options={"requirepass": "pw"}, password="pw")
    with srv.raw() as conn:
        conn.send(b"*20\r\n")
        data = conn.read_until_closed(timeout=10)
        assert data == err("ERR Protocol error: unauthenticated multibulk length")
    with srv.raw() as conn:
        conn.send(b"*1\r\n$100000\r\n")
        data = conn.read_until_closed(timeout=10)
        assert data == err("ERR Protocol error: unauthenticated bulk length")
    with srv.raw() as conn:
        assert conn.call("AUTH", "pw").raw == ok


def test_reset(raw, server):
    run_steps(raw, [("SELECT 3", ok), ("SET k v", ok), ("CLIENT SETNAME before", ok),
                    ("HELLO 3", None), ("RESET", simple("RESET"))])
    run_steps(raw, [("GET k", nil), ("CLIENT GETNAME", nil), ("SELECT 3", ok), ("GET k", bulk("v")),
                    ("RESET x", arity("reset"))])
    assert client_info(raw)["resp"] == "2"


def test_reset_deauthenticates(make_server):
    srv = make_server(options={"requirepass": "pw"}, password="pw")
    with srv.raw() as conn:
        run_steps(conn, [("AUTH pw", ok), ("PING", simple("PONG")), ("RESET", simple("RESET")),
                         ("PING", err("NOAUTH Authentication required."))])


def test_client_id_setname_getname(raw, server):
    first = raw.call("CLIENT", "ID")
    assert first.kind == ":" and first.value > 0
    with server.raw() as other:
        second = other.call("CLIENT", "ID").value
    assert second > first.value, "client ids increase"
    run_steps(raw, [
        ("CLIENT GETNAME", nil), ("CLIENT SETNAME worker-1", ok), ("CLIENT GETNAME", bulk("worker-1")),
        ("CLIENT SETNAME 'a b'", CLIENT_NAME_ERROR), ("CLIENT GETNAME", bulk("worker-1")),
        ("CLIENT SETNAME ''", ok), ("CLIENT GETNAME", nil),
        ("CLIENT ID x", arity("client|id")), ("CLIENT SETNAME", arity("client|setname")),
        ("CLIENT FOO", err("ERR unknown subcommand 'FOO'. Try CLIENT HELP.")),
    ])
    assert raw.call("CLIENT", "SETNAME", "bad\nname").raw == CLIENT_NAME_ERROR


def test_client_info_and_list_fields(raw, server):
    raw.call("CLIENT", "SETNAME", "lister")
    raw.call("SELECT", 2)
    my_id = raw.call("CLIENT", "ID").value
    info = client_info(raw)
    for field in ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub", "psub", "multi",
                  "qbuf", "qbuf-free", "argv-mem", "obl", "oll", "omem", "tot-mem", "events", "cmd", "user",
                  "redir", "resp"):
        assert field in info, f"CLIENT INFO lacks {field}: {info}"
    assert info["id"] == str(my_id)
    assert info["name"] == "lister"
    assert info["db"] == "2"
    assert info["cmd"] == "client|info"
    assert info["user"] == "default"
    assert info["resp"] == "2"
    assert info["addr"].startswith("127.0.0.1:")
    assert info["laddr"] == f"127.0.0.1:{server.port}"

    with server.raw() as other:
        other.call("CLIENT", "SETNAME", "other")
        listing = raw.call("CLIENT", "LIST")
        assert listing.kind in "$="
        lines = [parse_client_line(line) for line in listing.value.splitlines() if line]
        assert listing.value.endswith(b"\n")
        by_name = {c["name"]: c for c in lines}
        assert by_name["lister"]["id"] == str(my_id)
        assert by_name["lister"]["cmd"] == "client|list"
        assert "other" in by_name
        only_me = raw.call("CLIENT", "LIST", "ID", my_id).value.splitlines()
        assert len(only_me) == 1 and parse_client_line(only_me[0])["name"] == "lister"
        normal = raw.call("CLIENT", "LIST", "TYPE", "normal").value
        assert b"name=lister " in normal and b"name=other " in normal
        assert raw.call("CLIENT", "LIST", "TYPE", "pubsub").raw == bulk("")
    run_steps(raw, [("CLIENT LIST TYPE foo", err("ERR Unknown client type 'foo'")),
                    ("CLIENT LIST ID x", err("ERR Invalid client ID")),
                    ("CLIENT LIST FOO", SYNTAX), ("CLIENT INFO x", arity("client|info"))])


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_client_list_counts_the_unsent_replies(server, reference_server, kind):
    """A subscriber that reads nothing: its unsent messages past the first 16 KB show in oll and omem, as Redis's
    reply list does (monitoring reads them to find slow consumers)."""
    srv = server if kind == "goblin" else reference_server
    with srv.raw() as reader, srv.raw() as publisher:
        reader.call("CLIENT", "SETNAME", "stuck")
        reader.call("SUBSCRIBE", "news")
        message = "x" * 100_000
        for _ in range(100):  # 10 MB: more than the two sockets' buffers hold
            publisher.call("PUBLISH", "news", message)
        fields = parse_client_line(publisher.call("CLIENT", "LIST", "TYPE", "pubsub").value.splitlines()[0])
        assert fields["name"] == "stuck"
        assert int(fields["obl"]) <= 16 * 1024
        assert int(fields["oll"]) > 0 and int(fields["omem"]) > 1_000_000, fields
        idle = parse_client_line(publisher.call("CLIENT", "INFO").value.splitlines()[0])
        assert (idle["obl"], idle["oll"], idle["omem"]) == ("0", "0", "0")


def test_client_info_over_unix_socket(server, r):
    with server.raw(unix=True) as conn:
        info = client_info(conn)
        assert info["flags"] == "U", info
        assert info["laddr"].startswith(server.unix_path), info  # Redis prints "<path>:0"


def test_client_kill(raw, server):
    victim = server.raw()
    victim_id = victim.call("CLIENT", "ID").value
    assert raw.call("CLIENT", "KILL", "ID", victim_id).raw == integer(1)
    assert victim.read_until_closed(timeout=10) == b""
    victim.close()

    victim = server.raw()
    addr = client_info(victim)["addr"]
    assert raw.call("CLIENT", "KILL", addr).raw == ok, "old-style CLIENT KILL addr"
    assert victim.read_until_closed(timeout=10) == b""
    victim.close()

    victim = server.raw()
    addr = client_info(victim)["addr"]
    assert raw.call("CLIENT", "KILL", "ADDR", addr, "SKIPME", "yes").raw == integer(1)
    assert victim.read_until_closed(timeout=10) == b""
    victim.close()

    run_steps(raw, [
        ("CLIENT KILL 1.2.3.4:5", err("ERR No such client")),
        ("CLIENT KILL ID 999999999", integer(0)),
        ("CLIENT KILL ID 0", err("ERR client-id should be greater than 0")),
        ("CLIENT KILL USER nosuchuser", err("ERR No such user 'nosuchuser'")),
        ("CLIENT KILL FOO bar", SYNTAX),
        ("CLIENT KILL", arity("client|kill")),
    ])
    # A client may kill itself when SKIPME is no: it gets the reply, then the connection closes.
    my_id = raw.call("CLIENT", "ID").value
    raw.send_command("CLIENT", "KILL", "ID", my_id, "SKIPME", "no")
    assert raw.read_until_closed(timeout=10) == integer(1)


def test_client_no_evict(raw):
    run_steps(raw, [("CLIENT NO-EVICT on", ok), ("CLIENT NO-EVICT off", ok),
                    ("CLIENT NO-EVICT maybe", SYNTAX)])
    raw.call("CLIENT", "NO-EVICT", "on")
    assert "e" in client_info(raw)["flags"]


def test_client_reply_off_on_skip(raw):
    raw.send(b"CLIENT REPLY OFF\r\nSET a 1\r\nPING\r\nCLIENT REPLY ON\r\nGET a\r\n")
    assert raw.read_reply().raw == ok, "the first reply after OFF is the +OK of CLIENT REPLY ON"
    assert raw.read_reply().raw == bulk("1"), "commands still ran while replies were off"
    raw.send(b"CLIENT REPLY SKIP\r\nSET b 2\r\nGET b\r\n")
    assert raw.read_reply().raw == bulk("2"), "SKIP hides its own reply and the next one"
    assert not raw.has_pending_bytes(wait=0.2)
    assert raw.call("CLIENT", "REPLY", "maybe").raw == SYNTAX


@pytest.mark.redis72
def test_client_setinfo(raw):
    run_steps(raw, [("CLIENT SETINFO lib-name redis-py", ok), ("CLIENT SETINFO LIB-VER 5.0.1", ok)])
    info = client_info(raw)
    assert info["lib-name"] == "redis-py"
    assert info["lib-ver"] == "5.0.1"
    listing = raw.call("CLIENT", "LIST", "ID", raw.call("CLIENT", "ID").value).value
    assert b" lib-name=redis-py lib-ver=5.0.1" in listing
    run_steps(raw, [("CLIENT SETINFO foo x", err("ERR Unrecognized option 'foo'")),
                    ("CLIENT SETINFO lib-name", arity("client|setinfo"))])
    bad = raw.call("CLIENT", "SETINFO", "lib-name", "a b")
    assert bad.is_error and bad.value.startswith(b"ERR lib-name cannot contain spaces"), bad
    assert client_info(raw)["lib-name"] == "redis-py"


def test_select_is_per_connection(raw, server):
    run_steps(raw, [("SELECT 1", ok), ("SET k one", ok)])
    with server.raw() as other:
        run_steps(other, [("GET k", nil), ("SELECT 1", ok), ("GET k", bulk("one"))])


def query_buffer_of(r, name) -> tuple[int, int]:
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split())
        if fields["name"] == name:
            return int(fields["qbuf"]), int(fields["qbuf-free"])
    raise AssertionError(f"no client named {name}")


def test_idle_client_gives_back_its_query_buffer_room(server, r):
    """Redis's rule: a client idle for over 2 s keeps only the bytes it has sent; the request
    it is in the middle of completes unharmed afterwards."""
    sender = server.raw()
    try:
        sender.call("CLIENT", "SETNAME", "sender")
        value = bytes(range(256)) * 4096  # 1 MiB
        head = b"*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n" % len(value)
        sent = head + value[:300000]
        sender.send(sent)
        wait_for(lambda: query_buffer_of(r, "sender")[0] == len(sent), what="the partial request read")
        assert query_buffer_of(r, "sender")[1] > 4096  # room reserved for the rest of the bulk
        wait_for(lambda: query_buffer_of(r, "sender") == (len(sent), 0), timeout=15,
                 what="the idle client's buffer cut to its pending bytes")
        sender.send(value[300000:] + b"\r\n")
        assert sender.read_reply(timeout=10).raw == b"+OK\r\n"
        assert r.get("big") == value
        # Idle again with nothing pending: the buffer goes.
        wait_for(lambda: query_buffer_of(r, "sender") == (0, 0), timeout=15,
                 what="the idle client's empty buffer released")
    finally:
        sender.close()
