"""What every backend checks of a request before anything is sent: `invalid-arguments` otherwise.

A request needs a message; a `tool` message names the call it answers; `max_tokens`, when given, is
at least 1. The JSON texts a guest hands over (`response_schema`, a tool call's `arguments` that a
wire sends parsed) are read with the host's strict JSON parser and must be objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from agent_host._support import strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatRequest, JsonObject, ToolCall


def check_request(request: ChatRequest, where: str, max_tokens: int | None) -> None:
    """Raise `ToolingError(invalid-arguments)` naming the first problem of `request` for `where`."""
    if not request.messages:
        raise _invalid(f"a chat with {where} needs at least one message")
    for index, message in enumerate(request.messages):
        if message.role == "tool" and not message.tool_call_id:
            raise _invalid(f"message #{index + 1} of the chat with {where} is a `tool` message without `tool-call-id`")
    if max_tokens is not None and max_tokens < 1:
        raise _invalid(f"max-tokens must be at least 1 (got {max_tokens}) in a chat with {where}")


def response_schema(request: ChatRequest, where: str) -> JsonObject | None:
    """The request's `response_schema` parsed (None when it has none); `invalid-arguments` when it
    is not the text of a JSON object."""
    if request.response_schema is None:
        return None
    return _object(request.response_schema, f"the response-schema of a chat with {where}")


def arguments(call: ToolCall, where: str) -> JsonObject:
    """The arguments of `call` (from an earlier answer, handed back by the guest) parsed;
    `invalid-arguments` when they are not the text of a JSON object."""
    return _object(call.arguments, f"the arguments of tool call {call.id!r} in a chat with {where}")


def _object(text: str, what: str) -> JsonObject:
    try:
        value = strict_json.parse(text)
    except strict_json.JsonTextError as exc:
        raise _invalid(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise _invalid(f"{what} must be a JSON object, got {_JSON_NAMES.get(type(value), 'another value')}")
    return value


_JSON_NAMES: Final[Mapping[type, str]] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}
"""What a JSON value that is not an object is called in a message."""


def _invalid(message: str) -> ToolingError:
    return ToolingError(ErrorCode.INVALID_ARGUMENTS, message)
