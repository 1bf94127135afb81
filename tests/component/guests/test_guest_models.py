"""A guest asks a model through WIT `provider`: grants, budgets, chats, streams into its inbox, audit.

The guest (`tests/guests/thinker`, raw bindings) runs in wasmtime against a mock provider and against
a local server speaking OpenAI's Chat Completions wire protocol through the real `openai` client:
a chat's answer and usage, a stream's pieces in order then exactly one `chat-end` (tool calls
whole), a cancelled stream closing the upstream stream, a provider or model not granted `denied`
before anything is sent, each budget `limit-exceeded` naming its key, `max_tokens` clamped to the
output budget, one audit line per chat with its tokens and never the key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_host import Host, RunStatus
from agent_host.components.build import build_guest
from agent_host.config import parse_config
from tests.servers import openai_wire
from tests.support import in_process
from tests.support.model_servers import disconnects, requests, running

pytestmark = pytest.mark.component

THINKER = Path(__file__).resolve().parents[2] / "guests" / "thinker"
KEY = "sk-guest-test-NEVER-shown-0123456789"
USER = [{"role": "user", "content": "hello"}]

MOCK = """
[provider.mock]
kind = "mock"
repeat_last = true
turns = [
  { content = "The answer is 42.", usage = { input_tokens = 10, output_tokens = 5 } },
]

[provider.other]
kind = "mock"
"""


@pytest.fixture(scope="module")
def thinker() -> Path:
    return build_guest(THINKER)


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    with running(openai_wire.build) as url:
        yield url


def run(host: Host, wasm: Path, agent: str, provider: str, *ops: dict[str, Any]) -> list[dict[str, Any]]:
    result = host.run(wasm, json.dumps({"provider": provider, "ops": list(ops)}), agent=agent)
    assert result.status is RunStatus.OK, result
    answer: list[dict[str, Any]] = json.loads(result.output)
    return answer


def make_host(tmp_path: Path, text: str) -> Host:
    audit = tmp_path / "audit.jsonl"
    toml = f'[host]\naudit_log = "{audit}"\n' + text
    return Host(parse_config(toml, tmp_path / "agent-host.toml", {"KEY": KEY}))


def audit_lines(host: Host) -> list[dict[str, Any]]:
    path = Path(str(host.config.host.audit_log))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_chat_answers_with_content_and_usage_and_is_audited(tmp_path: Path, thinker: Path) -> None:
    with make_host(tmp_path, MOCK + '[agents.think]\nproviders = ["mock"]\n') as host:
        kind, chat = run(host, thinker, "think", "mock", {"op": "kind"}, {"op": "chat", "request": {"messages": USER}})
        lines = [line for line in audit_lines(host) if line["operation"] == "chat"]
    assert kind == {"ok": ["mock", "mock"]}
    assert chat["ok"]["content"] == "The answer is 42." and chat["ok"]["usage"] == [10, 5]
    assert chat["ok"]["finish_reason"] == "stop"
    assert len(lines) == 1 and (lines[0]["provider"], lines[0]["input_tokens"], lines[0]["output_tokens"]) == (
        "mock",
        10,
        5,
    )


def test_a_stream_delivers_its_pieces_in_order_then_one_end(tmp_path: Path, thinker: Path) -> None:
    with make_host(tmp_path, MOCK + '[agents.think]\nproviders = ["mock"]\n') as host:
        (stream,) = run(host, thinker, "think", "mock", {"op": "stream", "request": {"messages": USER}})
    pieces, end = stream["ok"]["pieces"], stream["ok"]["end"]
    assert "".join(piece["content"] or "" for piece in pieces) == "The answer is 42." == end["content"]
    assert end["usage"] == [10, 5] and stream["ok"]["open"] is False


def test_providers_and_models_not_granted_are_denied(tmp_path: Path, thinker: Path) -> None:
    text = MOCK + '[agents.think]\nproviders = ["mock:mock-small-*"]\n[agents.none]\n'
    with make_host(tmp_path, text) as host:
        (denied_provider,) = run(host, thinker, "none", "mock", {"op": "models"})
        (wrong_model,) = run(host, thinker, "think", "mock", {"op": "chat", "request": {"messages": USER}})
        (other,) = run(host, thinker, "think", "other", {"op": "models"})
    assert denied_provider["err"]["code"] == "denied" and "providers" in denied_provider["err"]["message"]
    assert wrong_model["err"]["code"] == "denied" and "mock:mock-small-*" in wrong_model["err"]["message"]
    assert other["err"]["code"] == "denied"


def test_each_budget_is_enforced_and_named(tmp_path: Path, thinker: Path) -> None:
    text = MOCK + '[agents.think]\nproviders = ["mock"]\nllm_requests = 2\nllm_output_tokens = 8\n'
    chat = {"op": "chat", "request": {"messages": USER}}
    with make_host(tmp_path, text) as host:
        first, second, third = run(host, thinker, "think", "mock", chat, chat, chat)
    assert first["ok"]["usage"] == [10, 5]
    # 3 output tokens were left: the mock answer was cut to them ("length")
    assert second["ok"]["finish_reason"] == "length" and second["ok"]["usage"][1] <= 3
    assert third["err"]["code"] == "limit-exceeded"
    assert "llm_requests" in third["err"]["message"] or "llm_output_tokens" in third["err"]["message"]


def test_through_the_openai_wire_a_guest_streams_tool_calls_whole(
    tmp_path: Path, thinker: Path, openai_url: str
) -> None:
    text = (
        f'[provider.llm]\nkind = "openai"\nbase_url = "{openai_url}/v1"\napi_key = "${{KEY}}"\nmodel = "gpt-4.1"\n'
        'max_retries = 0\ntimeout = 10\n[agents.think]\nproviders = ["llm"]\n'
    )
    tools = [{"name": "lookup", "input_schema": {"type": "object"}}, {"name": "add", "input_schema": {}}]
    ops = (
        {"op": "models"},
        {"op": "chat", "request": {"messages": USER}},
        {"op": "stream", "request": {"model": "tools", "messages": USER, "tools": tools}},
        {"op": "chat", "request": {"model": "error-401", "messages": USER}},
        {"op": "chat", "request": {"model": "leak", "messages": USER}},
        {"op": "stream", "request": {"model": "leak", "messages": USER}},
    )
    with make_host(tmp_path, text) as host:
        models, chat, stream, refused, leak, leak_stream = run(host, thinker, "think", "llm", *ops)
        lines = audit_lines(host)
    assert "gpt-4.1" in models["ok"]
    assert chat["ok"]["content"] == "echo: hello"
    calls = [piece["tool_call"] for piece in stream["ok"]["pieces"] if piece["tool_call"]]
    assert [call["name"] for call in calls] == ["lookup", "add"]
    assert json.loads(calls[0]["arguments"]) == {"city": "Paris", "days": 3}
    assert stream["ok"]["end"]["finish_reason"] == "tool-calls" and len(stream["ok"]["end"]["tool_calls"]) == 2
    assert refused["err"]["code"] == "unauthorized" and KEY not in json.dumps(refused)
    assert KEY not in json.dumps(lines)
    # A server that writes the key into its answer: hidden in the text, the pieces and the calls.
    assert leak["ok"]["content"] == "your key is [hidden] indeed" and leak["ok"]["model"] == "[hidden]"
    assert json.loads(leak["ok"]["tool_calls"][0]["arguments"]) == {"key": "[hidden]"}
    assert "[hidden]" in json.dumps(leak_stream) and KEY not in json.dumps([leak, leak_stream])


def test_a_cancelled_stream_closes_the_upstream_stream(tmp_path: Path, thinker: Path, openai_url: str) -> None:
    text = (
        f'[provider.llm]\nkind = "openai"\nbase_url = "{openai_url}/v1"\napi_key = "${{KEY}}"\nmodel = "gpt-4.1"\n'
        'max_retries = 0\ntimeout = 10\n[agents.think]\nproviders = ["llm"]\n'
    )
    before = anyio.run(disconnects, openai_url)
    with make_host(tmp_path, text) as host:
        (cancelled,) = run(
            host, thinker, "think", "llm", {"op": "cancel", "request": {"model": "hang", "messages": USER}}
        )
    assert cancelled["ok"] == {"cancelled": True, "open": False, "after": False}
    assert anyio.run(disconnects, openai_url, before + 1) >= before + 1
    assert any(request["path"].endswith("/chat/completions") for request in anyio.run(requests, openai_url))


def test_a_recorded_chat_and_stream_replay_with_the_model_server_gone(tmp_path: Path, thinker: Path) -> None:
    """The cassette holds the chat's answer and the stream's envelopes as delivered; the replay
    answers them with no server (the provider's URL closed), and the key is in none of it."""
    ops = [{"op": "chat", "request": {"messages": USER}}, {"op": "stream", "request": {"messages": USER}}]
    with running(openai_wire.build) as url:
        toml = (
            f'[provider.llm]\nkind = "openai"\nbase_url = "{url}/v1"\napi_key = "${{KEY}}"\nmodel = "gpt-4.1"\n'
            'max_retries = 0\ntimeout = 10\n[agents.thinker]\nproviders = ["llm"]\n'
        )
        (tmp_path / "agent-host.toml").write_text(toml)
        argv = [str(thinker), "--agent", "thinker", "--input", json.dumps({"provider": "llm", "ops": ops})]
        live = in_process.run("run", *argv, "--record", "tape.json", cwd=tmp_path, env={"KEY": KEY})
    assert live.returncode == 0, live.stderr
    tape = (tmp_path / "tape.json").read_text()
    assert KEY not in tape and '"provider.chat"' in tape and "chat-end" in tape
    replayed = in_process.run("run", *argv, "--replay", "tape.json", cwd=tmp_path, env={"KEY": KEY})
    assert replayed.returncode == 0, replayed.stderr
    assert json.loads(replayed.stdout) == json.loads(live.stdout)
    assert json.loads(live.stdout)[0]["ok"]["content"] == "echo: hello"


def test_the_pytest_fixture_takes_providers_and_its_result_carries_the_usage(agent_host: Any) -> None:
    """`agent_host.run(providers={...})`: the tables are the run's providers, each granted."""
    turns = [{"content": "Paris.", "usage": {"input_tokens": 7, "output_tokens": 2}}]
    data = json.dumps({"provider": "mock", "ops": [{"op": "chat", "request": {"messages": USER}}]})
    result = agent_host.run(THINKER, input=data, providers={"mock": {"kind": "mock", "turns": turns}}, dev=False)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)[0]["ok"]["content"] == "Paris."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (7, 2)
    assert [line["operation"] for line in result.audit if line["operation"] == "chat"] == ["chat"]


def openai_table(url: str, extra: str = "", timeout: float = 10) -> str:
    return (
        f'[provider.llm]\nkind = "openai"\nbase_url = "{url}/v1"\napi_key = "${{KEY}}"\nmodel = "gpt-4.1"\n'
        f'max_retries = 0\ntimeout = {timeout}\n[agents.think]\nproviders = ["llm"]\n{extra}'
    )


def test_a_stream_that_sends_only_keep_alives_ends_at_the_providers_timeout(
    tmp_path: Path, thinker: Path, openai_url: str
) -> None:
    """Found attacking it: a server sending only comments kept a stream open until the run's limit.
    The provider's `timeout` bounds the wait for each piece."""
    with make_host(tmp_path, openai_table(openai_url, timeout=1)) as host:
        (stream,) = run(host, thinker, "think", "llm", {"op": "stream", "request": {"model": "drip", "messages": USER}})
    assert stream["ok"]["error"]["code"] == "timeout"


def test_a_cancelled_stream_is_charged_for_what_it_asked(tmp_path: Path, thinker: Path, openai_url: str) -> None:
    """Found attacking it: cancelled or failed streams were charged nothing, so cancelling each
    stream early spent tokens past the budget. Now what was asked and what came is charged, an
    estimate where the provider reported nothing."""
    hang = {"model": "hang", "messages": [{"role": "user", "content": "x" * 400}]}  # ~100 tokens: admitted
    more = {"messages": [{"role": "user", "content": "y" * 40}]}  # ~10 more: past 105 once the 100 are charged
    ops = [{"op": "cancel", "request": hang}, {"op": "chat", "request": more}]
    with make_host(tmp_path, openai_table(openai_url, "llm_input_tokens = 105\n")) as host:
        result = host.run(thinker, json.dumps({"provider": "llm", "ops": ops}), agent="think")
    cancelled, refused = json.loads(result.output)
    assert cancelled["ok"]["cancelled"] is True
    assert result.usage.input_tokens >= 100  # the 400 characters asked, at least
    assert refused["err"]["code"] == "limit-exceeded" and "llm_input_tokens" in refused["err"]["message"]


def test_streams_at_once_cannot_pass_the_output_budget_together(tmp_path: Path, thinker: Path, openai_url: str) -> None:
    """Found attacking it: each concurrent stream was given the whole output budget left. Now what
    an admitted request may use is reserved until it ends."""
    op = {"op": "streams", "n": 3, "request": {"model": "hang", "messages": USER}}
    with make_host(tmp_path, openai_table(openai_url, "llm_output_tokens = 100\n")) as host:
        (started,) = run(host, thinker, "think", "llm", op)
    assert started["ok"]["started"] == 1
    assert started["ok"]["refused"]["code"] == "limit-exceeded"


def test_a_guest_has_at_most_max_streams_open(tmp_path: Path, thinker: Path, openai_url: str) -> None:
    from agent_host.session.providers import MAX_STREAMS

    op = {"op": "streams", "n": MAX_STREAMS + 1, "request": {"model": "hang", "messages": USER}}
    with make_host(tmp_path, openai_table(openai_url)) as host:
        (started,) = run(host, thinker, "think", "llm", op)
    assert started["ok"]["started"] == MAX_STREAMS
    assert started["ok"]["refused"]["code"] == "limit-exceeded" and "streams" in started["ok"]["refused"]["message"]


@pytest.mark.parametrize("temperature", [float("nan"), float("inf"), -1.0])
def test_a_temperature_that_is_not_a_finite_positive_number_is_invalid(
    tmp_path: Path, thinker: Path, temperature: float
) -> None:
    with make_host(tmp_path, MOCK + '[agents.think]\nproviders = ["mock"]\n') as host:
        request = {"messages": USER, "temperature": temperature}
        (chat,) = run(host, thinker, "think", "mock", {"op": "chat", "request": request})
    assert chat["err"]["code"] == "invalid-arguments" and "temperature" in chat["err"]["message"]
