"""`Feed`: items from a worker thread (or the loop), forwarded in order to a coroutine on the loop
that made it.

Bounded by bytes, not by count: each item costs `cost(item)` bytes (its payload plus a fixed
overhead, so empty items are not free) and at most `budget` bytes wait. Pushing never blocks the
worker for long and never fails: an item that does not fit is dropped (the consumer is slow), and
the next item that fits, or the end of the feed, is preceded by one marker (`dropped(N)`) saying
how many were dropped, so a slow consumer costs at most `budget` bytes and a few markers. An item
pushed after the feed was closed, or after its loop ended, is dropped silently. Close the feed
when the producer is done; `forward` then ends once it has delivered what was waiting. A consumer
that gives up (`forward` cancelled) learns with `abandon` how many items it never got, so that it
can say so.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

T = TypeVar("T")


class Feed(Generic[T]):
    """See the module docstring. Make it on the loop; a context manager closing it."""

    def __init__(self, budget: int, cost: Callable[[T], int], dropped: Callable[[int], T] | None = None) -> None:
        """`budget`: bytes that may wait; `cost`: the bytes of one item; `dropped`: the marker item
        for N dropped items (None: drop without a marker)."""
        self._budget = budget
        self._cost = cost
        self._marker = dropped
        self._items: deque[tuple[T, int, int]] = deque()
        """(item, its cost, the items it stands for: 1, or N for a marker of N dropped)."""
        self._held = 0
        self._dropped = 0
        self._closed = False
        self._delivering = 0
        """The items the one being delivered stands for (0: none is)."""
        self._ready = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        self._loop_thread = threading.get_ident()

    @property
    def held(self) -> int:
        """Bytes waiting now (on the loop)."""
        return self._held

    def push(self, item: T) -> None:
        """From a worker thread (waiting until the loop took it: a fast producer is held back, not
        queued without bound) or from the feed's loop: offer `item` (dropped when it does not fit or
        the feed is closed)."""
        if threading.get_ident() == self._loop_thread:
            self._offer(item)
            return
        try:
            anyio.from_thread.run_sync(self._offer, item, token=self._token)
        except RuntimeError:  # the loop has ended: nobody is listening any more
            pass

    def _offer(self, item: T) -> None:
        if self._closed:
            return
        cost = self._cost(item)
        if self._held + cost > self._budget:
            self._dropped += 1
            return
        self._flush_marker()
        self._items.append((item, cost, 1))
        self._held += cost
        self._ready.set()

    def _flush_marker(self) -> None:
        if self._dropped and self._marker is not None:
            self._items.append((self._marker(self._dropped), 0, self._dropped))
            self._ready.set()
        self._dropped = 0

    def close(self) -> None:
        """No more items: `forward` ends after delivering those waiting (and a last marker)."""
        if not self._closed:
            self._flush_marker()
            self._closed = True
            self._ready.set()

    async def forward(self, sink: Callable[[T], Awaitable[None]]) -> None:
        """Pass every item to `sink`, in order, until the feed is closed and empty."""
        while True:
            while not self._items:
                if self._closed:
                    return
                self._ready = anyio.Event()
                await self._ready.wait()
            item, cost, counts = self._items.popleft()
            self._held -= cost
            self._delivering = counts
            await sink(item)
            self._delivering = 0

    def abandon(self) -> int:
        """The consumer gives up (after `forward` was cancelled): every waiting item is dropped; the
        items it never got (those waiting, those dropped before, the one cut mid-delivery)."""
        lost = self._delivering + self._dropped + sum(counts for _, _, counts in self._items)
        self._closed = True
        self._items.clear()
        self._held = self._dropped = self._delivering = 0
        return lost

    def __enter__(self) -> Feed[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._items.clear()
        self._held = 0
