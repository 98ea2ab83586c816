"""Keyspace notifications through real clients: redis-py's PubSub on `__key*__:*`, redis-cli
`--csv psubscribe`, and the events no differential stream can compare because they depend on
time and memory (active expiry's `expired`, eviction's `evicted`) or on a second client (a
blocked BLPOP served by another client's push). tests/differential/test_keyspace_events.py
compares every command's events with redis-server's."""

import subprocess
import threading

import pytest

from support.server import wait_for


def next_message(pubsub, timeout=10):
    message = pubsub.get_message(timeout=timeout)
    assert message is not None, f"no message within {timeout} s"
    return message


def events(pubsub, n):
    """The next n keyspace messages as (channel, data)."""
    return [(m["channel"], m["data"]) for m in (next_message(pubsub) for _ in range(n))]


@pytest.fixture
def subscriber(r):
    r.config_set("notify-keyspace-events", "KEA")
    p = r.pubsub()
    p.psubscribe("__key*__:*")
    assert next_message(p)["type"] == "psubscribe"
    yield p
    p.close()
    r.config_set("notify-keyspace-events", "")


def test_redis_py_sees_keyspace_and_keyevent_messages(r, subscriber):
    r.set("user:1", "ada")
    r.lpush("jobs", "a", "b")
    r.delete("user:1")
    assert events(subscriber, 6) == [
        (b"__keyspace@0__:user:1", b"set"), (b"__keyevent@0__:set", b"user:1"),
        (b"__keyspace@0__:jobs", b"lpush"), (b"__keyevent@0__:lpush", b"jobs"),
        (b"__keyspace@0__:user:1", b"del"), (b"__keyevent@0__:del", b"user:1")]
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}


def test_classes_select_the_events(r):
    r.config_set("notify-keyspace-events", "Kl")  # keyspace channel, list events only
    p = r.pubsub()
    p.psubscribe("__key*__:*")
    next_message(p)
    r.set("s", "1")
    r.rpush("l", "x")
    r.sadd("set", "m")
    r.rpop("l")
    assert events(p, 2) == [(b"__keyspace@0__:l", b"rpush"), (b"__keyspace@0__:l", b"rpop")]
    assert p.get_message(timeout=0.2) is None  # "del" of the emptied list is class g, not l
    p.close()
    r.config_set("notify-keyspace-events", "")


def test_active_expiry_announces_expired(r, subscriber):
    r.set("session", "x", px=20)
    assert events(subscriber, 4) == [
        (b"__keyspace@0__:session", b"set"), (b"__keyevent@0__:set", b"session"),
        (b"__keyspace@0__:session", b"expire"), (b"__keyevent@0__:expire", b"session")]
    # No command touches the key: only the server's own expiry cycle can announce it.
    assert events(subscriber, 2) == [(b"__keyspace@0__:session", b"expired"),
                                     (b"__keyevent@0__:expired", b"session")]
    assert r.exists("session") == 0


def test_eviction_announces_evicted(make_server):
    srv = make_server(options={"maxmemory-policy": "allkeys-random", "notify-keyspace-events": "Ee"})
    client = srv.client()
    p = client.pubsub()
    p.subscribe("__keyevent@0__:evicted")
    next_message(p)
    client.mset({f"key:{i}": "v" * 100 for i in range(2000)})
    client.config_set("maxmemory", int(client.info("memory")["used_memory"]) - 50_000)
    client.set("trigger", "x")  # a write under the limit makes room first
    message = next_message(p)
    assert message["channel"] == b"__keyevent@0__:evicted"
    assert message["data"].startswith(b"key:") or message["data"] == b"trigger"
    assert int(client.info("stats")["evicted_keys"]) > 0
    p.close()
    client.close()


def test_blocked_pop_served_later_announces_after_the_push(server, r, subscriber):
    waiter = server.client()
    results = []
    thread = threading.Thread(target=lambda: results.append(waiter.blpop("queue", 10)))
    thread.start()
    wait_for(lambda: int(r.info("clients")["blocked_clients"]) == 1, what="BLPOP blocked")
    r.rpush("queue", "job")
    thread.join()
    assert results == [(b"queue", b"job")]
    assert events(subscriber, 6) == [
        (b"__keyspace@0__:queue", b"rpush"), (b"__keyevent@0__:rpush", b"queue"),
        (b"__keyspace@0__:queue", b"lpop"), (b"__keyevent@0__:lpop", b"queue"),
        (b"__keyspace@0__:queue", b"del"), (b"__keyevent@0__:del", b"queue")]
    waiter.close()


def test_redis_cli_csv_psubscribe(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    cli = subprocess.Popen(["redis-cli", *server.cli_args(), "--csv", "PSUBSCRIBE", "__key*__:*"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = cli.stdout.readline()
        while line.startswith("Reading messages"):
            line = cli.stdout.readline()
        assert line.strip() == '"psubscribe","__key*__:*",1'
        wait_for(lambda: r.pubsub_numpat() == 1, what="redis-cli subscribed")
        r.incr("hits")
        assert [cli.stdout.readline().strip() for _ in range(2)] == [
            '"pmessage","__key*__:*","__keyspace@0__:hits","incrby"',
            '"pmessage","__key*__:*","__keyevent@0__:incrby","hits"']
    finally:
        cli.kill()
        cli.wait()
        r.config_set("notify-keyspace-events", "")


def test_bad_class_letters_are_refused(r):
    with pytest.raises(Exception) as failure:
        r.config_set("notify-keyspace-events", "KEq")
    assert "Invalid event class character. Use 'Ag$lshzxeKEtmdn'." in str(failure.value)
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": ""}
