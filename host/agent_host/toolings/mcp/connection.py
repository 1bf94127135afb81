"""One MCP client connection, owned by one task; how it learns the server went away; its listen stream.

However the server goes away (its output ends, a request fails with `CONNECTION_CLOSED`, the listen
stream drops, a stdio server breaks the protocol), `on_lost(connection, reason)` is called once,
unless the host itself is closing the connection. Closing is bounded (`CLOSE_GRACE`).

Over streamable HTTP the connection owns its `httpx2` client: one pool of HTTP/1.1 connections to
the server, shared by every guest using the tooling (a call in flight holds one connection). At most
`HTTP_IDLE_CONNECTIONS` of them stay open while idle.

The watched receive stream is `mcp_stream`; one listen stream is `mcp_listen`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Final

import anyio
import httpx2
from mcp import Client
from mcp.client import Transport
from mcp.client.session import MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ServerEvent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_host._support.rotation import SERVER_LOG_BOUNDS, LogBounds
from agent_host.config import McpServerConfig
from agent_host.errors import ToolingError
from agent_host.toolings.base import WatchSet
from agent_host.toolings.mcp.auth import host_auth
from agent_host.toolings.mcp.errors import STDERR_TAIL, connect_error, unauthorized
from agent_host.toolings.mcp.listen import Listen
from agent_host.toolings.mcp.requests import ServerCallbacks
from agent_host.toolings.mcp.sdk_hooks import results_checked_by_the_host
from agent_host.toolings.mcp.stdio import stdio_transport
from agent_host.toolings.mcp.stream import offending_input, signal_end
from agent_host.toolings.mcp.tasks import TasksExtension

logger = logging.getLogger(__name__)

CLOSE_GRACE: Final = 8.0
"""Seconds a connection's owner may take to shut down (the SDK's stdio shutdown needs up to ~6 s
for a server that ignores EOF and SIGTERM) before it is cancelled."""

HTTP_CONNECT_TIMEOUT: Final = 30.0
"""Seconds for connect/write/pool on HTTP; mirrors the SDK's defaults."""

HTTP_READ_TIMEOUT: Final = 300.0
"""Seconds between bytes on a held-open HTTP response stream; mirrors the SDK's defaults."""

HTTP_IDLE_CONNECTIONS: Final = 4
"""Idle HTTP connections kept open to one server (httpx's default is 20); surplus ones are closed
when a call ends. The connection pool probes every idle connection with two system calls (is it
still open?) each time a request starts and ends, so after a burst of N concurrent calls every
later request paid 4*N system calls on the event loop, each one a chance for guest threads to take
the GIL: measured, a sequential call after a burst of 16 took 34-38 probes instead of 2 and ~270 us
more CPU on the loop."""

HTTP_MAX_CONNECTIONS: Final = 100
"""HTTP connections open to one server at once, so calls in flight at once (each holds one); more
wait for a free connection. httpx's default."""

OnLost = Callable[["McpConnection", str], None]
OnEvent = Callable[[ServerEvent], None]


class McpConnection:
    """One entered SDK `Client` and everything tied to its lifetime.

    The transport's receive stream is wrapped, so the end of the server's output (a stdio server
    that exited, a closed stream) is noticed at once, not at the next request. Requests that fail
    with `CONNECTION_CLOSED` and a listen stream that drops report the loss with `lost`.
    """

    def __init__(
        self,
        config: McpServerConfig,
        log_dir: Path,
        on_message: MessageHandlerFnT,
        on_lost: OnLost,
        callbacks: ServerCallbacks | None = None,
        *,
        log_bounds: LogBounds = SERVER_LOG_BOUNDS,
    ) -> None:
        """`callbacks` answer the server's requests (elicitation, sampling, roots, logs); none: the SDK's
        defaults. `log_bounds` bound a stdio server's stderr log (`mcp_stdio`)."""
        self._log_bounds = log_bounds
        self._options = callbacks.client_options() if callbacks is not None else {}
        self.config = config
        self.stderr_path = log_dir / f"{config.name}.stderr.log"
        self._on_message = on_message
        self._on_lost = on_lost
        self._close_requested = anyio.Event()
        self._done = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._client: Client | None = None
        self._closing = False
        self._lost_reported = False
        self.alive = False
        self.ready = anyio.Event()
        """Set once the handshake finished or failed (then `error` says why)."""
        self.error: ToolingError | None = None
        self.protocol_violation: str | None = None
        """What the server wrote that is not JSON-RPC, when it did."""
        self.upstream: set[str] = set()
        """2025 era: URIs subscribed with resources/subscribe on this connection."""
        self._listen: Listen | None = None
        self.auth = host_auth(config) if config.transport == "http" else None
        """The OAuth flow of an HTTP tooling with `auth` (its tokens are in its token file)."""

    @property
    def client(self) -> Client:
        assert self._client is not None, "connection used before it was established"
        return self._client

    @property
    def modern(self) -> bool:
        """True on 2026-07-28 connections (server built on SDK 2.x), where change notifications arrive
        on one `subscriptions/listen` stream (see `listen`); on 2025-11-25 connections `upstream`
        holds the URIs subscribed with `resources/subscribe`."""
        return self.client.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def listening(self) -> WatchSet:
        return self._listen.watch if self._listen is not None else WatchSet()

    # -- lifetime --------------------------------------------------------------------------------

    async def own(self) -> None:
        """The owner task, run in the bridge's nursery. Never raises.

        It enters the SDK `Client` (the SDK requires one task to enter and exit it), sets `ready`,
        waits until asked to close, and exits the client. A failure before `ready` is stored in
        `error` (a `ToolingError`) for the task that is connecting; later failures mean the server
        went away.
        """
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    self._client = await self._enter(stack)
                    self.alive = True
                    self.ready.set()
                    await self._close_requested.wait()
                    self._closing = True
                    if self._listen is not None:
                        self._listen.stop()
        except Exception as exc:  # boundary: any connect failure becomes one ToolingError for the caller
            if not self.ready.is_set():
                self.error = self.login_error() or connect_error(exc, self)
            else:
                logger.debug("tooling %r: connection ended with %r", self.config.name, exc)
        finally:
            self.alive = False
            self.ready.set()
            self._done.set()

    async def _enter(self, stack: AsyncExitStack) -> Client:
        """Enter the transport and the client on `stack`.

        A stdio server's stderr goes to `<log_dir>/<name>.stderr.log` (bounded, and what the server
        started ended with it: `mcp_stdio`); its environment is the SDK's
        safe default (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus the tooling's `env`. A server
        object of this process (`transport = "memory"`) is served in process by the SDK's
        `Client(server)`: no transport stream to watch, it cannot go away on its own.
        """
        config = self.config
        mode = "legacy" if config.protocol == "2025-11-25" else "auto"
        tasks = [TasksExtension(config.name, cancel_within=config.timeout)]  # MCP Tasks: see mcp_tasks
        if config.transport == "memory":
            server = Client(
                config.server,  # type: ignore[arg-type]
                cache=None,
                message_handler=self._on_message,
                mode=mode,
                extensions=tasks,
                **self._options,
            )
            return _results_checked_by_the_host(await stack.enter_async_context(server))
        transport: Transport
        if config.transport == "stdio":
            params = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
            )
            transport = stdio_transport(params, self.stderr_path, self._log_bounds)
        else:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(config.headers),
                    auth=self.auth,
                    timeout=httpx2.Timeout(HTTP_CONNECT_TIMEOUT, read=HTTP_READ_TIMEOUT),
                    limits=httpx2.Limits(
                        max_connections=HTTP_MAX_CONNECTIONS, max_keepalive_connections=HTTP_IDLE_CONNECTIONS
                    ),
                )
            )
            transport = streamable_http_client(config.url, http_client=http)
        on_garbage = self._garbage if config.transport == "stdio" else None
        client = Client(
            signal_end(transport, self._stream_ended, on_garbage),
            cache=None,
            message_handler=self._on_message,
            mode=mode,
            extensions=tasks,
            **self._options,
        )
        return _results_checked_by_the_host(await stack.enter_async_context(client))

    def login_error(self) -> ToolingError | None:
        """`unauthorized` when the last request went without a token because only a person can get
        one (`mcp_auth`); None otherwise."""
        failure = self.auth.failure if self.auth is not None else None
        return unauthorized(self.config.name, failure) if failure is not None else None

    def _stream_ended(self) -> None:
        self.lost("the server's output ended (did it exit?)")

    def _garbage(self, exc: Exception) -> None:
        """A stdio server wrote a line that is not JSON-RPC on stdout: it broke the protocol.

        The connection is closed at once (`protocol_violation` says what it wrote), so the requests
        in flight fail with `protocol` instead of waiting for their timeout, and the next request
        reconnects.
        """
        if self.protocol_violation is None:
            self.protocol_violation = offending_input(exc)
        self.lost(f"the server wrote a line that is not JSON-RPC on stdout: {self.protocol_violation}")

    def lost(self, reason: str) -> None:
        """Mark the connection unusable, let its owner shut it down, and report it once through
        `on_lost` (not when the host itself is closing the connection)."""
        was_alive = self.alive
        self.alive = False
        self._close_requested.set()
        if was_alive and not self._closing and not self._lost_reported:
            self._lost_reported = True
            self._on_lost(self, reason)

    def abandon(self) -> None:
        """Stop a connection that is still connecting."""
        self._closing = True
        self.alive = False
        self._close_requested.set()
        if self._scope is not None:
            self._scope.cancel()

    async def close(self) -> None:
        """Ask the owner to exit the client and wait for it, cancelling it after `CLOSE_GRACE`.

        The SDK's own stdio shutdown is shielded and bounded, and kills the process tree.
        """
        self._closing = True
        self.alive = False
        self._close_requested.set()
        with anyio.move_on_after(CLOSE_GRACE, shield=True):
            await self._done.wait()
            return
        if self._scope is not None:
            self._scope.cancel()
        with anyio.move_on_after(CLOSE_GRACE, shield=True):
            await self._done.wait()

    def stderr_tail(self) -> str:
        """The last `STDERR_TAIL` characters (about) of the server's stderr log ("" when none)."""
        try:
            with self.stderr_path.open("rb") as log:
                log.seek(max(0, os.fstat(log.fileno()).st_size - 4 * STDERR_TAIL))
                text = log.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_TAIL:].strip()

    # -- 2026-07-28: the listen stream -------------------------------------------------------------

    async def listen(self, watch: WatchSet, on_event: OnEvent, nursery: anyio.abc.TaskGroup, ack_within: float) -> None:
        """Replace the listen stream by one for `watch` (none when empty); wait for its ack.

        The new stream is acknowledged before the old one stops, so no change falls in between.
        Raises `ToolingError` (via `error_for`) when the server refuses or does not honour it.
        """
        old = self._listen
        if watch:
            new = Listen(self, watch, on_event)
            nursery.start_soon(new.run, name=f"mcp-listen-{self.config.name}")
            with anyio.move_on_after(ack_within):
                await new.acked.wait()
            if not new.acked.is_set() or new.error is not None:
                new.stop()
                raise new.failure(ack_within)
            self._listen = new
        else:
            self._listen = None
        if old is not None:
            old.stop()


def _results_checked_by_the_host(client: Client) -> Client:
    """`client`, its session no longer checking `structuredContent` against output schemas (see
    `sdk_hooks.results_checked_by_the_host`)."""
    results_checked_by_the_host(client.session)
    return client
