"""Streams in a running server: XADD with ids the server chooses, trims, and the generic key
commands (TYPE, OBJECT ENCODING, SCAN TYPE, COPY, RENAME, MEMORY USAGE, DEBUG DIGEST) on a
stream; a stream through SAVE and a restart, and through the append-only file (automatic ids and
approximate trims logged as the exact result); redis-py's stream calls and redis-benchmark."""

from __future__ import annotations

import re
import subprocess
import threading

import pytest
import redis

from support.server import wait_for


def test_automatic_ids_increase_and_follow_the_clock(r):
    ids = [r.xadd("s", {"f": i}) for i in range(1000)]
    parsed = [tuple(map(int, i.split(b"-"))) for i in ids]
    assert parsed == sorted(parsed) and len(set(parsed)) == 1000
    assert all(re.fullmatch(rb"\d+-\d+", i) for i in ids)
    now_ms = int(r.time()[0]) * 1000
    assert abs(parsed[-1][0] - now_ms) < 10_000
    assert r.xadd("s", {"f": "x"}, id=f"{parsed[-1][0]}-*") == f"{parsed[-1][0]}-{parsed[-1][1] + 1}".encode()
    assert r.xlen("s") == 1001


def test_redis_py_stream_calls(r):
    for i in range(10):
        r.xadd("events", {"kind": "click", "n": i}, id=f"{i + 1}-0")
    assert r.xrange("events", count=2) == [(b"1-0", {b"kind": b"click", b"n": b"0"}),
                                           (b"2-0", {b"kind": b"click", b"n": b"1"})]
    assert r.xrevrange("events", max="5", min="3")[0][0] == b"5-0"
    assert r.xdel("events", "1-0", "2-0") == 2
    assert r.xtrim("events", maxlen=5) == 0                      # ~: no whole node to drop
    assert r.xtrim("events", maxlen=5, approximate=False) == 3
    assert [entry_id for entry_id, _ in r.xrange("events")] == [b"6-0", b"7-0", b"8-0", b"9-0", b"10-0"]
    r.xadd("events", {"kind": "late"}, maxlen=3, approximate=False)
    assert r.xlen("events") == 3


def test_generic_commands_on_a_stream(r):
    for i in range(300):
        r.xadd("s", {"f": "v" * 16}, id=f"{i // 4 + 1}-{i % 4}")
    assert r.type("s") == b"stream" and r.object("encoding", "s") == b"stream"
    assert list(r.scan_iter(_type="stream")) == [b"s"]
    assert r.copy("s", "copy") and r.xrange("copy") == r.xrange("s")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "s") == r.execute_command("DEBUG", "DIGEST-VALUE", "copy")
    r.xadd("copy", {"f": "other"}, id="1000-0")
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "s") != r.execute_command("DEBUG", "DIGEST-VALUE", "copy")
    r.rename("copy", "moved")
    assert r.xlen("moved") == 301 and r.exists("copy") == 0


@pytest.mark.goblin
def test_memory_usage_counts_the_packed_entries(r):
    for i in range(3000):
        r.xadd("s", {"f": "v" * 16}, id=f"{i // 4 + 1}-{i % 4}")
    usage = r.memory_usage("s")
    assert 3000 * 20 < usage < 3000 * 24    # 20 bytes an entry and the nodes around them


def test_a_stream_survives_save_and_restart(make_server):
    srv = make_server()
    client = srv.client()
    for i in range(2500):
        client.xadd("s", {"f": i, "g": "x" * (i % 50)}, id=f"{i // 3 + 1}-{i % 3}")
    client.xdel("s", "10-1", "400-2")
    client.xadd("empty", {"f": 1}, id="7-7")
    client.xdel("empty", "7-7")
    before = client.execute_command("DEBUG", "DIGEST")
    entries = client.xrange("s")
    client.save()
    srv.restart()
    client = srv.client()
    assert client.execute_command("DEBUG", "DIGEST") == before
    assert client.xrange("s") == entries and client.xlen("empty") == 0
    # The empty stream kept its last id: an older one is refused.
    try:
        client.xadd("empty", {"f": 1}, id="7-7")
        raise AssertionError("XADD below the last id succeeded")
    except redis.exceptions.ResponseError as exc:
        assert "equal or smaller" in str(exc)


def test_the_aof_logs_chosen_ids_and_exact_trims(make_server):
    srv = make_server(options={"appendonly": "yes"})
    client = srv.client()
    for i in range(1000):
        client.xadd("log", {"n": i}, maxlen=200, approximate=True)
    client.xadd("log", {"n": "partial"}, id="*")
    ms = int(client.xrevrange("log", count=1)[0][0].split(b"-")[0])
    client.xadd("log", {"n": "seq"}, id=f"{ms + 5}-*")
    client.execute_command("XTRIM", "log", "MINID", "~", "0-1")
    client.execute_command("XTRIM", "log", "MAXLEN", "~", "150", "LIMIT", "100")
    before = client.execute_command("DEBUG", "DIGEST")
    entries = client.xrange("log")
    assert 150 <= len(entries) < 1002
    srv.restart()
    client = srv.client()
    assert client.xrange("log") == entries
    assert client.execute_command("DEBUG", "DIGEST") == before


@pytest.mark.redis72
def test_xsetid_refuses_an_id_below_the_highest_deleted(r):
    r.xadd("s", {"f": 1}, id="1-0")
    r.xadd("s", {"f": 2}, id="1-1")
    r.xdel("s", "1-1")
    with pytest.raises(redis.exceptions.ResponseError,
                       match="The ID specified in XSETID is smaller than current max_deleted_entry_id"):
        r.execute_command("XSETID", "s", "1-0")
    assert r.execute_command("XSETID", "s", "1-1") == b"OK"


def test_blocked_xread_gets_what_arrives_after_it_blocked(server, r):
    r.xadd("s", {"old": 1}, id="1-0")
    readers = [server.client() for _ in range(3)]
    results = [None] * 3

    def read(i):
        results[i] = readers[i].xread({"s": "$", "other": "$"}, block=10000)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    wait_for(lambda: r.info("clients")["blocked_clients"] == 3, what="three blocked readers")
    r.xadd("s", {"new": 1}, id="2-0")
    for t in threads:
        t.join(10)
    assert all(result == [[b"s", [(b"2-0", {b"new": b"1"})]]] for result in results), results
    # A timeout answers a null reply; inside MULTI XREAD never blocks.
    assert r.xread({"s": "$"}, block=50) == []
    pipe = r.pipeline(transaction=True)
    pipe.xread({"s": "$"}, block=0)
    assert pipe.execute() == [[]]


def test_streams_from_scripts(make_server):
    # A script's XADD with `*` reaches the log with the id it chose; XREAD BLOCK is refused.
    srv = make_server(options={"appendonly": "yes"})
    client = srv.client()
    ids = client.eval("local a = redis.call('XADD', KEYS[1], '*', 'f', '1') "
                      "local b = redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1', '*', 'f', '2') "
                      "return {a, b, redis.call('XLEN', KEYS[1])}", 1, "s")
    assert ids[2] == 2 and ids[0] < ids[1]
    with pytest.raises(redis.exceptions.ResponseError,
                       match="XREAD command is not allowed with BLOCK option from scripts"):
        client.eval("return redis.call('XREAD', 'BLOCK', '0', 'STREAMS', KEYS[1], '$')", 1, "s")
    entries = client.xrange("s")
    srv.restart()
    assert srv.client().xrange("s") == entries


def test_redis_benchmark_xadd(server):
    out = subprocess.run(["redis-benchmark", "-p", str(server.port), "-n", "20000", "-P", "16", "-q",
                          "XADD", "bench", "*", "f", "__rand_int__"],
                         capture_output=True, text=True, timeout=60).stdout
    assert "requests per second" in out
    client = server.client()
    assert client.xlen("bench") == 20000
    client.delete("bench")
