"""Fixtures for every test: no test may leave a process behind.

Each test is checked against the processes that existed before it (module- and session-scoped
servers are started, and checked, by their own fixtures); the whole run is checked at the end.
"""

from __future__ import annotations

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
