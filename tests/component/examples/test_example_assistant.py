"""The example LLM agent (`guests/assistant`) end to end: `run_agent` offers the demo tooling's tools
to a model, runs the calls it asks for through the tooling, feeds the answers back, and returns the
model's answer; with a scripted mock through the pytest fixture, run as docs/guests/llm-agent.md
writes it (its own agent-host.toml), and through the real `openai` client against a local server
speaking the Chat Completions wire protocol.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_host import Host, RunStatus
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from tests.servers import openai_wire
from tests.support import cli_process
from tests.support.model_servers import requests, running
from tests.support.serving import HttpServe, mcp_call

pytestmark = pytest.mark.component

ASSISTANT = Path(__file__).resolve().parents[3] / "guests" / "assistant"


def test_a_scripted_model_calls_a_tool_and_answers_with_its_result(agent_host: Any) -> None:
    turns = [
        {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"content": "2 + 3 = 5", "usage": {"input_tokens": 30, "output_tokens": 6}},
    ]
    demo = {"command": "${AGENT_HOST_PYTHON}", "args": ["-m", "agent_host.demo_server"]}
    result = agent_host.run(
        ASSISTANT, input="what is 2 + 3?", toolings={"demo": demo}, providers={"llm": {"kind": "mock", "turns": turns}}
    )
    assert result.exit_code == 0, result.stderr
    assert result.output == "2 + 3 = 5"
    operations = [line["operation"] for line in result.audit]
    assert operations.count("chat") == 2 and "call-tool-blocking" in operations


def test_the_command_of_the_page_runs_the_example_with_its_own_config() -> None:
    """`agent-host --config guests/assistant/agent-host.toml run --agent assistant ...`, as written."""
    done = cli_process.run(
        "--config",
        str(ASSISTANT / "agent-host.toml"),
        "run",
        "--agent",
        "assistant",
        "--input",
        "what is 2 + 3?",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert (outcome["status"], outcome["output"]) == ("ok", "2 + 3 = 5")
    assert outcome["usage"]["output_tokens"] == 10  # the scripted call's estimate (4) and the answer's 6


def test_through_the_openai_wire_the_tool_answer_reaches_the_model(tmp_path: Path) -> None:
    with running(openai_wire.build) as url:
        toml = (
            f'[provider.llm]\nkind = "openai"\nbase_url = "{url}/v1"\nmodel = "agent"\nmax_retries = 0\n'
            '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
            '[agents.assistant]\ntoolings = ["demo"]\nproviders = ["llm"]\nllm_requests = 4\n'
        )
        with Host(parse_config(toml, tmp_path / "agent-host.toml")) as host:
            result = host.run(build_guest(ASSISTANT), "add 2 and 3", agent="assistant")
        asked = anyio.run(requests, url)
    assert result.status is RunStatus.OK, result
    assert result.output.startswith("done: ") and "5" in result.output
    chats = [r for r in asked if r["path"].endswith("/chat/completions")]
    assert len(chats) == 2
    second = chats[1]["body"]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert {t["function"]["name"] for t in chats[0]["body"]["tools"]} >= {"add", "echo"}


def test_served_the_assistant_answers_each_call_with_a_budget_of_its_own(tmp_path: Path) -> None:
    """Over `serve --http`, each call of the agent is a run: `llm_requests = 1` allows the one chat
    of every call, call after call (a budget per run, not per server)."""
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[provider.llm]\nkind = "mock"\nrepeat_last = true\nturns = [{{ content = "hello from the model" }}]\n'
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        f'[agents.assistant]\ncomponent = "{ASSISTANT}"\ntoolings = ["demo"]\nproviders = ["llm"]\nllm_requests = 1\n'
    )
    served = HttpServe(config, "--agent", "assistant")
    try:
        answers = [mcp_call(served, "assistant", '{"input": "hi"}') for _ in range(3)]
    finally:
        served.stop()
    for answer in answers:
        assert (answer["isError"], answer["content"][0]["text"]) == (False, "hello from the model"), answer
