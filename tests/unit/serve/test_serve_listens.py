"""`agent-host serve --http` accepts connections from the moment it prints its URL.

The socket listens before uvicorn runs, so a client that connects as soon as the URL is printed is not
refused.
"""

from __future__ import annotations

import io
import re
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
import uvicorn

from agent_host.config.models import ServeSettings
from agent_host.serve import http


class _Catalog:
    @asynccontextmanager
    async def running(self) -> AsyncIterator[_Catalog]:
        yield self

    def offered(self) -> tuple[list[str], list[str]]:
        return ["scout"], []


@pytest.mark.anyio
async def test_the_printed_url_accepts_connections_before_uvicorn_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    started = anyio.Event()

    async def uvicorn_still_starting(self: Any, sockets: Any = None) -> None:
        started.set()
        await anyio.sleep_forever()

    stderr = io.StringIO()
    monkeypatch.setattr(uvicorn.Server, "serve", uvicorn_still_starting)
    monkeypatch.setattr(http, "build_app", lambda *args: None)
    monkeypatch.setattr(sys, "stderr", stderr)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(http.serve_http, cast(Any, None), cast(Any, _Catalog()), ServeSettings(), "127.0.0.1:0")
        await started.wait()
        match = re.search(r"serving MCP on http://127\.0\.0\.1:(\d+)/mcp", stderr.getvalue())
        assert match, stderr.getvalue()
        banner = f"/mcp\nagent-host: offering agents scout\nagent-host: HTTP tool API: GET http://127.0.0.1:{match.group(1)}/"
        assert banner in stderr.getvalue(), stderr.getvalue()
        with socket.create_connection(("127.0.0.1", int(match.group(1))), timeout=2):
            pass  # refused before the fix: bound, not listening
        tasks.cancel_scope.cancel()
