"""Builders for expected RESP bytes, so tests state exact replies readably.

    ok                    b"+OK\\r\\n"
    bulk(b"v")            b"$1\\r\\nv\\r\\n"
    nil                   b"$-1\\r\\n"        (RESP2 null bulk)
    integer(3)            b":3\\r\\n"
    err("ERR syntax error")  b"-ERR syntax error\\r\\n"
    arr(bulk(b"a"), nil)  an array of already-encoded elements
    simple("PONG")        b"+PONG\\r\\n"
"""

from __future__ import annotations

import shlex

from .resp import to_bytes

ok = b"+OK\r\n"
nil = b"$-1\r\n"
null_array = b"*-1\r\n"
resp3_null = b"_\r\n"

WRONGTYPE = b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
SYNTAX = b"-ERR syntax error\r\n"
NOT_INTEGER = b"-ERR value is not an integer or out of range\r\n"
NOT_FLOAT = b"-ERR value is not a valid float\r\n"


def simple(text) -> bytes:
    return b"+" + to_bytes(text) + b"\r\n"


def bulk(value) -> bytes:
    if value is None:
        return nil
    data = to_bytes(value)
    return b"$%d\r\n%s\r\n" % (len(data), data)


def integer(n: int) -> bytes:
    return b":%d\r\n" % n


def err(text) -> bytes:
    return b"-" + to_bytes(text) + b"\r\n"


def arity(command: str) -> bytes:
    return err(f"ERR wrong number of arguments for '{command}' command")


def arr(*items) -> bytes:
    return b"*%d\r\n" % len(items) + b"".join(items)


def bulks(*values) -> bytes:
    """An array of bulk strings (None becomes a null bulk)."""
    return arr(*(bulk(v) for v in values))


def run_steps(conn, steps):
    """Sends each (command, expected) pair and checks the reply.

    A string command is split like a shell line; expected is exact bytes, a predicate on the
    Reply, or None (anything).

    Fails with the index, command and both replies at the first difference.
    """
    for i, step in enumerate(steps):
        command, expected = step
        args = shlex.split(command) if isinstance(command, str) else list(command)
        reply = conn.call(*args)
        if expected is None:
            continue
        if callable(expected):
            assert expected(reply), f"step {i} {args!r}: unexpected reply {reply!r}"
        else:
            assert reply.raw == expected, (f"step {i} {args!r}:\n  expected {expected!r}\n"
                                           f"  got      {reply.raw!r}")
