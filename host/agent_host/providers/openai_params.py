"""A chat as the Chat Completions wire protocol writes it (pure data: no SDK, no I/O).

`chat_params` turns a `ChatRequest` into the body of `POST /chat/completions`: each message by its
role (an assistant's tool calls as `function` calls, a `tool` message with its `tool_call_id`), each
tool as a `function` whose `parameters` are the tool's input schema, a response schema as
`response_format` `json_schema` (named `RESPONSE_FORMAT_NAME`), the bound as `MAX_TOKENS_KEY`.
`finish_reason` reads the protocol's finish reasons through `FINISH_REASONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agent_host.model import ChatMessage, ChatRequest, FinishReason, JsonObject, ToolSpec

FINISH_REASONS: Final[Mapping[str, FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "content_filter": "content-filter",
}
"""The protocol's `finish_reason` -> ours; any other (`function_call`, a server's own) is "other"."""

MAX_TOKENS_KEY: Final = "max_completion_tokens"
"""The body's key bounding the answer: OpenAI's current one (its reasoning models refuse the older
`max_tokens`), which vLLM, llama.cpp and OpenRouter read too."""

RESPONSE_FORMAT_NAME: Final = "response"
"""The name the protocol requires for a `json_schema` response format."""


def finish_reason(reason: str | None) -> FinishReason:
    """Our finish reason for the protocol's `reason` (None while an answer is not finished: "other")."""
    return FINISH_REASONS.get(reason or "", "other")


def message(item: ChatMessage) -> JsonObject:
    """One message of the body."""
    if item.role == "tool":
        return {"role": "tool", "tool_call_id": item.tool_call_id, "content": item.content or ""}
    if item.role == "assistant":
        written: JsonObject = {"role": "assistant", "content": item.content}
        if item.tool_calls:
            written["tool_calls"] = [
                {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
                for call in item.tool_calls
            ]
        return written
    return {"role": item.role, "content": item.content or ""}


def tool(spec: ToolSpec) -> JsonObject:
    """One tool of the body: a function taking the tool's input schema."""
    function: JsonObject = {"name": spec.name, "parameters": spec.input_schema}
    if spec.description:
        function["description"] = spec.description
    return {"type": "function", "function": function}


def chat_params(
    request: ChatRequest, *, model: str, max_tokens: int | None, schema: JsonObject | None
) -> dict[str, Any]:
    """The body of a chat with `model` (without `stream`), `schema` being the parsed response schema."""
    params: dict[str, Any] = {"model": model, "messages": [message(item) for item in request.messages]}
    if request.tools:
        params["tools"] = [tool(spec) for spec in request.tools]
    if max_tokens is not None:
        params[MAX_TOKENS_KEY] = max_tokens
    if request.temperature is not None:
        params["temperature"] = request.temperature
    if schema is not None:
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": RESPONSE_FORMAT_NAME, "schema": schema},
        }
    return params
