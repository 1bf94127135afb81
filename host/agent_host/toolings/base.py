"""The tooling protocol every kind implements, and `ConfiguredTooling`, the base every kind extends.

A tooling lives on the bridge loop: every method is a coroutine run there, never on a guest
thread. Methods raise `ToolingError` for every expected failure (unreachable server, unknown
tool, protocol violation); any other exception is a host bug and reaches the guest as `internal`.

Ordering and bounds: toolings do not enforce deadlines themselves. The caller (`session`) wraps
every call in the tooling's request timeout (a tooling may renew it: `request_clock`), and cancelling
the awaiting task cancels the upstream request. Lists are complete (all pages) and in the server's order.

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar, Literal, Protocol

from agent_host.config import ToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, JsonObject, ResourceData, ResourceSpec, ToolSpec


def connect_timed_out(config: ToolingConfig, detail: str = "") -> ToolingError:
    """The `unavailable` error of a tooling that did not connect within its `connect_timeout`,
    with that figure whichever bound ended the wait (the connection's own, or the session's
    outer one on a loaded machine); `detail` is put before the hint."""
    return ToolingError(
        ErrorCode.UNAVAILABLE,
        f"tooling {config.name!r} did not complete the MCP handshake within {config.connect_timeout:g} s{detail} "
        f"(raise `connect_timeout` in {config.origin} if the server is slow to start)",
    )


class ProgressFn(Protocol):
    """Receives progress reports for a call in flight. Must not block; may be called from any thread
    (a Python tool reports progress from its worker thread)."""

    def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@dataclass(frozen=True)
class WatchSet:
    """What a tooling is asked to watch upstream: the union of its guests' subscriptions."""

    uris: frozenset[str] = frozenset()
    resource_list: bool = False
    tool_list: bool = False

    def __bool__(self) -> bool:
        return bool(self.uris) or self.resource_list or self.tool_list


@dataclass(frozen=True)
class Change:
    """A change reported by a tooling: a resource (`uri`), a list, or `reconnected` (everything
    watched may have changed while the connection was down)."""

    kind: Literal["resource", "resources", "tools", "reconnected"]
    uri: str = ""


ChangeListener = Callable[[Change], None]
"""Called on the bridge loop; must not block."""


class Tooling(Protocol):
    """What the host needs from a tooling of any kind."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def config(self) -> ToolingConfig: ...

    async def connect(self) -> None:
        """Make the tooling usable; idempotent, concurrent callers share one attempt.

        Raises `ToolingError(unavailable)` naming why (command not found, connection refused...).
        """
        ...

    async def list_tools(self) -> list[ToolSpec]: ...

    async def tool_spec(self, name: str) -> ToolSpec:
        """The listed tool `name` (re-listing once if it is not known yet); `not-found` otherwise."""
        ...

    def cached_tool_spec(self, name: str) -> ToolSpec | None:
        """The tool `name` if it is known without asking the server; callable from any thread."""
        ...

    async def call_tool(
        self, name: str, arguments: JsonObject, progress: ProgressFn | None = None, *, agent: str = ""
    ) -> CallResult:
        """Run tool `name` for `agent`; an `isError` result is returned, not raised."""
        ...

    def call_tool_now(self, name: str, arguments: JsonObject, *, agent: str = "") -> CallResult | None:
        """The result of calling tool `name`, when it is ready at once, without I/O or waiting (a
        scripted mock result); None when the call must run on the loop with `call_tool`.

        Callable from any thread; never blocks. Raises `ToolingError` as `call_tool` would.
        """
        ...

    def approval_view(self, name: str, arguments: JsonObject) -> JsonObject:
        """The effective arguments of a call, as shown to whoever approves it."""
        ...

    async def list_resources(self) -> list[ResourceSpec]: ...

    async def read_resource(self, uri: str) -> ResourceData: ...

    def set_listener(self, listener: ChangeListener) -> None:
        """Register the one receiver of this tooling's change notifications."""
        ...

    async def set_watch(self, watch: WatchSet) -> None:
        """Make the upstream subscriptions match `watch` (and keep them so across reconnections).

        Raises `ToolingError(unavailable)` when the server cannot notify changes of something in
        `watch`, naming what is missing.
        """
        ...

    async def aclose(self) -> None:
        """Close the connection; idempotent; bounded in time."""
        ...


class ConfiguredTooling(abc.ABC):
    """What every kind shares: its configuration and name, how messages name it, the one message
    for an unknown tool, the change listener, and defaults for the optional parts.

    A kind implements `list_tools`, `cached_tool_spec` and `call_tool`. The defaults suit a kind
    without resources whose tool list never changes and whose calls all run on the loop
    (`call_tool_now` answers None): no resources (reading one is `not-found`,
    watching one `unavailable`; list subscriptions are accepted and stay silent), arguments shown
    to approvers as they are, nothing to connect or close.
    """

    kind: ClassVar[str]

    def __init__(self, config: ToolingConfig) -> None:
        self._config = config
        self._name = config.name  # read on every guest call: a pydantic private attribute costs ~4 µs
        self._listener: ChangeListener | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def config(self) -> ToolingConfig:
        return self._config

    def _where(self) -> str:
        """How messages name this tooling."""
        return f"tooling {self.name!r}"

    # -- tools -------------------------------------------------------------------------------------

    @abc.abstractmethod
    async def list_tools(self) -> list[ToolSpec]: ...

    @abc.abstractmethod
    def cached_tool_spec(self, name: str) -> ToolSpec | None: ...

    @abc.abstractmethod
    async def call_tool(
        self, name: str, arguments: JsonObject, progress: ProgressFn | None = None, *, agent: str = ""
    ) -> CallResult: ...

    async def tool_spec(self, name: str) -> ToolSpec:
        """The tool `name`: from the cache, else from a fresh listing; `unknown_tool` otherwise."""
        spec = self.cached_tool_spec(name)
        if spec is not None:
            return spec
        specs = await self.list_tools()
        for spec in specs:
            if spec.name == name:
                return spec
        raise self.unknown_tool(name, [spec.name for spec in specs])

    def unknown_tool(self, name: str, known: Iterable[str]) -> ToolingError:
        """The `not-found` error for a tool this tooling does not offer; `known` are the tools it has."""
        return ToolingError(
            ErrorCode.NOT_FOUND, f"{self._where()} has no tool {name!r}; its tools are: {', '.join(known) or '(none)'}"
        )

    def call_tool_now(self, name: str, arguments: JsonObject, *, agent: str = "") -> CallResult | None:
        return None

    def approval_view(self, name: str, arguments: JsonObject) -> JsonObject:
        return arguments

    # -- resources and changes -----------------------------------------------------------------------

    async def connect(self) -> None:
        return None

    async def list_resources(self) -> list[ResourceSpec]:
        await self.connect()
        return []

    async def read_resource(self, uri: str) -> ResourceData:
        raise ToolingError(
            ErrorCode.NOT_FOUND, f"{self._where()} has no resources (it is a {self.kind} tooling): {uri!r}"
        )

    def set_listener(self, listener: ChangeListener) -> None:
        self._listener = listener

    def _changed(self, change: Change) -> None:
        """Report `change` to the listener, if one is registered (on the loop)."""
        if self._listener is not None:
            self._listener(change)

    async def set_watch(self, watch: WatchSet) -> None:
        if watch.uris:
            raise ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{self._where()} has no resources to subscribe to (it is a {self.kind} tooling)",
            )

    async def aclose(self) -> None:
        return None
