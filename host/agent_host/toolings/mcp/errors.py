"""The one place where MCP failures become `ToolingError`s: tables keyed on exception type, JSON-RPC
code and operation (in the manner of httpx's `HTTPCORE_EXC_MAP`), never on message text.

`RPC_ERRORS` maps an MCP error response by (code, operation), operation None meaning any;
`REQUEST_ERRORS` other exceptions of a request by type; `CONNECT_ERRORS` / `HANDSHAKE_ERRORS` why a
connection could not be made; `UNAUTHORIZED` a request the OAuth flow sent without a token. Each
`Rule` is a code and a `str.format` template. Messages name the tooling, what was being done, the
cause and the config key to change. What a server wrote outside the protocol (its stderr, a line
on stdout that is not JSON-RPC) is never put in a message: messages reach guests and remote clients
of `serve`, and a server may print a secret there. It goes to the operator's log once (the stderr
tail, when it went away: that is where it says why), and the message says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

import anyio
import h11
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
from pydantic_core import PydanticSerializationError

from agent_host.config import HttpToolingConfig, McpServerConfig, StdioToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Operation

logger = logging.getLogger(__name__)

RESOURCE_NOT_FOUND: Final = -32002
"""The MCP spec's error for an unknown resource URI."""

STDERR_TAIL: Final = 1500
"""Characters of a server's stderr quoted in the operator's log when it fails."""

IN_THE_LOG: Final = "; its stderr is in the host's log"
"""What a message says in place of the server's stderr."""


class ServerLog(Protocol):
    """Where a connection keeps its server's stderr."""

    @property
    def config(self) -> McpServerConfig: ...

    def stderr_tail(self) -> str: ...


@dataclass(frozen=True)
class Rule:
    """How one kind of failure reaches the guest: its code and a message template."""

    code: ErrorCode
    message: str

    def error(self, fields: Mapping[str, object]) -> ToolingError:
        return ToolingError(self.code, self.message.format_map(fields))


class _Fields(dict[str, object]):
    """Template fields; `stderr` (the server's stderr tail, as a hint) is read only when used."""

    def __init__(self, conn: ServerLog | None, **fields: object) -> None:
        super().__init__(fields)
        self._conn = conn

    def __missing__(self, key: str) -> object:
        if key == "stderr":
            self[key] = stderr_hint(self._conn)
            return self[key]
        raise KeyError(key)


_LOST: Final = Rule(
    ErrorCode.UNAVAILABLE,
    "{where}: the connection was lost during {what} ({type}){stderr}; the next request reconnects",
)

RPC_ERRORS: Final[Mapping[tuple[int, Operation | None], Rule]] = {
    (CONNECTION_CLOSED, None): Rule(
        ErrorCode.UNAVAILABLE,
        "{where}: the server closed the connection during {what}{stderr}; the next request reconnects",
    ),
    (REQUEST_TIMEOUT, None): Rule(ErrorCode.TIMEOUT, "{where}: {what} timed out: {message}"),
    (METHOD_NOT_FOUND, None): Rule(ErrorCode.UNAVAILABLE, "{where}: the server does not offer {what}: {message}"),
    # resources/read has one parameter, the URI: an invalid one is a resource that is not there.
    (RESOURCE_NOT_FOUND, Operation.READ_RESOURCE): Rule(
        ErrorCode.NOT_FOUND, "{where}: {message} (list the resources to see valid URIs)"
    ),
    (INVALID_PARAMS, Operation.READ_RESOURCE): Rule(
        ErrorCode.NOT_FOUND, "{where}: {message} (list the resources to see valid URIs)"
    ),
    (INVALID_PARAMS, None): Rule(ErrorCode.INVALID_ARGUMENTS, "{where}: the server rejected {what}: {message}"),
    (PARSE_ERROR, None): Rule(ErrorCode.PROTOCOL, "{where}: protocol error in {what}: {message}"),
    (INVALID_REQUEST, None): Rule(ErrorCode.PROTOCOL, "{where}: protocol error in {what}: {message}"),
    (INTERNAL_ERROR, Operation.CALL_TOOL): Rule(ErrorCode.TOOL_FAILED, "{where}: the server failed {what}: {message}"),
}

RPC_DEFAULT: Final = Rule(ErrorCode.PROTOCOL, "{where}: {what} failed with MCP error {code}: {message}")

PROTOCOL_VIOLATION: Final = Rule(
    ErrorCode.PROTOCOL,
    "{where}: the server broke the protocol during {what}: it wrote a line that is not JSON-RPC on stdout "
    "(it is in the host's log); the connection was closed and the next request reconnects",
)
"""A stdio server wrote garbage on stdout; the connection was closed because of it."""


class Unsendable(ValueError):
    """A message the host could not encode as JSON-RPC text (raised by `mcp_stream`'s write guard
    before anything is written): the one request fails, the connection stays."""


UNENCODABLE: Final = Rule(
    ErrorCode.INVALID_ARGUMENTS, "{where}: the host could not encode {what}; nothing was sent ({first})"
)
"""A request carrying a value no JSON-RPC text can hold: the host's fault or the guest's, never the server's."""

REQUEST_ERRORS: Final[tuple[tuple[type[BaseException], Rule], ...]] = (
    (Unsendable, UNENCODABLE),
    (UnicodeEncodeError, UNENCODABLE),  # raised in the request's own task (the SDK encodes a header)
    (PydanticSerializationError, UNENCODABLE),
    (anyio.ClosedResourceError, _LOST),
    (anyio.BrokenResourceError, _LOST),
    (anyio.EndOfStream, _LOST),
    (
        ValidationError,
        Rule(ErrorCode.PROTOCOL, "{where}: the server's reply to {what} does not conform to MCP: {first}"),
    ),
)

REQUEST_EXCEPTIONS: Final[tuple[type[BaseException], ...]] = (MCPError, *(kind for kind, _ in REQUEST_ERRORS))
"""Every exception type a request failure is mapped from (others are host bugs)."""

LOSS_EXCEPTIONS: Final[tuple[type[BaseException], ...]] = tuple(kind for kind, rule in REQUEST_ERRORS if rule is _LOST)
"""Exception types that mean the connection is gone."""

HEADER_UNSENDABLE: Final = Rule(
    ErrorCode.UNAVAILABLE,
    "{where}: cannot connect: a header value of this tooling cannot be sent over HTTP (a control character "
    "or a character that is not ASCII; check `headers` and the variables they use in {origin})",
)
"""A header the host cannot send (h11 refuses it, or it is not ASCII): the host's fault, never the
server's; the message never quotes the value, which may be a secret."""

CONNECT_ERRORS: Final[tuple[tuple[type[BaseException], int | None, Rule], ...]] = (
    (
        FileNotFoundError,
        None,
        Rule(
            ErrorCode.UNAVAILABLE,
            "{where}: cannot start the server: command {command} was not found "
            "(check `command` in {origin}, or install it / put it on PATH)",
        ),
    ),
    (
        PermissionError,
        None,
        Rule(ErrorCode.UNAVAILABLE, "{where}: cannot start the server: permission denied running {command} ({origin})"),
    ),
    (
        httpx2.ConnectError,
        None,
        Rule(
            ErrorCode.UNAVAILABLE,
            "{where}: cannot connect to {url}: {first}; is the server running? (check `url` in {origin})",
        ),
    ),
    (
        httpx2.HTTPStatusError,
        None,
        Rule(
            ErrorCode.UNAVAILABLE,
            "{where}: {url} answered HTTP {status}; is this the MCP endpoint? (check `url` in {origin})",
        ),
    ),
    (
        MCPError,
        CONNECTION_CLOSED,
        Rule(ErrorCode.UNAVAILABLE, "{where}: the server closed the connection during the MCP handshake{stderr}"),
    ),
    (OSError, None, Rule(ErrorCode.UNAVAILABLE, "{where}: cannot connect: {text} ({origin})")),
    (h11.LocalProtocolError, None, HEADER_UNSENDABLE),
    (UnicodeEncodeError, None, HEADER_UNSENDABLE),
)
"""Why a connection could not be made: the first leaf (in order) matching an entry (in order) wins."""

MISSING_CWD: Final = Rule(
    ErrorCode.UNAVAILABLE,
    "{where}: cannot start the server: its working folder `cwd` {cwd} is not a folder (check `cwd` in {origin})",
)
"""Starting a stdio server failed on its `cwd` (the OS error names that folder, not the command):
before `CONNECT_ERRORS`, whose `FileNotFoundError` would blame the command."""

HANDSHAKE_ERRORS: Final[tuple[tuple[type[BaseException], Rule], ...]] = (
    (MCPError, Rule(ErrorCode.PROTOCOL, "{where}: the MCP handshake failed: {message}{stderr}")),
    # pydantic's ValidationError is a ValueError: a reply that does not conform to MCP.
    (ValueError, Rule(ErrorCode.PROTOCOL, "{where}: the server broke the MCP handshake: {first}{stderr}")),
)
"""For the first leaf, when no `CONNECT_ERRORS` entry matched any."""

UNAUTHORIZED: Final = Rule(
    ErrorCode.UNAUTHORIZED,
    "{where}: the server needs a login ({reason}); run `agent-host auth login {tooling}`, then retry",
)
"""The tooling's OAuth flow could not get a token without a person (see `mcp_auth`); it takes
precedence over whatever the refused request itself failed with."""

CONNECT_DEFAULT: Final = Rule(ErrorCode.UNAVAILABLE, "{where}: cannot connect: {type}: {first}{stderr}")


_logged_tails: dict[str, str] = {}
"""The stderr tail last logged, by tooling (one entry per tooling): the same tail is logged once."""


def stderr_hint(conn: ServerLog | None) -> str:
    """For a message: `IN_THE_LOG` when a stdio server left something on its stderr, which is then
    logged for the operator (once while it stays the same); "" otherwise."""
    if conn is None or conn.config.transport != "stdio":
        return ""
    tail = conn.stderr_tail()
    if not tail:
        return ""
    name = conn.config.name
    if _logged_tails.get(name) != tail:
        _logged_tails[name] = tail
        logger.warning("tooling %r: its server's stderr ends with:\n%s", name, tail)
    return IN_THE_LOG


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def _fields(exc: BaseException, tooling: str, conn: ServerLog | None, **more: object) -> _Fields:
    """The template fields describing `exc` (see the rules' templates)."""
    fields = _Fields(conn, where=f"tooling {tooling!r}", type=type(exc).__name__, first=first_line(exc), text=exc)
    if isinstance(exc, MCPError):
        fields.update(code=exc.error.code, message=exc.error.message)
    if isinstance(exc, httpx2.HTTPStatusError):
        fields["status"] = exc.response.status_code
    fields.update(more)
    return fields


def map_mcp_error(exc: MCPError, tooling: str, operation: Operation, what: str, conn: ServerLog | None) -> ToolingError:
    """An MCP error response (or the SDK's synthetic ones) during `operation` (`what`, for the
    message) as a guest-visible error, by `RPC_ERRORS`."""
    code = exc.error.code
    rule = RPC_ERRORS.get((code, operation)) or RPC_ERRORS.get((code, None)) or RPC_DEFAULT
    return rule.error(_fields(exc, tooling, conn, what=what))


def request_error(
    exc: BaseException, tooling: str, operation: Operation, what: str, conn: ServerLog | None
) -> ToolingError:
    """Any of `REQUEST_EXCEPTIONS` raised during `operation` as a guest-visible error.

    Raises `TypeError` for an exception type the tables do not cover (a host bug).
    """
    if isinstance(exc, MCPError):
        return map_mcp_error(exc, tooling, operation, what, conn)
    for kind, rule in REQUEST_ERRORS:
        if isinstance(exc, kind):
            return rule.error(_fields(exc, tooling, conn, what=what))
    raise TypeError(f"no rule maps {type(exc).__name__} to an error code")


def unencodable(tooling: str, what: str, problem: str) -> ToolingError:
    """`what` could not be encoded (`problem` says why); nothing was sent."""
    return UNENCODABLE.error({"where": f"tooling {tooling!r}", "what": what, "first": problem})


def protocol_violation(tooling: str, what: str) -> ToolingError:
    """The connection was closed because the server wrote a line that is not JSON-RPC on stdout
    (the loss of the connection logs the line for the operator; the message does not quote it)."""
    return PROTOCOL_VIOLATION.error({"where": f"tooling {tooling!r}", "what": what})


def unauthorized(tooling: str, reason: str) -> ToolingError:
    """Only `agent-host auth login TOOLING` can get the tooling a token now (`reason` says why)."""
    return UNAUTHORIZED.error({"where": f"tooling {tooling!r}", "tooling": tooling, "reason": reason})


def _matches(leaf: BaseException, kind: type[BaseException], code: int | None) -> bool:
    if not isinstance(leaf, kind):
        return False
    return code is None or (isinstance(leaf, MCPError) and leaf.error.code == code)


def connect_error(exc: BaseException, conn: ServerLog) -> ToolingError:
    """Explain why a connection could not be made (see `CONNECT_ERRORS`)."""
    config = conn.config
    found = leaves(exc)

    stdio = config if isinstance(config, StdioToolingConfig) else None
    command = stdio.shown_command if stdio is not None else None
    url = config.shown_url if isinstance(config, HttpToolingConfig) else None

    def fields(leaf: BaseException) -> _Fields:
        cwd = stdio.shown_cwd if stdio is not None else None
        return _fields(leaf, config.name, conn, command=command, url=url, origin=config.origin, cwd=cwd)

    if stdio is not None and stdio.cwd is not None:
        for leaf in found:
            if isinstance(leaf, OSError) and leaf.filename is not None and Path(leaf.filename) == stdio.cwd:
                return _redacted(MISSING_CWD.error(fields(leaf)), _secrets(config))
    return _redacted(_explained(found, fields), _secrets(config))


def _explained(found: list[BaseException], fields: Callable[[BaseException], _Fields]) -> ToolingError:
    for leaf in found:
        for kind, code, rule in CONNECT_ERRORS:
            if _matches(leaf, kind, code):
                return rule.error(fields(leaf))
    leaf = found[0]
    for kind, rule in HANDSHAKE_ERRORS:
        if isinstance(leaf, kind):
            return rule.error(fields(leaf))
    return CONNECT_DEFAULT.error(fields(leaf))


SECRET_MINIMUM: Final = 6
"""Characters a header or environment value needs to be hidden from messages (shorter ones, like
`1`, would hide ordinary words)."""


def _secrets(config: McpServerConfig) -> list[str]:
    """The values of the tooling's headers and environment (each may hold a secret), as they are and
    as Python quotes them (escapes, bytes), longest first."""
    values = [*getattr(config, "headers", {}).values(), *getattr(config, "env", {}).values()]
    found: set[str] = set()
    for value in values:
        if isinstance(value, str) and len(value) >= SECRET_MINIMUM:
            found.update({value, repr(value)[1:-1], repr(value.encode("utf-8", "replace"))[2:-1]})
    return sorted(found, key=len, reverse=True)


def _redacted(error: ToolingError, secrets: list[str]) -> ToolingError:
    """`error` with every secret in its message and data replaced by `[hidden]`."""
    message, data = error.message, error.data
    for secret in secrets:
        message = message.replace(secret, "[hidden]")
        data = data.replace(secret, "[hidden]") if data is not None else None
    if (message, data) == (error.message, error.data):
        return error
    return ToolingError(error.code, message, data)
