"""DUMP payloads as Redis builds them: an RDB value, the RDB version (2 bytes, little-endian) and the
CRC-64 (Jones polynomial, reflected, as Redis's crc64.c) of everything before it (8 bytes, little-endian).
The tests build and take apart payloads with these to reach RESTORE's decoder past the checksum."""

from __future__ import annotations

_POLY = 0x95AC9329AC4BC9B5  # 0xad93d23594c935a9 reflected


def _table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc64(data: bytes, crc: int = 0) -> int:
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA  # the check value of Redis's crc64 test


def payload(body: bytes, version: int = 10) -> bytes:
    """body (value-type byte and value) with the trailer RESTORE checks."""
    signed = body + version.to_bytes(2, "little")
    return signed + crc64(signed).to_bytes(8, "little")


def body(dumped: bytes) -> bytes:
    """A payload without its trailer, after checking the trailer is sound."""
    assert len(dumped) >= 10 and payload(dumped[:-10], version(dumped)) == dumped, f"bad payload {dumped[:40]!r}"
    return dumped[:-10]


def version(dumped: bytes) -> int:
    return int.from_bytes(dumped[-10:-8], "little")
