"""Keys of non-string types, for wrong-type checks that grow as command families land.

A family that is not implemented yet must be absent everywhere: its creating
command answers `ERR unknown command` and COMMAND INFO returns nil for it.
Once it exists, `create_other_type` makes a key of that type.
"""

from __future__ import annotations

# type name (as TYPE reports it) -> command that creates a one-element value at key "{key}"
OTHER_TYPE_CREATORS = {
    "list": ("RPUSH", "{key}", "a"),
    "set": ("SADD", "{key}", "a"),
    "hash": ("HSET", "{key}", "f", "v"),
    "zset": ("ZADD", "{key}", "1", "a"),
}


def supported_commands(conn, names) -> set:
    """The subset of `names` (lower case) that COMMAND INFO knows on this connection's server."""
    names = [n.lower() for n in names]
    reply = conn.call("COMMAND", "INFO", *names)
    assert reply.kind == "*" and reply.value is not None and len(reply.value) == len(names), \
        f"COMMAND INFO {names} replied {reply!r}"
    return {name for name, info in zip(names, reply.value) if not info.is_null}


def create_other_type(conn, key, type_name: str) -> bool:
    """Creates `key` holding a value of `type_name`; returns False if the server lacks that type.

    Asserts the lack is consistent: COMMAND INFO nil and `ERR unknown command` from the dispatcher.
    """
    command = [part.format(key=key) if isinstance(part, str) else part
               for part in OTHER_TYPE_CREATORS[type_name]]
    name = command[0].lower()
    known = name in supported_commands(conn, [name])
    reply = conn.call(*command)
    if not known:
        assert reply.is_error and reply.value.startswith(b"ERR unknown command '%s'" % command[0].encode()), \
            f"COMMAND INFO does not know {name} but {command} replied {reply!r}"
        return False
    assert reply.raw == b":1\r\n", f"{command} replied {reply!r}"
    return True
