"""The guest's `log` interface: a message at a level, into the host's log `host.guest`.

Levels map to Python's (`trace` is `DEBUG`; an unknown level is `INFO`); a message longer than
`MAX_LOG_MESSAGE` characters is cut with a marker saying how much was cut. Each line reads
`[NAME] LEVEL: message`: the agent's name, then the WIT level as the guest gave it (`trace`, `debug`,
`info`, `warn`, `error`), so every handler shows it whatever Python level it maps to.
"""

from __future__ import annotations

import logging
from typing import Final

guest_logger = logging.getLogger("host.guest")

MAX_LOG_MESSAGE: Final = 16 * 1024
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
    if len(message) > MAX_LOG_MESSAGE:
        return message[:MAX_LOG_MESSAGE] + f"... [{len(message) - MAX_LOG_MESSAGE} characters cut]"
    return message


def log(agent: str, level: str, message: str) -> None:
    """Log `message` of guest `agent` at WIT `level` (see the module docstring)."""
    guest_logger.log(LOG_LEVELS.get(level, logging.INFO), "[%s] %s: %s", agent, level, cut(message))
