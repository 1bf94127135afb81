"""JavaScript guests ask models through WIT `provider` as Python guests do.

The guest (`tests/guests/jsthinker`, jco's bindings; one command a line of its input) runs in
wasmtime against a mock provider and against a local server speaking OpenAI's Chat Completions wire
protocol through the real `openai` client: a chat's answer and the usage charged for it, the
request's camelCase fields reaching the wire, a tool offered and the calls asked for, a stream's
pieces joined in order then exactly one `chat-end` (tool calls whole), a cancelled stream that
closes the upstream stream and delivers nothing more, an ungranted provider `denied` (the caught
`ComponentError`'s payload), a refused key `unauthorized`. The guest and the examples of the
"Models" section of docs/guests/javascript.md type-check (tsc, strict) against the declarations
`agent-host bindings --lang ts` writes. Skipped, with the reason, where node or npm is missing.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import anyio
import pytest

from agent_host import Host, RunResult, RunStatus
from agent_host.cli.new import new_js_guest
from agent_host.components import js_toolchain
from agent_host.components.build import build_guest
from agent_host.components.ts_bindings import write_ts_bindings
from tests.servers import openai_wire
from tests.support.component import REPO
from tests.support.model_servers import disconnects, requests, running
from tests.support.provider_configs import KEY, config, network

pytestmark = [pytest.mark.component, pytest.mark.npm, pytest.mark.timeout(300)]
"""Longer than the suite's 60 s: the first test builds (componentize-js) and compiles, a fresh run installs the
toolchain first."""

JSTHINKER: Final = REPO / "tests" / "guests" / "jsthinker"
DOCS: Final = REPO / "docs" / "guests" / "javascript.md"

MOCK: Final = """
[provider.mock]
kind = "mock"
repeat_last = true
turns = [
  { content = "The answer is 42.", usage = { input_tokens = 10, output_tokens = 5 } },
  { tool_calls = [{name = "lookup", arguments = {city = "Paris"}}], usage = { input_tokens = 3, output_tokens = 2 } },
  { content = "Streamed in three pieces.", usage = { input_tokens = 4, output_tokens = 6 } },
]

[provider.other]
kind = "mock"

[agents.think]
providers = ["mock"]
"""


@pytest.fixture(scope="module")
def jsthinker(toolchain: js_toolchain.Toolchain) -> Path:
    return build_guest(JSTHINKER)


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    with running(openai_wire.build) as url:
        yield url


def make_host(tmp_path: Path, text: str) -> Host:
    return Host(config(f'[host]\naudit_log = "{tmp_path / "audit.jsonl"}"\n{text}'))


def run(host: Host, wasm: Path, *commands: str) -> tuple[RunResult, list[dict[str, Any]]]:
    """Run the guest on `commands` (one a line) as agent `think`: its result and its answers, one per command."""
    result = host.run(wasm, "\n".join(commands), agent="think")
    assert result.status is RunStatus.OK, result
    answers: list[dict[str, Any]] = json.loads(result.output)
    assert len(answers) == len(commands), answers
    return result, answers


def chats(tmp_path: Path) -> list[dict[str, Any]]:
    """The audit lines of the chats and streams asked."""
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line["operation"] in ("chat", "chat-stream")]


def one_end(kinds: list[str]) -> bool:
    """Whether a stream's envelope kinds are pieces, then exactly one `chat-end`, then nothing."""
    return len(kinds) >= 2 and kinds[-1] == "chat-end" and set(kinds[:-1]) == {"chat-delta"}


def test_against_a_mock_a_js_guest_chats_calls_tools_streams_and_is_denied(tmp_path: Path, jsthinker: Path) -> None:
    commands = ("models mock", "chat mock hello", "tools mock", "stream mock hi", "denied other")
    with make_host(tmp_path, MOCK) as host:
        result, (models, chat, tools, stream, denied) = run(host, jsthinker, *commands)
    assert models == {"kind": "mock", "name": "mock", "models": ["mock"]}
    assert chat == {
        "model": "mock",
        "content": "The answer is 42.",
        "toolCalls": [],
        "finishReason": "stop",
        "usage": [10, 5],
    }
    assert tools["finishReason"] == "tool-calls" and [call["name"] for call in tools["toolCalls"]] == ["lookup"]
    assert json.loads(tools["toolCalls"][0]["arguments"]) == {"city": "Paris"}
    assert stream["joined"] == "Streamed in three pieces." == stream["end"]["content"]
    assert stream["end"]["usage"] == [4, 6] and one_end(stream["kinds"]) and stream["open"] is False
    assert denied["code"] == "denied" and "provider 'other'" in denied["message"]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (10 + 3 + 4, 5 + 2 + 6)
    assert [(line["operation"], line["input_tokens"], line["output_tokens"]) for line in chats(tmp_path)] == [
        ("chat", 10, 5),
        ("chat", 3, 2),
        ("chat-stream", 4, 6),
    ]


def test_over_the_openai_wire_a_js_guest_chats_streams_and_cancels(
    tmp_path: Path, jsthinker: Path, openai_url: str
) -> None:
    commands = (
        "models llm",
        "chat llm hello there",
        "tools llm:tools",
        "stream llm hello stream",
        "stream llm:tools hi",
        "cancel llm:hang",
        "chat llm:error-401 x",
    )
    text = network("openai", f"{openai_url}/v1", model="gpt-4.1") + '[agents.think]\nproviders = ["llm"]\n'
    before = anyio.run(disconnects, openai_url)
    seen = len(anyio.run(requests, openai_url))
    with make_host(tmp_path, text) as host:
        result, (models, chat, tools, text_stream, tool_stream, cancelled, refused) = run(host, jsthinker, *commands)
    assert models["kind"] == "openai" and "gpt-4.1" in models["models"]
    assert (chat["model"], chat["content"], chat["finishReason"], chat["usage"]) == (
        "gpt-4.1",
        "echo: hello there",
        "stop",
        [11, 7],
    )
    assert [call["name"] for call in tools["toolCalls"]] == ["lookup", "add"]
    assert json.loads(tools["toolCalls"][0]["arguments"]) == {"city": "Paris", "days": 3}
    assert text_stream["joined"] == "echo: hello stream" == text_stream["end"]["content"]
    assert one_end(text_stream["kinds"]) and text_stream["end"]["usage"] == [11, 7]
    assert tool_stream["toolCalls"] == ["lookup", "add"] and one_end(tool_stream["kinds"])
    assert tool_stream["end"]["finishReason"] == "tool-calls" and len(tool_stream["end"]["toolCalls"]) == 2
    assert cancelled == {"first": "chat-delta", "cancelled": True, "open": False, "after": []}
    assert anyio.run(disconnects, openai_url, before + 1) >= before + 1
    assert refused["err"]["code"] == "unauthorized" and KEY not in json.dumps(refused)
    bodies = [request["body"] for request in anyio.run(requests, openai_url)[seen:]]
    assert (bodies[0]["max_completion_tokens"], bodies[0]["temperature"]) == (1000, 0.5)  # maxTokens, temperature
    assert bodies[1]["tools"][0]["function"]["parameters"]["properties"] == {"city": {"type": "string"}}
    lines = chats(tmp_path)
    assert [(line["input_tokens"], line["output_tokens"]) for line in lines[:4]] == [(11, 7)] * 4
    assert lines[4]["outcome"] == "cancelled"
    charged = (sum(line["input_tokens"] for line in lines), sum(line["output_tokens"] for line in lines))
    assert (result.usage.input_tokens, result.usage.output_tokens) == charged


def test_the_guest_and_the_docs_examples_type_check_against_the_declarations(
    toolchain: js_toolchain.Toolchain, tmp_path: Path
) -> None:
    """Each one a guest made by `new --lang js` (its strict jsconfig.json) with its app.js replaced."""
    write_ts_bindings(tmp_path / "typings-ts")
    section = DOCS.read_text(encoding="utf-8").split("\n## Models\n", 1)[1].split("\n## ", 1)[0]
    examples = re.findall(r"```js\n(.*?)```", section, re.DOTALL)
    assert len(examples) == 2, "the Models section shows a chat and a stream"
    sources = {"jsthinker": (JSTHINKER / "app.js").read_text(encoding="utf-8")}
    sources |= {f"docs-{number}": example for number, example in enumerate(examples, 1)}
    tsc = toolchain.prefix / "node_modules" / ".bin" / "tsc"
    for name, source in sources.items():
        folder = new_js_guest(tmp_path / "guests", name, bindings=tmp_path / "typings-ts")
        (folder / "app.js").write_text(source, encoding="utf-8")
        command = [str(tsc), "-p", str(folder / "jsconfig.json")]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
        assert done.returncode == 0, f"{name}:\n{done.stdout}"
