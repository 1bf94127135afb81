"""`Throttled`: a warning for an event that may recur thousands of times a second, logged at most
once per `LOG_INTERVAL`.

The first event is logged at once; the ones after it within the interval are only counted, and the
next line logged says how many there were. Used for what a client can provoke at will (connections
refused at the cap, connections cut by a timeout, `accept` failing for want of file descriptors).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

LOG_INTERVAL: Final = 30.0
"""Seconds between two log lines of one throttled event."""


class Throttled:
    """See the module docstring; `clock` is for tests."""

    def __init__(
        self, logger: logging.Logger, interval: float = LOG_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._next: float | None = None
        self._unlogged = 0

    def event(self, message: str) -> None:
        """One more occurrence, described by `message`."""
        now = self._clock()
        if self._next is not None and now < self._next:
            self._unlogged += 1
            return
        more = f" (and {self._unlogged} more since the last report)" if self._unlogged else ""
        self._logger.warning("%s%s; reported once per %g s", message, more, self._interval)
        self._unlogged = 0
        self._next = now + self._interval
