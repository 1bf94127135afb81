"""A progress report starts an asynchronous call's `timeout` anew, under a hard `max_call_time`.

The server is tests/servers/asking.py (`stall`: progress reports at a steady pace, then silence)
over stdio on both eras and over streamable HTTP; the Python kind reports progress from a worker
thread (tests/support/pytools.py `threaded`). The bounds are generous next to the pace of the
reports (1.5 s against 0.2 s), so a loaded machine does not change the outcome.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS, CallOutcome
from tests.support.component import REPO, TRANSPORTS, served_keys

pytestmark = pytest.mark.component

STDIO = f'command = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.asking"]\ncwd = "{REPO}"\n'
BOUNDS = "timeout = 1.5\nmax_call_time = 4\n"


@pytest.fixture(scope="module", params=TRANSPORTS[:3])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The transport keys of tooling `t` (tests/servers/asking.py)."""
    with served_keys("tests.servers.asking", request.param) as keys:
        yield keys


def finals(config: str, tmp_path: Path, calls: dict[str, dict[str, Any]], tool: str = "stall") -> dict[str, Any]:
    """Start `calls` (label → arguments of `tool`) at once through a session; each one's outcome."""
    with Host(parse_config(config, tmp_path / "agent-host.toml")) as host:
        session = host.session("waiter", allow=["*"])
        rep = session.get("t")
        ids = {session.call_tool(rep, tool, json.dumps(arguments)): label for label, arguments in calls.items()}
        outcomes: dict[str, Any] = {}
        while len(outcomes) < len(ids):
            envelope = session.recv(30_000)
            assert envelope is not None, f"no final envelope within 30 s; got {outcomes}"
            if envelope.kind in FINAL_KINDS:
                outcomes[ids[envelope.id]] = envelope.payload
        session.close()
    return outcomes


def test_progress_keeps_a_call_alive_until_it_stops_or_max_call_time(server: str, tmp_path: Path) -> None:
    outcomes = finals(
        "[tooling.t]\n" + server + BOUNDS,
        tmp_path,
        {
            "steady": {"reports": 12, "interval": 0.2},  # 2.4 s in all, never 1.5 s without progress
            "silent": {"reports": 2, "interval": 0.2, "then": 60},  # two reports, then nothing
            "endless": {"reports": 1000, "interval": 0.2},  # progress forever: max_call_time ends it
        },
    )
    assert isinstance(outcomes["steady"], CallOutcome)
    silent, endless = outcomes["silent"], outcomes["endless"]
    assert isinstance(silent, ToolingError) and silent.code is ErrorCode.TIMEOUT
    assert silent.message.startswith("tooling 't': the call of tool 'stall' reported no progress for 1.5 s")
    assert isinstance(endless, ToolingError) and endless.code is ErrorCode.TIMEOUT
    assert "did not finish within 4 s and was cancelled (raise `max_call_time` in " in endless.message


def test_without_progress_resets_the_timeout_bounds_the_whole_call(tmp_path: Path) -> None:
    config = "[tooling.t]\n" + STDIO + BOUNDS + "progress_resets_timeout = false\n"
    outcome = finals(config, tmp_path, {"steady": {"reports": 12, "interval": 0.2}})["steady"]
    assert isinstance(outcome, ToolingError) and outcome.code is ErrorCode.TIMEOUT
    assert outcome.message.startswith("tooling 't': the call of tool 'stall' did not finish within 1.5 s")


def test_progress_from_a_python_tools_worker_thread_keeps_its_call_alive(tmp_path: Path) -> None:
    config = (
        f'[tooling.t]\nkind = "python"\npath = ["{REPO}"]\ntools = ["tests.support.pytools:threaded"]\ntimeout = 1.5\n'
    )
    outcome = finals(config, tmp_path, {"long": {"steps": 150}}, tool="threaded")["long"]  # 150 x 20 ms = 3 s
    assert isinstance(outcome, CallOutcome), outcome
