"""One client of `agent-host serve` cannot exhaust the state that every client shares.

Subscriptions are only to URIs an offered tooling lists, and limited per session; sessions are
limited per client (every loopback address is one client), and idle sessions and listen streams
expire, so neither invented URIs nor abandoned sessions lock other clients out. The upstream is
tests/servers/observed.py over stdio (resources obs://a and obs://b; the grants also allow invented
`obs://new*` URIs); clients are the SDK's `Client` in process (both eras) and raw HTTP requests
against the real command.
"""

from __future__ import annotations

import json
import socket
import time
import warnings
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support.component import OBSERVED_TOML, activity
from tests.support.serve_observed import SERVE, WAIT, run_served
from tests.support.serving import INITIALIZE, JSON_HEADERS, HttpServe

pytestmark = pytest.mark.component

HOST_WIDE: Final = "[host]\nmax_subscriptions = 6\n"
"""Agent `serve`'s own limit: 2 list subscriptions of tooling t, and room for 4 resources."""


async def subscribe(client: Client, uri: str) -> MCPError | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        try:
            await client.subscribe_resource(uri)
        except MCPError as exc:
            return exc
    return None


def test_a_uri_no_offered_tooling_lists_is_refused_as_an_sdk_server_refuses_it_and_takes_no_slot(
    tmp_path: Path,
) -> None:
    async def body(catalog: Any, host: Host) -> Any:
        async with Client(build_server(catalog), mode="legacy") as greedy:
            invented = [await subscribe(greedy, f"obs://new-{index}") for index in range(8)]
            async with Client(build_server(catalog), mode="legacy") as other:
                offered = await subscribe(other, "obs://a")
            upstream = activity(host)
        return invented, offered, upstream

    invented, offered, upstream = run_served(OBSERVED_TOML + HOST_WIDE + SERVE, tmp_path, body)
    assert offered is None  # refused limit-exceeded before: the greedy client held every slot
    for index, refused in enumerate(invented):
        assert refused is not None, f"obs://new-{index} was accepted"
        assert refused.code == -32602 and refused.error.data == {"uri": f"obs://new-{index}"}  # SEP-2164
        assert str(refused).startswith("not-found: no offered tooling lists resource") and "resources/list" in str(
            refused
        )
    assert not any(uri.startswith("obs://new") for uris in upstream["listens"] for uri in uris)


def test_a_2026_listen_naming_a_uri_no_offered_tooling_lists_is_refused(tmp_path: Path) -> None:
    async def body(catalog: Any, host: Host) -> Any:
        async with Client(build_server(catalog)) as client:
            try:
                async with client.listen(resource_subscriptions=["obs://a", "obs://new-1"]):
                    return None
            except MCPError as exc:
                return exc

    refused = run_served(OBSERVED_TOML + SERVE, tmp_path, body)
    assert refused is not None and refused.code == -32602 and refused.error.data == {"uri": "obs://new-1"}


def test_one_session_holds_at_most_max_subscriptions_per_session(tmp_path: Path) -> None:
    async def body(catalog: Any, host: Host) -> Any:
        async with Client(build_server(catalog), mode="legacy") as first, Client(build_server(catalog)) as modern:
            held = await subscribe(first, "obs://a")
            again = await subscribe(first, "obs://a")  # already held: not one more
            beyond = await subscribe(first, "obs://b")
            async with Client(build_server(catalog), mode="legacy") as second:
                other = await subscribe(second, "obs://b")
            try:
                async with modern.listen(resource_subscriptions=["obs://a", "obs://b"]):
                    listened = None
            except MCPError as exc:
                listened = exc
        return held, again, beyond, other, listened

    limited = OBSERVED_TOML + SERVE + "max_subscriptions_per_session = 1\n"
    held, again, beyond, other, listened = run_served(limited, tmp_path, body)
    assert (held, again, other) == (None, None, None)
    for refused in (beyond, listened):
        assert refused is not None and refused.code == -32004, refused
        assert str(refused).startswith("limit-exceeded: ") and "[serve] max_subscriptions_per_session = 1" in str(
            refused
        )


def initialize(url: str, token: str) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers={**JSON_HEADERS, "authorization": f"Bearer {token}"})


def in_session(opened: httpx2.Response, token: str) -> dict[str, str]:
    """The headers of a request in the session `opened` opened."""
    return {**JSON_HEADERS, "authorization": f"Bearer {token}", "mcp-session-id": opened.headers["mcp-session-id"]}


TOKENS: Final = 'tokens = ["${TOKEN_A}", "${TOKEN_B}"]\n'
TOKEN_ENV: Final = {"TOKEN_A": "token-a", "TOKEN_B": "token-b"}


def test_one_clients_abandoned_sessions_cannot_take_every_session_slot(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML + SERVE + TOKENS + "max_sessions_per_client = 2\nmax_sessions = 3\n")
    served = HttpServe(config, env=TOKEN_ENV)
    try:
        first, second, beyond, again = (initialize(served.url, "token-a") for _ in range(4))
        other = initialize(served.url, "token-b")
        full = initialize(served.url, "token-b")  # 3 sessions open: the host-wide limit
        ended = httpx2.delete(
            served.url,
            headers={
                **JSON_HEADERS,
                "authorization": "Bearer token-a",
                "mcp-session-id": first.headers["mcp-session-id"],
            },
        )
        after_end = initialize(served.url, "token-a")
    finally:
        served.process.terminate()
        stderr = served.process.communicate(timeout=60)[1]
    assert (first.status_code, second.status_code, other.status_code) == (200, 200, 200)
    assert (beyond.status_code, again.status_code) == (429, 429), beyond.text
    error = beyond.json()["error"]
    assert error["code"] == -32004 and error["message"].startswith("limit-exceeded: ")
    assert "[serve] max_sessions_per_client = 2" in error["message"] and "token 1" in error["message"]
    assert "token-a" not in beyond.text  # a client is named by the token's place, never by the token
    assert full.status_code == 503 and full.json()["error"]["message"].startswith("limit-exceeded: ")
    assert "[serve] max_sessions = 3" in full.json()["error"]["message"]
    assert ended.status_code == 200 and after_end.status_code == 200  # the ended session's slot is free again
    assert stderr.count("max_sessions_per_client") == 1, stderr  # logged once per interval, not per refusal


def test_an_idle_session_expires_after_session_idle_and_frees_its_clients_slot(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML + SERVE + TOKENS + "max_sessions_per_client = 1\nsession_idle = 1\n")
    served = HttpServe(config, env=TOKEN_ENV)
    try:
        opened = initialize(served.url, "token-a")
        deadline = time.monotonic() + WAIT
        while (again := initialize(served.url, "token-a")).status_code == 429:
            assert time.monotonic() < deadline, "the idle session never expired"
            time.sleep(0.1)
        gone = httpx2.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "ping"},
            headers={
                **JSON_HEADERS,
                "authorization": "Bearer token-a",
                "mcp-session-id": opened.headers["mcp-session-id"],
            },
        )
    finally:
        served.stop()
    assert opened.status_code == 200 and again.status_code == 200
    assert gone.status_code == 404  # the expired session is gone


def test_a_clients_listen_streams_count_among_its_sessions(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML + SERVE + TOKENS + "max_sessions_per_client = 1\n")
    served = HttpServe(config, env=TOKEN_ENV)

    def client(token: str) -> Client:
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"})
        from mcp.client.streamable_http import streamable_http_client

        return Client(streamable_http_client(served.url, http_client=http))

    async def main() -> Any:
        async with client("token-a") as one, client("token-a") as two, client("token-b") as three:
            async with one.listen(resource_subscriptions=["obs://a"]):
                try:
                    async with two.listen(resource_subscriptions=["obs://a"]):
                        refused = None
                except MCPError as exc:
                    refused = exc
                async with three.listen(resource_subscriptions=["obs://a"]):
                    pass  # another client is not refused
            with anyio.fail_after(WAIT):  # the first stream ended: its slot is freed once the server sees it
                while True:
                    try:
                        async with two.listen(resource_subscriptions=["obs://a"]):
                            break
                    except MCPError as exc:
                        assert exc.code == -32004, exc
                        await anyio.sleep(0.05)
        return refused

    try:
        refused = anyio.run(main)
    finally:
        served.stop()
    assert refused is not None and refused.code == -32004
    assert "[serve] max_sessions_per_client = 1" in str(refused)


def test_the_session_bounds_reach_the_sdk_with_their_defaults(tmp_path: Path) -> None:
    from agent_host.config.models import ServeSettings
    from agent_host.serve.http import build_app

    config = parse_config(OBSERVED_TOML + SERVE, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config)
        server = build_server(catalog)
        build_app(server, catalog, config.serve, "127.0.0.1")
    manager = server.session_manager
    assert manager.session_idle_timeout == ServeSettings().session_idle == 300  # the SDK's default is 1800
    assert manager.max_sessions == ServeSettings().max_sessions
    assert ServeSettings().max_sessions_per_client < ServeSettings().max_sessions


def _initialize_from(served: HttpServe, source: str) -> int:
    """The status of an `initialize` sent from loopback address `source` (no token)."""
    host, port = served.base.removeprefix("http://").rsplit(":", 1)
    body = json.dumps(INITIALIZE).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=WAIT, source_address=(source, 0)) as sock:
        sock.sendall(head.encode() + body)
        status_line = sock.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_every_loopback_address_is_one_client_without_a_token(tmp_path: Path) -> None:
    """Requests from 127.0.0.2, .3, ... are all client `loopback`: one local process cannot take
    every session by counting as another client per address."""
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML + SERVE + "max_sessions_per_client = 2\n")
    served = HttpServe(config)
    try:
        statuses = [_initialize_from(served, f"127.0.0.{last}") for last in (2, 3, 4, 5)]
    finally:
        served.stop()
    assert statuses == [200, 200, 429, 429], served.stderr
    assert "client loopback holds 2" in served.stderr


def test_an_idle_listen_stream_ends_gracefully_after_listen_idle(tmp_path: Path) -> None:
    """A listen stream that carries no event for `listen_idle` seconds ends as the spec's graceful
    close (the client re-listens), freeing its client's slot; a stream that gets events is kept."""

    async def body(catalog: Any, host: Host) -> Any:
        async with Client(build_server(catalog)) as client:
            with anyio.fail_after(WAIT):
                async with client.listen(resource_subscriptions=["obs://a"]) as sub:
                    events = [event async for event in sub]  # ends: the server closed it
            held = catalog.slots.count("listen")
        return events, held

    events, held = run_served(OBSERVED_TOML + SERVE + "listen_idle = 1\n", tmp_path, body)
    assert (events, held) == ([], 0)


def test_a_2025_sessions_get_stream_is_closed_after_listen_idle(tmp_path: Path) -> None:
    """An open GET stream does not hold its session past `session_idle` for ever: it is closed after
    `listen_idle` seconds (the SDK's client reopens it)."""
    config = tmp_path / "agent-host.toml"
    config.write_text(OBSERVED_TOML + SERVE + "listen_idle = 1\n")
    served = HttpServe(config)
    try:
        opened = httpx2.post(served.url, json=INITIALIZE, headers=JSON_HEADERS)
        session = {**JSON_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"],
                   "mcp-protocol-version": "2025-06-18"}  # fmt: skip
        httpx2.post(served.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        with httpx2.stream("GET", served.url, headers=session, timeout=WAIT) as stream:
            status = stream.status_code
            received = b"".join(stream.iter_bytes())  # until the server ends the stream
    finally:
        served.stop()
    assert status == 200 and b"jsonrpc" not in received
