"""maxmemory, side by side with redis-server: a random stream builds data without a limit, then
goes on under a 1-byte maxmemory with each policy.

A 1-byte limit makes eviction deterministic, whatever the two servers' memory figures: before
every command each server evicts every key its policy allows (all keys, or all keys with a
deadline), stays over the limit, and refuses what Redis refuses: denyoom commands, EXEC of a
transaction holding one, anything but EXEC/DISCARD inside MULTI. So every reply, the OOM errors
included, must match byte for byte.
"""

import pytest

from support.differ import MULTISET, Op, Step, investigate, run_ops

from .generators import make_stream

POLICIES = ["noeviction", "allkeys-lru", "allkeys-random", "volatile-lru", "volatile-ttl",
            "volatile-random", "allkeys-lfu"]
LENGTH = 1200


@pytest.mark.parametrize("policy", POLICIES)
def test_stream_under_a_one_byte_limit(pair, supported_generators, shrink_budget, reported_mismatches,
                                       policy):
    # CONFIG rows of the stream could lift the limit again.
    generators = [gen for gen in supported_generators if gen.command != "config"]
    seed = 900 + POLICIES.index(policy)
    ops = make_stream(seed, LENGTH, generators)
    limit = Op([Step((b"CONFIG", b"SET", b"maxmemory-policy", policy.encode(), b"maxmemory", b"1"))],
               "one-byte maxmemory")
    ops = ops[:LENGTH // 2] + [limit] + ops[LENGTH // 2:]
    # The data left at the end: what each policy spared must be the same keys and values.
    ops.append(Op([Step((b"KEYS", b"*"), MULTISET, True), Step((b"DBSIZE",), readonly=True)], "what is left"))
    mismatches = run_ops(pair, ops, limit=200)
    if not mismatches:
        return
    report = investigate(
        pair, ops, mismatches,
        title=f"MAXMEMORY MISMATCH  policy={policy}  seed={seed}  ops={len(ops)}",
        reproduce=(f"GOBLIN_SERVER={pair.goblin_server.binary} /usr/bin/python3 -m pytest -q "
                   f"tests/differential/test_maxmemory.py -k '{policy}'"),
        budget=shrink_budget, reported=reported_mismatches, label=f"maxmemory {policy}")
    pytest.fail(report, pytrace=False)
