"""`LoopSession`: one agent's calls and reads as coroutines on the bridge loop, with no thread of its own.

For callers that already live on an event loop (`serve`'s proxied tools): each operation is one
coroutine run on the bridge loop (`Bridge.run`), so the checks, the audit and the upstream request
cost no thread hand-over beyond reaching that loop. The checks, their order, the bounds and the
audit lines are those of `GuestSession`'s blocking operations (`admission`, `deadline`, `audit`;
the checks of large arguments and results run off the loop: `off_loop`); a server's question
during a call is declined (no one can answer it). Holds no per-call state: one
instance serves any number of concurrent operations; an operation's audit lines are charged to the
`audit_budget` it is given (a `serve` client's allowance). Every operation raises only
`ToolingError` (a host bug becomes `internal`, logged).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from agent_host._support import off_loop
from agent_host.model import CallOutcome, CallResult, Operation, ResourceData
from agent_host.policy.approval import Approver
from agent_host.policy.grants import AgentPolicy
from agent_host.policy.pins import Pins
from agent_host.policy.validation import ArgumentValidator
from agent_host.session.admission import MAX_NAME_CHARS, MAX_URI_CHARS, Admission, AdmittedCall, check_length
from agent_host.session.audit import AuditTrail
from agent_host.session.audit_budget import AuditBudget
from agent_host.session.audit_log import AuditLog
from agent_host.session.calls import shape
from agent_host.session.deadline import bounded_call, request_hint, within
from agent_host.session.facade import APPROVAL_TIMEOUT, CONNECT_GRACE
from agent_host.toolings import ProgressFn, Tooling, ToolingSet, connect_timed_out

_T = TypeVar("_T")


class LoopSession:
    """Operations of agent `agent` under `policy`, run on the bridge loop (see the module docstring)."""

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
        self._toolings = toolings
        self._approver = approver
        self._log = audit
        self._audit = AuditTrail(agent, audit)
        self._admission = Admission(agent, policy, validator, pins)

    def _trail(self, audit_budget: AuditBudget | None) -> AuditTrail:
        """The audit of one operation whose lines are charged to `audit_budget`."""
        return self._audit if audit_budget is None else AuditTrail(self.agent, self._log, audit_budget)

    async def tooling(self, name: str, audit_budget: AuditBudget | None = None) -> Tooling:
        """Tooling `name`, granted and connected (as `GuestSession.get`, audited the same way)."""
        with self._trail(audit_budget).span(Operation.GET, name):
            config = self._toolings.config(name)
            self.policy.grants.check_tooling(name)
            return await within(
                f"connecting to tooling {name!r}",
                self._toolings.connect,
                name,
                timeout=config.connect_timeout + CONNECT_GRACE,
                hint=f"raise `connect_timeout` in {config.origin}",
                expired=lambda: connect_timed_out(config),
            )

    async def call_tool(
        self,
        tooling_name: str,
        name: str,
        arguments: str,
        on_progress: ProgressFn | None = None,
        audit_budget: AuditBudget | None = None,
    ) -> CallOutcome:
        """Admit, approve and run a call of tool `name` of `tooling_name` (`arguments`: JSON text),
        its progress reports to `on_progress` (on the loop): the outcome as a guest's
        `call-tool-blocking` gets it. Audited as an asynchronous call (`call-tool`), its lines charged
        to `audit_budget`."""
        tooling = await self.tooling(tooling_name, audit_budget)
        with self._trail(audit_budget).span(Operation.CALL_TOOL, tooling.name, name, arguments):
            call = await self._admit(tooling, name, arguments)
            result: CallResult | None = tooling.call_tool_now(name, call.parsed, agent=self.agent)
            if result is None:

                async def run(report: ProgressFn) -> CallResult:
                    return await tooling.call_tool(name, call.parsed, report, agent=self.agent)

                what = f"tooling {tooling.name!r}: the call of tool {name!r}"
                result = await within(what, bounded_call, tooling.config, what, run, on_progress, timeout=None)
            assert result is not None, "a call's result"
            return await off_loop.run(self._shaped, call, result, size=off_loop.size_of(result.value))

    def _shaped(self, call: AdmittedCall, result: CallResult) -> CallOutcome:
        """`result` checked against the tool's output schema and shaped as a guest gets it (linear in
        its size: `off_loop`)."""
        self._admission.check_result(call, result)
        return shape(self.policy.limits, call.name, call.arguments, result)

    async def read_resource(self, tooling_name: str, uri: str, audit_budget: AuditBudget | None = None) -> ResourceData:
        """Resource `uri` of `tooling_name`, as `GuestSession.read_resource` reads it; audited, its
        lines charged to `audit_budget`."""
        tooling = await self.tooling(tooling_name, audit_budget)
        with self._trail(audit_budget).span(Operation.READ_RESOURCE, tooling.name, uri[:MAX_URI_CHARS]):
            check_length(uri, MAX_URI_CHARS, "a resource URI")
            self.policy.grants.check_resource(tooling.name, uri)
            data = await self._request(tooling, f"the read of resource {uri!r}", tooling.read_resource, uri)
            self.policy.limits.check_result_size(data.size, f"resource {uri!r}")
            return data

    async def _admit(self, tooling: Tooling, name: str, arguments: str) -> AdmittedCall:
        """`Admission`'s checks, the spec looked up here (and a pinning tooling's first listing
        reviewed), then approval."""
        check_length(name, MAX_NAME_CHARS, "a tool name")
        size = len(arguments)
        parsed = await off_loop.run(self._admission.precheck, tooling, name, arguments, size=size)
        spec = tooling.cached_tool_spec(name)
        if spec is None:
            spec = await self._request(tooling, f"looking up tool {name!r}", tooling.tool_spec, name)
        pins = self._admission.pins
        if not pins.seen(tooling.name):
            pins.review(tooling.name, await self._request(tooling, "tools/list", tooling.list_tools))
        call = await off_loop.run(self._admission.admit_with, tooling, name, arguments, parsed, spec, size=size)
        if call.to_approve:
            request = self._admission.approval_request(call)
            decision = await within(
                f"the approval of the call of tool {name!r}",
                self._approver.decide,
                request,
                timeout=APPROVAL_TIMEOUT,
                hint="no answer came",
            )
            self._admission.decided(call, decision)
        return call

    async def _request(self, tooling: Tooling, what: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """A request to `tooling` (`what`, for messages), bounded by its `timeout`."""
        config = tooling.config
        return await within(
            f"tooling {tooling.name!r}: {what}", fn, *args, timeout=config.timeout, hint=request_hint(config)
        )
