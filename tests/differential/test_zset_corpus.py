"""Enumerated sorted-set edge cases, sent to both servers and compared like the random streams.

Where the zset streams sample, these enumerate: score texts (ZADD, ZINCRBY), range bounds (score
and lex), LIMIT and rank arithmetic on small and large sets, every ZADD flag combination, the
listpack thresholds, pops and random members at their limits, set operations with infinite
weights, arity and syntax errors. Each Op resets the keys it uses, so a corpus runs on past a
mismatch and a failure shrinks to one Op. Scores are compared as doubles (7.0 prints 17 digits);
test_zset.py asserts 7.2's exact texts.
"""

import itertools

import pytest

from support.differ import EXACT, OBJECT_ENCODING, RANK_WITHSCORE, SCORES, ZRANDMEMBER, Op, Step

from .generators import NUMBER_TEXTS, ZBOUND_BAD, ZSCORE_BAD, ZSCORE_EDGES, ZSCORE_TIES


def S(*args, compare=SCORES):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), compare)


@pytest.fixture
def check(corpus):
    return lambda name, ops, protocols=(2, 3): corpus("zset", name, ops, protocols)


def dump(key):
    return [S("ZRANGE", key, 0, -1, "WITHSCORES"), S("OBJECT", "ENCODING", key, compare=OBJECT_ENCODING)]


def big_set(key, n, score=lambda i: i % 7):
    """ZADDs (at most 100 pairs each) building a set of n members m0..m{n-1}."""
    steps = [S("DEL", key)]
    for start in range(0, n, 100):
        args = ["ZADD", key]
        for i in range(start, min(n, start + 100)):
            args += [score(i), f"m{i}"]
        steps.append(S(*args))
    return steps


SCORE_TEXTS = sorted(set(ZSCORE_TIES + ZSCORE_EDGES + ZSCORE_BAD + NUMBER_TEXTS))


def test_score_texts(check):
    ops = []
    for text in SCORE_TEXTS:
        ops.append(Op([S("DEL", "z"), S("ZADD", "z", text, "a"), S("ZSCORE", "z", "a"), S("ZINCRBY", "z", text, "a"),
                       S("ZADD", "z", "INCR", text, "b")] + dump("z")))
    check("score_texts", ops)


def test_incr_to_nan_and_infinities(check):
    starts = [b"inf", b"-inf", b"0", b"-0", b"1e308", b"-1e308", b"1.5"]
    incrs = [b"inf", b"-inf", b"+inf", b"1e308", b"-1e308", b"0", b"-0", b"nan"]
    ops = [Op([S("DEL", "z"), S("ZADD", "z", start, "a"), S("ZINCRBY", "z", incr, "a"),
               S("ZADD", "z", "INCR", incr, "a"), S("ZADD", "z", "INCR", "GT", incr, "a"),
               S("ZADD", "z", "INCR", "LT", incr, "a")] + dump("z"))
           for start, incr in itertools.product(starts, incrs)]
    check("incr_nan", ops)


ZADD_FLAGS = ["NX", "XX", "GT", "LT", "CH", "INCR"]


def test_zadd_flag_combinations(check):
    ops = []
    for n in range(0, 4):
        for flags in itertools.combinations(ZADD_FLAGS, n):
            for existing in (None, 1, 5):
                for score in ("1", "3", "7"):
                    steps = [S("DEL", "z")]
                    if existing is not None:
                        steps.append(S("ZADD", "z", existing, "a", 2, "b"))
                    steps.append(S("ZADD", "z", *flags, score, "a"))
                    steps.append(S("ZADD", "z", *flags, score, "a", score, "c"))
                    steps += dump("z")
                    ops.append(Op(steps))
    check("zadd_flags", ops, protocols=(2,))


def test_zadd_arity_and_syntax(check):
    cases = [["ZADD", "z"], ["ZADD", "z", "1"], ["ZADD", "z", "1", "a", "2"], ["ZADD", "z", "NX"],
             ["ZADD", "z", "NX", "1"], ["ZADD", "z", "CH", "CH", "1", "a"], ["ZADD", "z", "1", "a", "NX", "b"],
             ["ZADD", "z", "nan", "a"], ["ZADD", "z", "1", "a", "x", "b"], ["ZINCRBY", "z", "1"],
             ["ZINCRBY", "z", "nx", "a"], ["ZINCRBY", "z", "1", "a", "b"], ["ZINCRBY", "z", "incr", "1"],
             # Redis reads a flag as a C string: it ends at a NUL byte.
             ["ZADD", "z", "xx\x00junk", "5", "a", "6", "b"], ["ZADD", "z", "CH\x00", "GT\x00x", "0", "a"]]
    ops = [Op([S("DEL", "z"), S("ZADD", "z", 1, "a"), S(*c)] + dump("z")) for c in cases]
    ops += [Op([S("SET", "z", "x"), S(*c), S("GET", "z")]) for c in cases + [["ZADD", "z", "1", "a"],
                                                                          ["ZADD", "z", "XX", "1", "a"]]]
    check("zadd_syntax", ops)


BOUNDS = [b"-inf", b"+inf", b"inf", b"(-inf", b"(+inf", b"0", b"(0", b"-0", b"1", b"(1", b"2", b"(2", b"1.5",
          b"(", b"", b" 2", b"0x2", b"1e400", b"(3"] + ZBOUND_BAD


def test_score_ranges(check):
    ops = []
    for size in (5, 150):
        setup = big_set("z", size, score=lambda i: i % 4) + [S("ZADD", "z", "inf", "top", "-inf", "bottom")]
        for lo, hi in itertools.product(BOUNDS, repeat=2):
            ops.append(Op(setup[:1] + setup[1:] + [
                S("ZCOUNT", "z", lo, hi),
                S("ZRANGEBYSCORE", "z", lo, hi, "WITHSCORES", "LIMIT", 1, 3),
                S("ZREVRANGEBYSCORE", "z", hi, lo, "LIMIT", 0, 2),
                S("ZRANGE", "z", lo, hi, "BYSCORE", "REV", "LIMIT", 2, -1),
                S("ZREMRANGEBYSCORE", "z", lo, hi), S("ZCARD", "z")]))
    check("score_ranges", ops, protocols=(2,))


LEX = [b"-", b"+", b"[a", b"(a", b"[m5", b"(m5", b"[m", b"(m9", b"[", b"(", b"[\xff", b"+\x00", b"-x", b"a", b"",
       b"[m10", b"(m100"]


def test_lex_ranges(check):
    ops = []
    for size in (20, 140):
        setup = big_set("z", size, score=lambda i: 0) + [S("ZADD", "z", 0, "", 0, "a", 0, "\xff")]
        for lo, hi in itertools.product(LEX, repeat=2):
            ops.append(Op(setup + [
                S("ZLEXCOUNT", "z", lo, hi),
                S("ZRANGEBYLEX", "z", lo, hi, "LIMIT", 1, 4),
                S("ZREVRANGEBYLEX", "z", hi, lo, "LIMIT", 0, 3),
                S("ZRANGE", "z", lo, hi, "BYLEX"),
                S("ZRANGESTORE", "d", "z", lo, hi, "BYLEX", "REV", "LIMIT", 1, 5)] + dump("d") + [
                S("ZREMRANGEBYLEX", "z", lo, hi), S("ZCARD", "z")]))
    check("lex_ranges", ops, protocols=(2,))


INDEXES = [-200, -130, -129, -128, -5, -1, 0, 1, 3, 127, 128, 129, 200, 2**63 - 1, -2**63]
LIMITS = [(0, -1), (0, 0), (0, 1), (1, 2), (-1, 5), (5, -5), (127, 10), (128, 1), (200, 1), (2**63 - 1, 1),
          (0, 2**63 - 1), (-2**63, 1)]


def test_rank_ranges_and_limits(check):
    ops = []
    for size in (10, 129, 300):
        setup = big_set("z", size)
        steps = list(setup)
        for start, stop in itertools.product(INDEXES, repeat=2):
            steps += [S("ZRANGE", "z", start, stop, "WITHSCORES"), S("ZREVRANGE", "z", start, stop),
                      S("ZRANGE", "z", start, stop, "REV")]
        for offset, count in LIMITS:
            steps += [S("ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", offset, count, "WITHSCORES"),
                      S("ZRANGEBYSCORE", "z", "(1", "5", "LIMIT", offset, count),
                      S("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES", "LIMIT", offset, count),
                      S("ZRANGE", "z", "0", "-1", "LIMIT", offset, count)]
        ops.append(Op(steps))
        for start, stop in itertools.product([-200, -1, 0, 1, 5, 128, 2**63 - 1, -2**63], repeat=2):
            ops.append(Op(setup + [S("ZREMRANGEBYRANK", "z", start, stop)] + dump("z")))
            ops.append(Op(setup + [S("ZRANGESTORE", "d", "z", start, stop)] + dump("d")))
    check("rank_ranges", ops)


def test_zrange_option_syntax(check):
    options = [["WITHSCORES"], ["REV"], ["BYSCORE"], ["BYLEX"], ["LIMIT", 0, 1], ["LIMIT", 0], ["LIMIT", "x", 1],
               ["LIMIT", 0, "1.5"], ["REV", "REV"], ["BYSCORE", "BYLEX"], ["BYSCORE", "BYSCORE"], ["FOO"],
               ["BYLEX", "WITHSCORES"], ["LIMIT", 0, -1], ["WITHSCORES", "WITHSCORES"]]
    ops = []
    for combo in itertools.chain(((o,) for o in options), itertools.combinations(options, 2)):
        args = [x for opt in combo for x in opt]
        for name, lo, hi in (("ZRANGE", "[a", "+"), ("ZRANGE", "0", "-1"), ("ZRANGE", "(1", "inf"),
                             ("ZRANGEBYSCORE", "-inf", "+inf"), ("ZREVRANGEBYSCORE", "+inf", "-inf"),
                             ("ZRANGEBYLEX", "-", "+"), ("ZREVRANGE", "0", "-1")):
            ops.append(Op([S("DEL", "z"), S("ZADD", "z", 0, "a", 0, "b", 1, "c"), S(name, "z", lo, hi, *args)]))
        ops.append(Op([S("DEL", "z", "d"), S("ZADD", "z", 0, "a", 0, "b"), S("ZRANGESTORE", "d", "z", "0", "-1", *args)]
                      + dump("d")))
    check("zrange_syntax", ops, protocols=(2,))


def test_listpack_thresholds(check):
    ops = []
    for n in (127, 128, 129):
        ops.append(Op(big_set("z", n) + dump("z") + [S("ZREM", "z", "m0", "m1")] + dump("z")))
        ops.append(Op(big_set("z", n) + [S("ZRANGESTORE", "d", "z", 0, -1), S("ZUNIONSTORE", "u", 1, "z"),
                                         S("ZRANGESTORE", "s", "z", "-inf", "+inf", "BYSCORE"),
                                         S("COPY", "z", "c")] + dump("d") + dump("u") + dump("s") + dump("c")))
    for length in (63, 64, 65):
        member = "v" * length
        ops.append(Op([S("DEL", "z", "y"), S("ZADD", "z", 1, "a"), S("ZADD", "z", 2, member)] + dump("z") +
                      [S("ZADD", "y", 2, member, 1, "a")] + dump("y") +
                      [S("ZUNIONSTORE", "u", 1, "y")] + dump("u")))
    for entries, value in ((0, 64), (1, 64), (2, 64), (128, 0), (128, 1), (3, 3)):
        ops.append(Op([S("CONFIG", "SET", "zset-max-listpack-entries", entries, compare=EXACT),
                       S("CONFIG", "SET", "zset-max-listpack-value", value, compare=EXACT),
                       S("DEL", "z", "d"), S("ZADD", "z", 1, "a"), S("ZADD", "z", 2, "bb", 3, "ccc")] + dump("z") +
                      [S("ZRANGESTORE", "d", "z", 0, 0)] + dump("d") +
                      [S("ZUNIONSTORE", "d", 1, "z")] + dump("d") +
                      [S("CONFIG", "SET", "zset-max-listpack-entries", 128, compare=EXACT),
                       S("CONFIG", "SET", "zset-max-listpack-value", 64, compare=EXACT)]))
    check("thresholds", ops)


def test_negative_zero(check):
    ops = []
    for size in (3, 200):
        setup = big_set("z", size)
        ops.append(Op(setup + [S("ZADD", "z", "-0", "a"), S("ZSCORE", "z", "a"), S("ZADD", "z", "0", "a"),
                               S("ZSCORE", "z", "a"), S("ZADD", "z", "CH", "-0", "a"), S("ZINCRBY", "z", "-0", "a"),
                               S("ZINCRBY", "z", "-0", "new"), S("ZADD", "z", "INCR", "-0", "new2")] + dump("z")))
        ops.append(Op(setup + [S("ZADD", "z", 0, "m1"), S("ZUNION", 1, "z", "WEIGHTS", -1, "WITHSCORES"),
                               S("ZUNIONSTORE", "d", 1, "z", "WEIGHTS", -1), S("ZINTER", 2, "z", "z", "WEIGHTS", -1, 0,
                                                                              "WITHSCORES")] + dump("d")))
    check("negative_zero", ops)


def test_pops(check):
    counts = [None, 0, 1, 2, 5, 200, 2**63 - 1, -1, "x", "1.5"]
    ops = []
    for size in (3, 150):
        for count in counts:
            extra = [] if count is None else [count]
            ops.append(Op(big_set("z", size) + [S("ZPOPMIN", "z", *extra), S("ZPOPMAX", "z", *extra)] + dump("z")))
            ops.append(Op(big_set("z", size) + [S("ZMPOP", 2, "missing", "z", "MAX", "COUNT", *extra),
                                                S("ZMPOP", 1, "z", "MIN", *(["COUNT"] + extra if extra else []))]
                          + dump("z")))
    for args in (["ZMPOP", 0, "z", "MIN"], ["ZMPOP", -1, "z", "MIN"], ["ZMPOP", "x", "z", "MIN"],
                 ["ZMPOP", 2, "z", "MIN"], ["ZMPOP", 1, "z", "MID"], ["ZMPOP", 1, "z", "MIN", "COUNT"],
                 ["ZMPOP", 1, "z", "MIN", "COUNT", 1, "COUNT", 1], ["ZMPOP", 1, "z", "MIN", "FOO"],
                 ["ZMPOP", 2, "s", "z", "MIN"], ["ZMPOP", 2, "z", "s", "MIN"], ["ZMPOP", 1, "missing", "MAX"],
                 ["ZPOPMIN", "z", 1, 2], ["ZPOPMIN", "s"], ["ZPOPMIN", "missing", 0]):
        ops.append(Op([S("DEL", "z", "s"), S("SET", "s", "x"), S("ZADD", "z", 1, "a", 2, "b"), S(*args)] + dump("z")))
    check("pops", ops)


def test_randmember(check):
    ops = []
    for size in (1, 5, 130):
        for args in ([], [0], [1], [3], [5], [-5], [129], [130], [131], [-200], [2**63 - 1], [3, "WITHSCORES"],
                     [-7, "WITHSCORES"], [200, "WITHSCORES"], [-2**63], [-2**63 + 1, "WITHSCORES"],
                     [2**62, "WITHSCORES"], [1, "FOO"], [1, "WITHSCORES", "X"], ["x"]):
            ops.append(Op(big_set("z", size) + [S("ZRANDMEMBER", "z", *args, compare=ZRANDMEMBER)]))
    ops.append(Op([S("DEL", "z"), S("ZRANDMEMBER", "z"), S("ZRANDMEMBER", "z", 5), S("ZRANDMEMBER", "z", -5),
                   S("ZRANDMEMBER", "z", 5, "WITHSCORES")]))
    check("randmember", ops)


WEIGHTS = [b"1", b"0", b"-1", b"2.5", b"inf", b"-inf", b"1e308"]


def test_set_operations(check):
    setup = [S("DEL", "a", "b", "c", "d", "s"), S("SET", "s", "x"),
             S("ZADD", "a", 1, "x", 2, "y", "inf", "z", "-inf", "w", 0, "v"),
             S("ZADD", "b", 3, "y", "-inf", "z", "inf", "w", 5, "u", "1e308", "x"),
             S("ZADD", "c", "1e308", "x", 0, "y", "-0", "z")]
    ops = []
    for name in ("ZUNION", "ZINTER"):
        for wa, wb in itertools.product(WEIGHTS, repeat=2):
            for aggregate in ("SUM", "MIN", "MAX"):
                ops.append(Op(setup + [S(name, 3, "a", "b", "c", "WEIGHTS", wa, wb, 1, "AGGREGATE", aggregate,
                                         "WITHSCORES"),
                                       S(name + "STORE", "d", 2, "a", "b", "WEIGHTS", wa, wb, "AGGREGATE", aggregate)]
                              + dump("d")))
    for args in (["ZDIFF", 2, "a", "b", "WITHSCORES"], ["ZDIFF", 2, "a", "a"], ["ZDIFF", 3, "a", "missing", "c"],
                 ["ZDIFFSTORE", "d", 2, "b", "a"], ["ZDIFFSTORE", "a", 2, "a", "b"], ["ZDIFF", 1, "missing"],
                 ["ZINTERCARD", 2, "a", "b"], ["ZINTERCARD", 2, "a", "b", "LIMIT", 1],
                 ["ZINTERCARD", 3, "a", "b", "c", "LIMIT", 0], ["ZINTERCARD", 1, "a", "LIMIT", -1],
                 ["ZINTERCARD", 1, "a", "LIMIT", "x"], ["ZINTERCARD", 0, "a"], ["ZINTERCARD", 2, "a"],
                 ["ZINTERCARD", 1, "a", "WITHSCORES"], ["ZUNION", 2, "a", "s"], ["ZUNION", 2, "missing", "s", "FOO"],
                 ["ZUNION", 1, "a", "WEIGHTS"], ["ZUNION", 2, "a", "b", "WEIGHTS", 1], ["ZUNION", 1, "a", "WEIGHTS", "x"],
                 ["ZUNION", 1, "a", "AGGREGATE", "avg"], ["ZUNION", 1, "a", "AGGREGATE"], ["ZUNION", 0, "a"],
                 ["ZUNION", -1, "a"], ["ZUNION", 9223372036854775807, "a"], ["ZUNIONSTORE", "d", 0, "a"],
                 ["ZUNIONSTORE", "d", 1, "a", "WITHSCORES"], ["ZDIFF", 2, "a", "b", "WEIGHTS", 1, 1],
                 ["ZUNIONSTORE", "s", 2, "a", "b"], ["ZINTERSTORE", "d", 2, "a", "missing"],
                 ["ZINTER", 2, "a", "a", "WEIGHTS", 2, 3, "WITHSCORES"], ["ZUNION", 3, "a", "a", "a", "WITHSCORES"],
                 ["ZUNION", 2, "a", "b", "AGGREGATE", "MAX", "AGGREGATE", "MIN", "WITHSCORES"]):
        ops.append(Op(setup + [S(*args), S("TYPE", "d")] + dump("d") + dump("a")))
    big = big_set("a", 180, score=lambda i: i / 7) + big_set("b", 150, score=lambda i: 1e-3 * i)
    ops.append(Op(big + [S("ZUNIONSTORE", "d", 2, "a", "b"), S("ZINTERSTORE", "e", 2, "a", "b", "WEIGHTS", 3, 0.1),
                         S("ZDIFFSTORE", "f", 2, "a", "b"), S("ZINTER", 2, "a", "b", "WITHSCORES")]
                  + dump("d") + dump("e") + dump("f")))
    check("set_operations", ops)


def test_read_commands_on_other_types_and_missing_keys(check):
    reads = [["ZSCORE", "{k}", "a"], ["ZMSCORE", "{k}", "a", "b"], ["ZCARD", "{k}"], ["ZCOUNT", "{k}", 0, 1],
             ["ZLEXCOUNT", "{k}", "-", "+"], ["ZRANK", "{k}", "a"], ["ZREVRANK", "{k}", "a"],
             ["ZRANGE", "{k}", 0, -1], ["ZRANGEBYSCORE", "{k}", 0, 1], ["ZRANGEBYLEX", "{k}", "-", "+"],
             ["ZREVRANGE", "{k}", 0, -1], ["ZREM", "{k}", "a"], ["ZREMRANGEBYRANK", "{k}", 0, -1],
             ["ZREMRANGEBYSCORE", "{k}", 0, 1], ["ZREMRANGEBYLEX", "{k}", "-", "+"], ["ZPOPMIN", "{k}"],
             ["ZPOPMAX", "{k}", 2], ["ZRANDMEMBER", "{k}"], ["ZRANDMEMBER", "{k}", 2], ["ZSCAN", "{k}", 0],
             ["ZINCRBY", "{k}", 1, "a"], ["ZADD", "{k}", 1, "a"], ["ZRANGESTORE", "d", "{k}", 0, -1],
             ["ZRANGESTORE", "{k}", "missing", 0, -1], ["ZCOUNT", "{k}", "x", 1], ["ZLEXCOUNT", "{k}", "x", "+"]]
    ops = []
    for setup in ([S("SET", "k", "v")], [S("DEL", "k")], [S("SET", "k", 1), S("EXPIRE", "k", 1000)]):
        for read in reads:
            args = [a.replace("{k}", "k") if isinstance(a, str) else a for a in read]
            ops.append(Op([S("DEL", "d")] + setup + [S(*args), S("TYPE", "k"), S("EXISTS", "d")]))
    check("other_types", ops)


def test_rank_withscore(check):
    ops = [Op(big_set("z", size) + [S(name, "z", member, "WITHSCORE", compare=RANK_WITHSCORE)])
           for size in (3, 150) for name in ("ZRANK", "ZREVRANK") for member in ("m0", "m2", "m149", "nope")]
    ops.append(Op([S("DEL", "z"), S("ZRANK", "z", "a", "WITHSCORE", compare=RANK_WITHSCORE)]))
    check("rank_withscore", ops)


def test_plain_sets_as_inputs(pair, check):
    """Plain sets in ZUNION/ZINTER/ZDIFF and their STORE forms: every member scores 1 (intset,
    listpack and hashtable sets alike)."""
    from support.types import supported_commands
    with pair.goblin_server.raw() as g:
        if "sadd" not in supported_commands(g, ["sadd"]):
            pytest.skip("the server under test has no set type yet")
    setup = [S("DEL", "a", "ints", "words", "big", "d"), S("ZADD", "a", 1, "x", 2, "1", 3, "2", "inf", "y"),
             S("SADD", "ints", 1, 2, 3, 100), S("SADD", "words", "x", "y", "z", "1"),
             S("SADD", "big", *[f"m{i}" for i in range(300)], "x", 2)]
    ops = []
    for keys in (["a", "ints"], ["ints", "a"], ["words", "a", "ints"], ["big", "a"], ["ints", "ints"], ["ints"],
                 ["a", "missing", "words"]):
        n = len(keys)
        for name in ("ZUNION", "ZINTER"):
            for opts in ([], ["WEIGHTS", *[2.5] * n], ["AGGREGATE", "MAX"], ["WEIGHTS", *[-1] * n, "AGGREGATE", "MIN"]):
                ops.append(Op(setup + [S(name, n, *keys, *opts, "WITHSCORES"),
                                       S(name + "STORE", "d", n, *keys, *opts)] + dump("d")))
        ops.append(Op(setup + [S("ZDIFF", n, *keys, "WITHSCORES"), S("ZDIFFSTORE", "d", n, *keys),
                               S("ZINTERCARD", n, *keys), S("ZINTERCARD", n, *keys, "LIMIT", 1)] + dump("d")))
    check("plain_set_inputs", ops)
