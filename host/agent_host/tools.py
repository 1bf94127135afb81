"""Host-native Python tools: the protocol a tool satisfies, its context, and the `@tool` decorator.

The API for writing tools, which `agent_host` exports (import it from there): satisfy `Tool` (or
subclass `BaseTool`, which supplies the default of every optional part), or turn a typed function
into a tool with `@tool`.
"""

from __future__ import annotations

import abc
import inspect
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, get_type_hints, overload, runtime_checkable

import pydantic

__all__ = ("BaseTool", "FunctionTool", "Tool", "ToolContext", "ToolError", "as_tool", "tool")


class ToolError(Exception):
    """A failure a tool reports on purpose; the guest sees `tool-failed` with this message."""


@runtime_checkable
class Tool(Protocol):
    """A tool: any object with `name`, `description`, `parameters_schema` (a JSON Schema object) and
    `execute(params, ctx)`, where `ctx` is a `ToolContext`.

    `execute`, sync or async, returns a JSON value (dict, list, str, number, bool or None). Raising
    `ToolError` reports a failure to the guest (`tool-failed`, with your message); any other
    exception does too, with its type and message. An async tool is cancelled with the call; a sync
    tool runs in a worker thread and should check `ctx.cancelled`.

    Optional parts (defaults in parentheses):

    - `validate_arguments(params)` (none): raise `ValueError` or `ToolError` to refuse arguments
      beyond what the schema says; the guest gets `invalid-arguments` with your message.
    - `capabilities()` (none declared, so the tool needs `external_side_effect`): a set of
      `read_only`, `network`, `workspace_write`, `process_execute`, `external_side_effect`,
      `agent_delegate`.
    - `approval_arguments(params)` (the params): the effective arguments shown to whoever approves.
    - `prepare(ctx)`, sync or async (nothing): runs once, before the tool is first listed or called;
      if it raises, the tool is not offered (and the reason is logged).
    - `is_builtin` (False): marks tools shipped with the host, for listings.
    - `output_schema` (None): JSON Schema of the structured result (see `BaseTool.output_schema`).

    Subclass `BaseTool` to get the defaults of every optional part, or satisfy the protocol with any
    object: the host wraps such an object with `as_tool`, which supplies the same defaults.
    """

    name: str
    description: str
    parameters_schema: dict[str, Any]

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any: ...


@dataclass
class ToolContext:
    """What a running tool knows about its call: which agent and tooling called, a logger, the
    deadline, whether the call was cancelled, and `report_progress`."""

    agent: str
    """The agent (guest) that called the tool."""
    tooling: str
    """The tooling the tool belongs to."""
    tool: str
    logger: logging.Logger
    deadline: float
    """`time.monotonic()` value by which the call must finish (the tooling's `timeout`)."""
    cancelled: threading.Event = field(default_factory=threading.Event)
    """Set when the call is cancelled (the guest cancelled it, or its deadline passed); sync tools
    should check it and stop. An async tool is cancelled with the call instead."""
    _progress: Callable[[float, float | None, str | None], None] | None = None

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress to the caller (a `progress` envelope). Thread-safe, never blocks."""
        if self._progress is not None:
            self._progress(progress, total, message)

    @property
    def remaining(self) -> float:
        """Seconds left before the deadline."""
        return self.deadline - time.monotonic()


class BaseTool(abc.ABC):
    """A tool with the default of every optional part; subclasses set `name`, `description`,
    `parameters_schema` and implement `execute` (see `Tool`)."""

    name: str
    description: str
    parameters_schema: dict[str, Any]
    is_builtin: bool = False
    """Marks tools shipped with the host, for listings."""
    output_schema: dict[str, Any] | None = None
    """JSON Schema of the structured result (a dict result as itself, any other value as
    `{"result": value}`); a result that breaks it reaches the guest as `protocol`."""

    @abc.abstractmethod
    def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the tool; sync (run in a worker thread) or async (run on the host's loop)."""

    @property
    def is_async(self) -> bool:
        """Whether `execute` is a coroutine function (run on the loop rather than in a thread)."""
        return inspect.iscoroutinefunction(self.execute)

    def validate_arguments(self, params: dict[str, Any]) -> None:
        """Refuse arguments beyond what the schema says by raising `ValueError` or `ToolError`; the guest
        gets `invalid-arguments` with the message."""
        return None

    def capabilities(self) -> Iterable[str] | None:
        """The capabilities a call needs; None (or empty): none declared, so it needs `external_side_effect`."""
        return None

    def approval_arguments(self, params: dict[str, Any]) -> dict[str, Any]:
        """The effective arguments shown to whoever approves a call."""
        return params

    def prepare(self, ctx: ToolContext) -> Awaitable[None] | None:
        """Runs once before the tool is first listed or called, sync or async; raising leaves the tool out
        (and the reason is logged)."""
        return None


class _ProtocolTool(BaseTool):
    """An object satisfying `Tool`, with the defaults for the optional parts it lacks.

    The one place where optional parts are looked up by name: the object's own methods replace the
    defaults (so an async `prepare` stays async); `capabilities` may be a method or a plain
    collection, `is_async`, `is_builtin` and `output_schema` plain attributes.
    """

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        self.name = tool.name
        self.description = tool.description
        self.parameters_schema = tool.parameters_schema
        self.is_builtin = bool(getattr(tool, "is_builtin", False))
        self.output_schema = getattr(tool, "output_schema", None)
        for optional in ("validate_arguments", "approval_arguments", "prepare"):
            method = getattr(tool, optional, None)
            if method is not None:
                setattr(self, optional, method)

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        return self.tool.execute(params, ctx)

    @property
    def is_async(self) -> bool:
        flag = getattr(self.tool, "is_async", None)
        return flag if isinstance(flag, bool) else inspect.iscoroutinefunction(self.tool.execute)

    def capabilities(self) -> Iterable[str] | None:
        declared = getattr(self.tool, "capabilities", None)
        found: Iterable[str] | None = declared() if callable(declared) else declared
        return found


def as_tool(candidate: Tool | BaseTool) -> BaseTool:
    """`candidate` as a `BaseTool`: itself when it is one, else wrapped with the defaults."""
    return candidate if isinstance(candidate, BaseTool) else _ProtocolTool(candidate)


class FunctionTool(BaseTool):
    """A tool made from a typed function by `@tool`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        capabilities: Iterable[str] = (),
        approval_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.description = description or inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0] or self.name
        self._capabilities = frozenset(capabilities)
        self._approval_arguments = approval_arguments
        self.is_builtin = False
        hints = get_type_hints(fn, include_extras=True)
        signature = inspect.signature(fn)
        self._context_parameter: str | None = None
        fields: dict[str, Any] = {}
        for parameter in signature.parameters.values():
            annotation = hints.get(parameter.name, Any)
            if annotation is ToolContext:
                self._context_parameter = parameter.name
                continue
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (annotation, default)
        self._model = pydantic.create_model(f"{self.name}_arguments", **fields)
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        self.parameters_schema: dict[str, Any] = schema

    def validate_arguments(self, params: dict[str, Any]) -> None:
        try:
            self._model.model_validate(params)
        except pydantic.ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '$'}: {e['msg']}" for e in exc.errors())
            raise ValueError(problems) from None

    def capabilities(self) -> frozenset[str] | None:
        return self._capabilities or None

    def approval_arguments(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._approval_arguments(params) if self._approval_arguments is not None else params

    def execute(self, params: dict[str, Any], ctx: ToolContext) -> Any:
        arguments = dict(self._model.model_validate(params))
        if self._context_parameter is not None:
            arguments[self._context_parameter] = ctx
        return self.fn(**arguments)

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    capabilities: Iterable[str] = (),
    approval_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    capabilities: Iterable[str] = (),
    approval_arguments: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a typed function: `@tool`, or `@tool(...)` with any of the keyword arguments.

    The schema comes from the parameters' type hints (`Annotated[int, Field(description=...)]`
    adds descriptions and constraints), the description from the docstring; a parameter annotated
    `ToolContext` receives the context.

        @tool(capabilities={"read_only"})
        def word_count(text: str) -> dict[str, int]:
            "Count the words of a text."
            return {"words": len(text.split())}
    """

    def wrap(function: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            function,
            name=name,
            description=description,
            capabilities=capabilities,
            approval_arguments=approval_arguments,
        )

    return wrap(fn) if fn is not None else wrap
