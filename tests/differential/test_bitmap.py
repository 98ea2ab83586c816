"""Bitmap commands, side by side with redis-server: scripted edge cases (the random streams in
test_random_streams.py mix the same commands into everything else).

Every reply must match byte for byte; the cases avoid missing keys with malformed ranges, where
Redis 7.0 and 7.2 differ (generators.BitRangeOnMissingKey)."""

import pytest

WORD = b"\xff\xf0\x00\x0f\x80"

SCRIPT = [
    # SETBIT grows the string with zero bytes and returns the old bit; a 4 KB jump moves the value.
    ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "1"), ("SETBIT", "b", "7", "0"),
    ("SETBIT", "b", "100", "1"), ("STRLEN", "b"), ("GET", "b"), ("SETBIT", "b", "40000", "1"),
    ("STRLEN", "b"), ("GETBIT", "b", "40000"), ("GETBIT", "b", "40001"), ("GETBIT", "b", "999999"),
    ("OBJECT", "ENCODING", "b"), ("SETBIT", "b", "0", "2"), ("SETBIT", "b", "-1", "1"),
    ("SETBIT", "b", "4294967295", "x"), ("GETBIT", "b", "4294967296"), ("GETBIT", "nope", "3"),
    # Integers and short strings become raw strings.
    ("SET", "n", "123"), ("SETBIT", "n", "1", "1"), ("GET", "n"), ("OBJECT", "ENCODING", "n"),
    ("SET", "e", "abc"), ("SETBIT", "e", "30", "1"), ("GET", "e"),
    # BITCOUNT: byte and bit ranges, negative and reversed indexes.
    ("SET", "w", WORD), ("BITCOUNT", "w"), ("BITCOUNT", "w", "1", "1"), ("BITCOUNT", "w", "-2", "-1"),
    ("BITCOUNT", "w", "-1", "-2"), ("BITCOUNT", "w", "2", "100"), ("BITCOUNT", "w", "5", "9", "BIT"),
    ("BITCOUNT", "w", "-9", "-3", "bit"), ("BITCOUNT", "w", "0", "-1", "BYTE"), ("BITCOUNT", "w", "0"),
    ("BITCOUNT", "w", "0", "1", "nibble"), ("BITCOUNT", "w", "a", "1"), ("BITCOUNT", "nope"),
    # BITPOS: set and clear bits, with and without an end, in bytes and bits.
    ("BITPOS", "w", "0"), ("BITPOS", "w", "1"), ("BITPOS", "w", "1", "2"), ("BITPOS", "w", "0", "1"),
    ("BITPOS", "w", "1", "2", "2"), ("BITPOS", "w", "0", "0", "0"), ("BITPOS", "w", "1", "13", "30", "BIT"),
    ("BITPOS", "w", "0", "-6", "-1", "BIT"), ("SET", "ones", b"\xff\xff"), ("BITPOS", "ones", "0"),
    ("BITPOS", "ones", "0", "1"), ("BITPOS", "ones", "0", "0", "-1"), ("BITPOS", "ones", "1", "5", "2"),
    ("BITPOS", "nope", "0"), ("BITPOS", "nope", "1"), ("BITPOS", "w", "2"), ("SET", "empty", ""),
    ("BITPOS", "empty", "0"), ("BITPOS", "empty", "1"), ("BITCOUNT", "empty"),
    # BITOP over different lengths, a missing key, NOT, and a result that deletes its target.
    ("SET", "x", b"\x0f\xf0\xaa"), ("SET", "y", b"\xff"), ("BITOP", "AND", "d", "x", "y"), ("GET", "d"),
    ("BITOP", "or", "d", "x", "y", "nope"), ("GET", "d"), ("BITOP", "XOR", "d", "x", "y", "x"), ("GET", "d"),
    ("BITOP", "AND", "d", "x", "nope"), ("GET", "d"), ("BITOP", "NOT", "d", "x"), ("GET", "d"),
    ("BITOP", "NOT", "d", "x", "y"), ("BITOP", "NAND", "d", "x"), ("EXPIRE", "d", "100"),
    ("BITOP", "OR", "d", "nope", "nope2"), ("EXISTS", "d"), ("BITOP", "OR", "d", "x"), ("TTL", "d"),
    ("HSET", "h", "f", "v"), ("BITOP", "OR", "d", "x", "h"), ("SETBIT", "h", "1", "1"),
    ("GETBIT", "h", "1"), ("BITCOUNT", "h"), ("BITPOS", "h", "1"),
]


def test_bitmap_script_matches_reference(diff_goblin, reference_server):
    with diff_goblin.raw() as g, reference_server.raw() as r:
        for conn in (g, r):
            assert conn.call("FLUSHALL").raw == b"+OK\r\n"
        for step in SCRIPT:
            assert g.call(*step).raw == r.call(*step).raw, step


@pytest.mark.parametrize("bits", [1, 9, 64, 65, 1000, 4099])
def test_bitcount_and_bitpos_agree_on_every_range_of_a_random_bitmap(diff_goblin, reference_server, bits):
    import random
    rng = random.Random(bits)
    with diff_goblin.raw() as g, reference_server.raw() as r:
        for conn in (g, r):
            conn.call("DEL", "rb")
        for _ in range(bits // 3 + 1):
            offset = str(rng.randrange(bits))
            assert g.call("SETBIT", "rb", offset, "1").raw == r.call("SETBIT", "rb", offset, "1").raw
        size = bits // 8 + 1
        for _ in range(60):
            start, end = str(rng.randint(-size * 9, size * 9)), str(rng.randint(-size * 9, size * 9))
            unit = rng.choice(["BYTE", "BIT"])
            for step in (("BITCOUNT", "rb", start, end, unit), ("BITPOS", "rb", rng.choice("01"), start, end, unit),
                         ("BITPOS", "rb", rng.choice("01"), start)):
                assert g.call(*step).raw == r.call(*step).raw, step
