"""Redis Cluster mode: CLUSTER commands and their errors on one node (goblin-server and Debian's
redis-server 7.0 give the same replies), clusters of goblin-server nodes made, resharded and failed
over with redis-cli --cluster and used through redis-py's RedisCluster, a mixed cluster that moves
from redis-server nodes to goblin-server nodes slot by slot, and a bus that shrugs off bad input."""

from __future__ import annotations

import socket
import struct
import time

import pytest
import redis

from support import cluster
from support.cluster import (address, cluster_client, cluster_info, node_id, node_options, nodes_table,
                             role)
from support.server import wait_for

DISABLED = "This instance has cluster support disabled"


def error_of(client, *args) -> str:
    with pytest.raises(redis.ResponseError) as caught:
        client.execute_command(*args)
    return str(caught.value)


# ---- one node, both servers ----------------------------------------------------------------------


def test_cluster_commands_answer_that_cluster_mode_is_off(start_either):
    r = start_either().client()
    for args in (["CLUSTER", "INFO"], ["CLUSTER", "KEYSLOT", "a"], ["CLUSTER", "NODES"],
                 ["READONLY"], ["READWRITE"], ["ASKING"]):
        assert error_of(r, *args) == DISABLED
    assert r.info("cluster") == {"cluster_enabled": 0}
    assert r.info("server")["redis_mode"] == "standalone"


def test_one_node_slot_commands_and_their_errors(start_either):
    node = start_either(**node_options())
    r = node.client()
    assert r.info("cluster") == {"cluster_enabled": 1}
    assert r.info("server")["redis_mode"] == "cluster"
    assert node.raw().call("HELLO", 3).py()[b"mode"] == b"cluster"
    assert [r.execute_command("CLUSTER", "KEYSLOT", k) for k in ("foo", "{user1000}.a", "", "{}x")] == \
        [12182, 3443, 0, 10595]
    assert r.execute_command("CLUSTER", "ADDSLOTS", 0, 1, 2) == b"OK"
    assert error_of(r, "CLUSTER", "ADDSLOTS", 1) == "Slot 1 is already busy"
    assert error_of(r, "CLUSTER", "ADDSLOTS", 5, 5) == "Slot 5 specified multiple times"
    assert error_of(r, "CLUSTER", "ADDSLOTS", 16384) == "Invalid or out of range slot"
    assert error_of(r, "CLUSTER", "ADDSLOTS", "x") == "Invalid or out of range slot"
    assert error_of(r, "CLUSTER", "ADDSLOTSRANGE", 10, 5) == \
        "start slot number 10 is greater than end slot number 5"
    assert error_of(r, "CLUSTER", "ADDSLOTSRANGE", 10, 20, 30) == \
        "wrong number of arguments for 'cluster|addslotsrange' command"
    assert r.execute_command("CLUSTER", "ADDSLOTSRANGE", 10, 20, 100, 200) == b"OK"
    assert error_of(r, "CLUSTER", "DELSLOTS", 3) == "Slot 3 is already unassigned"
    assert r.execute_command("CLUSTER", "DELSLOTSRANGE", 150, 200) == b"OK"
    assert error_of(r, "CLUSTER", "COUNTKEYSINSLOT", 16384) == "Invalid slot"
    assert error_of(r, "CLUSTER", "GETKEYSINSLOT", 0, -1) == "Invalid slot or number of keys"
    assert error_of(r, "CLUSTER", "SETSLOT", 0, "bogus") == \
        "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
    assert error_of(r, "CLUSTER", "SETSLOT", 0, "node") == \
        "Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
    assert error_of(r, "CLUSTER", "SETSLOT", 500, "migrating", "a" * 40) == \
        "I'm not the owner of hash slot 500"
    assert error_of(r, "CLUSTER", "SETSLOT", 0, "importing", "a" * 40) == \
        "I'm already the owner of hash slot 0"
    assert error_of(r, "CLUSTER", "SETSLOT", 0, "migrating", "a" * 40) == \
        "I don't know about node " + "a" * 40
    assert error_of(r, "CLUSTER", "SETSLOT", 0, "node", "a" * 40) == "Unknown node " + "a" * 40
    assert error_of(r, "CLUSTER", "SET-CONFIG-EPOCH", -1) == "Invalid config epoch specified: -1"
    assert r.execute_command("CLUSTER", "SET-CONFIG-EPOCH", 5) == b"OK"
    assert error_of(r, "CLUSTER", "SET-CONFIG-EPOCH", 6) == "Node config epoch is already non-zero"
    assert r.execute_command("CLUSTER", "BUMPEPOCH") == b"STILL 5"
    me = node_id(node)
    assert len(me) == 40 and all(c in "0123456789abcdef" for c in me)
    assert error_of(r, "CLUSTER", "FORGET", me) == "I tried hard but I can't forget myself..."
    assert error_of(r, "CLUSTER", "FORGET", "b" * 40) == "Unknown node " + "b" * 40
    assert error_of(r, "CLUSTER", "REPLICATE", me) == "Can't replicate myself"
    assert error_of(r, "CLUSTER", "COUNT-FAILURE-REPORTS", "b" * 40) == "Unknown node " + "b" * 40
    assert error_of(r, "CLUSTER", "FAILOVER") == "You should send CLUSTER FAILOVER to a replica"
    assert error_of(r, "CLUSTER", "FAILOVER", "soon") == "syntax error"
    assert error_of(r, "CLUSTER", "RESET", "later") == "syntax error"
    assert error_of(r, "CLUSTER", "MEET", "127.0.0.1", "x") == "Invalid TCP base port specified: x"
    assert error_of(r, "CLUSTER", "MEET", "no.such.host", 7000) == \
        "Invalid node address specified: no.such.host:7000"
    assert error_of(r, "SELECT", 1) == "SELECT is not allowed in cluster mode"
    assert r.execute_command("SELECT", 0) is True
    assert error_of(r, "MOVE", "k", 1) == "CLUSTERDOWN Hash slot not served"
    assert error_of(r, "COPY", "k", "k2") == "CLUSTERDOWN Hash slot not served"
    assert error_of(r, "SWAPDB", 0, 1) == "SWAPDB is not allowed in cluster mode"
    assert error_of(r, "REPLICAOF", "127.0.0.1", 1) == "REPLICAOF not allowed in cluster mode."
    mine = [fields for fields in nodes_table(node) if "myself" in fields[2]]
    assert len(mine) == 1
    assert mine[0][0] == me and mine[0][2] == "myself,master" and mine[0][3] == "-"
    assert mine[0][1] == f":{node.port}@{node.options['cluster-port']}"
    assert mine[0][6:] == ["5", "connected", "0-2", "10-20", "100-149"]
    info = cluster_info(node)
    assert (info["cluster_state"], info["cluster_slots_assigned"], info["cluster_known_nodes"],
            info["cluster_current_epoch"], info["cluster_my_epoch"]) == ("fail", "64", "1", "5", "5")


def test_one_node_serves_its_slots_and_redirects_nowhere_else(start_either):
    node = start_either(**node_options())
    r = node.client()
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    wait_for(lambda: cluster_info(node)["cluster_state"] == "fail", what="state computed")
    # Half the slots are served by nobody: keys there are refused, with or without full coverage.
    assert error_of(r, "SET", "foo", 1) == "CLUSTERDOWN Hash slot not served"   # slot 12182
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
    wait_for(lambda: cluster_info(node)["cluster_state"] == "ok", what="cluster_state ok")
    for i in range(300):
        r.set(f"k{i}", i)
    assert r.set("{t}a", 1) and r.set("{t}b", 2)
    assert error_of(r, "MOVE", "{t}a", 1) == "MOVE is not allowed in cluster mode"
    assert error_of(r, "COPY", "{t}a", "{t}c", "DB", 1) == \
        "Copying to another database is not allowed in cluster mode"
    assert r.mget("{t}a", "{t}b") == [b"1", b"2"]
    assert error_of(r, "MGET", "a", "b") == "CROSSSLOT Keys in request don't hash to the same slot"
    slot = r.execute_command("CLUSTER", "KEYSLOT", "{t}a")
    assert r.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 2
    assert sorted(r.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10)) == [b"{t}a", b"{t}b"]
    assert len(r.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1)) == 1
    total = sum(r.execute_command("CLUSTER", "COUNTKEYSINSLOT", s) for s in range(16384))
    assert total == 302
    # A MULTI of keys in two slots fails at EXEC, as Redis judges the whole queue.
    pipe = r.pipeline(transaction=True)
    pipe.set("a", 1)
    pipe.set("b", 2)
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        pipe.execute()


def test_nodes_conf_keeps_the_node_across_restarts(make_server):
    node = make_server(name="goblin-node", options=node_options())
    r = node.client()
    r.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 99)
    r.execute_command("CLUSTER", "SET-CONFIG-EPOCH", 3)
    me = node_id(node)
    node.restart(keep_port=True)
    r = node.client()
    assert node_id(node) == me
    mine = [f for f in nodes_table(node) if "myself" in f[2]][0]
    assert mine[6:] == ["3", "connected", "0-99"]
    assert cluster_info(node)["cluster_current_epoch"] == "3"


# ---- goblin clusters -----------------------------------------------------------------------------


def test_redis_cli_creates_a_goblin_cluster_that_clients_use(make_server):
    nodes = cluster.start_nodes(make_server, 3)
    cluster.create(nodes)
    cluster.check(nodes[0])
    rc = cluster_client(nodes)
    for i in range(500):
        rc.set(f"key:{i}", i)
    assert [rc.get(f"key:{i}") for i in range(500)] == [str(i) for i in range(500)]
    assert rc.mset_nonatomic({"{u}:1": "a", "{u}:2": "b"})
    assert rc.mget("{u}:1", "{u}:2") == ["a", "b"]
    # Each node answers for its own slots and sends the others on.
    owner = {s: n for n in nodes for s in range(16384)
             if s in _slots_of(n, nodes)}
    slot = nodes[0].client().execute_command("CLUSTER", "KEYSLOT", "foo")
    elsewhere = next(n for n in nodes if n is not owner[slot])
    assert error_of(elsewhere.client(), "GET", "foo") == f"MOVED {slot} 127.0.0.1:{owner[slot].port}"
    assert sum(n.client().dbsize() for n in nodes) == 502
    # CLUSTER SLOTS and SHARDS agree with NODES.
    slots = nodes[1].client().execute_command("CLUSTER", "SLOTS")
    assert sorted((s[0], s[1], s[2][1]) for s in slots) == \
        sorted((a, b, n.port) for n in nodes for a, b in _ranges_of(n, nodes))
    shards = nodes[2].client().execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 3


def _slots_of(node, nodes) -> set:
    return {s for a, b in _ranges_of(node, nodes) for s in range(a, b + 1)}


def _ranges_of(node, nodes) -> list:
    me = node_id(node)
    for fields in nodes_table(nodes[0]):
        if fields[0] == me:
            out = []
            for part in fields[8:]:
                a, _, b = part.partition("-")
                out.append((int(a), int(b or a)))
            return out
    return []


def _two_masters(make_server):
    """Two goblin masters, slots 0-8191 on the first and the rest on the second, met and settled."""
    nodes = cluster.start_nodes(make_server, 2)
    nodes[0].client().execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    nodes[1].client().execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
    nodes[0].client().execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[1].port,
                                      nodes[1].options["cluster-port"])
    cluster.wait_until_consistent(nodes)
    return nodes


def test_a_migrating_slot_answers_ask_and_tryagain_as_redis_words_them(make_server):
    nodes = _two_masters(make_server)
    # One connection each: ASKING holds for the next command on the same connection.
    a, b = (n.client(single_connection_client=True) for n in nodes)
    slot = a.execute_command("CLUSTER", "KEYSLOT", "{b}")
    assert slot < 8192
    a.set("{b}here", 1)
    a.set("{b}moved", 2)
    ida, idb = node_id(nodes[0]), node_id(nodes[1])
    assert b.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ida) == b"OK"
    assert a.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", idb) == b"OK"
    assert a.execute_command("MIGRATE", "127.0.0.1", nodes[1].port, "{b}moved", 0, 5000) == b"OK"
    assert a.get("{b}here") == b"1"
    assert error_of(a, "GET", "{b}moved") == f"ASK {slot} 127.0.0.1:{nodes[1].port}"
    assert error_of(a, "MGET", "{b}here", "{b}moved") == \
        "TRYAGAIN Multiple keys request during rehashing of slot"
    assert error_of(b, "GET", "{b}moved") == f"MOVED {slot} 127.0.0.1:{nodes[0].port}"
    assert b.execute_command("ASKING") is True
    assert b.get("{b}moved") == b"2"
    # ASKING covers one command only.
    assert error_of(b, "GET", "{b}moved") == f"MOVED {slot} 127.0.0.1:{nodes[0].port}"
    assert a.execute_command("MIGRATE", "127.0.0.1", nodes[1].port, "{b}here", 0, 5000) == b"OK"
    assert b.execute_command("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert a.execute_command("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert error_of(a, "GET", "{b}here") == f"MOVED {slot} 127.0.0.1:{nodes[1].port}"
    assert b.get("{b}here") == b"1"
    cluster.wait_until_consistent(nodes)


def test_a_client_blocked_on_a_slot_that_moves_away_is_sent_on(make_server):
    nodes = _two_masters(make_server)
    a, b = (n.client() for n in nodes)
    slot = a.execute_command("CLUSTER", "KEYSLOT", "{b}queue")
    waiter = nodes[0].raw()
    waiter.send_command("BLPOP", "{b}queue", 0)
    wait_for(lambda: nodes[0].info("clients")["blocked_clients"] == "1", what="the client to block")
    idb = node_id(nodes[1])
    assert b.execute_command("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert a.execute_command("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
    assert waiter.read_reply(timeout=10).error_text == f"MOVED {slot} 127.0.0.1:{nodes[1].port}"
    assert nodes[0].info("clients")["blocked_clients"] == "0"


def test_reshard_under_writes_loses_no_acknowledged_write(make_server):
    nodes = cluster.start_nodes(make_server, 3)
    cluster.create(nodes)
    writes = cluster.BackgroundWrites(nodes, "w:")
    try:
        cluster.cli("reshard", address(nodes[0]), "--cluster-from", node_id(nodes[0]), "--cluster-to",
                    node_id(nodes[1]), "--cluster-slots", 500, "--cluster-yes")
    finally:
        written = writes.stop()
    cluster.wait_until_consistent(nodes)
    cluster.check(nodes[0])
    rc = cluster_client(nodes)
    assert len(written) > 100
    missing = [k for k, v in written.items() if rc.get(k) != v]
    assert missing == []


def test_a_killed_master_is_replaced_by_its_replica_and_returns_as_one(make_server):
    nodes = cluster.start_nodes(make_server, 6, appendonly="yes", **{"repl-diskless-sync-delay": 0})
    cluster.create(nodes, replicas=1)
    rc = cluster_client(nodes)
    for i in range(300):
        rc.set(f"f:{i}", i)
    masters = [n for n in nodes if role(n) == "master"]
    victim = masters[0]
    victim_id = node_id(victim)
    replica = next(n for n in nodes if role(n) == "slave" and
                   any(f[0] == node_id(n) and f[3] == victim_id for f in nodes_table(n)))
    wait_for(lambda: victim.client().execute_command("WAIT", 1, 100) >= 1, what="replica caught up")
    victim.kill_hard()
    wait_for(lambda: role(replica) == "master", timeout=30, what="the replica to take over")
    survivors = [n for n in nodes if n is not victim]
    wait_for(lambda: all(cluster_info(n)["cluster_state"] == "ok" for n in survivors), timeout=30,
             what="cluster_state ok")
    rc = cluster_client(survivors)
    assert [rc.get(f"f:{i}") for i in range(300)] == [str(i) for i in range(300)]
    victim.restart(keep_port=True)
    wait_for(lambda: role(victim) == "slave", timeout=30, what="the old master to follow")
    wait_for(lambda: victim.info("replication")["master_link_status"] == "up", timeout=30,
             what="the old master's sync")
    cluster.wait_until_consistent(nodes)
    # A manual failover gives it its slots back.
    assert victim.client().execute_command("CLUSTER", "FAILOVER") == b"OK"
    wait_for(lambda: role(victim) == "master" and role(replica) == "slave", timeout=30,
             what="the manual failover")
    cluster.wait_until_consistent(nodes)
    rc = cluster_client(nodes)
    assert [rc.get(f"f:{i}") for i in range(300)] == [str(i) for i in range(300)]


def test_publish_reaches_every_node_and_spublish_the_shard(make_server):
    nodes = cluster.start_nodes(make_server, 3)
    cluster.create(nodes)
    subscribers = []
    for n in nodes:
        p = n.client().pubsub()
        p.subscribe("news")
        p.get_message(timeout=5)
        subscribers.append(p)
    assert nodes[0].client().publish("news", "hello") == 1
    for p in subscribers:
        message = p.get_message(timeout=5)
        assert message is not None and message["data"] == b"hello"
    slot = nodes[0].client().execute_command("CLUSTER", "KEYSLOT", "orders")
    owner = next(n for n in nodes if slot in _slots_of(n, nodes))
    other = next(n for n in nodes if n is not owner)
    sub = owner.raw()
    assert sub.call("SSUBSCRIBE", "orders").py() == [b"ssubscribe", b"orders", 1]
    assert error_of(other.client(), "SPUBLISH", "orders", "x") == \
        f"MOVED {slot} 127.0.0.1:{owner.port}"
    assert owner.client().execute_command("SPUBLISH", "orders", "x") == 1
    assert sub.read_reply(timeout=5).py() == [b"smessage", b"orders", b"x"]


# ---- mixed cluster -------------------------------------------------------------------------------


def test_a_redis_cluster_moves_to_goblin_nodes_slot_by_slot(make_server):
    """Two redis-server masters and two goblin-server masters in one cluster, met and given their
    slots as an operator would; the redis-server nodes' slots move to the goblin nodes under writes
    (redis-cli --cluster reshard: MIGRATE from redis-server, RESTORE-ASKING into goblin-server, the
    slot states on both), then the redis-server nodes leave. The redis-server nodes hold few slots
    so that the test stays short: the per-slot work is the same for every slot (bench/cluster.py
    moves all 16384)."""
    redis_nodes = cluster.start_redis_nodes(make_server, 2)
    goblin_nodes = cluster.start_nodes(make_server, 2)
    everyone = redis_nodes + goblin_nodes
    ranges = [(0, 199), (200, 399), (400, 8391), (8392, 16383)]
    for node, (first, last) in zip(everyone, ranges):
        node.client().execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        node.client().execute_command("CLUSTER", "SET-CONFIG-EPOCH", first + 1)
    for node in everyone[1:]:
        redis_nodes[0].client().execute_command("CLUSTER", "MEET", "127.0.0.1", node.port,
                                                node.options["cluster-port"])
    cluster.wait_until_consistent(everyone)
    cluster.check(goblin_nodes[0])
    rc = cluster_client(everyone)
    for i in range(400):
        rc.set(f"m:{i}", i)
    writes = cluster.BackgroundWrites(everyone, "live:")
    try:
        for source, target in zip(redis_nodes, goblin_nodes):
            cluster.cli("reshard", address(goblin_nodes[0]), "--cluster-from", node_id(source),
                        "--cluster-to", node_id(target), "--cluster-slots", 200, "--cluster-yes")
            cluster.wait_until_consistent(everyone)
    finally:
        written = writes.stop()
    for source in redis_nodes:
        assert source.client().dbsize() == 0
        cluster.cli("del-node", address(goblin_nodes[0]), node_id(source))
    cluster.wait_until_consistent(goblin_nodes)
    cluster.check(goblin_nodes[0])
    rc = cluster_client(goblin_nodes)
    assert [rc.get(f"m:{i}") for i in range(400)] == [str(i) for i in range(400)]
    assert len(written) > 100
    assert [k for k, v in written.items() if rc.get(k) != v] == []


# ---- bad input on the bus ------------------------------------------------------------------------


def _bus(node) -> socket.socket:
    return socket.create_connection(("127.0.0.1", int(node.options["cluster-port"])), timeout=5)


def _closed(sock: socket.socket) -> bool:
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except socket.timeout:
        return False
    except ConnectionResetError:
        return True


def _ping(sender: str, slots: range, kind: int = 0, port: int = 7000) -> bytes:
    header = bytearray(2256)
    header[0:4] = b"RCmb"
    struct.pack_into(">HHHH", header, 8, 1, port, kind, 0)
    struct.pack_into(">QQQ", header, 16, 99, 99, 0)
    header[40:80] = sender.encode()
    for s in slots:
        header[80 + s // 8] |= 1 << (s % 8)
    struct.pack_into(">HHH", header, 2248, port + 10000, 1, 0)
    struct.pack_into(">I", header, 4, len(header))
    return bytes(header)


def test_the_bus_drops_links_that_send_garbage_and_ignores_strangers(make_server):
    nodes = _two_masters(make_server)
    a, b = (n.client() for n in nodes)
    before = cluster.slots_view(nodes[0])
    garbage = [b"GET / HTTP/1.1\r\n\r\n" * 4,                      # not a bus message
               b"RCmb" + struct.pack(">I", 16),                    # shorter than a header
               b"RCmb" + struct.pack(">I", 0xFFFFFFF0),            # longer than the bus allows
               _ping("c" * 40, range(0))[:-1] + b"\x01" + b"\x00" * 8,  # longer than it says
               _ping("\x00" * 40, range(16384)),                    # a sender with no name
               ]
    for payload in garbage:
        sock = _bus(nodes[0])
        sock.sendall(payload)
        assert _closed(sock), payload[:20]
        sock.close()
    # A message cut short, then the peer gone: nothing happens.
    sock = _bus(nodes[0])
    sock.sendall(_ping("d" * 40, range(100))[:1000])
    sock.close()
    # A stranger claiming every slot with a huge epoch is answered but not believed.
    sock = _bus(nodes[0])
    sock.sendall(_ping("e" * 40, range(16384)))
    reply = sock.recv(8)
    assert reply[:4] == b"RCmb"
    sock.close()
    assert cluster.slots_view(nodes[0]) == before
    assert cluster_info(nodes[0])["cluster_state"] == "ok"
    assert len(nodes_table(nodes[0])) == 2
    assert "e" * 40 not in [f[0] for f in nodes_table(nodes[0])]
    cluster.wait_until_consistent(nodes)
