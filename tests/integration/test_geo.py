"""Geo commands in a running server, through redis-py's geo API (its parsers read Goblin's replies
as they read Redis's: floats from the distance and coordinate texts, the hash as an integer) on
the examples of Redis's documentation, with the values redis-server gives for them, geo sets through DEBUG RELOAD, a restart on the
append-only file and COPY, and the log the AOF keeps for them against redis-server's (Redis logs
GEOADD as the ZADD it becomes, Goblin as it arrived: both replay to the same set; marked goblin).
"""

from __future__ import annotations

import pytest

from support.server import REFERENCE_BINARY, wait_for

SICILY = [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"]
AOF = {"appendonly": "yes", "appendfsync": "always", "enable-debug-command": "yes"}


def test_redis_py_reads_what_the_documentation_shows(r):
    assert r.geoadd("Sicily", SICILY) == 2
    assert r.geoadd("Sicily", SICILY, ch=True) == 0
    assert r.geoadd("Sicily", [13.583333, 37.316667, "Agrigento"], nx=True) == 1
    assert r.geodist("Sicily", "Palermo", "Catania") == 166274.1516
    assert r.geodist("Sicily", "Palermo", "Catania", unit="km") == 166.2742
    assert r.geodist("Sicily", "Palermo", "Nowhere") is None
    assert r.geohash("Sicily", "Palermo", "Catania", "Nowhere") == ["sqc8b49rny0", "sqdtr74hyu0", None]
    palermo, missing = r.geopos("Sicily", "Palermo", "Nowhere")
    assert palermo == pytest.approx((13.36138933897018433, 38.11555639549629859), abs=1e-15)
    assert missing is None
    assert r.georadius("Sicily", 15, 37, 200, unit="km", withdist=True, sort="ASC") == \
        [[b"Catania", 56.4413], [b"Agrigento", 130.4235], [b"Palermo", 190.4424]]
    assert r.georadiusbymember("Sicily", "Agrigento", 100, unit="km") == [b"Agrigento", b"Palermo"]
    found = r.geosearch("Sicily", longitude=15, latitude=37, radius=200, unit="km", withcoord=True,
                        withdist=True, withhash=True, sort="ASC", count=2)
    assert [(m, d, h) for m, d, h, _ in found] == [(b"Catania", 56.4413, 3479447370796909),
                                                  (b"Agrigento", 130.4235, 3479030013248308)]
    assert found[0][3] == pytest.approx((15.08726745843887329, 37.50266842333162032), abs=1e-15)
    assert r.geosearch("Sicily", longitude=15, latitude=37, width=400, height=400, unit="km", sort="DESC") == \
        [b"Palermo", b"Agrigento", b"Catania"]


def test_stored_results_are_sorted_sets(r):
    r.geoadd("Sicily", SICILY)
    assert r.geosearchstore("near", "Sicily", member="Palermo", radius=200, unit="km", storedist=True) == 2
    assert r.zrange("near", 0, -1, withscores=True) == [(b"Palermo", 0.0), (b"Catania", 166.27415156960032)]
    assert r.georadius("Sicily", 15, 37, 100, unit="km", store="hashes") == 1
    assert r.zrange("hashes", 0, -1, withscores=True) == [(b"Catania", 3479447370796909.0)]
    assert r.geopos("hashes", "Catania") == r.geopos("Sicily", "Catania")
    assert r.georadius("Sicily", -50, -50, 1, unit="km", store="hashes") == 0
    assert r.exists("hashes") == 0
    assert r.type("near") == b"zset"
    assert r.zrem("Sicily", "Palermo") == 1
    assert r.geopos("Sicily", "Palermo") == [None]


def test_read_only_forms_refuse_store(r):
    r.geoadd("Sicily", SICILY)
    with pytest.raises(Exception, match="syntax error"):
        r.execute_command("GEORADIUS_RO", "Sicily", 15, 37, 200, "km", "STORE", "dst")
    with pytest.raises(Exception, match="syntax error"):
        r.execute_command("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", 200, "km", "STOREDIST", "dst")
    assert r.execute_command("GEORADIUS_RO", "Sicily", 15, 37, 200, "km", "ASC") == [b"Catania", b"Palermo"]


def geo_state(conn) -> list:
    return [conn.call(*c).raw for c in [("ZRANGE", "g", 0, -1, "WITHSCORES"), ("ZRANGE", "d", 0, -1, "WITHSCORES"),
                                        ("ZRANGE", "e", 0, -1, "WITHSCORES"), ("EXISTS", "gone")]]


GEO_WRITES = [("GEOADD", "g", "CH", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania",
               "180", "85.05112878", "edge"),
              ("GEOADD", "g", "XX", "1", "1", "Palermo", "2", "2", "new"),
              ("GEORADIUS", "g", "1", "1", "500", "km", "STORE", "d"),
              ("GEOSEARCHSTORE", "e", "g", "FROMMEMBER", "Catania", "BYBOX", "2000", "2000", "km", "STOREDIST"),
              ("SET", "gone", "x"), ("GEORADIUSBYMEMBER", "nokey", "m", "1", "km", "STORE", "gone"),
              ("GEOSEARCHSTORE", "missing", "g", "FROMLONLAT", "-50", "-50", "BYRADIUS", "1", "m"),
              ("GEORADIUS", "g", "1", "1", "500", "km")]


def test_geo_sets_survive_reload_restart_and_copy(make_server):
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        conn.pipeline(GEO_WRITES)
        before = geo_state(conn)
        assert conn.call("DEBUG", "RELOAD").raw == b"+OK\r\n"
        assert geo_state(conn) == before
        assert conn.call("COPY", "g", "copied").raw == b":1\r\n"
        assert conn.call("GEOPOS", "copied", "Catania").raw == conn.call("GEOPOS", "g", "Catania").raw
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        assert geo_state(conn) == before


@pytest.mark.goblin
def test_the_log_replays_to_what_redis_holds(make_server):
    """Everything but GEOADD is logged as redis-server logs it; GEOADD is logged as it arrived where
    Redis logs its ZADD, and a replay of either log holds the same sets."""
    from .test_effects import incr_commands
    goblin = make_server(options=AOF)
    redis = make_server(name="reference-aof", binary=REFERENCE_BINARY, options=AOF)
    states = []
    for srv in (goblin, redis):
        with srv.raw() as conn:
            conn.pipeline(GEO_WRITES)
            states.append(geo_state(conn))
    assert states[0] == states[1]
    ours, theirs = incr_commands(goblin), incr_commands(redis)
    assert [c for c in ours if c[1] != b"GEOADD"] == [c for c in theirs if c[1] != b"ZADD"]
    assert [c[1] for c in ours].count(b"GEOADD") == [c[1] for c in theirs].count(b"ZADD") == 2
    assert (0, b"GEORADIUS", b"g", b"1", b"1", b"500", b"km", b"STORE", b"d") in ours
    # Without STORE a GEORADIUS changes nothing: no effect.
    assert not any(c[1] == b"GEORADIUS" and c[-1] == b"km" for c in ours)
    goblin.restart()
    with goblin.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        assert geo_state(conn) == states[1]
