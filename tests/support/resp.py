"""A small RESP2/RESP3 client that keeps the exact bytes of every reply.

The differential tester compares replies byte for byte, so the reader never
normalises anything: each `Reply` carries the raw bytes it was parsed from
(`raw`), its type byte (`kind`) and a parsed `value`:

    kind  RESP type            value
    '+'   simple string        bytes
    '-'   error                bytes (without the leading '-')
    ':'   integer              int
    '$'   bulk string          bytes, or None for the RESP2 null bulk ($-1)
    '*'   array                list[Reply], or None for the RESP2 null array (*-1)
    '_'   RESP3 null           None
    ','   RESP3 double         bytes (the text, e.g. b'3.14', b'inf')
    '#'   RESP3 boolean        bool
    '!'   RESP3 blob error     bytes
    '='   RESP3 verbatim       bytes (including the 'txt:' prefix)
    '('   RESP3 big number     bytes
    '%'   RESP3 map            list[(Reply, Reply)]
    '~'   RESP3 set            list[Reply]
    '>'   RESP3 push           list[Reply]

A RESP3 attribute ('|') is parsed and attached to the reply that follows it
(`attributes`); its bytes are part of that reply's `raw`.
"""

from __future__ import annotations

import select
import socket
import time

CRLF = b"\r\n"
_AGGREGATE_KINDS = b"*~>"


class Incomplete(Exception):
    """The buffer ends before the reply does."""


class ProtocolViolation(Exception):
    """The server sent bytes that are not RESP."""


class ConnectionClosed(Exception):
    """The server closed the connection (before or while a reply was read)."""


class ReplyTimeout(Exception):
    """No complete reply arrived before the deadline: the server hangs."""


def to_bytes(arg) -> bytes:
    if isinstance(arg, bytes):
        return arg
    if isinstance(arg, (bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, bool):
        raise TypeError("booleans are ambiguous as command arguments")
    if isinstance(arg, int):
        return str(arg).encode()
    if isinstance(arg, float):
        return repr(arg).encode()
    raise TypeError(f"cannot encode {type(arg).__name__} as a RESP argument")


def encode_command(*args) -> bytes:
    """Encodes one command as a RESP multibulk request."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = to_bytes(arg)
        parts.append(b"$%d\r\n" % len(data))
        parts.append(data)
        parts.append(CRLF)
    return b"".join(parts)


def encode_commands(commands) -> bytes:
    return b"".join(encode_command(*c) for c in commands)


class Reply:
    __slots__ = ("kind", "value", "raw", "attributes")

    def __init__(self, kind: str, value, raw: bytes, attributes=None):
        self.kind = kind
        self.value = value
        self.raw = raw
        self.attributes = attributes

    @property
    def is_error(self) -> bool:
        return self.kind in "-!"

    @property
    def is_null(self) -> bool:
        return self.value is None and self.kind in "$*_"

    @property
    def error_text(self) -> str:
        assert self.is_error, f"not an error reply: {self!r}"
        return self.value.decode("utf-8", "replace")

    def elements(self) -> list:
        """Elements of an array, set or push reply, or the flattened pairs of a map."""
        if self.kind in "*~>":
            return list(self.value or [])
        if self.kind == "%":
            return [x for pair in self.value for x in pair]
        raise AssertionError(f"not an aggregate reply: {self!r}")

    def py(self):
        """A plain Python rendering: bytes, int, None, bool, list, dict, or ReplyErrorValue."""
        k = self.kind
        if k in "*~>":
            return None if self.value is None else [e.py() for e in self.value]
        if k == "%":
            return {_hashable(a.py()): b.py() for a, b in self.value}
        if k in "-!":
            return ReplyErrorValue(self.value)
        return self.value

    def __eq__(self, other):
        return isinstance(other, Reply) and self.raw == other.raw

    def __hash__(self):
        return hash(self.raw)

    def __repr__(self):
        text = self.raw if len(self.raw) <= 300 else self.raw[:300] + b"...(%d bytes)" % len(self.raw)
        return f"Reply({text!r})"


class ReplyErrorValue(bytes):
    """An error reply's text, distinguishable from a bulk string in `Reply.py()` output."""

    def __repr__(self):
        return f"Error({bytes(self)!r})"


def _hashable(v):
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    return v


def _line(buf, pos: int):
    end = buf.find(CRLF, pos)
    if end < 0:
        raise Incomplete
    return bytes(buf[pos:end]), end + 2


def _int(text: bytes, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ProtocolViolation(f"bad {what}: {text!r}") from None


def parse_reply(buf, pos: int = 0):
    """Parses one reply starting at buf[pos]; returns (Reply, position after it).

    Raises Incomplete when the buffer holds only part of the reply.
    """
    start = pos
    if pos >= len(buf):
        raise Incomplete
    kind = chr(buf[pos])
    line, pos = _line(buf, pos + 1)
    if kind == "|":
        count = _int(line, "attribute length")
        attrs = []
        for _ in range(count):
            a, pos = parse_reply(buf, pos)
            b, pos = parse_reply(buf, pos)
            attrs.append((a, b))
        reply, pos = parse_reply(buf, pos)
        return Reply(reply.kind, reply.value, bytes(buf[start:pos]), attrs), pos
    if kind in "+-":
        value = line
    elif kind == ":":
        value = _int(line, "integer")
    elif kind == ",":
        value = line
    elif kind == "(":
        value = line
    elif kind == "#":
        if line not in (b"t", b"f"):
            raise ProtocolViolation(f"bad boolean {line!r}")
        value = line == b"t"
    elif kind == "_":
        if line:
            raise ProtocolViolation(f"bad null {line!r}")
        value = None
    elif kind in "$!=":
        length = _int(line, "bulk length")
        if length == -1 and kind == "$":
            value = None
        elif length < 0:
            raise ProtocolViolation(f"bad bulk length {length}")
        else:
            if len(buf) < pos + length + 2:
                raise Incomplete
            value = bytes(buf[pos:pos + length])
            if buf[pos + length:pos + length + 2] != CRLF:
                raise ProtocolViolation("bulk string not terminated by CRLF")
            pos += length + 2
    elif kind in "*~>":
        count = _int(line, "aggregate length")
        if count == -1 and kind == "*":
            value = None
        elif count < 0:
            raise ProtocolViolation(f"bad aggregate length {count}")
        else:
            value = []
            for _ in range(count):
                item, pos = parse_reply(buf, pos)
                value.append(item)
    elif kind == "%":
        count = _int(line, "map length")
        if count < 0:
            raise ProtocolViolation(f"bad map length {count}")
        value = []
        for _ in range(count):
            a, pos = parse_reply(buf, pos)
            b, pos = parse_reply(buf, pos)
            value.append((a, b))
    else:
        raise ProtocolViolation(f"unknown reply type byte {kind!r} in {bytes(buf[start:start + 40])!r}")
    return Reply(kind, value, bytes(buf[start:pos])), pos


def parse_all(data: bytes) -> list:
    """Parses a byte string holding only complete replies."""
    out, pos = [], 0
    while pos < len(data):
        reply, pos = parse_reply(data, pos)
        out.append(reply)
    return out


class RawConnection:
    """A blocking RESP connection over TCP or a Unix socket, with a deadline on every read."""

    def __init__(self, port: int | None = None, host: str = "127.0.0.1", unix_path: str | None = None,
                 timeout: float = 10.0):
        self.timeout = timeout
        if unix_path is not None:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(unix_path)
        else:
            self.sock = socket.create_connection((host, port), timeout=timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        self.closed_by_peer = False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data: bytes):
        self.sock.sendall(data)

    def send_command(self, *args):
        self.sock.sendall(encode_command(*args))

    def _pending(self) -> bytes:
        return bytes(self.buf[self.pos:self.pos + 200])

    def _fill(self, deadline: float):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ReplyTimeout(f"no complete reply within {self.timeout}s; buffered {self._pending()!r}")
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise ReplyTimeout(f"no complete reply within {self.timeout}s; buffered {self._pending()!r}") from None
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.closed_by_peer = True
            raise ConnectionClosed(f"connection closed by server; unparsed bytes {self._pending()!r}")
        if self.pos > (1 << 20) and self.pos > len(self.buf) // 2:
            del self.buf[:self.pos]
            self.pos = 0
        self.buf += chunk

    def read_reply(self, timeout: float | None = None) -> Reply:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                reply, self.pos = parse_reply(self.buf, self.pos)
                return reply
            except Incomplete:
                self._fill(deadline)

    def read_replies(self, n: int, timeout: float | None = None) -> list:
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        out = []
        while len(out) < n:
            try:
                reply, self.pos = parse_reply(self.buf, self.pos)
                out.append(reply)
            except Incomplete:
                self._fill(deadline)
        return out

    def call(self, *args, timeout: float | None = None) -> Reply:
        self.send_command(*args)
        return self.read_reply(timeout)

    def pipeline(self, commands, timeout: float | None = None) -> list:
        commands = list(commands)
        self.send(encode_commands(commands))
        return self.read_replies(len(commands), timeout)

    def has_pending_bytes(self, wait: float = 0.0) -> bool:
        """True if unparsed bytes are buffered or arrive within `wait` seconds."""
        if self.pos < len(self.buf):
            return True
        ready, _, _ = select.select([self.sock], [], [], wait)
        if not ready:
            return False
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            self.closed_by_peer = True
            return False
        self.buf += chunk
        return True

    def read_until_closed(self, timeout: float = 10.0) -> bytes:
        """Reads everything until the server closes the connection; raises ReplyTimeout if it never does."""
        deadline = time.monotonic() + timeout
        data = bytearray(self.buf[self.pos:])
        self.pos = len(self.buf)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ReplyTimeout(f"server did not close the connection within {timeout}s; "
                                   f"got {bytes(data[:300])!r}")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed_by_peer = True
                return bytes(data)
            data += chunk
