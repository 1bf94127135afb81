"""`GuestSession`: what one running guest can do, as plain Python; the layer under the WIT imports.

Used only from the guest's thread (but `interrupt`, from any thread). It keeps the guest's tooling
handles (the `rep` of the WIT resource) and delegates: checks to `admission`, asynchronous calls to
`calls`, subscriptions to `subscriptions`, waits on the bridge loop to `deadline`, the audit log to
`audit`. Every method returns plain data or raises `ToolingError` (a host bug becomes `internal`);
the agent's policy is enforced before anything leaves the host, and every operation is audited.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from agent_host.config import DEFAULT_RECV_TIMEOUT
from agent_host.config.defaults import DEFAULT_AUDIT_RUN_MAX
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import (
    CallOutcome,
    ChatRequest,
    ChatResult,
    Envelope,
    Operation,
    ResourceData,
    ResourceSpec,
    ToolSpec,
)
from agent_host.operations import WitFunction
from agent_host.policy.approval import Approver, DenyAll
from agent_host.policy.grants import AgentPolicy
from agent_host.policy.pins import Pins
from agent_host.policy.validation import ArgumentValidator
from agent_host.providers import ProviderSet
from agent_host.session import guest_log
from agent_host.session.admission import MAX_NAME_CHARS, MAX_URI_CHARS, check_length
from agent_host.session.audit import UNLESS_DEFERRED, AuditTrail
from agent_host.session.audit_budget import AuditBudget, run_budget
from agent_host.session.audit_log import AuditLog
from agent_host.session.bridge import Bridge, Interrupt
from agent_host.session.calls import OpenCalls
from agent_host.session.core import Caller, SessionCore
from agent_host.session.deadline import Deadline, LoopCalls
from agent_host.session.inbox import Inbox
from agent_host.session.llm_budget import LlmBudget
from agent_host.session.providers import GuestProviders
from agent_host.session.questions import GuestQuestions
from agent_host.session.subscriptions import SUBSCRIBE, SubscriptionKind, Subscriptions
from agent_host.toolings import Tooling, ToolingSet

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

LogSink = Callable[[str, str], None]
"""Receives each guest log line (WIT level, message) on the guest's thread; must not block long."""

RESPOND_TIMEOUT: Final = 10.0
"""Seconds for handing an answer over to the question waiting on the loop."""

MAX_RETURNED_ERRORS: Final = 64
"""Distinct errors returned to one guest that the host remembers (the newest), to tell a guest's
`Err` that is one of them from text in the same form that the guest made up."""

RAISED_AT: Final = " (raised at "
"""What `agentlib` writes after an uncaught host error's `CODE: message` in `run`'s `Err`."""


def not_open(rep: int) -> ToolingError:
    """The error of an operation on tooling handle `rep` once it was dropped (or never given out)."""
    return ToolingError(ErrorCode.NOT_FOUND, f"tooling handle {rep} is not open (it was dropped)")


@dataclass(frozen=True)
class Handle:
    """A guest's handle on a tooling."""

    rep: int
    tooling: Tooling


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
        on_log: LogSink | None = None,
        pins: Pins | None = None,
        audit_budget: AuditBudget | None = None,
        owns_audit_budget: bool = True,
        providers: ProviderSet | None = None,
    ) -> None:
        """`audit_budget`: what the run's audit lines are charged to (`Host` makes it from `[host]
        audit_run_max`); absent, a budget of the default `audit_run_max`. `owns_audit_budget`: whether
        `close` ends it (one line telling what it counted); not when it is borrowed (a client's)."""
        self.agent = agent
        self.policy = policy
        self._on_log = on_log
        self._log_budget = guest_log.LogBudget(policy.limits.guest_output)
        self.inbox = inbox if inbox is not None else Inbox()
        self.max_wait = max_wait
        self._last_error: ToolingError | None = None
        self._returned: OrderedDict[str, ToolingError] = OrderedDict()
        self._interrupt = Interrupt()
        self._deadline = Deadline(policy.limits.wall_time.key)
        self._loop = LoopCalls(agent, bridge, self._deadline, self._interrupt)
        if audit_budget is None:
            audit_budget = run_budget(agent, DEFAULT_AUDIT_RUN_MAX, "the default [host] audit_run_max")
        self._audit = AuditTrail(agent, audit, audit_budget)
        self._owns_audit_budget = owns_audit_budget
        validator = validator if validator is not None else ArgumentValidator()
        approver = approver if approver is not None else DenyAll()
        self._core = SessionCore(
            agent, toolings, policy, audit=audit, validator=validator, approver=approver, pins=pins
        )
        budget = LlmBudget(policy.llm)
        self._caller = Caller(self._audit, self._deadline, budget)
        self._admission = self._core.admission
        self._questions = GuestQuestions(self.inbox, validator)
        self._calls = OpenCalls(
            agent,
            bridge,
            self.inbox,
            policy.limits,
            self._audit,
            self._admission.check_result,
            self._questions.asker,
            budget,
        )
        self._subscriptions = Subscriptions(agent, toolings, self.inbox, self._loop, self._admission, self._audit)
        self.providers = GuestProviders(
            agent,
            providers if providers is not None else ProviderSet({}),
            policy.providers,
            budget,
            policy.limits,
            self.inbox,
            bridge,
            self._loop,
            self._audit,
        )
        self._handles: dict[int, Handle] = {}
        self._next_rep = 1
        self._closing = threading.Lock()
        self._closed = False

    @property
    def core(self) -> SessionCore:
        """The core the session's operations run in (for callers on an event loop: `Bridge.run`)."""
        return self._core

    @property
    def caller(self) -> Caller:
        """For whom the core runs this session's operations: its audit trail and run deadline."""
        return self._caller

    @property
    def bridge(self) -> Bridge:
        return self._loop.bridge

    @property
    def last_error(self) -> ToolingError | None:
        """The last error a host import returned to the guest (named when the guest then traps).
        Setting it (every host import that returns an error does) also remembers the error for
        `returned_error`. What is kept is the error's value, without its traceback or chained
        exceptions: those hold every frame below the raise, the guest's store and the arguments it
        passed among them (a refused 50 MB argument stayed in the host after the run)."""
        return self._last_error

    @last_error.setter
    def last_error(self, error: ToolingError | None) -> None:
        if error is None:
            self._last_error = None
            return
        self._last_error = error.detached()
        self._remember(self._last_error)

    def _remember(self, error: ToolingError) -> None:
        key = str(error)
        self._returned[key] = error
        self._returned.move_to_end(key)
        while len(self._returned) > MAX_RETURNED_ERRORS:
            self._returned.popitem(last=False)

    def returned_error(self, text: str) -> ToolingError | None:
        """The error the host returned to this guest (by a host import or an inbox event) that
        `text`, the guest's `Err`, is: `CODE: message` as returned, alone or followed by agentlib's
        ` (raised at FILE:LINE)`. None for any other text, whatever code it starts with (the host
        believes a code only when it gave it)."""
        for key, error in reversed(self._returned.items()):
            if text == key or (text.startswith(key + RAISED_AT) and text.endswith(")")):
                return error
        return None

    @property
    def deadline(self) -> float | None:
        """`time.monotonic()` value when the run's wall-clock limit ends; set by the runner."""
        return self._deadline.at

    @deadline.setter
    def deadline(self, value: float | None) -> None:
        self._deadline.at = value

    def ended(self, status: str, text: str, tripped: str | None = None) -> str | None:
        """The run ended with `status` and `text` (`run`'s answer, its `err` text, the trap reason;
        `tripped`: which of the host's limits or a stop made it trap): None, or why that differs from
        what was expected of it (a replayed run, `recorded`)."""
        return None

    def invoke(self, function: WitFunction, args: Sequence[Any]) -> Any:
        """WIT function `function` called by the guest with `args` (a method's handle rep first): its
        answer, or `ToolingError`. The one place every import passes (`recorded` records and replays here)."""
        return getattr(self, function.session)(*args)

    # -- handles -----------------------------------------------------------------------------

    def get(self, name: str) -> int:
        """A new handle on tooling `name`, connected; `not-found`, `denied` or `unavailable` otherwise."""
        tooling = self._hop(f"connecting to tooling {name!r}", (Operation.GET, name), self._core.connect, name)
        rep = self._next_rep
        self._next_rep += 1
        self._handles[rep] = Handle(rep, tooling)
        return rep

    def handle(self, rep: int) -> Handle:
        """The open handle `rep`; `not-found` once it was dropped."""
        try:
            return self._handles[rep]
        except KeyError:
            raise not_open(rep) from None

    def drop(self, rep: int) -> None:
        """Forget a handle and cancel every call and subscription opened through it."""
        if self._handles.pop(rep, None) is not None:
            self._cancel_where(lambda owner: owner != rep)

    @contextlib.contextmanager
    def charged_to(self, budget: AuditBudget | None) -> Iterator[None]:
        """Charge the audit lines of the operations in the block to `budget` instead of the session's
        own (None: its own): a long-lived session of `serve` acting for one client at a time. Use it
        from the thread that runs the session's operations."""
        if budget is None:
            yield
            return
        own, self._audit.budget = self._audit.budget, budget
        try:
            yield
        finally:
            self._audit.budget = own

    def close(self) -> None:
        """End of the guest's run (it returned or trapped, or the host gave up on it): cancel
        everything it opened, upstream too, and close the inbox. Idempotent; from any thread, once."""
        with self._closing:
            if self._closed:
                return
            self._closed = True
        self._cancel_where(lambda owner: False)
        self.providers.close()
        self._handles.clear()
        self.inbox.close()
        if self._owns_audit_budget:  # one line tells what the run's audit budget counted instead of writing
            self._audit.end()

    def interrupt(self, reason: str) -> None:
        """From any thread (host shutdown): end the wait the guest is blocked in and refuse every
        later operation with `cancelled`."""
        self._interrupt.fire(reason)
        self.inbox.close()

    def _cancel_where(self, keep: Callable[[int], bool]) -> None:
        self._calls.cancel_where(keep)
        self._subscriptions.end_where(keep)

    # -- tooling operations --------------------------------------------------------------------

    def kind(self, rep: int) -> str:
        return self.handle(rep).tooling.kind

    def name(self, rep: int) -> str:
        return self.handle(rep).tooling.name

    def list_tools(self, rep: int, *, unpinned: bool = False) -> list[ToolSpec]:
        """The tools of the tooling the agent may see (all pages, in the server's order); with
        `unpinned`, tools changed or new since they were pinned too (the command line shows them)."""
        tooling = self.handle(rep).tooling
        list_tools = functools.partial(self._core.list_tools, unpinned=unpinned)
        return self._hop("tools/list", (Operation.LIST_TOOLS, tooling.name), list_tools, tooling)

    def call_tool_blocking(self, rep: int, name: str, arguments: str) -> CallOutcome:
        """Admit, approve and run a call, waiting for its outcome (see `admission` and `calls.shape`:
        an `isError` result is `tool-failed`, one over `max_result_bytes` `limit-exceeded`). Answered
        on this thread when the core needs no loop for it (`SessionCore.call_now`), else one hop."""
        tooling = self.handle(rep).tooling
        with self._audit.span(
            Operation.CALL_TOOL_BLOCKING, tooling.name, name, arguments, traced=UNLESS_DEFERRED
        ) as span:
            call = self._core.admit_now(tooling, name, arguments)
            self._loop.check_open()
            if call is not None and (outcome := self._core.call_now(call)) is not None:
                return outcome
            span.defer()  # the core audits the call on the loop
        run = functools.partial(self._core.call, admitted=call)
        return self._hop(f"the call of tool {name!r}", None, run, tooling, name, arguments)

    def list_resources(self, rep: int) -> list[ResourceSpec]:
        """The resources of the tooling the agent may see."""
        tooling = self.handle(rep).tooling
        what = (Operation.LIST_RESOURCES, tooling.name)
        return self._hop("resources/list", what, self._core.list_resources, tooling)

    def read_resource(self, rep: int, uri: str) -> ResourceData:
        """Resource `uri`: `denied` outside the allow-lists, `limit-exceeded` over `max_result_bytes`."""
        tooling = self.handle(rep).tooling
        what = (Operation.READ_RESOURCE, tooling.name, uri[:MAX_URI_CHARS])
        return self._hop(f"the read of resource {uri[:200]!r}", what, self._core.read_resource, tooling, uri)

    def _hop(
        self,
        what: str,
        audited: tuple[Operation, str] | tuple[Operation, str, str] | None,
        fn: Callable[..., Awaitable[_T]],
        *args: Any,
    ) -> _T:
        """`fn(*args, caller)`, an operation of the core, on the loop: one hop, bounded by the run's
        deadline and ended by an interrupt (the core bounds its own waits). The core writes its
        audit line; one refused before it starts (an interrupted run, a host shutting down) is
        written here as `audited` (operation, tooling, target)."""
        if audited is not None:
            with self._audit.span(*audited, traced=UNLESS_DEFERRED) as span:
                self._loop.check_open()
                span.defer()
        return self._loop.hop(what, fn, *args, self._caller)

    # -- the asynchronous half ----------------------------------------------------------------

    def call_tool(self, rep: int, name: str, arguments: str) -> str:
        """Admit and approve a call, start it and return its id (see `calls`); a refusal is raised."""
        tooling = self.handle(rep).tooling
        with self._audit.span(Operation.CALL_TOOL, tooling.name, name, arguments, traced=UNLESS_DEFERRED) as span:
            call = self._core.admit_now(tooling, name, arguments)
            if call is None:
                call = self._loop.hop(
                    f"admitting the call of tool {name!r}", self._core.admit, tooling, name, arguments, self._caller
                )
            call_id = self._calls.start(rep, call)
            span.defer()  # a started call is audited when it ends
        return call_id

    def is_open(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        return self._calls.is_open(call_id)

    def cancel(self, rep: int, call_id: str) -> bool:
        self.handle(rep)
        return self._calls.cancel(call_id)

    def subscribe(self, rep: int, kind: SubscriptionKind, uri: str = "", refusal: ToolingError | None = None) -> str:
        """Subscribe (to resource `uri` for kind `resource`) and return the id (see `subscriptions`);
        `refusal`, when given, is raised (and audited) once the grants allowed the subscription."""
        tooling = self.handle(rep).tooling
        with self._audit.span(SUBSCRIBE[kind], tooling.name, uri[:MAX_URI_CHARS] or None):
            check_length(uri, MAX_URI_CHARS, "a resource URI")
            return self._subscriptions.subscribe(rep, tooling, kind, uri, refusal)

    def unsubscribe(self, rep: int, kind: SubscriptionKind, sub_id: str) -> bool:
        self.handle(rep)
        return self._subscriptions.unsubscribe(kind, sub_id)

    def subscribe_resource(self, rep: int, uri: str) -> str:
        return self.subscribe(rep, "resource", uri)

    def subscribe_resource_list(self, rep: int) -> str:
        return self.subscribe(rep, "resource-list")

    def subscribe_tool_list(self, rep: int) -> str:
        return self.subscribe(rep, "tool-list")

    def unsubscribe_resource(self, rep: int, sub_id: str) -> bool:
        return self.unsubscribe(rep, "resource", sub_id)

    def unsubscribe_resource_list(self, rep: int, sub_id: str) -> bool:
        return self.unsubscribe(rep, "resource-list", sub_id)

    def unsubscribe_tool_list(self, rep: int, sub_id: str) -> bool:
        return self.unsubscribe(rep, "tool-list", sub_id)

    def respond(self, rep: int, call_id: str, action: str, content: str | None) -> None:
        """Answer the open question of call `call_id` (see `questions`); raises `ToolingError`."""
        tooling = self.handle(rep).tooling
        with self._audit.span(Operation.RESPOND, tooling.name, call_id[:MAX_NAME_CHARS], content):
            check_length(call_id, MAX_NAME_CHARS, "a call id")
            if content is not None:
                self.policy.limits.check_argument_size(len(content.encode("utf-8", "surrogatepass")), "the answer")
            reply = self._questions.reply(call_id, action, content)
            self._loop.run(
                f"answering the question of call {call_id}",
                self._questions.answer,
                call_id,
                reply,
                timeout=RESPOND_TIMEOUT,
                hint="the host's loop is busy",
            )

    def recv(self, timeout_ms: int | None) -> Envelope | None:
        """The next envelope, waiting up to `timeout_ms` (None: `max_wait`) but not past the run's end."""
        timeout = self.max_wait if timeout_ms is None else timeout_ms / 1000
        return self._received(self.inbox.recv(self._deadline.clamp(timeout)))

    def try_recv(self) -> Envelope | None:
        return self._received(self.inbox.recv(None))

    def _received(self, envelope: Envelope | None) -> Envelope | None:
        self._calls.received(envelope)
        self.providers.received(envelope)
        if envelope is not None and isinstance(envelope.payload, ToolingError):
            self._remember(envelope.payload)
        return envelope

    # -- providers (a guest's models: `session.providers`) -------------------------------------------

    def get_provider(self, name: str) -> int:
        return self.providers.get(name)

    def drop_provider(self, rep: int) -> None:
        self.providers.drop(rep)

    def provider_kind(self, rep: int) -> str:
        return self.providers.kind(rep)

    def provider_name(self, rep: int) -> str:
        return self.providers.name(rep)

    def provider_models(self, rep: int) -> list[str]:
        return self.providers.models(rep)

    def provider_chat(self, rep: int, request: ChatRequest) -> ChatResult:
        return self.providers.chat(rep, request)

    def provider_chat_stream(self, rep: int, request: ChatRequest) -> str:
        return self.providers.chat_stream(rep, request)

    def provider_is_open(self, rep: int, id: str) -> bool:
        return self.providers.is_open(rep, id)

    def provider_cancel(self, rep: int, id: str) -> bool:
        return self.providers.cancel(rep, id)

    # -- log -------------------------------------------------------------------------------------

    def log(self, level: str, message: str) -> None:
        """The guest's log line, into the host's log and to `on_log` (whose failures are only logged)."""
        if not self._log_budget.admit(self.agent, message):
            return
        guest_log.log(self.agent, level, message)
        if self._on_log is not None:
            try:
                self._on_log(level, message)
            except Exception:  # boundary: a failing sink must not fail the guest's log call
                logger.debug("the log sink of agent %s failed", self.agent, exc_info=True)
