"""Lists, side by side with redis-server: seeded random streams where lists are most of the
traffic (RESP2 and RESP3), enumerated edge cases, and Redis 7.2's own behaviour where the 7.0
reference cannot be compared.

The streams (LIST_STREAM_GENERATORS) mix every list command with the string, key, expiry, hash,
set and sorted-set commands that meet lists in the common key space; blocking commands run inside
MULTI or right after a push to one of their keys, so they never wait (see generators.py). Every
list's contents are compared at the end of each stream.

Where 7.0 and 7.2 differ, the comparison follows 7.2 (support/differ.py): OBJECT ENCODING
"listpack" for small lists (OBJECT_ENCODING), LPOS RANK -9223372036854775808 (LPOS_RANK), timeouts
past a long long's milliseconds (BLOCKING_TIMEOUT); the tests marked redis72 check Goblin's exact
7.2 answers there, and fail against 7.0 by design.

Environment: GOBLIN_LIST_SEEDS=5,9 (replace the RESP2 seeds), GOBLIN_DIFF_RANDOM_SEEDS=n (add
fresh seeds), GOBLIN_LIST_OPS (stream length, default 3000).
"""

import itertools
import os

import pytest

from support.differ import (BLOCKING_TIMEOUT, CONFIG_PAIRS, LPOS_RANK, OBJECT_ENCODING, Op, Step,
                            lpos_stops_at_llong_min_rank, timeout_beyond_llong_max)
from support.types import supported_commands

from .generators import (INT_EDGES, LIST_CONFIG_VALUES, LIST_GENERATORS, LIST_HUGE_TIMEOUTS, LIST_INDEXES,
                         LIST_POP_COUNTS, LIST_PUSH_THEN_BLOCK_GENERATORS, LIST_SAFE_TIMEOUTS, LIST_STREAM_GENERATORS,
                         LPOS_COUNTS, LPOS_MAXLENS, LPOS_RANKS, NUMBER_TEXTS, make_stream)
from .streams import run_stream, stream_seeds, supported_rows
from .test_command_table import NOSCRIPT_DROPPED_IN_72, command_info, summary, summary_as_72

DEFAULT_SEEDS = [21, 22, 23, 24, 25, 26]
RESP3_SEEDS = [321, 322]
LENGTH = int(os.environ.get("GOBLIN_LIST_OPS", "3000"))

LIST_COMMANDS = """lpush rpush lpushx rpushx lpop rpop llen lindex lset linsert lrange ltrim lrem lpos lmove
rpoplpush lmpop blpop brpop brpoplpush blmove blmpop""".split()


def _seeds():
    return stream_seeds("GOBLIN_LIST_SEEDS", DEFAULT_SEEDS, RESP3_SEEDS)


@pytest.fixture(scope="module")
def list_generators(pair):
    return supported_rows(pair, LIST_STREAM_GENERATORS)


@pytest.mark.parametrize("protocol,seed", _seeds(), ids=lambda x: str(x))
def test_list_stream(pair, list_generators, shrink_budget, reported_mismatches, protocol, seed):
    ops = make_stream(seed, LENGTH, list_generators, protocol=protocol)
    run_stream(pair, ops, family="list", seed=seed, protocol=protocol, seeds_env="GOBLIN_LIST_SEEDS",
               test_path="tests/differential/test_list_streams.py", selector=f"test_list_stream and {protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


def test_server_under_test_has_every_list_generator(pair):
    """A missing list command must fail here, not silently shrink the streams."""
    names = sorted({gen.command for gen in LIST_GENERATORS + LIST_PUSH_THEN_BLOCK_GENERATORS})
    with pair.goblin_server.raw() as g:
        have = supported_commands(g, names)
    assert sorted(set(names) - have) == []


def test_list_generators_cover_every_list_command():
    for table in (LIST_GENERATORS, LIST_STREAM_GENERATORS):
        generated = set()
        for gen in table:
            generated |= {gen.command, *gen.covers}
        assert [c for c in LIST_COMMANDS if c not in generated] == []


def test_list_streams_draw_every_row(list_generators):
    drawn = {op.source for seed in DEFAULT_SEEDS for op in make_stream(seed, LENGTH, list_generators)}
    assert {gen.command for gen in list_generators} - drawn == set()


def test_list_streams_send_every_list_command():
    """Every list command appears as a command of the streams (blocking ones inside MULTI too)."""
    sent = set()
    for seed in DEFAULT_SEEDS:
        for op in make_stream(seed, LENGTH, LIST_STREAM_GENERATORS):
            sent |= {step.args[0].lower().decode("latin-1") for step in op.steps if step.args}
    assert [c for c in LIST_COMMANDS if c not in sent] == []


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.redis72) if n in NOSCRIPT_DROPPED_IN_72 else n
                                  for n in LIST_COMMANDS])
def test_list_command_info_matches_reference(pair, name):
    """Exact, except the noscript flag Redis 7.2 dropped from the blocking list commands
    (test_command_table.NOSCRIPT_DROPPED_IN_72; the redis72 cases fail against 7.0)."""
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        gi = command_info(g, name)
        assert not gi.is_null, f"COMMAND INFO {name}: the server under test does not know it"
        assert summary(gi) == summary_as_72(command_info(r, name))


LIST_GETKEYS_CALLS = [
    ("LPUSH", "a", "x"), ("LMOVE", "a", "b", "LEFT", "RIGHT"), ("RPOPLPUSH", "a", "b"), ("BLPOP", "a", "b", "0"),
    ("BRPOP", "a", "0"), ("BLMOVE", "a", "b", "LEFT", "LEFT", "0"), ("BRPOPLPUSH", "a", "b", "0"),
    ("LMPOP", "2", "a", "b", "LEFT"), ("LMPOP", "1", "a", "RIGHT", "COUNT", "3"), ("BLMPOP", "0", "2", "a", "b", "LEFT"),
    ("LMPOP", "0", "a", "LEFT"), ("LMPOP", "3", "a", "LEFT"), ("LMPOP", "x", "a", "LEFT"), ("BLMPOP", "0", "-1", "a"),
    ("LPOS", "a", "x", "RANK", "1"), ("LINSERT", "a", "BEFORE", "p", "x"),
]


@pytest.mark.parametrize("call", LIST_GETKEYS_CALLS, ids=lambda c: " ".join(c))
def test_list_command_getkeys_matches_reference(pair, call):
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        assert g.call("COMMAND", "GETKEYS", *call).raw == r.call("COMMAND", "GETKEYS", *call).raw


# ---- enumerated edge cases ----------------------------------------------------------------------------
#
# Each Op resets the keys it uses, so a corpus runs on past a mismatch and a failure shrinks to one Op.

def S(*args, compare=None):
    args = tuple(a if isinstance(a, bytes) else str(a).encode() for a in args)
    return Step(args, compare) if compare else Step(args)


@pytest.fixture
def check(corpus):
    return lambda name, ops, protocols=(2, 3): corpus("list", name, ops, protocols)


FIVE = ["a", "b", "c", "d", "e"]
OTHER_TYPES = {"string": ("SET", "{key}", "v"), "hash": ("HSET", "{key}", "f", "v"), "set": ("SADD", "{key}", "m"),
               "zset": ("ZADD", "{key}", "1", "m")}


def make(key, *elements):
    """Steps that leave `key` holding exactly these elements (none: no key)."""
    return [S("DEL", key)] + ([S("RPUSH", key, *elements)] if elements else [])


def other_type(key, type_name):
    return [S("DEL", key), S(*[part.format(key=key) for part in OTHER_TYPES[type_name]])]


def dump(key):
    return [S("LRANGE", key, 0, -1), S("EXISTS", key), S("OBJECT", "ENCODING", key, compare=OBJECT_ENCODING)]


INDEXES = [str(i).encode() for i in range(-7, 8)] + LIST_INDEXES + [str(x).encode() for x in INT_EDGES]


def test_indexes(check):
    ops = []
    for index in INDEXES:
        ops.append(Op(make("l", *FIVE) + [S("LINDEX", "l", index), S("LSET", "l", index, "new")] + dump("l")))
        ops.append(Op(make("l") + [S("LINDEX", "l", index), S("LSET", "l", index, "new"), S("EXISTS", "l")]))
    check("indexes", ops)


RANGE_BOUNDS = [b"-7", b"-6", b"-5", b"-2", b"-1", b"0", b"1", b"3", b"4", b"5", b"6", b"9223372036854775807",
                b"-9223372036854775808", b"x"]


def test_ranges_and_trims(check):
    ops = []
    for start, stop in itertools.product(RANGE_BOUNDS, repeat=2):
        ops.append(Op(make("l", *FIVE) + [S("LRANGE", "l", start, stop), S("LTRIM", "l", start, stop)] + dump("l")))
    ops.append(Op(make("l") + [S("LRANGE", "l", 0, -1), S("LTRIM", "l", 0, -1), S("EXISTS", "l")]))
    check("ranges", ops)


def test_pops_with_counts(check):
    ops = []
    for name, count in itertools.product(["LPOP", "RPOP"], [None] + LIST_POP_COUNTS):
        extra = [] if count is None else [count]
        ops.append(Op(make("l", *FIVE) + [S(name, "l", *extra)] + dump("l")))
        ops.append(Op(make("l") + [S(name, "l", *extra)]))
        ops.append(Op(other_type("l", "string") + [S(name, "l", *extra)]))
        ops.append(Op(make("l", "only") + [S(name, "l", *extra)] + dump("l")))
    ops.append(Op(make("l", *FIVE) + [S("LPOP", "l", 1, 2), S("RPOP", "l", "1", "x"), S("LPOP")]))
    check("pops", ops)


MATCHES = ["a", "b", "a", "c", "a", "b", "a"]


def test_lpos_options(check):
    ranks, counts, maxlens = [None] + LPOS_RANKS, [None] + LPOS_COUNTS, [None] + LPOS_MAXLENS
    ops = []
    for rank, count, maxlen in itertools.product(ranks, counts, maxlens):
        options = []
        for token, value in (("RANK", rank), ("COUNT", count), ("MAXLEN", maxlen)):
            if value is not None:
                options += [token, value]
        steps = [S("LPOS", "l", element, *options, compare=LPOS_RANK) for element in ("a", "b", "zz")]
        ops.append(Op(make("l", *MATCHES) + steps))
    for options in (["MAXLEN", "2", "RANK", "2"], ["COUNT", "1", "COUNT", "0"], ["RANK", "1", "RANK", "-1"],
                    ["RANK"], ["FOO", "1"], ["rank", "-2", "count", "0", "maxlen", "5"], ["COUNT", "0", "RANK", "0"],
                    ["MAXLEN", "-1", "RANK", "0"], ["RANK", "-9223372036854775808", "COUNT", "-1"],
                    ["COUNT", "-1", "RANK", "-9223372036854775808"]):
        for setup in (make("l", *MATCHES), make("l"), other_type("l", "zset")):
            ops.append(Op(setup + [S("LPOS", "l", "a", *options, compare=LPOS_RANK)]))
    check("lpos", ops)


def test_lrem_counts(check):
    counts = [str(i).encode() for i in range(-5, 6)] + [str(x).encode() for x in INT_EDGES] + [b"x", b"-0", b""]
    ops = [Op(make("l", *MATCHES) + [S("LREM", "l", count, element)] + dump("l"))
           for count in counts for element in ("a", "b", "c", "zz")]
    ops += [Op(make("l", "a", "a") + [S("LREM", "l", 0, "a"), S("EXISTS", "l")]),
            Op(make("l") + [S("LREM", "l", 0, "a")]), Op(other_type("l", "hash") + [S("LREM", "l", 0, "a")])]
    check("lrem", ops)


def test_linsert(check):
    ops = []
    for where, pivot in itertools.product(["BEFORE", "AFTER", "before", "After", "MIDDLE", ""],
                                          ["a", "b", "c", "e", "zz", ""]):
        ops.append(Op(make("l", "a", "b", "a", "c", "e") + [S("LINSERT", "l", where, pivot, "new")] + dump("l")))
        ops.append(Op(make("l") + [S("LINSERT", "l", where, pivot, "new"), S("EXISTS", "l")]))
        ops.append(Op(other_type("l", "set") + [S("LINSERT", "l", where, pivot, "new")]))
    ops.append(Op(make("l", "1", "2") + [S("LINSERT", "l", "BEFORE", "2", b"y" * 9000)] + dump("l")))
    check("linsert", ops)


SIDES = ["LEFT", "RIGHT"]


def test_moves(check):
    setups = {
        "distinct": make("s", "a", "b", "c") + make("d", "x", "y"),
        "to-missing": make("s", "a", "b") + make("d"),
        "same-key": make("s", "a", "b", "c") + make("d"),
        "same-single": make("s", "only") + make("d"),
        "from-missing": make("s") + make("d", "x"),
        "to-string": make("s", "a") + other_type("d", "string"),
        "from-hash": other_type("s", "hash") + make("d", "x"),
        "to-zset-from-missing": make("s") + other_type("d", "zset"),
    }
    ops = []
    for (name, setup), wherefrom, whereto in itertools.product(setups.items(), SIDES, SIDES):
        destination = "s" if name.startswith("same") else "d"
        ops.append(Op(setup + [S("LMOVE", "s", destination, wherefrom, whereto)] + dump("s") + dump("d")))
    for name, setup in setups.items():
        destination = "s" if name.startswith("same") else "d"
        ops.append(Op(setup + [S("RPOPLPUSH", "s", destination)] + dump("s") + dump("d")))
    for bad in (["UP", "LEFT"], ["LEFT", ""], ["left", "right"], ["LEFT"], ["LEFT", "RIGHT", "x"]):
        ops.append(Op(make("s", "a") + [S("LMOVE", "s", "d", *bad)] + dump("s") + dump("d")))
    check("moves", ops)


def test_lmpop(check):
    ops = []
    for numkeys in [b"1", b"2", b"3", b"4", b"0", b"-1", b"x", b"", b"9223372036854775807", b"2147483648"]:
        for tail in (["LEFT"], ["RIGHT"], ["LEFT", "COUNT", "2"], ["RIGHT", "COUNT", "10"], ["MIDDLE"],
                     ["LEFT", "COUNT", "0"], ["LEFT", "COUNT", "-1"], ["LEFT", "COUNT", "x"], ["LEFT", "COUNT"],
                     ["LEFT", "COUNT", "1", "COUNT", "1"], ["LEFT", "FOO"], ["left", "count", "9223372036854775807"]):
            ops.append(Op(make("a") + make("b", *FIVE) + make("c", "x") +
                          [S("LMPOP", numkeys, "a", "b", "c", *tail)] + dump("b")))
    ops.append(Op(make("a") + other_type("b", "string") + make("c", "x") + [S("LMPOP", 3, "a", "b", "c", "LEFT")]))
    ops.append(Op(make("a") + make("b") + [S("LMPOP", 2, "a", "b", "LEFT")]))
    ops.append(Op(make("a", "x") + [S("LMPOP", 2, "a", "a", "RIGHT", "COUNT", 5), S("EXISTS", "a")]))
    check("lmpop", ops)


WRONG_TYPE_CALLS = [
    ("LPUSH", "k", "x"), ("RPUSH", "k", "x"), ("LPUSHX", "k", "x"), ("RPUSHX", "k", "x"), ("LPOP", "k"),
    ("RPOP", "k", "2"), ("LLEN", "k"), ("LINDEX", "k", "0"), ("LSET", "k", "0", "x"),
    ("LINSERT", "k", "BEFORE", "a", "x"), ("LRANGE", "k", "0", "-1"), ("LTRIM", "k", "0", "1"), ("LREM", "k", "0", "a"),
    ("LPOS", "k", "a"), ("LMOVE", "k", "d", "LEFT", "LEFT"), ("LMOVE", "d", "k", "LEFT", "LEFT"),
    ("RPOPLPUSH", "k", "d"), ("RPOPLPUSH", "d", "k"), ("LMPOP", "1", "k", "LEFT"),
    ("BLPOP", "k", "0"), ("BRPOP", "nokey", "k", "0"), ("BLMOVE", "k", "d", "LEFT", "RIGHT", "0"),
    ("BLMOVE", "d", "k", "LEFT", "RIGHT", "0"), ("BRPOPLPUSH", "k", "d", "0"), ("BLMPOP", "0", "1", "k", "LEFT"),
    ("LINDEX", "k", "x"), ("LRANGE", "k", "x", "1"), ("LSET", "k", "x", "v"), ("LINSERT", "k", "MIDDLE", "a", "x"),
    ("LPOP", "k", "-1"), ("LPOS", "k", "a", "RANK", "0"),
]
# Commands of the other families against a list.
ON_A_LIST = [("GET", "k"), ("SET", "k", "v", "GET"), ("INCR", "k"), ("APPEND", "k", "x"), ("STRLEN", "k"),
             ("GETRANGE", "k", "0", "1"), ("SETRANGE", "k", "0", "x"), ("HGET", "k", "f"), ("HSET", "k", "f", "v"),
             ("SADD", "k", "m"), ("SCARD", "k"), ("SMEMBERS", "k"), ("ZADD", "k", "1", "m"), ("ZCARD", "k"),
             ("ZRANGE", "k", "0", "-1"), ("TYPE", "k"), ("EXPIRE", "k", "100000"), ("TTL", "k"), ("PERSIST", "k"),
             ("COPY", "k", "c"), ("LRANGE", "c", "0", "-1"), ("RENAME", "k", "r"), ("LRANGE", "r", "0", "-1"),
             ("TYPE", "r")]


def test_wrong_types(check):
    ops = []
    for type_name in OTHER_TYPES:
        for call in WRONG_TYPE_CALLS:
            # "d" is a list, so a move reaches the type check of "k" whichever side it is on.
            ops.append(Op(other_type("k", type_name) + make("d", "x") + [S(*call)] + dump("d") + [S("TYPE", "k")]))
    ops.append(Op(make("k", "a", "b") + [S("DEL", "c", "r")] + [S(*call) for call in ON_A_LIST]))
    check("wrong_types", ops)


LOOKS_NUMERIC = sorted(set(NUMBER_TEXTS + [str(x).encode() for x in INT_EDGES] +
                           [b"-0", b"00", b"0", b"127", b"128", b"-128", b"4095", b"4096", b"-4097", b"32767", b"32768",
                            b"8388607", b"8388608", b"-8388609", b"2147483647", b"2147483648", b"-2147483649",
                            b"9223372036854775807", b"9223372036854775808", b"1" * 19, b"1" * 20, b"+0"]))


def test_integer_looking_elements_come_back_unchanged(check):
    ops = [Op(make("l", *LOOKS_NUMERIC) + [S("LRANGE", "l", 0, -1), S("LLEN", "l")] +
              [S("LINDEX", "l", i) for i in range(0, len(LOOKS_NUMERIC), 7)] +
              [S("LPOS", "l", text, compare=LPOS_RANK) for text in LOOKS_NUMERIC[::5]])]
    for text in LOOKS_NUMERIC:
        ops.append(Op(make("l", "1", text, "-1") + [S("LREM", "l", 0, text), S("LPUSH", "l", text),
                                                     S("LSET", "l", 1, text), S("LINSERT", "l", "AFTER", text, text),
                                                     S("RPOP", "l"), S("LPOP", "l", 5)] + dump("l")))
    check("numeric_elements", ops)


def test_big_elements_and_listpack_limits(check):
    ops = []
    for size, depth in (("-2", "0"), ("-1", "0"), ("-5", "0"), ("4", "0"), ("1", "0"), ("0", "0"), ("-2", "1"),
                        ("4", "2")):
        config = S("CONFIG", "SET", "list-max-listpack-size", size, "list-compress-depth", depth)
        for length in (4095, 4096, 8000, 8189, 8190, 8191, 8192, 8193, 70000):
            ops.append(Op([config] + make("l", "a", "b") + [S("RPUSH", "l", b"z" * length), S("LPUSH", "l", "c")] +
                          dump("l") + [S("LSET", "l", 0, b"w" * length), S("RPOP", "l", 2)] + dump("l")))
        ops.append(Op([config] + make("l", *[b"e%d" % i for i in range(300)]) + dump("l") +
                      [S("LTRIM", "l", 0, 2)] + dump("l") + [S("LRANGE", "l", 0, -1)]))
        ops.append(Op([config] + make("l", *FIVE) + dump("l") + [S("RPOP", "l")] + dump("l") + [S("RPOP", "l", 2)] +
                      dump("l") + [S("LINSERT", "l", "AFTER", "a", "x"), S("LINSERT", "l", "AFTER", "a", "y")] +
                      dump("l")))
    ops.append(Op([S("CONFIG", "SET", "list-max-listpack-size", "-2", "list-compress-depth", "0")]))
    check("big_elements", ops)


def test_lset_and_linsert_across_nodes(check):
    """LSET and LINSERT at every position of lists that span several quicklist nodes (entries per
    node when the limit is positive, 8 kB when it is -2), with small values and values bigger than
    a node: replacing or inserting must split, grow or move nodes, never write past one."""
    ops = []
    for size, element_bytes in (("2", 1), ("1", 1), ("0", 1), ("4", 1), ("-2", 3000), ("-1", 1000)):
        config = S("CONFIG", "SET", "list-max-listpack-size", size, "list-compress-depth", "0")
        for length in (3, 6):
            elements = [b"%d" % i + b"z" * (element_bytes - 1) for i in range(length)]
            for index in range(length):
                for value in (b"v", b"V" * 9000):
                    ops.append(Op([config] + make("l", *elements) + [S("LSET", "l", index, value)] + dump("l")))
                    for where in ("BEFORE", "AFTER"):
                        ops.append(Op([config] + make("l", *elements) +
                                      [S("LINSERT", "l", where, elements[index], value)] + dump("l")))
    ops.append(Op([S("CONFIG", "SET", "list-max-listpack-size", "-2")]))
    check("across_nodes", ops)


def test_blocking_commands_that_cannot_block(check):
    """Inside MULTI a blocking command answers at once; outside it only when there is something
    to pop or its arguments are wrong (timeouts past a long long: BLOCKING_TIMEOUT)."""
    calls = [lambda t: ("BLPOP", "e", "l", t), lambda t: ("BRPOP", "l", "e", t),
             lambda t: ("BLMOVE", "l", "d", "RIGHT", "LEFT", t), lambda t: ("BRPOPLPUSH", "l", "d", t),
             lambda t: ("BLMPOP", t, "2", "e", "l", "LEFT", "COUNT", "2")]
    ops = []
    for call, timeout in itertools.product(calls, LIST_SAFE_TIMEOUTS):
        for setup in (make("l", *FIVE), make("l"), other_type("l", "string")):
            ops.append(Op(make("e") + make("d") + setup +
                          [S("MULTI"), S(*call(timeout)), S("EXEC")] + dump("l") + dump("d")))
    for call, timeout in itertools.product(calls, LIST_HUGE_TIMEOUTS + [b"-1", b"x", b"-inf"]):
        ops.append(Op(make("e") + make("l") + [S(*call(timeout), compare=BLOCKING_TIMEOUT)]))
    for call, timeout in itertools.product(calls, [b"0", b"0.5", b"1e15"]):
        ops.append(Op(make("e") + make("d") + make("l", *FIVE) + [S(*call(timeout), compare=BLOCKING_TIMEOUT)] +
                      dump("l") + dump("d")))
    for bad in (("BLPOP", "l"), ("BLMOVE", "l", "d", "UP", "LEFT", "0"), ("BLMOVE", "l", "d", "LEFT", "LEFT"),
                ("BRPOPLPUSH", "l", "d"), ("BLMPOP", "0", "0", "l", "LEFT"), ("BLMPOP", "0", "x", "l", "LEFT"),
                ("BLMPOP", "0", "2", "l", "LEFT"), ("BLMPOP", "0", "1", "l", "LEFT", "COUNT", "0"),
                ("BLMPOP", "x", "1", "l", "MIDDLE"), ("BLMPOP", "0", "1", "l")):
        ops.append(Op(make("l") + [S(*bad)]))
    check("blocking_at_once", ops)


ARITY_CALLS = [("LPUSH", "k"), ("RPUSH",), ("LPUSHX", "k"), ("RPUSHX", "k"), ("LPOP",), ("RPOP",), ("LLEN",),
               ("LLEN", "k", "x"), ("LINDEX", "k"), ("LSET", "k", "0"), ("LINSERT", "k", "BEFORE", "a"),
               ("LRANGE", "k", "0"), ("LTRIM", "k", "0"), ("LREM", "k", "0"), ("LPOS", "k"), ("LMOVE", "a", "b", "LEFT"),
               ("RPOPLPUSH", "a"), ("LMPOP", "1"), ("BLPOP", "k"), ("BRPOP",), ("BRPOPLPUSH", "a", "b"),
               ("BLMOVE", "a", "b", "LEFT", "LEFT"), ("BLMPOP", "0", "1"), ("LINDEX", "k", "0", "1"),
               ("LSET", "k", "0", "v", "w"), ("LRANGE", "k", "0", "1", "2")]


def test_arity_errors(check):
    check("arity", [Op(make("k", "a") + [S(*call)] + dump("k")) for call in ARITY_CALLS])


def test_list_config(check):
    ops = []
    for name, values in LIST_CONFIG_VALUES.items():
        for value in values:
            ops.append(Op([S("CONFIG", "SET", name, value),
                           S("CONFIG", "GET", "list-*", compare=CONFIG_PAIRS)]))
    ops.append(Op([S("CONFIG", "SET", "list-max-listpack-size", "-2", "list-compress-depth", "0"),
                   S("CONFIG", "GET", "list-max-ziplist-size", compare=CONFIG_PAIRS)]))
    check("list_config", ops, protocols=(2,))


# ---- Redis 7.2's answers, on the server under test alone (they fail against 7.0 by design) ---------

def _calls(conn, *commands):
    return [conn.call(*command).raw for command in commands]


@pytest.mark.redis72
def test_small_lists_are_listpacks_and_grow_into_quicklists(diff_goblin):
    """7.2: a list starts as a listpack and becomes a quicklist once a push would take it past
    list-max-listpack-size (entries when positive, bytes when negative: -2 is 8 kB); shrinking, it
    goes back to a listpack at half the limit, if it is one quicklist node by then."""
    with diff_goblin.raw() as c:
        try:
            assert _calls(c, ("FLUSHALL",), ("CONFIG", "SET", "list-max-listpack-size", "4")) == [b"+OK\r\n"] * 2
            encoding = ("OBJECT", "ENCODING", "l")
            assert _calls(c, ("RPUSH", "l", "a", "b", "c", "d"), encoding) == [b":4\r\n", b"$8\r\nlistpack\r\n"]
            assert _calls(c, ("RPUSH", "l", "e"), encoding) == [b":5\r\n", b"$9\r\nquicklist\r\n"]
            # [a b c d][e]: popping e leaves one node of 4 (> 4/2), then 3, then 2: a listpack again.
            assert _calls(c, ("RPOP", "l"), encoding, ("RPOP", "l"), encoding, ("RPOP", "l"), encoding) == [
                b"$1\r\ne\r\n", b"$9\r\nquicklist\r\n", b"$1\r\nd\r\n", b"$9\r\nquicklist\r\n", b"$1\r\nc\r\n",
                b"$8\r\nlistpack\r\n"]
            assert _calls(c, ("RPUSH", "m", "1", "2", "3", "4", "5"), ("OBJECT", "ENCODING", "m")) == [
                b":5\r\n", b"$9\r\nquicklist\r\n"]
            assert _calls(c, ("LTRIM", "m", "0", "1"), ("OBJECT", "ENCODING", "m")) == [b"+OK\r\n", b"$8\r\nlistpack\r\n"]
            assert _calls(c, ("CONFIG", "SET", "list-max-listpack-size", "-2"), ("RPUSH", "s", "x", "y", "z"),
                          ("OBJECT", "ENCODING", "s"), ("RPUSH", "s", "w" * 9000), ("OBJECT", "ENCODING", "s")) == [
                b"+OK\r\n", b":3\r\n", b"$8\r\nlistpack\r\n", b":4\r\n", b"$9\r\nquicklist\r\n"]
        finally:
            c.call("CONFIG", "SET", "list-max-listpack-size", "-2")


@pytest.mark.redis72
def test_lpos_rank_llong_min_is_out_of_range(diff_goblin):
    """7.2 (#12167): RANK takes -LONG_MAX..LONG_MAX, checked before the key is looked up."""
    error = b"-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"
    with diff_goblin.raw() as c:
        assert _calls(c, ("FLUSHALL",), ("RPUSH", "l", "a", "a"), ("LPOS", "l", "a", "RANK", "-9223372036854775808"),
                      ("LPOS", "nokey", "a", "RANK", "-9223372036854775808", "COUNT", "0"),
                      ("LPOS", "l", "a", "RANK", "-9223372036854775807")) == [
            b"+OK\r\n", b":2\r\n", error, error, b"$-1\r\n"]


@pytest.mark.redis72
@pytest.mark.parametrize("timeout", LIST_HUGE_TIMEOUTS)
def test_timeouts_beyond_a_long_long_are_out_of_range(diff_goblin, timeout):
    """7.2 (#11338): seconds whose milliseconds do not fit a long long are out of range."""
    error = b"-ERR timeout is out of range\r\n"
    with diff_goblin.raw() as c:
        assert _calls(c, ("BLPOP", "nokey", timeout), ("BLMOVE", "nokey", "d", "LEFT", "LEFT", timeout),
                      ("BLMPOP", timeout, "1", "nokey", "LEFT")) == [error] * 3


# ---- the 7.2 comparators themselves (no servers) -----------------------------------------------------

@pytest.mark.parametrize("options,stops", [
    ([b"RANK", b"-9223372036854775808"], True),
    ([b"count", b"0", b"rank", b"-9223372036854775808"], True),
    ([b"COUNT", b"-1", b"RANK", b"-9223372036854775808"], False),   # COUNT's error comes first
    ([b"RANK", b"0", b"RANK", b"-9223372036854775808"], False),
    ([b"MAXLEN", b"x", b"RANK", b"-9223372036854775808"], False),
    ([b"FOO", b"RANK", b"-9223372036854775808"], False),
    ([b"RANK", b"-9223372036854775807"], False),
    ([b"RANK"], False), ([], False),
])
def test_lpos_rank_comparator_follows_the_72_parser(options, stops):
    assert lpos_stops_at_llong_min_rank([b"LPOS", b"k", b"a", *options]) is stops


@pytest.mark.parametrize("args,beyond", [
    ([b"BLPOP", b"k", b"1e30"], True), ([b"brpop", b"k", b"j", b"inf"], True), ([b"BLPOP", b"k", b"1e16"], True),
    ([b"BLMOVE", b"a", b"b", b"LEFT", b"LEFT", b"9223372036854775807"], True),
    ([b"BLMPOP", b"+inf", b"1", b"k", b"LEFT"], True), ([b"BRPOPLPUSH", b"a", b"b", b"1E20"], True),
    ([b"BLPOP", b"k", b"1e15"], False), ([b"BLPOP", b"k", b"-inf"], False), ([b"BLPOP", b"k", b"x"], False),
    ([b"BLPOP", b"k", b"nan"], False), ([b"LPOP", b"k", b"1e30"], False), ([b"BLPOP", b"k"], False),
])
def test_timeout_comparator_spots_overflowing_timeouts(args, beyond):
    assert timeout_beyond_llong_max(args) is beyond
