"""Admission: what an agent may see, and the checks a call passes before anything leaves the host.

`Admission.precheck` then `admit_with` (given the tool's spec) are pure (no I/O but the lock
file's `pins`) and give an `AdmittedCall`, or raise `ToolingError`, first failure wins, in this
order: the name is at most `MAX_NAME_CHARS` (`invalid-arguments`), the tool is granted (`denied`),
the arguments are at most `max_argument_bytes` (`limit-exceeded`) and a JSON object under the rules
of `strict_json` (`invalid-arguments`), the tool exists (`not-found`), it is the pinned one of a
`pin_tools` tooling (`denied`), the arguments match its input schema (`invalid-arguments`), and the
agent holds the capabilities the call needs (`denied`).
Approval is next (`session.core`: `approval_request`, then `decided`). `check_result`: structured
content breaking the output schema is `protocol`. `visible_*` leave out what the allow-lists do not
grant and what a pinning tooling changed or added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from agent_host._support import strict_json
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallResult, JsonObject, ResourceSpec, ToolSpec
from agent_host.policy.approval import ApprovalRequest, Decision
from agent_host.policy.capabilities import needed
from agent_host.policy.grants import AgentPolicy
from agent_host.policy.pins import Pins, PinStatus
from agent_host.policy.validation import ArgumentValidator
from agent_host.toolings import Tooling

EXAMPLE_ARGUMENTS = 'pass a JSON object such as {"text": "hi"}, or {} for none'

MAX_NAME_CHARS: Final = 1024
"""Characters of a tool name or call id a guest may give (longer: `invalid-arguments`)."""

MAX_URI_CHARS: Final = 8192
"""Characters of a resource URI a guest may give (longer: `invalid-arguments`)."""


def check_length(text: str, limit: int, what: str) -> None:
    """`invalid-arguments` when `text` (`what`, for the message) is longer than `limit` characters;
    nothing of it is sent or repeated back."""
    if len(text) > limit:
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS, f"{what} is {len(text)} characters long, more than the {limit} allowed"
        )


@dataclass(frozen=True)
class AdmittedCall:
    """A call that passed every check but approval."""

    tooling: Tooling
    name: str
    arguments: str
    """The arguments as the guest sent them (JSON text)."""
    parsed: JsonObject
    spec: ToolSpec
    to_approve: frozenset[str]
    """The capabilities of this call that need approval (empty: none)."""


class Admission:
    """The checks of one agent's calls under its policy (see the module docstring)."""

    def __init__(self, agent: str, policy: AgentPolicy, validator: ArgumentValidator, pins: Pins | None = None) -> None:
        self.agent = agent
        self.policy = policy
        self.validator = validator
        self.pins = pins if pins is not None else Pins(None)
        """The pinned tool definitions (default: no tooling pins its tools)."""

    def precheck(self, tooling: Tooling, name: str, arguments: str) -> JsonObject:
        """The checks that need no spec (the name's length, granted, size, strict JSON object): the
        parsed arguments, for `admit_with` once the spec is at hand."""
        check_length(name, MAX_NAME_CHARS, "a tool name")
        self.policy.grants.check_tool(tooling.name, name)
        self.policy.limits.check_argument_size(len(arguments.encode("utf-8")), f"the call of tool {name!r}")
        return parse_arguments(arguments, f"the arguments of tool {name!r}")

    def admit_with(
        self, tooling: Tooling, name: str, arguments: str, parsed: JsonObject, spec: ToolSpec
    ) -> AdmittedCall:
        """The checks after `precheck`, with the tool's `spec` (pins, schema, capabilities)."""
        self.pins.check(tooling.name, spec)
        self.validator.check(tooling.name, name, spec.input_schema, parsed)
        capabilities = self.policy.capabilities
        to_approve = frozenset[str]()
        if capabilities is not None:
            to_approve = capabilities.check(tooling.name, name, needed(spec, tooling.config.capabilities))
        return AdmittedCall(tooling, name, arguments, parsed, spec, to_approve)

    def approval_request(self, call: AdmittedCall) -> ApprovalRequest:
        """What the approver is asked about `call` (one with capabilities `to_approve`)."""
        return ApprovalRequest(
            self.agent,
            call.tooling.name,
            call.name,
            call.to_approve,
            call.tooling.approval_view(call.name, call.parsed),
        )

    def decided(self, call: AdmittedCall, decision: Decision) -> None:
        """The approver's `decision` about `call`: `denied`, with its reason, unless it approves."""
        if decision.approved:
            return
        capabilities = self.policy.capabilities
        assert capabilities is not None, "only a policy with capabilities asks for approval"
        raise ToolingError(
            ErrorCode.DENIED,
            f"the call of tool {call.name!r} of tooling {call.tooling.name!r} by agent {self.agent!r} needs approval "
            f"({', '.join(sorted(call.to_approve))} is in require_approval of {capabilities.source}) and was not "
            f"approved: {decision.reason}",
        )

    def check_result(self, call: AdmittedCall, result: CallResult) -> None:
        """Raise `ToolingError(protocol)` when a successful result's `structuredContent` does not
        match the output schema the tool declares (see `validation`)."""
        schema = call.spec.output_schema
        if schema is not None and not result.is_error:
            structured = result.value.get("structuredContent")
            self.validator.check_output(call.tooling.name, call.name, schema, structured)

    def visible_tools(self, tooling: str, tools: list[ToolSpec], *, unpinned: bool = False) -> list[ToolSpec]:
        """The tools of `tools` (a complete listing) the agent may see: granted and, unless `unpinned`,
        not changed or new since they were pinned."""
        pins = self.pins.review(tooling, tools)
        return [
            t
            for t in tools
            if self.policy.grants.tool_allowed(tooling, t.name)
            and (unpinned or pins.get(t.name, PinStatus.PINNED) is PinStatus.PINNED)
        ]

    def visible_resources(self, tooling: str, resources: list[ResourceSpec]) -> list[ResourceSpec]:
        """The resources of `resources` the agent may see."""
        return [r for r in resources if self.policy.grants.resource_allowed(tooling, r.uri)]


def parse_arguments(text: str, what: str = "arguments") -> JsonObject:
    """Tool arguments (`what`, for the message) from JSON text; `invalid-arguments` unless it is a
    JSON object under the rules of `strict_json` (no lone surrogate, bounded depth and digits, no NaN)."""
    try:
        value = strict_json.parse(text)
    except strict_json.JsonTextError as exc:
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS, f"{what} are not valid JSON ({exc}); {EXAMPLE_ARGUMENTS}"
        ) from None
    if not isinstance(value, dict):
        raise ToolingError(
            ErrorCode.INVALID_ARGUMENTS,
            f"{what} must be a JSON object, got {type(value).__name__} {text[:40]!r}; {EXAMPLE_ARGUMENTS}",
        )
    return value
