"""`agent-host serve` over streamable HTTP: the MCP endpoint `/mcp`, the tool API, `GET /healthz`.

Safe by default: it binds 127.0.0.1 unless told otherwise (`[serve] http`; a bind beyond loopback
needs a token, which the config checks); with `[serve] tokens`, every request but `/healthz` must
carry `Authorization: Bearer TOKEN` (compared in constant time) or gets 401; the SDK's transport
security refuses a foreign `Host` (421) or `Origin` (403) header (DNS rebinding); bodies larger than
`[serve] max_body` are refused (413); no CORS. The socket is made with IPPROTO_TCP so asyncio turns
Nagle off (see shared notes: a hand-bound socket without it cost ~45 ms per call).

At SIGINT/SIGTERM (uvicorn's), the server stops accepting and tells the catalog (`Catalog.stopping`):
calls in flight have `[serve] grace` seconds, then each is cancelled and answered `cancelled` (503
JSON, or an `isError` result) by the catalog itself; uvicorn's own cut-off, which would answer a
plain-text 500, comes `ANSWER_MARGIN` seconds after that, once the stopped guests had `STOP_WAIT`.
"""

from __future__ import annotations

import hmac
import math
import socket
import sys
from collections.abc import Sequence
from typing import Any, Final

import uvicorn
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from host.config import ServeSettings
from host.config.models import LOOPBACK_HOSTS, split_bind
from host.serve import tool_api
from host.serve.agents import STOP_WAIT
from host.serve.catalog import Catalog

OPEN_PATHS: Final = frozenset({"/healthz"})
"""Paths served without a token."""


class BearerTokens:
    """ASGI middleware: requests outside `OPEN_PATHS` need `Authorization: Bearer` with one of `tokens`."""

    def __init__(self, app: ASGIApp, tokens: Sequence[str]) -> None:
        self._app = app
        self._tokens = [token.encode() for token in tokens]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS and not self._allowed(scope):
            body = {
                "error": {"code": "denied", "message": "a valid bearer token is required (Authorization: Bearer ...)"}
            }
            response = JSONResponse(body, status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, token = header.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        matched = False
        for known in self._tokens:  # every token compared, in constant time each
            matched |= hmac.compare_digest(token.strip(), known)
        return matched


async def _healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def build_app(server: Server[Any], catalog: Catalog, settings: ServeSettings, bind_host: str) -> ASGIApp:
    """The HTTP application: MCP at `/mcp`, the tool API (`tool_api`), `/healthz`, with the checks of
    the module docstring."""
    loopback = bind_host in LOOPBACK_HOSTS
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"] if loopback else [f"{bind_host}:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        if loopback
        else [f"http://{bind_host}:*", f"https://{bind_host}:*"],
    )
    app: ASGIApp = server.streamable_http_app(
        host=bind_host,
        transport_security=security,
        max_request_body_size=settings.max_body,
        custom_starlette_routes=[
            Route("/healthz", _healthz, methods=["GET"]),
            *tool_api.routes(catalog, security, settings.max_body),
        ],
    )
    return BearerTokens(app, settings.tokens) if settings.tokens else app


BACKLOG: Final = 2048
"""Connections the listening socket queues (uvicorn's default)."""

ANSWER_MARGIN: Final = 2.0
"""Seconds the answers of calls cancelled at the end of the grace have to be written."""


class _Server(uvicorn.Server):
    """uvicorn's server, telling the catalog when it begins to shut down (see the module docstring)."""

    def __init__(self, config: uvicorn.Config, catalog: Catalog, grace: float) -> None:
        super().__init__(config)
        self._catalog = catalog
        self._grace = grace

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._catalog.stopping(self._grace)
        await super().shutdown(sockets)


async def serve_http(server: Server[Any], catalog: Catalog, settings: ServeSettings, address: str) -> None:
    """Serve `server` (and `catalog` through the tool API) at `address` (HOST:PORT) until cancelled;
    the URL is printed on stderr first."""
    host, port = split_bind(address)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)  # before the URL is printed: a client may connect at once (uvicorn accepts later)
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        config = uvicorn.Config(
            build_app(server, catalog, settings, host),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(settings.grace + STOP_WAIT + ANSWER_MARGIN),
        )
        sys.stderr.write(f"agent-host: serving MCP on http://{shown}:{sock.getsockname()[1]}/mcp\n")
        sys.stderr.flush()
        async with catalog.running():
            await _Server(config, catalog, settings.grace).serve(sockets=[sock])
    finally:
        sock.close()
