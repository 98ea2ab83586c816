"""Redis Cluster test helpers: nodes (goblin-server or redis-server) in cluster mode on free ports,
clusters made and changed with redis-cli --cluster as an operator makes them, and waits for the
cluster's own view to settle."""

from __future__ import annotations

import subprocess
import threading

import redis

from support.server import REFERENCE_BINARY, ServerProcess, free_port, goblin_binary, wait_for


def node_options(timeout_ms: int = 1000, **extra) -> dict:
    """Options of a cluster node: its bus on a port of its own (the client port + 10000 may not
    exist), nodes.conf in its directory."""
    options = {"cluster-enabled": "yes", "cluster-port": free_port(),
               "cluster-node-timeout": timeout_ms, "cluster-config-file": "nodes.conf"}
    options.update(extra)
    return options


def start_nodes(make_server, count: int, binary: str | None = None, name: str = "goblin",
                **options) -> list[ServerProcess]:
    return [make_server(binary=binary or goblin_binary(), name=f"{name}-{i}", options=node_options(**options))
            for i in range(count)]


def start_redis_nodes(make_server, count: int, **options) -> list[ServerProcess]:
    return start_nodes(make_server, count, binary=REFERENCE_BINARY, name="redis", **options)


def address(node: ServerProcess) -> str:
    return f"127.0.0.1:{node.port}"


def cli(*args, timeout: float = 120.0) -> str:
    """redis-cli --cluster ...; returns its output, failing the test when it fails."""
    result = subprocess.run(["redis-cli", "--cluster", *map(str, args)], capture_output=True, text=True,
                            timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"redis-cli --cluster {' '.join(map(str, args))} failed:\n{output}"
    return output


def create(nodes: list[ServerProcess], replicas: int = 0) -> str:
    output = cli("create", *map(address, nodes), "--cluster-replicas", replicas, "--cluster-yes")
    wait_until_consistent(nodes)
    return output


def check(node: ServerProcess) -> str:
    """redis-cli --cluster check, which must find nothing wrong."""
    output = cli("check", address(node))
    assert "[OK] All nodes agree about slots configuration." in output, output
    assert "[OK] All 16384 slots covered." in output, output
    assert "[WARNING]" not in output and "[ERR]" not in output, output
    return output


def node_id(node: ServerProcess) -> str:
    return node.client().execute_command("CLUSTER", "MYID").decode()


def cluster_info(node: ServerProcess) -> dict:
    text = node.client().execute_command("CLUSTER", "INFO").decode()
    return dict(line.split(":", 1) for line in text.strip().splitlines())


def nodes_table(node: ServerProcess) -> list[list[str]]:
    """CLUSTER NODES as a list of split lines."""
    text = node.client().execute_command("CLUSTER", "NODES").decode()
    return [line.split() for line in text.strip().splitlines()]


def slots_view(node: ServerProcess) -> dict:
    """{node id: sorted slot ranges} of the masters, as node sees them."""
    view = {}
    for fields in nodes_table(node):
        if "master" in fields[2].split(","):
            view[fields[0]] = sorted(s for s in fields[8:] if not s.startswith("["))
    return view


def wait_until_consistent(nodes: list[ServerProcess], timeout: float = 30.0):
    """Every node knows every other one, none in handshake or failing, all agree on the slots and
    say the cluster is ok."""
    def settled():
        views = []
        for node in nodes:
            table = nodes_table(node)
            if len(table) != len(nodes):
                return False
            if any(flag in fields[2] for fields in table for flag in ("handshake", "fail", "noaddr")):
                return False
            if cluster_info(node)["cluster_state"] != "ok":
                return False
            views.append(slots_view(node))
        return all(view == views[0] for view in views)
    wait_for(settled, timeout=timeout, interval=0.1, what="the cluster to settle")


def cluster_client(nodes: list[ServerProcess]):
    """redis-py's RedisCluster (str replies) that starts from the given nodes and finds the rest."""
    from redis.cluster import ClusterNode, RedisCluster

    return RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", n.port) for n in nodes],
                        decode_responses=True)


def role(node: ServerProcess) -> str:
    return node.client().execute_command("ROLE")[0].decode()


class BackgroundWrites:
    """SETs prefix+i = i through a cluster client on a thread, i counting up, until stop(), which
    returns the writes the cluster acknowledged; one refused (a redirection retried past the
    client's limit) is simply not counted."""

    def __init__(self, nodes: list[ServerProcess], prefix: str):
        self._nodes = nodes
        self._prefix = prefix
        self._written = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self):
        client = cluster_client(self._nodes)
        i = 0
        while not self._stop.is_set():
            try:
                client.set(f"{self._prefix}{i}", i)
                self._written[f"{self._prefix}{i}"] = str(i)
            except redis.RedisError:
                pass
            i += 1

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return self._written
