"""The tooling protocol every kind implements, and the plain data it speaks.

A tooling lives on the bridge loop: every method is a coroutine run there, never on a guest
thread. Methods raise `ToolingError` for every expected failure (unreachable server, unknown
tool, protocol violation); any other exception is a host bug and reaches the guest as `internal`.

Ordering and bounds: toolings do not enforce deadlines themselves. The caller (`session`) wraps
every call in the tooling's request timeout, and cancelling the awaiting task cancels the upstream
request. Lists are complete (all pages) and in the server's order.

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from host.config import ToolingConfig

JsonObject = dict[str, Any]


class ProgressFn(Protocol):
    """Receives progress reports for a call in flight. Must not block; may be called from any thread
    (a Python tool reports progress from its worker thread)."""

    def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@dataclass(frozen=True)
class ToolSpec:
    """A tool as listed; schemas are parsed JSON objects."""

    name: str
    description: str | None
    input_schema: JsonObject
    output_schema: JsonObject | None = None
    annotations: JsonObject | None = None
    capabilities: frozenset[str] | None = None
    """What the tool declares it needs (Python and mock tools); None: derive it (see `capabilities`)."""
    builtin: bool = False
    """A tool shipped with the host (a Python tool's `is_builtin`); shown in listings."""


@dataclass(frozen=True)
class ResourceSpec:
    """A resource as listed."""

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class ResourceData:
    """A resource's content: exactly one of `text` and `blob` (base64) is set."""

    uri: str
    mime_type: str | None
    text: str | None = None
    blob: str | None = None

    def guest_content(self) -> str:
        """The content as the WIT contract gives it to a guest.

        Text when the MIME type is absent or `text/*`, base64 of the bytes otherwise; a text
        resource with a non-text type is encoded, a blob with a text type decoded (and kept as
        base64 when it is not UTF-8, which the guest can tell from the MIME type it asked for).
        """
        textual = self.mime_type is None or self.mime_type.lower().startswith("text/")
        if self.text is not None:
            return self.text if textual else base64.b64encode(self.text.encode("utf-8")).decode("ascii")
        blob = self.blob or ""
        if not textual:
            return blob
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return blob


@dataclass
class CallResult:
    """A finished tool call in MCP's wire form: `content`, optional `structuredContent`, `isError`."""

    value: JsonObject = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        return bool(self.value.get("isError", False))

    def text(self) -> str:
        """The text blocks of `content`, joined by newlines."""
        blocks = self.value.get("content", [])
        texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str))


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


class ConfiguredTooling:
    """What every kind shares: its configuration, its name, and how messages name it."""

    def __init__(self, config: ToolingConfig) -> None:
        self._config = config

    @property
    def name(self) -> str:
        return self._config.name

    @property
    def config(self) -> ToolingConfig:
        return self._config

    def _where(self) -> str:
        return f"tooling {self.name!r}"


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
