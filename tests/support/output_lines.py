"""A guest's forwarded output lines, kept so that a test can wait for one (an event, not a sleep).

`Lines` is the `output` a test hands to `Host.start`: the forwarder writes `[agent] text` lines to
it from its own thread; `wait_for(text, timeout)` returns once a line containing `text` arrived, or
raises `AssertionError` naming what was seen when `timeout` seconds passed first.
"""

from __future__ import annotations

import io
import threading


class Lines(io.StringIO):
    """Every line written so far, with a condition to wait on (a `TextIO`; nothing kept but the lines)."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: list[str] = []
        self._changed = threading.Condition()

    def write(self, text: str) -> int:
        with self._changed:
            self._seen.extend(line for line in text.splitlines() if line)
            self._changed.notify_all()
        return len(text)

    def wait_for(self, text: str, timeout: float) -> str:
        with self._changed:
            found = self._changed.wait_for(lambda: self._first(text) is not None, timeout)
            if not found:
                raise AssertionError(f"no output line with {text!r} within {timeout} s; seen: {self._seen}")
            line = self._first(text)
            assert line is not None
            return line

    def _first(self, text: str) -> str | None:
        return next((line for line in self._seen if text in line), None)
