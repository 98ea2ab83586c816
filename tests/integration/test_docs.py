"""docs/COMMANDS.md is generated from the servers (docs/gen_commands.py); it must match what
this build's command table and the reference redis-server report."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_commands_md_is_current(server, reference_server):
    generated = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_commands.py"), str(server.port), str(reference_server.port)],
        capture_output=True, text=True, timeout=60, check=True).stdout
    checked_in = (ROOT / "docs" / "COMMANDS.md").read_text()
    assert generated == checked_in, (
        "docs/COMMANDS.md is stale: regenerate it with docs/gen_commands.py <goblin port> <redis port> "
        "> docs/COMMANDS.md")
