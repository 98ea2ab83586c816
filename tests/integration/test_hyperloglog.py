"""HyperLogLogs in a running server through redis-py: counting unique visitors per day and over a
week by PFMERGE, within the estimator's error; the string through SAVE and a restart, COPY and
RENAME; the sparse limit from the command line and the configuration file."""

from __future__ import annotations

import pytest
import redis

from support.server import wait_for


def test_unique_visitors_per_day_and_per_week(r):
    days = [f"visits:2026-11-{d:02d}" for d in range(1, 8)]
    for d, key in enumerate(days):
        # 20,000 visits a day from 1,000 + 2,000 d distinct users, half of them seen every day.
        users = [f"user:{u}" for u in range(1000 + 2000 * d)]
        with r.pipeline(transaction=False) as p:
            for i in range(0, 20000, 500):
                p.pfadd(key, *[users[(i + j) * 7919 % len(users)] for j in range(500)])
            p.execute()
    for d, key in enumerate(days):
        exact = 1000 + 2000 * d
        assert abs(r.pfcount(key) - exact) <= 0.03 * exact, key
    assert r.pfmerge("visits:week", *days)
    union = r.pfcount("visits:week")
    assert abs(union - 13000) <= 0.03 * 13000
    assert r.pfcount(*days) == union                       # the same union, nothing stored
    assert r.pfadd(days[0], "user:0") == 0                 # seen already
    assert r.pfadd(days[0], "someone new") in (0, 1)
    assert r.type("visits:week") == b"string"


def test_a_hyperloglog_survives_save_restart_copy_and_rename(make_server):
    srv = make_server()
    conn = redis.Redis(unix_socket_path=srv.unix_path)
    conn.pfadd("sparse", *[f"s{i}" for i in range(40)])
    conn.pfadd("dense", *[f"d{i}" for i in range(6000)])
    conn.pfcount("dense")
    before = {key: conn.get(key) for key in ("sparse", "dense")}
    assert conn.execute_command("PFDEBUG", "ENCODING", "dense") == b"dense"
    assert conn.save()
    srv.restart()
    conn = redis.Redis(unix_socket_path=srv.unix_path)
    wait_for(lambda: conn.ping(), what="the snapshot to load")
    assert {key: conn.get(key) for key in ("sparse", "dense")} == before
    assert conn.copy("dense", "copy") and conn.get("copy") == before["dense"]
    conn.rename("sparse", "renamed")
    assert conn.pfcount("renamed") == 40 and conn.pfadd("renamed", "s0") == 0


def test_the_sparse_limit_from_the_command_line_and_the_config_file(make_server):
    for srv in (make_server(options={"hll-sparse-max-bytes": "100"}),
                make_server(config_text="hll-sparse-max-bytes 100\n")):
        conn = redis.Redis(unix_socket_path=srv.unix_path)
        assert conn.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "100"}
        conn.pfadd("h", *[f"e{i}" for i in range(20)])
        assert conn.execute_command("PFDEBUG", "ENCODING", "h") == b"sparse" and conn.strlen("h") <= 100
        conn.pfadd("h", *[f"e{i}" for i in range(20, 60)])
        assert conn.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"


@pytest.mark.goblin
def test_a_pfadd_that_meets_a_corrupt_code_replays_to_the_same_bytes(make_server):
    # XZERO 10000 covers too few registers: "hello" (register 9216) is edited in, then "a"
    # (register 12711) lies past the code's end. Redis keeps the first edit but does not log the
    # command, so its log rebuilds the string SET; Goblin logs it, and the replay fails at the same
    # element, leaving the same bytes.
    srv = make_server(options={"appendonly": "yes", "appendfsync": "always"})
    conn = redis.Redis(unix_socket_path=srv.unix_path)
    corrupt = b"HYLL\x01\x00\x00\x00" + b"\x00" * 8 + b"\x67\x0f"
    conn.set("c", corrupt)
    with pytest.raises(redis.ResponseError, match="INVALIDOBJ"):
        conn.pfadd("c", "hello", "a")
    edited = conn.get("c")
    assert edited != corrupt and edited[15] & 0x80  # edited, the cache marked stale
    srv.restart()
    conn = redis.Redis(unix_socket_path=srv.unix_path)
    wait_for(lambda: conn.ping(), what="the AOF to load")
    assert conn.get("c") == edited
