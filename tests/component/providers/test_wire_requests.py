"""What each provider sends, as the local servers received it through the real SDKs: the Chat Completions
body (messages, tools, `max_completion_tokens`, a response schema, `stream_options.include_usage`), the
Messages API body (`system`, tool results, `max_tokens` always, `output_config`), the table's headers and
key, and a placeholder, never the SDK's own environment variable, when the table has no key; a request
of 10,000 messages sent whole and in order (mapped off the loop, past the SDK's per-item walk); and
each server run as a process of its own.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from agent_host.model import ChatMessage, ChatRequest, ToolCall, ToolSpec
from agent_host.providers import ProviderSet
from agent_host.providers.base import PLACEHOLDER_KEY
from tests.servers import anthropic_wire, openai_wire
from tests.support.component import Server
from tests.support.model_servers import requests, running
from tests.support.provider_configs import KEY, network, providers

pytestmark = [pytest.mark.component, pytest.mark.anyio]

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}
REQUEST = ChatRequest(
    messages=(
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "add 2 and 3"),
        ChatMessage("assistant", None, (ToolCall("call_1", "add", '{"a": 2, "b": 3}'),)),
        ChatMessage("tool", "5", tool_call_id="call_1"),
    ),
    tools=(ToolSpec("add", "Adds.", {"type": "object"}),),
    temperature=0.5,
    response_schema=json.dumps(SCHEMA),
)
HEADERS = 'headers = { "X-Tenant" = "team-7" }\n'


@pytest.fixture(scope="module")
def openai_url() -> Iterator[str]:
    with running(openai_wire.build) as url:
        yield url


@pytest.fixture(scope="module")
def anthropic_url() -> Iterator[str]:
    with running(anthropic_wire.build) as url:
        yield url


async def last_request(url: str, table: str, *, stream: bool, max_tokens: int | None) -> dict[str, Any]:
    made = ProviderSet(providers(table))
    try:
        provider = made.get("llm")
        if stream:
            async for _ in provider.stream(REQUEST, model="gpt-4.1", max_tokens=max_tokens):
                pass
        else:
            await provider.chat(REQUEST, model="gpt-4.1", max_tokens=max_tokens)
    finally:
        await made.aclose()
    return (await requests(url))[-1]


@pytest.mark.parametrize("stream", [False, True])
async def test_the_chat_completions_body_the_server_received(openai_url: str, stream: bool) -> None:
    table = network("openai", f"{openai_url}/v1", model="gpt-4.1", extra=HEADERS)
    received = await last_request(openai_url, table, stream=stream, max_tokens=64)
    body, headers = received["body"], received["headers"]
    assert received["path"] == "/v1/chat/completions"
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "add 2 and 3"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "5"},
    ]
    assert body["tools"] == [
        {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}, "description": "Adds."}}
    ]
    assert (body["max_completion_tokens"], body["temperature"], "max_tokens" in body) == (64, 0.5, False)
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}}
    assert (body.get("stream"), body.get("stream_options")) == (
        (True, {"include_usage": True}) if stream else (None, None)
    )
    assert (headers["authorization"], headers["x-tenant"]) == (f"Bearer {KEY}", "team-7")


@pytest.mark.parametrize("stream", [False, True])
async def test_the_messages_api_body_the_server_received(anthropic_url: str, stream: bool) -> None:
    table = network("anthropic", anthropic_url, model="gpt-4.1", extra=HEADERS + "max_tokens = 300\n")
    received = await last_request(anthropic_url, table, stream=stream, max_tokens=None)
    body, headers = received["body"], received["headers"]
    assert received["path"] == "/v1/messages"
    assert body["system"] == "Be brief."
    assert body["messages"] == [
        {"role": "user", "content": "add 2 and 3"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "5"}]},
    ]
    assert body["tools"] == [{"name": "add", "input_schema": {"type": "object"}, "description": "Adds."}]
    assert (body["max_tokens"], "temperature" in body) == (300, False)
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert body.get("stream") == (True if stream else None)
    assert KEY in headers.get("authorization", "") + headers.get("x-api-key", "")
    assert headers["x-tenant"] == "team-7"
    bounded = await last_request(anthropic_url, table, stream=stream, max_tokens=12)
    assert bounded["body"]["max_tokens"] == 12


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_request_of_ten_thousand_messages_arrives_whole_and_in_order(
    openai_url: str, anthropic_url: str, kind: str
) -> None:
    url = openai_url if kind == "openai" else anthropic_url
    table = network(kind, f"{url}/v1" if kind == "openai" else url, model="gpt-4.1")
    many = ChatRequest(
        messages=tuple(ChatMessage("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(10_000)),
        tools=(ToolSpec("add", "Adds.", {"type": "object"}),),
    )
    made = ProviderSet(providers(table))
    try:
        await made.get("llm").chat(many, model="gpt-4.1", max_tokens=8)
    finally:
        await made.aclose()
    body = (await requests(url))[-1]["body"]
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in body["messages"]]
    assert texts == [f"m{i}" for i in range(10_000)]
    assert [tool.get("name") or tool["function"]["name"] for tool in body["tools"]] == ["add"]


async def test_without_api_key_a_placeholder_is_sent_never_the_sdks_variables(
    openai_url: str, anthropic_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment")
    for kind, url, base in (("openai", openai_url, f"{openai_url}/v1"), ("anthropic", anthropic_url, anthropic_url)):
        table = network(kind, base, model="gpt-4.1").replace('api_key = "${PROVIDER_KEY}"\n', "")
        headers = (await last_request(url, table, stream=False, max_tokens=8))["headers"]
        sent = headers.get("authorization", "") + headers.get("x-api-key", "")
        assert PLACEHOLDER_KEY in sent and "environment" not in sent


@pytest.mark.parametrize("module", ["tests.servers.openai_wire", "tests.servers.anthropic_wire"])
async def test_each_server_runs_as_a_process_of_its_own_printing_its_url(module: str) -> None:
    """How a test that needs the server in another process (a guest's, a benchmark's) starts it."""
    server = Server([sys.executable, "-m", module])
    try:
        kind = "openai" if module.endswith("openai_wire") else "anthropic"
        base_url = f"{server.url}/v1" if kind == "openai" else server.url
        made = ProviderSet(providers(network(kind, base_url, model="gpt-4.1")))
        try:
            answer = await made.get("llm").chat(REQUEST, model="gpt-4.1", max_tokens=8)
        finally:
            await made.aclose()
        assert answer.content == "echo: add 2 and 3" and answer.usage.output_tokens == 7
    finally:
        server.stop()
