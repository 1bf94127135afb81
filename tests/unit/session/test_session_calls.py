"""Asynchronous calls: an id at once, exactly one final envelope, cancellation upstream, audit at the end.

Open calls are their own part of the session, tested with a mock tooling and no wasm.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallOutcome, CallResult, Envelope, Progress, ToolSpec
from agent_host.policy.validation import ArgumentValidator
from agent_host.session import Admission, AdmittedCall, call_outcome
from agent_host.session.audit import AuditTrail
from agent_host.session.calls import OpenCalls, shape
from agent_host.session.inbox import Inbox
from tests.support.sessionkit import MOCK, WAIT, World, admit, small_inbox


class Calls:
    """An `OpenCalls` of agent `tester` with its inbox and audit log."""

    def __init__(self, world: World, inbox: Inbox | None = None) -> None:
        self.world = world
        self.inbox = inbox if inbox is not None else Inbox()
        self.admission = Admission("tester", world.policy(), ArgumentValidator())
        self.audit = AuditTrail("tester", world.audit_log())
        self.calls = OpenCalls("tester", world.bridge, self.inbox, world.policy().limits, self.audit)
        self.mock = world.tooling("m")

    def admitted(self, name: str, arguments: str = "{}") -> AdmittedCall:
        def lookup(tool: str) -> ToolSpec:
            spec = self.mock.cached_tool_spec(tool)
            assert spec is not None
            return spec

        return admit(self.admission, self.mock, name, arguments, lookup)

    def start(self, name: str, arguments: str = "{}", rep: int = 1) -> str:
        return self.calls.start(rep, self.admitted(name, arguments))

    def final(self) -> Envelope:
        """The next envelope that is not progress."""
        while True:
            envelope = self.inbox.recv(WAIT)
            assert envelope is not None, "no envelope came"
            if envelope.kind != "progress":
                self.calls.received(envelope)
                return envelope


@pytest.fixture
def calls(world: World) -> Calls:
    return Calls(world)


def test_a_call_returns_its_id_at_once_and_ends_with_one_result_envelope(calls: Calls) -> None:
    call_id = calls.start("echo", '{"text": "hi"}')
    assert calls.calls.is_open(call_id)
    envelope = calls.final()
    assert (envelope.id, envelope.kind) == (call_id, "tool-result")
    assert envelope.payload == CallOutcome(
        "echo", '{"text": "hi"}', '{"content": [{"type": "text", "text": "one"}], "isError": false}'
    )
    assert not calls.calls.is_open(call_id)
    assert calls.inbox.recv(0.05) is None  # exactly one
    assert [(line["operation"], line["target"], line["outcome"]) for line in calls.world.audit_lines()] == [
        ("call-tool", "echo", "ok")
    ]


def test_a_result_ready_at_once_is_queued_before_the_id_is_returned_without_the_loop(
    calls: Calls, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mock result without delay is answered on the guest's thread (no hop to the loop)."""
    started: list[object] = []
    monkeypatch.setattr(calls.world.bridge, "start", lambda *args: started.append(args))
    call_id = calls.start("echo", '{"text": "hi"}')
    envelope = calls.inbox.recv(0)
    assert envelope is not None and (envelope.id, envelope.kind) == (call_id, "tool-result")
    assert started == []
    calls.start("echo", '{"text": "2"}')
    calls.start("echo", '{"text": "3"}')  # the script's third result is an error
    assert calls.inbox.recv(0) is not None
    error = calls.inbox.recv(0)
    assert error is not None and error.kind == "error"
    assert [line["outcome"] for line in calls.world.audit_lines()] == ["ok", "ok", "tool-failed"]
    calls.start("echo", '{"text": "4"}')  # the script is over: its message, at once too
    over = calls.inbox.recv(0)
    assert (
        over is not None
        and isinstance(over.payload, ToolingError)
        and "no scripted result for call #4" in (over.payload.message)
    )
    calls.start("slow")
    assert len(started) == 1  # a delayed result goes to the loop


def test_an_is_error_result_is_an_error_envelope_with_the_text_and_the_whole_result(calls: Calls) -> None:
    calls.start("echo", '{"text": "1"}')
    calls.final()
    calls.start("echo", '{"text": "2"}')
    calls.final()
    calls.start("echo", '{"text": "3"}')
    envelope = calls.final()
    assert envelope.kind == "error"
    error = envelope.payload
    assert isinstance(error, ToolingError)
    assert (error.code, error.message) == (ErrorCode.TOOL_FAILED, "it broke")
    assert error.data is not None and json.loads(error.data)["isError"] is True
    assert calls.world.audit_lines()[-1]["outcome"] == "tool-failed"


def test_a_call_that_outlasts_the_toolings_timeout_ends_with_the_one_timeout_message(calls: Calls) -> None:
    call_id = calls.start("slow")
    envelope = calls.final()
    assert (envelope.id, envelope.kind) == (call_id, "error")
    assert isinstance(envelope.payload, ToolingError)
    assert envelope.payload.code is ErrorCode.TIMEOUT
    assert envelope.payload.message.startswith(
        "tooling 'm': the call of tool 'slow' did not finish within 0.5 s and was cancelled (raise `timeout` in "
    )
    assert envelope.payload.message.endswith("[tooling.m] to wait longer)")
    assert calls.world.audit_lines()[-1]["outcome"] == "timeout"


def test_progress_arrives_as_progress_envelopes_of_the_call(calls: Calls) -> None:
    call_id = calls.start("slow")
    envelope = calls.inbox.recv(WAIT)
    assert envelope is not None and (envelope.id, envelope.kind) == (call_id, "progress")
    assert isinstance(envelope.payload, Progress) and envelope.payload.total == 30


def test_a_cancelled_call_delivers_nothing_and_is_audited_as_cancelled(calls: Calls) -> None:
    call_id = calls.start("slow")
    assert calls.calls.cancel(call_id) is True
    assert calls.calls.cancel(call_id) is False
    assert not calls.calls.is_open(call_id)
    assert calls.inbox.recv(0.6) is None  # past the tooling's timeout: not even a timeout envelope
    assert [line["outcome"] for line in calls.world.audit_lines()] == ["cancelled"]


def test_cancel_where_cancels_only_the_calls_of_rejected_handles(calls: Calls) -> None:
    first = calls.start("slow", rep=1)
    second = calls.start("echo", '{"text": "x"}', rep=2)
    calls.calls.cancel_where(lambda rep: rep != 1)
    assert not calls.calls.is_open(first)
    assert calls.final().id == second


def test_a_call_beyond_max_open_calls_is_refused_and_leaves_nothing_open(world: World) -> None:
    calls = Calls(world, small_inbox())
    calls.start("slow")
    calls.start("slow")
    with pytest.raises(ToolingError) as caught:
        calls.start("slow")
    assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
    open_calls, open_subscriptions = calls.inbox.open_ids()
    assert (len(open_calls), open_subscriptions) == (2, [])


def test_a_call_on_a_closed_host_is_unavailable_and_not_left_open(tmp_path: Path) -> None:
    world = World(tmp_path)
    calls = Calls(world)
    admitted = calls.admitted("echo", '{"text": "x"}')
    world.close()
    with pytest.raises(ToolingError) as caught:
        calls.calls.start(1, admitted)
    assert (caught.value.code, caught.value.message) == (ErrorCode.UNAVAILABLE, "the host is shutting down")
    assert calls.inbox.open_ids() == ([], [])


def test_a_result_larger_than_max_result_bytes_is_limit_exceeded(tmp_path: Path) -> None:
    world = World(tmp_path, MOCK + "\n[host]\nmax_result_bytes = 20\n")
    try:
        limits = world.policy().limits
        with pytest.raises(ToolingError) as caught:
            shape(limits, "echo", "{}", CallResult.from_text("x" * 30))
        assert caught.value.code is ErrorCode.LIMIT_EXCEEDED
        assert "the result of tool 'echo' is " in caught.value.message and "max_result_bytes" in caught.value.message
    finally:
        world.close()


def test_an_error_result_without_text_says_so() -> None:
    with pytest.raises(ToolingError) as caught:
        call_outcome("t", "{}", CallResult.from_content([], is_error=True))
    assert caught.value.message == "tool 't' reported an error without text"
