"""A chat as each wire writes it (pure data: `openai_params`, `anthropic_params`), the finish-reason
tables, and the model a request resolves to (`resolve_model`): the default, the request's, or refused.
"""

from __future__ import annotations

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatMessage, ChatRequest, ToolCall, ToolSpec
from agent_host.providers import anthropic_params, openai_params, resolve_model
from tests.support.provider_configs import FILE, providers

CALL = ToolCall("call_1", "add", '{"a": 2, "b": 3}')
TOOL = ToolSpec("add", "Adds two numbers.", {"type": "object", "properties": {"a": {"type": "number"}}})
CONVERSATION = ChatRequest(
    messages=(
        ChatMessage("system", "Be brief."),
        ChatMessage("user", "What is 2 + 3?"),
        ChatMessage("assistant", None, (CALL,)),
        ChatMessage("tool", "5", tool_call_id="call_1"),
        ChatMessage("system", "Answer in words."),
        ChatMessage("assistant", "It is five."),
        ChatMessage("user", "Thanks"),
    ),
    tools=(TOOL, ToolSpec("ping", None, {"type": "object"})),
    temperature=0.2,
)
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


def test_openai_messages_tools_bound_and_schema() -> None:
    params = openai_params.chat_params(CONVERSATION, model="gpt-4.1", max_tokens=50, schema=SCHEMA)
    assert params == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is 2 + 3?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "5"},
            {"role": "system", "content": "Answer in words."},
            {"role": "assistant", "content": "It is five."},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "add", "parameters": TOOL.input_schema, "description": "Adds two numbers."},
            },
            {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
        ],
        "max_completion_tokens": 50,
        "temperature": 0.2,
        "response_format": {"type": "json_schema", "json_schema": {"name": "response", "schema": SCHEMA}},
    }
    bare = openai_params.chat_params(
        ChatRequest(messages=(ChatMessage("user", "hi"),)), model="m", max_tokens=None, schema=None
    )
    assert bare == {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_anthropic_system_messages_tool_blocks_results_and_schema() -> None:
    params = anthropic_params.messages_params(CONVERSATION, model="claude", max_tokens=50, schema=SCHEMA, where="p")
    assert params == {
        "model": "claude",
        "max_tokens": 50,
        "system": "Be brief.\n\nAnswer in words.",
        "messages": [
            {"role": "user", "content": "What is 2 + 3?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "call_1", "name": "add", "input": {"a": 2, "b": 3}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "5"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "It is five."}]},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {"name": "add", "input_schema": TOOL.input_schema, "description": "Adds two numbers."},
            {"name": "ping", "input_schema": {"type": "object"}},
        ],
        "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
    }


def test_anthropic_consecutive_tool_results_share_one_user_message() -> None:
    calls = (ToolCall("a", "add", "{}"), ToolCall("b", "ping", "{}"))
    request = ChatRequest(
        messages=(
            ChatMessage("user", "go"),
            ChatMessage("assistant", "Two calls.", calls),
            ChatMessage("tool", "1", tool_call_id="a"),
            ChatMessage("tool", "2", tool_call_id="b"),
        )
    )
    messages = anthropic_params.messages_params(request, model="c", max_tokens=9, schema=None, where="p")["messages"]
    assert messages[1]["content"][0] == {"type": "text", "text": "Two calls."}
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "1"},
            {"type": "tool_result", "tool_use_id": "b", "content": "2"},
        ],
    }
    assert len(messages) == 3


@pytest.mark.parametrize("arguments", ["[1, 2]", "not json", '{"a": NaN}'])
def test_anthropic_tool_call_arguments_handed_back_must_be_a_json_object(arguments: str) -> None:
    request = ChatRequest(messages=(ChatMessage("assistant", None, (ToolCall("c1", "add", arguments),)),))
    with pytest.raises(ToolingError) as caught:
        anthropic_params.messages_params(request, model="c", max_tokens=9, schema=None, where="provider 'p'")
    assert caught.value.code is ErrorCode.INVALID_ARGUMENTS
    assert caught.value.message.startswith("the arguments of tool call 'c1' in a chat with provider 'p' ")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("stop", "stop"), ("length", "length"), ("tool_calls", "tool-calls"), ("content_filter", "content-filter")]
    + [("function_call", "other"), (None, "other"), ("eos", "other")],
)
def test_openai_finish_reasons(reason: str | None, expected: str) -> None:
    assert openai_params.finish_reason(reason) == expected


@pytest.mark.parametrize(
    ("reason", "expected"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"), ("tool_use", "tool-calls")]
    + [
        ("refusal", "content-filter"),
        ("model_context_window_exceeded", "length"),
        ("pause_turn", "other"),
        (None, "other"),
    ],
)
def test_anthropic_stop_reasons(reason: str | None, expected: str) -> None:
    assert anthropic_params.stop_reason(reason) == expected


def test_the_model_is_the_requests_or_the_default_within_the_globs() -> None:
    configs = providers(
        '[provider.llm]\nkind = "mock"\nmodel = "gpt-4.1"\nmodels = ["gpt-4.1*"]\n'
        '[provider.any]\nkind = "mock"\n[provider.none]\nkind = "openai"\n'
    )
    assert resolve_model(configs["llm"], None) == "gpt-4.1"
    assert resolve_model(configs["llm"], "gpt-4.1-mini") == "gpt-4.1-mini"
    assert resolve_model(configs["any"], "whatever") == "whatever"
    with pytest.raises(ToolingError) as denied:
        resolve_model(configs["llm"], "o3")
    assert denied.value == ToolingError(
        ErrorCode.DENIED,
        f"provider 'llm' may not be asked for model 'o3': it matches none of `models` ('gpt-4.1*') in "
        f"{FILE} [provider.llm]",
    )
    with pytest.raises(ToolingError) as missing:
        resolve_model(configs["none"], None)
    assert missing.value.code is ErrorCode.NOT_FOUND
    assert missing.value.message == (
        f"provider 'none' has no default model: name one in the request, or set `model` in {FILE} [provider.none]"
    )
