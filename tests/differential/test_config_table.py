"""The configuration table beside redis-server's: every parameter redis-server's CONFIG GET *
lists is known to goblin-server with the same default, and CONFIG SET of its current value is
accepted or refused alike (mutable, immutable, protected, or refused for a missing feature with
its own reason)."""

import pytest

from support.server import REFERENCE_BINARY, ServerProcess, stop_and_check

# Set by the test harness's command line or by the machine, not by Redis's defaults.
FROM_ENVIRONMENT = {"bind", "daemonize", "dir", "enable-debug-command", "logfile", "maxclients",
                    "pidfile", "port", "save", "unixsocket", "appendonly"}
# CONFIG SET of these acts even when the value is unchanged (rebinding, reopening files).
ACTS_WHEN_SET = FROM_ENVIRONMENT | {"appendfilename", "appenddirname", "dbfilename", "replicaof",
                                    "slaveof", "unixsocketperm"}
# Refused by both, with each server's own reason.
OWN_REASON = {"activedefrag"}


@pytest.fixture(scope="module")
def servers(server_binary):
    started = [ServerProcess(server_binary, name="goblin-config", unix=False).start(),
               ServerProcess(REFERENCE_BINARY, name="reference-config", unix=False).start()]
    yield started
    for srv in started:
        stop_and_check(srv)


def table(srv):
    with srv.raw() as conn:
        reply = conn.call("CONFIG", "GET", "*").py()
    return dict(zip(reply[0::2], reply[1::2]))


def test_every_redis_parameter_is_known_with_its_default(servers):
    goblin, reference = (table(srv) for srv in servers)
    missing = sorted(name for name in reference if name not in goblin)
    assert missing == []
    different = {name.decode(): (goblin[name], value) for name, value in reference.items()
                 if name.decode() not in FROM_ENVIRONMENT and goblin[name] != value}
    assert different == {}


def test_config_set_of_the_current_value_is_judged_alike(servers):
    goblin, reference = servers
    names = [name for name in table(reference) if name.decode() not in ACTS_WHEN_SET]
    differences = []
    with goblin.raw() as g, reference.raw() as r:
        for name in names:
            value = r.call("CONFIG", "GET", name).py()[1]
            mine, theirs = g.call("CONFIG", "SET", name, value), r.call("CONFIG", "SET", name, value)
            if name.decode() in OWN_REASON:
                same = mine.is_error == theirs.is_error
            else:
                same = mine.raw == theirs.raw
            if not same:
                differences.append(f"{name.decode()} {value!r}: goblin {mine.raw!r}, redis {theirs.raw!r}")
    assert differences == []
