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

    def busy(self) -> str | None:
        """Why a call arriving now is refused, or None when it may run or wait. The waiting calls are
        the limiter's queue: a call ending hands its turn to the first of them, which leaves the queue
        then (a count of our own, lowered only once that call ran again, counted it twice meanwhile
        and refused calls early)."""
        waiting = self._limiter.statistics().tasks_waiting
        if self._limiter.available_tokens == 0 and waiting >= self._queue:
            return (
                f"busy: {self._limiter.borrowed_tokens} calls run and {waiting} wait "
                "(the server's max_concurrent and queue); try again later"
            )
        return None

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for a turn (check `busy` first, with no await between: a call enters the limiter's
        queue without yielding) and hold it for the block."""
        async with self._limiter:
            yield
