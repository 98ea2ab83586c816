"""ACL as clients and operators use it, against Redis 7.2's behaviour.

redis-py's ACL calls (SETUSER with keys, channels, commands, categories, passwords and selectors;
GETUSER, LIST, USERS, DELUSER, WHOAMI, CAT, GENPASS, DRYRUN, LOG) and logins with a username and
password, with NoPermissionError and AuthenticationError where Redis raises them; applications
kept apart by key and channel patterns, a read-only dashboard, the default user switched off;
ioredis, node-redis and redis-cli logging in as a user; users from `user` lines of a config file,
from an ACL file (ACL LOAD and ACL SAVE, files redis-server wrote and read), from `requirepass`,
and written back by CONFIG REWRITE; a replica that logs in to its master as a user allowed only
the replication commands, and a Sentinel that manages nodes as a user allowed only what it sends;
malformed rules, floods of failed logins, and the connections of users deleted or narrowed.

Exact reply texts that changed in 7.2 (NOPERM, DRYRUN, ACL LOG's entry-id and timestamps, the
sanitize-payload flag and the order of command rules in ACL LIST) are checked in the tests marked
redis72; the others hold for redis-server 7.0 as well.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
import redis

from support.node import run_node_script
from support.resp import ConnectionClosed, RawConnection, ReplyTimeout
from support.server import (REDIS_CLI, REFERENCE_BINARY, free_port, goblin_binary,
                            parse_info, run_until_exit, wait_for)

ADMIN_PASSWORD = "admin-secret"
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
# What redis-py raises for a login the server refuses with WRONGPASS: AuthenticationError in
# redis-py 4.4 and later, ResponseError before (Debian's 4.3 does not map the WRONGPASS code).
REFUSED_LOGIN = (redis.AuthenticationError, redis.ResponseError)
NOAUTH = "NOAUTH Authentication required."
SENTINEL_BINARY = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"

# ACL CAT without a category, in Redis's order.
CATEGORIES = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
              "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
              "dangerous", "connection", "transaction", "scripting"]


def sha256(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


def denied_command(user: str, command: str) -> str:
    return f"NOPERM User {user} has no permissions to run the '{command}' command"


DENIED_KEY = "NOPERM No permissions to access a key"
DENIED_CHANNEL = "NOPERM No permissions to access a channel"


# ---- the module's server -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def acl_server(server):
    """The module's server with an `admin` user allowed everything, which every test may use
    and which the clean-up logs in as (a test may switch the default user off)."""
    with server.raw() as conn:
        assert conn.call("ACL", "SETUSER", "admin", "on", ">" + ADMIN_PASSWORD, "~*", "&*",
                         "+@all").raw == b"+OK\r\n"
    return server


def reset_acl(srv):
    """Back to the default user allowed everything without a password, plus admin; empty log."""
    with RawConnection(srv.port) as conn:
        assert conn.call("AUTH", "admin", ADMIN_PASSWORD).raw == b"+OK\r\n"
        for name in conn.call("ACL", "USERS").py():
            if name not in (b"default", b"admin"):
                conn.call("ACL", "DELUSER", name)
        reply = conn.call("ACL", "SETUSER", "default", "on", "nopass", "~*", "&*", "+@all",
                          "clearselectors")
        assert reply.raw == b"+OK\r\n", reply
        conn.call("CONFIG", "SET", "acllog-max-len", "128", "acl-pubsub-default", "resetchannels")
        conn.call("ACL", "LOG", "RESET")
        conn.call("FLUSHALL")


@pytest.fixture
def admin(acl_server):
    """A redis-py client (str replies) logged in as admin, on a flushed server with no other users."""
    reset_acl(acl_server)
    client = login(acl_server, "admin", ADMIN_PASSWORD)
    yield client
    client.close()
    if acl_server.crashed():
        pytest.fail(f"the server died during the test:\n{acl_server.logs()}", pytrace=False)
    report = acl_server.sanitizer_report()
    if report:
        pytest.fail(f"sanitizer report during the test:\n{report}", pytrace=False)
    reset_acl(acl_server)


def login(srv, username, password, **kwargs) -> redis.Redis:
    kwargs.setdefault("decode_responses", True)
    kwargs.setdefault("socket_timeout", 10)
    return redis.Redis(host="127.0.0.1", port=srv.port, username=username, password=password,
                       **kwargs)


def raw_login(srv, username, password) -> RawConnection:
    conn = RawConnection(srv.port)
    reply = conn.call("AUTH", username, password)
    assert reply.raw == b"+OK\r\n", f"AUTH {username}: {reply!r}"
    return conn


def error_text(reply) -> str:
    assert reply.is_error, f"expected an error, got {reply!r}"
    return reply.value.decode()


# ---- redis-py's ACL calls ------------------------------------------------------------------------

def test_setuser_getuser_list_users_and_deluser(admin, acl_server):
    assert admin.acl_setuser("alice", enabled=True, passwords=["+alice-pw"], keys=["a:*"],
                             channels=["news:*"], categories=["+@hash"], commands=["+get", "+set"])
    user = admin.acl_getuser("alice")
    assert user["enabled"] is True and "on" in user["flags"]
    assert user["passwords"] == [sha256("alice-pw")]
    assert user["keys"] == ["~a:*"]
    assert user["channels"] == ["&news:*"]
    assert user["categories"] == ["-@all", "+@hash"]
    assert sorted(user["commands"]) == ["+get", "+set"]
    assert user["selectors"] == []

    assert admin.acl_users() == ["admin", "alice", "default"]
    lines = admin.acl_list()
    assert len(lines) == 3 and all(line.startswith("user ") for line in lines)
    alice_line = next(line for line in lines if line.startswith("user alice "))
    assert f"#{sha256('alice-pw')}" in alice_line and "alice-pw" not in alice_line
    assert "~a:*" in alice_line and "&news:*" in alice_line

    # SETUSER again changes only what it names.
    assert admin.execute_command("ACL", "SETUSER", "alice", "~b:*")
    assert admin.acl_getuser("alice")["keys"] == ["~a:*", "~b:*"]
    assert admin.acl_getuser("nobody") is None

    # reset: back to a new user's state.
    admin.execute_command("ACL", "SETUSER", "alice", "reset")
    user = admin.acl_getuser("alice")
    assert "off" in user["flags"] and "on" not in user["flags"]
    assert (user["passwords"], user["keys"], user["channels"]) == ([], [], [])
    assert user["categories"] == ["-@all"] and user["commands"] == []

    assert admin.acl_deluser("alice", "nobody") == 1
    assert admin.acl_users() == ["admin", "default"]


def test_acl_pubsub_default_sets_new_users_channels(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "before", "on", "nopass", "+@all")
    assert admin.acl_getuser("before")["channels"] == []
    admin.config_set("acl-pubsub-default", "allchannels")
    admin.execute_command("ACL", "SETUSER", "after", "on", "nopass", "+@all")
    assert admin.acl_getuser("after")["channels"] == ["&*"]
    assert admin.acl_getuser("before")["channels"] == [], "existing users keep their channels"
    with pytest.raises(redis.ResponseError, match="Try 'resetchannels'"):
        admin.execute_command("ACL", "SETUSER", "third", "&news")
    assert admin.acl_dryrun("after", "PUBLISH", "anything", "m") == "OK"
    assert admin.acl_dryrun("before", "PUBLISH", "anything", "m") != "OK"


def test_login_with_username_and_password(admin, acl_server):
    admin.acl_setuser("alice", enabled=True, passwords=["+first", "+second"], keys=["a:*"],
                      commands=["+get", "+set", "+acl|whoami"])
    for password in ("first", "second"):
        client = login(acl_server, "alice", password)
        assert client.acl_whoami() == "alice"
        assert client.set("a:1", password) is True and client.get("a:1") == password
        client.close()

    with pytest.raises(REFUSED_LOGIN, match="invalid username-password pair"):
        login(acl_server, "alice", "third").ping()
    with pytest.raises(REFUSED_LOGIN, match="invalid username-password pair"):
        login(acl_server, "nobody", "first").ping()

    # Passwords come and go by their text or their hash.
    admin.acl_setuser("alice", enabled=True, passwords=["-first"], hashed_passwords=[
        "+" + sha256("third")])
    assert admin.acl_getuser("alice")["passwords"] == [sha256("second"), sha256("third")]
    with pytest.raises(REFUSED_LOGIN):
        login(acl_server, "alice", "first").ping()
    assert login(acl_server, "alice", "third").acl_whoami() == "alice"
    admin.execute_command("ACL", "SETUSER", "alice", "!" + sha256("third"))
    with pytest.raises(REFUSED_LOGIN):
        login(acl_server, "alice", "third").ping()

    # nopass takes any password; resetpass leaves none that works.
    admin.execute_command("ACL", "SETUSER", "alice", "nopass")
    assert login(acl_server, "alice", "anything at all").acl_whoami() == "alice"
    assert "nopass" in admin.acl_getuser("alice")["flags"]
    admin.execute_command("ACL", "SETUSER", "alice", "resetpass")
    with pytest.raises(REFUSED_LOGIN):
        login(acl_server, "alice", "anything at all").ping()

    # A user switched off cannot log in; its open connections go on.
    admin.execute_command("ACL", "SETUSER", "alice", ">pw")
    open_connection = login(acl_server, "alice", "pw")
    assert open_connection.acl_whoami() == "alice"
    admin.execute_command("ACL", "SETUSER", "alice", "off")
    with pytest.raises(REFUSED_LOGIN):
        login(acl_server, "alice", "pw").ping()
    assert open_connection.get("a:1") == "second"
    open_connection.close()


def test_auth_and_hello_replies(admin, acl_server):
    admin.acl_setuser("alice", enabled=True, passwords=["+pw"], commands=["+acl|whoami"])
    with RawConnection(acl_server.port) as conn:
        assert error_text(conn.call("AUTH", "alice", "wrong")) == WRONGPASS
        assert conn.call("ACL", "WHOAMI").raw == b"$7\r\ndefault\r\n"
        assert error_text(conn.call("AUTH", "a", "b", "c")) == "ERR syntax error"
        assert error_text(conn.call("HELLO", "3", "AUTH", "alice", "wrong")) == WRONGPASS
        reply = conn.call("HELLO", "3", "AUTH", "alice", "pw")
        assert reply.kind == "%" and reply.py()[b"proto"] == 3
        assert conn.call("ACL", "WHOAMI").raw == b"$5\r\nalice\r\n"
        # A failed AUTH leaves the connection logged in as it was.
        assert error_text(conn.call("AUTH", "admin", "wrong")) == WRONGPASS
        assert conn.call("ACL", "WHOAMI").raw == b"$5\r\nalice\r\n"
        client_line = admin.client_list()
        assert any(c["user"] == "alice" for c in client_line)


def test_permission_errors_are_raised_as_redis_py_exceptions(admin, acl_server):
    admin.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["a:*"], channels=["news"],
                      commands=["+get", "+set", "+publish", "+config|get"])
    alice = login(acl_server, "alice", "pw")
    with pytest.raises(redis.exceptions.NoPermissionError, match="'del' command"):
        alice.delete("a:1")
    with pytest.raises(redis.exceptions.NoPermissionError, match="'config|set' command"):
        alice.config_set("hz", 11)
    with pytest.raises(redis.exceptions.NoPermissionError, match="key"):
        alice.get("b:1")
    with pytest.raises(redis.exceptions.NoPermissionError, match="channel"):
        alice.publish("sports", "goal")
    assert alice.publish("news", "headline") == 0
    assert alice.config_get("hz")["hz"]
    alice.close()


@pytest.mark.redis72
def test_permission_error_texts(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a:*", "&news:*", "+get",
                          "+set", "+publish", "+subscribe", "+config|get", "+multi", "+exec",
                          "+eval")
    with raw_login(acl_server, "alice", "pw") as conn:
        assert error_text(conn.call("DEL", "a:1")) == denied_command("alice", "del")
        assert error_text(conn.call("CONFIG", "SET", "hz", "10")) == denied_command("alice",
                                                                                    "config|set")
        assert error_text(conn.call("GET", "b:1")) == DENIED_KEY
        assert error_text(conn.call("PUBLISH", "sports", "x")) == DENIED_CHANNEL
        assert conn.call("MULTI").raw == b"+OK\r\n"
        assert error_text(conn.call("DEL", "a:1")) == denied_command("alice", "del")
        assert error_text(conn.call("EXEC")) == (
            "EXECABORT Transaction discarded because of previous errors.")
        text = error_text(conn.call("EVAL", "return redis.call('del', KEYS[1])", "1", "a:1"))
        assert text.startswith("ERR ACL failure in script: User alice has no permissions to run "
                               "the 'del' command script: "), text
        text = error_text(conn.call("EVAL", "return redis.call('get', 'b:1')", "0"))
        assert text.startswith("ERR ACL failure in script: No permissions to access a key "
                               "script: "), text
        assert error_text(conn.call("SUBSCRIBE", "news:1", "sports")) == DENIED_CHANNEL
    for command, reply in [
        (("DEL", "a:1"), "User alice has no permissions to run the 'del' command"),
        (("GET", "b:1"), "User alice has no permissions to access the 'b:1' key"),
        (("PUBLISH", "sports", "x"), "User alice has no permissions to access the 'sports' channel"),
        (("CONFIG", "SET", "hz", "1"), "User alice has no permissions to run the 'config|set' command"),
    ]:
        assert admin.acl_dryrun("alice", *command) == reply, command


def test_selectors(admin, acl_server):
    admin.acl_setuser("sel", enabled=True, nopass=True, commands=["+get"], keys=["x:*"],
                      selectors=[("+set", "y:*"), ("+get", "%R~z:*")])
    user = admin.acl_getuser("sel")
    assert user["keys"] == ["~x:*"] and user["commands"] == ["+get"]
    selectors = [dict(zip(s[0::2], s[1::2])) for s in user["selectors"]]
    assert [(s["keys"], s["channels"]) for s in selectors] == [("~y:*", ""), ("%R~z:*", "")]
    assert [s["commands"] for s in selectors] == ["-@all +set", "-@all +get"]
    assert any(line.endswith("(~y:* resetchannels -@all +set) (%R~z:* resetchannels -@all +get)")
               for line in admin.acl_list())

    sel = login(acl_server, "sel", "")
    admin.mset({"x:1": "1", "z:1": "3"})
    assert sel.get("x:1") == "1" and sel.get("z:1") == "3"
    assert sel.set("y:1", "2") is True
    # No selector allows both the command and the key.
    for call in (lambda: sel.set("x:1", "v"), lambda: sel.get("y:1"), lambda: sel.set("z:1", "v")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            call()
    assert admin.acl_dryrun("sel", "SET", "y:2", "v") == "OK"
    assert admin.acl_dryrun("sel", "GET", "z:2") == "OK"
    assert admin.acl_dryrun("sel", "SET", "z:2", "v") != "OK"
    sel.close()

    admin.execute_command("ACL", "SETUSER", "sel", "clearselectors")
    assert admin.acl_getuser("sel")["selectors"] == []
    assert admin.acl_dryrun("sel", "SET", "y:2", "v") != "OK"


def test_cat_genpass_whoami_and_dryrun(admin, acl_server):
    assert admin.acl_cat() == CATEGORIES
    hash_commands = admin.acl_cat("hash")
    assert {"hset", "hget", "hgetall", "hscan"} <= set(hash_commands) and "get" not in hash_commands
    assert "config|set" in admin.acl_cat("dangerous")
    assert "multi" in admin.acl_cat("transaction")
    with pytest.raises(redis.ResponseError, match="^Unknown category 'nosuch'$"):
        admin.acl_cat("nosuch")

    password = admin.acl_genpass()
    assert len(password) == 64 and int(password, 16) >= 0
    assert password != admin.acl_genpass()
    # redis-py 4.3's acl_genpass drops its bits argument: the command is sent as it is.
    assert len(admin.execute_command("ACL", "GENPASS", 32)) == 8
    assert len(admin.execute_command("ACL", "GENPASS", 5)) == 2
    for bits in (0, -1, 5000):
        with pytest.raises(redis.ResponseError, match="ACL GENPASS argument must be the number of "
                           "bits for the output password, a positive number up to 4096"):
            admin.execute_command("ACL", "GENPASS", bits)

    assert admin.acl_whoami() == "admin"
    assert login(acl_server, None, None).acl_whoami() == "default"

    admin.acl_setuser("alice", enabled=True, nopass=True, keys=["a:*"], channels=["news"],
                      commands=["+get", "+publish"])
    assert admin.acl_dryrun("alice", "GET", "a:1") == "OK"
    assert admin.acl_dryrun("alice", "PUBLISH", "news", "m") == "OK"
    for command in (("GET", "b:1"), ("SET", "a:1", "v"), ("PUBLISH", "sports", "m")):
        assert admin.acl_dryrun("alice", *command) != "OK", command
    with pytest.raises(redis.ResponseError, match="^User 'nobody' not found$"):
        admin.acl_dryrun("nobody", "GET", "a:1")
    with pytest.raises(redis.ResponseError, match="^Command 'NOSUCH' not found$"):
        admin.acl_dryrun("alice", "NOSUCH", "a:1")


def test_acl_log_records_denials_and_failed_logins(admin, acl_server):
    admin.acl_setuser("alice", enabled=True, passwords=["+pw"], keys=["a:*"], channels=["news"],
                      commands=["+get", "+publish", "+multi", "+exec", "+eval"])
    with raw_login(acl_server, "alice", "pw") as conn:
        for _ in range(3):
            assert conn.call("SET", "a:1", "v").is_error
        assert conn.call("GET", "secret").is_error
        assert conn.call("PUBLISH", "sports", "x").is_error
        conn.call("MULTI")
        assert conn.call("INCR", "a:1").is_error
        conn.call("EXEC")
        assert conn.call("EVAL", "return redis.call('incr', 'a:2')", "0").is_error
        assert conn.call("AUTH", "alice", "wrong").is_error

    def summary(entry):
        return (entry["reason"], entry["context"], entry["object"], entry["username"],
                int(entry["count"]))

    entries = admin.acl_log()
    assert [summary(e) for e in entries] == [
        ("auth", "toplevel", "AUTH", "alice", 1),
        ("command", "lua", "incr", "alice", 1),
        ("command", "multi", "incr", "alice", 1),
        ("channel", "toplevel", "sports", "alice", 1),
        ("key", "toplevel", "secret", "alice", 1),
        ("command", "toplevel", "set", "alice", 3),
    ]
    assert all(e["age-seconds"] >= 0 and e["client-info"]["user"] == "alice" for e in entries)
    # client-info is the connection's CLIENT LIST line as the refused command left it.
    assert [e["client-info"]["cmd"] for e in entries] == ["auth", "eval", "incr", "publish", "get",
                                                          "set"]
    assert len(admin.acl_log(2)) == 2
    assert admin.acl_log_reset() is True
    assert admin.acl_log() == []

    # The log keeps acllog-max-len entries, newest first.
    admin.config_set("acllog-max-len", 3)
    with raw_login(acl_server, "alice", "pw") as conn:
        for i in range(6):
            assert conn.call("GET", f"k:{i}").is_error
    assert [e["object"] for e in admin.acl_log()] == ["k:5", "k:4", "k:3"]


@pytest.mark.redis72
def test_acl_log_entry_fields(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "+get")
    with raw_login(acl_server, "alice", "pw") as conn:
        assert conn.call("SET", "a", "v").is_error
        assert conn.call("SET", "a", "v").is_error
        assert conn.call("GET", "a").is_error
    with RawConnection(acl_server.port) as conn:
        conn.call("AUTH", "admin", ADMIN_PASSWORD)
        entries = conn.call("ACL", "LOG").py()
    fields = [entry[0::2] for entry in entries]
    assert fields == [[b"count", b"reason", b"context", b"object", b"username", b"age-seconds",
                       b"client-info", b"entry-id", b"timestamp-created",
                       b"timestamp-last-updated"]] * 2
    newest, oldest = (dict(zip(e[0::2], e[1::2])) for e in entries)
    assert newest[b"entry-id"] == oldest[b"entry-id"] + 1
    assert oldest[b"count"] == 2
    assert oldest[b"timestamp-last-updated"] >= oldest[b"timestamp-created"]


@pytest.mark.redis72
def test_acl_list_and_getuser_keep_the_rules_as_given(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a:*", "&news:*", "+set",
                          "+@hash", "+get", "-hdel")
    line = next(l for l in admin.acl_list() if l.startswith("user alice "))
    assert line == (f"user alice on sanitize-payload #{sha256('pw')} ~a:* resetchannels &news:* "
                    f"-@all +set +@hash +get -hdel")
    assert "user default on nopass sanitize-payload ~* &* +@all" in admin.acl_list()
    user = admin.execute_command("ACL", "GETUSER", "alice")
    fields = dict(zip(user[0::2], user[1::2]))
    assert fields["flags"] == ["on", "sanitize-payload"]
    assert fields["commands"] == "-@all +set +@hash +get -hdel"


# ---- applications kept apart ---------------------------------------------------------------------

def test_applications_cannot_touch_each_others_keys_or_channels(admin, acl_server):
    for app in ("app1", "app2"):
        admin.execute_command("ACL", "SETUSER", app, "on", f">{app}-pw", f"~{app}:*", f"&{app}:*",
                              "+@all")
    app1 = login(acl_server, "app1", "app1-pw")
    app2 = login(acl_server, "app2", "app2-pw")
    assert app1.set("app1:config", "1") and app2.set("app2:config", "2")
    assert app1.hset("app1:h", "f", "v") == 1 and app1.incr("app1:n") == 1

    for call in (lambda: app1.get("app2:config"), lambda: app1.set("app2:config", "stolen"),
                 lambda: app1.delete("app2:config"), lambda: app1.mset({"app1:a": 1, "app2:b": 2}),
                 lambda: app1.mget("app1:config", "app2:config"),
                 lambda: app1.rename("app1:config", "app2:config"),
                 lambda: app1.copy("app2:config", "app1:copy"),
                 lambda: app1.eval("return redis.call('get', KEYS[1])", 1, "app2:config")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            call()
    # A script naming no key still runs its calls through the checks.
    with pytest.raises(redis.ResponseError):
        app1.eval("return redis.call('get', 'app2:config')", 0)
    assert admin.get("app2:config") == "2"
    assert admin.exists("app1:a", "app2:b", "app1:copy") == 0, "a refused MSET writes nothing"

    # Channels: publishing, subscribing, and pattern subscriptions, which must match a
    # permitted pattern literally.
    assert app1.publish("app1:events", "x") == 0
    with pytest.raises(redis.exceptions.NoPermissionError):
        app1.publish("app2:events", "x")
    pubsub = app1.pubsub()
    pubsub.subscribe("app1:events")
    pubsub.psubscribe("app1:*")
    for kind in ("subscribe", "psubscribe"):
        assert pubsub.get_message(timeout=10)["type"] == kind
    assert app1.publish("app1:events", "hello") == 2
    assert pubsub.get_message(timeout=10)["data"] == "hello"
    pubsub.close()
    with raw_login(acl_server, "app1", "app1-pw") as conn:
        assert error_text(conn.call("SUBSCRIBE", "app2:events")).startswith("NOPERM")
        assert error_text(conn.call("PSUBSCRIBE", "app1:x*")).startswith("NOPERM")
        assert error_text(conn.call("PSUBSCRIBE", "app2:*")).startswith("NOPERM")

    # KEYS and SCAN name no key: they are not filtered by the key patterns, as in Redis.
    assert "app2:config" in app1.keys("*")
    app1.close()
    app2.close()


def test_read_only_dashboard(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "dashboard", "on", ">dash", "%R~*", "+@read")
    # The viewer may run every command, but its keys are readable only.
    admin.execute_command("ACL", "SETUSER", "viewer", "on", ">view", "%R~*", "+@all")
    admin.set("visits", 10)
    admin.hset("user:1", mapping={"name": "ada", "plan": "pro"})
    admin.rpush("events", "a", "b")
    admin.zadd("scores", {"ada": 3})
    for name, password in (("dashboard", "dash"), ("viewer", "view")):
        client = login(acl_server, name, password)
        assert client.get("visits") == "10"
        assert client.hgetall("user:1") == {"name": "ada", "plan": "pro"}
        assert client.lrange("events", 0, -1) == ["a", "b"]
        assert client.zscore("scores", "ada") == 3.0
        assert client.exists("visits") == 1 and client.ttl("visits") == -1
        for call in (lambda: client.set("visits", 0), lambda: client.incr("visits"),
                     lambda: client.delete("visits"), lambda: client.hset("user:1", "plan", "free"),
                     lambda: client.lpop("events"), lambda: client.expire("visits", 5)):
            with pytest.raises(redis.exceptions.NoPermissionError):
                call()
        client.close()
    assert admin.get("visits") == "10" and admin.llen("events") == 2
    assert admin.acl_dryrun("dashboard", "SET", "visits", "0") != "OK"
    assert admin.acl_dryrun("viewer", "SET", "visits", "0") != "OK"
    # COPY reads one key and writes another: the read pattern allows only the first.
    admin.execute_command("ACL", "SETUSER", "viewer", "%W~scratch:*")
    assert admin.acl_dryrun("viewer", "COPY", "visits", "scratch:v") == "OK"
    assert admin.acl_dryrun("viewer", "COPY", "scratch:v", "visits") != "OK"


def test_default_user_off_leaves_admin_able_to_log_in(admin, acl_server):
    with RawConnection(acl_server.port) as before:
        assert before.call("PING").raw == b"+PONG\r\n"
        admin.execute_command("ACL", "SETUSER", "default", "off")
        # A connection logged in before goes on; a new one must log in.
        assert before.call("PING").raw == b"+PONG\r\n"
    with RawConnection(acl_server.port) as conn:
        assert error_text(conn.call("PING")) == NOAUTH
        assert error_text(conn.call("GET", "k")) == NOAUTH
        assert error_text(conn.call("AUTH", "default", "")) == WRONGPASS
        assert error_text(conn.call("HELLO", "3")).startswith(
            "NOAUTH HELLO must be called with the client already authenticated")
        assert conn.call("AUTH", "admin", ADMIN_PASSWORD).raw == b"+OK\r\n"
        assert conn.call("PING").raw == b"+PONG\r\n"
    with pytest.raises(redis.AuthenticationError, match="Authentication required"):
        login(acl_server, None, None).ping()
    with pytest.raises(REFUSED_LOGIN, match="invalid username-password pair"):
        login(acl_server, "default", "").ping()
    fresh_admin = login(acl_server, "admin", ADMIN_PASSWORD)
    assert fresh_admin.acl_whoami() == "admin" and fresh_admin.set("k", "v")
    assert "off" in fresh_admin.acl_getuser("default")["flags"]
    fresh_admin.close()


# ---- Node.js clients and redis-cli ---------------------------------------------------------------

def node_login(srv, library: str, username: str, password: str) -> dict:
    return run_node_script("acl_login.js", library, srv.port, username, password, "a:node", "b:node")


@pytest.mark.parametrize("library,written", [("ioredis", "from-ioredis"),
                                             ("node-redis", "from-node-redis")])
def test_node_clients_log_in_with_a_username(admin, acl_server, library, written):
    admin.execute_command("ACL", "SETUSER", "webapp", "on", ">node-secret", "~a:*", "+get", "+set",
                          "+info", "+acl|whoami", "+client", "+hello", "+select", "+ping")
    result = node_login(acl_server, library, "webapp", "node-secret")
    assert result["whoami"] == "webapp"
    assert result["set"] == "OK" and result["get"] == written
    assert result["denied"].startswith("NOPERM") and "key" in result["denied"]
    assert result["wrongpass"] == WRONGPASS
    assert admin.get("a:node") == written


def cli(srv, *args, timeout=30):
    proc = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(srv.port), *args],
                          capture_output=True, timeout=timeout)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_redis_cli_logs_in_as_a_user(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">cli-pw", "~a:*", "+get", "+set",
                          "+acl|whoami")
    warning = ("Warning: Using a password with '-a' or '-u' option on the command line interface "
               "may not be safe.\n")
    assert cli(acl_server, "--user", "alice", "--pass", "cli-pw", "ACL", "WHOAMI") == (
        0, "alice\n", warning)
    assert cli(acl_server, "--user", "alice", "-a", "cli-pw", "--no-auth-warning", "SET", "a:1",
               "v") == (0, "OK\n", "")
    assert cli(acl_server, "--no-auth-warning", "-u",
               f"redis://alice:cli-pw@127.0.0.1:{acl_server.port}", "GET", "a:1") == (0, "v\n", "")
    status, out, _ = cli(acl_server, "--user", "alice", "--pass", "cli-pw", "--no-auth-warning",
                         "GET", "b:1")
    assert out.startswith("NOPERM") and "key" in out
    # A refused login is reported, and the command then runs as the default user.
    status, out, err = cli(acl_server, "--user", "alice", "--pass", "wrong", "--no-auth-warning",
                           "ACL", "WHOAMI")
    assert err == f"AUTH failed: {WRONGPASS}\n" and out == "default\n"

    # With the default user's password (-a alone).
    admin.config_set("requirepass", "cli-default")
    try:
        assert cli(acl_server, "-a", "cli-default", "--no-auth-warning", "ACL", "WHOAMI") == (
            0, "default\n", "")
        assert cli(acl_server, "ACL", "WHOAMI")[1].startswith("NOAUTH")
    finally:
        admin.config_set("requirepass", "")


# ---- configuration -------------------------------------------------------------------------------

def users_of(srv) -> list:
    """ACL USERS, asked as the default user."""
    with RawConnection(srv.port) as conn:
        return [u.decode() for u in conn.call("ACL", "USERS").py()]


def test_user_lines_in_the_config_file(make_server):
    srv = make_server(config_text="user alice on >pw ~a:* +get +set\n"
                                  "user ops on >ops-pw ~* &* +@all -@dangerous\n")
    assert users_of(srv) == ["alice", "default", "ops"]
    alice = login(srv, "alice", "pw")
    assert alice.set("a:1", "v") and alice.get("a:1") == "v"
    with pytest.raises(redis.exceptions.NoPermissionError):
        alice.get("b:1")
    ops = login(srv, "ops", "ops-pw")
    assert ops.set("b:1", "w") and ops.dbsize() == 2
    with pytest.raises(redis.exceptions.NoPermissionError):
        ops.flushall()
    with pytest.raises(redis.exceptions.NoPermissionError):
        ops.acl_getuser("alice")
    default = login(srv, None, None)
    assert default.acl_getuser("alice")["keys"] == ["~a:*"]
    assert "nopass" in default.acl_getuser("default")["flags"], "the default user is as it was"
    default.close()
    alice.close()
    ops.close()


@pytest.mark.parametrize("line,messages", [
    ("user alice on >pw +nosuchcommand",
     ["Error loading ACL rule '+nosuchcommand' for the user named 'alice': Unknown command or "
      "category name in ACL"]),
    # Redis names a word of the line by the rule's index among the rules, counted from the
    # line's first word: which word it names is not checked.
    ("user alice on >pw nonsense", [">>> 'user alice on >pw nonsense'",
                                    "Error in user declaration '", "': Syntax error"]),
    ("user alice on\nuser alice off",
     ["Error in user declaration 'alice': Duplicate user found. A user can only be defined once "
      "in config files"]),
])
def test_a_bad_user_line_stops_startup(tmp_path, line, messages):
    config = tmp_path / "server.conf"
    config.write_text(f"port {free_port()}\nsave \"\"\ndir {tmp_path}\n{line}\n")
    status, output = run_until_exit([goblin_binary(), str(config)], timeout=10)
    assert status != 0, output
    for message in messages:
        assert message in output, output


def test_aclfile_and_user_lines_together_refuse_to_start(tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n")
    config = tmp_path / "server.conf"
    config.write_text(f"port {free_port()}\nsave \"\"\ndir {tmp_path}\naclfile {acl}\n"
                      f"user alice on >pw ~a:* +get\n")
    status, output = run_until_exit([goblin_binary(), str(config)], timeout=10)
    assert status == 1, output
    assert ("Configuring Redis with users defined in redis.conf and at the same setting an ACL "
            "file path is invalid") in output, output


def test_a_missing_or_broken_aclfile_stops_startup(tmp_path):
    missing = tmp_path / "missing.acl"
    status, output = run_until_exit([goblin_binary(), "--port", str(free_port()), "--save", "",
                                     "--dir", str(tmp_path), "--aclfile", str(missing)], timeout=10)
    assert status == 1 and "Aborting Redis startup because of ACL errors" in output, output
    assert f"Error loading ACLs, opening file '{missing}': No such file or directory" in output

    broken = tmp_path / "broken.acl"
    broken.write_text("user alice on >pw +nosuchcommand\n")
    status, output = run_until_exit([goblin_binary(), "--port", str(free_port()), "--save", "",
                                     "--dir", str(tmp_path), "--aclfile", str(broken)], timeout=10)
    assert status == 1 and "Aborting Redis startup because of ACL errors" in output, output
    assert (f"{broken}:1: Error in applying operation '+nosuchcommand': Unknown command or "
            f"category name in ACL. ") in output, output


def aclfile_server(make_server, tmp_path, text: str, binary=None, name="goblin-aclfile"):
    path = tmp_path / f"{name}.acl"
    path.write_text(text)
    kwargs = {"binary": binary} if binary else {}
    return make_server(name=name, options={"aclfile": str(path)}, **kwargs), path


def file_users(path: Path) -> dict:
    """name -> rules of each line of an ACL file (every line must be a `user` line)."""
    users = {}
    for line in path.read_text().splitlines():
        words = line.split(" ")
        assert words[0] == "user" and len(words) >= 3, f"{path}: {line!r}"
        users[words[1]] = words[2:]
    return users


def test_acl_save_and_load_round_trip(make_server, tmp_path):
    srv, path = aclfile_server(make_server, tmp_path, "user default on nopass ~* &* +@all\n"
                                                      "user bob on >bob-pw ~b:* +get\n")
    bob = raw_login(srv, "bob", "bob-pw")
    admin = login(srv, None, None)
    admin.acl_setuser("carol", enabled=True, passwords=["+carol-pw"], keys=["c:*"],
                      channels=["c-news"], commands=["+set"])
    assert admin.acl_save() is True
    saved = file_users(path)
    assert list(saved) == ["bob", "carol", "default"]
    assert saved["carol"][0] == "on" and f"#{sha256('carol-pw')}" in saved["carol"]
    assert "~c:*" in saved["carol"] and "&c-news" in saved["carol"] and "+set" in saved["carol"]
    assert "carol-pw" not in path.read_text()

    # The file as edited by hand: bob goes, dave comes; bob's connection is closed.
    path.write_text(path.read_text().replace(" ".join(["user", "bob", *saved["bob"]]) + "\n", "")
                    + "user dave on >dave-pw ~d:* +get\n")
    assert admin.acl_load() is True
    assert admin.acl_users() == ["carol", "dave", "default"]
    assert bob.read_until_closed(timeout=10) == b""
    bob.close()
    assert login(srv, "dave", "dave-pw").get("d:1") is None

    # A restart reads the file again.
    srv.restart(keep_port=True)
    assert users_of(srv) == ["carol", "dave", "default"]
    assert login(srv, "carol", "carol-pw").set("c:1", "v") is True


@pytest.mark.parametrize("text,error", [
    ("user default on nopass ~* &* +@all\nuser erin on >pw +nosuchcommand\n",
     "{path}:2: Error in applying operation '+nosuchcommand': Unknown command or category "
     "name in ACL. "),
    ("user default on nopass ~* &* +@all\nnot a user line\n",
     "{path}:2 should start with user keyword followed by the username. "),
    ("user erin on >pw\nuser erin off\n", "WARNING: Duplicate user 'erin' found on line 2. "),
    ("user erin on >pw ~a b\n", "{path}:1: Syntax error. "),
])
def test_acl_load_of_a_bad_file_changes_nothing(make_server, tmp_path, text, error):
    srv, path = aclfile_server(make_server, tmp_path, "user default on nopass ~* &* +@all\n"
                                                      "user bob on >bob-pw ~b:* +get\n")
    bob = raw_login(srv, "bob", "bob-pw")
    path.write_text(text)
    with RawConnection(srv.port) as conn:
        reply = conn.call("ACL", "LOAD")
        assert error_text(reply) == ("ERR " + error.format(path=path) + "WARNING: ACL errors "
                                     "detected, no change to the previously active ACL rules was "
                                     "performed")
    assert users_of(srv) == ["bob", "default"]
    # bob's connection and rules are as they were.
    assert bob.call("GET", "b:1").raw == b"$-1\r\n"
    assert bob.call("GET", "other").is_error
    bob.close()


def test_acl_load_and_save_need_an_aclfile(admin):
    text = ("This Redis instance is not configured to use an ACL file. You may want to specify "
            "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have "
            "a Redis configuration file set) in order to store users in the Redis configuration.")
    for call in (admin.acl_load, admin.acl_save):
        with pytest.raises(redis.ResponseError) as refusal:
            call()
        assert str(refusal.value) == text


# Users with every kind of rule, as an operator would write them.
EXCHANGED_USERS = [
    ("ops", ["on", ">ops-pw", ">ops-second", "~*", "&*", "+@all", "-@dangerous"], "ops-pw"),
    ("reader", ["on", "#" + sha256("reader-pw"), "%R~*", "+@read", "+@connection"], "reader-pw"),
    ("worker", ["on", ">worker-pw", "%W~queue:*", "~jobs:*", "&jobs:*", "+@list", "+@pubsub",
                "-psubscribe"], "worker-pw"),
    ("sel", ["on", ">sel-pw", "~a:*", "+get", "(~b:* +set +del)", "(%R~c:* +@hash)"], "sel-pw"),
    ("cfg", ["on", ">cfg-pw", "+config|get", "+client|setname", "+select|0"], "cfg-pw"),
    ("ghost", ["off", "nopass", "~*", "+@all"], None),
]
PROBES = [("GET", "a:1"), ("SET", "a:1", "v"), ("SET", "b:1", "v"), ("DEL", "b:1"),
          ("HGET", "c:1", "f"), ("HSET", "c:1", "f", "v"), ("LPUSH", "queue:1", "x"),
          ("LRANGE", "queue:1", "0", "-1"), ("RPUSH", "jobs:1", "x"), ("PUBLISH", "jobs:1", "m"),
          ("PUBLISH", "other", "m"), ("SUBSCRIBE", "jobs:1"), ("PSUBSCRIBE", "jobs:*"),
          ("CONFIG", "GET", "hz"), ("CONFIG", "SET", "hz", "10"), ("CLIENT", "SETNAME", "x"),
          ("SELECT", "0"), ("SELECT", "1"), ("FLUSHALL",), ("KEYS", "*"), ("PING",),
          ("ACL", "WHOAMI")]


def acl_facts(srv) -> dict:
    """What the server's users are: per user, its passwords, key and channel patterns and those
    of its selectors, its flags (7.2's sanitize-payload aside), whether its password logs it in,
    and DRYRUN's verdict on every probe."""
    facts = {}
    with RawConnection(srv.port) as conn:
        for name, _, password in EXCHANGED_USERS:
            fields = conn.call("ACL", "GETUSER", name).py()
            assert fields, f"{srv.name}: no user {name}"
            user = dict(zip(fields[0::2], fields[1::2]))
            selectors = [dict(zip(s[0::2], s[1::2])) for s in user[b"selectors"]]
            verdicts = []
            for probe in PROBES:
                reply = conn.call("ACL", "DRYRUN", name, *probe)
                verdicts.append(reply.raw == b"+OK\r\n")
            facts[name] = {
                "flags": sorted(set(user[b"flags"]) - {b"sanitize-payload"}),
                "passwords": user[b"passwords"], "keys": user[b"keys"],
                "channels": user[b"channels"],
                "selectors": [(s[b"keys"], s[b"channels"]) for s in selectors],
                "dryrun": dict(zip(PROBES, verdicts)),
            }
        facts["users"] = conn.call("ACL", "USERS").py()
    for name, _, password in EXCHANGED_USERS:
        with RawConnection(srv.port) as conn:
            facts[name]["login"] = conn.call("AUTH", name, password or "x").raw == b"+OK\r\n"
    return facts


def saved_acl_file(make_server, tmp_path, binary, name) -> Path:
    srv, path = aclfile_server(make_server, tmp_path, "user default on nopass ~* &* +@all\n",
                               binary=binary, name=name)
    with RawConnection(srv.port) as conn:
        for user, rules, _ in EXCHANGED_USERS:
            reply = conn.call("ACL", "SETUSER", user, *rules)
            assert reply.raw == b"+OK\r\n", f"{name}: ACL SETUSER {user} {rules}: {reply!r}"
        assert conn.call("ACL", "SAVE").raw == b"+OK\r\n"
    return srv, path


@pytest.mark.parametrize("writer,reader", [("redis", "goblin"), ("goblin", "redis")])
def test_acl_files_move_between_redis_server_and_goblin(make_server, tmp_path, writer, reader):
    binaries = {"redis": REFERENCE_BINARY, "goblin": goblin_binary()}
    source, path = saved_acl_file(make_server, tmp_path, binaries[writer], f"{writer}-writer")
    copy = tmp_path / "copied.acl"
    shutil.copy(path, copy)
    target = make_server(binary=binaries[reader], name=f"{reader}-reader",
                         options={"aclfile": str(copy)})
    expected, loaded = acl_facts(source), acl_facts(target)
    for name, _, _ in EXCHANGED_USERS:
        assert loaded[name] == expected[name], f"user {name} after {writer} -> {reader}"
    assert loaded["users"] == expected["users"]
    assert expected["ops"]["login"] and not expected["ghost"]["login"]


def test_requirepass_is_the_default_users_password(make_server):
    srv = make_server(config_text="requirepass s3cret\n", password="s3cret")
    with RawConnection(srv.port) as conn:
        assert error_text(conn.call("PING")) == NOAUTH
        assert conn.call("AUTH", "s3cret").raw == b"+OK\r\n"
        fields = conn.call("ACL", "GETUSER", "default").py()
        user = dict(zip(fields[0::2], fields[1::2]))
        assert user[b"passwords"] == [sha256("s3cret").encode()]
        assert b"nopass" not in user[b"flags"] and b"on" in user[b"flags"]
        assert conn.call("CONFIG", "SET", "requirepass", "changed").raw == b"+OK\r\n"
        fields = conn.call("ACL", "GETUSER", "default").py()
        assert dict(zip(fields[0::2], fields[1::2]))[b"passwords"] == [sha256("changed").encode()]
    with RawConnection(srv.port) as conn:
        assert error_text(conn.call("AUTH", "default", "s3cret")) == WRONGPASS
        assert conn.call("AUTH", "default", "changed").raw == b"+OK\r\n"
        assert conn.call("CONFIG", "SET", "requirepass", "").raw == b"+OK\r\n"
        fields = conn.call("ACL", "GETUSER", "default").py()
        user = dict(zip(fields[0::2], fields[1::2]))
        assert b"nopass" in user[b"flags"] and user[b"passwords"] == []


def test_config_rewrite_writes_the_users(make_server):
    srv = make_server(config_text="hz 10\n")
    admin = login(srv, None, None)
    admin.acl_setuser("carol", enabled=True, passwords=["+carol-pw"], keys=["c:*"],
                      commands=["+get", "+set"])
    admin.execute_command("ACL", "SETUSER", "default", "-flushall")
    assert admin.config_rewrite()
    lines = Path(srv.config_path).read_text().splitlines()
    user_lines = [line for line in lines if line.startswith("user ")]
    assert [line.split(" ")[1] for line in user_lines] == ["carol", "default"], lines
    carol = user_lines[0].split(" ")
    assert f"#{sha256('carol-pw')}" in carol and "~c:*" in carol and "+get" in carol
    assert "-flushall" in user_lines[1].split(" ")
    admin.close()

    srv.restart(keep_port=True)
    assert users_of(srv) == ["carol", "default"]
    assert login(srv, "carol", "carol-pw").set("c:1", "v") is True
    with pytest.raises(redis.exceptions.NoPermissionError):
        login(srv, None, None).flushall()


def test_config_rewrite_leaves_users_to_the_aclfile(make_server, tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n")
    srv = make_server(config_text=f"hz 10\naclfile {acl}\n")
    admin = login(srv, None, None)
    admin.acl_setuser("carol", enabled=True, passwords=["+carol-pw"])
    assert admin.config_rewrite()
    text = Path(srv.config_path).read_text()
    assert not [line for line in text.splitlines() if line.startswith("user ")], text
    admin.close()


# ---- replication and Sentinel --------------------------------------------------------------------

REPLICATION_USER = "user repl on >repl-pw +psync +replconf +ping"


def test_replica_logs_in_to_its_master_as_a_replication_user(make_server):
    master = make_server(name="goblin-master", unix=False, password="master-pw",
                         config_text=f"requirepass master-pw\n{REPLICATION_USER}\n")
    replica = make_server(name="goblin-replica", unix=False,
                          options={"masteruser": "repl", "masterauth": "repl-pw",
                                   "repl-diskless-sync": "no"},
                          extra_args=["--replicaof", "127.0.0.1", str(master.port)])
    writer = master.client(decode_responses=True)
    writer.mset({f"k:{i}": str(i) for i in range(50)})

    def caught_up():
        info = replica.info("replication")
        return (info.get("master_link_status") == "up" and int(info["slave_repl_offset"])
                == int(master.info("replication")["master_repl_offset"]))
    wait_for(caught_up, timeout=20, what="the replica to reach the master's offset")
    reader = replica.client(decode_responses=True)
    assert reader.mget([f"k:{i}" for i in range(50)]) == [str(i) for i in range(50)]
    writer.set("after-sync", "yes")
    wait_for(lambda: reader.get("after-sync") == "yes", what="a write after the sync")
    replicas = [c for c in writer.client_list() if "S" in c["flags"]]
    assert [c["user"] for c in replicas] == ["repl"]
    writer.close()
    reader.close()


def test_replica_with_a_wrong_password_stays_down(make_server):
    master = make_server(name="goblin-master", unix=False, password="master-pw",
                         config_text=f"requirepass master-pw\n{REPLICATION_USER}\n")
    replica = make_server(name="goblin-replica", unix=False,
                          options={"masteruser": "repl", "masterauth": "not-the-password"},
                          extra_args=["--replicaof", "127.0.0.1", str(master.port)])
    admin = master.client(decode_responses=True)

    def refused_login():
        return [e for e in admin.acl_log() if e["reason"] == "auth" and e["username"] == "repl"]
    wait_for(refused_login, timeout=20, what="the replica's refused AUTH in the master's ACL LOG")
    assert replica.info("replication")["master_link_status"] == "down"
    assert not [c for c in admin.client_list() if "S" in c["flags"]]
    admin.close()


# What a Sentinel sends to the nodes it manages, as Redis's Sentinel documentation lists it.
SENTINEL_USER = ("user sentinel-user on >sentinel-pw allchannels +multi +slaveof +ping +exec "
                 "+subscribe +config|rewrite +role +publish +info +client|setname +client|kill "
                 "+script|kill")
NODE_USERS = (f"user default off\nuser admin on >{ADMIN_PASSWORD} ~* &* +@all\n"
              f"{REPLICATION_USER}\n{SENTINEL_USER}\nmasteruser repl\nmasterauth repl-pw\n")


def admin_call(node, *command):
    with RawConnection(node.port, timeout=5) as conn:
        conn.call("AUTH", "admin", ADMIN_PASSWORD)
        reply = conn.call(*command)
        assert not reply.is_error, f"{command} on {node.name}: {reply!r}"
        return reply


def follows(node, master) -> bool:
    """The node is a replica of `master` with the link up (a Sentinel's CLIENT KILL may cut the
    probing connection: that round counts as not yet)."""
    try:
        info = parse_info(admin_call(node, "INFO", "replication").value)
    except (ConnectionClosed, ReplyTimeout, OSError):
        return False
    return (info.get("role") == "slave" and info.get("master_port") == str(master.port)
            and info.get("master_link_status") == "up")


def is_master(node) -> bool:
    try:
        return parse_info(admin_call(node, "INFO", "replication").value).get("role") == "master"
    except (ConnectionClosed, ReplyTimeout, OSError):
        return False


def test_sentinel_manages_nodes_as_a_limited_user(make_server):
    master = make_server(name="goblin-master", unix=False, config_text=NODE_USERS,
                         options={"repl-diskless-sync": "no"})
    replica = make_server(name="goblin-replica", unix=False, config_text=NODE_USERS,
                          options={"repl-diskless-sync": "no"},
                          extra_args=["--replicaof", "127.0.0.1", str(master.port)])
    wait_for(lambda: follows(replica, master), timeout=20, what="the replica's link")
    sentinel = make_server(binary=SENTINEL_BINARY, name="sentinel", unix=False,
                           config_text=(f"sentinel monitor mymaster 127.0.0.1 {master.port} 1\n"
                                        "sentinel down-after-milliseconds mymaster 2000\n"
                                        "sentinel failover-timeout mymaster 10000\n"
                                        "sentinel auth-user mymaster sentinel-user\n"
                                        "sentinel auth-pass mymaster sentinel-pw\n"),
                           options={"save": None, "appendonly": None,
                                    "enable-debug-command": None})
    with sentinel.raw() as conn:
        assert conn.call("SENTINEL", "DEBUG", "info-period", 250, "publish-period", 250,
                         "ping-period", 250).raw == b"+OK\r\n"

    def pairs(flat) -> dict:
        return {k.decode(): v.decode() for k, v in zip(flat[0::2], flat[1::2])}

    def sees_both():
        with sentinel.raw() as conn:
            master_state = pairs(conn.call("SENTINEL", "MASTER", "mymaster").py())
            replicas = [pairs(r) for r in conn.call("SENTINEL", "REPLICAS", "mymaster").py()]
        return (master_state["flags"] == "master" and len(replicas) == 1
                and replicas[0]["flags"] == "slave" and replicas[0]["master-link-status"] == "ok")
    wait_for(sees_both, timeout=20, what="the sentinel to see the master and its replica as healthy")
    assert admin_call(master, "ACL", "LOG").py() == [], "the sentinel was never refused"

    # A failover: the replica is promoted and the old master follows it, all through the
    # sentinel's limited user.
    with sentinel.raw() as conn:
        assert conn.call("SENTINEL", "FAILOVER", "mymaster").raw == b"+OK\r\n"
    wait_for(lambda: is_master(replica), timeout=30, what="the replica's promotion")
    wait_for(lambda: follows(master, replica), timeout=30,
             what="the old master to follow the promoted replica")
    for node in (master, replica):
        assert admin_call(node, "ACL", "LOG").py() == [], f"{node.name} refused the sentinel"


# ---- bad input -----------------------------------------------------------------------------------

UNKNOWN_COMMAND = "Unknown command or category name in ACL"


@pytest.mark.parametrize("rules,error", [
    (["on", ">pw", "foo"], "ERR Error in ACL SETUSER modifier 'foo': Syntax error"),
    (["+nosuch"], "ERR Error in ACL SETUSER modifier '+nosuch': " + UNKNOWN_COMMAND),
    (["+@nosuch"], "ERR Error in ACL SETUSER modifier '+@nosuch': " + UNKNOWN_COMMAND),
    (["-config|nosuch"], "ERR Error in ACL SETUSER modifier '-config|nosuch': " + UNKNOWN_COMMAND),
    (["~*", "~a"], "ERR Error in ACL SETUSER modifier '~a': Adding a pattern after the * pattern "
     "(or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start "
     "with an empty list of patterns"),
    (["&*", "&a"], "ERR Error in ACL SETUSER modifier '&a': Adding a pattern after the * pattern "
     "(or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' "
     "to start with an empty list of channels"),
    (["<never-set"], "ERR Error in ACL SETUSER modifier '<never-set': The password you are trying "
     "to remove from the user does not exist"),
    (["#abc"], "ERR Error in ACL SETUSER modifier '#abc': The password hash must be exactly 64 "
     "characters and contain only lowercase hexadecimal characters"),
    (["#" + sha256("x").upper()], "ERR Error in ACL SETUSER modifier '#" + sha256("x").upper() +
     "': The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
     "characters"),
    (["+config|get|hz"], "ERR Error in ACL SETUSER modifier '+config|get|hz': Allowing first-arg "
     "of a subcommand is not supported"),
    (["~a b"], "ERR Error in ACL SETUSER modifier '~a b': Syntax error"),
    (["%X~a"], "ERR Error in ACL SETUSER modifier '%X~a': Syntax error"),
    (["(~x", "+get"], "ERR Unmatched parenthesis in acl selector starting at '(~x'."),
    (["(~x +nosuch)"], "ERR Error in ACL SETUSER modifier '(~x +nosuch)': " + UNKNOWN_COMMAND),
])
def test_malformed_rules_are_refused_and_change_nothing(admin, acl_server, rules, error):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a:*", "+get")
    before = admin.acl_getuser("alice")
    for user in ("alice", "newcomer"):
        with RawConnection(acl_server.port) as conn:
            conn.call("AUTH", "admin", ADMIN_PASSWORD)
            # A valid rule before the bad one is not applied either.
            reply = conn.call("ACL", "SETUSER", user, "+set", *rules)
            assert error_text(reply) == error
    assert admin.acl_getuser("alice") == before
    assert admin.acl_users() == ["admin", "alice", "default"]


def test_other_refusals(admin, acl_server):
    with RawConnection(acl_server.port) as conn:
        conn.call("AUTH", "admin", ADMIN_PASSWORD)
        for command, error in [
            (("ACL", "SETUSER", "a b"), "ERR Usernames can't contain spaces or null characters"),
            (("ACL", "DELUSER", "default"), "ERR The 'default' user cannot be removed"),
            (("ACL", "DELUSER", "admin", "default"), "ERR The 'default' user cannot be removed"),
            (("ACL", "NOSUCH"), "ERR unknown subcommand 'NOSUCH'. Try ACL HELP."),
            (("ACL", "GETUSER"), "ERR wrong number of arguments for 'acl|getuser' command"),
            (("ACL", "CAT", "a", "b"), "ERR unknown subcommand or wrong number of arguments for "
                                       "'CAT'. Try ACL HELP."),
            (("ACL", "LOG", "x"), "ERR value is not an integer or out of range"),
            (("ACL", "GENPASS", "x"), "ERR value is not an integer or out of range"),
            (("ACL", "DRYRUN", "admin", "GET"), "ERR wrong number of arguments for 'get' command"),
        ]:
            assert error_text(conn.call(*command)) == error, command
        assert conn.call("ACL", "WHOAMI").raw == b"$5\r\nadmin\r\n", "nothing was deleted"
    assert admin.acl_users() == ["admin", "default"]


def test_failed_logins_are_capped_in_the_log(admin, acl_server):
    admin.config_set("acllog-max-len", 5)
    used_before = admin.info("memory")["used_memory"]
    with RawConnection(acl_server.port) as conn:
        for batch in range(10):
            replies = conn.pipeline([("AUTH", f"intruder-{batch}-{i}", "guess")
                                     for i in range(1000)])
            assert all(r.raw == b"-" + WRONGPASS.encode() + b"\r\n" for r in replies)
        # The same name again and again is one entry with a count.
        replies = conn.pipeline([("AUTH", "intruder", "guess")] * 5000)
        assert all(r.is_error for r in replies)
    entries = admin.acl_log()
    assert len(entries) == 5
    assert entries[0]["username"] == "intruder" and int(entries[0]["count"]) == 5000
    assert [e["username"] for e in entries[1:]] == [f"intruder-9-{i}" for i in (999, 998, 997, 996)]
    used_after = admin.info("memory")["used_memory"]
    assert used_after - used_before < 1_000_000, (used_before, used_after)


@pytest.mark.redis72
def test_denials_are_counted_in_info(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~a:*", "+get")

    def counters():
        stats = admin.info("stats")
        return [stats[f"acl_access_denied_{kind}"] for kind in ("auth", "cmd", "key", "channel")]
    before = counters()
    with raw_login(acl_server, "alice", "pw") as conn:
        assert conn.call("SET", "a:1", "v").is_error
        assert conn.call("GET", "b:1").is_error
        assert conn.call("AUTH", "alice", "wrong").is_error
        assert conn.call("HELLO", "2", "AUTH", "nobody", "x").is_error
    assert [after - b for after, b in zip(counters(), before)] == [2, 1, 1, 0]


def test_a_deleted_users_connections_are_closed(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all")
    admin.execute_command("ACL", "SETUSER", "bob", "on", ">pw", "~*", "+@all")
    alice_connections = [raw_login(acl_server, "alice", "pw") for _ in range(3)]
    bob = raw_login(acl_server, "bob", "pw")
    assert admin.acl_deluser("alice") == 1
    for conn in alice_connections:
        assert conn.read_until_closed(timeout=10) == b""
        conn.close()
    assert bob.call("PING").raw == b"+PONG\r\n", "other users' connections stay"
    assert not [c for c in admin.client_list() if c["user"] == "alice"]

    # A user deleting itself gets its reply, then the connection closes.
    bob.send_command("ACL", "DELUSER", "bob")
    assert bob.read_until_closed(timeout=10) == b":1\r\n"
    bob.close()

    # CLIENT KILL USER closes a user's connections without deleting it.
    admin.execute_command("ACL", "SETUSER", "carol", "on", ">pw", "+@all")
    carol = raw_login(acl_server, "carol", "pw")
    assert admin.execute_command("CLIENT", "KILL", "USER", "carol") == 1
    assert carol.read_until_closed(timeout=10) == b""
    carol.close()
    assert "carol" in admin.acl_users()


@pytest.mark.redis72
def test_a_blocked_command_is_checked_again_when_it_is_served(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "worker", "on", ">pw", "~jobs", "+@all")
    worker = raw_login(acl_server, "worker", "pw")
    worker.send_command("BLPOP", "jobs", "0")
    wait_for(lambda: admin.info("clients")["blocked_clients"] == 1, what="the worker to block")
    admin.execute_command("ACL", "SETUSER", "worker", "resetkeys")
    assert admin.lpush("jobs", "job-1") == 1
    assert error_text(worker.read_reply()) == DENIED_KEY
    assert admin.lrange("jobs", 0, -1) == ["job-1"], "the refused worker took nothing"
    worker.close()


def test_revoked_channels_close_their_subscribers(admin, acl_server):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "resetchannels", "&news:*",
                          "&orders", "+@all")
    subscriber = raw_login(acl_server, "alice", "pw")
    assert subscriber.call("SUBSCRIBE", "news:1").py() == [b"subscribe", b"news:1", 1]
    assert subscriber.call("PSUBSCRIBE", "news:*").py() == [b"psubscribe", b"news:*", 2]
    orders_subscriber = raw_login(acl_server, "alice", "pw")
    assert orders_subscriber.call("SUBSCRIBE", "orders").py() == [b"subscribe", b"orders", 1]

    # Keeping what they use (and adding more) leaves them subscribed.
    admin.execute_command("ACL", "SETUSER", "alice", "&news:*", "&sports")
    assert admin.publish("news:1", "kept") == 2
    assert subscriber.read_reply().py() == [b"message", b"news:1", b"kept"]
    assert subscriber.read_reply().py() == [b"pmessage", b"news:*", b"news:1", b"kept"]

    # Taking news:* away closes the connection subscribed under it, not the other one.
    admin.execute_command("ACL", "SETUSER", "alice", "resetchannels", "&orders")
    assert subscriber.read_until_closed(timeout=10) == b""
    subscriber.close()
    assert admin.publish("orders", "still here") == 1
    assert orders_subscriber.read_reply().py() == [b"message", b"orders", b"still here"]
    admin.execute_command("ACL", "SETUSER", "alice", "resetchannels")
    assert orders_subscriber.read_until_closed(timeout=10) == b""
    orders_subscriber.close()
