#!/usr/bin/python3
"""Writes src/server/key_spec_table.cc, Redis's key specifications and command tips as data,
from what a running redis-server answers to COMMAND INFO.

    tools/key_specs_from_redis.py --port 6379 > src/server/key_spec_table.cc

Run it against the Redis version whose command table Goblin follows, then review the diff:
the table is interface data (what COMMAND INFO and COMMAND GETKEYSANDFLAGS report), not code.
"""

import argparse
import sys

import redis

FLAG_NAMES = {"RO": "kKeyRO", "RW": "kKeyRW", "OW": "kKeyOW", "RM": "kKeyRM",
              "access": "kKeyAccess", "update": "kKeyUpdate", "insert": "kKeyInsert",
              "delete": "kKeyDelete", "not_key": "kKeyNotKey", "incomplete": "kKeyIncomplete",
              "variable_flags": "kKeyVariableFlags"}


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def as_map(flat):
    return {text(flat[i]): flat[i + 1] for i in range(0, len(flat), 2)}


def cxx_string(value):
    return '"' + text(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def spec_row(spec):
    spec = as_map(spec)
    flags = " | ".join(FLAG_NAMES[text(f)] for f in spec["flags"]) or "0"
    begin = as_map(spec["begin_search"]) if spec["begin_search"] else {}
    begin_spec = as_map(begin["spec"]) if begin.get("spec") else {}
    if text(begin["type"]) == "index":
        begin_text = f"KeyBegin::Index({begin_spec['index']})"
    elif text(begin["type"]) == "keyword":
        begin_text = f"KeyBegin::Keyword({cxx_string(begin_spec['keyword'])}, {begin_spec['startfrom']})"
    else:
        begin_text = "KeyBegin::Unknown()"
    find = as_map(spec["find_keys"])
    find_spec = as_map(find["spec"]) if find.get("spec") else {}
    if text(find["type"]) == "range":
        find_text = f"KeyFind::Range({find_spec['lastkey']}, {find_spec['keystep']}, {find_spec['limit']})"
    elif text(find["type"]) == "keynum":
        find_text = (f"KeyFind::Keynum({find_spec['keynumidx']}, {find_spec['firstkey']}, "
                     f"{find_spec['keystep']})")
    else:
        find_text = "KeyFind::Unknown()"
    notes = f", {cxx_string(spec['notes'])}" if "notes" in spec else ""
    return f"KeySpec{{{flags}, {begin_text}, {find_text}{notes}}}"


def rows(info, out):
    name, tips, specs, subs = text(info[0]), info[7], info[8], info[9]
    if tips or specs:
        tip_text = ", ".join(cxx_string(t) for t in tips)
        spec_text = ",\n      ".join(spec_row(s) for s in specs)
        out.append(f'  {{"{name}",\n    {{{tip_text}}},\n    {{{spec_text}}}}},')
    for sub in subs:
        rows(sub, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=6379)
    args = parser.parse_args()
    conn = redis.Redis(port=args.port)
    conn.response_callbacks.pop("COMMAND", None)  # the raw reply, not redis-py's digest of it
    version = conn.info("server")["redis_version"]
    out = []
    for info in sorted(conn.execute_command("COMMAND"), key=lambda i: text(i[0])):
        rows(info, out)
    sys.stdout.write(f"""// Redis's key specifications and command tips, as redis-server {version} reports them in
// COMMAND INFO. Written by tools/key_specs_from_redis.py; see server/key_specs.h.
#include "server/key_specs.h"

namespace goblin {{

const std::vector<CommandKeySpecs>& KeySpecTable() {{
  static const std::vector<CommandKeySpecs> kTable = {{
""" + "\n".join(out) + """
  };
  return kTable;
}

}  // namespace goblin
""")


if __name__ == "__main__":
    main()
