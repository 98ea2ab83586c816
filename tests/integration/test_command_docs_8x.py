"""COMMAND INFO and COMMAND DOCS of the commands Redis 7.4, 8.0, 8.2 and 8.4 added or extended,
against Redis's own command descriptions: src/commands.def of Redis 8.2 (the hash field expiry
commands, HGETDEL, HGETEX, HSETEX, XADD, XDELEX, XACKDEL, BITOP, HSCAN), the 8.4 command JSON
files of DIGEST, DELEX and MSETEX, and SET's 8.4 description. The redis-server of the
differential suite (7.0) knows none of them, so the expected values are written out here."""

import pytest

RW, RO, OW = "RW", "RO", "OW"


def spec(flags, index=1, notes=None, last=0):
    """A key spec beginning at a fixed index with a range of keys, as COMMAND INFO prints it."""
    out = {}
    if notes:
        out["notes"] = notes
    out["flags"] = sorted(flags)
    out["begin_search"] = {"type": "index", "spec": {"index": index}}
    out["find_keys"] = {"type": "range", "spec": {"lastkey": last, "keystep": 1, "limit": 0}}
    return out


def arg(name, type_, token=None, since=None, optional=False, multiple=False, key=None, args=None):
    """One argument of COMMAND DOCS in Redis 7.2+'s field order: display_text for all but oneof
    and block, key_spec_index for keys."""
    out = {"name": name, "type": type_}
    if type_ not in ("oneof", "block"):
        out["display_text"] = name
    if key is not None:
        out["key_spec_index"] = key
    if token:
        out["token"] = token
    if since:
        out["since"] = since
    flags = [f for f, on in (("optional", optional), ("multiple", multiple)) if on]
    if flags:
        out["flags"] = flags
    if args is not None:
        out["arguments"] = args
    return out


def key(name="key", index=0, **kw):
    return arg(name, "key", key=index, **kw)


def tokens(name, *words, optional=True):
    return arg(name, "oneof", optional=optional, args=[arg(w.lower(), "pure-token", w) for w in words])


FIELDS = arg("fields", "block", "FIELDS", args=[arg("numfields", "integer"),
                                                arg("field", "string", multiple=True)])
HEXPIRE_CONDITION = tokens("condition", "NX", "XX", "GT", "LT")
IDS = arg("ids", "block", "IDS", args=[arg("numids", "integer"), arg("id", "string", multiple=True)])
REFERENCE_POLICY = tokens("condition", "KEEPREF", "DELREF", "ACKED")


def expiration(last):
    return arg("expiration", "oneof", optional=True, args=[
        arg("seconds", "integer", "EX"), arg("milliseconds", "integer", "PX"),
        arg("unix-time-seconds", "unix-time", "EXAT"), arg("unix-time-milliseconds", "unix-time", "PXAT"),
        arg(last.lower(), "pure-token", last)])


HASH_EXPIRE_COMPLEXITY = "O(N) where N is the number of specified fields"

# name: (arity, flags, (first, last, step), acl categories, tips, key specs,
#        summary, since, group, complexity, history, arguments)
EXPECTED = {
    "hexpire": (-6, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                [spec({RW, "update"})],
                "Set expiry for hash field using relative time to expire (seconds)", "7.4.0", "hash",
                HASH_EXPIRE_COMPLEXITY, [],
                [key(), arg("seconds", "integer"), HEXPIRE_CONDITION, FIELDS]),
    "hpexpire": (-6, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                 [spec({RW, "update"})],
                 "Set expiry for hash field using relative time to expire (milliseconds)", "7.4.0",
                 "hash", HASH_EXPIRE_COMPLEXITY, [],
                 [key(), arg("milliseconds", "integer"), HEXPIRE_CONDITION, FIELDS]),
    "hexpireat": (-6, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                  [spec({RW, "update"})],
                  "Set expiry for hash field using an absolute Unix timestamp (seconds)", "7.4.0",
                  "hash", HASH_EXPIRE_COMPLEXITY, [],
                  [key(), arg("unix-time-seconds", "unix-time"), HEXPIRE_CONDITION, FIELDS]),
    "hpexpireat": (-6, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                   [spec({RW, "update"})],
                   "Set expiry for hash field using an absolute Unix timestamp (milliseconds)", "7.4.0",
                   "hash", HASH_EXPIRE_COMPLEXITY, [],
                   [key(), arg("unix-time-milliseconds", "unix-time"), HEXPIRE_CONDITION, FIELDS]),
    "httl": (-5, {"readonly", "fast"}, (1, 1, 1), {"@read", "@hash", "@fast"}, ["nondeterministic_output"],
             [spec({RO, "access"})], "Returns the TTL in seconds of a hash field.", "7.4.0", "hash",
             HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hpttl": (-5, {"readonly", "fast"}, (1, 1, 1), {"@read", "@hash", "@fast"}, ["nondeterministic_output"],
              [spec({RO, "access"})], "Returns the TTL in milliseconds of a hash field.", "7.4.0", "hash",
              HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hexpiretime": (-5, {"readonly", "fast"}, (1, 1, 1), {"@read", "@hash", "@fast"}, [],
                    [spec({RO, "access"})],
                    "Returns the expiration time of a hash field as a Unix timestamp, in seconds.",
                    "7.4.0", "hash", HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hpexpiretime": (-5, {"readonly", "fast"}, (1, 1, 1), {"@read", "@hash", "@fast"}, [],
                     [spec({RO, "access"})],
                     "Returns the expiration time of a hash field as a Unix timestamp, in msec.",
                     "7.4.0", "hash", HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hpersist": (-5, {"write", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                 [spec({RW, "update"})], "Removes the expiration time for each specified field",
                 "7.4.0", "hash", HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hgetdel": (-5, {"write", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
                [spec({RW, "access", "delete"})],
                "Returns the value of a field and deletes it from the hash.", "8.0.0", "hash",
                HASH_EXPIRE_COMPLEXITY, [], [key(), FIELDS]),
    "hgetex": (-5, {"write", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
               [spec({RW, "access", "update"}, notes="RW and UPDATE because it changes the TTL")],
               "Get the value of one or more fields of a given hash key, and optionally set their "
               "expiration.", "8.0.0", "hash", HASH_EXPIRE_COMPLEXITY, [],
               [key(), expiration("PERSIST"), FIELDS]),
    "hsetex": (-6, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@hash", "@fast"}, [],
               [spec({RW, "update"})],
               "Set the value of one or more fields of a given hash key, and optionally set their "
               "expiration.", "8.0.0", "hash", "O(N) where N is the number of fields being set.", [],
               [key(), tokens("condition", "FNX", "FXX"), expiration("KEEPTTL"),
                arg("fields", "block", "FIELDS", args=[
                    arg("numfields", "integer"),
                    arg("data", "block", multiple=True,
                        args=[arg("field", "string"), arg("value", "string")])])]),
    "digest": (2, {"readonly", "fast"}, (1, 1, 1), {"@read", "@string", "@fast"}, [],
               [spec({RO, "access"})], "Returns the XXH3 hash of a string value.", "8.4.0", "string",
               "O(N) where N is the length of the string value.", [], [key()]),
    "delex": (-2, {"write", "fast"}, (1, 1, 1), {"@write", "@string", "@fast"}, [],
              [spec({RW, "delete", "variable_flags"})],
              "Conditionally removes the specified key based on value or digest comparison.", "8.4.0",
              "string", "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string value.",
              [], [key(), arg("condition", "oneof", optional=True, args=[
                  arg("ifeq-value", "string", "IFEQ"), arg("ifne-value", "string", "IFNE"),
                  arg("ifdeq-digest", "integer", "IFDEQ"), arg("ifdne-digest", "integer", "IFDNE")])]),
    "msetex": (-4, {"write", "denyoom", "movablekeys"}, (0, 0, 0), {"@write", "@string", "@slow"},
               ["request_policy:multi_shard", "response_policy:all_succeeded"],
               [{"flags": sorted({OW, "update"}), "begin_search": {"type": "index", "spec": {"index": 1}},
                 "find_keys": {"type": "keynum", "spec": {"keynumidx": 0, "firstkey": 1, "keystep": 2}}}],
               "Atomically sets multiple string keys with a shared expiration in a single operation. "
               "Supports flexible argument parsing where condition and expiration flags can appear in "
               "any order.", "8.4.0", "string", "O(N) where N is the number of keys to set.", [],
               [arg("numkeys", "integer"),
                arg("data", "block", multiple=True, args=[key(), arg("value", "string")]),
                tokens("condition", "NX", "XX"), expiration("KEEPTTL")]),
    "set": (-3, {"write", "denyoom"}, (1, 1, 1), {"@write", "@string", "@slow"}, [],
            [spec({RW, "access", "update", "variable_flags"},
                  notes="RW and ACCESS due to the optional `GET` argument")],
            "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
            "1.0.0", "string", "O(1)",
            [["2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."],
             ["6.0.0", "Added the `KEEPTTL` option."],
             ["6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."],
             ["7.0.0", "Allowed the `NX` and `GET` options to be used together."],
             ["8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."]],
            [key(), arg("value", "string"),
             arg("condition", "oneof", since="2.6.12", optional=True, args=[
                 arg("nx", "pure-token", "NX"), arg("xx", "pure-token", "XX"),
                 arg("ifeq-value", "string", "IFEQ", since="8.4.0"),
                 arg("ifne-value", "string", "IFNE", since="8.4.0"),
                 arg("ifdeq-digest", "integer", "IFDEQ", since="8.4.0"),
                 arg("ifdne-digest", "integer", "IFDNE", since="8.4.0")]),
             arg("get", "pure-token", "GET", since="6.2.0", optional=True),
             arg("expiration", "oneof", optional=True, args=[
                 arg("seconds", "integer", "EX", since="2.6.12"),
                 arg("milliseconds", "integer", "PX", since="2.6.12"),
                 arg("unix-time-seconds", "unix-time", "EXAT", since="6.2.0"),
                 arg("unix-time-milliseconds", "unix-time", "PXAT", since="6.2.0"),
                 arg("keepttl", "pure-token", "KEEPTTL", since="6.0.0")])]),
    "bitop": (-4, {"write", "denyoom"}, (2, -1, 1), {"@write", "@bitmap", "@slow"}, [],
              [spec({OW, "update"}, index=2), spec({RO, "access"}, index=3, last=-1)],
              "Performs bitwise operations on multiple strings, and stores the result.", "2.6.0",
              "bitmap", "O(N)", [],
              [tokens("operation", "AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE", optional=False),
               key("destkey", 0), key("key", 1, multiple=True)]),
    "xadd": (-5, {"write", "denyoom", "fast"}, (1, 1, 1), {"@write", "@stream", "@fast"},
             ["nondeterministic_output"],
             [spec({RW, "update"}, notes="UPDATE instead of INSERT because of the optional trimming feature")],
             "Appends a new message to a stream. Creates the key if it doesn't exist.", "5.0.0", "stream",
             "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
             [["6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."],
              ["7.0.0", "Added support for the `<ms>-*` explicit ID form."],
              ["8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options."]],
             [key(), arg("nomkstream", "pure-token", "NOMKSTREAM", since="6.2.0", optional=True),
              REFERENCE_POLICY,
              arg("trim", "block", optional=True, args=[
                  arg("strategy", "oneof", args=[arg("maxlen", "pure-token", "MAXLEN"),
                                                 arg("minid", "pure-token", "MINID", since="6.2.0")]),
                  arg("operator", "oneof", optional=True, args=[arg("equal", "pure-token", "="),
                                                                arg("approximately", "pure-token", "~")]),
                  arg("threshold", "string"),
                  arg("count", "integer", "LIMIT", since="6.2.0", optional=True)]),
              arg("id-selector", "oneof", args=[arg("auto-id", "pure-token", "*"), arg("id", "string")]),
              arg("data", "block", multiple=True, args=[arg("field", "string"), arg("value", "string")])]),
    "xdelex": (-5, {"write", "fast"}, (1, 1, 1), {"@write", "@stream", "@fast"}, [],
               [spec({RW, "delete"})], "Deletes one or multiple entries from the stream.", "8.2.0",
               "stream", "O(1) for each single item to delete in the stream, regardless of the stream size.",
               [], [key(), REFERENCE_POLICY, IDS]),
    "xackdel": (-6, {"write", "fast"}, (1, 1, 1), {"@write", "@stream", "@fast"}, [],
                [spec({RW, "update", "delete"})],
                "Acknowledges and deletes one or multiple messages for a stream consumer group.",
                "8.2.0", "stream", "O(1) for each message ID processed.", [],
                [key(), arg("group", "string"), REFERENCE_POLICY, IDS]),
    "hscan": (-3, {"readonly"}, (1, 1, 1), {"@read", "@hash", "@slow"}, ["nondeterministic_output"],
              [spec({RO, "access"})], "Iterates over fields and values of a hash.", "2.8.0", "hash",
              "O(1) for every call. O(N) for a complete iteration, including enough command calls for "
              "the cursor to return back to 0. N is the number of elements inside the collection.", [],
              [key(), arg("cursor", "integer"), arg("pattern", "pattern", "MATCH", optional=True),
               arg("count", "integer", "COUNT", optional=True),
               arg("novalues", "pure-token", "NOVALUES", optional=True)]),
}


def text(value):
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [text(v) for v in value]
    return value


def pairs(flat):
    """A RESP2 flat map as an ordered dict; nested maps are converted by the caller."""
    return dict(zip(flat[0::2], flat[1::2]))


def key_spec(flat):
    out = pairs(flat)
    out["flags"] = sorted(f.upper() if f in ("rw", "ro", "ow", "rm") else f for f in out["flags"])
    for part in ("begin_search", "find_keys"):
        inner = pairs(out[part])
        inner["spec"] = pairs(inner["spec"])
        out[part] = inner
    return out


def argument(flat):
    out = pairs(flat)
    if "arguments" in out:
        out["arguments"] = [argument(a) for a in out["arguments"]]
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_command_info_matches_redis(raw, name):
    arity, flags, legacy, acl, tips, specs = EXPECTED[name][:6]
    [info] = text(raw.call("COMMAND", "INFO", name).py())
    assert info[0] == name
    assert (info[1], set(info[2]), tuple(info[3:6]), set(info[6]), info[7]) == (arity, flags, legacy, acl, tips)
    assert [key_spec(s) for s in info[8]] == specs


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_command_docs_match_redis(raw, name):
    summary, since, group, complexity, history, arguments = EXPECTED[name][6:]
    reply = text(raw.call("COMMAND", "DOCS", name).py())
    assert reply[0] == name
    doc = pairs(reply[1])
    expected_fields = ["summary", "since", "group", "complexity"] + (["history"] if history else []) + ["arguments"]
    assert list(doc) == expected_fields
    assert (doc["summary"], doc["since"], doc["group"], doc["complexity"]) == (summary, since, group, complexity)
    assert doc.get("history", []) == history
    got = [argument(a) for a in doc["arguments"]]
    for have, want in zip(got, arguments):
        assert list(have.items()) == list(want.items()), have["name"]
    assert len(got) == len(arguments)


GETKEYS = [
    (("HGETEX", "h", "EX", "10", "FIELDS", "1", "f"), ["h"]),
    (("HEXPIRE", "h", "10", "NX", "FIELDS", "2", "a", "b"), ["h"]),
    (("HSETEX", "h", "FNX", "FIELDS", "1", "f", "v"), ["h"]),
    (("MSETEX", "2", "a", "1", "b", "2", "PX", "5"), ["a", "b"]),
    (("DELEX", "k", "IFEQ", "v"), ["k"]),
    (("BITOP", "DIFF", "d", "a", "b"), ["d", "a", "b"]),
    (("XACKDEL", "s", "g", "ACKED", "IDS", "1", "0-1"), ["s"]),
    (("XDELEX", "s", "IDS", "1", "0-1"), ["s"]),
]


@pytest.mark.parametrize("call,keys", GETKEYS, ids=lambda c: " ".join(c) if isinstance(c, tuple) else "")
def test_command_getkeys(raw, call, keys):
    assert text(raw.call("COMMAND", "GETKEYS", *call).py()) == keys
