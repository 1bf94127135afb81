"""Log records of the host, kept so that a test can wait for one (an event, not a sleep).

`Records` is a logging handler attached to a logger for a `with` block (`Records.on("agent_host")`):
it keeps every record, from whichever thread logs it; `wait_for(text, timeout)` returns the first
record whose message contains `text` once it arrived, or raises `AssertionError` naming what was
seen when `timeout` seconds passed first.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Records(logging.Handler):
    """Every record handled so far, with a condition to wait on."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._changed = threading.Condition()

    @classmethod
    @contextmanager
    def on(cls, name: str) -> Iterator[Records]:
        """A handler on logger `name` (at DEBUG) for the block; the logger's level comes back after."""
        records = cls()
        logger = logging.getLogger(name)
        level = logger.level
        logger.addHandler(records)
        logger.setLevel(logging.DEBUG)
        try:
            yield records
        finally:
            logger.removeHandler(records)
            logger.setLevel(level)

    def emit(self, record: logging.LogRecord) -> None:
        with self._changed:
            self.records.append(record)
            self._changed.notify_all()

    def wait_for(self, text: str, timeout: float) -> logging.LogRecord:
        with self._changed:
            self._changed.wait_for(lambda: self._first(text) is not None, timeout)
            found = self._first(text)
        if found is None:
            raise AssertionError(f"no log record with {text!r} within {timeout} s: {self.messages()}")
        return found

    def messages(self) -> list[str]:
        with self._changed:
            return [record.getMessage() for record in self.records]

    def _first(self, text: str) -> logging.LogRecord | None:
        return next((record for record in self.records if text in record.getMessage()), None)
