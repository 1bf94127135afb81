"""The inbox keeps its guarantees: FIFO, bounded by admission control, coalescing, exactly once, no
envelope after cancel/unsubscribe, and a pump side that never blocks.

These are the design's "Inbox guarantees (nothing is lost)".
"""

from __future__ import annotations

import random
import threading

import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import CallOutcome, ResourceData
from agent_host.session.inbox import Inbox, Progress

WAIT = 5.0


def drain(inbox: Inbox) -> list[tuple[str, str, object]]:
    out: list[tuple[str, str, object]] = []
    while (envelope := inbox.recv(None)) is not None:
        out.append((envelope.id, envelope.kind, envelope.payload))
    return out


def test_envelopes_are_received_in_the_order_they_were_pushed() -> None:
    inbox = Inbox()
    for name in "abc":
        inbox.open_call(name)
    inbox.push_final("b", "tool-result", 2)
    inbox.push_final("a", "tool-result", 1)
    inbox.push_final("c", "error", 3)
    assert drain(inbox) == [("b", "tool-result", 2), ("a", "tool-result", 1), ("c", "error", 3)]


def test_a_call_is_open_until_its_final_envelope_is_received() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    inbox.push_final("x", "tool-result", "done")
    assert inbox.is_open("x")
    assert inbox.recv(None) is not None
    assert not inbox.is_open("x")


def test_progress_coalesces_in_place_and_the_final_envelope_follows() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    inbox.open_call("y")
    inbox.push_progress("x", Progress(1, 4, "one"))
    inbox.push_final("y", "tool-result", "y done")
    inbox.push_progress("x", Progress(2, 4, "two"))
    inbox.push_final("x", "tool-result", "x done")
    inbox.push_progress("x", Progress(3, 4, "late"))  # the SDK may run progress callbacks late
    assert drain(inbox) == [
        ("x", "progress", Progress(2, 4, "two")),
        ("y", "tool-result", "y done"),
        ("x", "tool-result", "x done"),
    ]


def test_progress_after_delivery_is_queued_again() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    inbox.push_progress("x", Progress(1, None, None))
    assert inbox.recv(None) is not None
    inbox.push_progress("x", Progress(2, None, None))
    assert drain(inbox) == [("x", "progress", Progress(2, None, None))]


def test_a_final_envelope_is_queued_once() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    inbox.push_final("x", "tool-result", "first")
    inbox.push_final("x", "error", "second")
    assert drain(inbox) == [("x", "tool-result", "first")]


def test_cancel_removes_undelivered_envelopes_and_ignores_later_ones() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    inbox.open_call("y")
    inbox.push_progress("x", Progress(1, None, None))
    inbox.push_final("y", "tool-result", "y")
    assert inbox.cancel("x") is True
    assert inbox.cancel("x") is False
    inbox.push_final("x", "tool-result", "too late")
    assert drain(inbox) == [("y", "tool-result", "y")]
    assert not inbox.is_open("x")


def test_subscription_events_coalesce_to_the_latest_in_the_first_position() -> None:
    inbox = Inbox()
    inbox.open_subscription("s")
    inbox.open_call("c")
    inbox.push_event("s", "resource-updated", "v1")
    inbox.push_final("c", "tool-result", "c")
    for version in range(2, 1001):
        inbox.push_event("s", "resource-updated", f"v{version}")
    assert drain(inbox) == [("s", "resource-updated", "v1000"), ("c", "tool-result", "c")]
    assert inbox.peak == 2


def test_closing_a_subscription_removes_its_event_and_ignores_later_ones() -> None:
    inbox = Inbox()
    inbox.open_subscription("s")
    inbox.push_event("s", "resource-list-updated", [])
    assert inbox.close_subscription("s") is True
    assert inbox.close_subscription("s") is False
    inbox.push_event("s", "resource-list-updated", [])
    assert drain(inbox) == []


def test_admission_control_refuses_calls_and_subscriptions_beyond_the_limits() -> None:
    inbox = Inbox(capacity=10, max_open_calls=3, max_subscriptions=2)
    for index in range(3):
        inbox.open_call(f"c{index}")
    with pytest.raises(ToolingError) as refused:
        inbox.open_call("c3")
    assert refused.value.code is ErrorCode.LIMIT_EXCEEDED
    assert "3 calls are already open (the limit is 3)" in refused.value.message
    inbox.push_final("c0", "tool-result", None)
    inbox.recv(None)
    inbox.open_call("c3")
    inbox.open_subscription("s0")
    inbox.open_subscription("s1")
    with pytest.raises(ToolingError, match="the limit is 2"):
        inbox.open_subscription("s2")


def test_a_capacity_that_cannot_hold_the_limits_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot hold"):
        Inbox(capacity=8, max_open_calls=4, max_subscriptions=1)


def test_recv_waits_for_a_push_from_another_thread_and_times_out_otherwise() -> None:
    inbox = Inbox()
    inbox.open_call("x")
    assert inbox.recv(0.01) is None
    pusher = threading.Timer(0.05, inbox.push_final, ("x", "tool-result", "late"))
    pusher.start()
    envelope = inbox.recv(WAIT)
    pusher.join()
    assert envelope is not None and envelope.payload == "late"


def test_close_wakes_a_waiting_recv_and_refuses_new_work() -> None:
    inbox = Inbox()
    received: list[object] = []
    waiter = threading.Thread(target=lambda: received.append(inbox.recv(WAIT * 10)))
    waiter.start()
    inbox.close()
    waiter.join(WAIT)
    assert not waiter.is_alive() and received == [None]
    with pytest.raises(ToolingError) as refused:
        inbox.open_call("x")
    assert refused.value.code is ErrorCode.UNAVAILABLE


def test_the_bound_holds_under_concurrent_pushes_and_receives() -> None:
    """Random pushes from a pump thread against a guest that opens, receives and cancels."""
    inbox = Inbox(capacity=2 * 8 + 4, max_open_calls=8, max_subscriptions=4)
    for sub in range(4):
        inbox.open_subscription(f"s{sub}")
    stop = threading.Event()
    rng = random.Random(7)

    def pump() -> None:
        while not stop.is_set():
            target = rng.randrange(12)
            if target < 4:
                inbox.push_event(f"s{target}", "resource-updated", rng.random())
            elif rng.random() < 0.5:
                inbox.push_progress(f"c{target}", Progress(rng.random(), None, None))
            else:
                inbox.push_final(f"c{target}", "tool-result", None)

    thread = threading.Thread(target=pump)
    thread.start()
    finals = 0
    for _ in range(20000):
        calls, _ = inbox.open_ids()
        for index in range(4, 12):
            if f"c{index}" not in calls:
                try:
                    inbox.open_call(f"c{index}")
                except ToolingError:
                    pass
        if rng.random() < 0.05:
            inbox.cancel(f"c{rng.randrange(4, 12)}")
        envelope = inbox.recv(None)
        if envelope is not None and envelope.kind == "tool-result":
            finals += 1
    stop.set()
    thread.join(WAIT)
    assert inbox.peak <= inbox.capacity
    assert finals > 0


def test_bytes_held_for_a_guest_are_bounded_by_refusing_new_calls_never_by_dropping_results() -> None:
    """A guest opening many calls with large arguments and never reading its inbox cannot grow the
    host: the arguments of open calls and undelivered envelopes count against `max_pending_bytes`;
    past it `call-tool` and `subscribe-*` are `limit-exceeded`, and a result that does not fit is a
    `limit-exceeded` error for its call, never silently dropped."""
    inbox = Inbox(max_pending_bytes=2000, pending_key="max_pending_bytes in test.toml [host]")
    inbox.open_call("a", 300)
    inbox.open_call("b", 300)
    assert inbox.held_bytes == 600
    with pytest.raises(ToolingError) as refused:
        inbox.open_call("c", 500)
    assert refused.value.code is ErrorCode.LIMIT_EXCEEDED
    message = refused.value.message
    assert "600 bytes are held for this guest's open calls and undelivered envelopes" in message
    assert (
        "the 500 bytes of this call's arguments would pass the 1000 admitted within the limit of 2000 "
        "(max_pending_bytes in test.toml" in message
    )
    assert "receive envelopes from the inbox or cancel calls first" in message
    small = CallOutcome("echo", "{}", "x" * 100)
    inbox.push_final("b", "tool-result", small)
    held = inbox.held_bytes
    inbox.push_final("a", "tool-result", CallOutcome("echo", "{}", "x" * 3000))  # does not fit
    assert inbox.held_bytes <= 2000 + 1000  # at most one error envelope past the bound
    with pytest.raises(ToolingError, match="bytes are held"):
        inbox.open_call("c", 500)
    first = inbox.recv(None)
    assert first is not None and first.payload is small
    replaced = inbox.recv(None)
    assert replaced is not None and replaced.id == "a" and replaced.kind == "error"
    assert isinstance(replaced.payload, ToolingError)
    assert replaced.payload.code is ErrorCode.LIMIT_EXCEEDED
    assert "the result of this call" in replaced.payload.message and "max_pending_bytes in test.toml" in message
    assert held > 0 and inbox.held_bytes == 0  # both received, both calls forgotten
    inbox.open_call("c", 900)
    inbox.open_subscription("s")


def test_a_subscription_event_that_does_not_fit_is_a_limit_exceeded_error_for_it() -> None:
    inbox = Inbox(max_pending_bytes=1000)
    inbox.open_subscription("s")
    inbox.push_event("s", "resource-updated", ResourceData(uri="u", mime_type=None, text="x" * 5000))
    envelope = inbox.recv(None)
    assert envelope is not None and envelope.kind == "error"
    assert isinstance(envelope.payload, ToolingError) and envelope.payload.code is ErrorCode.LIMIT_EXCEEDED
    inbox.push_event("s", "resource-updated", ResourceData(uri="u", mime_type=None, text="fits"))
    later = inbox.recv(None)
    assert later is not None and later.kind == "resource-updated"


def test_coalesced_and_removed_envelopes_give_their_bytes_back() -> None:
    inbox = Inbox(max_pending_bytes=10_000)
    inbox.open_subscription("s")
    inbox.push_event("s", "resource-updated", ResourceData(uri="u", mime_type=None, text="x" * 3000))
    first = inbox.held_bytes
    inbox.push_event("s", "resource-updated", ResourceData(uri="u", mime_type=None, text="x" * 10))
    assert inbox.held_bytes < first - 2900
    inbox.open_call("c", 100)
    inbox.push_progress("c", Progress(1, 2, "m" * 500))
    inbox.push_progress("c", Progress(2, 2, None))
    assert inbox.held_bytes < first
    inbox.cancel("c")
    inbox.close_subscription("s")
    assert inbox.held_bytes == 0
