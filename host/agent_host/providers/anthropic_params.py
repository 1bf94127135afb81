"""A chat as the Anthropic Messages API writes it (pure data: no SDK, no I/O).

`messages_params` turns a `ChatRequest` into the body of `POST /v1/messages`: `system` messages join
the `system` parameter (in order, a blank line between); an assistant's text and tool calls become
`text` and `tool_use` blocks (the arguments parsed: the API takes an object); `tool` messages become
`tool_result` blocks, consecutive ones in one user message; tools keep their input schema; a response
schema becomes `output_config.format` (`json_schema`); `max_tokens` is always sent (the API requires
it: the table's `max_tokens` when the caller gives none). The API takes no temperature: a request's
is not sent. `stop_reason` reads the API's stop reasons through `STOP_REASONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agent_host.model import ChatMessage, ChatRequest, FinishReason, JsonObject, ToolSpec
from agent_host.providers.checks import arguments

STOP_REASONS: Final[Mapping[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}
"""The API's `stop_reason` -> ours; any other (`pause_turn`, a new one) is "other"."""

SYSTEM_SEPARATOR: Final = "\n\n"
"""Between the texts of several `system` messages in the `system` parameter."""


def stop_reason(reason: str | None) -> FinishReason:
    """Our finish reason for the API's `reason` ("other" for None or one it does not list)."""
    return STOP_REASONS.get(reason or "", "other")


def _assistant(item: ChatMessage, where: str) -> JsonObject:
    blocks: list[JsonObject] = [{"type": "text", "text": item.content}] if item.content else []
    blocks += [
        {"type": "tool_use", "id": call.id, "name": call.name, "input": arguments(call, where)}
        for call in item.tool_calls
    ]
    return {"role": "assistant", "content": blocks}


def tool(spec: ToolSpec) -> JsonObject:
    """One tool of the body."""
    written: JsonObject = {"name": spec.name, "input_schema": spec.input_schema}
    if spec.description:
        written["description"] = spec.description
    return written


def messages_params(
    request: ChatRequest, *, model: str, max_tokens: int, schema: JsonObject | None, where: str
) -> dict[str, Any]:
    """The body of a chat with `model` (without `stream`), `schema` being the parsed response schema.
    Raises `invalid-arguments` for tool-call arguments (handed back by the guest) that are not an object."""
    system: list[str] = []
    messages: list[JsonObject] = []
    results: list[JsonObject] | None = None  # the blocks of the user message holding tool results, when last
    for item in request.messages:
        if item.role == "tool":
            block = {"type": "tool_result", "tool_use_id": item.tool_call_id, "content": item.content or ""}
            if results is None:
                results = []
                messages.append({"role": "user", "content": results})
            results.append(block)
            continue
        results = None
        if item.role == "system":
            system += [item.content] if item.content else []
        elif item.role == "assistant":
            messages.append(_assistant(item, where))
        else:
            messages.append({"role": "user", "content": item.content or ""})
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": messages}
    if system:
        params["system"] = SYSTEM_SEPARATOR.join(system)
    if request.tools:
        params["tools"] = [tool(spec) for spec in request.tools]
    if schema is not None:
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    return params
