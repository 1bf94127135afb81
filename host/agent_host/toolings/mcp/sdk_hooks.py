"""The one door to the MCP SDK's private names: every use of one is here, checked, with a fallback.

No other module of the package touches a private name of `mcp`, `mcp_types` or `httpx2`
(tests/unit/toolings/mcp/test_sdk_privates.py greps for it). At import this module checks that what
each hook relies on exists (`HOOKS`: name -> available) and notes whether the installed SDK is one
it was tested with (`TESTED_WITH`, `SDK_VERSION`; an untested one is logged once). A hook whose
private name is missing takes its fallback:

- `spawning`: `mcp.client.stdio._create_platform_compatible_process`, wrapped to learn a stdio
  server's pid. Fallback: the new children of this process that lead a session, read from `/proc`
  (spawns serialized meanwhile).
- `results_checked_by_the_host`: the session's `validate_tool_result` (the SDK's output-schema
  check), replaced on the instance. Fallback: the SDK keeps checking (a result breaking its schema
  still fails the call, with the SDK's own error).
- `next_request_within_origin`: `mcp.shared._httpx_utils.next_request_within_origin` (the
  transports' redirect rule). Fallback: the same rule, written here.
- `connection_of`: `ServerSession._connection` (the client connection of a request). No public
  path in mcp 2.3: `SdkMismatch` naming what is missing.
- `open_sessions`: `StreamableHTTPSessionManager._server_instances`. No public path in mcp 2.3:
  `SdkMismatch` naming what is missing.

The stream protocol types (`ReadStream`, `WriteStream`, `TransportStreams`, private modules) are
types only: `Any` when missing. Each hook has a unit test, the fallback forced with monkeypatch
(tests/unit/toolings/mcp/test_sdk_hooks.py). Longer: the door lists every hook it holds.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx2

from agent_host.errors import SdkMismatch

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams as TransportStreams
    from mcp.client.session import ClientSession
    from mcp.server.connection import Connection
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.shared._stream_protocols import ReadStream as ReadStream
    from mcp.shared._stream_protocols import WriteStream as WriteStream
else:
    ReadStream = WriteStream = Any
    TransportStreams = tuple[Any, Any]

logger = logging.getLogger(__name__)

TESTED_WITH: Final = ("2.3.",)
"""Releases of `mcp` (version prefixes) the hooks were tested with; pyproject declares `mcp>=2.3,<3`."""

SDK_VERSION: Final = importlib.metadata.version("mcp")


def _attribute(module: str, name: str) -> Any:
    """`module.name`, or None when the module or the name is missing."""
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def _sets_in_init(owner: Any, attribute: str) -> bool:
    """Whether class `owner`'s `__init__` assigns `self.<attribute>` (read from its source)."""
    try:
        source = inspect.getsource(owner.__init__)
    except (OSError, TypeError):
        return False
    return f"self.{attribute} =" in source or f"self.{attribute}:" in source


_SDK_SPAWN: Final = _attribute("mcp.client.stdio", "_create_platform_compatible_process")
_SDK_REDIRECT: Final = _attribute("mcp.shared._httpx_utils", "next_request_within_origin")


def _validate_tool_result_switchable() -> bool:
    from mcp.client.session import ClientSession

    method = getattr(ClientSession, "validate_tool_result", None)
    return inspect.iscoroutinefunction(method) and list(inspect.signature(method).parameters) == [
        "self",
        "name",
        "result",
    ]


def _server_private(module: str, owner: str, attribute: str) -> bool:
    klass = _attribute(module, owner)
    return klass is not None and _sets_in_init(klass, attribute)


HOOKS: Final[dict[str, bool]] = {
    "spawning": inspect.iscoroutinefunction(_SDK_SPAWN),
    "results_checked_by_the_host": _validate_tool_result_switchable(),
    "next_request_within_origin": callable(_SDK_REDIRECT),
    "connection_of": _server_private("mcp.server.session", "ServerSession", "_connection"),
    "open_sessions": _server_private(
        "mcp.server.streamable_http_manager", "StreamableHTTPSessionManager", "_server_instances"
    ),
}
"""Whether each hook's private name exists in the installed SDK (False: its fallback runs)."""

if not SDK_VERSION.startswith(TESTED_WITH):
    logger.info("mcp %s is not a release agent-host was tested with (%s)", SDK_VERSION, ", ".join(TESTED_WITH))
for _hook, _available in HOOKS.items():
    if not _available:
        logger.info("mcp %s: hook %s falls back to its public path (see sdk_hooks)", SDK_VERSION, _hook)


# -- a stdio server's pid ----------------------------------------------------------------------------

Started = Callable[[int], None]
"""Told the pid of the stdio server just started (it leads its own process group)."""

_spawned: ContextVar[Started | None] = ContextVar("agent_host_stdio_spawned", default=None)
_fallback_spawns = anyio.Lock()


async def _spawn_and_report(*args: Any, **kwargs: Any) -> Any:
    process = await _SDK_SPAWN(*args, **kwargs)
    report = _spawned.get()
    if report is not None:
        report(process.pid)
    return process


if HOOKS["spawning"]:
    import mcp.client.stdio

    mcp.client.stdio._create_platform_compatible_process = _spawn_and_report


@asynccontextmanager
async def spawning(started: Started) -> AsyncIterator[None]:
    """Enter the SDK's `stdio_client` inside this block: `started` is told the pid of the server it
    starts (only this block's, not another task's). Hook: the SDK's spawn function, wrapped.
    Fallback: the children of this process that lead their own session and were not there before
    the block (blocks are serialized meanwhile; none are found without `/proc`)."""
    if HOOKS["spawning"]:
        token = _spawned.set(started)
        try:
            yield
        finally:
            _spawned.reset(token)
        return
    async with _fallback_spawns:
        before = session_leaders()
        yield
        for pid in sorted(session_leaders() - before):
            started(pid)


def session_leaders(proc: Path = Path("/proc")) -> set[int]:
    """The children of this process that lead their own session (started with `start_new_session`)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = list(proc.iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state ppid pgrp session
        if len(fields) >= 4 and int(fields[1]) == me and int(fields[3]) == int(entry.name):
            found.add(int(entry.name))
    return found


# -- tool results: checked by the host, not by the SDK -------------------------------------------------


async def _no_check(name: str, result: object) -> None:
    return None


def results_checked_by_the_host(session: ClientSession) -> bool:
    """Stop `session` checking `structuredContent` against output schemas: the host checks every
    tooling kind's results itself (`session.admission.check_result`: `protocol`, naming the path and
    rule), where the SDK would raise a bare `RuntimeError` out of `call_tool`. Hook: the session's
    `validate_tool_result`, replaced on this instance (the SDK has no switch for it). Fallback: the
    SDK keeps checking (a result breaking its schema still fails). True when the hook applied."""
    if not HOOKS["results_checked_by_the_host"]:
        return False
    vars(session)["validate_tool_result"] = _no_check
    return True


# -- redirects of the OAuth flow's own requests ---------------------------------------------------------


def next_request_within_origin(response: httpx2.Response) -> httpx2.Request | None:
    """The request following `response`'s redirect when the MCP transports would follow it (the
    method kept, the same origin or its https upgrade, no userinfo of its own); None otherwise.
    Hook: the SDK's own rule. Fallback: the same rule, written here."""
    if HOOKS["next_request_within_origin"]:
        found: httpx2.Request | None = _SDK_REDIRECT(response)
        return found
    return _within_origin_rule(response)


def _within_origin_rule(response: httpx2.Response) -> httpx2.Request | None:
    following = response.next_request
    if following is None:
        return None
    sent = response.request
    if following.method != sent.method or (following.url.userinfo and following.url.userinfo != sent.url.userinfo):
        return None
    url, location = sent.url, following.url
    same = (url.scheme, url.host, url.port) == (location.scheme, location.host, location.port)
    upgrade = (
        url.host == location.host
        and url.scheme == "http"
        and url.port is None
        and location.scheme == "https"
        and location.port is None
    )
    return following if same or upgrade else None


# -- serve: the SDK's server state ----------------------------------------------------------------------


def connection_of(ctx: ServerRequestContext[Any]) -> Connection:
    """The client connection a request came on (the SDK keeps it on the request's session only).
    Hook: `ServerSession._connection`. No public path in mcp 2.3: `SdkMismatch` without it."""
    connection: Connection | None = getattr(ctx.session, "_connection", None) if HOOKS["connection_of"] else None
    if connection is None:
        raise SdkMismatch(_missing("ServerSession._connection (the connection of a request)"))
    return connection


def open_sessions(manager: StreamableHTTPSessionManager) -> Mapping[str, StreamableHTTPServerTransport]:
    """The sessions `manager` keeps, by id. Hook: `StreamableHTTPSessionManager._server_instances`.
    No public path in mcp 2.3: `SdkMismatch` without it."""
    sessions: Mapping[str, StreamableHTTPServerTransport] | None = (
        getattr(manager, "_server_instances", None) if HOOKS["open_sessions"] else None
    )
    if sessions is None:
        raise SdkMismatch(_missing("StreamableHTTPSessionManager._server_instances (the open HTTP sessions)"))
    return sessions


def _missing(what: str) -> str:
    return (
        f"the installed mcp {SDK_VERSION} has no {what}, which agent-host serve needs; "
        f"install a tested release (mcp {', '.join(v + 'x' for v in TESTED_WITH)})"
    )
