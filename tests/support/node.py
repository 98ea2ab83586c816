"""Running the Node.js client scripts of tests/node, which print one JSON object on stdout."""

from __future__ import annotations

import json
import select
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


class SteeredNodeScript:
    """A tests/node script that answers requests while it runs (harness.js's answerRequests): the
    test sends one JSON array a line and reads the one JSON object that answers it, so it can
    change the servers between requests while the client stays connected."""

    def __init__(self, script: str, *args):
        self.name = f"{script} {' '.join(map(str, args))}"
        self.proc = subprocess.Popen(["node", script, *[str(a) for a in args]], cwd=NODE_DIR,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.closed = False

    def request(self, *request, timeout: float = 30.0) -> dict:
        """The answer to one request; fails the test when the script failed it or died."""
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:  # it has ended: what it printed last says why
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            _, err = self.proc.communicate()
            self.closed = True
            assert False, f"{self.name}: no answer to {request} (status {self.proc.returncode}):\n{err}"
        result = json.loads(line)
        assert "missing" not in result, \
            f"{result['missing']} is not installed in tests/node: make deps-test installs it"
        assert "failed" not in result, f"{self.name}: {request} failed: {result['failed']}"
        return result

    def close(self, timeout: float = 30.0):
        """Closes stdin, which ends the script; fails the test when it did not end cleanly."""
        if self.closed:
            return
        self.closed = True
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        assert self.proc.returncode == 0, f"{self.name}: status {self.proc.returncode}:\n{err}"
