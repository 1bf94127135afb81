"""The pytest plugin's parts that need no guest: the entry point, a cheap import, what `toolings`
values become, the in-memory MCP transport, and how a failure is told.

The plugin is installed with the package; a tooling may be an MCP SDK server object served in the same
process, a mock table or any `[tooling.NAME]` table; `error` gives the code and message of a failed
guest. The TOML schema does not change.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from agent_host import Host
from agent_host.config import MemoryToolingConfig, MockToolingConfig, StdioToolingConfig, json_schema, parse_config
from agent_host.errors import ConfigError, ErrorCode, ToolingError
from agent_host.model import RunError, RunResult, RunStatus
from agent_host.testing import AgentHost
from agent_host.testing.runner import _result
from agent_host.testing.toolings import SOURCE_NAME, config_for

MOCK = {"kind": "mock", "tools": [{"name": "search", "results": [{"structured": {"hits": ["a.md"]}}]}]}


def adder() -> MCPServer:
    server = MCPServer("adder")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


def test_the_plugin_is_registered_under_pytest11() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    assert [point.value for point in points if point.name == "agent_host"] == ["agent_host.testing.plugin"]


@pytest.mark.real_processes  # its subject: a process of its own
def test_loading_the_plugin_imports_neither_the_host_runtime_nor_the_mcp_sdk() -> None:
    code = (
        "import sys, agent_host.testing.plugin, agent_host.testing; "
        "print(sorted(m for m in ('mcp', 'wasmtime', 'agent_host.app.host', 'pydantic') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_a_dict_is_validated_like_a_tooling_table_of_the_file(tmp_path: Path) -> None:
    stdio = {"command": "python3", "args": ["-m", "x"], "cwd": "servers"}
    config = config_for({"search": MOCK, "files": stdio}, audit_log=tmp_path / "a.jsonl", base=tmp_path)
    assert isinstance(config.toolings["search"], MockToolingConfig)
    files = config.toolings["files"]
    assert isinstance(files, StdioToolingConfig) and files.cwd == tmp_path / "servers"  # relative to `base`
    assert config.host.audit_log == tmp_path / "a.jsonl"
    with pytest.raises(ConfigError) as caught:
        config_for({"bad": {"kind": "mock", "tools": [{"nam": "x"}]}}, audit_log=tmp_path / "a", base=tmp_path)
    assert SOURCE_NAME in str(caught.value) and "tooling.bad.tools" in str(caught.value)


def test_a_server_object_becomes_an_in_memory_tooling(tmp_path: Path) -> None:
    server, lowlevel = adder(), Server("low")
    config = config_for({"adder": server, "low": lowlevel, "m": MOCK}, audit_log=tmp_path / "a", base=tmp_path)
    memory = config.toolings["adder"]
    assert isinstance(memory, MemoryToolingConfig) and memory.server is server and memory.name == "adder"
    low = config.toolings["low"]
    assert isinstance(low, MemoryToolingConfig) and low.server is lowlevel
    assert isinstance(config.toolings["m"], MockToolingConfig)


def test_a_value_of_another_type_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"toolings\['x'\]: expected an MCP server object .* got int"):
        config_for({"x": 3}, audit_log=tmp_path / "a", base=tmp_path)


def test_the_file_cannot_select_the_in_memory_transport_and_its_schema_does_not_know_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config('[tooling.x]\ntransport = "memory"\nserver = "s"\n', tmp_path / "agent-host.toml")
    assert "transport" in str(caught.value)
    schema = json.dumps(json_schema())
    assert '"enum": ["memory"]' not in schema and "MemoryTooling" not in schema and '"server"' not in schema


def test_a_server_object_is_reached_in_process_with_no_subprocess(tmp_path: Path) -> None:
    config = config_for({"adder": adder()}, audit_log=tmp_path / "audit.jsonl", base=tmp_path)
    with Host(config) as host:
        session = host.session("t", allow=["*"])
        rep = session.get("adder")
        assert [tool.name for tool in session.list_tools(rep)] == ["add"]
        outcome = session.call_tool_blocking(rep, "add", '{"a": 2, "b": 3}')
        assert json.loads(outcome.value)["structuredContent"] == {"result": 5}
        with pytest.raises(ToolingError) as caught:
            session.call_tool_blocking(rep, "nope", "{}")
        assert caught.value == ToolingError(
            ErrorCode.NOT_FOUND, "tooling 'adder' has no tool 'nope'; its tools are: add"
        )
        session.close()
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(line["tooling"], line["operation"], line["outcome"]) for line in lines[:3]] == [
        ("adder", "get", "ok"),
        ("adder", "list-tools", "ok"),
        ("adder", "call-tool-blocking", "ok"),
    ]


def test_an_err_that_is_a_host_error_is_split_and_other_failures_are_kept_whole() -> None:
    """The code comes from host state (`RunResult.error_code`, set when the host returned that error to
    the guest), never from the guest's text alone."""

    def error(status: RunStatus, text: str, code: str | None = None) -> RunError | None:
        return RunResult("g", status, text, 0.0, error_code=code).error

    text = "not-found: no tooling 'x' (raised at app.py:3)"
    assert error(RunStatus.ERROR, text, "not-found") == RunError(
        RunStatus.ERROR, "no tooling 'x' (raised at app.py:3)", "not-found"
    )
    assert error(RunStatus.ERROR, text) == RunError(RunStatus.ERROR, text)
    assert error(RunStatus.ERROR, "search failed: tool-failed: down") == RunError(
        RunStatus.ERROR, "search failed: tool-failed: down"
    )
    assert error(RunStatus.TRAP, "denied: x") == RunError(RunStatus.TRAP, "denied: x")
    done = _result(RunResult("g", RunStatus.OK, "answer", 0.5), "[g] hi\n", [{"operation": "get"}])
    assert (done.output, done.exit_code, done.error, done.stderr, done.duration) == ("answer", 0, None, "[g] hi\n", 0.5)
    failed = _result(RunResult("g", RunStatus.TRAP, "out of fuel", 0.1), "", [])
    assert (failed.output, failed.exit_code, failed.error) == ("", 3, RunError(RunStatus.TRAP, "out of fuel"))


def test_closing_is_idempotent_and_a_closed_agent_host_refuses_to_run(tmp_path: Path) -> None:
    runner = AgentHost(tmp_path, tmp_path)
    runner.close()
    runner.close()
    with pytest.raises(RuntimeError, match="after the test ended"):
        runner.run(tmp_path)


def test_an_in_memory_server_sends_progress_and_resource_updates(tmp_path: Path) -> None:
    from agent_host.demo_server import build_server

    config = config_for({"demo": build_server()}, audit_log=tmp_path / "audit.jsonl", base=tmp_path)
    with Host(config) as host:
        session = host.session("t", allow=["*"])
        rep = session.get("demo")
        session.subscribe(rep, "resource", "demo://note")
        session.call_tool_blocking(rep, "set_note", '{"text": "new"}')
        update = session.recv(5000)
        assert update is not None and update.kind == "resource-updated"
        session.call_tool(rep, "sleep", '{"seconds": 0.1, "steps": 2}')
        kinds: list[str] = []
        while not kinds or kinds[-1] == "progress":
            envelope = session.recv(5000)
            assert envelope is not None
            kinds.append(envelope.kind)
        assert kinds == ["progress", "progress", "tool-result"]
        session.close()
