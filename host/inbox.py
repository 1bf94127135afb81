"""A guest's inbox: the bounded FIFO of envelopes for its open calls and subscriptions.

The guest's thread opens calls and subscriptions and receives envelopes; the bridge loop pushes
events, and a push never blocks or waits for the guest. Guarantees (stated to guests in
wit/inbox.wit): envelopes are received in the order their first event was pushed; at most
`capacity` are ever queued, by admission control, not by dropping; an undelivered progress or
subscription envelope is updated in place rather than queued again; a call's final envelope is
queued at most once; nothing is queued or delivered for an id after it was cancelled or closed.

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Literal

from host.config import DEFAULT_INBOX_SIZE, DEFAULT_MAX_OPEN_CALLS, DEFAULT_MAX_SUBSCRIPTIONS
from host.errors import ErrorCode, ToolingError
from host.model import FINAL_KINDS as FINAL_KINDS
from host.model import Asked as Asked
from host.model import Envelope as Envelope
from host.model import EventKind as EventKind
from host.model import Progress as Progress


@dataclass
class _Slot:
    """A queued event; coalescing replaces `kind`/`payload` in place, removal clears `live`."""

    id: str
    kind: EventKind
    payload: object
    live: bool = True


@dataclass
class _Call:
    progress: _Slot | None = None
    final_queued: bool = False


class Inbox:
    """One guest's inbox. Thread-safe.

    The bound holds by admission control: an open call holds at most two envelopes (its latest
    progress, then its final outcome), a subscription at most one, and `capacity >= 2 *
    max_open_calls + max_subscriptions` is checked at construction (`ValueError` otherwise).
    """

    def __init__(
        self,
        capacity: int = DEFAULT_INBOX_SIZE,
        max_open_calls: int = DEFAULT_MAX_OPEN_CALLS,
        max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS,
    ) -> None:
        if capacity < 2 * max_open_calls + max_subscriptions:
            raise ValueError(
                f"inbox capacity {capacity} cannot hold the envelopes of {max_open_calls} open calls "
                f"(2 each) and {max_subscriptions} subscriptions (1 each)"
            )
        self.capacity = capacity
        self.max_open_calls = max_open_calls
        self.max_subscriptions = max_subscriptions
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._queue: deque[_Slot] = deque()
        self._live = 0
        self.peak = 0
        """Most envelopes queued at once so far (for tests and diagnostics)."""
        self._calls: dict[str, _Call] = {}
        self._subscriptions: dict[str, _Slot | None] = {}
        self._closed = False

    # -- the guest's side ------------------------------------------------------------------------

    def open_call(self, call_id: str) -> None:
        """Open call `call_id`; it stays open until its final envelope has been received, or until it is
        cancelled. Raises `ToolingError(limit-exceeded)` once `max_open_calls` calls are open, and
        `ToolingError(unavailable)` after `close`."""
        with self._lock:
            self._check_open()
            if len(self._calls) >= self.max_open_calls:
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"{len(self._calls)} calls are already open (the limit is {self.max_open_calls}); "
                    "receive their results from the inbox or cancel some first",
                )
            self._calls[call_id] = _Call()

    def open_subscription(self, sub_id: str) -> None:
        """Open subscription `sub_id`. Raises `ToolingError(limit-exceeded)` once `max_subscriptions`
        subscriptions are open, and `ToolingError(unavailable)` after `close`."""
        with self._lock:
            self._check_open()
            if len(self._subscriptions) >= self.max_subscriptions:
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"{len(self._subscriptions)} subscriptions are already open (the limit is "
                    f"{self.max_subscriptions}); unsubscribe some first",
                )
            self._subscriptions[sub_id] = None

    def is_open(self, call_id: str) -> bool:
        """Whether call `call_id` is open: neither its final envelope received nor cancelled."""
        with self._lock:
            return call_id in self._calls

    def cancel(self, call_id: str) -> bool:
        """Forget call `call_id` and everything queued for it; returns whether it was open.

        Once it returns, nothing for `call_id` is queued or delivered: undelivered envelopes are
        removed and later pushes are ignored.
        """
        with self._lock:
            if self._calls.pop(call_id, None) is None:
                return False
            self._discard(call_id)
            return True

    def close_subscription(self, sub_id: str) -> bool:
        """Forget subscription `sub_id` and its undelivered envelope; returns whether it was open.

        Once it returns, nothing for `sub_id` is queued or delivered: later pushes are ignored.
        """
        with self._lock:
            if sub_id not in self._subscriptions:
                return False
            del self._subscriptions[sub_id]
            self._discard(sub_id)
            return True

    def open_ids(self) -> tuple[list[str], list[str]]:
        """(open call ids, open subscription ids)."""
        with self._lock:
            return list(self._calls), list(self._subscriptions)

    def recv(self, timeout: float | None) -> Envelope | None:
        """The next envelope, waiting up to `timeout` seconds (None: no wait)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                envelope = self._pop()
                if envelope is not None or self._closed or deadline is None:
                    return envelope
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._arrived.wait(remaining)

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._closed

    def close(self) -> None:
        """Refuse everything from now on and wake a waiting `recv`."""
        with self._lock:
            self._closed = True
            self._calls.clear()
            self._subscriptions.clear()
            self._queue.clear()
            self._live = 0
            self._arrived.notify_all()

    # -- the pump's side (never blocks) ----------------------------------------------------------

    def push_progress(self, call_id: str, progress: Progress) -> None:
        """Queue the progress of call `call_id`; while an earlier progress envelope of it is undelivered,
        replace its payload in place instead (the guest sees the latest state, in the original
        position). Discarded when the call is not open or its final envelope is queued (the SDK may
        run progress callbacks late)."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return
            if call.progress is not None and call.progress.live:
                if call.progress.kind == "progress":  # an undelivered question is never replaced
                    call.progress.payload = progress
                return
            call.progress = self._append(call_id, "progress", progress)

    def push_question(self, call_id: str, question: Asked) -> bool:
        """Queue the question of call `call_id` in the slot of its progress (an undelivered progress
        envelope becomes the question, in its position: a call holds at most two envelopes still).
        Returns False, queuing nothing, when the call is not open or its final envelope is queued."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return False
            if call.progress is not None and call.progress.live:
                call.progress.kind = "elicitation"
                call.progress.payload = question
                return True
            call.progress = self._append(call_id, "elicitation", question)
            return True

    def push_final(self, call_id: str, kind: Literal["tool-result", "error"], payload: object) -> None:
        """Queue the final envelope of call `call_id`, at most once; it is never replaced. Discarded when
        the call is not open or already has one."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return
            call.final_queued = True
            self._append(call_id, kind, payload)

    def push_event(self, sub_id: str, kind: EventKind, payload: object) -> None:
        """Queue an event of subscription `sub_id`; while an earlier envelope of it is undelivered,
        replace its kind and payload in place instead. Discarded when the subscription is not open."""
        with self._lock:
            if sub_id not in self._subscriptions:
                return
            pending = self._subscriptions[sub_id]
            if pending is not None and pending.live:
                pending.kind = kind
                pending.payload = payload
                return
            self._subscriptions[sub_id] = self._append(sub_id, kind, payload)

    # -- internals (lock held) -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ToolingError(ErrorCode.UNAVAILABLE, "the guest's inbox is closed (its run has ended)")

    def _append(self, item_id: str, kind: EventKind, payload: object) -> _Slot:
        slot = _Slot(item_id, kind, payload)
        self._queue.append(slot)
        self._live += 1
        self.peak = max(self.peak, self._live)
        assert self._live <= self.capacity, "inbox bound broken: admission control failed"
        self._arrived.notify()
        return slot

    def _pop(self) -> Envelope | None:
        while self._queue:
            slot = self._queue.popleft()
            if not slot.live:
                continue
            slot.live = False
            self._live -= 1
            if slot.kind in FINAL_KINDS:
                self._calls.pop(slot.id, None)
            elif slot.kind in ("progress", "elicitation"):
                call = self._calls.get(slot.id)
                if call is not None and call.progress is slot:
                    call.progress = None
            elif self._subscriptions.get(slot.id) is slot:
                self._subscriptions[slot.id] = None
            return Envelope(slot.id, slot.kind, slot.payload)
        return None

    def _discard(self, item_id: str) -> None:
        for slot in self._queue:
            if slot.id == item_id and slot.live:
                slot.live = False
                self._live -= 1
        if len(self._queue) > 2 * self._live + 64:
            self._queue = deque(e for e in self._queue if e.live)
