"""The layer graph of docs/DESIGN.md: core <- resp <- keyspace <- persist <- scripting <- net <- server
<- commands.

A lower layer never includes a higher one. The build refuses such an include (each layer compiles
against build/layer-includes/<layer>/, which holds only its own folder and those below); these tests
check the sources and that refusal itself. Sockets and the event loop's epoll calls are net's
alone: a second kind of connection (TLS) then needs nothing changed above it."""

import re
import subprocess
from pathlib import Path

import pytest

from support.server import goblin_binary

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["core", "resp", "keyspace", "persist", "scripting", "net", "server", "commands"]
INCLUDE = re.compile(r'\s*#\s*include\s+"([a-z_]+)/')


def test_no_source_includes_a_higher_layer():
    back_edges = []
    for rank, layer in enumerate(LAYERS):
        # A layer's subfolders (server/acl, net/tls, ...) belong to it.
        for path in sorted(p for p in (ROOT / "src" / layer).rglob("*") if p.is_file()):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                match = INCLUDE.match(line)
                if match and match.group(1) in LAYERS and LAYERS.index(match.group(1)) > rank:
                    back_edges.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert back_edges == []


def test_every_source_folder_is_a_layer():
    folders = {p.name for p in (ROOT / "src").iterdir() if p.is_dir()}
    assert folders == set(LAYERS)


# The calls that move bytes over, or wait on, a socket. Outside src/net none may appear: every
# connection is a net::Connection, every readiness comes from net::EventLoop.
SOCKET_CALLS = ["socket", "socketpair", "accept", "accept4", "connect", "bind", "listen", "shutdown",
                "recv", "recvfrom", "recvmsg", "send", "sendto", "sendmsg", "readv", "writev",
                "sendfile", "setsockopt", "getsockopt", "getpeername", "getsockname", "poll",
                "select", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait"]
# read and write serve files as well as sockets: they are allowed in these files, which use them on
# files and pipes only.
READ_WRITE_ALLOWED = {
    "main.cc": "the head of a file given on the command line",
    "persist/file_util.cc": "whole-file reads and writes",
    "server/crash_report.cc": "the report, to the log file or standard output",
    "server/persistence.cc": "the pipe a child reports its copy-on-write size through",
}
NAME = re.compile(r"(?<![\w.>])(?:::)?(" + "|".join(SOCKET_CALLS + ["read", "write"]) + r")\s*\(")
COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])\'', re.S)


def calls_in(code: str):
    """(line number, name) of each call of SOCKET_CALLS, read or write in C++ code: the name not
    after a member access, nor after another name unless that is `return` (`uint64_t read() const`
    declares a method); comments and literals do not count."""
    code = COMMENT_OR_LITERAL.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    for number, line in enumerate(code.splitlines(), 1):
        for match in NAME.finditer(line):
            preceding = line[:match.start()].rstrip()
            if preceding.endswith("return") or not re.search(r"\w$", preceding):
                yield number, match.group(1)


def test_socket_calls_are_in_net_only():
    found = []
    for path in sorted(p for p in (ROOT / "src").rglob("*") if p.suffix in (".cc", ".h")):
        relative = path.relative_to(ROOT / "src").as_posix()
        if relative.startswith("net/"):
            continue
        for number, name in calls_in(path.read_text()):
            if name in ("read", "write") and relative in READ_WRITE_ALLOWED:
                continue
            found.append(f"src/{relative}:{number}: {name}")
    assert found == []


def test_the_socket_scan_sees_calls():
    code = ('  n = ::recv(fd, b, 1, 0);  // send(\n  x.send(y);\n  return write(fd, p, 1);\n'
            '  uint64_t read() const;\n  Log("epoll_wait: ");\n  if (poll (&e, 1, 0)) {}\n')
    assert list(calls_in(code)) == [(1, "recv"), (3, "write"), (6, "poll")]


def compiles_in(layer: str, include: str, tmp_path) -> subprocess.CompletedProcess:
    views = Path(goblin_binary()).parent / "layer-includes"
    source = tmp_path / f"{layer}_probe.cc"
    source.write_text(f'#include "{include}"\n')
    return subprocess.run(["g++", "-std=c++20", "-fsyntax-only", "-I", str(views / layer), str(source)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layer,higher", [("core", "resp/reply_builder.h"), ("keyspace", "server/server.h"),
                                          ("persist", "server/persistence.h"),
                                          ("scripting", "net/connection.h"),
                                          ("net", "server/server.h"),
                                          ("server", "commands/families.h")])
def test_the_build_refuses_an_include_of_a_higher_layer(layer, higher, tmp_path):
    refused = compiles_in(layer, higher, tmp_path)
    assert refused.returncode != 0 and "No such file or directory" in refused.stderr
    # The same probe with a header of the layer itself compiles: the refusal is the layer rule.
    own = {"core": "core/key_table.h", "keyspace": "keyspace/database.h",
           "persist": "persist/snapshot_loader.h", "scripting": "scripting/eval_scripts.h",
           "net": "net/connection.h", "server": "server/server.h"}[layer]
    accepted = compiles_in(layer, own, tmp_path)
    assert accepted.returncode == 0, accepted.stderr
