"""An MCP server (SDK 2.x `MCPServer`) behind OAuth, with its own in-process authorization server.

Streamable HTTP only, on 127.0.0.1: `python -m tests.servers.guarded --http 0` prints `listening on
URL` first. Both protocol eras (agent-host `protocol = "2025-11-25"` forces the older one). The SDK's
auth settings: every MCP request needs a bearer token with scope `read`; the authorization server
(issuer: the server's origin) registers clients dynamically and approves every authorization at
once, redirecting to the redirect URI with a code (no person: a test follows the URL with httpx).
Options: `--lifetime S` (access tokens expire after S seconds; default 3600), `--client ID:SECRET`
(a client allowed the client-credentials grant, which the SDK's token endpoint lacks: answered here),
`--app ID:SECRET` (a pre-registered client of the code flow, redirecting to agent-host's default
redirect URI).

Tools: `echo(text)`; `admin()`: needs scope `admin` too (without it the call is refused with 403
`insufficient_scope` asking for `read admin`: a step-up); `activity()`: {"issued", "refreshed",
"client_credentials": token counts, "client_id": the client of the calling token}. Never returns a token.
"""

from __future__ import annotations

import argparse
import json
import secrets
import socket
import sys
import time
from typing import Any
from urllib.parse import parse_qs

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SCOPE = "read"
ADMIN = "admin"
"""The scope the `admin` tool needs on top of `SCOPE` (granted by client credentials only)."""


class Provider:
    """An in-memory authorization server that approves everything and counts what it issues."""

    def __init__(self, lifetime: int) -> None:
        self.lifetime = lifetime
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.counts = {"issued": 0, "refreshed": 0, "client_credentials": 0}
        self.secrets: dict[str, str] = {}
        """Client-credentials clients: id -> secret."""

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        found = self.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[code.code]
        self.counts["issued"] += 1
        return self.issue(code.client_id, code.scopes, refreshable=True)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotated: the old one is spent
        for token in [t for t, a in self.access.items() if a.client_id == refresh_token.client_id]:
            del self.access[token]
        self.counts["refreshed"] += 1
        return self.issue(refresh_token.client_id, scopes or refresh_token.scopes, refreshable=True)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "this server accepts no identity assertions")

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def issue(self, client_id: str, scopes: list[str], *, refreshable: bool) -> OAuthToken:
        access = secrets.token_urlsafe(24)
        expires = int(time.time()) + self.lifetime
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires)
        refresh = None
        if refreshable:
            refresh = secrets.token_urlsafe(24)
            self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        return OAuthToken(access_token=access, expires_in=self.lifetime, scope=" ".join(scopes), refresh_token=refresh)


class ClientCredentials:
    """ASGI middleware answering `grant_type=client_credentials` at /token (Basic or form auth)."""

    def __init__(self, app: ASGIApp, provider: Provider) -> None:
        self.app = app
        self.provider = provider

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/token" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        if form.get("grant_type") != "client_credentials":
            await self.app(scope, _replaying(body, receive), send)
            return
        client_id, secret = _client_of(scope, form)
        if client_id is None or self.provider.secrets.get(client_id) != secret:
            await _json(send, 401, {"error": "invalid_client"})
            return
        self.provider.counts["client_credentials"] += 1
        scopes = (form.get("scope") or SCOPE).split()
        token = self.provider.issue(client_id, scopes, refreshable=False)
        await _json(send, 200, token.model_dump(exclude_none=True))


class StepUp:
    """ASGI middleware: a `tools/call` of `admin` needs a token with scope `admin`; without it, 403
    `insufficient_scope` naming the scopes to ask for (the MCP authorization spec's step-up)."""

    def __init__(self, app: ASGIApp, provider: Provider, base: str) -> None:
        self.app = app
        self.provider = provider
        self.metadata = f"{base}/.well-known/oauth-protected-resource/mcp"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/mcp" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = await _body(receive)
        if self._needs_admin(body) and ADMIN not in self._scopes(scope):
            challenge = (
                f'Bearer error="insufficient_scope", scope="{SCOPE} {ADMIN}", resource_metadata="{self.metadata}"'
            )
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", challenge.encode())]
            await send({"type": "http.response.start", "status": 403, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"error": "insufficient_scope"}'})
            return
        await self.app(scope, _replaying(body, receive), send)

    @staticmethod
    def _needs_admin(body: bytes) -> bool:
        try:
            message = json.loads(body or b"{}")
        except ValueError:
            return False
        params = message.get("params") if isinstance(message, dict) else None
        return message.get("method") == "tools/call" and isinstance(params, dict) and params.get("name") == "admin"

    def _scopes(self, scope: Scope) -> list[str]:
        header = dict(scope["headers"]).get(b"authorization", b"").decode()
        token = self.provider.access.get(header.removeprefix("Bearer ").strip())
        return list(token.scopes) if token is not None else []


async def _body(receive: Receive) -> bytes:
    """The whole body of an HTTP request."""
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if not message.get("more_body"):
            return body


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the app `body` (already read) first, then what follows."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _client_of(scope: Scope, form: dict[str, str]) -> tuple[str | None, str | None]:
    import base64
    from urllib.parse import unquote

    for name, value in scope["headers"]:
        if name == b"authorization" and value.startswith(b"Basic "):
            user, _, password = base64.b64decode(value[6:]).decode().partition(":")
            return unquote(user), unquote(password)
    return form.get("client_id"), form.get("client_secret")


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def build(base: str, provider: Provider) -> MCPServer:
    settings = AuthSettings(
        issuer_url=base,  # type: ignore[arg-type]
        resource_server_url=f"{base}/mcp",  # type: ignore[arg-type]
        validate_token_resource=False,
        required_scopes=[SCOPE],
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE]),
    )
    server = MCPServer("guarded", log_level="WARNING", auth=settings, auth_server_provider=provider)

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def admin() -> str:
        return "admin ok"

    @server.tool()
    def activity() -> dict[str, Any]:
        token = get_access_token()
        return {**provider.counts, "client_id": token.client_id if token is not None else None}

    return server


REDIRECT = "http://127.0.0.1:33418/callback"
"""agent-host's default `redirect_uri`, registered for the `--app` clients."""


async def _serve(port: int, lifetime: int, clients: list[str], apps: list[str]) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(2048)  # before the URL is printed: a client may connect at once
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = Provider(lifetime)
    for client in clients:
        client_id, _, secret = client.partition(":")
        provider.secrets[client_id] = secret
    for registered in apps:
        client_id, _, secret = registered.partition(":")
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id, client_secret=secret, redirect_uris=[REDIRECT],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_post", grant_types=["authorization_code", "refresh_token"],
            response_types=["code"], scope=SCOPE,
        )  # fmt: skip
    app = ClientCredentials(
        StepUp(build(base, provider).streamable_http_app(host="127.0.0.1"), provider, base), provider
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    sys.stdout.write(f"listening on {base}/mcp\n")
    sys.stdout.flush()
    await uvicorn.Server(config).serve(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--http", type=int, metavar="PORT", required=True, help="serve on 127.0.0.1:PORT (0: free)")
    parser.add_argument("--lifetime", type=int, default=3600, help="seconds an access token lives")
    parser.add_argument(
        "--client", action="append", default=[], metavar="ID:SECRET", help="a client-credentials client (repeatable)"
    )
    parser.add_argument(
        "--app", action="append", default=[], metavar="ID:SECRET", help="a pre-registered code-flow client (repeatable)"
    )
    args = parser.parse_args(argv)
    anyio.run(_serve, args.http, args.lifetime, args.client, args.app)


if __name__ == "__main__":
    main()
