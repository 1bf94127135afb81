"""OAuth for HTTP toolings: the SDK's `OAuthClientProvider` (an httpx2 auth flow) kept in `tokens`.

- `HostAuth` is the flow of a running host: it never waits for a person. An expired access token is
  refreshed; on a 401 (or a 403 asking for a wider scope) it refreshes with the scopes needed, or
  with client credentials gets a new token. When only a person can help it records `failure`, sends
  the request on without a token and lets the server refuse it: the caller then raises
  `unauthorized` (`mcp_errors.unauthorized`) naming `agent-host auth login TOOLING`.
- A token file written or removed by another process (`auth login`, `auth logout`) is read again
  before the next request.
- `login` completes the interactive flow once (the person opens the URL and pastes the address the
  browser was sent to); `status` / `logout` read and remove the token file.
Tokens never appear in a message or a log line of this module.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Final
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.client.auth.exceptions import OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import AnyUrl, ValidationError

from agent_host.config import ClientCredentialsConfig, HttpToolingConfig, OAuthConfig
from agent_host.errors import UsageError
from agent_host.toolings.mcp.tokens import Record, TokenFile

logger = logging.getLogger(__name__)

CLIENT_NAME: Final = "agent-host"
"""The client name given to an authorization server when the host registers itself."""


class LoginRequired(Exception):
    """Only a person can get a token now (`agent-host auth login TOOLING`)."""


FAILURES: Final[tuple[tuple[type[Exception], str], ...]] = (
    (LoginRequired, "a person must approve it"),
    (OAuthTokenError, "the authorization server refused to issue a token"),
    (OAuthRegistrationError, "registering with the authorization server failed"),
    (OAuthFlowError, "the OAuth flow failed"),
    (ValidationError, "the authorization server's answer is not valid OAuth"),
)
"""Why the flow stopped, by exception type (the exception's own text may quote the server)."""

LOGIN_PROBE: Final = {"jsonrpc": "2.0", "id": "agent-host-auth-login", "method": "ping"}
"""The request `login` sends to make the server ask for a token (its answer is not read)."""


class _Expected(logging.Filter):
    """Drops the SDK's `OAuth flow error` traceback when the flow stopped for want of a person
    (`LoginRequired`): that is reported once, as `unauthorized`, not as an error of the host."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], LoginRequired))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_Expected())


class Store:
    """The SDK's `TokenStorage` over one `TokenFile`; `fixed_client` is a pre-registered client."""

    def __init__(self, file: TokenFile, fixed_client: OAuthClientInformationFull | None = None) -> None:
        self.file = file
        self.fixed_client = fixed_client
        self.record = Record(file.url)

    async def get_tokens(self) -> OAuthToken | None:
        self.record = self.file.load()
        return OAuthToken.model_validate(self.record.tokens) if self.record.tokens is not None else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        self.record.expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self.file.save(self.record)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self.record.client is not None:
            return OAuthClientInformationFull.model_validate(self.record.client)
        return self.fixed_client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.record.client = client_info.model_dump(mode="json", exclude_none=True)
        self.file.save(self.record)


class _HostFlow(OAuthClientProvider):
    """What the host adds to an SDK provider: stored expiry, configured scopes, no person (unless
    `interactive`), a token file changed by another process read again, and `failure`."""

    needs_person: bool = True

    def _host_setup(self, store: Store, scopes: tuple[str, ...], interactive: bool) -> None:
        self.store = store
        self.scopes = " ".join(scopes) or None
        self.interactive = interactive
        self.failure: str | None = None
        """Why the last request went out without a valid token (only a person can help); None after
        a request the server accepted."""

    async def _initialize(self) -> None:
        await super()._initialize()
        self.context.token_expiry_time = self.store.record.expires_at

    async def _perform_authorization(self) -> httpx2.Request:
        self.context.client_metadata.scope = union_scopes(self.scopes, self.context.client_metadata.scope)
        if self.needs_person and not self.interactive:
            if not self.context.can_refresh_token():
                raise LoginRequired("no login yet" if self.context.current_tokens is None else "the login expired")
            request = await self._refresh_token()
            wanted = set((self.context.client_metadata.scope or "").split())
            tokens = self.context.current_tokens
            if not wanted <= set(((tokens.scope if tokens else None) or "").split()):  # a step-up
                fields = {**dict(httpx2.QueryParams(request.content.decode())), "scope": " ".join(sorted(wanted))}
                request = httpx2.Request("POST", request.url, data=fields, headers=_form_headers(request))
            return request
        return await super()._perform_authorization()

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.store.file.changed():  # `auth login` / `auth logout` in another process
            self._initialized = False
        inner = super()._auth_flow(request)
        response: httpx2.Response | None = None
        try:
            outgoing = await inner.__anext__()
            while True:
                response = yield outgoing
                outgoing = await inner.asend(response)
        except StopAsyncIteration:
            status = response.status_code if response is not None else None
            self.failure = f"the server refused the token (HTTP {status})" if status in (401, 403) else None
            return
        except (LoginRequired, OAuthFlowError, ValidationError) as exc:
            if self.interactive:
                raise
            self.failure = str(exc) if isinstance(exc, LoginRequired) else _why(exc)
            logger.info("OAuth: a login is needed for %s: %s", self.context.server_url, self.failure)
            logger.debug("OAuth flow stopped: %s", type(exc).__name__)
        finally:
            await inner.aclose()
        request.headers.pop("Authorization", None)
        yield request  # the server's own refusal answers the request


def _form_headers(request: httpx2.Request) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k.lower() not in ("content-length", "content-type")}


def _why(exc: Exception) -> str:
    return next(reason for kind, reason in FAILURES if isinstance(exc, kind))


class CodeFlowAuth(_HostFlow):
    """The authorization-code flow (`type = "oauth"`)."""


class ClientCredentialsAuth(_HostFlow, ClientCredentialsOAuthProvider):
    """The client-credentials grant (`type = "client_credentials"`): never needs a person."""

    needs_person = False


Ask = Callable[[str], Awaitable[str]]
"""Shows the authorization URL to a person and returns the address they were sent back to."""


def host_auth(config: HttpToolingConfig, ask: Ask | None = None) -> _HostFlow | None:
    """The auth flow of `config` (None without `auth`); interactive when `ask` is given."""
    auth = config.auth
    if auth is None:
        return None
    store_file = TokenFile(config.name, config.url)
    if isinstance(auth, ClientCredentialsConfig):
        store = Store(store_file)
        with warnings.catch_warnings():  # no `issuer`: the documented choice to let the server name it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            flow: _HostFlow = ClientCredentialsAuth(
                config.url,
                store,
                auth.client_id,
                auth.client_secret,
                scope=" ".join(auth.scopes) or None,
                issuer=auth.issuer,
            )
        flow._host_setup(store, auth.scopes, interactive=ask is not None)
        return flow
    return _code_flow(config, auth, store_file, ask)


def _code_flow(config: HttpToolingConfig, auth: OAuthConfig, file: TokenFile, ask: Ask | None) -> CodeFlowAuth:
    redirect = AnyUrl(auth.redirect_uri)
    fixed = None
    if auth.client_id is not None and auth.metadata_url is None:
        fixed = OAuthClientInformationFull(
            client_id=auth.client_id,
            client_secret=auth.client_secret,
            redirect_uris=[redirect],
            token_endpoint_auth_method="client_secret_post" if auth.client_secret else "none",
        )
    store = Store(file, fixed)
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=" ".join(auth.scopes) or None,
    )
    pending: dict[str, str] = {}

    async def show(url: str) -> None:
        pending["url"] = url

    async def answer() -> AuthorizationCodeResult:
        if ask is None:
            raise LoginRequired("no login yet")
        return _redirect_result(await ask(pending["url"]))

    flow = CodeFlowAuth(config.url, metadata, store, show, answer, client_metadata_url=auth.metadata_url)
    flow._host_setup(store, auth.scopes, interactive=ask is not None)
    return flow


def _redirect_result(address: str) -> AuthorizationCodeResult:
    """The code and state in the address the browser was sent to; `UsageError` when there is none."""
    query = parse_qs(urlparse(address.strip()).query)
    if "error" in query:
        reason = query.get("error_description", query["error"])[0]
        raise UsageError(f"the authorization server refused the login: {reason}")
    if "code" not in query:
        raise UsageError(
            "the pasted address has no `code`",
            hint="paste the whole address the browser was sent to after you approved (it starts with the redirect URI)",
        )
    first = {key: values[0] for key, values in query.items()}
    return AuthorizationCodeResult(code=first["code"], state=first.get("state"), iss=first.get("iss"))


async def login(config: HttpToolingConfig, ask: Ask) -> dict[str, Any]:
    """Log in to `config`'s server once (new tokens, the client registration kept); its summary.

    Raises `UsageError` when the tooling has no `auth`, the flow fails or the server still refuses.
    """
    if config.auth is None:
        raise UsageError(
            f"tooling {config.name!r} has no `auth`",
            hint='add auth = { type = "oauth" } to its table, or use a tooling that needs a login',
        )
    file = TokenFile(config.name, config.url)
    record = file.load()
    file.save(Record(config.url, client=record.client))  # a new login: forget the old tokens
    flow = host_auth(config, ask)
    headers = {**config.headers, "Accept": "application/json, text/event-stream"}
    try:
        async with httpx2.AsyncClient(headers=headers, auth=flow, timeout=30.0) as http:
            response = await http.post(config.url, json=LOGIN_PROBE)
    except (LoginRequired, OAuthFlowError, ValidationError) as exc:
        raise UsageError(f"tooling {config.name!r}: login failed: {_why(exc)}: {exc}") from None
    except httpx2.HTTPError as exc:
        raise UsageError(f"tooling {config.name!r}: cannot reach {config.shown_url}: {exc}") from None
    if response.status_code in (401, 403):
        raise UsageError(f"tooling {config.name!r}: the server still refuses the login (HTTP {response.status_code})")
    return file.load().summary()


def status(config: HttpToolingConfig) -> dict[str, Any]:
    """What is stored for `config` (no token, no secret)."""
    return TokenFile(config.name, config.url).load().summary()


def logout(config: HttpToolingConfig) -> bool:
    """Forget `config`'s tokens; False when there were none."""
    return TokenFile(config.name, config.url).remove()
