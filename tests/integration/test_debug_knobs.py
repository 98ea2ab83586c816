"""Redis's testing knobs: DEBUG's subcommands and the options Redis's own tests lean on
(rdb-key-save-delay, key-load-delay, propagation-error-behavior).

Where the reply can be compared, the same test runs against Debian's redis-server 7.0, whose
replies here are 7.2's.
"""

from __future__ import annotations

import pytest

from support.resp import ConnectionClosed, Incomplete, ReplyTimeout
from support.server import wait_for

DEADLINE = 10.0

def info_field(conn, section: str, name: str) -> str:
    text = conn.call("INFO", section).value.decode()
    return next(line for line in text.splitlines() if line.startswith(name + ":")).split(":", 1)[1]

def test_debug_populate_creates_missing_keys_only(start_either):
    srv = start_either()
    with srv.raw() as conn:
        assert conn.call("SET", "key:1", "mine").raw == b"+OK\r\n"
        assert conn.call("DEBUG", "POPULATE", "3").raw == b"+OK\r\n"
        assert conn.call("MGET", "key:0", "key:1", "key:2", "key:3").py() == [b"value:0", b"mine", b"value:2",
                                                                             None]
        # A size pads with zero bytes, or cuts.
        assert conn.call("DEBUG", "POPULATE", "2", "p", "10").raw == b"+OK\r\n"
        assert conn.call("GET", "p:1").py() == b"value:1\0\0\0"
        assert conn.call("DEBUG", "POPULATE", "1", "q", "3").raw == b"+OK\r\n"
        assert conn.call("GET", "q:0").py() == b"val"
        assert conn.call("DBSIZE").py() == 6
        assert conn.call("DEBUG", "POPULATE", "-1").error_text == "ERR value is out of range, must be positive"
        assert conn.call("DEBUG", "POPULATE", "x").error_text == "ERR value is out of range, must be positive"
        assert conn.call("DEBUG", "POPULATE", "1", "k", "-5").error_text == (
            "ERR value is out of range, must be positive")
        assert conn.call("DEBUG", "POPULATE", "1", "a", "1", "x").error_text.startswith(
            "ERR unknown subcommand or wrong number of arguments for 'POPULATE'")
        assert conn.call("DEBUG", "POPULATE", "0").raw == b"+OK\r\n"

def test_debug_sdslen_answers_for_strings_only(start_either):
    srv = start_either()
    with srv.raw() as conn:
        conn.call("SET", "text", "hello world")
        conn.call("SET", "number", "12")
        conn.call("RPUSH", "list", "a")
        reply = conn.call("DEBUG", "SDSLEN", "text").value.decode()
        assert reply.startswith("key_sds_len:4, key_sds_avail:0, key_zmalloc: ")
        assert ", val_sds_len:11, " in reply
        assert conn.call("DEBUG", "SDSLEN", "number").error_text == "ERR Not an sds encoded string."
        assert conn.call("DEBUG", "SDSLEN", "list").error_text == "ERR Not an sds encoded string."
        assert conn.call("DEBUG", "SDSLEN", "nokey").error_text == "ERR no such key"

def test_debug_reload_options(start_either):
    srv = start_either()
    with srv.raw() as conn:
        conn.call("SET", "a", "1")
        assert conn.call("DEBUG", "RELOAD").raw == b"+OK\r\n"  # the file now holds a=1
        conn.call("SET", "a", "2")
        conn.call("SET", "b", "2")
        # NOSAVE: the file as it was replaces the data.
        assert conn.call("DEBUG", "RELOAD", "NOSAVE").raw == b"+OK\r\n"
        assert conn.call("MGET", "a", "b").py() == [b"1", None]
        conn.call("SET", "a", "3")
        conn.call("SET", "c", "3")
        # NOSAVE NOFLUSH MERGE: the file's keys are added, replacing those present.
        assert conn.call("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE").raw == b"+OK\r\n"
        assert conn.call("MGET", "a", "c").py() == [b"1", b"3"]
        assert conn.call("DEBUG", "RELOAD", "BOGUS").error_text == (
            "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")

def test_debug_loadaof_reads_the_log_back(start_either):
    srv = start_either(appendonly="yes", appendfsync="always")
    with srv.raw() as conn:
        conn.call("SET", "logged", "yes")
        conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        assert conn.call("DEBUG", "LOADAOF").raw == b"+OK\r\n"
        assert conn.call("GET", "logged").py() == b"yes"
        assert conn.call("DBSIZE").py() == 1

def test_debug_set_skip_checksum_validation_lets_a_damaged_payload_restore(start_either):
    srv = start_either()
    with srv.raw() as conn:
        conn.call("SET", "k", "value")
        payload = bytearray(conn.call("DUMP", "k").py())
        payload[-1] ^= 0xFF  # the CRC's last byte
        assert conn.call("RESTORE", "copy", "0", bytes(payload)).error_text == (
            "ERR DUMP payload version or checksum are wrong")
        assert conn.call("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1").raw == b"+OK\r\n"
        assert conn.call("RESTORE", "copy", "0", bytes(payload)).raw == b"+OK\r\n"
        assert conn.call("GET", "copy").py() == b"value"

def test_debug_set_disable_deny_scripts(start_either):
    srv = start_either()
    with srv.raw() as conn:
        script = "return redis.call('client', 'id')"
        assert conn.call("EVAL", script, "0").error_text.startswith(
            "ERR This Redis command is not allowed from script")
        assert conn.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1").raw == b"+OK\r\n"
        assert isinstance(conn.call("EVAL", script, "0").py(), int)

def test_debug_replybuffer_is_accepted(start_either):
    srv = start_either()
    with srv.raw() as conn:
        for args in (("PEAK-RESET-TIME", "NEVER"), ("PEAK-RESET-TIME", "RESET"), ("PEAK-RESET-TIME", "100"),
                     ("RESIZING", "0")):
            assert conn.call("DEBUG", "REPLYBUFFER", *args).raw == b"+OK\r\n"
        assert conn.call("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "soon").error_text == (
            "ERR value is not an integer or out of range")

@pytest.mark.parametrize("subcommand", ["PANIC", "OOM"])
def test_debug_panic_and_oom_crash_with_a_report(make_server, subcommand):
    srv = make_server()
    with srv.raw() as conn:
        conn.send(b"DEBUG " + subcommand.encode() + b"\r\n")
        wait_for(lambda: not srv.alive(), DEADLINE, what="the server down")
    srv.proc.wait()
    srv.stop_requested = True
    logs = srv.logs(limit=1 << 20)
    assert "Guru Meditation: " in logs
    assert "BUG REPORT START" in logs

def test_debug_mallctl_reads_jemalloc(make_server):
    srv = make_server()
    with srv.raw() as conn:
        allocator = conn.call("INFO", "memory").py().decode().split("mem_allocator:")[1].split()[0]
        if not allocator.startswith("jemalloc"):
            # A sanitizer build runs on the sanitizer's allocator: as a Redis built without
            # jemalloc, DEBUG has no MALLCTL then.
            assert conn.call("DEBUG", "MALLCTL", "arenas.narenas").error_text == (
                "ERR unknown subcommand or wrong number of arguments for 'MALLCTL'. Try DEBUG HELP.")
            return
        assert conn.call("DEBUG", "MALLCTL", "arenas.narenas").py() > 0
        assert conn.call("DEBUG", "MALLCTL-STR", "version").py().count(b".") >= 2
        assert conn.call("DEBUG", "MALLCTL", "no.such.control").error_text == "ERR No such file or directory"

def test_debug_restart_comes_back_with_the_data(make_server):
    srv = make_server(options={"save": "3600 1"})
    with srv.raw() as conn:
        conn.call("SET", "kept", "yes")
        conn.send(b"DEBUG RESTART\r\n")
    pid = srv.proc.pid

    def answers():
        try:
            with srv.raw(timeout=1.0) as again:
                return again.call("GET", "kept").py() == b"yes"
        except (OSError, ConnectionClosed, Incomplete, ReplyTimeout):
            return False

    wait_for(answers, DEADLINE, what="the restarted server answering")
    assert srv.proc.pid == pid  # the same process, running its executable again

def test_rdb_key_save_delay_makes_a_background_save_last(make_server):
    srv = make_server()
    with srv.raw() as conn:
        conn.call("DEBUG", "POPULATE", "1000")
        conn.call("CONFIG", "SET", "rdb-key-save-delay", "2000")  # 2 ms a key: about two seconds
        assert conn.call("BGSAVE").raw == b"+Background saving started\r\n"
        assert info_field(conn, "persistence", "rdb_bgsave_in_progress") == "1"
        conn.call("CONFIG", "SET", "rdb-key-save-delay", "0")
        wait_for(lambda: info_field(conn, "persistence", "rdb_bgsave_in_progress") == "0", DEADLINE,
                 what="the save done")
        assert info_field(conn, "persistence", "rdb_last_bgsave_status") == "ok"

def test_key_load_delay_keeps_the_server_loading(make_server):
    srv = make_server()
    with srv.raw() as conn:
        conn.call("DEBUG", "POPULATE", "2000")
        conn.call("SAVE")
    srv.stop()
    srv.options["key-load-delay"] = "2000"  # 2000 keys: about four seconds of loading
    srv.start(keep_port=True)

    def loading_seen():
        with srv.raw() as conn:
            return conn.call("GET", "key:0").is_error and info_field(conn, "persistence", "loading") == "1"

    # The server answers -LOADING while it loads; then the keys are there.
    assert loading_seen()
    with srv.raw() as conn:
        wait_for(lambda: info_field(conn, "persistence", "loading") == "0", DEADLINE, what="the load done")
        assert conn.call("DBSIZE").py() == 2000

def test_propagation_error_behavior_panics_a_replica(make_server):
    master = make_server(name="master")
    replica = make_server(name="replica", options={"replicaof": f"127.0.0.1 {master.port}",
                                                   "propagation-error-behavior": "ignore"})
    with master.raw() as m, replica.raw() as r:
        wait_for(lambda: info_field(r, "replication", "master_link_status") == "up", DEADLINE,
                 what="the replica in sync")
        # ignore: logged and counted, the replica goes on.
        assert m.call("DEBUG", "REPLICATE", "fake-command-1").raw == b"+OK\r\n"
        m.call("SET", "after", "1")
        wait_for(lambda: r.call("GET", "after").py() == b"1", DEADLINE, what="the write after it")
        assert "== CRITICAL == This replica is sending an error to its master" in replica.logs()
        assert "fake-command-1" in replica.logs()
        assert info_field(r, "stats", "unexpected_error_replies") == "1"
        # panic-on-replicas: the read-only replica panics.
        r.call("CONFIG", "SET", "propagation-error-behavior", "panic-on-replicas")
        m.call("DEBUG", "REPLICATE", "fake-command-2")
        wait_for(lambda: not replica.alive(), DEADLINE, what="the replica's panic")
    replica.proc.wait()
    replica.stop_requested = True
    assert "This replica panicked sending an error to its master" in replica.logs(limit=1 << 20)

def test_debug_help_lists_what_is_served(make_server):
    srv = make_server()
    with srv.raw() as conn:
        lines = [line.decode() for line in conn.call("DEBUG", "HELP").py()]
        names = {line.split()[0] for line in lines[1:] if not line.startswith(" ")}
        for name in ("POPULATE", "LOADAOF", "MALLCTL", "MALLCTL-STR", "SET-SKIP-CHECKSUM-VALIDATION",
                     "SET-DISABLE-DENY-SCRIPTS", "REPLYBUFFER", "CLIENT-EVICTION", "OOM", "PANIC", "RESTART",
                     "CRASH-AND-RECOVER", "SDSLEN", "RELOAD", "REPLICATE"):
            assert name in names, name
        assert conn.call("DEBUG", "NO-SUCH-THING").error_text.startswith("ERR unknown subcommand")
