"""maxmemory and eviction against a real goblin-server (tests/differential/test_maxmemory.py
compares the OOM replies with redis-server byte for byte; these check what a limit above zero
does: memory stays under it, each policy picks the keys it should, and the log follows)."""

import pytest
import redis

from support.server import wait_for

VALUE = b"v" * 1000


def used_memory(r) -> int:
    return int(r.info("memory")["used_memory"])


def write(r, keys, ex=None):
    pipe = r.pipeline(transaction=False)
    for key in keys:
        pipe.set(key, VALUE, ex=ex)
    pipe.execute()


# Eviction stops as soon as memory is under the limit; whatever the next command allocates
# before INFO reads the figure (the INFO reply itself, a client buffer) is over it again.
SLACK = 64 * 1024


def settle(r, limit):
    """Eviction that ran out of its time slice goes on before each command and on the tick."""
    wait_for(lambda: used_memory(r) <= limit + SLACK, what="used_memory back under maxmemory")


def age(r, seconds=2):
    """Lets the server's clock run on while it serves nobody (access stamps count seconds)."""
    assert r.execute_command("DEBUG", "SLEEP", str(seconds)) == b"OK"


def test_allkeys_lru_holds_the_limit_and_keeps_the_keys_in_use(make_server):
    srv = make_server(options={"maxmemory-policy": "allkeys-lru"})
    r = srv.client()
    hot = [f"hot:{i}" for i in range(100)]
    cold = [f"cold:{i}" for i in range(6000)]
    write(r, hot)
    write(r, cold)
    age(r)
    pipe = r.pipeline(transaction=False)
    for key in hot:
        pipe.get(key)
    assert all(v == VALUE for v in pipe.execute())
    assert r.object("idletime", "hot:0") == 0 and r.object("idletime", "cold:0") >= 2
    limit = used_memory(r) - 3 * 1024 * 1024  # about half the cold keys must go
    r.config_set("maxmemory", limit)
    written = len(hot) + len(cold)
    for batch in range(20):  # and room for more, used as soon as written
        fresh = [f"fresh:{batch}:{j}" for j in range(50)]
        write(r, fresh)
        written += len(fresh)
    settle(r, limit)
    # In one transaction: a command may evict before it runs while memory hovers at the limit,
    # and an eviction between the two readings would make them disagree.
    pipe = r.pipeline(transaction=True)
    pipe.dbsize()
    pipe.info("stats")
    keys, stats = pipe.execute()
    assert stats["evicted_keys"] > 0
    assert keys + stats["evicted_keys"] == written
    # The pool always holds a key idle for seconds while one is left: none of the keys in use
    # went, only keys idle since before the pause.
    assert r.exists(*hot) == len(hot)
    assert r.exists(*cold) < len(cold) - stats["evicted_keys"] // 2


def test_allkeys_lfu_keeps_the_frequently_used_keys(make_server):
    # With lfu-log-factor 0 every access increments the counter: the frequent keys end far above
    # the 5 a new key starts at.
    srv = make_server(options={"maxmemory-policy": "allkeys-lfu", "lfu-log-factor": "0",
                               "lfu-decay-time": "0"})
    r = srv.client()
    frequent = [f"often:{i}" for i in range(100)]
    write(r, frequent)
    for _ in range(10):
        pipe = r.pipeline(transaction=False)
        for key in frequent:
            pipe.get(key)
        pipe.execute()
    assert r.object("freq", "often:0") == 15
    limit = used_memory(r) + 2 * 1024 * 1024
    r.config_set("maxmemory", limit)
    for batch in range(120):  # 6 MB of keys written once, three times the room
        write(r, [f"once:{batch}:{j}" for j in range(50)])
    settle(r, limit)
    assert r.info("stats")["evicted_keys"] > 0
    assert r.exists(*frequent) == len(frequent)


def test_volatile_lru_spares_keys_without_a_deadline_then_refuses_writes(make_server):
    srv = make_server(options={"maxmemory-policy": "volatile-lru"})
    r = srv.client()
    persistent = [f"p:{i}" for i in range(1000)]
    write(r, persistent)
    limit = used_memory(r) + 2 * 1024 * 1024
    r.config_set("maxmemory", limit)
    volatile = [f"v:{i}" for i in range(6000)]
    for start in range(0, len(volatile), 200):
        write(r, volatile[start:start + 200], ex=3600)
    settle(r, limit)
    assert r.info("stats")["evicted_keys"] > 0
    assert r.exists(*persistent) == len(persistent)
    # Keys without a deadline fill the rest; once no key with one is left, writes are refused.
    with pytest.raises(redis.ResponseError, match="^OOM command not allowed when used memory > 'maxmemory'.$"):
        for i in range(20000):
            r.set(f"p:more:{i}", VALUE)
    assert r.exists(*persistent) == len(persistent)
    assert r.get("p:0") == VALUE  # reads are still served


def test_volatile_ttl_evicts_the_nearest_deadlines_first(make_server):
    srv = make_server(options={"maxmemory-policy": "volatile-ttl"})
    r = srv.client()
    n = 6000
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.set(f"t:{i}", VALUE, ex=100000 + 10 * i)  # deadlines grow with i
    pipe.execute()
    limit = used_memory(r) - 3 * 1024 * 1024  # about half the keys must go
    r.config_set("maxmemory", limit)
    settle(r, limit)
    survivors = [int(k.split(b":")[1]) for k in r.keys("t:*")]
    assert 0 < len(survivors) < n
    # A random choice would leave a mean near n / 2; the nearest of 5 samples leaves late ones.
    assert sum(survivors) / len(survivors) > 0.65 * n


def test_noeviction_refuses_writes_serves_reads_and_deletes(make_server):
    srv = make_server()  # noeviction is the default policy
    r = srv.client()
    write(r, [f"k:{i}" for i in range(2000)])
    limit = used_memory(r) - 512 * 1024
    r.config_set("maxmemory", limit)
    with pytest.raises(redis.ResponseError, match="^OOM "):
        r.set("new", "x")
    with pytest.raises(redis.ResponseError, match="^OOM "):
        r.hset("h", "f", "x")
    assert r.get("k:1") == VALUE
    assert r.dbsize() == 2000
    assert r.info("stats")["evicted_keys"] == 0
    assert r.delete(*[f"k:{i}" for i in range(1000)]) == 1000
    assert r.set("new", "x")


def test_evictions_reach_the_append_only_file(make_server):
    srv = make_server(options={"appendonly": "yes", "appendfsync": "always",
                               "maxmemory-policy": "allkeys-random"})
    r = srv.client()
    write(r, [f"a:{i}" for i in range(500)])
    limit = used_memory(r) + 1024 * 1024
    r.config_set("maxmemory", limit)
    for start in range(0, 4000, 200):
        write(r, [f"b:{i}" for i in range(start, start + 200)])
    settle(r, limit)
    assert r.info("stats")["evicted_keys"] > 0
    before = set(r.keys("*"))
    r.close()
    srv.restart()  # the limit was set at runtime: the restarted server has none

    def loaded():
        with srv.raw() as conn:
            return conn.call("PING").raw == b"+PONG\r\n"  # -LOADING until the log is replayed
    wait_for(loaded, timeout=60, what="the append-only file to be loaded")
    r = srv.client()
    assert set(r.keys("*")) == before


def test_lookups_that_do_not_touch_leave_the_access_time(make_server):
    """GET updates a key's access time; TYPE and EXISTS do not (Redis's LOOKUP_NOTOUCH), nor does
    anything but TOUCH from a CLIENT NO-TOUCH client; the LRU policy reads that time."""
    srv = make_server(options={"maxmemory-policy": "allkeys-lru"})
    r = srv.client()
    quiet = srv.client()
    assert quiet.execute_command("CLIENT", "NO-TOUCH", "on") == b"OK"
    assert "T" in quiet.execute_command("CLIENT", "INFO").decode().split("flags=")[1].split()[0]
    sets = {name: [f"{name}:{i}" for i in range(50)] for name in ("get", "type", "quiet", "touch")}
    empty = used_memory(r)
    for keys in sets.values():
        write(r, keys)
    per_key = (used_memory(r) - empty) // 200  # measured: allocators (and sanitizers) differ
    age(r)
    for key in sets["get"]:
        r.get(key)
    for key in sets["type"]:
        r.type(key)
        r.exists(key)
    for key in sets["quiet"]:
        quiet.get(key)
    quiet.touch(*sets["touch"])
    # Compared with each other, not with the clock: the touched keys were last used at least
    # the two seconds of age() after the others, however long these round trips take.
    idle = {name: [quiet.object("idletime", key) for key in keys] for name, keys in sets.items()}
    touched = max(idle["get"] + idle["touch"])
    assert touched < min(idle["type"]) and touched < min(idle["quiet"]), idle
    limit = used_memory(r) - 50 * per_key  # about half the idle keys must go
    r.config_set("maxmemory", limit)
    settle(r, limit)
    kept = {name: quiet.exists(*keys) for name, keys in sets.items()}
    # Sampled LRU, as Redis's: a sample may hold only recently used keys, so one of those can
    # go; the idle ones go by the dozen.
    assert kept["get"] >= 45 and kept["touch"] >= 45, kept
    assert kept["type"] < 40 and kept["quiet"] < 40, kept
