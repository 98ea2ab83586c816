"""Running the Node.js client scripts of tests/node, which print one JSON object on stdout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def run_node_script(script: str, *args) -> dict:
    """The JSON a tests/node script printed; fails the test when the script failed or its client
    library is not installed (make deps-test installs them)."""
    proc = subprocess.run(["node", script, *[str(a) for a in args]], capture_output=True, timeout=60,
                          cwd=NODE_DIR)
    lines = proc.stdout.decode().strip().splitlines()
    assert lines, f"{script} {args}: no output (status {proc.returncode}):\n{proc.stderr.decode()}"
    result = json.loads(lines[-1])
    assert not (proc.returncode == 2 and "missing" in result), \
        f"{result.get('missing')} is not installed in tests/node: make deps-test installs it"
    assert proc.returncode == 0, f"{script} {args}: {result}\n{proc.stderr.decode()}"
    return result
