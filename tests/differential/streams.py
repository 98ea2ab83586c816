"""What every family's seeded stream test shares: its seeds, the generator rows both servers
serve, and one stream's run with the shrunk report of a mismatch."""

from __future__ import annotations

import os
import random

import pytest

from support.differ import investigate, run_ops
from support.types import supported_commands


def stream_seeds(env_name: str, default_seeds, resp3_seeds) -> list[tuple[int, int]]:
    """(protocol, seed) pairs: $env_name replaces the RESP2 seeds (and drops the RESP3 ones),
    GOBLIN_DIFF_RANDOM_SEEDS adds that many fresh RESP2 seeds."""
    chosen = [int(s) for s in os.environ.get(env_name, "").split(",") if s.strip()]
    seeds = chosen or list(default_seeds)
    seeds += [random.SystemRandom().randrange(1, 2**31)
              for _ in range(int(os.environ.get("GOBLIN_DIFF_RANDOM_SEEDS", "0")))]
    return [(2, s) for s in seeds] + ([] if chosen else [(3, s) for s in resp3_seeds])


def supported_rows(pair, rows) -> list:
    """The generator rows whose command both servers report in COMMAND INFO."""
    names = sorted({gen.command for gen in rows})
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        have = supported_commands(g, names) & supported_commands(r, names)
    return [gen for gen in rows if gen.command in have]


def run_stream(pair, ops, *, family: str, seed: int, protocol: int, seeds_env: str, test_path: str,
               selector: str, shrink_budget, reported_mismatches):
    """Runs one seeded stream; a mismatch fails the test with its shrunk report."""
    mismatches = run_ops(pair, ops, limit=200)
    if not mismatches:
        return
    env = f"{seeds_env}={seed} " if protocol == 2 else ""
    report = investigate(
        pair, ops, mismatches,
        title=f"DIFFERENTIAL MISMATCH ({family} streams)  seed={seed}  protocol=RESP{protocol}  ops={len(ops)}",
        reproduce=(f"{env}GOBLIN_SERVER={pair.goblin_server.binary} /usr/bin/python3 -m pytest -q "
                   f"{test_path} -k '{selector}'"),
        budget=shrink_budget, reported=reported_mismatches, label=f"{family} seed {seed} (RESP{protocol})")
    pytest.fail(report, pytrace=False)
