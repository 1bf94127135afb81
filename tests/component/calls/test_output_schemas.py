"""A result whose `structuredContent` breaks the tool's output schema is `protocol`, for every kind.

The `protocol` error names the path and the rule that failed. The MCP server is
tests/servers/asking.py (the SDK's low-level server, which lets a tool break its own schema) over
stdio on both eras and over streamable HTTP; the mock and Python kinds declare schemas in config and
code. Calls go through a session, as a guest's do (`call-tool-blocking` and `call-tool`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS, CallOutcome
from tests.support.component import REPO, TRANSPORTS, served_keys

pytestmark = pytest.mark.component

ASKING_STDIO = f'command = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.asking"]\ncwd = "{REPO}"\n'
MOCK = """[tooling.t]
kind = "mock"
[[tooling.t.tools]]
name = "shaped"
output_schema = { type = "object", properties = { n = { type = "integer" } }, required = ["n"] }
results = [{ structured = { n = 1 } }, { structured = { n = "one" } }]
repeat_last = true
"""
PYTHON = f'[tooling.t]\nkind = "python"\npath = ["{REPO}"]\ntools = ["tests.support.pytools:Shaped"]\n'
WRONG = "at $.n: 'one' is not of type 'integer' (rule: type)"


@pytest.fixture(scope="module", params=[*TRANSPORTS[:3], "mock", "python"])
def tooling(request: pytest.FixtureRequest) -> Iterator[str]:
    """The config of tooling `t` whose tool `shaped` answers `good` first, then `wrong`."""
    if request.param == "mock":
        yield MOCK
    elif request.param == "python":
        yield PYTHON
    else:
        with served_keys("tests.servers.asking", request.param) as keys:
            yield "[tooling.t]\n" + keys


def test_structured_content_breaking_the_output_schema_is_a_protocol_error(tooling: str, tmp_path: Path) -> None:
    with Host(parse_config(tooling, tmp_path / "agent-host.toml")) as host:
        session = host.session("checker", allow=["*"])
        rep = session.get("t")
        good = session.call_tool_blocking(rep, "shaped", json.dumps({"mode": "good"}))
        with pytest.raises(ToolingError) as wrong:
            session.call_tool_blocking(rep, "shaped", json.dumps({"mode": "wrong"}))
        call_id = session.call_tool(rep, "shaped", json.dumps({"mode": "wrong"}))  # the asynchronous path too
        envelope = session.recv(30_000)
        while envelope is not None and (envelope.id != call_id or envelope.kind not in FINAL_KINDS):
            envelope = session.recv(30_000)
        session.close()
    assert isinstance(good, CallOutcome) and json.loads(good.value)["structuredContent"] == {"n": 1}
    assert wrong.value.code is ErrorCode.PROTOCOL
    assert wrong.value.message == (
        f"the structuredContent of tool 'shaped' of tooling 't' does not match its output schema: {WRONG}"
    )
    assert envelope is not None and envelope.kind == "error"
    assert isinstance(envelope.payload, ToolingError) and envelope.payload.code is ErrorCode.PROTOCOL


@pytest.mark.parametrize("mode", ["none", "failed"])
def test_missing_structured_content_is_a_protocol_error_unless_the_result_is_an_error(
    mode: str, tmp_path: Path
) -> None:
    with Host(parse_config("[tooling.t]\n" + ASKING_STDIO, tmp_path / "agent-host.toml")) as host:
        session = host.session("checker", allow=["*"])
        rep = session.get("t")
        with pytest.raises(ToolingError) as caught:
            session.call_tool_blocking(rep, "shaped", json.dumps({"mode": mode}))
        session.close()
    if mode == "none":
        assert caught.value.code is ErrorCode.PROTOCOL
        assert caught.value.message == (
            "tool 'shaped' of tooling 't' declares an output schema but its result has no structuredContent"
        )
    else:  # an isError result is the tool's failure, not checked against the schema
        assert (caught.value.code, caught.value.message) == (ErrorCode.TOOL_FAILED, "it failed")
