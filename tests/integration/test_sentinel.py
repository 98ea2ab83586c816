"""Redis Sentinel (Debian's redis-sentinel 7.0) manages goblin-server nodes as it manages redis-server ones.

One deployment is shared by the module: a goblin master, two goblin replicas (the second with
replica-priority 0) and three sentinels monitoring the master with quorum 2. The tests follow its life in
order, each reaching the state it needs through `Deployment`'s steps (a step already taken is not taken again):
the sentinels find the replicas and each other; the master is killed with SIGKILL and the replica that may be
promoted is, the other follows it, and a redis-py Sentinel client writes to the new master, which holds every
write both replicas had acknowledged; the old master, started again on its port and directory, is turned into
a replica of the new one; with no replica that may be promoted, no failover happens, until one may again.

The reconfiguration transaction a sentinel sends (MULTI, SLAVEOF, CONFIG REWRITE, CLIENT KILL TYPE normal and
pubsub, EXEC) is also sent by hand to a goblin replica and a redis-server replica, and the replies compared.
"""

from __future__ import annotations

import shutil

import pytest
import redis
import redis.sentinel

from support.replication import sync_counters, wait_caught_up
from support.resp import ConnectionClosed, ReplyTimeout
from support.server import REFERENCE_BINARY, ServerProcess, goblin_binary, stop_and_check, wait_for

SENTINEL_BINARY = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"
NAME = "mymaster"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 3000
# A failover takes a few of the sentinels' one-second rounds; a second attempt after an aborted one comes
# twice the failover timeout later.
FAILOVER_WAIT = 30.0
# Any node may become a master: none waits for more replicas before a full sync (redis-server's diskless
# sync would wait five seconds).
NODE_OPTIONS = {"repl-diskless-sync": "no"}
# The deployment's nodes keep an append-only file: the old master comes back with the data it had.
DEPLOYED_OPTIONS = {**NODE_OPTIONS, "appendonly": "yes"}

# The transaction a sentinel sends to turn an instance into a replica of host:port, or into a master with
# NO ONE (sentinel.c, sentinelSendSlaveOf).
def reconfiguration(host, port) -> list:
    return [("MULTI",), ("SLAVEOF", host, port), ("CONFIG", "REWRITE"), ("CLIENT", "KILL", "TYPE", "normal"),
            ("CLIENT", "KILL", "TYPE", "pubsub"), ("EXEC",)]


def pairs(flat) -> dict:
    """A flat [field, value, ...] reply as {str: str}."""
    text = [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
    return dict(zip(text[0::2], text[1::2]))


def role(node) -> list:
    with node.raw() as conn:
        return conn.call("ROLE").py()


def unless_killed(probe):
    """`probe`, for wait_for: a sentinel's reconfiguration kills every normal client of the node, the
    test's own probing connection among them; that round counts as not yet."""
    def polled():
        try:
            return probe()
        except (ConnectionClosed, ConnectionError):
            return False
    return polled


def has_role(node, name: bytes):
    return unless_killed(lambda: role(node)[0] == name)


def is_replica_of(node, master):
    """ROLE and INFO both say the node follows `master` over a link that is up."""
    def probe():
        reply = role(node)
        if reply[0] != b"slave" or reply[2] != master.port or reply[3] != b"connected":
            return False
        info = node.info("replication")
        return info["master_port"] == str(master.port) and info["master_link_status"] == "up"
    return unless_killed(probe)


def sentinel_process(master_port: int, index: int) -> ServerProcess:
    config = (f"sentinel monitor {NAME} 127.0.0.1 {master_port} 2\n"
              f"sentinel down-after-milliseconds {NAME} {DOWN_AFTER_MS}\n"
              f"sentinel failover-timeout {NAME} {FAILOVER_TIMEOUT_MS}\n")
    # A sentinel rewrites its configuration file (its id, the replicas and sentinels it found).
    return ServerProcess(SENTINEL_BINARY, name=f"sentinel-{index}", config_text=config, unix=False,
                         options={"save": None, "appendonly": None, "enable-debug-command": None})


class Deployment:
    """The goblin nodes and sentinels of the module, and the steps of their life taken so far."""

    def __init__(self):
        self.processes: list[ServerProcess] = []  # everything started, stopped at the end
        self.steps = {}

    def start(self):
        self.master = self.started(ServerProcess(goblin_binary(), name="goblin-master", unix=False,
                                                 options=DEPLOYED_OPTIONS))
        self.replicas = [
            self.started(ServerProcess(goblin_binary(), name=f"goblin-replica-{i}", unix=False,
                                       options={**DEPLOYED_OPTIONS, "replica-priority": priority},
                                       extra_args=["--replicaof", "127.0.0.1", str(self.master.port)]))
            for i, priority in enumerate((100, 0))]
        for replica in self.replicas:
            wait_caught_up(self.master, replica)
        self.sentinels = [self.started(sentinel_process(self.master.port, i)) for i in range(3)]
        for sentinel in self.sentinels:
            with sentinel.raw() as conn:
                # INFO every second instead of every ten, hello messages every second instead of every
                # two: the same rounds, shorter (a replica that claims to be a master is reconfigured
                # after four hello periods). PINGs every 250 ms: a sentinel's first PING to a new master
                # goes one ping period after it switched to it, and with the period as long as
                # down-after-milliseconds it would find the new master down and fail over again.
                reply = conn.call("SENTINEL", "DEBUG", "info-period", 1000, "publish-period", 1000,
                                  "ping-period", 250)
                assert reply.raw == b"+OK\r\n", reply
        self.client = redis.sentinel.Sentinel([("127.0.0.1", s.port) for s in self.sentinels],
                                              socket_timeout=2, socket_connect_timeout=2)

    def started(self, process: ServerProcess) -> ServerProcess:
        self.processes.append(process)
        return process.start()

    def query(self, sentinel, *command):
        with sentinel.raw() as conn:
            reply = conn.call(*command)
            assert not reply.is_error, f"{command} on {sentinel.name}: {reply!r}"
            return reply.py()

    def replicas_seen(self, sentinel) -> dict:
        """{port: fields} of SENTINEL REPLICAS."""
        return {int(f["port"]): f for f in map(pairs, self.query(sentinel, "SENTINEL", "REPLICAS", NAME))}

    def master_address(self, sentinel):
        host, port = self.query(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME)
        return host.decode(), int(port)

    def all_agree_on_master(self, node) -> bool:
        return all(self.master_address(s) == ("127.0.0.1", node.port) for s in self.sentinels)

    def step(self, name: str, action):
        """Runs `action` once; later calls return what it returned."""
        if name not in self.steps:
            self.steps[name] = action()
        return self.steps[name]

    def stop(self):
        errors = []
        for process in self.processes:
            try:
                stop_and_check(process)
            except AssertionError as exc:
                errors.append(str(exc))
        assert not errors, "\n".join(errors)

    # ---- the steps -----------------------------------------------------------------------------------------

    def discovered(self):
        def both_replicas_and_two_peers():
            for sentinel in self.sentinels:
                seen = self.replicas_seen(sentinel)
                if set(seen) != {r.port for r in self.replicas}:
                    return False
                if any(seen[r.port]["master-link-status"] != "ok" for r in self.replicas):
                    return False
                peers = {int(pairs(p)["port"]) for p in self.query(sentinel, "SENTINEL", "SENTINELS", NAME)}
                if peers != {s.port for s in self.sentinels} - {sentinel.port}:
                    return False
            return True
        return self.step("discovered", lambda: wait_for(both_replicas_and_two_peers, timeout=20,
                                                        what="every sentinel to see both replicas and two peers"))

    def failed_over(self):
        """Writes acknowledged by both replicas, then SIGKILL of the master; returns the keys written."""
        def action():
            self.discovered()
            writer = self.client.master_for(NAME, socket_timeout=2)
            pipe = writer.pipeline(transaction=False)
            written = {f"acked:{i}".encode(): str(i).encode() for i in range(200)}
            for key, value in written.items():
                pipe.set(key, value)
            # WAIT on the connection that wrote. Both replicas: the one that may not be promoted could be
            # the only one to acknowledge WAIT 1.
            pipe.execute_command("WAIT", 2, 10000)
            assert pipe.execute()[-1] == 2
            self.master.kill_hard()
            promoted, follower = self.replicas
            wait_for(has_role(promoted, b"master"), timeout=FAILOVER_WAIT, what="the promotion")
            wait_for(is_replica_of(follower, promoted), timeout=FAILOVER_WAIT,
                     what="the other replica to follow the promoted one")
            wait_for(lambda: self.all_agree_on_master(promoted), timeout=FAILOVER_WAIT,
                     what="every sentinel to name the promoted replica")
            return writer, written
        return self.step("failed_over", action)

    def rejoined(self):
        def action():
            self.failed_over()
            self.master.restart(keep_port=True)
            wait_for(is_replica_of(self.master, self.replicas[0]), timeout=FAILOVER_WAIT,
                     what="the sentinels to make the old master a replica of the new one")
            wait_caught_up(self.replicas[0], self.master)
        return self.step("rejoined", action)


@pytest.fixture(scope="module")
def deployment():
    made = Deployment()
    try:
        made.start()
        yield made
    finally:
        made.stop()


def test_the_sentinels_discover_the_replicas_and_each_other(deployment):
    deployment.discovered()
    for sentinel in deployment.sentinels:
        assert deployment.master_address(sentinel) == ("127.0.0.1", deployment.master.port)
        master = pairs(deployment.query(sentinel, "SENTINEL", "MASTER", NAME))
        assert master["flags"] == "master" and master["num-slaves"] == "2" and master["num-other-sentinels"] == "2"
        assert master["runid"] == deployment.master.info("server")["run_id"]
        seen = deployment.replicas_seen(sentinel)
        for replica, priority in zip(deployment.replicas, ("100", "0")):
            fields = seen[replica.port]
            assert fields["flags"] == "slave" and fields["role-reported"] == "slave"
            assert fields["master-port"] == str(deployment.master.port)
            assert fields["runid"] == replica.info("server")["run_id"]
            assert fields["slave-priority"] == priority


def test_a_killed_master_is_replaced_and_the_client_follows(deployment):
    writer, written = deployment.failed_over()
    promoted, follower = deployment.replicas
    assert role(follower)[0] == b"slave", "the replica-priority 0 replica was promoted"
    # The client asks the sentinels for the master and reconnects; the first writes may still reach the
    # dead master's address or the client's broken connection.
    def write(i):
        try:
            return writer.set(f"after:{i}", i)
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            return False
    wait_for(lambda: write(0), timeout=FAILOVER_WAIT, what="a write through the sentinel client")
    for i in range(1, 50):
        assert writer.set(f"after:{i}", i)
    # The old master's file still holds this key: once it follows the new master it must be gone there too.
    assert writer.delete("acked:0") == 1
    assert deployment.client.discover_master(NAME) == ("127.0.0.1", promoted.port)
    keys = list(written)[1:]
    wait_caught_up(promoted, follower)
    # The follower continued the history it shares with the promoted replica (PSYNC2): no full sync.
    assert sync_counters(promoted) == (0, 1, 0)
    for node in (promoted, follower):
        with node.raw() as conn:
            assert conn.call("MGET", *keys).py() == [written[k] for k in keys]
            assert conn.call("MGET", "acked:0", "after:49").py() == [None, b"49"]


def test_the_old_master_comes_back_as_a_replica_and_catches_up(deployment):
    writer, written = deployment.failed_over()
    deployment.rejoined()
    promoted = deployment.replicas[0]
    old = deployment.master
    assert writer.set("after-rejoin", "1")
    wait_caught_up(promoted, old)
    keys = list(written)[1:]
    with old.raw() as conn:
        # Its own file's data replaced by the new master's: acked:0, deleted after the failover, is gone.
        assert conn.call("MGET", *keys).py() == [written[k] for k in keys]
        assert conn.call("MGET", "acked:0", "after:49", "after-rejoin").py() == [None, b"49", b"1"]
        assert conn.call("SET", "x", "1").raw.startswith(b"-READONLY")
    # Its history ended with its crash (a new replication id when it came back): the new master refuses its
    # PSYNC and makes a full sync.
    assert sync_counters(promoted) == (1, 1, 1)
    wait_for(lambda: all(deployment.replicas_seen(s)[old.port]["flags"] == "slave" and
                         deployment.replicas_seen(s)[old.port]["master-link-status"] == "ok"
                         for s in deployment.sentinels),
             timeout=FAILOVER_WAIT, what="every sentinel to see the old master as a healthy replica")


def test_a_priority_0_replica_is_never_promoted(deployment):
    deployment.rejoined()
    promoted, never = deployment.replicas
    candidate = deployment.master
    # Now neither replica may be promoted: the sentinels must see both priorities at 0 first.
    with candidate.raw() as conn:
        assert conn.call("CONFIG", "SET", "replica-priority", 0).raw == b"+OK\r\n"
    wait_for(lambda: all(deployment.replicas_seen(s)[candidate.port]["slave-priority"] == "0"
                         for s in deployment.sentinels), timeout=10, what="the sentinels to see priority 0")
    listeners = []
    for sentinel in deployment.sentinels:
        pubsub = redis.Redis(host="127.0.0.1", port=sentinel.port, socket_timeout=5).pubsub()
        pubsub.subscribe("-failover-abort-no-good-slave", "+selected-slave")
        listeners.append(pubsub)
    try:
        promoted.kill_hard()

        def events():
            seen = []
            for pubsub in listeners:
                message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
                if message:
                    seen.append(message["channel"])
            return seen
        got = wait_for(events, timeout=FAILOVER_WAIT, what="a sentinel to give up for want of a replica")
        assert got == [b"-failover-abort-no-good-slave"]
        assert role(never)[0] == b"slave" and role(candidate)[0] == b"slave"
        # Once the old master may be promoted again, the next attempt promotes it, never the other.
        with candidate.raw() as conn:
            assert conn.call("CONFIG", "SET", "replica-priority", 100).raw == b"+OK\r\n"
        wait_for(has_role(candidate, b"master"), timeout=FAILOVER_WAIT, what="the second promotion")
        wait_for(is_replica_of(never, candidate), timeout=FAILOVER_WAIT, what="the replica to follow it")
        assert role(never)[0] == b"slave"
    finally:
        for pubsub in listeners:
            pubsub.close()


# ---- the reconfiguration transaction, against redis-server's replies ------------------------------------------

# The clients a replica has when the transaction comes: CLIENT KILL TYPE normal and TYPE pubsub count them.
OTHER_CLIENTS = {
    "idle": [("PING",)],
    "named": [("CLIENT", "SETNAME", "app")],
    "subscriber": [("SUBSCRIBE", "__sentinel__:hello")],
    "pattern-subscriber": [("PSUBSCRIBE", "*")],
    "shard-subscriber": [("SSUBSCRIBE", "channel")],
    "resp3-subscriber": [("HELLO", 3), ("SUBSCRIBE", "channel")],
    "unsubscribed": [("SUBSCRIBE", "channel"), ("UNSUBSCRIBE", "channel")],
    "monitor": [("MONITOR",)],
    "in-multi": [("MULTI",), ("GET", "k")],
    "tracking": [("HELLO", 3), ("CLIENT", "TRACKING", "on")],
    "blocked": [],
}


def transaction_replies(make_server, kind: str, target, with_config: bool, master):
    """The replies to the transaction making a `kind` replica of `master` follow `target` (None: promoting
    it), which connections it closed, and the replicaof lines CONFIG REWRITE left in its file."""
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    replica = make_server(binary=binary, name=f"{kind}-replica", unix=False, options=NODE_OPTIONS,
                          config_text="# replica\n" if with_config else None,
                          extra_args=["--replicaof", "127.0.0.1", str(master.port)])
    wait_caught_up(master, replica)
    others = {}
    for name, setup in OTHER_CLIENTS.items():
        other = others[name] = replica.raw()
        for command in setup:
            assert not other.call(*command).is_error, (name, command)
    others["blocked"].send_command("XREAD", "BLOCK", 0, "STREAMS", "stream", "$")
    wait_for(lambda: replica.info("clients")["blocked_clients"] == "1", what="XREAD to block")
    conn = replica.raw()
    host, port = ("NO", "ONE") if target is None else ("127.0.0.1", target.port)
    replies = [r.raw for r in conn.pipeline(reconfiguration(host, port))]
    # Which connections the two kills closed; the one that sent the transaction goes on.
    closed = {}
    for name, other in others.items():
        try:
            other.read_until_closed(timeout=1)
            closed[name] = True
        except ReplyTimeout:
            closed[name] = False
        other.close()
    assert conn.call("PING").raw == b"+PONG\r\n"
    conn.close()
    if target is None:
        wait_for(has_role(replica, b"master"), what="the promotion")
    else:
        wait_for(is_replica_of(replica, target), what="the new master")
    rewritten = None
    if with_config:
        with open(replica.config_path) as f:
            rewritten = [line for line in f.read().splitlines() if line.split(" ")[0] in ("replicaof", "slaveof")]
    return replies, closed, rewritten


@pytest.mark.parametrize("with_config", [True, False], ids=["config-file", "no-config-file"])
@pytest.mark.parametrize("target", ["no-one", "new-master", "same-master"])
def test_the_reconfiguration_transaction_replies_as_redis_does(make_server, target, with_config):
    """Promotion (SLAVEOF NO ONE), a failover's reconfiguration (another master), and the fix-up of a
    replica's configuration that names the master it already follows."""
    master = make_server(name="goblin-master", unix=False, options=NODE_OPTIONS)
    new_master = {"no-one": None, "same-master": master,
                  "new-master": make_server(name="goblin-new-master", unix=False, options=NODE_OPTIONS)}[target]
    goblin = transaction_replies(make_server, "goblin", new_master, with_config, master)
    redis_ = transaction_replies(make_server, "redis", new_master, with_config, master)
    assert goblin == redis_
    replies, closed, rewritten = goblin
    assert replies[:5] == [b"+OK\r\n"] + [b"+QUEUED\r\n"] * 4
    assert closed == dict.fromkeys(OTHER_CLIENTS, True)
    if with_config:
        assert rewritten == ([] if new_master is None else [f"replicaof 127.0.0.1 {new_master.port}"])
    else:
        assert b"-ERR The server is running without a config file\r\n" in replies[5]
