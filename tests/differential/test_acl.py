"""ACL side by side with redis-server: every reply compared, Redis 7.0's wording (the reference)
rewritten to 7.2's where the two differ (acl_rules.py lists the differences).

Seeded random rule lists for ACL SETUSER (flags, passwords, key, channel and command rules,
subcommands and first-args, categories, selectors, malformed rules), each followed by ACL GETUSER,
ACL LIST and ACL DRYRUN over random commands, keys and channels; seeded random commands run as a
user after AUTH (MULTI/EXEC, pub/sub, EVAL with redis.call and redis.acl_check_cmd, SORT BY/GET);
then scenarios over several connections: AUTH and HELLO AUTH refusals, WHOAMI, USERS, DELUSER
closing the deleted user's connections, subscribers losing their channels, permissions changed
between MULTI and EXEC, ACL LOG (entries, grouping, count, RESET, acllog-max-len), ACL CAT,
GENPASS, requirepass and the default user. The redis72 tests hold the server under test alone to
Redis 7.2's texts, rule order, sanitize-payload default and ACL LOG fields.

ACL state is global to a server, so the module runs a pair of servers of its own; before each test
both go back to the default user (on, nopass, everything) and `keeper`, the user the clean-up
authenticates as, with an empty log.
"""

from __future__ import annotations

import hashlib
import random
import re
import time

import pytest

from support.differ import (EXACT, HELLO, Failure, Op, ServerPair, Step, format_reply, investigate, record_pairs,
                            run_ops)
from support.resp import ConnectionClosed, ProtocolViolation, ReplyTimeout
from support.server import REFERENCE_BINARY, ServerProcess, stop_and_check

from .acl_rules import (ACL_LOG, CATEGORIES, CHANNEL_72, KEY_72, LOG_FIELDS, LOG_FIELDS_ADDED_IN_72, SCRIPTS,
                        AclText, SetUserReply, UserList, UserRecord, catalog_names, command_refusal_72,
                        model_setuser, password_hash, random_probe, random_rules, random_user_command)
from .streams import stream_seeds

TEST_PATH = "tests/differential/test_acl.py"
KEEPER, KEEPER_PASSWORD = b"keeper", b"keeper-secret"
USER, PASSWORD = b"alice", b"alice-pw"
SEEDS_ENV = "GOBLIN_ACL_SEEDS"


def S(*args, compare=EXACT, readonly=False):
    return Step(tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), compare, readonly)


def ok(reply) -> bool:
    return reply.raw == b"+OK\r\n"


# ---- the module's servers ---------------------------------------------------------------------------

def restore(srv):
    """Back to a fresh server's users: `default` (on, nopass, every key, channel and command) and
    `keeper`; an empty log, the ACL settings at their defaults, no keys."""
    with srv.raw(timeout=5) as conn:
        assert ok(conn.call("AUTH", KEEPER, KEEPER_PASSWORD)), f"{srv.name}: the keeper user cannot log in"
        for command in (("CONFIG", "SET", "requirepass", ""),
                        ("ACL", "SETUSER", "default", "on", "nopass", "clearselectors", "allkeys", "allchannels",
                         "allcommands"),
                        ("CONFIG", "SET", "acllog-max-len", "128", "acl-pubsub-default", "resetchannels"),
                        ("ACL", "LOG", "RESET"), ("FLUSHALL",)):
            reply = conn.call(*command)
            assert ok(reply), f"{srv.name}: {command} replied {reply!r}"
        others = [u.value for u in conn.call("ACL", "USERS").value if u.value not in (b"default", KEEPER)]
        if others:
            assert conn.call("ACL", "DELUSER", *others).kind == ":"


@pytest.fixture(scope="module")
def acl_pair(server_binary):
    """A server under test and a reference of this module's own, each with the `keeper` user."""
    servers = []
    try:
        for binary, name in ((server_binary, "goblin-acl"), (REFERENCE_BINARY, "reference-acl")):
            srv = ServerProcess(binary, name=name, unix=False).start()
            srv.show_log_on_failure = False
            servers.append(srv)
            with srv.raw() as conn:
                reply = conn.call("ACL", "SETUSER", KEEPER, "on", b">" + KEEPER_PASSWORD, "~*", "&*", "+@all")
                assert ok(reply), f"{name}: ACL SETUSER keeper replied {reply!r}"
        yield ServerPair(*servers)
    finally:
        for srv in servers:
            stop_and_check(srv)


@pytest.fixture(autouse=True)
def clean_acl(acl_pair):
    for srv in (acl_pair.goblin_server, acl_pair.reference_server):
        restore(srv)


@pytest.fixture
def compare_ops(acl_pair, shrink_budget, reported_mismatches):
    """compare_ops(name, ops, reproduce): replays self-contained Ops on both servers, failing the test
    with the shortest failing sequence of any mismatch."""
    def run(name, ops, reproduce):
        mismatches = run_ops(acl_pair, ops, independent=True, limit=60)
        if mismatches:
            pytest.fail(investigate(acl_pair, ops, mismatches, title=f"DIFFERENTIAL MISMATCH in ACL {name}",
                                    reproduce=reproduce, budget=shrink_budget, reported=reported_mismatches,
                                    label=f"ACL {name}"), pytrace=False)
    return run


def reproduce_line(acl_pair, selector: str, seed: int | None = None) -> str:
    env = f"{SEEDS_ENV}={seed} " if seed is not None else ""
    return (f"{env}GOBLIN_SERVER={acl_pair.goblin_server.binary} /usr/bin/python3 -m pytest -q {TEST_PATH} "
            f"-k '{selector}'")


def test_the_catalog_exists_on_both_servers(acl_pair):
    """Every command and subcommand the random rules name exists on both servers, so a missing one
    fails here instead of as a stream of unknown-command mismatches."""
    names = catalog_names()
    for srv in (acl_pair.goblin_server, acl_pair.reference_server):
        with srv.raw() as conn:
            reply = conn.call("COMMAND", "INFO", *names)
            missing = [n for n, info in zip(names, reply.value) if info.is_null]
            assert missing == [], f"{srv.name} does not know {missing}"


# ---- seeded rule lists: SETUSER, GETUSER, LIST, DRYRUN -----------------------------------------------

DEFAULT_SEEDS, RESP3_SEEDS = [1, 2, 3, 4, 5, 6], [7, 8]


def rule_list_ops(seed: int, count: int) -> list:
    """Ops of: DELUSER, one to three SETUSERs of random rules (the model predicts each reply),
    GETUSER, sometimes LIST, and DRYRUN of random commands for the user."""
    rng = random.Random(seed)
    ops = []
    for _ in range(count):
        users = {}
        steps = [S("ACL", "DELUSER", USER)]
        for _ in range(rng.choice([1, 1, 2, 3])):
            rules = random_rules(rng)
            steps.append(S("ACL", "SETUSER", USER, *rules, compare=SetUserReply(model_setuser(users, USER, rules))))
        described = users[USER].describe() if USER in users else None
        steps.append(S("ACL", "GETUSER", USER, compare=UserRecord(described), readonly=True))
        if rng.random() < 0.25:
            expected = {b"default": [b"+@all"], KEEPER: [b"+@all"], USER: described or []}
            steps.append(S("ACL", "LIST", compare=UserList(expected), readonly=True))
        for _ in range(rng.randint(2, 8)):
            steps.append(S("ACL", "DRYRUN", USER, *random_probe(rng), compare=AclText(USER), readonly=True))
        ops.append(Op(steps, "rule list"))
    return ops


@pytest.mark.parametrize("protocol,seed", stream_seeds(SEEDS_ENV, DEFAULT_SEEDS, RESP3_SEEDS), ids=lambda x: str(x))
def test_random_rule_lists(acl_pair, compare_ops, protocol, seed):
    ops = rule_list_ops(seed, 70)
    if protocol == 3:
        ops.insert(0, Op([S("HELLO", "3", compare=HELLO)], "hello"))
    print(f"ACL rule lists: seed {seed}, RESP{protocol}")
    compare_ops(f"rule lists seed={seed} RESP{protocol}", ops,
                reproduce_line(acl_pair, f"test_random_rule_lists and {protocol}-{seed}", seed))


# ---- seeded commands run as a user ----------------------------------------------------------------

DATA_KEYS = [b"k1", b"k2", b"x", b"w_1", b"w_2", b"w_3", b"sortme", b"{tag}a", b"kx", b"a:b"]


def data_setup() -> list:
    return [S("SELECT", "0"), S("DEL", *DATA_KEYS), S("SET", "k1", "v1"), S("SET", "x", "vx"),
            S("RPUSH", "sortme", "3", "1", "2"), S("SET", "w_1", "30"), S("SET", "w_2", "10"), S("SET", "w_3", "20")]


def user_ops_prefix(rng) -> list:
    """Fresh data, the user with random (valid) rules, and AUTH as that user."""
    steps = data_setup() + [S("ACL", "DELUSER", USER)]
    # Transactions and scripts need their own commands; grant them often enough to get past them.
    extra = rng.choice([[], [b"+multi", b"+exec"], [b"+@transaction"], [b"+eval", b"+evalsha"],
                        [b"+multi", b"+exec", b"+eval"]])
    for _ in range(20):
        users = {}
        rules = random_rules(rng, malformed=0.0, most=7) + extra + [b"on", b">" + PASSWORD]
        predicted = model_setuser(users, USER, rules)
        if ok_bytes(predicted):
            break
    steps.append(S("ACL", "SETUSER", USER, *rules, compare=SetUserReply(predicted)))
    return steps + [S("AUTH", USER, PASSWORD, compare=AclText(USER))]


def ok_bytes(raw: bytes) -> bool:
    return raw == b"+OK\r\n"


def user_ops_suffix(protocol: int) -> list:
    """Back to the default user (RESET also leaves MULTI and the subscriptions, and RESP3)."""
    return [S("RESET")] + ([S("HELLO", "3", compare=HELLO)] if protocol == 3 else [])


def user_command_ops(seed: int, protocol: int, count: int) -> list:
    rng = random.Random(seed)
    ops = []
    for _ in range(count):
        steps = user_ops_prefix(rng)
        for _ in range(rng.randint(3, 10)):
            if rng.random() < 0.15:
                # A transaction: commands refused while queued abort EXEC; at most one script, whose
                # command the 7.2 text names.
                steps.append(S("MULTI", compare=AclText(USER)))
                inner = None
                for _ in range(rng.randint(1, 3)):
                    args, called = random_user_command(rng)
                    if called is not None:
                        if inner is not None:
                            continue
                        inner = called
                    steps.append(S(*args, compare=AclText(USER, called)))
                steps.append(S("EXEC", compare=AclText(USER, inner)))
            else:
                args, called = random_user_command(rng)
                steps.append(S(*args, compare=AclText(USER, called)))
        if rng.random() < 0.35:
            # A subscription last: a message published afterwards would arrive out of step.
            verb = rng.choice([b"SUBSCRIBE", b"SSUBSCRIBE", b"PSUBSCRIBE"])
            target = rng.choice([b"news*", b"ch?", b"*", b"zz*"] if verb == b"PSUBSCRIBE" else
                                [b"news", b"chat", b"ch1", b"zz"])
            steps.append(S(verb, target, compare=AclText(USER)))
        ops.append(Op(steps + user_ops_suffix(protocol), "commands as a user"))
    return ops


@pytest.mark.parametrize("protocol,seed", stream_seeds(SEEDS_ENV, [11, 12, 13, 14, 15], [16]),
                         ids=lambda x: str(x))
def test_random_commands_as_a_user(acl_pair, compare_ops, protocol, seed):
    ops = user_command_ops(seed, protocol, 50)
    if protocol == 3:
        ops.insert(0, Op([S("HELLO", "3", compare=HELLO)], "hello"))
    print(f"ACL commands as a user: seed {seed}, RESP{protocol}")
    compare_ops(f"commands as a user seed={seed} RESP{protocol}", ops,
                reproduce_line(acl_pair, f"test_random_commands_as_a_user and {protocol}-{seed}", seed))


def as_user(name: str, rules: list, *steps) -> Op:
    """An Op running `steps` as alice with `rules` (after fresh data), back to default after."""
    setup = data_setup() + [S("ACL", "DELUSER", USER)]
    predicted = model_setuser({}, USER, [b"on", b">" + PASSWORD] + rules)
    return Op(setup + [S("ACL", "SETUSER", USER, "on", b">" + PASSWORD, *rules, compare=SetUserReply(predicted)),
                       S("AUTH", USER, PASSWORD)] + list(steps) + [S("RESET")], name)


def U(*args, script_command=None):
    """A step run as alice, judged with 7.2's texts in mind."""
    return S(*args, compare=AclText(USER, script_command))


SCRIPT_RULES = [
    [b"-@all", b"+eval", b"+evalsha", b"+get", b"+set", b"~k*", b"&news"],
    [b"-@all", b"+eval", b"+@read", b"~*", b"allchannels"],
    [b"+@all", b"-del", b"-publish", b"%R~*", b"%W~k2"],
    [b"-@all", b"+eval", b"+config|get", b"+object|encoding", b"+sort", b"~sortme", b"~w_*"],
    [b"-@all", b"+eval", b"(+del ~k1)", b"(+publish &zz)"],
]


def sha1(body: bytes) -> bytes:
    return hashlib.sha1(body).hexdigest().encode()


def test_scripts_run_as_the_caller(compare_ops, acl_pair):
    """Every script of acl_rules.SCRIPTS (redis.call and redis.pcall refused for the command, a key
    or a channel; redis.acl_check_cmd) under several rule sets, by EVAL and EVALSHA."""
    ops = []
    for i, rules in enumerate(SCRIPT_RULES):
        for body, keys, called in SCRIPTS:
            ops.append(as_user(f"scripts {i}", rules, U("EVAL", body, len(keys), *keys, script_command=called),
                               U("EVALSHA", sha1(body), len(keys), *keys, script_command=called)))
    compare_ops("scripts", ops, reproduce_line(acl_pair, "test_scripts_run_as_the_caller"))


def test_sort_patterns_need_access_to_every_key(compare_ops, acl_pair):
    """SORT BY and GET with patterns need read access to every key ("BY option of SORT denied due to
    insufficient ACL permissions."); BY without '*' does not sort and needs none."""
    sorts = [U("SORT", "sortme"), U("SORT", "sortme", "BY", "w_*"), U("SORT", "sortme", "BY", "nosort"),
             U("SORT", "sortme", "GET", "#"), U("SORT", "sortme", "GET", "w_*"), U("SORT_RO", "sortme", "BY", "w_*"),
             U("SORT", "sortme", "BY", "w_*", "GET", "#", "STORE", "k2"), U("SORT", "sortme", "LIMIT", "0", "1"),
             U("SORT", "sortme", "BY", "w_*", "DESC", "GET", "w_*")]
    rule_sets = [[b"+@all", b"~*"], [b"+@all", b"~sortme", b"~w_*", b"~k2"], [b"+@all", b"%R~*", b"~k2"],
                 [b"+@all", b"%W~*"], [b"+@all", b"%R~*", b"%W~*"], [b"+@all", b"allkeys"],
                 [b"-@all", b"+sort", b"+sort_ro", b"~*"], [b"+@all", b"~sortme", b"(~* -sort)"],
                 [b"+@all", b"~sortme", b"(%R~* +sort)"], [b"-@all", b"+sort", b"(~*)"]]
    ops = [as_user(f"sort {i}", rules, *sorts) for i, rules in enumerate(rule_sets)]
    compare_ops("SORT patterns", ops, reproduce_line(acl_pair, "test_sort_patterns"))


def test_argument_errors_and_fixed_rules(compare_ops, acl_pair):
    """The ACL subcommands' argument errors, and rule lists picked to pin one behaviour each."""
    fixed = [
        [b"on", b"nopass", b"~*", b"+@all"], [b"reset"], [b">a", b">a", b"<a"], [b"nopass", b">x", b"nopass"],
        [b"#" + password_hash(b"x"), b"!" + password_hash(b"x")], [b"<x"], [b"resetpass", b">x", b"resetpass"],
        [b"~a", b"~a", b"%R~a", b"%W~b", b"%RW~c", b"%WR~d", b"%R~", b"%R"], [b"allkeys", b"~k"],
        [b"allkeys", b"resetkeys", b"~k"], [b"~*", b"%R~x"], [b"%RW~*", b"~x"], [b"&a", b"&a", b"allchannels"],
        [b"allchannels", b"&x"], [b"+get", b"-get"], [b"+get", b"+@read", b"-@read", b"+get"],
        [b"+config", b"-config|set"], [b"-config|set", b"+config"], [b"+select|0", b"+select|1", b"-select"],
        [b"+select", b"+select|0"], [b"+@all", b"-get", b"+get"], [b"allcommands", b"-@dangerous", b"+flushdb"],
        [b"+GET", b"+Config|GET", b"+@READ", b"-@Write"], [b"+@all", b"nocommands"], [b"(~a +get)", b"(&b +set)"],
        [b"(~a", b"+get)", b"clearselectors"], [b"()"], [b"(", b")"], [b"(+get", b"(~x)"], [b"(+get)x"],
        [b"(~a +get) (~b +set)"], [b"+get|", b"+get"], [b"+get|k1", b"+get|K1"], [b""], [b"on", b"", b"off"],
        [b"skip-sanitize-payload"], [b"skip-sanitize-payload", b"sanitize-payload"], [b"(allkeys allchannels)"],
        [b"(resetkeys ~a resetchannels &b nocommands +get)"], [b"%R~a", b"allkeys", b"(%W~b)"],
    ]
    ops = []
    for i, rules in enumerate(fixed):
        users = {}
        ops.append(Op([S("ACL", "DELUSER", USER),
                       S("ACL", "SETUSER", USER, *rules, compare=SetUserReply(model_setuser(users, USER, rules))),
                       S("ACL", "GETUSER", USER, compare=UserRecord(users[USER].describe() if USER in users else None)),
                       S("ACL", "DRYRUN", USER, "get", "a", compare=AclText(USER)),
                       S("ACL", "DRYRUN", USER, "config", "set", "hz", "10", compare=AclText(USER)),
                       S("ACL", "DRYRUN", USER, "select", "1", compare=AclText(USER)),
                       S("ACL", "DRYRUN", USER, "publish", "b", "m", compare=AclText(USER))], f"fixed rules {i}"))
    errors = [("ACL",), ("ACL", "NOSUCH"), ("ACL", "WHOAMI", "x"), ("ACL", "USERS", "x"), ("ACL", "LIST", "x"),
              ("ACL", "GETUSER"), ("ACL", "GETUSER", "a", "b"), ("ACL", "GETUSER", "nobody"), ("ACL", "SETUSER"),
              ("ACL", "SETUSER", "bad name"), ("ACL", "SETUSER", "bad\x00name", "on"), ("ACL", "DELUSER"),
              ("ACL", "DELUSER", "default"), ("ACL", "DELUSER", "nobody", "default"), ("ACL", "DELUSER", "nobody"),
              ("ACL", "LOG", "x"), ("ACL", "LOG", "1", "2"), ("ACL", "LOG", "-1"), ("ACL", "LOG", "0"),
              ("ACL", "LOG", "reset", "x"), ("ACL", "CAT", "a", "b"), ("ACL", "CAT", "nosuch"), ("ACL", "CAT", "READ "),
              ("ACL", "GENPASS", "0"), ("ACL", "GENPASS", "-1"), ("ACL", "GENPASS", "4097"), ("ACL", "GENPASS", "x"),
              ("ACL", "GENPASS", "1", "2"), ("ACL", "DRYRUN", "alice"), ("ACL", "DRYRUN", "nobody", "get", "x"),
              ("ACL", "DRYRUN", "default", "nosuch"), ("ACL", "DRYRUN", "default", "get"),
              ("ACL", "DRYRUN", "default", "config", "nosuch"), ("ACL", "DRYRUN", "default", "client"),
              ("ACL", "DRYRUN", "default", "get", "x"), ("ACL", "LOAD"), ("ACL", "SAVE"), ("ACL", "LOAD", "x"),
              ("ACL", "WHOAMI"), ("acl", "whoami"), ("ACL", "USERS"), ("AUTH",), ("AUTH", "a", "b", "c"),
              ("AUTH", "pw"), ("HELLO", "2", "AUTH"), ("HELLO", "2", "AUTH", "x"), ("ACL", "LOG", "RESET")]
    ops.append(Op([S(*e) for e in errors], "argument errors"))
    compare_ops("fixed rules", ops, reproduce_line(acl_pair, "test_argument_errors_and_fixed_rules"))


# ---- scenarios over several connections -------------------------------------------------------------

CLOSED = "connection closed"


class Transcript:
    """What one server answered in a scenario: (arguments, reply, comparator), in order. A
    connection the server closed answers Failure("connection closed")."""

    def __init__(self, srv):
        self.srv = srv
        self.entries = []
        self.conns = []

    def conn(self, timeout: float = 5.0):
        conn = self.srv.raw(timeout=timeout)
        self.conns.append(conn)
        return conn

    def call(self, conn, *args, compare=EXACT):
        try:
            reply = conn.call(*args)
        except ConnectionClosed:
            reply = Failure(CLOSED)
        except ReplyTimeout:
            reply = Failure("no reply")
        except (OSError, ProtocolViolation) as exc:
            reply = Failure(CLOSED if isinstance(exc, (ConnectionResetError, BrokenPipeError)) else str(exc))
        self.record(args, reply, compare)
        return reply

    def read(self, conn, what: str, compare=EXACT):
        """The next reply (a message) on `conn`."""
        try:
            reply = conn.read_reply()
        except ConnectionClosed:
            reply = Failure(CLOSED)
        except ReplyTimeout:
            reply = Failure("no reply")
        self.record((what,), reply, compare)
        return reply

    def record(self, args, reply, compare):
        self.entries.append((tuple(a if isinstance(a, bytes) else str(a).encode() for a in args), reply, compare))

    def close(self):
        for conn in self.conns:
            conn.close()


def compare_scenario(acl_pair, scenario):
    """Runs scenario(transcript) on both servers and compares the transcripts entry by entry: the
    first mismatch in full with the steps before it, then every later mismatching step in a line
    (later ones may follow from the first)."""
    transcripts = []
    for srv in (acl_pair.goblin_server, acl_pair.reference_server):
        t = Transcript(srv)
        try:
            scenario(t)
        finally:
            t.close()
        transcripts.append(t)
    g, r = transcripts
    assert len(g.entries) == len(r.entries), "the scenario sent different commands to the two servers"
    lines, report = [], []
    for n, ((args, gr, compare), (_, rr, _)) in enumerate(zip(g.entries, r.entries), 1):
        shown = " ".join(repr(a)[2:-1] for a in args)
        if isinstance(gr, Failure) or isinstance(rr, Failure):
            why = None if gr.raw == rr.raw else "one server closed the connection or did not answer"
        else:
            why = compare.differs(Step(args, compare), gr, rr, None)
        if why and not report:
            history = "\n".join(f"    {line}" for line in lines[-8:])
            report.append(f"ACL scenario mismatch at step {n}: {shown}\n  goblin:    {format_reply(gr, 1500)}\n"
                          f"  reference: {format_reply(rr, 1500)}\n  why: {why}\n"
                          f"  preceding steps (goblin reply):\n{history}\nlater mismatching steps:")
        elif why:
            report.append(f"  step {n}: {shown}\n    goblin:    {format_reply(gr, 300)}\n"
                          f"    reference: {format_reply(rr, 300)}\n    why: {why}")
        lines.append(f"{shown} -> {format_reply(gr, 100)}")
    if report:
        pytest.fail("\n".join(report), pytrace=False)


def admin(t):
    conn = t.conn()
    t.call(conn, "CLIENT", "SETNAME", "admin")
    return conn


def logged_in(t, user: bytes, password: bytes, name: str):
    conn = t.conn()
    t.call(conn, "CLIENT", "SETNAME", name)
    t.call(conn, "AUTH", user, password, compare=AclText(user))
    return conn


def test_auth_and_hello_refusals(acl_pair):
    """AUTH and HELLO AUTH with a wrong password, an unknown or a disabled user, their syntax errors,
    AUTH <password> while the default user has none; the connection keeps its user on a failure,
    RESET brings back the default user; the failures in ACL LOG."""
    def scenario(t):
        a = admin(t)
        t.call(a, "ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all")
        t.call(a, "ACL", "SETUSER", "bob", "off", ">pw", "+@all")
        t.call(a, "ACL", "SETUSER", "carol", "on", "nopass", "-@all", "+acl|whoami", "+ping")
        c = t.conn()
        t.call(c, "CLIENT", "SETNAME", "tries")
        for args in [("AUTH", "alice", "wrong"), ("AUTH", "nobody", "x"), ("AUTH", "bob", "pw"), ("AUTH", "bob", "x"),
                     ("AUTH", "pw"), ("AUTH", "default", "anything"), ("ACL", "WHOAMI"),
                     ("HELLO", "3", "AUTH", "alice", "wrong"), ("HELLO", "2", "AUTH", "nobody", "x"),
                     ("HELLO", "2", "AUTH", "alice"), ("HELLO", "2", "AUTH", "bob", "pw"), ("AUTH", "alice", "pw"),
                     ("ACL", "WHOAMI"), ("AUTH", "alice", "wrong"), ("ACL", "WHOAMI")]:
            t.call(c, *args)
        t.call(c, "HELLO", "2", "AUTH", "carol", "anything", compare=HELLO)
        t.call(c, "ACL", "WHOAMI")
        t.call(c, "GET", "k", compare=AclText(b"carol"))
        t.call(c, "ACL", "USERS", compare=AclText(b"carol"))
        t.call(c, "RESET")
        t.call(c, "ACL", "WHOAMI")
        t.call(a, "ACL", "USERS")
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "ACL", "LOG", "3", compare=ACL_LOG)
    compare_scenario(acl_pair, scenario)


def test_deleting_a_user_closes_its_connections(acl_pair):
    """ACL DELUSER closes every connection of the users it deletes (a subscriber's too, and the
    caller's own once it has the reply) and leaves the others; the default user cannot go."""
    def scenario(t):
        a = admin(t)
        t.call(a, "ACL", "SETUSER", "alice", "on", ">pw", "~*", "&*", "+@all")
        t.call(a, "ACL", "SETUSER", "bob", "on", ">pw", "~*", "&*", "+@all")
        a1, a2 = logged_in(t, b"alice", b"pw", "a1"), logged_in(t, b"alice", b"pw", "a2")
        b1 = logged_in(t, b"bob", b"pw", "b1")
        plain = t.conn()
        t.call(a2, "SUBSCRIBE", "news")
        t.call(a, "ACL", "DELUSER", "alice", "nobody")
        for conn in (a1, a2, b1, plain):
            t.call(conn, "PING")
        t.call(a, "ACL", "USERS")
        t.call(a, "ACL", "DELUSER", "default", "bob")
        t.call(b1, "PING")
        t.call(b1, "ACL", "DELUSER", "bob")  # answered, then closed
        t.call(b1, "PING")
        t.call(a, "ACL", "USERS")
        t.call(a, "ACL", "DELUSER", "bob")
        t.call(a, "AUTH", "alice", "pw")
        t.call(a, "ACL", "WHOAMI")
    compare_scenario(acl_pair, scenario)


def test_subscribers_losing_a_channel_are_disconnected(acl_pair):
    """Rules that keep every channel a subscriber of the user listens to (a superset) leave it alone;
    rules that drop one close its connection. PSUBSCRIBE patterns are compared literally."""
    def scenario(t):
        a = admin(t)
        t.call(a, "ACL", "SETUSER", "dave", "on", ">pw", "~*", "resetchannels", "&news*", "&chat", "+@all")
        s1, s2, s3 = (logged_in(t, b"dave", b"pw", n) for n in ("s1", "s2", "s3"))
        t.call(s1, "SUBSCRIBE", "news1", compare=AclText(b"dave"))
        t.call(s2, "PSUBSCRIBE", "news*", compare=AclText(b"dave"))
        t.call(s2, "PSUBSCRIBE", "news.*", compare=AclText(b"dave"))
        t.call(s3, "SSUBSCRIBE", "chat", compare=AclText(b"dave"))
        t.call(s3, "SUBSCRIBE", "other", compare=AclText(b"dave"))
        t.call(a, "ACL", "SETUSER", "dave", "&more")
        t.call(a, "PUBLISH", "news1", "m1")
        t.read(s1, "(message on s1)")
        t.read(s2, "(message on s2)")
        t.call(s3, "PING")
        t.call(a, "ACL", "SETUSER", "dave", "resetchannels", "&news1", "&chat")
        for conn in (s1, s2, s3):
            t.call(conn, "PING")
        t.call(a, "ACL", "SETUSER", "dave", "resetchannels")
        t.call(s1, "PING")
        t.call(a, "PUBSUB", "NUMSUB", "news1", "chat")
        t.call(a, "ACL", "SETUSER", "dave", "allchannels")
        s4 = logged_in(t, b"dave", b"pw", "s4")
        t.call(s4, "PSUBSCRIBE", "*")
        t.call(a, "ACL", "SETUSER", "dave", "(&*)", "resetchannels")
        t.call(s4, "PING")
        t.call(a, "ACL", "SETUSER", "dave", "clearselectors")
        t.call(s4, "PING")
    compare_scenario(acl_pair, scenario)


def test_transactions_under_acl(acl_pair):
    """A command refused while queued aborts EXEC; permissions changed between MULTI and EXEC refuse
    each command EXEC runs that is no longer allowed; an EXEC the user may not run is answered
    EXECABORT, inside a transaction or not (Redis wraps every refusal of EXEC so)."""
    def scenario(t):
        a = admin(t)
        t.call(a, "ACL", "SETUSER", "eve", "on", ">pw", "~k*", "&c*", "-@all", "+multi", "+exec", "+discard",
               "+get", "+set", "+publish", "+eval")
        e = logged_in(t, b"eve", b"pw", "eve")
        v = AclText(b"eve")
        for args in [("MULTI",), ("GET", "k1"), ("GET", "x"), ("DEL", "k1"), ("PUBLISH", "zz", "m"), ("EXEC",),
                     ("MULTI",), ("SET", "k1", "v"), ("GET", "k1"), ("PUBLISH", "c1", "m"), ("EXEC",),
                     ("MULTI",), ("EVAL", "return redis.call('del', 'k1')", "0"), ("EXEC",)]:
            t.call(e, *args, compare=AclText(b"eve", b"del"))
        t.call(e, "MULTI", compare=v)
        for args in [("GET", "k1"), ("SET", "k2", "v"), ("PUBLISH", "c1", "m"), ("GET", "k3")]:
            t.call(e, *args, compare=v)
        t.call(a, "ACL", "SETUSER", "eve", "-set", "resetchannels", "resetkeys", "~k1", "~k3")
        t.call(e, "EXEC", compare=v)
        t.call(a, "ACL", "SETUSER", "eve", "-exec", "-discard")
        for args in [("EXEC",), ("DISCARD",), ("MULTI",), ("GET", "k1"), ("EXEC",), ("GET", "k1"), ("DISCARD",),
                     ("EXEC",)]:
            t.call(e, *args, compare=v)
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
    compare_scenario(acl_pair, scenario)


def test_acl_log(acl_pair):
    """Entries for refused commands, keys and channels (at top level, in MULTI, in scripts) and
    failed AUTHs; like entries grouped with a count; ACL LOG count, RESET, acllog-max-len."""
    def scenario(t):
        a = admin(t)
        t.call(a, "ACL", "SETUSER", "frank", "on", ">pw", "~k*", "&c*", "-@all", "+get", "+multi", "+exec",
               "+eval", "+publish", "+subscribe", "+client|setname")
        f = logged_in(t, b"frank", b"pw", "frank-conn")
        v = AclText(b"frank")
        for args in [("GET", "x"), ("GET", "x"), ("DEL", "k1"), ("PUBLISH", "zz", "m"), ("SUBSCRIBE", "zz"),
                     ("GET", "k1", "k2"), ("CONFIG", "GET", "hz"), ("MULTI",), ("GET", "y"), ("EXEC",)]:
            t.call(f, *args, compare=v)
        t.call(f, "EVAL", "return redis.call('del', 'k1')", "0", compare=AclText(b"frank", b"del"))
        t.call(f, "EVAL", "return redis.pcall('get', 'x')", "0", compare=v)
        t.call(f, "EVAL", "return redis.call('publish', 'zz', 'm')", "0", compare=v)
        t.call(f, "AUTH", "frank", "wrong")
        t.call(f, "AUTH", "nobody", "x")
        t.call(f, "HELLO", "2", "AUTH", "frank", "wrong")
        t.call(f, "CLIENT", "SETNAME", "renamed", compare=v)
        # The first GET x entry is now the 11th newest: only the 10 newest are searched for a match.
        t.call(f, "GET", "x", compare=v)
        t.call(f, "GET", "x", compare=v)  # grouped with the one before: count 2, the new client name
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "ACL", "LOG", "100", compare=ACL_LOG)
        t.call(a, "ACL", "LOG", "2", compare=ACL_LOG)
        t.call(a, "ACL", "LOG", "0", compare=ACL_LOG)
        t.call(a, "ACL", "LOG", "RESET")
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "CONFIG", "SET", "acllog-max-len", "3")
        for key in ("x1", "x2", "x3", "x4", "x5"):
            t.call(f, "GET", key, compare=v)
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "CONFIG", "SET", "acllog-max-len", "1")
        t.call(a, "ACL", "LOG", compare=ACL_LOG)  # trimmed only when an entry is added
        t.call(f, "GET", "x5", compare=v)
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(f, "GET", "x6", compare=v)
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "CONFIG", "SET", "acllog-max-len", "0")
        t.call(f, "GET", "x7", compare=v)
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
        t.call(a, "CONFIG", "GET", "acllog-max-len")
        t.call(a, "CONFIG", "SET", "acllog-max-len", "-1")
    compare_scenario(acl_pair, scenario)


def test_requirepass_sets_the_default_users_password(acl_pair):
    """CONFIG SET requirepass replaces the default user's passwords (an empty one makes it nopass);
    new connections then start unauthenticated, as they do when the default user is off."""
    def scenario(t):
        a = t.conn()
        t.call(a, "AUTH", KEEPER, KEEPER_PASSWORD)
        t.call(a, "CLIENT", "SETNAME", "admin")
        t.call(a, "CONFIG", "SET", "requirepass", "secret")
        t.call(a, "ACL", "GETUSER", "default", compare=UserRecord([b"+@all"]))
        t.call(a, "ACL", "LIST", compare=UserList({b"default": [b"+@all"], KEEPER: [b"+@all"]}))
        n = t.conn()
        for args in [("GET", "x"), ("ACL", "WHOAMI"), ("AUTH", "wrong"), ("AUTH", "default", "wrong"),
                     ("HELLO", "2", "AUTH", "default", "bad"), ("AUTH", "secret"), ("ACL", "WHOAMI"),
                     ("GET", "x"), ("RESET",), ("GET", "x"), ("AUTH", "default", "secret")]:
            t.call(n, *args)
        t.call(t.conn(), "HELLO", "2", "AUTH", "default", "secret", compare=HELLO)
        t.call(a, "ACL", "SETUSER", "default", ">second")
        t.call(a, "CONFIG", "GET", "requirepass")
        t.call(t.conn(), "AUTH", "second")
        t.call(a, "CONFIG", "SET", "requirepass", "")
        t.call(a, "ACL", "GETUSER", "default", compare=UserRecord([b"+@all"]))
        m = t.conn()
        for args in [("GET", "x"), ("AUTH", "anything"), ("AUTH", "default", "anything"), ("ACL", "WHOAMI")]:
            t.call(m, *args)
        t.call(a, "ACL", "SETUSER", "default", "off")
        o = t.conn()
        for args in [("GET", "x"), ("ACL", "WHOAMI"), ("AUTH", "default", "x"), ("AUTH", KEEPER, KEEPER_PASSWORD),
                     ("ACL", "WHOAMI")]:
            t.call(o, *args)
        t.call(m, "GET", "x")  # the connections already logged in go on
        t.call(a, "ACL", "SETUSER", "default", "on", "resetpass")
        t.call(t.conn(), "PING")
        t.call(a, "ACL", "LOG", compare=ACL_LOG)
    compare_scenario(acl_pair, scenario)


def test_acl_pubsub_default(acl_pair):
    """acl-pubsub-default decides the channels of new users, new selectors and `reset`."""
    def scenario(t):
        a = admin(t)
        t.call(a, "CONFIG", "SET", "acl-pubsub-default", "allchannels")
        t.call(a, "ACL", "SETUSER", "gina", "on", "nopass", "+@all")
        t.call(a, "ACL", "SETUSER", "hank", "resetchannels", "&x", "(+get)")
        t.call(a, "ACL", "GETUSER", "gina", compare=UserRecord([b"+@all"]))
        t.call(a, "ACL", "GETUSER", "hank", compare=UserRecord([b"-@all", b"-@all +get"]))
        t.call(a, "ACL", "SETUSER", "hank", "reset")
        t.call(a, "ACL", "GETUSER", "hank", compare=UserRecord([b"-@all"]))
        t.call(a, "CONFIG", "SET", "acl-pubsub-default", "resetchannels")
        t.call(a, "ACL", "SETUSER", "hank", "reset")
        t.call(a, "ACL", "GETUSER", "hank", compare=UserRecord([b"-@all"]))
        t.call(a, "CONFIG", "GET", "acl-pubsub-default")
        t.call(a, "CONFIG", "SET", "acl-pubsub-default", "nosuch")
    compare_scenario(acl_pair, scenario)


# ---- ACL CAT and GENPASS ---------------------------------------------------------------------------

def command_names(conn) -> set:
    return {e.value for e in conn.call("COMMAND", "LIST").value}


def test_acl_cat(acl_pair):
    """ACL CAT lists the categories in Redis's order; ACL CAT <category> lists, in hash order (so
    compared as sets), the commands and subcommands of the category. Over the commands both servers
    know the sets must be equal; the server under test's own commands (Redis 7.2's, Goblin's) must
    be listed where their COMMAND INFO puts them. No exception is listed: for the commands both
    servers know, the server under test's categories are the reference's (test_command_table.py
    compares their COMMAND INFO), and the commands only it knows (Redis 7.2's CLIENT NO-TOUCH,
    CLIENT SETINFO and WAITAOF, Goblin's own) are checked against its own COMMAND INFO."""
    with acl_pair.goblin_server.raw() as g, acl_pair.reference_server.raw() as r:
        assert g.call("ACL", "CAT").raw == r.call("ACL", "CAT").raw
        assert [e.value for e in g.call("ACL", "CAT").value] == CATEGORIES
        g_names, r_names = command_names(g), command_names(r)
        shared = g_names & r_names
        g_info = dict(zip(sorted(g_names), g.call("COMMAND", "INFO", *sorted(g_names)).value))
        problems = []
        for category in CATEGORIES:
            gr, rr = g.call("ACL", "CAT", category), r.call("ACL", "CAT", category)
            listed = [e.value for e in gr.value]
            twice = sorted({n for n in listed if listed.count(n) > 1})
            if twice:
                problems.append(f"@{category.decode()}: listed twice: {twice}")
            g_set, r_set = set(listed), {e.value for e in rr.value}
            if g_set & shared != r_set & shared:
                problems.append(f"@{category.decode()}: only from goblin {sorted((g_set - r_set) & shared)}, "
                                f"only from the reference {sorted((r_set - g_set) & shared)}")
            own = {n for n in g_names - r_names
                   if b"@" + category in {c.value for c in g_info[n].value[6].value}}
            if g_set - shared != own:
                problems.append(f"@{category.decode()}: commands of its own listed {sorted(g_set - shared)}, "
                                f"COMMAND INFO puts {sorted(own)} there")
            upper = g.call("ACL", "CAT", category.upper())
            if upper.kind != "*" or {e.value for e in upper.value} != g_set:
                problems.append(f"@{category.decode()}: ACL CAT {category.upper().decode()} lists another set")
        assert problems == []


def test_acl_genpass(acl_pair):
    """ACL GENPASS [bits]: (bits + 3) / 4 random lower-case hex digits, 256 bits by default."""
    with acl_pair.goblin_server.raw() as g, acl_pair.reference_server.raw() as r:
        for bits in (None, 1, 4, 5, 8, 63, 255, 256, 257, 1000, 4096):
            args = ("ACL", "GENPASS") + (() if bits is None else (str(bits),))
            expected = ((bits or 256) + 3) // 4
            seen = set()
            for conn, name in ((g, "goblin"), (r, "reference"), (g, "goblin")):
                reply = conn.call(*args)
                assert reply.kind == "$" and re.fullmatch(rb"[0-9a-f]{%d}" % expected, reply.value), \
                    f"{name}: {args} -> {reply!r}"
                seen.add(reply.value)
            if expected >= 16:
                assert len(seen) == 3, f"{args} repeated a password"


# ---- the Redis 7.2 behaviour, on the server under test alone -----------------------------------------

@pytest.fixture
def goblin(acl_pair):
    with acl_pair.goblin_server.raw() as conn:
        yield conn


def goblin_user(acl_pair, user: bytes, password: bytes):
    conn = acl_pair.goblin_server.raw()
    assert ok(conn.call("AUTH", user, password))
    return conn


@pytest.mark.redis72
def test_refusals_in_72_words(acl_pair, goblin):
    assert ok(goblin.call("ACL", "SETUSER", "alice", "on", ">pw", "~k*", "&c*", "-@all", "+get", "+eval",
                          "+config|get", "+multi", "+exec", "+publish", "+subscribe"))
    body_del = b"return redis.call('del', 'k1')"
    sha_del = sha1(body_del)
    with goblin_user(acl_pair, b"alice", b"pw") as u:
        cases = [
            (("GET", "x"), b"-NOPERM " + KEY_72 + b"\r\n"),
            (("DEL", "k1"), b"-NOPERM " + command_refusal_72(b"alice", b"del") + b"\r\n"),
            (("CONFIG", "SET", "hz", "10"), b"-NOPERM " + command_refusal_72(b"alice", b"config|set") + b"\r\n"),
            (("PUBLISH", "zz", "m"), b"-NOPERM " + CHANNEL_72 + b"\r\n"),
            (("SUBSCRIBE", "zz"), b"-NOPERM " + CHANNEL_72 + b"\r\n"),
            (("EVAL", body_del, "0"),
             b"-ERR ACL failure in script: " + command_refusal_72(b"alice", b"del") +
             b" script: " + sha_del + b", on @user_script:1.\r\n"),
            (("EVAL", "return redis.pcall('get', 'x')", "0"), b"-ERR ACL failure in script: " + KEY_72 + b"\r\n"),
            (("EVAL", "return redis.pcall('publish', 'zz', 'm')", "0"),
             b"-ERR ACL failure in script: " + CHANNEL_72 + b"\r\n"),
            (("EVAL", "return redis.pcall('object', 'encoding', 'k1')", "0"),
             b"-ERR ACL failure in script: " + command_refusal_72(b"alice", b"object|encoding") + b"\r\n"),
            (("MULTI",), b"+OK\r\n"), (("GET", "x"), b"-NOPERM " + KEY_72 + b"\r\n"),
            (("EXEC",), b"-EXECABORT Transaction discarded because of previous errors.\r\n"),
        ]
        for args, expected in cases:
            assert u.call(*args).raw == expected, args
    for args, text in [(("get", "x"), b"User alice has no permissions to access the 'x' key"),
                       (("del", "k1"), command_refusal_72(b"alice", b"del")),
                       (("config", "set", "hz", "1"), command_refusal_72(b"alice", b"config|set")),
                       (("publish", "zz", "m"), b"User alice has no permissions to access the 'zz' channel"),
                       (("get", "k1"), None)]:
        reply = goblin.call("ACL", "DRYRUN", "alice", *args)
        assert reply.raw == (b"+OK\r\n" if text is None else b"$%d\r\n%s\r\n" % (len(text), text)), args


def fields(reply) -> dict:
    """A record (RESP2 flat array or RESP3 map) as {name: value reply}."""
    return {k.value: v for k, v in record_pairs(reply)}


def goblin_commands(goblin, user: bytes) -> list:
    """The command rules of each selector of `user`, root first, from ACL GETUSER."""
    user_fields = fields(goblin.call("ACL", "GETUSER", user))
    return [user_fields[b"commands"].value] + [fields(s)[b"commands"].value for s in user_fields[b"selectors"].value]


@pytest.mark.redis72
def test_command_rules_kept_in_72_order(goblin):
    cases = [
        ([b"+get", b"-get"], [b"-@all -get"]),
        ([b"+get", b"+set", b"+get"], [b"-@all +set +get"]),
        ([b"+@all", b"-get", b"+get"], [b"+@all +get"]),
        ([b"+@read", b"-get", b"+select|0"], [b"-@all +@read -get +select|0"]),
        ([b"+config", b"-config|set", b"+config|get"], [b"-@all +config -config|set +config|get"]),
        ([b"+config|get", b"+config|set", b"-config"], [b"-@all -config"]),
        ([b"+select|0", b"+select|1", b"+select"], [b"-@all +select"]),
        ([b"+GET", b"+Config|GET", b"+@READ", b"-@Write"], [b"-@all +get +config|get +@read -@write"]),
        ([b"+@read", b"-@read"], [b"-@all -@read"]),
        ([b"allcommands", b"-@dangerous", b"nocommands", b"+ping"], [b"-@all +ping"]),
        ([b"(+get -get ~a)", b"(+@all -set)"], [b"-@all", b"-@all -get", b"+@all -set"]),
    ]
    for rules, expected in cases:
        assert goblin.call("ACL", "DELUSER", "rules").kind == ":"
        assert ok(goblin.call("ACL", "SETUSER", "rules", *rules)), rules
        assert goblin_commands(goblin, b"rules") == expected, rules
    rng = random.Random(72)
    for _ in range(300):
        users = {}
        rules = random_rules(rng)
        goblin.call("ACL", "DELUSER", "rules")
        reply = goblin.call("ACL", "SETUSER", "rules", *rules)
        expected = model_setuser(users, b"rules", rules)
        assert reply.raw == expected, rules
        if ok(reply):
            assert goblin_commands(goblin, b"rules") == users[b"rules"].describe(), rules


@pytest.mark.redis72
def test_users_start_with_sanitize_payload(goblin):
    def flags(user):
        return [f.value for f in fields(goblin.call("ACL", "GETUSER", user))[b"flags"].value]
    assert flags("default") == [b"on", b"nopass", b"sanitize-payload"]
    assert ok(goblin.call("ACL", "SETUSER", "fresh"))
    assert flags("fresh") == [b"off", b"sanitize-payload"]
    assert ok(goblin.call("ACL", "SETUSER", "fresh", "skip-sanitize-payload", "reset"))
    assert flags("fresh") == [b"off", b"sanitize-payload"]
    lines = [line.value for line in goblin.call("ACL", "LIST").value]
    assert b"user default on nopass sanitize-payload ~* &* +@all" in lines
    assert b"user fresh off sanitize-payload resetchannels -@all" in lines


@pytest.mark.redis72
def test_acl_log_entry_ids_and_timestamps(acl_pair, goblin):
    """Redis 7.2's entries: entry-id, timestamp-created and timestamp-last-updated after client-info;
    ids count the entries ever created (ACL LOG RESET does not restart them); a grouped entry keeps
    its id and creation time and moves its last update."""
    assert ok(goblin.call("ACL", "SETUSER", "ivan", "on", ">pw", "~k*", "-@all", "+get"))
    started = int(time.time() * 1000)

    def entries():
        out = []
        for entry in goblin.call("ACL", "LOG").value:
            assert [k.value for k, _ in record_pairs(entry)] == LOG_FIELDS + LOG_FIELDS_ADDED_IN_72
            out.append(fields(entry))
        return out

    with goblin_user(acl_pair, b"ivan", b"pw") as u:
        u.call("GET", "x")
        u.call("DEL", "k")
        first = entries()
        assert [e[b"entry-id"].value for e in first] == [first[1][b"entry-id"].value + 1, first[1][b"entry-id"].value]
        now = int(time.time() * 1000)
        for e in first:
            assert started - 1000 <= e[b"timestamp-created"].value <= e[b"timestamp-last-updated"].value <= now + 1000
        time.sleep(0.02)
        u.call("GET", "x")
        grouped = entries()
        assert grouped[0][b"entry-id"].value == first[1][b"entry-id"].value
        assert grouped[0][b"count"].value == 2
        assert grouped[0][b"timestamp-created"].value == first[1][b"timestamp-created"].value
        assert grouped[0][b"timestamp-last-updated"].value > first[1][b"timestamp-last-updated"].value
        assert ok(goblin.call("ACL", "LOG", "RESET"))
        u.call("GET", "y")
        assert entries()[0][b"entry-id"].value == first[0][b"entry-id"].value + 1


# ---- the model the tests expect 7.2's rules from, checked on the reference ---------------------------

def test_the_72_rules_grant_what_the_rules_grant(acl_pair):
    """The command rules the tests expect Redis 7.2 to keep (UserModel) must grant what the rule list
    granted: a user set from its keys, channels and the model's rules answers every DRYRUN as the
    user set from the rule list (on the reference, so a wrong model fails here, not against Goblin)."""
    rng = random.Random(4242)
    probes = [p for p in {random_probe(rng) for _ in range(400)}]
    with acl_pair.reference_server.raw() as r:
        checked = 0
        for _ in range(120):
            users = {}
            rules = random_rules(rng, malformed=0.0)
            predicted = model_setuser(users, USER, rules)
            r.call("ACL", "DELUSER", USER, "copy")
            assert r.call("ACL", "SETUSER", USER, *rules).raw == predicted, rules
            if not ok_bytes(predicted):
                continue
            user_fields = fields(r.call("ACL", "GETUSER", USER))
            described = users[USER].describe()
            copy = [b"reset", *user_fields[b"keys"].value.split(), *user_fields[b"channels"].value.split(),
                    *described[0].split()]
            for selector, commands in zip(user_fields[b"selectors"].value, described[1:]):
                pairs = fields(selector)
                copy.append(b"(" + b" ".join(pairs[b"keys"].value.split() + pairs[b"channels"].value.split() +
                                             commands.split()) + b")")
            assert ok(r.call("ACL", "SETUSER", "copy", *copy)), copy
            for probe in probes:
                a = r.call("ACL", "DRYRUN", USER, *probe).raw
                b = r.call("ACL", "DRYRUN", "copy", *probe).raw
                assert a == b, f"rules {rules}: the model keeps {described}; DRYRUN {probe}: {a!r} vs {b!r}"
            checked += 1
        assert checked > 60
