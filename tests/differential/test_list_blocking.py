"""Blocking list commands, side by side with redis-server: scripted scenarios over several
connections to each server (all RESP2, or all RESP3) and seeded random sequences, every reply
compared byte for byte.

Synchronised on state, never on sleeps: a step that blocks waits until CLIENT LIST shows its
connection blocked (flag b) on both servers; after any other step the server under test must
reach the same set of blocked connections as the reference (polled with a deadline), and the
connections the reference released are read on both sides, in full (a blocked connection's
pipelined commands too). Timeouts are short (0.1 s) and only their replies are compared, never
their timing.

Where Redis 7.0 and 7.2 differ the scenarios follow 7.2 and say so. 7.2 runs a woken command
again from the start (blocked.c, unblockClientOnKey), so a client blocked on several keys that
become non-empty together pops the first of them in its argument order, where 7.0 pops the key
that was signalled first: that case is checked on the server under test alone, against 7.2's
answer (redis72). A list created under a waiting client by RENAME, RENAMENX, COPY, MOVE, SWAPDB or
LMOVE wakes it on 7.2; the 7.0 reference on this machine wakes it too (db.c dbAdd signals the
key), so those scenarios are compared.
"""

from __future__ import annotations

import itertools
import random

import pytest

from support.resp import ConnectionClosed, ReplyTimeout, encode_command
from support.server import parse_info, wait_for

READ_SECONDS = 5.0


class Id:
    """Stands for the CLIENT ID of connection `index` on whichever server the step is sent to."""

    def __init__(self, index: int):
        self.index = index

    def __repr__(self):
        return f"<id of conn {self.index}>"


def blocked_ids(control) -> set:
    """The ids of the clients CLIENT LIST shows blocked (flag b)."""
    ids = set()
    for line in control.call("CLIENT", "LIST").value.decode("utf-8", "replace").splitlines():
        fields = dict(item.partition("=")[::2] for item in line.split(" "))
        if "b" in fields.get("flags", ""):
            ids.add(int(fields["id"]))
    return ids


class Side:
    """One server's connections for a scenario, plus a control connection for CLIENT LIST."""

    def __init__(self, server, protocols):
        self.name = server.name
        self.control = server.raw()
        assert self.control.call("FLUSHALL").raw == b"+OK\r\n"
        self.conns = [server.raw() for _ in protocols]
        for conn, protocol in zip(self.conns, protocols):
            if protocol == 3:
                assert not conn.call("HELLO", "3").is_error
        self.ids = [int(conn.call("CLIENT", "ID").value) for conn in self.conns]
        self.pending = [0] * len(protocols)
        self.closed = set()

    def args(self, args) -> tuple:
        return tuple(str(self.ids[a.index]) if isinstance(a, Id) else a for a in args)

    def send(self, index: int, commands):
        self.conns[index].send(b"".join(encode_command(*self.args(c)) for c in commands))
        self.pending[index] += len(commands)

    def read(self, index: int) -> bytes:
        self.pending[index] -= 1
        try:
            return self.conns[index].read_reply(timeout=READ_SECONDS).raw
        except ReplyTimeout:
            return b"<no reply within %d s>" % READ_SECONDS
        except ConnectionClosed:
            return b"<connection closed>"

    def blocked(self) -> frozenset:
        """The scenario's connections that CLIENT LIST shows blocked (flag b)."""
        ids = blocked_ids(self.control)
        return frozenset(i for i, client_id in enumerate(self.ids) if client_id in ids)

    def blocked_clients(self) -> bytes:
        return parse_info(self.control.call("INFO", "clients").value)["blocked_clients"].encode()

    def listed(self, index: int) -> bool:
        listing = self.control.call("CLIENT", "LIST").value.decode("utf-8", "replace")
        return f"id={self.ids[index]} " in listing

    def close(self, index: int):
        self.conns[index].close()
        self.closed.add(index)

    def close_all(self):
        for index, conn in enumerate(self.conns):
            if index not in self.closed:
                conn.close()
        self.control.close()


# ---- steps -------------------------------------------------------------------------------------

class Step:
    blocked = None  # the set of blocked connections the script expects after the step, if stated

    def expect(self, blocked):
        self.blocked = frozenset(blocked)
        return self


class Call(Step):
    """Connection `conn` sends one command and both replies are compared."""

    def __init__(self, conn: int, *args):
        self.conn, self.args = conn, args

    def __repr__(self):
        return f"conn {self.conn}: " + " ".join(map(str, self.args))


class Block(Step):
    """Connection `conn` sends commands in one write; the first must block (the rest queue behind it)."""

    def __init__(self, conn: int, *commands):
        self.conn = conn
        self.commands = list(commands) if all(isinstance(c, tuple) for c in commands) else [commands]

    def __repr__(self):
        return f"conn {self.conn} blocks: " + " | ".join(" ".join(map(str, c)) for c in self.commands)


class TimesOut(Step):
    """Connection `conn` sends a blocking command with a short timeout; its replies are compared."""

    def __init__(self, conn: int, *args):
        self.conn, self.args = conn, args

    def __repr__(self):
        return f"conn {self.conn} waits out: " + " ".join(map(str, self.args))


class Close(Step):
    def __init__(self, conn: int):
        self.conn = conn

    def __repr__(self):
        return f"conn {self.conn} closes"


class Runner:
    """Runs steps on both servers' connections, comparing every reply, and keeps a transcript."""

    def __init__(self, goblin_server, reference_server, protocols, title: str):
        self.goblin = Side(goblin_server, protocols)
        self.reference = Side(reference_server, protocols)
        self.title = title
        self.blocked = frozenset()  # the connections blocked on the reference after the last step
        self.transcript = []

    def close(self):
        self.goblin.close_all()
        self.reference.close_all()

    def fail(self, message):
        pytest.fail(f"{self.title}: {message}\nthe steps so far (goblin | reference):\n"
                    + "\n".join(self.transcript[-60:]), pytrace=False)

    def compare(self, what, g, r):
        self.transcript.append(f"  {what}: {g!r}" + ("" if g == r else f" | {r!r}   <-- DIFFERS"))
        if g != r:
            self.fail(f"{what}: goblin replied {g!r}, the reference {r!r}")

    def settle(self):
        """Waits for goblin to block the same connections as the reference; reads the released ones."""
        goblin, reference = self.goblin, self.reference
        want = reference.blocked()
        try:
            wait_for(lambda: goblin.blocked() == want, timeout=READ_SECONDS,
                     what=f"goblin's blocked connections to become {sorted(want)}")
        except AssertionError:
            got = goblin.blocked()
            received = {i: goblin.read(i) for i in sorted(want - got) if i not in goblin.closed}
            self.fail(f"blocked connections: goblin {sorted(got)}, reference {sorted(want)}; the connections "
                      f"goblin released received {received}")
        for index in sorted(self.blocked - want - reference.closed):
            while reference.pending[index]:
                self.compare(f"conn {index} receives", goblin.read(index), reference.read(index))
        self.blocked = want

    def do(self, step, number: int):
        goblin, reference = self.goblin, self.reference
        self.transcript.append(f"#{number} {step!r}")
        if isinstance(step, Call):
            for side in (goblin, reference):
                side.send(step.conn, [step.args])
            self.compare("reply", goblin.read(step.conn), reference.read(step.conn))
        elif isinstance(step, Block):
            for side in (goblin, reference):
                side.send(step.conn, step.commands)
            for side in (reference, goblin):
                try:
                    wait_for(lambda: step.conn in side.blocked(), timeout=READ_SECONDS,
                             what=f"conn {step.conn} to block on {side.name}")
                except AssertionError:
                    self.fail(f"conn {step.conn} did not block on {side.name}; it received {side.read(step.conn)!r}")
        elif isinstance(step, TimesOut):
            for side in (goblin, reference):
                side.send(step.conn, [step.args])
            self.compare("reply after the timeout", goblin.read(step.conn), reference.read(step.conn))
        elif isinstance(step, Close):
            for side in (goblin, reference):
                side.close(step.conn)
                wait_for(lambda: not side.listed(step.conn), timeout=READ_SECONDS,
                         what=f"conn {step.conn} to leave CLIENT LIST on {side.name}")
        self.settle()
        if step.blocked is not None and self.blocked != step.blocked:
            self.fail(f"the script expected blocked connections {sorted(step.blocked)}, the reference has "
                      f"{sorted(self.blocked)}")

    def finish(self):
        self.compare("INFO blocked_clients at the end", self.goblin.blocked_clients(),
                     self.reference.blocked_clients())


def run_scenario(goblin_server, reference_server, steps, protocol: int, title: str = "scenario", count: int = 4):
    runner = Runner(goblin_server, reference_server, [protocol] * count, f"{title} (RESP{protocol})")
    try:
        for number, step in enumerate(steps, 1):
            runner.do(step, number)
        runner.finish()
    finally:
        runner.close()


# ---- scenarios -----------------------------------------------------------------------------------

def lrange(conn, key):
    return Call(conn, "LRANGE", key, "0", "-1")


SCENARIOS = {
    "fifo_on_one_key": [
        Block(0, "BLPOP", "q", "0"), Block(1, "BLPOP", "q", "0"), Block(2, "BRPOP", "q", "0").expect({0, 1, 2}),
        Call(3, "RPUSH", "q", "a").expect({1, 2}),
        Call(3, "RPUSH", "q", "b", "c").expect(set()),
        Call(3, "EXISTS", "q"),
    ],
    "more_elements_than_waiters": [
        Block(0, "BLPOP", "q", "0"), Block(1, "BRPOP", "q", "0"),
        Call(3, "LPUSH", "q", "a", "b", "c").expect(set()),
        lrange(3, "q"),
    ],
    "fifo_on_different_keys": [
        Block(0, "BLPOP", "k1", "0"), Block(1, "BLPOP", "k2", "0"), Block(2, "BRPOP", "k1", "0"),
        Call(3, "MULTI"), Call(3, "RPUSH", "k2", "x"), Call(3, "RPUSH", "k1", "y", "z"),
        Call(3, "EXEC").expect(set()),
        Call(3, "EXISTS", "k1", "k2"),
    ],
    "a_later_key_is_filled": [
        Block(0, "BLPOP", "a", "b", "c", "0"), Block(1, "BRPOP", "c", "b", "0"),
        Call(3, "RPUSH", "c", "1", "2", "3").expect(set()),
        lrange(3, "c"), Call(3, "DEL", "c"),
        Block(0, "BLPOP", "a", "b", "c", "0"), Block(1, "BRPOP", "c", "b", "0"),
        Call(3, "RPUSH", "b", "x").expect({1}),
        Call(3, "LPUSH", "c", "y").expect(set()),
        Call(3, "EXISTS", "a", "b", "c"),
    ],
    "the_same_key_twice": [
        Block(0, "BLPOP", "k", "k", "0"), Block(1, "BLMPOP", "0", "2", "k", "k", "LEFT", "COUNT", "5"),
        Call(3, "RPUSH", "k", "a").expect({1}),
        Call(3, "RPUSH", "k", "b", "c").expect(set()),
    ],
    "blmpop_with_count": [
        Block(0, "BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2"), Block(1, "BLMPOP", "0", "1", "m2", "LEFT"),
        Call(3, "RPUSH", "m2", "a", "b", "c", "d").expect(set()),
        lrange(3, "m2"),
    ],
    "blmove_chain": [
        Block(0, "BLMOVE", "src", "mid", "LEFT", "RIGHT", "0"), Block(1, "BLMOVE", "mid", "dst", "RIGHT", "LEFT", "0"),
        Block(2, "BLPOP", "dst", "0"),
        Call(3, "RPUSH", "src", "x", "y").expect(set()),
        lrange(3, "src"), lrange(3, "mid"), lrange(3, "dst"),
    ],
    "brpoplpush_chain_into_a_waiting_blmpop": [
        Block(0, "BRPOPLPUSH", "src", "dst", "0"), Block(1, "BLMPOP", "0", "1", "dst", "RIGHT", "COUNT", "3"),
        Call(3, "RPUSH", "src", "a", "b").expect(set()),
        lrange(3, "src"), lrange(3, "dst"),
    ],
    "blmove_cycle": [
        Block(0, "BLMOVE", "k1", "k2", "RIGHT", "LEFT", "0"), Block(1, "BLMOVE", "k2", "k1", "RIGHT", "LEFT", "0"),
        Call(3, "RPUSH", "k1", "x").expect(set()),
        lrange(3, "k1"), lrange(3, "k2"),
    ],
    "blmove_source_is_destination": [
        Block(0, "BLMOVE", "k", "k", "LEFT", "RIGHT", "0"), Block(1, "BRPOPLPUSH", "k", "k", "0"),
        Call(3, "RPUSH", "k", "a", "b").expect(set()),
        lrange(3, "k"),
    ],
    "blmove_into_a_key_of_another_type": [
        Block(0, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0"), Block(1, "BLPOP", "src", "0"),
        Call(3, "SET", "dst", "string"),
        Call(3, "RPUSH", "src", "x").expect(set()),  # conn 0: WRONGTYPE, conn 1 gets x
        Call(3, "EXISTS", "src"), Call(3, "GET", "dst"),
    ],
    "timeouts": [
        Block(1, "BLPOP", "t", "0"),
        TimesOut(0, "BLPOP", "t", "0.1"), TimesOut(0, "BRPOP", "t", "u", "0.1"),
        TimesOut(0, "BLMOVE", "t", "d", "LEFT", "RIGHT", "0.1"), TimesOut(0, "BRPOPLPUSH", "t", "d", "0.1"),
        TimesOut(0, "BLMPOP", "0.1", "2", "t", "u", "LEFT", "COUNT", "2").expect({1}),
        Call(3, "RPUSH", "t", "x").expect(set()),
        Call(3, "EXISTS", "t", "d"),
    ],
    "a_key_deleted_or_made_a_string_while_waiting": [
        Block(0, "BLPOP", "k", "0"), Block(1, "BLMOVE", "k", "d", "RIGHT", "LEFT", "0"),
        Call(3, "SET", "k", "string").expect({0, 1}),
        Call(3, "LPUSH", "k", "x"), Call(3, "APPEND", "k", "!").expect({0, 1}),
        Call(3, "DEL", "k").expect({0, 1}),
        Call(3, "HSET", "k", "f", "v"), Call(3, "DEL", "k"),
        Call(3, "RPUSH", "k", "y", "z").expect(set()),
        lrange(3, "k"), lrange(3, "d"),
    ],
    "a_string_replaced_by_a_list": [
        # 7.2: RENAME and RENAMENX create the key with the list (dbAdd), which wakes the waiters;
        # the 7.0 reference does the same here.
        Block(0, "BLPOP", "k", "0"), Call(3, "SET", "k", "string"),
        Call(3, "RPUSH", "src", "a", "b"),
        Call(3, "RENAME", "src", "k").expect(set()),
        lrange(3, "k"),
        Block(1, "BRPOP", "k2", "0"), Call(3, "RPUSH", "s2", "x"),
        Call(3, "RENAMENX", "s2", "k2").expect(set()),
        Call(3, "EXISTS", "s2", "k2"),
    ],
    "created_by_copy_move_swapdb_and_lmove": [
        Block(0, "BLPOP", "c", "0"), Call(3, "RPUSH", "src", "x"),
        Call(3, "COPY", "src", "c").expect(set()), lrange(3, "src"),
        Block(1, "BLPOP", "m", "0"), Call(3, "SELECT", "1"), Call(3, "RPUSH", "m", "y"),
        Call(3, "MOVE", "m", "0").expect(set()),
        Block(2, "BLMPOP", "0", "1", "w", "LEFT"), Call(3, "RPUSH", "w", "z", "zz"),
        Call(3, "SWAPDB", "0", "1").expect(set()), Call(3, "SELECT", "0"), lrange(3, "w"),
        Block(0, "BLPOP", "d", "0"), Call(3, "RPUSH", "s", "q"),
        Call(3, "LMOVE", "s", "d", "LEFT", "LEFT").expect(set()), Call(3, "EXISTS", "s", "d"),
    ],
    "another_database": [
        Call(0, "SELECT", "1"), Block(0, "BLPOP", "k", "0"),
        Call(3, "RPUSH", "k", "x").expect({0}),
        Call(3, "SELECT", "1"), Call(3, "RPUSH", "k", "y").expect(set()),
        Call(3, "SELECT", "0"), lrange(3, "k"),
    ],
    "client_unblock": [
        Block(0, "BLPOP", "k", "0"), Block(1, "BLMOVE", "k", "d", "LEFT", "LEFT", "0"),
        Block(2, "BLMPOP", "0", "1", "k", "LEFT"),
        Call(3, "CLIENT", "UNBLOCK", Id(0)).expect({1, 2}),
        Call(3, "CLIENT", "UNBLOCK", Id(1), "ERROR").expect({2}),
        Call(3, "CLIENT", "UNBLOCK", Id(2), "timeout").expect(set()),
        Call(3, "CLIENT", "UNBLOCK", Id(0)), Call(3, "CLIENT", "UNBLOCK", Id(3), "ERROR"),
        Call(3, "CLIENT", "UNBLOCK", "999999999"), Call(3, "CLIENT", "UNBLOCK", Id(0), "FOO"),
        Call(3, "CLIENT", "UNBLOCK", "x"), Call(3, "CLIENT", "UNBLOCK"),
        Call(3, "RPUSH", "k", "v"), lrange(3, "k"),
        Block(0, "BRPOPLPUSH", "k2", "d", "0"), Call(3, "CLIENT", "UNBLOCK", Id(0), "ERROR").expect(set()),
        Call(0, "PING"),
    ],
    "blocking_inside_multi_answers_at_once": [
        Block(1, "BLPOP", "k", "0"),
        Call(0, "MULTI"), Call(0, "BLPOP", "e", "0"), Call(0, "BRPOP", "e", "1"),
        Call(0, "BLMOVE", "e", "d", "LEFT", "LEFT", "0"), Call(0, "BRPOPLPUSH", "e", "d", "0"),
        Call(0, "BLMPOP", "0", "1", "e", "LEFT"), Call(0, "RPUSH", "k", "a"), Call(0, "BLPOP", "k", "0"),
        Call(0, "BLMPOP", "0", "1", "k", "LEFT"),
        Call(0, "EXEC").expect({1}),  # the transaction took what it pushed: conn 1 still waits
        Call(0, "MULTI"), Call(0, "RPUSH", "k", "b", "c"), Call(0, "LPOP", "k"),
        Call(0, "EXEC").expect(set()),
        Call(0, "EXISTS", "k"),
    ],
    "pipelined_commands_behind_a_blocked_one": [
        Block(0, ("BLPOP", "k", "0"), ("PING",), ("LLEN", "k"), ("RPUSH", "k2", "z")),
        Block(1, ("BLPOP", "k2", "0"), ("LPOP", "k")),
        Call(3, "RPUSH", "k", "a", "b").expect(set()),
        Call(3, "EXISTS", "k", "k2"),
    ],
    "a_waiter_disconnects": [
        Block(0, "BLPOP", "k", "0"), Block(1, "BLMOVE", "k", "d", "LEFT", "LEFT", "0"), Block(2, "BLPOP", "k", "0"),
        Close(0), Close(1).expect({2}),
        Call(3, "RPUSH", "k", "x", "y").expect(set()),
        lrange(3, "k"), Call(3, "EXISTS", "d"),
    ],
    "served_at_once_without_blocking": [
        Call(3, "RPUSH", "k", "a", "b", "c"),
        Call(0, "BLPOP", "nokey", "k", "0"), Call(0, "BRPOP", "k", "0"), Call(0, "BLMOVE", "k", "k", "LEFT", "LEFT", "0"),
        Call(0, "BRPOPLPUSH", "k", "d", "0"), Call(0, "BLMPOP", "0", "1", "d", "RIGHT", "COUNT", "9"),
        Call(0, "SET", "s", "x"), Call(0, "BLPOP", "nokey", "s", "k", "0"), Call(0, "RPUSH", "d", "q"),
        Call(0, "BLMOVE", "d", "s", "LEFT", "LEFT", "0"),
        Call(0, "BLPOP", "k", "-1"), Call(0, "BLPOP", "k", "x"), Call(0, "BLMPOP", "0", "0", "k", "LEFT"),
        Call(0, "EXISTS", "k", "d"),
    ],
}


@pytest.mark.parametrize("protocol", [2, 3])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_blocking_scenario(diff_goblin, reference_server, name, protocol):
    run_scenario(diff_goblin, reference_server, SCENARIOS[name], protocol, title=name)


# ---- seeded random sequences ------------------------------------------------------------------------
#
# Five connections (two of them RESP3) over four keys: a connection that is not blocked either
# blocks (on one key: with several, 7.0 and 7.2 can serve different keys, see the module doc) or
# writes: pushes, moves, pops, DEL, SET to a string, RENAME and COPY onto waited keys, CLIENT
# UNBLOCK. Whether a blocking command blocks is decided by the reference's TYPE of its key. The
# last connection never blocks, so some connection can always write.

RANDOM_KEYS = ["a", "b", "c", "d"]
RANDOM_PROTOCOLS = [2, 2, 3, 2, 3]
RANDOM_STEPS = 150


def _side(rng):
    return rng.choice(["LEFT", "RIGHT"])


def random_blocking_step(rng, runner: Runner, elements) -> Step:
    writer = len(RANDOM_PROTOCOLS) - 1
    idle = [i for i in range(len(RANDOM_PROTOCOLS)) if i not in runner.blocked]
    actor = rng.choice(idle)
    missing = [k for k in RANDOM_KEYS if runner.reference.control.call("TYPE", k).value == b"none"]
    key, other = rng.choice(RANDOM_KEYS), rng.choice(RANDOM_KEYS)
    r = rng.random()
    if r < 0.45 and actor != writer:
        if missing and rng.random() < 0.85:
            key = rng.choice(missing)
        timeout = "0" if rng.random() < 0.9 else "0.1"
        command = rng.choice([
            ("BLPOP", key, timeout), ("BRPOP", key, timeout), ("BRPOPLPUSH", key, other, timeout),
            ("BLMOVE", key, other, _side(rng), _side(rng), timeout),
            ("BLMPOP", timeout, "1", key, _side(rng), "COUNT", str(rng.randint(1, 3)))])
        if key not in missing:
            return Call(actor, *command)  # answers at once: pops, or WRONGTYPE
        return TimesOut(actor, *command) if timeout != "0" else Block(actor, *command)
    if r < 0.65:
        push = rng.choice(["RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"])
        return Call(actor, push, key, *[next(elements) for _ in range(rng.choice([1, 1, 2, 3]))])
    if r < 0.73:
        return Call(actor, *rng.choice([("LMOVE", key, other, _side(rng), _side(rng)), ("RPOPLPUSH", key, other),
                                        ("LINSERT", key, "BEFORE", "e3", next(elements))]))
    if r < 0.83:
        return Call(actor, *rng.choice([("LPOP", key), ("RPOP", key, "2"), ("LMPOP", "2", key, other, "RIGHT"),
                                        ("LTRIM", key, "1", "0"), ("LRANGE", key, "0", "-1"), ("LLEN", key)]))
    if r < 0.93:
        return Call(actor, *rng.choice([("DEL", key), ("DEL", key), ("SET", key, "string"), ("RENAME", key, other),
                                        ("COPY", key, other, "REPLACE"), ("HSET", key, "f", "v"), ("TYPE", key)]))
    target = rng.randrange(len(RANDOM_PROTOCOLS))
    return Call(actor, "CLIENT", "UNBLOCK", Id(target), *rng.choice([(), ("TIMEOUT",), ("ERROR",)]))


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_blocking_sequences(diff_goblin, reference_server, seed):
    rng = random.Random(seed)
    elements = (f"e{n}" for n in itertools.count())
    runner = Runner(diff_goblin, reference_server, RANDOM_PROTOCOLS, f"random blocking sequence, seed {seed}")
    try:
        for number in range(1, RANDOM_STEPS + 1):
            runner.do(random_blocking_step(rng, runner, elements), number)
        for key in RANDOM_KEYS:
            runner.do(Call(len(RANDOM_PROTOCOLS) - 1, "LRANGE", key, "0", "-1"), RANDOM_STEPS + 1)
        runner.finish()
    finally:
        runner.close()


# ---- Redis 7.2's answers, on the server under test alone ------------------------------------------

@pytest.mark.redis72
@pytest.mark.parametrize("command,reply", [
    (("BLPOP", "k1", "k2", "0"), b"*2\r\n$2\r\nk1\r\n$1\r\ny\r\n"),
    (("BRPOP", "k2", "k1", "0"), b"*2\r\n$2\r\nk2\r\n$2\r\nx2\r\n"),
    (("BLMPOP", "0", "2", "k1", "k2", "LEFT", "COUNT", "5"), b"*2\r\n$2\r\nk1\r\n*1\r\n$1\r\ny\r\n"),
], ids=["blpop", "brpop", "blmpop"])
def test_a_woken_command_runs_again_from_its_first_key(diff_goblin, command, reply):
    """7.2 re-runs a woken blocking command from the start: blocked on k1 and k2, when one
    transaction fills k2 and then k1, it pops from the first non-empty key in its argument order
    (7.0 pops from k2, the key signalled first)."""
    with diff_goblin.raw() as control, diff_goblin.raw() as waiter:
        assert control.call("FLUSHALL").raw == b"+OK\r\n"
        waiter_id = int(waiter.call("CLIENT", "ID").value)
        waiter.send_command(*command)
        wait_for(lambda: waiter_id in blocked_ids(control), timeout=READ_SECONDS, what="the waiter to block")
        assert [control.call(*c).raw for c in (("MULTI",), ("RPUSH", "k2", "x", "x2"), ("RPUSH", "k1", "y"),
                                                ("EXEC",))][-1] == b"*2\r\n:2\r\n:1\r\n"
        assert waiter.read_reply(timeout=READ_SECONDS).raw == reply


@pytest.mark.redis72
def test_a_woken_command_meets_a_key_that_changed_type(diff_goblin):
    """7.2 re-runs a woken BLPOP from its first key: blocked on z and y, after z became a string
    and y a list, it answers WRONGTYPE and pops nothing (7.0 pops from y, the key that woke it)."""
    with diff_goblin.raw() as control, diff_goblin.raw() as waiter:
        assert control.call("FLUSHALL").raw == b"+OK\r\n"
        waiter_id = int(waiter.call("CLIENT", "ID").value)
        waiter.send_command("BLPOP", "z", "y", "0")
        wait_for(lambda: waiter_id in blocked_ids(control), timeout=READ_SECONDS, what="the waiter to block")
        assert control.call("SET", "z", "string").raw == b"+OK\r\n"
        assert waiter_id in blocked_ids(control)
        assert control.call("RPUSH", "y", "x").raw == b":1\r\n"
        assert waiter.read_reply(timeout=READ_SECONDS).raw == \
            b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
        assert control.call("LRANGE", "y", "0", "-1").raw == b"*1\r\n$1\r\nx\r\n"
