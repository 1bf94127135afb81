"""What the model servers of the tests share: scripts chosen by the model's name, the record of the
requests and of the clients that went away, SSE answers that see their client go, and serving.

A request's `model` picks its answer (`script_for`): "tools" (text, then two tool calls), "long"
(finish: length), "filtered" (content filter), "many-calls" and "big-arguments" (past the host's
bounds; a stream of either then hangs), "no-usage" (a stream without usage), "broken" (an error
event inside the stream), "hang" (a stream that sends one piece, then nothing until its client
goes), "drip" (OpenAI wire: keep-alive comments only, until its client goes), "slow" (no answer at
all until its client goes), "error-NNN" (that status, with the wire's
error body; 401 and 400 quote the key the request carried, as some servers do), "agent" (an agent
loop's model: `add` of 2 and 3 while no tool answered, then "done: " and the tools' answers);
hostile answers (`hostile`), each without end until the client goes: "flood-body" (a body of
whitespace), "flood-event" (an SSE event of many short lines), "flood-line" (one SSE line);
"gzip" (a compressed body though identity was asked for), "redirect" (a 307 to another path),
"not-json" (a body that does not parse), "deep" (JSON nested 100,000 levels); "leak" writes the key
the request carried into its text and a tool call's arguments (`leaked`; the OpenAI wire's blocking
answer names it as the model too); any other model echoes the last user message.
`GET /test/requests` returns what was asked (body and headers); `GET /test/disconnects?count=N`
waits (at most `WAIT_BOUND` s) until N clients went away mid-answer and says how many did.
`python -m tests.servers.openai_wire` (or `anthropic_wire`) serves on a free port and prints
`listening on URL`.
"""

from __future__ import annotations

import gzip
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
import anyio.lowlevel
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from agent_host.providers.joining import MAX_ARGUMENTS_CHARS, MAX_TOOL_CALLS

WAIT_BOUND: Final = 10.0
"""Seconds `GET /test/disconnects` waits at most for the clients it is asked about."""

PROMPT_TOKENS: Final = 11
"""The input tokens every scripted answer reports."""

COMPLETION_TOKENS: Final = 7
"""The output tokens every scripted answer reports."""

FRAGMENT: Final = 5
"""Characters of a tool call's arguments per streamed fragment."""

BIG_FRAGMENT: Final = 64 * 1024
"""Characters per fragment of the "big-arguments" answer."""

MODELS: Final = ("gpt-4.1", "gpt-4.1-mini", "gpt-4o", "o3", "claude-test")
"""The models `GET /v1/models` lists."""

Finish = Literal["stop", "length", "tool", "filter"]


@dataclass(frozen=True)
class Call:
    id: str
    name: str
    arguments: dict[str, Any]

    @property
    def text(self) -> str:
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Script:
    """One scripted answer."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    finish: Finish = "stop"
    usage: bool = True
    then_hang: bool = False
    """A stream sends the tool calls, then nothing until its client goes (one past a bound is then seen
    closed by the client, whatever the sockets' buffers hold)."""


TOOL_CALLS: Final = (
    Call("call_lookup", "lookup", {"city": "Paris", "days": 3}),
    Call("call_add", "add", {"a": 2, "b": 3}),
)
"""The calls of the "tools" answer."""


def last_user_text(messages: object) -> str:
    """The text of the last user message of a request's `messages` (either wire)."""
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def tool_answers(messages: object) -> list[str]:
    """The tools' answers a request's `messages` carry (OpenAI `tool` messages, Anthropic
    `tool_result` blocks)."""
    found: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and isinstance(message.get("content"), str):
            found.append(message["content"])
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


def script_for(model: str, messages: object) -> Script:
    """The answer a request for `model` gets (see the module docstring)."""
    if model == "agent":
        answers = tool_answers(messages)
        if answers:
            return Script("done: " + " | ".join(answers))
        return Script(None, (Call("call_add", "add", {"a": 2, "b": 3}),), "tool")
    if model == "tools":
        return Script("Let me look.", TOOL_CALLS, "tool")
    if model == "long":
        return Script("This answer was cut sh", finish="length")
    if model == "filtered":
        return Script(None, finish="filter")
    if model == "many-calls":
        calls = tuple(Call(f"call_{n}", "add", {"a": n}) for n in range(MAX_TOOL_CALLS + 1))
        return Script(None, calls, "tool", then_hang=True)
    if model == "big-arguments":
        return Script(None, (Call("call_big", "store", {"blob": "x" * MAX_ARGUMENTS_CHARS}),), "tool", then_hang=True)
    return Script(f"echo: {last_user_text(messages)}", usage=model != "no-usage")


def leaked(request: Request) -> Script:
    """The "leak" answer: the request's key in its text and in the arguments of a call of `lookup`."""
    key = credential(request)
    return Script(f"your key is {key} indeed", (Call("call_leak", "lookup", {"key": key}),), "tool")


def error_status(model: str) -> int | None:
    """The status a model named "error-NNN" asks for."""
    prefix, _, status = model.partition("-")
    return int(status) if prefix == "error" and status.isdigit() else None


def credential(request: Request) -> str:
    """The key the request carried (as an `Authorization` bearer or an `x-api-key`)."""
    return request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")


@dataclass
class Record:
    """What the server was asked, and how many clients went away mid-answer."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    disconnects: int = 0
    _changed: anyio.Condition | None = None

    def condition(self) -> anyio.Condition:
        if self._changed is None:
            self._changed = anyio.Condition()
        return self._changed

    async def went_away(self) -> None:
        async with self.condition():
            self.disconnects += 1
            self.condition().notify_all()

    async def wait_for(self, count: int) -> int:
        with anyio.move_on_after(WAIT_BOUND):
            async with self.condition():
                while self.disconnects < count:
                    await self.condition().wait()
        return self.disconnects


async def until_gone(receive: Receive, record: Record) -> None:
    """Wait until the client goes away, and count it."""
    while (await receive())["type"] != "http.disconnect":
        pass
    await record.went_away()


class EventStream(Response):
    """An SSE answer of `events` (encoded frames) that sees its client go: a client that goes away
    before the last frame is counted in `record` (and the rest is not sent)."""

    def __init__(
        self, events: AsyncIterator[bytes], record: Record, content_type: bytes = b"text/event-stream; charset=utf-8"
    ) -> None:
        # Not Response.__init__: it would declare a Content-Length (of an empty body).
        self.status_code, self.background = 200, None
        self.raw_headers = [(b"content-type", content_type), (b"cache-control", b"no-cache")]
        self.events = events
        self.record = record

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        finished = False

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            if not finished:
                await self.record.went_away()
                tasks.cancel_scope.cancel()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            async for frame in self.events:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
            finished = True
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            tasks.cancel_scope.cancel()


FLOOD: Final = 1024 * 1024
"""Bytes per frame of a hostile answer."""


async def _flood(head: bytes, piece: bytes) -> AsyncIterator[bytes]:
    """`head`, then `piece` again and again until the client goes."""
    yield head
    while True:
        yield piece
        await anyio.lowlevel.checkpoint()


def hostile(model: str, record: Record) -> Response | None:
    """The hostile answer a request for `model` gets (see the module docstring); None for another model."""
    if model == "flood-body":  # whitespace, which JSON allows before a value, without end
        return EventStream(_flood(b"", b" " * FLOOD), record, b"application/json")
    if model == "flood-event":  # 1 KiB `data:` lines without end, no blank line between them
        line = b"data: " + b"x" * 1017 + b"\n"
        return EventStream(_flood(b"", line * 1024), record)
    if model == "flood-line":  # one `data:` line without end
        return EventStream(_flood(b"data: ", b"x" * FLOOD), record)
    if model == "redirect":
        return Response(status_code=307, headers={"location": "/v1/elsewhere"})
    if model == "not-json":
        return Response(b"this is not JSON", headers={"content-type": "application/json"})
    if model == "deep":
        return Response(b"[" * 100_000, headers={"content-type": "application/json"})
    if model == "gzip":
        body = gzip.compress(json.dumps({"error": "compressed"}).encode())
        return Response(body, headers={"content-encoding": "gzip", "content-type": "application/json"})
    return None


def record_routes(record: Record) -> list[Route]:
    """The routes a test reads the record through."""

    async def requests(request: Request) -> Response:
        return JSONResponse(record.requests)

    async def disconnects(request: Request) -> Response:
        return JSONResponse({"disconnects": await record.wait_for(int(request.query_params.get("count", "0")))})

    return [Route("/test/requests", requests), Route("/test/disconnects", disconnects)]


async def remember(request: Request, record: Record) -> dict[str, Any]:
    """The request's JSON body, recorded with its path and headers."""
    body: dict[str, Any] = await request.json()
    record.requests.append({"path": request.url.path, "headers": dict(request.headers), "body": body})
    return body


def app_with(routes: list[Route], record: Record) -> Starlette:
    return Starlette(routes=[*routes, *record_routes(record)])


def serve(build: Callable[[], Starlette], argv: list[str]) -> None:
    """Serve the app on 127.0.0.1 (`--port`, default 0: a free one), printing `listening on URL` first."""
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    config = uvicorn.Config(build(), log_level="warning", timeout_graceful_shutdown=1)
    sys.stdout.write(f"listening on http://127.0.0.1:{sock.getsockname()[1]}\n")
    sys.stdout.flush()
    anyio.run(uvicorn.Server(config).serve, [sock])
