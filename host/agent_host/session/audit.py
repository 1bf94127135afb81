"""Audit spans: one audit-log line per tooling operation of one agent, written as a span ends.

`AuditTrail.span(operation, tooling, target, arguments)` is a context manager timing the
operation. Its outcome is `ok`, or what ended it: a `ToolingError` its code, another exception
`internal`, a cancellation (`BaseException`) `cancelled`. An operation that handles its own
failure says so with `span.fail(error)`; one that goes on elsewhere (an asynchronous call, which
records itself when it ends) calls `span.defer()` so that only a failure before that is written.
Spans never suppress exceptions. Without an audit log nothing is written. A trail's lines are charged
to its `budget` (`audit_budget`: a run's, drawn from a `serve` client's too); `end` says how many
it counted instead of writing them. Each span is also an OpenTelemetry span (`_support.tracing`),
current while it runs (the MCP SDK's request span to an upstream server is its child), with the
GenAI and MCP attributes of the operation and its outcome as `error.type`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType
from typing import Final, Literal

from agent_host._support import metering, tracing
from agent_host._support.printable import printable
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Operation
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.audit_line import utf8_size
from agent_host.session.audit_log import AuditLog

OK = "ok"
CANCELLED = ErrorCode.CANCELLED.value
UNLESS_DEFERRED: Final = "unless-deferred"

Traced = bool | Literal["unless-deferred"]
"""How an audit span is traced (`AuditTrail.span`)."""


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

    def span(
        self,
        operation: Operation,
        tooling: str,
        target: str | None = None,
        arguments: str | None = None,
        *,
        traced: Traced = True,
    ) -> Span:
        """A span for one operation on `tooling` (`target`: a tool name, URI or id). `traced`: its
        OpenTelemetry span is current while it runs (True), or, "unless-deferred", made when it ends
        unless it was deferred (a part of an operation whose own span is made where it goes on)."""
        return Span(self, operation, tooling, target, arguments, traced)

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


_GEN_AI = {
    "provider": "gen_ai.provider.name",
    "model": "gen_ai.response.model",
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
}
"""A chat's details, as OpenTelemetry's GenAI attributes."""

_MCP_METHODS = {
    Operation.LIST_TOOLS: "tools/list",
    Operation.CALL_TOOL: "tools/call",
    Operation.CALL_TOOL_BLOCKING: "tools/call",
    Operation.LIST_RESOURCES: "resources/list",
    Operation.READ_RESOURCE: "resources/read",
    Operation.SUBSCRIBE_RESOURCE: "resources/subscribe",
    Operation.UNSUBSCRIBE_RESOURCE: "resources/unsubscribe",
}
"""The MCP method an operation sends upstream, when it sends one."""


MAX_TRACED_TARGET: Final = 100
"""Characters of a tool name, URI or id a span keeps (what a guest asked for: escaped and cut)."""


def _traced(agent: str, operation: Operation, tooling: str, given: str | None) -> tuple[str, dict[str, str]]:
    """The span name and attributes of an operation (GenAI and MCP conventions where they apply)."""
    target = printable(given, MAX_TRACED_TARGET) if given is not None else None
    attributes = {"gen_ai.agent.name": agent, "agent_host.operation": operation.value, "agent_host.tooling": tooling}
    method = _MCP_METHODS.get(operation)
    if method is not None:
        attributes["mcp.method.name"] = method
    if operation in (Operation.CALL_TOOL, Operation.CALL_TOOL_BLOCKING) and target is not None:
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = target
        return f"execute_tool {target}", attributes
    if operation in (Operation.CHAT, Operation.CHAT_STREAM):
        attributes["gen_ai.operation.name"] = "chat"
        return f"chat {tooling}", attributes
    if target is not None:
        attributes["agent_host.target"] = target
    return f"{operation.value} {tooling}", attributes


class Span:
    """One timed operation; written when its `with` block ends (see the module docstring)."""

    def __init__(
        self,
        trail: AuditTrail,
        operation: Operation,
        tooling: str,
        target: str | None,
        arguments: str | None,
        traced: Traced = True,
    ) -> None:
        self._trail = trail
        self._tracing = traced
        self._started_ns = 0
        self.operation = operation
        self.tooling = tooling
        self.target = target
        self.arguments = arguments
        self.outcome = OK
        self.details: dict[str, str | int | None] = {}
        """Keys of the operation's own for its line (a chat's model and tokens), filled as it runs."""
        self._deferred = False
        self._started = 0.0
        self._traced: tracing.Started = tracing.NOT_STARTED

    def fail(self, error: ToolingError) -> None:
        """The operation failed with `error` (handled, not raised through the span)."""
        self.outcome = error.code.value

    def defer(self) -> None:
        """The operation goes on elsewhere and is recorded there: write nothing unless it fails here."""
        self._deferred = True

    def _count_tokens(self) -> None:
        """A chat's usage into the process's metrics (`_support.metering`)."""
        provider = self.details.get("provider")
        metering.tokens(
            self._trail.agent,
            str(provider if provider is not None else self.tooling),
            int(self.details.get("input_tokens") or 0),
            int(self.details.get("output_tokens") or 0),
        )

    def _end_traced(self) -> None:
        traced, token = self._traced
        if traced is not None and traced.is_recording():
            if self.outcome != OK:
                tracing.failed(traced, self.outcome)
            for key, value in self.details.items():
                if key in _GEN_AI and value is not None:
                    traced.set_attribute(_GEN_AI[key], value)
        tracing.finish(traced, token)

    def __enter__(self) -> Span:
        self._started = time.monotonic()
        self._started_ns = time.time_ns()
        if self._tracing is True and tracing.active():  # else no span: its name and attributes are not made
            self._traced = tracing.start(*_traced(self._trail.agent, self.operation, self.tooling, self.target))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is not None:
            self.outcome = outcome_of(exc)
        if "input_tokens" in self.details:
            self._count_tokens()
        if self._tracing is True:
            self._end_traced()
        elif self._tracing == UNLESS_DEFERRED and (exc is not None or not self._deferred) and tracing.active():
            self._traced = tracing.start(
                *_traced(self._trail.agent, self.operation, self.tooling, self.target), start_ns=self._started_ns
            )
            self._end_traced()
        if exc is None and self._deferred:
            return
        duration = time.monotonic() - self._started
        self._trail.record(
            self.operation, self.tooling, self.target, self.arguments, self.outcome, duration, self.details
        )
