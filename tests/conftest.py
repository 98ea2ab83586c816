"""Fixtures shared by tests/integration and tests/differential.

The server under test is $GOBLIN_SERVER (CMake sets it to the freshly built
goblin-server; pointing it at /usr/bin/redis-server validates the suites
themselves). The reference for differential tests is Debian's redis-server
($REDIS_REFERENCE_SERVER overrides it).

Markers:
  redis72  the test checks Redis 7.2+ behaviour that Goblin follows; it fails
           against Debian's redis-server 7.0 (deselect with -m "not redis72"
           when validating the suite against 7.0).
  redis84  the test checks Redis 8.4 behaviour (XREADGROUP CLAIM) that Goblin follows; it fails
           against Debian's redis-server 7.0.
  goblin   the test checks something only Goblin has (goblin_version, ...).
"""

from __future__ import annotations

import pytest

from support.server import REFERENCE_BINARY, ServerProcess, goblin_binary, started_servers, stop_and_check


def pytest_configure(config):
    config.addinivalue_line("markers", "redis72: Redis 7.2+ behaviour that Goblin follows (fails on redis 7.0)")
    config.addinivalue_line("markers", "redis84: Redis 8.4 behaviour that Goblin follows (fails on redis 7.0)")
    config.addinivalue_line("markers", "goblin: Goblin-only behaviour (fails on redis-server)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    seen = set()
    for server in started_servers():
        if id(server) in seen or server.proc is None:
            continue
        seen.add(id(server))
        # Servers that died without being asked to, and running ones that want their log shown.
        if server.crashed() or (server.alive() and server.show_log_on_failure):
            report.sections.append((f"server log: {server.describe()}", server.logs()))


def _check_server_health(server: ServerProcess, when: str):
    if server.crashed():
        pytest.fail(f"{server.name} died {when} (exit status {server.proc.returncode}):\n{server.logs()}",
                    pytrace=False)
    report = server.sanitizer_report()
    if report:
        pytest.fail(f"sanitizer report from {server.name} {when}:\n{report}", pytrace=False)


def start_server(binary: str | None = None, **kwargs) -> ServerProcess:
    return ServerProcess(binary or goblin_binary(), **kwargs).start()


def stop_server(server: ServerProcess):
    stop_and_check(server)


@pytest.fixture(scope="session")
def server_binary() -> str:
    return goblin_binary()


@pytest.fixture(scope="module")
def server(server_binary):
    """The server under test, TCP on a free port plus a Unix socket, shared by one test module."""
    srv = start_server(server_binary, name="goblin")
    yield srv
    stop_server(srv)


@pytest.fixture
def r(server):
    """A redis-py client (bytes replies) on a flushed server; fails the test if the server died."""
    client = server.client()
    client.flushall()
    yield client
    client.close()
    _check_server_health(server, "during the test")


@pytest.fixture
def raw(server, r):
    """A RawConnection (exact reply bytes) to the flushed server of `r`."""
    conn = server.raw()
    yield conn
    conn.close()


@pytest.fixture
def make_server(server_binary):
    """Factory for servers with custom settings; all of them are stopped at teardown. With
    start=False the server is made but not started (its dir can be prepared first)."""
    made = []

    def make(start: bool = True, **kwargs):
        kwargs.setdefault("name", "goblin-custom")
        binary = kwargs.pop("binary", server_binary)
        srv = ServerProcess(binary, **kwargs)
        made.append(srv)
        return srv.start() if start else srv

    yield make
    errors = []
    for srv in made:
        try:
            if srv.proc is not None:
                stop_server(srv)
        except AssertionError as exc:
            errors.append(str(exc))
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)


@pytest.fixture(params=[pytest.param("goblin", id="goblin"), pytest.param("redis", id="redis-7.0")])
def start_either(request, make_server):
    """Runs the test twice: start_either(**options) starts goblin-server, then Debian's redis-server,
    with those options (for behaviour both must show)."""
    binary = goblin_binary() if request.param == "goblin" else REFERENCE_BINARY

    def started(**options):
        return make_server(binary=binary, name=request.param, options=options)

    return started


@pytest.fixture(scope="session")
def reference_server():
    """Debian's redis-server, the reference for differential tests (all of the session's tests share it)."""
    srv = start_server(REFERENCE_BINARY, name="reference", unix=False)
    srv.show_log_on_failure = False
    yield srv
    stop_server(srv)
