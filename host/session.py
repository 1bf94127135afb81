"""What one running guest can do, as plain Python: the layer under the WIT imports.

A `GuestSession` belongs to one guest and is used only from that guest's thread. It keeps the
guest's tooling handles (small integers, the `rep` of the WIT resource) and runs every operation
on the bridge loop through `Bridge.call`, bounded by the tooling's request timeout.

Contract:
- Every method returns plain data or raises `ToolingError`; nothing else escapes. An unexpected
  exception is logged with its traceback and becomes `ToolingError(internal)`.
- Arguments are checked before anything leaves the host: not JSON or not an object is
  `invalid-arguments` with the parser's position.
- A tool result with `isError: true` becomes `ToolingError(tool-failed)`: the message is the
  result's text content, `data` the whole result as JSON.
- `close()` forgets every handle; it is idempotent.

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from host.bridge import Bridge
from host.errors import ErrorCode, ToolingError
from host.toolings import ResourceData, ResourceSpec, Tooling, ToolingSet, ToolSpec
from host.toolings.base import JsonObject

logger = logging.getLogger(__name__)
guest_logger = logging.getLogger("host.guest")

_T = TypeVar("_T")

CONNECT_GRACE: Final = 2.0
"""Seconds added to a tooling's timeout for `get`, so the connection's own, more precise timeout
message wins over the generic one."""

MAX_LOG_MESSAGE: Final = 16 * 1024
"""Characters of one guest log message kept; the rest is cut with a marker."""

ASYNC_UNAVAILABLE: Final = "asynchronous calls, subscriptions and the inbox are not available in this host version"

LOG_LEVELS: Final = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}


@dataclass(frozen=True)
class Handle:
    """A guest's handle on a tooling."""

    rep: int
    tooling: Tooling


@dataclass(frozen=True)
class CallOutcome:
    """A successful blocking call: WIT `tool-result`."""

    name: str
    arguments: str
    value: str


class GuestSession:
    """State and operations of one guest (see the module docstring)."""

    def __init__(self, agent: str, bridge: Bridge, toolings: ToolingSet) -> None:
        self.agent = agent
        self._bridge = bridge
        self._toolings = toolings
        self._handles: dict[int, Handle] = {}
        self._next_rep = 1

    # -- handles -----------------------------------------------------------------------------

    def get(self, name: str) -> int:
        config = self._toolings.config(name)
        tooling = self._run(
            f"connecting to tooling {name!r}",
            self._toolings.connect,
            name,
            timeout=config.timeout + CONNECT_GRACE,
            hint=f"raise `timeout` in {config.origin}",
        )
        rep = self._next_rep
        self._next_rep += 1
        self._handles[rep] = Handle(rep, tooling)
        return rep

    def handle(self, rep: int) -> Handle:
        try:
            return self._handles[rep]
        except KeyError:
            raise ToolingError(ErrorCode.NOT_FOUND, f"tooling handle {rep} is not open (it was dropped)") from None

    def drop(self, rep: int) -> None:
        self._handles.pop(rep, None)

    def close(self) -> None:
        self._handles.clear()

    # -- tooling operations --------------------------------------------------------------------

    def kind(self, rep: int) -> str:
        return self.handle(rep).tooling.kind

    def name(self, rep: int) -> str:
        return self.handle(rep).tooling.name

    def list_tools(self, rep: int) -> list[ToolSpec]:
        tooling = self.handle(rep).tooling
        return self._request(tooling, "tools/list", tooling.list_tools)

    def call_tool_blocking(self, rep: int, name: str, arguments: str) -> CallOutcome:
        tooling = self.handle(rep).tooling
        parsed = parse_arguments(arguments)
        result = self._request(tooling, f"the call of tool {name!r}", tooling.call_tool, name, parsed)
        value = json.dumps(result.value, ensure_ascii=False)
        if result.is_error:
            text = result.text() or f"tool {name!r} reported an error without text"
            raise ToolingError(ErrorCode.TOOL_FAILED, text, data=value)
        return CallOutcome(name=name, arguments=arguments, value=value)

    def list_resources(self, rep: int) -> list[ResourceSpec]:
        tooling = self.handle(rep).tooling
        return self._request(tooling, "resources/list", tooling.list_resources)

    def read_resource(self, rep: int, uri: str) -> ResourceData:
        tooling = self.handle(rep).tooling
        return self._request(tooling, f"the read of resource {uri!r}", tooling.read_resource, uri)

    # -- the asynchronous half (not offered by this host version) -------------------------------

    def call_tool(self, rep: int, name: str, arguments: str) -> str:
        self.handle(rep)
        raise ToolingError(ErrorCode.UNAVAILABLE, f"call-tool: {ASYNC_UNAVAILABLE}; use call-tool-blocking")

    def subscribe(self, rep: int, what: str) -> str:
        self.handle(rep)
        raise ToolingError(ErrorCode.UNAVAILABLE, f"{what}: {ASYNC_UNAVAILABLE}")

    def is_open(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        return False

    def cancel(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        return False

    def unsubscribe(self, rep: int, sub_id: str) -> bool:
        self.handle(rep)
        return False

    def recv(self, timeout_ms: int | None) -> None:
        return None

    def try_recv(self) -> None:
        return None

    # -- log -------------------------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        if len(message) > MAX_LOG_MESSAGE:
            message = message[:MAX_LOG_MESSAGE] + f"... [{len(message) - MAX_LOG_MESSAGE} characters cut]"
        guest_logger.log(LOG_LEVELS.get(level, logging.INFO), "[%s] %s", self.agent, message)

    # -- plumbing ----------------------------------------------------------------------------------

    def _request(self, tooling: Tooling, what: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        config = tooling.config
        return self._run(
            f"tooling {tooling.name!r}: {what}",
            fn,
            *args,
            timeout=config.timeout,
            hint=f"raise `timeout` in {config.origin} to wait longer",
        )

    def _run(self, what: str, fn: Callable[..., Awaitable[_T]], *args: Any, timeout: float, hint: str) -> _T:
        def on_timeout() -> ToolingError:
            return ToolingError(
                ErrorCode.TIMEOUT, f"{what} did not finish within {timeout:g} s and was cancelled ({hint})"
            )

        try:
            return self._bridge.call(fn, *args, timeout=timeout, on_timeout=on_timeout)
        except ToolingError:
            raise
        except Exception as exc:  # boundary: a host bug must reach the guest as `internal`, not as a trap
            logger.exception("internal error during %s (agent %s)", what, self.agent)
            raise ToolingError(
                ErrorCode.INTERNAL, f"internal error in the host during {what}: {type(exc).__name__}: {exc}"
            ) from exc


def parse_arguments(text: str) -> JsonObject:
    """Tool arguments from JSON text; `invalid-arguments` unless it is a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS,
            f"arguments are not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            'pass a JSON object such as {"text": "hi"}, or {} for none',
        ) from None
    if not isinstance(value, dict):
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS,
            f"arguments must be a JSON object, got {type(value).__name__} {text[:40]!r}; "
            'pass a JSON object such as {"text": "hi"}, or {} for none',
        )
    return value
