"""The request timeout of the tooling call running in the current task, which a tooling may renew.

The caller (`session.deadline.bounded_call`) runs a call under `request_timeout(seconds)`: a cancel scope
that ends the call `seconds` after it started. A tooling that keeps hearing from its server while
the work goes on (an MCP task polled with `tasks/get`) calls `renew_request_timeout(waiting)` after
each answer: the call then ends `seconds` after `waiting` more seconds, not `seconds` after it
started, so the timeout bounds each silence of the server, never the whole of a long task.
Outside `request_timeout` renewing does nothing.
One clock per task (a `ContextVar`); it never outlives its scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import anyio

_CLOCK: ContextVar[RequestClock | None] = ContextVar("request_clock", default=None)


class RequestClock:
    """One call's renewable timeout: its cancel scope, the hard end no renewal passes (`hard`, in
    `anyio.current_time()`; None: none), and whether a tooling renewed it."""

    def __init__(self, scope: anyio.CancelScope, seconds: float, hard: float | None = None) -> None:
        self.scope = scope
        self.seconds = seconds
        self.hard = hard
        self.renewed = False

    def restart(self, waiting: float = 0.0) -> None:
        """On the loop: the timeout ends `waiting` + `seconds` from now (never past `hard`)."""
        deadline = anyio.current_time() + waiting + self.seconds
        self.scope.deadline = deadline if self.hard is None else min(deadline, self.hard)


@contextmanager
def request_timeout(seconds: float, hard: float | None = None) -> Iterator[RequestClock]:
    """A cancel scope ending `seconds` from now (never past `hard`), renewable from inside it (see the
    module docstring); like `anyio.move_on_after`, leaving it by the timeout is not an error (see
    `scope.cancel_called`)."""
    deadline = anyio.current_time() + seconds
    with anyio.CancelScope(deadline=deadline if hard is None else min(deadline, hard)) as scope:
        clock = RequestClock(scope, seconds, hard)
        token = _CLOCK.set(clock)
        try:
            yield clock
        finally:
            _CLOCK.reset(token)


def renew_request_timeout(waiting: float = 0.0) -> None:
    """The server answered: the current call's timeout restarts, after `waiting` more seconds."""
    clock = _CLOCK.get()
    if clock is not None:
        clock.renewed = True
        clock.restart(waiting)
