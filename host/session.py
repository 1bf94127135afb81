"""What one running guest can do, as plain Python: the layer under the WIT imports.

A `GuestSession` belongs to one guest and is used only from that guest's thread (but `interrupt`,
which any thread may call). It keeps the guest's tooling handles (small integers, the `rep` of the
WIT resource) and runs every operation on the bridge loop through `Bridge.call`, bounded by the
tooling's request timeout and by what is left of the run's wall-clock limit.

Contract:
- Every method returns plain data or raises `ToolingError`; nothing else escapes. An unexpected
  exception is logged with its traceback and becomes `ToolingError(internal)`.
- The agent's `AgentPolicy` is enforced before anything leaves the host: a tooling it was not
  granted is `denied` at `get`; tools and resources outside its allow-lists are left out of lists
  (and of list events) and `denied` everywhere else. Arguments must be a JSON object
  (`invalid-arguments`, with the parser's position) of at most `max_argument_bytes`; results and
  resource contents larger than `max_result_bytes` are refused with `limit-exceeded`.
- Every call, of every kind of tooling and both blocking and asynchronous, then passes the same
  checks, before anything is sent: the tool must exist (`not-found`), the arguments
  must match its input schema (`invalid-arguments` naming the path and the rule, see
  `validation`), the agent must hold the capabilities it needs (`denied` naming the capability and
  the key, see `capabilities`), and a call needing a capability listed in `require_approval` must
  be approved by the host's `Approver` (`denied` with the reason otherwise), one invocation at a
  time. `call-tool` returns its id after these checks.
- A tool result with `isError: true` becomes `ToolingError(tool-failed)`: the message is the
  result's text content, `data` the whole result as JSON.
- `call_tool` returns a fresh UUID at once; the call runs as a task on the loop, bounded by the
  tooling's timeout, and ends with exactly one final envelope in the guest's `Inbox` (none when
  cancelled). `cancel` cancels that task, which cancels the upstream request.
- Subscriptions are registered with the tooling's shared `Watchers` (blocking until the server
  acknowledged them); their events are pushed into the inbox by a sink that never blocks.
  `unsubscribe` closes the inbox side first (no envelope after it returns), then releases upstream.
- `drop(rep)` cancels what was opened through that handle; `close()` (the guest's run ended, by
  returning or trapping) cancels everything, upstream too, and closes the inbox. Idempotent.
- `interrupt(reason)` (host shutdown) ends the wait the guest is blocked in and refuses every
  later operation with `cancelled`.
- Every tooling operation is written to the audit log when one is configured (see `audit`).

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

import anyio

from host.approval import ApprovalRequest, Approver, DenyAll
from host.audit import AuditLog
from host.bridge import Bridge, Interrupt
from host.capabilities import needed
from host.config import DEFAULT_RECV_TIMEOUT
from host.errors import ErrorCode, ToolingError
from host.inbox import FINAL_KINDS, Envelope, EventKind, Inbox, Progress
from host.policy import AgentPolicy
from host.toolings import ResourceData, ResourceSpec, Sink, Tooling, ToolingSet, ToolSpec, Watchers
from host.toolings.base import CallResult, JsonObject
from host.validation import ArgumentValidator

logger = logging.getLogger(__name__)
guest_logger = logging.getLogger("host.guest")

_T = TypeVar("_T")

CONNECT_GRACE: Final = 2.0
"""Seconds added to a tooling's connect timeout for `get`, so the connection's own, more precise
timeout message wins over the generic one."""

RELEASE_TIMEOUT: Final = 10.0
"""Seconds allowed for releasing ended subscriptions upstream."""

APPROVAL_TIMEOUT: Final = 300.0
"""Seconds an approval may take (a person answering on the terminal) before the call is refused."""

MAX_LOG_MESSAGE: Final = 16 * 1024
"""Characters of one guest log message kept; the rest is cut with a marker."""

SubscriptionKind = Literal["resource", "resource-list", "tool-list"]

LOG_LEVELS: Final = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "error": logging.ERROR,
}


@dataclass(frozen=True)
class Handle:
    """A guest's handle on a tooling."""

    rep: int
    tooling: Tooling


@dataclass(frozen=True)
class _OpenCall:
    rep: int
    future: concurrent.futures.Future[None]


@dataclass(frozen=True)
class _OpenSubscription:
    rep: int
    kind: SubscriptionKind
    watchers: Watchers


@dataclass(frozen=True)
class CallOutcome:
    """A successful blocking call: WIT `tool-result`."""

    name: str
    arguments: str
    value: str


class GuestSession:
    """State and operations of one guest (see the module docstring)."""

    def __init__(
        self,
        agent: str,
        bridge: Bridge,
        toolings: ToolingSet,
        policy: AgentPolicy,
        *,
        inbox: Inbox | None = None,
        max_wait: float = DEFAULT_RECV_TIMEOUT,
        audit: AuditLog | None = None,
        validator: ArgumentValidator | None = None,
        approver: Approver | None = None,
    ) -> None:
        self.agent = agent
        self.policy = policy
        self._bridge = bridge
        self._toolings = toolings
        self.inbox = inbox if inbox is not None else Inbox()
        self.max_wait = max_wait
        self.deadline: float | None = None
        """`time.monotonic()` value when the run's wall-clock limit ends; set by the runner."""
        self._audit = audit
        self._validator = validator if validator is not None else ArgumentValidator()
        self._approver: Approver = approver if approver is not None else DenyAll()
        self._interrupt = Interrupt()
        self.last_error: ToolingError | None = None
        """The last error a host import returned to the guest (named when the guest then traps)."""
        self._handles: dict[int, Handle] = {}
        self._next_rep = 1
        self._calls: dict[str, _OpenCall] = {}
        self._subscriptions: dict[str, _OpenSubscription] = {}

    # -- handles -----------------------------------------------------------------------------

    def get(self, name: str) -> int:
        def connect() -> Tooling:
            config = self._toolings.config(name)
            self.policy.grants.check_tooling(name)
            return self._run(
                f"connecting to tooling {name!r}",
                self._toolings.connect,
                name,
                timeout=config.connect_timeout + CONNECT_GRACE,
                hint=f"raise `connect_timeout` in {config.origin}",
            )

        tooling = self._audited("get", name, None, None, connect)
        rep = self._next_rep
        self._next_rep += 1
        self._handles[rep] = Handle(rep, tooling)
        return rep

    def handle(self, rep: int) -> Handle:
        try:
            return self._handles[rep]
        except KeyError:
            raise ToolingError(ErrorCode.NOT_FOUND, f"tooling handle {rep} is not open (it was dropped)") from None

    def drop(self, rep: int) -> None:
        """Forget a handle and cancel every call and subscription opened through it."""
        if self._handles.pop(rep, None) is not None:
            self._cancel_where(lambda owner: owner != rep)

    def close(self) -> None:
        """End of the guest's run: cancel everything it opened, upstream too. Idempotent."""
        self._cancel_where(lambda owner: False)
        self._handles.clear()
        self.inbox.close()

    def interrupt(self, reason: str) -> None:
        """From any thread: end the current wait and refuse later operations with `cancelled`."""
        self._interrupt.fire(reason)
        self.inbox.close()

    # -- tooling operations --------------------------------------------------------------------

    def kind(self, rep: int) -> str:
        return self.handle(rep).tooling.kind

    def name(self, rep: int) -> str:
        return self.handle(rep).tooling.name

    def list_tools(self, rep: int) -> list[ToolSpec]:
        tooling = self.handle(rep).tooling

        def listed() -> list[ToolSpec]:
            return self._visible_tools(tooling.name, self._request(tooling, "tools/list", tooling.list_tools))

        return self._audited("list-tools", tooling.name, None, None, listed)

    def call_tool_blocking(self, rep: int, name: str, arguments: str) -> CallOutcome:
        tooling = self.handle(rep).tooling

        def call() -> CallOutcome:
            parsed = self._admit_call(tooling, name, arguments)
            call = functools.partial(tooling.call_tool, name, parsed, agent=self.agent)
            result = self._request(tooling, f"the call of tool {name!r}", call)
            return self._outcome(tooling, name, arguments, result)

        return self._audited("call-tool-blocking", tooling.name, name, arguments, call)

    def list_resources(self, rep: int) -> list[ResourceSpec]:
        tooling = self.handle(rep).tooling

        def listed() -> list[ResourceSpec]:
            return self._visible_resources(
                tooling.name, self._request(tooling, "resources/list", tooling.list_resources)
            )

        return self._audited("list-resources", tooling.name, None, None, listed)

    def read_resource(self, rep: int, uri: str) -> ResourceData:
        tooling = self.handle(rep).tooling

        def read() -> ResourceData:
            self.policy.grants.check_resource(tooling.name, uri)
            data = self._request(tooling, f"the read of resource {uri!r}", tooling.read_resource, uri)
            self.policy.limits.check_result_size(len(data.text or data.blob or ""), f"resource {uri!r}")
            return data

        return self._audited("read-resource", tooling.name, uri, None, read)

    # -- the asynchronous half ----------------------------------------------------------------

    def call_tool(self, rep: int, name: str, arguments: str) -> str:
        tooling = self.handle(rep).tooling

        def start() -> str:
            parsed = self._admit_call(tooling, name, arguments)
            call_id = str(uuid.uuid4())
            self.inbox.open_call(call_id)
            try:
                future = self._bridge.start(self._run_call, tooling, call_id, name, arguments, parsed)
            except ToolingError:
                self.inbox.cancel(call_id)
                raise
            self._calls[call_id] = _OpenCall(rep, future)
            return call_id

        try:
            return start()
        except ToolingError as exc:  # refused at once: audited now; started calls are audited when they end
            self._record("call-tool", tooling.name, name, arguments, exc.code.value, 0.0)
            raise

    async def _run_call(self, tooling: Tooling, call_id: str, name: str, arguments: str, parsed: JsonObject) -> None:
        """On the loop: run one call and push exactly one final envelope (none when cancelled)."""
        inbox = self.inbox
        started = time.monotonic()
        outcome = "cancelled"

        def progress(progress: float, total: float | None, message: str | None) -> None:
            inbox.push_progress(call_id, Progress(progress, total, message))

        timeout = tooling.config.timeout
        try:
            with anyio.move_on_after(timeout) as scope:
                result = await tooling.call_tool(name, parsed, progress, agent=self.agent)
            if scope.cancelled_caught:
                raise ToolingError(
                    ErrorCode.TIMEOUT,
                    f"tooling {tooling.name!r}: the call of tool {name!r} did not finish within {timeout:g} s and "
                    f"was cancelled (raise `timeout` in {tooling.config.origin} to wait longer)",
                )
            inbox.push_final(call_id, "tool-result", self._outcome(tooling, name, arguments, result))
            outcome = "ok"
        except ToolingError as exc:
            outcome = exc.code.value
            inbox.push_final(call_id, "error", exc)
        except Exception as exc:  # boundary: a host bug must reach the guest as an `internal` envelope
            logger.exception("internal error in the call of %r (agent %s)", name, self.agent)
            outcome = ErrorCode.INTERNAL.value
            inbox.push_final(call_id, "error", _internal(f"the call of tool {name!r}", exc))
        finally:
            self._record("call-tool", tooling.name, name, arguments, outcome, time.monotonic() - started)

    def is_open(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        return self.inbox.is_open(call_id)

    def cancel(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        call = self._calls.pop(call_id, None)
        was_open = self.inbox.cancel(call_id)
        if call is not None:
            call.future.cancel()  # cancels the task on the loop, which cancels the upstream request
        return was_open

    def subscribe(self, rep: int, kind: SubscriptionKind, uri: str = "") -> str:
        tooling = self.handle(rep).tooling
        what = f"subscribe-{kind}"

        def subscribe() -> str:
            if kind == "resource":
                self.policy.grants.check_resource(tooling.name, uri)
            sub_id = str(uuid.uuid4())
            self.inbox.open_subscription(sub_id)
            sink = self._sink(tooling.name, sub_id)
            try:
                watchers = self._run(what, self._watchers, tooling.name, timeout=tooling.config.timeout, hint="")
                if kind == "resource":
                    register = functools.partial(watchers.subscribe_resource, sub_id, uri, sink)
                elif kind == "resource-list":
                    register = functools.partial(watchers.subscribe_resource_list, sub_id, sink)
                else:
                    register = functools.partial(watchers.subscribe_tool_list, sub_id, sink)
                self._request(tooling, what + (f" of {uri!r}" if uri else ""), register)
            except ToolingError:
                self.inbox.close_subscription(sub_id)
                raise
            self._subscriptions[sub_id] = _OpenSubscription(rep, kind, watchers)
            return sub_id

        return self._audited(what, tooling.name, uri or None, None, subscribe)

    def _sink(self, tooling: str, sub_id: str) -> Sink:
        """Pushes a subscription's events into the inbox, with list events cut to what is granted."""
        push = self.inbox.push_event

        def sink(kind: EventKind, payload: object) -> None:
            if kind == "tool-list-updated" and isinstance(payload, list):
                payload = self._visible_tools(tooling, payload)
            elif kind == "resource-list-updated" and isinstance(payload, list):
                payload = self._visible_resources(tooling, payload)
            push(sub_id, kind, payload)

        return sink

    async def _watchers(self, name: str) -> Watchers:
        return self._toolings.watchers(name)

    def unsubscribe(self, rep: int, kind: SubscriptionKind, sub_id: str) -> bool:
        tooling = self.handle(rep).tooling
        subscription = self._subscriptions.get(sub_id)
        if subscription is None or subscription.kind != kind:
            return False
        del self._subscriptions[sub_id]
        self.inbox.close_subscription(sub_id)
        self._release([(sub_id, subscription)])
        self._record(f"unsubscribe-{kind}", tooling.name, sub_id, None, "ok", 0.0)
        return True

    def recv(self, timeout_ms: int | None) -> Envelope | None:
        timeout = self.max_wait if timeout_ms is None else timeout_ms / 1000
        if self.deadline is not None:
            timeout = max(0.0, min(timeout, self.deadline - time.monotonic()))
        return self._received(self.inbox.recv(timeout))

    def try_recv(self) -> Envelope | None:
        return self._received(self.inbox.recv(None))

    def _received(self, envelope: Envelope | None) -> Envelope | None:
        if envelope is not None and envelope.kind in FINAL_KINDS:
            self._calls.pop(envelope.id, None)
        return envelope

    def _cancel_where(self, keep: Callable[[int], bool]) -> None:
        """Cancel the calls and end the subscriptions whose handle `keep` rejects, upstream too."""
        for call_id, call in list(self._calls.items()):
            if not keep(call.rep):
                del self._calls[call_id]
                self.inbox.cancel(call_id)
                call.future.cancel()
        ended = [(sub_id, sub) for sub_id, sub in self._subscriptions.items() if not keep(sub.rep)]
        for sub_id, _ in ended:
            del self._subscriptions[sub_id]
            self.inbox.close_subscription(sub_id)
        self._release(ended)

    def _release(self, ended: list[tuple[str, _OpenSubscription]]) -> None:
        """Release ended subscriptions upstream; failures are logged, never raised."""
        if not ended or self._bridge.closed:
            return

        async def release() -> None:
            async with anyio.create_task_group() as tg:
                for sub_id, subscription in ended:
                    tg.start_soon(subscription.watchers.unsubscribe, sub_id)

        try:
            self._bridge.call(release, timeout=RELEASE_TIMEOUT, on_timeout=_release_timeout)
        except ToolingError as exc:
            logger.warning("agent %s: releasing subscriptions: %s", self.agent, exc)

    # -- log -------------------------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        if len(message) > MAX_LOG_MESSAGE:
            message = message[:MAX_LOG_MESSAGE] + f"... [{len(message) - MAX_LOG_MESSAGE} characters cut]"
        guest_logger.log(LOG_LEVELS.get(level, logging.INFO), "[%s] %s", self.agent, message)

    # -- policy ----------------------------------------------------------------------------------

    def _admit_call(self, tooling: Tooling, name: str, arguments: str) -> JsonObject:
        """Everything checked before a call leaves the host; returns the parsed arguments.

        Runs on the guest's thread, without a trip to the loop when the tool's spec is cached
        (the usual case); the loop is needed only to list the tools, and to ask for an approval.
        """
        self.policy.grants.check_tool(tooling.name, name)
        self.policy.limits.check_argument_size(len(arguments.encode("utf-8")), f"the call of tool {name!r}")
        parsed = parse_arguments(arguments)
        spec = tooling.cached_tool_spec(name)
        if spec is None:
            spec = self._request(tooling, f"looking up tool {name!r}", tooling.tool_spec, name)
        self._validator.check(tooling.name, name, spec.input_schema, parsed)
        capabilities = self.policy.capabilities
        if capabilities is None:
            return parsed
        to_approve = capabilities.check(tooling.name, name, needed(spec, tooling.config.capabilities))
        if to_approve:
            request = ApprovalRequest(self.agent, tooling.name, name, to_approve, tooling.approval_view(name, parsed))
            decision = self._run(
                f"the approval of the call of tool {name!r}",
                self._approver.decide,
                request,
                timeout=APPROVAL_TIMEOUT,
                hint="no answer came",
            )
            if not decision.approved:
                raise ToolingError(
                    ErrorCode.DENIED,
                    f"the call of tool {name!r} of tooling {tooling.name!r} by agent {self.agent!r} needs approval "
                    f"({', '.join(sorted(to_approve))} is in require_approval of {capabilities.source}) and was not "
                    f"approved: {decision.reason}",
                )
        return parsed

    def _outcome(self, tooling: Tooling, name: str, arguments: str, result: CallResult) -> CallOutcome:
        outcome = call_outcome(name, arguments, result)
        self.policy.limits.check_result_size(len(outcome.value.encode("utf-8")), f"tool {name!r}")
        return outcome

    def _visible_tools(self, tooling: str, tools: list[ToolSpec]) -> list[ToolSpec]:
        return [t for t in tools if self.policy.grants.tool_allowed(tooling, t.name)]

    def _visible_resources(self, tooling: str, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        return [r for r in resources if self.policy.grants.resource_allowed(tooling, r.uri)]

    # -- plumbing ----------------------------------------------------------------------------------

    def _audited(
        self, operation: str, tooling: str, target: str | None, arguments: str | None, body: Callable[[], _T]
    ) -> _T:
        started = time.monotonic()
        outcome = "ok"
        try:
            return body()
        except ToolingError as exc:
            outcome = exc.code.value
            raise
        finally:
            self._record(operation, tooling, target, arguments, outcome, time.monotonic() - started)

    def _record(
        self, operation: str, tooling: str, target: str | None, arguments: str | None, outcome: str, duration: float
    ) -> None:
        if self._audit is not None:
            self._audit.record(
                agent=self.agent,
                tooling=tooling,
                operation=operation,
                target=target,
                argument_bytes=len(arguments.encode("utf-8")) if arguments is not None else 0,
                outcome=outcome,
                duration=duration,
                arguments=arguments,
            )

    def _request(self, tooling: Tooling, what: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        config = tooling.config
        return self._run(
            f"tooling {tooling.name!r}: {what}",
            fn,
            *args,
            timeout=config.timeout,
            hint=f"raise `timeout` in {config.origin} to wait longer",
        )

    def _run(self, what: str, fn: Callable[..., Awaitable[_T]], *args: Any, timeout: float, hint: str) -> _T:
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining < timeout:
                timeout = max(0.0, remaining)
                hint = f"the agent's run time limit ends then: {self.policy.limits.wall_time.key}"

        def on_timeout() -> ToolingError:
            return ToolingError(
                ErrorCode.TIMEOUT, f"{what} did not finish within {timeout:g} s and was cancelled ({hint})"
            )

        try:
            return self._bridge.call(fn, *args, timeout=timeout, on_timeout=on_timeout, interrupt=self._interrupt)
        except ToolingError:
            raise
        except Exception as exc:  # boundary: a host bug must reach the guest as `internal`, not as a trap
            logger.exception("internal error during %s (agent %s)", what, self.agent)
            raise _internal(what, exc) from exc


def _internal(what: str, exc: BaseException) -> ToolingError:
    return ToolingError(ErrorCode.INTERNAL, f"internal error in the host during {what}: {type(exc).__name__}: {exc}")


def _release_timeout() -> ToolingError:
    return ToolingError(ErrorCode.TIMEOUT, f"releasing subscriptions took longer than {RELEASE_TIMEOUT:g} s")


def call_outcome(name: str, arguments: str, result: CallResult) -> CallOutcome:
    """A finished call as the guest sees it; an `isError` result raises `tool-failed`."""
    value = json.dumps(result.value, ensure_ascii=False)
    if result.is_error:
        text = result.text() or f"tool {name!r} reported an error without text"
        raise ToolingError(ErrorCode.TOOL_FAILED, text, data=value)
    return CallOutcome(name=name, arguments=arguments, value=value)


def parse_arguments(text: str) -> JsonObject:
    """Tool arguments from JSON text; `invalid-arguments` unless it is a JSON object."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS,
            f"arguments are not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            'pass a JSON object such as {"text": "hi"}, or {} for none',
        ) from None
    if not isinstance(value, dict):
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS,
            f"arguments must be a JSON object, got {type(value).__name__} {text[:40]!r}; "
            'pass a JSON object such as {"text": "hi"}, or {} for none',
        )
    return value
