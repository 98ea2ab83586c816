"""Access stamps side by side with redis-server: a seeded random stream of every family runs
under allkeys-lfu with lfu-log-factor 0 and lfu-decay-time 0, where each access increments a
key's LFU counter by exactly one (from 5, a new key's, up to 255) and nothing decays. After every
command OBJECT FREQ of every key the stream uses is compared as "untouched since it was created"
(5) or "touched": each command must touch the keys Redis's touches and no others (TYPE, EXISTS,
TTL and OBJECT do not), create keys with a new key's counter and keep the counter across what
Redis keeps it across (RENAME, MOVE, overwriting a value).

How many times one command touches a key is not compared: Redis touches once per lookup, and
some commands look a key up twice (SET ... GET, SET ... XX); with the default lfu-log-factor
an access past the first rarely moves the counter anyway.

maxmemory is set (far above what the stream uses) so that Redis gives every key its own
integer objects, whose counters would otherwise be shared between keys.
"""

import pytest

from support.differ import Comparator, Op, Step, investigate, run_ops

from .generators import KEYS, LEX_KEYS, make_stream

LENGTH = 1500
# Rows whose touches cannot be compared: CONFIG could change the policy; DEBUG RELOAD recreates
# keys; RANDOMKEY touches a random key; BITCOUNT and BITPOS with bad arguments look the key up in
# 7.0 but not in 7.2 (Goblin follows 7.2).
LEFT_OUT = {"config", "randomkey", "debug", "bitcount", "bitpos"}
POLICY = Op([Step((b"CONFIG", b"SET", b"maxmemory-policy", b"allkeys-lfu", b"lfu-log-factor", b"0",
                   b"lfu-decay-time", b"0", b"maxmemory", b"64gb"))], "exact LFU counters")


class Touched(Comparator):
    """OBJECT FREQ: nil, 5 (never touched since created) or touched (more)."""

    name = "touched"

    @staticmethod
    def shape(reply):
        return reply.raw if reply.kind != ":" or reply.value <= 5 else b"touched"

    def differs(self, step, g, r, ctx):
        return None if self.shape(g) == self.shape(r) else "touched on one server only"


TOUCHED = Touched()


def probe() -> Op:
    return Op([Step((b"OBJECT", b"FREQ", key), TOUCHED, readonly=True) for key in KEYS + LEX_KEYS],
              "OBJECT FREQ of every key")


@pytest.mark.parametrize("seed", [31, 32, 33, 34])
def test_counters_follow_every_command(pair, supported_generators, shrink_budget, reported_mismatches,
                                       seed):
    generators = [gen for gen in supported_generators if gen.command.split("|")[0] not in LEFT_OUT]
    ops = [POLICY]
    for op in make_stream(seed, LENGTH, generators):
        ops += [op, probe()]
    ops.append(Op([Step((b"CONFIG", b"SET", b"maxmemory-policy", b"noeviction", b"maxmemory", b"0"))],
                  "policy back"))
    mismatches = run_ops(pair, ops, limit=50)
    if not mismatches:
        return
    report = investigate(
        pair, ops, mismatches,
        title=f"ACCESS STAMP MISMATCH  seed={seed}  ops={len(ops)}",
        reproduce=(f"GOBLIN_SERVER={pair.goblin_server.binary} /usr/bin/python3 -m pytest -q "
                   f"tests/differential/test_access_stamps.py -k '{seed}'"),
        budget=shrink_budget, reported=reported_mismatches, label=f"access stamps {seed}")
    pytest.fail(report, pytrace=False)
