"""A `traceparent` HTTP header on an MCP request, carried into the request's `_meta` (SEP-414).

The MCP SDK continues a client's trace from `params._meta.traceparent` only. A client that sends
the W3C header instead (an HTTP client instrumented by OpenTelemetry) gets the same: for a POST to
the MCP endpoint that carries a well-formed `traceparent` header, each JSON-RPC request in its body
whose `_meta` has none gets the header's (and `tracestate`). Only such requests are read: the body
(at most `max_body` bytes: a longer one passes untouched, for the SDK to refuse) is parsed off the
loop (`off_loop`), and a body that is not a JSON-RPC request passes as it came.
"""

from __future__ import annotations

import json
import re
from collections.abc import MutableMapping
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_host._support import off_loop

TRACEPARENT: Final = re.compile(rb"\A[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}\Z")
"""A W3C `traceparent` value (version, trace id, parent id, flags)."""

MAX_TRACESTATE: Final = 512
"""Bytes of a `tracestate` header carried (a longer one is left out)."""


class TraceHeaders:
    """ASGI middleware (see the module docstring) for POSTs to `path`."""

    def __init__(self, app: ASGIApp, path: str, max_body: int) -> None:
        self._app = app
        self._path = path
        self._max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        parent = headers.get(b"traceparent", b"").strip()
        if not TRACEPARENT.match(parent):
            await self._app(scope, receive, send)
            return
        state = headers.get(b"tracestate", b"").strip()
        received: list[Message] = []
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self._max_body or not message.get("more_body", False):
                break
        whole = len(received) > 0 and received[-1]["type"] == "http.request" and not received[-1].get("more_body")
        if whole and size <= self._max_body:
            body = b"".join(message.get("body", b"") for message in received)
            carried = await off_loop.run(_carried, body, parent, state, size=len(body))
            if carried is not None:
                received = [{"type": "http.request", "body": carried, "more_body": False}]
                scope = {**scope, "headers": _with_length(scope["headers"], len(carried))}
        await self._app(scope, _replay(received, receive), send)


def _carried(body: bytes, parent: bytes, state: bytes) -> bytes | None:
    """`body` with the trace context in each request's `_meta` that has none; None: unchanged."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    messages = document if isinstance(document, list) else [document]
    changed = False
    for message in messages:
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            continue
        params = message.setdefault("params", {})
        if not isinstance(params, dict):
            continue
        meta = params.setdefault("_meta", {})
        if not isinstance(meta, dict) or "traceparent" in meta:
            continue
        meta["traceparent"] = parent.decode("ascii")
        if state and len(state) <= MAX_TRACESTATE:
            meta["tracestate"] = state.decode("latin-1")
        changed = True
    return json.dumps(document).encode() if changed else None  # escaped: as it came (a lone surrogate too)


def _with_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    kept = [(name, value) for name, value in headers if name != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


def _replay(received: list[Message], receive: Receive) -> Receive:
    """A `receive` giving `received` first, then what `receive` gives."""
    pending = list(received)

    async def replayed() -> MutableMapping[str, Any]:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
