"""Which `Host` and `Origin` headers `agent-host serve` answers: DNS-rebinding protection, the SDK's left off.

The loopback names (`127.0.0.1`, `localhost`, `[::1]`, any port) are always answered; `[serve] allowed_hosts`
adds patterns. Absent, a loopback bind answers the loopback names alone, a bind beyond loopback (which
needs a token) any Host. An `Origin` is answered when it is `http(s)://` naming a host a pattern other
than `*` matches, or the request's own Host. `HostCheck` refuses a Host with 421 and an Origin with 403,
`{"error": {"code": "denied", ...}}`, before any other check, on every path but `/healthz`. The MCP SDK's
`TransportSecurityMiddleware` covers none of it whole: it matches exact strings (a port may be `*`),
case-sensitively, so no `*.corp.example`, no `*` that keeps Origins checked, no same-origin rule; it
answers plain text, checks `/mcp` alone and after a new session is admitted, and logs every refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_host.config.models import ANY_HOST, LOOPBACK_HOSTS, split_host_pattern

LOOPBACK_PATTERNS: Final = ("127.0.0.1", "localhost", "[::1]")
"""The loopback names as `Host` patterns (any port)."""

UNCHECKED_PATHS: Final = frozenset({"/healthz"})
"""Paths answered whatever the Host and Origin."""


@dataclass(frozen=True)
class HostRules:
    """The accepted Host patterns, as (name, port or None for any); in a name `*` and `?` glob, and
    nothing else does (`[::1]` is an address, not a set of characters)."""

    patterns: tuple[tuple[re.Pattern[str], str | None], ...]
    any_host: bool

    @classmethod
    def of(cls, bind_host: str, allowed_hosts: Sequence[str] | None) -> HostRules:
        """The rules for a server bound to `bind_host` with `[serve] allowed_hosts` (see the module docstring)."""
        if allowed_hosts is None:
            allowed_hosts = () if bind_host in LOOPBACK_HOSTS else (ANY_HOST,)
        entries = [*LOOPBACK_PATTERNS, *(entry for entry in allowed_hosts if entry != ANY_HOST)]
        patterns = tuple(dict.fromkeys(_compiled(*split_host_pattern(entry)) for entry in entries))
        return cls(patterns, ANY_HOST in allowed_hosts)

    def host_allowed(self, host: str | None) -> bool:
        """Whether a request with this `Host` header is answered."""
        if host is None:
            return False
        try:
            split_host_pattern(host)
        except ValueError:
            return False
        return self.any_host or self._named(host)

    def origin_allowed(self, origin: str | None, host: str | None) -> bool:
        """Whether a request from this `Origin` (None: no header) to this `Host` is answered."""
        if origin is None:
            return True
        scheme, sep, authority = origin.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not authority or "/" in authority:
            return False
        return (host is not None and authority.lower() == host.lower()) or self._named(authority)

    def _named(self, value: str) -> bool:
        try:
            name, port = split_host_pattern(value)
        except ValueError:
            return False
        return any(
            pattern.fullmatch(name) and (want is None or want == "*" or want == port) for pattern, want in self.patterns
        )


def _compiled(name: str, port: str | None) -> tuple[re.Pattern[str], str | None]:
    glob = re.escape(name).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(glob), port


class HostCheck:
    """ASGI middleware: refuses requests whose Host or Origin `rules` do not accept (see the module
    docstring)."""

    def __init__(self, app: ASGIApp, rules: HostRules) -> None:
        self._app = app
        self._rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in UNCHECKED_PATHS:
            headers = Headers(scope=scope)
            host, origin = headers.get("host"), headers.get("origin")
            if not self._rules.host_allowed(host):
                message = (
                    f"this server does not answer to Host {host!r} (DNS-rebinding protection): add it to "
                    "[serve] allowed_hosts"
                )
                await _refuse(421, message, scope, receive, send)
                return
            if not self._rules.origin_allowed(origin, host):
                message = (
                    f"requests from Origin {origin!r} are refused (a page of another site): add its host to "
                    "[serve] allowed_hosts"
                )
                await _refuse(403, message, scope, receive, send)
                return
        await self._app(scope, receive, send)


async def _refuse(status: int, message: str, scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse({"error": {"code": "denied", "message": message}}, status_code=status)
    await response(scope, receive, send)
