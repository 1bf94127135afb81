"""Who a client of `agent-host serve` is, and the slots each one holds (`ClientSlots`).

A client is the token it presents when `[serve] tokens` are set (named by its place in the list,
`token 2`, never by its value: the `BearerTokens` middleware records it in the request's scope),
else its remote address as `client_of_address` names it (connections are counted by the same name,
`connections.client_of_peer`): every loopback address is the one client `loopback`, an IPv6
address its /64. `local` is the one client of `serve --stdio` or an in-process one. A slot is an
MCP session (2025-11-25 over HTTP) or an open `subscriptions/listen` stream (2026-07-28): each
client holds at most `per_client` of them at once, so that one client cannot take the slots of all.
A slot is released when it ends, or when its `alive` check says that it ended (a session the SDK
expired or ended). Used on the server's event loop only.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from starlette.requests import Request

CLIENT_SCOPE_KEY: Final = "agent_host.client"
"""The ASGI scope key under which the token middleware records the client's name."""
LOCAL: Final = "local"
"""The client of a connection that is not HTTP (stdio, in process)."""
RELAY: Final = "relay"
"""What `serve`'s relay does for no client in particular (watching the offered toolings), as a client
of its own: its audit lines have an allowance as a client's."""

LOOPBACK: Final = "loopback"
"""Every client without a token that connects from a loopback address (see the module docstring)."""
UNKNOWN: Final = "address unknown"
"""The client of a connection whose remote address is not known."""
IPV6_CLIENT_PREFIX: Final = 64
"""Leading bits of an IPv6 address that name its client (a /64: what one host or site is given)."""

SlotKind = Literal["session", "listen"]


def client_of_scope(scope: MutableMapping[str, Any]) -> str:
    """The client an HTTP request comes from (see the module docstring)."""
    named = scope.get(CLIENT_SCOPE_KEY)
    if isinstance(named, str):
        return named
    address = scope.get("client")
    if not address:
        return UNKNOWN
    return client_of_address(str(address[0]))


def client_of_address(address: str) -> str:
    """The client a remote address stands for: an IPv4 address itself (`address 10.0.0.5`: every
    client behind one proxy or NAT is one client); an IPv6 address its /64 (`address
    2001:db8:1:2::/64`: a host or site is given a whole /64 and can send from any address in it); an
    IPv4-mapped IPv6 address its IPv4 address; every loopback address (127.0.0.0/8, ::1, IPv4-mapped
    127/8) the one client `loopback`, since any local process can send from any of them (local
    clients are told apart by tokens alone); text that is not an IP address, itself."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return f"address {address}"
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.is_loopback:
        return LOOPBACK
    if isinstance(parsed, ipaddress.IPv4Address):
        return f"address {parsed}"
    host_bits = 128 - IPV6_CLIENT_PREFIX
    network = ipaddress.IPv6Network((int(parsed) >> host_bits << host_bits, IPV6_CLIENT_PREFIX))
    return f"address {network}"


def client_of_request(request: object) -> str:
    """The client of an MCP request whose transport carried `request` (a Starlette `Request` over
    HTTP, None otherwise)."""
    return client_of_scope(request.scope) if isinstance(request, Request) else LOCAL


def _always() -> bool:
    return True


@dataclass(frozen=True)
class _Slot:
    kind: SlotKind
    alive: Callable[[], bool]


class ClientSlots:
    """See the module docstring."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self._held: dict[str, dict[object, _Slot]] = {}

    def held(self, client: str) -> int:
        """The slots `client` holds now (ended ones released first)."""
        slots = self._held.get(client)
        if slots is None:
            return 0
        for key in [key for key, slot in slots.items() if not slot.alive()]:
            del slots[key]
        if not slots:
            del self._held[client]
        return len(slots)

    def count(self, kind: SlotKind) -> int:
        """The slots of `kind` every client together holds now."""
        total = 0
        for client in list(self._held):
            if self.held(client):
                total += sum(1 for slot in self._held[client].values() if slot.kind == kind)
        return total

    def take(self, client: str, key: object, kind: SlotKind, alive: Callable[[], bool] = _always) -> bool:
        """Give `client` slot `key` (held until `release`, or until `alive()` is false); False, and
        nothing held, when it holds `per_client` already."""
        if self.held(client) >= self.per_client:
            return False
        self._held.setdefault(client, {})[key] = _Slot(kind, alive)
        return True

    def replace(self, client: str, key: object, new_key: object, alive: Callable[[], bool]) -> None:
        """Slot `key` of `client` is `new_key` from now on, held while `alive()`."""
        slots = self._held.get(client, {})
        slot = slots.pop(key, None)
        if slot is not None:
            slots[new_key] = _Slot(slot.kind, alive)

    def release(self, client: str, key: object) -> None:
        """`client` no longer holds slot `key` (nothing if it did not)."""
        slots = self._held.get(client)
        if slots is not None:
            slots.pop(key, None)
            if not slots:
                del self._held[client]
