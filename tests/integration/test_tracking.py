"""Client-side caching through redis-py 4.3.4, which has no caching API of its own: a cache kept
by the application, invalidated by a second connection subscribed to __redis__:invalidate (the
RESP2 way: CLIENT TRACKING ... REDIRECT <that connection's id>)."""

import redis


def read_invalidation(pubsub, timeout=5.0):
    """The next message on __redis__:invalidate: a list of keys, or None for "every key"."""
    while True:
        message = pubsub.get_message(timeout=timeout)
        assert message is not None, "no invalidation arrived"
        if message["type"] == "message":
            assert message["channel"] == b"__redis__:invalidate"
            return message["data"]


def subscribed_listener(server, r):
    """A connection subscribed to __redis__:invalidate: (client, pubsub, its CLIENT ID)."""
    listener = redis.Redis(unix_socket_path=server.unix_path)
    pubsub = listener.pubsub()
    pubsub.subscribe("__redis__:invalidate")
    assert pubsub.get_message(timeout=5)["type"] == "subscribe"
    return listener, pubsub, next(int(c["id"]) for c in r.client_list() if "P" in c["flags"])


def test_cache_invalidated_through_a_redirect(server, r):
    listener, pubsub, listener_id = subscribed_listener(server, r)

    reader = redis.Redis(unix_socket_path=server.unix_path, single_connection_client=True)
    assert reader.execute_command("CLIENT", "TRACKING", "on", "REDIRECT", listener_id) == b"OK"
    assert reader.execute_command("CLIENT", "GETREDIR") == listener_id
    cache = {}

    def cached_get(key):
        if key not in cache:
            cache[key] = reader.get(key)
        return cache[key]

    r.mset({"user:1": "alice", "user:2": "bob"})
    assert cached_get("user:1") == b"alice" and cached_get("user:2") == b"bob"
    r.set("user:1", "carol")
    keys = read_invalidation(pubsub)
    assert keys == [b"user:1"]
    for key in keys:
        cache.pop(key.decode(), None)
    assert cached_get("user:1") == b"carol"
    assert cached_get("user:2") == b"bob"  # still cached: nothing said it changed

    r.flushdb()
    assert read_invalidation(pubsub) is None  # every key
    cache.clear()
    assert cached_get("user:1") is None

    info = reader.execute_command("CLIENT", "TRACKINGINFO")
    assert info == [b"flags", [b"on"], b"redirect", listener_id, b"prefixes", []]
    stats = r.info("stats")
    assert stats["tracking_total_keys"] == 1 and stats["tracking_total_items"] == 1
    assert r.info("clients")["tracking_clients"] == 1
    reader.close()
    pubsub.close()
    listener.close()


def test_bcast_prefixes_through_redis_py(server, r):
    listener, pubsub, listener_id = subscribed_listener(server, r)
    watcher = redis.Redis(unix_socket_path=server.unix_path, single_connection_client=True)
    assert watcher.execute_command("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "cfg:",
                                   "REDIRECT", listener_id) == b"OK"
    line = next(c for c in r.client_list() if "B" in c["flags"])  # U: a Unix socket
    assert line["flags"] == "tBU" and int(line["redir"]) == listener_id
    pipe = r.pipeline(transaction=False)
    pipe.set("cfg:b", 1).set("other", 1).set("cfg:a", 1)
    pipe.execute()
    seen = []
    while len(seen) < 2:
        seen += read_invalidation(pubsub)
    assert sorted(seen) == [b"cfg:a", b"cfg:b"]
    assert r.info("stats")["tracking_total_prefixes"] == 1
    watcher.close()
    pubsub.close()
    listener.close()
