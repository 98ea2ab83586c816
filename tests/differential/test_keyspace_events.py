"""Keyspace notifications side by side with redis-server: every command of the seeded random
streams (all families, tests/differential/generators.py) runs on both servers with
`notify-keyspace-events KEAnm`, and the events a subscriber of `__key*__:*` receives for it are
compared in order, channel and message, after its reply.

A step's events are collected by publishing a marker on a channel the subscriber also listens
to, right after the step: everything before the marker belongs to the step. A mismatch names the
step and both event lists; the differ shrinks it like any reply mismatch.

Environment: GOBLIN_EVENT_SEEDS=3,17 replaces the RESP2 seeds (GOBLIN_DIFF_RANDOM_SEEDS and
GOBLIN_DIFF_OPS as for the other streams).
"""

from __future__ import annotations

import os

import pytest

from support.differ import EXACT, Comparator, Op, ServerPair, Step, run_ops
from support.resp import encode_command

from .generators import make_stream
from .streams import run_stream, stream_seeds

MARKER = b"__goblin_test_marker__"
CLASSES = b"KEAnm"  # every class, keymiss and new included
LENGTH = int(os.environ.get("GOBLIN_DIFF_OPS", "1500"))
# Rows whose events cannot be compared in a stream: CLIENT KILL TYPE pubsub would drop the
# subscriber; RANDOMKEY expires the random keys it samples (each server its own); BITCOUNT and
# BITPOS with bad arguments look the key up in 7.0 (expiring it) but not in 7.2, so the two
# servers' expiries drift apart (their events are in the corpus below, with valid arguments).
LEFT_OUT = {"client|kill", "randomkey", "bitcount", "bitpos"}


class EventPair(ServerPair):
    """The session's pair, each run with notifications on and a subscriber per server."""

    def __init__(self, pair: ServerPair):
        super().__init__(pair.goblin_server, pair.reference_server, pair.timeout)
        self._optional_defaults = pair._optional_defaults

    def open(self, timeout=None):
        ctx = super().open(timeout)
        ctx.marker = 0
        ctx.subscribers = {}
        for conn, server in ((ctx.goblin, self.goblin_server), (ctx.reference, self.reference_server)):
            reply = conn.call("CONFIG", "SET", "notify-keyspace-events", CLASSES)
            assert reply.raw == b"+OK\r\n", f"{server.name}: CONFIG SET notify-keyspace-events: {reply!r}"
            # Active expiry runs on each server's own clock: only lazy expiry is comparable.
            reply = conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            assert reply.raw == b"+OK\r\n", f"{server.name}: DEBUG SET-ACTIVE-EXPIRE 0: {reply!r}"
            sub = server.raw(timeout=timeout or self.timeout)
            sub.send(encode_command(b"PSUBSCRIBE", b"__key*__:*"))
            sub.read_reply()
            sub.send(encode_command(b"SUBSCRIBE", MARKER))
            sub.read_reply()
            ctx.subscribers[id(conn)] = sub
        close = ctx.close

        def close_all():
            # Later runs of other tests start with notifications off, as they expect.
            for conn in (ctx.goblin, ctx.reference):
                try:
                    conn.call("CONFIG", "SET", "notify-keyspace-events", "")
                    conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
                except OSError:
                    pass
            close()
            for sub in ctx.subscribers.values():
                sub.close()
        ctx.close = close_all
        return ctx


def drain(ctx, conn, marker: int):
    """The events the server published since the last marker: [(channel, message), ...], or
    None inside MULTI (the marker is queued: the transaction's events come with its EXEC)."""
    conn.send(encode_command(b"PUBLISH", MARKER, str(marker).encode()))
    if conn.read_reply().raw == b"+QUEUED\r\n":
        return None
    sub = ctx.subscribers[id(conn)]
    events = []
    while True:
        parts = sub.read_reply().py()
        if parts[0] == b"message" and parts[1] == MARKER:
            if parts[2] == str(marker).encode():
                return events
            continue
        events.append((parts[2], parts[3]))  # pmessage pattern channel payload


class WithEvents(Comparator):
    """The step's own comparator for its reply, then its keyspace events compared exactly."""

    pipelinable = False

    def __init__(self, inner: Comparator):
        self.inner = inner
        self.name = f"events+{inner.name}"

    def execute(self, step, ctx):
        g, r = self.inner.execute(step, ctx)
        ctx.marker += 1
        ctx.events = (drain(ctx, ctx.goblin, ctx.marker), drain(ctx, ctx.reference, ctx.marker))
        return g, r

    def differs(self, step, g, r, ctx):
        why = self.inner.differs(step, g, r, ctx)
        if why:
            return why
        # An error the step's comparator accepts in place of the reference's reply is a documented
        # Redis 7.2 change of order (BITCOUNT checks its arguments before the key, ...): the two
        # servers did not run the same path, so their events are not comparable.
        if g.raw != r.raw and (g.raw.startswith(b"-") or r.raw.startswith(b"-")):
            return None
        ours, theirs = ctx.events
        if ours != theirs:
            return f"keyspace events differ:\n      goblin:    {ours}\n      reference: {theirs}"
        return None


def with_events(ops):
    out = []
    for op in ops:
        steps = [Step(step.args, WithEvents(step.compare)) for step in op.steps]
        for new, old in zip(steps, op.steps):
            new.readonly = old.readonly
        out.append(Op(steps, op.source))
    return out


@pytest.mark.parametrize("protocol,seed", stream_seeds("GOBLIN_EVENT_SEEDS", [11, 12, 13, 14], [311]),
                         ids=lambda x: str(x))
def test_events_of_random_streams(pair, supported_generators, shrink_budget, reported_mismatches, protocol,
                                  seed):
    rows = [gen for gen in supported_generators if gen.command not in LEFT_OUT]
    ops = with_events(make_stream(seed, LENGTH, rows, protocol=protocol))
    run_stream(EventPair(pair), ops, family="keyspace events", seed=seed, protocol=protocol,
               seeds_env="GOBLIN_EVENT_SEEDS", test_path="tests/differential/test_keyspace_events.py",
               selector=f"{protocol}-{seed}", shrink_budget=shrink_budget,
               reported_mismatches=reported_mismatches)


def S(*args):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), WithEvents(EXACT))


def corpus_op(name, *steps):
    return Op([S("FLUSHALL"), *steps], name)


CORPUS = [
    corpus_op("streams", S("XADD", "s", "1-0", "f", "v"), S("XADD", "s", "2-0", "f", "v"),
              S("XADD", "s", "MAXLEN", "1", "3-0", "f", "v"), S("XADD", "s", "MAXLEN", "5", "4-0", "f", "v"),
              S("XADD", "nokey", "NOMKSTREAM", "*", "f", "v"), S("XTRIM", "s", "MAXLEN", "1"),
              S("XTRIM", "s", "MAXLEN", "10"), S("XDEL", "s", "4-0", "9-9"), S("XDEL", "s", "9-9"),
              S("XSETID", "s", "10-0"), S("XLEN", "nokey"), S("XRANGE", "nokey", "-", "+")),
    corpus_op("stream groups", S("XADD", "s", "1-0", "f", "v"), S("XADD", "s", "2-0", "f", "v"),
              S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATE", "s", "g", "0"),
              S("XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"),
              S("XGROUP", "CREATECONSUMER", "s", "g", "alice"), S("XGROUP", "CREATECONSUMER", "s", "g", "alice"),
              S("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"),
              S("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"),
              S("XCLAIM", "s", "g", "carol", "0", "1-0", "JUSTID"),
              S("XAUTOCLAIM", "s", "g", "dave", "0", "0", "JUSTID"),
              S("XACK", "s", "g", "1-0", "2-0"), S("XGROUP", "SETID", "s", "g", "0"),
              S("XGROUP", "DELCONSUMER", "s", "g", "alice"), S("XGROUP", "DELCONSUMER", "s", "g", "nobody"),
              S("XGROUP", "DESTROY", "s", "g"), S("XGROUP", "DESTROY", "s", "g"),
              S("XPENDING", "nokey", "g"), S("XINFO", "STREAM", "nokey")),
    corpus_op("sort store", S("RPUSH", "l", "3", "1", "2"), S("SORT", "l", "STORE", "dst"),
              S("SORT", "nokey", "STORE", "dst"), S("SORT", "nokey", "STORE", "dst"), S("SORT", "nokey")),
    corpus_op("strings", S("SET", "k", "v", "EX", "1000"), S("GETEX", "k", "PERSIST"), S("GETEX", "k", "PX", "5000"),
              S("GETEX", "k", "PXAT", "1"), S("SET", "k", "v"), S("GETDEL", "k"), S("GETDEL", "k"),
              S("SETRANGE", "k", "3", "abc"), S("SETRANGE", "k", "0", ""), S("APPEND", "k", "x"),
              S("INCRBYFLOAT", "n", "1.5"), S("MSETNX", "a", "1", "b", "2"), S("MSETNX", "a", "1", "c", "2"),
              S("SETBIT", "b", "3", "1"), S("SETBIT", "b", "3", "1"), S("SETBIT", "b", "3", "0"),
              S("SETBIT", "b", "100", "0"), S("BITOP", "OR", "dst", "b"), S("BITOP", "OR", "dst", "nokey"),
              S("MGET", "a", "nokey"), S("SET", "k", "v", "GET"), S("SET", "nokey2", "v", "NX", "GET")),
    corpus_op("keys", S("SET", "a", "1"), S("SET", "b", "2", "PX", "100000"), S("RENAME", "a", "b"),
              S("RENAMENX", "b", "c"), S("COPY", "c", "d"), S("COPY", "c", "d", "REPLACE"), S("COPY", "nokey", "e"),
              S("MOVE", "d", "1"), S("SELECT", "1"), S("MOVE", "d", "0"), S("SELECT", "0"), S("EXPIRE", "c", "100"),
              S("PERSIST", "c"), S("PEXPIREAT", "c", "1"), S("EXISTS", "c", "d"), S("TYPE", "nokey"),
              S("TTL", "nokey"), S("TOUCH", "nokey", "d"), S("DEL", "d", "nokey"), S("UNLINK", "nokey")),
    corpus_op("bitfield and lcs", S("BITFIELD", "f", "SET", "u8", "0", "7"), S("BITFIELD", "f", "SET", "u8", "0", "7"),
              S("BITFIELD", "f", "INCRBY", "u8", "0", "1", "SET", "i4", "0", "0"), S("BITFIELD", "f", "GET", "u8", "0"),
              S("BITFIELD", "nokey", "GET", "u8", "0"), S("BITFIELD_RO", "nokey", "GET", "u8", "0"),
              S("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "300"), S("SET", "n", "12"),
              S("BITFIELD", "n", "SET", "u8", "0", "49"), S("BITFIELD", "n", "SET", "u8", "0", "50"),
              S("SET", "x", "v", "PXAT", "1"), S("BITFIELD", "x", "SET", "u1", "0", "1"),
              S("SET", "y", "v", "PXAT", "1"), S("BITFIELD_RO", "y", "GET", "u1", "0"),
              S("SET", "a", "ab"), S("LCS", "a", "nokey"), S("LCS", "nokey2", "a", "IDX"),
              S("SET", "z", "v", "PXAT", "1"), S("LCS", "z", "a", "LEN")),
    corpus_op("bit reads", S("BITCOUNT", "nokey"), S("BITPOS", "nokey", "1"), S("SET", "a", "x", "PXAT", "1"),
              S("BITCOUNT", "a", "0", "-1"), S("SET", "b", "x", "PXAT", "1"), S("BITPOS", "b", "0")),
    corpus_op("lazy expiry", S("SET", "a", "1", "PXAT", "1"), S("GET", "a"), S("SET", "b", "1", "PXAT", "1"),
              S("DEL", "b"), S("SET", "c", "1", "PXAT", "1"), S("LPUSH", "c", "x"),
              S("HSET", "h", "f", "v"), S("PEXPIREAT", "h", "1"), S("HGET", "h", "f")),
    corpus_op("transactions and scripts", S("MULTI"), S("SET", "a", "1"), S("LPUSH", "l", "x"),
              S("RPOP", "l"), S("EXEC"),
              S("EVAL", "redis.call('SET', KEYS[1], 'v') redis.call('INCR', KEYS[2]) return redis.call('DEL', KEYS[1])",
                "2", "a", "n"),
              S("EVAL", "return redis.call('GET', KEYS[1])", "1", "nokey")),
    corpus_op("geo", S("GEOADD", "g", "13.361389", "38.115556", "a", "15.087269", "37.502669", "b"),
              S("GEOADD", "g", "XX", "1", "1", "c"), S("GEOADD", "g", "NX", "CH", "1", "1", "a"),
              S("GEOADD", "g", "CH", "1", "1", "a"), S("GEOADD", "g", "200", "1", "a"),
              S("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d"),
              S("GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "d"),
              S("GEORADIUSBYMEMBER", "g", "b", "1", "m", "STORE", "d"),
              S("GEORADIUSBYMEMBER", "g", "b", "1", "m", "STORE", "d"),
              S("GEOSEARCHSTORE", "e", "g", "FROMMEMBER", "a", "BYBOX", "10", "10", "km", "STOREDIST"),
              S("GEOSEARCHSTORE", "e", "nokey", "FROMMEMBER", "a", "BYBOX", "10", "10", "km"),
              S("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "m"), S("GEOPOS", "nokey", "a"),
              S("GEODIST", "nokey", "a", "b"), S("GEOHASH", "nokey", "a"), S("GEORADIUS", "g", "15", "37", "200", "km"),
              S("ZREM", "g", "a", "b")),
    corpus_op("list moves", S("RPUSH", "a", "1", "2"), S("LMOVE", "a", "b", "LEFT", "RIGHT"),
              S("RPOPLPUSH", "a", "b"), S("LMOVE", "b", "b", "LEFT", "LEFT"), S("LMPOP", "2", "nokey", "b", "RIGHT", "COUNT", "5"),
              S("RPUSH", "a", "1"), S("MULTI"), S("BLPOP", "a", "0"), S("BLMOVE", "nokey", "x", "LEFT", "LEFT", "0"),
              S("EXEC")),
]


def test_events_of_the_corpus(pair):
    events_pair = EventPair(pair)
    mismatches = run_ops(events_pair, CORPUS, limit=50, independent=True)
    assert not mismatches, "\n".join(
        f"{m.step.args!r}: {m.why}" for m in mismatches)


def test_notify_keyspace_events_config(corpus):
    """CONFIG SET takes the class letters in any order and repeats; CONFIG GET prints them as
    Redis normalises them (A for every data class, which then hides n)."""
    values = ["", "K", "E", "KEA", "AKE", "KEAnm", "Kn", "nK", "g$lshzxetd", "g$lshzxetdKE", "Ex", "xe",
              "KEm", "d", "KEt", "KA", "AAgg", "KEq", "A ", "k", "$", "KE$lzz"]
    ops = []
    for value in values:
        ops.append(Op([Step((b"CONFIG", b"SET", b"notify-keyspace-events", value.encode())),
                       Step((b"CONFIG", b"GET", b"notify-keyspace-events"))], f"notify {value!r}"))
    ops.append(Op([Step((b"CONFIG", b"SET", b"notify-keyspace-events", b""))], "reset"))
    corpus("keyspace-events", "config", ops)
