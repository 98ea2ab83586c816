"""Seeded random streams where sorted sets are most of the traffic, sent to the server
under test and to the reference redis-server, every reply compared (scores as doubles: see
support/differ.py SCORES), and every set's contents compared at the end of each stream.

The general streams (test_random_streams.py) carry the same zset rows among all the other
families; these streams give them weight: bulk ZADDs grow sets past the 128-entry listpack
limit, CONFIG SET moves the conversion thresholds, and the key and string commands that meet
sorted sets (WRONGTYPE, RENAME, COPY, DEL, expiry, OBJECT ENCODING, MEMORY USAGE) are mixed in.

Environment: GOBLIN_ZSET_SEEDS=5,9 (replace the RESP2 seeds), GOBLIN_DIFF_RANDOM_SEEDS=n (add
fresh seeds), GOBLIN_DIFF_OPS (stream length, default 3000).
"""

import os

import pytest

from support.types import supported_commands

from .generators import ZSET_GENERATORS, ZSET_STREAM_GENERATORS, make_stream
from .streams import run_stream, stream_seeds, supported_rows

DEFAULT_SEEDS = [11, 12, 13, 14, 15, 16]
RESP3_SEEDS = [311, 312]
LENGTH = int(os.environ.get("GOBLIN_DIFF_OPS", "3000"))

ZSET_COMMANDS = """zadd zincrby zscore zmscore zcard zcount zlexcount zrank zrevrank zrange zrangestore
zrangebyscore zrevrangebyscore zrangebylex zrevrangebylex zrevrange zrem zremrangebyrank zremrangebyscore
zremrangebylex zpopmin zpopmax zmpop zrandmember zscan zunion zinter zdiff zunionstore zinterstore zdiffstore
zintercard""".split()


def _seeds():
    return stream_seeds("GOBLIN_ZSET_SEEDS", DEFAULT_SEEDS, RESP3_SEEDS)


@pytest.fixture(scope="module")
def zset_generators(pair):
    return supported_rows(pair, ZSET_STREAM_GENERATORS)


@pytest.mark.parametrize("protocol,seed", _seeds(), ids=lambda x: str(x))
def test_zset_stream(pair, zset_generators, shrink_budget, reported_mismatches, protocol, seed):
    ops = make_stream(seed, LENGTH, zset_generators, protocol=protocol)
    run_stream(pair, ops, family="zset", seed=seed, protocol=protocol, seeds_env="GOBLIN_ZSET_SEEDS",
               test_path="tests/differential/test_zset_streams.py", selector=f"{protocol}-{seed}",
               shrink_budget=shrink_budget, reported_mismatches=reported_mismatches)


def test_server_under_test_has_every_zset_generator(pair):
    """A missing zset command must fail here, not silently shrink the streams."""
    names = sorted({gen.command for gen in ZSET_GENERATORS})
    with pair.goblin_server.raw() as g:
        have = supported_commands(g, names)
    assert sorted(set(names) - have) == []


def test_zset_generators_cover_every_zset_command():
    generated = set()
    for gen in ZSET_GENERATORS:
        generated |= {gen.command, *gen.covers}
    assert [c for c in ZSET_COMMANDS if c not in generated] == []


def test_zset_streams_draw_every_row(zset_generators):
    drawn = {op.source for seed in DEFAULT_SEEDS for op in make_stream(seed, LENGTH, zset_generators)}
    assert {gen.command for gen in zset_generators} - drawn == set()


# Redis 7.2 gave ZRANK and ZREVRANK an optional WITHSCORE: arity -3 where 7.0 says 3.
ARITY_CHANGED_IN_72 = {"zrank", "zrevrank"}


@pytest.mark.parametrize("name", ZSET_COMMANDS)
def test_zset_command_info_matches_reference(pair, name):
    from .test_command_table import command_info, summary
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        gi, ri = summary(command_info(g, name)), summary(command_info(r, name))
        if name in ARITY_CHANGED_IN_72:
            assert (gi.pop("arity"), ri.pop("arity")) == (-3, 3)
        assert gi == ri


# ---- the score comparators themselves (no servers) --------------------------------------------------

def _reply(data: bytes):
    from support.resp import parse_reply
    r, end = parse_reply(data)
    assert end == len(data)
    return r


@pytest.mark.parametrize("goblin,reference,agree", [
    (b"1.1", b"1.1000000000000001", True),          # 7.2 shortest text vs 7.0's 17 digits
    (b"1e-7", b"9.9999999999999995e-08", True),
    (b"100000000000000000", b"1e+17", True),
    (b"100000000000000000", b"100000000000000000", True),  # 7.0 listpack integer (ZSCAN)
    (b"inf", b"inf", True), (b"-0", b"-0", True),
    (b"0", b"-0", False),                          # the sign of zero counts
    (b"1.1", b"1.1000000000000002", False),        # another double
    (b"abc", b"abc", False), (b"nan", b"nan", False),
])
def test_score_texts_agree(goblin, reference, agree):
    from support.differ import score_texts_agree
    assert score_texts_agree(goblin, reference) is agree


def test_scores_comparator_walks_aggregates():
    from support.differ import same_with_scores
    g = _reply(b"*2\r\n*2\r\n$1\r\na\r\n,1.1\r\n*2\r\n$1\r\nb\r\n,2\r\n")
    r = _reply(b"*2\r\n*2\r\n$1\r\na\r\n,1.1000000000000001\r\n*2\r\n$1\r\nb\r\n,2\r\n")
    assert same_with_scores(g, r)
    assert not same_with_scores(_reply(b"*1\r\n$1\r\na\r\n"), _reply(b"*1\r\n$1\r\nb\r\n"))
    assert not same_with_scores(_reply(b"*2\r\n$1\r\na\r\n$1\r\n1\r\n"), _reply(b"*1\r\n$1\r\na\r\n"))
    assert not same_with_scores(_reply(b",1.1\r\n"), _reply(b"$18\r\n1.1000000000000001\r\n"))


def test_zset_pairs_reads_both_shapes():
    from support.differ import zset_pairs
    flat = _reply(b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n")
    nested = _reply(b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2\r\n")
    assert zset_pairs(flat) == zset_pairs(nested) == [(b"a", b"1"), (b"b", b"2")]
