"""Progress lines on stderr for slow steps (building a guest, first compile of a component).

`with progress("compiling demo.wasm"):` shows `agent-host: compiling demo.wasm ...` at once and an
end line `agent-host: compiling demo.wasm: done in N.N s` (`stopped after N.N s` on a stop request,
`failed after N.N s` when the body raised). Between them a terminal shows the elapsed seconds; any
other stream (CI logs, pipes) gets the start line and the end line only, so logs stay readable.
Output never goes to stdout.

How it is shown is a `Display`: `LineDisplay` (plain lines, the default) or one the command line
installs with `set_display` (a live line drawn with rich on a terminal, nothing under `--quiet`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, Protocol, TextIO

from agent_host.errors import Interrupted

TICK: Final = 1.0
"""Seconds between elapsed-time updates on a terminal."""


class Step(Protocol):
    """One step being shown."""

    def end(self, outcome: str, elapsed: float) -> None:
        """Finish the step: `outcome` is `done in`, `stopped after` or `failed after`."""


class Display(Protocol):
    """Shows steps; `begin` is called once per step, from the thread that runs it."""

    def begin(self, what: str) -> Step: ...


class LineDisplay:
    """Plain lines on `stream` (default: stderr as it is at each step), with elapsed seconds
    redrawn in place every `TICK` seconds when it is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def begin(self, what: str) -> Step:
        return _LineStep(what, self._stream if self._stream is not None else sys.stderr)


class _LineStep:
    def __init__(self, what: str, out: TextIO) -> None:
        self._what, self._out = what, out
        self._interactive = out.isatty()
        self._stop = threading.Event()
        start = time.monotonic()
        out.write(f"agent-host: {what} ..." + ("" if self._interactive else "\n"))
        out.flush()

        def tick() -> None:
            while not self._stop.wait(TICK):
                out.write(f"\ragent-host: {what} ... {time.monotonic() - start:.0f} s")
                out.flush()

        self._ticker = threading.Thread(target=tick, name="agent-host-progress", daemon=True)
        if self._interactive:
            self._ticker.start()

    def end(self, outcome: str, elapsed: float) -> None:
        self._stop.set()
        if self._interactive:
            self._ticker.join()
        prefix = "\r" if self._interactive else ""
        self._out.write(f"{prefix}agent-host: {self._what}: {outcome} {elapsed:.1f} s\n")
        self._out.flush()


_display: Display = LineDisplay()


def set_display(display: Display) -> Display:
    """Show every later step with `display`; returns the one it replaces."""
    global _display
    previous, _display = _display, display
    return previous


@contextmanager
def progress(what: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show the step `what` while the body runs (on `stream` as plain lines when given)."""
    step = (LineDisplay(stream) if stream is not None else _display).begin(what)
    start = time.monotonic()
    outcome = "failed after"
    try:
        yield
        outcome = "done in"
    except Interrupted:
        outcome = "stopped after"
        raise
    finally:
        step.end(outcome, time.monotonic() - start)
