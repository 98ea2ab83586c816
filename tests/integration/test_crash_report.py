"""The crash report (src/server/crash_report.h): a fatal signal writes Redis's kind of bug report to
the log, then the process dies by that signal, as redis-server does.

DEBUG SEGFAULT (a write to a read-only page) and DEBUG ASSERT (a failed GOBLIN_ASSERT, which aborts)
crash the server on purpose. The report's banners, signal, addresses, stack trace, the command being
run (its arguments clipped, and their count) and INFO are read back from the log; the exit status is
compared with redis-server 7.0's for the same command. Which arguments are redacted is checked in
tests/unit/crash_report_test.cc, since no command that carries a password can be made to crash.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
from pathlib import Path

import pytest

from support.resp import ConnectionClosed
from support.server import REFERENCE_BINARY, wait_for

LONG_ARGUMENT = "a" * 300
EXTRA_ARGUMENTS = [f"extra{i}" for i in range(40)]


def crash(srv, *args) -> str:
    """Sends a command that crashes srv; returns its log once the process has ended."""
    srv.stop_requested = True  # the crash is the test's own doing, not the harness's to report
    conn = srv.raw()
    conn.send_command(*args)
    with pytest.raises(ConnectionClosed):
        conn.read_reply(timeout=20)
    conn.close()
    srv.proc.wait(timeout=30)
    return Path(srv.dir, "stdout.log").read_text(errors="replace")


def report_of(log: str) -> str:
    start = log.index("=== GOBLIN BUG REPORT START: Cut & paste starting from here ===")
    end = log.index("=== GOBLIN BUG REPORT END. Make sure to include from START to END. ===")
    assert start < end
    return log[start:end]


def test_segfault_report_and_exit_by_sigsegv(make_server):
    srv = make_server()
    srv.client().set("k", "v")
    log = crash(srv, "DEBUG", "SEGFAULT", LONG_ARGUMENT, b"bin\x01\xff\"", *EXTRA_ARGUMENTS)
    assert srv.proc.returncode == -signal.SIGSEGV
    report = report_of(log)
    assert re.search(r"Goblin \S+ crashed by signal: 11 \(SIGSEGV\), si_code: \d+\n", report)
    assert re.search(r"# Accessing address: 0x[0-9a-f]+\n", report)
    assert re.search(r"# Crashed running the instruction at: 0x[0-9a-f]+\n", report)

    trace = report[report.index("------ STACK TRACE ------"):report.index("------ CURRENT CLIENT INFO")]
    backtrace = trace[trace.index("Backtrace:"):]
    frames = [line for line in backtrace.splitlines() if re.search(r"\[0x[0-9a-f]+\]$", line)]
    assert len(frames) >= 1
    # The binary exports its symbols: the frames name the functions the command went through.
    assert any("Dispatch" in frame for frame in frames), backtrace

    client = report[report.index("------ CURRENT CLIENT INFO ------"):report.index("------ INFO OUTPUT")]
    assert re.search(r"id=\d+ addr=127\.0\.0\.1:\d+ fd=\d+ name= db=0 cmd=debug\n", client)
    assert f"argc: {4 + len(EXTRA_ARGUMENTS)}\n" in client
    assert 'argv[0]: "DEBUG"\n' in client
    assert 'argv[1]: "SEGFAULT"\n' in client
    assert f'argv[2]: "{"a" * 128}"... (172 more bytes)\n' in client
    assert 'argv[3]: "bin\\x01\\xff\\""\n' in client
    assert LONG_ARGUMENT not in log
    # 32 arguments are shown; the rest are counted.
    assert 'argv[31]: "extra27"\n' in client
    assert "extra28" not in client
    assert f"... ({4 + len(EXTRA_ARGUMENTS) - 32} more arguments)\n" in client

    info = report[report.index("------ INFO OUTPUT ------"):]
    assert "# Server\n" in info
    assert re.search(r"\nredis_version:\S+\n", info)
    assert "db0:keys=1," in info


def test_assert_report_and_exit_by_sigabrt(make_server):
    srv = make_server()
    log = crash(srv, "DEBUG", "ASSERT")
    assert srv.proc.returncode == -signal.SIGABRT
    report = report_of(log)
    assert re.search(r"crashed by signal: 6 \(SIGABRT\)", report)
    assert "# === ASSERTION FAILED ===\n" in report
    assert re.search(r"# ==> \S*server_admin\.cc:\d+ '1 == 2' is not true\n", report)
    assert re.search(r"Killed by PID: \d+, UID: \d+\n", report)  # abort() signals itself
    assert 'argv[1]: "ASSERT"\n' in report
    assert "------ INFO OUTPUT ------" in report


def test_crash_inside_transaction_names_the_queued_command(make_server):
    srv = make_server()
    srv.stop_requested = True
    conn = srv.raw()
    assert conn.call("MULTI").value == b"OK"
    assert conn.call("DEBUG", "SEGFAULT", "in-exec").value == b"QUEUED"
    conn.send_command("EXEC")
    with pytest.raises(ConnectionClosed):
        conn.read_reply(timeout=20)
    srv.proc.wait(timeout=30)
    assert srv.proc.returncode == -signal.SIGSEGV
    report = report_of(Path(srv.dir, "stdout.log").read_text(errors="replace"))
    assert 'argv[2]: "in-exec"\n' in report
    assert "cmd=debug\n" in report


def test_signal_from_outside_between_commands(make_server):
    """A SIGSEGV sent by another process: the report names the sender, and no command was running."""
    srv = make_server()
    srv.client().ping()
    srv.stop_requested = True
    os.kill(srv.proc.pid, signal.SIGSEGV)
    srv.proc.wait(timeout=30)
    assert srv.proc.returncode == -signal.SIGSEGV
    report = report_of(Path(srv.dir, "stdout.log").read_text(errors="replace"))
    assert "crashed by signal: 11 (SIGSEGV)" in report
    assert f"Killed by PID: {os.getpid()}, UID: {os.getuid()}\n" in report
    assert "Accessing address" not in report
    assert "------ CURRENT CLIENT INFO ------" not in report
    assert "------ STACK TRACE ------" in report and "------ INFO OUTPUT ------" in report


TGKILL = {"x86_64": 234, "aarch64": 131}


@pytest.mark.skipif(os.uname().machine not in TGKILL, reason="tgkill's system call number")
def test_crash_of_another_thread_leaves_out_client_and_info(make_server):
    """The append-only file's fsync thread takes the signal: its report stops after the stack trace."""
    srv = make_server(options={"appendonly": "yes", "appendfsync": "everysec"})
    srv.client().set("k", "v")  # the first everysec write starts the thread
    task_dir = f"/proc/{srv.proc.pid}/task"

    def takes_sigsegv(tid: int) -> bool:  # jemalloc's background threads block every signal
        status = Path(task_dir, str(tid), "status").read_text()
        blocked = int(re.search(r"^SigBlk:\s+([0-9a-f]+)$", status, re.M).group(1), 16)
        return not blocked & (1 << (signal.SIGSEGV - 1))

    others = wait_for(lambda: [tid for tid in map(int, os.listdir(task_dir))
                               if tid != srv.proc.pid and takes_sigsegv(tid)],
                      what="a second thread that takes SIGSEGV")
    srv.stop_requested = True
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(TGKILL[os.uname().machine], srv.proc.pid, others[0], signal.SIGSEGV) == 0
    srv.proc.wait(timeout=30)
    assert srv.proc.returncode == -signal.SIGSEGV
    report = report_of(Path(srv.dir, "stdout.log").read_text(errors="replace"))
    assert "------ STACK TRACE ------" in report
    assert "(The crash is not on the serving thread: no client or INFO.)" in report
    assert "------ INFO OUTPUT ------" not in report


def test_debug_help_lists_the_crash_subcommands(make_server):
    help_lines = make_server().client().execute_command("DEBUG", "HELP")
    # The same two lines each as redis-server's DEBUG HELP.
    for name, text in ((b"SEGFAULT", b"    Crash the server with sigsegv."),
                       (b"ASSERT", b"    Crash by assertion failed.")):
        assert help_lines[help_lines.index(name) + 1] == text


@pytest.mark.parametrize("subcommand", ["SEGFAULT", "ASSERT"])
def test_exit_status_as_redis_server(make_server, subcommand):
    statuses = {}
    for binary in (None, REFERENCE_BINARY):
        srv = make_server(binary=binary) if binary else make_server()
        log = crash(srv, "DEBUG", subcommand)
        statuses[binary or "goblin"] = srv.proc.returncode
        assert "BUG REPORT START: Cut & paste starting from here ===" in log
        assert "BUG REPORT END. Make sure to include from START to END. ===" in log
    assert statuses["goblin"] == statuses[REFERENCE_BINARY]
    assert statuses["goblin"] == (-signal.SIGSEGV if subcommand == "SEGFAULT" else -signal.SIGABRT)


def test_crash_log_enabled_no_dies_without_a_report(make_server):
    srv = make_server(options={"crash-log-enabled": "no"})
    log = crash(srv, "DEBUG", "SEGFAULT")
    assert srv.proc.returncode == -signal.SIGSEGV
    assert "BUG REPORT" not in log, log
    # And CONFIG SET arms it again.
    srv = make_server(options={"crash-log-enabled": "no"})
    assert srv.client().config_set("crash-log-enabled", "yes")
    log = crash(srv, "DEBUG", "SEGFAULT")
    assert srv.proc.returncode == -signal.SIGSEGV
    report_of(log)
