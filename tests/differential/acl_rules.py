"""What the ACL differential tests share: the reference's (Redis 7.0) ACL texts in Redis 7.2's words,
the comparators for ACL replies, a model of ACL SETUSER, and the random rule lists, commands and
scripts the seeded tests draw from.

Redis 7.0 and 7.2 differ here in four ways (Goblin follows 7.2):
  1. Refusals. 7.0 says "this user has no permissions to run the 'get' command", "... to access one
     of the keys used as arguments", "... one of the channels used as arguments"; 7.2 names the user
     ("User alice has no permissions to run the 'get' command") and shortens the others to "No
     permissions to access a key" / "... a channel". Inside a script 7.0 says "The user executing
     the script can't run this command or subcommand" (or "can't access at least one of the keys
     mentioned in the command arguments", "can't publish to the channel mentioned in the
     command"); 7.2 says "ACL failure in script: " and the top-level text. ACL DRYRUN's "This user
     has no permissions to ..." becomes "User alice has no permissions to ...".
  2. Command rules. 7.0 rebuilds a selector's "commands" description from its bitmap (whole
     categories first, then single commands in hash order); 7.2 keeps the rules as given after a
     leading +@all or -@all, a rule dropping any earlier one for the same command, category or
     subcommand of it (SelectorModel.describe).
  3. sanitize-payload. 7.2 creates every user, the default user included, with the
     sanitize-payload flag (redis#11279); 7.0's users have neither sanitize flag until one is set.
  4. ACL LOG. 7.2 adds entry-id, timestamp-created and timestamp-last-updated to each entry.
Each comparator accepts the reference's own reply or its 7.2 rewriting (so the file passes with
redis-server 7.0 on both sides); the redis72 tests in test_acl.py hold the server under test to 7.2.

The model of ACL SETUSER (UserModel) predicts, for the rule lists generated here, the reply (OK or
the exact error) and the command rules 7.2 keeps. Its replies are checked against the reference's
on every run (SetUserReply), so a gap in the model fails as such instead of blaming the server.
"""

from __future__ import annotations

import hashlib
import re

from support.differ import Comparator, Failure, parse_client_line, record_pairs

# ---- Redis 7.0's texts in Redis 7.2's words -----------------------------------------------------

_CMD_70 = re.compile(rb"this user has no permissions to run the '([^']*)' command")
_DRYRUN_70 = re.compile(rb"This user has no permissions to (run|access) the '(.*)' (command|key|channel)", re.S)
_KEY_70 = b"this user has no permissions to access one of the keys used as arguments"
_CHANNEL_70 = b"this user has no permissions to access one of the channels used as arguments"
_SCRIPT_CMD_70 = b"The user executing the script can't run this command or subcommand"
_SCRIPT_KEY_70 = (b"The user executing the script can't access at least one of the keys mentioned in the "
                  b"command arguments")
_SCRIPT_CHANNEL_70 = b"The user executing the script can't publish to the channel mentioned in the command"
KEY_72 = b"No permissions to access a key"
CHANNEL_72 = b"No permissions to access a channel"


def command_refusal_72(user: bytes, command: bytes) -> bytes:
    return b"User %s has no permissions to run the '%s' command" % (user, command)


def text_as_72(text: bytes, user: bytes, script_command: bytes | None = None) -> bytes:
    """An error or DRYRUN text of the 7.0 reference as Redis 7.2 words it for `user` (and, for a
    refusal inside a script, `script_command`: the full name of the command the script called)."""
    m = _DRYRUN_70.fullmatch(text)
    if m:
        return b"User %s has no permissions to %s the '%s' %s" % (user, m.group(1), m.group(2), m.group(3))
    text = _CMD_70.sub(lambda m: command_refusal_72(user, m.group(1)), text)
    text = text.replace(_KEY_70, KEY_72).replace(_CHANNEL_70, CHANNEL_72)
    if script_command is not None:
        text = text.replace(_SCRIPT_CMD_70, b"ACL failure in script: " + command_refusal_72(user, script_command))
    text = text.replace(_SCRIPT_KEY_70, b"ACL failure in script: " + KEY_72)
    return text.replace(_SCRIPT_CHANNEL_70, b"ACL failure in script: " + CHANNEL_72)


def reply_as_72(reply, user: bytes, script_command: bytes | None = None) -> bytes:
    """The raw bytes of a reference reply with its ACL texts in 7.2's words (errors, bulk strings,
    and the elements of an array such as EXEC's)."""
    if isinstance(reply, Failure):
        return reply.raw
    if reply.kind == "-":
        return b"-" + text_as_72(reply.value, user, script_command) + b"\r\n"
    if reply.kind == "$" and reply.value is not None:
        text = text_as_72(reply.value, user, script_command)
        return b"$%d\r\n%s\r\n" % (len(text), text)
    if reply.kind == "*" and reply.value is not None:
        return b"*%d\r\n" % len(reply.value) + b"".join(reply_as_72(e, user, script_command) for e in reply.value)
    return reply.raw


class AclText(Comparator):
    """A command run as `user`, or ACL DRYRUN for `user`: exact, or the reference's reply with its
    refusals in Redis 7.2's words."""

    name = "acl-text"

    def __init__(self, user: bytes, script_command: bytes | None = None):
        self.user = user
        self.script_command = script_command

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw or g.raw == reply_as_72(r, self.user, self.script_command):
            return None
        return "replies differ (the reference's ACL texts were also tried in Redis 7.2's words)"


class SetUserReply(Comparator):
    """ACL SETUSER: exact; and the reference's reply must be the one the model predicted (a harness
    check: the model supplies the command rules 7.2 keeps, so it must know which rule lists apply)."""

    name = "acl-setuser"

    def __init__(self, predicted: bytes):
        self.predicted = predicted

    def differs(self, step, g, r, ctx):
        if not isinstance(r, Failure) and r.raw != self.predicted:
            return f"the tests' model of ACL SETUSER predicted {self.predicted!r}: fix the model in acl_rules.py"
        return None if g.raw == r.raw else "replies differ"


# ---- users: flags, passwords, selectors -----------------------------------------------------------

SANITIZE_FLAGS = (b"sanitize-payload", b"skip-sanitize-payload")
USER_FLAGS = (b"on", b"off", b"nopass") + SANITIZE_FLAGS


def flags_as_72(flags: list) -> list:
    """A 7.0 user's flags as 7.2 shows them: a user that never had a sanitize flag set has 7.2's
    default, sanitize-payload, which comes last in Redis's flag order."""
    if any(f in SANITIZE_FLAGS for f in flags):
        return list(flags)
    return list(flags) + [b"sanitize-payload"]


def _commands_differ(g: bytes, r: bytes, expected_72: bytes | None, where: str) -> str | None:
    """A selector's command rules agree if Goblin shows the rules 7.2 keeps, or the reference's
    text with its single commands in any order (7.0 lists them in the order of a hash table whose
    seed changes from one process to the next)."""
    if g == r or (expected_72 is not None and g == expected_72) or \
            (g is not None and r is not None and sorted(g.split()) == sorted(r.split())):
        return None
    return (f"{where}commands {g!r}, the reference's {r!r}"
            + (f", Redis 7.2 keeps {expected_72!r}" if expected_72 is not None else ""))


class UserRecord(Comparator):
    """ACL GETUSER: every field exact except the flags (7.2's sanitize-payload) and each selector's
    commands (the reference's text, or `expected_72[i]`, what 7.2 keeps, root selector first)."""

    name = "acl-getuser"

    def __init__(self, expected_72: list | None = None):
        self.expected_72 = expected_72 or []

    def expected(self, i: int):
        return self.expected_72[i] if i < len(self.expected_72) else None

    def _selector(self, gs, rs, i):
        sg, sr = record_pairs(gs), record_pairs(rs)
        if sg is None or sr is None or gs.kind != rs.kind or [k.value for k, _ in sg] != [k.value for k, _ in sr]:
            return f"selector {i}: {gs.raw!r} vs {rs.raw!r}"
        for (k, gv), (_, rv) in zip(sg, sr):
            if k.value == b"commands":
                why = _commands_differ(gv.value, rv.value, self.expected(i), f"selector {i}: ")
                if why:
                    return why
            elif gv.raw != rv.raw:
                return f"selector {i} {k.value.decode()}: {gv.raw!r} vs {rv.raw!r}"
        return None

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != r.kind or g.is_error or r.is_error or g.is_null or r.is_null:
            return "replies differ"
        pg, pr = record_pairs(g), record_pairs(r)
        if pg is None or pr is None or [k.value for k, _ in pg] != [k.value for k, _ in pr]:
            return "different GETUSER fields"
        for (name, gv), (_, rv) in zip(pg, pr):
            field = name.value
            if field == b"flags":
                gf, rf = [e.value for e in gv.value or []], [e.value for e in rv.value or []]
                if gv.kind != rv.kind or gf not in (rf, flags_as_72(rf)):
                    return f"flags {gf} vs the reference's {rf}"
            elif field == b"commands":
                why = _commands_differ(gv.value, rv.value, self.expected(0), "")
                if why:
                    return why
            elif field == b"selectors":
                if gv.kind != rv.kind or len(gv.value or []) != len(rv.value or []):
                    return f"selectors {gv.raw!r} vs {rv.raw!r}"
                for i, (gs, rs) in enumerate(zip(gv.value, rv.value), 1):
                    why = self._selector(gs, rs, i)
                    if why:
                        return why
            elif gv.raw != rv.raw:
                return f"{field.decode()}: {gv.raw!r} vs {rv.raw!r}"
        return None


def parse_description(line: bytes):
    """An ACL LIST line -> (name, flags, passwords, [(patterns, commands) per selector, root first]).
    Key and channel patterns never hold spaces (Redis refuses them), so the line splits on spaces."""
    if not line.startswith(b"user "):
        return None
    name, _, rest = line[5:].partition(b" ")
    root, *selectors = rest.split(b" (")
    tokens = root.split(b" ")
    flags = [t for t in tokens if t in USER_FLAGS]
    passwords = [t for t in tokens if t.startswith(b"#")]
    groups = [[t for t in tokens if t not in USER_FLAGS and not t.startswith(b"#")]]
    groups += [(s[:-1] if s.endswith(b")") else s).split(b" ") for s in selectors]
    parts = [(tuple(t for t in g if t[:1] not in (b"+", b"-")), b" ".join(t for t in g if t[:1] in (b"+", b"-")))
             for g in groups]
    return name, flags, passwords, parts


class UserList(Comparator):
    """ACL LIST: line by line as UserRecord judges GETUSER; `expected_72` maps a user name to the
    command rules 7.2 keeps for each of its selectors."""

    name = "acl-list"

    def __init__(self, expected_72: dict):
        self.expected_72 = expected_72

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.kind != r.kind or r.kind != "*" or g.value is None or r.value is None or len(g.value) != len(r.value):
            return "replies differ"
        for gl, rl in zip(g.value, r.value):
            dg, dr = parse_description(gl.value or b""), parse_description(rl.value or b"")
            if dg is None or dr is None or dg[0] != dr[0]:
                return f"line {gl.value!r} vs {rl.value!r}"
            name, gflags, gpass, gparts = dg
            _, rflags, rpass, rparts = dr
            if gflags not in (rflags, flags_as_72(rflags)) or gpass != rpass or len(gparts) != len(rparts):
                return f"line {gl.value!r} vs {rl.value!r}"
            expected = self.expected_72.get(name, [])
            for i, ((gp, gc), (rp, rc)) in enumerate(zip(gparts, rparts)):
                why = _commands_differ(gc, rc, expected[i] if i < len(expected) else None, f"user {name!r} ")
                if gp != rp or why:
                    return why or f"line {gl.value!r} vs {rl.value!r}"
        return None


# ---- ACL LOG --------------------------------------------------------------------------------------

LOG_FIELDS = [b"count", b"reason", b"context", b"object", b"username", b"age-seconds", b"client-info"]
LOG_FIELDS_ADDED_IN_72 = [b"entry-id", b"timestamp-created", b"timestamp-last-updated"]
# CLIENT LIST fields of an entry's client-info that do not depend on the process or the moment.
LOG_CLIENT_FIELDS = ("name", "user", "cmd", "db")


def log_entry_differs(g, r) -> str | None:
    """One ACL LOG entry: count, reason, context, object and username exact; age-seconds a
    non-negative number; client-info a CLIENT LIST line with the same LOG_CLIENT_FIELDS; Redis
    7.2's three fields, if present, integers after client-info (test_acl.py checks their values)."""
    pg, pr = record_pairs(g), record_pairs(r)
    if pg is None or pr is None or g.kind != r.kind:
        return f"not log entries of one shape: {g.raw[:200]!r} vs {r.raw[:200]!r}"
    names_g, names_r = [k.value for k, _ in pg], [k.value for k, _ in pr]
    if names_r != LOG_FIELDS:
        return f"the reference's entry has fields {names_r}"
    if names_g == LOG_FIELDS + LOG_FIELDS_ADDED_IN_72:
        if any(v.kind != ":" for _, v in pg[len(LOG_FIELDS):]):
            return "Redis 7.2's entry-id / timestamps must be integers"
    elif names_g != LOG_FIELDS:
        return f"fields {names_g}"
    for (name, gv), (_, rv) in zip(pg, pr):
        field = name.value
        if field == b"age-seconds":
            for v in (gv, rv):
                try:
                    if float(v.value) < 0:
                        raise ValueError
                except (TypeError, ValueError):
                    return f"age-seconds {v.raw!r} is not a non-negative number"
        elif field == b"client-info":
            cg, cr = parse_client_line(gv.value or b""), parse_client_line(rv.value or b"")
            if "id" not in cg or "addr" not in cg:
                return f"client-info {gv.value!r} is not a CLIENT LIST line"
            for f in LOG_CLIENT_FIELDS:
                if cg.get(f) != cr.get(f):
                    return f"client-info {f}={cg.get(f)!r}, the reference's {f}={cr.get(f)!r}"
        elif gv.raw != rv.raw:
            return f"{field.decode()} {gv.raw!r} vs {rv.raw!r}"
    return None


class AclLog(Comparator):
    """ACL LOG [count]: the same entries in the same order, each judged by log_entry_differs."""

    name = "acl-log"

    def differs(self, step, g, r, ctx):
        if g.raw == r.raw:
            return None
        if g.is_error or r.is_error or g.kind != r.kind or r.kind != "*" or g.value is None or r.value is None:
            return "replies differ"
        if len(g.value) != len(r.value):
            return f"{len(g.value)} entries, the reference has {len(r.value)}"
        for i, (ge, rentry) in enumerate(zip(g.value, r.value)):
            why = log_entry_differs(ge, rentry)
            if why:
                return f"entry {i}: {why}"
        return None


ACL_LOG = AclLog()

# ---- the command catalog the rules name -----------------------------------------------------------

CATEGORIES = [b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash", b"string", b"bitmap",
              b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin", b"fast", b"slow", b"blocking",
              b"dangerous", b"connection", b"transaction", b"scripting"]
# Commands without subcommands that the rules and the commands run as a user name.
PLAIN_COMMANDS = [b"get", b"set", b"del", b"mget", b"mset", b"incr", b"append", b"lpush", b"lrange", b"sort",
                  b"sort_ro", b"publish", b"spublish", b"subscribe", b"psubscribe", b"ssubscribe",
                  b"unsubscribe", b"ping", b"echo", b"select", b"keys", b"exists", b"eval", b"evalsha",
                  b"eval_ro", b"multi", b"exec", b"discard", b"copy", b"rename", b"flushdb", b"xadd",
                  b"bitfield", b"hset", b"sadd", b"zadd", b"pfadd", b"geoadd", b"type", b"ttl", b"expire",
                  b"info", b"dbsize", b"auth", b"hello", b"reset", b"watch", b"swapdb"]
# Containers and the subcommands the rules name (all of them exist in Redis 7.0 and 7.2).
CONTAINERS = {
    b"config": [b"get", b"set", b"resetstat", b"rewrite", b"help"],
    b"client": [b"id", b"kill", b"list", b"setname", b"getname", b"info", b"no-evict"],
    b"acl": [b"whoami", b"getuser", b"dryrun", b"cat", b"users", b"log"],
    b"object": [b"encoding", b"freq", b"help"],
    b"pubsub": [b"channels", b"numsub", b"help"],
    b"command": [b"info", b"count", b"docs"],
}


def catalog_names() -> list:
    """Every command and subcommand the catalog names (test_acl.py checks both servers have them)."""
    return [c.decode() for c in PLAIN_COMMANDS + list(CONTAINERS)] + \
        [f"{c.decode()}|{s.decode()}" for c, subs in CONTAINERS.items() for s in subs]


def lookup(name: bytes):
    """Redis's ACLLookupCommand over the catalog: ("plain" | "container" | "sub", full name) or None.
    Case-insensitive; "a|b" names a subcommand, one level deep."""
    parts = name.lower().split(b"|")
    if not name or len(parts) > 2:
        return None
    base = parts[0]
    if len(parts) == 1:
        if base in PLAIN_COMMANDS:
            return "plain", base
        return ("container", base) if base in CONTAINERS else None
    if base in CONTAINERS and parts[1] in CONTAINERS[base]:
        return "sub", base + b"|" + parts[1]
    return None


# ---- the model of ACL SETUSER ----------------------------------------------------------------------

EINVAL = b"Syntax error"
ENOENT = b"Unknown command or category name in ACL"
EEXIST = (b"Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
          b"effect. Try 'resetkeys' to start with an empty list of patterns")
EISDIR = (b"Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any "
          b"effect. Try 'resetchannels' to start with an empty list of channels")
ENODEV = b"The password you are trying to remove from the user does not exist"
EBADMSG = b"The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
ECHILD = b"Allowing first-arg of a subcommand is not supported"
_HASH = re.compile(rb"[0-9a-f]{64}")


def password_hash(password: bytes) -> bytes:
    return hashlib.sha256(password).hexdigest().encode()


def _has_space(text: bytes) -> bool:
    return any(c in b" \t\n\v\f\r\x00" for c in text)


class SelectorModel:
    """What of a selector decides ACL SETUSER's errors and its command rules: the allkeys and
    allchannels flags, the +@all bit that lets it run future commands, and the rules 7.2 keeps."""

    def __init__(self, allchannels: bool = False):
        self.allkeys = False
        self.allchannels = allchannels
        self.future = False
        self.rules = []  # (sign, lower-case name): b"+", b"get" / b"-", b"@write" / b"+", b"select|0"

    def copy(self) -> "SelectorModel":
        other = SelectorModel()
        other.allkeys, other.allchannels, other.future, other.rules = \
            self.allkeys, self.allchannels, self.future, list(self.rules)
        return other

    def describe(self) -> bytes:
        """The selector's commands as Redis 7.2 describes them."""
        return b" ".join([b"+@all" if self.future else b"-@all"] + [sign + name for sign, name in self.rules])

    def _keep(self, sign: bytes, name: bytes):
        name = name.lower()
        self.rules = [(s, n) for s, n in self.rules if n != name and not n.startswith(name + b"|")]
        self.rules.append((sign, name))

    def apply(self, op: bytes) -> bytes | None:
        """Redis's ACLSetSelector: None, or the error text."""
        low = op.lower()
        if low in (b"allkeys", b"~*"):
            self.allkeys = True
        elif low == b"resetkeys":
            self.allkeys = False
        elif low in (b"allchannels", b"&*"):
            self.allchannels = True
        elif low == b"resetchannels":
            self.allchannels = False
        elif low in (b"allcommands", b"+@all"):
            self.future, self.rules = True, []
        elif low in (b"nocommands", b"-@all"):
            self.future, self.rules = False, []
        elif op[:1] in (b"~", b"%"):
            if self.allkeys:
                return EEXIST
            offset = 1
            if op[:1] == b"%":
                flags, ok = set(), True
                while offset < len(op):
                    c = op[offset:offset + 1]
                    if c.upper() in (b"R", b"W") and c.upper() not in flags:
                        flags.add(c.upper())
                    elif c == b"~":
                        offset += 1
                        break
                    else:
                        ok = False
                        break
                    offset += 1
                if not flags or not ok:
                    return EINVAL
            if _has_space(op[offset:]):
                return EINVAL
        elif op[:1] == b"&":
            if self.allchannels:
                return EISDIR
            if _has_space(op[1:]):
                return EINVAL
        elif op[:1] == b"+" and op[1:2] != b"@":
            body = op[1:]
            if b"|" not in body:
                found = lookup(body)
                if found is None:
                    return ENOENT
                self._keep(b"+", found[1])
            else:
                head, _, sub = body.rpartition(b"|")
                found = lookup(head)
                if found is None:
                    return ENOENT
                if found[0] == "sub":
                    return ECHILD
                if not sub:
                    return EINVAL
                if found[0] == "container" and lookup(body) is None:
                    return ENOENT
                self._keep(b"+", body)
        elif op[:1] == b"-" and op[1:2] != b"@":
            found = lookup(op[1:])
            if found is None:
                return ENOENT
            self._keep(b"-", found[1])
        elif op[:1] in (b"+", b"-") and op[1:2] == b"@":
            if op[2:].lower() not in CATEGORIES:
                return ENOENT
            self._keep(op[:1], op[1:])
        else:
            return EINVAL
        return None


class UserModel:
    """A user as the model sees it: its password hashes and its selectors, the root one first."""

    def __init__(self):
        self.passwords = []
        self.selectors = [SelectorModel()]

    def copy(self) -> "UserModel":
        other = UserModel()
        other.passwords = list(self.passwords)
        other.selectors = [s.copy() for s in self.selectors]
        return other

    def describe(self) -> list:
        """The command rules 7.2 shows for each selector, the root selector first."""
        return [s.describe() for s in self.selectors]

    def apply(self, op: bytes) -> bytes | None:
        """Redis's ACLSetUser: None, or the error text."""
        low = op.lower()
        if not op or low in (b"on", b"off", b"skip-sanitize-payload", b"sanitize-payload"):
            return None
        if low in (b"nopass", b"resetpass"):
            self.passwords = []
        elif op[:1] in (b">", b"#"):
            if op[:1] == b"#" and not _HASH.fullmatch(op[1:]):
                return EBADMSG
            digest = password_hash(op[1:]) if op[:1] == b">" else op[1:]
            if digest not in self.passwords:
                self.passwords.append(digest)
        elif op[:1] in (b"<", b"!"):
            if op[:1] == b"!" and not _HASH.fullmatch(op[1:]):
                return EBADMSG
            digest = password_hash(op[1:]) if op[:1] == b"<" else op[1:]
            if digest not in self.passwords:
                return ENODEV
            self.passwords.remove(digest)
        elif op[:1] == b"(" and op[-1:] == b")":
            selector = SelectorModel()
            for inner in op[1:-1].split():
                why = selector.apply(inner)
                if why:
                    return why
            self.selectors.append(selector)
        elif low == b"clearselectors":
            del self.selectors[1:]
        elif low == b"reset":
            self.passwords = []
            self.selectors = [SelectorModel()]
        else:
            return self.selectors[0].apply(op)
        return None


def merge_selector_arguments(rules: list):
    """Redis's ACLMergeSelectorArguments: a selector may spread over several arguments, from one
    that opens with '(' to one that ends with ')'. Returns (merged, None) or (None, the opening
    argument of an unclosed selector). An argument that opens a selector while one is open is
    appended to it here, as in valkey's 7.2 line; Redis 7.0 starts the selector again from it
    (dropping what came before), so random_rules never sends one (UNCLOSED)."""
    merged, current, opened = [], None, None
    for rule in rules:
        if current is None and rule[:1] == b"(" and rule[-1:] != b")":
            current, opened = rule, rule
            continue
        if current is not None:
            current += b" " + rule
            if rule[-1:] == b")":
                merged.append(current)
                current = None
            continue
        merged.append(rule)
    return (None, opened) if current is not None else (merged, None)


def model_setuser(users: dict, name: bytes, rules: list) -> bytes:
    """ACL SETUSER name rules... on the model `users` (name -> UserModel): the reply Redis gives;
    the users change only if every rule applies."""
    merged, unclosed = merge_selector_arguments(rules)
    if merged is None:
        return b"-ERR Unmatched parenthesis in acl selector starting at '%s'.\r\n" % unclosed
    user = users[name].copy() if name in users else UserModel()
    for rule in merged:
        why = user.apply(rule)
        if why:
            return b"-ERR Error in ACL SETUSER modifier '%s': %s\r\n" % (rule, why)
    users[name] = user
    return b"+OK\r\n"


# ---- random rule lists ---------------------------------------------------------------------------

PASSWORDS = [b"pw", b"secret", b"", b"p w"]
KEY_PATTERNS = [b"k*", b"k1", b"x", b"*", b"w_*", b"sortme", b"{tag}*", b"k?", b"[kx]1", b"", b"x*", b"a:b"]
CHANNEL_PATTERNS = [b"news*", b"news", b"ch?", b"*", b"chat", b"n[ae]ws", b"", b"zz"]
FIRST_ARGS = [b"select|0", b"select|1", b"SELECT|9", b"get|k1", b"echo|hi", b"select|Ab"]
MALFORMED = [b"bogus", b"+nosuch", b"-nosuch", b"+@nosuch", b"-@", b"+@", b"%X~k", b"%~k", b"%RR~k", b"%",
             b"#abc", b"!" + b"g" * 64, b"#" + b"A" * 64, b"+config|get|x", b"-select|0", b"+config|",
             b"+acl|bogus", b"+|get", b"+select|0|1", b"~a b", b"&a b", b"%R~a b", b"(on)", b"(+get bogus)",
             b"(>pass)", b"(reset)", b"(clearselectors)", b")", b"+", b"-", b"<never-set", b"-config|bogus",
             b"+get|", b"co nfig", UNCLOSED := b"(~k"]


def random_command_rule(rng) -> bytes:
    r = rng.random()
    if r < 0.25:
        name = rng.choice(PLAIN_COMMANDS)
        return bytes([rng.choice(b"+-")]) + (name.upper() if rng.random() < 0.1 else name)
    if r < 0.35:
        return bytes([rng.choice(b"+-")]) + rng.choice(list(CONTAINERS))
    if r < 0.55:
        container = rng.choice(list(CONTAINERS))
        return bytes([rng.choice(b"+-")]) + container + b"|" + rng.choice(CONTAINERS[container])
    if r < 0.62:
        return b"+" + rng.choice(FIRST_ARGS)
    if r < 0.9:
        category = rng.choice(CATEGORIES)
        return bytes([rng.choice(b"+-")]) + b"@" + (category.upper() if rng.random() < 0.1 else category)
    return rng.choice([b"allcommands", b"nocommands", b"+@all", b"-@all", b"+@ALL"])


def random_key_rule(rng) -> bytes:
    r = rng.random()
    if r < 0.4:
        return b"~" + rng.choice(KEY_PATTERNS)
    if r < 0.75:
        return rng.choice([b"%R~", b"%W~", b"%RW~", b"%WR~", b"%r~", b"%R", b"%W~"]) + rng.choice(KEY_PATTERNS)
    return rng.choice([b"allkeys", b"~*", b"resetkeys", b"ALLKEYS"])


def random_channel_rule(rng) -> bytes:
    if rng.random() < 0.6:
        return b"&" + rng.choice(CHANNEL_PATTERNS)
    return rng.choice([b"allchannels", b"&*", b"resetchannels"])


def random_selector_rule(rng) -> bytes:
    r = rng.random()
    if r < 0.5:
        return random_command_rule(rng)
    if r < 0.8:
        return random_key_rule(rng)
    return random_channel_rule(rng)


def random_selector(rng) -> list:
    """A selector, as one argument or spread over several."""
    inner = [random_selector_rule(rng) for _ in range(rng.randint(0, 4))]
    if len(inner) >= 2 and rng.random() < 0.35:
        return [b"(" + inner[0]] + inner[1:-1] + [inner[-1] + b")"]
    return [b"(" + b" ".join(inner) + b")"]


def random_rule(rng, malformed: float) -> list:
    """One rule (a selector may take several arguments)."""
    r = rng.random()
    if r < malformed:
        return [rng.choice(MALFORMED)]
    r = rng.random()
    if r < 0.08:
        return [rng.choice([b"on", b"off", b"skip-sanitize-payload", b"sanitize-payload", b"ON"])]
    if r < 0.2:
        password = rng.choice(PASSWORDS)
        return [rng.choice([b">" + password, b"<" + password, b"#" + password_hash(password),
                            b"!" + password_hash(password), b"nopass", b"resetpass"])]
    if r < 0.37:
        return [random_key_rule(rng)]
    if r < 0.48:
        return [random_channel_rule(rng)]
    if r < 0.85:
        return [random_command_rule(rng)]
    if r < 0.95:
        return random_selector(rng) if rng.random() < 0.85 else [b"clearselectors"]
    return [rng.choice([b"reset", b""])]


def random_rules(rng, malformed: float = 0.08, most: int = 8) -> list:
    """A rule list; an unclosed selector only comes last (see merge_selector_arguments)."""
    rules = []
    for _ in range(rng.randint(0, most)):
        rules += random_rule(rng, malformed)
        if rules[-1] == UNCLOSED:
            break
    return rules


# ---- commands to ask ACL DRYRUN about and to run as a user ------------------------------------------

KEYS = [b"k1", b"k2", b"x", b"w_1", b"sortme", b"{tag}a", b"kx", b"a:b"]
CHANNELS = [b"news", b"news.sport", b"chat", b"ch1", b"zz", b"nws"]
CHANNEL_GLOBS = [b"news*", b"ch?", b"*", b"zz*", b"news"]


def random_probe(rng) -> tuple:
    """A command line that exercises command, subcommand, first-arg, key and channel permissions."""
    k, k2 = rng.choice(KEYS), rng.choice(KEYS)
    ch = rng.choice(CHANNELS)
    return rng.choice([
        (b"get", k), (b"set", k, b"v"), (b"del", k, k2), (b"mget", k, k2), (b"mset", k, b"1", k2, b"2"),
        (b"incr", k), (b"lpush", k, b"a"), (b"lrange", k, b"0", b"-1"), (b"copy", k, k2), (b"rename", k, k2),
        (b"exists", k, k2), (b"type", k), (b"append", k, b"z"), (b"bitfield", k, b"get", b"u8", b"0"),
        (b"bitfield", k, b"set", b"u8", b"0", b"1"), (b"xadd", k, b"*", b"f", b"v"), (b"object", b"encoding", k),
        (b"publish", ch, b"m"), (b"spublish", ch, b"m"), (b"subscribe", ch), (b"ssubscribe", ch),
        (b"psubscribe", rng.choice(CHANNEL_GLOBS)), (b"unsubscribe", ch), (b"select", rng.choice([b"0", b"1", b"9"])),
        (b"config", b"get", b"hz"), (b"config", b"set", b"hz", b"10"), (b"client", b"id"),
        (b"client", b"kill", b"id", b"999999"), (b"acl", b"whoami"), (b"ping",), (b"echo", b"hi"),
        (b"eval", b"return 1", b"1", k), (b"eval_ro", b"return 1", b"0"), (b"sort", b"sortme", b"by", b"w_*"),
        (b"sort_ro", k), (b"flushdb",), (b"keys", b"*"), (b"info",), (b"multi",), (b"exec",), (b"swapdb", b"0", b"1"),
        (b"get",), (b"nosuch", k), (b"config", b"nosuch"), (b"client",), (b"pubsub", b"channels"),
        (b"command", b"count"), (b"acl", b"bogus"), (b"GET", k), (b"Config", b"GET", b"hz"),
    ])


# Scripts run by EVAL as the user: (body, keys, full name of the command the script calls or None).
SCRIPTS = [
    (b"return redis.call('get', KEYS[1])", [b"k1"], b"get"),
    (b"return redis.call('get', KEYS[1])", [b"x"], b"get"),
    (b"return redis.call('set', KEYS[1], 'v')", [b"k2"], b"set"),
    (b"return redis.call('get', 'x')", [], b"get"),
    (b"return redis.call('set', 'k1', 'from-script')", [], b"set"),
    (b"return redis.call('del', 'k1')", [], b"del"),
    (b"return redis.pcall('del', 'k1')", [], b"del"),
    (b"return redis.pcall('get', 'x')", [], b"get"),
    (b"return redis.call('publish', 'news', 'm')", [], b"publish"),
    (b"return redis.call('publish', 'zz', 'm')", [], b"publish"),
    (b"return redis.pcall('publish', 'zz', 'm')", [], b"publish"),
    (b"return redis.call('object', 'encoding', 'k1')", [], b"object|encoding"),
    (b"return redis.pcall('config', 'get', 'hz')", [], b"config|get"),  # refused as noscript first
    (b"return redis.call('sort', 'sortme', 'by', 'w_*')", [], b"sort"),
    (b"return redis.acl_check_cmd('set', 'x', 'v')", [], None),
    (b"return redis.acl_check_cmd('get', 'k1')", [], None),
    (b"return redis.acl_check_cmd('publish', 'news', 'm')", [], None),
    (b"return redis.acl_check_cmd('config', 'set', 'hz', '10')", [], None),
    (b"return redis.acl_check_cmd('object', 'encoding', 'k1')", [], None),
    (b"return redis.acl_check_cmd('nosuch')", [], None),
    (b"return redis.acl_check_cmd()", [], None),
    (b"return redis.acl_check_cmd('get')", [], None),
]


def random_script(rng) -> tuple:
    """(EVAL arguments, full name of the command the script calls or None)."""
    body, keys, inner = rng.choice(SCRIPTS)
    return (b"EVAL", body, b"%d" % len(keys), *keys), inner


# Probes not run as a user: their replies depend on the process (INFO, CLIENT ID, COMMAND COUNT),
# on hash order (KEYS), on encodings 7.2 changed (OBJECT) or on the clock (XADD *); transactions,
# subscriptions and whole-database commands are placed by the tests themselves.
NOT_RUN = [(b"info",), (b"keys",), (b"client", b"id"), (b"command",), (b"object",), (b"xadd",), (b"multi",),
           (b"exec",), (b"subscribe",), (b"ssubscribe",), (b"psubscribe",), (b"swapdb",), (b"flushdb",)]


def random_user_command(rng) -> tuple:
    """(arguments, script command) of a command a user runs: a probe, a SORT with patterns, or a
    script."""
    r = rng.random()
    if r < 0.2:
        return random_script(rng)
    if r < 0.3:
        return rng.choice([(b"sort", b"sortme"), (b"sort", b"sortme", b"by", b"w_*"),
                           (b"sort", b"sortme", b"by", b"nosort"), (b"sort", b"sortme", b"get", b"#"),
                           (b"sort", b"sortme", b"get", b"w_*"), (b"sort_ro", b"sortme", b"by", b"w_*"),
                           (b"sort", b"sortme", b"store", b"k2")]), None
    while True:
        args = random_probe(rng)
        lowered = tuple(a.lower() for a in args)
        if not any(lowered[:len(prefix)] == prefix for prefix in NOT_RUN):
            return args, None
