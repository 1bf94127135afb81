"""A tool the server runs as an MCP Task: `call-tool`'s id maps to the task, one final envelope.

When a server offers MCP Tasks for a tool, `call-tool` runs it as a task: the guest's id maps to the
task, `is-open` / `cancel` map to the task's status and cancellation, the result arrives in the
inbox exactly once, and polling follows the server's hints. The server is tests/servers/tasking.py
(the SDK's low-level server serving SEP-2663 itself) over stdio and streamable HTTP. Tasks exist in
the 2026-07-28 era (the extension); on a 2025-11-25 connection the same tool runs as a plain call,
as before (the server counts no task). Ordering is proven with the server's own barriers (`started`,
`cancelled`), never with sleeps.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS, CallOutcome, Envelope
from agent_host.session import GuestSession as Session
from tests.support.component import REPO, Server

pytestmark = pytest.mark.component

TASKING_STDIO = f'command = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.tasking"]\ncwd = "{REPO}"\n'
OLD = 'protocol = "2025-11-25"\n'
WAIT_MS = 30_000


@pytest.fixture(params=["stdio-2026", "http-2026", "stdio-2025", "http-2025"])
def tooling(request: pytest.FixtureRequest) -> Iterator[tuple[str, bool]]:
    """The config of tooling `t` (the tasking server) and whether its era has Tasks."""
    era = OLD if request.param.endswith("2025") else ""
    if request.param.startswith("http"):
        server = Server([sys.executable, "-m", "tests.servers.tasking", "--http", "0"])
        try:
            yield f'[tooling.t]\nurl = "{server.url}"\n{era}', not era
        finally:
            server.stop()
    else:
        yield "[tooling.t]\n" + TASKING_STDIO + era, not era


def _args(**values: object) -> str:
    return json.dumps(values)


def _finals(session: Session, call_id: str) -> list[Envelope]:
    """Every envelope for `call_id` up to its final one, then whatever else is queued (none expected)."""
    seen: list[Envelope] = []
    envelope = session.recv(WAIT_MS)
    while envelope is not None:
        if envelope.id == call_id:
            seen.append(envelope)
        if envelope.kind in FINAL_KINDS and envelope.id == call_id:
            break
        envelope = session.recv(WAIT_MS)
    while (more := session.try_recv()) is not None:
        seen.append(more)
    return [envelope for envelope in seen if envelope.kind in FINAL_KINDS]


def _observe(session: Session, rep: int, key: str) -> dict[str, int]:
    outcome = session.call_tool_blocking(rep, "observe", _args(key=key))
    counts: dict[str, int] = json.loads(json.loads(outcome.value)["content"][0]["text"])
    return counts


def test_a_task_ends_with_exactly_one_final_envelope_and_is_open_until_it_is_received(
    tooling: tuple[str, bool], tmp_path: Path
) -> None:
    config, has_tasks = tooling
    with Host(parse_config(config, tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        rep = session.get("t")
        call_id = session.call_tool(rep, "work", _args(key="a"))
        session.call_tool_blocking(rep, "started", _args(key="a"))  # the work runs (a task, or inline)
        open_while_working = session.is_open(rep, call_id)
        session.call_tool_blocking(rep, "release", _args(key="a"))
        finals = _finals(session, call_id)
        open_after = session.is_open(rep, call_id)
        counts = _observe(session, rep, "a")
        session.close()
    assert open_while_working and not open_after
    assert len(finals) == 1 and finals[0].kind == "tool-result"
    assert isinstance(finals[0].payload, CallOutcome)
    assert json.loads(finals[0].payload.value)["content"][0]["text"] == "done a"
    if has_tasks:
        assert counts["tasks"] == 1 and counts["polls"] >= 1 and counts["cancels"] == 0
    else:
        assert counts == {"tasks": 0, "polls": 0, "cancels": 0}


def test_cancelling_the_call_cancels_the_servers_task(tooling: tuple[str, bool], tmp_path: Path) -> None:
    config, has_tasks = tooling
    with Host(parse_config(config, tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        rep = session.get("t")
        call_id = session.call_tool(rep, "work", _args(key="b"))
        session.call_tool_blocking(rep, "started", _args(key="b"))
        was_open = session.cancel(rep, call_id)
        observed = session.call_tool_blocking(rep, "cancelled", _args(key="b"))  # returns once the server saw it
        counts = _observe(session, rep, "b")
        left = session.try_recv()
        session.close()
    assert was_open and isinstance(observed, CallOutcome)
    assert left is None  # a cancelled call has no final envelope
    assert counts["cancels"] == (1 if has_tasks else 0) and counts["tasks"] == (1 if has_tasks else 0)


@pytest.mark.parametrize(
    ("end", "code", "message"),
    [
        ("tool-error", ErrorCode.TOOL_FAILED, "done c"),
        ("failed", ErrorCode.TOOL_FAILED, "tooling 't': the server failed the call of tool 'work': work c failed"),
    ],
)
def test_a_task_that_ends_in_an_error_is_one_error_envelope(
    tooling: tuple[str, bool], end: str, code: ErrorCode, message: str, tmp_path: Path
) -> None:
    config, _ = tooling
    with Host(parse_config(config, tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        rep = session.get("t")
        call_id = session.call_tool(rep, "work", _args(key="c", end=end))
        session.call_tool_blocking(rep, "release", _args(key="c"))
        finals = _finals(session, call_id)
        session.close()
    assert len(finals) == 1 and finals[0].kind == "error"
    assert isinstance(finals[0].payload, ToolingError)
    assert (finals[0].payload.code, finals[0].payload.message) == (code, message)


def test_a_task_outliving_its_ttl_is_a_timeout_and_is_cancelled_on_the_server(tmp_path: Path) -> None:
    """ttlMs 1: the first poll comes at least `MIN_POLL` (10 ms) after the task was seen."""
    with Host(parse_config("[tooling.t]\n" + TASKING_STDIO, tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        rep = session.get("t")
        call_id = session.call_tool(rep, "work", _args(key="d", ttl_ms=1))
        finals = _finals(session, call_id)
        observed = session.call_tool_blocking(rep, "cancelled", _args(key="d"))
        session.close()
    assert len(finals) == 1 and isinstance(finals[0].payload, ToolingError)
    assert finals[0].payload.code is ErrorCode.TIMEOUT
    assert "was not finished within its TTL of 1 ms" in finals[0].payload.message
    assert isinstance(observed, CallOutcome)


def test_the_request_timeout_bounds_each_silence_not_the_whole_task(tmp_path: Path) -> None:
    """`timeout = 1` with polls every 20 ms: the task outlives the timeout (it waits for `started`,
    then for a blocking call that itself waits on the server) and still ends with its result."""
    config = "[tooling.t]\n" + TASKING_STDIO + "timeout = 1\n"
    with Host(parse_config(config, tmp_path / "agent-host.toml")) as host:
        session = host.session("agent", allow=["*"])
        rep = session.get("t")
        call_id = session.call_tool(rep, "work", _args(key="e"))
        session.call_tool_blocking(rep, "started", _args(key="e"))
        # wait out more than the timeout with the task open, on the server's clock, not ours
        waited = 0
        while session.is_open(rep, call_id) and waited < 3:
            with pytest.raises(ToolingError) as slow:
                session.call_tool_blocking(rep, "cancelled", _args(key="never"))
            assert slow.value.code is ErrorCode.TIMEOUT
            waited += 1
        session.call_tool_blocking(rep, "release", _args(key="e"))
        finals = _finals(session, call_id)
        session.close()
    assert waited == 3
    assert len(finals) == 1 and finals[0].kind == "tool-result"
