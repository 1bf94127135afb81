"""A model's stream in the inbox: pieces joined while the guest has not taken them, never dropped.

Text pieces join into the one undelivered piece; a tool call joins after text; what cannot join
(text after a tool call, a second tool call, a piece that would pass `max_pending_bytes`) is not
queued, and the producer is told when the guest takes the piece, so it can push again. The final
`chat-end` follows the pieces and ends the stream.
"""

from __future__ import annotations

from agent_host.model import ChatDelta, ChatResult, ToolCall, Usage
from agent_host.session.inbox import Inbox

CALL = ToolCall("t1", "add", '{"a": 1}')


def stream() -> tuple[Inbox, list[str]]:
    inbox = Inbox()
    inbox.open_call("s1")
    return inbox, []


def test_text_pieces_not_yet_taken_are_joined_into_one_envelope() -> None:
    inbox, taken = stream()
    for piece in ("Hel", "lo", ", world"):
        assert inbox.push_delta("s1", ChatDelta(piece), lambda: taken.append("taken"))
    envelope = inbox.recv(None)
    assert envelope is not None and (envelope.kind, envelope.payload) == ("chat-delta", ChatDelta("Hello, world"))
    assert inbox.recv(None) is None and taken == []


def test_a_tool_call_joins_after_text_but_text_after_it_waits_for_the_guest() -> None:
    inbox, taken = stream()
    assert inbox.push_delta("s1", ChatDelta("Let me add."), lambda: taken.append("first"))
    assert inbox.push_delta("s1", ChatDelta(None, CALL), lambda: taken.append("second"))
    assert not inbox.push_delta("s1", ChatDelta("done"), lambda: taken.append("third"))
    assert not inbox.push_delta("s1", ChatDelta(None, CALL), lambda: taken.append("fourth"))
    first = inbox.recv(None)
    assert first is not None and first.payload == ChatDelta("Let me add.", CALL)
    assert taken == ["fourth"]  # the last waiter is told once the piece is taken
    assert inbox.push_delta("s1", ChatDelta("done"), lambda: taken.append("fifth"))
    second = inbox.recv(None)
    assert second is not None and second.payload == ChatDelta("done")


def test_joining_stops_at_the_byte_bound_instead_of_growing() -> None:
    inbox = Inbox(max_pending_bytes=1000)
    inbox.open_call("s1")
    taken: list[str] = []
    assert inbox.push_delta("s1", ChatDelta("x" * 500), lambda: taken.append("a"))
    assert not inbox.push_delta("s1", ChatDelta("y" * 500), lambda: taken.append("b"))
    assert inbox.held_bytes <= 1000
    envelope = inbox.recv(None)
    assert envelope is not None and envelope.payload == ChatDelta("x" * 500) and taken == ["b"]


def test_the_end_follows_the_pieces_and_closes_the_stream() -> None:
    inbox, taken = stream()
    assert inbox.push_delta("s1", ChatDelta("Hi"), lambda: taken.append("x"))
    inbox.push_final("s1", "chat-end", ChatResult("m", "Hi", (), "stop", Usage(3, 1)))
    assert inbox.push_delta("s1", ChatDelta("late"), lambda: taken.append("y"))  # ended: ignored, nothing to wait
    kinds = [envelope.kind for envelope in iter(lambda: inbox.recv(None), None)]
    assert kinds == ["chat-delta", "chat-end"]
    assert not inbox.is_open("s1") and inbox.held_bytes == 0


def test_a_cancelled_stream_queues_nothing_more() -> None:
    inbox, taken = stream()
    assert inbox.push_delta("s1", ChatDelta("Hi"), lambda: taken.append("x"))
    assert inbox.cancel("s1")
    assert inbox.push_delta("s1", ChatDelta("more"), lambda: taken.append("y"))
    assert inbox.recv(None) is None and inbox.held_bytes == 0


def test_a_calls_cancel_does_not_touch_an_id_it_did_not_start() -> None:
    """Found attacking it: `tooling.cancel` of a stream's id freed its inbox slot while the stream
    went on upstream. A tooling's calls cancel only their own ids."""
    from agent_host.config import default_config
    from agent_host.policy.grants import AgentPolicy
    from agent_host.session.audit import AuditTrail
    from agent_host.session.calls import OpenCalls

    inbox, _ = stream()
    limits = AgentPolicy.resolve(default_config(), "a").limits
    calls = OpenCalls("a", None, inbox, limits, AuditTrail("a", None))  # type: ignore[arg-type]  # no bridge needed
    assert calls.cancel("s1") is False and calls.is_open("s1") is False
    assert inbox.is_open("s1")
