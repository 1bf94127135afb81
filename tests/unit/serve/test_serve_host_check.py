"""Why `serve.hosts` keeps its own Host and Origin check rather than the MCP SDK's: what the SDK's
`TransportSecurityMiddleware` does with the rules `HostRules` holds. A canary: when a release of the SDK
covers them, a test here fails, and `hosts` can take the SDK's for what it then covers.
"""

from __future__ import annotations

import logging

import pytest
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request

from agent_host.serve.hosts import HostRules

pytestmark = pytest.mark.anyio


async def sdk_answer(
    sdk: TransportSecurityMiddleware, host: str, origin: str | None = None
) -> tuple[int, bytes] | None:
    """The SDK's refusal of a GET with these headers (status, body), or None when it lets it through."""
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin is not None else [])
    request = Request({"type": "http", "method": "GET", "path": "/mcp", "headers": headers})
    refused = await sdk.validate_request(request)
    return None if refused is None else (refused.status_code, bytes(refused.body))


def sdk_with(hosts: list[str], origins: list[str]) -> TransportSecurityMiddleware:
    return TransportSecurityMiddleware(TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins))


async def test_the_sdks_check_has_no_name_patterns_and_is_case_sensitive(caplog: pytest.LogCaptureFixture) -> None:
    ours = HostRules.of("127.0.0.1", ["*.corp.example"])
    sdk = sdk_with(["*.corp.example", "localhost:*"], ["http://localhost:*"])
    assert ours.host_allowed("build.corp.example:8080") and ours.host_allowed("LOCALHOST:8000")
    with caplog.at_level(logging.WARNING, logger="mcp.server.transport_security"):
        assert await sdk_answer(sdk, "build.corp.example:8080") == (421, b"Invalid Host header")
        assert await sdk_answer(sdk, "LOCALHOST:8000") == (421, b"Invalid Host header")  # a plain-text answer
    assert len(caplog.records) == 2  # each refusal logged, unthrottled


async def test_the_sdks_check_has_no_same_origin_rule_and_checks_no_origin_when_any_host_is_answered() -> None:
    ours = HostRules.of("0.0.0.0", None)  # a bind beyond loopback: any Host, Origins still checked
    assert ours.host_allowed("box.lan:8080") and ours.origin_allowed("http://box.lan:8080", "box.lan:8080")
    assert not ours.origin_allowed("http://evil.example", "box.lan:8080")
    off = TransportSecurityMiddleware(TransportSecuritySettings(enable_dns_rebinding_protection=False))
    assert await sdk_answer(off, "box.lan:8080", "http://evil.example") is None  # any Host: no Origin check either
    named = sdk_with(["box.lan:8080"], ["http://localhost:*"])
    assert await sdk_answer(named, "box.lan:8080", "http://box.lan:8080") == (403, b"Invalid Origin header")
