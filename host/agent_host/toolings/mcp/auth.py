"""OAuth for HTTP toolings: `HostAuth`, an httpx2 auth flow driving an unmodified SDK provider
(`OAuthClientProvider`, `ClientCredentialsOAuthProvider`) through its public flow, kept in `tokens`.

- `HostAuth` is the flow of a running host: it never waits for a person. An expired access token is
  refreshed; on a 401 (or a 403 asking for a wider scope) it refreshes with the scopes needed, or
  with client credentials gets a new token. When only a person can help it records `failure`, sends
  the request on without a token and lets the server refuse it: the caller then raises
  `unauthorized` (`mcp_errors.unauthorized`) naming `agent-host auth login TOOLING`.
- A token file another process wrote or removed (`auth login`, `logout`) is read again first.
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
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, OAuthFlowError
from mcp.client.auth.exceptions import OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import handle_token_response_scopes, union_scopes
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import AnyUrl, Field, ValidationError

from agent_host.config import ClientCredentialsConfig, HttpToolingConfig, OAuthConfig
from agent_host.errors import UsageError
from agent_host.toolings.mcp.sdk_hooks import next_request_within_origin
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


class _RefreshInstead(LoginRequired):
    """Raised by the code flow's callback when no person can approve but a refresh token can serve:
    `HostAuth` ends the SDK's flow and refreshes (with the scopes needed) instead."""


class _Expected(logging.Filter):
    """Drops the SDK's `OAuth flow error` traceback when the flow stopped for want of a person
    (`LoginRequired`): that is reported once, as `unauthorized`, not as an error of the host."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], LoginRequired))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_Expected())

AUTH_REDIRECTS: Final = 5
"""Redirects (within the origin, `sdk_hooks.next_request_within_origin`) one token request of the
host's own may follow: the SDK's own limit for its flow's requests."""


class Store:
    """The SDK's `TokenStorage` over one `TokenFile`; `fixed_client` is a pre-registered client.

    Loading the tokens also gives the provider's `context` (once attached) the stored expiry, which
    the SDK does not keep: an access token expired while the host was not running is refreshed
    before it is sent."""

    def __init__(self, file: TokenFile, fixed_client: OAuthClientInformationFull | None = None) -> None:
        self.file = file
        self.fixed_client = fixed_client
        self.record = Record(file.url)
        self.context: OAuthContext | None = None

    async def get_tokens(self) -> OAuthToken | None:
        self.record = self.file.load()
        if self.context is not None:
            self.context.token_expiry_time = self.record.expires_at
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


class ScopedMetadata(OAuthClientMetadata):
    """Client metadata whose `scope` always includes the configured scopes (`configured`, never
    sent): the SDK sets `scope` to what the server's challenge names; the host asks for its own too."""

    configured: str | None = Field(default=None, exclude=True)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "scope":
            value = union_scopes(self.configured, value)
        super().__setattr__(name, value)


def _scoped(metadata: OAuthClientMetadata, scopes: tuple[str, ...]) -> ScopedMetadata:
    return ScopedMetadata.model_validate({**metadata.model_dump(), "configured": " ".join(scopes) or None})


class HostAuth(httpx2.Auth):
    """The host's auth flow: an unmodified SDK provider (`provider`) driven through its public
    `async_auth_flow`, and what the host adds around it (see the module docstring): a token file
    changed by another process read again, no person (unless `interactive`: then its `LoginRequired`
    and OAuth errors are raised), a refresh with the scopes needed instead of a person, `failure`."""

    requires_response_body = True

    def __init__(self, provider: OAuthClientProvider, store: Store, *, interactive: bool, fixed_client: bool) -> None:
        """`fixed_client`: the provider holds its client itself (client credentials), so a token file
        read again gives only tokens."""
        self.provider = provider
        self.store = store
        store.context = provider.context
        self.interactive = interactive
        self._fixed_client = fixed_client
        self.failure: str | None = None
        """Why the last request went out without a valid token (only a person can help); None after
        a request the server accepted."""

    @property
    def context(self) -> OAuthContext:
        return self.provider.context

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.store.file.changed():  # `auth login` / `auth logout` in another process
            await self._read_again()
        response: httpx2.Response | None = None
        stopped: Exception | None = None
        flow: AsyncGenerator[httpx2.Request, httpx2.Response] | None = self.provider.async_auth_flow(request)
        while flow is not None:
            current, flow = flow, None
            try:
                outgoing = await current.__anext__()
                while True:
                    response = yield outgoing
                    outgoing = await current.asend(response)
            except StopAsyncIteration:
                pass
            except _RefreshInstead:
                flow = self._refresh_then_retry(request)
            except (LoginRequired, OAuthFlowError, ValidationError) as exc:
                if self.interactive:
                    raise
                stopped = exc
            finally:
                await current.aclose()
        if stopped is None:
            status = response.status_code if response is not None else None
            self.failure = f"the server refused the token (HTTP {status})" if status in (401, 403) else None
            return
        self.failure = str(stopped) if isinstance(stopped, LoginRequired) else _why(stopped)
        logger.info("OAuth: a login is needed for %s: %s", self.context.server_url, self.failure)
        logger.debug("OAuth flow stopped: %s", type(stopped).__name__)
        request.headers.pop("Authorization", None)
        yield request  # the server's own refusal answers the request

    async def _read_again(self) -> None:
        """What the SDK loads when its flow starts, loaded again from the token file."""
        async with self.context.lock:
            self.context.current_tokens = await self.store.get_tokens()
            if not self._fixed_client:
                self.context.client_info = await self.store.get_client_info()

    async def _refresh_then_retry(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """Refresh the tokens (asking for the scopes the server wants, a step-up, when the grant
        lacks them), then send `request` again with the new token. Raises `OAuthTokenError` when
        the authorization server refuses."""
        context = self.context
        async with context.lock:
            response = yield _refresh_request(context)
            for _ in range(AUTH_REDIRECTS):
                following = next_request_within_origin(response)
                if following is None:
                    break
                response = yield following
            await _take_tokens(context, response)
        tokens = context.current_tokens
        if tokens is not None and tokens.access_token:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        yield request


def _refresh_request(context: OAuthContext) -> httpx2.Request:
    """A refresh-token grant request for `context` (which can refresh), with `scope` when the
    scopes wanted are more than the current grant's."""
    tokens, client = context.current_tokens, context.client_info
    if tokens is None or tokens.refresh_token is None or client is None:
        raise LoginRequired("the login expired")
    metadata = context.oauth_metadata
    if metadata is not None and metadata.token_endpoint:
        url = str(metadata.token_endpoint)
    else:
        url = urljoin(context.get_authorization_base_url(context.server_url), "/token")
    data = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "client_id": client.client_id}
    if context.should_include_resource_param(context.protocol_version):
        data["resource"] = context.get_resource_url()
    wanted = set((context.client_metadata.scope or "").split())
    if not wanted <= set((tokens.scope or "").split()):  # a step-up
        data["scope"] = " ".join(sorted(wanted))
    data, headers = context.prepare_token_auth(data, {"Content-Type": "application/x-www-form-urlencoded"})
    return httpx2.Request("POST", url, data=data, headers=headers)


async def _take_tokens(context: OAuthContext, response: httpx2.Response) -> None:
    """Keep the tokens of a token response (as the SDK keeps those of its token exchange); raises
    `OAuthTokenError` when the authorization server refused."""
    if response.status_code not in (200, 201):
        body = (await response.aread()).decode("utf-8", errors="replace")
        raise OAuthTokenError(f"Token exchange failed ({response.status_code}): {body}")
    tokens = await handle_token_response_scopes(response)
    if tokens.scope is None:
        tokens.scope = context.client_metadata.scope
    context.current_tokens = tokens
    context.update_token_expiry(tokens)
    await context.storage.set_tokens(tokens)


def _why(exc: Exception) -> str:
    return next(reason for kind, reason in FAILURES if isinstance(exc, kind))


Ask = Callable[[str], Awaitable[str]]
"""Shows the authorization URL to a person and returns the address they were sent back to."""


def host_auth(config: HttpToolingConfig, ask: Ask | None = None) -> HostAuth | None:
    """The auth flow of `config` (None without `auth`); interactive when `ask` is given."""
    auth = config.auth
    if auth is None:
        return None
    store_file = TokenFile(config.name, config.url)
    if isinstance(auth, ClientCredentialsConfig):
        store = Store(store_file)
        with warnings.catch_warnings():  # no `issuer`: the documented choice to let the server name it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            provider = ClientCredentialsOAuthProvider(
                config.url,
                store,
                auth.client_id,
                auth.client_secret,
                scope=" ".join(auth.scopes) or None,
                issuer=auth.issuer,
            )
        provider.context.client_metadata = _scoped(provider.context.client_metadata, auth.scopes)
        return HostAuth(provider, store, interactive=ask is not None, fixed_client=True)
    return _code_flow(config, auth, store_file, ask)


def _code_flow(config: HttpToolingConfig, auth: OAuthConfig, file: TokenFile, ask: Ask | None) -> HostAuth:
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
    contexts: list[OAuthContext] = []

    async def show(url: str) -> None:
        pending["url"] = url

    async def answer() -> AuthorizationCodeResult:
        if ask is None:  # no person: a refresh token serves if there is one (`HostAuth`)
            context = contexts[0]
            if context.can_refresh_token():
                raise _RefreshInstead("a refresh token serves")
            raise LoginRequired("no login yet" if context.current_tokens is None else "the login expired")
        return _redirect_result(await ask(pending["url"]))

    provider = OAuthClientProvider(
        config.url, _scoped(metadata, auth.scopes), store, show, answer, client_metadata_url=auth.metadata_url
    )
    contexts.append(provider.context)
    return HostAuth(provider, store, interactive=ask is not None, fixed_client=False)


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
