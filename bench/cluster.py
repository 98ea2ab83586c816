#!/usr/bin/python3
"""Redis Cluster mode against redis-server, the same run: resharding, failover, memory per key, throughput.

Every cluster is built the same way for both servers: nodes on free TCP ports, each with a cluster bus port of
its own (cluster-port), nodes.conf in a temporary directory per node, persistence off, joined by
`redis-cli --cluster create` (3 masters, or 3 masters and 3 replicas). Servers run pinned to --server-cpu
(default 1); redis-cli and this script to --client-cpu (default 0).

reshard     N string keys key:%08d with 16-byte values (bench/memory.py's string workload, sent as one MSET per
            slot, pipelined to each slot's master) spread over all slots of a 3-master cluster; then
            `redis-cli --cluster reshard` moves all of the first master's slots (5461) to the second, timed from
            exec to exit, and the keys are counted on every master afterwards. The same on an empty cluster
            gives the cost of the slot protocol alone (SETSLOT IMPORTING/MIGRATING, GETKEYSINSLOT, SETSLOT
            NODE on every master), 5461 times. Fresh cluster per run, A B B A over --rounds.
failover    3 masters and 3 replicas, cluster-node-timeout --node-timeout (2000 ms). One master gets SIGKILL;
            polled every 20 ms: the time until its replica's ROLE says master, and until every surviving node's
            CLUSTER INFO says cluster_state:ok with that replica serving. Fresh cluster per run, servers
            alternating over --failover-runs runs each; medians.
memory      used_memory after loading N string keys (the same MSETs, one per slot) minus before, per key, on
            one node: standalone, and cluster-enabled with all 16384 slots added (CLUSTER ADDSLOTSRANGE). For
            both binaries. Unix socket, one fresh server per row.
throughput  `redis-benchmark --cluster -c 50 -P 1 -r 1000000 -t set,get -n --requests` against each 3-master
            cluster (both clusters up; runs alternate A B B A over --rounds); median requests/s of the three
            nodes together and goblin/redis. redis-benchmark runs on the servers' CPU, as bench/throughput.sh
            pins it: over TCP loopback on this VM a client on the other CPU halves both servers' rates.

stdout is Markdown (a header with the command line, date, binaries, versions and load average, then one table
per measure); progress goes to stderr. --quick takes under 2 minutes. See bench/README.md.
Only the Python standard library is used (Debian's /usr/bin/python3).
"""

import argparse
import binascii
import datetime
import functools
import os
import random
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory  # noqa: E402  -- bench/memory.py: Conn (a minimal RESP client), parse_info, proc_rss, resp

SLOTS = 16384
SEED = memory.SEED


log = functools.partial(print, file=sys.stderr, flush=True)


def free_port():
    """A port nobody listens on now: the one the kernel gives a socket bound to port 0."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def key_slot(key):
    """The Redis Cluster hash slot of a key without hash tags: CRC16-XMODEM, which binascii computes."""
    return binascii.crc_hqx(key, 0) % SLOTS


class TcpConn(memory.Conn):
    """bench/memory.py's RESP client over TCP."""

    def __init__(self, port, timeout=600):  # noqa: super().__init__ opens a Unix socket
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""


def text(reply):
    return reply.decode(errors="replace") if isinstance(reply, bytes) else str(reply)


class Node:
    """A server in a directory of its own, pinned to cpu, on a free TCP port and a Unix socket; with
    cluster=True a cluster node with its bus on a free port of its own."""

    def __init__(self, binary, cpu, cluster=True, node_timeout=2000):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="bench-cluster-")
        self.port = free_port()
        self.sock = os.path.join(self.dir, "s.sock")
        cmd = ["taskset", "-c", str(cpu), binary, "--port", str(self.port), "--bind", "127.0.0.1",
               "--unixsocket", self.sock, "--save", "", "--appendonly", "no", "--dir", self.dir,
               "--repl-diskless-sync-delay", "0"]
        if cluster:
            cmd += ["--cluster-enabled", "yes", "--cluster-port", str(free_port()),
                    "--cluster-node-timeout", str(node_timeout), "--cluster-config-file", "nodes.conf"]
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=self.dir)
        deadline = time.monotonic() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{binary} exited at startup:\n{self.tail()}")
            try:
                self.conn = TcpConn(self.port, timeout=600)
                if self.conn.call("PING") == b"+PONG":
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{binary} did not answer PING:\n{self.tail()}")
            time.sleep(0.02)

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def call(self, *args):
        reply = self.conn.call(*args)
        if isinstance(reply, bytes) and reply.startswith(b"-"):
            raise RuntimeError(f"{self.address} {' '.join(map(str, args))}: {text(reply)}")
        return reply

    def info(self, section):
        return memory.parse_info(self.call("INFO", section))

    def cluster_info(self):
        return memory.parse_info(self.call("CLUSTER", "INFO"))

    def nodes(self):
        """CLUSTER NODES as split lines."""
        return [line.split() for line in text(self.call("CLUSTER", "NODES")).strip().splitlines()]

    def my_id(self):
        return text(self.call("CLUSTER", "MYID"))

    def role(self):
        return text(self.call("ROLE")[0])

    tail = memory.Server.tail  # the last lines of DIR/server.log

    def kill(self):
        """SIGKILL, as a crash."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.kill()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(check, what, timeout=60.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return
        except (OSError, RuntimeError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(interval)


def settled(nodes):
    """Every node knows all the others, none in handshake or failing, all say cluster_state:ok and agree on
    which masters own slots."""
    views = []
    for node in nodes:
        table = node.nodes()
        if len(table) != len(nodes):
            return False
        if any(flag in fields[2] for fields in table for flag in ("handshake", "fail", "noaddr")):
            return False
        if node.cluster_info()["cluster_state"] != "ok":
            return False
        views.append(sorted((f[0], tuple(f[8:])) for f in table if "master" in f[2]))
    return all(view == views[0] for view in views)


def cli(args, cpu, out=subprocess.DEVNULL):
    subprocess.run(["taskset", "-c", str(cpu), "redis-cli", "--cluster", *map(str, args)], stdout=out,
                   stderr=subprocess.STDOUT, check=True)


class Cluster:
    """3 masters (and with replicas=1 a replica each) made by redis-cli --cluster create."""

    def __init__(self, binary, args, replicas=0):
        self.nodes = [Node(binary, args.server_cpu, node_timeout=args.node_timeout) for _ in range(3 * (1 + replicas))]
        try:
            cli(["create", *(n.address for n in self.nodes), "--cluster-replicas", replicas, "--cluster-yes"],
                args.client_cpu)
            wait_for(lambda: settled(self.nodes), "the cluster to settle")
            for node in self.replicas():
                wait_for(lambda: node.info("replication").get("master_link_status") == "up", "a replica's sync")
        except BaseException:
            self.stop()
            raise

    def masters(self):
        return [n for n in self.nodes if n.role() == "master"]

    def replicas(self):
        return [n for n in self.nodes if n.role() == "slave"]

    def slot_owners(self):
        """[master Node] indexed by slot, from CLUSTER SLOTS."""
        by_port = {n.port: n for n in self.nodes}
        owners = [None] * SLOTS
        for start, end, master, *_ in self.nodes[0].call("CLUSTER", "SLOTS"):
            for slot in range(int(start[1:]), int(end[1:]) + 1):
                owners[slot] = by_port[int(master[1][1:])]
        return owners

    def stop(self):
        for node in self.nodes:
            node.stop()


def string_load(n, seed=SEED):
    """bench/memory.py's string workload (keys key:%08d, permuted, 16 random hex digits each), grouped by slot:
    {slot: one MSET of that slot's keys, RESP-encoded}. MSET across slots is refused in cluster mode, so one MSET
    per slot serves the cluster and the standalone server alike."""
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    by_slot = {}
    for i in order:
        key = b"key:%08d" % i
        by_slot.setdefault(key_slot(key), []).append(b"$12\r\n%s\r\n$16\r\n%016x\r\n" % (key, rng.getrandbits(64)))
    return {slot: b"*%d\r\n$4\r\nMSET\r\n%s" % (1 + 2 * len(parts), b"".join(parts))
            for slot, parts in by_slot.items()}


def send_load(conn, cmds):
    errors = conn.stream(cmds)
    if errors:
        raise RuntimeError(f"{len(errors)} errors while loading, first: {errors[0]}")


def load_cluster(cluster, load):
    owners = cluster.slot_owners()
    per_node = {}
    for slot, cmd in load.items():
        per_node.setdefault(owners[slot].port, []).append(cmd)
    for node in cluster.masters():
        conn = TcpConn(node.port)
        send_load(conn, per_node.get(node.port, []))
        conn.close()


def median(values):
    return statistics.median(values) if values else float("nan")


def ratio(g, r):
    return f"{g / r:.2f}" if r else "n/a"


def order(round_):
    return ("goblin", "redis") if round_ % 2 == 0 else ("redis", "goblin")


# ---- resharding --------------------------------------------------------------------------------------------------

def reshard_seconds(binary, args, load, n):
    cluster = Cluster(binary, args)
    try:
        if load:
            load_cluster(cluster, load)
        masters = cluster.masters()
        owners = cluster.slot_owners()
        source, target = masters[0], masters[1]
        owned = [slot for slot, owner in enumerate(owners) if owner is source]
        moved = min(args.slots, len(owned)) if args.slots else len(owned)
        keys_before = {m.port: int(text(m.call("DBSIZE"))[1:]) for m in masters}
        assert sum(keys_before.values()) == n, f"the cluster holds {sum(keys_before.values())} of {n} keys"
        with open(os.path.join(source.dir, "reshard.log"), "wb") as out:
            start = time.monotonic()
            cli(["reshard", source.address, "--cluster-from", source.my_id(), "--cluster-to", target.my_id(),
                 "--cluster-slots", moved, "--cluster-pipeline", args.pipeline, "--cluster-yes"], args.client_cpu,
                out)
            seconds = time.monotonic() - start
        keys_after = {m.port: int(text(m.call("DBSIZE"))[1:]) for m in masters}
        moved_keys = keys_before[source.port] - keys_after[source.port]
        assert keys_after[target.port] == keys_before[target.port] + moved_keys, "keys lost"
        assert moved < len(owned) or keys_after[source.port] == 0, f"{keys_after[source.port]} keys left"
        assert sum(1 for owner in cluster.slot_owners() if owner is source) == len(owned) - moved, "slots left"
        wait_for(lambda: settled(cluster.nodes), "the cluster to settle after the reshard")
        return seconds, moved, moved_keys
    finally:
        cluster.stop()


def run_reshard(args, binaries, versions):
    load = string_load(args.keys)
    results = {kind: {"full": [], "empty": []} for kind in binaries}
    moved_slots = moved_keys = 0
    for round_ in range(args.rounds):
        for kind in order(round_):
            seconds, moved_slots, moved_keys = reshard_seconds(binaries[kind], args, load, args.keys)
            empty, _, _ = reshard_seconds(binaries[kind], args, {}, 0)
            log(f"reshard round {round_ + 1} {kind}: {moved_slots} slots, {moved_keys:,} keys {seconds:.2f} s; "
                f"empty {empty:.2f} s")
            results[kind]["full"].append(seconds)
            results[kind]["empty"].append(empty)
    g = {k: median(v) for k, v in results["goblin"].items()}
    r = {k: median(v) for k, v in results["redis"].items()}
    print(f"Resharding: `redis-cli --cluster reshard --cluster-slots {moved_slots} --cluster-pipeline "
          f"{args.pipeline}` from one master to another of 3, seconds from exec to exit, median of {args.rounds} "
          f"(runs: goblin {fmt_list(results['goblin']['full'])}, redis {fmt_list(results['redis']['full'])}; "
          f"empty: goblin {fmt_list(results['goblin']['empty'])}, redis {fmt_list(results['redis']['empty'])}).")
    print()
    print(f"| reshard of {moved_slots} slots | goblin | redis | goblin/redis | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| {args.keys:,} keys in the cluster ({moved_keys:,} moved) | {g['full']:.2f} s | {r['full']:.2f} s | "
          f"{ratio(g['full'], r['full'])} | ≤ 0.5 |")
    print(f"| empty cluster (the slot protocol alone) | {g['empty']:.2f} s | {r['empty']:.2f} s | "
          f"{ratio(g['empty'], r['empty'])} | |")
    print(f"| keys moved per second | {moved_keys / g['full']:,.0f} | {moved_keys / r['full']:,.0f} | "
          f"{ratio(r['full'], g['full'])} | |")
    print()


def fmt_list(values):
    return ", ".join(f"{v:.2f}" for v in values)


# ---- failover ----------------------------------------------------------------------------------------------------

def failover_seconds(binary, args):
    cluster = Cluster(binary, args, replicas=1)
    try:
        masters = cluster.masters()
        victim = masters[0]
        victim_id = victim.my_id()
        replica = next(n for n in cluster.replicas() if any(
            f[0] == n.my_id() and f[3] == victim_id for f in n.nodes()))
        replica_id = replica.my_id()
        survivors = [n for n in cluster.nodes if n is not victim]
        victim.kill()
        start = time.monotonic()
        promoted = None
        while True:
            now = time.monotonic() - start
            if promoted is None and replica.role() == "master":
                promoted = now
            if promoted is not None and all(n.cluster_info()["cluster_state"] == "ok" for n in survivors):
                # and every survivor routes the victim's slots to the replica
                if all(any(f[0] == replica_id and "master" in f[2] and len(f) > 8 for f in n.nodes())
                       for n in survivors):
                    return promoted, now
            if now > 60:
                raise RuntimeError("no failover within 60 s")
            time.sleep(0.02)
    finally:
        cluster.stop()


def run_failover(args, binaries, versions):
    results = {kind: [] for kind in binaries}
    for round_ in range(args.failover_runs):
        for kind in order(round_):
            promoted, ok = failover_seconds(binaries[kind], args)
            log(f"failover run {round_ + 1} {kind}: replica master after {promoted:.3f} s, all ok after {ok:.3f} s")
            results[kind].append((promoted, ok))
    g = [median(column) for column in zip(*results["goblin"])]
    r = [median(column) for column in zip(*results["redis"])]
    print(f"Failover: 3 masters + 3 replicas, cluster-node-timeout {args.node_timeout} ms, SIGKILL of one master, "
          f"polled every 20 ms; median of {args.failover_runs} runs each (all ok, runs: goblin "
          f"{fmt_list([x[1] for x in results['goblin']])}, redis {fmt_list([x[1] for x in results['redis']])}).")
    print()
    print("| after SIGKILL of a master | goblin | redis | goblin/redis | target |")
    print("|---|---:|---:|---:|---|")
    print(f"| its replica says ROLE master | {g[0]:.2f} s | {r[0]:.2f} s | {ratio(g[0], r[0])} | |")
    print(f"| every node says cluster_state:ok | {g[1]:.2f} s | {r[1]:.2f} s | {ratio(g[1], r[1])} | ≤ 1.0 |")
    print()


# ---- memory ------------------------------------------------------------------------------------------------------

def memory_per_key(binary, args, cluster, load):
    node = Node(binary, args.server_cpu, cluster=cluster)
    try:
        if cluster:
            node.call("CLUSTER", "ADDSLOTSRANGE", 0, SLOTS - 1)
            wait_for(lambda: node.cluster_info()["cluster_state"] == "ok", "a one-node cluster")
        before = memory.memory(node.conn, node.proc.pid)
        conn = memory.Conn(node.sock)
        send_load(conn, list(load.values()))
        conn.close()
        count = int(text(node.call("DBSIZE"))[1:])
        assert count == args.keys, f"{count} of {args.keys} keys"
        after = memory.memory(node.conn, node.proc.pid)
        return (after[0] - before[0]) / args.keys, (after[1] - before[1]) / args.keys
    finally:
        node.stop()


def run_memory(args, binaries, versions):
    load = string_load(args.keys)
    rows = {}
    for kind in ("redis", "goblin"):
        for cluster in (False, True):
            rows[kind, cluster] = memory_per_key(binaries[kind], args, cluster, load)
            log(f"memory {kind} {'cluster' if cluster else 'standalone'}: {rows[kind, cluster][0]:.1f} B/key used, "
                f"{rows[kind, cluster][1]:.1f} B/key RSS")
    print(f"Memory per key: {args.keys:,} string keys `key:%08d` with 16-byte values (raw 28 B), one MSET per slot, "
          "one node, (used_memory after − before) / N; cluster = cluster-enabled with all 16384 slots added.")
    print()
    print("| B/key | standalone used | cluster used | cluster − standalone | standalone RSS | cluster RSS |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in ("goblin", "redis"):
        s, c = rows[kind, False], rows[kind, True]
        print(f"| {kind} | {s[0]:.1f} | {c[0]:.1f} | {c[0] - s[0]:+.1f} | {s[1]:.1f} | {c[1]:.1f} |")
    g, r = rows["goblin", True], rows["redis", True]
    print(f"| goblin/redis | {ratio(rows['goblin', False][0], rows['redis', False][0])} | {ratio(g[0], r[0])} | | "
          f"{ratio(rows['goblin', False][1], rows['redis', False][1])} | {ratio(g[1], r[1])} |")
    print()
    print("Target: goblin cluster ≤ goblin standalone + 1 B/key.")
    print()


# ---- throughput --------------------------------------------------------------------------------------------------

def benchmark(cluster, args):
    out = subprocess.run(["taskset", "-c", str(args.server_cpu), "redis-benchmark", "--cluster", "-h", "127.0.0.1",
                          "-p", str(cluster.nodes[0].port), "-c", "50", "-P", "1", "-r", "1000000", "-d", "16",
                          "-n", str(args.requests), "-t", "set,get", "--csv"],
                         capture_output=True, text=True, check=True).stdout
    rates = {}
    for line in out.splitlines():
        match = re.match(r'"(SET|GET)","([0-9.]+)"', line)
        if match:
            rates[match[1]] = float(match[2])
    if set(rates) != {"SET", "GET"}:
        raise RuntimeError(f"redis-benchmark said:\n{out}")
    return rates


def run_throughput(args, binaries, versions):
    clusters = {}
    try:
        for kind in binaries:
            clusters[kind] = Cluster(binaries[kind], args)
        results = {kind: {"SET": [], "GET": []} for kind in binaries}
        for round_ in range(args.rounds * 2):
            for kind in order(round_):
                rates = benchmark(clusters[kind], args)
                log(f"throughput round {round_ + 1} {kind}: SET {rates['SET']:,.0f}/s, GET {rates['GET']:,.0f}/s")
                for command, rate in rates.items():
                    results[kind][command].append(rate)
    finally:
        for cluster in clusters.values():
            cluster.stop()
    print(f"Throughput: `redis-benchmark --cluster -c 50 -P 1 -r 1000000 -d 16 -n {args.requests} -t set,get` "
          f"against 3 masters over TCP, the servers and redis-benchmark all on CPU {args.server_cpu}; requests/s of "
          f"the three together, median of {args.rounds * 2} runs per server, A B B A.")
    print()
    print("| command | goblin | redis | goblin/redis | target |")
    print("|---|---:|---:|---:|---|")
    for command in ("SET", "GET"):
        g, r = median(results["goblin"][command]), median(results["redis"][command])
        print(f"| {command} | {g:,.0f} | {r:,.0f} | {ratio(g, r)} | ≥ 1.3 |")
    print()


# ---- main --------------------------------------------------------------------------------------------------------

def version(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"v=(\S+)", out)
    return match[1] if match else out.strip()


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


MEASURES = {"reshard": run_reshard, "failover": run_failover, "memory": run_memory, "throughput": run_throughput}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", default="build/goblin-server")
    parser.add_argument("--redis", default="/usr/bin/redis-server")
    parser.add_argument("--measures", default=",".join(MEASURES), help="comma-separated subset of %(default)s")
    parser.add_argument("--keys", type=int, help="reshard, memory: string keys (default 1000000)")
    parser.add_argument("--rounds", type=int,
                        help="reshard: runs per server; throughput: pairs of runs per server (default 2)")
    parser.add_argument("--slots", type=int, help="reshard: slots moved (default all of one master's, 5461)")
    parser.add_argument("--pipeline", type=int, default=10, help="reshard: keys per MIGRATE (redis-cli's default 10)")
    parser.add_argument("--node-timeout", type=int, default=2000, help="cluster-node-timeout, ms (default %(default)s)")
    parser.add_argument("--failover-runs", type=int, help="failover: runs per server (default 5)")
    parser.add_argument("--requests", type=int, help="throughput: requests per command and run (default 200000)")
    parser.add_argument("--server-cpu", type=int, default=1)
    parser.add_argument("--client-cpu", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="defaults for a run of under 2 minutes: 100,000 keys, "
                        "1000 slots moved, 1 round, 2 failover runs, 50,000 requests")
    args = parser.parse_args()
    defaults = dict(keys=1_000_000, slots=0, rounds=2, failover_runs=5, requests=200_000)
    if args.quick:
        defaults = dict(keys=100_000, slots=1000, rounds=1, failover_runs=2, requests=50_000)
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    for m in measures:
        if m not in MEASURES:
            parser.error(f"unknown measure {m!r} (known: {', '.join(MEASURES)})")
    binaries = {"goblin": os.path.abspath(args.server), "redis": args.redis}
    for b in binaries.values():
        if not os.access(b, os.X_OK):
            parser.error(f"not an executable: {b}")
    os.sched_setaffinity(0, {args.client_cpu})
    versions = {kind: version(b) for kind, b in binaries.items()}
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"`{shlex.join(['bench/cluster.py'] + sys.argv[1:])}` ({started}, load average {load_average()}; goblin = "
          f"`{args.server}` {versions['goblin']}, redis = `{args.redis}` {versions['redis']}; servers on CPU "
          f"{args.server_cpu}, redis-cli and this script on CPU {args.client_cpu}, redis-benchmark on CPU {args.server_cpu}).")
    print()
    for m in measures:
        t0 = time.monotonic()
        MEASURES[m](args, binaries, versions)
        log(f"{m}: {time.monotonic() - t0:.0f} s, load average {load_average()}")
        sys.stdout.flush()
    print(f"Load average at the end: {load_average()}.")


if __name__ == "__main__":
    main()
