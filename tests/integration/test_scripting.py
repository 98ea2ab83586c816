"""Scripts and functions as applications use them: redis-py's Script and Lock, EVALSHA pipelines
that fall back on NOSCRIPT, a distributed lock with safe unlock and extension, a sliding-window
rate limiter; a slow script that other clients see as BUSY until SCRIPT KILL ends it; FUNCTION
DUMP/RESTORE between servers (Redis's among them); script effects in the append-only file and
functions in snapshots; Redis 7.2's behaviour where the reference 7.0 differs; and scripts that
misbehave (deep recursion, huge replies, runaway writes under maxmemory)."""

from __future__ import annotations

import hashlib
import socket
import threading
from pathlib import Path

import pytest
import redis

from support.server import wait_for

INCR = "return redis.call('INCR', KEYS[1])"


# ---- redis-py's own script helpers ----------------------------------------------------------------

def test_register_script_survives_a_flushed_cache(r):
    incr = r.register_script(INCR)
    assert incr(keys=["counter"]) == 1
    r.script_flush()
    assert r.script_exists(incr.sha) == [False]
    assert incr(keys=["counter"]) == 2          # NOSCRIPT, then redis-py loads it again
    assert r.script_exists(incr.sha) == [True]
    assert incr.sha == hashlib.sha1(INCR.encode()).hexdigest()


def test_evalsha_pipeline_falls_back_on_noscript(r):
    incr = r.register_script(INCR)
    pipe = r.pipeline()
    for _ in range(5):
        incr(keys=["p"], client=pipe)
    assert pipe.execute() == [1, 2, 3, 4, 5]     # the pipeline loads the script first
    r.script_flush()
    raw = r.pipeline(transaction=False)
    raw.evalsha(incr.sha, 1, "p")
    raw.get("p")
    results = raw.execute(raise_on_error=False)
    assert isinstance(results[0], redis.exceptions.NoScriptError)
    assert results[1] == b"5"
    assert r.eval(INCR, 1, "p") == 6 and r.evalsha(incr.sha, 1, "p") == 7


def test_redis_py_lock(server):
    first, second = server.client(), server.client()
    first.flushall()
    lock = first.lock("resource", timeout=30, blocking=False)
    other = second.lock("resource", timeout=30, blocking=False)
    assert lock.acquire()
    assert not other.acquire()
    assert lock.extend(10)                       # Lock's extension is a script
    assert 30000 < first.pttl("resource") <= 40000
    assert lock.reacquire() and first.pttl("resource") <= 30000
    other.local.token = b"not-the-owner"
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        other.release()                          # the safe unlock refuses a foreign token
    lock.release()
    assert first.exists("resource") == 0
    assert other.acquire()
    other.release()


# ---- applications written with scripts -------------------------------------------------------------

UNLOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


class DistributedLock:
    """SET NX PX to take the lock; compare-and-delete and compare-and-extend as scripts."""

    def __init__(self, client, name: str):
        self.client, self.name = client, name
        self.unlock = client.register_script(UNLOCK)
        self.extend = client.register_script(EXTEND)

    def acquire(self, token: str, ms: int) -> bool:
        return bool(self.client.set(self.name, token, nx=True, px=ms))

    def release(self, token: str) -> bool:
        return self.unlock(keys=[self.name], args=[token]) == 1

    def prolong(self, token: str, ms: int) -> bool:
        return self.extend(keys=[self.name], args=[token, ms]) == 1


def test_distributed_lock_with_safe_unlock_and_extension(server):
    clients = [server.client() for _ in range(4)]
    clients[0].flushall()
    locks = [DistributedLock(c, "lock:orders") for c in clients]
    assert locks[0].acquire("w0", 10000)
    assert not any(lock.acquire(f"w{i}", 10000) for i, lock in enumerate(locks[1:], 1))
    assert not locks[1].release("w1") and clients[0].get("lock:orders") == b"w0"
    assert not locks[2].prolong("w2", 60000)
    assert locks[0].prolong("w0", 60000) and clients[0].pttl("lock:orders") > 50000
    assert locks[0].release("w0") and not locks[0].release("w0")

    # Mutual exclusion under contention: each worker increments a shared counter only while
    # holding the lock, read-modify-write, without atomic INCR; no increment may be lost.
    done = []

    def worker(i):
        lock, client = locks[i], clients[i]
        token, rounds = f"t{i}", 0
        while rounds < 25:
            if not lock.acquire(token, 5000):
                continue
            value = int(client.get("shared") or 0)
            client.set("shared", value + 1)
            assert lock.release(token)
            rounds += 1
        done.append(i)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(done) == [0, 1, 2, 3]
    assert clients[0].get("shared") == b"100"


SLIDING_WINDOW = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) >= limit then
  return 0
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 1
"""


def test_sliding_window_rate_limiter_with_evalsha(r):
    sha = r.script_load(SLIDING_WINDOW)

    def allow(user, now_ms, request_id):
        return r.evalsha(sha, 1, f"rate:{user}", now_ms, 1000, 5, request_id) == 1

    t0 = 1_700_000_000_000
    assert [allow("ann", t0 + i, f"a{i}") for i in range(7)] == [True] * 5 + [False] * 2
    assert allow("bob", t0, "b0")                      # another user has a window of its own
    assert not allow("ann", t0 + 999, "a7")            # the first request is still in the window
    assert allow("ann", t0 + 1000, "a8")               # it has left the window: one slot frees
    assert not allow("ann", t0 + 1000, "a9")
    assert [allow("ann", t0 + 2500 + i, f"c{i}") for i in range(6)] == [True] * 5 + [False]
    assert r.zcard("rate:ann") == 5 and 0 < r.pttl("rate:ann") <= 1000


def test_rate_limiter_incr_pexpire_pttl(r):
    limiter = r.register_script("""
        local n = redis.call('INCR', KEYS[1])
        if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
        return {n, redis.call('PTTL', KEYS[1])}
    """)
    replies = [limiter(keys=["rl"], args=[60000]) for _ in range(3)]
    assert [n for n, _ in replies] == [1, 2, 3]
    assert all(0 < ttl <= 60000 for _, ttl in replies)


# ---- busy scripts ---------------------------------------------------------------------------------

LOOP = "local i = 0 while true do i = i + 1 end"


def run_in_thread(fn):
    result = {}

    def target():
        try:
            result["value"] = fn()
        except Exception as exc:            # the reply of the killed script
            result["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result


def busy_error(client):
    try:
        client.ping()
    except redis.exceptions.ResponseError as exc:
        return str(exc)
    except redis.exceptions.BusyLoadingError as exc:
        return str(exc)
    return None


def test_slow_script_is_busy_until_script_kill(server):
    admin = server.client()
    admin.config_set("busy-reply-threshold", 50)
    try:
        runner = server.client()
        thread, result = run_in_thread(lambda: runner.eval(LOOP, 0))
        text = wait_for(lambda: busy_error(admin), what="BUSY from another client")
        assert "busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE" in text
        with pytest.raises(redis.exceptions.ResponseError, match="BUSY"):
            admin.execute_command("FUNCTION", "LIST")
        assert admin.execute_command("SCRIPT", "KILL") == b"OK"
        thread.join(10)
        assert "Script killed by user with SCRIPT KILL" in str(result["error"])
        assert admin.ping()
        with pytest.raises(redis.exceptions.ResponseError, match="NOTBUSY"):
            admin.execute_command("SCRIPT", "KILL")
    finally:
        admin.config_set("busy-reply-threshold", 5000)


def test_slow_function_is_killed_with_function_kill(server):
    admin = server.client()
    admin.config_set("busy-reply-threshold", 50)
    try:
        admin.execute_command("FUNCTION", "LOAD", "REPLACE",
                              "#!lua name=slow\nredis.register_function('spin', function() " + LOOP + " end)")
        runner = server.client()
        thread, result = run_in_thread(lambda: runner.execute_command("FCALL", "spin", 0))
        text = wait_for(lambda: busy_error(admin), what="BUSY from another client")
        assert "FUNCTION KILL" in text
        stats = admin.execute_command("FUNCTION", "STATS")
        assert stats[1][1] == b"spin" and stats[1][3] == [b"FCALL", b"spin", b"0"]
        with pytest.raises(redis.exceptions.ResponseError,
                           match="^BUSY Redis is busy running a script. You can only call FUNCTION KILL"):
            admin.execute_command("SCRIPT", "KILL")
        assert admin.execute_command("FUNCTION", "KILL") == b"OK"
        thread.join(10)
        assert "script: spin, on @user_function:2." in str(result["error"])
    finally:
        admin.config_set("busy-reply-threshold", 5000)
        admin.execute_command("FUNCTION", "FLUSH")


def test_a_script_that_wrote_is_unkillable_and_shutdown_nosave_ends_it(make_server):
    srv = make_server(options={"busy-reply-threshold": "50"})
    admin, runner = srv.client(), srv.client()
    thread, result = run_in_thread(lambda: runner.eval("redis.call('SET', 'w', '1') " + LOOP, 0))
    wait_for(lambda: busy_error(admin), what="BUSY")
    with pytest.raises(redis.exceptions.ResponseError, match="UNKILLABLE Sorry the script already executed"):
        admin.execute_command("SCRIPT", "KILL")
    with pytest.raises(redis.exceptions.ResponseError, match="BUSY"):
        admin.execute_command("SHUTDOWN")           # only NOSAVE is served now
    srv.stop_requested = True
    try:
        admin.execute_command("SHUTDOWN", "NOSAVE")
    except redis.exceptions.ConnectionError:
        pass
    assert srv.proc.wait(10) == 0
    thread.join(10)
    assert "error" in result


# ---- effects, persistence, replication of functions ---------------------------------------------

EVERY_TYPE = """
redis.call('SET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], 'f', ARGV[1], 'g', 'x')
redis.call('RPUSH', KEYS[3], 'a', ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[1], 'm' .. ARGV[1])
redis.call('INCRBYFLOAT', KEYS[6], '1.5')
redis.call('EXPIRE', KEYS[1], 1000)
redis.call('SPOP', KEYS[4])
redis.call('SADD', KEYS[4], 'kept')
redis.call('SELECT', 1)
return redis.call('SET', 'in-db-1', ARGV[1])
"""


def digest(client):
    return client.execute_command("DEBUG", "DIGEST")     # every database


def test_the_aof_after_scripts_replays_to_the_same_dataset(make_server):
    srv = make_server(options={"appendonly": "yes"})
    client = srv.client()
    script = client.register_script(EVERY_TYPE)
    for i in range(50):
        script(keys=[f"s{i}", f"h{i % 7}", f"l{i % 5}", f"st{i % 3}", "z", "f"], args=[i])
    client.execute_command("FUNCTION", "LOAD",
                           "#!lua name=app\nredis.register_function('bump', function(keys) "
                           "return redis.call('INCR', keys[1]) end)")
    for _ in range(3):
        client.execute_command("FCALL", "bump", 1, "bumped")
    client.eval("redis.set_repl(redis.REPL_NONE) redis.call('SET', 'not-logged', 1) "
                "redis.set_repl(redis.REPL_ALL) return redis.call('SET', 'logged', 1)", 0)
    client.eval("return redis.call('GET', 'logged')", 0)        # reads log nothing
    assert client.get("not-logged") == b"1"
    client.execute_command("SELECT", 0)
    aof = b"".join(p.read_bytes() for p in Path(srv.dir, "appendonlydir").glob("*.incr.aof"))
    assert b"not-logged" not in aof and b"eval" not in aof.lower()
    assert b"MULTI" in aof and b"FUNCTION" in aof.upper() and b"SELECT\r\n$1\r\n1" in aof
    client.delete("not-logged")    # the unlogged write is absent after a replay, as here now
    before = digest(client)
    srv.restart()
    client = srv.client()
    assert digest(client) == before
    assert client.execute_command("FCALL", "bump", 1, "bumped") == 4


def test_a_snapshot_keeps_the_functions_not_the_script_cache(make_server):
    srv = make_server()
    client = srv.client()
    client.execute_command("FUNCTION", "LOAD",
                           "#!lua name=kept\nredis.register_function{function_name='hello', "
                           "callback=function(keys, args) return 'hi ' .. args[1] end, flags={'no-writes'}}")
    sha = client.script_load("return 1")
    client.save()
    srv.restart()
    client = srv.client()
    assert client.execute_command("FCALL_RO", "hello", 0, "there") == b"hi there"
    assert client.script_exists(sha) == [False]
    info = client.info("memory")
    assert info["number_of_functions"] == 1 and info["number_of_libraries"] == 1
    assert info["number_of_cached_scripts"] == 0


def test_function_dump_restores_into_another_server_and_into_redis(server, make_server, reference_server):
    source = server.client()
    source.execute_command("FUNCTION", "FLUSH")
    libraries = ["#!lua name=one\nredis.register_function('one', function() return 1 end)",
                 "#!lua name=two\nredis.register_function('two', function(k, a) return a[1] .. string.rep('!', 300) end)"]
    for code in libraries:
        source.execute_command("FUNCTION", "LOAD", code)
    payload = source.execute_command("FUNCTION", "DUMP")
    for target in (make_server().client(), reference_server.client()):
        target.execute_command("FUNCTION", "FLUSH")
        assert target.execute_command("FUNCTION", "RESTORE", payload) == b"OK"
        assert target.execute_command("FCALL", "one", 0) == 1
        assert target.execute_command("FCALL", "two", 0, "x") == b"x" + b"!" * 300
        # And back: Redis's payload (LZF-compressed code) restores into Goblin.
        back = target.execute_command("FUNCTION", "DUMP")
        source.execute_command("FUNCTION", "RESTORE", back, "REPLACE")
        assert source.execute_command("FCALL", "two", 0, "y") == b"y" + b"!" * 300
        target.execute_command("FUNCTION", "FLUSH")
    source.execute_command("FUNCTION", "FLUSH")


# ---- Redis 7.2 where the reference differs ---------------------------------------------------------

@pytest.mark.redis72
def test_blocking_commands_answer_at_once_inside_scripts(r):
    # 7.2 lets scripts call blocking commands; they never block there (7.0 refused them).
    assert r.eval("return redis.call('BLPOP', 'empty', 0)", 0) is None
    assert r.eval("return redis.call('BZPOPMIN', 'empty', 0)", 0) is None
    r.rpush("q", "job")
    assert r.eval("return redis.call('BLMOVE', 'q', 'done', 'LEFT', 'RIGHT', 0)", 0) == b"job"


def test_math_random_draws_redis_sequence_from_startup(make_server):
    # One generator per process, seeded once at startup and never per script (Redis 7): the
    # first scripts after a start draw what redis-server 7.0.15 draws after its start.
    client = make_server().client()
    assert client.eval("return {math.random(1000), math.random(1000)}", 0) == [397, 841]
    assert client.eval("return math.random(1000)", 0) == 354
    assert client.eval("math.randomseed(7) return {math.random(1000), math.random(1, 5)}", 0) == \
        client.eval("math.randomseed(7) return {math.random(1000), math.random(1, 5)}", 0)


@pytest.mark.redis72
def test_time_stands_still_inside_a_script(r):
    first, second = r.eval("local a = redis.call('TIME') local x = 0 for i = 1, 3000000 do x = x + i end "
                           "local b = redis.call('TIME') return {a[1] .. '.' .. a[2], b[1] .. '.' .. b[2]}", 0)
    assert first == second


@pytest.mark.goblin
def test_script_debug_answers_as_a_server_without_the_debugger(raw):
    assert raw.call("SCRIPT", "DEBUG", "NO").raw == b"+OK\r\n"
    assert raw.call("SCRIPT", "DEBUG", "YES").raw.startswith(b"-ERR SCRIPT DEBUG is not supported")


# ---- what scripts do to other clients --------------------------------------------------------------

def test_a_script_wakes_blocked_clients_after_it_ends(server, r):
    waiter = server.client()
    thread, result = run_in_thread(lambda: waiter.blpop("jobs", 10))
    wait_for(lambda: r.info("clients")["blocked_clients"] == 1, what="the waiter to block")
    assert r.eval("redis.call('RPUSH', KEYS[1], 'a', 'b') return redis.call('LLEN', KEYS[1])", 1, "jobs") == 2
    thread.join(10)
    assert result["value"] == (b"jobs", b"a")
    assert r.lrange("jobs", 0, -1) == [b"b"]


def test_publish_from_a_script_reaches_subscribers(server, r):
    sub = server.client().pubsub()
    sub.subscribe("news")
    wait_for(lambda: sub.get_message(timeout=0.1), what="the subscribe confirmation")
    assert r.eval("return redis.call('PUBLISH', 'news', ARGV[1])", 0, "hello") == 1
    message = wait_for(lambda: sub.get_message(timeout=0.1), what="the message")
    assert message["data"] == b"hello"
    sub.close()


def test_monitor_shows_the_commands_a_script_runs(server, r):
    monitor = server.raw()
    assert monitor.call("MONITOR").raw == b"+OK\r\n"
    r.eval("redis.call('SET', 'a', '1') return redis.call('GET', 'a')", 0)
    lines = [monitor.read_reply().value for _ in range(3)]
    assert b'"eval"' in lines[0].lower() and b"[0 127.0.0.1:" in lines[0]
    assert lines[1].endswith(b'[0 lua] "SET" "a" "1"') and lines[2].endswith(b'[0 lua] "GET" "a"')
    monitor.close()


def test_info_memory_counts_scripts(r):
    r.script_flush()
    base = r.info("memory")
    for i in range(10):
        r.script_load(f"return {i}")
    info = r.info("memory")
    assert info["number_of_cached_scripts"] == 10
    assert info["used_memory_scripts_eval"] > base["used_memory_scripts_eval"]
    assert info["used_memory_vm_eval"] == info["used_memory_lua"] > 0
    assert info["used_memory_vm_total"] == info["used_memory_vm_eval"] + info["used_memory_vm_functions"]


# ---- scripts that misbehave ----------------------------------------------------------------------

def read_until(sock, suffix: bytes) -> bytes:
    data = b""
    while not data.endswith(suffix):
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    return data


def test_runaway_scripts_get_errors_and_the_server_keeps_serving(server, r):
    with pytest.raises(redis.exceptions.ResponseError, match="stack overflow"):
        r.eval("local function f(n) return f(n + 1) + 1 end return f(1)", 0)
    big = r.eval("local t = {} for i = 1, 200000 do t[i] = i end return t", 0)
    assert len(big) == 200000 and big[-1] == 200000
    assert len(r.eval("return string.rep('x', 20 * 1024 * 1024)", 0)) == 20 * 1024 * 1024
    with pytest.raises(redis.exceptions.ResponseError, match="This Redis command is not allowed from script"):
        r.eval("return redis.call('SUBSCRIBE', 'x')", 0)
    # A table holding itself nests until the Lua stack is full, then the reply ends in an error.
    # (Read as bytes: the reply nests too deep for a recursive parser.)
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"EVAL \"local t = {} t[1] = t return t\" 0\r\n")
        nested = read_until(sock, b"-ERR reached lua stack limit\r\n")
    assert nested.startswith(b"*1\r\n*1\r\n") and nested.count(b"*1\r\n") > 1000
    assert r.ping()


def test_a_library_that_loops_at_load_times_out(r):
    with pytest.raises(redis.exceptions.ResponseError) as info:
        r.execute_command("FUNCTION", "LOAD", "#!lua name=spin\nlocal i = 0 while true do i = i + 1 end")
    assert str(info.value) == "Error registering functions: ERR FUNCTION LOAD timeout"
    assert r.execute_command("FUNCTION", "LIST") == [] and r.ping()


@pytest.mark.redis72
def test_scripts_inside_transactions(r):
    pipe = r.pipeline(transaction=True)
    pipe.eval("return redis.call('INCR', KEYS[1])", 1, "t")
    pipe.eval("return redis.call('BLPOP', 'empty', 0)", 0)   # no blocking inside EXEC
    pipe.incr("t")
    assert pipe.execute() == [1, None, 2]


def test_scripts_under_maxmemory(r):
    r.set("filler", "x" * 200_000)
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used - 100_000)
    r.config_set("maxmemory-policy", "noeviction")
    try:
        # A script without a shebang starts; its first write that may grow memory is refused.
        with pytest.raises(redis.exceptions.ResponseError, match="^OOM command not allowed.*script:"):
            r.eval("return redis.call('SET', 'a', 'b')", 0)
        assert r.eval("return redis.call('GET', 'filler') ~= nil", 0) == 1
        # Once it has written, later writes go through: a script is never left half done.
        assert r.eval("redis.call('DEL', 'nothing') redis.call('SET', 'a', 'b') "
                      "return redis.call('SET', 'c', 'd')", 0) == b"OK"
        # A script with flags is refused before it runs, unless it may (allow-oom, no-writes).
        with pytest.raises(redis.exceptions.ResponseError, match="^OOM command not allowed when used memory > 'maxmemory'.$"):
            r.eval("#!lua\nreturn 1", 0)
        assert r.eval("#!lua flags=allow-oom\nreturn redis.call('SET', 'e', 'f')", 0) == b"OK"
        assert r.eval("#!lua flags=no-writes\nreturn redis.call('GET', 'e')", 0) == b"f"
    finally:
        r.config_set("maxmemory", 0)


@pytest.mark.goblin
def test_a_script_that_allocates_without_end_gets_an_error(r):
    # The interpreter's heap may grow to lua-memory-limit; past it allocations fail inside Lua.
    assert r.config_get("lua-memory-limit") == {"lua-memory-limit": "1073741824"}
    r.config_set("lua-memory-limit", 64 * 1024 * 1024)
    try:
        with pytest.raises(redis.exceptions.ResponseError, match="not enough memory"):
            r.eval("local t = {} for i = 1, 1e9 do t[i] = {i, i + 1, i + 2, i + 3} end", 0)
        assert r.eval("return #string.rep('y', 1000)", 0) == 1000   # and the next script runs
        assert r.info("memory")["used_memory_vm_eval"] < 64 * 1024 * 1024
        with pytest.raises(redis.exceptions.ResponseError, match="not enough memory"):
            r.eval("return #string.rep('x', 2^31 - 1)", 0)
    finally:
        r.config_set("lua-memory-limit", "1gb")
    assert r.ping()


def test_a_full_cache_still_runs_read_only_scripts(r):
    # maxmemory bounds the data, not the interpreter: a cache kept full (here, at one byte) still
    # runs scripts that read, and refuses only their writes, as Redis does.
    r.set("k", "v")
    r.config_set("maxmemory", 1)
    r.config_set("maxmemory-policy", "noeviction")
    try:
        assert r.eval("local t = {} for i = 1, 10000 do t[i] = tostring(i) end "
                      "return redis.call('GET', KEYS[1])", 1, "k") == b"v"
        with pytest.raises(redis.exceptions.ResponseError, match="^OOM command not allowed"):
            r.eval("return redis.call('SET', KEYS[1], 'w')", 1, "k")
    finally:
        r.config_set("maxmemory", 0)


# ---- os.clock (Redis 7.4) --------------------------------------------------------------------------

def test_scripts_and_functions_time_their_work_with_os_clock_and_nothing_else_of_os(r):
    elapsed = r.eval("local t0 = os.clock() local x = 0 for i = 1, 3000000 do x = x + i end "
                     "local t1 = os.clock() return {type(t0), tostring(t1 > t0), tostring(t1 - t0 < 60)}", 0)
    assert elapsed == [b"number", b"true", b"true"]
    # The rest of Lua's os library (files, environment, exit) is not there.
    assert r.eval("return {type(os.execute), type(os.getenv), type(os.exit), type(os.remove)}", 0) == \
        [b"nil", b"nil", b"nil", b"nil"]
    with pytest.raises(redis.exceptions.ResponseError, match="readonly table"):
        r.eval("os.clock = function() return 0 end", 0)
    with pytest.raises(redis.exceptions.ResponseError, match="readonly table"):
        r.eval("os.execute = function() return 0 end", 0)
    r.execute_command("FUNCTION", "LOAD", "REPLACE",
                      "#!lua name=timing\n"
                      "redis.register_function('cpu', function() return type(os.clock()) end)")
    assert r.execute_command("FCALL", "cpu", "0") == b"number"
