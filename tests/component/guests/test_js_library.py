"""JavaScript guests written with agentlib, the library every JavaScript build bundles (`import {
agent, tooling } from "agentlib"`).

The guest (`tests/guests/jslib`, `export default agent(...)`) runs in wasmtime against the demo
tooling (the host's MCP server `agent_host.demo_server`) and a mock provider: its JSON input parsed
and checked by the input schema, tool objects' calls giving structured content and text, a failing
call's `ToolingError` caught with its code, a resource as text and as bytes, a started call's typed
events in order with one final result, a subscription's `resource-updated`, a chat, a stream and the
tool loop (`runAgent`, its tool call audited between its two chats), answers made of what `fn`
returns (a string, "", JSON; a Promise or a BigInt refused), and an escaped `ToolingError` reported
with its code and the guest's own line. The guest and the first example of
docs/guests/javascript.md type-check (tsc, strict) against the declarations `agent-host bindings
--lang ts` writes (`agentlib.d.ts` among them). Skipped, with the reason, where node or npm is missing.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host import Host, RunStatus
from agent_host.cli.new import new_js_guest
from agent_host.components import js_toolchain
from agent_host.components.build import build_guest
from agent_host.components.ts_bindings import LIBRARY_FILE, write_ts_bindings
from agent_host.config import parse_config
from tests.support.component import REPO

pytestmark = [pytest.mark.component, pytest.mark.npm, pytest.mark.timeout(300)]
"""Longer than the suite's 60 s: the first test builds (componentize-js) and compiles, a fresh run installs the
toolchain first."""

TOOL_CALL: Final = "call-tool-blocking"
JSLIB: Final = REPO / "tests" / "guests" / "jslib"
DOCS: Final = REPO / "docs" / "guests" / "javascript.md"

CONFIG: Final = """
[tooling.demo]
command = "${AGENT_HOST_PYTHON}"
args = ["-m", "agent_host.demo_server"]

[provider.mock]
kind = "mock"
turns = [
  { content = "Streamed in three pieces." },
  { content = "The answer is 42.", usage = { input_tokens = 10, output_tokens = 5 } },
  { tool_calls = [{name = "add", arguments = {a = 2, b = 3}}] },
  { content = "The sum is 5." },
]

[agents.jslib]
toolings = ["demo"]
providers = ["mock"]
"""
"""Tooling demo and provider mock, granted to agent `jslib`; the mock's turns in the order the guest asks:
its stream, its chat, then the tool loop's two chats."""


@pytest.fixture(scope="module")
def jslib(toolchain: js_toolchain.Toolchain) -> Path:
    return build_guest(JSLIB)


def line_of(text: str) -> int:
    """The line of tests/guests/jslib/app.js holding `text` (1-based)."""
    lines = (JSLIB / "app.js").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def make_host(tmp_path: Path) -> Host:
    text = f'[host]\naudit_log = "{tmp_path / "audit.jsonl"}"\naudit_arguments = true\n{CONFIG}'
    return Host(parse_config(text, tmp_path / "agent-host.toml"))


def audited(tmp_path: Path) -> list[tuple[str, str, Any]]:
    """(operation, target, the arguments of a tool call) of the chats and blocking tool calls audited, in order."""
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    return [
        (line["operation"], line["target"], json.loads(line["arguments"]) if line["operation"] == TOOL_CALL else None)
        for line in lines
        if line["operation"] in ("chat", "chat-stream", TOOL_CALL)
    ]


def test_a_guest_written_with_the_library_calls_tools_reads_typed_events_and_asks_a_model(
    tmp_path: Path, jslib: Path
) -> None:
    with make_host(tmp_path) as host:
        result = host.run(jslib, json.dumps({"text": "hello", "a": 2, "b": 3}), agent="jslib")
    assert result.status is RunStatus.OK, result
    report = json.loads(result.output)
    assert report["input"] == {"text": "hello", "a": 2, "b": 3}
    # demo.NAME(args): the structured content (the MCP SDK structures a str as {"result": ...})
    assert (report["sum"], report["echo"], report["viaTool"]) == (
        {"sum": 5},
        {"result": "hello"},
        {"result": "by tool()"},
    )
    assert report["whole"]["name"] == "add" and report["whole"]["arguments"] == {"a": 1, "b": 1}
    assert report["whole"]["structured"] == {"sum": 2} and json.loads(report["whole"]["text"]) == {"sum": 2}
    assert report["failed"] == {
        "code": "tool-failed",
        "text": "tool-failed: Error executing tool fail: no luck",
        "message": "Error executing tool fail: no luck",
        "data": True,
    }
    assert report["meta"] == {
        "name": "demo",
        "kind": "mcp",
        "tools": ["echo", "add", "word_count", "fail", "sleep", "set_note"],
    }
    assert report["readme"] == "# agent-host demo server"
    assert report["logo"] == {"mimeType": "image/png", "isText": False, "bytes": 190, "magic": "PNG"}
    assert report["resources"] == ["demo://readme", "demo://note", "demo://logo.png"]
    assert report["started"] == {"seen": ["progress 1/2", "progress 2/2", "result slept 0.2 s"], "open": False}
    assert report["note"] == {"text": "demo://note: changed by jslib", "closed": True}
    assert report["stream"] == {
        "pieces": "Streamed in three pieces.",
        "reply": "Streamed in three pieces.",
        "finish": "stop",
    }
    assert report["chat"] == {"content": "The answer is 42.", "finish": "stop", "tokens": [10, 5]}
    assert report["loop"] == "The sum is 5."
    assert report["inputs"] == [
        "invalid input: not JSON (JSON.parse: unexpected keyword at line 1 column 1 of the JSON data)",
        "invalid input: it does not match the input schema: $.text: required, missing",
        "invalid input: it does not match the input schema: $.text: expected string, got an integer",
        "invalid input: it does not match the input schema: $: expected object, got an array",
        'accepted {"text":"ok"}',
    ]
    *answers, promised, big = report["answers"]
    assert answers == ["", "", '{"n":1}', "7"]
    assert promised == "err agent(fn): fn returned a Promise (fn must not be async: the WIT export is synchronous)"
    assert big.startswith("err agent(fn): fn's answer cannot be written as JSON (BigInt"), big
    loop = [("chat", "mock", None), (TOOL_CALL, "add", {"a": 2, "b": 3}), ("chat", "mock", None)]
    assert audited(tmp_path)[-3:] == loop


def test_an_escaped_tooling_error_keeps_its_code_and_names_the_guests_line(tmp_path: Path, jslib: Path) -> None:
    """And the component says its `inputSchema` (`describe`, world `described-agent`): what `serve` offers."""
    with make_host(tmp_path) as host:
        result = host.run(jslib, json.dumps({"text": "x", "mode": "escape"}), agent="jslib")
        schema = host.input_schema(jslib, "jslib", host.policy("jslib"))
    assert (
        schema is not None
        and schema["required"] == ["text"]
        and set(schema["properties"]) == {"text", "a", "b", "mode"}
    )
    assert (result.status, result.error_code) == (RunStatus.ERROR, "tool-failed"), result
    place = f"app.js:{line_of('escaped on purpose')}:"
    assert result.text.startswith(f"tool-failed: Error executing tool fail: escaped on purpose (raised at {place}")


def test_the_guest_and_the_docs_first_example_type_check_against_the_declarations(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    """Each one a guest made by `new --lang js` (its strict jsconfig.json) with its app.js replaced."""
    typings = write_ts_bindings(tmp_path / "typings-ts")
    assert (typings / LIBRARY_FILE).is_file()
    first = re.search(r"```js\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    assert first is not None and 'from "agentlib"' in first.group(1)
    sources = {"jslib": (JSLIB / "app.js").read_text(encoding="utf-8"), "docs": first.group(1)}
    tsc = toolchain.prefix / "node_modules" / ".bin" / "tsc"
    for name, source in sources.items():
        folder = new_js_guest(tmp_path / "guests", name, bindings=typings)
        (folder / "app.js").write_text(source, encoding="utf-8")
        command = [str(tsc), "-p", str(folder / "jsconfig.json")]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, f"{name}:\n{done.stdout}"
