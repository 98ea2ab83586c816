"""Publish/subscribe, side by side with redis-server: seeded random sequences of (un)subscribing,
publishing and introspection over four connections per server (RESP2 and RESP3), comparing what
every connection receives after each step.

After a step, each connection sends `PING <token>` and reads up to its answer: the server handled
the step before that PING, so everything the step sent to the connection (replies, messages)
arrives before it, without any sleep.

Three orders are Redis's hash-table orders, not part of the contract, and compare as multisets:
the confirmations of an argument-less (P|S)UNSUBSCRIBE (whose counts still must count down the
same way), the pattern messages one PUBLISH brings a connection subscribed to several matching
patterns, and PUBSUB CHANNELS / SHARDCHANNELS.
"""

import random

import pytest

from support.resp import RawConnection

CHANNELS = [b"news", b"news.sport", b"news.tech", b"chat", b"{tag}x", b"a*b", b"n\x00ws"]
PATTERNS = [b"news.*", b"*", b"n?ws*", b"chat", b"[a-c]*", b"news.\\*", b"*.tech"]
MESSAGES = [b"hello", b"", b"x" * 300, b"bin\x00\xff\r\n"]
UNSUBSCRIBES = {b"UNSUBSCRIBE", b"PUNSUBSCRIBE", b"SUNSUBSCRIBE"}


class Side:
    """One server's four connections: 0, 1 and 3 speak RESP2, 2 speaks RESP3."""

    def __init__(self, server):
        self.conns = [server.raw() for _ in range(4)]
        for conn in self.conns:
            assert conn.call("RESET").raw == b"+RESET\r\n"
        assert not self.conns[2].call("HELLO", "3").is_error
        self.token = 0

    def close(self):
        for conn in self.conns:
            conn.close()

    def drain(self, index: int) -> list:
        """The replies connection `index` has received since its last drain."""
        self.token += 1
        token = b"barrier-%d" % self.token
        conn = self.conns[index]
        conn.send_command(b"PING", token)
        replies = []
        while True:
            reply = conn.read_reply(timeout=10)
            if reply.raw.endswith(b"\r\n" + token + b"\r\n") and b"message" not in reply.raw:
                return replies
            replies.append(reply.raw)


def random_step(rng: random.Random) -> tuple:
    r = rng.random()
    if r < 0.30:
        verb = rng.choice([b"SUBSCRIBE", b"PSUBSCRIBE", b"SSUBSCRIBE"])
        pool = PATTERNS if verb == b"PSUBSCRIBE" else CHANNELS
        return (verb, *rng.sample(pool, rng.randint(1, 3)))
    if r < 0.45:
        verb = rng.choice(sorted(UNSUBSCRIBES))
        pool = PATTERNS if verb == b"PUNSUBSCRIBE" else CHANNELS
        return (verb, *rng.sample(pool, rng.randint(0, 2)))
    if r < 0.80:
        verb = rng.choice([b"PUBLISH", b"PUBLISH", b"SPUBLISH"])
        return (verb, rng.choice(CHANNELS), rng.choice(MESSAGES))
    if r < 0.90:
        return rng.choice([
            (b"PUBSUB", b"CHANNELS"), (b"PUBSUB", b"CHANNELS", rng.choice(PATTERNS)),
            (b"PUBSUB", b"NUMSUB", *rng.sample(CHANNELS, 2)), (b"PUBSUB", b"NUMPAT"),
            (b"PUBSUB", b"SHARDCHANNELS"), (b"PUBSUB", b"SHARDNUMSUB", rng.choice(CHANNELS))])
    if r < 0.95:
        return rng.choice([(b"PING",), (b"PING", b"p"), (b"GET", b"k"), (b"SET", b"k", b"v")])
    return (b"RESET",)


def normalized(step: tuple, index: int, actor: int, replies: list) -> list:
    if index == actor and step[0] in UNSUBSCRIBES and len(step) == 1:
        # Confirmations in hash order: the names as a multiset, the counts in sequence.
        counts = [raw.rsplit(b":", 1)[1] for raw in replies]
        return sorted(raw.rsplit(b":", 1)[0] for raw in replies) + counts
    if index == actor and step[:2] in ((b"PUBSUB", b"CHANNELS"), (b"PUBSUB", b"SHARDCHANNELS")):
        head, *names = replies[0][:-2].split(b"\r\n$")
        return [head, sorted(names)] + replies[1:]
    if step[0] == b"PUBLISH":
        return sorted(replies)  # several matching patterns arrive in hash order
    return replies


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_pubsub_sequences_match_reference(diff_goblin, reference_server, seed):
    rng = random.Random(seed)
    goblin, reference = Side(diff_goblin), Side(reference_server)
    history = []
    try:
        for n in range(300):
            actor = rng.randrange(4)
            step = random_step(rng)
            history.append(f"#{n} conn{actor}: {b' '.join(step)!r}")
            for side in (goblin, reference):
                side.conns[actor].send_command(*step)
            for index in [actor] + [i for i in range(4) if i != actor]:
                g = normalized(step, index, actor, goblin.drain(index))
                r = normalized(step, index, actor, reference.drain(index))
                assert g == r, (f"seed {seed}: connection {index} after step {n} differs\n"
                                f"goblin:    {g!r}\nreference: {r!r}\nsteps:\n" + "\n".join(history[-12:]))
    finally:
        goblin.close()
        reference.close()


def test_subscribe_inside_multi_and_context_errors_match_reference(diff_goblin, reference_server):
    script = [
        (b"MULTI",), (b"SUBSCRIBE", b"x"), (b"PSUBSCRIBE", b"y*"), (b"EXEC",),
        (b"GET", b"k"), (b"CONFIG", b"GET", b"hz"), (b"PING",), (b"PING", b"arg"),
        (b"UNSUBSCRIBE", b"x", b"never"), (b"PUNSUBSCRIBE",), (b"PUNSUBSCRIBE",),
        (b"GET", b"k"), (b"SUBSCRIBE",), (b"PUBSUB", b"CHANNELS", b"a", b"b"),
        (b"PUBSUB", b"NUMPAT", b"x"), (b"PUBSUB", b"NOPE"), (b"PUBLISH", b"a"),
        (b"SSUBSCRIBE", b"s"), (b"SPUBLISH", b"s", b"m"), (b"SUNSUBSCRIBE",), (b"SUNSUBSCRIBE",),
        (b"PUBSUB", b"HELP"), (b"RESET",),
    ]
    with diff_goblin.raw() as g, reference_server.raw() as r:
        for step in script:
            assert g.call(*step).raw == r.call(*step).raw, step
