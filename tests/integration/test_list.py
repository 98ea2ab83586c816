"""Lists: every list command's replies and errors, RESP3 shapes, a seeded model test, large lists and
1 MB elements, Redis 7.2's listpack/quicklist encodings and their config, persistence (snapshot,
DEBUG RELOAD, the AOF and its rewrite, a Redis AOF directory loaded by the server under test),
keyspace commands on lists (COPY, RENAME, MOVE, SWAPDB, SCAN TYPE, DEBUG DIGEST, MEMORY USAGE), WATCH,
GOBLIN.STATS and the snapshot checker, redis-cli and redis-benchmark.

Expected replies are Redis's, checked against Debian's redis-server 7.0 where 7.0 and 7.2 agree.
Tests marked `redis72` check what 7.2 changed (small lists report `listpack`, the encoding follows
list-max-listpack-size both ways, LPOS RANK's LONG_MIN range); tests marked `goblin` check Goblin's
own GOBLIN.STATS and --check-snapshot. The encoding rules asserted here are 7.2's t_list.c: a
listpack becomes a quicklist when a write would take it past list-max-listpack-size (entries when
positive, with an 8 KB safety cap; bytes when negative: -1 4 KB ... -5 64 KB); a quicklist of one
node goes back to a listpack when a removal leaves it at half the limit or under; a list loaded from
a snapshot, or built by SORT STORE, gets the encoding its size calls for.
"""

from __future__ import annotations

import os
import random
import subprocess

import pytest
import redis

from support.expect import (NOT_INTEGER, SYNTAX, WRONGTYPE, arity, arr, bulk, bulks, err, integer, nil,
                            null_array, ok, resp3_null, run_steps)
from support.resp import ReplyErrorValue, encode_command
from support.server import (REDIS_BENCHMARK, REDIS_CLI, REFERENCE_BINARY, ServerProcess, goblin_binary, run_until_exit,
                            wait_for)

EMPTY = b"*0\r\n"
OUT_OF_RANGE = err("ERR index out of range")
NO_SUCH_KEY = err("ERR no such key")
MUST_BE_POSITIVE = err("ERR value is out of range, must be positive")
RANK_ZERO = err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
                "negative to start from the end of the list")


def encoding(r, key) -> bytes:
    return r.object("encoding", key)


def resp3(server):
    conn = server.raw()
    assert conn.call("HELLO", "3").kind == "%"
    return conn


@pytest.fixture
def list_config(r):
    """Restores the list settings a test changes."""
    saved = {name: r.config_get(name)[name] for name in ("list-max-listpack-size", "list-compress-depth")}
    yield r
    for name, value in saved.items():
        r.config_set(name, value)


# ---- every command's replies ----------------------------------------------------------------------

def test_push_pop_and_lengths(raw):
    run_steps(raw, [
        ("LPUSH l a b c", integer(3)),
        ("LRANGE l 0 -1", bulks("c", "b", "a")),        # each element goes to the head in turn
        ("RPUSH l d e", integer(5)),
        ("LRANGE l 0 -1", bulks("c", "b", "a", "d", "e")),
        ("LPUSHX l z", integer(6)),
        ("RPUSHX l y x", integer(8)),
        ("LPUSHX missing a", integer(0)),
        ("RPUSHX missing a b", integer(0)),
        ("EXISTS missing", integer(0)),
        ("LLEN l", integer(8)),
        ("LLEN missing", integer(0)),
        ("LPOP l", bulk("z")),
        ("RPOP l", bulk("x")),
        ("LPOP l 2", bulks("c", "b")),
        ("RPOP l 2", bulks("y", "e")),                  # from the tail, tail first
        ("LPOP l 0", EMPTY),
        ("RPOP l 0", EMPTY),
        ("LRANGE l 0 -1", bulks("a", "d")),
        ("RPOP l 100", bulks("d", "a")),
        ("EXISTS l", integer(0)),                       # the last pop deleted the key
        ("LPOP l", nil),
        ("LPOP l 1", null_array),
        ("LPOP l 0", null_array),                       # a missing key is not an empty list
        ("RPOP l 3", null_array),
        ("RPUSH one only", integer(1)),
        ("LPOP one 1", bulks("only")),                  # with a count the reply is an array
        ("EXISTS one", integer(0)),
    ])


def test_index_set_insert(raw):
    run_steps(raw, [
        ("RPUSH l a b c", integer(3)),
        ("LINDEX l 0", bulk("a")),
        ("LINDEX l 2", bulk("c")),
        ("LINDEX l -1", bulk("c")),
        ("LINDEX l -3", bulk("a")),
        ("LINDEX l 3", nil),
        ("LINDEX l -4", nil),
        ("LINDEX l 9223372036854775807", nil),
        ("LINDEX l -9223372036854775808", nil),
        ("LINDEX missing 0", nil),
        ("LSET l 1 B", ok),
        ("LSET l -1 C", ok),
        ("LSET l 3 x", OUT_OF_RANGE),
        ("LSET l -4 x", OUT_OF_RANGE),
        ("LSET missing 0 x", NO_SUCH_KEY),
        ("LRANGE l 0 -1", bulks("a", "B", "C")),
        ("LINSERT l BEFORE a first", integer(4)),
        ("LINSERT l after C last", integer(5)),
        ("LINSERT l AfTeR B mid", integer(6)),
        ("LINSERT l BEFORE nope x", integer(-1)),
        ("LINSERT missing BEFORE a x", integer(0)),
        ("EXISTS missing", integer(0)),
        ("LRANGE l 0 -1", bulks("first", "a", "B", "mid", "C", "last")),
        ("RPUSH d x y x", integer(3)),
        ("LINSERT d AFTER x after-first-x", integer(4)),  # the first match from the head
        ("LRANGE d 0 -1", bulks("x", "after-first-x", "y", "x")),
    ])


def test_range_and_trim(raw):
    run_steps(raw, [
        ("RPUSH l 0 1 2 3 4 5 6 7 8 9", integer(10)),
        ("LRANGE l 0 0", bulks("0")),
        ("LRANGE l 2 4", bulks("2", "3", "4")),
        ("LRANGE l -3 -1", bulks("7", "8", "9")),
        ("LRANGE l -100 1", bulks("0", "1")),
        ("LRANGE l 8 100", bulks("8", "9")),
        ("LRANGE l 5 4", EMPTY),
        ("LRANGE l 10 20", EMPTY),
        ("LRANGE l -1 -2", EMPTY),
        ("LRANGE l 0 -11", EMPTY),
        ("LRANGE l -9223372036854775808 9223372036854775807",
         bulks("0", "1", "2", "3", "4", "5", "6", "7", "8", "9")),
        ("LRANGE missing 0 -1", EMPTY),
        ("LTRIM l 1 -2", ok),
        ("LRANGE l 0 -1", bulks("1", "2", "3", "4", "5", "6", "7", "8")),
        ("LTRIM l -3 100", ok),
        ("LRANGE l 0 -1", bulks("6", "7", "8")),
        ("LTRIM l 0 -1", ok),
        ("LLEN l", integer(3)),
        ("LTRIM missing 0 1", ok),
        ("EXISTS missing", integer(0)),
        ("LTRIM l 2 1", ok),                            # an empty range empties the list
        ("EXISTS l", integer(0)),
        ("RPUSH l a b", integer(2)),
        ("LTRIM l 5 10", ok),
        ("EXISTS l", integer(0)),
    ])


def test_lrem(raw):
    run_steps(raw, [
        ("RPUSH l a b a c a b a", integer(7)),
        ("LREM l 2 a", integer(2)),                     # the first two from the head
        ("LRANGE l 0 -1", bulks("b", "c", "a", "b", "a")),
        ("LREM l -1 b", integer(1)),                    # the last one
        ("LRANGE l 0 -1", bulks("b", "c", "a", "a")),
        ("LREM l 0 a", integer(2)),                     # all of them
        ("LRANGE l 0 -1", bulks("b", "c")),
        ("LREM l 0 zzz", integer(0)),
        ("LREM l 100 b", integer(1)),
        ("LREM l -100 c", integer(1)),
        ("EXISTS l", integer(0)),
        ("LREM missing 0 a", integer(0)),
    ])


def test_lpos(raw):
    run_steps(raw, [
        ("RPUSH l a b c 1 2 3 c c", integer(8)),
        ("LPOS l c", integer(2)),
        ("LPOS l zzz", nil),
        ("LPOS l c RANK 2", integer(6)),
        ("LPOS l c RANK -1", integer(7)),
        ("LPOS l c RANK -3", integer(2)),
        ("LPOS l c RANK 4", nil),
        ("LPOS l c RANK -4", nil),
        ("LPOS l c COUNT 0", arr(integer(2), integer(6), integer(7))),
        ("LPOS l c COUNT 2", arr(integer(2), integer(6))),
        ("LPOS l c COUNT 2 RANK -1", arr(integer(7), integer(6))),
        ("LPOS l c RANK 2 COUNT 5", arr(integer(6), integer(7))),
        ("LPOS l zzz COUNT 1", EMPTY),
        ("LPOS l c MAXLEN 2", nil),                     # only the first two elements are compared
        ("LPOS l c MAXLEN 3", integer(2)),
        ("LPOS l c MAXLEN 1 RANK -1", integer(7)),
        ("LPOS l c COUNT 0 MAXLEN 7", arr(integer(2), integer(6))),
        ("LPOS l 1", integer(3)),
        ("LPOS l c rank 1 count 1 maxlen 0", arr(integer(2))),
        ("LPOS missing a", nil),
        ("LPOS missing a COUNT 0", EMPTY),
        ("LPOS l c RANK 9223372036854775807", nil),
        ("LPOS l c RANK -9223372036854775807", nil),
    ])


def test_lmove_and_rpoplpush(raw):
    run_steps(raw, [
        ("RPUSH src a b c d", integer(4)),
        ("LMOVE src dst LEFT RIGHT", bulk("a")),
        ("LMOVE src dst RIGHT LEFT", bulk("d")),
        ("LMOVE src dst left left", bulk("b")),
        ("LMOVE src dst right right", bulk("c")),
        ("EXISTS src", integer(0)),
        ("LRANGE dst 0 -1", bulks("b", "d", "a", "c")),
        ("LMOVE dst dst LEFT RIGHT", bulk("b")),       # rotation of one list
        ("LRANGE dst 0 -1", bulks("d", "a", "c", "b")),
        ("LMOVE dst dst RIGHT LEFT", bulk("b")),
        ("LRANGE dst 0 -1", bulks("b", "d", "a", "c")),
        ("RPOPLPUSH dst other", bulk("c")),
        ("RPOPLPUSH dst dst", bulk("a")),
        ("LRANGE dst 0 -1", bulks("a", "b", "d")),
        ("LRANGE other 0 -1", bulks("c")),
        ("LMOVE missing dst LEFT LEFT", nil),
        ("RPOPLPUSH missing dst", nil),
        ("EXISTS missing", integer(0)),
        ("RPUSH one x", integer(1)),
        ("RPOPLPUSH one one", bulk("x")),               # a one-element rotation keeps the key
        ("LRANGE one 0 -1", bulks("x")),
    ])


def test_lmpop(raw):
    run_steps(raw, [
        ("RPUSH a 1 2 3", integer(3)),
        ("RPUSH b x y", integer(2)),
        ("LMPOP 2 missing a LEFT", arr(bulk("a"), bulks("1"))),
        ("LMPOP 2 a b RIGHT COUNT 10", arr(bulk("a"), bulks("3", "2"))),
        ("EXISTS a", integer(0)),
        ("LMPOP 3 a missing b left count 1", arr(bulk("b"), bulks("x"))),
        ("LMPOP 1 b LEFT COUNT 9223372036854775807", arr(bulk("b"), bulks("y"))),
        ("LMPOP 2 a b LEFT", null_array),
        ("LMPOP 1 a RIGHT COUNT 5", null_array),
    ])


def test_number_like_elements_come_back_byte_for_byte(raw):
    # A listpack stores integer-looking strings as integers; only canonical forms may take that path.
    elements = ["0", "-0", "007", "+1", " 1", "1 ", "1.0", "0x1", "1e3", "-1", "12345678901234",
                "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                "-9223372036854775809", "18446744073709551616", "00", "-", "", "127", "128", "-128",
                "-129", "32767", "32768", "8388607", "8388608", "2147483647", "2147483648", "4294967296"]
    assert raw.call("RPUSH", "l", *elements).raw == integer(len(elements))
    assert raw.call("LRANGE", "l", "0", "-1").raw == bulks(*elements)
    for i, element in enumerate(elements):
        assert raw.call("LINDEX", "l", i).raw == bulk(element)
        assert raw.call("LPOS", "l", element).raw == integer(elements.index(element))
    assert raw.call("LPOS", "l", "1").raw == nil        # "+1", " 1", "1.0"... are not 1
    assert raw.call("LREM", "l", "0", "-0").raw == integer(1)
    assert raw.call("LPOS", "l", "0").raw == integer(0)
    assert raw.call("LINSERT", "l", "AFTER", "007", "7").raw == integer(len(elements))
    assert raw.call("LINDEX", "l", "2").raw == bulk("7")
    assert raw.call("LSET", "l", "0", "-0").raw == ok
    assert raw.call("LPOP", "l").raw == bulk("-0")
    assert raw.call("RPOP", "l", "3").raw == bulks("4294967296", "2147483648", "2147483647")


def test_binary_and_empty_elements(r):
    binary = [bytes(range(256)), b"\x00", b"\r\n", b"*1\r\n$1\r\nx\r\n", b"", b"\xff" * 3, "é€😀".encode()]
    assert r.rpush("b", *binary) == len(binary)
    assert r.lrange("b", 0, -1) == binary
    assert r.lpos("b", b"") == 4
    assert r.lpos("b", b"\x00") == 1
    assert r.lrem("b", 0, b"") == 1
    assert r.linsert("b", "BEFORE", b"\r\n", b"") == len(binary)
    assert r.lindex("b", 2) == b""
    assert r.rpush("e", "", "", "") == 3
    assert r.lrange("e", 0, -1) == [b"", b"", b""]
    assert r.lpop("e") == b"" and r.llen("e") == 2
    assert r.lrem("e", 0, "") == 2 and r.exists("e") == 0


# ---- errors --------------------------------------------------------------------------------------

LIST_COMMANDS_ON_A_STRING = [
    "LPUSH s a", "RPUSH s a", "LPUSHX s a", "RPUSHX s a", "LPOP s", "LPOP s 2", "RPOP s", "RPOP s 0",
    "LLEN s", "LINDEX s 0", "LSET s 0 a", "LSET s x a", "LINSERT s BEFORE a b", "LRANGE s 0 -1",
    "LTRIM s 0 1", "LREM s 0 a", "LPOS s a", "LPOS s a COUNT 0", "LMOVE s l LEFT LEFT",
    "LMOVE l s LEFT LEFT", "RPOPLPUSH s l", "RPOPLPUSH l s", "LMPOP 1 s LEFT", "LMPOP 2 missing s LEFT",
    "BLPOP s 0", "BRPOP missing s 0", "BLMOVE s l LEFT LEFT 0", "BLMOVE l s LEFT LEFT 0",
    "BRPOPLPUSH s l 0", "BRPOPLPUSH l s 0", "BLMPOP 0 1 s LEFT",
]


@pytest.mark.parametrize("command", LIST_COMMANDS_ON_A_STRING)
def test_list_commands_on_a_string_key(raw, command):
    raw.call("SET", "s", "v")
    raw.call("RPUSH", "l", "kept")
    assert raw.call(*command.split()).raw == WRONGTYPE
    assert raw.call("GET", "s").raw == bulk("v")
    assert raw.call("LRANGE", "l", "0", "-1").raw == bulks("kept")


def test_other_commands_on_a_list_key(raw):
    raw.call("RPUSH", "l", "a")
    for command in ("GET l", "INCR l", "APPEND l x", "STRLEN l", "SADD l x", "HSET l f v", "ZADD l 1 m",
                    "SMEMBERS l", "HGETALL l", "ZRANGE l 0 -1", "GETRANGE l 0 1", "SETRANGE l 0 x"):
        assert raw.call(*command.split()).raw == WRONGTYPE, command
    assert raw.call("SET", "l", "now-a-string").raw == ok  # SET replaces any type
    assert raw.call("TYPE", "l").raw == b"+string\r\n"


def test_which_argument_is_checked_first(raw):
    # Redis checks some arguments before looking the key up and others after; the order shows.
    raw.call("SET", "s", "v")
    run_steps(raw, [
        ("LINDEX missing notanint", nil),               # key first
        ("LINDEX s notanint", WRONGTYPE),
        ("LSET missing notanint x", NO_SUCH_KEY),
        ("LSET s notanint x", WRONGTYPE),
        ("LRANGE missing x 1", NOT_INTEGER),            # indexes first
        ("LRANGE s 0 x", NOT_INTEGER),
        ("LTRIM s x 1", NOT_INTEGER),
        ("LREM s x a", NOT_INTEGER),
        ("LPOP s -1", MUST_BE_POSITIVE),
        ("LPOP missing x", MUST_BE_POSITIVE),       # not an integer: the same text
        ("LINSERT s MIDDLE a b", SYNTAX),
        ("LINSERT missing MIDDLE a b", SYNTAX),
        ("LPOS s a RANK 0", RANK_ZERO),
        ("LMOVE s l UP LEFT", SYNTAX),
        ("LMOVE missing s LEFT LEFT", nil),             # an empty source ends it before the destination
        ("RPOPLPUSH missing s", nil),
        ("LMPOP 1 s FRONT", SYNTAX),
        ("LMPOP 2 missing s LEFT COUNT 0", err("ERR count should be greater than 0")),
    ])


def test_bad_numbers(raw):
    raw.call("RPUSH", "l", "a", "b", "c")
    run_steps(raw, [
        ("LINDEX l x", NOT_INTEGER),
        ("LINDEX l 1.0", NOT_INTEGER),
        ("LINDEX l 9223372036854775808", NOT_INTEGER),
        ("LINDEX l -9223372036854775809", NOT_INTEGER),
        ("LINDEX l ''", NOT_INTEGER),
        ("LINDEX l ' 1'", NOT_INTEGER),
        ("LINDEX l 0x1", NOT_INTEGER),
        ("LINDEX l 01", NOT_INTEGER),                   # integers in Redis's strict form only
        ("LINDEX l 00", NOT_INTEGER),
        ("LINDEX l -0", NOT_INTEGER),
        ("LINDEX l +1", NOT_INTEGER),
        ("LRANGE l -0 -1", NOT_INTEGER),
        ("LSET l -0 z", NOT_INTEGER),
        ("LREM l +1 a", NOT_INTEGER),
        ("LPOP l 01", MUST_BE_POSITIVE),
        ("LPOP l +1", MUST_BE_POSITIVE),
        ("LPOS l a RANK +1", NOT_INTEGER),
        ("LPOS l a COUNT 01", err("ERR COUNT can't be negative")),
        ("LMPOP 01 l LEFT", err("ERR numkeys should be greater than 0")),
        ("LMPOP 1 l LEFT COUNT +1", err("ERR count should be greater than 0")),
        ("LSET l x v", NOT_INTEGER),
        ("LSET l 99999999999999999999 v", NOT_INTEGER),
        ("LSET l 9223372036854775807 v", OUT_OF_RANGE),
        ("LSET l -9223372036854775808 v", OUT_OF_RANGE),
        ("LRANGE l 0 1e3", NOT_INTEGER),
        ("LRANGE l 9223372036854775808 1", NOT_INTEGER),
        ("LTRIM l 0 x", NOT_INTEGER),
        ("LREM l 1.5 a", NOT_INTEGER),
        ("LREM l 9223372036854775808 a", NOT_INTEGER),
        ("LPOP l -1", MUST_BE_POSITIVE),
        ("RPOP l -9223372036854775808", MUST_BE_POSITIVE),
        ("LPOP l 1.5", MUST_BE_POSITIVE),
        ("RPOP l 9223372036854775808", MUST_BE_POSITIVE),
        ("LPOS l a RANK x", NOT_INTEGER),
        ("LPOS l a RANK 0", RANK_ZERO),
        ("LPOS l a COUNT -1", err("ERR COUNT can't be negative")),
        ("LPOS l a COUNT x", err("ERR COUNT can't be negative")),
        ("LPOS l a MAXLEN -1", err("ERR MAXLEN can't be negative")),
        ("LPOS l a MAXLEN 9223372036854775808", err("ERR MAXLEN can't be negative")),
        ("LPOS l a RANK", SYNTAX),
        ("LPOS l a COUNT 1 FOO", SYNTAX),
        ("LPOS l a FOO 1", SYNTAX),
        ("LMPOP 0 l LEFT", err("ERR numkeys should be greater than 0")),
        ("LMPOP -1 l LEFT", err("ERR numkeys should be greater than 0")),
        ("LMPOP x l LEFT", err("ERR numkeys should be greater than 0")),
        ("LMPOP 2 l LEFT", SYNTAX),                     # LEFT is read as the second key
        ("LMPOP 5 l LEFT", SYNTAX),
        ("LMPOP 1 l MIDDLE", SYNTAX),
        ("LMPOP 1 l LEFT COUNT 0", err("ERR count should be greater than 0")),
        ("LMPOP 1 l LEFT COUNT -1", err("ERR count should be greater than 0")),
        ("LMPOP 1 l LEFT COUNT x", err("ERR count should be greater than 0")),
        ("LMPOP 1 l LEFT COUNT", SYNTAX),
        ("LMPOP 1 l LEFT COUNT 1 COUNT 1", SYNTAX),
        ("LMPOP 1 l LEFT EXTRA", SYNTAX),
        ("LMOVE l m LEFT UP", SYNTAX),
        ("LMOVE l m '' LEFT", SYNTAX),
        ("LINSERT l INSIDE a x", SYNTAX),
        ("LRANGE l 0 -1", bulks("a", "b", "c")),        # nothing above changed the list
    ])


@pytest.mark.redis72
def test_lpos_rank_long_min_is_out_of_range(raw):
    # 7.2 (redis#12167) bounds RANK to -LONG_MAX..LONG_MAX; 7.0 negated LONG_MIN and answered as -1.
    raw.call("RPUSH", "l", "a", "a")
    assert raw.call("LPOS", "l", "a", "RANK", "-9223372036854775808").raw == err(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")


def test_arity(raw):
    for command, name in [("LPUSH l", "lpush"), ("RPUSH", "rpush"), ("LPUSHX l", "lpushx"), ("RPUSHX l", "rpushx"),
                          ("LPOP", "lpop"), ("LPOP l 1 2", "lpop"), ("RPOP l 1 2", "rpop"), ("LLEN", "llen"),
                          ("LLEN l x", "llen"), ("LINDEX l", "lindex"), ("LSET l 0", "lset"),
                          ("LINSERT l BEFORE a", "linsert"), ("LRANGE l 0", "lrange"), ("LTRIM l 0", "ltrim"),
                          ("LREM l 0", "lrem"), ("LPOS l", "lpos"), ("LMOVE a b LEFT", "lmove"),
                          ("RPOPLPUSH a", "rpoplpush"), ("LMPOP 1", "lmpop"), ("BLPOP l", "blpop"),
                          ("BRPOP l", "brpop"), ("BLMOVE a b LEFT LEFT", "blmove"),
                          ("BRPOPLPUSH a b", "brpoplpush"), ("BLMPOP 0 1", "blmpop")]:
        assert raw.call(*command.split()).raw == arity(name), command


# ---- RESP3 ----------------------------------------------------------------------------------------

def test_resp3_null_replies(server, r):
    r.rpush("l", "a", "b")
    with resp3(server) as c:
        run_steps(c, [
            ("LPOP missing", resp3_null),
            ("LPOP missing 2", resp3_null),
            ("RPOP missing 0", resp3_null),
            ("LINDEX missing 0", resp3_null),
            ("LINDEX l 5", resp3_null),
            ("LPOS l zzz", resp3_null),
            ("LPOS missing a", resp3_null),
            ("LPOS missing a COUNT 0", EMPTY),
            ("LMPOP 1 missing LEFT", resp3_null),
            ("LMOVE missing l LEFT LEFT", resp3_null),
            ("RPOPLPUSH missing l", resp3_null),
            ("LPOP l 0", EMPTY),
            ("LRANGE missing 0 -1", EMPTY),
            ("LPOS l b COUNT 0", arr(integer(1))),
            ("LMPOP 1 l RIGHT", arr(bulk("l"), bulks("b"))),
            ("LPOP l 5", bulks("a")),
        ])


# ---- a seeded model test --------------------------------------------------------------------------

def redis_range(length: int, start: int, stop: int):
    """Redis's LRANGE/LTRIM index rules: (first, last) inclusive, or None for an empty range."""
    if start < 0:
        start += length
    if stop < 0:
        stop += length
    start = max(start, 0)
    if start > stop or start >= length:
        return None
    return start, min(stop, length - 1)


class ListModel:
    """Plain Python lists with Redis's list semantics; `apply` returns the reply as Reply.py() shows it."""

    def __init__(self):
        self.lists: dict[bytes, list] = {}

    def apply(self, cmd):
        name, key = cmd[0], cmd[1]
        lst = self.lists.get(key, [])
        reply = getattr(self, name.lower())(lst, *cmd[1:])
        for k in list(self.lists):
            if not self.lists[k]:
                del self.lists[k]
        return reply

    def _store(self, key, lst):
        self.lists[key] = lst

    def lpush(self, lst, key, *elements):
        self._store(key, list(reversed(elements)) + lst)
        return len(self.lists[key])

    def rpush(self, lst, key, *elements):
        self._store(key, lst + list(elements))
        return len(self.lists[key])

    def lpushx(self, lst, key, *elements):
        return self.lpush(lst, key, *elements) if lst else 0

    def rpushx(self, lst, key, *elements):
        return self.rpush(lst, key, *elements) if lst else 0

    def _pop(self, lst, key, count, head):
        if count is None:
            if not lst:
                return None
            value = lst.pop(0 if head else -1)
            return value
        if not lst:
            return None
        n = min(int(count), len(lst))
        if head:
            taken = lst[:n]
            del lst[:n]
        else:
            taken = lst[len(lst) - n:][::-1]
            del lst[len(lst) - n:]
        return taken

    def lpop(self, lst, key, count=None):
        return self._pop(lst, key, count, True)

    def rpop(self, lst, key, count=None):
        return self._pop(lst, key, count, False)

    def llen(self, lst, key):
        return len(lst)

    def lindex(self, lst, key, index):
        index = int(index)
        return lst[index] if -len(lst) <= index < len(lst) else None

    def lset(self, lst, key, index, value):
        index = int(index)
        if not lst:
            return ReplyErrorValue(b"ERR no such key")
        if not -len(lst) <= index < len(lst):
            return ReplyErrorValue(b"ERR index out of range")
        lst[index] = value
        return b"OK"

    def linsert(self, lst, key, where, pivot, value):
        if not lst:
            return 0
        if pivot not in lst:
            return -1
        at = lst.index(pivot) + (1 if where == "AFTER" else 0)
        lst.insert(at, value)
        return len(lst)

    def lrange(self, lst, key, start, stop):
        span = redis_range(len(lst), int(start), int(stop))
        return [] if span is None else lst[span[0]:span[1] + 1]

    def ltrim(self, lst, key, start, stop):
        span = redis_range(len(lst), int(start), int(stop))
        lst[:] = [] if span is None else lst[span[0]:span[1] + 1]
        return b"OK"

    def lrem(self, lst, key, count, value):
        count = int(count)
        order = range(len(lst)) if count >= 0 else range(len(lst) - 1, -1, -1)
        doomed = []
        for i in order:
            if lst[i] == value:
                doomed.append(i)
                if count and len(doomed) == abs(count):
                    break
        for i in sorted(doomed, reverse=True):
            del lst[i]
        return len(doomed)

    def lpos(self, lst, key, value, *options):
        opts = dict(zip(options[::2], (int(x) for x in options[1::2])))
        rank, count, maxlen = opts.get("RANK", 1), opts.get("COUNT"), opts.get("MAXLEN", 0)
        order = range(len(lst)) if rank > 0 else range(len(lst) - 1, -1, -1)
        matches, seen = [], 0
        for scanned, i in enumerate(order):
            if maxlen and scanned >= maxlen:
                break
            if lst[i] == value:
                seen += 1
                if seen >= abs(rank):
                    matches.append(i)
                    if count is None or (count and len(matches) >= count):
                        break
        if count is None:
            return matches[0] if matches else None
        return matches

    def lmove(self, lst, source, destination, wherefrom, whereto):
        if not lst:
            return None
        value = lst.pop(0 if wherefrom == "LEFT" else -1)
        dst = self.lists.setdefault(destination, [])
        if whereto == "LEFT":
            dst.insert(0, value)
        else:
            dst.append(value)
        return value

    def lmpop(self, lst, numkeys, *rest):
        keys, where = rest[:int(numkeys)], rest[int(numkeys)]
        count = int(rest[-1]) if "COUNT" in rest else 1
        for key in keys:
            found = self.lists.get(key)
            if found:
                return [key, self._pop(found, key, count, where == "LEFT")]
        return None


MODEL_KEYS = [b"ma", b"mb", b"mc"]


def random_command(rng: random.Random):
    def element():
        roll = rng.random()
        if roll < 0.55:
            return rng.choice([b"x", b"y", b"z", b"0", b"1", b"-1", b"", b"12345678901", b"007"])
        if roll < 0.8:
            return b"word-%d" % rng.randrange(40)
        if roll < 0.95:   # long and compressible, so compressed quicklist nodes happen
            return (b"long-%d-" % rng.randrange(5)) * rng.randrange(10, 120)
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))

    key = rng.choice(MODEL_KEYS)
    index = lambda: str(rng.randrange(-40, 40))      # noqa: E731
    op = rng.choices(["LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP", "LLEN", "LINDEX", "LSET",
                      "LINSERT", "LRANGE", "LTRIM", "LREM", "LPOS", "LMOVE", "LMPOP"],
                     weights=[14, 14, 2, 2, 6, 6, 2, 6, 6, 6, 6, 1, 4, 5, 6, 3])[0]
    if op in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
        return [op, key, *(element() for _ in range(rng.choice([1, 1, 2, 5, 20])))]
    if op in ("LPOP", "RPOP"):
        return [op, key] + ([] if rng.random() < 0.5 else [str(rng.choice([0, 1, 2, 7, 100]))])
    if op == "LLEN":
        return [op, key]
    if op == "LINDEX":
        return [op, key, index()]
    if op == "LSET":
        return [op, key, index(), element()]
    if op == "LINSERT":
        return [op, key, rng.choice(["BEFORE", "AFTER"]), element(), element()]
    if op == "LRANGE":
        return [op, key, index(), index()]
    if op == "LTRIM":
        return [op, key, str(rng.randrange(-5, 5)), str(rng.randrange(-3, 60))]
    if op == "LREM":
        return [op, key, str(rng.randrange(-3, 4)), element()]
    if op == "LPOS":
        options = []
        if rng.random() < 0.5:
            options += ["RANK", str(rng.choice([1, 2, -1, -2, 3]))]
        if rng.random() < 0.5:
            options += ["COUNT", str(rng.randrange(0, 4))]
        if rng.random() < 0.3:
            options += ["MAXLEN", str(rng.randrange(0, 30))]
        return [op, key, element(), *options]
    if op == "LMOVE":
        return [op, key, rng.choice(MODEL_KEYS), rng.choice(["LEFT", "RIGHT"]), rng.choice(["LEFT", "RIGHT"])]
    keys = rng.sample(MODEL_KEYS, rng.randrange(1, 4))
    return ["LMPOP", str(len(keys)), *keys, rng.choice(["LEFT", "RIGHT"]), "COUNT", str(rng.randrange(1, 6))]


@pytest.mark.parametrize("fill,depth,seed", [(-2, 0, 1), (4, 1, 2), (1, 2, 3), (-1, 1, 4)])
def test_random_commands_match_a_model(server, list_config, fill, depth, seed):
    """Thousands of seeded commands, the replies and then every list compared with Python lists.
    Tiny nodes (fill 1 or 4) and compressed inner nodes exercise the quicklist's split, merge and
    compression paths; -2 and -1 the byte limits."""
    r = list_config
    r.config_set("list-max-listpack-size", fill)
    r.config_set("list-compress-depth", depth)
    rng = random.Random(seed)
    model = ListModel()
    with server.raw() as conn:
        history = []
        for batch in range(30):
            commands = [random_command(rng) for _ in range(100)]
            replies = conn.pipeline(commands)
            for command, reply in zip(commands, replies):
                history.append(command)
                expected = model.apply(command)
                got = reply.py()
                assert got == expected, (f"seed {seed} command #{len(history)} {command!r}: expected "
                                         f"{expected!r}, got {got!r}; last commands {history[-8:]!r}")
            for key in MODEL_KEYS:
                got = conn.call("LRANGE", key, 0, -1).py()
                assert got == model.lists.get(key, []), f"seed {seed} after batch {batch}: {key!r} differs"
                assert conn.call("LLEN", key).value == len(model.lists.get(key, []))


# ---- large lists and large elements ---------------------------------------------------------------

def test_100k_element_list(r):
    n = 100_000
    model = [f"item:{i}" if i % 3 else str(i) for i in range(n)]
    pipe = r.pipeline(transaction=False)
    for start in range(0, n, 1000):
        pipe.rpush("big", *model[start:start + 1000])
    pipe.execute()
    assert r.llen("big") == n
    assert [x.decode() for x in r.lrange("big", 0, -1)] == model

    def check(what):
        assert r.llen("big") == len(model), what
        for at in (0, 1, 999, len(model) // 2, len(model) - 2, -1, -len(model)):
            assert r.lindex("big", at).decode() == model[at], (what, at)
        assert [x.decode() for x in r.lrange("big", 40000, 40099)] == model[40000:40100], what
        assert [x.decode() for x in r.lrange("big", -150, -1)] == model[-150:], what

    check("built")
    r.lset("big", 50000, "changed")
    model[50000] = "changed"
    r.lset("big", -3, "near-the-end")
    model[-3] = "near-the-end"
    assert r.linsert("big", "BEFORE", "item:70001", "inserted") == n + 1
    model.insert(70001, "inserted")
    assert r.lrem("big", 1, "item:30001") == 1
    model.remove("item:30001")
    assert r.lrem("big", -1, "item:5") == 1
    model.reverse()
    model.remove("item:5")
    model.reverse()
    check("edited")
    assert r.lpos("big", "changed") == model.index("changed")
    assert r.lpos("big", "item:99998", maxlen=1000) is None
    assert r.lpos("big", "item:99998", rank=-1, maxlen=1000) == model.index("item:99998")
    r.ltrim("big", 1000, -1001)
    model = model[1000:-1000]
    check("trimmed")
    assert [x.decode() for x in r.lpop("big", 500)] == model[:500]
    assert [x.decode() for x in r.rpop("big", 500)] == model[-500:][::-1]
    model = model[500:-500]
    check("popped")
    assert [x.decode() for x in r.lrange("big", 0, -1)] == model


def test_one_megabyte_elements(r, raw):
    mb = b"".join(b"%08d" % i for i in range(1 << 17))   # 1 MiB, not one repeated byte
    other = bytes(reversed(mb))
    assert r.rpush("h", "small", mb, "tail") == 3
    assert r.lrange("h", 0, -1) == [b"small", mb, b"tail"]
    assert r.lindex("h", 1) == mb
    assert r.lpos("h", mb) == 1
    assert r.lpos("h", other) is None
    assert r.lset("h", 0, other)
    assert r.linsert("h", "AFTER", mb, mb) == 4
    assert r.lrange("h", 0, -1) == [other, mb, mb, b"tail"]
    assert r.lrem("h", 0, mb) == 2
    assert r.lmove("h", "h2", "LEFT", "RIGHT") == other
    assert r.lrange("h2", 0, -1) == [other]
    assert r.rpush("h2", *[mb] * 5) == 6
    assert r.lrange("h2", 2, 3) == [mb, mb]
    assert r.lpop("h2", 2) == [other, mb]
    assert r.llen("h2") == 4
    five = mb * 5
    assert r.lpush("h3", five) == 1 and r.lindex("h3", 0) == five and r.rpop("h3") == five
    assert raw.call("DEBUG", "RELOAD", timeout=60).raw == ok
    assert r.lrange("h2", 0, -1) == [mb] * 4
    assert r.lrange("h", 0, -1) == [b"tail"]


# ---- encodings (Redis 7.2) ------------------------------------------------------------------------

@pytest.mark.redis72
def test_encoding_follows_entry_limit_both_ways(list_config):
    r = list_config
    r.config_set("list-max-listpack-size", 4)
    r.rpush("l", "a", "b", "c", "d")
    assert encoding(r, "l") == b"listpack"
    r.rpush("l", "e")
    assert encoding(r, "l") == b"quicklist"
    r.rpop("l")
    assert encoding(r, "l") == b"quicklist"          # 4 left: not under half the limit
    r.rpop("l")
    assert encoding(r, "l") == b"quicklist"          # 3 left
    r.rpop("l")
    assert encoding(r, "l") == b"listpack"           # 2 left: half of 4
    assert r.lrange("l", 0, -1) == [b"a", b"b"]
    r.rpush("m", *"abcdefghij")                      # created past the limit in one command
    assert encoding(r, "m") == b"quicklist"
    r.ltrim("m", 0, 1)
    assert encoding(r, "m") == b"listpack"
    r.rpush("n", *"abcd")
    r.linsert("n", "BEFORE", "a", "z")
    assert encoding(r, "n") == b"quicklist"
    assert r.lrem("n", 0, "z") == 1 and r.lrem("n", 0, "d") == 1
    assert encoding(r, "n") == b"quicklist"          # 3 left
    assert r.lrem("n", 0, "c") == 1
    assert encoding(r, "n") == b"listpack"
    r.rpush("o", *"abcd")
    r.lmove("p", "o", "LEFT", "LEFT")                # nothing to move
    assert encoding(r, "o") == b"listpack"
    r.rpush("p", "x")
    r.lmove("p", "o", "LEFT", "LEFT")
    assert encoding(r, "o") == b"quicklist"
    assert r.lmpop(1, "o", direction="LEFT", count=3) == [b"o", [b"x", b"a", b"b"]]
    assert encoding(r, "o") == b"listpack"
    r.config_set("list-max-ziplist-size", 0)         # the old name; 0 counts as 1 entry per node
    r.rpush("q", "a")
    assert encoding(r, "q") == b"listpack"
    r.rpush("q", "b")
    assert encoding(r, "q") == b"quicklist"


@pytest.mark.redis72
def test_encoding_follows_byte_limits(list_config):
    r = list_config
    r.config_set("list-max-listpack-size", -1)       # 4 KB
    r.rpush("l", "x" * 3000)
    assert encoding(r, "l") == b"listpack"
    r.rpush("l", "y" * 900)                           # about 3.9 KB in all
    assert encoding(r, "l") == b"listpack"
    r.rpush("l", "z" * 300)                           # about 4.2 KB
    assert encoding(r, "l") == b"quicklist"
    r.rpop("l")
    r.rpop("l")
    assert encoding(r, "l") == b"quicklist"          # 3 KB is over half of 4 KB
    r.lset("l", 0, "short")
    assert encoding(r, "l") == b"listpack"
    r.rpush("s", "x" * 3000, "a")
    r.lset("s", 1, "y" * 1200)                        # a replacement that grows it past 4 KB
    assert encoding(r, "s") == b"quicklist"
    r.config_set("list-max-listpack-size", -2)       # 8 KB, the default
    r.rpush("m", *["v" * 100] * 75)                  # about 7.7 KB
    assert encoding(r, "m") == b"listpack"
    r.rpush("m", *["v" * 100] * 5)                   # about 8.2 KB
    assert encoding(r, "m") == b"quicklist"
    r.config_set("list-max-listpack-size", -5)       # 64 KB
    r.rpush("n", *["w" * 1000] * 60)
    assert encoding(r, "n") == b"listpack"
    r.rpush("n", *["w" * 1000] * 6)
    assert encoding(r, "n") == b"quicklist"
    r.config_set("list-max-listpack-size", -100)     # below -5 counts as -5
    r.rpush("o", *["w" * 1000] * 60)
    assert encoding(r, "o") == b"listpack"
    r.config_set("list-max-listpack-size", 1000)     # an entry limit keeps an 8 KB safety cap
    r.rpush("p", *["u" * 100] * 50)
    assert encoding(r, "p") == b"listpack"
    r.rpush("p", *["u" * 100] * 40)
    assert encoding(r, "p") == b"quicklist"
    assert r.llen("p") == 90


@pytest.mark.redis72
def test_encoding_of_big_elements_and_defaults(r):
    r.rpush("small", "a", "b", "c")
    assert encoding(r, "small") == b"listpack"
    r.rpush("big", *range(20000))
    assert encoding(r, "big") == b"quicklist"
    r.rpush("fat", "a", "x" * 10000)                 # one element over 8 KB
    assert encoding(r, "fat") == b"quicklist"
    r.rpop("fat")
    assert encoding(r, "fat") == b"listpack"
    r.rpush("huge", "x" * (1 << 20))
    assert encoding(r, "huge") == b"quicklist"
    r.lset("huge", 0, "tiny")
    assert encoding(r, "huge") == b"listpack"
    r.copy("big", "big-copy")
    r.copy("small", "small-copy")
    assert encoding(r, "big-copy") == b"quicklist" and encoding(r, "small-copy") == b"listpack"


@pytest.mark.redis72
def test_sort_store_builds_a_list_of_the_best_encoding(r):
    r.rpush("src", 3, 1, 2)
    assert r.sort("src", store="small") == 3
    assert encoding(r, "small") == b"listpack" and r.lrange("small", 0, -1) == [b"1", b"2", b"3"]
    r.rpush("many", *range(20000))
    assert r.sort("many", desc=True, store="sorted") == 20000
    assert encoding(r, "sorted") == b"quicklist" and r.lindex("sorted", 0) == b"19999"


@pytest.mark.redis72
def test_reload_gives_each_list_its_best_encoding(list_config, raw):
    r = list_config
    r.config_set("list-max-listpack-size", 4)
    r.rpush("l", *"abcde")
    r.rpop("l", 2)
    assert encoding(r, "l") == b"quicklist"          # 3 entries: kept by the shrink hysteresis
    r.rpush("q", *"abcdefg")
    assert raw.call("DEBUG", "RELOAD").raw == ok
    assert encoding(r, "l") == b"listpack"           # loaded afresh, 3 entries fit one listpack
    assert encoding(r, "q") == b"quicklist"
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    r.config_set("list-max-listpack-size", 128)
    r.rpush("wide", *range(100))
    assert encoding(r, "wide") == b"listpack"
    r.config_set("list-max-listpack-size", 4)        # the limit falls under the list's size
    assert encoding(r, "wide") == b"listpack"        # a config change converts nothing by itself
    assert raw.call("DEBUG", "RELOAD").raw == ok
    assert encoding(r, "wide") == b"quicklist"       # 100 entries are over the limit now
    assert r.lrange("wide", 0, -1) == [b"%d" % i for i in range(100)]


def test_config_names_and_alias(list_config):
    r = list_config
    assert r.config_get("list-max-listpack-size") == {"list-max-listpack-size": "-2"}
    assert r.config_get("list-max-ziplist-size") == {"list-max-ziplist-size": "-2"}
    assert r.config_get("list-compress-depth") == {"list-compress-depth": "0"}
    assert r.config_set("list-max-ziplist-size", 16)
    assert r.config_get("list-max-listpack-size") == {"list-max-listpack-size": "16"}
    assert r.config_set("list-max-listpack-size", -3)
    assert r.config_get("list-max-ziplist-size") == {"list-max-ziplist-size": "-3"}
    assert r.config_set("list-compress-depth", 3)
    assert r.config_get("list-compress-depth") == {"list-compress-depth": "3"}
    both = r.config_get("list-max-*")
    assert both.get("list-max-listpack-size") == "-3"
    with pytest.raises(redis.ResponseError) as info:
        r.config_set("list-max-listpack-size", "abc")
    assert str(info.value) == ("CONFIG SET failed (possibly related to argument 'list-max-listpack-size') - "
                               "argument couldn't be parsed into an integer")
    with pytest.raises(redis.ResponseError) as info:
        r.config_set("list-compress-depth", -1)
    assert str(info.value) == ("CONFIG SET failed (possibly related to argument 'list-compress-depth') - "
                               "argument must be between 0 and 2147483647 inclusive")
    assert r.config_get("list-compress-depth") == {"list-compress-depth": "3"}


def test_compressed_and_tiny_nodes_read_back(list_config):
    r = list_config
    r.config_set("list-max-listpack-size", 2)
    r.config_set("list-compress-depth", 1)
    values = [b"%05d " % i + b"compressible " * (i % 40) for i in range(3000)]
    values[100::250] = [b"dup " * 30] * len(values[100::250])
    r.rpush("c", *values)
    assert r.lrange("c", 0, -1) == values
    assert r.lindex("c", 1500) == values[1500]
    assert r.lrange("c", 1000, 1009) == values[1000:1010]
    r.lset("c", 1501, "plain")
    values[1501] = b"plain"
    assert r.linsert("c", "AFTER", values[2000], "after-2000") == 3001
    values.insert(2001, b"after-2000")
    assert r.lrem("c", -2, b"dup " * 30) == 2
    doomed = [i for i, v in enumerate(values) if v == b"dup " * 30][-2:]
    values = [v for i, v in enumerate(values) if i not in doomed]
    assert r.lrange("c", 0, -1) == values
    assert r.lpos("c", b"dup " * 30, rank=-1) == max(i for i, v in enumerate(values) if v == b"dup " * 30)
    assert r.object("encoding", "c") == b"quicklist"


# ---- persistence ----------------------------------------------------------------------------------

def persistence_dataset(conn):
    """Lists of every shape in databases 0 and 3; returns nothing, the state is read back with dump_lists."""
    big = [b"item:%d" % i if i % 4 else b"%d" % i for i in range(12000)]
    commands = [("RPUSH", "small", "a", "", "1", "-0", "007", "9223372036854775808", "-9223372036854775808",
                 "é€"),
                ("RPUSH", "empties", "", "", ""),
                ("RPUSH", "binary", bytes(range(256)), b"\x00", b"\r\n", b"\xff\xfe")]
    commands += [("RPUSH", "big", *big[i:i + 1000]) for i in range(0, len(big), 1000)]
    commands += [("RPUSH", "wide", *[b"%04d" % i * 250 for i in range(60)]),   # 60 x 1000 bytes
                 ("RPUSH", "one-mb", b"m" * (1 << 20), b"after"),
                 ("RPUSH", "ttl", "x", "y"), ("PEXPIREAT", "ttl", "4102444800000"),
                 ("SELECT", "3"), ("RPUSH", "small", "in-db-3"), ("RPUSH", "big", *big[:11000]),
                 ("SELECT", "0")]
    for command in commands:
        reply = conn.call(*command, timeout=30)
        assert not reply.is_error, (command[:3], reply)


def dump_lists(conn) -> dict:
    state = {}
    for db in (0, 3):
        conn.call("SELECT", db)
        keys = sorted(conn.call("KEYS", "*").py())
        for key in keys:
            state[(db, key)] = (conn.call("TYPE", key).raw, conn.call("OBJECT", "ENCODING", key).value,
                                conn.call("LRANGE", key, 0, -1, timeout=30).py(),
                                conn.call("PEXPIRETIME", key).value)
    conn.call("SELECT", 0)
    state["digest"] = conn.call("DEBUG", "DIGEST").value
    return state


def kill_and_restart(srv: ServerProcess):
    srv.stop_requested = True
    srv.proc.kill()
    srv.proc.wait()
    srv.restart()

    def loaded():
        with srv.raw() as conn:
            return conn.call("PING").raw == b"+PONG\r\n"
    wait_for(loaded, timeout=60, what="the data set to be loaded")


PERSISTENCE_MODES = {
    "save-restart": {"list-compress-depth": "1"},
    "debug-reload": {"list-max-listpack-size": "8"},
    "aof-restart": {"appendonly": "yes", "appendfsync": "always"},
    "aof-rewrite-restart": {"appendonly": "yes", "appendfsync": "always", "aof-use-rdb-preamble": "no",
                            "list-compress-depth": "2"},
}


@pytest.mark.parametrize("mode", list(PERSISTENCE_MODES))
def test_lists_survive(make_server, mode):
    srv = make_server(options=PERSISTENCE_MODES[mode])
    conn = srv.raw(timeout=30)
    persistence_dataset(conn)
    before = dump_lists(conn)
    assert before[(0, b"big")][0] == b"+list\r\n" and len(before[(0, b"big")][2]) == 12000
    assert before[(0, b"ttl")][3] == 4102444800000
    if mode == "save-restart":
        assert conn.call("SAVE").raw == ok
    if mode == "aof-rewrite-restart":
        assert conn.call("BGREWRITEAOF").raw == b"+Background append only file rewriting started\r\n"

        def rewritten():
            info = conn.call("INFO", "persistence").value.decode()
            return "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info
        wait_for(rewritten, timeout=30, what="the AOF rewrite to finish")
        assert conn.call("RPUSH", "small", "after-rewrite").raw == integer(9)
        before = dump_lists(conn)
    if mode == "debug-reload":
        assert conn.call("DEBUG", "RELOAD").raw == ok
    else:
        conn.close()
        kill_and_restart(srv)
        conn = srv.raw(timeout=30)
    after = dump_lists(conn)
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key], f"{mode}: {key} differs"
    conn.close()


def test_a_redis_append_only_directory_with_lists_loads(make_server):
    """The migration path: Redis (the reference) writes lists to a RESP-base AOF and its incr file, and
    the server under test starts on that directory with the same lists."""
    reference = make_server(binary=REFERENCE_BINARY, name="reference-aof",
                            options={"appendonly": "yes", "aof-use-rdb-preamble": "no"})
    conn = reference.raw(timeout=30)
    persistence_dataset(conn)
    assert conn.call("BGREWRITEAOF").raw.startswith(b"+Background append only file rewriting")

    def rewritten():
        info = conn.call("INFO", "persistence").value.decode()
        return "aof_rewrite_in_progress:0" in info and "aof_rewrite_scheduled:0" in info
    wait_for(rewritten, timeout=30, what="the AOF rewrite to finish")
    for command in (("LPUSH", "small", "head"), ("LPOP", "big", "3"), ("LMOVE", "big", "moved", "RIGHT", "LEFT"),
                    ("LINSERT", "binary", "AFTER", b"\x00", "inserted"), ("LSET", "wide", "5", "set"),
                    ("LTRIM", "wide", "1", "-2"), ("LREM", "small", "-1", ""), ("RPOPLPUSH", "empties", "moved"),
                    ("LMPOP", "2", "nope", "empties", "LEFT", "COUNT", "5")):
        assert not conn.call(*command).is_error, command
    waiter = reference.raw()
    waiter.send_command("BLMPOP", "0", "1", "woken", "RIGHT", "COUNT", "2")
    wait_for(lambda: conn.call("INFO", "clients").value.find(b"blocked_clients:1") >= 0, what="a blocked client")
    conn.call("RPUSH", "woken", "1", "2", "3")
    assert waiter.read_reply().raw == arr(bulk("woken"), bulks("3", "2"))
    waiter.close()
    before = dump_lists(conn)
    reference.stop_requested = True
    conn.send_command("SHUTDOWN")
    assert conn.read_until_closed(timeout=30) == b""
    assert reference.proc.wait(30) == 0
    srv = make_server(options={"appendonly": "yes", "dir": reference.dir})
    with srv.raw(timeout=30) as loaded:
        after = dump_lists(loaded)
    # Encodings differ between 7.0 and 7.2 and digests between servers; the lists may not.
    strip = {key: value[:1] + value[2:] for key, value in before.items() if key != "digest"}
    assert {key: value[:1] + value[2:] for key, value in after.items() if key != "digest"} == strip


@pytest.mark.goblin
def test_goblin_snapshot_checker_reads_lists(make_server):
    srv = make_server()
    with srv.raw(timeout=30) as conn:
        persistence_dataset(conn)
        assert conn.call("SAVE").raw == ok
        keys = conn.call("DBSIZE").value
        conn.call("SELECT", 3)
        keys += conn.call("DBSIZE").value
    path = os.path.join(srv.dir, "dump.rdb")
    status, output = run_until_exit([goblin_binary(), "--check-snapshot", path], timeout=30)
    assert status == 0 and f"{keys} keys" in output, output


# ---- keyspace commands ----------------------------------------------------------------------------

def test_type_copy_rename_move_swapdb(server, r, raw):
    r.rpush("l", "a", "b", "c")
    r.rpush("big", *range(5000))
    assert r.type("l") == b"list"
    assert r.copy("l", "copy") and r.lrange("copy", 0, -1) == [b"a", b"b", b"c"]
    r.rpush("copy", "only-in-copy")
    r.lset("l", 0, "only-in-l")
    assert r.lrange("l", 0, -1) == [b"only-in-l", b"b", b"c"]
    assert r.lrange("copy", 0, -1) == [b"a", b"b", b"c", b"only-in-copy"]
    assert not r.copy("l", "copy")                   # the destination exists
    assert r.copy("l", "copy", replace=True) and r.lrange("copy", 0, -1) == r.lrange("l", 0, -1)
    assert r.copy("big", "big-copy") and r.lrange("big-copy", 0, -1) == r.lrange("big", 0, -1)
    assert r.object("encoding", "big-copy") == r.object("encoding", "big")
    r.lpop("big-copy", 10)
    assert r.llen("big") == 5000 and r.llen("big-copy") == 4990
    assert raw.call("COPY", "l", "l-in-5", "DB", "5").raw == integer(1)
    r.rename("l", "renamed")
    assert r.exists("l") == 0 and r.lrange("renamed", 0, -1) == [b"only-in-l", b"b", b"c"]
    r.set("str", "v")
    r.rename("renamed", "str")                        # RENAME replaces a key of another type
    assert r.type("str") == b"list"
    assert r.renamenx("str", "copy") is False
    assert r.move("str", 5)
    assert r.exists("str") == 0
    other = server.client(db=5)
    assert other.lrange("str", 0, -1) == [b"only-in-l", b"b", b"c"]
    assert other.lrange("l-in-5", 0, -1) == [b"only-in-l", b"b", b"c"]
    r.rpush("str", "in-0")
    assert not r.move("str", 5)                       # exists there: not moved
    assert r.swapdb(0, 5)
    assert r.lrange("str", 0, -1) == [b"only-in-l", b"b", b"c"] and r.exists("big") == 0
    assert other.lrange("str", 0, -1) == [b"in-0"] and other.llen("big") == 5000
    other.close()


def test_scan_type_list(r):
    r.rpush("list:1", "a")
    r.rpush("list:2", *range(1000))
    r.set("string:1", "a")
    r.sadd("set:1", "a")
    r.hset("hash:1", "f", "v")
    r.zadd("zset:1", {"a": 1})
    r.mset({f"filler:{i}": i for i in range(300)})
    assert sorted(r.scan_iter(_type="list", count=20)) == [b"list:1", b"list:2"]
    assert sorted(r.scan_iter(match="list:*", _type="LIST")) == [b"list:1", b"list:2"]
    assert sorted(r.scan_iter(_type="string", match="string:*")) == [b"string:1"]
    assert list(r.scan_iter(_type="list", match="nothing*")) == []


def test_debug_digest_follows_content_and_order(r):
    empty = r.execute_command("DEBUG", "DIGEST")
    assert empty == b"0" * 40
    r.rpush("l", "a", "b", "c")
    first = r.execute_command("DEBUG", "DIGEST")
    value = r.execute_command("DEBUG", "DIGEST-VALUE", "l")
    assert first != empty and len(first) == 40
    r.lset("l", 1, "B")
    changed = r.execute_command("DEBUG", "DIGEST")
    assert changed != first
    r.lset("l", 1, "b")
    assert r.execute_command("DEBUG", "DIGEST") == first
    assert r.execute_command("DEBUG", "DIGEST-VALUE", "l") == value
    r.delete("l")
    r.rpush("l", "c", "b", "a")
    assert r.execute_command("DEBUG", "DIGEST") != first   # same elements, other order
    r.delete("l")
    r.rpush("l", "a", "b", "c", "")
    assert r.execute_command("DEBUG", "DIGEST") != first   # one more (empty) element
    r.delete("l")
    r.rpush("l", "ab", "c")
    assert r.execute_command("DEBUG", "DIGEST") != first   # same bytes, other split
    r.delete("l")
    r.rpush("l", "a")
    r.rpush("l", "b", "c")
    assert r.execute_command("DEBUG", "DIGEST") == first   # same list, built another way
    r.delete("l")
    r.rpush("big", *range(20000))
    big = r.execute_command("DEBUG", "DIGEST")
    r.lset("big", 12345, "x")
    assert r.execute_command("DEBUG", "DIGEST") != big
    r.lset("big", 12345, "12345")
    assert r.execute_command("DEBUG", "DIGEST") == big
    r.set("s", "abc")
    r.delete("big")
    with_string = r.execute_command("DEBUG", "DIGEST")
    r.delete("s")
    r.rpush("s", "abc")
    assert r.execute_command("DEBUG", "DIGEST") != with_string   # a list is not a string
    r.sadd("set", "abc")
    r.zadd("zset", {"abc": 0})
    values = r.execute_command("DEBUG", "DIGEST-VALUE", "s", "set", "zset")
    assert len(set(values)) == 3, values                          # nor a set, nor a sorted set
    r.delete("set")
    with_list = r.execute_command("DEBUG", "DIGEST")
    r.delete("s")
    r.sadd("s", "abc")
    r.rpush("set", "abc")
    assert r.execute_command("DEBUG", "DIGEST") != with_list     # the same names, the types swapped


def test_debug_digest_ignores_the_encoding(list_config):
    r = list_config
    elements = ["a", "1", "-2", "", "x" * 100]
    r.rpush("packed", *elements)
    r.config_set("list-max-listpack-size", 1)
    r.rpush("nodes", *elements)
    r.config_set("list-compress-depth", 1)
    r.rpush("compressed", *elements)
    values = r.execute_command("DEBUG", "DIGEST-VALUE", "packed", "nodes", "compressed")
    assert values[0] == values[1] == values[2], values


def test_memory_usage_grows_with_the_list(r):
    r.rpush("l", "a")
    sizes = [r.memory_usage("l", samples=0)]
    for total in (10, 100, 1000, 10000, 100000):
        r.rpush("l", *[f"element-{i}" for i in range(r.llen("l"), total)])
        sizes.append(r.memory_usage("l", samples=0))
    assert all(a < b for a, b in zip(sizes, sizes[1:])), sizes
    assert sizes[-1] > 100000 * 10, sizes           # at least the bytes of the elements
    assert sizes[-1] < 100000 * 60, sizes
    assert r.memory_usage("missing") is None
    r.rpush("mb", "x" * (1 << 20))
    assert r.memory_usage("mb") > 1 << 20


def test_memory_usage_matches_the_allocator(server, r):
    """MEMORY USAGE of a large list (every node counted: SAMPLES 0) is within 5% of what it cost."""
    for name, element in (("names", lambda i: f"user:{i:08d}"), ("wide", lambda i: "w" * 200 + str(i))):
        r.flushall()
        count = 200000 if name == "names" else 40000
        base = int(server.info("memory")["used_memory"])
        pipe = r.pipeline(transaction=False)
        for start in range(0, count, 1000):
            pipe.rpush("l", *[element(i) for i in range(start, start + 1000)])
        pipe.execute()
        grown = int(server.info("memory")["used_memory"]) - base
        usage = r.memory_usage("l", samples=0)
        assert abs(usage - grown) < 0.05 * grown, (name, usage, grown)


def test_watch_sees_list_changes(server, r):
    r.rpush("l", "a", "b")
    other = server.client()

    def transaction_survives(change) -> bool:
        pipe = r.pipeline()
        pipe.watch("l")
        change()
        pipe.multi()
        pipe.llen("l")
        try:
            pipe.execute()
            return True
        except redis.WatchError:
            return False

    assert not transaction_survives(lambda: other.rpush("l", "c"))
    assert not transaction_survives(lambda: other.lset("l", 0, "a"))      # same value, still a write
    assert not transaction_survives(lambda: other.lpop("l"))
    assert not transaction_survives(lambda: other.lmove("l", "l", "LEFT", "RIGHT"))
    assert not transaction_survives(lambda: other.linsert("l", "AFTER", "b", "d"))
    assert not transaction_survives(lambda: other.ltrim("l", 0, -1))      # LTRIM always signals
    assert transaction_survives(lambda: other.lrem("l", 0, "nope"))
    assert transaction_survives(lambda: other.linsert("l", "AFTER", "nope", "d"))
    assert transaction_survives(lambda: other.lrange("l", 0, -1))
    assert transaction_survives(lambda: other.rpushx("missing", "x"))
    assert transaction_survives(lambda: other.lpop("missing"))
    other.close()


def test_multi_exec_with_lists(r):
    pipe = r.pipeline()
    pipe.rpush("q", "a", "b", "c")
    pipe.lmove("q", "done", "LEFT", "RIGHT")
    pipe.lrange("q", 0, -1)
    pipe.lpop("q", 5)
    pipe.exists("q")
    pipe.lrange("done", 0, -1)
    assert pipe.execute() == [3, b"a", [b"b", b"c"], [b"b", b"c"], 0, [b"a"]]


# ---- GOBLIN.STATS ---------------------------------------------------------------------------------

@pytest.mark.goblin
def test_goblin_stats_on_lists(server, r):
    r.rpush("small", "a", "b", "c")
    r.rpush("big", *range(20000))
    with resp3(server) as c:
        for key, length in (("small", 3), ("big", 20000)):
            reply = c.call("GOBLIN.STATS", key)
            assert reply.kind == "%", reply
            fields = {k.value: v.py() for k, v in reply.value}
            assert fields[b"type"] == b"list", fields
            assert fields[b"encoding"] == r.object("encoding", key), fields
            assert fields[b"bytes"] == r.memory_usage(key, samples=0), fields
            counts = [fields[name] for name in (b"elements", b"length", b"entries", b"members") if name in fields]
            assert counts and counts[0] == length, fields
        assert c.call("GOBLIN.STATS", "missing").raw == resp3_null
    flat = r.execute_command("GOBLIN.STATS", "small")
    assert dict(zip(flat[::2], flat[1::2]))[b"type"] == b"list"


@pytest.mark.goblin
def test_list_compress_depth_compresses_interior_nodes(r):
    """list-compress-depth 1: every node but the two ends is LZ4-compressed; the list reads and
    changes the same, and a repetitive list takes less memory than without compression."""
    values = [f"event:{i % 50}:user-{i % 7}:payload-payload-payload" for i in range(20000)]
    r.rpush("plain", *values)
    r.config_set("list-compress-depth", 1)
    r.rpush("packed", *values)
    stats = dict(zip(*[iter(r.execute_command("GOBLIN.STATS", "packed"))] * 2))
    assert stats[b"compressed_nodes"] >= stats[b"nodes"] - 2 > 10, stats
    assert r.memory_usage("packed", samples=0) * 2 < r.memory_usage("plain", samples=0)
    assert r.lrange("packed", 0, -1) == [v.encode() for v in values]
    assert r.lindex("packed", 12345) == values[12345].encode()
    r.lset("packed", 10000, "changed")
    r.linsert("packed", "BEFORE", "changed", "inserted")
    assert r.lrange("packed", 9999, 10001) == [values[9999].encode(), b"inserted", b"changed"]
    assert r.lrem("packed", 0, "changed") == 1 and r.llen("packed") == 20000
    r.config_set("list-compress-depth", 0)
    r.rpush("packed", "last")  # the next change under depth 0 decompresses the list
    stats = dict(zip(*[iter(r.execute_command("GOBLIN.STATS", "packed"))] * 2))
    assert stats[b"compressed_nodes"] == 0, stats


# ---- redis-cli and redis-benchmark ----------------------------------------------------------------

def cli(server, *args, stdin=None):
    proc = subprocess.run([REDIS_CLI, *server.cli_args(), *args], input=stdin, capture_output=True, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def test_redis_cli_list_commands(server, r):
    assert cli(server, "RPUSH", "l", "a", "b", "c") == (0, b"3\n", b"")
    assert cli(server, "LRANGE", "l", "0", "-1") == (0, b"a\nb\nc\n", b"")
    assert cli(server, "--no-raw", "LRANGE", "l", "0", "-1")[1] == b'1) "a"\n2) "b"\n3) "c"\n'
    assert cli(server, "--no-raw", "LRANGE", "missing", "0", "-1")[1] == b"(empty array)\n"
    assert cli(server, "--no-raw", "LPOP", "missing")[1] == b"(nil)\n"
    assert cli(server, "--no-raw", "LLEN", "l")[1] == b"(integer) 3\n"
    assert cli(server, "LPOP", "l", "2")[1] == b"a\nb\n"
    assert cli(server, "--no-raw", "LPOS", "l", "c", "COUNT", "0")[1] == b"1) (integer) 0\n"
    assert cli(server, "--no-raw", "LMPOP", "1", "l", "LEFT")[1] == b'1) "l"\n2) 1) "c"\n'
    assert cli(server, "--no-raw", "BLPOP", "missing", "0.01")[1] == b"(nil)\n"
    _, out, _ = cli(server, "LSET", "missing", "0", "x")
    assert out.rstrip(b"\n") == b"ERR no such key"
    r.rpush("bin", b"a\x00b", "line\nbreak")
    assert cli(server, "--no-raw", "LRANGE", "bin", "0", "-1")[1] == b'1) "a\\x00b"\n2) "line\\nbreak"\n'
    assert cli(server, "-x", "RPUSH", "stdin", stdin=b"from stdin\n")[1] == b"1\n"
    assert r.lrange("stdin", 0, -1) == [b"from stdin\n"]
    assert cli(server, "-r", "25", "RPUSH", "repeated", "x")[0] == 0
    assert r.llen("repeated") == 25


def test_redis_cli_pipe_mass_rpush(server, r):
    payload = b"".join(encode_command("RPUSH", f"mass:{i % 10}", f"v{i}") for i in range(20000))
    code, out, err_out = cli(server, "--pipe", stdin=payload)
    assert code == 0, (out, err_out)
    assert b"errors: 0, replies: 20000" in out, out
    assert sum(r.llen(f"mass:{i}") for i in range(10)) == 20000
    assert r.lrange("mass:3", 0, 2) == [b"v3", b"v13", b"v23"]


def test_redis_benchmark_list_tests(server, r):
    tests = "lpush,rpush,lpop,rpop,lrange_100,lrange_300,lrange_500,lrange_600"
    proc = subprocess.run([REDIS_BENCHMARK, "-h", "127.0.0.1", "-p", str(server.port), "-t", tests, "-n", "2000",
                           "-q"], capture_output=True, timeout=180)
    out = proc.stdout.decode() + proc.stderr.decode()
    assert proc.returncode == 0, out
    assert "rror" not in out, out
    lines = [line.strip() for line in out.replace("\r", "\n").splitlines() if "requests per second" in line]
    for name in ("LPUSH", "RPUSH", "LPOP", "RPOP", "LPUSH (needed to benchmark LRANGE)",
                 "LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)",
                 "LRANGE_500 (first 500 elements)", "LRANGE_600 (first 600 elements)"):
        assert any(line.startswith(name + ":") for line in lines), f"no result line for {name}:\n{out}"
    # 2000 LPUSH + 2000 RPUSH - 2000 LPOP - 2000 RPOP, then 2000 LPUSH for the LRANGE tests.
    assert r.llen("mylist") == 2000
    assert {len(element) for element in r.lrange("mylist", 0, -1)} == {3}   # -d 3, the default size
