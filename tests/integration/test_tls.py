"""TLS on tls-port as Redis speaks it: clients with redis-py, redis-cli and redis-benchmark,
mutual TLS (tls-auth-clients yes, optional, no), peers that never handshake or send garbage,
certificates changed with CONFIG SET, and refusals at startup."""

import os
import socket
import ssl
import subprocess
import threading
import time

import pytest
import redis

from support.node import run_node_script
from support.server import ServerProcess, free_port, parse_info


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(directory, name):
    openssl("genrsa", "-out", f"{name}.key", "2048", cwd=directory)
    openssl("req", "-x509", "-new", "-nodes", "-sha256", "-key", f"{name}.key", "-days", "30",
            "-subj", f"/O=Goblin Test/CN={name}", "-out", f"{name}.crt", cwd=directory)


def make_cert(directory, name, ca, days=30):
    """A key and a certificate signed by `ca`; with days=0 it expires the moment it is made."""
    openssl("genrsa", "-out", f"{name}.key", "2048", cwd=directory)
    csr = subprocess.run(["openssl", "req", "-new", "-sha256", "-subj", f"/O=Goblin Test/CN={name}",
                          "-key", f"{name}.key"], cwd=directory, check=True, capture_output=True).stdout
    subprocess.run(["openssl", "x509", "-req", "-sha256", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
                    "-CAcreateserial", "-days", str(days), "-out", f"{name}.crt"],
                   input=csr, cwd=directory, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tls")
    make_ca(directory, "ca")
    make_ca(directory, "other-ca")
    make_cert(directory, "server", "ca")
    make_cert(directory, "server2", "ca")
    make_cert(directory, "client", "ca")
    make_cert(directory, "stranger", "other-ca")
    make_cert(directory, "expired", "ca", days=0)
    return {name: str(directory / name) for name in
            ("ca.crt", "server.crt", "server.key", "server2.crt", "server2.key", "client.crt",
             "client.key", "stranger.crt", "stranger.key", "expired.crt", "expired.key")}


def tls_options(certs, **more):
    options = {"tls-port": free_port(), "tls-cert-file": certs["server.crt"],
               "tls-key-file": certs["server.key"], "tls-ca-cert-file": certs["ca.crt"]}
    options.update(more)
    return options


@pytest.fixture
def tls_server(server_binary, certs):
    srv = ServerProcess(server_binary, name="goblin-tls", options=tls_options(certs)).start()
    yield srv
    srv.stop()


def tls_port(srv):
    return int(srv.options["tls-port"])


def tls_client(srv, certs, cert="client", **kwargs):
    if cert is not None:
        kwargs.update(ssl_certfile=certs[f"{cert}.crt"], ssl_keyfile=certs[f"{cert}.key"])
    return redis.Redis(port=tls_port(srv), ssl=True, ssl_ca_certs=certs["ca.crt"], socket_timeout=15,
                       **kwargs)


def raw_tls(srv, certs, cert="client", protocol=None, host="127.0.0.1", port=None):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(certs["ca.crt"])
    context.check_hostname = False
    if protocol is not None:
        context.minimum_version = context.maximum_version = protocol
    if cert is not None:
        context.load_cert_chain(certs[f"{cert}.crt"], certs[f"{cert}.key"])
    sock = socket.create_connection((host, port or tls_port(srv)), timeout=10)
    return context.wrap_socket(sock)


def read_until(sock, marker: bytes, limit=1 << 20) -> bytes:
    data = b""
    while marker not in data and len(data) < limit:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_commands_pipelines_large_values_and_pubsub_over_tls(tls_server, certs):
    r = tls_client(tls_server, certs)
    assert r.ping()
    big = os.urandom(5 * 1024 * 1024)  # many TLS records each way
    r.set("big", big)
    assert r.get("big") == big
    pipe = r.pipeline(transaction=False)
    for i in range(20000):
        pipe.set(f"k{i}", i)
    assert all(pipe.execute())
    assert r.dbsize() == 20001
    assert r.mget([f"k{i}" for i in range(0, 20000, 1000)]) == [str(i).encode() for i in range(0, 20000, 1000)]
    sub = tls_client(tls_server, certs).pubsub()
    sub.subscribe("news")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    assert r.publish("news", "hello") == 1
    message = sub.get_message(timeout=5)
    assert message["data"] == b"hello"
    # The plain port and the Unix socket still speak plain RESP.
    assert tls_server.client().get("k7") == b"7"
    assert tls_server.client(unix=True).get("k7") == b"7"


def test_resp3_pushes_and_blocking_commands_over_tls(tls_server, certs):
    sock = raw_tls(tls_server, certs)
    sock.sendall(b"HELLO 3\r\n")
    assert read_until(sock, b"modules").startswith(b"%7\r\n")
    sock.sendall(b"SUBSCRIBE ch\r\n")
    assert read_until(sock, b":1\r\n").startswith(b">3\r\n$9\r\nsubscribe\r\n")
    tls_client(tls_server, certs).publish("ch", "pushed")
    assert b"$6\r\npushed\r\n" in read_until(sock, b"pushed")
    sock.close()

    blocked = tls_client(tls_server, certs)
    result = {}
    waiter = threading.Thread(target=lambda: result.setdefault("v", blocked.blpop("queue", timeout=10)))
    waiter.start()
    watcher = tls_client(tls_server, certs)
    deadline = time.monotonic() + 10
    while watcher.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    watcher.lpush("queue", "job")
    waiter.join(15)
    assert result["v"] == (b"queue", b"job")


def test_redis_cli_and_redis_benchmark_speak_tls(tls_server, certs):
    port = str(tls_port(tls_server))
    tls_args = ["--tls", "--cert", certs["client.crt"], "--key", certs["client.key"], "--cacert", certs["ca.crt"]]
    out = subprocess.run(["redis-cli", "-p", port, *tls_args, "SET", "cli", "yes"], capture_output=True, text=True,
                         timeout=30)
    assert out.stdout.strip() == "OK"
    out = subprocess.run(["redis-benchmark", "-p", port, *tls_args, "-n", "2000", "-P", "16", "-q", "-t", "set,get"],
                         capture_output=True, text=True, timeout=120)
    assert "GET:" in out.stdout and "requests per second" in out.stdout, out.stdout + out.stderr
    assert tls_client(tls_server, certs).get("cli") == b"yes"
    # redis-cli --rdb takes a snapshot through a full sync over TLS; Redis's own checker reads it.
    rdb = os.path.join(tls_server.dir, "from-cli.rdb")
    out = subprocess.run(["redis-cli", "-p", port, *tls_args, "--rdb", rdb], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "Transfer finished with success" in out.stdout + out.stderr, \
        out.stdout + out.stderr
    check = subprocess.run(["redis-check-rdb", rdb], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "RDB looks OK" in check.stdout, check.stdout + check.stderr
    keys = tls_client(tls_server, certs).dbsize()
    assert f"[info] {keys} keys read" in check.stdout, check.stdout


def test_mutual_tls_refuses_clients_without_a_certificate_of_the_ca(tls_server, certs):
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        sock = raw_tls(tls_server, certs, cert=None)
        sock.sendall(b"PING\r\n")
        assert sock.recv(100) == b""  # TLS 1.3 reports the refusal after the handshake
        raise ConnectionError("closed")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        sock = raw_tls(tls_server, certs, cert="stranger")
        sock.sendall(b"PING\r\n")
        assert sock.recv(100) == b""
        raise ConnectionError("closed")
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        sock = raw_tls(tls_server, certs, cert="expired")
        sock.sendall(b"PING\r\n")
        assert sock.recv(100) == b""
        raise ConnectionError("closed")
    assert tls_client(tls_server, certs).ping()


@pytest.mark.parametrize("mode", ["no", "optional"])
def test_tls_auth_clients_no_and_optional_let_clients_without_a_certificate_in(server_binary, certs, mode):
    srv = ServerProcess(server_binary, name=f"goblin-tls-{mode}",
                        options=tls_options(certs, **{"tls-auth-clients": mode})).start()
    try:
        assert tls_client(srv, certs, cert=None).ping()
        assert tls_client(srv, certs).ping()
        if mode == "optional":  # a certificate that is sent must still be the CA's
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                sock = raw_tls(srv, certs, cert="stranger")
                sock.sendall(b"PING\r\n")
                assert sock.recv(100) == b""
                raise ConnectionError("closed")
    finally:
        srv.stop()


def closed_by_server(sock) -> bool:
    """Reads until the server closes the connection (an alert first, perhaps); a read that times
    out raises instead."""
    try:
        while sock.recv(4096):
            pass
    except ConnectionResetError:
        pass
    return True


def test_silent_and_garbage_peers_cost_one_idle_connection(server_binary, certs):
    srv = ServerProcess(server_binary, name="goblin-tls-idle", options=tls_options(certs, timeout=1)).start()
    try:
        silent = socket.create_connection(("127.0.0.1", tls_port(srv)), timeout=10)
        garbage = socket.create_connection(("127.0.0.1", tls_port(srv)), timeout=10)
        garbage.sendall(b"GET key\r\n" * 100)  # plain RESP where a handshake belongs
        # The others are served meanwhile.
        assert tls_client(srv, certs).set("alive", 1)
        assert closed_by_server(garbage)
        # The silent one is closed by `timeout`, like any idle client.
        assert closed_by_server(silent)
        assert srv.client().get("alive") == b"1"
    finally:
        srv.stop()


def test_tls_protocols_are_enforced(server_binary, certs):
    srv = ServerProcess(server_binary, name="goblin-tls13",
                        options=tls_options(certs, **{"tls-protocols": "TLSv1.3"})).start()
    try:
        sock = raw_tls(srv, certs, protocol=ssl.TLSVersion.TLSv1_3)
        sock.sendall(b"PING\r\n")
        assert read_until(sock, b"\r\n") == b"+PONG\r\n"
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            raw_tls(srv, certs, protocol=ssl.TLSVersion.TLSv1_2)
    finally:
        srv.stop()


def peer_common_name(srv, certs) -> str:
    sock = raw_tls(srv, certs)
    subject = dict(item[0] for item in sock.getpeercert()["subject"])
    sock.close()
    return subject["commonName"]


def test_config_set_reloads_certificates_and_keeps_the_old_on_error(tls_server, certs):
    admin = tls_server.client()
    assert peer_common_name(tls_server, certs) == "server"
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        admin.config_set("tls-cert-file", "/nonexistent/server.crt")
    assert admin.config_get("tls-cert-file")["tls-cert-file"] == certs["server.crt"]
    assert peer_common_name(tls_server, certs) == "server"
    established = tls_client(tls_server, certs)
    assert established.ping()
    admin.execute_command("CONFIG", "SET", "tls-cert-file", certs["server2.crt"],
                          "tls-key-file", certs["server2.key"])
    assert peer_common_name(tls_server, certs) == "server2"
    assert established.ping()  # connections keep the context they started with


def test_tls_port_can_be_opened_and_closed_at_run_time(server_binary, certs):
    srv = ServerProcess(server_binary, name="goblin-tls-late",
                        options={"tls-cert-file": certs["server.crt"], "tls-key-file": certs["server.key"],
                                 "tls-ca-cert-file": certs["ca.crt"]}).start()
    try:
        port = free_port()
        srv.client().config_set("tls-port", port)
        srv.options["tls-port"] = port
        assert tls_client(srv, certs).ping()
        srv.client().config_set("tls-port", 0)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5)
    finally:
        srv.stop()


def test_startup_refuses_a_certificate_that_does_not_load(server_binary, certs):
    port = free_port()
    out = subprocess.run([server_binary, "--port", "0", "--tls-port", str(port), "--tls-cert-file",
                          "/nonexistent.crt", "--tls-key-file", certs["server.key"], "--tls-ca-cert-file",
                          certs["ca.crt"], "--save", ""], capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    log = out.stdout + out.stderr
    assert "Failed to load certificate: /nonexistent.crt" in log
    assert "Failed to configure TLS. Check logs for more info." in log
    out = subprocess.run([server_binary, "--port", "0", "--tls-port", str(port), "--tls-cert-file",
                          certs["server.crt"], "--tls-key-file", certs["server.key"], "--save", ""],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0
    assert "Either tls-ca-cert-file or tls-ca-cert-dir must be specified" in out.stdout + out.stderr


REDIS_SERVER = "/usr/bin/redis-server"


def wait_for(condition, what, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def link_up(replica):
    return replica.info("replication").get("master_link_status") == "up"


@pytest.mark.parametrize("master_kind,replica_kind", [("goblin", "goblin"), ("redis", "goblin"),
                                                      ("goblin", "redis")])
def test_replication_over_tls_in_both_directions(server_binary, certs, master_kind, replica_kind):
    """tls-replication yes: the replica reaches the master's tls-port, syncs (diskless) and
    follows its writes, between Goblin and redis-server either way."""
    binaries = {"goblin": server_binary, "redis": REDIS_SERVER}
    master = ServerProcess(binaries[master_kind], name=f"tls-master-{master_kind}",
                           options=tls_options(certs, **{"repl-diskless-sync": "yes",
                                                         "repl-diskless-sync-delay": 0})).start()
    replica = ServerProcess(binaries[replica_kind], name=f"tls-replica-{replica_kind}",
                            options=tls_options(certs, **{"tls-replication": "yes"})).start()
    try:
        m = master.client()
        m.set("before", "sync")
        r = replica.client()
        r.replicaof("127.0.0.1", tls_port(master))
        wait_for(lambda: link_up(r), "the replica's link over TLS")
        assert r.get("before") == b"sync"
        m.set("after", "stream")
        m.rpush("list", *range(1000))
        wait_for(lambda: r.llen("list") == 1000, "the stream over TLS")
        assert r.get("after") == b"stream"
        # The master sees its replica as a TLS client of its tls-port.
        assert m.info("replication")["connected_slaves"] == 1
    finally:
        replica.stop()
        master.stop()


SENTINEL_BINARY = "/usr/bin/redis-sentinel"


def test_sentinel_fails_over_goblin_nodes_over_tls(server_binary, certs):
    """Debian's redis-sentinel with tls-replication yes watches a Goblin master, finds its replica
    through the master's INFO, and when the master goes down promotes the replica, reaching
    both on their tls-ports."""
    options = tls_options(certs, **{"tls-replication": "yes"})
    master = ServerProcess(server_binary, name="tls-sentinel-master", options=options).start()
    replica = ServerProcess(server_binary, name="tls-sentinel-replica",
                            options=tls_options(certs, **{"tls-replication": "yes"})).start()
    tls_lines = "".join(f"{name} {certs[key]}\n" for name, key in
                        (("tls-cert-file", "server.crt"), ("tls-key-file", "server.key"),
                         ("tls-ca-cert-file", "ca.crt")))
    sentinel = None
    try:
        master.client().set("written", "before-failover")
        replica.client().replicaof("127.0.0.1", tls_port(master))
        wait_for(lambda: link_up(replica.client()), "the replica's link over TLS")
        config = (f"sentinel monitor m 127.0.0.1 {tls_port(master)} 1\n"
                  "sentinel down-after-milliseconds m 1000\n"
                  "sentinel failover-timeout m 10000\n"
                  f"tls-replication yes\n{tls_lines}")
        sentinel = ServerProcess(SENTINEL_BINARY, name="tls-sentinel", config_text=config, unix=False,
                                 options={"save": None, "appendonly": None,
                                          "enable-debug-command": None}).start()
        s = sentinel.client()

        def replica_seen():
            found = s.execute_command("SENTINEL", "REPLICAS", "m")
            return any(int(entry[entry.index(b"port") + 1]) == tls_port(replica) and
                       entry[entry.index(b"flags") + 1] == b"slave" for entry in found)
        wait_for(replica_seen, "the sentinel finding the replica over TLS")
        flags = pairs_of(s.execute_command("SENTINEL", "MASTER", "m"))["flags"]
        assert flags == "master", flags  # not s_down, not disconnected

        master.stop()
        wait_for(lambda: int(s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "m")[1])
                 == tls_port(replica), "the sentinel promoting the replica", timeout=60)
        promoted = replica.client()
        wait_for(lambda: promoted.info("replication")["role"] == "master", "the replica's promotion")
        assert promoted.get("written") == b"before-failover"
        assert promoted.set("written", "after-failover")
    finally:
        if sentinel is not None:
            sentinel.stop()
        replica.stop()
        master.stop()


def pairs_of(flat) -> dict:
    text = [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
    return dict(zip(text[0::2], text[1::2]))


# ---- What clients do over TLS besides commands -------------------------------------------------

@pytest.mark.parametrize("library", ["ioredis", "node-redis"])
def test_node_clients_speak_tls_with_a_client_certificate(tls_server, certs, library):
    result = run_node_script("tls_client.js", library, tls_port(tls_server), certs["ca.crt"],
                             certs["client.crt"], certs["client.key"])
    assert result == {"ping": "PONG", "big": True, "pipeline": 1000, "message": "over-tls"}


def test_monitor_and_tracking_redirects_over_tls(tls_server, certs):
    monitor = raw_tls(tls_server, certs)
    monitor.sendall(b"MONITOR\r\n")
    assert read_until(monitor, b"\r\n") == b"+OK\r\n"

    # A RESP2 client tracks keys and has the invalidations sent to another TLS connection.
    listener = raw_tls(tls_server, certs)
    listener.sendall(b"CLIENT ID\r\n")
    listener_id = int(read_until(listener, b"\r\n")[1:])
    listener.sendall(b"SUBSCRIBE __redis__:invalidate\r\n")
    assert read_until(listener, b":1\r\n").endswith(b"__redis__:invalidate\r\n:1\r\n")
    tracker = tls_client(tls_server, certs, single_connection_client=True)
    tracker.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", listener_id)
    tracker.get("tracked")
    tls_client(tls_server, certs).set("tracked", "changed")
    assert read_until(listener, b"tracked\r\n") == (
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$7\r\ntracked\r\n")
    listener.close()

    seen = read_until(monitor, b'"SET" "tracked" "changed"')
    assert b'"CLIENT" "TRACKING" "on" "REDIRECT"' in seen and b'"GET" "tracked"' in seen
    monitor.close()


def info_field(conn, section, field) -> str:
    return parse_info(conn.call("INFO", section).value)[field]


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_a_tls_client_that_stops_reading_is_closed_at_its_output_limit(server_binary, certs, kind):
    """A TLS client pipelines reads of a 1 MB value and never reads: the records pile up in its
    output until client-output-buffer-limit closes it, and everyone else is served meanwhile."""
    binary = {"goblin": server_binary, "redis": REDIS_SERVER}[kind]
    srv = ServerProcess(binary, name=f"tls-slow-{kind}", options=tls_options(
        certs, **{"client-output-buffer-limit": "normal 4mb 2mb 10"})).start()
    try:
        control = srv.raw()
        control.call("SET", "big", b"x" * (1 << 20))
        connected = int(info_field(control, "clients", "connected_clients"))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.load_verify_locations(certs["ca.crt"])
        context.check_hostname = False
        context.load_cert_chain(certs["client.crt"], certs["client.key"])
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.settimeout(10)
        raw.connect(("127.0.0.1", tls_port(srv)))
        slow = context.wrap_socket(raw)
        slow.sendall(b"GET big\r\n" * 64)
        # The handshake is done, so the server holds the connection until it closes it.
        wait_for(lambda: int(info_field(control, "clients", "connected_clients")) == connected,
                 "the slow TLS reader to be closed")
        if kind == "goblin":  # Redis 7.2's counter, which 7.0 lacks
            assert info_field(control, "stats", "client_output_buffer_limit_disconnections") == "1"
        assert tls_client(srv, certs).get("big") == b"x" * (1 << 20)
        # What reached the slow reader before it was closed is whole replies and then the end.
        received = b""
        try:
            while chunk := slow.recv(1 << 20):
                received += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass
        reply = b"$1048576\r\n" + b"x" * (1 << 20) + b"\r\n"
        assert len(received) < 64 * len(reply)
        assert received[:len(reply)] == reply[:len(received)]
    finally:
        srv.stop()


def non_loopback_address() -> str:
    """An IPv4 address of this machine that is not a loopback one (a client connecting to it
    from here is seen as remote); the UDP connect sends nothing."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
    assert not address.startswith("127."), "this machine has no network address besides loopback"
    return address


def read_to_end(sock) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except (ConnectionResetError, ssl.SSLError):
        pass
    return data


@pytest.mark.parametrize("kind", ["goblin", "redis"])
def test_refusals_reach_tls_clients_after_the_handshake(server_binary, certs, kind):
    """Protected mode refuses a client from another address on either port, with its DENIED
    error sent once the handshake is done on tls-port; past maxclients a plain client reads
    Redis's error and a TLS one is closed before its handshake completes."""
    address = non_loopback_address()
    binary = {"goblin": server_binary, "redis": REDIS_SERVER}[kind]
    srv = ServerProcess(binary, name=f"tls-refusals-{kind}",
                        options=tls_options(certs, bind=f"127.0.0.1 {address}")).start()
    try:
        denied = b"-DENIED Redis is running in protected mode because protected mode is enabled"
        plain = socket.create_connection((address, srv.port), timeout=10)
        assert read_to_end(plain).startswith(denied)
        over_tls = raw_tls(srv, certs, host=address)
        assert read_to_end(over_tls).startswith(denied)
        # From loopback both ports serve.
        assert tls_client(srv, certs).ping() and srv.client().ping()

        control = srv.raw()
        connected = int(parse_info(control.call("INFO", "clients").value)["connected_clients"])
        control.call("CONFIG", "SET", "maxclients", str(connected))
        plain = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        assert read_to_end(plain) == b"-ERR max number of clients reached\r\n"
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            sock = raw_tls(srv, certs)
            sock.sendall(b"PING\r\n")
            assert sock.recv(100) == b""
            raise ConnectionError("closed")
        assert control.call("PING").value in (b"PONG", "PONG")
    finally:
        srv.stop()


@pytest.mark.parametrize("source_kind,target_kind", [("goblin", "goblin"), ("goblin", "redis"),
                                                     ("redis", "goblin")])
def test_migrate_speaks_tls_to_its_target_under_tls_cluster(server_binary, certs, source_kind,
                                                            target_kind):
    """tls-cluster yes: MIGRATE reaches the target's tls-port with the server's client
    certificate, between Goblin and redis-server either way."""
    binaries = {"goblin": server_binary, "redis": REDIS_SERVER}
    source = ServerProcess(binaries[source_kind], name=f"tls-migrate-from-{source_kind}",
                           options=tls_options(certs, **{"tls-cluster": "yes"})).start()
    target = ServerProcess(binaries[target_kind], name=f"tls-migrate-to-{target_kind}",
                           options=tls_options(certs)).start()
    try:
        s = source.client()
        s.set("moved", "over-tls")
        s.rpush("list", *range(1000))
        assert s.execute_command("MIGRATE", "127.0.0.1", tls_port(target), "", 0, 5000, "KEYS",
                                 "moved", "list") == b"OK"
        t = tls_client(target, certs)
        assert t.get("moved") == b"over-tls" and t.llen("list") == 1000
        assert s.exists("moved", "list") == 0
        # The cached connection serves the next MIGRATE.
        s.set("again", "1")
        assert s.execute_command("MIGRATE", "127.0.0.1", tls_port(target), "again", 0, 5000) == b"OK"
        assert t.get("again") == b"1"
        # A target that does not speak TLS fails the handshake, or lets it time out: an error,
        # not a hang.
        s.set("again", "2")
        with pytest.raises(redis.ResponseError, match="IOERR error or timeout"):
            s.execute_command("MIGRATE", "127.0.0.1", target.port, "again", 0, 1000)
        assert s.exists("again") == 1
    finally:
        source.stop()
        target.stop()
