"""JavaScript code agents (`code = "javascript"`): the same contract as Python's, in the JavaScript
runner (componentize-js): `toolings.NAME.TOOL({...})`, `toolings.ToolError`, `gather`, `help`,
the last expression's value and `console.log` as the answer, a thrown error as the snippet's own
frames; served with its API as TypeScript-like signatures.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from agent_host import AgentHost, Host
from agent_host.model import RunResult
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server

pytestmark = [pytest.mark.component, pytest.mark.npm, pytest.mark.timeout(300)]

CONFIG = """
[host]
guest_output_max = 1000
[tooling.calc]
kind = "mock"
[[tooling.calc.tools]]
name = "add"
description = "Add two numbers."
input_schema = { type = "object", required = ["a"], properties = { a = INT, b = INT } }
results = [{ structured = { sum = 3 } }]
repeat_last = true
[[tooling.calc.tools]]
name = "broken"
results = [{ error = "it broke" }]
repeat_last = true
[[tooling.calc.tools]]
name = "slow-one"
results = [{ text = "slow", delay = 0.05 }]
repeat_last = true
[tooling.secret]
kind = "mock"
[agents.js]
code = "javascript"
toolings = ["calc"]
cpu_time = 1
""".replace("INT", '{ type = "integer" }')


@pytest.fixture
def host(make_host: Callable[[str], Host], toolchain: Any) -> Host:
    return make_host(CONFIG)


def run(host: Host, code: str) -> RunResult:
    return host.run(host.agent_component("js"), code, agent="js")


def answer(outcome: RunResult) -> Any:
    assert outcome.status == "ok", outcome
    return json.loads(outcome.text)


def test_tools_are_functions_of_one_object_and_the_answer_is_the_last_value_and_the_log(host: Host) -> None:
    code = 'console.log("adding", { a: 1 });\nconst { calc } = toolings;\n[calc.add({ a: 1, b: 2 }), calc.slow_one()]'
    assert answer(run(host, code)) == {"result": [{"sum": 3}, "slow"], "stdout": 'adding {"a":1}\n'}
    assert answer(run(host, "undefined"))["result"] is None
    assert answer(run(host, "const c = {}; c.c = c; c"))["result"] == "[object Object]"


def test_a_tool_failure_throws_tool_error_and_gather_runs_calls_at_once(host: Host) -> None:
    code = (
        "let caught;\ntry { toolings.calc.broken() }\n"
        "catch (e) { caught = [e instanceof toolings.ToolError, e.code, e.message] }\n"
        "[caught, toolings.gather(toolings.calc.add.start({ a: 1 }), toolings.calc.slow_one.start())]"
    )
    assert answer(run(host, code))["result"] == [[True, "tool-failed", "it broke"], [{"sum": 3}, "slow"]]


def test_a_tooling_not_granted_is_refused_by_toolings_and_by_the_host(host: Host) -> None:
    refused = run(host, "toolings.secret")
    assert refused.status == "error"
    assert 'tooling "secret" is not granted to this agent; granted: calc' in refused.text
    # the runner is not the fence: given an envelope naming it (a policy of no code agent passes the
    # input as it is), the host still refuses the tooling
    forged = json.dumps(
        {
            "code": "let said; try { toolings.secret.leak() } catch (e) { said = e.code } said",
            "toolings": {"secret": "secret"},
            "stdout": 100,
        }
    )
    wasm = host.agent_component("js")
    outcome = host.run(wasm, forged, agent="js", policy=host.policy("js", None, ["calc"]))
    assert answer(outcome)["result"] == "denied"


def test_a_dynamic_import_ends_the_run_as_a_trap_and_the_next_run_is_whole(host: Host) -> None:
    """StarlingMonkey has no dynamic `import()`: the runner traps (documented; the host is untouched,
    and a text that only mentions `import (x)` runs)."""
    assert run(host, 'import("agentlib")').status == "trap"
    code = "console.log('import (x)'); toolings.get('calc').add({ a: 1 })"
    assert answer(run(host, code))["result"] == {"sum": 3}


def test_the_fixture_runs_javascript_too(agent_host: AgentHost, toolchain: Any) -> None:
    mock = {"kind": "mock", "tools": [{"name": "find", "results": [{"text": "a.md"}]}]}
    done = agent_host.run_code("toolings.notes.find({ query: 'a' })", toolings={"notes": mock}, language="javascript")
    assert json.loads(done.output) == {"result": "a.md", "stdout": ""}


def test_a_thrown_error_is_the_snippets_frames_only(host: Host) -> None:
    failed = run(host, "function f() {\n  throw new Error('boom');\n}\nf()")
    assert failed.status == "error"
    assert failed.text.splitlines() == ["Error: boom", "    at f (<code>:2:9)", "    at <code>:4:1"]
    syntax = run(host, "const x = 1;\n1 +")
    assert syntax.text.splitlines() == ["SyntaxError: expected expression, got end of script", "    at <code>:2:4"]


def test_help_prints_a_tools_schema_and_description_and_output_is_bounded(host: Host) -> None:
    shown = answer(run(host, "help(toolings.calc.add)"))["stdout"]
    assert shown.startswith('calc.add({"type":"object","required":["a"],') and "    Add two numbers." in shown
    stdout = answer(run(host, "for (let i = 0; i < 1000; i++) console.log('x'.repeat(99))"))["stdout"]
    assert len(stdout) < 1200 and stdout.endswith("[stdout cut at 1000 bytes: 99000 bytes more were dropped]\n")


def test_nothing_is_kept_between_runs_and_the_cpu_limit_holds(host: Host) -> None:
    assert answer(run(host, "globalThis.kept = 1; kept"))["result"] == 1
    assert answer(run(host, "typeof globalThis.kept"))["result"] == "undefined"
    spun = run(host, "while (true) {}")
    assert (spun.status, spun.tripped) == ("trap", "cpu_time"), spun


def test_served_its_description_is_the_api_in_typescript_like_signatures(host: Host) -> None:
    async def main() -> Any:
        catalog = build_catalog(host, host.config)
        async with catalog.running(), Client(build_server(catalog)) as client:
            tool = next(t for t in (await client.list_tools()).tools if t.name == "js")
            called = await client.call_tool("js", {"code": "toolings.calc.add({ a: 1 })"})
            return tool, called

    tool, called = anyio.run(main)
    assert "Runs JavaScript code" in (tool.description or "")
    assert "    calc.add(args: { a: number, b?: number }) -> string\n        Add two numbers." in (
        tool.description or ""
    )
    assert tool.input_schema["properties"]["code"]["description"].startswith("JavaScript source")
    assert called.structured_content == {"result": {"sum": 3}, "stdout": ""}


def test_the_runner_is_built_once_and_cached(host: Host, tmp_path: Path) -> None:
    assert host.agent_component("js") == host.agent_component("js")
