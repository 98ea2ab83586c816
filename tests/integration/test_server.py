"""Server commands: INFO, CONFIG GET/SET/RESETSTAT/REWRITE, TIME, LASTSAVE, SHUTDOWN, MEMORY, SLOWLOG,
LATENCY, DEBUG (and its gating), MODULE, COMMAND."""

import os
import resource
import socket
import time

import pytest

from support.expect import SYNTAX, arity, bulk, err, integer, nil, ok, run_steps, simple
from support.server import info_sections, parse_info, wait_for

STRING_KEY_SERVER_COMMANDS = """
get set setnx setex psetex getset getdel getex mget mset msetnx append strlen getrange
substr setrange incr decr incrby decrby incrbyfloat del unlink exists type rename renamenx keys scan
randomkey dbsize flushdb flushall select move swapdb copy touch object expire pexpire expireat pexpireat
ttl pttl expiretime pexpiretime persist ping echo quit hello auth reset client info config time lastsave
shutdown memory slowlog latency debug module command""".split()

DEBUG_REFUSED = err('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", '
                    'you can run it from a local connection, otherwise you need to set this option in the '
                    'configuration file, and then restart the server.')
MODULE_REFUSED = err('ERR MODULE command not allowed. If the enable-module-command option is set to "local", '
                     'you can run it from a local connection, otherwise you need to set this option in the '
                     'configuration file, and then restart the server.')


def info(raw, *sections) -> tuple[dict, bytes]:
    reply = raw.call("INFO", *sections)
    assert reply.kind in "$=", reply
    return parse_info(reply.value), reply.value


# ---- INFO ----------------------------------------------------------------------------------------

def test_info_default_sections_and_fields(raw, server):
    fields, text = info(raw)
    sections = info_sections(text)
    for section in ("server", "clients", "memory", "persistence", "stats", "replication", "cpu", "cluster",
                    "keyspace"):
        assert section in sections, f"default INFO lacks the {section} section: {sections}"
    assert "commandstats" not in sections, "commandstats is only in INFO all/everything/commandstats"
    assert text.endswith(b"\r\n") and b"\r\n\r\n# " in text, "sections are separated by a blank line"
    assert fields["redis_mode"] == "standalone"
    assert fields["arch_bits"] == "64"
    assert fields["process_id"] == str(server.proc.pid)
    assert fields["tcp_port"] == str(server.port)
    assert int(fields["uptime_in_seconds"]) >= 0
    assert fields["cluster_enabled"] == "0"
    assert int(fields["connected_clients"]) >= 1
    assert fields["role"] == "master"
    assert fields["redis_version"].count(".") == 2
    assert len(fields["run_id"]) == 40
    assert fields["mem_allocator"]
    for name in ("used_memory", "used_memory_rss", "used_memory_peak", "total_connections_received",
                 "total_commands_processed", "keyspace_hits", "keyspace_misses", "expired_keys",
                 "evicted_keys", "rdb_changes_since_last_save", "maxclients", "blocked_clients",
                 "connected_slaves", "loading", "rdb_bgsave_in_progress", "aof_enabled"):
        assert fields[name].isdigit(), f"{name}={fields.get(name)!r}"
    float(fields["mem_fragmentation_ratio"])
    float(fields["used_cpu_sys"])
    float(fields["used_cpu_user"])
    assert fields["aof_enabled"] == "0"


@pytest.mark.goblin
def test_info_and_hello_name_redis_7_4_as_the_command_set_served(raw):
    # 7.4 is the newest release whose whole standalone command set Goblin serves; clients
    # gate HEXPIRE, HSCAN NOVALUES and CLIENT KILL MAXAGE on it.
    fields, _ = info(raw, "server")
    assert fields["redis_version"] == "7.4.0"
    assert b"$7\r\nversion\r\n$5\r\n7.4.0\r\n" in raw.call("HELLO", "2").raw
    assert raw.call("EVAL", "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}", "0").raw == \
        b"*2\r\n$5\r\n7.4.0\r\n:%d\r\n" % 0x070400


@pytest.mark.goblin
def test_info_goblin_version(raw):
    fields, _ = info(raw, "server")
    assert fields.get("goblin_version", "").count(".") >= 1, "INFO server names goblin_version"


def test_info_single_and_multiple_sections(raw):
    _, text = info(raw, "server")
    assert info_sections(text) == ["server"]
    _, text = info(raw, "clients", "memory")
    assert info_sections(text) == ["clients", "memory"]
    _, text = info(raw, "CPU")
    assert info_sections(text) == ["cpu"]
    assert raw.call("INFO", "nosuchsection").raw == bulk("")
    _, text = info(raw, "everything")
    assert {"server", "commandstats", "keyspace"} <= set(info_sections(text))
    _, text = info(raw, "all")
    assert {"server", "commandstats", "keyspace"} <= set(info_sections(text))
    _, text = info(raw, "commandstats")
    assert info_sections(text) == ["commandstats"]


def test_info_keyspace(raw):
    _, text = info(raw, "keyspace")
    assert info_sections(text) == ["keyspace"] and b"db0:" not in text
    run_steps(raw, [("MSET a 1 b 2 c 3", ok), ("EXPIRE a 1000", integer(1)), ("SELECT 3", ok),
                    ("SET x 1", ok)])
    fields, _ = info(raw, "keyspace")
    db0 = dict(kv.split("=") for kv in fields["db0"].split(","))
    assert db0["keys"] == "3" and db0["expires"] == "1" and "avg_ttl" in db0
    assert fields["db3"].startswith("keys=1,expires=0,")
    assert "db1" not in fields


def test_info_stats_counters(raw, server):
    before, _ = info(raw, "stats")
    raw.call("GET", "missing")
    raw.call("SET", "k", "v")
    raw.call("GET", "k")
    after, _ = info(raw, "stats")
    assert int(after["keyspace_misses"]) == int(before["keyspace_misses"]) + 1
    assert int(after["keyspace_hits"]) == int(before["keyspace_hits"]) + 1
    assert int(after["total_commands_processed"]) >= int(before["total_commands_processed"]) + 3
    conns = int(after["total_connections_received"])
    with server.raw() as c:
        c.call("PING")
    assert int(info(raw, "stats")[0]["total_connections_received"]) == conns + 1


def test_info_connected_clients_tracks_connections(raw, server):
    base = int(info(raw, "clients")[0]["connected_clients"])
    extra = [server.raw() for _ in range(3)]
    for c in extra:
        c.call("PING")
    assert int(info(raw, "clients")[0]["connected_clients"]) == base + 3
    for c in extra:
        c.close()
    wait_for(lambda: int(info(raw, "clients")[0]["connected_clients"]) == base,
             what="closed connections to be dropped from connected_clients")


def _statm_rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def test_info_memory_fields(raw, server):
    fields, _ = info(raw, "memory")
    used = int(fields["used_memory"])
    rss = int(fields["used_memory_rss"])
    assert 0 < used
    assert int(fields["used_memory_peak"]) >= used
    assert rss > 0
    # Within 25% (or 8 MB) of the kernel's figure read right after.
    kernel = _statm_rss(server.proc.pid)
    assert abs(rss - kernel) <= max(8 << 20, kernel // 4), (rss, kernel)
    for name in ("used_memory_human", "used_memory_rss_human", "used_memory_peak_human", "mem_allocator"):
        assert fields[name], name


def test_used_memory_grows_with_data_and_shrinks_after_delete(raw):
    before = int(info(raw, "memory")[0]["used_memory"])
    raw.call("SET", "big", b"x" * (32 << 20))
    grown = int(info(raw, "memory")[0]["used_memory"])
    assert grown - before >= (32 << 20), (before, grown)
    raw.call("DEL", "big")
    wait_for(lambda: int(info(raw, "memory")[0]["used_memory"]) < before + (4 << 20),
             what="used_memory to drop after deleting a 32 MB value")
    fields, _ = info(raw, "memory")
    assert int(fields["used_memory_peak"]) >= grown


@pytest.mark.goblin
def test_used_memory_rss_is_read_when_info_is_built(raw, server):
    """Goblin reads RSS from /proc/self/statm for each INFO (Redis 7 caches it in serverCron)."""
    raw.call("SET", "big", os.urandom(64 << 20))
    rss = int(info(raw, "memory")[0]["used_memory_rss"])
    kernel = _statm_rss(server.proc.pid)
    assert rss >= (64 << 20), rss
    assert abs(rss - kernel) <= (4 << 20), (rss, kernel)


# ---- INFO commandstats, CONFIG RESETSTAT ---------------------------------------------------------

def test_commandstats_and_resetstat(raw):
    assert raw.call("CONFIG", "RESETSTAT").raw == ok
    raw.call("SET", "k", "v")
    raw.call("SET", "k")            # arity error: rejected before running
    raw.call("SET", "k", "v", "NX", "XX")  # syntax error: ran and failed
    raw.call("GET", "k")
    raw.call("GET", "k")
    fields, _ = info(raw, "commandstats")
    set_stats = dict(kv.split("=") for kv in fields["cmdstat_set"].split(","))
    get_stats = dict(kv.split("=") for kv in fields["cmdstat_get"].split(","))
    assert set_stats["calls"] == "2" and set_stats["rejected_calls"] == "1" and set_stats["failed_calls"] == "1"
    assert get_stats["calls"] == "2" and get_stats["failed_calls"] == "0"
    assert list(set_stats) == ["calls", "usec", "usec_per_call", "rejected_calls", "failed_calls"]
    assert raw.call("CONFIG", "RESETSTAT").raw == ok
    fields, _ = info(raw, "commandstats")
    assert "cmdstat_set" not in fields and "cmdstat_get" not in fields
    stats, _ = info(raw, "stats")
    assert int(stats["total_commands_processed"]) <= 3


# ---- CONFIG --------------------------------------------------------------------------------------

def config_get(raw, *names) -> dict:
    reply = raw.call("CONFIG", "GET", *names)
    assert reply.kind in "*%", reply
    flat = [e.value for e in reply.elements()]
    return dict(zip(flat[::2], flat[1::2]))


def test_config_get_reports_configured_and_default_values(raw, server):
    expected = {
        b"port": str(server.port).encode(), b"bind": b"127.0.0.1", b"unixsocket": server.unix_path.encode(),
        b"unixsocketperm": b"0", b"protected-mode": b"yes", b"databases": b"16", b"requirepass": b"",
        b"timeout": b"0", b"enable-debug-command": b"yes", b"tcp-keepalive": b"300", b"hz": b"10",
        b"loglevel": b"notice", b"logfile": b"", b"daemonize": b"no", b"pidfile": b"", b"save": b"",
        b"appendonly": b"no", b"dbfilename": b"dump.rdb",
    }
    for name, value in expected.items():
        assert config_get(raw, name) == {name: value}, name
    assert os.path.realpath(config_get(raw, "dir")[b"dir"].decode()) == os.path.realpath(server.dir)
    maxclients = int(config_get(raw, "maxclients")[b"maxclients"])
    assert 1 <= maxclients <= 10000


def test_config_get_patterns_and_multiple(raw):
    assert config_get(raw, "hz", "timeout") == {b"hz": b"10", b"timeout": b"0"}
    assert config_get(raw, "databas*") == {b"databases": b"16"}
    assert config_get(raw, "h?") == {b"hz": b"10"}
    assert config_get(raw, "nosuchparam") == {}
    everything = config_get(raw, "*")
    assert {b"port", b"hz", b"dir", b"databases", b"maxclients", b"save"} <= set(everything)
    assert raw.call("CONFIG", "GET").raw == arity("config|get")


@pytest.fixture
def restore_config(raw):
    saved = config_get(raw, "hz", "timeout", "tcp-keepalive", "loglevel", "maxmemory", "maxmemory-policy")
    yield
    for name, value in saved.items():
        raw.call("CONFIG", "SET", name, value)


def test_config_set(raw, restore_config):
    run_steps(raw, [
        ("CONFIG SET hz 20", ok), ("CONFIG GET hz", lambda x: x.py() == [b"hz", b"20"]),
        ("CONFIG SET hz 1000", ok), ("CONFIG GET hz", lambda x: x.py() == [b"hz", b"500"]),
        ("CONFIG SET timeout 300 tcp-keepalive 60", ok),
        ("CONFIG GET timeout", lambda x: x.py() == [b"timeout", b"300"]),
        ("CONFIG GET tcp-keepalive", lambda x: x.py() == [b"tcp-keepalive", b"60"]),
        ("CONFIG SET loglevel warning", ok), ("CONFIG GET loglevel", lambda x: x.py() == [b"loglevel", b"warning"]),
        ("CONFIG SET maxmemory 100mb", ok),
        ("CONFIG GET maxmemory", lambda x: x.py() == [b"maxmemory", b"104857600"]),
        ("CONFIG SET maxmemory-policy allkeys-lru", ok),
        ("CONFIG GET maxmemory-policy", lambda x: x.py() == [b"maxmemory-policy", b"allkeys-lru"]),
        ("CONFIG SET HZ 11", ok), ("CONFIG GET hz", lambda x: x.py() == [b"hz", b"11"]),
    ])


def test_config_set_errors(raw, restore_config):
    run_steps(raw, [
        ("CONFIG SET hz abc", err("ERR CONFIG SET failed (possibly related to argument 'hz') - argument "
                                  "couldn't be parsed into an integer")),
        ("CONFIG SET timeout -1", err("ERR CONFIG SET failed (possibly related to argument 'timeout') - "
                                      "argument must be between 0 and 2147483647 inclusive")),
        ("CONFIG SET databases 5", err("ERR CONFIG SET failed (possibly related to argument 'databases') - "
                                       "can't set immutable config")),
        ("CONFIG SET nosuch 1", err("ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")),
        # 7.2 appends ", nothing" to the list of levels.
        ("CONFIG SET loglevel loud", lambda x: x.is_error and x.value.startswith(
            b"ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of "
            b"the following: debug, verbose, notice, warning")),
        ("CONFIG SET hz 15 timeout abc", err("ERR CONFIG SET failed (possibly related to argument 'timeout') "
                                             "- argument couldn't be parsed into an integer")),
        ("CONFIG GET hz", lambda x: x.py() == [b"hz", b"10"]),  # the failed multi-set changed nothing
        ("CONFIG SET hz", arity("config|set")),
        ("CONFIG FOO", err("ERR unknown subcommand 'FOO'. Try CONFIG HELP.")),
    ])


def test_config_set_rolls_back_when_applying_fails(make_server):
    """A multi-parameter CONFIG SET whose port cannot be bound changes nothing: the other
    values come back, and the server listens on its old port again."""
    srv = make_server(name="goblin-rollback", unix=False)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with srv.raw() as conn:
            reply = conn.call("CONFIG", "SET", "maxmemory", "5mb", "port", str(busy.getsockname()[1]))
            assert reply.raw == err("ERR CONFIG SET failed (possibly related to argument 'port') - "
                                    "Unable to listen on this port")
            assert conn.call("CONFIG", "GET", "maxmemory").py() == [b"maxmemory", b"0"]
            assert conn.call("CONFIG", "GET", "port").py() == [b"port", str(srv.port).encode()]
        with srv.raw() as fresh:  # a new connection to the old port
            assert fresh.call("PING").raw == simple("PONG")
    finally:
        busy.close()


def test_config_rewrite_without_file(raw):
    assert raw.call("CONFIG", "REWRITE").raw == err("ERR The server is running without a config file")


def test_config_rewrite_persists_changes(make_server):
    srv = make_server(config_text="hz 12\n# a comment\ntimeout 100\n")
    with srv.raw() as conn:
        run_steps(conn, [("CONFIG GET hz", lambda x: x.py() == [b"hz", b"12"]),
                         ("CONFIG SET hz 42", ok), ("CONFIG REWRITE", ok)])
    text = open(srv.config_path).read()
    assert "hz 42" in text.splitlines(), text
    assert "timeout 100" in text.splitlines(), text
    srv.stop()
    srv.restart()
    with srv.raw() as conn:
        run_steps(conn, [("CONFIG GET hz", lambda x: x.py() == [b"hz", b"42"]),
                         ("CONFIG GET timeout", lambda x: x.py() == [b"timeout", b"100"])])


# ---- TIME, LASTSAVE, SHUTDOWN ----------------------------------------------------------------------

def test_time(raw):
    before = time.time()
    reply = raw.call("TIME")
    after = time.time()
    assert reply.kind == "*" and [e.kind for e in reply.value] == ["$", "$"]
    secs, micros = int(reply.value[0].value), int(reply.value[1].value)
    assert 0 <= micros < 1_000_000
    assert before - 1 <= secs + micros / 1e6 <= after + 1
    assert raw.call("TIME", "x").raw == arity("time")


def test_lastsave(raw, server):
    reply = raw.call("LASTSAVE")
    assert reply.kind == ":"
    assert reply.value <= time.time() + 1
    assert reply.value >= time.time() - 3600


def test_shutdown_nosave_stops_the_server(make_server):
    srv = make_server()
    with srv.raw() as conn:
        assert conn.call("SHUTDOWN", "FOO").raw == SYNTAX
        srv.stop_requested = True
        conn.send_command("SHUTDOWN", "NOSAVE")
        assert conn.read_until_closed(timeout=10) == b"", "a successful SHUTDOWN sends no reply"
    srv.proc.wait(timeout=10)
    assert srv.proc.returncode == 0, srv.logs()


# ---- MEMORY ----------------------------------------------------------------------------------------

def test_memory_usage_and_stats(raw):
    run_steps(raw, [("MEMORY USAGE missing", nil), ("SET small x", ok)])
    raw.call("SET", "large", b"y" * 10000)
    small = raw.call("MEMORY", "USAGE", "small")
    large = raw.call("MEMORY", "USAGE", "large")
    assert small.kind == ":" and 0 < small.value < 200, small
    assert large.kind == ":" and 10000 <= large.value < 11000, large
    assert raw.call("MEMORY", "USAGE", "large", "SAMPLES", "0").kind == ":"
    assert raw.call("MEMORY", "USAGE", "large", "FOO").raw == SYNTAX
    assert raw.call("MEMORY", "FOO").raw == err("ERR unknown subcommand 'FOO'. Try MEMORY HELP.")
    stats = raw.call("MEMORY", "STATS")
    assert stats.kind in "*%"
    flat = stats.elements()
    names = {flat[i].value for i in range(0, len(flat), 2)}
    assert {b"peak.allocated", b"total.allocated", b"startup.allocated", b"keys.count",
            b"dataset.bytes"} <= names, names
    values = {flat[i].value: flat[i + 1] for i in range(0, len(flat), 2)}
    assert values[b"keys.count"].value == 2


# ---- SLOWLOG, LATENCY ------------------------------------------------------------------------------

def test_slowlog(raw):
    assert raw.call("SLOWLOG", "RESET").raw == ok
    assert raw.call("SLOWLOG", "LEN").raw == integer(0)
    raw.call("CLIENT", "SETNAME", "slowpoke")
    assert raw.call("DEBUG", "SLEEP", "0.02").raw == ok
    assert raw.call("SLOWLOG", "LEN").raw == integer(1)
    entries = raw.call("SLOWLOG", "GET").value
    assert len(entries) == 1
    entry = entries[0].value
    assert entry[0].kind == ":" and entry[1].kind == ":" and entry[2].kind == ":"
    assert abs(entry[1].value - time.time()) < 60
    assert entry[2].value >= 20000, "duration in microseconds"
    assert [a.value for a in entry[3].value] == [b"DEBUG", b"SLEEP", b"0.02"]
    assert entry[4].value.startswith(b"127.0.0.1:")
    assert entry[5].value == b"slowpoke"
    assert raw.call("SLOWLOG", "GET", "0").raw == b"*0\r\n"
    assert raw.call("SLOWLOG", "RESET").raw == ok
    assert raw.call("SLOWLOG", "LEN").raw == integer(0)


def test_latency(raw, restore_config):
    assert raw.call("LATENCY", "RESET").kind == ":"
    assert raw.call("LATENCY", "LATEST").raw == b"*0\r\n"
    assert raw.call("CONFIG", "SET", "latency-monitor-threshold", "10").raw == ok
    try:
        raw.call("DEBUG", "SLEEP", "0.03")
        latest = raw.call("LATENCY", "LATEST").py()
        events = {e[0]: e for e in latest}
        assert b"command" in events, latest
        assert events[b"command"][2] >= 30 and events[b"command"][3] >= 30
        history = raw.call("LATENCY", "HISTORY", "command").py()
        assert len(history) >= 1 and history[-1][1] >= 30
        assert raw.call("LATENCY", "RESET").raw == integer(len(latest))
        assert raw.call("LATENCY", "LATEST").raw == b"*0\r\n"
        assert raw.call("LATENCY", "HISTORY", "command").raw == b"*0\r\n"
    finally:
        raw.call("CONFIG", "SET", "latency-monitor-threshold", "0")


# ---- DEBUG -------------------------------------------------------------------------------------------

def test_debug_subcommands(raw):
    zero = simple("0" * 40)
    run_steps(raw, [
        ("DEBUG SLEEP 0", ok),
        ("DEBUG ERROR 'custom failure'", err("custom failure")),
        ("DEBUG DIGEST", zero),
        ("SET a 1", ok), ("SET b 2", ok),
    ])
    d1 = raw.call("DEBUG", "DIGEST")
    assert d1.kind == "+" and len(d1.value) == 40 and d1.value != b"0" * 40
    int(d1.value, 16)
    # The digest depends on the data only, not on insertion order.
    run_steps(raw, [("FLUSHALL", ok), ("SET b 2", ok), ("SET a 1", ok), ("DEBUG DIGEST", d1.raw),
                    ("SET a 2", ok)])
    assert raw.call("DEBUG", "DIGEST").raw != d1.raw
    dv = raw.call("DEBUG", "DIGEST-VALUE", "a", "missing")
    assert dv.kind == "*" and len(dv.value) == 2
    assert dv.value[0].kind == "+" and len(dv.value[0].value) == 40 and dv.value[0].value != b"0" * 40
    assert dv.value[1].raw == zero
    obj = raw.call("DEBUG", "OBJECT", "a")
    assert obj.kind == "+" and b"refcount:" in obj.value and b"encoding:" in obj.value, obj
    assert raw.call("DEBUG", "OBJECT", "missing").raw == err("ERR no such key")


def test_debug_change_repl_id_draws_a_new_replication_id(raw):
    def replid():
        info = raw.call("INFO", "replication").value.decode()
        return dict(line.split(":", 1) for line in info.splitlines() if ":" in line)["master_replid"]

    def run_id():
        info = raw.call("INFO", "server").value.decode()
        return dict(line.split(":", 1) for line in info.splitlines() if ":" in line)["run_id"]

    before, run_before = replid(), run_id()
    assert len(before) == 40
    assert raw.call("DEBUG", "CHANGE-REPL-ID").raw == ok
    after = replid()
    assert len(after) == 40 and after != before
    assert run_id() == run_before  # the server's own identity stays


def test_debug_stringmatch_len_runs_the_glob_fuzz_test(raw):
    """Redis 7.2's DEBUG STRINGMATCH-LEN (the 7.0 reference lacks it): a pathological pattern
    neither crashes nor hangs the matcher."""
    assert raw.call("DEBUG", "STRINGMATCH-LEN").raw == simple("Apparently Redis did not crash: test passed")
    assert raw.call("PING").raw == simple("PONG")


def test_debug_sleep_blocks_the_server(raw, server):
    with server.raw() as other:
        raw.send_command("DEBUG", "SLEEP", "0.2")
        t0 = time.monotonic()
        assert other.call("PING").raw == simple("PONG")
        waited = time.monotonic() - t0
        assert raw.read_reply().raw == ok
    assert waited >= 0.1, "one serving thread: PING waits for DEBUG SLEEP"


DEBUG_PROTOCOL = {
    "string": (b"$11\r\nHello World\r\n", b"$11\r\nHello World\r\n"),
    "integer": (b":12345\r\n", b":12345\r\n"),
    "double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    "bignum": (b"$37\r\n1234567999999999999999999999999999999\r\n",
               b"(1234567999999999999999999999999999999\r\n"),
    "null": (b"$-1\r\n", b"_\r\n"),
    "array": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    "set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    "map": (b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    "attrib": (b"$39\r\nSome real reply following the attribute\r\n",
               b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
               b"$39\r\nSome real reply following the attribute\r\n"),
    "verbatim": (b"$25\r\nThis is a verbatim\nstring\r\n", b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    "true": (b":1\r\n", b"#t\r\n"),
    "false": (b":0\r\n", b"#f\r\n"),
}


@pytest.mark.parametrize("kind", DEBUG_PROTOCOL)
def test_debug_protocol_resp2_and_resp3(raw, kind):
    resp2, resp3 = DEBUG_PROTOCOL[kind]
    assert raw.call("DEBUG", "PROTOCOL", kind).raw == resp2
    raw.call("HELLO", "3")
    assert raw.call("DEBUG", "PROTOCOL", kind).raw == resp3


def test_debug_protocol_push(raw):
    assert raw.call("DEBUG", "PROTOCOL", "push").raw == err("ERR RESP2 is not supported by this command")
    raw.call("HELLO", "3")
    raw.send_command("DEBUG", "PROTOCOL", "push")
    push = raw.read_reply()
    assert push.raw == b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
    assert raw.read_reply().raw == b"$40\r\nSome real reply following the push reply\r\n"


@pytest.mark.parametrize("setting", ["no", "local"])
def test_debug_gating(make_server, setting):
    srv = make_server(options={"enable-debug-command": setting})
    with srv.raw() as conn:
        reply = conn.call("DEBUG", "SLEEP", "0")
        if setting == "no":
            assert reply.raw == DEBUG_REFUSED
        else:
            assert reply.raw == ok, "'local' allows connections from 127.0.0.1"
        assert conn.call("CONFIG", "GET", "enable-debug-command").py() == [b"enable-debug-command",
                                                                           setting.encode()]
        assert conn.call("PING").raw == simple("PONG")
    with srv.raw(unix=True) as conn:
        assert conn.call("DEBUG", "SLEEP", "0").raw == (DEBUG_REFUSED if setting == "no" else ok)


def test_debug_gating_cannot_change_at_runtime(raw):
    reply = raw.call("CONFIG", "SET", "enable-debug-command", "no")
    assert reply.raw == err("ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - "
                            "can't set immutable config")


# ---- MODULE, COMMAND -----------------------------------------------------------------------------

def test_module(raw):
    assert raw.call("MODULE", "LIST").raw == b"*0\r\n"
    assert raw.call("MODULE", "LOAD", "/nonexistent/module.so").raw == MODULE_REFUSED
    assert raw.call("MODULE", "FOO").raw == err("ERR unknown subcommand 'FOO'. Try MODULE HELP.")


def test_command_count_list_info(raw):
    count = raw.call("COMMAND", "COUNT")
    assert count.kind == ":"
    table = raw.call("COMMAND")
    listing = raw.call("COMMAND", "LIST")
    assert len(table.value) == count.value
    # COMMAND LIST also names subcommands ("client|kill"); COMMAND COUNT counts top-level commands.
    names = {e.value for e in listing.value if b"|" not in e.value}
    assert len(names) == count.value
    assert b"client|setname" in {e.value for e in listing.value}
    missing = [c for c in STRING_KEY_SERVER_COMMANDS if c.encode() not in names]
    assert not missing, f"COMMAND LIST lacks {missing}"
    assert {e.value[0].value for e in table.value} == names

    info_reply = raw.call("COMMAND", "INFO", "get", "set", "mset", "nosuchcommand")
    get, set_, mset, unknown = info_reply.value
    assert unknown.is_null
    assert [x.py() for x in get.value[:6]][:2] == [b"get", 2]
    assert [x.py() for x in get.value[3:6]] == [1, 1, 1]
    assert b"readonly" in get.value[2].py() and b"fast" in get.value[2].py()
    assert set_.value[1].value == -3 and b"write" in set_.value[2].py()
    assert [x.py() for x in mset.value[1:6:1] if x.kind == ":"] == [-3, 1, -1, 2]
    client = raw.call("COMMAND", "INFO", "client").value[0]
    subcommands = {s.value[0].value for s in client.value[9].value}
    assert {b"client|setname", b"client|getname", b"client|id", b"client|list", b"client|info",
            b"client|kill", b"client|reply", b"client|no-evict"} <= subcommands


def test_command_docs_for_cli_hints(raw):
    docs = raw.call("COMMAND", "DOCS", "set")
    flat = docs.elements()
    assert flat[0].value == b"set"
    fields = flat[1].elements()
    doc = {fields[i].value: fields[i + 1] for i in range(0, len(fields), 2)}
    assert doc[b"group"].value == b"string"
    assert doc[b"summary"].value
    assert doc[b"since"].value == b"1.0.0"
    args = doc[b"arguments"].elements()
    arg_names = []
    for arg in args:
        f = arg.elements()
        arg_names.append({f[i].value: f[i + 1] for i in range(0, len(f), 2)}[b"name"].value)
    assert arg_names[:2] == [b"key", b"value"]
    assert raw.call("COMMAND", "DOCS", "nosuchcommand").raw in (b"*0\r\n", b"%0\r\n")
    assert len(raw.call("COMMAND", "DOCS").elements()) // 2 == raw.call("COMMAND", "COUNT").value


def test_info_clients_counts_subscribers_watchers_and_blocked_keys(make_server):
    """Redis 7.2's INFO clients fields: pubsub_clients, watching_clients, total_watched_keys,
    clients_in_timeout_table and total_blocking_keys follow the connections' state."""
    srv = make_server()
    conns = [srv.raw() for _ in range(4)]
    try:
        def fields():
            return info(conns[0], "clients")[0]
        before = fields()
        assert [before[k] for k in ("pubsub_clients", "watching_clients", "total_watched_keys",
                                    "clients_in_timeout_table", "total_blocking_keys")] == ["0"] * 5
        conns[1].call("SUBSCRIBE", "a")
        conns[1].call("PSUBSCRIBE", "b*")
        assert conns[2].call("WATCH", "k1", "k2").raw == b"+OK\r\n"
        assert conns[0].call("WATCH", "k2").raw == b"+OK\r\n"
        conns[3].send_command("BZPOPMIN", "z1", "z2", "100")
        wait_for(lambda: fields()["total_blocking_keys"] == "2", what="the blocked client")
        after = fields()
        assert (after["pubsub_clients"], after["watching_clients"], after["total_watched_keys"],
                after["clients_in_timeout_table"], after["blocked_clients"]) == ("1", "2", "2", "1", "1")
    finally:
        for conn in conns:
            conn.close()


# ---- LOLWUT ------------------------------------------------------------------------------------

def test_lolwut_prints_the_version_as_redis_7_does(raw):
    version = info(raw, "server")[0]["redis_version"]
    version_line = f"Redis ver. {version}\n".encode()
    for call in [("LOLWUT",), ("LOLWUT", "VERSION", "7"), ("LOLWUT", "VERSION", "4"), ("LOLWUT", "foo"),
                 ("LOLWUT", "VERSION")]:
        assert raw.call(*call).value == version_line, call
    assert raw.call("LOLWUT", "VERSION", "x").raw == err("ERR value is not an integer or out of range")
    assert raw.call("LOLWUT", "VERSION", "5", "x").raw == err("ERR value is not an integer or out of range")


def test_lolwut_5_draws_schotter_in_braille(raw):
    text = raw.call("LOLWUT", "VERSION", "5", "20", "2", "2").value.decode()
    art, credit = text.rsplit("\n\n", 1)
    version = info(raw, "server")[0]["redis_version"]
    assert credit == f"Georg Nees - schotter, plotter on paper, 1968. Redis ver. {version}\n"
    lines = art.split("\n")
    assert len(lines) > 1 and all(len(line) == 20 for line in lines)
    assert all(0x2800 <= ord(ch) <= 0x28FF for line in lines for ch in line)
    assert any(ch != "\u2800" for line in lines for ch in line)  # something was drawn
    # Out-of-range sizes are clamped, as in Redis.
    tiny = raw.call("LOLWUT", "VERSION", "5", "0").value.decode().rsplit("\n\n", 1)[0]
    assert all(len(line) == 1 for line in tiny.split("\n"))
    wide = raw.call("LOLWUT", "VERSION", "5", "5000", "1", "1").value.decode().rsplit("\n\n", 1)[0]
    assert all(len(line) == 1000 for line in wide.split("\n"))


def test_lolwut_6_draws_a_skyline_in_terminal_colors(raw):
    text = raw.call("LOLWUT", "VERSION", "6", "30", "5").value.decode()
    art, credit = text.rsplit("\n\n", 1)
    assert credit.endswith(f" Redis ver. {info(raw, 'server')[0]['redis_version']}\n")
    lines = art.split("\n")
    assert len(lines) == 5
    assert all(line.count("\x1b[0m") == 30 for line in lines)


# Redis 7.2's MEMORY STATS fields in its order (its memoryCommand); db.<n> comes once per database
# holding keys, with three figures. The ratios and percentages are doubles (bulk text in RESP2).
MEMORY_STATS_FIELDS = [
    b"peak.allocated", b"total.allocated", b"startup.allocated", b"replication.backlog", b"clients.slaves",
    b"clients.normal", b"cluster.links", b"aof.buffer", b"lua.caches", b"functions.caches", b"db.0", b"db.3",
    b"overhead.total", b"keys.count", b"keys.bytes-per-key", b"dataset.bytes", b"dataset.percentage",
    b"peak.percentage", b"allocator.allocated", b"allocator.active", b"allocator.resident",
    b"allocator-fragmentation.ratio", b"allocator-fragmentation.bytes", b"allocator-rss.ratio",
    b"allocator-rss.bytes", b"rss-overhead.ratio", b"rss-overhead.bytes", b"fragmentation", b"fragmentation.bytes"]
MEMORY_STATS_DOUBLES = {b"dataset.percentage", b"peak.percentage", b"allocator-fragmentation.ratio",
                        b"allocator-rss.ratio", b"rss-overhead.ratio", b"fragmentation"}


def _map_pairs(reply) -> list:
    """(name, value) Reply pairs of a RESP3 map or a RESP2 flat array."""
    return reply.value if reply.kind == "%" else list(zip(reply.value[::2], reply.value[1::2]))


def test_memory_stats_has_every_field_in_order(start_either):
    srv = start_either()
    with srv.raw() as conn:
        conn.call("SET", "a", "1")
        conn.call("SELECT", "3")
        conn.call("SET", "b", "2")
        for protocol in (2, 3):
            conn.call("HELLO", protocol)
            stats = conn.call("MEMORY", "STATS")
            pairs = _map_pairs(stats)
            assert [name.value for name, _ in pairs] == MEMORY_STATS_FIELDS
            for name, value in pairs:
                if name.value.startswith(b"db."):
                    assert [(field.value, figure.kind) for field, figure in _map_pairs(value)] == [
                        (b"overhead.hashtable.main", ":"), (b"overhead.hashtable.expires", ":"),
                        (b"overhead.hashtable.slot-to-keys", ":")]
                    continue
                expected = ("," if protocol == 3 else "$") if name.value in MEMORY_STATS_DOUBLES else ":"
                assert value.kind == expected, (protocol, name.value, value.raw)
            values = {name.value: value for name, value in pairs}
            assert values[b"keys.count"].value == 2
