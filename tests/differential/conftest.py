"""Fixtures of the differential suite: the server under test and the reference, side by side."""

import os

import pytest

from support.differ import HELLO, Op, ServerPair, ShrinkBudget, Step, investigate, run_ops
from support.server import ServerProcess, stop_and_check

from .generators import GENERATORS
from .streams import supported_rows

# Seconds the whole session may spend shrinking failing streams (each failure also has its own cap).
SHRINK_BUDGET = float(os.environ.get("GOBLIN_DIFF_SHRINK_SECONDS", "100"))


@pytest.fixture(scope="session")
def diff_goblin(server_binary):
    srv = ServerProcess(server_binary, name="goblin-diff", unix=False).start()
    srv.show_log_on_failure = False
    yield srv
    stop_and_check(srv)


@pytest.fixture(scope="session")
def pair(diff_goblin, reference_server):
    return ServerPair(diff_goblin, reference_server)


@pytest.fixture(scope="session")
def shrink_budget():
    return ShrinkBudget(SHRINK_BUDGET)


@pytest.fixture(scope="session")
def reported_mismatches():
    """Mismatch kinds already shrunk in this session -> the test that reported them."""
    return {}


@pytest.fixture(scope="session")
def supported_generators(pair):
    """Generator rows whose command both servers report in COMMAND INFO."""
    return supported_rows(pair, GENERATORS)


@pytest.fixture
def corpus(pair, shrink_budget, reported_mismatches, request):
    """Runs a family's corpus of independent Ops in RESP2 and RESP3: corpus(family, name, ops),
    failing the test with the shrunk report of any mismatch."""
    test_file = os.path.relpath(request.node.fspath, os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

    def run(family, name, ops, protocols=(2, 3)):
        for protocol in protocols:
            prefix = [Op([Step((b"HELLO", b"3"), HELLO)], "hello")] if protocol == 3 else []
            mismatches = run_ops(pair, prefix + ops, independent=True)
            if not mismatches:
                continue
            report = investigate(pair, prefix + ops, mismatches,
                                 title=f"DIFFERENTIAL MISMATCH in {family} corpus '{name}' (RESP{protocol})",
                                 reproduce=f"GOBLIN_SERVER={pair.goblin_server.binary} /usr/bin/python3 -m pytest "
                                           f"-q {test_file} -k {name}",
                                 budget=shrink_budget, reported=reported_mismatches, label=f"{family} corpus {name}")
            pytest.fail(report, pytrace=False)
    return run
