"""The guest's `log` interface: a message at a level, into the host's log `host.guest`.

Levels map to Python's (`trace` is `DEBUG`; an unknown level is `INFO`); a message longer than
`MAX_LOG_MESSAGE` characters is cut with a marker, and its control characters are escaped
(`printable`: a guest cannot forge a host line or drive the terminal). Each line reads `[NAME] LEVEL:
message`, the WIT level as the guest gave it. What one run may log is bounded (`LogBudget`: the
bytes of `guest_output_max`); past it, one line says so and the rest is dropped.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

from agent_host._support.printable import DEFAULT_LIMIT, printable
from agent_host._support.printable import cut as printable_cut
from agent_host.policy.grants import Limit

guest_logger = logging.getLogger("agent_host.guest")

MAX_LOG_MESSAGE: Final = DEFAULT_LIMIT
"""Characters of one guest log message kept; the rest is cut with a marker."""

LOG_LEVELS: Final = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}


def cut(message: str) -> str:
    """`message`, cut to `MAX_LOG_MESSAGE` characters with a marker saying how many were cut (wherever
    a guest's or a server's line is passed on: the host log, a client of `serve`)."""
    return printable_cut(message, MAX_LOG_MESSAGE)


def log(agent: str, level: str, message: str) -> None:
    """Log `message` of guest `agent` at WIT `level` (see the module docstring)."""
    guest_logger.log(
        LOG_LEVELS.get(level, logging.INFO), "[%s] %s: %s", agent, level, printable(message, MAX_LOG_MESSAGE)
    )


class LogBudget:
    """The bytes of log messages one run may still write (`limit`, counted as cut). Thread-safe."""

    def __init__(self, limit: Limit) -> None:
        self._limit = limit
        self._left = int(limit.value)
        self._lock = threading.Lock()
        self.dropped = 0
        """Messages dropped once the budget was spent."""

    def admit(self, agent: str, message: str) -> bool:
        """Whether `message` may be logged; the first one refused logs one warning naming the bound."""
        size = min(len(message), MAX_LOG_MESSAGE)
        with self._lock:
            if self._left >= size:
                self._left -= size
                return True
            self.dropped += 1
            first = self.dropped == 1
        if first:
            guest_logger.warning(
                "[%s] more than %d bytes of log messages in this run; the rest is dropped (%s)",
                agent,
                int(self._limit.value),
                self._limit.key,
            )
        return False
