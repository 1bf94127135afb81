"""Fixtures for every test: no test may leave a process behind, and children are forked.

Each test is checked against the processes that existed before it (module- and session-scoped
servers are started, and checked, by their own fixtures); the whole run is checked at the end.
Under coverage (`make test`), the stdio servers this process's hosts start are measured too.
The run's Python children (`agent-host` commands, stdio servers) are forked from one server per
worker that has imported the SDK and agent-host already (`tests.support.forkserver`), except in the
modules and tests marked `real_processes`: those whose subject is the process itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.forkserver import ForkServer
from tests.support.prebuild import Prebuild
from tests.support.processes import descendants, leaked, serves_forks

REPO = Path(__file__).resolve().parent.parent

SHARED_GUESTS = tuple(
    REPO / folder
    for folder in (
        "tests/guests/probe",
        "tests/guests/jsprobe",  # the longest (a fresh cache installs componentize-js first): early
        "guests/demo",
        "tests/guests/blunders",
        "tests/guests/thinker",
        "tests/guests/jsthinker",
        "tests/guests/jslib",
        "guests/watcher",
        "guests/finder",
        "guests/assistant",
        "tests/guests/typed",
    )
)
"""The guests test modules share, most shared first: built and compiled while a parallel run starts."""

NO_PREBUILD = "AGENT_HOST_TEST_NO_PREBUILD"
"""Set (to anything), a parallel run builds nothing ahead: each guest is built by the first test needing it."""

_prebuild: Prebuild | None = None


def pytest_sessionstart(session: pytest.Session) -> None:
    """In the controller of a parallel run of the component tests (it runs no test, so the builds'
    children are no test's leak), start building and compiling `SHARED_GUESTS` in the background."""
    global _prebuild
    config = session.config
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if os.environ.get(NO_PREBUILD) or not _runs_component_tests(config):
        return
    _prebuild = Prebuild.start(SHARED_GUESTS)


def pytest_sessionfinish(session: pytest.Session) -> None:
    global _prebuild
    if _prebuild is not None:
        _prebuild.close()
        _prebuild = None


def _runs_component_tests(config: pytest.Config) -> bool:
    """Whether the run is the whole suite or its component tests (not one file: a fresh cache would
    build guests it never uses), with no marker expression leaving the component tests out."""
    if "not component" in (config.option.markexpr or ""):
        return False
    wanted = {REPO / "tests", REPO / "tests" / "component"}
    return any(Path(config.invocation_params.dir, arg.split("::")[0]).resolve() in wanted for arg in config.args)


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


NO_FORK = "AGENT_HOST_TEST_NO_FORK"
"""Set (to anything), no child is forked: every test's children are real processes (to compare)."""


@pytest.fixture(scope="session")
def fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """The worker's fork server (see the module docstring), ended with the run."""
    server = ForkServer.start(tmp_path_factory.mktemp("forkserver"))
    serves_forks(server.process.pid)
    yield server
    server.close()


@pytest.fixture(scope="module", autouse=True)
def forked_children(request: pytest.FixtureRequest) -> Iterator[None]:
    """The module's Python children forked from the fork server, unless it is marked `real_processes`
    (set for the module, so that its module-scoped servers are alike)."""
    if request.node.get_closest_marker("real_processes") is not None or os.environ.get(NO_FORK):
        yield
        return
    server: ForkServer = request.getfixturevalue("fork_server")
    with _environ(server.environ()), _interpreter(str(server.launcher)):
        yield


@pytest.fixture(autouse=True)
def real_children(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked `real_processes` in a module that is not: its children are real processes."""
    if request.node.get_closest_marker("real_processes") is None:
        yield
        return
    with _environ(dict.fromkeys(ForkServer.VARIABLES)), _interpreter(ForkServer.REAL):
        yield


@contextlib.contextmanager
def _interpreter(path: str) -> Iterator[None]:
    """`sys.executable` is `path` while the block runs: what hosts of this process start as Python
    (the embedded default's demo server, builds, compiles) and what tests start as Python."""
    saved, sys.executable = sys.executable, path
    try:
        yield
    finally:
        sys.executable = saved


@contextlib.contextmanager
def _environ(changes: Mapping[str, str | None]) -> Iterator[None]:
    """`os.environ` with `changes` (None: removed) while the block runs; and the variables passed to
    the stdio servers hosts start (the SDK gives them a minimal environment)."""
    from mcp.client import stdio

    saved = {key: os.environ.get(key) for key in changes}
    inherited = stdio.DEFAULT_INHERITED_ENV_VARS
    added = [key for key in changes if key not in inherited]
    inherited.extend(added)
    for key, value in changes.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for key in added:
            inherited.remove(key)


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
