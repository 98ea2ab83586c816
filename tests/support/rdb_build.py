"""RDB files built byte by byte from the format's description (redis.io's RDB file format notes and
Redis's rdb.h / ziplist.c / zipmap.c / intset.c / listpack.c layouts), for the encodings current
Redis no longer writes (linked lists, ziplists, zipmaps, quicklists of ziplists, text scores, stream
v1) and those Debian's Redis 7.0 does not write (7.2's listpack sets and stream v3, 7.4's slot
information): the tests load them into goblin-server and, where it reads them, into redis-server.

Nothing here comes from Goblin: the encoders follow the layouts as documented, so that a misreading
shared by Goblin's writer and reader cannot hide."""

from __future__ import annotations

import struct

# Opcodes and value types (rdb.h).
OP_SLOT_INFO, OP_FUNCTION2, OP_MODULE_AUX, OP_IDLE, OP_FREQ, OP_AUX = 244, 245, 247, 248, 249, 250
OP_RESIZEDB, OP_EXPIRETIME_MS, OP_EXPIRETIME, OP_SELECTDB, OP_EOF = 251, 252, 253, 254, 255
T_STRING, T_LIST, T_SET, T_ZSET, T_HASH, T_ZSET_2, T_MODULE_2 = 0, 1, 2, 3, 4, 5, 7
T_HASH_ZIPMAP, T_LIST_ZIPLIST, T_SET_INTSET, T_ZSET_ZIPLIST, T_HASH_ZIPLIST = 9, 10, 11, 12, 13
T_LIST_QUICKLIST, T_STREAM_LISTPACKS, T_HASH_LISTPACK, T_ZSET_LISTPACK = 14, 15, 16, 17
T_LIST_QUICKLIST_2, T_STREAM_LISTPACKS_2, T_SET_LISTPACK, T_STREAM_LISTPACKS_3 = 18, 19, 20, 21
T_HASH_METADATA = 24


def crc64(data: bytes) -> int:
    """Redis's CRC-64 (Jones polynomial, reflected, initial 0, no final xor)."""
    table = _crc_table()
    crc = 0
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


_TABLE: list[int] = []


def _crc_table() -> list[int]:
    if not _TABLE:
        for n in range(256):
            crc = n
            for _ in range(8):
                crc = (crc >> 1) ^ 0x95AC9329AC4BC9B5 if crc & 1 else crc >> 1
            _TABLE.append(crc)
    return _TABLE


def length(n: int) -> bytes:
    if n < 1 << 6:
        return bytes([n])
    if n < 1 << 14:
        return bytes([0x40 | n >> 8, n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def raw_string(s: bytes) -> bytes:
    return length(len(s)) + s


def int_string(v: int) -> bytes:
    """An integer in the C0/C1/C2 encodings."""
    if -128 <= v <= 127:
        return b"\xc0" + struct.pack("<b", v)
    if -32768 <= v <= 32767:
        return b"\xc1" + struct.pack("<h", v)
    return b"\xc2" + struct.pack("<i", v)


def lzf_string(s: bytes) -> bytes:
    """s as an LZF-compressed string (C3): runs of a repeated byte become back references, the rest
    literal runs; valid LZF whatever the input."""
    out = bytearray()
    literal = bytearray()

    def flush():
        for start in range(0, len(literal), 32):
            chunk = literal[start:start + 32]
            out.append(len(chunk) - 1)
            out.extend(chunk)
        literal.clear()

    i = 0
    while i < len(s):
        run = 1
        while i + run < len(s) and s[i + run] == s[i] and run < 264:
            run += 1
        if run >= 4:
            literal.append(s[i])  # the byte the reference copies
            flush()
            count = run - 1  # bytes copied from one back
            while count >= 3:
                take = min(count, 264)
                if take - 2 < 7:
                    out.append((take - 2) << 5)
                else:
                    out.append(7 << 5)
                    out.append(take - 2 - 7)
                out.append(0)  # offset 1
                count -= take
            literal.extend(s[i:i + 1] * count)
            i += run
        else:
            literal.append(s[i])
            i += 1
    flush()
    return b"\xc3" + length(len(out)) + length(len(s)) + bytes(out)


def string(s: bytes | str) -> bytes:
    return raw_string(s.encode() if isinstance(s, str) else s)


def canonical_int(s: bytes):
    try:
        v = int(s)
    except ValueError:
        return None
    return v if str(v).encode() == s and -2**63 <= v < 2**63 else None


# ---- containers ------------------------------------------------------------------------------------------

def ziplist(elements: list[bytes]) -> bytes:
    entries = bytearray()
    previous = 0
    last = 10
    for e in elements:
        entry = bytearray(bytes([previous]) if previous < 254 else b"\xfe" + struct.pack("<I", previous))
        v = canonical_int(e)
        if v is not None and 0 <= v <= 12:
            entry.append(0xF1 + v)
        elif v is not None and -128 <= v <= 127:
            entry += b"\xfe" + struct.pack("<b", v)
        elif v is not None and -32768 <= v <= 32767:
            entry += b"\xc0" + struct.pack("<h", v)
        elif v is not None and -(1 << 23) <= v < 1 << 23:
            entry += b"\xf0" + struct.pack("<i", v)[:3]
        elif v is not None and -2**31 <= v < 2**31:
            entry += b"\xd0" + struct.pack("<i", v)
        elif v is not None:
            entry += b"\xe0" + struct.pack("<q", v)
        elif len(e) < 64:
            entry += bytes([len(e)]) + e
        elif len(e) < 16384:
            entry += struct.pack(">H", 0x4000 | len(e)) + e
        else:
            entry += b"\x80" + struct.pack(">I", len(e)) + e
        last = 10 + len(entries)
        previous = len(entry)
        entries += entry
    total = 10 + len(entries) + 1
    return struct.pack("<IIH", total, last, min(len(elements), 65535)) + bytes(entries) + b"\xff"


def zipmap(pairs: list[tuple[bytes, bytes]]) -> bytes:
    def zlen(n):
        return bytes([n]) if n < 254 else b"\xfe" + struct.pack("<I", n)
    out = bytearray([min(len(pairs), 254)])
    for k, v in pairs:
        out += zlen(len(k)) + k + zlen(len(v)) + b"\x01" + v + b"\x00"  # one free byte
    return bytes(out) + b"\xff"


def intset(values: list[int], width: int) -> bytes:
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in sorted(values))


def _backlen(n: int) -> bytes:
    if n <= 127:
        return bytes([n])
    out = []
    while n:
        out.append(n & 127)
        n >>= 7
    # The first byte holds the highest bits; the others carry the continuation flag.
    return bytes([out[-1]] + [b | 128 for b in reversed(out[:-1])])


def listpack(elements: list[bytes | int]) -> bytes:
    body = bytearray()
    for e in elements:
        v = e if isinstance(e, int) else canonical_int(e)
        if v is not None and 0 <= v <= 127:
            enc = bytes([v])
        elif v is not None and -4096 <= v <= 4095:
            u = v & 0x1FFF
            enc = bytes([0xC0 | u >> 8, u & 0xFF])
        elif v is not None and -32768 <= v <= 32767:
            enc = b"\xf1" + struct.pack("<h", v)
        elif v is not None and -(1 << 23) <= v < 1 << 23:
            enc = b"\xf2" + struct.pack("<i", v)[:3]
        elif v is not None and -2**31 <= v < 2**31:
            enc = b"\xf3" + struct.pack("<i", v)
        elif v is not None:
            enc = b"\xf4" + struct.pack("<q", v)
        elif len(e) < 64:
            enc = bytes([0x80 | len(e)]) + e
        elif len(e) < 4096:
            enc = bytes([0xE0 | len(e) >> 8, len(e) & 0xFF]) + e
        else:
            enc = b"\xf0" + struct.pack("<I", len(e)) + e
        body += enc + _backlen(len(enc))
    total = 6 + len(body) + 1
    return struct.pack("<IH", total, min(len(elements), 65535)) + bytes(body) + b"\xff"


# ---- streams ---------------------------------------------------------------------------------------------

def stream_id(ms: int, seq: int) -> bytes:
    return struct.pack(">QQ", ms, seq)


def stream_node(master: tuple[int, int], master_fields: list[bytes], entries: list) -> bytes:
    """entries: (ms, seq, [(field, value), ...], deleted) with ids at or above master."""
    live = sum(1 for e in entries if not e[3])
    elements: list[bytes | int] = [live, len(entries) - live, len(master_fields), *master_fields, 0]
    for ms, seq, fields, deleted in entries:
        same = [f for f, _ in fields] == master_fields
        elements += [(2 if same else 0) | (1 if deleted else 0), ms - master[0], seq - master[1]]
        if not same:
            elements.append(len(fields))
        for f, v in fields:
            if not same:
                elements.append(f)
            elements.append(v)
        elements.append(len(fields) + 3 if same else 2 * len(fields) + 4)
    return listpack(elements)


def millisecond_time(ms: int) -> bytes:
    return struct.pack("<q", ms)


# ---- files -----------------------------------------------------------------------------------------------

def rdb_file(body: bytes, version: int) -> bytes:
    data = b"REDIS%04d" % version + body + bytes([OP_EOF])
    return data + struct.pack("<Q", crc64(data)) if version >= 5 else data


def dump_payload(value: bytes, version: int = 10) -> bytes:
    """A DUMP payload: value (its type byte, then the value), the RDB version (2 bytes LE), and the
    CRC-64 of everything before it (8 bytes LE), which RESTORE checks before it decodes the value."""
    signed = value + struct.pack("<H", version)
    return signed + struct.pack("<Q", crc64(signed))


def payload_value(dumped: bytes) -> bytes:
    """A DUMP payload's value, its trailer checked."""
    assert len(dumped) >= 10 and dump_payload(dumped[:-10], payload_version(dumped)) == dumped, dumped[:40]
    return dumped[:-10]


def payload_version(dumped: bytes) -> int:
    return struct.unpack("<H", dumped[-10:-8])[0]


def aux(name: str, value: str) -> bytes:
    return bytes([OP_AUX]) + string(name) + string(value)


def record(type_: int, key: bytes | str, value: bytes, expire_ms: int | None = None) -> bytes:
    head = bytes([OP_EXPIRETIME_MS]) + struct.pack("<q", expire_ms) if expire_ms is not None else b""
    return head + bytes([type_]) + string(key) + value
