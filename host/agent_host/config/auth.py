"""The `auth` key of an HTTP tooling: OAuth, by `type`.

- `{ type = "oauth", scopes = [...], client_id = "..." }`: the authorization-code flow, completed
  once by a person (`agent-host auth login TOOLING`). Without `client_id` the host registers itself
  (dynamic client registration); an `https://` `client_id` is a Client ID Metadata Document URL;
  any other is a pre-registered client (with `client_secret` when it has one).
- `{ type = "client_credentials", client_id = "...", client_secret = "${VAR}" }`: machine to
  machine, no person; `issuer` (optional) pins the authorization server the secret is sent to.
`scopes` are requested on top of what the server asks for. Secrets come from `${VAR}`; no model
here prints them (`repr=False`).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self
from urllib.parse import urlparse

from pydantic import Discriminator, Field, Tag, model_validator

from agent_host.config.base import TAG_ERROR, At, Need, Table, fail
from agent_host.config.types import HttpUrl

DEFAULT_REDIRECT_URI: Final = "http://127.0.0.1:33418/callback"
"""Where the authorization server sends the browser after a login; nothing needs to listen there:
the person pastes the address the browser shows into `agent-host auth login`."""


class OAuthConfig(Table):
    """The authorization-code flow (with PKCE): a person logs in once, the host refreshes."""

    example = '{ type = "oauth", scopes = ["read"] }'

    type: Literal["oauth"]
    """OAuth with a person logging in once (`agent-host auth login TOOLING`)."""
    scopes: tuple[str, ...] = ()
    """Scopes requested on top of those the server asks for."""
    client_id: str | None = None
    """A pre-registered client, or an https:// Client ID Metadata Document URL; absent: the host
    registers itself with the authorization server."""
    client_secret: str | None = Field(default=None, repr=False)
    """The pre-registered client's secret (write it as ${VAR})."""
    redirect_uri: HttpUrl = DEFAULT_REDIRECT_URI
    """The redirect URI registered for the client; the login asks for the address it leads to."""

    @property
    def metadata_url(self) -> str | None:
        """`client_id` when it is a Client ID Metadata Document URL."""
        return self.client_id if self.client_id is not None and self.client_id.startswith("https://") else None

    @model_validator(mode="after")
    def _client_is_consistent(self) -> Self:
        problems = []
        if self.client_id is not None and self.client_id.startswith("http://"):
            hint = "a Client ID Metadata Document is served over https://; a plain client id has no scheme"
            problems.append(At(("client_id",), "a client_id URL must be https://", hint))
        if self.metadata_url is not None and urlparse(self.metadata_url).path in ("", "/"):
            hint = 'e.g. client_id = "https://example.com/agent-host.json"'
            problems.append(At(("client_id",), "a Client ID Metadata Document URL needs a path", hint))
        if self.client_secret is not None and (self.client_id is None or self.metadata_url is not None):
            hint = "remove client_secret, or set the client_id it belongs to"
            uses = (("client_secret",), ("client_id",))
            problems.append(At(("client_secret",), "client_secret needs a pre-registered client_id", hint, uses=uses))
        if problems:
            fail("OAuthConfig", problems)
        return self


class ClientCredentialsConfig(Table):
    """The client-credentials grant: the host authenticates as itself, no person involved."""

    needs = {
        "client_id": Need('type = "client_credentials" needs `client_id`', hint='e.g. client_id = "agent-host"'),
        "client_secret": Need(
            'type = "client_credentials" needs `client_secret`', hint='e.g. client_secret = "${CLIENT_SECRET}"'
        ),
    }
    example = '{ type = "client_credentials", client_id = "agent-host", client_secret = "${SECRET}" }'

    type: Literal["client_credentials"]
    """OAuth client credentials (machine to machine)."""
    client_id: str = Field(min_length=1)
    """The client registered with the authorization server."""
    client_secret: str = Field(min_length=1, repr=False)
    """Its secret (write it as ${VAR})."""
    scopes: tuple[str, ...] = ()
    """Scopes requested on top of those the server asks for."""
    issuer: HttpUrl | None = None
    """The authorization server's issuer URL: the secret is only ever sent to it. Absent: whichever
    server the MCP server names."""


def _type_of(value: Any) -> str | None:
    if isinstance(value, dict):
        found = value.get("type")
        return found if isinstance(found, str) else repr(found)
    return getattr(value, "type", None)


AuthConfig = Annotated[
    Annotated[OAuthConfig, Tag("oauth")] | Annotated[ClientCredentialsConfig, Tag("client_credentials")],
    Discriminator(
        _type_of, custom_error_type=f"{TAG_ERROR}type", custom_error_message='"oauth" or "client_credentials"'
    ),
]
"""An HTTP tooling's `auth` table, by `type`."""
