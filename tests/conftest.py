"""Fixtures for every test: no test may leave a process behind.

Each test is checked against the processes that existed before it (module- and session-scoped
servers are started, and checked, by their own fixtures); the whole run is checked at the end.
Under coverage (`make test`), the stdio servers this process's hosts start are measured too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.processes import descendants, leaked


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    """Fail the test that leaves a child process (server, stdio child) running."""
    before = set(descendants())
    yield
    left = leaked(ignore=before)
    assert not left, f"processes left behind: {left}"


@pytest.fixture(scope="session", autouse=True)
def no_processes_at_exit() -> Iterator[None]:
    yield
    left = leaked()
    assert not left, f"processes left behind at the end of the run: {left}"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def measured_stdio_servers() -> Iterator[None]:
    """Under coverage, pass its variable to the stdio servers (`agent_host.demo_server`, tests/servers)
    that hosts of this process start: the SDK gives them a minimal environment (HOME, PATH, ...)
    which would drop it, and coverage's subprocess patch would not reach them."""
    if "COVERAGE_PROCESS_CONFIG" not in os.environ:
        yield
        return
    from mcp.client import stdio  # only here: a run without coverage need not load the SDK first

    inherited = stdio.DEFAULT_INHERITED_ENV_VARS
    added = "COVERAGE_PROCESS_CONFIG" not in inherited
    if added:
        inherited.append("COVERAGE_PROCESS_CONFIG")
    yield
    if added:
        inherited.remove("COVERAGE_PROCESS_CONFIG")
