"""maxmemory-clients: client eviction as Redis 7.2 does it (server/client_eviction.cc).

Each test runs against goblin-server and Debian's redis-server 7.0, whose client eviction is 7.2's
for everything checked here. Clients hold memory in their query buffer (a command sent but for its
last bytes) or in unsent replies (GETs pipelined and never read); the tests wait, with a deadline,
for the server to close them and count them in INFO's evicted_clients.
"""

from __future__ import annotations

import socket

from support.resp import encode_command
from support.server import goblin_binary, wait_for

DEADLINE = 10.0
KB = 1024
MB = 1024 * KB



def clients(control) -> dict[str, dict]:
    """CLIENT LIST by client name (the named ones)."""
    found = {}
    for line in control.call("CLIENT", "LIST").value.decode().splitlines():
        fields = dict(item.partition("=")[::2] for item in line.split(" "))
        if fields.get("name"):
            found[fields["name"]] = fields
    return found


def evicted(control) -> int:
    info = control.call("INFO", "stats").value.decode()
    return int(next(line for line in info.splitlines() if line.startswith("evicted_clients:")).split(":")[1])


def named_socket(srv, name: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=DEADLINE)
    sock.sendall(encode_command("CLIENT", "SETNAME", name))
    assert sock.recv(64) == b"+OK\r\n"
    return sock


def hold_query_buffer(srv, name: str, size: int, sent: int | None = None) -> socket.socket:
    """A client whose query buffer holds a SET of a size-byte value: its first sent bytes, or all
    but its last bytes."""
    sock = named_socket(srv, name)
    command = encode_command("SET", name, b"v" * size)
    try:
        sock.sendall(command[:sent if sent is not None else -3])
    except (BrokenPipeError, ConnectionResetError):
        pass  # evicted before all of it was sent
    return sock


def pile_up_replies(srv, control, first: bytes = b"") -> socket.socket:
    """A client "reader" that sends first, then 200 GETs of a 100 KB value, and reads nothing."""
    control.call("SET", "big", "x" * (100 * KB))
    reader = named_socket(srv, "reader")
    try:
        reader.sendall(first + encode_command("GET", "big") * 200)
    except (BrokenPipeError, ConnectionResetError):
        pass  # evicted while still sending
    return reader


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(1 << 20) == b""
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def control_client(srv):
    control = srv.raw(timeout=DEADLINE)
    assert control.call("CLIENT", "NO-EVICT", "on").raw == b"+OK\r\n"
    control.call("CLIENT", "SETNAME", "control")
    return control


def test_a_client_with_a_big_query_buffer_is_evicted(start_either):
    srv = start_either(**{"maxmemory-clients": "1mb"})
    with control_client(srv) as control:
        victim = hold_query_buffer(srv, "victim", 3 * MB)
        wait_for(lambda: closed_by_server(victim), DEADLINE, what="the victim closed")
        assert evicted(control) == 1
        assert "victim" not in clients(control)
        assert control.call("PING").raw == b"+PONG\r\n"
        victim.close()
    if srv.binary == goblin_binary():
        assert "Evicting client: id=" in srv.logs()


def test_a_client_with_unread_replies_is_evicted(start_either):
    srv = start_either(**{"maxmemory-clients": "1mb"})
    with control_client(srv) as control:
        reader = pile_up_replies(srv, control)
        wait_for(lambda: "reader" not in clients(control), DEADLINE, what="the reader evicted")
        assert evicted(control) == 1
        reader.close()


def test_no_evict_protects_a_client_until_it_is_turned_off(start_either):
    srv = start_either(**{"maxmemory-clients": "1mb"})
    with control_client(srv) as control:
        reader = pile_up_replies(srv, control, encode_command("CLIENT", "NO-EVICT", "on"))
        wait_for(lambda: int(clients(control).get("reader", {}).get("tot-mem", 0)) > 2 * MB, DEADLINE,
                 what="the reader's unread replies held by the server")
        assert "e" in clients(control)["reader"]["flags"]
        assert evicted(control) == 0
        reader.sendall(encode_command("CLIENT", "NO-EVICT", "off"))
        wait_for(lambda: "reader" not in clients(control), DEADLINE, what="the reader evicted")
        assert evicted(control) == 1
        reader.close()


def test_lowering_the_limit_evicts_the_biggest_clients_only_until_below_it(start_either):
    srv = start_either(**{"maxmemory-clients": "20mb"})
    with control_client(srv) as control:
        small = hold_query_buffer(srv, "small", 600 * KB)
        big = hold_query_buffer(srv, "big", 3 * MB)
        middle = hold_query_buffer(srv, "middle", 1200 * KB)

        def held() -> bool:
            listed = clients(control)
            return all(int(listed[name]["qbuf"]) > size for name, size in
                       (("small", 500 * KB), ("big", 2900 * KB), ("middle", 1100 * KB)))

        wait_for(held, DEADLINE, what="the three query buffers filled")
        assert evicted(control) == 0
        # 4.8 MB held against 1.5 MB: the 3 MB client goes, then the 1.2 MB one; 0.6 MB stays.
        assert control.call("CONFIG", "SET", "maxmemory-clients", "1500kb").raw == b"+OK\r\n"
        wait_for(lambda: evicted(control) == 2, DEADLINE, what="two clients evicted")
        assert sorted(clients(control)) == ["control", "small"]
        assert closed_by_server(big) and closed_by_server(middle)
        for sock in (small, big, middle):
            sock.close()


def test_a_percentage_of_maxmemory_is_the_limit(start_either):
    srv = start_either(**{"maxmemory": "100mb", "maxmemory-clients": "1%"})
    with control_client(srv) as control:
        assert control.call("CONFIG", "GET", "maxmemory-clients").py() == [b"maxmemory-clients", b"1%"]
        victim = hold_query_buffer(srv, "victim", 2 * MB)
        wait_for(lambda: closed_by_server(victim), DEADLINE, what="the victim closed")
        assert evicted(control) == 1
        victim.close()
        # Without maxmemory a percentage means no limit.
        control.call("CONFIG", "SET", "maxmemory", "0")
        survivor = hold_query_buffer(srv, "survivor", 2 * MB)
        wait_for(lambda: int(clients(control).get("survivor", {}).get("qbuf", 0)) > MB, DEADLINE,
                 what="the survivor's query buffer filled")
        assert evicted(control) == 1
        survivor.close()


def test_client_memory_is_reported_and_config_resetstat_clears_the_count(start_either):
    srv = start_either(**{"maxmemory-clients": "4mb"})
    with control_client(srv) as control:
        holder = hold_query_buffer(srv, "holder", 600 * KB)
        wait_for(lambda: int(clients(control).get("holder", {}).get("tot-mem", 0)) > 512 * KB, DEADLINE,
                 what="tot-mem counting the query buffer")
        memory = control.call("INFO", "memory").value.decode()
        normal = int(next(line for line in memory.splitlines()
                          if line.startswith("mem_clients_normal:")).split(":")[1])
        assert normal > 512 * KB
        control.call("CONFIG", "SET", "maxmemory-clients", "512kb")  # the holder is over it now
        wait_for(lambda: closed_by_server(holder), DEADLINE, what="the holder closed")
        assert evicted(control) == 1
        assert control.call("CONFIG", "RESETSTAT").raw == b"+OK\r\n"
        assert evicted(control) == 0
        holder.close()


def test_debug_client_eviction_lists_the_buckets(start_either):
    srv = start_either()
    with control_client(srv) as control:
        assert control.call("DEBUG", "CLIENT-EVICTION").error_text == "ERR maxmemory-clients is disabled."
        control.call("CONFIG", "SET", "maxmemory-clients", "10mb")
        text = control.call("DEBUG", "CLIENT-EVICTION").py()
        lines = (text.decode() if isinstance(text, bytes) else str(text)).splitlines()
        assert len(lines) == 19
        assert lines[0].startswith("bucket          0 -      32767: tot-mem: ")
        assert lines[1].startswith("bucket      32768 -      65535: tot-mem: ")
        assert lines[-1].startswith("bucket 4294967296+            : tot-mem: ")


def test_clients_woken_from_blpop_with_commands_queued_behind_are_evicted_cleanly(start_either):
    # A blocked client that is woken runs the commands queued behind its BLPOP at once; when their
    # replies take the clients over the limit it is evicted in the middle of that work. Redis
    # 7.2.0 to 8.6.2 freed such a client while still using it (CVE-2026-23479): here the server
    # must stay up and account for every client.
    srv = start_either(**{"maxmemory-clients": "1mb"})
    with control_client(srv) as control:
        control.call("SET", "big", "x" * (100 * KB))
        sleepers = []
        for i in range(20):
            sock = named_socket(srv, f"sleeper{i}")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(encode_command("BLPOP", "queue", "0") + encode_command("GET", "big") * 4)
            sleepers.append(sock)
        wait_for(lambda: control.call("INFO", "clients").value.count(b"blocked_clients:20\r\n") == 1,
                 DEADLINE, what="twenty clients blocked")
        assert control.call("RPUSH", "queue", *[b"y" * (60 * KB)] * 20).raw == b":20\r\n"
        wait_for(lambda: evicted(control) >= 1 and b"blocked_clients:0\r\n" in
                 control.call("INFO", "clients").value, DEADLINE, what="the woken clients evicted")
        assert control.call("PING").raw == b"+PONG\r\n"
        left = [name for name in clients(control) if name.startswith("sleeper")]
        assert len(left) == 20 - evicted(control)
        # Every value went to a woken client, the evicted ones included.
        assert control.call("LLEN", "queue").raw == b":0\r\n"
        for sock in sleepers:
            sock.close()
