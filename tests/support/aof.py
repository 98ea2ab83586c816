"""Reading what a server appended to its multi-part append-only file."""

from __future__ import annotations

import os

from .resp import parse_reply


def incr_commands(srv) -> list[tuple]:
    """(db, COMMAND, args...) of every command in the server's newest incr file."""
    aof_dir = os.path.join(srv.dir, "appendonlydir")
    entries = [dict(zip(line.split()[0::2], line.split()[1::2]))
               for line in open(os.path.join(aof_dir, "appendonly.aof.manifest")).read().splitlines()]
    incr = [entry["file"] for entry in entries if entry.get("type") == "i"]
    data = open(os.path.join(aof_dir, incr[-1]), "rb").read()
    commands, pos, db = [], 0, 0
    while pos < len(data):
        reply, pos = parse_reply(data, pos)
        words = [e.value for e in reply.elements()]
        if words[0].upper() == b"SELECT":
            db = int(words[1])
            continue
        commands.append((db, words[0].upper(), *words[1:]))
    return commands
