"""MCP failures map to the documented error codes, with messages that say what to do.

Provenance: issue 2 failure paths; style.md §8-9 (one module maps MCP errors; both error planes).
"""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError

from host.config import ToolingConfig
from host.errors import ErrorCode
from host.model import Operation
from host.toolings.mcp_connection import McpConnection
from host.toolings.mcp_errors import connect_error, map_mcp_error


def mcp_error(code: int, message: str = "boom") -> MCPError:
    return MCPError(code, message)


@pytest.mark.parametrize(
    ("code", "operation", "expected"),
    [
        (-32000, Operation.CALL_TOOL, ErrorCode.UNAVAILABLE),
        (-32001, Operation.CALL_TOOL, ErrorCode.TIMEOUT),
        (-32601, Operation.LIST_RESOURCES, ErrorCode.UNAVAILABLE),
        (-32602, Operation.CALL_TOOL, ErrorCode.INVALID_ARGUMENTS),
        (-32602, Operation.READ_RESOURCE, ErrorCode.NOT_FOUND),
        (-32002, Operation.READ_RESOURCE, ErrorCode.NOT_FOUND),
        (-32700, Operation.LIST_TOOLS, ErrorCode.PROTOCOL),
        (-32600, Operation.LIST_TOOLS, ErrorCode.PROTOCOL),
        (-32603, Operation.CALL_TOOL, ErrorCode.TOOL_FAILED),
        (-32603, Operation.LIST_TOOLS, ErrorCode.PROTOCOL),
        (-1, Operation.LIST_TOOLS, ErrorCode.PROTOCOL),
    ],
)
def test_mcp_error_codes_map_to_guest_codes(code: int, operation: Operation, expected: ErrorCode) -> None:
    error = map_mcp_error(mcp_error(code), "demo", operation, "the operation", None)
    assert error.code is expected
    assert "tooling 'demo'" in error.message


def _conn(tmp_path: Path, **kwargs: object) -> McpConnection:
    config = ToolingConfig(name="t", origin="cfg.toml [tooling.t]", **kwargs)  # type: ignore[arg-type]
    return McpConnection(config, tmp_path, _ignore, _unused)


def _unused(conn: McpConnection, reason: str) -> None:
    raise AssertionError("not called in these tests")


async def _ignore(message: IncomingMessage) -> None:
    return None


def test_a_missing_command_names_it_and_the_config_key(tmp_path: Path) -> None:
    error = connect_error(FileNotFoundError(2, "No such file"), _conn(tmp_path, command="mcp-x"))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "command 'mcp-x' was not found" in error.message and "cfg.toml [tooling.t]" in error.message


def test_a_refused_http_connection_inside_an_exception_group_is_found(tmp_path: Path) -> None:
    group = ExceptionGroup(
        "unhandled", [ExceptionGroup("inner", [httpx2.ConnectError("All connection attempts failed")])]
    )
    error = connect_error(group, _conn(tmp_path, transport="http", url="http://127.0.0.1:9/mcp"))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "cannot connect to http://127.0.0.1:9/mcp" in error.message and "is the server running?" in error.message


def test_a_closed_handshake_quotes_the_servers_stderr(tmp_path: Path) -> None:
    conn = _conn(tmp_path, command="srv")
    conn.stderr_path.write_text("starting\nfatal: no API key\n")
    error = connect_error(mcp_error(-32000, "Connection closed"), conn)
    assert error.code is ErrorCode.UNAVAILABLE
    assert "fatal: no API key" in error.message
