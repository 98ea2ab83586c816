"""The differential engine: run the same operations on the server under test and on a reference
redis-server, compare every reply, and shrink a failing sequence to a short one.

Vocabulary
  Step        one command (its arguments) plus the Comparator that judges its two replies.
  Op          a list of Steps that belong together and are shrunk as a unit (for example
              "EXISTS <all keys>" followed by "DBSIZE", so that lazy expiry happens first).
  Comparator  decides whether the two replies agree. EXACT compares the bytes; the others
              encode the documented exceptions: hash order (multisets, SCAN), clocks
              (TTL tolerances), per-process values (client ids, LASTSAVE), and the
              Redis 7.0 -> 7.2 differences Goblin follows (see REDIS-7.0-VS-7.2.md).
  Mismatch    where the replies differ (or a server crashed, hung or closed the connection).

`run_ops` replays Ops on fresh connections after FLUSHALL and a config reset, so a replay
of any subsequence is self-contained; `shrink` applies delta debugging (drop chunks,
replay, keep the smaller sequence if it still fails the same way).
"""

from __future__ import annotations

import math
import re
import struct
import time
from dataclasses import dataclass, field

from .resp import ConnectionClosed, ProtocolViolation, RawConnection, Reply, ReplyTimeout, encode_command

# Configuration the streams may change, with the value each replay starts from.
CONFIG_DEFAULTS = {
    "hz": "10", "timeout": "0", "tcp-keepalive": "300", "loglevel": "notice",
    "maxmemory": "0", "maxmemory-policy": "noeviction",
    "zset-max-listpack-entries": "128", "zset-max-listpack-value": "64",
    "hash-max-listpack-entries": "512", "hash-max-listpack-value": "64", "set-max-intset-entries": "512",
}
# Configuration reset like CONFIG_DEFAULTS, but only on a server that has the parameter (CONFIG GET
# names it): the list settings, so that the suite still runs against a build without lists.
OPTIONAL_CONFIG_DEFAULTS = {"list-max-listpack-size": "-2", "list-compress-depth": "0",
                            "set-max-listpack-entries": "128", "set-max-listpack-value": "64",
                            "hll-sparse-max-bytes": "3000"}


class Failure:
    """Stands in for a reply when a server did not produce one."""

    def __init__(self, text: str):
        self.text = text
        self.raw = b"<" + text.encode() + b">"
        self.kind = "!failure"

    def __repr__(self):
        return f"<{self.text}>"


# ---- comparators -----------------------------------------------------------------------------------

# Replies that Redis 7.2 words differently from the 7.0 reference (Goblin follows 7.2): the
# reference's text on the left is accepted as equal to 7.2's on the right, for every command or
# (third element) for the one named.
REDIS_72_REPLY_TEXT = [
    (b"must be one of the following: debug, verbose, notice, warning\r\n",
     b"must be one of the following: debug, verbose, notice, warning, nothing\r\n"),  # loglevel "nothing"
    # 7.2 names the command as called (c->cmd->fullname) and XREADGROUP's marker; 7.0 says
    # "XREAD" and '$' for both commands.
    (b"-ERR Unbalanced XREAD list of streams", b"-ERR Unbalanced 'xread' list of streams", b"XREAD"),
    (b"-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
     b"-ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.",
     b"XREADGROUP"),
]


def same_as_72(g, r, args=None) -> bool:
    """True if the reference's reply, rewritten to Redis 7.2's wording, equals Goblin's (`args`:
    the command, for the rewrites that belong to one)."""
    if isinstance(g, Failure) or isinstance(r, Failure) or r.kind not in "-!":
        return False
    name = (args[0].encode() if isinstance(args[0], str) else bytes(args[0])).upper() if args else None
    text = r.raw
    for old, new, *command in REDIS_72_REPLY_TEXT:
        if not command or command[0] == name:
            text = text.replace(old, new)
    return text == g.raw


class Comparator:
    """Default behaviour: both servers run the step once; replies must be byte-identical."""

    name = "exact"
    # May the step be sent in a pipeline with its neighbours? Not if judging it needs a
    # follow-up query right after it, or if it runs its own command sequence.
    pipelinable = True

    def execute(self, step: "Step", ctx: "Context"):
        return ctx.both(step.args)

    def differs(self, step: "Step", g, r, ctx: "Context") -> str | None:
        if g.raw == r.raw or same_as_72(g, r, step.args):
            return None
        return "replies differ"


EXACT = Comparator()


def _failed(g, r) -> str | None:
    if isinstance(g, Failure) or isinstance(r, Failure):
        return "a server failed to reply"
    return None


class Multiset(Comparator):
    """Aggregate replies whose order depends on hashing (KEYS): same type, same elements."""

    name = "multiset"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or g.kind != r.kind or g.kind not in "*~":
            return "replies differ"
        gs, rs = sorted(e.raw for e in g.value or []), sorted(e.raw for e in r.value or [])
        if gs != rs:
            return "different elements (compared as multisets): " + _multiset_delta(gs, rs)
        return None


def _multiset_delta(goblin: list, reference: list) -> str:
    from collections import Counter
    cg, cr = Counter(goblin), Counter(reference)
    only_g, only_r = sorted((cg - cr).elements()), sorted((cr - cg).elements())
    return f"only from goblin {only_g[:10]!r}, only from reference {only_r[:10]!r}"


class IntTolerance(Comparator):
    """Clock-dependent integers (TTL, PTTL, EXPIRETIME, OBJECT IDLETIME): negative sentinels exact."""

    def __init__(self, tolerance: int, name: str):
        self.tolerance = tolerance
        self.name = f"{name}±{tolerance}"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != ":" or r.kind != ":" or g.value < 0 or r.value < 0:
            return "replies differ"
        if abs(g.value - r.value) > self.tolerance:
            return f"differ by {abs(g.value - r.value)} (> tolerance {self.tolerance})"
        return None


class AnyInteger(Comparator):
    """Per-process integers (CLIENT ID, LASTSAVE, MEMORY USAGE, OBJECT FREQ): only the shape must match."""

    name = "any-integer"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind == ":" and r.kind == ":" and (g.value >= 0) == (r.value >= 0):
            return None
        return "reply shapes differ"


class ServerTime(Comparator):
    name = "time"

    def differs(self, step, g, r, ctx):
        def seconds(x):
            assert x.kind == "*" and len(x.value) == 2 and all(e.kind == "$" for e in x.value)
            return int(x.value[0].value) + int(x.value[1].value) / 1e6
        if g.is_error or r.is_error:
            return None if g.raw == r.raw else "replies differ"
        try:
            delta = abs(seconds(g) - seconds(r))
        except (AssertionError, ValueError, TypeError):
            return "TIME reply is not [seconds, microseconds]"
        return None if delta < 2 else f"clocks differ by {delta:.3f}s"


class RandomKey(Comparator):
    """RANDOMKEY: both empty, or each returned key exists on both servers."""

    name = "randomkey"
    pipelinable = False

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != "$" or r.kind != "$" or g.value is None or r.value is None:
            return "replies differ"
        for key in (g.value, r.value):
            eg, er = ctx.both(("EXISTS", key))
            if eg.raw != b":1\r\n" or er.raw != b":1\r\n":
                return f"returned key {key!r} does not exist on both servers"
        return None


def _pairs(reply) -> list | None:
    if reply.kind == "%":
        return [(a.raw, b.raw) for a, b in reply.value]
    if reply.kind == "*" and reply.value is not None and len(reply.value) % 2 == 0:
        return [(reply.value[i].raw, reply.value[i + 1].raw) for i in range(0, len(reply.value), 2)]
    return None


class ConfigPairs(Comparator):
    """CONFIG GET: the order of (name, value) pairs is unspecified since Redis 7.0."""

    name = "config-pairs"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != r.kind:
            return "replies differ"
        pg, pr = _pairs(g), _pairs(r)
        if pg is None or pr is None or sorted(pg) != sorted(pr):
            return "different (name, value) pairs"
        return None


class Hello(Comparator):
    """HELLO: same fields in the same order; 'version' (7.0 vs 7.2) and 'id' (per process) may differ."""

    name = "hello"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != r.kind or g.is_error or r.is_error:
            return "replies differ"
        pg, pr = _pairs(g), _pairs(r)
        if pg is None or pr is None or [k for k, _ in pg] != [k for k, _ in pr]:
            return "different HELLO fields"
        for (k, vg), (_, vr) in zip(pg, pr):
            if k.endswith(b"version\r\n") or k.endswith(b"id\r\n"):
                continue
            if vg != vr:
                return f"HELLO field {k!r} differs"
        return None


# CLIENT INFO fields that depend on the process or the moment, not on the command stream.
_VOLATILE_CLIENT_FIELDS = {"id", "addr", "laddr", "fd", "age", "idle", "qbuf", "qbuf-free", "argv-mem",
                           "multi-mem", "rbs", "rbp", "obl", "oll", "omem", "tot-mem", "events"}
# Fields Redis 7.2 added to CLIENT INFO/LIST (Goblin follows 7.2; the 7.0 reference lacks them).
_CLIENT_FIELDS_ADDED_IN_72 = {"lib-name", "lib-ver"}


def parse_client_line(text: bytes) -> dict:
    if text.startswith(b"txt:"):
        text = text[4:]
    out = {}
    for item in text.decode("utf-8", "replace").strip().split(" "):
        k, _, v = item.partition("=")
        out[k] = v
    return out


class ClientInfo(Comparator):
    name = "client-info"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != r.kind or g.is_error or r.is_error or g.value is None or r.value is None:
            return "replies differ"
        fg, fr = parse_client_line(g.value), parse_client_line(r.value)
        missing = set(fr) - set(fg)
        extra = set(fg) - set(fr) - _CLIENT_FIELDS_ADDED_IN_72
        if missing or extra:
            return f"CLIENT INFO fields differ: missing {sorted(missing)}, unexpected {sorted(extra)}"
        for k in fr:
            vg, vr = fg[k], fr[k]
            if k == "flags":
                # RESET clears CLIENT NO-EVICT ('e') in 7.2 and keeps it in 7.0.
                vg, vr = (v.replace("e", "") or "N" for v in (vg, vr))
            if k not in _VOLATILE_CLIENT_FIELDS and vg != vr:
                return f"CLIENT INFO field {k}: {fg[k]!r} vs {fr[k]!r}"
        return None


class ObjectEncoding(Comparator):
    """OBJECT ENCODING, exact except 7.2's listpack for small lists and sets (7.0: quicklist/hashtable)."""

    name = "object-encoding"
    pipelinable = False

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind == "$" and r.kind == "$" and g.value == b"listpack" and len(step.args) == 3:
            tg, _ = ctx.both(("TYPE", step.args[2]))
            if (tg.raw, r.value) in ((b"+list\r\n", b"quicklist"), (b"+set\r\n", b"hashtable")):
                return None
        return "replies differ"


class FullScan(Comparator):
    """SCAN iterated to cursor 0 on each server: the union of the keys must be the same set."""

    name = "full-scan"
    pipelinable = False

    def execute(self, step, ctx):
        return ctx.each(lambda conn: self._scan(conn, step.args))

    @staticmethod
    def _scan(conn: RawConnection, args) -> Reply:
        cursor, seen, rounds = b"0", set(), 0
        while True:
            reply = conn.call(args[0], cursor, *args[2:])
            if reply.is_error:
                return reply
            if reply.kind != "*" or len(reply.value) != 2 or reply.value[0].kind != "$":
                text = b"bad SCAN reply " + reply.raw[:200]
                return Reply("!", text, b"<" + text + b">")
            cursor = reply.value[0].value
            seen.update(e.value for e in reply.value[1].value)
            rounds += 1
            if cursor == b"0":
                break
            if rounds > 100000:
                return Reply("!", b"SCAN never returned cursor 0", b"<SCAN never returned cursor 0>")
        summary = b"SCAN-SET " + b" ".join(repr(k).encode() for k in sorted(seen))
        return Reply("+", summary, summary)

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind == "+" and r.kind == "+":
            return "full SCAN returned different key sets: " + _multiset_delta(g.value.split(b" ")[1:],
                                                                             r.value.split(b" ")[1:])
        return "replies differ"


# ---- sorted sets: scores printed by 7.0 with 17 digits, by 7.2 with the shortest text ----------

def _double_bits(text: bytes):
    """The IEEE bits of a score's text, or None if it is not a number."""
    try:
        value = float(text)
    except ValueError:
        return None
    return None if math.isnan(value) else struct.pack("<d", value)


def score_texts_agree(g: bytes, r: bytes) -> bool:
    """A score as Goblin prints it (Redis 7.2: shortest round-trip text) and as the 7.0 reference
    prints it ("%.17g", or the integer a listpack stores): the same double. The reference's text
    must be one of 7.0's renderings, so a member that merely looks numeric is not excused."""
    bits = _double_bits(g)
    if bits is None or bits != _double_bits(r):
        return False
    value = float(r)
    return r == b"%.17g" % value or (value.is_integer() and abs(value) < 2**63 and r == b"%d" % int(value))


def same_with_scores(g, r) -> bool:
    """Replies equal except that bulk strings and RESP3 doubles may be two texts of one double."""
    if g.raw == r.raw:
        return True
    if g.kind != r.kind:
        return False
    if g.kind in "*~>":
        return g.value is not None and r.value is not None and len(g.value) == len(r.value) and \
            all(same_with_scores(a, b) for a, b in zip(g.value, r.value))
    if g.kind == "%":
        return len(g.value) == len(r.value) and all(
            same_with_scores(ka, kb) and same_with_scores(va, vb) for (ka, va), (kb, vb) in zip(g.value, r.value))
    if g.kind in "$,":
        return g.value is not None and r.value is not None and score_texts_agree(g.value, r.value)
    return False


class Scores(Comparator):
    """Replies carrying scores (ZSCORE, ZRANGE ... WITHSCORES, ZPOPMIN, ...): exact, except that
    each score may be 7.2's text of the reference's 17-digit double (REDIS-7.0-VS-7.2.md)."""

    name = "scores"

    def differs(self, step, g, r, ctx):
        if same_with_scores(g, r):
            return None
        return "replies differ (scores compared as doubles)"


def zset_pairs(reply) -> list | None:
    """(member, score text) pairs of a WITHSCORES reply, flat (RESP2) or nested (RESP3)."""
    if reply.kind != "*" or reply.value is None:
        return None
    items = reply.value
    if all(e.kind == "*" and e.value is not None and len(e.value) == 2 for e in items) and items:
        return [(e.value[0].value, e.value[1].value) for e in items]
    if len(items) % 2:
        return None
    return [(items[i].value, items[i + 1].value) for i in range(0, len(items), 2)]


class ZRandMember(Comparator):
    """ZRANDMEMBER: random choices, so only their properties are compared: the same shape and
    length, members of the set with their scores, distinct when the count is positive, the whole
    set when the count covers it."""

    name = "zrandmember"
    pipelinable = False

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or g.kind != r.kind:
            return "replies differ"
        key = step.args[1]
        dg, dr = ctx.both((b"ZRANGE", key, b"0", b"-1", b"WITHSCORES"))
        if not same_with_scores(dg, dr):
            return "the sets differ"
        content = {m: s for m, s in zset_pairs(dr) or []}
        if len(step.args) == 2:
            if g.kind != "$" or g.value not in content:
                return f"{g.value!r} is not a member"
            return None
        count = int(step.args[2])
        with_scores = len(step.args) == 4
        if g.value is None or r.value is None or len(g.value) != len(r.value):
            return "different reply lengths"
        if with_scores:
            pairs = zset_pairs(g)
            if pairs is None or len(pairs) != len(zset_pairs(r) or []):
                return "malformed WITHSCORES reply"
        else:
            pairs = [(e.value, None) for e in g.value]
        for member, score in pairs:
            if member not in content:
                return f"{member!r} is not a member"
            if score is not None and _double_bits(score) != _double_bits(content[member]):
                return f"{member!r} comes with score {score!r}, not {content[member]!r}"
        members = [m for m, _ in pairs]
        if count > 0 and len(set(members)) != len(members):
            return "repeated members for a positive count"
        if count > 0 and count >= len(content) and set(members) != set(content):
            return "not the whole set"
        return None


class ZScanFull(Comparator):
    """ZSCAN key 0 [options] iterated to cursor 0 on each server: the same (member, score) set."""

    name = "zscan-full"
    pipelinable = False

    def execute(self, step, ctx):
        return ctx.each(lambda conn: self._scan(conn, step.args))

    @staticmethod
    def _scan(conn: RawConnection, args) -> Reply:
        cursor, seen, rounds = b"0", set(), 0
        while True:
            reply = conn.call(args[0], args[1], cursor, *args[3:])
            if reply.is_error:
                return reply
            if reply.kind != "*" or len(reply.value) != 2 or reply.value[0].kind != "$" or \
                    reply.value[1].value is None or len(reply.value[1].value) % 2:
                text = b"bad ZSCAN reply " + reply.raw[:200]
                return Reply("!", text, b"<" + text + b">")
            cursor = reply.value[0].value
            items = reply.value[1].value
            for i in range(0, len(items), 2):
                seen.add((items[i].value, _double_bits(items[i + 1].value)))
            rounds += 1
            if cursor == b"0":
                break
            if rounds > 100000:
                return Reply("!", b"ZSCAN never returned cursor 0", b"<ZSCAN never returned cursor 0>")
        summary = b"ZSCAN-SET " + b" ".join(repr(p).encode() for p in sorted(seen, key=repr))
        return Reply("+", summary, summary)


class RankWithScore(Comparator):
    """ZRANK/ZREVRANK ... WITHSCORE is new in 7.2: the reference answers the plain ZRANK and
    ZSCORE, and Goblin's reply must be their [rank, score] pair (a null array when missing)."""

    name = "rank-withscore"
    pipelinable = False

    def execute(self, step, ctx):
        g = ctx._read_call(ctx.goblin, "goblin", step.args)
        rank = ctx._read_call(ctx.reference, "reference", step.args[:3])
        if isinstance(g, Failure) or isinstance(rank, Failure):
            return g, rank
        if rank.is_error:
            return g, rank
        if rank.value is None:
            return g, (Reply("_", None, b"_\r\n") if rank.kind == "_" else Reply("*", None, b"*-1\r\n"))
        score = ctx._read_call(ctx.reference, "reference", (b"ZSCORE", step.args[1], step.args[2]))
        if isinstance(score, Failure):
            return g, score
        return g, Reply("*", [rank, score], b"*2\r\n" + rank.raw + score.raw)

    def differs(self, step, g, r, ctx):
        return None if same_with_scores(g, r) else "not the 7.2 [rank, score] reply"


class Rank(Comparator):
    """ZRANK/ZREVRANK: exact, except that 7.2 takes a fourth argument (WITHSCORE; anything else
    is a syntax error) where 7.0's arity is 3."""

    name = "rank"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if len(step.args) == 4 and r.is_error and r.value.startswith(b"ERR wrong number of arguments"):
            if step.args[3].lower() == b"withscore":
                return None if g.kind in "*_" else "not a [rank, score] reply"
            return None if g.raw == b"-ERR syntax error\r\n" else "not 7.2's syntax error"
        return "replies differ"


# ---- lists: argument checks that Redis 7.2 added -----------------------------------------------------

LLONG_MIN_TEXT = b"-9223372036854775808"
LPOS_RANK_RANGE_ERROR = (b"-ERR value is out of range, value must between -9223372036854775807 and "
                         b"9223372036854775807\r\n")
_REDIS_LONG = re.compile(rb"0|-?[1-9][0-9]*")  # what Redis's string2ll accepts


def lpos_stops_at_llong_min_rank(args) -> bool:
    """True if Redis 7.2's LPOS option parser, reading left to right, reaches RANK
    -9223372036854775808 before any other error (7.2 limits RANK to +-LONG_MAX, #12167)."""
    j = 3
    while j < len(args):
        option = args[j].lower()
        if option not in (b"rank", b"count", b"maxlen") or j + 1 >= len(args):
            return False  # a syntax error first
        value = args[j + 1]
        if option == b"rank" and value == LLONG_MIN_TEXT:
            return True
        if not _REDIS_LONG.fullmatch(value) or not -2**63 <= int(value) < 2**63:
            return False
        if (option == b"rank" and int(value) == 0) or (option != b"rank" and int(value) < 0):
            return False
        j += 2
    return False


class LposRank(Comparator):
    """LPOS: exact, except that Redis 7.2 rejects RANK -9223372036854775808 with a range error
    where 7.0 (the reference) negates it to itself and searches as if for RANK -1 (#12167). The
    reference's own answer is accepted too (so the suite passes against 7.0); the redis72 tests of
    test_list_streams.py hold Goblin to 7.2's."""

    name = "lpos-rank"

    def differs(self, step, g, r, ctx):
        if g.raw != r.raw and lpos_stops_at_llong_min_rank(step.args):
            return None if g.raw == LPOS_RANK_RANGE_ERROR else "not 7.2's RANK range error"
        return super().differs(step, g, r, ctx)


# Where each blocking list command takes its timeout (seconds).
BLOCKING_TIMEOUT_POSITION = {b"BLPOP": -1, b"BRPOP": -1, b"BLMOVE": 5, b"BRPOPLPUSH": 3, b"BLMPOP": 1}
_POSITIVE_FLOAT = re.compile(rb"\+?(inf|infinity|([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?)", re.I)


def timeout_beyond_llong_max(args) -> bool:
    """True if the command's timeout is a positive number of seconds whose milliseconds do not
    fit a long long (1e30, inf, 9223372036854775807)."""
    position = BLOCKING_TIMEOUT_POSITION.get(bytes(args[0]).upper()) if args else None
    if position is None or len(args) < 3:
        return False
    text = args[position]
    return bool(_POSITIVE_FLOAT.fullmatch(text)) and float(text) * 1000 >= 2.0**63


class BlockingTimeout(Comparator):
    """Blocking list commands: exact, except the timeouts whose milliseconds overflow a long long:
    Redis 7.2 answers "timeout is out of range" (#11338), 7.0 (the reference) lets the product
    wrap and answers "timeout is negative" (accepted too, as for LposRank)."""

    name = "blocking-timeout"

    def differs(self, step, g, r, ctx):
        if g.raw != r.raw and r.raw == b"-ERR timeout is negative\r\n" and timeout_beyond_llong_max(step.args):
            return None if g.raw == b"-ERR timeout is out of range\r\n" else "not 7.2's timeout range error"
        return super().differs(step, g, r, ctx)


# ---- stream consumer groups: clocks, Redis 7.2's activity fields, radix-tree figures ------------------
#
# Replies described by a schema: every part is compared byte for byte except the parts the schema
# names. Clocks (idle times, delivery and seen times) are read on two servers a few milliseconds
# apart; radix-tree-keys/-nodes count Redis's listpack tree, which Goblin does not have (it reports
# its own packed nodes there, stream_info.cc); `inactive` (XINFO CONSUMERS) and `active-time`
# (XINFO STREAM FULL) are new in Redis 7.2 and missing from the 7.0 reference.

GROUP_CLOCK_TOLERANCE_MS = 2000


class _NotThisShape(Exception):
    """The reference's reply is not the shape the schema describes (an error, XPENDING's summary form)."""


class _Differs(Exception):
    pass


class Clock:
    """A millisecond integer read off the clock: -1 (never) exact, otherwise both >= 0 and within
    GROUP_CLOCK_TOLERANCE_MS."""

    def match(self, g, r, path):
        if r.kind != ":":
            raise _NotThisShape(path)
        if g.kind != ":":
            raise _Differs(f"{path}: not an integer")
        if g.value != r.value and (g.value < 0 or r.value < 0):
            raise _Differs(f"{path}: {g.value} vs {r.value}")
        if abs(g.value - r.value) > GROUP_CLOCK_TOLERANCE_MS:
            raise _Differs(f"{path}: {g.value} vs {r.value} (more than {GROUP_CLOCK_TOLERANCE_MS} ms apart)")


class Internal:
    """A figure of the other server's internals (radix-tree-keys/-nodes): a non-negative integer."""

    def match(self, g, r, path):
        if r.kind != ":":
            raise _NotThisShape(path)
        if g.kind != ":" or g.value < 0:
            raise _Differs(f"{path}: not a non-negative integer")


class Same:
    def match(self, g, r, path):
        if g.raw != r.raw:
            raise _Differs(f"{path}: {format_reply(g, 120)} vs {format_reply(r, 120)}")


SAME = Same()


class ListOf:
    """An array (or a null array, compared exactly) whose every element has the same schema."""

    def __init__(self, item):
        self.item = item

    def match(self, g, r, path):
        if r.kind != "*":
            raise _NotThisShape(path)
        if g.kind != "*" or (g.value is None) != (r.value is None) or len(g.value or []) != len(r.value or []):
            raise _Differs(f"{path}: {format_reply(g, 120)} vs {format_reply(r, 120)}")
        for i, (a, b) in enumerate(zip(g.value or [], r.value or [])):
            self.item.match(a, b, f"{path}[{i}]")


class Tuple:
    """An array of a fixed length with a schema per position."""

    def __init__(self, *items):
        self.items = items

    def match(self, g, r, path):
        if r.kind != "*" or r.value is None or len(r.value) != len(self.items):
            raise _NotThisShape(path)
        if g.kind != "*" or g.value is None or len(g.value) != len(self.items):
            raise _Differs(f"{path}: {format_reply(g, 120)} vs {format_reply(r, 120)}")
        for i, (schema, a, b) in enumerate(zip(self.items, g.value, r.value)):
            schema.match(a, b, f"{path}[{i}]")


def record_pairs(reply) -> list | None:
    """(name, value) pairs of a record: a RESP3 map, or RESP2's flat array of bulk names and values."""
    if reply.kind == "%":
        return list(reply.value)
    if reply.kind == "*" and reply.value is not None and len(reply.value) % 2 == 0 and \
            all(k.kind == "$" and k.value is not None for k in reply.value[::2]):
        return list(zip(reply.value[::2], reply.value[1::2]))
    return None


class Record:
    """A map with named fields, some with their own schema (the rest compared exactly).

    `added_in_72` maps a field Redis 7.2 added to the field it follows. The 7.0 reference does
    not send it; if the server under test does, it must be an integer right after that field,
    and it is removed before the rest is compared. Its 7.2 value is checked by the redis72
    tests, which run on the server under test alone."""

    def __init__(self, fields: dict, added_in_72: dict | None = None):
        self.fields = fields
        self.added_in_72 = added_in_72 or {}

    def match(self, g, r, path):
        pr = record_pairs(r)
        if pr is None:
            raise _NotThisShape(path)
        pg = record_pairs(g)
        if pg is None or g.kind != r.kind:
            raise _Differs(f"{path}: not a record of the same kind: {format_reply(g, 120)}")
        names = [k.value for k, _ in pg]
        for added, after in self.added_in_72.items():
            if added not in names:
                continue
            i = names.index(added)
            if i == 0 or names[i - 1] != after or pg[i][1].kind != ":":
                raise _Differs(f"{path}: Redis 7.2's field {added!r} must be an integer right after {after!r}")
            del names[i], pg[i]
        if names != [k.value for k, _ in pr]:
            raise _Differs(f"{path}: fields {names} vs {[k.value for k, _ in pr]}")
        for name, (_, a), (_, b) in zip(names, pg, pr):
            self.fields.get(name, SAME).match(a, b, f"{path}.{name.decode('latin-1')}")


class GroupReply(Comparator):
    """A consumer-group reply compared by its schema (above): clocks within a tolerance, because the
    two servers read their clocks milliseconds apart; Redis 7.2's `inactive` / `active-time` taken
    out of Goblin's reply once checked to be integers in their place, because the 7.0 reference
    does not have them (their values are checked by the redis72 tests); radix-tree figures by shape,
    because they count Redis's listpack tree, which Goblin does not have. A reference reply of
    another shape (an error, XPENDING's summary) compares exactly."""

    def __init__(self, name: str, schema):
        self.name = name
        self.schema = schema

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        try:
            self.schema.match(g, r, "reply")
        except _NotThisShape:
            return "replies differ"
        except _Differs as exc:
            return str(exc)
        return None


_STREAM_HEADER = {b"radix-tree-keys": Internal(), b"radix-tree-nodes": Internal()}
# XPENDING key group [IDLE ms] start end count [consumer]: [id, consumer, idle ms, deliveries] each.
XPENDING_IDLE = GroupReply("xpending-idle", ListOf(Tuple(SAME, SAME, Clock(), SAME)))
# XINFO CONSUMERS: name, pending, idle (a clock), and 7.2's inactive.
XINFO_CONSUMERS = GroupReply("xinfo-consumers", ListOf(Record({b"idle": Clock()}, {b"inactive": b"idle"})))
# XINFO STREAM key: the radix-tree figures are Goblin's own.
XINFO_STREAM = GroupReply("xinfo-stream", Record(_STREAM_HEADER))
# XINFO STREAM key FULL: delivery and seen times are clocks; 7.2 adds each consumer's active-time.
XINFO_STREAM_FULL = GroupReply("xinfo-stream-full", Record({
    **_STREAM_HEADER,
    b"groups": ListOf(Record({
        b"pending": ListOf(Tuple(SAME, SAME, Clock(), SAME)),
        b"consumers": ListOf(Record({b"seen-time": Clock(), b"pending": ListOf(Tuple(SAME, Clock(), SAME))},
                                    {b"active-time": b"seen-time"})),
    })),
}))


LPOS_RANK = LposRank()
BLOCKING_TIMEOUT = BlockingTimeout()


class StreamBlockTimeout(Comparator):
    """XREAD / XREADGROUP BLOCK <ms>: exact, except a timeout that overflows once the clock is
    added: Redis 7.2 answers "timeout is out of range" (#11338 checks the milliseconds branch
    too), 7.0 (the reference) overflows silently and answers as if the timeout were fine."""

    name = "stream-block-timeout"
    # Any timeout this close to LLONG_MAX passes it with today's clock added (2^63 - 2^50 ms).
    OVERFLOWS_AT = 2**63 - 2**50

    def differs(self, step, g, r, ctx):
        if g.raw != r.raw and g.raw == b"-ERR timeout is out of range\r\n":
            words = [bytes(a).upper() for a in step.args]
            at = words.index(b"BLOCK") + 1 if b"BLOCK" in words else None
            if at is not None and at < len(words) and words[at].isdigit() and int(words[at]) >= self.OVERFLOWS_AT:
                return None
            return "not 7.2's timeout range error"
        return super().differs(step, g, r, ctx)


STREAM_BLOCK_TIMEOUT = StreamBlockTimeout()


# ---- geo: Redis 7.2's distances ---------------------------------------------------------------------
#
# Redis 7.2 measures two positions on one meridian as R * |dlat| (#11579, "GEOSEARCH BYBOX:
# simplified haversine"), where 7.0 runs the full haversine, whose asin(sin x) rounds differently
# over long distances; and it rounds the scaled distance half to even (#11552, fixedpoint_d2string)
# where 7.0's "%.4f" rounds the exact decimal. Both move a distance by at most one unit of its
# fourth decimal (and a stored STOREDIST score by a few ulps). test_geo.py asserts 7.2's texts.

_GEO_DISTANCE = re.compile(rb"-?[0-9]+\.[0-9]{4}")


def _distance_units(text: bytes) -> int:
    return int(text.replace(b".", b""))


def same_geo_reply(g, r) -> bool:
    """Replies equal except that distance texts may differ by one in their last digit."""
    if g.raw == r.raw:
        return True
    if g.kind != r.kind:
        return False
    if g.kind == "*":
        return g.value is not None and r.value is not None and len(g.value) == len(r.value) and \
            all(same_geo_reply(a, b) for a, b in zip(g.value, r.value))
    if g.kind == "$" and g.value is not None and r.value is not None:
        return bool(_GEO_DISTANCE.fullmatch(g.value) and _GEO_DISTANCE.fullmatch(r.value)) and \
            abs(_distance_units(g.value) - _distance_units(r.value)) <= 1
    return False


class GeoDistances(Comparator):
    """GEODIST and searches WITHDIST: exact, but for 7.2's distances (above)."""

    name = "geo-distances"

    def differs(self, step, g, r, ctx):
        if same_geo_reply(g, r) or same_as_72(g, r, step.args):
            return None
        return "replies differ (distances within one unit of the last digit)"


def _geo_score_texts_agree(g: bytes, r: bytes) -> bool:
    if score_texts_agree(g, r):
        return True
    try:
        a, b = float(g), float(r)
    except ValueError:
        return False
    # Geohash scores are integers and must be exact; a distance may be a few ulps off.
    if a.is_integer() or b.is_integer() or math.isnan(a) or math.isnan(b):
        return False
    return abs(a - b) <= 1e-12 * max(abs(a), abs(b))


class GeoStoredScores(Comparator):
    """ZRANGE ... WITHSCORES of a key GEOSEARCHSTORE or GEORADIUS ... STOREDIST may have written:
    SCORES, and a fractional score (a stored distance) may be 7.2's distance of the reference's,
    a few ulps away (above)."""

    name = "geo-stored-scores"

    def differs(self, step, g, r, ctx):
        if same_with_scores(g, r):
            return None
        gp, rp = zset_pairs(g), zset_pairs(r)
        if gp is not None and rp is not None and len(gp) == len(rp) and all(
                gm == rm and _geo_score_texts_agree(gs, rs) for (gm, gs), (rm, rs) in zip(gp, rp)):
            return None
        return "replies differ (stored distances compared within 1e-12)"


GEO_DISTANCES = GeoDistances()
GEO_STORED_SCORES = GeoStoredScores()

SCORES = Scores()
RANK = Rank()
ZRANDMEMBER = ZRandMember()
ZSCAN_FULL = ZScanFull()
RANK_WITHSCORE = RankWithScore()

MULTISET = Multiset()
TTL = IntTolerance(1, "ttl")
PTTL = IntTolerance(2000, "pttl")
ANY_INTEGER = AnyInteger()
# OBJECT IDLETIME: only the shape is compared. Redis keeps one LRU clock per *object*, and small
# integers are shared objects, so a key holding 6 reports the idle time of whichever key touched
# the shared "6" last; exact idle times are checked in the integration tests instead.
IDLETIME = AnyInteger()
IDLETIME.name = "idletime-shape"
TIME = ServerTime()
RANDOMKEY = RandomKey()
CONFIG_PAIRS = ConfigPairs()
HELLO = Hello()
CLIENT_INFO = ClientInfo()
OBJECT_ENCODING = ObjectEncoding()
FULL_SCAN = FullScan()


# ---- steps, ops, mismatches ---------------------------------------------------------------------

CONTAINER_COMMANDS = {"CLIENT", "CONFIG", "OBJECT", "MEMORY", "MODULE", "COMMAND", "SLOWLOG", "LATENCY", "DEBUG",
                      "ACL", "SCRIPT", "FUNCTION", "CLUSTER", "XINFO", "PUBSUB"}

@dataclass
class Step:
    args: tuple
    compare: Comparator = EXACT
    readonly: bool = False   # a mismatch here cannot make the servers' data diverge

    def command_name(self) -> str:
        """The command's name in upper case, with the subcommand for container commands."""
        def text(x):
            return (x.decode("latin-1") if isinstance(x, bytes) else str(x)).upper()
        name = text(self.args[0]) if self.args else ""
        if name in CONTAINER_COMMANDS and len(self.args) > 1:
            name += " " + text(self.args[1])
        return name


@dataclass
class Op:
    steps: list
    source: str = ""


@dataclass
class Mismatch:
    op_index: int
    step: Step
    goblin: object
    reference: object
    why: str
    history: list = field(default_factory=list)
    source: str = ""

    def signature(self) -> tuple:
        """What kind of mismatch this is: shrinking keeps only candidates that fail the same way."""
        crashed = isinstance(self.goblin, Failure) or isinstance(self.reference, Failure)
        # Unknown-command mismatches are one kind whatever the (random) name was.
        name = "" if self.source.startswith("unknown") else self.step.command_name()
        return (self.source, name, self.step.compare.name, crashed)

    def errors_only(self) -> bool:
        """Neither server can have changed its data (both replied with errors, or the command only
        reads), so the stream can go on after this mismatch."""
        if isinstance(self.goblin, Failure) or isinstance(self.reference, Failure):
            return False
        return self.step.readonly or (self.goblin.kind in "-!" and self.reference.kind in "-!")


def format_arg(arg) -> str:
    """An argument as redis-cli accepts it: bare if plain, else double-quoted with \\xNN escapes."""
    data = arg if isinstance(arg, bytes) else str(arg).encode()
    if data and re.fullmatch(rb"[A-Za-z0-9_.:+\-*?\[\]^{}|/=!@#%&,<>~]+", data):
        return data.decode()
    out = []
    for b in data:
        c = chr(b)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\x{b:02x}")
    return '"' + "".join(out) + '"'


def format_step(step: Step, limit: int = 300) -> str:
    text = " ".join(format_arg(a) for a in step.args)
    if len(text) > limit:
        text = text[:limit] + f"...({len(text)} chars)"
    if step.compare is not EXACT:
        text += f"    [compared: {step.compare.name}]"
    return text


def format_reply(reply, limit: int = 300) -> str:
    raw = reply.raw if not isinstance(reply, Failure) else reply.raw
    text = repr(raw)
    return text if len(text) <= limit else text[:limit] + f"...({len(raw)} bytes)"


def format_ops(ops) -> str:
    lines = []
    n = 0
    for op in ops:
        for step in op.steps:
            n += 1
            lines.append(f"  {n:4d}. {format_step(step)}")
    return "\n".join(lines)


# ---- running ----------------------------------------------------------------------------------------

class Context:
    """Fresh connections to both servers for one run."""

    def __init__(self, goblin: RawConnection, reference: RawConnection):
        self.goblin = goblin
        self.reference = reference

    def both(self, args):
        """Sends one command to both servers, then reads both replies (Failure on error)."""
        g_err = r_err = None
        data = encode_command(*args)
        try:
            self.goblin.send(data)
        except OSError as exc:
            g_err = Failure(f"goblin: send failed: {exc}")
        try:
            self.reference.send(data)
        except OSError as exc:
            r_err = Failure(f"reference: send failed: {exc}")
        g = g_err or self._read(self.goblin, "goblin")
        r = r_err or self._read(self.reference, "reference")
        return g, r

    def window(self, steps) -> list:
        """Sends several steps to both servers in one write each, then reads all replies."""
        data = b"".join(encode_command(*step.args) for step in steps)
        out = []
        for conn, label in ((self.goblin, "goblin"), (self.reference, "reference")):
            replies = []
            try:
                conn.send(data)
                for _ in steps:
                    replies.append(conn.read_reply())
            except (ReplyTimeout, ConnectionClosed, ProtocolViolation, OSError) as exc:
                failure = Failure(f"{label}: {type(exc).__name__}: {exc}")
                replies += [failure] * (len(steps) - len(replies))
            out.append(replies)
        return list(zip(out[0], out[1]))

    def _read_call(self, conn, label, args):
        """One command on one server (a Failure if it does not answer)."""
        try:
            conn.send(encode_command(*args))
        except OSError as exc:
            return Failure(f"{label}: send failed: {exc}")
        return self._read(conn, label)

    def each(self, fn):
        out = []
        for conn, label in ((self.goblin, "goblin"), (self.reference, "reference")):
            try:
                out.append(fn(conn))
            except (ReplyTimeout, ConnectionClosed, ProtocolViolation, OSError) as exc:
                out.append(Failure(f"{label}: {type(exc).__name__}: {exc}"))
        return tuple(out)

    @staticmethod
    def _read(conn, label):
        try:
            return conn.read_reply()
        except (ReplyTimeout, ConnectionClosed, ProtocolViolation, OSError) as exc:
            return Failure(f"{label}: {type(exc).__name__}: {exc}")

    def close(self):
        self.goblin.close()
        self.reference.close()


class ServerPair:
    """The server under test and the reference, with fresh-state replays."""

    def __init__(self, goblin_server, reference_server, timeout: float = 10.0):
        self.goblin_server = goblin_server
        self.reference_server = reference_server
        self.timeout = timeout
        self._optional_defaults = {}  # id(server) -> the OPTIONAL_CONFIG_DEFAULTS it has

    def _prepare(self, server, conn: RawConnection):
        defaults = dict(CONFIG_DEFAULTS)
        if id(server) not in self._optional_defaults:
            self._optional_defaults[id(server)] = {
                name: value for name, value in OPTIONAL_CONFIG_DEFAULTS.items()
                if (reply := conn.call("CONFIG", "GET", name)).kind in "*%" and reply.value}
        defaults.update(self._optional_defaults[id(server)])
        for command in (("FLUSHALL",), ("CONFIG", "SET", *[x for kv in defaults.items() for x in kv])):
            reply = conn.call(*command)
            assert reply.raw == b"+OK\r\n", f"{server.name}: {command} replied {reply!r}"

    def open(self, timeout: float | None = None) -> Context:
        timeout = timeout or self.timeout
        self.ensure_healthy()
        g = self.goblin_server.raw(timeout=timeout)
        r = self.reference_server.raw(timeout=timeout)
        self._prepare(self.goblin_server, g)
        self._prepare(self.reference_server, r)
        return Context(g, r)

    def ensure_healthy(self):
        """Restarts a server that died or stopped answering (so shrinking can go on after a crash)."""
        for server in (self.goblin_server, self.reference_server):
            healthy = server.alive()
            if healthy:
                try:
                    with server.raw(timeout=5) as c:
                        healthy = c.call("PING").raw == b"+PONG\r\n"
                except (OSError, ReplyTimeout, ConnectionClosed):
                    healthy = False
            if not healthy:
                server.crash_logs = getattr(server, "crash_logs", []) + [server.logs()]
                server.restart()


class MismatchList(list):
    """Mismatches of one run; `stopped_at` is the op index where the run gave up early, if it did."""

    stopped_at = None


PIPELINE_DEPTH = 64


def run_ops(pair: ServerPair, ops, timeout: float | None = None, history_len: int = 8, target=None,
            limit: int = 25, independent: bool = False) -> list:
    """Replays `ops` from a clean state and returns the mismatches found.

    A mismatch where both servers answered with an error changed no data, so the run goes on and
    collects further ones (up to `limit`); any other mismatch ends the run, since the two states
    may have diverged, unless the ops are `independent` (each resets what it uses). A server that
    fails to reply always ends the run. With `target` (a signature) the run ends at the first
    mismatch of that kind.

    Consecutive steps whose comparators allow it are pipelined (PIPELINE_DEPTH per write); both
    servers still see exactly the same command sequence on one connection each.
    """
    ctx = pair.open(timeout)
    history = []
    found = MismatchList()
    flat = [(i, op, step) for i, op in enumerate(ops) for step in op.steps]
    try:
        pos = 0
        while pos < len(flat):
            end = pos
            while end < len(flat) and end - pos < PIPELINE_DEPTH and flat[end][2].compare.pipelinable:
                end += 1
            if end == pos:
                step = flat[pos][2]
                results = [step.compare.execute(step, ctx)]
                end = pos + 1
            else:
                results = ctx.window([step for _, _, step in flat[pos:end]])
            for (i, op, step), (g, r) in zip(flat[pos:end], results):
                why = _failed(g, r) or (None if same_as_72(g, r, step.args) else step.compare.differs(step, g, r, ctx))
                if why:
                    m = Mismatch(i, step, g, r, why, history[-history_len:], op.source)
                    found.append(m)
                    crashed = isinstance(g, Failure) or isinstance(r, Failure)
                    if crashed or len(found) >= limit or (target and m.signature() == target) or \
                            not (m.errors_only() or independent):
                        found.stopped_at = i if i + 1 < len(ops) else None
                        return found
                history.append((step, g, r))
            pos = end
        return found
    finally:
        ctx.close()


def inert_ops(pair: ServerPair, ops) -> set:
    """Indexes of ops that cannot change data: every step read-only or answered with an error by
    the reference. Shrinking tries dropping them all at once."""
    inert = set()
    ctx = pair.open()
    try:
        for i, op in enumerate(ops):
            quiet = True
            for step in op.steps:
                _, r = step.compare.execute(step, ctx)
                if isinstance(r, Failure):
                    return inert
                if not (step.readonly or r.kind in "-!"):
                    quiet = False
            if quiet:
                inert.add(i)
        return inert
    finally:
        ctx.close()


def shrink(pair: ServerPair, ops, mismatch: Mismatch, deadline: float, replay_timeout: float = 5.0):
    """Delta debugging: the shortest prefix-closed subsequence of `ops` that still fails the same way.

    Returns (ops, mismatch, replays). Stops at `deadline` (time.monotonic()) with the best so far.
    """
    signature = mismatch.signature()
    best_ops = list(ops[:mismatch.op_index + 1])
    best = mismatch
    replays = 0

    def still_fails(candidate):
        nonlocal replays
        replays += 1
        for m in run_ops(pair, candidate, timeout=replay_timeout, target=signature):
            if m.signature() == signature:
                return m
        return None

    # The failing op alone, with nothing before it, is the best possible outcome: try it first.
    m = still_fails(best_ops[-1:])
    if m is not None:
        return best_ops[-1:], m, replays
    # Then short suffixes (most failures depend on the last few commands), then without the ops
    # that cannot have changed any data.
    for keep in (4, 16, 64, 256):
        if keep < len(best_ops) and time.monotonic() < deadline:
            m = still_fails(best_ops[-keep:])
            if m is not None:
                best_ops, best = best_ops[-keep:][:m.op_index + 1], m
                break
    if len(best_ops) > 8 and time.monotonic() < deadline:
        inert = inert_ops(pair, best_ops[:-1])
        candidate = [op for i, op in enumerate(best_ops[:-1]) if i not in inert] + best_ops[-1:]
        if len(candidate) < len(best_ops):
            m = still_fails(candidate)
            if m is not None:
                best_ops, best = candidate[:m.op_index + 1], m

    granularity = 2
    while len(best_ops) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(best_ops) // granularity)
        reduced = False
        start = 0
        while start < len(best_ops) and time.monotonic() < deadline:
            candidate = best_ops[:start] + best_ops[start + chunk:]
            m = still_fails(candidate) if candidate else None
            if m is not None:
                best_ops, best = candidate[:m.op_index + 1], m
                granularity = max(granularity - 1, 2)
                reduced = True
                break
            start += chunk
        if not reduced:
            if chunk == 1:
                break
            granularity = min(len(best_ops), granularity * 2)
    return best_ops, best, replays


def describe_mismatch(m: Mismatch, ops_total: int | None = None) -> str:
    lines = [f"at op #{m.op_index + 1}" + (f" of {ops_total}" if ops_total else "") + f": {format_step(m.step)}",
             f"  goblin:    {format_reply(m.goblin)}",
             f"  reference: {format_reply(m.reference)}",
             f"  why: {m.why}"]
    if m.history:
        lines.append("  preceding commands (goblin reply | reference reply):")
        for step, g, r in m.history:
            same = "same" if g.raw == r.raw else f"{format_reply(r, 80)}"
            lines.append(f"    {format_step(step, 120)}  ->  {format_reply(g, 80)} | {same}")
    return "\n".join(lines)


class ShrinkBudget:
    """Seconds a session may spend shrinking, handed out per mismatch."""

    def __init__(self, total: float, per_mismatch: float = 30.0):
        self.remaining = total
        self.per_mismatch = per_mismatch

    def deadline(self) -> float:
        return time.monotonic() + max(0.0, min(self.per_mismatch, self.remaining))

    def spend(self, seconds: float):
        self.remaining -= seconds


def investigate(pair: ServerPair, ops, mismatches: list, title: str, reproduce: str, budget,
                reported: dict | None = None, label: str = "") -> str:
    """The failure report: each distinct kind of mismatch, with the shortest failing sequence found.

    `budget` hands out shrinking deadlines (see ShrinkBudget); `reported` maps mismatch signatures
    already shrunk earlier in the session to where, so repeats are only listed.
    """
    reported = {} if reported is None else reported
    distinct = {}
    for m in mismatches:
        distinct.setdefault(m.signature(), m)
    stopped_at = getattr(mismatches, "stopped_at", None)
    lines = [title, f"reproduce: {reproduce}",
             f"{len(mismatches)} mismatch(es) of {len(distinct)} kind(s)"
             + (f"; the run stopped at op #{stopped_at + 1} of {len(ops)} (after that mismatch the servers' "
                f"data may differ, or a server failed)" if stopped_at is not None else "")]
    if len(mismatches) > len(distinct):
        lines.append("mismatching commands (goblin reply | reference reply):")
        for m in mismatches[:40]:
            lines.append(f"  #{m.op_index + 1}: {format_step(m.step, 100)}  ->  {format_reply(m.goblin, 90)} | "
                         f"{format_reply(m.reference, 90)}")
    for n, (signature, m) in enumerate(distinct.items(), 1):
        lines += ["", f"[{n}] mismatch " + describe_mismatch(m, len(ops))]
        if isinstance(m.goblin, Failure):
            pair.ensure_healthy()
            crash_logs = getattr(pair.goblin_server, "crash_logs", [])
            if crash_logs:
                lines += ["server log of the goblin process that failed:", crash_logs[-1]]
        if signature in reported:
            lines.append(f"  (same kind as the mismatch reported in {reported[signature]}; not shrunk again)")
            continue
        started = time.monotonic()
        deadline = budget.deadline()
        if time.monotonic() < deadline:
            small, sm, replays = shrink(pair, ops, m, deadline)
            count = sum(len(op.steps) for op in small)
            lines += [f"  shortest failing sequence found ({count} commands, {replays} replays, "
                      f"{time.monotonic() - started:.1f}s; each replay starts after FLUSHALL on fresh "
                      f"connections):", format_ops(small),
                      f"    -> goblin:    {format_reply(sm.goblin)}",
                      f"    -> reference: {format_reply(sm.reference)}",
                      f"    ({sm.why})"]
            reported[signature] = label or title
        else:
            lines += ["  (shrinking budget used up; the commands before the mismatch:)",
                      format_ops(ops[max(0, m.op_index - 15):m.op_index + 1])]
        budget.spend(time.monotonic() - started)
    return "\n".join(lines)
