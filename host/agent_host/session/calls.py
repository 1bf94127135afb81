"""A guest's open asynchronous calls, and how a finished call is shaped for the guest.

`OpenCalls.start` returns a fresh UUID at once; the call runs as a task on the bridge loop, bounded
by the tooling's `timeout` and `max_call_time` (`deadline.bounded_call`), and ends with exactly one
final envelope in the guest's inbox (none when cancelled): the `CallOutcome`, or the `ToolingError`
(a host bug becomes `internal`). The call is audited when it ends, before its envelope is queued (`cancelled` when it
was cancelled). Progress reports become `progress` envelopes. `cancel` cancels the task, which
cancels the upstream request; a call is forgotten once its final envelope was received.

`shape` turns a `CallResult` into what the guest sees: an `isError` result is `tool-failed` (the
message its text, `data` the whole result as JSON); a value no JSON text can hold (`strict_json`)
is `protocol`; a value larger than `max_result_bytes` is `limit-exceeded`.
"""

from __future__ import annotations

import concurrent.futures
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from agent_host._support import strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS, CallOutcome, CallResult, Envelope, Operation, Progress
from agent_host.policy.grants import Limits
from agent_host.session.admission import AdmittedCall
from agent_host.session.audit import AuditTrail, Span
from agent_host.session.bridge import Bridge, shutting_down
from agent_host.session.deadline import bounded_call, internal_error
from agent_host.session.inbox import Inbox
from agent_host.toolings import ProgressFn
from agent_host.toolings.server_requests import ASKER, SPENDER, Asker, Spender

logger = logging.getLogger(__name__)


def call_outcome(name: str, arguments: str, result: CallResult) -> CallOutcome:
    """A finished call as the guest sees it; an `isError` result raises `tool-failed`, one that no
    JSON text can hold (NaN, a lone surrogate: `strict_json`) `protocol`."""
    try:
        value = strict_json.dumps(result.value)
    except strict_json.JsonTextError as exc:
        raise ToolingError(
            ErrorCode.PROTOCOL, f"the result of tool {name!r} is not valid JSON ({exc}); the tooling broke the protocol"
        ) from None
    if result.is_error:
        text = result.text() or f"tool {name!r} reported an error without text"
        raise ToolingError(ErrorCode.TOOL_FAILED, text, data=value)
    return CallOutcome(name=name, arguments=arguments, value=value)


def shape(limits: Limits, name: str, arguments: str, result: CallResult) -> CallOutcome:
    """`call_outcome`, refused with `limit-exceeded` when larger than `max_result_bytes`."""
    outcome = call_outcome(name, arguments, result)
    limits.check_result_size(len(outcome.value.encode("utf-8")), f"tool {name!r}")
    return outcome


@dataclass(frozen=True)
class _OpenCall:
    rep: int
    future: concurrent.futures.Future[None]


class OpenCalls:
    """One guest's asynchronous calls (see the module docstring). Used from the guest's thread."""

    def __init__(
        self,
        agent: str,
        bridge: Bridge,
        inbox: Inbox,
        limits: Limits,
        audit: AuditTrail,
        check: Callable[[AdmittedCall, CallResult], None] = lambda call, result: None,
        asker: Callable[[str], Asker] | None = None,
        spender: Spender | None = None,
    ) -> None:
        """`check` raises `ToolingError` for a result that must not reach the guest (`Admission.check_result`);
        `asker(call_id)` puts the questions of the server during a call to the guest; `spender` is
        the run's model budget, charged for the server's sampling requests during a call."""
        self._check = check
        self._spender = spender
        self._asker = asker
        self._agent = agent
        self._bridge = bridge
        self._inbox = inbox
        self._limits = limits
        self._audit = audit
        self._open: dict[str, _OpenCall] = {}
        self._ids: set[str] = set()
        """Every call started here and not yet received or cancelled (a stream's id is not one)."""

    def start(self, rep: int, call: AdmittedCall) -> str:
        """Start `call` (made through handle `rep`) and return its id. A call the tooling answers at
        once (`call_tool_now`) ends here, its envelope queued before the id is returned.

        Raises `ToolingError`: `limit-exceeded` when `max_open_calls` are open or the bytes held for
        the guest would pass `max_pending_bytes` (its arguments count twice: text and parsed value),
        `unavailable` when the inbox is closed or the host is shutting down.
        """
        if self._bridge.closed:
            raise shutting_down()
        call_id = str(uuid.uuid4())
        self._inbox.open_call(call_id, 2 * len(call.arguments))  # the text and its parsed value
        self._ids.add(call_id)
        ready: CallResult | ToolingError | None
        try:
            ready = call.tooling.call_tool_now(call.name, call.parsed, agent=self._agent)
        except ToolingError as exc:
            ready = exc
        if ready is not None:
            with self._audit.span(Operation.CALL_TOOL, call.tooling.name, call.name, call.arguments) as span:
                kind, payload = self._outcome(call, ready, span)
            self._inbox.push_final(call_id, kind, payload)
            return call_id
        try:
            future = self._bridge.start(self._run, call, call_id)
        except ToolingError:
            self._inbox.cancel(call_id)
            raise
        self._open[call_id] = _OpenCall(rep, future)
        return call_id

    async def _run(self, call: AdmittedCall, call_id: str) -> None:
        """On the loop: run one call and push exactly one final envelope (none when cancelled)."""
        if self._asker is not None:
            ASKER.set(self._asker(call_id))  # this task's own context: questions during the call reach the guest
        SPENDER.set(self._spender)  # likewise: the server's sampling requests are charged to this run
        inbox = self._inbox
        tooling = call.tooling

        def progress(progress: float, total: float | None, message: str | None) -> None:
            inbox.push_progress(call_id, Progress(progress, total, message))

        config = tooling.config
        what = f"tooling {tooling.name!r}: the call of tool {call.name!r}"
        with self._audit.span(Operation.CALL_TOOL, tooling.name, call.name, call.arguments) as span:
            result: CallResult | ToolingError
            try:

                async def run(report: ProgressFn) -> CallResult:
                    return await tooling.call_tool(call.name, call.parsed, report, agent=self._agent)

                result = await bounded_call(config, what, run, progress)
            except ToolingError as exc:
                result = exc
            except Exception as exc:  # boundary: a host bug must reach the guest as an `internal` envelope
                logger.exception("internal error in the call of %r (agent %s)", call.name, self._agent)
                result = internal_error(f"the call of tool {call.name!r}", exc)
            kind, payload = self._outcome(call, result, span)
        inbox.push_final(call_id, kind, payload)  # after the audit line: audited before the guest can see it

    def _outcome(
        self, call: AdmittedCall, result: CallResult | ToolingError, span: Span
    ) -> tuple[Literal["tool-result", "error"], CallOutcome | ToolingError]:
        """The final envelope's kind and payload for a call that ended with `result`; a failure is
        recorded on its audit `span`."""
        if isinstance(result, CallResult):
            try:
                self._check(call, result)
                return "tool-result", shape(self._limits, call.name, call.arguments, result)
            except ToolingError as exc:
                result = exc
        span.fail(result)
        return "error", result

    def is_open(self, call_id: str) -> bool:
        return call_id in self._ids and self._inbox.is_open(call_id)

    def cancel(self, call_id: str) -> bool:
        """Cancel call `call_id`, upstream too; returns whether it was open. An id this did not start
        (a model's stream: `provider.cancel`) is not touched."""
        if call_id not in self._ids:
            return False
        self._ids.discard(call_id)
        call = self._open.pop(call_id, None)
        was_open = self._inbox.cancel(call_id)
        if call is not None:
            call.future.cancel()  # cancels the task on the loop, which cancels the upstream request
        return was_open

    def received(self, envelope: Envelope | None) -> None:
        """The guest received `envelope`: forget the call it ended, if it ended one."""
        if envelope is not None and envelope.kind in FINAL_KINDS:
            self._open.pop(envelope.id, None)
            self._ids.discard(envelope.id)

    def cancel_where(self, keep: Callable[[int], bool]) -> None:
        """Cancel the calls made through a handle `keep` rejects, upstream too."""
        for call_id, call in list(self._open.items()):
            if not keep(call.rep):
                del self._open[call_id]
                self._ids.discard(call_id)
                self._inbox.cancel(call_id)
                call.future.cancel()
