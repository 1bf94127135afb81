"""`LimitLog`: what a client can provoke at will is logged once per interval, not once per event.

Each bound (or event kind) has its own clock: the first occurrence logs a warning at once; the ones
in the next `LOG_INTERVAL` seconds are only counted, and the first one after it logs again, saying
how many were not logged in between. Used for refusals at a bound (sessions, subscriptions,
connections), connections cut by a timeout, `accept` failing for want of descriptors, uvicorn's
warnings about one request and calls cancelled by their clients. Used on one event loop (not
thread-safe).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

LOG_INTERVAL: Final = 30.0
"""Seconds between two log lines about the same bound."""


@dataclass
class _Bound:
    logged_at: float
    quiet: int = 0
    """Occurrences since the last line, not logged."""


class LimitLog:
    """See the module docstring; `clock` is for tests."""

    def __init__(
        self, logger: logging.Logger, interval: float = LOG_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._logger = logger
        self._interval = interval
        self._clock = clock
        self._bounds: dict[str, _Bound] = {}

    def reached(self, bound: str, message: str, level: int = logging.WARNING) -> None:
        """`bound` (its config key, or an event's name) was reached once more: log `message` (at
        `level`) unless a line about it was logged less than the interval ago."""
        now = self._clock()
        known = self._bounds.get(bound)
        if known is not None and now - known.logged_at < self._interval:
            known.quiet += 1
            return
        quiet = known.quiet if known is not None else 0
        self._bounds[bound] = _Bound(now)
        more = f" (and {quiet} more since the last report)" if quiet else ""
        self._logger.log(level, "%s%s; reported once per %g s", message, more, self._interval)
