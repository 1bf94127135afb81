"""MCP toolings: one connection to one MCP server (stdio child or streamable HTTP) through the SDK.

Contract:
- Connected lazily by `connect()` (the first `tooling.get`); concurrent callers share one attempt.
  Each connection has an **owner task** in the bridge's nursery that enters the SDK `Client`, waits
  for its close event and exits the client (the SDK requires enter and exit in one task). Other
  tasks make requests on the entered client concurrently.
- Connecting is bounded by the tooling's `timeout`; a failure raises `ToolingError(unavailable)`
  naming the cause (command not found, connection refused, server exited: with the tail of its
  stderr) and the config key to fix.
- A stdio server's stderr goes to `<log_dir>/<name>.stderr.log`, never to the host's stdout.
  Its environment is the SDK's safe default (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus `env`.
- When the connection is lost (the server exited, the HTTP stream broke), requests in flight fail
  with `unavailable`; the next request reconnects.
- The tool list is cached after connecting (all pages) and re-listed once when a call names a tool
  the cache does not have: a tool that is still missing is `not-found` before any call is sent.
- Lists stop after `MAX_PAGES` pages: a server whose cursor never ends gets `protocol`.
- MCP errors map to codes in `_map_mcp_error`; nothing else in the host knows MCP error numbers.
- The SDK's response cache is off: a read after a change must see the change.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Final, TextIO, TypeVar

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup
from mcp import Client
from mcp.client.session import IncomingMessage, MessageHandlerFnT
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
)
from pydantic import ValidationError

from host.config import ToolingConfig
from host.errors import ErrorCode, ToolingError
from host.toolings.base import CallResult, JsonObject, ProgressFn, ResourceData, ResourceSpec, ToolSpec

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

MAX_PAGES: Final = 1000
"""Most pages read from one paginated list before the server is declared broken."""

CLOSE_GRACE: Final = 8.0
"""Seconds a connection's owner may take to shut down (the SDK's stdio shutdown needs up to ~6 s
for a server that ignores EOF and SIGTERM) before it is cancelled."""

HTTP_CONNECT_TIMEOUT: Final = 30.0
"""Seconds for connect/write/pool on HTTP; mirrors the SDK's defaults."""

HTTP_READ_TIMEOUT: Final = 300.0
"""Seconds between bytes on a held-open HTTP response stream; mirrors the SDK's defaults."""

STDERR_TAIL: Final = 1500
"""Characters of a server's stderr quoted in an error message."""

RESOURCE_NOT_FOUND: Final = -32002
"""The MCP spec's error for an unknown resource URI."""


class McpTooling:
    """A tooling backed by one MCP server connection (see the module docstring)."""

    kind: Final = "mcp"

    def __init__(self, config: ToolingConfig, *, nursery: TaskGroup, log_dir: Path) -> None:
        self._config = config
        self._nursery = nursery
        self._log_dir = log_dir
        self._lock = anyio.Lock()
        self._conn: _Connection | None = None
        self._tools: dict[str, ToolSpec] | None = None
        self._closed = False

    @property
    def name(self) -> str:
        return self._config.name

    @property
    def config(self) -> ToolingConfig:
        return self._config

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.alive

    def _where(self) -> str:
        return f"tooling {self.name!r}"

    async def connect(self) -> None:
        if self.connected:
            return
        async with self._lock:
            if self._closed:
                raise ToolingError(ErrorCode.UNAVAILABLE, f"{self._where()} is shut down")
            if self.connected:
                return
            if self._conn is not None:
                await self._conn.close()
            self._tools = None
            conn = _Connection(self._config, self._log_dir, self._on_message)
            self._nursery.start_soon(conn.own, name=f"mcp-owner-{self.name}")
            with anyio.move_on_after(self._config.timeout):
                await conn.ready.wait()
            if not conn.ready.is_set():
                # Report at once; the owner stops the server in the background (the SDK's stdio
                # shutdown may take seconds for a server that ignores EOF).
                conn.abandon()
                raise ToolingError(
                    ErrorCode.UNAVAILABLE,
                    f"{self._where()} did not complete the MCP handshake within {self._config.timeout:g} s"
                    f"{_stderr_hint(conn)} (raise `timeout` in {self._config.origin} if the server is slow to start)",
                )
            if conn.error is not None:
                raise conn.error
            self._conn = conn
            logger.debug("%s connected (protocol %s)", self._where(), conn.client.protocol_version)

    async def _client(self) -> Client:
        await self.connect()
        assert self._conn is not None
        return self._conn.client

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            logger.warning("%s: error from the server's stream: %s", self._where(), message)
        elif isinstance(message, types.ToolListChangedNotification):
            self._tools = None
        await anyio.lowlevel.checkpoint()

    async def _request(self, what: str, request: Callable[[Client], Awaitable[_T]]) -> _T:
        """Run one request on the connection, mapping every failure to a ToolingError."""
        client = await self._client()
        conn = self._conn
        try:
            return await request(client)
        except MCPError as exc:
            if exc.error.code == CONNECTION_CLOSED and conn is not None:
                conn.lost()
            raise _map_mcp_error(exc, self.name, what, conn) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream) as exc:
            if conn is not None:
                conn.lost()
            raise ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{self._where()}: the connection was lost during {what} ({type(exc).__name__})"
                f"{_stderr_hint(conn)}; the next request reconnects",
            ) from None
        except ValidationError as exc:
            raise ToolingError(
                ErrorCode.PROTOCOL,
                f"{self._where()}: the server's reply to {what} does not conform to MCP: {_first_line(exc)}",
            ) from None

    async def list_tools(self) -> list[ToolSpec]:
        async def fetch(client: Client) -> list[types.Tool]:
            return await _all_pages(self.name, "tools/list", lambda cursor: client.list_tools(cursor=cursor))

        listed = await self._request("tools/list", fetch)
        specs = [_tool_spec(tool) for tool in listed]
        self._tools = {spec.name: spec for spec in specs}
        return specs

    async def _ensure_tool(self, name: str) -> None:
        if self._tools is not None and name in self._tools:
            return
        specs = await self.list_tools()
        if name not in {spec.name for spec in specs}:
            known = ", ".join(spec.name for spec in specs) or "(none)"
            raise ToolingError(
                ErrorCode.NOT_FOUND,
                f"{self._where()} has no tool {name!r}; its tools are: {known}",
            )

    async def call_tool(self, name: str, arguments: JsonObject, progress: ProgressFn | None = None) -> CallResult:
        await self._client()
        await self._ensure_tool(name)

        async def call(client: Client) -> types.CallToolResult:
            return await client.call_tool(name, arguments, progress_callback=progress)

        result = await self._request(f"the call of tool {name!r}", call)
        dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        wire: JsonObject = {"content": dumped.get("content", [])}
        if result.structured_content is not None:
            wire["structuredContent"] = dumped["structuredContent"]
        wire["isError"] = bool(result.is_error)
        return CallResult(wire)

    async def list_resources(self) -> list[ResourceSpec]:
        async def fetch(client: Client) -> list[types.Resource]:
            return await _all_pages(self.name, "resources/list", lambda cursor: client.list_resources(cursor=cursor))

        listed = await self._request("resources/list", fetch)
        return [
            ResourceSpec(uri=str(r.uri), name=r.name, description=r.description or None, mime_type=r.mime_type)
            for r in listed
        ]

    async def read_resource(self, uri: str) -> ResourceData:
        async def read(client: Client) -> types.ReadResourceResult:
            return await client.read_resource(uri)

        result = await self._request(f"the read of resource {uri!r}", read)
        if not result.contents:
            raise ToolingError(ErrorCode.PROTOCOL, f"{self._where()}: the server returned no content for {uri!r}")
        chosen = next((c for c in result.contents if str(c.uri) == uri), result.contents[0])
        if isinstance(chosen, types.TextResourceContents):
            return ResourceData(uri=str(chosen.uri), mime_type=chosen.mime_type, text=chosen.text)
        return ResourceData(uri=str(chosen.uri), mime_type=chosen.mime_type, blob=chosen.blob)

    async def aclose(self) -> None:
        self._closed = True
        if self._conn is not None:
            await self._conn.close()


class _Connection:
    """One entered SDK `Client`, owned by the task running `own`."""

    def __init__(
        self,
        config: ToolingConfig,
        log_dir: Path,
        on_message: MessageHandlerFnT,
    ) -> None:
        self.config = config
        self.stderr_path = log_dir / f"{config.name}.stderr.log"
        self._on_message = on_message
        self._close_requested = anyio.Event()
        self._done = anyio.Event()
        self._scope: anyio.CancelScope | None = None
        self._client: Client | None = None
        self.alive = False
        self.ready = anyio.Event()
        """Set once the handshake finished or failed (then `error` says why)."""
        self.error: ToolingError | None = None

    @property
    def client(self) -> Client:
        assert self._client is not None, "connection used before it was established"
        return self._client

    def lost(self) -> None:
        """Mark the connection unusable and let its owner shut it down."""
        self.alive = False
        self._close_requested.set()

    async def own(self) -> None:
        """The owner task: enter the client, set `ready`, wait for close, exit the client.

        Never raises: a failure before `ready` is stored in `error` for the connecting task; one
        after it means the server went away, which callers have already seen as their own errors.
        """
        try:
            with anyio.CancelScope() as scope:
                self._scope = scope
                async with AsyncExitStack() as stack:
                    self._client = await self._enter(stack)
                    self.alive = True
                    self.ready.set()
                    await self._close_requested.wait()
        except Exception as exc:  # boundary: any connect failure becomes one ToolingError for the caller
            if not self.ready.is_set():
                self.error = _connect_error(exc, self)
            else:
                logger.debug("tooling %r: connection ended with %r", self.config.name, exc)
        finally:
            self.alive = False
            self.ready.set()
            self._done.set()

    def abandon(self) -> None:
        """Stop a connection that is still connecting."""
        self.alive = False
        self._close_requested.set()
        if self._scope is not None:
            self._scope.cancel()

    async def _enter(self, stack: AsyncExitStack) -> Client:
        config = self.config
        if config.transport == "stdio":
            assert config.command is not None
            errlog: TextIO = stack.enter_context(self.stderr_path.open("a", encoding="utf-8"))
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=dict(config.env) or None,
                cwd=config.cwd,
            )
            transport = stdio_client(params, errlog=errlog)
        else:
            assert config.url is not None
            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=dict(config.headers),
                    timeout=httpx2.Timeout(HTTP_CONNECT_TIMEOUT, read=HTTP_READ_TIMEOUT),
                )
            )
            transport = streamable_http_client(config.url, http_client=http)
        client = Client(transport, cache=None, message_handler=self._on_message)
        return await stack.enter_async_context(client)

    async def close(self) -> None:
        """Ask the owner to exit the client and wait for it, cancelling it after `CLOSE_GRACE`."""
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
        try:
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-STDERR_TAIL:].strip()


async def _all_pages(tooling: str, method: str, fetch: Callable[[str | None], Awaitable[Any]]) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await fetch(cursor)
        items.extend(page.tools if method == "tools/list" else page.resources)
        cursor = page.next_cursor
        if not cursor:
            return items
    raise ToolingError(
        ErrorCode.PROTOCOL, f"tooling {tooling!r}: {method} did not end after {MAX_PAGES} pages (cursor never ends)"
    )


def _tool_spec(tool: types.Tool) -> ToolSpec:
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else None
    return ToolSpec(
        name=tool.name,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
    )


def _stderr_hint(conn: _Connection | None) -> str:
    if conn is None or conn.config.transport != "stdio":
        return ""
    tail = conn.stderr_tail()
    return f"; the server's stderr ends with:\n{tail}" if tail else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def _connect_error(exc: BaseException, conn: _Connection) -> ToolingError:
    """Explain why a connection could not be made, for the person who wrote the config."""
    config = conn.config
    where = f"tooling {config.name!r}"
    leaves = _leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, FileNotFoundError):
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot start the server: command {config.command!r} was not found "
                f"(check `command` in {config.origin}, or install it / put it on PATH)",
            )
        if isinstance(leaf, PermissionError):
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot start the server: permission denied running {config.command!r} ({config.origin})",
            )
        if isinstance(leaf, httpx2.ConnectError):
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot connect to {config.url}: {_first_line(leaf) or 'connection refused'}; "
                f"is the server running? (check `url` in {config.origin})",
            )
        if isinstance(leaf, httpx2.HTTPStatusError):
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: {config.url} answered HTTP {leaf.response.status_code}; is this the MCP endpoint? "
                f"(check `url` in {config.origin})",
            )
        if isinstance(leaf, MCPError) and leaf.error.code == CONNECTION_CLOSED:
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: the server closed the connection during the MCP handshake{_stderr_hint(conn)}",
            )
        if isinstance(leaf, OSError):
            return ToolingError(ErrorCode.UNAVAILABLE, f"{where}: cannot connect: {leaf} ({config.origin})")
    leaf = leaves[0]
    if isinstance(leaf, MCPError):
        return ToolingError(
            ErrorCode.PROTOCOL, f"{where}: the MCP handshake failed: {leaf.error.message}{_stderr_hint(conn)}"
        )
    if isinstance(leaf, ValidationError | ValueError):
        return ToolingError(
            ErrorCode.PROTOCOL, f"{where}: the server broke the MCP handshake: {_first_line(leaf)}{_stderr_hint(conn)}"
        )
    logger.debug("tooling %r: unexpected connect failure", config.name, exc_info=exc)
    return ToolingError(
        ErrorCode.UNAVAILABLE,
        f"{where}: cannot connect: {type(leaf).__name__}: {_first_line(leaf)}{_stderr_hint(conn)}",
    )


def _map_mcp_error(exc: MCPError, tooling: str, what: str, conn: _Connection | None) -> ToolingError:
    """The one place MCP error numbers become error codes."""
    code, message = exc.error.code, exc.error.message
    where = f"tooling {tooling!r}"
    data = None
    if code == CONNECTION_CLOSED:
        return ToolingError(
            ErrorCode.UNAVAILABLE,
            f"{where}: the server closed the connection during {what}{_stderr_hint(conn)}; the next request reconnects",
        )
    if code == REQUEST_TIMEOUT:
        return ToolingError(ErrorCode.TIMEOUT, f"{where}: {what} timed out: {message}")
    if code == METHOD_NOT_FOUND:
        return ToolingError(ErrorCode.UNAVAILABLE, f"{where}: the server does not offer {what}: {message}")
    if code in (RESOURCE_NOT_FOUND, INVALID_PARAMS) and what.startswith("the read of resource"):
        # resources/read has one parameter, the URI: an invalid one is a resource that is not there.
        return ToolingError(ErrorCode.NOT_FOUND, f"{where}: {message} (list the resources to see valid URIs)")
    if code == INVALID_PARAMS:
        return ToolingError(ErrorCode.INVALID_ARGUMENTS, f"{where}: the server rejected {what}: {message}")
    if code in (PARSE_ERROR, INVALID_REQUEST):
        return ToolingError(ErrorCode.PROTOCOL, f"{where}: protocol error in {what}: {message}")
    if code == INTERNAL_ERROR and what.startswith("the call of tool"):
        return ToolingError(ErrorCode.TOOL_FAILED, f"{where}: the server failed {what}: {message}")
    return ToolingError(ErrorCode.PROTOCOL, f"{where}: {what} failed with MCP error {code}: {message}", data)
