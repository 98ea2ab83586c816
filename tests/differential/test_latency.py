"""Latency introspection, side by side with redis-server: LATENCY HISTOGRAM, INFO latencystats,
LATENCY DOCTOR / GRAPH / HELP, and the latency-tracking options.

Durations differ between two servers, so what is compared exactly is what a known sequence of
commands determines: which commands have histograms and their call counts, the shape of the
replies (map nesting, field names, bucket bounds drawn from the power-of-two series, cumulative
counts ending at the calls), INFO field names, every error, CONFIG GET/SET, and the texts that
do not depend on timing (LATENCY HELP, LATENCY DOCTOR without spikes) byte for byte.

Histograms are per process state, so each test starts with CONFIG RESETSTAT and LATENCY RESET on
both servers and puts the options it changes back.
"""

import re

import pytest

from support.resp import Reply

# LATENCY HISTOGRAM's bucket bounds: the highest value (in us) of the counter starting at 2^k ns,
# k = 10 .. 29, which is 2^(k-7) ns wide, then the last counter's, ending at 2^30 - 1 ns.
BUCKET_BOUNDS = {((1 << k) + (1 << (k - 7)) - 1) // 1000 for k in range(10, 30)} | {((1 << 30) - 1) // 1000}

# A sequence with known calls: rejected commands (arity, unknown) are not calls, a failing call
# is, and so is each command EXEC runs.
SEQUENCE = [
    ("SET", "lat:a", "1"), ("SET", "lat:a", "2"), ("SET", "lat:b", "x"),
    ("GET", "lat:a"), ("GET", "lat:missing"), ("GET",), ("NOSUCHCOMMAND", "x"),
    ("INCR", "lat:b"), ("INCR", "lat:a"), ("MGET", "lat:a", "lat:b"),
    ("CONFIG", "GET", "maxmemory"), ("CONFIG", "GET", "maxmemory-policy"), ("CONFIG", "GET"),
    ("MULTI",), ("SET", "lat:c", "1"), ("INCR", "lat:c"), ("EXEC",),
    ("PING",), ("DEL", "lat:a", "lat:b", "lat:c"),
]
CALLED = {"set": 4, "get": 2, "incr": 3, "mget": 1, "config|get": 2, "multi": 1, "exec": 1, "ping": 1,
          "del": 1, "config|resetstat": 1, "latency|reset": 1}


@pytest.fixture
def conns(pair):
    """(goblin, reference) connections on freshly reset statistics; options restored after."""
    with pair.goblin_server.raw() as g, pair.reference_server.raw() as r:
        for conn in (g, r):
            assert conn.call("CONFIG", "SET", "latency-tracking", "yes", "latency-monitor-threshold", "0",
                             "latency-tracking-info-percentiles", "50 99 99.9").raw == b"+OK\r\n"
            assert conn.call("CONFIG", "RESETSTAT").raw == b"+OK\r\n"
            assert conn.call("LATENCY", "RESET").kind == ":"
        yield g, r
        for conn in (g, r):
            conn.call("CONFIG", "SET", "latency-tracking", "yes", "latency-monitor-threshold", "0",
                      "latency-tracking-info-percentiles", "50 99 99.9")
            conn.call("LATENCY", "RESET")


def same(g, r, *args) -> Reply:
    gr, rr = g.call(*args), r.call(*args)
    assert gr.raw == rr.raw, f"{args}: goblin {gr.raw!r} reference {rr.raw!r}"
    return gr


def both(g, r, *args) -> tuple:
    return g.call(*args), r.call(*args)


def hello3(g, r):
    """Both connections speak RESP3 (HELLO's reply carries each server's version and ids)."""
    for reply in both(g, r, "HELLO", "3"):
        assert reply.kind == "%", reply


def run_sequence(g, r):
    for args in SEQUENCE:
        same(g, r, *args)


def pairs(reply: Reply) -> list:
    """The (key, value) replies of a map: a RESP3 map, or a RESP2 flat array of even length."""
    if reply.kind == "%":
        return list(reply.value)
    assert reply.kind == "*" and len(reply.value) % 2 == 0, reply
    return list(zip(reply.value[::2], reply.value[1::2]))


def histograms(reply: Reply, protocol: int) -> list:
    """[(name, calls)] of a LATENCY HISTOGRAM reply, after checking every entry's shape."""
    assert reply.kind == ("%" if protocol == 3 else "*"), reply
    entries = []
    for name, body in pairs(reply):
        assert name.kind == "$", name
        assert body.kind == ("%" if protocol == 3 else "*"), body
        fields = pairs(body)
        assert [f[0].value for f in fields] == [b"calls", b"histogram_usec"], body
        calls = fields[0][1]
        assert calls.kind == ":" and calls.value > 0, calls
        buckets = pairs(fields[1][1])
        assert buckets, f"{name.value}: no bucket"
        bounds = [k.value for k, _ in buckets]
        counts = [v.value for _, v in buckets]
        assert all(k.kind == ":" and v.kind == ":" for k, v in buckets), buckets
        assert set(bounds) <= BUCKET_BOUNDS, f"{name.value}: bounds {bounds}"
        assert bounds == sorted(set(bounds)), f"{name.value}: bounds {bounds}"
        assert counts == sorted(set(counts)) and counts[0] > 0, f"{name.value}: counts {counts}"
        assert counts[-1] == calls.value, f"{name.value}: last count {counts[-1]}, calls {calls.value}"
        entries.append((name.value.decode(), calls.value))
    return entries


@pytest.mark.parametrize("protocol", [2, 3])
def test_histogram_calls_after_a_known_sequence(conns, protocol):
    g, r = conns
    if protocol == 3:
        hello3(g, r)
    run_sequence(g, r)
    expected = dict(CALLED, **({"hello": 1} if protocol == 3 else {}))
    gr, rr = both(g, r, "LATENCY", "HISTOGRAM")
    assert sorted(histograms(gr, protocol)) == sorted(histograms(rr, protocol)) == sorted(expected.items())
    # Named commands: a container brings its subcommands, "config|get" its own, any case; unknown
    # names are skipped and a name given twice answers twice (map keys repeat, as in Redis).
    args = ("LATENCY", "HISTOGRAM", "set", "NOSUCH", "config", "CONFIG|GET", "get|x", "config|", "Incr", "set")
    gr, rr = both(g, r, *args)
    want = [("set", 4), ("config|get", 2), ("config|resetstat", 1), ("config|get", 2), ("incr", 3), ("set", 4)]
    assert sorted(histograms(gr, protocol)) == sorted(histograms(rr, protocol)) == sorted(want)
    # The histogram commands just run are calls too: latency|histogram holds two.
    gr, rr = both(g, r, "LATENCY", "HISTOGRAM", "latency")
    assert sorted(histograms(gr, protocol)) == sorted(histograms(rr, protocol)) == [("latency|histogram", 2),
                                                                                   ("latency|reset", 1)]
    same(g, r, "LATENCY", "HISTOGRAM", "nosuch", "get|x")  # an empty map


def test_resetstat_drops_the_histograms(conns):
    g, r = conns
    run_sequence(g, r)
    same(g, r, "CONFIG", "RESETSTAT")
    same(g, r, "LATENCY", "HISTOGRAM", "set", "get", "config|get")  # empty: no call since
    gr, rr = both(g, r, "LATENCY", "HISTOGRAM")
    assert sorted(histograms(gr, 2)) == sorted(histograms(rr, 2)) == [("config|resetstat", 1),
                                                                     ("latency|histogram", 1)]


def test_tracking_off_keeps_the_histograms_but_adds_nothing(conns):
    g, r = conns
    run_sequence(g, r)
    same(g, r, "CONFIG", "SET", "latency-tracking", "no")
    for _ in range(3):
        same(g, r, "GET", "lat:a")
    same(g, r, "ECHO", "not tracked")
    gr, rr = both(g, r, "LATENCY", "HISTOGRAM", "get", "echo", "config")
    assert sorted(histograms(gr, 2)) == sorted(histograms(rr, 2)) == [("config|get", 2), ("config|resetstat", 1),
                                                                     ("get", 2)]
    # INFO prints the section header alone.
    assert same(g, r, "INFO", "latencystats").value == b"# Latencystats\r\n"


def info_fields(reply: Reply) -> dict:
    text = reply.value.decode()
    lines = text.split("\r\n")
    assert lines[0] == "# Latencystats" and lines[-1] == "", text
    return dict(line.split(":", 1) for line in lines[1:-1])


@pytest.mark.parametrize("percentiles, labels", [
    ("50 99 99.9", ["p50", "p99", "p99.9"]),
    ("0 12.5 100", ["p0", "p12.5", "p100"]),
    ("3.14159265 1e1 0x10", ["p3.141593", "p10", "p16"]),
    ("", []),
])
def test_info_latencystats_fields(conns, percentiles, labels):
    g, r = conns
    run_sequence(g, r)
    same(g, r, "CONFIG", "SET", "latency-tracking-info-percentiles", percentiles)
    gf, rf = (info_fields(x) for x in both(g, r, "INFO", "latencystats"))
    names = {"latency_percentiles_usec_" + name for name in CALLED} | {"latency_percentiles_usec_config|set"}
    assert set(gf) == set(rf) == names
    for fields in (gf, rf):
        for name, value in fields.items():
            if not labels:
                assert value == "", (name, value)
                continue
            parts = [part.split("=") for part in value.split(",")]
            assert [label for label, _ in parts] == labels, (name, value)
            assert all(re.fullmatch(r"\d+\.\d{3}", number) for _, number in parts), (name, value)
            numbers = [float(number) for _, number in parts]
            if labels == sorted(labels, key=lambda x: float(x[1:])):
                assert numbers == sorted(numbers), (name, value)


def test_info_sections_include_latencystats_only_when_asked(conns):
    g, r = conns
    run_sequence(g, r)
    for args in [("INFO",), ("INFO", "default"), ("INFO", "all"), ("INFO", "everything"),
                 ("INFO", "LatencyStats"), ("INFO", "commandstats", "latencystats"), ("INFO", "server")]:
        gr, rr = both(g, r, *args)
        gh = [line for line in gr.value.decode().split("\r\n") if line.startswith("# ")]
        rh = [line for line in rr.value.decode().split("\r\n") if line.startswith("# ")]
        assert ("# Latencystats" in gh) == ("# Latencystats" in rh), (args, gh, rh)
        assert ("# Latencystats" in gh) == (args[-1] not in ("INFO", "default", "server")), (args, gh)
        if "# Latencystats" in gh and "# Errorstats" in gh:
            for headers in (gh, rh):
                at = headers.index("# Latencystats")
                assert headers[at - 1] == "# Errorstats" and headers[at + 1] == "# Cluster", headers


@pytest.mark.parametrize("value", [
    "", "50", "0 100", "99.99999", "99.9999999", "0.0000001", "100.0", "-0", "1e1", "0x10", "3.14159265",
    "50 99.9 0.001", "50  99", "50 ", " 50", "abc", "50 abc", "101", "-1", "nan", "inf", "-inf", "1e400", "1e-400", "50,99",
])
def test_config_percentiles(conns, value):
    g, r = conns
    same(g, r, "CONFIG", "SET", "latency-tracking-info-percentiles", "25 75")
    same(g, r, "CONFIG", "SET", "latency-tracking-info-percentiles", value)
    # A refused value leaves the previous one.
    same(g, r, "CONFIG", "GET", "latency-tracking-info-percentiles")


@pytest.mark.parametrize("args", [
    ("CONFIG", "GET", "latency-tracking"), ("CONFIG", "GET", "LATENCY-TRACKING*"),
    ("CONFIG", "SET", "latency-tracking", "maybe"), ("CONFIG", "SET", "latency-tracking", "NO"),
    ("CONFIG", "GET", "latency-tracking"), ("CONFIG", "SET", "latency-tracking", "yes"),
    ("CONFIG", "SET", "latency-tracking", "yes", "latency-tracking", "no"),
    ("CONFIG", "SET", "latency-tracking-info-percentiles", "1 2", "latency-tracking", "bad"),
    ("CONFIG", "GET", "latency-tracking-info-percentiles"),
])
def test_config_tracking(conns, args):
    g, r = conns
    if "*" not in args[-1]:
        same(g, r, *args)
        return
    # Options matching a pattern come in each server's own table order.
    gr, rr = both(g, r, *args)
    gp, rp = ({(k.value, v.value) for k, v in pairs(x)} for x in (gr, rr))
    assert gp == rp == {(b"latency-tracking", b"yes"), (b"latency-tracking-info-percentiles", b"50 99 99.9")}


@pytest.mark.parametrize("args", [
    ("LATENCY", "HELP"), ("LATENCY", "HELP", "extra"), ("LATENCY", "GRAPH", "command"),
    ("LATENCY", "GRAPH", "Command"), ("LATENCY", "GRAPH", "no\x00such\r\nevent"), ("LATENCY", "GRAPH"),
    ("LATENCY", "GRAPH", "a", "b"), ("LATENCY", "DOCTOR", "extra"), ("LATENCY", "NOSUCH"),
    ("LATENCY",), ("LATENCY", "HISTORY", "command"), ("LATENCY", "LATEST"),
])
@pytest.mark.parametrize("protocol", [2, 3])
def test_latency_replies_without_events(conns, args, protocol):
    g, r = conns
    if protocol == 3:
        hello3(g, r)
    same(g, r, *args)


def anon_huge_pages(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return sum(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))


@pytest.mark.parametrize("protocol", [2, 3])
def test_doctor_without_spikes(pair, conns, protocol):
    g, r = conns
    if protocol == 3:
        hello3(g, r)
    # Monitoring off and nothing recorded: the "disabled" text.
    reply = same(g, r, "LATENCY", "DOCTOR")
    assert reply.kind == ("=" if protocol == 3 else "$")
    assert b"Latency monitoring is disabled" in reply.value
    # Monitoring on, nothing recorded: the "no spike" text, unless a server holds transparent
    # huge pages (then each advises about them, in its own words).
    same(g, r, "CONFIG", "SET", "latency-monitor-threshold", "100")
    if anon_huge_pages(pair.goblin_server.proc.pid) or anon_huge_pages(pair.reference_server.proc.pid):
        for reply in both(g, r, "LATENCY", "DOCTOR"):
            assert b"huge pages" in reply.value
        return
    reply = same(g, r, "LATENCY", "DOCTOR")
    assert reply.value.endswith(b"Dave, no latency spike was observed during the lifetime of this Redis instance, "
                                b"not in the slightest bit. I honestly think you ought to sit down calmly, take a "
                                b"stress pill, and think things over.\n")


def graph_shape(reply: Reply) -> list:
    """LATENCY GRAPH's lines with the numbers (milliseconds, ages) replaced by '9'."""
    text = reply.value.decode()
    if reply.kind == "=":
        assert text.startswith("txt:")
        text = text[4:]
    return [re.sub(r"\d+", "9", line) for line in text.split("\n")]


@pytest.mark.parametrize("protocol", [2, 3])
def test_graph_of_one_spike(conns, protocol):
    g, r = conns
    if protocol == 3:
        hello3(g, r)
    # Only the sleep should pass the threshold; were the CONFIG SET slow too, its sample would
    # most likely share the sleep's second, which keeps one sample, the larger.
    same(g, r, "CONFIG", "SET", "latency-monitor-threshold", "5")
    same(g, r, "DEBUG", "SLEEP", "0.02")
    same(g, r, "CONFIG", "SET", "latency-monitor-threshold", "0")
    gr, rr = both(g, r, "LATENCY", "GRAPH", "command")
    assert gr.kind == rr.kind == ("=" if protocol == 3 else "$")
    assert graph_shape(gr) == graph_shape(rr)
    lines = graph_shape(gr)
    # The header, 80 dashes, one column at the bottom level, a blank line, the age ("0s" or,
    # past a second boundary, "1s") written downwards.
    assert lines == ["command - high 9 ms, low 9 ms (all time high 9 ms)", "-" * 80, " ", " ", " ", "_", " ",
                     "9", "s", ""]
    # Twenty milliseconds at least, on both.
    for reply in (gr, rr):
        high = int(re.search(rb"high (\d+) ms", reply.value).group(1))
        assert high >= 20
    same(g, r, "LATENCY", "GRAPH", "fast-command")
    # RESET matches names without case; a name given twice resets once.
    same(g, r, "LATENCY", "RESET", "COMMAND", "command", "nosuch")
    same(g, r, "LATENCY", "GRAPH", "command")
