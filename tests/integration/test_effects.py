"""The effects stream as the append-only file records it: every command is logged in the form a replay
at any later time turns into the same keyspace, exactly as redis-server logs it.

Each scenario runs the same commands on Goblin and on Debian's redis-server, both with appendonly yes,
and compares the commands their incr files hold (SELECT folded into a database number; absolute
deadlines checked against the time the test asked for, then masked, since the two servers ran at
slightly different moments).
"""

from __future__ import annotations

import time

import pytest

from support.aof import incr_commands
from support.replication import SET_REPL_SCRIPT
from support.server import REFERENCE_BINARY, wait_for

AOF = {"appendonly": "yes", "appendfsync": "always", "enable-debug-command": "yes"}
FAR_S = 100_000          # a relative lifetime, in seconds


def masked(commands: list[tuple], started_ms: int) -> list[tuple]:
    """Deadlines replaced by how far past the test's start they lie, in whole FAR_S units."""
    out = []
    for command in commands:
        words = list(command)
        for i, word in enumerate(words):
            if isinstance(word, bytes) and word.upper() == b"PXAT":
                words[i + 1] = deadline_label(words[i + 1], started_ms)
        if words[1] == b"PEXPIREAT" or (words[1] == b"RESTORE" and b"ABSTTL" in words[5:]):
            words[3] = deadline_label(words[3], started_ms)
        out.append(tuple(words))
    return out


def deadline_label(text: bytes, started_ms: int) -> str | bytes:
    """A deadline made from a relative time as "now+N*FAR"; one the test gave absolute (far in the past
    or the future) as it is."""
    if abs(int(text) - started_ms) > 100 * FAR_S * 1000:
        return text
    offset_s = (int(text) - started_ms) / 1000
    units = round(offset_s / FAR_S)
    assert abs(offset_s - units * FAR_S) < 60, f"deadline {text!r} is not a whole number of {FAR_S} s ahead"
    return f"now+{units}*FAR"


@pytest.fixture
def pair(make_server):
    """A Goblin and a redis-server, both logging; calls run the same commands on both."""
    goblin = make_server(options=AOF)
    redis = make_server(name="reference-aof", binary=REFERENCE_BINARY, options=AOF)
    conns = [goblin.raw(), redis.raw()]
    started_ms = int(time.time() * 1000)

    class Pair:
        servers = (goblin, redis)

        def run(self, *commands):
            replies = [conn.pipeline([tuple(c) for c in commands]) for conn in conns]
            for g, r, command in zip(*replies, commands):
                assert g.raw == r.raw, f"{command}: goblin {g.raw!r}, redis {r.raw!r}"
            return replies[0]

        def logged(self):
            return [masked(incr_commands(srv), started_ms) for srv in (goblin, redis)]

        def assert_same_log(self):
            ours, theirs = self.logged()
            assert ours == theirs
            return ours

    yield Pair()
    for conn in conns:
        conn.close()


def test_relative_expiries_are_logged_as_absolute_deadlines(pair):
    pair.run(("SET", "a", "1", "EX", FAR_S), ("SET", "b", "2", "PX", FAR_S * 1000), ("SETEX", "c", FAR_S, "3"),
             ("PSETEX", "d", FAR_S * 1000, "4"), ("SET", "e", "5"), ("EXPIRE", "e", FAR_S),
             ("PEXPIRE", "e", FAR_S * 2000), ("GETEX", "a", "EX", FAR_S * 3), ("GETEX", "b", "PERSIST"),
             ("SET", "f", "6", "KEEPTTL"), ("SET", "g", "7", "EXAT", int(time.time()) + FAR_S))
    log = pair.assert_same_log()
    assert log[0] == (0, b"SET", b"a", b"1", b"PXAT", "now+1*FAR")
    assert (0, b"PEXPIREAT", b"e", "now+2*FAR") in log


def test_a_deadline_in_the_past_is_logged_as_del(pair):
    pair.run(("SET", "a", "1"), ("EXPIRE", "a", -1), ("SET", "b", "2"), ("PEXPIREAT", "b", 1),
             ("SET", "c", "3"), ("GETEX", "c", "PXAT", 1))
    log = pair.assert_same_log()
    assert [c[1] for c in log] == [b"SET", b"DEL", b"SET", b"DEL", b"SET", b"DEL"]


def test_float_increments_are_logged_as_the_value_they_produced(pair):
    pair.run(("INCRBYFLOAT", "f", "1.1"), ("INCRBYFLOAT", "f", "2.2e2"), ("HINCRBYFLOAT", "h", "x", "0.1"),
             ("HINCRBYFLOAT", "h", "x", "3"))
    log = pair.assert_same_log()
    assert log == [(0, b"SET", b"f", b"1.1", b"KEEPTTL"), (0, b"SET", b"f", b"221.10000000000000001", b"KEEPTTL"),
                   (0, b"HSET", b"h", b"x", b"0.1"), (0, b"HSET", b"h", b"x", b"3.1")]


def test_spop_is_logged_as_the_members_it_removed(pair):
    pair.run(("SADD", "one", "only"), ("SPOP", "one"), ("SADD", "all", "a"), ("SPOP", "all", 5))
    assert pair.assert_same_log() == [(0, b"SADD", b"one", b"only"), (0, b"SREM", b"one", b"only"),
                                      (0, b"SADD", b"all", b"a"), (0, b"DEL", b"all")]


@pytest.mark.redis72
def test_spop_with_count_logs_the_drawn_members(make_server):
    # A random draw differs between servers: the log must name the members this one returned, in one
    # SREM (Redis 7.2 batches them; 7.0 logs one SREM per member inside MULTI/EXEC).
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        conn.call("SADD", "s", *[f"m{i}" for i in range(20)])
        popped = {e.value for e in conn.call("SPOP", "s", 7).elements()}
    log = incr_commands(srv)
    assert log[-1][:3] == (0, b"SREM", b"s") and set(log[-1][3:]) == popped and len(popped) == 7


def test_an_expired_key_is_logged_as_del_when_found(pair):
    # Active expiry is off, so each key goes when a command finds it, in the order asked.
    pair.run(("DEBUG", "SET-ACTIVE-EXPIRE", "0"), ("SET", "soon", "v", "PX", 1), ("SELECT", 2),
             ("SET", "later", "v", "PX", 1))
    deadline = time.time() + 0.002
    wait_for(lambda: time.time() > deadline, interval=0.001, what="the 1 ms lifetimes to pass")
    pair.run(("GET", "later"), ("SELECT", 0), ("INCR", "soon"))
    log = pair.assert_same_log()
    # The INCR made two changes, the deletion it found and its own: one unit, MULTI ... EXEC.
    assert log[-5:] == [(2, b"DEL", b"later"), (0, b"MULTI"), (0, b"DEL", b"soon"), (0, b"INCR", b"soon"),
                        (0, b"EXEC")]


def test_a_write_that_changes_nothing_is_not_logged(pair):
    pair.run(("SET", "k", "v"), ("SET", "k", "w", "NX"), ("DEL", "missing"), ("EXPIRE", "missing", 10),
             ("HINCRBYFLOAT", "k", "f", "1"), ("SREM", "k2", "x"), ("INCRBYFLOAT", "k", "x"))
    assert pair.assert_same_log() == [(0, b"SET", b"k", b"v")]


def test_a_transaction_is_logged_inside_multi_exec(pair):
    pair.run(("MULTI",), ("SET", "a", "1", "EX", FAR_S), ("INCR", "a"), ("SELECT", 3), ("SET", "b", "2"),
             ("EXEC",))
    log = pair.assert_same_log()
    assert [c[1] for c in log] == [b"MULTI", b"SET", b"INCR", b"SET", b"EXEC"]
    assert log[3][0] == 3


def test_a_script_s_set_repl_chooses_what_is_logged(pair):
    pair.run(("EVAL", SET_REPL_SCRIPT, 0))
    assert [c[1:] for c in pair.assert_same_log()] == [
        (b"MULTI",), (b"SET", b"aof-only", b"1"), (b"SET", b"everywhere", b"1"), (b"EXEC",)]


def test_a_unit_with_one_change_is_logged_bare(pair):
    """A transaction or a script that made a single change: the change alone, no MULTI/EXEC (Redis 7)."""
    pair.run(("MULTI",), ("SET", "a", "1"), ("GET", "a"), ("EXEC",), ("MULTI",), ("EXEC",),
             ("MULTI",), ("INCR", "n"), ("EXEC",), ("EVAL", "redis.call('set', 'b', '2') return 1", 0))
    log = pair.assert_same_log()
    assert [c[1:] for c in log] == [(b"SET", b"a", b"1"), (b"INCR", b"n"), (b"SET", b"b", b"2")]


def test_publish_is_not_logged(pair):
    """The replicas get PUBLISH and SPUBLISH, the log does not: a replay would deliver the messages again. Once
    there is a replication backlog the messages count in their unit: a transaction of messages alone is then
    logged as an empty MULTI/EXEC, as Redis logs it."""
    commands = [("PUBLISH", "ch", "a"), ("SPUBLISH", "shard", "b"), ("MULTI",), ("SET", "k", "v"),
                ("PUBLISH", "ch", "c"), ("SET", "k", "w"), ("EXEC",),
                ("EVAL", "return redis.call('publish', 'ch', 'd')", 0),
                ("MULTI",), ("PUBLISH", "ch", "e"), ("PUBLISH", "ch", "f"), ("EXEC",)]
    pair.run(*commands)
    transaction = [(0, b"MULTI"), (0, b"SET", b"k", b"v"), (0, b"SET", b"k", b"w"), (0, b"EXEC")]
    assert pair.assert_same_log() == transaction
    links = [srv.raw() for srv in pair.servers]
    for link, srv in zip(links, pair.servers):
        link.send_command("PSYNC", "?", "-1")  # a replica that never reads: the backlog is made for it
        wait_for(lambda: srv.info("replication")["repl_backlog_active"] == "1", what="the backlog")
    pair.run(*commands)
    assert pair.assert_same_log() == transaction * 2 + [(0, b"MULTI"), (0, b"EXEC")]
    for link in links:
        link.close()


def test_the_log_replays_to_the_same_keyspace(make_server):
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        conn.pipeline([("SET", "a", "1", "EX", FAR_S), ("INCRBYFLOAT", "f", "0.1"), ("INCRBYFLOAT", "f", "0.2"),
                       ("SADD", "s", "x", "y", "z"), ("SPOP", "s"), ("HINCRBYFLOAT", "h", "x", "1.5")])
        before = [conn.call(*c).raw for c in [("PEXPIRETIME", "a"), ("GET", "f"), ("SMEMBERS", "s"),
                                               ("HGET", "h", "x")]]
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        after = [conn.call(*c).raw for c in [("PEXPIRETIME", "a"), ("GET", "f"), ("SMEMBERS", "s"),
                                              ("HGET", "h", "x")]]
    assert sorted(before[2].split(b"\r\n")) == sorted(after[2].split(b"\r\n"))
    assert (before[0], before[1], before[3]) == (after[0], after[1], after[3])


def test_blocking_and_multi_key_pops_are_logged_as_the_pop_they_made(pair):
    pair.run(("ZADD", "z", 1, "a", 2, "b", 3, "c", 4, "d"), ("BZPOPMIN", "z", 0), ("BZPOPMAX", "none", "z", 0),
             ("BZMPOP", 0, 2, "none", "z", "MIN", "COUNT", 5), ("ZADD", "y", 1, "a", 2, "b"),
             ("ZMPOP", 1, "y", "MAX"))
    log = pair.assert_same_log()
    assert log[1:4] == [(0, b"ZPOPMIN", b"z"), (0, b"ZPOPMAX", b"z"), (0, b"ZPOPMIN", b"z", b"2")]
    assert log[-1] == (0, b"ZPOPMAX", b"y", b"1")


def test_a_blocked_pop_served_later_is_logged_as_the_pop(pair):
    waiters = [srv.raw() for srv in pair.servers]
    for conn in waiters:
        conn.send_command("BZPOPMIN", "later", 0)
    for srv in pair.servers:
        wait_for(lambda: srv.info("clients")["blocked_clients"] == "1", what="the pop to block")
    pair.run(("ZADD", "later", 5, "m"))
    assert [conn.read_reply().raw for conn in waiters] == [b"*3\r\n$5\r\nlater\r\n$1\r\nm\r\n$1\r\n5\r\n"] * 2
    assert pair.assert_same_log()[-2:] == [(0, b"ZADD", b"later", b"5", b"m"), (0, b"ZPOPMIN", b"later")]
    for conn in waiters:
        conn.close()


def test_setbit_and_bitfield_are_logged_only_when_a_bit_changes(pair):
    # Redis 7 counts SETBIT and BITFIELD as a change only when the key was created or lengthened or a
    # bit changed; what changed is logged as it arrived, GETs included.
    pair.run(("SETBIT", "s", 5, 1), ("SETBIT", "s", 5, 1), ("SETBIT", "s", 3, 0), ("SETBIT", "s", 100, 0),
             ("BITFIELD", "s", "GET", "u8", 0), ("BITFIELD", "s", "SET", "u8", 0, 4),
             ("BITFIELD", "s", "INCRBY", "u8", "#1", 1, "GET", "u4", 0),
             ("BITFIELD", "s", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 1000), ("BITFIELD_RO", "s", "GET", "u8", 0),
             ("BITFIELD", "s", "OVERFLOW", "SAT", "INCRBY", "u8", 8, 1000), ("BITFIELD", "s", "SET", "i8", 8, -1),
             ("SET", "n", "12"), ("SETBIT", "n", 0, 0), ("BITFIELD", "n", "SET", "u8", 0, 49),
             ("BITFIELD", "n", "SET", "u8", 0, 50), ("BITFIELD", "nokey", "GET", "u8", 0))
    assert pair.assert_same_log() == [
        (0, b"SETBIT", b"s", b"5", b"1"), (0, b"SETBIT", b"s", b"100", b"0"),
        (0, b"BITFIELD", b"s", b"INCRBY", b"u8", b"#1", b"1", b"GET", b"u4", b"0"),
        (0, b"BITFIELD", b"s", b"OVERFLOW", b"SAT", b"INCRBY", b"u8", b"8", b"1000"),
        (0, b"SET", b"n", b"12"), (0, b"BITFIELD", b"n", b"SET", b"u8", b"0", b"50")]


def test_a_watched_key_is_dirtied_only_by_a_bit_that_changes(make_server):
    for binary in (None, REFERENCE_BINARY):
        srv = make_server(**({"binary": binary, "name": "reference-watch"} if binary else {}))
        with srv.raw() as watcher, srv.raw() as writer:
            writer.call("SETBIT", "w", 7, 1)
            outcomes = []
            for change in [("SETBIT", "w", 7, 1), ("BITFIELD", "w", "SET", "u8", 0, 1), ("SETBIT", "w", 6, 1),
                           ("BITFIELD", "w", "OVERFLOW", "FAIL", "INCRBY", "u8", 0, 300),
                           ("BITFIELD", "w", "INCRBY", "u8", 0, 1)]:
                watcher.call("WATCH", "w")
                writer.call(*change)
                watcher.call("MULTI")
                watcher.call("PING")
                outcomes.append(watcher.call("EXEC").raw)
        assert outcomes == [b"*1\r\n+PONG\r\n", b"*1\r\n+PONG\r\n", b"*-1\r\n", b"*1\r\n+PONG\r\n", b"*-1\r\n"], binary


@pytest.mark.goblin
def test_a_bitfield_whose_writes_all_fail_still_logs_the_key_it_created(make_server):
    # Redis 7.2 leaves this key out of its log (and its replicas): the writes failed, so it counts no
    # change, though the key was created. Goblin counts the growth as one change so a replay has it.
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        assert conn.call("BITFIELD", "made", "OVERFLOW", "FAIL", "SET", "u8", 8, 300).raw == b"*1\r\n$-1\r\n"
        conn.call("SET", "grown", "")
        conn.call("BITFIELD", "grown", "OVERFLOW", "FAIL", "INCRBY", "u1", 63, 2)
        conn.call("BITFIELD", "grown", "OVERFLOW", "FAIL", "INCRBY", "u1", 63, 2)  # no growth now: not logged
    assert incr_commands(srv) == [(0, b"BITFIELD", b"made", b"OVERFLOW", b"FAIL", b"SET", b"u8", b"8", b"300"),
                                  (0, b"SET", b"grown", b""),
                                  (0, b"BITFIELD", b"grown", b"OVERFLOW", b"FAIL", b"INCRBY", b"u1", b"63", b"2")]
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        assert conn.call("STRLEN", "made").raw == b":2\r\n"
        assert conn.call("STRLEN", "grown").raw == b":8\r\n"


def test_bitfield_effects_replay_to_the_same_strings(make_server):
    import random
    rng = random.Random(3)
    types = [f"{s}{n}" for s in "iu" for n in range(1, 65) if (s, n) != ("u", 64)]
    calls = []
    for _ in range(600):
        call = ["BITFIELD", f"bf{rng.randrange(4)}"]
        for _ in range(rng.randint(1, 4)):
            t = rng.choice(types)
            offset = rng.choice([str(rng.randrange(200)), f"#{rng.randrange(6)}"])
            r = rng.random()
            if r < 0.2:
                call += ["OVERFLOW", rng.choice(["WRAP", "SAT", "FAIL"])]
            elif r < 0.4:
                call += ["GET", t, offset]
            else:
                call += [rng.choice(["SET", "INCRBY"]), t, offset, str(rng.randint(-2**63, 2**63 - 1) >> rng.randrange(64))]
        calls.append(tuple(call))
        if rng.random() < 0.1:
            calls.append(("SETBIT", f"bf{rng.randrange(4)}", rng.randrange(300), rng.randrange(2)))
    srv = make_server(options=AOF)
    keys = [f"bf{i}" for i in range(4)]
    with srv.raw() as conn:
        conn.pipeline(calls)
        before = [conn.call("GET", k).raw for k in keys]
    assert all(b != b"$-1\r\n" for b in before)
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        assert [conn.call("GET", k).raw for k in keys] == before

def test_hyperloglog_writes_and_cache_fills_are_logged_as_redis_logs_them(pair):
    # PFCOUNT of one key with a stale cache writes the cardinality into the string: Redis logs
    # that PFCOUNT, which recomputes the same bytes on replay; a cached or multi-key count writes
    # nothing. PFDEBUG TODENSE logs itself when it converts, not when the value is dense already.
    pair.run(("PFADD", "h", "a", "b"), ("PFADD", "h", "a"), ("PFCOUNT", "h"), ("PFCOUNT", "h"),
             ("PFCOUNT", "h", "missing"), ("PFMERGE", "m", "h"), ("PFDEBUG", "TODENSE", "m"),
             ("PFDEBUG", "TODENSE", "m"), ("PFDEBUG", "ENCODING", "m"), ("PFCOUNT", "missing"),
             ("MULTI",), ("PFADD", "t", "x"), ("PFCOUNT", "t"), ("EXEC",))
    assert pair.assert_same_log() == [
        (0, b"PFADD", b"h", b"a", b"b"), (0, b"PFCOUNT", b"h"), (0, b"PFMERGE", b"m", b"h"),
        (0, b"PFDEBUG", b"TODENSE", b"m"), (0, b"MULTI"), (0, b"PFADD", b"t", b"x"), (0, b"PFCOUNT", b"t"),
        (0, b"EXEC")]


def test_hyperloglogs_replay_to_the_same_bytes(make_server):
    srv = make_server(options=AOF)
    keys = ("sparse", "dense", "merged", "converted")
    with srv.raw() as conn:
        conn.pipeline([("PFADD", "sparse", *[f"s{i}" for i in range(50)]), ("PFCOUNT", "sparse"),
                       ("PFADD", "dense", *[f"d{i}" for i in range(5000)]), ("PFCOUNT", "dense"),
                       ("PFADD", "dense", "one more"), ("PFMERGE", "merged", "sparse", "dense"),
                       ("PFCOUNT", "merged"), ("PFADD", "converted", "x"), ("PFDEBUG", "TODENSE", "converted"),
                       ("PFADD", "sparse", "late")])
        before = [conn.call("GET", key).raw for key in keys]
    srv.restart()
    with srv.raw() as conn:
        wait_for(lambda: not conn.call("PING").is_error, what="the AOF to load")
        after = [conn.call("GET", key).raw for key in keys]
    assert before == after
    assert all(b"HYLL" in value for value in before)


def stale_keys(pair, *keys):
    """Keys already past their deadline (active expiry off), left for a command to find."""
    pair.run(("DEBUG", "SET-ACTIVE-EXPIRE", "0"), *[("SET", key, "v", "PXAT", 1) for key in keys])


def test_expired_keys_found_by_scan_and_randomkey_are_logged_unwrapped(pair):
    # Redis 7.2 (CMD_TOUCHES_ARBITRARY_KEYS): each deletion on its own; MGET's two are one unit, and
    # inside a transaction SCAN's join the transaction's.
    stale_keys(pair, "a", "b")
    pair.run(("SCAN", 0))
    stale_keys(pair, "c", "d")
    pair.run(("RANDOMKEY",))
    stale_keys(pair, "e", "f")
    pair.run(("MGET", "e", "f"))
    stale_keys(pair, "g", "h")
    pair.run(("MULTI",), ("SCAN", 0), ("EXEC",))
    ours, theirs = pair.logged()
    deletions = [c for c in ours if c[1] != b"SET"]
    assert sorted(deletions[0:2]) == [(0, b"DEL", b"a"), (0, b"DEL", b"b")]
    assert sorted(deletions[2:4]) == [(0, b"DEL", b"c"), (0, b"DEL", b"d")]
    assert deletions[4:8] == [(0, b"MULTI"), (0, b"DEL", b"e"), (0, b"DEL", b"f"), (0, b"EXEC")]
    assert deletions[8] == (0, b"MULTI") and deletions[-1] == (0, b"EXEC")
    assert sorted(deletions[9:11]) == [(0, b"DEL", b"g"), (0, b"DEL", b"h")] and len(deletions) == 12
    assert sorted(ours) == sorted(theirs)


def test_lazyfree_options_log_unlink(pair):
    pair.run(("CONFIG", "SET", "lazyfree-lazy-expire", "yes"), ("CONFIG", "SET", "lazyfree-lazy-user-del", "yes"))
    stale_keys(pair, "stale")
    pair.run(("EXISTS", "stale"), ("SET", "a", "1"), ("EXPIRE", "a", -1), ("SET", "b", "1"), ("GETEX", "b", "PXAT", 1),
             ("SET", "c", "1"), ("GETDEL", "c"), ("CONFIG", "SET", "lazyfree-lazy-expire", "no"),
             ("CONFIG", "SET", "lazyfree-lazy-user-del", "no"), ("SET", "d", "1"), ("GETDEL", "d"),
             ("GETDEL", "d"))
    log = pair.assert_same_log()
    assert [c[1:] for c in log if c[1] != b"SET"] == [
        (b"UNLINK", b"stale"), (b"UNLINK", b"a"), (b"UNLINK", b"b"), (b"UNLINK", b"c"), (b"DEL", b"d")]


def test_set_get_getset_and_expire_options_are_logged_as_redis_logs_them(pair):
    pair.run(("GETSET", "a", "1"), ("SET", "a", "2", "get", "XX"), ("SET", "a", "3", "GET", "GET"),
             ("SET", "a", "4", "EX", FAR_S, "GET"), ("EXPIRE", "a", FAR_S * 2, "gt"), ("EXPIRE", "a", FAR_S, "GT"),
             ("PEXPIRE", "a", FAR_S * 1000, "LT"), ("PEXPIREAT", "a", 99_999_999_999_999, "xx"))
    log = pair.assert_same_log()
    assert log == [(0, b"SET", b"a", b"1"), (0, b"SET", b"a", b"2", b"XX"), (0, b"SET", b"a", b"3"),
                   (0, b"SET", b"a", b"4", b"PXAT", "now+1*FAR"), (0, b"PEXPIREAT", b"a", "now+2*FAR", b"gt"),
                   (0, b"PEXPIREAT", b"a", "now+1*FAR", b"LT"),
                   (0, b"PEXPIREAT", b"a", b"99999999999999", b"xx")]


def test_flushdb_of_an_empty_database_is_logged(pair):
    pair.run(("FLUSHDB",), ("SELECT", 3), ("FLUSHDB", "ASYNC"), ("FLUSHALL",))
    assert pair.assert_same_log() == [(0, b"FLUSHDB"), (3, b"FLUSHDB", b"ASYNC"), (3, b"FLUSHALL")]


def test_restore_of_a_past_deadline_over_a_key_is_logged_as_del(pair):
    pair.run(("SET", "src", "v"))
    payload = pair.servers[1].raw().call("DUMP", "src").value
    pair.run(("SET", "k", "old"), ("RESTORE", "k", 1, payload, "ABSTTL", "REPLACE"),
             ("RESTORE", "missing", 1, payload, "ABSTTL"), ("SET", "k", "old"),
             ("RESTORE", "k", FAR_S * 1000, payload, "REPLACE"))
    log = pair.assert_same_log()
    assert [c[1] for c in log] == [b"SET", b"SET", b"DEL", b"SET", b"RESTORE"]
    assert log[-1][-2:] == (b"REPLACE", b"ABSTTL")


def test_xadd_and_xtrim_log_the_trim_they_made_in_place(pair):
    pair.run(("CONFIG", "SET", "stream-node-max-entries", "2"),
             *[("XADD", "s", f"{i}-0", "f", "v") for i in range(1, 6)],
             ("XADD", "s", "NOMKSTREAM", "MAXLEN", "~", "1", "LIMIT", "10", "6-*", "f", "v"),
             ("xadd", "s", "nomkstream", "minid", "~", "5", "limit", "1", "7-0", "f", "v"),
             ("XADD", "s", "MAXLEN", "=", "2", "8-0", "f", "v"), ("XADD", "s", "MINID", "~", "0", "9-0", "f", "v"),
             ("XTRIM", "s", "MINID", "~", "100"), ("XTRIM", "s", "MAXLEN", "~", "0"), ("XTRIM", "s", "MAXLEN", "0"))
    log = pair.assert_same_log()
    assert log[5:] == [
        (0, b"XADD", b"s", b"NOMKSTREAM", b"MAXLEN", b"=", b"2", b"LIMIT", b"10", b"6-0", b"f", b"v"),
        (0, b"XADD", b"s", b"nomkstream", b"minid", b"=", b"5-0", b"limit", b"1", b"7-0", b"f", b"v"),
        (0, b"XADD", b"s", b"MAXLEN", b"=", b"2", b"8-0", b"f", b"v"),
        # the first id of the first node, the entry the exact trim above marked deleted included
        (0, b"XADD", b"s", b"MINID", b"=", b"7-0", b"9-0", b"f", b"v"),
        (0, b"XTRIM", b"s", b"MINID", b"=", b"18446744073709551615-18446744073709551615")]


def test_xreadgroup_and_xclaim_in_a_transaction_are_logged_inside_it(pair):
    # Goblin adds the consumers' creation and the group's read counter (as Redis 7.4 logs them,
    # test_stream_groups.py); the claims are Redis's, inside the transaction's MULTI/EXEC.
    pair.run(*[("XADD", "s", f"{i}-0", "f", "v") for i in range(1, 4)], ("XGROUP", "CREATE", "s", "g", "0"),
             ("MULTI",), ("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"),
             ("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"), ("EXEC",),
             ("MULTI",), ("XCLAIM", "s", "g", "c2", "0", "1-0", "2-0"), ("XCLAIM", "s", "g", "c3", "0", "3-0", "JUSTID"),
             ("EXEC",))

    def shape(log):
        return [(c[1], c[3:6] if c[1] == b"XCLAIM" else ()) for c in log
                if c[1] != b"XGROUP" or c[2] == b"CREATE"]
    ours, theirs = pair.logged()
    assert shape(ours) == shape(theirs)
    assert [c[1] for c in ours[4:]].count(b"MULTI") == 2 and ours[-1][1] == b"EXEC"


@pytest.mark.redis72
def test_spop_with_a_count_logs_srem_batches_of_1024(make_server):
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        conn.call("SADD", "s", *[f"m{i}" for i in range(3000)])
        popped = [e.value for e in conn.call("SPOP", "s", 2000).elements()]
        conn.call("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
        conn.call("SPOP", "s", 5000)
    log = incr_commands(srv)[1:]
    assert [c[1] for c in log[1:3]] == [b"SREM", b"SREM"] and [len(c) - 3 for c in log[1:3]] == [1024, 976]
    assert log[0] == (0, b"MULTI") and log[3] == (0, b"EXEC")
    assert set(log[1][3:]) | set(log[2][3:]) == set(popped) and len(popped) == 2000
    assert log[4] == (0, b"UNLINK", b"s")


@pytest.mark.redis72
def test_restore_of_a_past_deadline_logs_unlink_with_lazyfree_server_del(make_server):
    srv = make_server(options=AOF)
    with srv.raw() as conn:
        conn.call("SET", "src", "v")
        payload = conn.call("DUMP", "src").value
        conn.call("CONFIG", "SET", "lazyfree-lazy-server-del", "yes")
        conn.call("SET", "k", "old")
        assert conn.call("RESTORE", "k", 1, payload, "ABSTTL", "REPLACE").raw == b"+OK\r\n"
    assert incr_commands(srv)[-1] == (0, b"UNLINK", b"k")
