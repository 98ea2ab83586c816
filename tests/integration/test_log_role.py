"""The role letter of a log line, as Redis writes it ("pid:R date time level message"): M on a master, S on
a replica (from the start when the configuration names a master, and again after REPLICAOF), C in a forked
child (BGSAVE's "DB saved on disk"). goblin-server and Debian's redis-server go through the same steps and
their letters are compared, step by step."""

from __future__ import annotations

import re

from support.server import REFERENCE_BINARY, goblin_binary, wait_for

LINE = re.compile(r"^(\d+):([MSCX]) \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} [.\-*#] (.*)$")
KINDS = ("goblin", "redis")


def start(make_server, kind: str, name: str, extra=()):
    binary = REFERENCE_BINARY if kind == "redis" else goblin_binary()
    return make_server(binary=binary, name=f"{kind}-{name}", unix=False, extra_args=list(extra))


def lines(server) -> list:
    """(pid, role, message) of every log line written since the server said it was ready."""
    out, ready = [], False
    for text in server.logs(limit=1_000_000).splitlines():
        match = LINE.match(text)
        if not match:
            continue
        ready = ready or "Ready to accept connections" in match.group(3)
        if ready:
            out.append((int(match.group(1)), match.group(2), match.group(3)))
    assert out, "no log line after 'Ready to accept connections'"
    return out


def roles_since(server, mark: int) -> set:
    """The letters of the server process's own lines after the first mark lines."""
    pid = server.proc.pid
    return {role for p, role, _ in lines(server)[mark:] if p == pid}


def steps(make_server, kind: str) -> list:
    master = start(make_server, kind, "master")
    replica = start(make_server, kind, "replica", ["--replicaof", "127.0.0.1", str(master.port)])
    wait_for(lambda: replica.info("replication").get("master_link_status") == "up", what="the link")
    seen = [("master", roles_since(master, 0)), ("replica", roles_since(replica, 0))]
    # The replica's full sync may still have its child running once the link is up.
    wait_for(lambda: master.info("persistence").get("rdb_bgsave_in_progress") == "0",
             what="the sync's child to end")
    with master.raw() as conn:
        assert conn.call("BGSAVE").raw == b"+Background saving started\r\n"
    wait_for(lambda: any("DB saved on disk" in m for _, _, m in lines(master)), what="the child's line")
    child = [(p, role) for p, role, m in lines(master) if "DB saved on disk" in m]
    seen.append(("child", {role for _, role in child}, all(p != master.proc.pid for p, _ in child)))
    for command, name in ((("REPLICAOF", "NO", "ONE"), "promoted"),
                          (("REPLICAOF", "127.0.0.1", master.port), "replica again")):
        mark = len(lines(replica))
        with replica.raw() as conn:
            assert conn.call(*command).raw == b"+OK\r\n"
            wait_for(lambda: len(lines(replica)) > mark, what="a log line")
        seen.append((name, roles_since(replica, mark)))
    return seen


def test_role_letters_are_redis_s(make_server):
    got = {kind: steps(make_server, kind) for kind in KINDS}
    assert got["goblin"] == got["redis"]
    assert got["redis"] == [("master", {"M"}), ("replica", {"S"}), ("child", {"C"}, True), ("promoted", {"M"}),
                            ("replica again", {"S"})]
