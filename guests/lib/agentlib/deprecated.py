"""The names of agentlib before its results and errors had types; each warns `DeprecationWarning`.

Kept so that guests written against them (the README and the example guests used them) still
build and run; each says what replaces it. Python shows a `DeprecationWarning` only where a filter
enables it (`python -W default`, pytest), so a guest's output does not change.
"""

from __future__ import annotations

import warnings
from typing import Any

from componentize_py_types import Err
from wit_world.imports import types
from wit_world.imports.tooling import Tooling

from agentlib.errors import code_name
from agentlib.inbox import Subscription, subscribe_resource, subscribe_resource_list, subscribe_tool_list
from agentlib.values import Resource, ToolResult

__all__ = (
    "content_bytes",
    "content_text",
    "failure",
    "json_of",
    "resource_list_subscription",
    "subscription",
    "text_of",
    "tool_list_subscription",
)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"agentlib.{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


def json_of(result: types.ToolResult) -> dict[str, Any]:
    """Deprecated: `ToolResult.of(result).raw`."""
    _deprecated("json_of(result)", "ToolResult.of(result).raw")
    return ToolResult.of(result).raw


def text_of(value: dict[str, Any] | ToolResult) -> str:
    """Deprecated: `.text` of a `ToolResult` (also accepts the MCP result as a dict)."""
    _deprecated("text_of(value)", "the .text of a ToolResult")
    return (value if isinstance(value, ToolResult) else ToolResult("", {}, value)).text


def content_text(content: types.ResourceContent) -> str:
    """Deprecated: `Resource.of(content).text`."""
    _deprecated("content_text(content)", "Resource.of(content).text (read_resource returns a Resource)")
    return Resource.of(content).text


def content_bytes(content: types.ResourceContent) -> bytes:
    """Deprecated: `Resource.of(content).data`."""
    _deprecated("content_bytes(content)", "Resource.of(content).data (read_resource returns a Resource)")
    return Resource.of(content).data


def failure(err: Err[Any]) -> str:
    """Deprecated: `str(error)` of a `ToolingError` ("code: message")."""
    _deprecated("failure(err)", "str() of a ToolingError (agentlib's functions raise it)")
    value = err.value
    if isinstance(value, types.Error):
        return f"{code_name(value.code)}: {value.message}"
    return str(value)


def subscription(tooling: Tooling, uri: str) -> Subscription:
    """Deprecated: `subscribe_resource(tooling, uri)`."""
    _deprecated("subscription()", "subscribe_resource()")
    return subscribe_resource(tooling, uri)


def resource_list_subscription(tooling: Tooling) -> Subscription:
    """Deprecated: `subscribe_resource_list(tooling)`."""
    _deprecated("resource_list_subscription()", "subscribe_resource_list()")
    return subscribe_resource_list(tooling)


def tool_list_subscription(tooling: Tooling) -> Subscription:
    """Deprecated: `subscribe_tool_list(tooling)`."""
    _deprecated("tool_list_subscription()", "subscribe_tool_list()")
    return subscribe_tool_list(tooling)
