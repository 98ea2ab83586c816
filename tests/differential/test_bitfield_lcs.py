"""BITFIELD, BITFIELD_RO and LCS side by side with redis-server, byte for byte, in RESP2 and RESP3:
seeded random streams (BITFIELD_LCS_STREAM_GENERATORS: each BITFIELD call followed by a GET of the
whole string, among SETBIT, SETRANGE, APPEND, INCR, WRONGTYPE keys, expiry and RENAME), every
type width under every OVERFLOW mode at its bounds, "#" offsets, the errors in the order Redis
checks them, the proto-max-bulk-len limits, and LCS over small alphabets with every option
combination.

Redis 7.0 (the reference) and 7.2 agree on every reply here. Where Goblin differs from both on
purpose (a BITFIELD whose writes all FAIL still counts the key it created as a change, so the
append-only file has it) the difference shows only in persistence counters and the log, which
tests/integration/test_effects.py checks.

Environment: GOBLIN_BITFIELD_SEEDS=5,9 (replace the RESP2 seeds), GOBLIN_DIFF_RANDOM_SEEDS=n (add
fresh seeds), GOBLIN_BITFIELD_OPS (stream length, default 3000).
"""

import itertools
import os
import random

import pytest

from support.differ import EXACT, OBJECT_ENCODING, TTL, Op, Step
from support.types import supported_commands

from .generators import (BITFIELD_BAD_OFFSETS, BITFIELD_BAD_TYPES, BITFIELD_FAR_OFFSETS, BITFIELD_LCS_GENERATORS,
                         BITFIELD_LCS_STREAM_GENERATORS, BITFIELD_TYPES, KEYS, LCS_ALPHABETS, make_stream)
from .streams import run_stream, stream_seeds, supported_rows

DEFAULT_SEEDS = [41, 42, 43, 44, 45, 46]
RESP3_SEEDS = [341, 342]
LENGTH = int(os.environ.get("GOBLIN_BITFIELD_OPS", "3000"))
MODES = ["WRAP", "SAT", "FAIL"]


def S(*args, compare=EXACT):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), compare)


def bounds(ftype: str):
    bits = int(ftype[1:])
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ftype[0] == "i" else (0, (1 << bits) - 1)


def clamp64(v: int) -> int:
    return max(-2**63, min(2**63 - 1, v))


@pytest.fixture
def check(corpus):
    return lambda name, ops, protocols=(2, 3): corpus("bitfield", name, ops, protocols)


# ---- seeded streams ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stream_generators(pair):
    return supported_rows(pair, BITFIELD_LCS_STREAM_GENERATORS)


def final_contents() -> Op:
    return Op([Step((b"GET", key), EXACT, True) for key in KEYS], "final string contents")


@pytest.mark.parametrize("protocol,seed", stream_seeds("GOBLIN_BITFIELD_SEEDS", DEFAULT_SEEDS, RESP3_SEEDS),
                         ids=lambda x: str(x))
def test_bitfield_lcs_stream(pair, stream_generators, shrink_budget, reported_mismatches, protocol, seed):
    ops = make_stream(seed, LENGTH, stream_generators, protocol=protocol) + [final_contents()]
    run_stream(pair, ops, family="bitfield/lcs", seed=seed, protocol=protocol, seeds_env="GOBLIN_BITFIELD_SEEDS",
               test_path="tests/differential/test_bitfield_lcs.py",
               selector=f"test_bitfield_lcs_stream and {protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


def test_server_under_test_has_every_bitfield_lcs_generator(pair):
    names = sorted({gen.command for gen in BITFIELD_LCS_GENERATORS})
    with pair.goblin_server.raw() as g:
        assert sorted(set(names) - supported_commands(g, names)) == []


def test_streams_draw_every_row_and_every_subcommand(stream_generators):
    drawn, words = set(), set()
    for seed in DEFAULT_SEEDS:
        for op in make_stream(seed, LENGTH, stream_generators):
            drawn.add(op.source)
            for step in op.steps:
                if step.args and step.args[0].upper() in (b"BITFIELD", b"BITFIELD_RO", b"LCS"):
                    words |= {a.upper() for a in step.args[2:] if a.isalpha()}
    assert {gen.command for gen in stream_generators} - drawn == set()
    assert {b"GET", b"SET", b"INCRBY", b"OVERFLOW", b"WRAP", b"SAT", b"FAIL", b"IDX", b"LEN", b"MINMATCHLEN",
            b"WITHMATCHLEN"} - words == set()


# ---- BITFIELD: every type and mode at its bounds ----------------------------------------------

def boundary_op(ftype: str, mode: str) -> Op:
    lo, hi = bounds(ftype)
    steps = [S("DEL", "bf"), S("SET", "bf", b"\x00\xff" * 9)]
    sets = [hi, hi + 1, lo, lo - 1, hi + 2, lo - 2, 0, -1, 1, 2**63 - 1, -2**63, -2**63 + hi, -2**63 + hi + 1]
    for value in sets:
        # offset 3: the field straddles bytes; "#1": the second field of that width.
        steps.append(S("BITFIELD", "bf", "OVERFLOW", mode, "SET", ftype, 3, clamp64(value),
                       "GET", ftype, 3, "SET", ftype, "#1", clamp64(value), "GET", ftype, "#1"))
        steps.append(S("GET", "bf"))
    for start, increment in [(hi, 1), (hi, 2), (lo, -1), (lo, -2), (hi, hi - lo), (lo, lo - hi), (hi, 2**63 - 1),
                             (lo, -2**63), (0, -1), (hi, -2**63), (lo, 2**63 - 1), (hi - 1, 1), (lo + 1, -1)]:
        steps.append(S("BITFIELD", "bf", "SET", ftype, 5, start, "OVERFLOW", mode, "INCRBY", ftype, 5,
                       clamp64(increment), "INCRBY", ftype, 5, clamp64(increment), "GET", ftype, 5))
        steps.append(S("GET", "bf"))
    steps.append(S("BITFIELD_RO", "bf", "GET", ftype, 0, "GET", ftype, "#2", "GET", ftype, 140))
    return Op(steps, f"{ftype} {mode}")


@pytest.mark.parametrize("mode", MODES)
def test_every_type_at_its_bounds(check, mode):
    check(f"bounds_{mode.lower()}", [boundary_op(t.decode(), mode) for t in BITFIELD_TYPES])


def test_fields_at_every_bit_position_of_short_values(check):
    ops = []
    for ftype in ["u1", "i2", "u7", "i8", "u9", "i15", "u31", "i33", "u57", "i63", "u63", "i64"]:
        steps = []
        for start in [b"", b"1", b"\xff", b"ab", b"12345", b"\x80" * 9]:
            steps.append(S("SET", "bf", start))
            for offset in range(0, 80, 3):
                steps.append(S("BITFIELD", "bf", "GET", ftype, offset, "INCRBY", ftype, offset, 1, "GET", ftype,
                               offset + 1))
            steps.append(S("GET", "bf"))
            steps.append(S("OBJECT", "ENCODING", "bf", compare=OBJECT_ENCODING))
        ops.append(Op(steps, ftype))
    check("bit_positions", ops, protocols=(2,))


# ---- BITFIELD: errors and their order ---------------------------------------------------------

ERROR_CALLS = [
    # Subcommand shapes.
    ["GET", "u8"], ["SET", "u8", "0"], ["INCRBY", "i8", "0"], ["OVERFLOW"], ["FOO", "u8", "0"], ["u8", "0"],
    ["GET", "u8", "0", "GET"], ["get", "U8", "0"], ["Get", "u8", "0", "oVerFlow", "Sat", "incrBY", "u8", "0", "300"],
    # Types, offsets and values, checked in argument order.
    *[["GET", t, "0"] for t in BITFIELD_BAD_TYPES],
    *[["GET", "u8", o] for o in BITFIELD_BAD_OFFSETS],
    *[["GET", "i64", o] for o in BITFIELD_FAR_OFFSETS],
    *[["SET", "u8", "0", v] for v in ["x", "1.5", "", "9223372036854775808", "-9223372036854775809", "+1", "0x1"]],
    ["GET", "u64", "0", "SET", "u8", "x", "1"], ["SET", "u8", "x", "1", "GET", "u64", "0"],
    ["SET", "u8", "0", "x", "GET", "u64", "0"], ["GET", "u8", "0", "FOO"], ["OVERFLOW", "bar", "GET", "u64", "0"],
    ["GET", "u64", "0", "OVERFLOW", "bar"], ["OVERFLOW", "FAIL", "OVERFLOW", "wrap", "INCRBY", "u2", "0", "9"],
    ["INCRBY", "u8", "#-1", "1"], ["SET", "i64", "#288230376151711745", "-5", "GET", "i64", "64"],
    ["GET", "u8", "#1", "GET", "u1", "#9", "GET", "i1", "#0"], ["SET", "u8", "#", "1"],
]


def error_ops(command: str) -> list:
    ops = []
    for call in ERROR_CALLS:
        for setup in (S("SET", "bf", "abc"), S("HSET", "bf", "f", "v"), S("DEL", "bf"), S("SET", "bf", "12")):
            ops.append(Op([S("DEL", "bf"), setup, S(command, "bf", *call), S("TYPE", "bf"),
                           S("GET", "bf")], f"{command} {call}"))
    return ops


def test_bitfield_errors_come_in_redis_order(check):
    check("bitfield_errors", error_ops("BITFIELD"))


def test_bitfield_ro_refuses_writes_only_after_parsing(check):
    ops = error_ops("BITFIELD_RO")
    for setup in (S("SET", "bf", "abc"), S("HSET", "bf", "f", "v"), S("DEL", "bf")):
        for call in [["GET", "u8", "0"], ["GET", "i64", "#3", "GET", "u63", "1"], [], ["SET", "u8", "0", "1"],
                     ["INCRBY", "u8", "0", "1"], ["OVERFLOW", "SAT"], ["GET", "u8", "0", "SET", "u8", "0", "x"]]:
            ops.append(Op([S("DEL", "bf"), setup, S("BITFIELD_RO", "bf", *call), S("BITFIELD", "bf", *call),
                           S("EXISTS", "bf")], f"ro {call}"))
    check("bitfield_ro", ops)


def test_a_get_never_grows_the_string_and_a_failed_write_still_does(check):
    ops = [Op([S("DEL", "bf"), S("BITFIELD", "bf", "GET", "u8", 100), S("EXISTS", "bf"),
               S("BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "u1", 0, 2), S("EXISTS", "bf"), S("STRLEN", "bf"),
               S("SET", "bf", ""), S("BITFIELD", "bf", "OVERFLOW", "FAIL", "SET", "u1", 63, 2), S("STRLEN", "bf"),
               S("BITFIELD", "bf", "GET", "i64", "#100", "SET", "u8", 0, 1), S("STRLEN", "bf"),
               S("SET", "bf", "x", "EX", 1000), S("BITFIELD", "bf", "SET", "i16", 20, -3), S("TTL", "bf", compare=TTL),
               S("GET", "bf"), S("OBJECT", "ENCODING", "bf", compare=OBJECT_ENCODING),
               S("SET", "bf", "123"), S("BITFIELD", "bf", "GET", "u8", 0),
               S("OBJECT", "ENCODING", "bf", compare=OBJECT_ENCODING),
               S("BITFIELD", "bf", "SET", "u8", 0, 49), S("OBJECT", "ENCODING", "bf", compare=OBJECT_ENCODING),
               S("SET", "bf", "7"), S("SETBIT", "bf", 1, 0), S("OBJECT", "ENCODING", "bf", compare=OBJECT_ENCODING)])]
    check("growth", ops)


def test_offsets_against_a_lowered_proto_max_bulk_len(check):
    # 1 MB is the lowest proto-max-bulk-len Redis takes: bit offsets stop at 8 * 2^20.
    limit = 1 << 20
    steps = [S("CONFIG", "SET", "proto-max-bulk-len", "1mb"), S("DEL", "bf")]
    for offset in [8 * limit - 8, 8 * limit - 1, 8 * limit, f"#{limit - 1}", f"#{limit}", f"#{8 * limit // 64 - 1}"]:
        for ftype in ("u8", "i64", "u1"):
            steps += [S("BITFIELD", "bf", "GET", ftype, offset), S("GETBIT", "bf", offset)]
    steps += [S("BITFIELD", "bf", "SET", "u8", 8 * limit - 8, 255), S("STRLEN", "bf"),
              S("BITFIELD", "bf", "SET", "i64", 8 * limit - 1, -1), S("STRLEN", "bf"), S("GETRANGE", "bf", -9, -1),
              S("SETBIT", "bf", 8 * limit, 1), S("SETBIT", "bf", 8 * limit - 1, 0), S("STRLEN", "bf"), S("DEL", "bf"),
              S("CONFIG", "SET", "proto-max-bulk-len", "512mb")]
    check("proto_max_bulk_len", [Op(steps, "limit")], protocols=(2,))


def test_random_bitfield_calls_on_one_string(check):
    """One long string, many multi-field calls with the GET of the whole value after each."""
    rng = random.Random(5)
    ops = []
    for round_ in range(30):
        steps = [S("DEL", "bf")]
        for _ in range(40):
            call = []
            for _ in range(rng.randint(1, 6)):
                ftype = rng.choice(BITFIELD_TYPES).decode()
                lo, hi = bounds(ftype)
                offset = rng.choice([str(rng.randrange(300)), f"#{rng.randrange(8)}"])
                kind = rng.random()
                if kind < 0.15:
                    call += ["OVERFLOW", rng.choice(MODES)]
                elif kind < 0.4:
                    call += ["GET", ftype, offset]
                elif kind < 0.7:
                    call += ["SET", ftype, offset, clamp64(rng.choice([lo, hi, hi + 1, lo - 1, rng.randint(lo, hi)]))]
                else:
                    call += ["INCRBY", ftype, offset, clamp64(rng.choice([1, -1, hi, lo, rng.randint(-hi - 1, hi)]))]
            steps += [S("BITFIELD", "bf", *call), S("GET", "bf")]
        ops.append(Op(steps, f"round {round_}"))
    check("one_string", ops)


# ---- SETBIT's reply when nothing changes -------------------------------------------------------

def test_setbit_that_changes_nothing(check):
    ops = [Op([S("DEL", "b"), S("SETBIT", "b", 9, 1), S("SETBIT", "b", 9, 1), S("SETBIT", "b", 3, 0),
               S("SETBIT", "b", 100, 0), S("STRLEN", "b"), S("GET", "b"), S("SET", "b", "12"), S("SETBIT", "b", 2, 1),
               S("OBJECT", "ENCODING", "b", compare=OBJECT_ENCODING), S("GET", "b"), S("SET", "b", "abc"),
               S("SETBIT", "b", 0, 0), S("OBJECT", "ENCODING", "b", compare=OBJECT_ENCODING)])]
    check("setbit", ops)


# ---- LCS -------------------------------------------------------------------------------------

LCS_OPTION_SETS = [[]] + [list(c) for n in (1, 2, 3) for c in itertools.permutations(
    ["LEN", "IDX", "WITHMATCHLEN", ("MINMATCHLEN", "2")], n)]


def flat(options):
    out = []
    for o in options:
        out += list(o) if isinstance(o, tuple) else [o]
    return out


def test_lcs_every_option_combination(check):
    rng = random.Random(17)
    ops = []
    for alphabet in LCS_ALPHABETS:
        for _ in range(12):
            a = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            b = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            steps = [S("MSET", "a", a, "b", b)]
            for options in LCS_OPTION_SETS:
                steps.append(S("LCS", "a", "b", *flat(options)))
            steps.append(S("LCS", "b", "a", "IDX", "WITHMATCHLEN"))
            ops.append(Op(steps, f"{a!r} {b!r}"))
    check("lcs_options", ops)


def test_lcs_min_match_lengths_on_random_strings(check):
    rng = random.Random(18)
    ops = []
    for _ in range(150):
        alphabet = rng.choice(LCS_ALPHABETS)
        a = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))
        b = bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))
        steps = [S("MSET", "a", a, "b", b), S("LCS", "a", "b"), S("LCS", "a", "b", "LEN"), S("LCS", "b", "a")]
        for minimum in ("0", "1", "2", "3", "4", "7", "-1", "100"):
            steps.append(S("LCS", "a", "b", "IDX", "MINMATCHLEN", minimum, "WITHMATCHLEN"))
        ops.append(Op(steps, f"{a!r} {b!r}"))
    check("lcs_minmatchlen", ops)


def test_lcs_long_values(check):
    rng = random.Random(19)
    ops = []
    for n, m, alphabet in [(500, 300, b"ab"), (1000, 1000, b"acgt"), (64, 64, b"a"), (65, 63, b"a"), (2000, 5, b"ab"),
                           (5, 2000, b"abc"), (128, 129, bytes(range(256)))]:
        a = bytes(rng.choice(alphabet) for _ in range(n))
        b = bytes(rng.choice(alphabet) for _ in range(m))
        ops.append(Op([S("MSET", "a", a, "b", b), S("LCS", "a", "b"), S("LCS", "a", "b", "LEN"),
                       S("LCS", "a", "b", "IDX", "MINMATCHLEN", 3, "WITHMATCHLEN"), S("LCS", "b", "a", "IDX")],
                      f"{n}x{m}"))
    check("lcs_long", ops)


def test_lcs_errors_and_value_kinds(check):
    cases = [["LCS", "a", "b", "LEN", "IDX"], ["LCS", "a", "b", "IDX", "LEN", "FOO"], ["LCS", "a", "b", "MINMATCHLEN"],
             ["LCS", "a", "b", "MINMATCHLEN", "x"], ["LCS", "a", "b", "MINMATCHLEN", "1.5", "LEN", "IDX"],
             ["LCS", "a", "b", "FOO"], ["LCS", "a", "b", "len", "Len"], ["LCS", "a", "nokey"], ["LCS", "nokey", "a", "IDX"],
             ["LCS", "nokey", "nokey2", "IDX", "WITHMATCHLEN"], ["LCS", "a", "h"], ["LCS", "h", "a", "FOO"],
             ["LCS", "h", "h", "LEN", "IDX"], ["LCS", "a"], ["LCS", "a", "a"], ["LCS", "n", "a", "IDX"],
             ["LCS", "n", "n"], ["LCS", "a", "b", "MINMATCHLEN", "9223372036854775808"]]
    ops = [Op([S("DEL", "a", "b", "h", "n"), S("SET", "a", "ohmytext"), S("SET", "b", "mynewtext"),
               S("HSET", "h", "f", "v"), S("SET", "n", "12345"), S(*c)], " ".join(c)) for c in cases]
    check("lcs_errors", ops)


def test_lcs_memory_limit_follows_redis_table_size(check):
    # Redis refuses when (|a| + 1) * (|b| + 1) * 4 bytes exceed proto-max-bulk-len: at 1 MB,
    # 511 x 511 passes (1,048,576 bytes) and 511 x 512 does not.
    steps = [S("CONFIG", "SET", "proto-max-bulk-len", "1mb"), S("SET", "a", "a" * 511), S("SET", "b", "ab" * 256),
             S("SET", "c", "b" * 511), S("LCS", "a", "c", "LEN"), S("LCS", "a", "b", "LEN"), S("LCS", "a", "b"),
             S("LCS", "b", "a", "IDX"), S("LCS", "a", "b", "LEN", "IDX"), S("LCS", "a", "nokey"),
             S("CONFIG", "SET", "proto-max-bulk-len", "512mb"), S("LCS", "a", "b", "LEN")]
    check("lcs_memory", [Op(steps, "limit")])


def test_in_scripts(check):
    # BITFIELD_RO and LCS are read-only commands: EVAL_RO runs them; BITFIELD, even with GETs only, is
    # a write and is refused there.
    ro = "return redis.call('BITFIELD_RO', KEYS[1], 'GET', 'u8', 0, 'GET', 'i4', '#1')"
    rw = "return redis.call('BITFIELD', KEYS[1], 'GET', 'u8', 0)"
    fail = "return redis.call('BITFIELD', KEYS[1], 'OVERFLOW', 'FAIL', 'INCRBY', 'u8', 0, 500, 'GET', 'u8', 0)"
    lcs = "return redis.call('LCS', KEYS[1], KEYS[2], 'IDX', 'WITHMATCHLEN')"
    ro_write = "return redis.call('BITFIELD_RO', KEYS[1], 'SET', 'u8', 0, 1)"
    ops = [Op([S("DEL", "k", "j"), S("SET", "k", "abc"), S("SET", "j", "xbcx"), S("EVAL_RO", ro, 1, "k"),
               S("EVAL_RO", rw, 1, "k"), S("EVAL", rw, 1, "k"), S("EVAL", fail, 1, "k"), S("EVAL_RO", lcs, 2, "k", "j"),
               S("EVAL", ro_write, 1, "k"), S("GET", "k")], "scripts")]
    check("scripts", ops)
