"""The transport's streams, watched: the end of its output means the server went away, garbage breaks
the protocol, and nothing it cannot encode reaches its writer.

`signal_end(transport, on_end, on_garbage)` yields the transport with a receive stream that calls
`on_end` when it ends or breaks, and `on_garbage` for each item that is an exception (a line the
transport could not parse: a stdio server writing something that is not JSON-RPC on stdout).
`offending_input` says what that line was, shortened for a message.

Its send stream (`WriteGuard`) encodes each message first and raises `Unsendable` in the sender's
task for one it cannot encode (a lone surrogate, too deep): the transport's shared writer would
otherwise fail on it and close the connection for every request on it. `TaskCalls`: the receive
stream gives a task-augmented `tools/call`'s answer the `content` SDK 2.3's check needs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Transport
from mcp.shared.message import SessionMessage

from agent_host.toolings.mcp.errors import Unsendable, first_line

ReadStream = Any
"""The SDK's transport receive stream (its protocol type lives in a private module)."""


def offending_input(exc: Exception) -> str:
    """The text a server wrote that failed to parse, shortened for a message."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            raw = errors()[0].get("input")
        except (IndexError, TypeError, AttributeError):
            raw = None
        if isinstance(raw, str | bytes):
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            return repr(text[:120])
    return first_line(exc)


@asynccontextmanager
async def signal_end(
    transport: Transport, on_end: Callable[[], None], on_garbage: Callable[[Exception], None] | None
) -> AsyncIterator[tuple[Any, Any]]:
    """The transport, with a receive stream that reports its end and unparseable lines."""
    async with transport as (read, write):
        tasks = TaskCalls()
        yield EndSignal(read, on_end, on_garbage, tasks), WriteGuard(write, tasks)


class TaskCalls:
    """The ids of the task-augmented `tools/call` requests sent and not yet answered."""

    def __init__(self) -> None:
        self._pending: set[types.RequestId] = set()

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest) and message.method == "tools/call":
            if isinstance(message.params, dict) and "task" in message.params:
                self._pending.add(message.id)

    def received(self, item: SessionMessage) -> None:
        message = item.message
        if not self._pending or not isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            return
        if message.id is None or message.id not in self._pending:
            return
        self._pending.discard(message.id)
        if isinstance(message, types.JSONRPCResponse) and "task" in message.result:
            message.result.setdefault("content", [])


WriteStream = Any
"""The SDK's transport send stream (its protocol type lives in a private module)."""


class WriteGuard:
    """A `WriteStream` that refuses, with `Unsendable`, a message the transport could not encode."""

    def __init__(self, inner: WriteStream, tasks: TaskCalls | None = None) -> None:
        self._inner = inner
        self._tasks = tasks

    async def send(self, item: SessionMessage, /) -> None:
        try:
            item.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
        except (ValueError, RecursionError) as exc:  # pydantic's serialization errors and UnicodeError are ValueErrors
            raise Unsendable(first_line(exc)) from None
        if self._tasks is not None:
            self._tasks.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> WriteGuard:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class EndSignal:
    """A `ReadStream` that calls `on_end` when the stream ends or breaks (the server went away), and
    `on_garbage` for an item that is an exception (a line the transport could not parse)."""

    def __init__(
        self,
        inner: ReadStream,
        on_end: Callable[[], None],
        on_garbage: Callable[[Exception], None] | None,
        tasks: TaskCalls | None = None,
    ) -> None:
        self._inner = inner
        self._tasks = tasks
        self._on_end = on_end
        self._on_garbage = on_garbage

    @property
    def last_context(self) -> object:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        if isinstance(item, Exception):
            if self._on_garbage is not None:
                self._on_garbage(item)
        elif self._tasks is not None:
            self._tasks.received(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> EndSignal:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> EndSignal:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
