"""`agent-host serve` over streamable HTTP: the MCP endpoint `/mcp`, the tool API, `GET /healthz`.

Safe by default: it binds 127.0.0.1 unless told otherwise (beyond loopback needs a token); with
`[serve] tokens` every request but `/healthz` needs `Authorization: Bearer TOKEN` (constant-time) or
gets 401; a `Host`/`Origin` that `allowed_hosts` refuses gets 421/403 (`hosts`); bodies over
`max_body` get 413; no CORS. Connections are capped and every wait for a client is timed
(`connections`); MCP sessions are bounded per client and in all (`sessions`). An address it cannot
listen on is a `UsageError`. At SIGINT/SIGTERM the catalog answers calls past `grace` `cancelled`
(503 JSON) before uvicorn's own cut-off (`ANSWER_MARGIN` later). The socket is made with IPPROTO_TCP
so asyncio turns Nagle off (a hand-bound socket without it cost ~45 ms per call).
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import math
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_host.config import ServeSettings
from agent_host.config.models import split_bind
from agent_host.errors import UsageError
from agent_host.serve import tool_api, uvicorn_hooks
from agent_host.serve.agents import STOP_WAIT
from agent_host.serve.banner import banner
from agent_host.serve.catalog import Catalog
from agent_host.serve.clients import CLIENT_SCOPE_KEY
from agent_host.serve.connections import (
    ACCEPT_BATCH,
    MAX_HEADER_BYTES,
    Bounds,
    ConnectionGuard,
    fit_open_files,
    guarded_protocol,
)
from agent_host.serve.hosts import HostCheck, HostRules
from agent_host.serve.metrics import CONTENT_TYPE as METRICS_TYPE
from agent_host.serve.sessions import MCP_PATH, SessionLimits
from agent_host.serve.trace_headers import TraceHeaders

OPEN_PATHS: Final = frozenset({"/healthz"})
"""Paths served without a token."""


TWO_AUTHORIZATIONS: Final = "the request has more than one Authorization header: send one, Authorization: Bearer TOKEN"
"""Why a request with several `Authorization` headers is refused (each part of the server could read
another one of them)."""


class BearerTokens:
    """ASGI middleware: requests outside `OPEN_PATHS` need `Authorization: Bearer` with one of `tokens`;
    a request with more than one `Authorization` header is refused (400 `denied`) on every path."""

    def __init__(self, app: ASGIApp, tokens: Sequence[str]) -> None:
        self._app = app
        self._tokens = [token.encode() for token in tokens]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and sum(1 for name, _ in scope["headers"] if name == b"authorization") > 1:
            body = {"error": {"code": "denied", "message": TWO_AUTHORIZATIONS}}
            await JSONResponse(body, status_code=400)(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS and not self._allowed(scope):
            body = {
                "error": {"code": "denied", "message": "a valid bearer token is required (Authorization: Bearer ...)"}
            }
            response = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        """Whether the request carries a known token; the client is then named by the token's place
        in the list (`clients.CLIENT_SCOPE_KEY`)."""
        header = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = header.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        matched: int | None = None
        for index, known in enumerate(self._tokens):  # every token compared, in constant time each
            if hmac.compare_digest(token.strip(), known) and matched is None:
                matched = index
        if matched is None:
            return False
        scope[CLIENT_SCOPE_KEY] = f"token {matched + 1}"
        return True


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def _metrics(catalog: Catalog) -> Route:
    async def metrics(request: Request) -> Response:
        return Response(catalog.metrics.render(), media_type=METRICS_TYPE)

    return Route("/metrics", metrics, methods=["GET"])


def build_app(server: Server[Any], catalog: Catalog, settings: ServeSettings, bind_host: str) -> ASGIApp:
    """The HTTP application: MCP at `/mcp`, the tool API (`tool_api`), `/healthz`, with the checks of
    the module docstring (the Host and Origin checks are `hosts.HostCheck`'s, so the SDK's are off;
    it still checks a POST's Content-Type)."""
    # Host and Origin: `hosts.HostCheck`, outermost, on every path; the SDK's lists cannot hold its rules
    # (see `hosts`), and turned on beside it they would refuse what it answers (a Host in capitals).
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=bind_host,
        transport_security=security,
        max_request_body_size=settings.max_body,
        session_idle_timeout=settings.session_idle,
        max_sessions=settings.max_sessions,
        custom_starlette_routes=[
            Route("/healthz", _healthz, methods=["GET"]),
            _metrics(catalog),
            *tool_api.routes(catalog, security, settings.max_body),
        ],
    )
    app = TraceHeaders(app, MCP_PATH, settings.max_body)  # a `traceparent` header continues the client's trace
    app = SessionLimits(app, lambda: server.session_manager, catalog.slots, settings, catalog.limit_log)
    if settings.tokens:
        app = BearerTokens(app, settings.tokens)
    return HostCheck(app, HostRules.of(bind_host, settings.allowed_hosts))


LISTEN_ERRORS: Final[Mapping[int, str]] = {
    errno.EADDRINUSE: "the address is in use (another process listens there)",
    errno.EADDRNOTAVAIL: "no interface of this machine has that address",
    errno.EACCES: "permission denied (a port below 1024 needs privileges)",
}
"""What a failure to listen means, by errno (any other: the system's own words)."""

ANSWER_MARGIN: Final = 2.0
"""Seconds the answers of calls cancelled at the end of the grace have to be written."""


def per_client_share(per_client: int, configured: int, cap: int) -> int:
    """`max_connections_per_client` for a connection cap lowered from `configured` to `cap` (to fit
    the open-file limit): the same share of it, at least 1."""
    return per_client if cap >= configured else max(1, per_client * cap // configured)


class GracefulStop:
    """Ends a `serve_http` run as a signal ends uvicorn's: `__call__` (on the server's loop) stops
    accepting, lets calls in flight finish within `[serve] grace`, then returns from `serve_http`."""

    def __init__(self) -> None:
        self.requested = False
        self._server: uvicorn.Server | None = None

    def serving(self, server: uvicorn.Server) -> None:
        """`server` is the one to stop (asked at once when a stop came before it started)."""
        self._server = server
        server.should_exit = self.requested

    def __call__(self) -> None:
        self.requested = True
        if self._server is not None:
            self._server.should_exit = True


async def serve_http(
    server: Server[Any], catalog: Catalog, settings: ServeSettings, address: str, stop: GracefulStop | None = None
) -> None:
    """Serve `server` (and `catalog` through the tool API) at `address` (HOST:PORT) until cancelled
    or `stop` is called; the URL, what is offered and the tool API's URLs are printed on stderr
    first (`banner`)."""
    host, port = split_bind(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
            sock.listen(ACCEPT_BATCH)  # before the URL is printed: a client may connect at once (uvicorn accepts later)
        except OSError as exc:
            why = LISTEN_ERRORS.get(exc.errno or 0, exc.strerror or str(exc))
            raise UsageError(f"cannot listen on {address}: {why}") from None
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        cap = fit_open_files(settings.max_connections)
        guard = ConnectionGuard(
            Bounds(
                cap,
                settings.idle_timeout,
                settings.header_timeout,
                settings.body_timeout,
                per_client_share(settings.max_connections_per_client, settings.max_connections, cap),
                settings.send_timeout,
                settings.min_send_rate,
                settings.max_pending_answers,
            )
        )
        config = uvicorn.Config(
            build_app(server, catalog, settings, host),
            http=guarded_protocol(guard),
            ws="none",
            backlog=ACCEPT_BATCH,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
            # uvicorn's own idle timer, unset after each response (the `Phase.IDLE` timer replaces it); where
            # uvicorn_hooks cannot unset it, it closes no connection sooner than `idle_timeout`.
            timeout_keep_alive=math.ceil(settings.idle_timeout),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(settings.grace + STOP_WAIT + ANSWER_MARGIN),
        )
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(guard.accept_failed)
        agents, toolings = catalog.offered()
        for line in banner(f"http://{shown}:{sock.getsockname()[1]}", agents, toolings):
            sys.stderr.write(f"{line}\n")
        sys.stderr.flush()
        try:
            uv = uvicorn_hooks.server(config, lambda: catalog.stopping(settings.grace))
            if stop is not None:
                stop.serving(uv)
            async with catalog.running():
                await uv.serve(sockets=[sock])
        finally:
            loop.set_exception_handler(previous)
    finally:
        sock.close()
