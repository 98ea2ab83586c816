"""CLIENT PAUSE / UNPAUSE: paused commands wait unread in their client's input and run, in
order, when the pause ends (by UNPAUSE or its timeout)."""

from support.server import wait_for


def held_query_bytes(r, name) -> int:
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split())
        if fields["name"] == name:
            return int(fields["qbuf"])
    raise AssertionError(f"no client named {name}")


def test_write_pause_holds_writes_until_unpause(server, r):
    writer = server.raw()
    try:
        writer.call("CLIENT", "SETNAME", "writer")
        assert r.execute_command("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
        writer.send_command("SET", "k", "v")
        writer.send_command("GET", "k")  # queued behind the held SET, in order
        wait_for(lambda: held_query_bytes(r, "writer") > 0, what="the SET waiting in the writer's input")
        assert r.get("k") is None            # reads run during a WRITE pause
        assert r.execute_command("CLIENT", "UNPAUSE") == b"OK"
        assert writer.read_reply(timeout=10).raw == b"+OK\r\n"
        assert writer.read_reply(timeout=10).raw == b"$1\r\nv\r\n"
        assert r.get("k") == b"v"
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
        writer.close()


def test_write_pause_holds_what_may_replicate(server, r):
    # PFCOUNT may write its cache into the string, so Redis holds it like a write; PUBLISH too.
    r.pfadd("h", "a")
    other = server.raw()
    try:
        other.call("CLIENT", "SETNAME", "other")
        assert r.execute_command("CLIENT", "PAUSE", "60000", "WRITE") == b"OK"
        other.send_command("PFCOUNT", "h")
        other.send_command("PUBLISH", "c", "m")
        wait_for(lambda: held_query_bytes(r, "other") > 0, what="the PFCOUNT waiting in the input")
        assert r.get("h")[:4] == b"HYLL"
        assert r.execute_command("CLIENT", "UNPAUSE") == b"OK"
        assert other.read_reply(timeout=10).raw == b":1\r\n"
        assert other.read_reply(timeout=10).raw == b":0\r\n"
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
        other.close()


def test_all_pause_ends_by_itself(server, r):
    other = server.raw()
    try:
        other.call("CLIENT", "SETNAME", "other")
        assert r.execute_command("CLIENT", "PAUSE", "300") == b"OK"
        other.send_command("PING")
        # Even UNPAUSE waits during an ALL pause; the timeout ends it.
        other.send_command("CLIENT", "UNPAUSE")
        assert other.read_reply(timeout=10).raw == b"+PONG\r\n"
        assert other.read_reply(timeout=10).raw == b"+OK\r\n"
        assert r.ping()
    finally:
        other.close()


def test_pause_arguments(raw):
    assert raw.call("CLIENT", "PAUSE", "abc").raw == b"-ERR timeout is not an integer or out of range\r\n"
    assert raw.call("CLIENT", "PAUSE", "-1").raw == b"-ERR timeout is negative\r\n"
    assert raw.call("CLIENT", "PAUSE", "10", "foo").raw == b"-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"
    assert raw.call("CLIENT", "PAUSE", "10", "ALL", "x").raw == (
        b"-ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.\r\n")
    assert raw.call("CLIENT", "PAUSE", "0", "write").raw == b"+OK\r\n"
    assert raw.call("CLIENT", "UNPAUSE").raw == b"+OK\r\n"


def test_a_write_pause_hides_expired_keys_without_deleting_them(make_server, reference_server):
    """Reads see an expired key as missing, but nothing is deleted (nor propagated) until the pause ends."""
    replies = {}
    for name, server in (("goblin", make_server()), ("redis", reference_server)):
        with server.raw() as conn:
            conn.call("FLUSHALL")
            conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            conn.call("SET", "k", "v", "PX", 1)
            conn.call("SET", "other", "x")
            conn.call("CLIENT", "PAUSE", 60000, "WRITE")
            wait_for(lambda: conn.call("EXISTS", "k").raw == b":0\r\n", what="k to expire")
            seen = [conn.call(*command).raw for command in (("GET", "k"), ("DBSIZE",), ("KEYS", "*"))]
            conn.call("CLIENT", "UNPAUSE")
            seen += [conn.call(*command).raw for command in (("GET", "k"), ("DBSIZE",))]
            conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        replies[name] = seen
    assert replies["goblin"] == replies["redis"]
    assert replies["goblin"][1] == b":2\r\n" and replies["goblin"][4] == b":1\r\n"


LIBRARY = ("#!lua name=pauselib\n"
           "redis.register_function{function_name='reader', callback=function() return 1 end, flags={'no-writes'}}\n"
           "redis.register_function('writer', function() return 2 end)")
# Held by CLIENT PAUSE WRITE: writes, what may replicate (PUBLISH, SPUBLISH, PFCOUNT), and scripts
# that do not declare no-writes (no shebang, a shebang without flags, a function without flags).
HELD = [("PUBLISH", "c", "m"), ("SPUBLISH", "c", "m"), ("PFCOUNT", "h"), ("EVAL", "return 1", "0"),
        ("EVAL", "#!lua\nreturn 1", "0"), ("FCALL", "writer", "0"), ("EVALSHA", "0" * 40, "0"),
        ("SORT", "l"), ("GEORADIUS", "g", "0", "0", "1", "km"), ("BITFIELD", "b", "GET", "u8", "0"),
        ("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"), ("FUNCTION", "DELETE", "nolib")]
# Not held: reads, read-only scripts and their _RO commands, and commands that touch no data.
RUN = [("EVAL_RO", "return 1", "0"), ("EVAL", "#!lua flags=no-writes\nreturn 1", "0"), ("FCALL", "reader", "0"),
       ("FCALL_RO", "reader", "0"), ("SORT_RO", "l"), ("GEORADIUS_RO", "g", "0", "0", "1", "km"),
       ("BITFIELD_RO", "b", "GET", "u8", "0"), ("XREAD", "STREAMS", "s", "0"), ("SCRIPT", "LOAD", "return 1"),
       ("PUBSUB", "CHANNELS"), ("PING",)]


def last_command(r, name) -> str:
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        fields = dict(item.split("=", 1) for item in line.split())
        if fields["name"] == name:
            return fields["cmd"]
    return ""


def test_write_pause_holds_scripts_that_may_write(start_either):
    """Redis holds a paused command once it has read it (its last command is the held one, and
    no reply comes); the reply comes when the pause ends."""
    srv = start_either()
    with srv.raw() as admin:
        admin.call("FUNCTION", "LOAD", LIBRARY)
        admin.call("PFADD", "h", "a")
        admin.call("RPUSH", "l", "1")
        admin.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        r = srv.client()
        try:
            for command in RUN:
                with srv.raw() as other:
                    assert admin.call("CLIENT", "PAUSE", 60000, "WRITE").raw == b"+OK\r\n"
                    assert not other.call(*command).is_error, command
                    assert admin.call("CLIENT", "UNPAUSE").raw == b"+OK\r\n"
            for command in HELD:
                with srv.raw() as other:
                    other.call("CLIENT", "SETNAME", "held")
                    assert admin.call("CLIENT", "PAUSE", 60000, "WRITE").raw == b"+OK\r\n"
                    other.send_command(*command)
                    name = command[0].lower() + ("|" + command[1].lower() if command[0] == "FUNCTION" else "")
                    wait_for(lambda: last_command(r, "held") == name, what=f"{command} read and held")
                    assert not other.has_pending_bytes(), command
                    assert admin.call("CLIENT", "UNPAUSE").raw == b"+OK\r\n"
                    other.read_reply(timeout=10)
        finally:
            admin.call("CLIENT", "UNPAUSE")
            r.close()
