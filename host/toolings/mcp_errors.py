"""The one place where MCP failures become `ToolingError`s: error numbers, transport exceptions.

Messages are written for the person who configured the tooling: they name the tooling, what was
being done, the cause, and the config key (`origin`) to change. A stdio server's stderr tail is
quoted when the server went away, because that is where it says why.
"""

from __future__ import annotations

from typing import Final, Protocol

import httpx2
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

from host.config import McpToolingConfig
from host.errors import ErrorCode, ToolingError

RESOURCE_NOT_FOUND: Final = -32002
"""The MCP spec's error for an unknown resource URI."""

STDERR_TAIL: Final = 1500
"""Characters of a server's stderr quoted in an error message."""


class ServerLog(Protocol):
    """Where a connection keeps its server's stderr."""

    @property
    def config(self) -> McpToolingConfig: ...

    def stderr_tail(self) -> str: ...


def stderr_hint(conn: ServerLog | None) -> str:
    if conn is None or conn.config.transport != "stdio":
        return ""
    tail = conn.stderr_tail()
    return f"; the server's stderr ends with:\n{tail}" if tail else ""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def connect_error(exc: BaseException, conn: ServerLog) -> ToolingError:
    """Explain why a connection could not be made."""
    config = conn.config
    where = f"tooling {config.name!r}"
    found = leaves(exc)
    for leaf in found:
        if isinstance(leaf, FileNotFoundError) and config.transport == "stdio":
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot start the server: command {config.command!r} was not found "
                f"(check `command` in {config.origin}, or install it / put it on PATH)",
            )
        if isinstance(leaf, PermissionError) and config.transport == "stdio":
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot start the server: permission denied running {config.command!r} ({config.origin})",
            )
        if isinstance(leaf, httpx2.ConnectError) and config.transport == "http":
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: cannot connect to {config.url}: {first_line(leaf) or 'connection refused'}; "
                f"is the server running? (check `url` in {config.origin})",
            )
        if isinstance(leaf, httpx2.HTTPStatusError) and config.transport == "http":
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: {config.url} answered HTTP {leaf.response.status_code}; is this the MCP endpoint? "
                f"(check `url` in {config.origin})",
            )
        if isinstance(leaf, MCPError) and leaf.error.code == CONNECTION_CLOSED:
            return ToolingError(
                ErrorCode.UNAVAILABLE,
                f"{where}: the server closed the connection during the MCP handshake{stderr_hint(conn)}",
            )
        if isinstance(leaf, OSError):
            return ToolingError(ErrorCode.UNAVAILABLE, f"{where}: cannot connect: {leaf} ({config.origin})")
    leaf = found[0]
    if isinstance(leaf, MCPError):
        return ToolingError(
            ErrorCode.PROTOCOL, f"{where}: the MCP handshake failed: {leaf.error.message}{stderr_hint(conn)}"
        )
    if isinstance(leaf, ValidationError | ValueError):
        return ToolingError(
            ErrorCode.PROTOCOL, f"{where}: the server broke the MCP handshake: {first_line(leaf)}{stderr_hint(conn)}"
        )
    return ToolingError(
        ErrorCode.UNAVAILABLE, f"{where}: cannot connect: {type(leaf).__name__}: {first_line(leaf)}{stderr_hint(conn)}"
    )


def map_mcp_error(exc: MCPError, tooling: str, what: str, conn: ServerLog | None) -> ToolingError:
    """An MCP error response (or the SDK's synthetic ones) as a guest-visible error."""
    code, message = exc.error.code, exc.error.message
    where = f"tooling {tooling!r}"
    if code == CONNECTION_CLOSED:
        return ToolingError(
            ErrorCode.UNAVAILABLE,
            f"{where}: the server closed the connection during {what}{stderr_hint(conn)}; the next request reconnects",
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
    return ToolingError(ErrorCode.PROTOCOL, f"{where}: {what} failed with MCP error {code}: {message}")


def lost_error(tooling: str, what: str, conn: ServerLog | None, cause: BaseException) -> ToolingError:
    return ToolingError(
        ErrorCode.UNAVAILABLE,
        f"tooling {tooling!r}: the connection was lost during {what} ({type(cause).__name__})"
        f"{stderr_hint(conn)}; the next request reconnects",
    )
