"""MCP failures map to the documented error codes, with messages that say what to do.

One module maps MCP errors on both error planes, with a table keyed on exception type or JSON-RPC code
and operation, never on message text.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import h11
import httpx2
import mcp_types
import pytest
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from agent_host.config import HttpToolingConfig, McpToolingConfig, StdioToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Operation
from agent_host.toolings.mcp.connection import McpConnection
from agent_host.toolings.mcp.errors import (
    LOSS_EXCEPTIONS,
    REQUEST_EXCEPTIONS,
    RPC_ERRORS,
    connect_error,
    map_mcp_error,
    protocol_violation,
    request_error,
)


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


def _conn(tmp_path: Path, config: McpToolingConfig) -> McpConnection:
    return McpConnection(config.named("t", "cfg.toml [tooling.t]"), tmp_path, _ignore, _unused)


def _unused(conn: McpConnection, reason: str) -> None:
    raise AssertionError("not called in these tests")


async def _ignore(message: IncomingMessage) -> None:
    return None


def test_a_missing_command_names_it_and_the_config_key(tmp_path: Path) -> None:
    error = connect_error(FileNotFoundError(2, "No such file"), _conn(tmp_path, StdioToolingConfig(command="mcp-x")))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "command 'mcp-x' was not found" in error.message and "cfg.toml [tooling.t]" in error.message


def test_a_refused_http_connection_inside_an_exception_group_is_found(tmp_path: Path) -> None:
    group = ExceptionGroup(
        "unhandled", [ExceptionGroup("inner", [httpx2.ConnectError("All connection attempts failed")])]
    )
    error = connect_error(group, _conn(tmp_path, HttpToolingConfig(url="http://127.0.0.1:9/mcp")))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "cannot connect to http://127.0.0.1:9/mcp" in error.message and "is the server running?" in error.message


def test_a_closed_handshake_logs_the_servers_stderr_for_the_operator_never_in_the_message(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server's stderr (here a key it prints) never reaches guests or remote clients in error
    messages; it is for the operator's log only, logged once."""
    conn = _conn(tmp_path, StdioToolingConfig(command="srv"))
    conn.stderr_path.write_text("starting\nfatal: bad API key sk-live-1234\n")
    with caplog.at_level(logging.WARNING, logger="agent_host.toolings.mcp.errors"):
        error = connect_error(mcp_error(-32000, "Connection closed"), conn)
        again = connect_error(mcp_error(-32000, "Connection closed"), conn)
    assert error.code is ErrorCode.UNAVAILABLE
    assert "sk-live-1234" not in error.message and "sk-live-1234" not in again.message
    assert error.message == (
        "tooling 't': the server closed the connection during the MCP handshake; its stderr is in the host's log"
    )
    logged = [record.getMessage() for record in caplog.records]
    assert logged == ["tooling 't': its server's stderr ends with:\nstarting\nfatal: bad API key sk-live-1234"]


def test_the_code_depends_on_the_operation_never_on_the_words_describing_it() -> None:
    """The same words under another operation map differently; other words under one operation do not."""
    words = "the read of resource 'u'"
    assert map_mcp_error(mcp_error(-32602), "t", Operation.CALL_TOOL, words, None).code is ErrorCode.INVALID_ARGUMENTS
    assert map_mcp_error(mcp_error(-32602), "t", Operation.READ_RESOURCE, "x", None).code is ErrorCode.NOT_FOUND
    assert map_mcp_error(mcp_error(-32603), "t", Operation.CALL_TOOL, "tools/list", None).code is ErrorCode.TOOL_FAILED


def test_every_table_entry_keeps_its_message() -> None:
    """The messages of the MCP error table, as guests and operators read them."""
    messages = {
        (code, operation): map_mcp_error(
            mcp_error(code, "why"), "demo", operation or Operation.LIST_TOOLS, "WHAT", None
        )
        for code, operation in RPC_ERRORS
    }
    assert {key: (error.code, error.message) for key, error in messages.items()} == {
        (-32000, None): (
            ErrorCode.UNAVAILABLE,
            "tooling 'demo': the server closed the connection during WHAT; the next request reconnects",
        ),
        (-32001, None): (ErrorCode.TIMEOUT, "tooling 'demo': WHAT timed out: why"),
        (-32601, None): (ErrorCode.UNAVAILABLE, "tooling 'demo': the server does not offer WHAT: why"),
        (-32002, Operation.READ_RESOURCE): (
            ErrorCode.NOT_FOUND,
            "tooling 'demo': why (list the resources to see valid URIs)",
        ),
        (-32602, Operation.READ_RESOURCE): (
            ErrorCode.NOT_FOUND,
            "tooling 'demo': why (list the resources to see valid URIs)",
        ),
        (-32602, None): (ErrorCode.INVALID_ARGUMENTS, "tooling 'demo': the server rejected WHAT: why"),
        (-32700, None): (ErrorCode.PROTOCOL, "tooling 'demo': protocol error in WHAT: why"),
        (-32600, None): (ErrorCode.PROTOCOL, "tooling 'demo': protocol error in WHAT: why"),
        (-32603, Operation.CALL_TOOL): (ErrorCode.TOOL_FAILED, "tooling 'demo': the server failed WHAT: why"),
    }
    default = map_mcp_error(mcp_error(-32002, "why"), "demo", Operation.LIST_TOOLS, "WHAT", None)
    assert (default.code, default.message) == (
        ErrorCode.PROTOCOL,
        "tooling 'demo': WHAT failed with MCP error -32002: why",
    )


@pytest.mark.parametrize("lost", [anyio.ClosedResourceError(), anyio.BrokenResourceError(), anyio.EndOfStream()])
def test_a_lost_connection_during_a_request_is_unavailable_and_names_how(lost: Exception) -> None:
    error = request_error(lost, "demo", Operation.LIST_TOOLS, "tools/list", None)
    assert error == ToolingError(
        ErrorCode.UNAVAILABLE,
        f"tooling 'demo': the connection was lost during tools/list ({type(lost).__name__}); the next request "
        "reconnects",
    )
    assert isinstance(lost, LOSS_EXCEPTIONS) and isinstance(lost, REQUEST_EXCEPTIONS)


def test_a_reply_that_does_not_conform_to_mcp_is_protocol() -> None:
    try:
        mcp_types.Tool.model_validate({"name": 3})
    except ValidationError as exc:
        error = request_error(exc, "demo", Operation.LIST_TOOLS, "tools/list", None)
    assert error.code is ErrorCode.PROTOCOL
    assert error.message.startswith("tooling 'demo': the server's reply to tools/list does not conform to MCP: ")


def test_an_exception_no_table_knows_is_a_host_bug() -> None:
    with pytest.raises(TypeError):
        request_error(KeyError("x"), "demo", Operation.LIST_TOOLS, "tools/list", None)


def test_a_protocol_violation_does_not_quote_what_the_server_wrote() -> None:
    """What a server writes outside the protocol stays in the host's log."""
    assert protocol_violation("demo", "tools/list") == ToolingError(
        ErrorCode.PROTOCOL,
        "tooling 'demo': the server broke the protocol during tools/list: it wrote a line that is not JSON-RPC on "
        "stdout (it is in the host's log); the connection was closed and the next request reconnects",
    )


def test_connect_failures_map_by_type_first_matching_leaf_first(tmp_path: Path) -> None:
    conn = _conn(tmp_path, StdioToolingConfig(command="srv"))
    assert connect_error(PermissionError(13, "denied"), conn).message == (
        "tooling 't': cannot start the server: permission denied running 'srv' (cfg.toml [tooling.t])"
    )
    assert connect_error(ConnectionResetError(104, "reset"), conn).message == (
        "tooling 't': cannot connect: [Errno 104] reset (cfg.toml [tooling.t])"
    )
    handshake = connect_error(mcp_error(-32600, "bad hello"), conn)
    assert (handshake.code, handshake.message) == (
        ErrorCode.PROTOCOL,
        "tooling 't': the MCP handshake failed: bad hello",
    )
    broken = connect_error(ValueError("not a version\nmore"), conn)
    assert (broken.code, broken.message) == (
        ErrorCode.PROTOCOL,
        "tooling 't': the server broke the MCP handshake: not a version",
    )
    other = connect_error(RuntimeError("odd"), conn)
    assert (other.code, other.message) == (ErrorCode.UNAVAILABLE, "tooling 't': cannot connect: RuntimeError: odd")
    group = ExceptionGroup("g", [RuntimeError("first"), FileNotFoundError(2, "nope")])
    assert "command 'srv' was not found" in connect_error(group, conn).message


def test_an_http_status_error_names_the_status_and_the_url(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/mcp"
    request = httpx2.Request("POST", url)
    status = httpx2.HTTPStatusError("404", request=request, response=httpx2.Response(404, request=request))
    error = connect_error(status, _conn(tmp_path, HttpToolingConfig(url=url)))
    assert error.message == (
        f"tooling 't': {url} answered HTTP 404; is this the MCP endpoint? (check `url` in cfg.toml [tooling.t])"
    )


@pytest.mark.parametrize(
    "raised",
    [
        h11.LocalProtocolError(f"Illegal header value {b'Bearer sk-SECRET-CR' + bytes([13])!r}"),
        UnicodeEncodeError("ascii", "Bearer sk-SECRET-CR\r", 14, 15, "ordinal not in range(128)"),
    ],
)
def test_a_header_the_host_cannot_send_is_unavailable_and_never_quoted(tmp_path: Path, raised: Exception) -> None:
    """A token with a CR (read from a CRLF file) never reaches the guest, `tools --json` or serve
    clients inside h11's message, and a non-ASCII one is not blamed on the server (`protocol`)."""
    config = HttpToolingConfig(url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer sk-SECRET-CR\r"})
    error = connect_error(ExceptionGroup("unhandled", [raised]), _conn(tmp_path, config))
    assert error.code is ErrorCode.UNAVAILABLE
    assert "sk-SECRET" not in error.message and "check `headers`" in error.message


def test_a_header_or_env_value_in_any_connect_message_is_hidden(tmp_path: Path) -> None:
    config = StdioToolingConfig(command="srv", env={"API_KEY": "sk-live-98765"})
    error = connect_error(RuntimeError("bad key sk-live-98765 given"), _conn(tmp_path, config))
    assert "sk-live-98765" not in error.message and "[hidden]" in error.message
