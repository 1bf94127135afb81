"""MCP toolings: one MCP server (stdio child or streamable HTTP) behind the tooling protocol.

Connected lazily, by `McpTooling.connect`; see `mcp_connection` for the connection's lifetime and
loss detection. When the connection is lost, requests in flight fail with `unavailable`
(`protocol` when the server broke the protocol) and the next request reconnects; a request the host
cannot encode fails alone with `invalid-arguments` and loses nothing (`mcp_stream.WriteGuard`); failed attempts
back off exponentially. While anything is watched the tooling reconnects by itself. The SDK's
response cache is off: a read after a change must see the change.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import ClassVar, Final, TypeVar

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated, ServerEvent, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from agent_host._support import strict_json
from agent_host._support.rotation import SERVER_LOG_BOUNDS, LogBounds
from agent_host.config import McpToolingConfig, SamplingProvider
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, JsonObject, Operation, ResourceData, ResourceSpec, ToolSpec
from agent_host.toolings.base import Change, ConfiguredTooling, ProgressFn, WatchSet, connect_timed_out
from agent_host.toolings.mcp import wire as mcp_wire
from agent_host.toolings.mcp.connection import McpConnection
from agent_host.toolings.mcp.errors import (
    LOSS_EXCEPTIONS,
    REQUEST_EXCEPTIONS,
    protocol_violation,
    request_error,
    stderr_hint,
    unencodable,
)
from agent_host.toolings.mcp.requests import ServerCallbacks, refused
from agent_host.toolings.mcp.tasks_in_core import call_as_task
from agent_host.toolings.server_requests import DeclineAll, ServerRequests

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

RECONNECT_FIRST: Final = 0.1
"""Seconds before the first retry after a failed attempt (and before an automatic reconnection)."""


class McpTooling(ConfiguredTooling):
    """A tooling backed by one MCP server connection."""

    kind: ClassVar[str] = "mcp"
    _config: McpToolingConfig

    def __init__(
        self,
        config: McpToolingConfig,
        *,
        nursery: TaskGroup,
        log_dir: Path,
        requests: ServerRequests | None = None,
        log_bounds: LogBounds = SERVER_LOG_BOUNDS,
    ) -> None:
        super().__init__(config)
        self._log_bounds = log_bounds
        answered = requests if requests is not None else DeclineAll()
        self._callbacks = ServerCallbacks(
            self.name, answered, sampling_tools=isinstance(config.sampling, SamplingProvider)
        )
        self._nursery = nursery
        self._log_dir = log_dir
        self._lock = anyio.Lock()
        self._sync_lock = anyio.Lock()
        self._conn: McpConnection | None = None
        self._tools: dict[str, ToolSpec] | None = None
        self._watch = WatchSet()
        self._reconnecting = False
        self._closed = False
        self._failures = 0
        self._retry_at = 0.0
        self._last_failure: ToolingError | None = None

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.alive

    # -- connection --------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect unless connected (the first `tooling.get` does); concurrent callers share one attempt,
        bounded by the tooling's `connect_timeout`.

        A failure raises `ToolingError(unavailable)` naming the cause (command not found, connection
        refused, server exited: with the tail of its stderr) and the config key to fix. A server
        slow to stop does not delay the error: it is stopped in the background. After N consecutive
        failures the next attempt waits `RECONNECT_FIRST * 2**(N-1)` seconds, capped by the
        tooling's `max_backoff`; requests in that window fail at once with `unavailable`, saying
        when the next attempt is. After `aclose` it raises `unavailable`.
        """
        if self.connected:
            return
        async with self._lock:
            if self._closed:
                raise ToolingError(ErrorCode.UNAVAILABLE, f"{self._where()} is shut down")
            if self.connected:
                return
            now = anyio.current_time()
            if self._failures and now < self._retry_at and self._last_failure is not None:
                raise ToolingError(
                    ErrorCode.UNAVAILABLE,
                    f"{self._where()} is unreachable ({_attempts(self._failures)}); the next attempt is in "
                    f"{self._retry_at - now:.1f} s. Last failure: {self._last_failure.message}",
                )
            try:
                await self._open()
            except ToolingError as exc:
                self._failures += 1
                delay = min(RECONNECT_FIRST * 2 ** (self._failures - 1), self._config.max_backoff)
                self._retry_at = anyio.current_time() + delay
                self._last_failure = exc.detached()
                raise
            self._failures = 0

    async def _open(self) -> None:
        """One connection attempt (the lock is held)."""
        if self._conn is not None:
            await self._conn.close()
        self._tools = None
        conn = McpConnection(
            self._config, self._log_dir, self._on_message, self._on_lost, self._callbacks, log_bounds=self._log_bounds
        )
        self._nursery.start_soon(conn.own, name=f"mcp-owner-{self.name}")
        try:
            with anyio.move_on_after(self._config.connect_timeout):
                await conn.ready.wait()
        except BaseException:  # the caller stopped (a signal, its deadline): no one waits for this server
            conn.abandon()
            raise
        if not conn.ready.is_set():
            conn.abandon()  # report at once; the owner stops the server in the background
            raise connect_timed_out(self._config, stderr_hint(conn))
        if conn.error is not None:
            raise conn.error
        self._conn = conn
        logger.debug("%s connected (protocol %s)", self._where(), conn.client.protocol_version)

    def _on_lost(self, conn: McpConnection, reason: str) -> None:
        """Log the loss of the current connection and, while anything is watched, start `_reconnect`."""
        if conn is not self._conn or self._closed:
            return
        logger.warning("%s: connection lost: %s", self._where(), reason)
        if self._watch and not self._reconnecting:
            self._reconnecting = True
            self._nursery.start_soon(self._reconnect, name=f"mcp-reconnect-{self.name}")

    async def _reconnect(self) -> None:
        """Reconnect while anything is watched, on the backoff schedule of `connect`; then re-establish
        the upstream subscriptions and report `Change("reconnected")` so subscribers get fresh state."""
        try:
            while self._watch and not self._closed:
                await anyio.sleep(max(self._retry_at - anyio.current_time(), RECONNECT_FIRST))
                try:
                    await self._sync_watch()
                except ToolingError as exc:
                    logger.info("%s: reconnecting failed: %s", self._where(), exc)
                    continue
                logger.info("%s: reconnected; subscriptions restored", self._where())
                self._changed(Change("reconnected"))
                return
        finally:
            self._reconnecting = False

    async def _client(self) -> Client:
        await self.connect()
        assert self._conn is not None
        return self._conn.client

    async def _request(self, operation: Operation, what: str, request: Callable[[Client], Awaitable[_T]]) -> _T:
        """Run one request of `operation` (`what`, for messages) on the connection, mapping every
        failure to a ToolingError by the tables of `mcp_errors`; a lost connection is marked lost."""
        client = await self._client()
        conn = self._conn
        try:
            return await request(client)
        except REQUEST_EXCEPTIONS as exc:
            if conn is not None:
                if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
                    conn.lost(f"{what} failed: connection closed")
                    if conn.protocol_violation is not None:
                        raise protocol_violation(self.name, what) from None
                elif isinstance(exc, LOSS_EXCEPTIONS):
                    conn.lost(f"{what} failed: {type(exc).__name__}")
            raise (conn.login_error() if conn is not None else None) or request_error(
                exc, self.name, operation, what, conn
            ) from None

    # -- tools and resources -----------------------------------------------------------------------

    async def list_tools(self) -> list[ToolSpec]:
        """Every tool (all pages, up to `mcp_wire.MAX_PAGES`); the list is cached until `tools/list_changed`."""

        async def fetch(client: Client) -> list[ToolSpec]:
            return await mcp_wire.list_tools(self.name, client)

        specs = await self._request(Operation.LIST_TOOLS, "tools/list", fetch)
        self._tools = {spec.name: spec for spec in specs}
        return specs

    def cached_tool_spec(self, name: str) -> ToolSpec | None:
        """The tool `name` from the last listing; never for a tooling with `pin_tools`: the definition
        checked against the pins is the one the server gives now (a listing per call), so that a tool
        redescribed while a run goes on is denied from then on, whether or not the server notified
        the change (a server changing its tools may well not)."""
        return None if self._config.pin_tools else self._listed(name)

    def _listed(self, name: str) -> ToolSpec | None:
        tools = self._tools
        return tools.get(name) if tools is not None else None

    async def call_tool(
        self, name: str, arguments: JsonObject, progress: ProgressFn | None = None, *, agent: str = ""
    ) -> CallResult:
        """Call tool `name`, reporting its progress to `progress`.

        A tool the cached list lacks makes it re-list once: a tool still missing is `not-found`
        before any call is sent. Arguments outside `strict_json`'s rules are `invalid-arguments`,
        nothing sent.
        """
        what = f"the call of tool {name!r}"
        try:
            strict_json.dumps(arguments)  # what the SDK could not serialize fails here, for this call alone
        except strict_json.JsonTextError as exc:
            raise unencodable(self.name, what, str(exc)) from None
        client = await self._client()
        spec = self._listed(name) or await self.tool_spec(name)  # the admission has just listed a pinned one
        as_task = self._as_task(client, spec, asynchronous=progress is not None)

        sink = progress

        async def report(progress: float, total: float | None, message: str | None) -> None:
            if sink is not None:
                sink(progress, total, message)

        async def call(client: Client) -> types.CallToolResult:
            if as_task:
                return await call_as_task(
                    client.session, self.name, name, arguments, cancel_within=self._config.timeout
                )
            # no progress token when no one listens (a blocking call): the request is the SDK's own
            return await client.call_tool(name, arguments, progress_callback=report if sink is not None else None)

        with self._callbacks.calling(agent) as during:
            try:
                answer = await self._request(Operation.CALL_TOOL, what, call)
            except ToolingError as exc:
                raise refused(self.name, name, during, exc) from None
        result = mcp_wire.call_result(answer)
        if result.is_error and during.refused:
            raise refused(self.name, name, during, ToolingError(ErrorCode.TOOL_FAILED, result.text() or "", None))
        return result

    def _as_task(self, client: Client, spec: ToolSpec, *, asynchronous: bool) -> bool:
        """Whether a call of `spec` runs as a 2025-11-25 task (`tasks_in_core`): on such a
        connection, when the server runs `tools/call` as tasks and the tool requires it, or allows it
        and the call is asynchronous (2026-07-28 tasks are the server's choice: `mcp_tasks`)."""
        conn = self._conn
        if conn is None or conn.modern or spec.task_support not in ("required", "optional"):
            return False
        tasks = client.server_capabilities.tasks if client.server_capabilities is not None else None
        offered = tasks is not None and tasks.requests is not None and tasks.requests.tools is not None
        return offered and (spec.task_support == "required" or asynchronous)

    async def list_resources(self) -> list[ResourceSpec]:
        """Every resource (all pages, up to `mcp_wire.MAX_PAGES`)."""

        async def fetch(client: Client) -> list[ResourceSpec]:
            return await mcp_wire.list_resources(self.name, client)

        return await self._request(Operation.LIST_RESOURCES, "resources/list", fetch)

    async def read_resource(self, uri: str) -> ResourceData:
        async def read(client: Client) -> types.ReadResourceResult:
            return await client.read_resource(uri)

        result = await self._request(Operation.READ_RESOURCE, f"the read of resource {uri!r}", read)
        return mcp_wire.resource_data(self.name, uri, result)

    # -- watching ----------------------------------------------------------------------------------

    def _changed(self, change: Change) -> None:
        """Drop the cached tool list on a tools change, then report `change`."""
        if change.kind == "tools":
            self._tools = None
        super()._changed(change)

    async def _on_message(self, message: IncomingMessage) -> None:
        """2025 era: change notifications arrive as plain server notifications."""
        if isinstance(message, Exception):
            logger.debug("%s: error on the server's stream: %r", self._where(), message)
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._changed(Change("resource", str(message.params.uri)))
        elif isinstance(message, types.ResourceListChangedNotification):
            self._changed(Change("resources"))
        elif isinstance(message, types.ToolListChangedNotification):
            self._changed(Change("tools"))
        await anyio.lowlevel.checkpoint()

    def _on_listen_event(self, event: ServerEvent) -> None:
        """2026 era: change notifications arrive on the listen stream."""
        if isinstance(event, ResourceUpdated):
            self._changed(Change("resource", event.uri))
        elif isinstance(event, ResourcesListChanged):
            self._changed(Change("resources"))
        elif isinstance(event, ToolsListChanged):
            self._changed(Change("tools"))

    async def set_watch(self, watch: WatchSet) -> None:
        """Watch upstream exactly what `watch` holds, in either protocol era.

        On 2026-07-28 connections one `subscriptions/listen` stream carries the union of what is
        watched (replaced when it changes); on 2025-11-25 connections each URI is subscribed with
        `resources/subscribe` once and list changes need no request. A server without the needed
        capability gets `unavailable`; after a failure the previous set stays the one to watch.
        """
        previous, self._watch = self._watch, watch
        try:
            await self._sync_watch()
        except BaseException:
            self._watch = previous
            raise

    async def _sync_watch(self) -> None:
        """Bring the connection's upstream subscriptions in line with `_watch`."""
        async with self._sync_lock:
            await self.connect()
            conn = self._conn
            assert conn is not None
            watch = self._watch
            if conn.modern:
                if conn.listening != watch:
                    await conn.listen(watch, self._on_listen_event, self._nursery, self._config.timeout)
            else:
                await self._sync_legacy(conn, watch)

    async def _sync_legacy(self, conn: McpConnection, watch: WatchSet) -> None:
        capabilities = conn.client.server_capabilities
        resources, tools = capabilities.resources, capabilities.tools
        missing = []
        if watch.uris - conn.upstream and not (resources and resources.subscribe):
            missing.append("resource subscriptions (capability resources.subscribe)")
        if watch.resource_list and not (resources and resources.list_changed):
            missing.append("resource list changes (capability resources.listChanged)")
        if watch.tool_list and not (tools and tools.list_changed):
            missing.append("tool list changes (capability tools.listChanged)")
        if missing:
            raise ToolingError(
                ErrorCode.UNAVAILABLE, f"{self._where()}: the server cannot notify {' or '.join(missing)}"
            )
        for uri in sorted(watch.uris - conn.upstream):
            await self._request(
                Operation.SUBSCRIBE_RESOURCE, f"resources/subscribe of {uri!r}", mcp_wire.legacy("subscribe", uri)
            )
            conn.upstream.add(uri)
        for uri in sorted(conn.upstream - watch.uris):
            conn.upstream.discard(uri)
            await self._request(
                Operation.UNSUBSCRIBE_RESOURCE, f"resources/unsubscribe of {uri!r}", mcp_wire.legacy("unsubscribe", uri)
            )

    async def aclose(self) -> None:
        self._closed = True
        self._watch = WatchSet()
        if self._conn is not None:
            await self._conn.close()


def _attempts(count: int) -> str:
    return "1 failed attempt" if count == 1 else f"{count} failed attempts"
