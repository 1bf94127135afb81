"""Admission: the checks every call passes, in order, before anything leaves the host; then approval.

Admission is pure checks returning an admitted call, the first failing check winning in a fixed order;
approval is its own step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import ResourceSpec, ToolSpec
from agent_host.policy.approval import ApprovalRequest, Decision
from agent_host.policy.validation import ArgumentValidator
from agent_host.session import Admission, AdmittedCall
from agent_host.toolings import Tooling
from tests.support.sessionkit import MOCK, World, admit, approve


@pytest.fixture
def admission(world: World) -> Admission:
    return Admission("tester", world.policy(), ArgumentValidator())


@pytest.fixture
def mock(world: World) -> Tooling:
    return world.tooling("m")


def lookup_in(tooling: Tooling) -> dict[str, ToolSpec]:
    return {name: spec for name in ("echo", "write", "slow") if (spec := tooling.cached_tool_spec(name)) is not None}


def refusal(admission: Admission, tooling: Tooling, name: str, arguments: str) -> ToolingError:
    def lookup(tool: str) -> ToolSpec:
        spec = tooling.cached_tool_spec(tool)
        if spec is None:
            raise ToolingError(ErrorCode.NOT_FOUND, f"no tool {tool!r}")
        return spec

    with pytest.raises(ToolingError) as caught:
        admit(admission, tooling, name, arguments, lookup)
    return caught.value


def test_an_admitted_call_carries_its_parsed_arguments_spec_and_what_needs_approval(
    admission: Admission, mock: Tooling
) -> None:
    specs = lookup_in(mock)
    echo = admit(admission, mock, "echo", '{"text": "hi"}', specs.__getitem__)
    assert (echo.name, echo.arguments, echo.parsed, echo.spec.name) == (
        "echo",
        '{"text": "hi"}',
        {"text": "hi"},
        "echo",
    )
    assert echo.to_approve == frozenset()
    write = admit(admission, mock, "write", "{}", specs.__getitem__)
    assert write.to_approve == frozenset({"workspace_write"})


def test_the_first_failing_check_wins_in_a_fixed_order(world: World, mock: Tooling) -> None:
    admission = Admission("tester", world.policy(), ArgumentValidator())
    # 1. the tool is granted (before anything about the arguments)
    denied = refusal(admission, mock, "hidden", "not json")
    assert denied.code is ErrorCode.DENIED and "may not call tool 'hidden'" in denied.message
    # 2. the arguments are JSON (before the tool's existence is asked)
    bad_json = refusal(admission, mock, "echo-nothing", "not json")
    assert bad_json.code is ErrorCode.INVALID_ARGUMENTS and "not valid JSON" in bad_json.message
    # 3. the tool exists (before its schema is checked)
    missing = refusal(admission, mock, "echo-nothing", "{}")
    assert missing.code is ErrorCode.NOT_FOUND
    # 4. the arguments match the schema
    schema = refusal(admission, mock, "echo", '{"text": 1}')
    assert schema.code is ErrorCode.INVALID_ARGUMENTS and "at $.text" in schema.message


def test_arguments_larger_than_the_limit_are_refused_before_they_are_parsed(tmp_path: Path) -> None:
    world = World(tmp_path, MOCK + "\n[host]\nmax_argument_bytes = 10\n")
    try:
        admission = Admission("tester", world.policy(), ArgumentValidator())
        error = refusal(admission, world.tooling("m"), "echo", '{"text": "far too long"} and not JSON')
        assert error.code is ErrorCode.LIMIT_EXCEEDED
        assert "are 37 bytes, more than the limit of 10 (max_argument_bytes in" in error.message
    finally:
        world.close()


def test_a_capability_the_agent_does_not_hold_is_denied(tmp_path: Path) -> None:
    world = World(tmp_path, MOCK.replace('"read_only", "workspace_write", ', '"read_only", '))
    try:
        admission = Admission("tester", world.policy(), ArgumentValidator())
        error = refusal(admission, world.tooling("m"), "write", "{}")
        assert error.code is ErrorCode.DENIED
        assert "it needs workspace_write, which the agent does not hold" in error.message
    finally:
        world.close()


def admitted(admission: Admission, mock: Tooling, name: str) -> AdmittedCall:
    return admit(admission, mock, name, '{"text": "x"}' if name == "echo" else "{}", lookup_in(mock).__getitem__)


def test_a_call_needing_no_approval_is_not_put_to_the_approver(admission: Admission, mock: Tooling) -> None:
    asked: list[ApprovalRequest] = []

    def never(request: ApprovalRequest) -> Decision:
        asked.append(request)
        raise AssertionError("asked")

    approve(admission, admitted(admission, mock, "echo"), never)  # raises nothing: no approval needed
    assert asked == []


def test_approval_asks_once_with_the_effective_arguments_and_passes_when_approved(
    admission: Admission, mock: Tooling
) -> None:
    asked: list[ApprovalRequest] = []

    def yes(request: ApprovalRequest) -> Decision:
        asked.append(request)
        return Decision(True, "fine")

    approve(admission, admitted(admission, mock, "write"), yes)
    assert [(r.agent, r.tooling, r.tool, r.capabilities, r.arguments) for r in asked] == [
        ("tester", "m", "write", frozenset({"workspace_write"}), {})
    ]


def test_a_refused_approval_is_denied_with_the_approvers_reason(admission: Admission, mock: Tooling) -> None:
    with pytest.raises(ToolingError) as caught:
        approve(admission, admitted(admission, mock, "write"), lambda request: Decision(False, "not today"))
    assert caught.value.code is ErrorCode.DENIED
    assert caught.value.message.startswith(
        "the call of tool 'write' of tooling 'm' by agent 'tester' needs approval (workspace_write is in "
        "require_approval of "
    )
    assert caught.value.message.endswith("agent-host.toml [agents.tester]) and was not approved: not today")


def test_the_approver_sees_what_a_python_tool_shows_for_approval(admission: Admission, world: World) -> None:
    python = world.tooling("py")
    spec = python.cached_tool_spec("write_note")
    assert spec is not None
    call = admit(admission, python, "write_note", '{"path": "/n.txt", "text": "secret"}', lambda name: spec)
    seen: list[ApprovalRequest] = []

    def yes(request: ApprovalRequest) -> Decision:
        seen.append(request)
        return Decision(True, "ok")

    approve(admission, call, yes)
    assert [request.arguments for request in seen] == [{"path": "/n.txt"}]


def test_lists_keep_only_what_the_agent_may_see(admission: Admission) -> None:
    tools = [ToolSpec(name, None, {}) for name in ("echo", "echo2", "hidden", "write")]
    assert [t.name for t in admission.visible_tools("m", tools)] == ["echo", "echo2", "write"]
    assert [t.name for t in admission.visible_tools("py", tools)] == ["echo", "echo2", "hidden", "write"]
    resources = [ResourceSpec("mock://a", "a"), ResourceSpec("mock://private", "p")]
    assert [r.uri for r in admission.visible_resources("m", resources)] == ["mock://a"]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ('{"text": "\\ud800"}', "a lone UTF-16 surrogate (\\ud800) that no UTF-8 text can hold at $.text"),
        ('{"text": "x", "deep": ' + "[" * 300 + "]" * 300 + "}", "nested more than 128 levels deep at $.deep"),
        ('{"text": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested more than 128 levels deep"),
        ('{"text": "x", "n": ' + "9" * 5000 + "}", "an integer of 5000 digits (more than 1000) at $.n"),
        ('{"text": "x", "n": NaN}', "NaN is not a JSON number at $.n"),
        ('{"text": "x", "n": [Infinity]}', "such as 1e999) at $.n[0]"),
        ('{"text": "x", "n": 1e400}', "(nor is a number too large for a float, such as 1e999) at $.n"),
    ],
)
def test_arguments_that_no_peer_could_take_are_invalid_arguments_naming_the_problem(
    admission: Admission, mock: Tooling, arguments: str, named: str
) -> None:
    """A lone surrogate (which would break the shared connection's writer), deep nesting and long
    integers (RecursionError/ValueError) and NaN are `invalid-arguments` at admission."""
    error = refusal(admission, mock, "echo", arguments)
    assert error.code is ErrorCode.INVALID_ARGUMENTS, error
    assert named in error.message and "the arguments of tool 'echo'" in error.message
