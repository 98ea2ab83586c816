"""Stream consumer groups side by side with redis-server, reply by reply: XGROUP (every
subcommand, option and error order), XREADGROUP (new entries and history, COUNT, NOACK, several
streams, deleted entries), XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO STREAM/FULL/GROUPS/
CONSUMERS/HELP, in RESP2 and RESP3; blocking XREADGROUP over several connections; seeded random
multi-consumer sequences; and Redis 7.2's own behaviour on the server under test alone (redis72).

Ids are explicit everywhere, so replies compare byte for byte. The parts of a reply read off a
clock (XPENDING idle times, XINFO CONSUMERS idle, XINFO STREAM FULL delivery and seen times) are
compared within a tolerance by the GroupReply comparators of support/differ.py, which also drop
7.2's `inactive` / `active-time` fields (missing from the 7.0 reference) after checking they are
integers, and accept Goblin's own radix-tree figures. Claims by idle time use thresholds an hour
away from every delivery time (fresh deliveries, or ones moved two hours back by XCLAIM IDLE/TIME),
so no tolerance reaches a decision.

Redis 7.2 creates the consumer of an XREADGROUP, XCLAIM or XAUTOCLAIM even when nothing is read or
claimed; 7.0 creates it only when something is. The compared sequences never depend on that
(a consumer that may read or claim nothing is created first with XGROUP CREATECONSUMER, or its
existence is not observed), and test_redis72_* check 7.2's behaviour on the server under test:
eager creation, `inactive` and `active-time`, the errors a blocked XREADGROUP gets when its key
or group goes away (NOGROUP / WRONGTYPE, where 7.0 answers "UNBLOCKED the stream key no longer
exists"), a woken XREADGROUP that finds nothing blocking again, and a woken XREADGROUP serving
every stream of its call.
"""

from __future__ import annotations

import random

import pytest

from support.differ import (HELLO, STREAM_BLOCK_TIMEOUT, XINFO_CONSUMERS, XINFO_STREAM, XINFO_STREAM_FULL,
                            XPENDING_IDLE, Op, Step, record_pairs)
from support.resp import encode_command
from support.server import wait_for

from .streams import run_stream, stream_seeds
from .test_list_blocking import READ_SECONDS, Block, Call, Close, Id, Runner, TimesOut, blocked_ids, run_scenario

KEYS = ["s", "t", "u", "str", "lst", "nokey", "e"]
MAX_ID = "18446744073709551615-18446744073709551615"
WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"


def S(*args, compare=None):
    data = tuple(a if isinstance(a, bytes) else str(a).encode() for a in args)
    return Step(data) if compare is None else Step(data, compare)


def op(name, *steps):
    """An independent Op: the keys reset, `str` a string and `lst` a list for WRONGTYPE."""
    return Op([S("DEL", *KEYS), S("SET", "str", "x"), S("RPUSH", "lst", "a")] + list(steps), name)


def fill(key="s", n=5, start=1):
    return [S("XADD", key, f"{i}-0", "f", f"v{i}") for i in range(start, start + n)]


def pending(key, group, *args):
    return S("XPENDING", key, group, *args, compare=XPENDING_IDLE)


def consumers(key, group):
    return S("XINFO", "CONSUMERS", key, group, compare=XINFO_CONSUMERS)


def groups(key):
    return S("XINFO", "GROUPS", key)


def info(key):
    return S("XINFO", "STREAM", key, compare=XINFO_STREAM)


def full(key, *args):
    return S("XINFO", "STREAM", key, "FULL", *args, compare=XINFO_STREAM_FULL)


def read(group, consumer, *args):
    return S("XREADGROUP", "GROUP", group, consumer, *args, compare=STREAM_BLOCK_TIMEOUT)


def with_group(key="s", n=5, group="g", at="0", consumers_=()):
    """A stream of n entries with a group at `at` and the named consumers created."""
    return [*fill(key, n), S("XGROUP", "CREATE", key, group, at),
            *[S("XGROUP", "CREATECONSUMER", key, group, c) for c in consumers_]]


@pytest.fixture
def check(corpus):
    return lambda name, ops: corpus("stream groups", name, ops)


# ---- XGROUP -------------------------------------------------------------------------------------

def test_xgroup_create(check):
    ops = [
        op("create at $ 0 and ids", *fill(), S("XGROUP", "CREATE", "s", "g1", "$"), S("XGROUP", "CREATE", "s", "g2", "0"),
           S("XGROUP", "CREATE", "s", "g3", "3"), S("XGROUP", "CREATE", "s", "g4", "2-5"),
           S("XGROUP", "CREATE", "s", "g5", "99-0"), S("XGROUP", "CREATE", "s", "g6", MAX_ID),
           S("XGROUP", "CREATE", "s", "g7", "0-0"), S("XGROUP", "CREATE", "s", "", "1"), groups("s"), info("s")),
        op("create errors", *fill(), S("XGROUP", "CREATE", "s", "g", "$"), S("XGROUP", "CREATE", "s", "g", "0"),
           *[S("XGROUP", "CREATE", "s", "h", bad) for bad in
             ["-", "+", ">", "x", "1-x", "1-", "-1", "18446744073709551616", "1-18446744073709551616", "(1", "", " 1"]],
           S("XGROUP", "CREATE", "nokey", "g", "$"), S("XGROUP", "CREATE", "str", "g", "$"),
           S("XGROUP", "CREATE", "lst", "g", "$", "MKSTREAM"), S("XGROUP", "CREATE", "str", "g", "$", "BADOPT"),
           S("XGROUP", "CREATE", "nokey", "g", "$", "BADOPT"), S("XGROUP", "CREATE", "s", "g", "$", "BADOPT"),
           S("XGROUP", "CREATE", "s", "g"), S("XGROUP", "CREATE", "s"), S("XGROUP", "CREATE"), groups("s")),
        op("mkstream", S("XGROUP", "CREATE", "nokey", "g", "$", "MKSTREAM"), S("TYPE", "nokey"), info("nokey"),
           groups("nokey"), S("XGROUP", "CREATE", "nokey", "g", "$", "MKSTREAM"),
           S("XGROUP", "CREATE", "e", "g", "5-5", "mkstream"), groups("e"), S("DEL", "e"),
           S("XGROUP", "CREATE", "e", "g", "bad", "MKSTREAM"), S("EXISTS", "e"),
           S("XGROUP", "CREATE", "e", "g", "-", "MKSTREAM"), S("EXISTS", "e"),
           S("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM", "ENTRIESREAD", "1", "MKSTREAM"), S("EXISTS", "e"),
           S("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM", "MKSTREAM"), S("EXISTS", "e"), groups("e"),
           S("XGROUP", "CREATE", "e", "h", "$", "MKSTREAM", "ENTRIESREAD", "3"), groups("e"), full("e"),
           S("XGROUP", "CREATE", "u", "g", "0", "MKSTREAM", "ENTRIESREAD"), S("EXISTS", "u"),
           S("XGROUP", "CREATE", "u", "g", "0", "MKSTREAM", "ENTRIESREAD", "x"), S("EXISTS", "u")),
        op("entriesread", *fill(), *[S("XGROUP", "CREATE", "s", f"g{i}", "$", "ENTRIESREAD", n) for i, n in enumerate(
            ["0", "5", "3", "100", "-1", "-2", "x", "1.5", "9223372036854775807", "-9223372036854775808",
             "9223372036854775808", ""])],
           S("XGROUP", "CREATE", "s", "h1", "$", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
           S("XGROUP", "CREATE", "s", "h2", "2", "ENTRIESREAD", "2", "MKSTREAM"),
           S("XGROUP", "CREATE", "s", "h3", "0", "entriesread", "9", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
           S("XGROUP", "CREATE", "nokey", "g", "$", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
           S("XGROUP", "CREATE", "s", "h4", "$", "ENTRIESREAD", "-1"), S("XGROUP", "CREATE", "s", "h5", "$", "ENTRIESREAD"),
           groups("s"), full("s", "COUNT", "0")),
        op("dispatch after key checks", *fill(), S("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "MKSTREAM", "MKSTREAM"),
           S("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM", "ENTRIESREAD", "1", "MKSTREAM"),
           S("XGROUP", "CREATE", "str", "g", "$", "MKSTREAM", "ENTRIESREAD", "1", "MKSTREAM"),
           S("XGROUP", "CREATE", "s", "g", "$", "ENTRIESREAD", "1", "ENTRIESREAD", "2", "MKSTREAM"), groups("s")),
    ]
    check("xgroup_create", ops)


def test_xgroup_setid_destroy_and_consumers(check):
    ops = [
        op("setid", *with_group(), S("XGROUP", "SETID", "s", "g", "$"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "2", "ENTRIESREAD", "2"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "3-0"), groups("s"), S("XGROUP", "SETID", "s", "g", "-"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "+"), groups("s"), S("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0"),
           groups("s"), S("XGROUP", "SETID", "s", "g", "9-0", "ENTRIESREAD", "100"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "$", "entriesread", "-1"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "1-0", "ENTRIESREAD", "3"), read("g", "c", "STREAMS", "s", ">"), groups("s")),
        op("setid errors", *with_group(), S("XGROUP", "SETID", "s", "nog", "$"), S("XGROUP", "SETID", "nokey", "g", "$"),
           S("XGROUP", "SETID", "str", "g", "$"), S("XGROUP", "SETID", "s", "nog", "$", "MKSTREAM"),
           S("XGROUP", "SETID", "nokey", "g", "$", "MKSTREAM"), S("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD"),
           S("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "-2"), S("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "x"),
           S("XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
           S("XGROUP", "SETID", "nokey", "g", "$", "ENTRIESREAD", "1", "ENTRIESREAD", "2"),
           S("XGROUP", "SETID", "s", "g", "$", "FOO"), S("XGROUP", "SETID", "s", "g", "x"),
           S("XGROUP", "SETID", "s", "g", "(1"), S("XGROUP", "SETID", "s", "g", "18446744073709551616"),
           S("XGROUP", "SETID", "s", "nog", "x"), S("XGROUP", "SETID", "s", "g"), S("XGROUP", "setid", "s"), groups("s")),
        op("destroy", *with_group(), S("XGROUP", "CREATE", "s", "h", "$"), S("XGROUP", "DESTROY", "s", "g"),
           S("XGROUP", "DESTROY", "s", "g"), S("XGROUP", "DESTROY", "s", "nog"), S("XGROUP", "DESTROY", "nokey", "g"),
           S("XGROUP", "DESTROY", "str", "g"), S("XGROUP", "DESTROY", "s"), S("XGROUP", "DESTROY", "s", "h", "x"),
           groups("s"), S("XGROUP", "destroy", "s", "h"), groups("s"), info("s")),
        op("createconsumer", *with_group(), S("XGROUP", "CREATECONSUMER", "s", "g", "bob"),
           S("XGROUP", "CREATECONSUMER", "s", "g", "bob"), S("XGROUP", "CREATECONSUMER", "s", "g", "alice"),
           S("XGROUP", "CREATECONSUMER", "s", "g", ""), S("XGROUP", "CREATECONSUMER", "s", "g", "\xe2\x82\xac"),
           S("XGROUP", "CREATECONSUMER", "s", "nog", "bob"), S("XGROUP", "CREATECONSUMER", "nokey", "g", "bob"),
           S("XGROUP", "CREATECONSUMER", "str", "g", "bob"), S("XGROUP", "CREATECONSUMER", "s", "g"),
           S("XGROUP", "CREATECONSUMER", "s", "g", "a", "b"), consumers("s", "g"), groups("s")),
        op("delconsumer", *with_group(consumers_=["idle"]), read("g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
           read("g", "bob", "COUNT", "1", "STREAMS", "s", ">"), pending("s", "g"),
           S("XGROUP", "DELCONSUMER", "s", "g", "alice"), S("XGROUP", "DELCONSUMER", "s", "g", "alice"),
           S("XGROUP", "DELCONSUMER", "s", "g", "idle"), S("XGROUP", "DELCONSUMER", "s", "g", "nobody"),
           pending("s", "g"), pending("s", "g", "-", "+", "10"), S("XACK", "s", "g", "1-0", "2-0", "3-0"),
           S("XGROUP", "DELCONSUMER", "s", "nog", "bob"), S("XGROUP", "DELCONSUMER", "nokey", "g", "bob"),
           S("XGROUP", "DELCONSUMER", "str", "g", "bob"), S("XGROUP", "DELCONSUMER", "s", "g"),
           consumers("s", "g"), groups("s"), S("XGROUP", "DELCONSUMER", "s", "g", "bob"), groups("s")),
        op("containers help and arity", S("XGROUP"), S("XGROUP", "HELP"), S("XGROUP", "help"), S("XGROUP", "HELP", "x"),
           S("XGROUP", "FOO"), S("XGROUP", "foo", "s", "g", "$"), S("XGROUP", "CREATECONSUMER", "s"),
           S("XGROUP", "DELCONSUMER", "s", "g", "c", "d"), S("XINFO"), S("XINFO", "HELP"), S("XINFO", "help"),
           S("XINFO", "HELP", "x"), S("XINFO", "FOO"), S("XINFO", "foo", "s")),
    ]
    check("xgroup_more", ops)


# ---- XREADGROUP -----------------------------------------------------------------------------------

def test_xreadgroup_reads(check):
    ops = [
        op("new entries then history", *with_group(n=6), read("g", "alice", "COUNT", "2", "STREAMS", "s", ">"),
           read("g", "bob", "COUNT", "1", "STREAMS", "s", ">"), read("g", "alice", "STREAMS", "s", "0"),
           read("g", "alice", "STREAMS", "s", "1"), read("g", "alice", "STREAMS", "s", "1-0"),
           read("g", "alice", "COUNT", "1", "STREAMS", "s", "0-0"), read("g", "bob", "STREAMS", "s", "0"),
           read("g", "bob", "STREAMS", "s", "3-0"), read("g", "bob", "STREAMS", "s", "9-9"),
           read("g", "carol", "STREAMS", "s", "0"), pending("s", "g", "-", "+", "10"),
           read("g", "carol", "COUNT", "0", "STREAMS", "s", ">"), read("g", "carol", "STREAMS", "s", ">"),
           read("g", "alice", "COUNT", "-5", "STREAMS", "s", "0"), pending("s", "g"), groups("s"),
           consumers("s", "g"), full("s")),
        # The largest id is how Redis stores ">": given explicitly, it reads new entries too.
        op("an explicit largest id reads new entries", *with_group(n=3, consumers_=["a"]),
           read("g", "a", "COUNT", "1", "STREAMS", "s", MAX_ID), read("g", "a", "STREAMS", "s", "18446744073709551615"),
           pending("s", "g"), groups("s")),
        op("history counts deliveries", *with_group(n=3), read("g", "a", "STREAMS", "s", ">"),
           read("g", "a", "STREAMS", "s", "0"), read("g", "a", "COUNT", "1", "STREAMS", "s", "0"),
           read("g", "a", "STREAMS", "s", "1-0"), pending("s", "g", "-", "+", "10"), S("XACK", "s", "g", "2-0"),
           read("g", "a", "STREAMS", "s", "0"), pending("s", "g", "-", "+", "10")),
        op("deleted entries in history", *with_group(n=5), read("g", "a", "STREAMS", "s", ">"),
           S("XDEL", "s", "2-0", "4-0"), read("g", "a", "STREAMS", "s", "0"), read("g", "a", "COUNT", "2", "STREAMS", "s", "0"),
           full("s"), S("XTRIM", "s", "MAXLEN", "0"), read("g", "a", "STREAMS", "s", "0"), pending("s", "g"),
           pending("s", "g", "-", "+", "10"), S("XADD", "s", "6-0", "f", "v"), read("g", "a", "STREAMS", "s", ">"),
           read("g", "a", "STREAMS", "s", "3"), S("XACK", "s", "g", "1-0", "2-0"), read("g", "a", "STREAMS", "s", "0")),
        op("noack", *with_group(n=4), read("g", "a", "NOACK", "COUNT", "2", "STREAMS", "s", ">"), pending("s", "g"),
           groups("s"), read("g", "a", "STREAMS", "s", "0"), read("g", "b", "COUNT", "1", "STREAMS", "s", ">"),
           read("g", "a", "noack", "STREAMS", "s", ">"), read("g", "a", "STREAMS", "s", "0"), pending("s", "g"),
           groups("s"), consumers("s", "g")),
        op("several streams", *with_group("s", 4), *with_group("t", 3), S("XGROUP", "CREATE", "u", "g", "$", "MKSTREAM"),
           S("XGROUP", "CREATECONSUMER", "u", "g", "a"),
           read("g", "a", "COUNT", "2", "STREAMS", "s", "t", "u", ">", ">", ">"),
           read("g", "a", "STREAMS", "s", "t", "u", "0", "0", "0"), read("g", "a", "STREAMS", "t", "s", "1-0", ">"),
           read("g", "a", "STREAMS", "u", "t", ">", "0"), read("g", "a", "STREAMS", "u", "s", "0", "2"),
           read("g", "a", "COUNT", "1", "STREAMS", "s", "t", "0", "0"), groups("s"), groups("t"), groups("u")),
        op("the same stream twice", *with_group(n=4), read("g", "a", "COUNT", "1", "STREAMS", "s", "s", ">", ">"),
           read("g", "a", "STREAMS", "s", "s", ">", "0"), read("g", "a", "STREAMS", "s", "s", "0", "0"),
           read("g", "a", "COUNT", "1", "STREAMS", "s", "s", "0", ">"), pending("s", "g", "-", "+", "10"), groups("s")),
        op("setid backwards redelivers", *with_group(n=4), read("g", "a", "STREAMS", "s", ">"),
           S("XGROUP", "SETID", "s", "g", "1-0"), read("g", "b", "COUNT", "2", "STREAMS", "s", ">"),
           pending("s", "g", "-", "+", "10"), read("g", "a", "STREAMS", "s", "0"), read("g", "b", "STREAMS", "s", "0"),
           groups("s"), pending("s", "g")),
        op("a group ahead of the stream", *with_group(n=3, at="10-0", consumers_=["a"]),
           read("g", "a", "STREAMS", "s", ">"), S("XADD", "s", "11-0", "f", "v"), read("g", "a", "STREAMS", "s", ">"),
           groups("s"), S("XGROUP", "CREATE", "s", "h", "2-0"), S("XDEL", "s", "3-0", "11-0"),
           S("XGROUP", "CREATECONSUMER", "s", "h", "b"), read("g", "a", "STREAMS", "s", ">"),
           read("h", "b", "STREAMS", "s", ">"), groups("s")),
        op("empty streams", S("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM"), S("XGROUP", "CREATECONSUMER", "e", "g", "a"),
           read("g", "a", "STREAMS", "e", ">"), read("g", "a", "STREAMS", "e", "0"), read("g", "b", "STREAMS", "e", "0"),
           S("XADD", "e", "1-0", "f", "v"), S("XDEL", "e", "1-0"), read("g", "a", "STREAMS", "e", ">"), groups("e"),
           consumers("e", "g")),
        op("option names in any case", *with_group(n=4, consumers_=["a"]),
           S("xreadgroup", "Group", "g", "a", "count", "1", "block", "0", "Streams", "s", ">"),
           S("XREADGROUP", "GROUP", "g", "a", "NoAck", "STREAMS", "s", ">"), read("g", "a", "STREAMS", "s", "0"),
           S("xautoclaim", "s", "g", "a", "0", "0", "count", "1", "justid"), S("xpending", "s", "g", "idle", "0", "-", "+", "9", compare=XPENDING_IDLE),
           S("xinfo", "groups", "s"), S("xinfo", "consumers", "s", "g", compare=XINFO_CONSUMERS),
           S("xinfo", "stream", "s", compare=XINFO_STREAM), S("xgroup", "createconsumer", "s", "g", "b"),
           S("XGROUP", "CreateConsumer", "s", "g", "c"), S("xack", "s", "g", "1-0"), S("XGROUP", "DelConsumer", "s", "g", "c")),
        op("fields and values", S("XADD", "s", "1-0", "f", "", "", "v", "\x00", "a\r\nb"),
           S("XADD", "s", "2-0", "f1", "1", "f2", "2", "f3", "3"), S("XGROUP", "CREATE", "s", "g", "0"),
           read("g", "\x00\xff", "STREAMS", "s", ">"), read("g", "\x00\xff", "STREAMS", "s", "0"),
           read("g", "", "STREAMS", "s", "0"), pending("s", "g")),
        op("block with data or history answers at once", *with_group(n=2, consumers_=["a"]),
           read("g", "a", "BLOCK", "0", "STREAMS", "s", ">"), read("g", "a", "BLOCK", "0", "STREAMS", "s", "0"),
           read("g", "a", "BLOCK", "100", "COUNT", "1", "STREAMS", "s", "0"), read("g", "a", "BLOCK", "10", "STREAMS", "s", ">"),
           S("MULTI"), read("g", "a", "BLOCK", "0", "STREAMS", "s", ">"), S("XADD", "s", "3-0", "f", "v"),
           read("g", "a", "BLOCK", "0", "STREAMS", "s", ">"), S("EXEC"), pending("s", "g")),
        op("a trimmed stream", *with_group(n=6), read("g", "a", "COUNT", "2", "STREAMS", "s", ">"),
           S("XTRIM", "s", "MAXLEN", "2"), read("g", "a", "STREAMS", "s", ">"), read("g", "a", "STREAMS", "s", "0"),
           groups("s"), full("s")),
    ]
    check("xreadgroup_reads", ops)


def test_xreadgroup_errors(check):
    ops = [
        op("argument errors", *with_group(n=2, consumers_=["c"]),
           # `+` has its own refusal since Redis 7.4 (integration/test_stream_references.py).
           read("g", "c", "STREAMS", "s", "$"), read("g", "c", "STREAMS", "s", "-"),
           read("g", "c", "STREAMS", "s", "x"), read("g", "c", "STREAMS", "s", "1-x"), read("g", "c", "STREAMS", "s", "(0"),
           read("g", "c", "STREAMS", "s", "18446744073709551616"), read("g", "c", "STREAMS", "s", "1-18446744073709551616"),
           read("g", "c", "STREAMS", "s", ""), read("g", "c", "STREAMS", "s", "t", ">"),
           read("g", "c", "STREAMS", "s", "t", "u", ">", ">"), read("g", "c", "STREAMS", "s", ">", "COUNT", "1"),
           read("g", "c", "COUNT", "x", "STREAMS", "s", ">"), read("g", "c", "COUNT", "1.5", "STREAMS", "s", ">"),
           read("g", "c", "BLOCK", "x", "STREAMS", "s", ">"), read("g", "c", "BLOCK", "-1", "STREAMS", "s", ">"),
           read("g", "c", "BLOCK", "1.5", "STREAMS", "s", ">"), read("g", "c", "FOO", "STREAMS", "s", ">"),
           read("g", "c", "COUNT", "1", "NOACK"), read("g", "c", "STREAMS"), read("g", "c", "COUNT"),
           S("XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"), S("XREADGROUP", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"),
           S("XREADGROUP", "NOACK", "COUNT", "1", "STREAMS", "s", ">"), S("XREADGROUP", "STREAMS", "s", ">"),
           S("XREADGROUP", "GROUP", "g", "c"), S("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s"),
           S("XREADGROUP", "group", "g", "c", "streams", "s", "0"), S("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "GROUP"),
           S("XREADGROUP", "GROUP", "nog", "c", "GROUP", "g", "c", "STREAMS", "s", "0"),
           S("XREADGROUP", "GROUP", "g", "c", "GROUP", "nog", "c", "STREAMS", "s", "0"),
           S("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "COUNT", "0", "STREAMS", "s", "0"),
           S("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0", "STREAMS", "s", "0")),
        op("key errors in order", *with_group(n=2, consumers_=["c"]), read("g", "c", "STREAMS", "nokey", ">"),
           read("nog", "c", "STREAMS", "s", ">"), read("g", "c", "STREAMS", "str", ">"), read("g", "c", "STREAMS", "lst", "0"),
           read("g", "c", "STREAMS", "s", "str", ">", ">"), read("g", "c", "STREAMS", "s", "nokey", "0", ">"),
           read("g", "c", "STREAMS", "nokey", "str", ">", ">"), read("g", "c", "STREAMS", "str", "nokey", ">", ">"),
           read("g", "c", "STREAMS", "str", "s", "$", ">"), read("g", "c", "STREAMS", "nokey", "$"),
           read("g", "c", "STREAMS", "s", "s", ">", "$"), read("g", "c", "STREAMS", "s", "str", "$", ">"),
           read("nog", "c", "STREAMS", "s", "x"), read("g", "c", "STREAMS", "s", "nokey", "x", ">"),
           pending("s", "g")),
        op("xread refuses group options", *with_group(n=2), S("XREAD", "GROUP", "g", "c", "STREAMS", "s", "0"),
           S("XREAD", "NOACK", "STREAMS", "s", "0"), S("XREAD", "STREAMS", "s", ">"), S("XREAD", "STREAMS", "s", "t", "0"),
           S("XREAD", "COUNT", "1", "STREAMS", "s", "t", "u", "0", "0"), S("XREAD", "NOACK", "STREAMS", "s")),
        op("command getkeys", S("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">", ">"),
           S("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", "0"),
           S("COMMAND", "GETKEYS", "XACK", "s", "g", "1-0"), S("COMMAND", "GETKEYS", "XCLAIM", "s", "g", "c", "0", "1-0"),
           S("COMMAND", "GETKEYS", "XAUTOCLAIM", "s", "g", "c", "0", "0"),
           S("COMMAND", "GETKEYS", "XPENDING", "s", "g"), S("COMMAND", "GETKEYS", "XGROUP", "CREATE", "s", "g", "$"),
           S("COMMAND", "GETKEYS", "XINFO", "STREAM", "s")),
    ]
    check("xreadgroup_errors", ops)


# ---- XACK and XPENDING ----------------------------------------------------------------------------

def test_xack(check):
    ops = [
        op("xack", *with_group(n=5), read("g", "a", "COUNT", "3", "STREAMS", "s", ">"),
           read("g", "b", "STREAMS", "s", ">"), S("XACK", "s", "g", "1-0"), S("XACK", "s", "g", "1-0"),
           S("XACK", "s", "g", "2-0", "9-9", "2-0", "4"), S("XACK", "s", "g", "3-0", "x"), S("XACK", "s", "g", "x", "3-0"),
           S("XACK", "s", "g", "-"), S("XACK", "s", "g", "+"), S("XACK", "s", "g", "(3"), S("XACK", "s", "g", "18446744073709551616"),
           pending("s", "g"), S("XACK", "s", "g", "3-0", "5-0", "3"), pending("s", "g"), consumers("s", "g")),
        op("xack of missing things", *with_group(n=2), S("XACK", "nokey", "g", "bad"), S("XACK", "nokey", "g", "1-0"),
           S("XACK", "s", "nog", "bad"), S("XACK", "s", "nog", "1-0"), S("XACK", "str", "g", "1-0"),
           S("XACK", "str", "g", "bad"), S("XACK", "s", "g"), S("XACK", "s"), S("XACK", "s", "g", "1-0")),
        op("xack of a deleted entry", *with_group(n=3), read("g", "a", "STREAMS", "s", ">"), S("XDEL", "s", "2-0"),
           S("XACK", "s", "g", "2-0"), read("g", "a", "STREAMS", "s", "0"), S("XTRIM", "s", "MAXLEN", "0"),
           S("XACK", "s", "g", "1-0", "3-0"), pending("s", "g")),
    ]
    check("xack", ops)


def test_xpending(check):
    ops = [
        op("summary", *with_group(n=6), pending("s", "g"), read("g", "bob", "COUNT", "2", "STREAMS", "s", ">"),
           read("g", "Alice", "COUNT", "1", "STREAMS", "s", ">"), read("g", "", "COUNT", "1", "STREAMS", "s", ">"),
           read("g", "\xff", "COUNT", "1", "STREAMS", "s", ">"), read("g", "alice", "COUNT", "1", "STREAMS", "s", ">"),
           pending("s", "g"), S("XACK", "s", "g", "1-0", "2-0", "6-0"), pending("s", "g"),
           S("XACK", "s", "g", "3-0", "4-0", "5-0"), pending("s", "g")),
        op("extended", *with_group(n=8), read("g", "a", "COUNT", "3", "STREAMS", "s", ">"),
           read("g", "b", "STREAMS", "s", ">"), pending("s", "g", "-", "+", "10"), pending("s", "g", "-", "+", "2"),
           pending("s", "g", "3", "5", "10"), pending("s", "g", "(3", "(5", "10"), pending("s", "g", "(3-0", "+", "1"),
           pending("s", "g", "-", "(4", "10"), pending("s", "g", "+", "-", "10"), pending("s", "g", "5", "5", "10"),
           pending("s", "g", "-", "+", "10", "a"), pending("s", "g", "-", "+", "10", "b"),
           pending("s", "g", "-", "+", "10", "nobody"), pending("s", "g", "4", "+", "1", "b"),
           pending("s", "g", "-", "+", "0"), pending("s", "g", "-", "+", "-1"), pending("s", "g", "-", "+", "-9223372036854775808"),
           pending("s", "g", "-", "+", "9223372036854775807"), pending("s", "g", "0", "18446744073709551615", "10"),
           pending("s", "g", "(0", "+", "10"), pending("s", "g", "-", "(1-1", "10"),
           pending("s", "g", "-", "+", "10", "a", "extra", "x"), pending("s", "g", "-", "+", "10", "a", "extra")),
        op("idle filter", *with_group(n=4), read("g", "a", "STREAMS", "s", ">"),
           S("XCLAIM", "s", "g", "b", "0", "2-0", "IDLE", "7200000", "JUSTID"), S("XCLAIM", "s", "g", "b", "0", "4-0", "TIME", "1", "JUSTID"),
           pending("s", "g", "IDLE", "3600000", "-", "+", "10"), pending("s", "g", "idle", "3600000", "-", "+", "10", "b"),
           pending("s", "g", "IDLE", "3600000", "-", "+", "10", "a"), pending("s", "g", "IDLE", "0", "-", "+", "10"),
           pending("s", "g", "IDLE", "-5", "-", "+", "10"), pending("s", "g", "IDLE", "3600000", "-", "+", "1"),
           pending("s", "g", "IDLE", "9223372036854775807", "-", "+", "10"),
           pending("s", "g", "IDLE", "-9223372036854775808", "-", "+", "10"),
           pending("s", "g", "IDLE", "3600000", "3", "+", "10"), pending("s", "g", "IDLE", "3600000", "-", "+", "10", "b", "x"),
           pending("s", "g", "IDLE", "3600000", "-", "+", "10", "b", "x", "y"),
           pending("s", "g", "-", "+", "10")),
        op("errors and their order", *with_group(n=2), read("g", "a", "STREAMS", "s", ">"),
           pending("s", "g", "-"), pending("s", "g", "-", "+"), pending("s", "g", "-", "+", "x"),
           pending("s", "g", "x", "+", "10"), pending("s", "g", "x", "+", "y"), pending("s", "g", "-", "x", "10"),
           pending("s", "g", "(", "+", "10"), pending("s", "g", "-", "(", "10"), pending("s", "g", "((1", "+", "10"),
           pending("s", "g", f"({MAX_ID}", "+", "10"), pending("s", "g", "-", "(0-0", "10"),
           pending("s", "g", "(-", "+", "10"), pending("s", "g", "-", "(+", "10"),
           pending("s", "g", "IDLE", "x", "-", "+"), pending("s", "g", "IDLE", "10", "-", "+"),
           pending("s", "g", "IDLE", "10", "-", "+", "x"), pending("s", "g", "IDLE", "10", "-", "+", "10", "a", "b", "c"),
           pending("s", "g", "IDLE", "1.5", "-", "+", "10"), pending("s", "g", "-", "+", "1.5"),
           pending("nokey", "g", "-", "+", "x"), pending("nokey", "g", "x", "+", "10"), pending("nokey", "g", "-", "+", "10"),
           pending("nokey", "g"), pending("s", "nog"), pending("s", "nog", "-", "+", "10"), pending("str", "g"),
           pending("str", "g", "-", "+", "10"), pending("str", "g", "-", "+", "x"), pending("lst", "g"),
           pending("s", "g", "-", "+", "10", "a", "b", "c", "d"), S("XPENDING", "s"), S("XPENDING")),
        op("an empty pel", *with_group(n=2), pending("s", "g"), pending("s", "g", "-", "+", "10"),
           S("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM"), pending("e", "g"), pending("e", "g", "IDLE", "1", "-", "+", "1")),
    ]
    check("xpending", ops)


# ---- XCLAIM and XAUTOCLAIM -------------------------------------------------------------------------

def claim_setup(n=6):
    """alice holds 1..3 (fresh), bob holds 4..n; 2-0 and 5-0 were delivered two hours ago."""
    return [*with_group(n=n, consumers_=["alice", "bob", "carol"]),
            read("g", "alice", "COUNT", "3", "STREAMS", "s", ">"), read("g", "bob", "STREAMS", "s", ">"),
            S("XCLAIM", "s", "g", "alice", "0", "2-0", "IDLE", "7200000", "JUSTID"),
            S("XCLAIM", "s", "g", "bob", "0", "5-0", "IDLE", "7200000", "JUSTID")]


def test_xclaim(check):
    ops = [
        op("claims by idle time", *claim_setup(), S("XCLAIM", "s", "g", "carol", "3600000", "1-0", "2-0", "5-0", "6-0", "9-0"),
           pending("s", "g", "-", "+", "10"), S("XCLAIM", "s", "g", "carol", "3600000", "2-0"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "JUSTID"), S("XCLAIM", "s", "g", "carol", "-5", "3-0"),
           S("XCLAIM", "s", "g", "alice", "9223372036854775807", "4-0"), pending("s", "g", "-", "+", "10"),
           pending("s", "g"), consumers("s", "g"), full("s")),
        op("options", *claim_setup(), S("XCLAIM", "s", "g", "carol", "0", "1-0", "RETRYCOUNT", "7"),
           S("XCLAIM", "s", "g", "carol", "0", "2-0", "RETRYCOUNT", "5", "JUSTID"),
           S("XCLAIM", "s", "g", "carol", "0", "3-0", "RETRYCOUNT", "-1"),
           S("XCLAIM", "s", "g", "carol", "0", "4-0", "JUSTID", "RETRYCOUNT", "-9223372036854775808"),
           S("XCLAIM", "s", "g", "carol", "0", "5-0", "TIME", "12345"), S("XCLAIM", "s", "g", "carol", "0", "6-0", "IDLE", "-100"),
           pending("s", "g", "-", "+", "10"), full("s"),
           S("XCLAIM", "s", "g", "bob", "0", "1-0", "TIME", "99999999999999"),
           S("XCLAIM", "s", "g", "bob", "0", "2-0", "TIME", "-1", "JUSTID"),
           S("XCLAIM", "s", "g", "bob", "0", "3-0", "IDLE", "9223372036854775807", "JUSTID"),
           S("XCLAIM", "s", "g", "bob", "0", "4-0", "IDLE", "-9223372036854775808", "JUSTID"),
           S("XCLAIM", "s", "g", "bob", "0", "5-0", "TIME", "0", "JUSTID"),
           S("XCLAIM", "s", "g", "bob", "0", "6-0", "IDLE", "1000", "TIME", "77", "JUSTID"),
           S("XCLAIM", "s", "g", "bob", "0", "5-0", "TIME", "77", "IDLE", "7200000", "JUSTID"),
           pending("s", "g", "-", "+", "10"), full("s"),
           S("XCLAIM", "s", "g", "bob", "0", "1-0", "2-0", "justid", "force", "idle", "5", "retrycount", "3", "lastid", "1-0"),
           S("XCLAIM", "s", "g", "bob", "0", "3-0", "JUSTID", "JUSTID", "RETRYCOUNT", "1", "RETRYCOUNT", "9"),
           S("XCLAIM", "s", "g", "bob", "0", "3-0", "3-0", "3-0"), pending("s", "g", "-", "+", "10")),
        op("large retry counts", *claim_setup(), S("XCLAIM", "s", "g", "carol", "0", "1-0", "RETRYCOUNT", "2147483648"),
           S("XCLAIM", "s", "g", "carol", "0", "2-0", "RETRYCOUNT", "4294967295"),
           S("XCLAIM", "s", "g", "carol", "0", "3-0", "RETRYCOUNT", "4294967296", "JUSTID"),
           S("XCLAIM", "s", "g", "carol", "0", "4-0", "RETRYCOUNT", "9223372036854775807", "JUSTID"),
           pending("s", "g", "-", "+", "10"), read("g", "carol", "STREAMS", "s", "0"), pending("s", "g", "-", "+", "10")),
        op("force and lastid", *claim_setup(n=4), S("XACK", "s", "g", "1-0"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "FORCE"),
           S("XCLAIM", "s", "g", "carol", "3600000", "1-0", "FORCE"), S("XCLAIM", "s", "g", "carol", "0", "9-0", "FORCE"),
           S("XADD", "s", "7-0", "f", "v"), S("XCLAIM", "s", "g", "carol", "0", "7-0", "FORCE", "JUSTID"),
           pending("s", "g", "-", "+", "10"), groups("s"),
           S("XCLAIM", "s", "g", "carol", "0", "7-0", "LASTID", "3-0"), groups("s"),
           S("XCLAIM", "s", "g", "carol", "0", "7-0", "LASTID", "100-0"), groups("s"),
           S("XCLAIM", "s", "g", "carol", "0", "9-9", "LASTID", "200"), groups("s"),
           S("XCLAIM", "s", "g", "carol", "0", "9-9", "LASTID", "150-0"), groups("s"), read("g", "carol", "STREAMS", "s", ">"),
           S("XADD", "s", "300-0", "f", "v"), read("g", "carol", "STREAMS", "s", ">"), groups("s")),
        op("deleted entries are dropped", *claim_setup(), S("XDEL", "s", "1-0", "4-0", "5-0"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "2-0", "4-0"), pending("s", "g", "-", "+", "10"),
           S("XCLAIM", "s", "g", "carol", "3600000", "5-0", "FORCE"), S("XCLAIM", "s", "g", "carol", "0", "4-0", "FORCE"),
           pending("s", "g"), consumers("s", "g"), S("XTRIM", "s", "MAXLEN", "1"),
           S("XCLAIM", "s", "g", "alice", "0", "2-0", "3-0", "6-0", "JUSTID"), pending("s", "g", "-", "+", "10")),
        op("parse order", *claim_setup(n=3), S("XCLAIM", "nokey", "g", "c", "x", "bad"), S("XCLAIM", "s", "nog", "c", "x", "1-0"),
           S("XCLAIM", "str", "g", "c", "x", "1-0"), S("XCLAIM", "lst", "g", "c", "0", "1-0"),
           S("XCLAIM", "s", "g", "c", "x", "1-0"), S("XCLAIM", "s", "g", "c", "1.5", "1-0"),
           S("XCLAIM", "s", "g", "carol", "0", "bad"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "bad"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "FORCE", "2-0"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "IDLE"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "IDLE", "x"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "TIME", "x"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "RETRYCOUNT", "x"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "LASTID", "x"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "LASTID", "-"), S("XCLAIM", "s", "g", "carol", "0", "1-0", "LASTID"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "IDLE", "x", "TIME", "y"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "TIME", "y", "IDLE", "x"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "RETRYCOUNT", "1.5"), S("XCLAIM", "s", "g", "carol", "0", "-"),
           S("XCLAIM", "s", "g", "carol", "0", "+"), S("XCLAIM", "s", "g", "carol", "0", "18446744073709551616"),
           S("XCLAIM", "s", "g", "carol", "0", "1-0", "(2"), S("XCLAIM", "s", "g", "carol", "0", "2"),
           S("XCLAIM", "s", "g", "carol", "0"), S("XCLAIM", "s", "g", "carol"), pending("s", "g", "-", "+", "10")),
        op("claiming one's own entries", *claim_setup(n=3), S("XCLAIM", "s", "g", "alice", "0", "1-0", "2-0"),
           S("XCLAIM", "s", "g", "alice", "0", "1-0", "JUSTID"), pending("s", "g", "-", "+", "10"), consumers("s", "g")),
    ]
    check("xclaim", ops)


def test_xautoclaim(check):
    many = [*with_group(n=30, consumers_=["alice", "bob"]), read("g", "alice", "STREAMS", "s", ">"),
            S("XCLAIM", "s", "g", "alice", "0", "14-0", "22-0", "30-0", "IDLE", "7200000", "JUSTID")]
    ops = [
        op("cursor", *claim_setup(), S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "2"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "3-0", "COUNT", "2", "JUSTID"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "5-0", "COUNT", "2"), S("XAUTOCLAIM", "s", "g", "carol", "0", "0-0"),
           pending("s", "g", "-", "+", "10"), S("XAUTOCLAIM", "s", "g", "bob", "0", "-", "COUNT", "1"),
           S("XAUTOCLAIM", "s", "g", "bob", "0", "(1-0", "COUNT", "1"), S("XAUTOCLAIM", "s", "g", "bob", "0", "(1", "COUNT", "1"),
           S("XAUTOCLAIM", "s", "g", "bob", "0", "+"), S("XAUTOCLAIM", "s", "g", "bob", "0", "(6-0"),
           S("XAUTOCLAIM", "s", "g", "bob", "0", "7"), pending("s", "g", "-", "+", "10"), consumers("s", "g")),
        op("idle filter", *claim_setup(), S("XAUTOCLAIM", "s", "g", "carol", "3600000", "0"), pending("s", "g", "-", "+", "10"),
           S("XAUTOCLAIM", "s", "g", "carol", "3600000", "0"), S("XAUTOCLAIM", "s", "g", "alice", "-1", "0", "COUNT", "1"),
           S("XAUTOCLAIM", "s", "g", "alice", "9223372036854775807", "0"), pending("s", "g", "-", "+", "10"), full("s")),
        op("deleted entries", *claim_setup(), S("XDEL", "s", "1-0", "2-0", "6-0"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "1"), S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "2"),
           S("XAUTOCLAIM", "s", "g", "carol", "3600000", "0", "JUSTID"), pending("s", "g", "-", "+", "10"),
           S("XDEL", "s", "3-0", "4-0", "5-0"), S("XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "JUSTID"),
           pending("s", "g"), consumers("s", "g")),
        op("attempts are count times ten", *many, S("XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "COUNT", "1", "JUSTID"),
           S("XAUTOCLAIM", "s", "g", "bob", "3600000", "11-0", "COUNT", "1", "JUSTID"),
           S("XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "COUNT", "2", "JUSTID"),
           S("XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "COUNT", "3"),
           S("XAUTOCLAIM", "s", "g", "bob", "3600000", "(21-0", "COUNT", "1"), pending("s", "g", "IDLE", "3600000", "-", "+", "50")),
        op("count limits", *claim_setup(n=3), *[S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", n, "JUSTID") for n in [
            "1", "576460752303423488", "9223372036854775807", "0", "-1", "x", "1.5", "", "1000000"]],
           S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT"), S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", "1", "COUNT", "2"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "JUSTID", "JUSTID"), pending("s", "g", "-", "+", "10")),
        op("count too high to allocate", *claim_setup(n=3),
           *[S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "COUNT", n) for n in ["576460752303423487", "100000000000000000"]]),
        op("parse order", *claim_setup(n=3), S("XAUTOCLAIM", "nokey", "g", "c", "x", "0"), S("XAUTOCLAIM", "nokey", "g", "c", "0", "bad"),
           S("XAUTOCLAIM", "nokey", "g", "c", "0", "0", "COUNT", "0"), S("XAUTOCLAIM", "nokey", "g", "c", "0", "0", "FOO"),
           S("XAUTOCLAIM", "nokey", "g", "c", "0", "0"), S("XAUTOCLAIM", "s", "nog", "c", "0", "0"),
           S("XAUTOCLAIM", "str", "g", "c", "0", "0"), S("XAUTOCLAIM", "str", "g", "c", "x", "0"),
           S("XAUTOCLAIM", "s", "g", "carol", "1.5", "0"), S("XAUTOCLAIM", "s", "g", "carol", "0", "x"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "("), S("XAUTOCLAIM", "s", "g", "carol", "0", f"({MAX_ID}"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "(+"), S("XAUTOCLAIM", "s", "g", "carol", "0", "(-"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "18446744073709551616"), S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "FOO"),
           S("XAUTOCLAIM", "s", "g", "carol", "0", "0", "JUSTID", "COUNT", "x"), S("XAUTOCLAIM", "s", "g", "carol", "0"),
           pending("s", "g", "-", "+", "10")),
    ]
    check("xautoclaim", ops)


# ---- XINFO ------------------------------------------------------------------------------------------

def test_xinfo(check):
    lifecycle = [*with_group(n=14, consumers_=["alice", "bob", "dave"]), S("XGROUP", "CREATE", "s", "a-group", "3-0"),
                 read("g", "alice", "COUNT", "12", "STREAMS", "s", ">"), read("g", "bob", "STREAMS", "s", ">"),
                 read("a-group", "alice", "COUNT", "1", "STREAMS", "s", ">"), S("XACK", "s", "g", "1-0", "5-0"),
                 S("XCLAIM", "s", "g", "bob", "0", "2-0", "3-0", "TIME", "1000", "RETRYCOUNT", "4", "JUSTID")]
    ops = [
        op("stream", *fill(n=3), info("s"), S("XDEL", "s", "1-0"), info("s"), S("XDEL", "s", "3-0"), info("s"),
           S("XDEL", "s", "2-0"), info("s"), S("XADD", "s", "9-0", "f", "v"), info("s"), S("XTRIM", "s", "MAXLEN", "0"),
           info("s"), full("s"), S("XSETID", "s", "20-0"), info("s")),
        # Only XDEL records max-deleted-entry-id; trimming (XTRIM, XADD MAXLEN/MINID) leaves it. (XSETID
        # below it is refused by 7.2 and accepted by 7.0: the XSETID here stays above.)
        op("trims leave max-deleted-entry-id", *fill(n=4), S("XADD", "s", "MAXLEN", "2", "5-0", "f", "v"), info("s"),
           S("XTRIM", "s", "MINID", "5"), info("s"), S("XDEL", "s", "5-0"), info("s"), S("XADD", "s", "6-0", "f", "v"),
           S("XTRIM", "s", "MAXLEN", "0"), info("s"), S("XSETID", "s", "5-5"), info("s")),
        op("stream full", *lifecycle, full("s"), full("s", "COUNT", "2"), full("s", "count", "0"), full("s", "COUNT", "-1"),
           full("s", "COUNT", "1"), full("s", "COUNT", "100"), S("XINFO", "STREAM", "s", "full", compare=XINFO_STREAM_FULL)),
        op("stream errors", *fill(n=2), S("XINFO", "STREAM", "nokey"), S("XINFO", "STREAM", "nokey", "FOO"),
           S("XINFO", "STREAM", "str"), S("XINFO", "STREAM", "str", "FULL"), S("XINFO", "STREAM", "s", "FOO"),
           S("XINFO", "STREAM", "s", "FULLX"), S("XINFO", "STREAM", "s", "FULL", "COUNT"),
           S("XINFO", "STREAM", "s", "FULL", "FOO", "1"), S("XINFO", "STREAM", "s", "FULL", "COUNT", "x"),
           S("XINFO", "STREAM", "s", "FULL", "COUNT", "1.5"), S("XINFO", "STREAM", "s", "FULL", "COUNT", "1", "x"),
           S("XINFO", "STREAM", "s", "FULL", "COUNT", "9223372036854775808"), S("XINFO", "STREAM", "s", "COUNT", "1"),
           S("XINFO", "STREAM"), S("XINFO", "STREAM", "s", "FULL", "COUNT", "-9223372036854775808", compare=XINFO_STREAM_FULL),
           S("XINFO", "STREAM", "s", "FULL", "COUNT", "9223372036854775807", compare=XINFO_STREAM_FULL)),
        op("groups and consumers", *lifecycle, groups("s"), consumers("s", "g"), consumers("s", "a-group"),
           consumers("s", "nog"), S("XINFO", "GROUPS", "nokey"), S("XINFO", "GROUPS", "str"), S("XINFO", "GROUPS", "s", "x"),
           S("XINFO", "GROUPS"), S("XINFO", "CONSUMERS", "nokey", "g"), S("XINFO", "CONSUMERS", "str", "g"),
           S("XINFO", "CONSUMERS", "nokey", "nog"), S("XINFO", "CONSUMERS", "s"), S("XINFO", "CONSUMERS", "s", "g", "x"),
           S("XGROUP", "CREATE", "s", "B", "0"), S("XGROUP", "CREATE", "s", "", "0"), groups("s"), consumers("s", "B"),
           S("XGROUP", "DESTROY", "s", "g"), groups("s"), info("s")),
    ]
    check("xinfo", ops)


def test_entries_read_and_lag(check):
    """Entries-read and lag through every case of the reference's rule: valid counters, a counter
    reset by SETID, tombstones before, inside and after the group's position, an emptied stream,
    ENTRIESREAD set too high (a negative lag), and estimates from the first entry."""
    ops = [
        op("creation", S("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM"), groups("e"), *fill(n=3),
           S("XGROUP", "CREATE", "s", "g0", "0"), S("XGROUP", "CREATE", "s", "gmid", "2-0"),
           S("XGROUP", "CREATE", "s", "gend", "$"), S("XGROUP", "CREATE", "s", "gfut", "10-0"),
           S("XGROUP", "CREATE", "s", "gzero", "0-0", "ENTRIESREAD", "0"), S("XGROUP", "CREATE", "s", "ghigh", "$", "ENTRIESREAD", "100"),
           groups("s"), S("XDEL", "s", "2-0"), groups("s"), S("XADD", "s", "4-0", "f", "v"), groups("s")),
        op("reading", *fill(n=5), S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATE", "s", "h", "2-0"),
           *[S("XGROUP", "CREATECONSUMER", "s", grp, "c") for grp in ("g", "h")],
           read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"), read("h", "c", "COUNT", "1", "STREAMS", "s", ">"),
           groups("s"), S("XDEL", "s", "4-0"), groups("s"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           read("h", "c", "COUNT", "2", "STREAMS", "s", ">"), groups("s"), read("g", "c", "STREAMS", "s", ">"), groups("s"),
           S("XADD", "s", "6-0", "f", "v"), groups("s"), read("h", "c", "STREAMS", "s", ">"), groups("s")),
        op("tombstones", *fill(n=6), S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATECONSUMER", "s", "g", "c"),
           S("XDEL", "s", "1-0"), groups("s"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           S("XDEL", "s", "5-0"), groups("s"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "3-0"), groups("s"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "$"), groups("s"), S("XGROUP", "SETID", "s", "g", "0"), groups("s"),
           S("XTRIM", "s", "MINID", "3"), groups("s"), read("g", "c", "STREAMS", "s", ">"), groups("s")),
        op("setid", *fill(n=4), S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATECONSUMER", "s", "g", "c"),
           read("g", "c", "COUNT", "2", "STREAMS", "s", ">"), groups("s"), S("XGROUP", "SETID", "s", "g", "2-0"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "2-0", "ENTRIESREAD", "2"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "1-0", "ENTRIESREAD", "200"), groups("s"), read("g", "c", "STREAMS", "s", ">"),
           groups("s"), S("XGROUP", "SETID", "s", "g", "1-0"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           S("XGROUP", "SETID", "s", "g", "0-0"), groups("s"), S("XGROUP", "SETID", "s", "g", "5-0"), groups("s"),
           S("XCLAIM", "s", "g", "c", "0", "1-0", "LASTID", "50-0", "JUSTID"), groups("s")),
        op("emptied streams", *fill(n=2), S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATE", "s", "h", "$"),
           S("XGROUP", "CREATE", "s", "k", "1-0"), S("XDEL", "s", "1-0", "2-0"), groups("s"), S("XADD", "s", "3-0", "f", "v"),
           groups("s"), S("XTRIM", "s", "MAXLEN", "0"), groups("s"), full("s"),
           S("XGROUP", "CREATE", "t", "g", "$", "MKSTREAM"), S("XADD", "t", "1-0", "f", "v"), S("XDEL", "t", "1-0"), groups("t"),
           S("XGROUP", "CREATE", "t", "h", "0"), groups("t")),
        op("noack and several groups", *fill(n=4), *[S("XGROUP", "CREATE", "s", grp, "0") for grp in ("g", "h")],
           *[S("XGROUP", "CREATECONSUMER", "s", grp, "c") for grp in ("g", "h")],
           read("g", "c", "NOACK", "COUNT", "3", "STREAMS", "s", ">"), read("h", "c", "COUNT", "1", "STREAMS", "s", ">"),
           groups("s"), S("XADD", "s", "5-0", "f", "v"), S("XDEL", "s", "2-0"), groups("s"),
           read("g", "c", "NOACK", "STREAMS", "s", ">"), read("h", "c", "STREAMS", "s", ">"), groups("s"), full("s")),
        op("xsetid moves the counters", *fill(n=3), S("XGROUP", "CREATE", "s", "g", "0"), S("XGROUP", "CREATE", "s", "h", "$"),
           S("XGROUP", "CREATECONSUMER", "s", "g", "c"), read("g", "c", "COUNT", "1", "STREAMS", "s", ">"), groups("s"),
           S("XSETID", "s", "10-0", "ENTRIESADDED", "50"), groups("s"), S("XSETID", "s", "10-0", "ENTRIESADDED", "50",
                                                                        "MAXDELETEDID", "9-0"), groups("s"),
           read("g", "c", "STREAMS", "s", ">"), groups("s"), S("XADD", "s", "11-0", "f", "v"), groups("s"),
           read("g", "c", "STREAMS", "s", ">"), groups("s"), info("s")),
    ]
    check("lag", ops)


def test_consumer_group_lifecycles(check):
    """Several consumers working a queue: deliveries, acknowledgements, a crashed consumer's
    entries claimed by idle time and by XAUTOCLAIM, consumers deleted, the group moved and
    destroyed, with every view of the state after each stage."""
    def views():
        return [pending("q", "workers"), pending("q", "workers", "-", "+", "100"), groups("q"), consumers("q", "workers"),
                full("q", "COUNT", "5")]
    steps = [S("XGROUP", "CREATE", "q", "workers", "$", "MKSTREAM"), S("XGROUP", "CREATE", "q", "audit", "0"),
             *[S("XGROUP", "CREATECONSUMER", "q", "workers", w) for w in ("w1", "w2", "w3")], *views()]
    for batch in range(4):
        steps += [S("XADD", "q", f"{100 + batch * 10 + i}-0", "job", f"j{batch}.{i}", "try", "1") for i in range(6)]
        steps += [read("workers", "w1", "COUNT", "2", "STREAMS", "q", ">"),
                  read("workers", "w2", "COUNT", "3", "STREAMS", "q", ">"),
                  read("workers", "w3", "COUNT", "5", "STREAMS", "q", ">"),
                  read("audit", "auditor", "NOACK", "COUNT", "4", "STREAMS", "q", ">")]
        steps += [S("XACK", "q", "workers", f"{100 + batch * 10}-0", f"{101 + batch * 10}-0"), *views()]
    steps += [
        S("XCLAIM", "q", "workers", "w3", "0", "112-0", "113-0", "124-0", "IDLE", "7200000", "JUSTID"),
        S("XCLAIM", "q", "workers", "w1", "3600000", "112-0", "113-0", "124-0", "125-0"), *views(),
        S("XAUTOCLAIM", "q", "workers", "w1", "0", "0", "COUNT", "3"),
        S("XAUTOCLAIM", "q", "workers", "w2", "0", "0", "COUNT", "100", "JUSTID"), *views(),
        S("XDEL", "q", "122-0", "133-0"), S("XAUTOCLAIM", "q", "workers", "w3", "0", "0"),
        S("XGROUP", "DELCONSUMER", "q", "workers", "w1"), *views(),
        read("workers", "w2", "STREAMS", "q", "0"), read("workers", "w2", "COUNT", "2", "STREAMS", "q", "120"),
        S("XACK", "q", "workers", *[f"{100 + b * 10 + i}-0" for b in range(4) for i in range(6)]), *views(),
        S("XGROUP", "SETID", "q", "workers", "110-0", "ENTRIESREAD", "8"), read("workers", "w3", "COUNT", "4", "STREAMS", "q", ">"),
        *views(), S("XTRIM", "q", "MAXLEN", "3"), *views(), S("XGROUP", "DESTROY", "q", "workers"), groups("q"),
        full("q")]
    check("lifecycle", [op("a work queue", *steps)])


def test_a_large_pel(check):
    """A thousand pending entries across three consumers: reads in odd-sized chunks, scattered
    acknowledgements, claims of long id lists, XAUTOCLAIM walking the PEL from fixed starts,
    ranges, history reads and a deleted consumer, with deleted and trimmed entries among them."""
    n = 1000
    steps = [S("XADD", "s", f"{i}-{i % 3}", "n", i) for i in range(1, n + 1)]
    steps += [S("XGROUP", "CREATE", "s", "g", "0"), *[S("XGROUP", "CREATECONSUMER", "s", "g", c) for c in "abc"]]
    for chunk in range(8):
        steps.append(read("g", "abc"[chunk % 3], "COUNT", 137, "STREAMS", "s", ">"))
    steps += [S("XACK", "s", "g", *[f"{i}-{i % 3}" for i in range(1, n + 1, 3)]), pending("s", "g"),
              S("XDEL", "s", *[f"{i}-{i % 3}" for i in range(5, n, 7)]),
              S("XCLAIM", "s", "g", "c", "0", *[f"{i}-{i % 3}" for i in range(2, 700, 5)], "JUSTID"),
              S("XCLAIM", "s", "g", "b", "0", *[f"{i}-{i % 3}" for i in range(600, 900, 2)], "IDLE", "7200000", "JUSTID"),
              pending("s", "g"), consumers("s", "g")]
    steps += [S("XAUTOCLAIM", "s", "g", "a", "3600000", f"{start}-0", "COUNT", "40", "JUSTID") for start in range(0, n, 90)]
    steps += [S("XAUTOCLAIM", "s", "g", "a", "0", "950", "COUNT", "25"), pending("s", "g")]
    steps += [pending("s", "g", start, "+", count, *who) for start, count, who in [
        ("-", "1000", ()), ("300", "17", ()), ("(600-0", "60", ("b",)), ("-", "1000", ("c",)), ("990", "5", ("a",))]]
    steps += [pending("s", "g", "IDLE", "3600000", "-", "+", "1000"),
              read("g", "a", "STREAMS", "s", "0"), read("g", "b", "COUNT", "50", "STREAMS", "s", "640"),
              S("XGROUP", "DELCONSUMER", "s", "g", "b"), pending("s", "g"), S("XTRIM", "s", "MINID", "500"),
              S("XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "300", "JUSTID"), pending("s", "g"),
              consumers("s", "g"), groups("s"), full("s", "COUNT", "20")]
    check("large_pel", [op("a thousand pending entries", *steps)])


def test_groups_travel_with_their_stream(check):
    """COPY, RENAME and MOVE take the groups, their PELs and consumers along; the copy is
    independent of the original. WATCH is invalidated only when XGROUP CREATE ... MKSTREAM
    creates the key, not by the group commands."""
    state = [*with_group(n=4, consumers_=["idle"]), S("XGROUP", "CREATE", "s", "h", "2-0", "ENTRIESREAD", "1"),
             read("g", "alice", "COUNT", "2", "STREAMS", "s", ">"), read("h", "bob", "STREAMS", "s", ">"),
             S("XCLAIM", "s", "g", "bob", "0", "2-0", "TIME", "5000", "RETRYCOUNT", "3", "JUSTID"), S("XDEL", "s", "4-0")]

    def watched(*command, key="s"):
        return [S("WATCH", key), S(*command), S("MULTI"), S("PING"), S("EXEC")]
    ops = [
        op("copy", *state, S("COPY", "s", "u"), full("u", "COUNT", "0"), groups("u"), consumers("u", "g"),
           pending("u", "g", "-", "+", "10"), read("g", "alice", "STREAMS", "u", ">"), S("XACK", "u", "g", "1-0"),
           S("XGROUP", "DESTROY", "u", "h"), pending("s", "g"), groups("s"), pending("u", "g"), groups("u"),
           S("COPY", "s", "u"), S("COPY", "s", "u", "REPLACE"), groups("u")),
        op("rename and move", *state, S("RENAME", "s", "t"), full("t", "COUNT", "0"), S("MOVE", "t", "1"),
           S("SELECT", "1"), full("t", "COUNT", "0"), consumers("t", "g"), read("g", "alice", "STREAMS", "t", "0"),
           S("FLUSHDB"), S("SELECT", "0")),
        op("the last id of a deleted entry", *fill(n=3), S("XDEL", "s", "3-0"), S("XGROUP", "CREATE", "s", "g", "$"),
           S("XGROUP", "CREATE", "s", "h", "0"), S("XGROUP", "SETID", "s", "h", "$"), groups("s"),
           S("XADD", "s", "4-0", "f", "v"), S("XGROUP", "CREATECONSUMER", "s", "g", "c"),
           read("g", "c", "STREAMS", "s", ">"), groups("s")),
        op("watch", *state, *watched("XGROUP", "CREATE", "s", "k", "$"), *watched("XGROUP", "SETID", "s", "g", "0"),
           *watched("XGROUP", "CREATECONSUMER", "s", "g", "new"), *watched("XGROUP", "DELCONSUMER", "s", "g", "new"),
           *watched("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", ">"), *watched("XACK", "s", "g", "1-0"),
           *watched("XCLAIM", "s", "g", "carol", "0", "2-0"), *watched("XAUTOCLAIM", "s", "g", "bob", "0", "0"),
           *watched("XGROUP", "DESTROY", "s", "k"), *watched("XGROUP", "CREATE", "s", "k", "$", "MKSTREAM"),
           *watched("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM", key="e"),
           *watched("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM", key="e"), *watched("XADD", "s", "9-0", "f", "v")),
    ]
    check("travel", ops)


def test_bad_input(check):
    """Malformed and overflowing ids, negative and huge counts, unknown groups and consumers, and
    every group command against a string, a list and a missing key."""
    bad_ids = ["x", "1-", "-1", "1--1", "1-2-3", "18446744073709551616", "18446744073709551616-0",
               "0-18446744073709551616", "99999999999999999999", "1.5", " 1", "1 ", "+1", "0x1", "", "\x00", "1-+1"]
    ops = [
        op("ids", *with_group(n=3), read("g", "a", "STREAMS", "s", ">"),
           *[step for bad in bad_ids for step in (
               S("XACK", "s", "g", bad), read("g", "a", "STREAMS", "s", bad), pending("s", "g", bad, "+", "10"),
               pending("s", "g", "-", bad, "10"), S("XCLAIM", "s", "g", "a", "0", bad),
               S("XCLAIM", "s", "g", "a", "0", "1-0", "LASTID", bad), S("XAUTOCLAIM", "s", "g", "a", "0", bad),
               S("XGROUP", "CREATE", "s", "h", bad), S("XGROUP", "SETID", "s", "g", bad))],
           groups("s"), pending("s", "g", "-", "+", "10")),
        op("the largest ids", S("XADD", "s", "18446744073709551615-18446744073709551614", "f", "v"),
           S("XADD", "s", MAX_ID, "f", "v"), S("XGROUP", "CREATE", "s", "g", "0"), read("g", "a", "STREAMS", "s", ">"),
           read("g", "a", "STREAMS", "s", "18446744073709551615"), read("g", "a", "STREAMS", "s", "18446744073709551615-18446744073709551614"),
           pending("s", "g", "-", "+", "10"), pending("s", "g", "(18446744073709551615-18446744073709551614", "+", "10"),
           S("XCLAIM", "s", "g", "b", "0", MAX_ID, "JUSTID"), S("XAUTOCLAIM", "s", "g", "b", "0", "18446744073709551615", "JUSTID"),
           S("XAUTOCLAIM", "s", "g", "b", "0", "(18446744073709551615-18446744073709551614", "JUSTID"),
           S("XACK", "s", "g", MAX_ID), groups("s"), S("XGROUP", "SETID", "s", "g", "+"), groups("s"),
           S("XGROUP", "CREATE", "s", "h", MAX_ID), groups("s")),
        op("counts", *with_group(n=3, consumers_=["a"]), *[read("g", "a", "COUNT", n, "STREAMS", "s", "0") for n in [
            "-1", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "0", "1e3", "+1"]],
           *[read("g", "a", "BLOCK", n, "STREAMS", "s", "0") for n in [
               "-9223372036854775808", "9223372036854775807", "9223372036854775808", "0x10", " 1"]],
           *[S("XCLAIM", "s", "g", "a", n, "1-0", "JUSTID") for n in ["-9223372036854775808", "9223372036854775808", "0x1"]],
           pending("s", "g", "-", "+", "9223372036854775808"), pending("s", "g", "IDLE", "9223372036854775808", "-", "+", "1")),
        op("unknown groups and consumers", *with_group(n=2), read("nog", "a", "STREAMS", "s", "0"),
           pending("s", "nog"), pending("s", "g", "-", "+", "10", "nobody"), S("XACK", "s", "nog", "1-0"),
           S("XCLAIM", "s", "nog", "a", "0", "1-0"), S("XAUTOCLAIM", "s", "nog", "a", "0", "0"), consumers("s", "nog"),
           S("XGROUP", "SETID", "s", "nog", "$"), S("XGROUP", "DESTROY", "s", "nog"), S("XGROUP", "CREATECONSUMER", "s", "nog", "a"),
           S("XGROUP", "DELCONSUMER", "s", "nog", "a"), S("XGROUP", "DELCONSUMER", "s", "g", "nobody"), groups("s")),
        op("wrong types", *[step for key in ("str", "lst") for step in (
            read("g", "a", "STREAMS", key, ">"), read("g", "a", "STREAMS", key, "0"), S("XACK", key, "g", "1-0"),
            S("XACK", key, "g", "bad"), pending(key, "g"), pending(key, "g", "-", "+", "10"),
            S("XCLAIM", key, "g", "a", "0", "1-0"), S("XCLAIM", key, "g", "a", "x", "bad"),
            S("XAUTOCLAIM", key, "g", "a", "0", "0"), S("XGROUP", "CREATE", key, "g", "$"),
            S("XGROUP", "CREATE", key, "g", "$", "MKSTREAM"), S("XGROUP", "SETID", key, "g", "$"),
            S("XGROUP", "DESTROY", key, "g"), S("XGROUP", "CREATECONSUMER", key, "g", "a"),
            S("XGROUP", "DELCONSUMER", key, "g", "a"), S("XINFO", "STREAM", key), S("XINFO", "GROUPS", key),
            S("XINFO", "CONSUMERS", key, "g"))],
           S("GET", "str"), S("LRANGE", "lst", "0", "-1")),
        # Redis formats these texts with %s: CR and LF become spaces, a NUL ends the name.
        op("names with line breaks and nul in error texts", *with_group(n=1, consumers_=["a"]),
           *[step for name in (b"g\r\nx", b"g\nx", b"g\x00x", b"\x00") for step in (
               read(name, "a", "STREAMS", "s", ">"), read("g", "a", "STREAMS", b"k" + name, ">"), pending("s", name),
               pending("s", name, "-", "+", "1"), S("XCLAIM", "s", name, "a", "0", "1-0"),
               S("XCLAIM", "s", "g", "a", "0", "1-0", name), S("XAUTOCLAIM", "s", name, "a", "0", "0"),
               S("XGROUP", "SETID", "s", name, "$"), S("XGROUP", "CREATECONSUMER", "s", name, "a"),
               consumers("s", name), S("XGROUP", "CREATE", "s", name, "$"))],
           groups("s")),
        op("missing keys", read("g", "a", "STREAMS", "nokey", ">"), read("g", "a", "STREAMS", "nokey", "0"),
           S("XACK", "nokey", "g", "1-0"), pending("nokey", "g"), pending("nokey", "g", "-", "+", "10"),
           S("XCLAIM", "nokey", "g", "a", "0", "1-0"), S("XAUTOCLAIM", "nokey", "g", "a", "0", "0"),
           S("XGROUP", "SETID", "nokey", "g", "$"), S("XGROUP", "DESTROY", "nokey", "g"),
           S("XGROUP", "CREATECONSUMER", "nokey", "g", "a"), S("XGROUP", "DELCONSUMER", "nokey", "g", "a"),
           S("XINFO", "STREAM", "nokey"), S("XINFO", "GROUPS", "nokey"), S("XINFO", "CONSUMERS", "nokey", "g"),
           S("EXISTS", "nokey")),
    ]
    check("bad_input", ops)


# ---- blocking XREADGROUP, several connections to each server -----------------------------------------
#
# The harness of test_list_blocking.py: every reply compared, and after each step the server under
# test must block the same connections as the reference (CLIENT LIST, polled). Connection 3 writes.
# Every waiting consumer exists before it blocks (7.2 creates it when it blocks, 7.0 when it is
# served), and nothing is woken by a change both versions answer differently (test_redis72_*).

def group_of(*names, key="s", group="g", db=None):
    steps = [Call(3, "SELECT", db)] if db is not None else []
    return steps + [Call(3, "XADD", key, "1-0", "f", "v"), Call(3, "XGROUP", "CREATE", key, group, "$"),
                    *[Call(3, "XGROUP", "CREATECONSUMER", key, group, c) for c in names]]


def waits(conn, consumer, *args, group="g"):
    return Block(conn, "XREADGROUP", "GROUP", group, consumer, *args)


def views(key="s", group="g"):
    return [Call(3, "XPENDING", key, group), Call(3, "XINFO", "GROUPS", key), Call(3, "XLEN", key)]


BLOCKING_SCENARIOS = {
    "served_by_xadd": [
        *group_of("alice"), waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">").expect({0}),
        Call(3, "XADD", "s", "2-0", "f", "v", "g", "w").expect(set()), *views(),
        waits(0, "alice", "COUNT", "5", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "XADD", "s", "MAXLEN", "1", "3-0", "f", "v").expect(set()), *views(),
    ],
    "fifo_across_consumers": [
        *group_of("alice", "bob", "carol"), waits(0, "alice", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"),
        waits(1, "bob", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">"),
        waits(2, "carol", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">").expect({0, 1, 2}),
        Call(3, "XADD", "s", "2-0", "f", "v").expect({1, 2}),
        Call(3, "MULTI"), Call(3, "XADD", "s", "3-0", "f", "v"), Call(3, "XADD", "s", "4-0", "f", "v"),
        Call(3, "EXEC").expect(set()), *views(),
    ],
    "one_reader_per_group": [
        *group_of("alice"), Call(3, "XGROUP", "CREATE", "s", "h", "$"), Call(3, "XGROUP", "CREATECONSUMER", "s", "h", "bob"),
        waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"), waits(1, "bob", "BLOCK", "0", "STREAMS", "s", ">", group="h"),
        Call(2, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "s", "0").expect({0, 1}),  # history: at once
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(), *views(group="h"),
    ],
    "count_limits_a_woken_reader": [
        *group_of("alice"), waits(0, "alice", "COUNT", "2", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "MULTI"), *[Call(3, "XADD", "s", f"{i}-0", "f", "v") for i in (2, 3, 4)], Call(3, "EXEC").expect(set()),
        Call(3, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"), *views(),
    ],
    "several_streams_in_one_call": [
        *group_of("alice"), *group_of("alice", key="t"),
        waits(0, "alice", "BLOCK", "0", "STREAMS", "s", "t", ">", ">"), Call(3, "XADD", "t", "2-0", "f", "v").expect(set()),
        waits(0, "alice", "BLOCK", "0", "STREAMS", "s", "t", ">", ">"), Call(3, "XADD", "s", "3-0", "f", "v").expect(set()),
        waits(0, "alice", "COUNT", "1", "BLOCK", "0", "STREAMS", "t", "s", ">", ">"),
        Call(3, "XADD", "u", "1-0", "f", "v").expect({0}), Call(3, "XADD", "s", "4-0", "f", "v").expect(set()),
        *views(), *views(key="t"),
    ],
    "xread_and_xreadgroup_on_one_key": [
        *group_of("alice"), Block(0, "XREAD", "BLOCK", "0", "STREAMS", "s", "$"),
        waits(1, "alice", "BLOCK", "0", "STREAMS", "s", ">"), Block(2, "XREAD", "BLOCK", "0", "STREAMS", "s", "1-0"),
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
    ],
    "noack": [
        *group_of("alice"), waits(0, "alice", "NOACK", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
        Call(3, "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
    ],
    "timeouts": [
        *group_of("alice", "bob"), waits(1, "bob", "BLOCK", "0", "STREAMS", "s", ">"),
        TimesOut(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "100", "STREAMS", "s", ">"),
        TimesOut(0, "XREADGROUP", "GROUP", "g", "alice", "COUNT", "3", "BLOCK", "50", "STREAMS", "s", ">").expect({1}),
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
    ],
    "blocking_inside_multi_answers_at_once": [
        *group_of("alice", "bob"), waits(1, "bob", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(0, "MULTI"), Call(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(0, "XADD", "s", "2-0", "f", "v"), Call(0, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(0, "EXEC").expect({1}),  # the transaction read what it added: bob still waits
        Call(3, "XADD", "s", "3-0", "f", "v").expect(set()), *views(),
    ],
    "client_unblock": [
        *group_of("alice", "bob", "carol"), waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        waits(1, "bob", "BLOCK", "0", "STREAMS", "s", ">"), waits(2, "carol", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "CLIENT", "UNBLOCK", Id(0)).expect({1, 2}), Call(3, "CLIENT", "UNBLOCK", Id(1), "ERROR").expect({2}),
        Call(3, "CLIENT", "UNBLOCK", Id(2), "TIMEOUT").expect(set()), Call(3, "CLIENT", "UNBLOCK", Id(0)),
        Call(3, "XADD", "s", "2-0", "f", "v"), *views(),
    ],
    "changes_that_wake_nobody": [
        *group_of("alice"), Call(3, "XGROUP", "CREATE", "s", "h", "$"),
        waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "XGROUP", "DESTROY", "s", "h").expect({0}), Call(3, "XGROUP", "SETID", "s", "g", "0").expect({0}),
        Call(3, "XGROUP", "CREATECONSUMER", "s", "g", "zed").expect({0}), Call(3, "XACK", "s", "g", "1-0").expect({0}),
        Call(3, "XDEL", "s", "1-0").expect({0}), Call(3, "XTRIM", "s", "MAXLEN", "0").expect({0}),
        Call(3, "XADD", "t", "1-0", "f", "v").expect({0}), Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
    ],
    "a_waiter_disconnects": [
        *group_of("alice", "bob"), waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        waits(1, "bob", "BLOCK", "0", "STREAMS", "s", ">"), Close(0).expect({1}),
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
    ],
    "a_stream_with_the_group_renamed_onto_the_key": [
        *group_of("alice"), waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "XADD", "t", "5-0", "f", "renamed"), Call(3, "XGROUP", "CREATE", "t", "g", "0"),
        Call(3, "RENAME", "t", "s").expect(set()), *views(),
    ],
    "another_database": [
        *group_of("alice", db="1"), Call(0, "SELECT", "1"), waits(0, "alice", "BLOCK", "0", "STREAMS", "s", ">"),
        Call(3, "SELECT", "0"), *group_of("alice"), Call(3, "XADD", "s", "2-0", "f", "v").expect({0}),
        Call(3, "SELECT", "1"), Call(3, "XADD", "s", "3-0", "f", "v").expect(set()), *views(),
    ],
    "pipelined_commands_behind_a_blocked_one": [
        *group_of("alice"), Block(0, ("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"), ("PING",),
                                  ("XPENDING", "s", "g"), ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")),
        Call(3, "XADD", "s", "2-0", "f", "v").expect(set()), *views(),
    ],
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", sorted(BLOCKING_SCENARIOS))
def test_blocking_xreadgroup(diff_goblin, reference_server, name, protocol):
    run_scenario(diff_goblin, reference_server, BLOCKING_SCENARIOS[name], protocol, title=name)


# Seeded random sequences over five connections (the last one never blocks): waiting readers on
# one stream each (several streams in one call can be served differently by 7.0 and 7.2 once a
# SETID moved a group back), served by XADDs, timed out, or released by CLIENT UNBLOCK, among
# SETID, XACK, XCLAIM, XDEL and reads that answer at once. Consumers are all created first and
# never deleted, so no reply depends on when a consumer comes into being.

BLOCKING_PROTOCOLS = [2, 3, 2, 3, 2]
BLOCKING_STEPS = 120


def has_new_entries(control, key, group) -> bool:
    """Whether the reference would serve `>` for the group at once (an entry after its last id)."""
    for record in control.call("XINFO", "GROUPS", key).value:
        fields = {k.value: v.value for k, v in record_pairs(record)}
        if fields[b"name"] == group.encode():
            return bool(control.call("XRANGE", key, b"(" + fields[b"last-delivered-id"], "+", "COUNT", "1").value)
    raise AssertionError(f"no group {group} on {key}")


def random_blocking_step(rng, runner, next_ids) -> object:
    writer = len(BLOCKING_PROTOCOLS) - 1
    actor = rng.choice([i for i in range(len(BLOCKING_PROTOCOLS)) if i not in runner.blocked])
    key, group, consumer = rng.choice(["s", "t"]), rng.choice(["g", "h"]), rng.choice(["alice", "bob", "carol"])
    count = ["COUNT", str(rng.choice([1, 2, 5]))] if rng.random() < 0.5 else []
    noack = ["NOACK"] if rng.random() < 0.2 else []
    r = rng.random()
    if r < 0.35 and actor != writer:
        args = ("XREADGROUP", "GROUP", group, consumer, *count, *noack)
        if has_new_entries(runner.reference.control, key, group):
            return Call(actor, *args, "BLOCK", "0", "STREAMS", key, ">")
        if rng.random() < 0.1:
            return TimesOut(actor, *args, "BLOCK", "50", "STREAMS", key, ">")
        return Block(actor, *args, "BLOCK", "0", "STREAMS", key, ">")
    if r < 0.65:
        next_ids[key] += rng.choice([1, 1, 2])
        return Call(actor, "XADD", key, f"{next_ids[key]}-0", "f", str(next_ids[key]))
    some_id = f"{rng.randint(0, next_ids[key])}-0"
    if r < 0.72:
        return Call(actor, "XGROUP", "SETID", key, group, rng.choice(["$", "0", some_id]))
    if r < 0.78:
        return Call(actor, "XACK", key, group, some_id, f"{rng.randint(0, next_ids[key])}-0")
    if r < 0.83:
        return Call(actor, "XCLAIM", key, group, consumer, "0", some_id, "JUSTID")
    if r < 0.86:
        return Call(actor, "XDEL", key, some_id)
    if r < 0.93:
        history = rng.choice([">", "0"]) if actor == writer else "0"
        return Call(actor, "XREADGROUP", "GROUP", group, consumer, *count, *noack, "STREAMS", key, history)
    if r < 0.96:
        return Call(actor, "XPENDING", key, group)
    target = rng.randrange(len(BLOCKING_PROTOCOLS))
    return Call(actor, "CLIENT", "UNBLOCK", Id(target), *rng.choice([(), ("ERROR",)]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_blocking_group_sequences(diff_goblin, reference_server, seed):
    rng = random.Random(seed)
    writer = len(BLOCKING_PROTOCOLS) - 1
    runner = Runner(diff_goblin, reference_server, BLOCKING_PROTOCOLS, f"random blocking group sequence, seed {seed}")
    setup = [Call(writer, "XGROUP", "CREATE", key, group, "$", "MKSTREAM") for key in "st" for group in "gh"]
    setup += [Call(writer, "XGROUP", "CREATECONSUMER", key, group, c) for key in "st" for group in "gh"
              for c in ("alice", "bob", "carol")]
    next_ids = {"s": 0, "t": 0}
    try:
        for number, step in enumerate(setup, 1):
            runner.do(step, number)
        for number in range(len(setup) + 1, len(setup) + BLOCKING_STEPS + 1):
            runner.do(random_blocking_step(rng, runner, next_ids), number)
        for index in sorted(runner.blocked):
            runner.do(Call(writer, "CLIENT", "UNBLOCK", Id(index)), 0)
        for key in "st":
            for command in [("XINFO", "GROUPS", key), ("XPENDING", key, "g"), ("XPENDING", key, "h"),
                            ("XRANGE", key, "-", "+")]:
                runner.do(Call(writer, *command), 0)
        runner.finish()
    finally:
        runner.close()


# ---- seeded random multi-consumer sequences ---------------------------------------------------------
#
# Two streams, up to two groups each, three consumers, explicit increasing ids, and every group
# command mixed with XADD, XDEL and XTRIM. Claims by idle time use 0 or an hour against deliveries
# that are fresh or two hours old. A read of new entries, XCLAIM and XAUTOCLAIM first create their
# consumer with XGROUP CREATECONSUMER in the same Op (so 7.2's eager creation never shows); history
# reads create it on both versions. Reads of new entries never block: BLOCK appears only inside
# MULTI or on history reads. Every Op stands alone under shrinking (ids come from a counter).
# Environment: GOBLIN_GROUP_SEEDS=5,9 replaces the RESP2 seeds, GOBLIN_DIFF_RANDOM_SEEDS=n adds some.

RANDOM_KEYS = ["s", "t"]
RANDOM_GROUPS = ["g1", "g2"]
RANDOM_CONSUMERS = ["alice", "bob", "carol"]
RANDOM_OPS = 300
RANDOM_SEEDS = [1, 2, 3]
RANDOM_RESP3_SEEDS = [4]


class GroupSequence:
    """The random source of one sequence: ids added so far per key, and the choices."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.last = {key: [0, 0] for key in RANDOM_KEYS}
        self.ids = {key: [] for key in RANDOM_KEYS}

    def pick(self, seq):
        return self.rng.choice(seq)

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def next_id(self, key) -> str:
        last = self.last[key]
        if self.maybe(0.7):
            last[0], last[1] = last[0] + self.rng.randint(1, 3), 0
        else:
            last[1] += 1
        self.ids[key].append(f"{last[0]}-{last[1]}")
        return self.ids[key][-1]

    def some_id(self, key) -> str:
        """An id the stream had (most of the time), or one near it."""
        if self.ids[key] and self.maybe(0.8):
            return self.pick(self.ids[key][-30:])
        return f"{self.rng.randint(0, self.last[key][0] + 2)}-{self.rng.randint(0, 2)}"

    def bound(self, key) -> str:
        r = self.rng.random()
        if r < 0.2:
            return self.pick(["-", "+", "0"])
        return ("(" if r < 0.35 else "") + self.some_id(key)


def _random_op(q: GroupSequence) -> Op:
    key, group, consumer = q.pick(RANDOM_KEYS), q.pick(RANDOM_GROUPS), q.pick(RANDOM_CONSUMERS)
    create = S("XGROUP", "CREATECONSUMER", key, group, consumer)
    r = q.rng.random() * 100

    def op_(name, *steps):
        return Op(list(steps), name)

    def view(*args, compare=None):
        step = S(*args, compare=compare)
        step.readonly = True
        return step

    if r < 28:
        fields = [x for i in range(q.rng.randint(1, 3)) for x in (f"f{i}", str(q.rng.randint(0, 99)))]
        trim = ["MAXLEN", "=", str(q.rng.randint(5, 25))] if q.maybe(0.1) else []
        return op_("xadd", S("XADD", key, *trim, q.next_id(key), *fields))
    if r < 42:
        keys = [key] if q.maybe(0.7) else RANDOM_KEYS[::q.pick([1, -1])]
        args = ["GROUP", group, consumer]
        if q.maybe(0.6):
            args += ["COUNT", str(q.pick([1, 1, 2, 3, 5, 0]))]
        if q.maybe(0.2):
            args += ["NOACK"]
        read_ = S("XREADGROUP", *args, "STREAMS", *keys, *[">"] * len(keys))
        steps = [S("XGROUP", "CREATECONSUMER", k, group, consumer) for k in keys]
        if q.maybe(0.15):
            blocking = S("XREADGROUP", *args, "BLOCK", "0", "STREAMS", *keys, *[">"] * len(keys))
            return op_("xreadgroup in multi", *steps, S("MULTI"), blocking, read_, S("EXEC"))
        return op_("xreadgroup new", *steps, read_)
    if r < 49:
        keys = [key] if q.maybe(0.8) else RANDOM_KEYS
        ids = [q.pick(["0", "0", q.some_id(k)]) for k in keys]
        args = ["GROUP", group, consumer] + (["COUNT", str(q.pick([1, 2, 10]))] if q.maybe(0.5) else []) + \
            (["BLOCK", "0"] if q.maybe(0.2) else [])
        return op_("xreadgroup history", S("XREADGROUP", *args, "STREAMS", *keys, *ids))
    if r < 57:
        ids = [q.some_id(key) for _ in range(q.rng.randint(1, 4))]
        return op_("xack", S("XACK", key, group, *ids))
    if r < 64:
        ids = [q.some_id(key) for _ in range(q.rng.randint(1, 3))]
        options = []
        for option in q.rng.sample(["IDLE", "TIME", "RETRYCOUNT", "FORCE", "JUSTID", "LASTID"], q.rng.randint(0, 3)):
            if option == "IDLE":
                options += ["IDLE", q.pick(["7200000", "0", "-100"])]
            elif option == "TIME":
                options += ["TIME", q.pick(["1", "0"])]
            elif option == "RETRYCOUNT":
                options += ["RETRYCOUNT", str(q.rng.randint(-1, 5))]
            elif option == "LASTID":
                options += ["LASTID", q.some_id(key)]
            else:
                options.append(option)
        return op_("xclaim", create, S("XCLAIM", key, group, consumer, q.pick(["0", "0", "3600000"]), *ids, *options))
    if r < 70:
        args = [q.pick(["0", "0", "3600000"]), q.bound(key)]
        if q.maybe(0.6):
            args += ["COUNT", str(q.pick([1, 2, 3, 100]))]
        if q.maybe(0.3):
            args.append("JUSTID")
        return op_("xautoclaim", create, S("XAUTOCLAIM", key, group, consumer, *args))
    if r < 74:
        return op_("xdel", S("XDEL", key, *[q.some_id(key) for _ in range(q.rng.randint(1, 2))]))
    if r < 76:
        how = ["MAXLEN", "=", str(q.rng.randint(0, 20))] if q.maybe(0.5) else ["MINID", q.some_id(key)]
        return op_("xtrim", S("XTRIM", key, *how))
    if r < 79:
        entries = ["ENTRIESREAD", str(q.rng.randint(-1, len(q.ids[key])))] if q.maybe(0.4) else []
        return op_("xgroup setid", S("XGROUP", "SETID", key, group, q.pick(["$", "0", q.some_id(key)]), *entries))
    if r < 82:
        return op_("xgroup delconsumer", S("XGROUP", "DELCONSUMER", key, group, consumer))
    if r < 83:
        return op_("xgroup createconsumer", create)
    if r < 85:
        return op_("xgroup create", S("XGROUP", "CREATE", key, group, q.pick(["$", "0", q.some_id(key)]),
                                      *(["MKSTREAM"] if q.maybe(0.5) else [])))
    if r < 86:
        return op_("xgroup destroy", S("XGROUP", "DESTROY", key, group))
    if r < 92:
        if q.maybe(0.3):
            return op_("xpending", view("XPENDING", key, group, compare=XPENDING_IDLE))
        idle = ["IDLE", "3600000"] if q.maybe(0.2) else []
        who = [consumer] if q.maybe(0.3) else []
        return op_("xpending", view("XPENDING", key, group, *idle, q.bound(key), q.pick(["+", q.bound(key)]),
                                    str(q.pick([1, 3, 10, 100])), *who, compare=XPENDING_IDLE))
    if r < 96:
        return op_("xinfo groups", view("XINFO", "GROUPS", key))
    if r < 98:
        return op_("xinfo consumers", view("XINFO", "CONSUMERS", key, group, compare=XINFO_CONSUMERS))
    if r < 99:
        return op_("xinfo stream", view("XINFO", "STREAM", key, compare=XINFO_STREAM))
    return op_("xinfo stream full", view("XINFO", "STREAM", key, "FULL", "COUNT", "0", compare=XINFO_STREAM_FULL))


def group_sequence(seed: int, length: int, protocol: int = 2) -> list:
    q = GroupSequence(seed)
    ops = [Op([S("HELLO", "3", compare=HELLO)], "hello")] if protocol == 3 else []
    ops.append(Op([S("XGROUP", "CREATE", "s", "g1", "$", "MKSTREAM"), S("XGROUP", "CREATE", "s", "g2", "0"),
                   S("XGROUP", "CREATE", "t", "g1", "$", "MKSTREAM"), S("XGROUP", "CREATE", "t", "g2", "$")], "groups"))
    ops += [_random_op(q) for _ in range(length)]
    final = [S("XINFO", "STREAM", key, "FULL", "COUNT", "0", compare=XINFO_STREAM_FULL) for key in RANDOM_KEYS]
    final += [S("XPENDING", key, group, "-", "+", "1000", compare=XPENDING_IDLE) for key in RANDOM_KEYS
              for group in RANDOM_GROUPS]
    for step in final:
        step.readonly = True
    ops.append(Op(final, "final state"))
    return ops


@pytest.mark.parametrize("protocol,seed", stream_seeds("GOBLIN_GROUP_SEEDS", RANDOM_SEEDS, RANDOM_RESP3_SEEDS),
                         ids=lambda x: str(x))
def test_random_group_sequence(pair, shrink_budget, reported_mismatches, protocol, seed):
    ops = group_sequence(seed, RANDOM_OPS, protocol)
    run_stream(pair, ops, family="stream groups", seed=seed, protocol=protocol, seeds_env="GOBLIN_GROUP_SEEDS",
               test_path="tests/differential/test_stream_groups.py", selector=f"{protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


def test_random_group_sequences_cover_every_kind_of_op():
    kinds = {op.source for seed in RANDOM_SEEDS for op in group_sequence(seed, RANDOM_OPS)}
    assert kinds >= {"xadd", "xreadgroup new", "xreadgroup in multi", "xreadgroup history", "xack", "xclaim",
                     "xautoclaim", "xdel", "xtrim", "xgroup setid", "xgroup delconsumer", "xgroup createconsumer",
                     "xgroup create", "xgroup destroy", "xpending", "xinfo groups", "xinfo consumers",
                     "xinfo stream", "xinfo stream full"}, kinds


# ---- Redis 7.2's behaviour, on the server under test alone ---------------------------------------------

NOGROUP_S_G = b"-NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option\r\n"


class Goblin:
    """A control connection and helpers for the single-server checks."""

    def __init__(self, server):
        self.server = server
        self.control = server.raw()
        assert self.control.call("FLUSHALL").raw == b"+OK\r\n"

    def call(self, *args):
        return self.control.call(*args)

    def ok(self, *args):
        reply = self.call(*args)
        assert not reply.is_error, f"{args}: {reply!r}"
        return reply

    def waiter(self):
        conn = self.server.raw()
        return conn, int(conn.call("CLIENT", "ID").value)

    def block(self, conn, client_id, *args):
        conn.send(encode_command(*args))
        wait_for(lambda: client_id in blocked_ids(self.control), timeout=READ_SECONDS, what="the reader to block")

    def blocked(self, client_id) -> bool:
        return client_id in blocked_ids(self.control)

    def consumers(self, key, group) -> dict:
        """XINFO CONSUMERS as {name: {field: value}}."""
        return {c[b"name"]: c for c in (_record(x) for x in self.ok("XINFO", "CONSUMERS", key, group).value)}

    def full_consumers(self, key, group) -> dict:
        info = _record(self.ok("XINFO", "STREAM", key, "FULL"))
        for g in info[b"groups"].value:
            g = _record(g)
            if g[b"name"] == group.encode():
                return {c[b"name"]: c for c in (_record(x) for x in g[b"consumers"].value)}
        raise AssertionError(f"no group {group}")

    def later_than(self, ms: int):
        """Waits until the server's clock has passed `ms` (so a time written later must differ)."""
        def now():
            seconds, micros = (int(x.value) for x in self.call("TIME").value)
            return seconds * 1000 + micros // 1000
        wait_for(lambda: now() > ms, timeout=READ_SECONDS, what="the server clock to move on")

    def close(self):
        self.control.close()


def _record(reply) -> dict:
    pairs = record_pairs(reply)
    assert pairs is not None, reply
    return {k.value: (v.value if v.kind in ":$" else v) for k, v in pairs}


@pytest.fixture
def goblin(diff_goblin):
    g = Goblin(diff_goblin)
    yield g
    g.close()


@pytest.mark.redis72
@pytest.mark.parametrize("change,reply", [
    ((("DEL", "s"),), NOGROUP_S_G),
    ((("UNLINK", "s"),), NOGROUP_S_G),
    ((("FLUSHALL",),), NOGROUP_S_G),
    ((("FLUSHDB", "ASYNC"),), NOGROUP_S_G),
    ((("XGROUP", "DESTROY", "s", "g"),), NOGROUP_S_G),
    ((("PEXPIREAT", "s", "1"),), NOGROUP_S_G),
    ((("SWAPDB", "0", "1"),), NOGROUP_S_G),
    ((("XADD", "t", "9-0", "f", "v"), ("RENAME", "t", "s")), NOGROUP_S_G),
    ((("SET", "s", "x"),), WRONGTYPE),
    ((("MULTI",), ("DEL", "s"), ("SADD", "s", "m"), ("EXEC",)), WRONGTYPE),
    ((("RPUSH", "t", "x"), ("RENAME", "t", "s")), WRONGTYPE),
], ids=["del", "unlink", "flushall", "flushdb", "destroy", "expired", "swapdb", "renamed-without-the-group", "set",
        "retyped-in-multi", "renamed-list"])
def test_redis72_a_waiting_reader_loses_its_key_or_group(goblin, change, reply):
    """7.2 runs the woken XREADGROUP again, which finds no stream or no group (NOGROUP) or another
    type (WRONGTYPE); 7.0 answers "UNBLOCKED the stream key no longer exists" or "NOGROUP the
    consumer group this client was blocked on no longer exists"."""
    goblin.ok("XADD", "s", "1-0", "f", "v")
    goblin.ok("XGROUP", "CREATE", "s", "g", "$")
    conn, client_id = goblin.waiter()
    with conn:
        goblin.block(conn, client_id, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        for command in change:
            goblin.ok(*command)
        assert conn.read_reply(timeout=READ_SECONDS).raw == reply
        assert not goblin.blocked(client_id)
        assert conn.call("PING").raw == b"+PONG\r\n"


@pytest.mark.redis72
def test_redis72_a_woken_reader_that_finds_nothing_waits_again(goblin):
    """An entry added and deleted in one transaction wakes the reader, which finds nothing new and
    blocks again (7.0 answers an empty list for the stream); the next entry is served."""
    goblin.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    conn, client_id = goblin.waiter()
    with conn:
        goblin.block(conn, client_id, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
        assert [goblin.call(*c).raw for c in (("MULTI",), ("XADD", "s", "1-0", "f", "v"), ("XDEL", "s", "1-0"),
                                               ("EXEC",))][-1] == b"*2\r\n$3\r\n1-0\r\n:1\r\n"
        assert goblin.blocked(client_id)
        assert not conn.has_pending_bytes()
        goblin.ok("XADD", "s", "2-0", "f", "w")
        assert conn.read_reply(timeout=READ_SECONDS).raw == \
            b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nw\r\n"


@pytest.mark.redis72
def test_redis72_a_woken_reader_serves_every_stream_of_its_call(goblin):
    """7.2 runs the woken command again from the start: waiting on s and t, when one transaction
    adds to t and then to s, the reply holds both streams in the command's order (7.0 serves t,
    the key signalled first, alone)."""
    for key in ("s", "t"):
        goblin.ok("XGROUP", "CREATE", key, "g", "$", "MKSTREAM")
    conn, client_id = goblin.waiter()
    with conn:
        goblin.block(conn, client_id, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", "t", ">", ">")
        for command in (("MULTI",), ("XADD", "t", "1-0", "f", "t"), ("XADD", "s", "2-0", "f", "s"), ("EXEC",)):
            goblin.ok(*command)
        assert conn.read_reply(timeout=READ_SECONDS).raw == (
            b"*2\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\ns\r\n"
            b"*2\r\n$1\r\nt\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nt\r\n")


@pytest.mark.redis72
def test_redis72_consumers_are_created_eagerly(goblin):
    """7.2: XREADGROUP (even one that reads nothing, or blocks), XCLAIM and XAUTOCLAIM (even ones
    that claim nothing) create their consumer; 7.0 only when something is read or claimed. A
    command refused by its argument checks creates nobody."""
    goblin.ok("XADD", "s", "1-0", "f", "v")
    goblin.ok("XGROUP", "CREATE", "s", "g", "$")
    goblin.ok("XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">")
    goblin.ok("XCLAIM", "s", "g", "claimer", "0", "1-0")
    goblin.ok("XAUTOCLAIM", "s", "g", "autoclaimer", "0", "0")
    for refused in (("XREADGROUP", "GROUP", "g", "bad1", "STREAMS", "s", "x"),
                    ("XREADGROUP", "GROUP", "nog", "bad2", "STREAMS", "s", ">"),
                    ("XCLAIM", "s", "g", "bad3", "x", "1-0"), ("XCLAIM", "s", "g", "bad4", "0", "1-0", "IDLE"),
                    ("XAUTOCLAIM", "s", "g", "bad5", "0", "0", "COUNT", "0")):
        assert goblin.call(*refused).is_error, refused
    conn, client_id = goblin.waiter()
    with conn:
        goblin.block(conn, client_id, "XREADGROUP", "GROUP", "g", "waiter", "BLOCK", "0", "STREAMS", "s", ">")
        consumers = goblin.consumers("s", "g")
        assert sorted(consumers) == [b"autoclaimer", b"claimer", b"reader", b"waiter"]
        for c in consumers.values():
            assert c[b"pending"] == 0 and c[b"inactive"] == -1 and 0 <= c[b"idle"] < 5000
        goblin.ok("CLIENT", "UNBLOCK", str(client_id))
        assert conn.read_reply(timeout=READ_SECONDS).raw == b"*-1\r\n"
    assert [goblin.call("XGROUP", "CREATECONSUMER", "s", "g", c).raw for c in ("reader", "waiter", "bad1")] == \
        [b":0\r\n", b":0\r\n", b":1\r\n"]


@pytest.mark.redis72
def test_redis72_active_time_and_inactive(goblin):
    """active-time (XINFO STREAM FULL) and inactive (XINFO CONSUMERS) are new in 7.2: -1 until the
    consumer's PEL grows by a read of new entries without NOACK, an XCLAIM or an XAUTOCLAIM that
    claims something; history reads, NOACK reads and claims of deleted entries leave it alone,
    while seen-time moves on every attempt. One command writes one timestamp to both fields."""
    for n in range(1, 7):
        goblin.ok("XADD", "s", f"{n}-0", "f", "v")
    goblin.ok("XGROUP", "CREATE", "s", "g", "0")
    goblin.ok("XGROUP", "CREATECONSUMER", "s", "g", "alice")
    full = goblin.full_consumers("s", "g")[b"alice"]
    assert full[b"active-time"] == -1 and goblin.consumers("s", "g")[b"alice"][b"inactive"] == -1
    goblin.ok("XREADGROUP", "GROUP", "g", "alice", "NOACK", "COUNT", "1", "STREAMS", "s", ">")
    goblin.ok("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert goblin.full_consumers("s", "g")[b"alice"][b"active-time"] == -1

    def active_and_seen():
        c = goblin.full_consumers("s", "g")[b"alice"]
        return c[b"active-time"], c[b"seen-time"]

    goblin.ok("XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">")  # 2-0 and 3-0
    active, seen = active_and_seen()
    assert active == seen > 0
    inactive = goblin.consumers("s", "g")[b"alice"][b"inactive"]
    assert 0 <= inactive < 5000
    for quiet in (("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"),
                  ("XREADGROUP", "GROUP", "g", "alice", "NOACK", "COUNT", "1", "STREAMS", "s", ">"),  # 4-0
                  ("XDEL", "s", "2-0"), ("XCLAIM", "s", "g", "alice", "0", "2-0"),
                  ("XCLAIM", "s", "g", "alice", "3600000", "3-0")):
        goblin.later_than(seen)
        goblin.ok(*quiet)
        now_active, now_seen = active_and_seen()
        assert now_active == active, quiet
        if quiet[0] != "XDEL":
            assert now_seen > seen, quiet
        seen = now_seen
    for busy in (("XCLAIM", "s", "g", "alice", "0", "3-0"), ("XAUTOCLAIM", "s", "g", "alice", "0", "0"),
                 ("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")):
        goblin.later_than(seen)
        goblin.ok(*busy)
        active, seen = active_and_seen()
        assert active == seen, busy
    goblin.ok("XDEL", "s", "3-0")
    goblin.later_than(seen)
    # 3-0 is dropped as deleted; 5-0 and 6-0 are too recent for an hour's idle time.
    assert goblin.call("XAUTOCLAIM", "s", "g", "alice", "3600000", "0", "JUSTID").py() == [b"0-0", [], [b"3-0"]]
    assert active_and_seen()[0] == active


@pytest.mark.redis72
def test_redis72_unbalanced_stream_lists(goblin):
    """7.2 names the command as called, and XREADGROUP's marker '>' (7.0: "XREAD" and '$' for both)."""
    goblin.ok("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert goblin.call("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">").raw == \
        b"-ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.\r\n"
    assert goblin.call("XREAD", "STREAMS", "s", "t", "0").raw == \
        b"-ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.\r\n"
