"""A guest written as a plain function (`@agent`) with a typed input, built and run for real: its input
parsed and checked by path inside the sandbox, the demo tooling as an object, stdlib logging in the
host's log, a dict answered as JSON; the schema its component says (`describe`), offered by `serve`
as its tool's arguments and checked before the guest runs; the pytest fixture seeing the same.
The guest is tests/guests/typed.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_host import Host, RunStatus
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from tests.support.serving import INITIALIZE, JSON_HEADERS, HttpServe, mcp_call

pytestmark = pytest.mark.component

TYPED = Path(__file__).resolve().parents[2] / "guests" / "typed"
DEMO = '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}, "note": {"type": "string"}},
    "required": ["a", "b"],
    "additionalProperties": False,
    "description": "Two numbers for the demo tooling to add.",
}


@pytest.fixture(scope="module")
def typed_wasm() -> Path:
    return build_guest(TYPED)


def test_the_typed_input_is_parsed_and_checked_in_the_sandbox(
    tmp_path: Path, typed_wasm: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = parse_config(DEMO + '[agents.typed]\ntoolings = ["demo"]\n', tmp_path / "agent-host.toml")
    caplog.set_level(logging.INFO, logger="agent_host.guest")
    with Host(config) as host:
        added = host.run(typed_wasm, '{"a": 2, "b": 3, "note": "hi"}', agent="typed")
        wrong = host.run(typed_wasm, '{"a": 2, "b": "three"}', agent="typed")
        schema = host.input_schema(typed_wasm, "typed", host.policy("typed"))
    assert added.status is RunStatus.OK, added
    assert json.loads(added.output) == {"sum": 5.0, "note": "hi"}
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "agent_host.guest"]
    assert (logging.INFO, "[typed] info: typed: adding 2.0 and 3.0") in logged  # stdlib logging, at its level
    assert wrong.status is RunStatus.ERROR
    assert wrong.text == 'invalid-arguments: $.b: expected a number, got "three"'
    assert schema == SCHEMA


def test_served_its_tool_takes_the_schema_its_component_says(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(DEMO + f'[agents.typed]\ncomponent = "{TYPED}"\ntoolings = ["demo"]\n')
    served = HttpServe(config, "--agent", "typed")
    try:
        with httpx2.Client(headers=JSON_HEADERS, timeout=60) as http:
            opened = http.post(served.url, json=INITIALIZE)
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            http.post(served.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            listed = http.post(served.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session)
        added = mcp_call(served, "typed", '{"a": 1, "b": 2}')
        refused = mcp_call(served, "typed", '{"a": 1}')
    finally:
        served.stop()
    tools = _result(listed.text)["tools"]
    (tool,) = [t for t in tools if t["name"] == "typed"]
    assert tool["inputSchema"] == SCHEMA
    assert added["isError"] is False and json.loads(added["content"][0]["text"]) == {"sum": 3.0, "note": ""}
    assert refused["isError"] is True and "'b' is a required property" in refused["content"][0]["text"]


def test_the_pytest_fixture_runs_it_and_sees_its_schema(agent_host: Any) -> None:
    demo = {"command": "${AGENT_HOST_PYTHON}", "args": ["-m", "agent_host.demo_server"]}
    result = agent_host.run(TYPED, input='{"a": 4, "b": 5}', toolings={"demo": demo})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output) == {"sum": 9.0, "note": ""}
    assert agent_host.input_schema(TYPED) == SCHEMA


def _result(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("data: "):
            found: dict[str, Any] = json.loads(line.removeprefix("data: "))["result"]
            return found
    found = json.loads(text)["result"]
    return found
