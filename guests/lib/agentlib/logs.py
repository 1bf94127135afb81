"""The standard `logging` module reaches the host's log: `HostHandler`, installed when agentlib is imported.

`logging.getLogger(__name__).info("...")` in a guest is a `log` call with its level (debug, info,
warn, error; critical is error), the logger's name before the message (`name: message`), an
exception's traceback after it. The root logger is set to INFO when nothing set it (Python's
default, WARNING, would drop `info`); the host's own log level decides what is shown. While the
guest is being built (its module's top level), no host import can be called: records then go to
stderr, as Python's last-resort handler would.
"""

from __future__ import annotations

import logging
import sys

from wit_world.imports import log as _log

__all__ = ("HostHandler", "install")

_LEVELS = (
    (logging.ERROR, _log.Level.ERROR),
    (logging.WARNING, _log.Level.WARN),
    (logging.INFO, _log.Level.INFO),
    (logging.DEBUG, _log.Level.DEBUG),
)
"""Python's levels, highest first, and the WIT level of each (below DEBUG: trace)."""


def level_of(levelno: int) -> _log.Level:
    """The WIT level of a Python level number."""
    return next((wit for python, wit in _LEVELS if levelno >= python), _log.Level.TRACE)


class HostHandler(logging.Handler):
    """Sends each record to the host's log (see the module docstring)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            if record.name != "root":
                message = f"{record.name}: {message}"
        except Exception:
            self.handleError(record)
            return
        try:
            _log.log(level_of(record.levelno), message)
        except Exception:  # no host yet (the guest is being built): as Python's last resort does
            sys.stderr.write(message + "\n")


def install() -> None:
    """Add a `HostHandler` to the root logger, once; set the root level to INFO if nothing set it."""
    root = logging.getLogger()
    if not any(isinstance(handler, HostHandler) for handler in root.handlers):
        root.addHandler(HostHandler())
        if root.level == logging.WARNING:
            root.setLevel(logging.INFO)
