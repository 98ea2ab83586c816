"""Expiry: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (NX XX GT LT) TTL PTTL EXPIRETIME PEXPIRETIME PERSIST,
lazy and active expiry."""

import time

import pytest

from support.expect import NOT_INTEGER, arity, bulk, err, integer, nil, ok, run_steps
from support.server import wait_for

FAR = 4102444800  # 2100-01-01 in Unix seconds


def test_ttl_pttl_of_missing_and_persistent(raw):
    run_steps(raw, [("TTL missing", integer(-2)), ("PTTL missing", integer(-2)),
                    ("EXPIRETIME missing", integer(-2)), ("PEXPIRETIME missing", integer(-2)),
                    ("SET k v", ok), ("TTL k", integer(-1)), ("PTTL k", integer(-1)),
                    ("EXPIRETIME k", integer(-1)), ("PEXPIRETIME k", integer(-1)),
                    ("PERSIST k", integer(0)), ("PERSIST missing", integer(0))])


def test_expire_family_sets_deadlines(raw):
    run_steps(raw, [
        ("SET k v", ok),
        ("EXPIRE k 100", integer(1)), ("TTL k", integer(100)),
        ("PTTL k", lambda x: 99000 < x.value <= 100000),
        ("PEXPIRE k 50000", integer(1)), ("TTL k", lambda x: x.value in (49, 50)),
        ("EXPIREAT k %d" % FAR, integer(1)), ("EXPIRETIME k", integer(FAR)),
        ("PEXPIRETIME k", integer(FAR * 1000)),
        # EXPIRETIME rounds the millisecond deadline to the nearest second.
        ("PEXPIREAT k %d" % (FAR * 1000 + 499), integer(1)), ("EXPIRETIME k", integer(FAR)),
        ("PEXPIREAT k %d" % (FAR * 1000 + 999), integer(1)), ("EXPIRETIME k", integer(FAR + 1)),
        ("PEXPIRETIME k", integer(FAR * 1000 + 999)),
        ("PERSIST k", integer(1)), ("TTL k", integer(-1)), ("GET k", bulk("v")),
        ("EXPIRE missing 100", integer(0)), ("PEXPIREAT missing %d" % (FAR * 1000), integer(0)),
    ])


def test_expire_conditions_truth_table(raw):
    run_steps(raw, [
        ("SET k v", ok),
        # No TTL: counts as infinite, so GT never applies and LT always does.
        ("EXPIRE k 100 XX", integer(0)), ("EXPIRE k 100 GT", integer(0)), ("TTL k", integer(-1)),
        ("EXPIRE k 100 NX", integer(1)), ("EXPIRE k 200 NX", integer(0)), ("TTL k", integer(100)),
        ("EXPIRE k 1000 XX", integer(1)), ("TTL k", integer(1000)),
        ("EXPIRE k 500 GT", integer(0)), ("EXPIRE k 2000 GT", integer(1)), ("TTL k", integer(2000)),
        ("EXPIRE k 3000 LT", integer(0)), ("EXPIRE k 300 LT", integer(1)), ("TTL k", integer(300)),
        ("EXPIRE k 400 XX GT", integer(1)), ("TTL k", integer(400)),
        ("PERSIST k", integer(1)), ("EXPIRE k 100 LT", integer(1)), ("TTL k", integer(100)),
        ("EXPIRE k 10 NX XX", err("ERR NX and XX, GT or LT options at the same time are not compatible")),
        ("EXPIRE k 10 NX GT", err("ERR NX and XX, GT or LT options at the same time are not compatible")),
        ("EXPIRE k 10 GT LT", err("ERR GT and LT options at the same time are not compatible")),
        ("EXPIRE k 10 FOO", err("ERR Unsupported option FOO")),
        ("PEXPIREAT k %d gt" % (FAR * 1000), integer(1)), ("EXPIRETIME k", integer(FAR)),
        ("TTL k", lambda x: x.value > 100),
    ])


def test_expire_in_the_past_deletes(raw):
    run_steps(raw, [
        ("SET a v", ok), ("EXPIRE a 0", integer(1)), ("EXISTS a", integer(0)),
        ("SET a v", ok), ("PEXPIRE a -100", integer(1)), ("EXISTS a", integer(0)),
        ("SET a v", ok), ("EXPIREAT a 1", integer(1)), ("EXISTS a", integer(0)),
        ("SET a v", ok), ("PEXPIREAT a 1", integer(1)), ("GET a", nil),
        ("SET a v", ok), ("EXPIRE a -1 GT", integer(0)), ("EXISTS a", integer(1)),
        ("EXPIRE a -1 LT", integer(1)), ("EXISTS a", integer(0)), ("DBSIZE", integer(0)),
    ])


def test_expire_errors(raw):
    run_steps(raw, [
        ("SET k v", ok),
        ("EXPIRE k abc", NOT_INTEGER), ("EXPIRE k 1.5", NOT_INTEGER), ("PEXPIREAT k x", NOT_INTEGER),
        ("EXPIRE k 9223372036854775807", err("ERR invalid expire time in 'expire' command")),
        ("PEXPIRE k 9223372036854775807", err("ERR invalid expire time in 'pexpire' command")),
        ("EXPIREAT k 9223372036854775807", err("ERR invalid expire time in 'expireat' command")),
        ("TTL k", integer(-1)),
        ("EXPIRE k", arity("expire")), ("PEXPIRE k", arity("pexpire")), ("EXPIREAT k", arity("expireat")),
        ("PEXPIREAT k", arity("pexpireat")), ("TTL", arity("ttl")), ("PTTL", arity("pttl")),
        ("EXPIRETIME", arity("expiretime")), ("PEXPIRETIME", arity("pexpiretime")),
        ("PERSIST", arity("persist")),
    ])


def test_ttl_survives_value_changes_but_not_overwrites(raw):
    run_steps(raw, [
        ("SET k 1 EX 100", ok),
        ("INCR k", integer(2)), ("APPEND k 0", integer(2)), ("SETRANGE k 0 3", integer(2)),
        ("INCRBYFLOAT k 1", bulk("31")), ("TTL k", integer(100)),
        ("SET k v", ok), ("TTL k", integer(-1)),
        ("SETEX k 100 v", ok), ("GETSET k w", bulk("v")), ("TTL k", integer(-1)),
        ("SETEX k 100 v", ok), ("MSET k x", ok), ("TTL k", integer(-1)),
    ])


def _server_ms(raw) -> int:
    secs, micros = (int(e.value) for e in raw.call("TIME").value)
    return secs * 1000 + micros // 1000


def test_key_expires_and_is_never_visible_afterwards(raw):
    raw.call("SET", "soon", "v", "PX", 200)
    raw.call("SET", "later", "v", "EX", 1000)
    deadline_ms = _server_ms(raw) + 200
    wait_for(lambda: raw.call("GET", "soon").raw == nil, timeout=10, what="'soon' to expire")
    # It was not dropped early: by the server's clock at least ~200 ms passed.
    assert _server_ms(raw) >= deadline_ms - 5
    for cmd in (("EXISTS", "soon"), ("TTL", "soon"), ("STRLEN", "soon"), ("GETRANGE", "soon", 0, -1)):
        assert raw.call(*cmd).raw in (integer(0), integer(-2), bulk("")), cmd
    assert raw.call("KEYS", "*").raw == b"*1\r\n$5\r\nlater\r\n"
    assert raw.call("GET", "later").raw == bulk("v")


def test_active_expiry_reclaims_untouched_keys(raw):
    raw.pipeline([("SET", "vol:%d" % i, "v", "PX", 100) for i in range(500)])
    raw.call("SET", "keep", "v")
    assert raw.call("DBSIZE").value >= 1
    # DBSIZE does not touch keys, so only the active expiry cycle can bring it down to 1.
    wait_for(lambda: raw.call("DBSIZE").raw == integer(1), timeout=20, what="active expiry to reclaim keys")
    assert raw.call("INFO", "stats").value.count(b"expired_keys:") == 1


def test_debug_set_active_expire_off_leaves_keys_for_lazy_expiry(raw):
    assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 0).raw == ok
    try:
        raw.pipeline([("SET", "vol:%d" % i, "v", "PX", 50) for i in range(50)])
        gone_at = _server_ms(raw) + 50
        wait_for(lambda: _server_ms(raw) > gone_at + 20, timeout=10, what="the server clock to pass the TTL")
        assert raw.call("DBSIZE").raw == integer(50), "with active expiry off nothing may reclaim the keys"
        assert raw.call("EXISTS", "vol:0", "vol:1").raw == integer(0)
        assert raw.call("DBSIZE").raw == integer(48), "lazy expiry deletes keys when they are accessed"
    finally:
        assert raw.call("DEBUG", "SET-ACTIVE-EXPIRE", 1).raw == ok
    wait_for(lambda: raw.call("DBSIZE").raw == integer(0), timeout=20, what="active expiry to resume")


def test_expired_keys_counted_in_info(raw):
    before = int(dict(line.split(b":", 1) for line in raw.call("INFO", "stats").value.split(b"\r\n")
                      if b":" in line)[b"expired_keys"])
    raw.call("SET", "x", "v", "PX", 1)
    wait_for(lambda: raw.call("EXISTS", "x").raw == integer(0), what="x to expire")
    after = int(dict(line.split(b":", 1) for line in raw.call("INFO", "stats").value.split(b"\r\n")
                     if b":" in line)[b"expired_keys"])
    assert after == before + 1


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE"])
def test_relative_expire_is_measured_from_now(raw, cmd):
    raw.call("SET", "k", "v")
    amount = 30 if cmd == "EXPIRE" else 30000
    t0 = time.time()
    assert raw.call(cmd, "k", amount).raw == integer(1)
    expected_ms = (t0 + 30) * 1000
    got = raw.call("PEXPIRETIME", "k").value
    assert abs(got - expected_ms) < 2000, (got, expected_ms)
