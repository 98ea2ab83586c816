"""Checks of the harness itself (no servers): the RESP reader, the comparators, the shrinker."""

import time

import pytest

from support import differ
from support.differ import (ANY_INTEGER, CLIENT_INFO, CONFIG_PAIRS, EXACT, HELLO, MULTISET, PTTL, TTL, Mismatch,
                            Op, Step, format_arg, shrink)
from support.expect import bulk
from support.resp import Incomplete, ProtocolViolation, encode_command, parse_all, parse_reply


def reply(data: bytes):
    r, end = parse_reply(data)
    assert end == len(data)
    return r


def test_encode_command():
    assert encode_command("SET", b"k\r\n", 12) == b"*3\r\n$3\r\nSET\r\n$3\r\nk\r\n\r\n$2\r\n12\r\n"
    assert encode_command("") == b"*1\r\n$0\r\n\r\n"


@pytest.mark.parametrize("data,kind,value", [
    (b"+OK\r\n", "+", b"OK"), (b"-ERR x\r\n", "-", b"ERR x"), (b":-42\r\n", ":", -42),
    (b"$3\r\na\r\n\r\n", "$", b"a\r\n"), (b"$-1\r\n", "$", None), (b"*-1\r\n", "*", None),
    (b"_\r\n", "_", None), (b",3.14\r\n", ",", b"3.14"), (b"#t\r\n", "#", True), (b"#f\r\n", "#", False),
    (b"(123456789012345678901234567890\r\n", "(", b"123456789012345678901234567890"),
    (b"!5\r\nERR x\r\n", "!", b"ERR x"), (b"=8\r\ntxt:abcd\r\n", "=", b"txt:abcd"),
])
def test_parse_scalars(data, kind, value):
    r = reply(data)
    assert (r.kind, r.value, r.raw) == (kind, value, data)


def test_parse_aggregates_keep_exact_bytes():
    data = b"*3\r\n:1\r\n$1\r\na\r\n*1\r\n_\r\n"
    r = reply(data)
    assert r.py() == [1, b"a", [None]]
    assert [e.raw for e in r.value] == [b":1\r\n", b"$1\r\na\r\n", b"*1\r\n_\r\n"]
    m = reply(b"%2\r\n+a\r\n:1\r\n+b\r\n~1\r\n:2\r\n")
    assert m.py() == {b"a": 1, b"b": [2]}
    p = reply(b">2\r\n+message\r\n+x\r\n")
    assert p.kind == ">" and p.py() == [b"message", b"x"]
    a = reply(b"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n")
    assert a.kind == "$" and a.value == b"v" and a.attributes[0][0].value == b"ttl"


@pytest.mark.parametrize("data", [b"", b"+OK", b"+OK\r", b"$3\r\nab", b"$3\r\nabc\r", b"*2\r\n:1\r\n",
                                  b"%1\r\n+a\r\n"])
def test_parse_incomplete(data):
    with pytest.raises(Incomplete):
        parse_reply(data)


@pytest.mark.parametrize("data", [b"?x\r\n", b":abc\r\n", b"$-2\r\n", b"$1\r\nab\r\n", b"#x\r\n", b"_1\r\n"])
def test_parse_rejects_garbage(data):
    with pytest.raises(ProtocolViolation):
        parse_reply(data)


def test_parse_all_splits_a_stream():
    assert [r.raw for r in parse_all(b"+A\r\n:1\r\n$-1\r\n")] == [b"+A\r\n", b":1\r\n", b"$-1\r\n"]


def test_format_arg_is_redis_cli_syntax():
    assert format_arg(b"k1") == "k1"
    assert format_arg(b"") == '""'
    assert format_arg(b"a b") == '"a b"'
    assert format_arg(b'\x00"\r\n\\') == '"\\x00\\"\\r\\n\\\\"'


def _cmp(comparator, g, r, args=(b"X",)):
    return comparator.differs(Step(tuple(args), comparator), reply(g), reply(r), ctx=None)


def test_comparators():
    assert _cmp(EXACT, b"+OK\r\n", b"+OK\r\n") is None
    assert _cmp(EXACT, b"$1\r\n1\r\n", b":1\r\n") is not None
    assert _cmp(MULTISET, b"*2\r\n$1\r\na\r\n$1\r\nb\r\n", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n") is None
    assert _cmp(MULTISET, b"*2\r\n$1\r\na\r\n$1\r\na\r\n", b"*2\r\n$1\r\nb\r\n$1\r\na\r\n") is not None
    assert _cmp(MULTISET, b"*1\r\n$1\r\na\r\n", b"~1\r\n$1\r\na\r\n") is not None
    assert _cmp(TTL, b":100\r\n", b":99\r\n") is None
    assert _cmp(TTL, b":100\r\n", b":98\r\n") is not None
    assert _cmp(TTL, b":-1\r\n", b":0\r\n") is not None
    assert _cmp(PTTL, b":100000\r\n", b":99000\r\n") is None
    assert _cmp(PTTL, b":100000\r\n", b":100\r\n") is not None
    assert _cmp(ANY_INTEGER, b":5\r\n", b":7\r\n") is None
    assert _cmp(ANY_INTEGER, b"$-1\r\n", b":7\r\n") is not None
    assert _cmp(CONFIG_PAIRS, b"*4\r\n+a\r\n+1\r\n+b\r\n+2\r\n", b"*4\r\n+b\r\n+2\r\n+a\r\n+1\r\n") is None
    assert _cmp(CONFIG_PAIRS, b"*4\r\n+a\r\n+2\r\n+b\r\n+1\r\n", b"*4\r\n+b\r\n+2\r\n+a\r\n+1\r\n") is not None
    hello_g = b"*6\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.4.0\r\n$2\r\nid\r\n:9\r\n"
    hello_r = b"*6\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$2\r\nid\r\n:3\r\n"
    assert _cmp(HELLO, hello_g, hello_r) is None
    assert _cmp(HELLO, hello_g.replace(b"redis", b"gobln"), hello_r) is not None
    info_r = bulk(b"id=3 addr=1:2 name=x db=0 cmd=client|info\n")
    info_g = bulk(b"id=9 addr=1:3 name=x db=0 cmd=client|info lib-name=redis-py lib-ver=5.0\n")
    assert _cmp(CLIENT_INFO, info_g, info_r) is None
    assert _cmp(CLIENT_INFO, info_g.replace(b"db=0", b"db=1"), info_r) is not None
    assert _cmp(CLIENT_INFO, bulk(b"id=3 addr=1:2 db=0 cmd=client|info\n"), info_r) is not None


def test_consumer_group_comparators():
    def consumer(name, idle, inactive=None):
        fields = [b"name", name, b"pending", b":1", b"idle", b":%d" % idle]
        if inactive is not None:
            fields += [b"inactive", b":%d" % inactive]
        return b"*%d\r\n" % len(fields) + b"".join(
            f + b"\r\n" if f.startswith(b":") else b"$%d\r\n%s\r\n" % (len(f), f) for f in fields)
    consumers_r = b"*1\r\n" + consumer(b"alice", 3)
    assert _cmp(differ.XINFO_CONSUMERS, b"*1\r\n" + consumer(b"alice", 40, 7), consumers_r) is None
    assert _cmp(differ.XINFO_CONSUMERS, b"*1\r\n" + consumer(b"alice", 9), consumers_r) is None  # as 7.0 answers
    assert _cmp(differ.XINFO_CONSUMERS, b"*1\r\n" + consumer(b"alice", 9000, 7), consumers_r) is not None
    assert _cmp(differ.XINFO_CONSUMERS, b"*1\r\n" + consumer(b"bob", 3, 7), consumers_r) is not None
    assert _cmp(differ.XINFO_CONSUMERS, b"-ERR no such key\r\n", b"-ERR no such key\r\n") is None
    assert _cmp(differ.XINFO_CONSUMERS, b"*0\r\n", consumers_r) is not None

    def entry(idle, count=1):
        return b"*4\r\n$3\r\n1-0\r\n$1\r\na\r\n:%d\r\n:%d\r\n" % (idle, count)
    assert _cmp(differ.XPENDING_IDLE, b"*1\r\n" + entry(12), b"*1\r\n" + entry(0)) is None
    assert _cmp(differ.XPENDING_IDLE, b"*1\r\n" + entry(0, 2), b"*1\r\n" + entry(0)) is not None
    assert _cmp(differ.XPENDING_IDLE, b"*1\r\n" + entry(7200000), b"*1\r\n" + entry(0)) is not None
    summary = b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    assert _cmp(differ.XPENDING_IDLE, summary, summary) is None
    assert _cmp(differ.XPENDING_IDLE, summary.replace(b":0", b":1"), summary) is not None

    def stream(keys):
        return b"*4\r\n$15\r\nradix-tree-keys\r\n:%d\r\n$6\r\nlength\r\n:2\r\n" % keys
    assert _cmp(differ.XINFO_STREAM, stream(5), stream(1)) is None
    assert _cmp(differ.XINFO_STREAM, stream(5).replace(b":2", b":3"), stream(1)) is not None


def test_stream_block_timeout_comparator():
    out_of_range = b"-ERR timeout is out of range\r\n"
    served = b"*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"

    def block(ms):
        return [b"XREADGROUP", b"GROUP", b"g", b"a", b"BLOCK", ms, b"STREAMS", b"s", b"0"]
    assert _cmp(differ.STREAM_BLOCK_TIMEOUT, out_of_range, served, block(b"9223372036854775807")) is None
    assert _cmp(differ.STREAM_BLOCK_TIMEOUT, out_of_range, served, block(b"1000")) is not None
    assert _cmp(differ.STREAM_BLOCK_TIMEOUT, served, served, block(b"1000")) is None
    assert _cmp(differ.STREAM_BLOCK_TIMEOUT, b"*-1\r\n", served, block(b"9223372036854775807")) is not None


def test_72_rewrites_belong_to_their_command():
    r = reply(b"-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n")
    xread = reply(b"-ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.\r\n")
    group = reply(b"-ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
                  b"specified.\r\n")
    assert differ.same_as_72(xread, r, (b"XREAD",)) and differ.same_as_72(group, r, ("xreadgroup",))
    assert not differ.same_as_72(group, r, (b"XREAD",)) and not differ.same_as_72(xread, r, (b"XREADGROUP",))


class FakePair:
    """Stands in for ServerPair: a 'server bug' that shows only when ops 17 and 42 both ran, 17 first."""

    runs = 0


def fake_run_ops(pair, ops, timeout=None, history_len=8, target=None):
    pair.runs += 1
    seen17 = False
    for i, op in enumerate(ops):
        n = op.steps[0].args[1]
        if n == 17:
            seen17 = True
        if n == 42 and seen17:
            return [Mismatch(i, op.steps[0], differ.Failure("x"), differ.Failure("y"), "fake")]
    return []


def test_shrink_finds_the_two_interacting_ops(monkeypatch):
    monkeypatch.setattr(differ, "run_ops", fake_run_ops)
    monkeypatch.setattr(differ, "inert_ops", lambda pair, ops: {i for i, op in enumerate(ops)
                                                                if op.steps[0].args[1] % 3 == 0})
    ops = [Op([Step((b"CMD", n))]) for n in range(500)]
    pair = FakePair()
    first = fake_run_ops(pair, ops)[0]
    assert first.op_index == 42
    small, m, replays = shrink(pair, ops, first, deadline=time.monotonic() + 30)
    assert [op.steps[0].args[1] for op in small] == [17, 42]
    assert m.op_index == 1
    assert replays < 60


def test_shrink_respects_the_deadline(monkeypatch):
    monkeypatch.setattr(differ, "run_ops", fake_run_ops)
    ops = [Op([Step((b"CMD", n))]) for n in range(500)]
    pair = FakePair()
    first = fake_run_ops(pair, ops)[0]
    small, _, replays = shrink(pair, ops, first, deadline=time.monotonic() - 1)
    assert replays == 1 and len(small) == 43


class KillFirstServer(differ.Comparator):
    """A step that kills the first server of the pair, standing in for a server crash."""

    name = "kill"
    pipelinable = False

    def __init__(self, server):
        self.server = server

    def execute(self, step, ctx):
        self.server.proc.kill()
        self.server.proc.wait()
        return ctx.both(step.args)


def test_crash_is_reported_restarted_and_shrunk():
    """With two reference servers as the pair, a 'crash' of the first is found, logged and shrunk."""
    from support.server import REFERENCE_BINARY, ServerProcess

    victim = ServerProcess(REFERENCE_BINARY, name="crash-victim", unix=False).start()
    other = ServerProcess(REFERENCE_BINARY, name="crash-peer", unix=False).start()
    victim.show_log_on_failure = other.show_log_on_failure = False
    try:
        pair = differ.ServerPair(victim, other, timeout=5)
        ops = [Op([Step((b"SET", b"k%d" % i, b"v"))]) for i in range(30)]
        ops.insert(20, Op([Step((b"PING",), KillFirstServer(victim))], "kill"))
        mismatches = differ.run_ops(pair, ops)
        assert len(mismatches) == 1 and mismatches.stopped_at == 20
        assert isinstance(mismatches[0].goblin, differ.Failure)
        report = differ.investigate(pair, ops, mismatches, "title", "reproduce",
                                    budget=differ.ShrinkBudget(30), reported={})
        assert "server log of the goblin process that failed" in report
        assert "shortest failing sequence found (1 commands" in report
        # The pair restarted the killed server before each replay, so shrinking could go on.
        assert len(victim.crash_logs) >= 1
    finally:
        victim.stop_requested = True
        for srv in (victim, other):
            srv.stop()
            srv.cleanup()
