"""Each hook of `sdk_hooks` works on the installed SDK, and its fallback gives the same result.

Every private touch of the SDK is in that one module, which checks at import that what it relies on
exists (and the version it was tested with) and falls back to the public path otherwise. The fallback is
forced by marking the hook unavailable (`HOOKS[name] = False`, what the import-time check does when the
private name is missing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.message import SessionMessage

from agent_host import errors
from agent_host.toolings.mcp import sdk_hooks
from agent_host.toolings.mcp.stream import TaskCalls

pytestmark = pytest.mark.anyio

WAIT = 10.0
"""Seconds a spawn and its shutdown may take."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["hook", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test once through each hook and once through its fallback."""
    if request.param == "fallback":
        for name in sdk_hooks.HOOKS:
            monkeypatch.setitem(sdk_hooks.HOOKS, name, False)
    return str(request.param)


def test_every_hook_is_available_on_the_installed_sdk_a_tested_release() -> None:
    assert sdk_hooks.SDK_VERSION.startswith(sdk_hooks.TESTED_WITH)
    assert all(sdk_hooks.HOOKS.values()), sdk_hooks.HOOKS


async def test_spawning_reports_the_pid_of_the_stdio_server_it_started(mode: str, tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], env={})
    seen: list[int] = []
    with anyio.fail_after(WAIT), (tmp_path / "err.log").open("w") as errlog:
        async with sdk_hooks.spawning(seen.append):
            transport = stdio_client(params, errlog=errlog)
            await transport.__aenter__()
        try:
            assert len(seen) == 1
            pid = seen[0]
            assert os.getsid(pid) == pid and os.getpgid(pid) == pid  # it leads its own session
            assert pid in sdk_hooks.session_leaders()
        finally:
            await transport.__aexit__(None, None, None)


async def test_spawning_reports_nothing_to_a_block_that_started_no_server(mode: str) -> None:
    seen: list[int] = []
    async with sdk_hooks.spawning(seen.append):
        pass
    assert seen == []


async def test_results_checked_by_the_host_leave_valid_results_alone(mode: str) -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](1)
    with send, receive, out_send, out_receive:
        session = ClientSession(receive, out_send)
        applied = sdk_hooks.results_checked_by_the_host(session)
        assert applied is (mode == "hook")
        if applied:  # the host checks results itself: the session no longer lists or checks
            broken = types.CallToolResult(content=[], structured_content={"n": "not a number"})
            await session.validate_tool_result("any", broken)  # no listing, no RuntimeError
        else:
            assert session.validate_tool_result.__func__ is ClientSession.validate_tool_result  # type: ignore[attr-defined]


def _redirected(status: int, sent: str, location: str, method: str = "POST") -> httpx2.Response:
    request = httpx2.Request(method, sent)
    response = httpx2.Response(status, headers={"location": location}, request=request)
    following_method = method if status in (307, 308) else "GET"
    response.next_request = httpx2.Request(following_method, httpx2.URL(sent).join(location))
    return response


REDIRECTS = [
    _redirected(307, "http://127.0.0.1:9/token", "/token/"),
    _redirected(308, "http://127.0.0.1:9/token", "http://127.0.0.1:10/token"),
    _redirected(302, "http://127.0.0.1:9/token", "/other"),
    _redirected(302, "http://127.0.0.1:9/token", "/other", method="GET"),
    _redirected(307, "http://example.test/token", "https://example.test/token"),
    _redirected(307, "http://127.0.0.1:9/token", "http://user:pw@127.0.0.1:9/token"),
    httpx2.Response(200, request=httpx2.Request("POST", "http://127.0.0.1:9/token")),
]


def test_next_request_within_origin_follows_what_the_sdk_follows(monkeypatch: pytest.MonkeyPatch) -> None:
    hooked = [sdk_hooks.next_request_within_origin(response) for response in REDIRECTS]
    monkeypatch.setitem(sdk_hooks.HOOKS, "next_request_within_origin", False)
    fallback = [sdk_hooks.next_request_within_origin(response) for response in REDIRECTS]
    assert [r is not None for r in hooked] == [True, False, False, True, True, False, False]
    assert [r.url if r else None for r in fallback] == [r.url if r else None for r in hooked]


def _session_of(connection: Any) -> SimpleNamespace:
    """A request context as the SDK's runner builds it: its session holds the connection."""
    return SimpleNamespace(session=ServerSession(SimpleNamespace(), connection))


def test_connection_of_gives_the_requests_connection_or_names_what_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connection: Any = SimpleNamespace(protocol_version="2025-11-25")
    ctx: Any = _session_of(connection)
    assert sdk_hooks.connection_of(ctx) is connection
    monkeypatch.setitem(sdk_hooks.HOOKS, "connection_of", False)
    with pytest.raises(errors.SdkMismatch, match=r"no ServerSession\._connection .*install a tested release"):
        sdk_hooks.connection_of(ctx)


def test_open_sessions_gives_the_managers_sessions_or_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    manager = StreamableHTTPSessionManager(app=Server("t"))
    sessions = sdk_hooks.open_sessions(manager)
    assert dict(sessions) == {} and "nope" not in sessions
    monkeypatch.setitem(sdk_hooks.HOOKS, "open_sessions", False)
    with pytest.raises(errors.SdkMismatch, match="_server_instances"):
        sdk_hooks.open_sessions(manager)


def _request(request_id: int, params: dict[str, Any]) -> SessionMessage:
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params=params))


def _response(request_id: int, result: dict[str, Any]) -> SessionMessage:
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def test_the_answer_to_a_task_call_passes_the_sdks_tools_call_check_and_nothing_else_changes() -> None:
    """2025-11-25 Tasks through the public `send_request` (`mcp_stream.TaskCalls`)."""
    calls = TaskCalls()
    task = {"taskId": "t1", "status": "working", "createdAt": "2025-01-01T00:00:00Z", "ttl": 1000}
    calls.sent(_request(1, {"name": "slow", "arguments": {}, "task": {"ttl": 1000}}))
    calls.sent(_request(2, {"name": "fast", "arguments": {}}))
    created, plain, stray = (
        _response(1, {"task": dict(task)}),
        _response(2, {"task": "mine"}),
        _response(1, {"task": 1}),
    )
    for message in (created, plain, stray):
        calls.received(message)
    assert created.message.result == {"task": task, "content": []}  # type: ignore[union-attr]
    assert plain.message.result == {"task": "mine"}  # type: ignore[union-attr]
    assert stray.message.result == {"task": 1}  # type: ignore[union-attr]  # answered already: not touched
