"""SORT and SORT_RO side by side with redis-server: lists, sets and sorted sets sorted by value
and by external weights (BY pattern, BY hash field, BY a pattern without '*'), LIMIT, GET ('#',
string keys, hash fields, missing keys), ASC/DESC, ALPHA and STORE, with Redis's errors.

Every case avoids orders Redis leaves undefined: a set is never read unsorted unless STOREd (then
Redis sorts it), and ALPHA with BY only over distinct weights (Redis's qsort does not keep ties).
Each Op resets its keys, so a failure shrinks to one Op.
"""

import random

import pytest

from support.differ import Op, Step

def S(*args):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args))


@pytest.fixture
def check(corpus):
    return lambda name, ops: corpus("sort", name, ops)


KEYS = ["src", "dst", "w_1", "w_2", "w_3", "w_4", "w_5", "w_a", "w_b", "h_1", "h_2", "h_3", "h_a", "h_b"]


def reset():
    return [S("DEL", *KEYS)]


def weights():
    # Numeric weights (with a tie and a missing one), hash fields, and a non-number.
    return [S("MSET", "w_1", "30", "w_2", "10", "w_3", "20", "w_4", "10", "w_a", "5"),
            S("HSET", "h_1", "f", "c", "n", "3"), S("HSET", "h_2", "f", "a", "n", "1"),
            S("HSET", "h_3", "f", "b", "n", "2"), S("HSET", "h_a", "f", "d")]


def op(name, *steps):
    return Op(reset() + weights() + list(steps), name)


NUMERIC = ["3", "1", "2", "10", "-1.5", "1e3", "0", "4", "5"]
SORTS = [
    [], ["DESC"], ["LIMIT", "0", "3"], ["LIMIT", "2", "2"], ["LIMIT", "-1", "2"], ["LIMIT", "1", "-1"],
    ["LIMIT", "100", "5"], ["LIMIT", "0", "0"], ["DESC", "LIMIT", "1", "3"],
    ["BY", "w_*"], ["BY", "w_*", "DESC"], ["BY", "h_*->n"], ["BY", "nosort"], ["BY", "nosort", "DESC"],
    ["BY", "nosort", "LIMIT", "1", "2"], ["GET", "#"], ["GET", "w_*"], ["GET", "h_*->f", "GET", "#"],
    ["GET", "nokey"], ["GET", "h_*->"], ["BY", "w_*", "GET", "#", "GET", "w_*", "GET", "h_*->n"],
    ["BY", "h_*->missing"], ["BY", "w_*->f"],
]


def test_sort_lists_and_sorted_sets(check):
    ops = []
    for options in SORTS:
        ops.append(op("sort list", S("RPUSH", "src", *NUMERIC[:5]), S("SORT", "src", *options),
                      S("SORT_RO", "src", *options)))
        ops.append(op("sort zset", S("ZADD", "src", "3", "2", "1", "4", "2", "1", "5", "3"),
                      S("SORT", "src", *options)))
        ops.append(op("sort store", S("RPUSH", "src", *NUMERIC), S("SORT", "src", *options, "STORE", "dst"),
                      S("LRANGE", "dst", "0", "-1"), S("TYPE", "dst")))
    check("sort_lists_and_sorted_sets", ops)


def test_sort_sets_sorted_or_stored(check):
    ops = []
    for options in SORTS:
        if "nosort" in options:
            ops.append(op("set nosort store", S("SADD", "src", *NUMERIC), S("SORT", "src", *options, "STORE", "dst"),
                          S("LRANGE", "dst", "0", "-1")))
            continue
        ops.append(op("set", S("SADD", "src", *NUMERIC), S("SORT", "src", *options)))
    check("sort_sets_sorted_or_stored", ops)


def test_sort_alpha(check):
    words = ["banana", "apple", "Cherry", "apple", "b", "", "10", "9", "\xe2\x82\xac"]
    ops = [op("alpha", S("RPUSH", "src", *words), S("SORT", "src", "ALPHA", *extra))
           for extra in ([], ["DESC"], ["LIMIT", "1", "3"], ["STORE", "dst"])]
    ops.append(op("alpha by distinct weights", S("RPUSH", "src", "1", "2", "3"),
                  S("SORT", "src", "BY", "h_*->f", "ALPHA"), S("SORT", "src", "BY", "h_*->f", "ALPHA", "DESC")))
    ops.append(op("alpha on numbers", S("RPUSH", "src", *NUMERIC), S("SORT", "src", "ALPHA")))
    check("sort_alpha", ops)


def test_sort_errors_and_edges(check):
    ops = [
        op("not numbers", S("RPUSH", "src", "1", "x", "2"), S("SORT", "src"), S("SORT", "src", "BY", "h_*->f")),
        op("wrong type", S("SET", "src", "v"), S("SORT", "src"), S("SORT", "src", "ALPHA")),
        op("hash type", S("HSET", "src", "a", "1"), S("SORT", "src")),
        op("missing key", S("SORT", "src"), S("SORT", "src", "STORE", "dst"), S("EXISTS", "dst")),
        op("empty result deletes", S("SET", "dst", "old"), S("RPUSH", "src", "1"),
           S("SORT", "src", "LIMIT", "5", "1", "STORE", "dst"), S("EXISTS", "dst")),
        op("store over a string", S("SET", "dst", "old"), S("RPUSH", "src", "2", "1"),
           S("SORT", "src", "STORE", "dst"), S("LRANGE", "dst", "0", "-1")),
        op("syntax", S("RPUSH", "src", "1"), S("SORT", "src", "BOGUS"), S("SORT", "src", "LIMIT", "1"),
           S("SORT", "src", "LIMIT", "a", "1"), S("SORT", "src", "BY"), S("SORT", "src", "GET"),
           S("SORT_RO", "src", "STORE", "dst"), S("SORT", "src", "STORE"), S("SORT")),
        op("store in source", S("RPUSH", "src", "3", "1", "2"), S("SORT", "src", "STORE", "src"),
           S("LRANGE", "src", "0", "-1")),
        op("weights that are not numbers", S("RPUSH", "src", "1", "2"), S("SET", "w_1", "abc"),
           S("SORT", "src", "BY", "w_*")),
        op("float edge weights", S("RPUSH", "src", "1", "2", "3"), S("MSET", "w_1", "inf", "w_2", "-inf", "w_3", " 4"),
           S("SORT", "src", "BY", "w_*"), S("SET", "w_3", "nan"), S("SORT", "src", "BY", "w_*")),
    ]
    check("sort_errors_and_edges", ops)


def test_sort_random_lists(check):
    rng = random.Random(7)
    ops = []
    for _ in range(60):
        n = rng.randint(0, 40)
        elements = [str(rng.choice([rng.randint(-50, 50), rng.random() * 100])) for _ in range(n)]
        options = rng.choice(SORTS)
        ops.append(op("random", *([S("RPUSH", "src", *elements)] if elements else []), S("SORT", "src", *options),
                      S("SORT", "src", *options, "STORE", "dst"), S("LRANGE", "dst", "0", "-1")))
    check("sort_random_lists", ops)
