"""`GuestSession` end to end with mock and Python toolings, without wasm: handles, grants, calls,
approval, lifetime, the inbox wait, the guest's log and the audit of every operation.

This is what a guest may do, as the WIT imports see it, through the façade's public methods.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallOutcome, ResourceData
from agent_host.policy.approval import CallbackApprover
from agent_host.session import GuestSession
from tests.support.sessionkit import World


def refused(call: object, *args: object) -> ToolingError:
    assert callable(call)
    with pytest.raises(ToolingError) as caught:
        call(*args)
    return caught.value


def test_get_gives_numbered_handles_on_granted_toolings_only(session: GuestSession) -> None:
    first, second = session.get("m"), session.get("py")
    assert (first, second) == (1, 2)
    assert (session.kind(first), session.name(first), session.kind(second)) == ("mock", "m", "python")
    unknown = refused(session.get, "nope")
    assert unknown == ToolingError(  # the agent's own grants, not the toolings configured for others
        ErrorCode.NOT_FOUND, "no tooling named 'nope' is configured; granted to this agent: m, py"
    )
    denied = refused(session.get, "other")
    assert denied.code is ErrorCode.DENIED and "is not granted tooling 'other'" in denied.message


def test_a_dropped_handle_is_not_found(session: GuestSession) -> None:
    rep = session.get("m")
    session.drop(rep)
    assert refused(session.list_tools, rep) == ToolingError(
        ErrorCode.NOT_FOUND, f"tooling handle {rep} is not open (it was dropped)"
    )


def test_lists_leave_out_what_the_agent_may_not_see(session: GuestSession) -> None:
    rep = session.get("m")
    assert [tool.name for tool in session.list_tools(rep)] == ["echo", "write", "slow"]
    assert [resource.uri for resource in session.list_resources(rep)] == ["mock://a"]


def test_a_blocking_call_returns_the_outcome_or_the_tool_failure(session: GuestSession) -> None:
    rep = session.get("m")
    outcome = session.call_tool_blocking(rep, "echo", '{"text": "a"}')
    assert outcome == CallOutcome(
        "echo", '{"text": "a"}', '{"content": [{"type": "text", "text": "one"}], "isError": false}'
    )
    structured = session.call_tool_blocking(rep, "echo", '{"text": "b"}')
    assert structured.value == (
        '{"content": [{"type": "text", "text": "{\\"n\\": 2}"}], "structuredContent": {"n": 2}, "isError": false}'
    )
    failed = refused(session.call_tool_blocking, rep, "echo", '{"text": "c"}')
    assert (failed.code, failed.message) == (ErrorCode.TOOL_FAILED, "it broke")


def test_a_call_needing_approval_is_denied_by_default_and_runs_when_approved(world: World) -> None:
    denying = world.session()
    try:
        error = refused(denying.call_tool, denying.get("m"), "write", "{}")
        assert error.code is ErrorCode.DENIED
        assert error.message.endswith("and was not approved: no one approves calls here: run with `--approve ask` "
                                      "to be asked, or `--approve all`")  # fmt: skip
    finally:
        denying.close()
    approving = world.session(approver=CallbackApprover(lambda request: request.tool == "write"))
    try:
        assert approving.call_tool_blocking(approving.get("m"), "write", "{}").value.startswith('{"content"')
    finally:
        approving.close()


def test_reading_a_resource_is_checked_against_the_allow_list(session: GuestSession) -> None:
    rep = session.get("m")
    assert session.read_resource(rep, "mock://a") == ResourceData("mock://a", None, text="A1")
    assert refused(session.read_resource, rep, "mock://private").code is ErrorCode.DENIED


def test_python_tools_are_checked_and_named_like_every_other_kind(session: GuestSession) -> None:
    rep = session.get("py")
    unknown = refused(session.call_tool_blocking, rep, "nope", "{}")
    assert unknown == ToolingError(
        ErrorCode.NOT_FOUND,
        "tooling 'py' has no tool 'nope'; its tools are: "
        "word_count, slow, threaded, write_note, explode, deploy, plain",
    )
    broken = refused(session.call_tool_blocking, rep, "broken", "{}")
    assert broken == ToolingError(
        ErrorCode.NOT_FOUND,
        "tooling 'py': tool 'broken' is not offered: its prepare() failed: OSError: the database is not there",
    )
    refusal = refused(session.call_tool_blocking, rep, "deploy", '{"service": "web", "env": "moon"}')
    assert refusal == ToolingError(
        ErrorCode.INVALID_ARGUMENTS,
        "tooling 'py': tool 'deploy' refused its arguments: env must be staging or production, not 'moon'",
    )
    deployed = session.call_tool_blocking(rep, "deploy", '{"service": "web", "env": "staging"}')
    assert '"structuredContent": {"deployed": "web", "to": "staging"}' in deployed.value
    assert [(t.name, t.builtin) for t in session.list_tools(rep) if t.name == "deploy"] == [("deploy", True)]


def test_drop_cancels_the_calls_made_through_that_handle(session: GuestSession) -> None:
    rep = session.get("m")
    call_id = session.call_tool(rep, "slow", "{}")
    assert session.is_open(rep, call_id)
    session.drop(rep)
    assert not session.inbox.is_open(call_id)


def test_close_cancels_everything_and_is_idempotent(session: GuestSession) -> None:
    rep = session.get("m")
    session.call_tool(rep, "slow", "{}")
    session.subscribe(rep, "tool-list")
    session.close()
    session.close()
    assert session.inbox.open_ids() == ([], [])
    assert refused(session.list_tools, rep).code is ErrorCode.NOT_FOUND


def test_after_an_interrupt_every_operation_is_cancelled(session: GuestSession) -> None:
    rep = session.get("m")
    session.interrupt("the host is stopping")
    error = refused(session.list_tools, rep)
    assert error == ToolingError(ErrorCode.CANCELLED, "the host stopped this agent: the host is stopping")
    assert refused(session.call_tool_blocking, rep, "echo", '{"text": "a"}') == error  # would need no loop: refused too
    assert session.recv(None) is None


def test_a_mock_result_ready_at_once_is_answered_without_the_loop(
    world: World, session: GuestSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A synchronous tooling needs no hop to the bridge loop (the host path's main cost)."""
    rep = session.get("m")
    hops: list[object] = []
    original = world.bridge.call

    def counted(fn: Any, *args: Any, **kw: Any) -> Any:
        hops.append(fn)
        return original(fn, *args, **kw)

    monkeypatch.setattr(world.bridge, "call", counted)
    outcome = session.call_tool_blocking(rep, "echo", '{"text": "a"}')
    assert outcome.value.startswith('{"content": [{"type": "text", "text": "one')
    assert hops == []
    with pytest.raises(ToolingError):
        session.call_tool_blocking(rep, "slow", "{}")  # a delayed result runs on the loop (and outlasts 0.5 s)
    assert len(hops) == 1


def test_recv_waits_no_longer_than_the_run_deadline(session: GuestSession) -> None:
    session.deadline = time.monotonic() - 1.0
    started = time.monotonic()
    assert session.recv(None) is None  # max_wait is 60 s; the run has ended
    assert time.monotonic() - started < 30.0  # a bound far from the 60 s a broken recv would wait
    assert session.deadline is not None


def test_a_long_log_message_is_cut_with_a_marker(session: GuestSession, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="agent_host.guest"):
        session.log("warn", "x" * (16 * 1024 + 5))
        session.log("trace", "fine")
    warning, trace = caplog.records
    assert warning.levelno == logging.WARNING and warning.getMessage().endswith("x... [5 characters cut]")
    assert warning.getMessage().startswith("[tester] warn: x")
    assert (trace.levelno, trace.getMessage()) == (logging.DEBUG, "[tester] trace: fine")


def test_every_operation_is_audited_refusals_included(world: World, session: GuestSession) -> None:
    rep = session.get("m")
    session.list_tools(rep)
    session.call_tool_blocking(rep, "echo", '{"text": "a"}')
    refused(session.call_tool, rep, "hidden", "{}")
    refused(session.get, "other")
    assert [(line["operation"], line["tooling"], line["target"], line["outcome"]) for line in world.audit_lines()] == [
        ("get", "m", None, "ok"),
        ("list-tools", "m", None, "ok"),
        ("call-tool-blocking", "m", "echo", "ok"),
        ("call-tool", "m", "hidden", "denied"),
        ("get", "other", None, "denied"),
    ]


def test_a_kept_error_does_not_pin_the_frames_that_raised_it(session: GuestSession) -> None:
    """The session keeps the error's value, not the refusal it returned with its traceback: that held
    every frame below it, the guest's store and its argument among them, so a guest's 50 MB argument
    would stay in the host after its run."""
    import gc
    import weakref

    class Pinned:
        pass

    def host_import(argument: Pinned) -> None:
        try:
            raise ToolingError(ErrorCode.LIMIT_EXCEEDED, "too big") from ValueError("inner")
        except ToolingError as exc:
            session.last_error = exc

    argument = Pinned()
    alive = weakref.ref(argument)
    host_import(argument)
    del argument
    gc.collect()
    assert alive() is None, "the kept error holds the frame of the import and its arguments"
    assert session.last_error == ToolingError(ErrorCode.LIMIT_EXCEEDED, "too big")
    assert session.returned_error("limit-exceeded: too big") == ToolingError(ErrorCode.LIMIT_EXCEEDED, "too big")
