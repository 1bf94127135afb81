"""A server's sampling request as a chat and a chat's answer as its result: system prompt, text,
tool use and tool results, offered tools and `tool_choice`, stop reasons, what cannot be carried;
and the policy's refusals of a provider-answered request (no run to charge, an unfit request, one
past `max_argument_bytes`)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import mcp_types as types
import pytest

from agent_host.app.server_answers import PolicyAnswers
from agent_host.config import parse_config
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatMessage, ChatResult, ToolCall, Usage
from agent_host.policy.approval import DenyAll
from agent_host.policy.provider_grants import LlmLimits
from agent_host.policy.validation import ArgumentValidator
from agent_host.session.audit_log import AuditLog
from agent_host.session.llm_budget import LlmBudget
from agent_host.toolings.mcp.sampling import as_chat, as_result
from agent_host.toolings.server_requests import Sampling

LOOKUP = types.Tool(name="lookup", description="Looks up.", input_schema={"type": "object"})


def params(**fields: object) -> types.CreateMessageRequestParams:
    return types.CreateMessageRequestParams.model_validate({"maxTokens": 40, **fields})


def test_a_conversation_with_tool_use_becomes_the_same_chat() -> None:
    request = params(
        systemPrompt="Be brief.",
        temperature=0.5,
        tools=[LOOKUP.model_dump(by_alias=True)],
        messages=[
            {"role": "user", "content": {"type": "text", "text": "find haiku"}},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "u1", "name": "lookup", "input": {"q": "h"}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "toolUseId": "u1", "content": [{"type": "text", "text": "found"}]},
                    {"type": "text", "text": "and now?"},
                ],
            },
        ],
    )
    chat = as_chat(request)
    assert chat.messages == (
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "find haiku"),
        ChatMessage("assistant", None, (ToolCall("u1", "lookup", '{"q": "h"}'),)),
        ChatMessage("tool", "found", tool_call_id="u1"),
        ChatMessage("user", "and now?"),
    )
    assert [tool.name for tool in chat.tools] == ["lookup"]
    assert (chat.model, chat.max_tokens, chat.temperature) == (None, 40, 0.5)


def test_tool_choice_none_offers_no_tools_and_a_structured_tool_result_is_passed_as_json() -> None:
    request = params(
        tools=[LOOKUP.model_dump(by_alias=True)],
        toolChoice={"mode": "none"},
        messages=[
            {
                "role": "user",
                "content": {"type": "tool_result", "toolUseId": "u", "content": [], "structuredContent": {"n": 1}},
            }
        ],
    )
    chat = as_chat(request)
    assert chat.tools == ()
    assert chat.messages == (ChatMessage("tool", '{"n": 1}', tool_call_id="u"),)


def test_an_image_cannot_be_carried_and_says_so() -> None:
    request = params(messages=[{"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}])
    with pytest.raises(ToolingError) as caught:
        as_chat(request)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert "with image content cannot be answered by a provider" in caught.value.message


def test_answers_map_back_with_their_stop_reasons() -> None:
    text = as_result(ChatResult("m", "hi", (), "length", Usage()))
    assert isinstance(text, types.CreateMessageResult)
    assert (text.content, text.model, text.stop_reason) == (types.TextContent(type="text", text="hi"), "m", "maxTokens")
    calls = as_result(ChatResult("m", "let me look", (ToolCall("c1", "lookup", '{"q": "x"}'),), "tool-calls", Usage()))
    assert isinstance(calls, types.CreateMessageResultWithTools)
    assert calls.stop_reason == "toolUse"
    assert calls.content == [
        types.TextContent(type="text", text="let me look"),
        types.ToolUseContent(type="tool_use", id="c1", name="lookup", input={"q": "x"}),
    ]
    with pytest.raises(ToolingError) as broken:
        as_result(ChatResult("m", None, (ToolCall("c1", "lookup", "[1]"),), "tool-calls", Usage()))
    assert broken.value.code is ErrorCode.PROTOCOL


CONFIG = """
[provider.llm]
kind = "mock"
turns = [{ content = "never" }]
[tooling.t]
command = "x"
sampling = { provider = "llm" }
"""


def answers(tmp_path: Path) -> PolicyAnswers:
    config = parse_config(CONFIG, tmp_path / "h.toml")
    audit = AuditLog(tmp_path / "audit.jsonl")
    return PolicyAnswers(config, DenyAll(), ArgumentValidator(), audit)


@pytest.mark.parametrize("case", ["outside-a-call", "unfit", "too-large"])
def test_a_provider_answers_only_a_request_it_can_charge_and_carry(case: str, tmp_path: Path) -> None:
    request = params(messages=[{"role": "user", "content": {"type": "text", "text": "hi"}}])
    if case == "outside-a-call":
        sampling = Sampling("t", None, {}, as_chat(request), None, None)
        code, words = ErrorCode.DENIED, "cannot tie to one agent's call"
    elif case == "unfit":
        sampling = Sampling("t", "a", {}, None, "a sampling request with image content cannot be answered", None)
        code, words = ErrorCode.INVALID_ARGUMENTS, "with image content"
    else:  # past max_argument_bytes (1 MiB by default): refused before the budget is asked
        big = params(messages=[{"role": "user", "content": {"type": "text", "text": "x" * (2 << 20)}}])
        sampling = Sampling("t", "a", {}, as_chat(big), None, LlmBudget(LlmLimits()))
        code, words = ErrorCode.LIMIT_EXCEEDED, "is more than max_argument_bytes (1048576)"
    with pytest.raises(ToolingError) as caught:
        asyncio.run(answers(tmp_path).sample(sampling))
    assert caught.value.code is code and words in caught.value.message
    line = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[-1])
    assert (line["operation"], line["outcome"], line["provider"]) == ("server-sampling", code.value, "llm")
