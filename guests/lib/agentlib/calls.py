"""The blocking tooling functions, each raising `ToolingError` and returning agentlib's values.

Each is the WIT function of the same name (snake case) taking the handle first; `call` is
`call-tool-blocking` with keyword arguments. They add nothing else: no retry, no cache, the host's
checks and timeouts apply as documented in the WIT.
"""

from __future__ import annotations

import json
from typing import Any

from wit_world.imports import tooling as _tooling
from wit_world.imports import types
from wit_world.imports.tooling import Tooling

from agentlib.errors import raising
from agentlib.values import Resource, ToolResult

__all__ = ("call", "get", "list_resources", "list_tools", "read_resource")


@raising
def get(name: str) -> Tooling:
    """The handle of the tooling `name` (`tooling.get`); use it in a `with` block to drop it at the end.

    Raises `ToolingError`: `not-found` (no such tooling), `denied` (not granted), `unavailable`.
    """
    return _tooling.get(name)


@raising
def call(tooling: Tooling, tool: str, /, **arguments: Any) -> ToolResult:
    """Call `tool` with keyword arguments and wait (`call-tool-blocking`); its `ToolResult`.

    Raises `ToolingError` when the call fails (`tool-failed` when the tool reported an error,
    `not-found`, `invalid-arguments`, `denied`, `timeout`, ...).
    """
    return ToolResult.of(tooling.call_tool_blocking(tool, json.dumps(arguments)))


@raising
def list_tools(tooling: Tooling) -> list[types.Tool]:
    """Every tool the agent may use (`list-tools`). Raises `ToolingError`."""
    return tooling.list_tools()


@raising
def list_resources(tooling: Tooling) -> list[types.ResourceInfo]:
    """Every resource the agent may read (`list-resources`). Raises `ToolingError`."""
    return tooling.list_resources()


@raising
def read_resource(tooling: Tooling, uri: str) -> Resource:
    """The content of the resource at `uri` (`read-resource`). Raises `ToolingError` (`not-found`, ...)."""
    return Resource.of(tooling.read_resource(uri))
