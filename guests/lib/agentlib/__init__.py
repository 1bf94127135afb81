"""agentlib: small helpers for agent-host guests, bundled into every guest build.

It is pure Python and imports only the bindings componentize-py generates from the WIT
(`wit_world`, `componentize_py_types`), so it runs inside the component. Every helper is optional:
the WIT imports are the contract, this only saves typing.

    from agentlib import call, events, start, subscription
    with tooling.get("demo") as demo:
        value = call(demo, "add", a=2, b=3)           # the MCP result as a dict
        with subscription(demo, "demo://note") as note:
            slow = start(demo, "sleep", seconds=2)     # a `Call`; its envelopes carry `slow.id`
            for envelope in events(10, until=slow.id):
                ...                                    # `match envelope:` on the generated classes

Errors from the host arrive as `componentize_py_types.Err` whose `value` is a
`wit_world.imports.types.Error`; `failure(err)` turns one into "code: message".
"""

from __future__ import annotations

import base64
import json
from typing import Any

from componentize_py_types import Err
from wit_world.imports import types

from agentlib.inbox import Call as Call
from agentlib.inbox import Events as Events
from agentlib.inbox import Subscription as Subscription
from agentlib.inbox import events as events
from agentlib.inbox import is_final as is_final
from agentlib.inbox import resource_list_subscription as resource_list_subscription
from agentlib.inbox import start as start
from agentlib.inbox import subscription as subscription
from agentlib.inbox import tool_list_subscription as tool_list_subscription

__all__ = (
    "Call",
    "Err",
    "Events",
    "Subscription",
    "call",
    "content_bytes",
    "content_text",
    "events",
    "failure",
    "is_final",
    "json_of",
    "resource_list_subscription",
    "start",
    "subscription",
    "text_of",
    "tool_list_subscription",
)


def call(tooling: Any, tool: str, /, **arguments: Any) -> dict[str, Any]:
    """Call `tool` with keyword arguments and wait; returns the MCP result (wire form) as a dict.

    Raises `Err` (with a `types.Error`) when the call fails, including `tool-failed`.
    """
    result = tooling.call_tool_blocking(tool, json.dumps(arguments))
    value: dict[str, Any] = json.loads(result.value)
    return value


def json_of(result: types.ToolResult) -> dict[str, Any]:
    """The MCP result of a `tool-result` as a dict."""
    value: dict[str, Any] = json.loads(result.value)
    return value


def text_of(value: dict[str, Any]) -> str:
    """The text blocks of an MCP result's `content`, joined by newlines."""
    return "\n".join(block.get("text", "") for block in value.get("content", []) if block.get("type") == "text")


def content_text(content: types.ResourceContent) -> str:
    """A resource's content as text (decoding base64 for non-text MIME types)."""
    if _is_textual(content.mime_type):
        return content.content
    return base64.b64decode(content.content).decode("utf-8", errors="replace")


def content_bytes(content: types.ResourceContent) -> bytes:
    """A resource's content as bytes (encoding text as UTF-8)."""
    if _is_textual(content.mime_type):
        return content.content.encode("utf-8")
    return base64.b64decode(content.content)


def failure(err: Err[Any]) -> str:
    """'code: message' for an `Err` raised by a host import."""
    value = err.value
    if isinstance(value, types.Error):
        return f"{value.code.name.lower().replace('_', '-')}: {value.message}"
    return str(value)


def _is_textual(mime_type: str | None) -> bool:
    return mime_type is None or mime_type.lower().startswith("text/")
