"""Python toolings (`kind = "python"`): host-native tools, imported from the user's own code.

Calls run on the bridge loop: an async tool as a task, a sync one in a worker thread. Optional parts
of a tool come from `agent_host.tools.BaseTool` (plain objects are wrapped with `as_tool`), so nothing
here probes a tool's attributes.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio
import anyio.to_thread

from agent_host.config import PythonToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, JsonObject, ToolSpec
from agent_host.toolings.base import ConfiguredTooling, ProgressFn
from agent_host.tools import BaseTool, FunctionTool, Tool, ToolContext, ToolError, as_tool

logger = logging.getLogger(__name__)

tool_logger = logging.getLogger("agent_host.tool")


@dataclass
class _Entry:
    tool: BaseTool
    spec: ToolSpec


class PythonTooling(ConfiguredTooling):
    """A tooling made of the Python tools its configuration names (see `import_tools`).

    It has no resources and its tool list never changes, so list subscriptions are accepted and
    stay silent, and resource subscriptions are `unavailable` (the defaults of `ConfiguredTooling`).
    """

    kind: ClassVar[str] = "python"
    _config: PythonToolingConfig

    def __init__(self, config: PythonToolingConfig) -> None:
        super().__init__(config)
        self._tools: dict[str, _Entry] | None = None
        self._unprepared: dict[str, str] = {}
        self._lock = anyio.Lock()

    async def connect(self) -> None:
        """Import every tool and run each one's `prepare(ctx)`, once.

        A tool whose `prepare` raised is not offered (and the reason is logged, and given to a
        guest that calls it anyway). An import that fails, a name that is not a tool, or two tools
        with one name raise `ToolingError(unavailable)` naming the entry and the config key.
        """
        if self._tools is not None:
            return
        async with self._lock:
            if self._tools is None:
                self._tools = await self._load()

    async def _load(self) -> dict[str, _Entry]:
        found = import_tools(self._config)
        entries: dict[str, _Entry] = {}
        for name, candidate in found.items():
            try:
                await _prepare(candidate, self._context("", name, None))
            except Exception as exc:  # boundary: a tool whose preparation failed is left out, not fatal
                reason = f"{type(exc).__name__}: {exc}"
                self._unprepared[name] = reason
                logger.warning("%s: tool %r is not offered: its prepare() failed: %s", self._where(), name, reason)
                continue
            entries[name] = _Entry(candidate, _spec(candidate))
        return entries

    def _context(self, agent: str, tool: str, progress: ProgressFn | None) -> ToolContext:
        return ToolContext(
            agent=agent,
            tooling=self.name,
            tool=tool,
            logger=tool_logger.getChild(f"{self.name}.{tool}"),
            deadline=time.monotonic() + self._config.timeout,
            _progress=progress,
        )

    async def _entries(self) -> dict[str, _Entry]:
        await self.connect()
        assert self._tools is not None
        return self._tools

    async def list_tools(self) -> list[ToolSpec]:
        return [entry.spec for entry in (await self._entries()).values()]

    def cached_tool_spec(self, name: str) -> ToolSpec | None:
        entry = (self._tools or {}).get(name)
        return entry.spec if entry is not None else None

    def unknown_tool(self, name: str, known: Iterable[str]) -> ToolingError:
        if name in self._unprepared:
            return ToolingError(
                ErrorCode.NOT_FOUND,
                f"{self._where()}: tool {name!r} is not offered: its prepare() failed: {self._unprepared[name]}",
            )
        return super().unknown_tool(name, known)

    def approval_view(self, name: str, arguments: JsonObject) -> JsonObject:
        entry = (self._tools or {}).get(name)
        return entry.tool.approval_arguments(arguments) if entry is not None else arguments

    async def call_tool(
        self, name: str, arguments: JsonObject, progress: ProgressFn | None = None, *, agent: str = ""
    ) -> CallResult:
        """Call tool `name` on the bridge loop.

        An async `execute` runs as a task (cancelled with the call), a sync one in a worker thread
        (abandoned on cancel, with `ctx.cancelled` set so it can stop). A tool's
        `validate_arguments` refusing the arguments is `invalid-arguments`. A raised `ToolError` or
        any other exception is an `isError` result (`tool-failed` for the guest); the host goes on.
        The result is MCP's wire form: the JSON value as text content and as `structuredContent` (a
        non-object value `v` is structured as `{"result": v}`, as the MCP SDK does). A value that
        is not JSON is an `isError` result naming its type.
        """
        await self.tool_spec(name)
        tool = (await self._entries())[name].tool
        try:
            tool.validate_arguments(arguments)
        except (ValueError, ToolError) as exc:
            raise ToolingError(
                ErrorCode.INVALID_ARGUMENTS, f"{self._where()}: tool {name!r} refused its arguments: {exc}"
            ) from None
        ctx = self._context(agent, name, progress)
        try:
            if tool.is_async:
                value = await tool.execute(arguments, ctx)
            else:
                value = await anyio.to_thread.run_sync(tool.execute, arguments, ctx, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            ctx.cancelled.set()
            raise
        except ToolError as exc:
            return CallResult.from_error(str(exc))
        except Exception as exc:  # boundary: a failing tool is the guest's `tool-failed`, not a host crash
            logger.warning(
                "tooling %r: tool %r (called by agent %r) raised %s: %s",
                self.name,
                name,
                agent,
                type(exc).__name__,
                exc,
                exc_info=exc,
            )
            return CallResult.from_error(f"{type(exc).__name__}: {exc}")
        try:
            return CallResult.from_structured(value)
        except (TypeError, ValueError):
            return CallResult.from_error(f"tool {name!r} returned a value that is not JSON ({type(value).__name__})")


def import_tools(config: PythonToolingConfig) -> dict[str, BaseTool]:
    """Import the tools of `config` by name, without preparing or running any (also what
    `agent-host config check` does). Raises `ToolingError(unavailable)` naming the entry and key.

    The config has `tools = ["pkg.module:attr", ...]` and optional `path = ["./src"]` (folders put
    in front of `sys.path`, relative to the config file). `attr` may be a tool (anything satisfying
    `agent_host.tools.Tool`), a class of tools (instantiated without arguments), a plain typed function
    (wrapped with `@tool`), or a registry: a list, tuple, set or dict of those, or an object whose
    `tools` attribute (or method) gives them.
    """
    for folder in reversed(config.path):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    found: dict[str, BaseTool] = {}
    for spec in config.tools:
        for candidate in _collect(_import(spec, config), spec, config):
            if candidate.name in found:
                raise ToolingError(
                    ErrorCode.UNAVAILABLE,
                    f"tooling {config.name!r}: two tools are named {candidate.name!r} (the second from {spec!r} in "
                    f"`tools` of {config.origin})",
                )
            found[candidate.name] = candidate
    return found


def _import(spec: str, config: PythonToolingConfig) -> Any:
    module_name, _, attribute = spec.partition(":")
    problem = None
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split(".") if attribute else ():
            target = getattr(target, part)
        return target
    except Exception as exc:  # boundary: any import failure is a configuration problem to report
        problem = f"{type(exc).__name__}: {exc}"
    raise ToolingError(
        ErrorCode.UNAVAILABLE,
        f"tooling {config.name!r}: cannot import {spec!r} ({problem}); check `tools` (and `path`) in {config.origin}",
    )


def _collect(target: Any, spec: str, config: PythonToolingConfig) -> list[BaseTool]:
    """The tools `target` stands for (see `import_tools`). Raises `ToolingError(unavailable)` for
    anything that is none of those."""
    if isinstance(target, Tool) and not inspect.isclass(target):
        return [as_tool(target)]
    if inspect.isclass(target):
        return _collect(target(), spec, config)
    if inspect.isfunction(target):
        return [FunctionTool(target)]
    if isinstance(target, Mapping):
        return [t for item in target.values() for t in _collect(item, spec, config)]
    if isinstance(target, list | tuple | set | frozenset):
        return [t for item in target for t in _collect(item, spec, config)]
    listed = getattr(target, "tools", None)
    if listed is not None:
        return _collect(listed() if callable(listed) else listed, spec, config)
    raise ToolingError(
        ErrorCode.UNAVAILABLE,
        f"tooling {config.name!r}: {spec!r} is not a tool, a class of tools, a function or a registry "
        f"(it is a {type(target).__name__}); check `tools` in {config.origin}",
    )


async def _prepare(tool: BaseTool, ctx: ToolContext) -> None:
    """Run `tool.prepare(ctx)`: on the loop when it is async, else in a worker thread."""
    prepare = tool.prepare
    if inspect.iscoroutinefunction(prepare):
        pending = prepare(ctx)
        if pending is not None:
            await pending
    else:
        await anyio.to_thread.run_sync(prepare, ctx)


def _spec(tool: BaseTool) -> ToolSpec:
    capabilities = tool.capabilities()
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.parameters_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        capabilities=frozenset(capabilities) if capabilities else None,
        builtin=tool.is_builtin,
    )
