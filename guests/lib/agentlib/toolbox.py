"""Toolings as objects: `tooling(name)`, whose tools are methods.

    demo = tooling("demo")                    # at import: nothing is asked of the host yet
    total = demo.add(a=2, b=3)                # the structured content, else the text
    result = demo.call("add", {"a": 2})       # the whole ToolResult
    with demo.start("sleep", seconds=1) as slow:   # call-tool: a Call; its events in `listen()`
        ...

The handle (`tooling.get`) is taken at the first use, inside `run` (a module's top level runs
while the guest is built, when no host import can be called), and kept for the run; `close()`
drops it. `demo.NAME(**arguments)` is `call-tool-blocking` of tool NAME (`demo.tool("NAME")` for a
name that is not an identifier or is one of the methods below): it answers the tool's structured
content when it gives one, else its text, and raises `ToolingError` (`code`, `message`) on failure.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from wit_world.imports import tooling as _tooling
from wit_world.imports import types
from wit_world.imports.tooling import Tooling

from agentlib import calls, inbox
from agentlib.errors import raising
from agentlib.inbox import Call, Subscription
from agentlib.lazy import Taken
from agentlib.values import Resource, ToolResult

__all__ = ("Toolbox", "tooling")


def answer_of(result: ToolResult) -> Any:
    """What a tool's method answers: the structured content when the tool gave one, else its text."""
    structured = result.structured
    return structured if structured is not None else result.text


class Toolbox(Taken[Tooling]):
    """A tooling, by name, taken at its first use (see the module docstring)."""

    def __init__(self, name: str) -> None:
        super().__init__(name, _get)

    def call(self, tool: str, arguments: dict[str, Any] | None = None, /, **more: Any) -> ToolResult:
        """Call `tool` and wait (`call-tool-blocking`): its whole `ToolResult`. Raises `ToolingError`."""
        return calls.call(self.handle, tool, **{**(arguments or {}), **more})

    def tool(self, name: str) -> Callable[..., Any]:
        """Tool `name` as a function of keyword arguments answering as `demo.NAME(...)` does."""
        return functools.partial(self._answer, name)

    def _answer(self, tool: str, /, *positional: Any, **arguments: Any) -> Any:
        if positional:
            raise TypeError(f"tool arguments are keywords: {self._name}.{tool}(name=value, ...), not positional")
        return answer_of(self.call(tool, arguments))

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.tool(name)

    def start(self, tool: str, arguments: dict[str, Any] | None = None, /, **more: Any) -> Call:
        """Start a call of `tool` (`call-tool`): a `Call`, whose events `listen()` yields."""
        return inbox.start(self.handle, tool, **{**(arguments or {}), **more})

    def tools(self) -> list[types.Tool]:
        """Every tool the agent may use (`list-tools`)."""
        return calls.list_tools(self.handle)

    def resources(self) -> list[types.ResourceInfo]:
        """Every resource the agent may read (`list-resources`)."""
        return calls.list_resources(self.handle)

    def read(self, uri: str) -> Resource:
        """The resource at `uri` (`read-resource`)."""
        return calls.read_resource(self.handle, uri)

    def subscribe(self, uri: str) -> Subscription:
        """Subscribe to the resource at `uri`: its changes arrive as `ResourceUpdated` events."""
        return inbox.subscribe_resource(self.handle, uri)

    def watch_resources(self) -> Subscription:
        """Subscribe to the resource list: `ResourceListUpdated` events."""
        return inbox.subscribe_resource_list(self.handle)

    def watch_tools(self) -> Subscription:
        """Subscribe to the tool list: `ToolListUpdated` events."""
        return inbox.subscribe_tool_list(self.handle)

    def __repr__(self) -> str:
        return f"tooling({self._name!r})"


@raising
def _get(name: str) -> Tooling:
    return _tooling.get(name)


def tooling(name: str) -> Toolbox:
    """The tooling `name` as an object (see the module docstring); nothing is asked of the host yet."""
    return Toolbox(name)
