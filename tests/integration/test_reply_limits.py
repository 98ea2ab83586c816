"""Replies too large for their client stop being built (docs/DESIGN.md, "Replies past a client's limit").

Under client-output-buffer-limit's hard limit, as in Redis, the commands that draw or walk many elements
(HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with a huge negative count, LRANGE, KEYS) stop once the reply
passes it, the client is closed and logged, and the server answers others at once. Without a limit (the
default for normal clients) Goblin still bounds one client's unsent replies by client-reply-size-limit, or
maxmemory, or an eighth of physical memory: ZRANDMEMBER key -2147483648 (a 24 GB reply that takes
redis-server down by the OOM killer) closes the client instead. Replies within the bounds are whole.

No assertion is on timing but the deadlines that tell a stuck server from a busy one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.resp import ConnectionClosed
from support.server import REFERENCE_BINARY

# A server building a reply of billions of elements would be busy for minutes; one that stops answers
# in far less than this.
DEADLINE = 10.0
HUGE_NEGATIVE = -999999999

FILL = {
    "hash": ("HSET", "h", *[x for i in range(50) for x in (f"f{i}", f"v{i}")]),
    "set": ("SADD", "s", *[f"m{i}" for i in range(50)]),
    "zset": ("ZADD", "z", *[x for i in range(50) for x in (i, f"m{i}")]),
}
DRAWS = {
    "HRANDFIELD": ("hash", ("HRANDFIELD", "h", HUGE_NEGATIVE, "WITHVALUES")),
    "SRANDMEMBER": ("set", ("SRANDMEMBER", "s", HUGE_NEGATIVE)),
    "ZRANDMEMBER": ("zset", ("ZRANDMEMBER", "z", HUGE_NEGATIVE, "WITHSCORES")),
}


def closed_while_others_are_served(srv, *command) -> None:
    """Sends command on a fresh connection and PING on another right behind it: the PING must be
    answered, and the first connection closed with no reply, each before DEADLINE."""
    with srv.raw() as conn, srv.raw() as other:
        conn.send_command(*command)
        other.send_command("PING")
        assert other.read_reply(timeout=DEADLINE).value == b"PONG"
        with pytest.raises(ConnectionClosed):
            reply = conn.read_reply(timeout=DEADLINE)
            pytest.fail(f"{command[0]} got a reply: {reply!r:.200}")


def disconnections(srv) -> int:
    return int(srv.info("stats")["client_output_buffer_limit_disconnections"])


def peak_rss_bytes(srv) -> int:
    status = Path(f"/proc/{srv.proc.pid}/status").read_text()
    return int(re.search(r"^VmHWM:\s+(\d+) kB$", status, re.M).group(1)) * 1024


def limited_server(make_server, binary=None):
    srv = make_server(binary=binary) if binary else make_server()
    with srv.raw() as conn:
        assert conn.call("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 1mb 0").value == b"OK"
        for fill in FILL.values():
            assert not conn.call(*fill).is_error
        assert not conn.call("RPUSH", "l", *[f"{i:0>100}" for i in range(20000)]).is_error
        for start in range(0, 20000, 1000):
            mset = [x for i in range(start, start + 1000) for x in (f"key:{i:0>80}", "v")]
            assert conn.call("MSET", *mset).value == b"OK"
    return srv


@pytest.fixture(params=["goblin", "redis-server"])
def limited(request, make_server):
    """A server under a 1 MB normal limit, Goblin or redis-server 7.0 (whose INFO does not count the
    disconnections: None)."""
    goblin = request.param == "goblin"
    srv = limited_server(make_server, None if goblin else REFERENCE_BINARY)
    return srv, (lambda: disconnections(srv)) if goblin else (lambda: None)


def assert_closes_at_once(limited, command):
    srv, count = limited
    before = count()
    closed_while_others_are_served(srv, *command)
    if before is not None:
        assert count() == before + 1


@pytest.mark.parametrize("name", list(DRAWS))
def test_huge_random_draw_under_output_limit_closes_the_client(limited, name):
    """Both servers stop drawing once the client is to be closed."""
    assert_closes_at_once(limited, DRAWS[name][1])


@pytest.mark.parametrize("command", [("LRANGE", "l", 0, -1), ("KEYS", "key:*")])
def test_long_walk_under_output_limit_closes_the_client(limited, command):
    assert_closes_at_once(limited, command)


def test_output_limit_close_is_logged(make_server):
    srv = limited_server(make_server)
    closed_while_others_are_served(srv, *DRAWS["ZRANDMEMBER"][1])
    log = Path(srv.dir, "stdout.log").read_text()
    assert re.search(r"Client id=\d+ scheduled to be closed ASAP for overcoming of output buffer limits\.", log)


def test_replies_within_the_output_limit_are_whole(make_server):
    srv = limited_server(make_server)
    r = srv.client()
    assert len(r.lrange("l", 0, 4999)) == 5000  # about 550 KB
    assert len(r.hrandfield("h", -3000, withvalues=True)) == 6000
    assert len(r.srandmember("s", -3000)) == 3000
    assert len(r.zrandmember("z", -3000, withscores=True)) == 6000
    assert len(r.keys("key:" + "0" * 76 + "1*")) == 1000  # keys 1000 to 1999
    assert disconnections(srv) == 0


@pytest.mark.parametrize("options", [{"client-reply-size-limit": "64mb"}, {"maxmemory": "64mb"}],
                         ids=["client-reply-size-limit", "maxmemory"])
def test_reply_past_the_reply_size_limit_closes_the_client(make_server, options):
    """No output limit (normal 0 0 0): the reply size limit, set or taken from maxmemory, still holds."""
    srv = make_server(options=options)
    r = srv.client()
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"].startswith("normal 0 0 0")
    r.zadd("z", {f"member:{i}": i for i in range(100)})
    closed_while_others_are_served(srv, "ZRANDMEMBER", "z", -2147483648, "WITHSCORES")
    assert disconnections(srv) == 1
    # The 64 MB reply may have been held twice over while its buffer grew; the whole one is 50 GB.
    assert peak_rss_bytes(srv) < 512 * 1024 * 1024
    log = Path(srv.dir, "stdout.log").read_text()
    assert re.search(r"Client id=\d+ scheduled to be closed ASAP for overcoming the reply size limit of "
                     r"67108864 bytes \(client-reply-size-limit\)\.", log)
    # A reply within the limit is whole.
    assert len(r.zrandmember("z", -200000, withscores=True)) == 400000
    assert disconnections(srv) == 1


def test_reply_size_limit_is_a_config_option(make_server):
    r = make_server().client()
    assert r.config_get("client-reply-size-limit") == {"client-reply-size-limit": "0"}
    assert r.config_set("client-reply-size-limit", "1mb")
    assert r.config_get("client-reply-size-limit") == {"client-reply-size-limit": "1048576"}
    r.rpush("l", *[f"{i:0>100}" for i in range(20000)])
    with pytest.raises(Exception):
        r.lrange("l", 0, -1)
    assert r.ping()
    assert r.config_set("client-reply-size-limit", "0")
    assert len(r.lrange("l", 0, -1)) == 20000


def test_unlimited_large_replies_are_whole(make_server):
    """The default limits: large replies arrive whole, element for element."""
    r = make_server().client()
    values = [f"{i:0>200}" for i in range(100000)]
    for start in range(0, len(values), 10000):
        r.rpush("l", *values[start:start + 10000])
    assert r.lrange("l", 0, -1) == [v.encode() for v in values]
    r.hset("h", mapping={f"f{i}": f"v{i}" for i in range(100)})
    fields = r.hrandfield("h", -300000)
    assert len(fields) == 300000 and set(fields) <= {f"f{i}".encode() for i in range(100)}
    r.sadd("s", *range(100))
    assert len(r.srandmember("s", -300000)) == 300000
    r.zadd("z", {f"m{i}": i for i in range(100)})
    assert len(r.zrandmember("z", -300000)) == 300000
    for start in range(0, 50000, 5000):
        r.mset({f"key:{i}": "v" for i in range(start, start + 5000)})
    assert len(r.keys("key:*")) == 50000
