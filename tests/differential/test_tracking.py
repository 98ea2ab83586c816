"""Client-side caching (CLIENT TRACKING), side by side with redis-server: scripted scenarios over
two to four connections per server, every reply and every invalidation compared byte for byte.

After each step every connection (but one inside MULTI, whose commands are queued) is sent
`PING <marker>` and read up to that PING's reply: whatever arrived before it is what the server
pushed to the connection since the last step (invalidations, tracking-redir-broken, messages on
__redis__:invalidate). Both servers append an invalidation to its receiver before they answer
the command that caused it, and send BCAST invalidations at the end of the event-loop round, so
the marker always comes after them: no sleeps.

Client ids differ between the servers: arguments name a connection (Id), and replies that carry
ids (CLIENT GETREDIR, TRACKINGINFO, CLIENT ID, tracking-redir-broken) have each connection's id
replaced by its index before they are compared.

Expiry is made deterministic with DEBUG SET-ACTIVE-EXPIRE 0 (no background expiry), a 1 ms
deadline and DEBUG SLEEP 0.01 (the server itself waits past the deadline); the next lookup
expires the key lazily, and nothing else looks keys up.

Where Redis 7.0 (the reference) and 7.2 differ, the scenarios follow 7.2: they do not differ in
anything compared here (7.0.15 already sends the running client's own invalidations after its
reply, as 7.2 does). One deliberate deviation is checked on Goblin alone (goblin): two
overlapping PREFIX arguments that are not the list's first prefix get Redis's error and then
also +OK on Redis (two replies to one command); Goblin replies the error alone and enables
nothing.
"""

from __future__ import annotations

import itertools
import random

import pytest

from support.resp import ConnectionClosed, ReplyTimeout, encode_command
from support.server import parse_info, wait_for

from .test_list_blocking import Id  # a connection's CLIENT ID on whichever server

READ_SECONDS = 5.0
INFO_FIELDS = ("tracking_clients", "tracking_total_keys", "tracking_total_items", "tracking_total_prefixes")
_markers = itertools.count()


def client_fields(control) -> dict:
    """id -> (flags, redir) from CLIENT LIST."""
    fields = {}
    for line in control.call("CLIENT", "LIST").value.decode("utf-8", "replace").splitlines():
        items = dict(item.partition("=")[::2] for item in line.split(" "))
        fields[int(items["id"])] = (items["flags"], int(items["redir"]))
    return fields


class Side:
    """One server's connections for a scenario, plus a control connection."""

    def __init__(self, server, protocols):
        self.name = server.name
        self.control = server.raw()
        assert self.control.call("FLUSHALL").raw == b"+OK\r\n"
        assert self.control.call("DEBUG", "SET-ACTIVE-EXPIRE", "0").raw == b"+OK\r\n"
        self.conns = [server.raw() for _ in protocols]
        for conn, protocol in zip(self.conns, protocols):
            if protocol == 3:
                assert not conn.call("HELLO", "3").is_error
        self.ids = [int(conn.call("CLIENT", "ID").value) for conn in self.conns]
        self.in_multi = [False] * len(protocols)
        self.closed = set()

    def args(self, args) -> tuple:
        return tuple(str(self.ids[a.index]) if isinstance(a, Id) else a for a in args)

    def normalise(self, raw: bytes) -> bytes:
        for index, client_id in enumerate(self.ids):
            raw = raw.replace(b":%d\r\n" % client_id, b":<id of conn %d>\r\n" % index)
        return raw

    def call(self, index: int, args) -> bytes:
        conn = self.conns[index]
        conn.send(encode_command(*self.args(args)))
        try:
            raw = conn.read_reply(timeout=READ_SECONDS).raw
        except ReplyTimeout:
            return b"<no reply>"
        name = [str(a).lower() for a in args[:2]]
        if name[0] == "multi" and raw == b"+OK\r\n":
            self.in_multi[index] = True
        if name[0] in ("exec", "discard", "reset"):
            self.in_multi[index] = False
        if name[0] == "client":
            raw = self.normalise(raw)
        return raw

    def drain(self, index: int) -> bytes:
        """What the server pushed to connection index since the last step."""
        marker = b"marker-%d" % next(_markers)
        conn = self.conns[index]
        conn.send(encode_command("PING", marker))
        pushed = b""
        while True:
            try:
                reply = conn.read_reply(timeout=READ_SECONDS)
            except (ReplyTimeout, ConnectionClosed) as error:
                return pushed + b"<%s>" % type(error).__name__.encode()
            if reply.raw.endswith(marker + b"\r\n"):  # $marker, or RESP2 subscribed: *2 pong marker
                return self.normalise(pushed)
            pushed += reply.raw

    def flags(self) -> list:
        fields = client_fields(self.control)
        out = []
        for index, client_id in enumerate(self.ids):
            if index in self.closed:
                continue
            flags, redir = fields[client_id]
            redir_name = redir if redir <= 0 else f"conn {self.ids.index(redir)}" if redir in self.ids else "gone"
            out.append((index, flags, redir_name))
        return out

    def info(self) -> dict:
        info = parse_info(self.control.call("INFO", "everything").value)
        return {field: info[field] for field in INFO_FIELDS}

    def close(self, index: int):
        self.conns[index].close()
        self.closed.add(index)
        client_id = self.ids[index]
        wait_for(lambda: client_id not in client_fields(self.control), timeout=READ_SECONDS,
                 what=f"conn {index} to leave CLIENT LIST on {self.name}")

    def close_all(self):
        for index in range(len(self.conns)):
            if index not in self.closed:
                self.close(index)
        self.control.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        self.control.close()


# ---- steps -------------------------------------------------------------------------------------

class Call:
    def __init__(self, conn: int, *args):
        self.conn, self.args = conn, args

    def __repr__(self):
        return f"conn {self.conn}: " + " ".join(map(str, self.args))


class Flags:
    """CLIENT LIST's flags and redir of every open connection."""

    def __repr__(self):
        return "CLIENT LIST flags"


class Info:
    """INFO's tracking_clients and tracking_total_keys / items / prefixes."""

    def __repr__(self):
        return "INFO tracking fields"


class Close:
    def __init__(self, conn: int):
        self.conn = conn

    def __repr__(self):
        return f"conn {self.conn} closes"


class Runner:
    def __init__(self, goblin_server, reference_server, protocols, title: str):
        self.sides = (Side(goblin_server, protocols), Side(reference_server, protocols))
        self.title = title
        self.transcript = []

    def fail(self, message):
        pytest.fail(f"{self.title}: {message}\nthe steps so far (goblin | reference):\n"
                    + "\n".join(self.transcript[-60:]), pytrace=False)

    def compare(self, what, g, r):
        self.transcript.append(f"  {what}: {g!r}" + ("" if g == r else f" | {r!r}   <-- DIFFERS"))
        if g != r:
            self.fail(f"{what}: goblin {g!r}, the reference {r!r}")

    def do(self, step, number: int):
        goblin, reference = self.sides
        self.transcript.append(f"#{number} {step!r}")
        if isinstance(step, Call):
            self.compare("reply", goblin.call(step.conn, step.args), reference.call(step.conn, step.args))
        elif isinstance(step, Flags):
            self.compare("flags", goblin.flags(), reference.flags())
            return
        elif isinstance(step, Info):
            self.compare("info", goblin.info(), reference.info())
            return
        elif isinstance(step, Close):
            for side in self.sides:
                side.close(step.conn)
        for index in range(len(goblin.conns)):
            if index in goblin.closed or reference.in_multi[index]:
                continue
            self.compare(f"conn {index} received", goblin.drain(index), reference.drain(index))

    def close(self):
        for side in self.sides:
            side.close_all()


def run_scenario(goblin_server, reference_server, steps, protocols, title):
    runner = Runner(goblin_server, reference_server, protocols, title)
    try:
        for number, step in enumerate(steps, 1):
            runner.do(step, number)
        runner.do(Info(), len(steps) + 1)
        runner.do(Flags(), len(steps) + 2)
    finally:
        runner.close()


def tracking(conn, *options):
    return Call(conn, "CLIENT", "TRACKING", *options)


def info(conn):
    return Call(conn, "CLIENT", "TRACKINGINFO")


# ---- scenarios -----------------------------------------------------------------------------------

# (protocols of the connections, steps)
SCENARIOS = {
    "default_mode": ([3, 2, 3], [
        Call(1, "MSET", "a", "1", "b", "2", "c", "3"),
        tracking(0, "on"), info(0), Flags(), Info(),
        Call(0, "GET", "a"), Call(0, "MGET", "b", "c", "missing"), Info(),
        Call(1, "SET", "a", "x"), Info(),
        Call(1, "SET", "a", "y"),  # forgotten after the first invalidation
        Call(1, "DEL", "b", "missing"), Call(1, "APPEND", "c", "!"),
        Call(0, "HGET", "h", "f"), Call(2, "HSET", "h", "f", "v"),
        Call(0, "EXISTS", "a", "b"), Call(0, "TYPE", "c"), Call(0, "STRLEN", "c"), Info(),
        Call(1, "RENAME", "c", "b"), Call(2, "INCR", "a"),
        Call(0, "SET", "own", "1"), Call(0, "GET", "own"), Call(0, "SET", "own", "2"),
        Call(0, "GET", "own"), Call(0, "INCR", "own"),
        Call(0, "GET", "own"), Call(1, "GET", "own"), Call(2, "DEL", "own"),
        tracking(0, "off"), Info(), Call(0, "GET", "a"), Call(1, "SET", "a", "z"), Info(),
        Call(2, "GET", "a"),  # conn 2 does not track: nothing is remembered
        Call(1, "SET", "a", "w"), Info(),
    ]),
    "writes_of_every_family": ([3, 2], [
        tracking(0, "on"),
        Call(1, "RPUSH", "l", "a", "b"), Call(1, "SADD", "s", "a"), Call(1, "ZADD", "z", "1", "a"),
        Call(1, "XADD", "x", "1-1", "f", "v"), Call(1, "SET", "str", "v"),
        Call(0, "LRANGE", "l", "0", "-1"), Call(0, "SMEMBERS", "s"), Call(0, "ZSCORE", "z", "a"),
        Call(0, "XLEN", "x"), Call(0, "GETRANGE", "str", "0", "1"), Info(),
        Call(1, "LPOP", "l"), Call(1, "SREM", "s", "nothing"), Call(1, "SREM", "s", "a"),
        Call(1, "ZINCRBY", "z", "1", "a"), Call(1, "XTRIM", "x", "MAXLEN", "0"),
        Call(1, "SETRANGE", "str", "0", "w"), Info(),
        Call(0, "LLEN", "l"), Call(0, "ZCARD", "z"), Call(0, "SORT_RO", "l", "ALPHA"),
        Call(1, "EXPIRE", "l", "100"), Call(1, "PERSIST", "l"), Call(0, "LLEN", "l"),
        Call(1, "PERSIST", "l"), Call(0, "TTL", "z"), Call(1, "COPY", "l", "z", "REPLACE"),
        Call(0, "GET", "dst"), Call(1, "LMOVE", "l", "dst", "LEFT", "LEFT"),
    ]),
    "optin": ([3, 2], [
        tracking(0, "on", "OPTIN"), info(0),
        Call(0, "GET", "a"), Call(1, "SET", "a", "1"),  # not cached: nothing
        Call(0, "CLIENT", "CACHING", "yes"), info(0), Call(0, "GET", "a"), info(0),
        Call(0, "GET", "b"), Call(1, "MSET", "a", "2", "b", "2"),
        # CLIENT CACHING lasts through other CLIENT subcommands, and the whole of MULTI.
        Call(0, "CLIENT", "CACHING", "yes"), Call(0, "CLIENT", "ID"), Call(0, "GET", "b"),
        Call(1, "SET", "b", "3"),
        Call(0, "CLIENT", "CACHING", "yes"), Call(0, "MULTI"), Call(0, "GET", "c"),
        Call(0, "GET", "d"), Call(0, "EXEC"), Call(1, "MSET", "c", "1", "d", "1"),
        Call(0, "MULTI"), Call(0, "CLIENT", "CACHING", "yes"), Call(0, "GET", "e"),
        Call(0, "EXEC"), Call(0, "GET", "f"), Call(1, "MSET", "e", "1", "f", "1"),
        Call(0, "CLIENT", "CACHING", "yes"), Call(0, "NOSUCHCOMMAND"), Call(0, "GET", "g"),
        Call(1, "SET", "g", "1"), Info(),
    ]),
    "optout": ([3, 2], [
        tracking(0, "on", "OPTOUT"), info(0),
        Call(0, "GET", "a"), Call(1, "SET", "a", "1"),
        Call(0, "CLIENT", "CACHING", "no"), info(0), Call(0, "GET", "b"), info(0),
        Call(1, "SET", "b", "1"), Call(0, "GET", "b"), Call(1, "SET", "b", "2"),
        tracking(0, "on"), info(0),  # ON again replaces the mode
        Call(0, "GET", "c"), Call(1, "SET", "c", "1"),
    ]),
    "noloop": ([3, 3], [
        tracking(0, "on", "NOLOOP"), info(0),
        Call(0, "GET", "k"), Call(0, "SET", "k", "mine"), Call(0, "GET", "k"),
        Call(1, "SET", "k", "theirs"),
        Call(0, "GET", "k"), Call(0, "EVAL", "return redis.call('set', KEYS[1], 'lua')", "1", "k"),
        Call(1, "DEL", "k"), Info(),
    ]),
    # What a script reads is Redis 7.2's own (test_scripts_track_what_they_read); its writes are
    # the same on 7.0.
    "scripts": ([3, 2], [
        tracking(0, "on"), Call(0, "MGET", "a", "b"),
        Call(0, "EVAL", "return redis.call('set', 'b', 'x')", "0"),
        Call(1, "EVAL", "return redis.call('set', KEYS[1], 'y')", "1", "a"),
    ]),
    "multi_exec": ([3, 2], [
        tracking(0, "on"), Call(0, "GET", "a"), Call(0, "GET", "b"),
        Call(0, "MULTI"), Call(0, "SET", "a", "1"), Call(0, "GET", "c"), Call(0, "SET", "c", "2"),
        Call(0, "SET", "b", "1"), Call(0, "EXEC"),
        Call(0, "GET", "a"), Call(1, "MULTI"), Call(1, "SET", "a", "2"), Call(1, "SET", "a", "3"),
        Call(1, "EXEC"),
        Call(0, "MULTI"), Call(0, "CLIENT", "TRACKING", "on", "OPTIN"), Call(0, "GET", "d"),
        Call(0, "EXEC"), Call(1, "SET", "d", "1"),
    ]),
    "redirect_to_a_resp2_subscriber": ([2, 2, 2], [
        Call(2, "SUBSCRIBE", "__redis__:invalidate"),
        tracking(0, "on", "REDIRECT", Id(2)), Call(0, "CLIENT", "GETREDIR"), info(0), Flags(),
        Call(0, "GET", "a"), Call(0, "MGET", "b", "c"), Call(1, "MSET", "a", "1", "b", "1"),
        Call(0, "SET", "c", "own"),
        Call(0, "GET", "a"), Call(1, "FLUSHALL"), Call(0, "GET", "a"), Call(1, "FLUSHDB"),
        Call(2, "UNSUBSCRIBE"), Call(0, "GET", "a"), Call(1, "SET", "a", "2"),  # not subscribed: lost
    ]),
    # (The target changing a key itself is 7.2's own: test_a_push_to_the_running_client_...)
    "redirect_to_a_resp3_client": ([2, 3, 3, 2], [
        tracking(0, "on", "REDIRECT", Id(1)), Call(0, "GET", "a"), Call(2, "SET", "a", "1"),
        Call(0, "GET", "a"), Call(2, "FLUSHALL"),  # a RESP2 tracker's null: $-1 in the push
        tracking(2, "on", "REDIRECT", Id(1)), Call(0, "GET", "k"), Call(2, "GET", "k"),
        Call(3, "SET", "k", "1"),  # two trackers' invalidations reach one target, in id order
        tracking(1, "on", "REDIRECT", Id(1)), Call(1, "GET", "self"), Call(0, "SET", "self", "1"),
    ]),
    "broken_redirect": ([3, 2, 2], [
        tracking(0, "on", "REDIRECT", Id(2)), tracking(1, "on", "REDIRECT", Id(2)),
        Call(0, "GET", "a"), Call(1, "GET", "a"), Close(2), Flags(),
        Call(0, "CLIENT", "GETREDIR"), Call(1, "SET", "a", "1"), Flags(), info(0), info(1),
        Call(0, "GET", "b"), Call(1, "SET", "b", "1"), Call(1, "FLUSHALL"),
        tracking(0, "on"), Flags(), info(0),  # ON again clears broken_redirect
    ]),
    "bcast": ([3, 3, 2], [
        tracking(0, "on", "BCAST", "PREFIX", "user:", "PREFIX", "cfg:"), info(0), Flags(), Info(),
        tracking(1, "on", "BCAST"), info(1), Info(),
        Call(2, "SET", "user:1", "a"), Call(2, "MSET", "cfg:b", "1", "cfg:a", "1", "other", "x"),
        Call(2, "DEL", "user:1", "user:2"), Call(2, "EXPIRE", "cfg:a", "100"),
        Call(0, "GET", "user:1"), Info(),  # BCAST remembers nothing
        Call(0, "SET", "user:9", "own"), Call(1, "SET", "cfg:own", "x"),
        tracking(0, "on", "BCAST", "PREFIX", "session:"), info(0), Info(),
        Call(2, "SET", "session:1", "x"),
        tracking(0, "off"), Info(), Call(2, "SET", "user:2", "x"),
        tracking(0, "on", "BCAST", "PREFIX", "a", "PREFIX", "b", "NOLOOP"),
        Call(0, "MSET", "a1", "1", "b1", "1"), Call(1, "MSET", "a1", "2", "a2", "2"),
        Call(2, "FLUSHDB"), Info(),
    ]),
    "bcast_noloop_and_scripts": ([3, 3], [
        tracking(0, "on", "BCAST", "NOLOOP"), tracking(1, "on", "BCAST", "PREFIX", "k"),
        Call(0, "SET", "k1", "1"), Call(1, "SET", "k2", "1"),
        Call(0, "EVAL", "redis.call('set', 'k3', '1'); return redis.call('set', 'x', '1')", "0"),
        Call(0, "MULTI"), Call(0, "SET", "k4", "1"), Call(0, "SET", "y", "1"), Call(0, "EXEC"),
    ]),
    "expiry": ([3, 2], [
        # Stored and read in one transaction, so they are tracked before their deadline passes.
        tracking(0, "on"), Call(0, "MULTI"), Call(0, "SET", "a", "1", "PX", "1"),
        Call(0, "SET", "b", "1", "PX", "1"), Call(0, "SET", "c", "1", "PX", "1"),
        Call(0, "MGET", "a", "b", "c"), Call(0, "EXEC"), Call(1, "DEBUG", "SLEEP", "0.01"),
        Call(1, "EXISTS", "a"),  # another client's lookup expires it
        Call(0, "GET", "b"),  # the tracker's own lookup: the invalidation follows the reply
        Call(0, "GET", "b"), Call(1, "SET", "b", "2"), Info(),
        tracking(0, "off"), tracking(0, "on", "BCAST"), Call(1, "GET", "c"),
        Call(1, "SET", "d", "1", "PX", "1"), Call(1, "DEBUG", "SLEEP", "0.01"), Call(0, "TTL", "d"),
    ]),
    "flush": ([3, 2, 3], [
        tracking(0, "on"), tracking(1, "on"), Call(0, "GET", "a"), Info(),
        Call(2, "FLUSHDB"), Info(), Call(2, "FLUSHALL", "ASYNC"), Call(0, "FLUSHALL"),
        Call(0, "MULTI"), Call(0, "FLUSHDB"), Call(0, "PING"), Call(0, "EXEC"),
        Call(2, "SELECT", "3"), Call(2, "FLUSHDB"),
        Call(0, "GET", "x"), Call(2, "SET", "x", "db3"),  # the table ignores the database
        Call(2, "SWAPDB", "0", "3"),
    ]),
    "reset_and_reply_off": ([3, 2, 3], [
        tracking(0, "on", "BCAST", "PREFIX", "p"), Call(0, "RESET"), Info(), Flags(),
        Call(1, "SET", "p1", "x"),
        tracking(2, "on"), Call(2, "GET", "k"),
        Call(2, "CLIENT", "REPLY", "OFF"), Call(1, "SET", "k", "1"),  # pushes pass REPLY OFF
        Call(2, "CLIENT", "REPLY", "ON"), Call(2, "GET", "k"),
        Call(2, "CLIENT", "REPLY", "SKIP"), Call(2, "SET", "k", "own"), Call(2, "PING"),
    ]),
    "errors": ([3, 2], [
        tracking(0, "on", "REDIRECT", "999999999"), tracking(0, "on", "REDIRECT", "abc"),
        tracking(0, "on", "REDIRECT", "0"), tracking(0, "on", "REDIRECT", "-1"),
        tracking(0, "on", "REDIRECT", Id(1), "REDIRECT", Id(1)),
        tracking(0, "on", "REDIRECT", Id(1), "REDIRECT", "abc"),
        tracking(0, "on", "PREFIX", "x"), tracking(0, "on", "PREFIX", "x", "OPTIN"),
        tracking(0, "on", "BCAST", "OPTIN"), tracking(0, "on", "BCAST", "OPTOUT"),
        tracking(0, "on", "OPTIN", "OPTOUT"), tracking(0, "on", "BCAST", "OPTIN", "OPTOUT"),
        tracking(0, "maybe"), tracking(0, "maybe", "bogus"), tracking(0, "off", "bogus"),
        tracking(0, "off", "PREFIX", "p", "BCAST"), tracking(0, "on", "PREFIX"),
        tracking(0, "on", "REDIRECT"), tracking(0, "ON", "bcast", "prefix"), tracking(0),
        Call(0, "CLIENT", "TRACKING"),
        tracking(0, "on", "BCAST", "PREFIX", "ab", "PREFIX", "a"),
        tracking(0, "on", "BCAST", "PREFIX", "a", "PREFIX", "a"),
        tracking(0, "on", "BCAST", "PREFIX", "", "PREFIX", "z"),
        Call(0, "CLIENT", "CACHING", "yes"), Call(0, "CLIENT", "CACHING", "maybe"),
        Call(0, "CLIENT", "CACHING"), Call(0, "CLIENT", "CACHING", "yes", "no"),
        Call(0, "CLIENT", "GETREDIR", "x"), Call(0, "CLIENT", "TRACKINGINFO", "x"),
        Call(0, "CLIENT", "GETREDIR"), info(0), Info(),
        tracking(0, "on", "BCAST", "PREFIX", "a", "PREFIX", "b"), info(0),
        tracking(0, "on", "BCAST", "PREFIX", "abc"), tracking(0, "on", "BCAST", "PREFIX", "b"),
        tracking(0, "on", "BCAST", "PREFIX", ""), tracking(0, "on", "BCAST", "PREFIX", "c"),
        tracking(0, "on", "BCAST"), info(0),  # bare BCAST adds the empty prefix unchecked
        tracking(0, "on"), tracking(0, "on", "OPTIN"), tracking(0, "off"),
        tracking(0, "on", "OPTIN"), tracking(0, "on", "OPTOUT"), tracking(0, "on", "BCAST"),
        Call(0, "CLIENT", "CACHING", "no"), Call(0, "CLIENT", "CACHING", "maybe"),
        tracking(0, "on", "OPTIN", "NOLOOP"), info(0), tracking(0, "on"), info(0),
        Call(0, "CLIENT", "CACHING", "yes"), Call(0, "CLIENT", "CACHING", "no"), Info(),
        Call(1, "CLIENT", "TRACKING", "on", "OPTOUT"), Call(1, "CLIENT", "CACHING", "YES"),
        Call(1, "CLIENT", "CACHING", "No"), info(1),
    ]),
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name, diff_goblin, reference_server):
    protocols, steps = SCENARIOS[name]
    run_scenario(diff_goblin, reference_server, steps, protocols, name)


def test_table_limit(diff_goblin, reference_server):
    """tracking-table-max-keys: before each command (and in the background tick) the table is
    trimmed by Redis's effort (100 random keys, 100 more each time it stays over), each evicted
    key invalidated. Which keys go is random, and the tick trims on its own clock, so what is
    compared is where it ends: the limit, every evicted key invalidated once, nothing else."""
    results = []
    for server in (diff_goblin, reference_server):
        control = server.raw()
        control.call("FLUSHALL")
        tracker = server.raw()
        tracker.call("HELLO", "3")
        tracker.call("CLIENT", "TRACKING", "on")
        control.call("CONFIG", "SET", "tracking-table-max-keys", "50")
        keys = [f"key:{i}" for i in range(450)]
        assert len(tracker.call("MGET", *keys).value) == 450
        first = int(parse_info(control.call("INFO", "stats").value)["tracking_total_keys"])
        invalidated = []
        for _ in range(10):
            tracker.send(encode_command("PING", "m"))
            while True:
                r = tracker.read_reply(timeout=READ_SECONDS)
                if r.raw == b"$1\r\nm\r\n":
                    break
                parts = r.py()
                assert parts[0] == b"invalidate", r
                invalidated += [k.decode() for k in parts[1]]
        last = int(parse_info(control.call("INFO", "stats").value)["tracking_total_keys"])
        control.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
        assert set(invalidated) <= set(keys) and len(set(invalidated)) == len(invalidated)
        results.append((first < 450, last, len(invalidated)))
        tracker.close()
        control.close()
    assert results[0] == results[1], f"goblin {results[0]}, reference {results[1]}"
    assert results[0] == (True, 50, 400)


@pytest.mark.goblin
def test_overlapping_prefixes_after_the_first_refuse_the_command(diff_goblin):
    conn = diff_goblin.raw()
    reply = conn.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "b", "PREFIX", "bc")
    assert reply.raw == (b"-ERR Prefix 'b' overlaps with another provided prefix 'bc'. "
                         b"Prefixes for a single client must not overlap.\r\n")
    assert not conn.has_pending_bytes(0.2)
    assert conn.call("CLIENT", "TRACKINGINFO").py() == [b"flags", [b"off"], b"redirect", -1, b"prefixes", []]
    conn.close()


# ---- Redis 7.2's own behaviour, on Goblin alone ----------------------------------------------------

def expect_steps(server, protocols, steps):
    """steps: (conn, command, its reply, what each connection received after it, None for one
    inside MULTI), every
    expectation written out by hand from Redis 7.2's tracking.c and networking.c."""
    conns = [server.raw() for _ in protocols]
    conns[0].call("FLUSHALL")
    for conn, protocol in zip(conns, protocols):
        if protocol == 3:
            conn.call("HELLO", "3")
    ids = [int(conn.call("CLIENT", "ID").value) for conn in conns]
    side = Side.__new__(Side)
    side.ids, side.conns = ids, conns
    try:
        for number, (index, command, reply, received) in enumerate(steps, 1):
            args = tuple(str(ids[a.index]) if isinstance(a, Id) else a for a in command)
            got = conns[index].call(*args).raw
            assert got == reply, f"step {number} {command}: {got!r}"
            for other, expected in enumerate(received):
                if expected is None:  # inside MULTI: a PING would be queued
                    continue
                assert side.drain(other) == expected, f"step {number} {command}: conn {other}"
    finally:
        for conn in conns:
            conn.close()


def push(*keys: str) -> bytes:
    return b">2\r\n$10\r\ninvalidate\r\n*%d\r\n" % len(keys) + b"".join(
        b"$%d\r\n%s\r\n" % (len(k), k.encode()) for k in keys)


OK = b"+OK\r\n"


@pytest.mark.redis72
def test_scripts_track_what_they_read(diff_goblin):
    """7.2 remembers the keys of the read-only commands a script runs, for the script's caller,
    and not the keys EVAL_RO, EVALSHA_RO or FCALL_RO declare (7.0 remembered the script's
    declared keys each time a command inside it read)."""
    library = ("#!lua name=trk\nredis.register_function{function_name='rd', callback=function(keys)"
               " return redis.call('get', 'inner') end, flags={'no-writes'}}")
    expect_steps(diff_goblin, [3, 2], [
        (0, ("CLIENT", "TRACKING", "on"), OK, [b"", b""]),
        (0, ("EVAL", "return redis.call('get', 'read')", "1", "declared"), b"_\r\n", [b"", b""]),
        (1, ("MSET", "read", "1", "declared", "1"), OK, [push("read"), b""]),
        (0, ("EVAL_RO", "return redis.call('get', 'read')", "1", "declared"), b"$1\r\n1\r\n",
         [b"", b""]),
        (1, ("MSET", "read", "2", "declared", "2"), OK, [push("read"), b""]),
        (0, ("FUNCTION", "LOAD", library), b"$3\r\ntrk\r\n", [b"", b""]),
        (0, ("FCALL_RO", "rd", "1", "declared"), b"_\r\n", [b"", b""]),
        (1, ("MSET", "inner", "1", "declared", "3"), OK, [push("inner"), b""]),
        (0, ("FUNCTION", "DELETE", "trk"), OK, [b"", b""]),
    ])


@pytest.mark.redis72
def test_a_push_to_the_running_client_follows_its_reply(diff_goblin):
    """A tracker redirecting to the client that changes the key: 7.2 holds the push back until
    that client's reply (pending_push_messages); 7.0 sent it before the reply."""
    expect_steps(diff_goblin, [2, 3], [
        (0, ("CLIENT", "TRACKING", "on", "REDIRECT", Id(1)), OK, [b"", b""]),
        (0, ("GET", "a"), b"$-1\r\n", [b"", b""]),
        (1, ("SET", "a", "1"), OK, [b"", push("a")]),
        (0, ("MGET", "a", "b"), b"*2\r\n$1\r\n1\r\n$-1\r\n", [b"", b""]),
        (1, ("MULTI",), OK, [b"", None]),
        (1, ("SET", "a", "2"), b"+QUEUED\r\n", [b"", None]),
        (1, ("SET", "b", "2"), b"+QUEUED\r\n", [b"", None]),
        (1, ("EXEC",), b"*2\r\n" + OK + OK, [b"", push("a") + push("b")]),
    ])


# ---- seeded sequences ----------------------------------------------------------------------------

KEYS = ["k1", "k2", "k3", "p:1", "p:2"]


def random_steps(rng: random.Random, length: int) -> list:
    """Conns 0 and 1 track in modes drawn at random and read; conn 2 (and they) write."""
    modes = [["on"], ["on", "NOLOOP"], ["on", "OPTIN"], ["on", "OPTOUT"], ["on", "BCAST", "PREFIX", "p:"],
             ["on", "BCAST", "NOLOOP"], ["on", "REDIRECT", Id(2)]]
    reads = [lambda k: ("GET", k), lambda k: ("MGET", k, rng.choice(KEYS)), lambda k: ("EXISTS", k),
             lambda k: ("STRLEN", k), lambda k: ("TTL", k)]
    writes = [lambda k: ("SET", k, str(rng.randrange(9))), lambda k: ("DEL", k), lambda k: ("INCR", k),
              lambda k: ("APPEND", k, "x"), lambda k: ("SET", k, "v", "PX", "100000"),
              lambda k: ("RENAME", k, rng.choice(KEYS)), lambda k: ("EXPIRE", k, "100"),
              lambda k: ("PERSIST", k), lambda k: ("GETDEL", k), lambda k: ("MSET", k, "1", rng.choice(KEYS), "2")]
    steps = [Call(2, "SUBSCRIBE", "__redis__:invalidate")] if rng.random() < 0.5 else []
    writers = [0, 1] + ([] if steps else [2])
    for _ in range(length):
        roll = rng.random()
        conn = rng.choice([0, 1])
        if roll < 0.06:
            steps.append(tracking(conn, *rng.choice(modes)) if rng.random() < 0.8 else tracking(conn, "off"))
        elif roll < 0.1:
            steps.append(Call(conn, "CLIENT", "CACHING", rng.choice(["yes", "no"])))
        elif roll < 0.5:
            steps.append(Call(conn, *rng.choice(reads)(rng.choice(KEYS))))
        elif roll < 0.53:
            steps.append(Call(rng.choice(writers), "FLUSHDB"))
        elif roll < 0.56:
            steps.append(info(conn))
        else:
            steps.append(Call(rng.choice(writers), *rng.choice(writes)(rng.choice(KEYS))))
    return steps


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_seeded_sequence(seed, diff_goblin, reference_server):
    rng = random.Random(seed)
    run_scenario(diff_goblin, reference_server, random_steps(rng, 150), [3, rng.choice([2, 3]), 2],
                 f"seeded sequence {seed}")
