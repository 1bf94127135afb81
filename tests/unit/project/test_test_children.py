"""The tests' door to `agent-host` child processes (tests/support/cli_process.py) gives every child a
clean environment: the developer's `AGENT_HOST_*` never reach it, the run's cache and coverage's
variables do.
"""

from __future__ import annotations

import ast
import socket
from pathlib import Path

import pytest

from agent_host._support.paths import cache_dir
from tests.support import cli_process
from tests.support.forkserver import ForkServer
from tests.support.forkserver_main import FORKED_FOR


def test_a_developers_agent_host_config_does_not_reach_the_child(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AGENT_HOST_CONFIG", "/nonexistent")
    monkeypatch.setenv("AGENT_HOST_CACHE_MAX", "1")
    checked = cli_process.run("config", "check", cwd=tmp_path, timeout=60)
    # with /nonexistent the child would fail: "agent-host: error: /nonexistent: no such file"
    assert (checked.returncode, checked.stdout) == (0, ""), checked.stderr
    assert "agent-host: ok: the embedded default configuration: toolings: demo; agents: none\n" in checked.stderr
    seen = cli_process.run(
        code="import os; print(sorted(k for k in os.environ if 'AGENT_HOST' in k), os.environ['AGENT_HOST_CACHE'])",
        cwd=tmp_path,
        timeout=60,
    )
    machinery = {*ForkServer.VARIABLES, FORKED_FOR}  # the test run's fork server's, when children are forked
    names, cache = seen.stdout.rsplit(maxsplit=1)
    assert [name for name in ast.literal_eval(names) if name not in machinery] == ["AGENT_HOST_CACHE"], seen.stderr
    assert cache == str(cache_dir())


def test_coverage_and_other_variables_are_kept_and_a_tests_own_are_laid_over(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COVERAGE_PROCESS_CONFIG", "kept")
    monkeypatch.setenv("_AGENT_HOST_COMPLETE", "bash_complete")
    monkeypatch.setenv("AGENT_HOST_TOKENS", "/someone/else")
    env = cli_process.environment({"AGENT_HOST_CACHE": "/elsewhere", "EXTRA": "1"})
    assert env["COVERAGE_PROCESS_CONFIG"] == "kept" and env["PATH"]
    assert "_AGENT_HOST_COMPLETE" not in env and "AGENT_HOST_TOKENS" not in env
    assert (env["AGENT_HOST_CACHE"], env["EXTRA"]) == ("/elsewhere", "1")


def test_the_launcher_reads_both_answer_lines_when_they_come_in_one_read() -> None:
    """A child that ends at once: the server's `pid` and `exit` lines arrive together (the launcher
    then exited 255, having read the second line as part of the first)."""
    from tests.support.launcher import _Lines

    ours, server = socket.socketpair()
    with ours, server:
        server.sendall(b"pid 4242\nexit 0\n")
        server.shutdown(socket.SHUT_WR)
        lines = _Lines(ours)
        assert [lines.next(), lines.next(), lines.next()] == ["pid 4242", "exit 0", None]
