"""Audit spans: one audit-log line per tooling operation of one agent, written as a span ends.

`AuditTrail.span(operation, tooling, target, arguments)` is a context manager timing the
operation. Its outcome is `ok`, or what ended it: a `ToolingError` its code, another exception
`internal`, a cancellation (`BaseException`) `cancelled`. An operation that handles its own
failure says so with `span.fail(error)`; one that goes on elsewhere (an asynchronous call, which
records itself when it ends) calls `span.defer()` so that only a failure before that is written.
Spans never suppress exceptions. Without an audit log nothing is written. A trail's lines are charged
to its `budget` (`audit_budget`: a run's, drawn from a `serve` client's too); `end` says how many
it counted instead of writing them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Operation
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.audit_line import utf8_size
from agent_host.session.audit_log import AuditLog

OK = "ok"
CANCELLED = ErrorCode.CANCELLED.value


def outcome_of(exc: BaseException) -> str:
    """The audit outcome of an operation ended by `exc`."""
    if isinstance(exc, ToolingError):
        return exc.code.value
    if isinstance(exc, Exception):
        return ErrorCode.INTERNAL.value
    return CANCELLED


class AuditTrail:
    """The audit of one agent's operations (see the module docstring)."""

    def __init__(self, agent: str, log: AuditLog | None, budget: AuditBudget | None = None) -> None:
        """`budget`: what its lines are charged to (None: nothing, they are only bounded in size)."""
        self.agent = agent
        self.log = log
        self.budget = budget

    def span(self, operation: Operation, tooling: str, target: str | None = None, arguments: str | None = None) -> Span:
        """A span for one operation on `tooling` (`target`: a tool name, URI or id)."""
        return Span(self, operation, tooling, target, arguments)

    def record(
        self,
        operation: Operation,
        tooling: str,
        target: str | None,
        arguments: str | None,
        outcome: str,
        duration: float,
        details: Mapping[str, str | int | None] | None = None,
    ) -> None:
        """Write one line (nothing without an audit log); `details`: keys of the operation's own."""
        if self.log is None:
            return
        self.log.record(
            agent=self.agent,
            tooling=tooling,
            operation=operation.value,
            target=target,
            argument_bytes=utf8_size(arguments) if arguments is not None else 0,
            outcome=outcome,
            duration=duration,
            arguments=arguments,
            budget=self.budget,
            details=details,
        )

    def end(self) -> None:
        """The run ended: one line tells what its budget counted instead of writing (if anything)."""
        if self.log is not None and self.budget is not None:
            self.log.end(self.budget)


class Span:
    """One timed operation; written when its `with` block ends (see the module docstring)."""

    def __init__(
        self, trail: AuditTrail, operation: Operation, tooling: str, target: str | None, arguments: str | None
    ) -> None:
        self._trail = trail
        self.operation = operation
        self.tooling = tooling
        self.target = target
        self.arguments = arguments
        self.outcome = OK
        self.details: dict[str, str | int | None] = {}
        """Keys of the operation's own for its line (a chat's model and tokens), filled as it runs."""
        self._deferred = False
        self._started = 0.0

    def fail(self, error: ToolingError) -> None:
        """The operation failed with `error` (handled, not raised through the span)."""
        self.outcome = error.code.value

    def defer(self) -> None:
        """The operation goes on elsewhere and is recorded there: write nothing unless it fails here."""
        self._deferred = True

    def __enter__(self) -> Span:
        self._started = time.monotonic()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:
            self.outcome = outcome_of(exc)
        elif self._deferred:
            return
        duration = time.monotonic() - self._started
        self._trail.record(
            self.operation, self.tooling, self.target, self.arguments, self.outcome, duration, self.details
        )
