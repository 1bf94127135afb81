"""`Draining`: a stdio connection whose end of input waits for the answers it still owes.

The SDK's server loop ends when its read stream ends, and answers what is in flight with "Connection
closed". A stdio client that writes its requests and closes stdin (`agent-host serve --stdio <
requests.jsonl`) must get their answers, so `Draining` sits between the transport and the loop:
every request read is owed until a response or error with its id is written (or the client cancels
it with `notifications/cancelled`); at the end of input, the loop's read stream ends only once
nothing is owed. The wait is bounded by the calls themselves (each guest's wall-clock limit, each
tooling's timeout); a signal still stops the server at once.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from agent_host.toolings.mcp.sdk_hooks import ReadStream, WriteStream

Incoming = SessionMessage | Exception


class Draining:
    """The pair (`reader`, `writer`) to give the server loop in place of the transport's streams."""

    def __init__(self, read: ReadStream[Incoming], write: WriteStream[SessionMessage]) -> None:
        self._owed: set[types.RequestId] = set()
        self._settled = anyio.Event()
        self.reader = _Reader(self, read)
        self.writer = _Writer(self, write)

    def received(self, item: Incoming) -> None:
        if not isinstance(item, SessionMessage):
            return
        message = item.message
        if isinstance(message, types.JSONRPCRequest):
            self._owed.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            request_id = (message.params or {}).get("requestId")
            if isinstance(request_id, str | int):
                self._paid(request_id)

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._paid(message.id)

    def _paid(self, request_id: types.RequestId) -> None:
        self._owed.discard(request_id)
        if not self._owed:
            self._settled.set()

    async def settled(self) -> None:
        """Return once no request read is left unanswered."""
        while self._owed:
            self._settled = anyio.Event()
            await self._settled.wait()


class _Reader:
    """The transport's read stream; its end is held back until `Draining.settled`."""

    def __init__(self, draining: Draining, inner: ReadStream[Incoming]) -> None:
        self._draining = draining
        self._inner = inner

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Incoming:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._draining.settled()
            raise
        self._draining.received(item)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()


class _Writer:
    """The transport's write stream, telling `Draining` which requests are answered."""

    def __init__(self, draining: Draining, inner: WriteStream[SessionMessage]) -> None:
        self._draining = draining
        self._inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._draining.sent(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()
