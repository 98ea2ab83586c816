"""Publish/subscribe through real clients: redis-py's PubSub, redis-cli SUBSCRIBE, and raw
connections for what clients leave to the server (a subscriber that stops reading).
tests/differential/test_pubsub.py compares the protocol with redis-server byte for byte."""

import subprocess

import pytest

from support.server import wait_for


def next_message(pubsub):
    message = pubsub.get_message(timeout=10)
    assert message is not None, "no message within 10 s"
    return message


def test_redis_py_subscriber_gets_channel_then_pattern_messages(server, r):
    p = r.pubsub()
    p.subscribe("orders")
    p.psubscribe("ord*", "o*")
    confirmations = [next_message(p) for _ in range(3)]
    assert [(m["type"], m["channel"], m["data"]) for m in confirmations] == [
        ("subscribe", b"orders", 1), ("psubscribe", b"ord*", 2), ("psubscribe", b"o*", 3)]
    assert r.publish("orders", "42") == 3
    first = next_message(p)
    assert (first["type"], first["channel"], first["data"]) == ("message", b"orders", b"42")
    patterns = sorted((m["type"], m["pattern"], m["channel"], m["data"])
                      for m in (next_message(p), next_message(p)))
    assert patterns == [("pmessage", b"o*", b"orders", b"42"), ("pmessage", b"ord*", b"orders", b"42")]
    assert r.publish("other", "x") == 1  # only o*
    assert next_message(p)["pattern"] == b"o*"
    assert r.pubsub_numsub("orders", "other") == [(b"orders", 1), (b"other", 0)]
    assert r.pubsub_numpat() == 2
    assert r.pubsub_channels() == [b"orders"]
    info = r.info("stats")
    assert (info["pubsub_channels"], info["pubsub_patterns"]) == (1, 2)
    p.close()
    # The subscriber's connection is gone: so are its subscriptions.
    wait_for(lambda: r.pubsub_numsub("orders") == [(b"orders", 0)] and r.pubsub_numpat() == 0,
             what="subscriptions dropped with the connection")


def test_redis_cli_subscribe_prints_published_messages(server, r):
    cli = subprocess.Popen(["redis-cli", *server.cli_args(), "--csv", "SUBSCRIBE", "alerts"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = cli.stdout.readline()
        while line.startswith("Reading messages"):  # redis-cli's banner on a terminal-less run
            line = cli.stdout.readline()
        assert line.strip() == '"subscribe","alerts",1'
        wait_for(lambda: r.pubsub_numsub("alerts") == [(b"alerts", 1)], what="redis-cli subscribed")
        for text in ("disk full", "disk ok"):
            assert r.publish("alerts", text) == 1
            assert cli.stdout.readline().strip() == f'"message","alerts","{text}"'
    finally:
        cli.kill()
        cli.wait()


def test_a_burst_of_publishes_reaches_every_subscriber_in_order(server, r):
    subscribers = [server.raw() for _ in range(3)]
    try:
        for conn in subscribers:
            conn.call("SUBSCRIBE", "burst")
        pipe = r.pipeline(transaction=False)
        for i in range(2000):
            pipe.publish("burst", str(i))
        assert pipe.execute() == [3] * 2000
        for conn in subscribers:
            got = [conn.read_reply(timeout=10).py() for _ in range(2000)]
            assert got == [[b"message", b"burst", str(i).encode()] for i in range(2000)]
    finally:
        for conn in subscribers:
            conn.close()


def test_client_list_kill_and_reset_know_subscribers(server, r):
    sub = server.raw()
    try:
        sub.call("CLIENT", "SETNAME", "listener")
        sub.send_command("SUBSCRIBE", "a", "b")
        assert [x.py()[2] for x in sub.read_replies(2)] == [1, 2]
        sub.call("PSUBSCRIBE", "c*")
        sub.call("SSUBSCRIBE", "s")
        line = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode()
        fields = dict(item.split("=", 1) for item in line.split())
        assert (fields["name"], fields["sub"], fields["psub"], fields["ssub"]) == ("listener", "2", "1", "1")
        assert "P" in fields["flags"]
        normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
        assert "name=listener" not in normal
        assert sub.call("RESET").raw == b"+RESET\r\n"
        assert r.pubsub_numsub("a", "b") == [(b"a", 0), (b"b", 0)]
        assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s") == [b"s", 0]
        assert r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == b""
        sub.call("SUBSCRIBE", "a")
        assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
        wait_for(lambda: r.pubsub_numsub("a") == [(b"a", 0)], what="killed subscriber gone")
    finally:
        sub.close()


def test_a_subscriber_that_stops_reading_is_cut_at_the_pubsub_limit(server, r):
    r.config_set("client-output-buffer-limit", "pubsub 256kb 0 0")
    stalled = server.raw()
    try:
        assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"].endswith(
            "pubsub 262144 0 0")
        stalled.call("SUBSCRIBE", "firehose")
        before = r.info("stats")["client_output_buffer_limit_disconnections"]
        payload = "x" * 4096
        for _ in range(10):  # 40 MB: far past the socket buffers and the limit
            pipe = r.pipeline(transaction=False)
            for _ in range(1000):
                pipe.publish("firehose", payload)
            pipe.execute()
            if r.pubsub_numsub("firehose") == [(b"firehose", 0)]:
                break
        wait_for(lambda: r.pubsub_numsub("firehose") == [(b"firehose", 0)],
                 what="the stalled subscriber disconnected")
        assert r.info("stats")["client_output_buffer_limit_disconnections"] == before + 1
    finally:
        stalled.close()
        r.config_set("client-output-buffer-limit", "pubsub 32mb 8mb 60")


@pytest.mark.parametrize("value, error", [
    ("foo 1 2 3", "Invalid client class specified in buffer limit configuration."),
    ("normal 1 2", "Wrong number of arguments in buffer limit configuration."),
    ("normal -1 0 0", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
    ("normal 1x 0 0", "Error in hard, soft or soft_seconds setting in buffer limit configuration."),
])
def test_output_buffer_limit_config_errors_are_redis_texts(raw, value, error):
    reply = raw.call("CONFIG", "SET", "client-output-buffer-limit", value)
    assert reply.raw == (b"-ERR CONFIG SET failed (possibly related to argument "
                         b"'client-output-buffer-limit') - " + error.encode() + b"\r\n")


def test_output_buffer_limit_config_round_trip(raw):
    assert raw.call("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 2kb 10 replica 1 2 3").raw == b"+OK\r\n"
    try:
        value = raw.call("CONFIG", "GET", "client-output-buffer-limit").py()[1]
        assert value == b"normal 0 0 0 slave 1 2 3 pubsub 1048576 2048 10"
    finally:
        raw.call("CONFIG", "SET", "client-output-buffer-limit",
                 "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")


# ---- A client's own messages follow its reply (Redis 7.2) ---------------------------------------

def own_push(channel: bytes, message: bytes) -> bytes:
    return b">3\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(channel), channel, len(message), message)


@pytest.mark.redis72
def test_messages_a_client_publishes_to_itself_follow_its_reply(raw):
    # Redis 7.0 wrote them at once: inside the EXEC array, before a script's reply.
    assert raw.call("HELLO", "3").raw.startswith(b"%")
    assert raw.call("SUBSCRIBE", "ch").raw == b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"
    raw.call("MULTI")
    assert raw.call("PUBLISH", "ch", "in-multi").raw == b"+QUEUED\r\n"
    assert raw.call("EXEC").raw == b"*1\r\n:1\r\n"
    assert raw.read_reply().raw == own_push(b"ch", b"in-multi")
    assert raw.call("EVAL", "redis.call('publish', 'ch', 'in-script') return 'done'", "0").raw == \
        b"$4\r\ndone\r\n"
    assert raw.read_reply().raw == own_push(b"ch", b"in-script")
    assert raw.call("PUBLISH", "ch", "plain").raw == b":1\r\n"
    assert raw.read_reply().raw == own_push(b"ch", b"plain")
    # A keyspace event of the client's own write follows the write's reply too.
    raw.call("CONFIG", "SET", "notify-keyspace-events", "KA")
    raw.call("SUBSCRIBE", "__keyspace@0__:k")
    assert raw.call("SET", "k", "v").raw == b"+OK\r\n"
    assert raw.read_reply().raw == own_push(b"__keyspace@0__:k", b"set")
    assert raw.call("PING").raw == b"+PONG\r\n"
    assert not raw.has_pending_bytes()
    raw.call("CONFIG", "SET", "notify-keyspace-events", "")
