"""Turns: how many calls of `agent-host serve` run at once, and how many may wait.

At most `max_concurrent` calls hold a turn; up to `queue` more wait for one in arrival order; a call
beyond that is refused at once (`busy` names the numbers), never queued unboundedly. Used on the
server's event loop only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class Turns:
    """The turns of one server's calls (see the module docstring)."""

    def __init__(self, max_concurrent: int, queue: int) -> None:
        self._limiter = anyio.CapacityLimiter(max_concurrent)
        self._queue = queue
        self._waiting = 0

    def busy(self) -> str | None:
        """Why a call arriving now is refused, or None when it may run or wait."""
        if self._limiter.available_tokens == 0 and self._waiting >= self._queue:
            return (
                f"busy: {self._limiter.borrowed_tokens} calls run and {self._waiting} wait "
                "(the server's max_concurrent and queue); try again later"
            )
        return None

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for a turn (check `busy` first) and hold it for the block."""
        self._waiting += 1
        waiting = True
        try:
            async with self._limiter:
                self._waiting -= 1
                waiting = False
                yield
        finally:
            if waiting:
                self._waiting -= 1
