"""Seeded random commands with hostile arguments, sent to goblin-server and redis-server side by
side: edge and huge numbers, bad stream ids, patterns, binary strings, option words in the wrong
places, wrong arities and keys of the wrong type. Replies are not compared byte for byte (the
streams and corpora do that); what fails the test is

  - goblin-server crashing, closing the connection or not answering within the deadline on a
    command redis-server answers;
  - goblin-server's resident memory passing a bound redis-server stays under;
  - a command one server refuses with an error and the other accepts, unless the difference is
    one KNOWN_DIFFERENCES explains (a change Redis made after 7.0 that Goblin follows).

Every batch starts from the same keys of every type, so a failure names its seed and batch, and
the batch's commands are printed for replay. GOBLIN_HOSTILE_SEEDS=1,2 picks the seeds."""

from __future__ import annotations

import os
import random

import pytest

from support.resp import ConnectionClosed, RawConnection, ReplyTimeout

SEEDS = [int(s) for s in os.environ.get("GOBLIN_HOSTILE_SEEDS", "").split(",") if s.strip()] or \
    [101, 202, 303, 404, 505, 606]
BATCHES = 40
BATCH_LENGTH = 25
REPLY_DEADLINE = 10.0
RSS_BOUND = 1 << 30

# Commands that change the connection or the server in ways a batch cannot undo (its protocol,
# auth, replication, persistence files, pauses), block, reach the network, or belong to features
# a family of its own covers (scripts, ACL, cluster).
EXCLUDED = {
    "acl", "asking", "auth", "bgrewriteaof", "bgsave", "blmove", "blmpop", "blpop", "brpop",
    "brpoplpush", "bzmpop", "bzpopmax", "bzpopmin", "client", "cluster", "config", "debug",
    "discard", "eval", "eval_ro", "evalsha", "evalsha_ro", "exec", "failover", "fcall", "fcall_ro",
    "function", "hello", "lolwut", "migrate", "module", "monitor", "multi", "psubscribe", "psync",
    "punsubscribe", "quit", "readonly", "readwrite", "replconf", "replicaof", "reset", "restore-asking",
    "save", "script", "select", "sentinel", "shutdown", "slaveof", "ssubscribe", "subscribe",
    "sunsubscribe", "swapdb", "sync", "unsubscribe", "wait", "waitaof", "xread", "xreadgroup",
    "pfselftest",
}



def _parses_before_lookup(cmd, goblin, redis) -> bool:
    # Redis 7.2 checks BITCOUNT's and BITPOS's range before the key (redis#11734, #12394): a
    # missing key with a bad range is an error, where 7.0 answers 0.
    return goblin.is_error and redis.raw == b":0\r\n"


def _scan_cursor(cmd, goblin, redis) -> bool:
    # Redis 7.2 reads a SCAN cursor with string2ull, which refuses what 7.0's strtoul let through
    # (an empty cursor, leading spaces or '+', a sign): "invalid cursor".
    return goblin.raw == b"-ERR invalid cursor\r\n"


# command -> (reason, predicate(cmd, goblin_reply, redis_reply)): where Goblin refuses or accepts
# what Debian's redis-server 7.0 does not, for a change Redis itself made after 7.0.
KNOWN_DIFFERENCES = {
    "bitcount": _parses_before_lookup,
    "bitpos": _parses_before_lookup,
    "scan": _scan_cursor,
    "hscan": _scan_cursor,
    "sscan": _scan_cursor,
    "zscan": _scan_cursor,
}

KEYS = [b"str", b"int", b"list", b"hash", b"set", b"zset", b"stream", b"hll", b"missing", b"{str}x"]
SETUP = [
    (b"FLUSHALL",),
    (b"SET", b"str", b"hello world"),
    (b"SET", b"int", b"42"),
    (b"RPUSH", b"list", b"a", b"b", b"c", b"1", b"2"),
    (b"HSET", b"hash", b"f1", b"v1", b"f2", b"2"),
    (b"SADD", b"set", b"a", b"b", b"3"),
    (b"ZADD", b"zset", b"1", b"a", b"2.5", b"b", b"-inf", b"c"),
    (b"XADD", b"stream", b"1-1", b"f", b"v"),
    (b"XGROUP", b"CREATE", b"stream", b"g", b"0"),
    (b"PFADD", b"hll", b"a", b"b"),
]

NUMBERS = [b"0", b"1", b"-1", b"2", b"3", b"10", b"-10", b"100", b"1000000",
           b"2147483647", b"-2147483648", b"2147483648", b"4294967296", b"-4294967297",
           b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
           b"-9223372036854775809", b"18446744073709551615", b"-999999999", b"999999999",
           b"1.5", b"-0", b"-0.0", b"0.1", b"1e308", b"1e309", b"-1e309", b"inf", b"-inf", b"+inf",
           b"nan", b"0x10", b" 1", b"1 ", b"01", b"+1", b"1e5", b"", b"4.9e-324", b"(1", b"(-inf",
           b"[a", b"-", b"+", b"[", b"(", b"1-1", b"0-0", b"*", b"$", b">",
           b"18446744073709551615-18446744073709551615", b"1-18446744073709551616", b"-1-1"]
WORDS = [b"WITHSCORES", b"LIMIT", b"COUNT", b"MATCH", b"TYPE", b"BYSCORE", b"BYLEX", b"REV", b"NX",
         b"XX", b"GT", b"LT", b"CH", b"INCR", b"EX", b"PX", b"EXAT", b"PXAT", b"KEEPTTL", b"GET",
         b"IDLE", b"TIME", b"RETRYCOUNT", b"FORCE", b"JUSTID", b"MAXLEN", b"MINID", b"NOMKSTREAM",
         b"STREAMS", b"GROUP", b"NOACK", b"ASC", b"DESC", b"ALPHA", b"STORE", b"BY", b"WEIGHTS",
         b"AGGREGATE", b"SUM", b"MIN", b"MAX", b"LEFT", b"RIGHT", b"BEFORE", b"AFTER", b"RANK",
         b"MAXLEN", b"LEN", b"IDX", b"MINMATCHLEN", b"WITHMATCHLEN", b"FROMMEMBER", b"FROMLONLAT",
         b"BYRADIUS", b"BYBOX", b"WITHCOORD", b"WITHDIST", b"WITHHASH", b"ANY", b"m", b"km",
         b"REPLACE", b"ABSTTL", b"FREQ", b"DB", b"COPY", b"ENTRIESREAD", b"MKSTREAM", b"SETID",
         b"CREATE", b"DESTROY", b"CREATECONSUMER", b"DELCONSUMER", b"CONSUMERS", b"GROUPS",
         b"STREAM", b"FULL", b"OVERFLOW", b"WRAP", b"SAT", b"FAIL", b"INCRBY", b"SET", b"u8",
         b"i64", b"u63", b"i1", b"BIT", b"BYTE", b"AND", b"OR", b"XOR", b"NOT", b"~", b"=",
         b"LASTID", b"WITHVALUES", b"FIELDS", b"ENCODING", b"NOW", b"SCHEDULE"]
PATTERNS = [b"*", b"?", b"[", b"[^a-", b"\\", b"*" * 40 + b"x", b"[a-z]*", b"h*o", b"\\*"]
BINARY = [b"\x00", b"\xff\xfe", b"a\r\nb", b"\r\n", b"x" * 600, b"\x00" * 70, "é".encode()]


def argument(rng: random.Random) -> bytes:
    pool = rng.choices([KEYS, NUMBERS, WORDS, PATTERNS, BINARY], weights=[4, 5, 3, 1, 1])[0]
    return rng.choice(pool)


def command(rng: random.Random, names: list[bytes]) -> tuple[bytes, ...]:
    name = rng.choice(names).split(b"|")   # a subcommand is two words
    count = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8])
    args = [argument(rng) for _ in range(count)]
    if count and rng.random() < 0.7:
        args[0] = rng.choice(KEYS)   # most commands take a key first
    return (*name, *args)


@pytest.fixture(scope="module")
def command_names(pair) -> list[bytes]:
    """Every command both servers know, less the excluded ones."""
    def names(server):
        with server.raw() as conn:
            return {bytes(n.value).lower() for n in conn.call("COMMAND", "LIST").value}
    common = names(pair.goblin_server) & names(pair.reference_server)
    return sorted(n for n in common if n.split(b"|")[0].decode() not in EXCLUDED)


def run_batch(conn: RawConnection, commands) -> list:
    for step in SETUP:
        assert not conn.call(*step).is_error, step
    replies = []
    for cmd in commands:
        conn.send_command(*cmd)
        replies.append(conn.read_reply(timeout=REPLY_DEADLINE))
    return replies


def describe(batch) -> str:
    return "\n".join("  " + " ".join(repr(a)[2:-1] for a in cmd) for cmd in batch)


@pytest.mark.parametrize("seed", SEEDS)
def test_hostile_commands(pair, command_names, seed):
    rng = random.Random(seed)
    differences = []
    with pair.goblin_server.raw(timeout=REPLY_DEADLINE) as g, \
            pair.reference_server.raw(timeout=REPLY_DEADLINE) as r:
        for batch_number in range(BATCHES):
            batch = [command(rng, command_names) for _ in range(BATCH_LENGTH)]
            where = f"seed {seed}, batch {batch_number}:\n{describe(batch)}"
            expected = run_batch(r, batch)
            try:
                got = run_batch(g, batch)
            except (ConnectionClosed, ReplyTimeout, OSError) as exc:
                pytest.fail(f"goblin-server stopped answering ({exc}) at {where}", pytrace=False)
            assert not pair.goblin_server.crashed(), f"goblin-server crashed at {where}"
            for cmd, gr, rr in zip(batch, got, expected):
                name = cmd[0].decode().lower()
                explained = KNOWN_DIFFERENCES.get(name, lambda *_: False)
                if gr.is_error != rr.is_error and not explained(cmd, gr, rr):
                    differences.append(f"{' '.join(repr(a)[2:-1] for a in cmd)}\n"
                                       f"    goblin: {gr.raw[:120]!r}\n    redis:  {rr.raw[:120]!r}")
            rss = int(pair.goblin_server.info("memory")["used_memory_rss"])
            assert rss < RSS_BOUND, f"goblin-server holds {rss} bytes at {where}"
    assert not differences, (f"seed {seed}: {len(differences)} commands one server refused and the other "
                             f"accepted (replay the seed with GOBLIN_HOSTILE_SEEDS={seed}):\n"
                             + "\n".join(differences[:40]))
