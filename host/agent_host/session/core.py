"""`SessionCore`: one agent's tooling operations as coroutines on the bridge loop, written once.

A guest's thread (`GuestSession`) reaches it with one hop per operation, and `serve`'s proxied
calls await it on the loop itself. Each operation checks the policy before anything leaves the
host, bounds every wait (`deadline.within`: the tooling's timeouts, shortened by the caller's run
deadline), writes one audit line to the caller's trail, and raises only `ToolingError` (a host bug
becomes `internal`, logged). Checks of large arguments and results run off the loop (`off_loop`).
`admit_now` and `call_now` are the synchronous part: a call whose spec is cached, needs no approval
and whose tooling answers at once needs no loop. Holds no per-call state.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from agent_host._support import off_loop
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallOutcome, CallResult, Operation, ResourceData, ResourceSpec, ToolSpec
from agent_host.policy.approval import Approver
from agent_host.policy.grants import AgentPolicy
from agent_host.policy.pins import Pins
from agent_host.policy.validation import ArgumentValidator
from agent_host.session.admission import MAX_URI_CHARS, Admission, AdmittedCall, check_length
from agent_host.session.audit import AuditTrail
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.audit_log import AuditLog
from agent_host.session.calls import shape
from agent_host.session.deadline import Deadline, bounded_call, request_hint, within
from agent_host.session.llm_budget import LlmBudget
from agent_host.toolings import ProgressFn, Tooling, ToolingSet, connect_timed_out
from agent_host.toolings.server_requests import SPENDER

_T = TypeVar("_T")

CONNECT_GRACE: Final = 2.0
"""Seconds added to a tooling's connect timeout for `get`, so the connection's own message (with the
server's stderr noted) usually wins; when this outer bound ends the wait first (a loaded machine), the
error is the same `unavailable` naming `connect_timeout` and its figure."""

APPROVAL_TIMEOUT: Final = 300.0
"""Seconds an approval may take (a person answering on the terminal) before the call is refused."""


@dataclass(frozen=True)
class Caller:
    """For whom an operation runs: the trail its audit line goes to (a run's, or a `serve` client's
    allowance), the deadline of the run it belongs to, which shortens its waits (None: no run), and
    the run's model budget, which a server's sampling requests during its calls are charged to
    (None: a budget of the agent's limits for each call)."""

    trail: AuditTrail
    deadline: Deadline | None = None
    spender: LlmBudget | None = None

    def bound(self, seconds: float, hint: str) -> tuple[float, str]:
        """`seconds` and `hint`, or what is left of the run and a hint naming its limit when less."""
        return (seconds, hint) if self.deadline is None else self.deadline.bound(seconds, hint)


class SessionCore:
    """The operations of agent `agent` under `policy` (see the module docstring)."""

    def __init__(
        self,
        agent: str,
        toolings: ToolingSet,
        policy: AgentPolicy,
        *,
        audit: AuditLog | None,
        validator: ArgumentValidator,
        approver: Approver,
        pins: Pins | None = None,
    ) -> None:
        self.agent = agent
        self.policy = policy
        self.audit = audit
        self.admission = Admission(agent, policy, validator, pins)
        self._toolings = toolings
        self._approver = approver

    def trail(self, budget: AuditBudget | None = None) -> AuditTrail:
        """A trail of this agent's audit lines charged to `budget` (None: bounded in size only)."""
        return AuditTrail(self.agent, self.audit, budget)

    async def connect(self, name: str, caller: Caller) -> Tooling:
        """Tooling `name`, granted and connected: `not-found` (none configured by that name; the message
        names the agent's own grants, never the other toolings configured), `denied` or `unavailable`
        otherwise."""
        with caller.trail.span(Operation.GET, name):
            try:
                config = self._toolings.config(name)
            except ToolingError:
                granted = ", ".join(sorted(self.policy.grants.toolings)) or "(none)"
                message = f"no tooling named {name!r} is configured; granted to this agent: {granted}"
                raise ToolingError(ErrorCode.NOT_FOUND, message) from None
            self.policy.grants.check_tooling(name)
            timeout = config.connect_timeout + CONNECT_GRACE
            bounded, hint = caller.bound(timeout, f"raise `connect_timeout` in {config.origin}")
            expired = (lambda: connect_timed_out(config)) if bounded == timeout else None
            what = f"connecting to tooling {name!r}"
            return await within(what, self._toolings.connect, name, timeout=bounded, hint=hint, expired=expired)

    async def list_tools(self, tooling: Tooling, caller: Caller, *, unpinned: bool = False) -> list[ToolSpec]:
        """The tools of `tooling` the agent may see (all pages, in the server's order); with
        `unpinned`, tools changed or new since they were pinned too (the command line shows them)."""
        with caller.trail.span(Operation.LIST_TOOLS, tooling.name):
            tools = await self._request(tooling, caller, "tools/list", tooling.list_tools)
            return self.admission.visible_tools(tooling.name, tools, unpinned=unpinned)

    async def list_resources(self, tooling: Tooling, caller: Caller) -> list[ResourceSpec]:
        """The resources of `tooling` the agent may see."""
        with caller.trail.span(Operation.LIST_RESOURCES, tooling.name):
            resources = await self._request(tooling, caller, "resources/list", tooling.list_resources)
            return self.admission.visible_resources(tooling.name, resources)

    async def read_resource(self, tooling: Tooling, uri: str, caller: Caller) -> ResourceData:
        """Resource `uri`: `denied` outside the allow-lists, `limit-exceeded` over `max_result_bytes`."""
        with caller.trail.span(Operation.READ_RESOURCE, tooling.name, uri[:MAX_URI_CHARS]):
            check_length(uri, MAX_URI_CHARS, "a resource URI")
            self.policy.grants.check_resource(tooling.name, uri)
            data = await self._request(tooling, caller, f"the read of resource {uri!r}", tooling.read_resource, uri)
            self.policy.limits.check_result_size(data.size, f"resource {uri!r}")
            return data

    # -- calls -----------------------------------------------------------------------------------

    def admit_now(self, tooling: Tooling, name: str, arguments: str) -> AdmittedCall | None:
        """The call admitted on the caller's thread (`Admission`'s checks) when that needs nothing of
        the loop: its spec cached, the tooling's pins seen, no approval to ask. None when it does;
        a refusal raises `ToolingError`."""
        spec = tooling.cached_tool_spec(name)
        if spec is None or not self.admission.pins.seen(tooling.name):
            return None
        parsed = self.admission.precheck(tooling, name, arguments)
        call = self.admission.admit_with(tooling, name, arguments, parsed, spec)
        return None if call.to_approve else call

    def call_now(self, call: AdmittedCall) -> CallOutcome | None:
        """`call`'s outcome when its tooling answers at once (`Tooling.call_tool_now`: no loop, no
        wait), shaped as a guest gets it; None when the tooling must be awaited (nothing was done)."""
        result = call.tooling.call_tool_now(call.name, call.parsed, agent=self.agent)
        return None if result is None else self.shaped(call, result)

    async def admit(self, tooling: Tooling, name: str, arguments: str, caller: Caller) -> AdmittedCall:
        """`Admission`'s checks (the spec looked up, a pinning tooling's first listing reviewed),
        then approval. Not audited by itself: part of the operation that makes the call."""
        size = len(arguments)
        parsed = await off_loop.run(self.admission.precheck, tooling, name, arguments, size=size)
        spec = tooling.cached_tool_spec(name)
        if spec is None:
            spec = await self._request(tooling, caller, f"looking up tool {name!r}", tooling.tool_spec, name)
        pins = self.admission.pins
        if not pins.seen(tooling.name):
            pins.review(tooling.name, await self._request(tooling, caller, "tools/list", tooling.list_tools))
        call = await off_loop.run(self.admission.admit_with, tooling, name, arguments, parsed, spec, size=size)
        if call.to_approve:
            timeout, hint = caller.bound(APPROVAL_TIMEOUT, "no answer came")
            request = self.admission.approval_request(call)
            what = f"the approval of the call of tool {name!r}"
            self.admission.decided(call, await within(what, self._approver.decide, request, timeout=timeout, hint=hint))
        return call

    async def call(
        self,
        tooling: Tooling,
        name: str,
        arguments: str,
        caller: Caller,
        *,
        operation: Operation = Operation.CALL_TOOL_BLOCKING,
        admitted: AdmittedCall | None = None,
        on_progress: ProgressFn | None = None,
    ) -> CallOutcome:
        """Admit (unless `admitted`: then its tooling was tried at once already), approve and run a
        call of tool `name` (`arguments`: JSON text), its progress reports to `on_progress` (on the
        loop): the outcome as a guest's `call-tool-blocking` gets it, audited as `operation`."""
        with caller.trail.span(operation, tooling.name, name, arguments):
            call = admitted if admitted is not None else await self.admit(tooling, name, arguments, caller)
            result = tooling.call_tool_now(name, call.parsed, agent=self.agent) if admitted is None else None
            if result is None:

                async def run(report: ProgressFn) -> CallResult:
                    # No progress asked for, none is requested: a progress token costs the server and
                    # the client ~0.1 ms a call (measured over stdio), and a blocking call's timeout is fixed.
                    wanted = report if on_progress is not None else None
                    return await tooling.call_tool(name, call.parsed, wanted, agent=self.agent)

                what = f"tooling {tooling.name!r}: the call of tool {name!r}"
                timeout, hint = caller.bound(math.inf, "")
                bounded = within(what, bounded_call, tooling.config, what, run, on_progress, timeout=timeout, hint=hint)
                token = SPENDER.set(caller.spender if caller.spender is not None else LlmBudget(self.policy.llm))
                try:
                    result = await bounded
                finally:
                    SPENDER.reset(token)
            return await off_loop.run(self.shaped, call, result, size=off_loop.size_of(result.value))

    def shaped(self, call: AdmittedCall, result: CallResult) -> CallOutcome:
        """`result` checked against the tool's output schema and shaped as a guest gets it (linear in
        its size)."""
        self.admission.check_result(call, result)
        return shape(self.policy.limits, call.name, call.arguments, result)

    async def _request(
        self, tooling: Tooling, caller: Caller, what: str, fn: Callable[..., Awaitable[_T]], *args: Any
    ) -> _T:
        """A request to `tooling` (`what`, for messages), bounded by its `timeout` and the run."""
        timeout, hint = caller.bound(tooling.config.timeout, request_hint(tooling.config))
        return await within(f"tooling {tooling.name!r}: {what}", fn, *args, timeout=timeout, hint=hint)
