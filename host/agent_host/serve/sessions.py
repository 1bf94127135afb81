"""`SessionLimits`: ASGI middleware bounding the MCP sessions `agent-host serve` keeps over HTTP.

A request to the MCP endpoint that may open a session (a POST without `Mcp-Session-Id` that the SDK
routes to its 2025-11-25 path: no `MCP-Protocol-Version` header, or a handshake version) takes one of
its client's slots (`clients.ClientSlots`) while it is answered; when it opened a session (an answer
below 400 carrying `Mcp-Session-Id`), the slot is that session's for as long as the SDK's session
manager keeps it (until the client's DELETE, `[serve] session_idle` seconds without a request in
flight, or a crash). Beyond `[serve] max_sessions_per_client` such a request is refused with HTTP 429,
beyond `[serve] max_sessions` (every client together) with HTTP 503, before the SDK sees it: both are
JSON-RPC errors coded as `limit-exceeded` (`mcp_server.ERROR_CODES`), logged once per interval.
A session's GET stream is closed `[serve] listen_idle` seconds after it opened (`_expiring`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import ErrorData, JSONRPCError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_host.config import ServeSettings
from agent_host.errors import ErrorCode
from agent_host.serve.clients import ClientSlots, client_of_scope
from agent_host.serve.limit_log import LimitLog
from agent_host.serve.mcp_server import ERROR_CODES
from agent_host.toolings.mcp.sdk_hooks import open_sessions

logger = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
"""The MCP endpoint."""

_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode("ascii")
_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")


def _refusal(status: int, message: str) -> Response:
    code = ERROR_CODES[ErrorCode.LIMIT_EXCEEDED.value]
    body = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
    return Response(
        body.model_dump_json(by_alias=True, exclude_unset=True), status_code=status, media_type="application/json"
    )


class SessionLimits:
    """See the module docstring. `manager` gives the SDK's session manager (made with the app)."""

    def __init__(
        self,
        app: ASGIApp,
        manager: Callable[[], StreamableHTTPSessionManager],
        slots: ClientSlots,
        settings: ServeSettings,
        log: LimitLog,
    ) -> None:
        self._app = app
        self._manager = manager
        self._slots = slots
        self._settings = settings
        self._log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = _get_stream_of(scope)
        if session_id is not None:
            await self._expiring(session_id, scope, receive, send)
            return
        if not _may_open_session(scope):
            await self._app(scope, receive, send)
            return
        client = client_of_scope(scope)
        refused = self._refused(client)
        if refused is not None:
            await refused(scope, receive, send)
            return
        pending = object()
        self._slots.take(client, pending, "session")
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                opened.extend(
                    v.decode("latin-1") for k, v in message.get("headers", ()) if k.lower() == _SESSION_HEADER
                )
            await send(message)

        try:
            await self._app(scope, receive, watch)
        finally:
            if opened:
                sessions = open_sessions(self._manager())
                session_id = opened[0]
                self._slots.replace(client, pending, ("session", session_id), lambda: session_id in sessions)
            else:
                self._slots.release(client, pending)

    async def _expiring(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve the GET stream of session `session_id`, closed after `listen_idle` seconds (the SDK's
        client opens it again at once): an open GET stream counts as a request in flight, so without
        this a session whose client went quiet would outlive `session_idle` while its connection lasts."""

        async def expire() -> None:
            await anyio.sleep(self._settings.listen_idle)
            transport = open_sessions(self._manager()).get(session_id)
            if transport is not None:
                transport.close_standalone_sse_stream()

        async with anyio.create_task_group() as tg:
            tg.start_soon(expire)
            await self._app(scope, receive, send)
            tg.cancel_scope.cancel()

    def _refused(self, client: str) -> Response | None:
        settings = self._settings
        held = self._slots.held(client)
        if held >= settings.max_sessions_per_client:
            message = (
                f"limit-exceeded: client {client} holds {held} MCP sessions and listen streams "
                f"([serve] max_sessions_per_client = {settings.max_sessions_per_client}); end one (DELETE the "
                f"session) or let it expire ([serve] session_idle = {settings.session_idle:g} s)"
            )
            self._log.reached("max_sessions_per_client", f"refused a new MCP session: {message}")
            return _refusal(429, message)
        open_now = self._slots.count("session")
        if open_now >= settings.max_sessions:
            message = (
                f"limit-exceeded: {open_now} MCP sessions are open ([serve] max_sessions = {settings.max_sessions});"
                " try again later"
            )
            self._log.reached("max_sessions", f"refused a new MCP session: {message}")
            return _refusal(503, message)
        return None


def _get_stream_of(scope: Scope) -> str | None:
    """The session whose GET stream this request asks for, if it is one."""
    if scope["type"] != "http" or scope["path"] != MCP_PATH or scope["method"] != "GET":
        return None
    session = dict(scope["headers"]).get(_SESSION_HEADER)
    return session.decode("latin-1") if session is not None else None


def _may_open_session(scope: Scope) -> bool:
    """Whether the SDK may open a session for this request (see the module docstring)."""
    if scope["type"] != "http" or scope["path"] != MCP_PATH or scope["method"] != "POST":
        return False
    headers = dict(scope["headers"])
    if _SESSION_HEADER in headers:
        return False
    version = headers.get(_VERSION_HEADER)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
