"""Keyspace commands: DEL UNLINK EXISTS TYPE RENAME RENAMENX KEYS SCAN RANDOMKEY DBSIZE FLUSHDB
FLUSHALL SELECT MOVE SWAPDB COPY TOUCH OBJECT."""

from support.expect import (NOT_INTEGER, SYNTAX, arity, bulk, bulks, err, integer, nil, ok, run_steps,
                            simple)

SAME_OBJECT = err("ERR source and destination objects are the same")
DB_RANGE = err("ERR DB index is out of range")


def test_del_unlink_exists_touch(raw):
    run_steps(raw, [
        ("MSET a 1 b 2 c 3", ok),
        ("EXISTS a b missing a", integer(3)),
        ("TOUCH a b missing", integer(2)),
        ("DEL a missing", integer(1)), ("DEL a", integer(0)),
        ("UNLINK b c b", integer(2)), ("EXISTS a b c", integer(0)),
        ("DEL", arity("del")), ("UNLINK", arity("unlink")), ("EXISTS", arity("exists")),
        ("TOUCH", arity("touch")),
    ])


def test_type(raw):
    run_steps(raw, [("SET s v", ok), ("TYPE s", simple("string")), ("TYPE missing", simple("none")),
                    ("TYPE", arity("type")), ("TYPE a b", arity("type"))])


def test_rename_and_renamenx(raw):
    run_steps(raw, [
        ("RENAME missing x", err("ERR no such key")),
        ("RENAMENX missing x", err("ERR no such key")),
        ("SET a 1", ok), ("EXPIRE a 100", integer(1)),
        ("RENAME a a", ok), ("GET a", bulk("1")),
        ("RENAMENX a a", integer(0)),
        ("RENAME a b", ok), ("EXISTS a", integer(0)), ("GET b", bulk("1")), ("TTL b", integer(100)),
        ("SET c 3", ok), ("RENAMENX b c", integer(0)), ("GET b", bulk("1")),
        ("RENAMENX b d", integer(1)), ("GET d", bulk("1")), ("TTL d", integer(100)),
        ("RENAME c d", ok), ("GET d", bulk("3")), ("TTL d", integer(-1)), ("DBSIZE", integer(1)),
        ("RENAME a", arity("rename")), ("RENAMENX a", arity("renamenx")),
    ])


def test_keys_glob_patterns(r):
    names = [b"hello", b"hallo", b"hxllo", b"hllo", b"heeeello", b"h*llo", b"h?llo", b"[x]", b"a\\b",
             b"\x00bin"]
    for n in names:
        r.set(n, 1)

    def keys(pattern):
        return sorted(r.keys(pattern))

    assert keys("*") == sorted(names)
    assert keys("h?llo") == sorted([b"hello", b"hallo", b"hxllo", b"h*llo", b"h?llo"])
    assert keys("h*llo") == sorted([b"hello", b"hallo", b"hxllo", b"hllo", b"heeeello", b"h*llo", b"h?llo"])
    assert keys("h[ae]llo") == [b"hallo", b"hello"]
    assert keys("h[^e]llo") == sorted([b"hallo", b"hxllo", b"h*llo", b"h?llo"])
    assert keys("h[a-b]llo") == [b"hallo"]
    assert keys("h\\*llo") == [b"h*llo"]
    assert keys("\\[x\\]") == [b"[x]"]
    assert keys("a\\\\b") == [b"a\\b"]
    assert keys("\x00*") == [b"\x00bin"]
    assert keys("nomatch*") == []


def test_keys_skips_other_databases_and_expired(r, raw):
    r.set("here", 1)
    raw.call("SELECT", 1)
    raw.call("SET", "there", 1)
    raw.call("SET", "gone", 1, "PX", 1)
    # The key expires on the server's clock; poll until it is reported missing.
    from support.server import wait_for
    wait_for(lambda: raw.call("PTTL", "gone").raw == integer(-2), what="key 'gone' to expire")
    assert raw.call("KEYS", "*").raw == bulks("there")
    assert r.keys("*") == [b"here"]


def _full_scan(r, **kwargs):
    cursor, seen, rounds = 0, [], 0
    while True:
        cursor, batch = r.scan(cursor, **kwargs)
        seen.extend(batch)
        rounds += 1
        assert rounds < 100000, "SCAN never returned cursor 0"
        if cursor == 0:
            return seen, rounds


def test_scan_returns_every_key(r):
    expected = {b"key:%d" % i for i in range(1500)}
    r.mset({k: b"v" for k in expected})
    seen, rounds = _full_scan(r, count=100)
    assert set(seen) == expected
    assert rounds > 1, "1500 keys with COUNT 100 should take more than one SCAN call"


def test_scan_match_count_type(r):
    r.mset({b"user:%d" % i: b"x" for i in range(300)})
    r.mset({b"item:%d" % i: b"y" for i in range(300)})
    seen, _ = _full_scan(r, match="user:1*", count=50)
    assert set(seen) == {b"user:%d" % i for i in range(300) if str(i).startswith("1")}
    seen, _ = _full_scan(r, _type="string", count=1000)
    assert len(set(seen)) == 600
    seen, _ = _full_scan(r, _type="list")
    assert seen == []


def test_scan_guarantee_under_concurrent_writes(r, server):
    """Keys present for the whole scan are returned even while other keys come and go."""
    stable = {b"stable:%d" % i for i in range(1000)}
    r.mset({k: b"v" for k in stable})
    other = server.client()
    cursor, seen, step = 0, set(), 0
    while True:
        cursor, batch = r.scan(cursor, count=20)
        seen.update(batch)
        # Churn between calls: add keys (may force the table to grow) and delete earlier extras.
        other.mset({b"churn:%d:%d" % (step, j): b"x" for j in range(40)})
        if step >= 2:
            other.delete(*[b"churn:%d:%d" % (step - 2, j) for j in range(40)])
        step += 1
        assert step < 100000
        if cursor == 0:
            break
    other.close()
    assert stable <= seen, f"SCAN missed {len(stable - seen)} keys that existed throughout"


def test_scan_errors(raw):
    run_steps(raw, [
        ("SCAN x", err("ERR invalid cursor")),
        ("SCAN 18446744073709551616", err("ERR invalid cursor")),
        ("SCAN 0 COUNT 0", SYNTAX), ("SCAN 0 COUNT x", NOT_INTEGER), ("SCAN 0 FOO", SYNTAX),
        ("SCAN 0 MATCH", SYNTAX), ("SCAN", arity("scan")),
        ("SCAN 0", lambda x: x.raw == b"*2\r\n$1\r\n0\r\n*0\r\n"),
    ])


def test_randomkey_and_dbsize(r):
    assert r.randomkey() is None
    assert r.dbsize() == 0
    keys = {b"a", b"b", b"c"}
    for k in keys:
        r.set(k, 1)
    assert r.dbsize() == 3
    seen = {r.randomkey() for _ in range(200)}
    assert seen <= keys
    assert len(seen) >= 2, "RANDOMKEY should not always return the same key"


def test_flushdb_flushall(raw):
    run_steps(raw, [
        ("SET a 1", ok), ("SELECT 1", ok), ("SET b 1", ok),
        ("FLUSHDB", ok), ("DBSIZE", integer(0)), ("SELECT 0", ok), ("DBSIZE", integer(1)),
        ("SELECT 1", ok), ("SET b 1", ok), ("FLUSHALL", ok), ("DBSIZE", integer(0)),
        ("SELECT 0", ok), ("DBSIZE", integer(0)),
        ("SET a 1", ok), ("FLUSHDB ASYNC", ok), ("DBSIZE", integer(0)),
        ("SET a 1", ok), ("FLUSHDB SYNC", ok), ("DBSIZE", integer(0)),
        ("SET a 1", ok), ("FLUSHALL ASYNC", ok), ("DBSIZE", integer(0)),
        ("SET a 1", ok), ("FLUSHALL SYNC", ok), ("DBSIZE", integer(0)),
        ("FLUSHALL FOO", SYNTAX), ("FLUSHDB FOO", SYNTAX), ("FLUSHALL SYNC ASYNC", SYNTAX),
    ])


def test_select_move_swapdb(raw, server):
    run_steps(raw, [
        ("SELECT 16", DB_RANGE), ("SELECT -1", DB_RANGE), ("SELECT x", NOT_INTEGER),
        ("SELECT 15", ok), ("SET k fifteen", ok), ("SELECT 0", ok), ("GET k", nil),
        ("SET k zero", ok), ("EXPIRE k 100", integer(1)),
        ("MOVE k 0", SAME_OBJECT), ("MOVE k 16", DB_RANGE), ("MOVE k x", NOT_INTEGER),
        ("MOVE k 15", integer(0)),  # the target already holds k
        ("MOVE missing 1", integer(0)),
        ("MOVE k 2", integer(1)), ("EXISTS k", integer(0)), ("SELECT 2", ok), ("GET k", bulk("zero")),
        ("TTL k", integer(100)),
        ("SWAPDB 2 3", ok), ("GET k", nil), ("SELECT 3", ok), ("GET k", bulk("zero")),
        ("SWAPDB 0 16", err("ERR DB index is out of range")),
        ("SWAPDB x 0", err("ERR invalid first DB index")),
        ("SWAPDB 0 x", err("ERR invalid second DB index")),
        ("SWAPDB 3 3", ok), ("SWAPDB 0", arity("swapdb")),
    ])
    # SWAPDB is visible to other clients immediately.
    other = server.raw()
    run_steps(other, [("SELECT 4", ok), ("SET probe four", ok)])
    run_steps(raw, [("SWAPDB 4 5", ok)])
    run_steps(other, [("GET probe", nil), ("SELECT 5", ok), ("GET probe", bulk("four"))])
    other.close()


def test_copy(raw):
    run_steps(raw, [
        ("COPY missing x", integer(0)),
        ("SET a 1", ok), ("EXPIRE a 100", integer(1)),
        ("COPY a a", SAME_OBJECT),
        ("COPY a b", integer(1)), ("GET b", bulk("1")), ("TTL b", integer(100)),
        ("SET c other", ok), ("COPY a c", integer(0)), ("GET c", bulk("other")),
        ("COPY a c REPLACE", integer(1)), ("GET c", bulk("1")),
        ("COPY a a DB 1", integer(1)), ("SELECT 1", ok), ("GET a", bulk("1")), ("TTL a", integer(100)),
        ("SELECT 0", ok), ("INCR a", integer(2)), ("SELECT 1", ok), ("GET a", bulk("1")),
        ("SELECT 0", ok),
        ("COPY a b DB 16", DB_RANGE), ("COPY a b DB x", NOT_INTEGER), ("COPY a b FOO", SYNTAX),
        ("COPY a", arity("copy")),
    ])


def test_object_encoding_refcount_idletime(raw):
    run_steps(raw, [
        ("SET int 12345", ok), ("OBJECT ENCODING int", bulk("int")),
        ("SET short hello", ok), ("OBJECT ENCODING short", bulk("embstr")),
        ("SET long " + "x" * 100, ok), ("OBJECT ENCODING long", bulk("raw")),
        ("OBJECT ENCODING missing", nil), ("OBJECT REFCOUNT missing", nil),
        ("OBJECT IDLETIME missing", nil), ("OBJECT FREQ missing", nil),
        ("OBJECT REFCOUNT short", integer(1)),
        ("OBJECT IDLETIME short", lambda x: x.kind == ":" and 0 <= x.value <= 2),
        ("OBJECT FREQ short", err("ERR An LFU maxmemory policy is not selected, access frequency not "
                                  "tracked. Please note that when switching between policies at runtime "
                                  "LRU and LFU data will take some time to adjust.")),
        ("OBJECT FOO short", err("ERR unknown subcommand 'FOO'. Try OBJECT HELP.")),
        ("OBJECT ENCODING", arity("object|encoding")),
        ("OBJECT", arity("object")),
    ])


def test_object_freq_under_lfu(raw, server):
    raw.call("SET", "k", "v")
    assert raw.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lfu").raw == ok
    try:
        for _ in range(3):
            raw.call("GET", "k")
        freq = raw.call("OBJECT", "FREQ", "k")
        assert freq.kind == ":" and freq.value >= 1, freq
        idle = raw.call("OBJECT", "IDLETIME", "k")
        assert idle.is_error and b"LRU" in idle.value, idle
    finally:
        assert raw.call("CONFIG", "SET", "maxmemory-policy", "noeviction").raw == ok


def test_object_help(raw):
    reply = raw.call("OBJECT", "HELP")
    assert reply.kind == "*"
    lines = [e.value for e in reply.value]
    assert all(e.kind == "+" for e in reply.value)
    assert lines[0].startswith(b"OBJECT <subcommand>")
    for sub in (b"ENCODING <key>", b"FREQ <key>", b"IDLETIME <key>", b"REFCOUNT <key>", b"HELP"):
        assert sub in lines, sub


# ---- DEBUG DIGEST and DIGEST-VALUE ----------------------------------------------------------------------

DIGEST_VALUES = {
    "string": [("SET", "k", "value")],
    "int": [("SET", "k", "12345")],
    "set": [("SADD", "k", *[f"m{i}" for i in range(10)])],
    "intset": [("SADD", "k", *range(10))],
    "big-set": [("SADD", "k", *[f"m{i}" for i in range(300)])],
    "hash": [("HSET", "k", *[x for i in range(10) for x in (f"f{i}", f"v{i}")])],
    "big-hash": [("HSET", "k", *[x for i in range(300) for x in (f"f{i}", f"v{i}")])],
    "zset": [("ZADD", "k", *[x for i in range(10) for x in (i, f"m{i}")])],
    "big-zset": [("ZADD", "k", *[x for i in range(300) for x in (i, f"m{i}")])],
}
# One change of one element per type: a member, a field's value, a score.
DIGEST_CHANGES = {
    "string": ("SETRANGE", "k", 0, "V"), "int": ("INCR", "k"), "set": ("SREM", "k", "m3"),
    "intset": ("SADD", "k", 99), "big-set": ("SREM", "k", "m299"), "hash": ("HSET", "k", "f3", "other"),
    "big-hash": ("HSET", "k", "f299", "other"), "zset": ("ZADD", "k", 3.5, "m3"),
    "big-zset": ("ZINCRBY", "k", 1, "m299"),
}


def digests(r) -> tuple[bytes, bytes]:
    return r.execute_command("DEBUG", "DIGEST"), r.execute_command("DEBUG", "DIGEST-VALUE", "k")[0]


def test_debug_digest_changes_with_one_element_of_every_type(r):
    assert r.execute_command("DEBUG", "DIGEST") == b"0" * 40
    for kind, commands in DIGEST_VALUES.items():
        r.flushall()
        for command in commands:
            r.execute_command(*command)
        before = digests(r)
        r.execute_command(*DIGEST_CHANGES[kind])
        after = digests(r)
        assert after[0] != before[0], f"{kind}: DEBUG DIGEST did not see {DIGEST_CHANGES[kind]}"
        assert after[1] != before[1], f"{kind}: DIGEST-VALUE did not see {DIGEST_CHANGES[kind]}"


def test_debug_digest_depends_on_content_not_history(r):
    # The same members added in another order, and through another encoding, digest the same.
    r.sadd("a", *range(600))
    r.srem("a", *range(100, 600))          # a hashtable-born set that shrank back to 100 members
    r.sadd("b", *reversed(range(100)))     # an intset from the start
    r.hset("h1", mapping={f"f{i}": i for i in range(200)})
    r.hset("h2", mapping={f"f{i}": i for i in reversed(range(200))})
    r.zadd("z1", {f"m{i}": i for i in range(50)})
    r.zadd("z2", {f"m{i}": i for i in reversed(range(50))})
    values = r.execute_command("DEBUG", "DIGEST-VALUE", "a", "b", "h1", "h2", "z1", "z2", "missing")
    assert values[0] == values[1] and values[2] == values[3] and values[4] == values[5]
    assert len(set(values[0::2])) == 4 and values[6] == b"0" * 40
    # The keyspace digest covers names and deadlines too.
    before = r.execute_command("DEBUG", "DIGEST")
    r.rename("h2", "h3")
    renamed = r.execute_command("DEBUG", "DIGEST")
    r.pexpireat("h3", 10 ** 13)
    assert len({before, renamed, r.execute_command("DEBUG", "DIGEST")}) == 3
    r.persist("h3")
    r.rename("h3", "h2")
    assert r.execute_command("DEBUG", "DIGEST") == before
