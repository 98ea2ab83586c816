"""Redis Cluster clients used unchanged against a cluster of three masters made with redis-cli
--cluster create: ioredis's Cluster and node-redis's createCluster (tests/node/cluster_client.js)
find the slot map, spread keys over the slots, send a pipeline and a MULTI on one hash tag, and
follow MOVED and ASK while redis-cli --cluster reshard and a hand-made slot migration move slots
under them; redis-py's RedisCluster follows a hand-made migration from both of its sides and
carries pub/sub. Each test runs on goblin-server nodes and on Debian's redis-server 7.0 nodes, the
reference the clients were written against."""

from __future__ import annotations

import pytest

from support import cluster
from support.cluster import address, cluster_client, node_id
from support.node import SteeredNodeScript
from support.server import REFERENCE_BINARY, goblin_binary, wait_for

SLOTS = 16384


@pytest.fixture(params=[pytest.param("goblin", id="goblin"), pytest.param("redis", id="redis-7.0")])
def three_masters(request, make_server):
    """Three masters, of goblin-server or of redis-server, made into one cluster by redis-cli."""
    binary = goblin_binary() if request.param == "goblin" else REFERENCE_BINARY
    nodes = cluster.start_nodes(make_server, 3, binary=binary, name=request.param)
    cluster.create(nodes)
    return nodes


def slot_ranges(node) -> list[list[int]]:
    """[[first, last, port], ...] of the masters' slots as node's CLUSTER SLOTS tells them, with
    touching ranges of one master joined (as a client's per-slot map shows them)."""
    out = []
    for first, last, master, *_ in sorted(node.client().execute_command("CLUSTER", "SLOTS")):
        if out and out[-1][2] == master[1] and out[-1][1] == first - 1:
            out[-1][1] = last
        else:
            out.append([first, last, master[1]])
    return out


def owner_of(nodes, key: str):
    slot = nodes[0].client().execute_command("CLUSTER", "KEYSLOT", key)
    port = next(port for first, last, port in slot_ranges(nodes[0]) if first <= slot <= last)
    return slot, next(n for n in nodes if n.port == port)


def errors_counted(node, prefix: str) -> int:
    """How many replies of node began with the error prefix (INFO errorstats)."""
    stat = node.info("errorstats").get(f"errorstat_{prefix}")
    return int(stat.split("=")[1]) if stat else 0


def asking_calls(node) -> int:
    stat = node.info("commandstats").get("cmdstat_asking")
    return int(stat.split(",")[0].split("=")[1]) if stat else 0


def keys_in_slot(node, slot: int) -> int:
    return node.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot)


def start_migration(nodes, tag: str, count: int, moved: int):
    """Puts count keys <tag>:<i> (value: the key) in tag's slot, marks the slot MIGRATING on its
    owner and IMPORTING on another master, and moves the first `moved` keys there with MIGRATE, as
    redis-cli does for each slot it moves. Returns (slot, source, target, keys)."""
    slot, source = owner_of(nodes, tag)
    target = next(n for n in nodes if n is not source)
    keys = [f"{tag}:{i}" for i in range(count)]
    source.client().mset({k: k for k in keys})
    assert target.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING",
                                           node_id(source)) == b"OK"
    assert source.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING",
                                           node_id(target)) == b"OK"
    assert source.client().execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000, "KEYS",
                                           *keys[:moved]) == b"OK"
    assert (keys_in_slot(source, slot), keys_in_slot(target, slot)) == (count - moved, moved)
    return slot, source, target, keys


def finish_migration(nodes, slot: int, source, target):
    """Moves the rest of the slot's keys and gives the slot to the target, as redis-cli does."""
    keys = [k.decode() for k in
            source.client().execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)]
    if keys:
        assert source.client().execute_command("MIGRATE", "127.0.0.1", target.port, "", 0, 5000,
                                               "KEYS", *keys) == b"OK"
    target_id = node_id(target)
    for node in [target, source] + [n for n in nodes if n not in (source, target)]:
        assert node.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id) == b"OK"


# ---- ioredis and node-redis ----------------------------------------------------------------------


@pytest.mark.parametrize("library", ["ioredis", "node-redis"])
def test_node_cluster_client_follows_moved_and_ask_while_slots_move(three_masters, library):
    nodes = three_masters
    # One startup node: the client must find the other two itself.
    app = SteeredNodeScript("cluster_client.js", library, nodes[0].port)
    try:
        basics = app.request("basics", "k")
        assert basics["ranges"] == slot_ranges(nodes[0])
        assert basics["wrong"] == []
        assert all(n.client().dbsize() > 50 for n in nodes)
        assert basics["pipeline"] == ["OK", 1, "one"]
        assert basics["multi"] == ["OK", 1, "two"]
        assert owner_of(nodes, "{kp}")[1].client().mget("{kp}a", "{kp}n") == [b"one", b"1"]
        assert owner_of(nodes, "{km}")[1].client().mget("{km}a", "{km}n") == [b"two", b"1"]

        # redis-cli moves 300 slots from the first master to the second under a steady load.
        moved_before = sum(errors_counted(n, "MOVED") for n in nodes)
        assert app.request("load") == {"started": True}
        wait_for(lambda: app.request("progress")["written"] >= 200, what="the load to start")
        cluster.cli("reshard", address(nodes[0]), "--cluster-from", node_id(nodes[0]),
                    "--cluster-to", node_id(nodes[1]), "--cluster-slots", 300, "--cluster-yes")
        after_reshard = app.request("progress")["written"]
        wait_for(lambda: app.request("progress")["written"] >= after_reshard + 500,
                 what="the load to go on after the reshard")
        load = app.request("stop")
        assert load["wrong"] == [] and load["errors"] == []
        assert sum(errors_counted(n, "MOVED") for n in nodes) > moved_before
        cluster.wait_until_consistent(nodes)
        rc = cluster_client(nodes)
        written = [f"load:{n}" for n in range(load["written"])]
        assert rc.mget_nonatomic(written) == [f"v{n}" for n in range(load["written"])]

        # A slot half moved: the client is sent on with ASK for the keys already on the target,
        # and a new key of the slot goes there too.
        slot, source, target, keys = start_migration(nodes, "{ask}", 10, moved=5)
        asked_before = asking_calls(target)
        assert app.request("get", *keys)["values"] == keys
        assert asking_calls(target) >= asked_before + 5
        assert app.request("set", "{ask}:new", "fresh")["reply"] == "OK"
        assert (keys_in_slot(source, slot), keys_in_slot(target, slot)) == (5, 6)
        # The slot given to the target: the client still sends to the source, which says MOVED.
        finish_migration(nodes, slot, source, target)
        moved_before = errors_counted(source, "MOVED")
        assert app.request("get", *keys, "{ask}:new")["values"] == keys + ["fresh"]
        assert errors_counted(source, "MOVED") > moved_before
    finally:
        app.close()
    cluster.wait_until_consistent(nodes)
    cluster.check(nodes[0])


# ---- redis-py ------------------------------------------------------------------------------------


def test_redis_py_cluster_reads_both_sides_of_a_migrating_slot(three_masters):
    nodes = three_masters
    rc = cluster_client(nodes[:1])
    assert len(rc.get_primaries()) == 3
    slot, source, target, keys = start_migration(nodes, "{mig}", 20, moved=8)
    asked_before = asking_calls(target)
    # Twelve keys read where they are, eight behind ASK on the target.
    assert [rc.get(k) for k in keys] == keys
    assert asking_calls(target) >= asked_before + 8
    # Writes of a moved key and of a new one land on the target.
    assert rc.set(keys[0], "rewritten") is True
    assert rc.set("{mig}:new", "fresh") is True
    assert (keys_in_slot(source, slot), keys_in_slot(target, slot)) == (12, 9)
    finish_migration(nodes, slot, source, target)
    moved_before = errors_counted(source, "MOVED")
    assert [rc.get(k) for k in keys + ["{mig}:new"]] == ["rewritten"] + keys[1:] + ["fresh"]
    assert errors_counted(source, "MOVED") > moved_before
    assert rc.get_node_from_key("{mig}").port == target.port
    cluster.wait_until_consistent(nodes)
    cluster.check(nodes[0])


def test_redis_py_cluster_pubsub_hears_a_publish_made_on_another_node(three_masters):
    """redis-py 4.3.4's ClusterPubSub subscribes on the node of the channel's slot; a PUBLISH on
    any node reaches it over the cluster bus. (Sharded pub/sub, SSUBSCRIBE, came to redis-py in
    5.0: test_cluster.py tests it on the nodes themselves.)"""
    nodes = three_masters
    rc = cluster_client(nodes)
    pubsub = rc.pubsub()
    pubsub.subscribe("news")
    message = wait_for(lambda: pubsub.get_message(timeout=0.1), what="the subscription")
    assert message["type"] == "subscribe" and message["channel"] == "news"
    _, home = owner_of(nodes, "news")
    assert pubsub.get_pubsub_node().port == home.port
    for node in nodes:
        # PUBLISH counts the subscribers of its own node only.
        sender = rc.get_node(host="127.0.0.1", port=node.port)
        assert rc.publish("news", f"from {node.port}", target_nodes=sender) == \
            (1 if node is home else 0)
        message = wait_for(lambda: pubsub.get_message(timeout=0.1), what="the message")
        assert (message["type"], message["channel"], message["data"]) == \
            ("message", "news", f"from {node.port}")
    assert rc.pubsub_numsub("news", target_nodes=rc.get_node(host="127.0.0.1", port=home.port)) \
        == [("news", 1)]
    pubsub.close()
