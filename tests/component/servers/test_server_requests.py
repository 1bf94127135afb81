"""A server's requests are answered by policy: questions, sampling, roots, log messages.

Elicitation is `decline` by default or `ask` through the host's approver, validated against the
requested schema, per tooling and overridden per agent; sampling is declined with a clear error
unless a provider (charged to the calling run's model budget, tools offered and called) or a
`module:function` hook answers; roots are the agent's `dirs`, never the working directory;
server log messages reach the host's log and the audit log; a call the server fails after a refusal
is `denied` naming the request kind. The server is tests/servers/asking.py,
which asks the 2025-11-25 way (requests) or the 2026-07-28 way (`input_required`), over stdio on
both eras and over streamable HTTP.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.policy.approval import CallbackApprover, ElicitationRequest
from tests.support.component import REPO, TRANSPORTS, Steps, err, ok, probe, served_keys

pytestmark = pytest.mark.component

STDIO = f'command = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.asking"]\ncwd = "{REPO}"\n'


@pytest.fixture(scope="module", params=TRANSPORTS)
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    """The transport keys of tooling `t` (tests/servers/asking.py) in one era: one server for the
    module (it keeps no state between calls; each test has its own host and connection)."""
    with served_keys("tests.servers.asking", request.param) as keys:
        yield keys


def call(host: Host, agent: str, tool: str, arguments: dict[str, Any] | None = None) -> str:
    """Call `tool` of tooling `t` as `agent` would (its policy from the config); the result's text."""
    settings = host.config.agents.get(agent)
    session = host.session(agent, host.policy(agent, settings, allow=[] if settings else ["t"]))
    try:
        outcome = session.call_tool_blocking(session.get("t"), tool, json.dumps(arguments or {}))
    finally:
        session.close()
    text: str = json.loads(outcome.value)["content"][0]["text"]
    return text


def audit(tmp_path: Path, operation: str) -> list[tuple[str, str]]:
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    return [(line["agent"], line["outcome"]) for line in lines if line["operation"] == operation]


def config(server: str, extra: str = "", agents: str = "") -> str:
    return '[host]\naudit_log = "audit.jsonl"\n[tooling.t]\n' + server + extra + agents


def test_questions_are_declined_by_default_and_the_failed_call_is_denied(server: str, tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []

    def answer(request: ElicitationRequest) -> dict[str, Any]:
        asked.append(request)
        return {"name": "x"}

    approver = CallbackApprover(bool, answer)
    with Host(parse_config(config(server), tmp_path / "agent-host.toml"), approver=approver) as host:
        with pytest.raises(ToolingError) as caught:
            call(host, "guest", "ask")
    assert caught.value.code is ErrorCode.DENIED
    assert caught.value.message.startswith(
        "tooling 't': tool 'ask' failed after the server's elicitation request was refused (its `elicitation`"
    )
    assert asked == []  # declined by policy: no one was asked
    assert audit(tmp_path, "server-elicitation") == [("guest", "decline")]


def test_ask_puts_the_question_to_the_approver_and_checks_the_answer(server: str, tmp_path: Path) -> None:
    asked: list[ElicitationRequest] = []
    answers: Iterator[dict[str, Any]] = iter([{"name": "Ada"}, {"name": 3}])

    def answer(request: ElicitationRequest) -> dict[str, Any] | None:
        asked.append(request)
        return next(answers)

    text = config(server, 'elicitation = "ask"\n')
    with Host(parse_config(text, tmp_path / "agent-host.toml"), approver=CallbackApprover(bool, answer)) as host:
        hello = call(host, "guest", "ask", {"message": "Who are you?"})
        with pytest.raises(ToolingError) as invalid:
            call(host, "guest", "ask")  # answered {"name": 3}: does not match, so declined
    assert hello == "hello Ada"
    assert (asked[0].tooling, asked[0].agent, asked[0].message) == ("t", "guest", "Who are you?")
    assert asked[0].schema["required"] == ["name"]
    assert invalid.value.code is ErrorCode.DENIED
    assert audit(tmp_path, "server-elicitation") == [("guest", "accept"), ("guest", "decline")]


def test_an_agents_own_elicitation_setting_overrides_the_toolings(tmp_path: Path) -> None:
    agents = '[agents.asker]\ntoolings = ["t"]\nelicitation = { t = "ask" }\n[agents.other]\ntoolings = ["t"]\n'
    approver = CallbackApprover(bool, lambda request: {"name": request.agent})
    with Host(parse_config(config(STDIO, agents=agents), tmp_path / "agent-host.toml"), approver=approver) as host:
        asked = call(host, "asker", "ask")
        with pytest.raises(ToolingError) as declined:
            call(host, "other", "ask")
    assert asked == "hello asker"
    assert declined.value.code is ErrorCode.DENIED


def test_sampling_is_refused_unless_a_hook_answers(server: str, tmp_path: Path) -> None:
    with Host(parse_config(config(server), tmp_path / "agent-host.toml")) as host:
        with pytest.raises(ToolingError) as refused:
            call(host, "guest", "sample", {"prompt": "hi"})
    assert refused.value.code is ErrorCode.DENIED
    assert "failed after the server's sampling request was refused" in refused.value.message
    hooked = config(server, 'sampling = "tests.support.pytools:sample"\n')
    with Host(parse_config(hooked, tmp_path / "hooked.toml")) as host:
        assert call(host, "guest", "sample", {"prompt": "hi there"}) == "HI THERE"


MOCK_LLM = (
    '[provider.llm]\nkind = "mock"\nturns = [\n'
    '  { content = "a short poem", usage = { input_tokens = 7, output_tokens = 3 } },\n'
    '  { tool_calls = [{ name = "lookup", arguments = { q = "haiku" } }], '
    "usage = { input_tokens = 9, output_tokens = 4 } },\n"
    "]\n"
)


def test_sampling_answered_by_a_provider_is_charged_to_the_calling_runs_model_budget(
    server: str, tmp_path: Path
) -> None:
    """`sampling = { provider = "llm" }`: the mock answers (text, then a tool call offered by the
    server), each chat charged to the run's budget and audited with its tokens; once the run's
    `llm_requests` are spent the next request is refused and the call is `denied` naming sampling."""
    agents = '[agents.poet]\ntoolings = ["t"]\nllm_requests = 2\n'
    text = MOCK_LLM + config(server, 'sampling = { provider = "llm" }\n', agents)
    with Host(parse_config(text, tmp_path / "agent-host.toml")) as host:
        session = host.session("poet", host.policy("poet", host.config.agents["poet"]))
        try:
            handle = session.get("t")
            poem = session.call_tool_blocking(handle, "sample", json.dumps({"prompt": "a poem"}))
            used = session.providers.budget.used
            looked = session.call_tool_blocking(handle, "sample", json.dumps({"prompt": "look", "tools": True}))
            with pytest.raises(ToolingError) as spent:
                session.call_tool_blocking(handle, "sample", json.dumps({"prompt": "more"}))
            budget = session.providers.budget
        finally:
            session.close()
    assert json.loads(poem.value)["content"][0]["text"] == "a short poem"
    assert (used.input_tokens, used.output_tokens) == (7, 3)
    assert json.loads(looked.value)["content"][0]["text"] == 'tool_use lookup {"q": "haiku"}'
    assert (budget.requests, budget.used.input_tokens, budget.used.output_tokens) == (2, 16, 7)
    assert spent.value.code is ErrorCode.DENIED
    assert "after the server's sampling request was refused" in spent.value.message
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    sampled = [line for line in lines if line["operation"] == "server-sampling"]
    assert [(line["agent"], line["outcome"]) for line in sampled] == [
        ("poet", "ok"),
        ("poet", "ok"),
        ("poet", "limit-exceeded"),
    ]
    assert (sampled[0]["provider"], sampled[0]["model"], sampled[0]["input_tokens"]) == ("llm", "mock", 7)


def test_an_asynchronous_call_and_a_blocking_one_share_the_runs_model_budget_for_sampling(
    tmp_path: Path, probe_wasm: Path
) -> None:
    steps: Steps = [
        {"op": "get", "tooling": "t", "as": "t"},
        {"op": "call", "h": "t", "tool": "sample", "args": json.dumps({"prompt": "one"})},
        {"op": "recv", "timeout_ms": 30_000},
        {"op": "call_blocking", "h": "t", "tool": "sample", "args": json.dumps({"prompt": "two"})},
    ]
    agents = '[agents.probe]\ntoolings = ["t"]\nllm_requests = 1\n'
    text = MOCK_LLM + config(STDIO, 'sampling = { provider = "llm" }\n', agents)
    with Host(parse_config(text, tmp_path / "agent-host.toml")) as host:
        policy = host.policy("probe", host.config.agents["probe"])
        outcome = host.run(probe_wasm, json.dumps({"steps": steps}), agent="probe", policy=policy)
    results = json.loads(outcome.text)
    assert (outcome.usage.input_tokens, outcome.usage.output_tokens) == (7, 3)  # the run's usage has it
    final = ok(results[2])
    assert final["value"]["value"]["content"][0]["text"] == "a short poem"
    assert err(results[3])["code"] == "denied"
    assert audit(tmp_path, "server-sampling") == [("probe", "ok"), ("probe", "limit-exceeded")]


def test_the_roots_offered_are_the_dirs_of_the_agents_granted_the_tooling(server: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    agents = f'[agents.reader]\ntoolings = ["t"]\ndirs = [{{ host = "{data}", guest = "/data" }}]\n'
    with Host(parse_config(config(server, agents=agents), tmp_path / "agent-host.toml")) as host:
        roots = json.loads(call(host, "reader", "roots"))
    assert roots == [data.resolve().as_uri()]  # not the working directory


@pytest.mark.parametrize("related", [True, False], ids=["in-the-call", "on-the-connection"])
def test_every_server_log_message_is_audited_under_the_agent_whose_call_it_came_in(
    server: str, related: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Server log notifications reach the audit log as well as the host log (2025 era over stdio
    too); the audit line names the agent whose call was running, `-` outside any call."""
    text = f"disk almost full ({related})"
    with caplog.at_level(logging.WARNING, logger="agent-host.server.t"):
        with Host(parse_config(config(server), tmp_path / "agent-host.toml")) as host:
            assert call(host, "guest", "shout", {"text": text, "related": related}) == "logged"
            for _ in range(100):  # the notification may trail the result a little
                if any(text in record.getMessage() for record in caplog.records):
                    break
                host.bridge.call(_pause, timeout=5, on_timeout=lambda: ToolingError(ErrorCode.TIMEOUT, "pause"))
    assert any(record.getMessage() == f"asking: {text}" for record in caplog.records)
    assert audit(tmp_path, "server-log") == [("guest", "warning")]


async def _pause() -> None:
    import anyio

    await anyio.sleep(0.02)


def test_with_guest_the_question_reaches_the_guests_inbox_and_its_answer_the_server(
    server: str, tmp_path: Path, probe_wasm: Path
) -> None:
    """`elicitation = "guest"`: an `elicitation` event under the call's id, answered with `respond`;
    an answer that does not match the schema is refused and the question stays open."""
    steps: Steps = [
        {"op": "get", "tooling": "t", "as": "t"},
        {"op": "call", "h": "t", "tool": "ask", "args": json.dumps({"message": "Your name?"})},
        {"op": "recv", "timeout_ms": 30_000},
        {"op": "respond", "h": "t", "id": {"ref": 1}, "action": "accept", "content": {"name": 3}},
        {"op": "respond", "h": "t", "id": {"ref": 1}, "action": "accept", "content": {"name": "Ada"}},
        {"op": "recv", "timeout_ms": 30_000},
        {"op": "respond", "h": "t", "id": {"ref": 1}, "action": "decline"},
    ]
    with Host(parse_config(config(server, 'elicitation = "guest"\n'), tmp_path / "agent-host.toml")) as host:
        results = probe(host, probe_wasm, steps)
    call_id = ok(results[1])
    asked = ok(results[2])
    assert (asked["id"], asked["kind"]) == (call_id, "Elicitation")
    assert asked["value"]["message"] == "Your name?" and asked["value"]["requested_schema"]["required"] == ["name"]
    invalid = err(results[3])
    assert invalid["code"] == "invalid-arguments"
    assert "at $.name: 3 is not of type 'string' (rule: type)" in invalid["message"]
    assert ok(results[4]) is True
    final = ok(results[5])
    assert (final["id"], final["kind"]) == (call_id, "ToolResult")
    assert final["value"]["value"]["content"][0]["text"] == "hello Ada"
    assert err(results[6])["code"] == "not-found"  # answered: no open question any more
    assert audit(tmp_path, "respond") == [("probe", "invalid-arguments"), ("probe", "ok"), ("probe", "not-found")]


def test_with_guest_a_declined_question_fails_the_call_as_denied_and_a_blocking_call_is_not_asked(
    tmp_path: Path, probe_wasm: Path
) -> None:
    steps: Steps = [
        {"op": "get", "tooling": "t", "as": "t"},
        {"op": "call", "h": "t", "tool": "ask"},
        {"op": "recv", "timeout_ms": 30_000},
        {"op": "respond", "h": "t", "id": {"ref": 1}, "action": "decline"},
        {"op": "recv", "timeout_ms": 30_000},
        {"op": "call_blocking", "h": "t", "tool": "ask"},  # blocked in the host: it cannot be asked
    ]
    with Host(parse_config(config(STDIO, 'elicitation = "guest"\n'), tmp_path / "agent-host.toml")) as host:
        results = probe(host, probe_wasm, steps)
    final = ok(results[4])
    assert final["kind"] == "Error" and final["value"]["code"] == "denied"
    assert "elicitation request was refused" in final["value"]["message"]
    assert err(results[5])["code"] == "denied"


@pytest.mark.parametrize("mode", ["ask", "guest"])
def test_a_url_question_goes_to_the_approver_with_ask_and_never_to_a_guest(
    mode: str, server: str, tmp_path: Path, probe_wasm: Path
) -> None:
    asked: list[ElicitationRequest] = []

    def answer(request: ElicitationRequest) -> dict[str, Any]:
        asked.append(request)
        return {}  # consent: the page was opened

    steps: Steps = [
        {"op": "get", "tooling": "t", "as": "t"},
        {"op": "call", "h": "t", "tool": "open_url", "args": json.dumps({"url": "https://example.test/login"})},
        {"op": "recv", "timeout_ms": 30_000},
    ]
    text = config(server, f'elicitation = "{mode}"\n')
    with Host(parse_config(text, tmp_path / "agent-host.toml"), approver=CallbackApprover(bool, answer)) as host:
        final = ok(probe(host, probe_wasm, steps)[2])
    if mode == "ask":
        assert final["kind"] == "ToolResult" and final["value"]["value"]["content"][0]["text"] == "opened"
        assert [(request.url, request.message) for request in asked] == [
            ("https://example.test/login", "Log in, please")
        ]
    else:  # a URL is for a person: the guest is not asked, so it is declined
        assert final["kind"] == "Error" and final["value"]["code"] == "denied"
        assert "URL elicitation request was refused" in final["value"]["message"]
        assert asked == []
