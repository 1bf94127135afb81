"""`Feed`: items from a worker thread, forwarded in order to a coroutine on the loop that made it.

Pushing never blocks the worker for long and never fails: at most `size` items wait, more are
dropped (the consumer is slow), and an item pushed after the feed was closed, or after its loop
ended, is dropped too. Close the feed when the producer is done; `forward` then ends once it has
delivered what was waiting.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

T = TypeVar("T")


class Feed(Generic[T]):
    """See the module docstring. Make it on the loop; a context manager closing both ends."""

    def __init__(self, size: int) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[T](size)
        self._token = anyio.lowlevel.current_token()

    def push(self, item: T) -> None:
        """From a worker thread: offer `item` (dropped when the feed is full or closed)."""
        try:
            anyio.from_thread.run_sync(self._offer, item, token=self._token)
        except RuntimeError:  # the loop has ended: nobody is listening any more
            pass

    def _offer(self, item: T) -> None:
        try:
            self._send.send_nowait(item)
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def close(self) -> None:
        """No more items: `forward` ends after delivering those waiting."""
        self._send.close()

    async def forward(self, sink: Callable[[T], Awaitable[None]]) -> None:
        """Pass every item to `sink`, in order, until the feed is closed."""
        async with self._receive:
            async for item in self._receive:
                await sink(item)

    def __enter__(self) -> Feed[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self._send.close()
        self._receive.close()
