"""The layer graph of docs/DESIGN.md: core <- resp <- keyspace <- persist <- scripting <- server <-
commands.

A lower layer never includes a higher one. The build refuses such an include (each layer compiles
against build/layer-includes/<layer>/, which holds only its own folder and those below); these tests
check the sources and that refusal itself."""

import re
import subprocess
from pathlib import Path

import pytest

from support.server import goblin_binary

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ["core", "resp", "keyspace", "persist", "scripting", "server", "commands"]
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


def compiles_in(layer: str, include: str, tmp_path) -> subprocess.CompletedProcess:
    views = Path(goblin_binary()).parent / "layer-includes"
    source = tmp_path / f"{layer}_probe.cc"
    source.write_text(f'#include "{include}"\n')
    return subprocess.run(["g++", "-std=c++20", "-fsyntax-only", "-I", str(views / layer), str(source)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("layer,higher", [("core", "resp/reply_builder.h"), ("keyspace", "server/server.h"),
                                          ("persist", "server/persistence.h"),
                                          ("scripting", "server/server.h"),
                                          ("server", "commands/families.h")])
def test_the_build_refuses_an_include_of_a_higher_layer(layer, higher, tmp_path):
    refused = compiles_in(layer, higher, tmp_path)
    assert refused.returncode != 0 and "No such file or directory" in refused.stderr
    # The same probe with a header of the layer itself compiles: the refusal is the layer rule.
    own = {"core": "core/key_table.h", "keyspace": "keyspace/database.h",
           "persist": "persist/snapshot_loader.h", "scripting": "scripting/eval_scripts.h",
           "server": "server/server.h"}[layer]
    accepted = compiles_in(layer, own, tmp_path)
    assert accepted.returncode == 0, accepted.stderr
