"""Network providers on an event loop of their own (`ProviderLoop`, `OnOwnLoop`), off the bridge loop.

A model SDK parses and builds every answer on the loop it runs on (a 12 MiB answer of 100,000
tool calls held a loop 1.4 s, measured), and the bridge loop serves every guest's tool calls and
every client of `serve`. So each `ProviderSet` runs its `openai` and `anthropic` providers on one
daemon thread with an asyncio loop of its own, started at the first such provider; `OnOwnLoop`
is the provider seen from any other loop: each coroutine runs there and is awaited here, and a
cancellation here cancels it there (so `cancel` still closes the upstream stream at once). A
stream hands its pieces over one at a time; closing it here closes it there without waiting.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Final, TypeVar

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ChatDelta, ChatRequest, ChatResult
from agent_host.providers.base import ChatStream, Provider

_T = TypeVar("_T")

JOIN_TIMEOUT: Final = 5.0
"""Seconds `ProviderLoop.stop` waits for the thread to end."""


class ProviderLoop:
    """A daemon thread running an asyncio loop for providers; started on first use, stopped once."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._lock = threading.Lock()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, its thread started now if it is not yet; `unavailable` once stopped."""
        with self._lock:
            if self._stopped:
                raise ToolingError(ErrorCode.UNAVAILABLE, "the providers are closed: the host is shutting down")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()
                    loop.close()

                self._thread = threading.Thread(target=serve, name="agent-host-providers", daemon=True)
                self._thread.start()
                started.wait()
                self._loop = loop
            return self._loop

    async def run(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """`fn(*args)` on the providers' loop, awaited on the calling loop; cancelling the caller
        cancels it there."""
        future = asyncio.run_coroutine_threadsafe(_call(fn, *args), self.loop)
        try:
            return await asyncio.wrap_future(future)
        finally:
            future.cancel()  # a no-op once it is done

    def submit(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> concurrent.futures.Future[Any] | None:
        """Start `fn(*args)` there without waiting for it (None once stopped: nothing runs there)."""
        with self._lock:
            loop = None if self._stopped else self._loop
        return asyncio.run_coroutine_threadsafe(_call(fn, *args), loop) if loop is not None else None

    def stop(self) -> None:
        """Stop the loop (what still runs there is dropped) and wait for its thread; idempotent."""
        with self._lock:
            loop, thread, self._loop, self._stopped = self._loop, self._thread, None, True
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(JOIN_TIMEOUT)


async def _call(fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
    return await fn(*args)


class OnOwnLoop(Provider):
    """`inner`, every coroutine of it run on `loop` (see the module docstring)."""

    def __init__(self, inner: Provider, loop: ProviderLoop) -> None:
        super().__init__(inner.config)
        self.kind = inner.kind
        self._inner = inner
        self._own = loop

    @property
    def inner(self) -> Provider:
        """The provider itself (on the providers' loop)."""
        return self._inner

    async def models(self) -> list[str]:
        return await self._own.run(self._inner.models)

    async def chat(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatResult:
        return await self._own.run(_chat, self._inner, request, model, max_tokens)

    async def stream(self, request: ChatRequest, *, model: str, max_tokens: int | None) -> ChatStream:
        pieces = self._inner.stream(request, model=model, max_tokens=max_tokens)
        try:
            while True:
                item = await self._own.run(_next, pieces)
                if item is None:
                    return
                yield item
        finally:
            self._own.submit(pieces.aclose)  # closes the upstream stream there, without waiting here

    async def aclose(self) -> None:
        await self._own.run(self._inner.aclose)


async def _chat(inner: Provider, request: ChatRequest, model: str, max_tokens: int | None) -> ChatResult:
    return await inner.chat(request, model=model, max_tokens=max_tokens)


async def _next(pieces: AsyncGenerator[ChatDelta | ChatResult, None]) -> ChatDelta | ChatResult | None:
    return await anext(pieces, None)
