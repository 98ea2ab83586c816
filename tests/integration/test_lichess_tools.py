"""bench/lichess tools: pgn2events on the PGN fixtures, synth's determinism and rules, the feed
client on a hand-made payload, and a tiny end-to-end replay.

The tools are built with g++ into a temporary directory (the PGN reader twice: with libzstd when
its header is installed, and with the `zstd -dc` pipe). The feed tests run bench/lichess/feed
against $GOBLIN_SERVER, and bench/lichess/feed_payload_uds.sh --scale tiny with $GOBLIN_SERVER
against /usr/bin/redis-server, in both modes and with --stream.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.server import REFERENCE_BINARY, ServerProcess, goblin_binary, stop_and_check

REPO = Path(__file__).resolve().parents[2]
TOOLS_SRC = REPO / "bench" / "lichess"
FIXTURES = REPO / "tests" / "fixtures" / "lichess"
JAN = FIXTURES / "lichess_2013-01_mini.pgn"
FEB = FIXTURES / "lichess_2013-02_mini.pgn"
FEB_ZST = FIXTURES / "lichess_2013-02_mini.pgn.zst"

EXPECTED_ALL = [
    ("2012-12-31", "BFG9k", 1639), ("2012-12-31", "mamalak", 1403),
    ("2013-01-01", "Desmond_Wilson", 1654), ("2013-01-01", "savinka59", 1919),
    ("2013-01-01", "Naitero_Nagasaki", 1500),  # Black "800" has BlackElo "?": dropped alone
    # nichiren1967 vs Naitero_Nagasaki: both ratings "?", no events
    ("2013-01-02", "savinka59", 1897), ("2013-01-02", "Desmond_Wilson", 1673),
    ("2013-02-01", "mamalak", 1395), ("2013-02-01", "BFG9k", 1644),
    ("2013-02-03", "Desmond_Wilson", 1681), ("2013-02-03", "a-b_C9", 1500),
]


def _has_zstd_header() -> bool:
    return Path("/usr/include/zstd.h").exists()


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    out = tmp_path_factory.mktemp("lichess-tools")
    flags = ["g++", "-std=c++20", "-O2", "-Wall", "-Wextra", "-Werror"]
    subprocess.run(flags + ["-o", str(out / "synth"), str(TOOLS_SRC / "synth.cc")], check=True)
    subprocess.run(flags + ["-o", str(out / "feed"), str(TOOLS_SRC / "feed.cc")], check=True)
    subprocess.run(flags + ["-o", str(out / "leaderboard_check"), str(TOOLS_SRC / "leaderboard_check.cc")],
                   check=True)
    subprocess.run(flags + ["-o", str(out / "pgn2events_pipe"), str(TOOLS_SRC / "pgn2events.cc")], check=True)
    # make test installs libzstd-dev and zstd, so both readers are always built and tested.
    assert _has_zstd_header(), "libzstd-dev is missing (make test installs it)"
    subprocess.run(flags + ["-DPGN_WITH_LIBZSTD", "-o", str(out / "pgn2events"), str(TOOLS_SRC / "pgn2events.cc"),
                            "-lzstd"], check=True)
    return out


def run(cmd, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, **kw)


def events(text: str):
    rows = []
    for line in text.splitlines():
        date, player, rating = line.split("\t")
        rows.append((date, player, int(rating)))
    return rows


# ---- pgn2events ----------------------------------------------------------------------------------

def test_pgn_events_exact(tools):
    res = run([tools / "pgn2events", JAN, FEB])
    assert events(res.stdout.decode()) == EXPECTED_ALL
    assert b"games=7 " in res.stderr and b"dropped_observations=3 " in res.stderr


@pytest.mark.parametrize("binary", ["pgn2events", "pgn2events_pipe"])
def test_pgn_zst_same_as_plain(tools, binary):
    assert FEB_ZST.exists() and shutil.which("zstd") is not None, "zstd (make test installs it)"
    plain = run([tools / binary, JAN, FEB]).stdout
    packed = run([tools / binary, JAN, FEB_ZST]).stdout
    assert packed == plain


def test_pgn_date_filter(tools):
    res = run([tools / "pgn2events", "--from", "2013-01-01", "--to", "2013-02-01", JAN, FEB_ZST if FEB_ZST.exists() else FEB])
    assert events(res.stdout.decode()) == [e for e in EXPECTED_ALL if "2013-01-01" <= e[0] <= "2013-02-01"]
    assert b"out_of_range=2 " in res.stderr


def test_pgn_question_mark_drops_one_observation(tools, tmp_path):
    game = ('[Event "Rated Blitz game"]\n[Site "https://lichess.org/abcd1234"]\n[UTCDate "2014.05.06"]\n'
            '[White "alice"]\n[Black "bob"]\n[Result "1-0"]\n[WhiteElo "{w}"]\n[BlackElo "{b}"]\n\n1. e4 1-0\n\n')
    p = tmp_path / "g.pgn"
    p.write_text(game.format(w="?", b="1712") + game.format(w="1501", b="") + game.format(w="15x0", b="2200"))
    res = run([tools / "pgn2events", p])
    assert events(res.stdout.decode()) == [("2014-05-06", "bob", 1712), ("2014-05-06", "alice", 1501),
                                           ("2014-05-06", "bob", 2200)]
    assert b"dropped_observations=3 " in res.stderr


def test_pgn_cmd_and_resp_payloads(tools):
    cmd = run([tools / "pgn2events", "--format", "cmd", JAN, FEB]).stdout.decode().splitlines()
    assert cmd[:3] == ["ZADD leaderboard 1639 BFG9k", "ZADD leaderboard 1403 mamalak", "ECHO lichess-date:2012-12-31"]
    assert cmd[-1] == "ECHO lichess-date:2013-02-03"
    assert sum(1 for c in cmd if c.startswith("ZADD ")) == len(EXPECTED_ALL)
    assert sum(1 for c in cmd if c.startswith("ECHO ")) == 5
    resp = run([tools / "pgn2events", "--format", "resp", JAN]).stdout
    assert resp.startswith(b"*4\r\n$4\r\nZADD\r\n$11\r\nleaderboard\r\n$4\r\n1639\r\n$5\r\nBFG9k\r\n")
    assert resp.endswith(b"*2\r\n$4\r\nECHO\r\n$23\r\nlichess-date:2013-01-02\r\n")


# ---- synth -----------------------------------------------------------------------------------------

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{2,20}$")


def test_synth_deterministic(tools):
    args = [tools / "synth", "--players", "500", "--updates", "20000", "--days", "60", "--format", "cmd"]
    a = run(args + ["--seed", "7"]).stdout
    b = run(args + ["--seed", "7"]).stdout
    c = run(args + ["--seed", "8"]).stdout
    assert a == b
    assert a != c


def test_synth_shape_rules_and_bounds(tools):
    res = run([tools / "synth", "--players", "2000", "--updates", "60000", "--seed", "3"])
    rows = events(res.stdout.decode())
    assert len(rows) == 60000
    players = {p for _, p, _ in rows}
    assert len(players) == 2000
    assert all(NAME_RE.match(p) for p in players)
    assert len({p.lower() for p in players}) == 2000  # unique case-insensitively, as on Lichess
    assert all(400 <= r <= 4000 for _, _, r in rows)
    dates = [d for d, _, _ in rows]
    assert dates == sorted(dates) and dates[0] >= "2012-12-31" and dates[-1] <= "2025-09-30"
    # every player's first observation is the 1500 start rating of some time control
    first = {}
    for _, p, r in rows:
        first.setdefault(p, r)
    assert set(first.values()) == {1500}
    # skewed activity: the busiest 1% of players carry far more than 1% of the updates
    per = {}
    for _, p, _ in rows:
        per[p] = per.get(p, 0) + 1
    counts = sorted(per.values(), reverse=True)
    assert sum(counts[:20]) > 0.1 * len(rows)
    # growth: the last year carries many times the first year's updates
    first_year = sum(1 for d in dates if d < "2014")
    last_year = sum(1 for d in dates if d >= "2024-10")
    assert last_year > 20 * max(first_year, 1)


def test_synth_rejects_bad_scale(tools):
    res = subprocess.run([str(tools / "synth"), "--players", "10", "--updates", "5"], capture_output=True)
    assert res.returncode == 2


# ---- feed ------------------------------------------------------------------------------------------

def _resp(*args: str) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        b = a.encode()
        out += b"$%d\r\n%s\r\n" % (len(b), b)
    return out


# Three dates; the second date's first ZADD has a score that is not a float.
HAND_MADE = [
    ("ZADD", "lb", "1500", "alice"), ("ZADD", "lb", "1510", "bob"), ("ZADD", "lb", "1520", "alice"),
    ("ECHO", "lichess-date:2020-01-01"),
    ("ZADD", "lb", "notafloat", "carol"), ("ZADD", "lb", "1600", "dave x"),
    ("ECHO", "lichess-date:2020-01-02"),
    ("ZADD", "lb", "1400", "bob"), ("ZADD", "lb", "1700", "erin"),
    ("ECHO", "lichess-date:2020-01-03"),
]
# After each date: (commands, inserts, errors), markers not counted.
HAND_MADE_ROWS = [("start", 0, 0, 0), ("2020-01-01", 3, 2, 0), ("2020-01-02", 5, 3, 1),
                  ("2020-01-03", 7, 4, 1)]


def _inline(args) -> str:
    return " ".join(f'"{a}"' if " " in a else a for a in args)


def _result_fields(line: str) -> dict:
    return dict(kv.split("=", 1) for kv in line.split())


@pytest.mark.parametrize("mode,fmt,source", [("reply", "resp", "file"), ("pipelined", "resp", "stdin"),
                                             ("reply", "cmd", "stdin"), ("pipelined", "cmd", "file")])
def test_feed_hand_made_payload(tools, tmp_path, make_server, mode, fmt, source):
    srv = make_server(name="feed-unit")
    if fmt == "resp":
        payload = b"".join(_resp(*c) for c in HAND_MADE)
    else:
        payload = "".join(_inline(c) + "\n" for c in HAND_MADE).encode()
    path = tmp_path / f"payload.{fmt}"
    path.write_bytes(payload)
    csv_path = tmp_path / "out.csv"
    cmd = [str(tools / "feed"), "--socket", srv.unix_path, "--mode", mode, "--csv", str(csv_path)]
    if mode == "pipelined":
        cmd += ["--window", "2"]  # smaller than a date, so the window is exercised
        cmd += ["--pid", str(srv.proc.pid)]  # reply mode finds the pid through INFO server
    if source == "file":
        res = subprocess.run(cmd + ["--payload", str(path)], capture_output=True, text=True, timeout=60)
    else:
        res = subprocess.run(cmd, input=payload, capture_output=True, timeout=60)
        res = subprocess.CompletedProcess(res.args, res.returncode, res.stdout.decode(), res.stderr.decode())
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 1
    fields = _result_fields(lines[0])
    assert (fields["commands"], fields["inserts"], fields["errors"]) == ("7", "4", "1")
    elapsed, feed, sample = (float(fields[k]) for k in ("elapsed_s", "feed_s", "sample_s"))
    assert sample > 0 and abs(elapsed - feed - sample) < 1e-5
    for key in ("start", "final"):
        um, rss, os_rss = (int(x) for x in fields[key].split(","))
        assert um > 0 and rss > 0 and os_rss > 0
    assert "value is not a valid float" in res.stderr  # the kept error text
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["date"], int(r["commands"]), int(r["inserts"]), int(r["errors"])) for r in rows] == HAND_MADE_ROWS
    assert list(rows[0].keys()) == ["date", "elapsed_s", "commands", "inserts", "errors", "used_memory",
                                    "used_memory_rss", "os_rss"]
    assert rows[0]["elapsed_s"] == "0"
    times = [float(r["elapsed_s"]) for r in rows]
    assert times == sorted(times) and times[-1] <= elapsed
    assert all(int(r[k]) > 0 for r in rows for k in ("used_memory", "used_memory_rss", "os_rss"))
    assert int(rows[0]["os_rss"]) == int(fields["start"].split(",")[2])
    with srv.raw(unix=True) as conn:
        assert conn.call("ZRANGE", "lb", "0", "-1", "WITHSCORES").py() == [
            b"bob", b"1400", b"alice", b"1520", b"dave x", b"1600", b"erin", b"1700"]


def test_feed_fails_on_lost_connection_and_bad_payload(tools, tmp_path, make_server):
    res = subprocess.run([str(tools / "feed"), "--socket", str(tmp_path / "none.sock"), "--mode", "reply"],
                         input=_resp("PING"), capture_output=True, timeout=60)
    assert res.returncode == 1 and b"connect" in res.stderr
    srv = make_server(name="feed-unit")
    truncated = _resp("ZADD", "lb", "1", "a") + _resp("ZADD", "lb", "2", "b")[:-3]
    res = subprocess.run([str(tools / "feed"), "--socket", srv.unix_path, "--mode", "pipelined"],
                         input=truncated, capture_output=True, timeout=60)
    assert res.returncode == 1 and b"payload ends inside a command" in res.stderr
    res = subprocess.run([str(tools / "feed"), "--socket", srv.unix_path, "--mode", "sideways"],
                         input=b"", capture_output=True, timeout=60)
    assert res.returncode == 2


# ---- the replay script -----------------------------------------------------------------------------

def _goblin_has_zadd(binary: str) -> bool:
    srv = ServerProcess(binary, name="lichess-probe").start()
    try:
        conn = srv.raw()
        reply = conn.call("ZADD", "probe", "1", "a")
        conn.close()
        return reply.kind == ":"
    finally:
        stop_and_check(srv)


@pytest.mark.parametrize("mode,extra", [("reply", []), ("pipelined", []), ("pipelined", ["--stream"])])
def test_feed_tiny(tools, tmp_path, mode, extra):
    goblin = goblin_binary()
    assert _goblin_has_zadd(goblin), f"{goblin} does not answer ZADD"
    out = tmp_path / "feed"
    res = subprocess.run([str(TOOLS_SRC / "feed_payload_uds.sh"), "--scale", "tiny", "--mode", mode, "--goblin", goblin,
                          "--redis", REFERENCE_BINARY, "--out", str(out), "--tools", str(tools)] + extra,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "zset check: goblin 'leaderboard' MATCHES redis (300 members)" in res.stdout
    # The tiny trace's dates, from synth itself.
    trace = run([tools / "synth", "--players", "300", "--updates", "20000", "--days", "40", "--seed", "1",
                 "--format", "cmd", "--quiet"]).stdout.decode().splitlines()
    dates = [line.split(":", 1)[1] for line in trace if line.startswith("ECHO lichess-date:")]
    assert (out / "payload.resp").exists() == ("--stream" not in extra)
    for name in ("goblin", "redis"):
        with open(out / f"{name}.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows[0]["date"] == "start"
        assert [r["date"] for r in rows[1:]] == dates
        assert rows[-1]["commands"] == "20000" and rows[-1]["inserts"] == "300" and rows[-1]["errors"] == "0"
        assert all(int(r["os_rss"]) > 0 and int(r["used_memory"]) > 0 for r in rows)
        result = (out / f"{name}.result").read_text().split()
        assert result[0] == name
        fields = _result_fields(" ".join(result[1:]))
        assert (fields["commands"], fields["inserts"], fields["errors"]) == ("20000", "300", "0")
    summary = (out / "summary.txt").read_text()
    assert f"mode={mode}" in summary and f"dates={len(dates)}" in summary
    assert "completion time ratio" in summary
    if "--stream" not in extra:
        # Each export equals the payload's own last-rating-per-player leaderboard...
        for name in ("goblin", "redis"):
            check = subprocess.run([tools / "leaderboard_check", out / "payload.resp", out / f"{name}.zrange"],
                                   capture_output=True, text=True)
            assert check.returncode == 0 and "MATCHES the payload (300 members, 20000 ZADDs)" in check.stdout, check
        # ... and one changed score is caught.
        lines = (out / "goblin.zrange").read_text().splitlines()
        lines[1] = str(float(lines[1]) + 1)
        (out / "bad.zrange").write_text("\n".join(lines) + "\n")
        check = subprocess.run([tools / "leaderboard_check", out / "payload.resp", out / "bad.zrange"],
                               capture_output=True, text=True)
        assert check.returncode == 1 and "DIFFERS at rank 0" in check.stdout, check


def test_feed_one_side_against_an_earlier_run(tools, tmp_path):
    """--only goblin --against DIR: the new goblin side is compared with an earlier run's redis."""
    goblin = goblin_binary()
    first, again = tmp_path / "first", tmp_path / "again"
    base = [str(TOOLS_SRC / "feed_payload_uds.sh"), "--scale", "tiny", "--mode", "pipelined", "--goblin", goblin,
            "--redis", REFERENCE_BINARY, "--tools", str(tools)]
    res = subprocess.run(base + ["--out", str(first)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    res = subprocess.run(base + ["--out", str(again), "--only", "goblin", "--against", str(first)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "zset check: goblin 'leaderboard' MATCHES redis (300 members)" in res.stdout
    assert not (again / "redis").exists()  # no redis-server was started
    assert (again / "redis.csv").read_text() == (first / "redis.csv").read_text()
    # A leaderboard that differs from the earlier side is caught.
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("redis.csv", "redis.result"):
        (bad / name).write_text((first / name).read_text())
    lines = (first / "redis.zrange").read_text().splitlines()
    lines[-1] = str(float(lines[-1]) + 1)
    (bad / "redis.zrange").write_text("\n".join(lines) + "\n")
    res = subprocess.run(base + ["--out", str(tmp_path / "third"), "--only", "goblin", "--against", str(bad)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1 and "DIFFERS from redis" in res.stdout, res.stdout + res.stderr
    res = subprocess.run(base + ["--out", str(tmp_path / "fourth"), "--only", "goblin", "--against",
                                 str(tmp_path / "nothing")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "no redis.csv from an earlier run" in res.stderr
