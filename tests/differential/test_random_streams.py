"""Seeded random command streams, sent to the server under test and to the reference redis-server.

Every reply is compared (byte for byte unless the command's comparator says otherwise, see
support/differ.py). On a mismatch the test prints the seed, the first mismatch with the commands
before it, and the shortest failing sequence delta debugging finds.

Environment:
  GOBLIN_DIFF_SEEDS=3,17      run these RESP2 seeds instead of the default ones
  GOBLIN_DIFF_RANDOM_SEEDS=n  add n fresh random seeds (printed on failure)
  GOBLIN_DIFF_OPS=3000        operations per stream
  GOBLIN_DIFF_SHRINK_SECONDS  session budget for shrinking (default 100)
"""

import os
import random
import time

import pytest

from support.differ import investigate, run_ops

from .generators import make_stream

DEFAULT_SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]
RESP3_SEEDS = [301, 302]
LENGTH = int(os.environ.get("GOBLIN_DIFF_OPS", "3000"))


def _seeds():
    chosen = [int(s) for s in os.environ.get("GOBLIN_DIFF_SEEDS", "").split(",") if s.strip()]
    seeds = chosen or list(DEFAULT_SEEDS)
    extra = int(os.environ.get("GOBLIN_DIFF_RANDOM_SEEDS", "0"))
    seeds += [random.SystemRandom().randrange(1, 2**31) for _ in range(extra)]
    cases = [(2, s) for s in seeds]
    if not chosen:
        cases += [(3, s) for s in RESP3_SEEDS]
    return cases


@pytest.mark.parametrize("protocol,seed", _seeds(), ids=lambda x: str(x))
def test_random_stream(pair, supported_generators, shrink_budget, reported_mismatches, protocol, seed):
    ops = make_stream(seed, LENGTH, supported_generators, protocol=protocol)
    mismatches = run_ops(pair, ops, limit=200)
    if not mismatches:
        return
    selector = f"{protocol}-{seed}"
    seeds_env = f"GOBLIN_DIFF_SEEDS={seed} " if protocol == 2 else ""
    report = investigate(
        pair, ops, mismatches,
        title=f"DIFFERENTIAL MISMATCH  seed={seed}  protocol=RESP{protocol}  ops={len(ops)}",
        reproduce=(f"{seeds_env}GOBLIN_SERVER={pair.goblin_server.binary} /usr/bin/python3 -m pytest -q "
                   f"tests/differential/test_random_streams.py -k '{selector}'"),
        budget=shrink_budget, reported=reported_mismatches, label=f"seed {seed} (RESP{protocol})")
    pytest.fail(report, pytrace=False)


def test_streams_cover_every_generator(supported_generators):
    """Across the default seeds, every supported generator row is drawn at least once."""
    drawn = set()
    for protocol, seed in [(2, s) for s in DEFAULT_SEEDS]:
        for op in make_stream(seed, LENGTH, supported_generators, protocol=protocol):
            drawn.add(op.source)
    missing = {gen.command for gen in supported_generators} - drawn
    assert not missing, f"generator rows never drawn: {sorted(missing)}"


def test_streams_are_reproducible(supported_generators):
    now = time.time()
    a = make_stream(12345, 500, supported_generators, now=now)
    b = make_stream(12345, 500, supported_generators, now=now)
    assert [[s.args for s in op.steps] for op in a] == [[s.args for s in op.steps] for op in b]
    c = make_stream(12346, 500, supported_generators, now=now)
    assert [[s.args for s in op.steps] for op in a] != [[s.args for s in op.steps] for op in c]
