"""The functions of WIT world `agent` that the host implements, declared once (`FUNCTIONS`).

Each `WitFunction` gives its interface (and the resource it is a method of), its parameters and
result as Python types, whether it fails with `result<_, error>` (else what it answers instead),
whether it waits, its audit operation, whether a cassette records it and what a replay checks of
the agent's grants, and the session method implementing it. The linker's imports
(`runtime.imports`), the cassette's codecs (`session.cassette`), record and replay (`session.recorded`,
one override of `GuestSession.invoke`) and the reference page come from it: a new WIT function is an
entry here and its implementation; `since` says from which package version a guest may import it
(a component built against 0.2.0 links the functions it had). Values only; tests compare it with `wit/*.wit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import Field

from agent_host.model import (
    CallOutcome,
    ChatRequest,
    ChatResult,
    Envelope,
    Operation,
    ResourceData,
    ResourceSpec,
    ToolSpec,
)

PACKAGE: Final = "agent-host:guest"
VERSION: Final = "0.3.0"
"""The package version of world `agent` that guests are built against now (`wit/`)."""

VERSIONS: Final = ("0.2.0", "0.3.0")
"""Every package version the host links, oldest first: a component built against any runs."""

ToolingHandle = Annotated[int, Field(ge=1, le=2**31 - 1)]
"""The `rep` of a `tooling` resource the host hands out (an `own<tooling>`): 1 to 2**31-1."""


ProviderHandle = Annotated[int, Field(ge=1, le=2**31 - 1), "provider"]
"""The `rep` of a `provider` resource the host hands out (an `own<provider>`): 1 to 2**31-1 (its
own numbering: the marker keeps the type apart from `ToolingHandle` in the tables keyed by type)."""


GrantCheck = Literal["tooling", "tool", "resource", "provider", "model"]
"""What of the agent's grants a replay checks before answering from the tape: the tooling (or
provider) named by the first argument, the tool or the resource named by the second argument on the
handle's tooling, or the model a chat request (the second argument) asks of the handle's provider."""


@dataclass(frozen=True)
class WitFunction:
    """One WIT function of world `agent` that the host implements (see the module docstring)."""

    interface: str
    """The interface of `agent-host:guest` it belongs to (`tooling`, `inbox`, `log`)."""
    name: str
    """Its WIT name (`call-tool`): what the audit log and a cassette call it."""
    params: tuple[tuple[str, Any], ...]
    """Its parameters after the handle of a method, as (WIT name, Python type)."""
    result: Any
    """The Python type of what the session answers (`None`: nothing)."""
    session: str
    """The `GuestSession` method implementing it: called with the handle's rep (a method), then `params`."""
    resource: str | None = None
    """The resource it is a method of (its first argument a borrowed handle), or None."""
    fallible: bool = True
    """Whether it answers `result<_, error>`; else `fallback` when the session raises `ToolingError`."""
    fallback: Any = None
    """What an infallible function answers when the session raises `ToolingError` (a dropped handle)."""
    waits: bool = False
    """Whether it may wait (for a server, an approval or the inbox) rather than answer from the host's state."""
    audit: Operation | None = None
    """The audit operation it is written as (None: not audited by itself)."""
    taped: bool = True
    """Whether a cassette records its answer (and a replay answers it from the tape)."""
    grant: GrantCheck | None = None
    """What a replay checks of the agent's grants before answering it (`GrantCheck`)."""
    compared: int | None = None
    """How many of its arguments a replay compares with the recording (None: all; `recv`'s wait is
    timing, not the guest's request)."""
    since: str = "0.2.0"
    """The first package version (`VERSIONS`) whose guests may import it."""
    label: str | None = None
    """Its name in cassettes and `BY_NAME` when its WIT name is another interface's too (`provider.get`)."""

    @property
    def key(self) -> str:
        """Its unique name across the world: `label`, else its WIT name."""
        return self.label if self.label is not None else self.name

    @property
    def member(self) -> str:
        """Its name in its interface's linker instance: `[method]tooling.call-tool`, `get`, `recv`."""
        return f"[method]{self.resource}.{self.name}" if self.resource is not None else self.name


def _method(name: str, params: tuple[tuple[str, Any], ...], result: Any, **more: Any) -> WitFunction:
    """A method of resource `tooling`, implemented by the session method of the same name."""
    return WitFunction("tooling", name, params, result, name.replace("-", "_"), resource="tooling", **more)


def _provider(name: str, params: tuple[tuple[str, Any], ...], result: Any, **more: Any) -> WitFunction:
    """A method of resource `provider`, implemented by the session method `provider_NAME`."""
    session = "provider_" + name.replace("-", "_")
    return WitFunction(
        "provider", name, params, result, session, resource="provider", since="0.3.0", label=f"provider.{name}", **more
    )


def _unsubscribe(what: str, audit: Operation) -> WitFunction:
    return _method(f"unsubscribe-{what}", (("id", str),), bool, fallible=False, fallback=False, audit=audit)


FUNCTIONS: Final[tuple[WitFunction, ...]] = (
    _method("kind", (), str, fallible=False, fallback=""),
    _method("name", (), str, fallible=False, fallback=""),
    _method("list-tools", (), list[ToolSpec], waits=True, audit=Operation.LIST_TOOLS),
    _method("call-tool", (("name", str), ("arguments", str)), str, waits=True, audit=Operation.CALL_TOOL, grant="tool"),
    _method("is-open", (("id", str),), bool, fallible=False, fallback=False),
    _method("cancel", (("id", str),), bool, fallible=False, fallback=False),
    _method(
        "call-tool-blocking",
        (("name", str), ("arguments", str)),
        CallOutcome,
        waits=True,
        audit=Operation.CALL_TOOL_BLOCKING,
        grant="tool",
    ),
    _method("list-resources", (), list[ResourceSpec], waits=True, audit=Operation.LIST_RESOURCES),
    _method(
        "read-resource", (("uri", str),), ResourceData, waits=True, audit=Operation.READ_RESOURCE, grant="resource"
    ),
    _method("subscribe-resource-list", (), str, waits=True, audit=Operation.SUBSCRIBE_RESOURCE_LIST),
    _unsubscribe("resource-list", Operation.UNSUBSCRIBE_RESOURCE_LIST),
    _method(
        "subscribe-resource", (("uri", str),), str, waits=True, audit=Operation.SUBSCRIBE_RESOURCE, grant="resource"
    ),
    _unsubscribe("resource", Operation.UNSUBSCRIBE_RESOURCE),
    _method("subscribe-tool-list", (), str, waits=True, audit=Operation.SUBSCRIBE_TOOL_LIST),
    _unsubscribe("tool-list", Operation.UNSUBSCRIBE_TOOL_LIST),
    _method(
        "respond", (("id", str), ("action", str), ("content", str | None)), None, waits=True, audit=Operation.RESPOND
    ),
    WitFunction(
        "tooling", "get", (("name", str),), ToolingHandle, "get", waits=True, audit=Operation.GET, grant="tooling"
    ),
    WitFunction(
        "inbox", "recv", (("timeout-ms", int | None),), Envelope | None, "recv", fallible=False, waits=True, compared=0
    ),
    WitFunction("inbox", "try-recv", (), Envelope | None, "try_recv", fallible=False),
    WitFunction("log", "log", (("level", str), ("message", str)), None, "log", fallible=False, taped=False),
    _provider("kind", (), str, fallible=False, fallback=""),
    _provider("name", (), str, fallible=False, fallback=""),
    _provider("models", (), list[str], waits=True, audit=Operation.MODELS),
    _provider("chat", (("request", ChatRequest),), ChatResult, waits=True, audit=Operation.CHAT, grant="model"),
    _provider("chat-stream", (("request", ChatRequest),), str, waits=True, audit=Operation.CHAT_STREAM, grant="model"),
    _provider("is-open", (("id", str),), bool, fallible=False, fallback=False),
    _provider("cancel", (("id", str),), bool, fallible=False, fallback=False),
    WitFunction(
        "provider",
        "get",
        (("name", str),),
        ProviderHandle,
        "get_provider",
        waits=True,
        audit=Operation.GET_PROVIDER,
        grant="provider",
        since="0.3.0",
        label="provider.get",
    ),
)
"""Every function of world `agent` the host implements, in the order of the WIT files."""

BY_NAME: Final[Mapping[str, WitFunction]] = {function.key: function for function in FUNCTIONS}
"""The functions by their `key` (their WIT name, qualified where two interfaces share one)."""

INTERFACES: Final[tuple[str, ...]] = tuple(dict.fromkeys(function.interface for function in FUNCTIONS))
"""The interfaces of `agent-host:guest` that have functions, in order (`types` has none)."""


def linked(version: str) -> tuple[WitFunction, ...]:
    """The functions a guest built against package `version` imports (`since` not after it)."""
    index = VERSIONS.index(version)
    return tuple(f for f in FUNCTIONS if VERSIONS.index(f.since) <= index)


def interface(name: str, version: str = VERSION) -> str:
    """The full name of interface `name` of the package: `agent-host:guest/tooling@0.2.0`."""
    return f"{PACKAGE}/{name}@{version}"
