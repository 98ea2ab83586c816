"""Configuration files written for redis-server start goblin-server unchanged: Debian's own
/etc/redis/redis.conf, the kind of file Redis's test harness writes, every directive of Redis's
table. Options of features Goblin lacks are stored and reported; a value that would ask for the
missing feature (TLS, cluster mode) stops startup instead of being ignored."""

import os
import re
import socket
import subprocess

import pytest

from support.resp import RawConnection
from support.server import free_port, goblin_binary, run_until_exit, wait_for

DEBIAN_CONF = "/etc/redis/redis.conf"

# What Redis's test suite starts its servers with (its tests/assets/default.conf, written
# here from its directives), followed by the overrides its harness appends: a `save` line with
# no value when a test wants no save points.
HARNESS_CONF = """# Redis configuration for testing.
always-show-logo yes
notify-keyspace-events KEA
daemonize no
timeout 0
loglevel verbose
logfile ''
databases 16
latency-monitor-threshold 1
repl-diskless-sync-delay 0
save 900 1
rdbcompression yes
dbfilename dump.rdb
slave-serve-stale-data yes
appendonly no
appendfsync everysec
no-appendfsync-on-rewrite no
activerehashing yes
enable-protected-configs yes
enable-debug-command yes
enable-module-command yes
propagation-error-behavior panic
shutdown-on-sigterm force
save
"""


def config_value(conn, name):
    reply = conn.call("CONFIG", "GET", name).py()
    assert len(reply) == 2, reply
    return reply[1]


def directives(text):
    """name -> value words of each directive line of a redis.conf."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if words and not words[0].startswith("#"):
            found[words[0].lower()] = words[1:]
    return found


@pytest.mark.skipif(not os.path.exists(DEBIAN_CONF), reason="Debian's redis-server package installs it")
def test_debians_redis_conf_starts_goblin(make_server):
    text = open(DEBIAN_CONF).read()
    srv = make_server(config_text=text, options={"daemonize": "no", "logfile": "", "pidfile": None,
                                                 "supervised": "no"})
    with srv.raw() as conn:
        assert conn.call("PING").raw == b"+PONG\r\n"
        given = directives(text)
        for name in ("maxmemory-policy", "hz", "lazyfree-lazy-eviction", "oom-score-adj",
                     "activerehashing", "jemalloc-bg-thread", "repl-diskless-sync-max-replicas",
                     "acllog-max-len", "proc-title-template"):
            expected = " ".join(w.strip('"') for w in given[name]) if name in given else None
            if expected is not None:
                assert config_value(conn, name).decode() == expected, name
    # The options it sets that change nothing in Goblin are named once in the log.
    inert = re.findall(r"Accepted for compatibility, with no effect in Goblin: (.*)", srv.logs())
    assert len(inert) == 1 and "lazyfree-lazy-user-flush" in inert[0], srv.logs()


def test_a_test_harness_config_starts_goblin(make_server):
    srv = make_server(config_text=HARNESS_CONF, options={"save": None})
    with srv.raw() as conn:
        assert config_value(conn, "save") == b"", "the last `save` line, with no value, clears it"
        assert config_value(conn, "notify-keyspace-events") == b"AKE"
        assert config_value(conn, "propagation-error-behavior") == b"panic"
        assert config_value(conn, "enable-protected-configs") == b"yes"
        assert config_value(conn, "shutdown-on-sigterm") == b"force"
        assert config_value(conn, "always-show-logo") == b"yes"


def test_protected_configs_follow_enable_protected_configs(make_server, tmp_path):
    closed = make_server()
    with closed.raw() as conn:
        assert conn.call("CONFIG", "SET", "dir", str(tmp_path)).raw == (
            b"-ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected "
            b"config\r\n")
    opened = make_server(options={"enable-protected-configs": "yes"})
    with opened.raw() as conn:
        assert conn.call("CONFIG", "SET", "dir", str(tmp_path)).raw == b"+OK\r\n"
        assert config_value(conn, "dir") == str(tmp_path).encode()


def test_a_directive_without_its_value_is_refused(tmp_path):
    path = tmp_path / "no-value.conf"
    path.write_text(f"port {free_port()}\nhz\n")
    status, output = run_until_exit([goblin_binary(), str(path)])
    assert status != 0
    assert ">>> 'hz'" in output and "wrong number of arguments" in output, output


def test_cluster_mode_from_a_file_starts_and_locks_its_nodes_conf(tmp_path, make_server):
    bus = free_port()
    srv = make_server(config_text=f"cluster-enabled yes\ncluster-port {bus}\n"
                                  f"cluster-config-file {tmp_path / 'nodes.conf'}\n")
    assert srv.client().info("cluster") == {"cluster_enabled": 1}
    assert (tmp_path / "nodes.conf").exists()
    # A second node may not take the same file: two nodes of one name would corrupt the cluster.
    path = tmp_path / "second.conf"
    path.write_text(f"port {free_port()}\nsave \"\"\ncluster-enabled yes\ncluster-port {free_port()}\n"
                    f"cluster-config-file {tmp_path / 'nodes.conf'}\n")
    status, output = run_until_exit([goblin_binary(), str(path)])
    assert status != 0, output
    assert ("Sorry, the cluster configuration file " + str(tmp_path / "nodes.conf") +
            " is already used by a different Redis Cluster node.") in output, output


def test_config_set_of_tls_cluster_needs_tls_configured_and_keeps_the_value(make_server):
    srv = make_server()
    with srv.raw() as conn:
        # As redis-server 7.0 answers with no certificate configured.
        assert conn.call("CONFIG", "SET", "tls-cluster", "yes").raw == (
            b"-ERR CONFIG SET failed (possibly related to argument 'tls-cluster') - Unable to "
            b"update TLS configuration. Check server logs.\r\n")
        assert config_value(conn, "tls-cluster") == b"no"
        assert conn.call("CONFIG", "SET", "tls-cert-file", "/tmp/cert.pem").raw == b"+OK\r\n"
        assert config_value(conn, "tls-cert-file") == b"/tmp/cert.pem"


def test_list_valued_options_take_their_words(make_server):
    srv = make_server(config_text='oom-score-adj-values -100 0 2000\nmaxmemory-clients 5%\n')
    with srv.raw() as conn:
        assert config_value(conn, "oom-score-adj-values") == b"-100 0 2000"
        assert config_value(conn, "maxmemory-clients") == b"5%"
        assert conn.call("CONFIG", "SET", "maxmemory-clients", "1mb").raw == b"+OK\r\n"
        assert config_value(conn, "maxmemory-clients") == b"1048576"
        assert conn.call("CONFIG", "SET", "oom-score-adj-values", "1 2").raw == (
            b"-ERR CONFIG SET failed (possibly related to argument 'oom-score-adj-values') - "
            b"wrong number of arguments\r\n")


def test_testing_knobs_are_hidden_from_patterns(make_server):
    srv = make_server()
    with srv.raw() as conn:
        names = conn.call("CONFIG", "GET", "*").py()[0::2]
        assert b"key-load-delay" not in names and b"rdb-key-save-delay" not in names
        assert b"hz" in names
        assert config_value(conn, "key-load-delay") == b"0"
        assert config_value(conn, "rdb-key-save-delay") == b"0"


def test_config_rewrite_quotes_values_that_hold_spaces_and_quotes(make_server):
    srv = make_server(config_text="hz 10\n")
    secret = 'two words and a "quote"'
    with srv.raw() as conn:
        assert conn.call("CONFIG", "SET", "proc-title-template", "{title} {port}").raw == b"+OK\r\n"
        assert conn.call("CONFIG", "SET", "masterauth", secret).raw == b"+OK\r\n"
        assert conn.call("CONFIG", "REWRITE").raw == b"+OK\r\n"
    srv.restart(keep_port=True)
    with srv.raw() as conn:
        assert config_value(conn, "proc-title-template") == b"{title} {port}"
        assert config_value(conn, "masterauth") == secret.encode()


def oom_score(srv):
    with open(f"/proc/{srv.proc.pid}/oom_score_adj") as f:
        return int(f.read())


def test_oom_score_adj_follows_the_role_and_the_options(make_server):
    # Lowering a score below what the process started with takes CAP_SYS_RESOURCE: every score
    # here stays at or above the inherited one.
    base = int(open("/proc/self/oom_score_adj").read())
    srv = make_server(options={"oom-score-adj": "relative", "oom-score-adj-values": "100 200 300"})
    assert oom_score(srv) == min(base + 100, 1000)
    with srv.raw() as conn:
        values = f"{base + 5} 2000 {base}"
        assert conn.call("CONFIG", "SET", "oom-score-adj", "absolute",
                         "oom-score-adj-values", values).raw == b"+OK\r\n"
        assert oom_score(srv) == base + 5
        # Port 1 refuses connections: the role is a replica's all the same.
        assert conn.call("REPLICAOF", "127.0.0.1", "1").raw == b"+OK\r\n"
        assert oom_score(srv) == 1000, "clamped to the kernel's range"
        assert conn.call("REPLICAOF", "NO", "ONE").raw == b"+OK\r\n"
        assert oom_score(srv) == base + 5
        assert conn.call("CONFIG", "SET", "oom-score-adj", "no").raw == b"+OK\r\n"
        assert oom_score(srv) == base, "the score from before goes back"


def thread_names(srv):
    names = []
    for task in os.listdir(f"/proc/{srv.proc.pid}/task"):
        with open(f"/proc/{srv.proc.pid}/task/{task}/comm") as f:
            names.append(f.read().strip())
    return names


def test_jemalloc_bg_thread_starts_and_stops_the_allocators_threads(make_server):
    srv = make_server(options={"jemalloc-bg-thread": "no"})
    with srv.raw() as conn:
        # The sanitizer build runs on the sanitizer's allocator: the option is accepted there
        # and starts nothing.
        jemalloc = b"mem_allocator:jemalloc" in conn.call("INFO", "memory").raw
        assert "jemalloc_bg_thd" not in thread_names(srv)
        assert conn.call("CONFIG", "SET", "jemalloc-bg-thread", "yes").raw == b"+OK\r\n"
        conn.call("DEBUG", "POPULATE", "10000")  # work for the allocator's threads
        if jemalloc:
            wait_for(lambda: "jemalloc_bg_thd" in thread_names(srv), what="a background thread")
        else:
            assert "jemalloc_bg_thd" not in thread_names(srv)
        assert conn.call("CONFIG", "SET", "jemalloc-bg-thread", "no").raw == b"+OK\r\n"
        wait_for(lambda: "jemalloc_bg_thd" not in thread_names(srv), what="no background thread")


def test_supervised_systemd_tells_the_manager_it_is_ready_then_stopping(tmp_path):
    notify_path = str(tmp_path / "notify.sock")
    manager = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    manager.bind(notify_path)
    manager.settimeout(30)
    port = free_port()
    with open(tmp_path / "log", "w") as log:
        proc = subprocess.Popen([goblin_binary(), "--port", str(port), "--save", "", "--dir",
                                 str(tmp_path), "--supervised", "systemd"],
                                env={**os.environ, "NOTIFY_SOCKET": notify_path},
                                stdout=log, stderr=log)
    try:
        assert b"READY=1" in manager.recv(4096).split(b"\n")
        # Ready means serving, the data loaded.
        with RawConnection(port=port) as conn:
            assert conn.call("PING").raw == b"+PONG\r\n"
            conn.send_command("SHUTDOWN", "NOSAVE")
        assert manager.recv(4096) == b"STOPPING=1\n"
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        manager.close()


def transparent_huge_pages(srv):
    with open(f"/proc/{srv.proc.pid}/status") as f:
        return int(next(line for line in f if line.startswith("THP_enabled:")).split()[1])


def test_disable_thp_turns_transparent_huge_pages_off_for_the_process(make_server):
    assert transparent_huge_pages(make_server()) == 0, "yes by default, as in Redis"
    assert transparent_huge_pages(make_server(options={"disable-thp": "no"})) == 1
