"""cmsgpack and struct inside EVAL, side by side with redis-server: every integer and string size
boundary, float against double, holes, nesting limits, garbage and truncated input, unpack_one
and unpack_limit offsets, every struct format letter with alignment and its errors, and seeded
random values packed and unpacked (lua_library_cases.py).

Left out: packing a library table itself (`cmsgpack:pack()`). Goblin's library tables are
read-only proxies, which cmsgpack walks as empty tables; Redis marks the tables themselves
read-only in its patched Lua."""

from support.differ import Op, Step

from .lua_library_cases import WRAPPER, snippets


def script(body):
    return WRAPPER.replace("@BODY@", body).encode("latin-1")


def test_cmsgpack_and_struct_match_redis(corpus):
    bodies = [body for body in snippets() if "cmsgpack:pack" not in body]
    assert len(bodies) > 700
    ops = [Op([Step((b"EVAL", script(body), b"0"))], body[:60]) for body in bodies]
    corpus("lua-libraries", "snippets", ops, protocols=(2,))
