"""A guest's inbox: the bounded FIFO of envelopes for its open calls and subscriptions.

The guest's thread opens calls and subscriptions and receives envelopes; the bridge loop pushes
events, and a push never blocks or waits for the guest. Guarantees (stated to guests in
wit/inbox.wit): envelopes are received in the order their first event was pushed; at most
`capacity` are ever queued, by admission control, not by dropping; an undelivered progress or
subscription envelope is updated in place rather than queued again; a call's final envelope is
queued at most once; nothing is queued or delivered for an id after it was cancelled or closed.
Bytes held are bounded too (`max_pending_bytes`, see `Inbox`): by admission, and a result or
event that would pass the bound is replaced by a `limit-exceeded` error for its id, never dropped.

This module imports neither wasmtime nor mcp.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from agent_host.config import (
    DEFAULT_INBOX_SIZE,
    DEFAULT_MAX_OPEN_CALLS,
    DEFAULT_MAX_PENDING_BYTES,
    DEFAULT_MAX_SUBSCRIPTIONS,
)
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import FINAL_KINDS as FINAL_KINDS
from agent_host.model import Asked as Asked
from agent_host.model import CallOutcome, ChatDelta, ChatResult, ResourceData
from agent_host.model import Envelope as Envelope
from agent_host.model import EventKind as EventKind
from agent_host.model import Progress as Progress

ADMISSION_SHARE: Final = 0.5
"""Share of `max_pending_bytes` within which new calls and subscriptions are admitted; the rest is
room for the results of calls already open."""

ENVELOPE_BYTES: Final = 64
"""Bytes counted for an envelope besides its text (its id and kind)."""


def payload_size(payload: object) -> int:
    """Bytes counted for an envelope's payload: the length of the text it holds, plus `ENVELOPE_BYTES`."""
    if isinstance(payload, CallOutcome):
        size = len(payload.value) + len(payload.name)  # its arguments are counted with the open call
    elif isinstance(payload, ToolingError):
        size = len(payload.message) + len(payload.data or "")
    elif isinstance(payload, ResourceData):
        size = payload.size + len(payload.uri)
    elif isinstance(payload, Progress):
        size = len(payload.message or "")
    elif isinstance(payload, ChatDelta):
        call = payload.tool_call
        size = len(payload.content or "") + (len(call.arguments) + len(call.name) + len(call.id) if call else 0)
    elif isinstance(payload, ChatResult):
        size = len(payload.content or "") + sum(len(c.arguments) + len(c.name) + len(c.id) for c in payload.tool_calls)
    elif isinstance(payload, list):
        size = sum(len(repr(item)) for item in payload)
    else:  # a question (`Asked`), or nothing
        size = len(repr(payload)) if payload is not None else 0
    return size + ENVELOPE_BYTES


@dataclass
class _Slot:
    """A queued event; coalescing replaces `kind`/`payload` in place, removal clears `live`."""

    id: str
    kind: EventKind
    payload: object
    size: int
    live: bool = True
    parts: list[str] | None = None
    """A stream's text pieces joined to its undelivered piece, kept apart until it is taken (joining
    each into one string would copy the text at every piece: quadratic in a long stream)."""


@dataclass
class _Call:
    reserved: int = 0
    """Bytes of its arguments, held until the call is forgotten."""
    progress: _Slot | None = None
    final_queued: bool = False
    on_taken: Callable[[], object] | None = None
    """Called (under the lock: it must not block) when the guest takes the call's piece (`push_delta`)."""


class Inbox:
    """One guest's inbox. Thread-safe.

    The bound holds by admission control: an open call holds at most two envelopes (its latest
    progress, then its final outcome), a subscription at most one, and `capacity >= 2 *
    max_open_calls + max_subscriptions` is checked at construction (`ValueError` otherwise).

    Bytes held for the guest (`held_bytes`: the arguments of its open calls, as given to `open_call`,
    and the text of its undelivered envelopes, see `payload_size`) never pass `max_pending_bytes`
    by more than one error envelope per id: a call or subscription is refused while they would pass
    `ADMISSION_SHARE` of it (leaving room for results), and a final result or subscription event
    that would pass it is queued as a `limit-exceeded` error for its id instead (the guest learns
    what was not kept). `pending_key` names the bound.
    """

    def __init__(
        self,
        capacity: int = DEFAULT_INBOX_SIZE,
        max_open_calls: int = DEFAULT_MAX_OPEN_CALLS,
        max_subscriptions: int = DEFAULT_MAX_SUBSCRIPTIONS,
        max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES,
        pending_key: str = "[host] max_pending_bytes",
    ) -> None:
        if capacity < 2 * max_open_calls + max_subscriptions:
            raise ValueError(
                f"inbox capacity {capacity} cannot hold the envelopes of {max_open_calls} open calls "
                f"(2 each) and {max_subscriptions} subscriptions (1 each)"
            )
        self.capacity = capacity
        self.max_open_calls = max_open_calls
        self.max_subscriptions = max_subscriptions
        self.max_pending_bytes = max_pending_bytes
        self._pending_key = pending_key
        self.held_bytes = 0
        """Bytes held for the guest now (see the class docstring)."""
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

    def open_call(self, call_id: str, size: int = 0) -> None:
        """Open call `call_id`, holding `size` bytes (its arguments) until it is forgotten; it stays
        open until its final envelope has been received, or until it is cancelled. Raises
        `ToolingError(limit-exceeded)` once `max_open_calls` calls are open or when `size` more bytes
        would pass `max_pending_bytes`, and `ToolingError(unavailable)` after `close`."""
        with self._lock:
            self._check_open()
            if len(self._calls) >= self.max_open_calls:
                raise ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"{len(self._calls)} calls are already open (the limit is {self.max_open_calls}); "
                    "receive their results from the inbox or cancel some first",
                )
            self._check_bytes(size, f"the {size} bytes of this call's arguments")
            self._calls[call_id] = _Call(reserved=size)
            self.held_bytes += size

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
            self._check_bytes(ENVELOPE_BYTES, "a subscription's event")
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
            call = self._calls.pop(call_id, None)
            if call is None:
                return False
            self.held_bytes -= call.reserved
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
            self.held_bytes = 0
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
                    self._replace(call.progress, "progress", progress)
                return
            call.progress = self._append(call_id, "progress", progress)

    def push_delta(self, call_id: str, delta: ChatDelta, on_taken: Callable[[], object]) -> bool:
        """Queue a piece of stream `call_id` (an open call), joined to its undelivered piece when they
        join in order (text to text; a tool call after text): a stream holds at most one undelivered
        piece. Returns False, queuing nothing, when they do not join (or joined, they would pass
        `max_pending_bytes`): the caller waits for
        `on_taken()` (called under the lock when the guest takes the piece) and pushes again. True
        when queued, or when the stream is no longer open (nothing to wait for)."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return True
            pending = call.progress
            if pending is None or not pending.live:
                call.on_taken = None
                call.progress = self._append(call_id, "chat-delta", delta)
                return True
            assert isinstance(pending.payload, ChatDelta), "a stream's piece slot holds pieces only"
            if not _joins(pending.payload, delta) or self.held_bytes + payload_size(delta) > self.max_pending_bytes:
                call.on_taken = on_taken  # the stream waits for the guest: nothing is dropped, nothing grows
                return False
            if delta.content:
                if pending.parts is None:
                    pending.parts = [pending.payload.content or ""]
                pending.parts.append(delta.content)
            if delta.tool_call is not None:
                pending.payload = ChatDelta(pending.payload.content, delta.tool_call)
            grown = payload_size(delta) - ENVELOPE_BYTES
            pending.size += grown
            self.held_bytes += grown
            return True

    def push_question(self, call_id: str, question: Asked) -> bool:
        """Queue the question of call `call_id` in the slot of its progress (an undelivered progress
        envelope becomes the question, in its position: a call holds at most two envelopes still).
        Returns False, queuing nothing, when the call is not open or its final envelope is queued."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return False
            if call.progress is not None and call.progress.live:
                self._replace(call.progress, "elicitation", question)
                return True
            call.progress = self._append(call_id, "elicitation", question)
            return True

    def push_final(self, call_id: str, kind: Literal["tool-result", "error", "chat-end"], payload: object) -> None:
        """Queue the final envelope of call `call_id`, at most once; it is never replaced. Discarded when
        the call is not open or already has one."""
        with self._lock:
            call = self._calls.get(call_id)
            if call is None or call.final_queued:
                return
            call.final_queued = True
            fitted, payload = self._fitting(kind, payload, "the result of this call")
            self._append(call_id, fitted, payload)

    def push_event(self, sub_id: str, kind: EventKind, payload: object) -> None:
        """Queue an event of subscription `sub_id`; while an earlier envelope of it is undelivered,
        replace its kind and payload in place instead. Discarded when the subscription is not open."""
        with self._lock:
            if sub_id not in self._subscriptions:
                return
            pending = self._subscriptions[sub_id]
            held = pending.size if pending is not None and pending.live else 0
            kind, payload = self._fitting(kind, payload, "this subscription's event", held)
            if pending is not None and pending.live:
                self._replace(pending, kind, payload)
                return
            self._subscriptions[sub_id] = self._append(sub_id, kind, payload)

    # -- internals (lock held) -------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ToolingError(ErrorCode.UNAVAILABLE, "the guest's inbox is closed (its run has ended)")

    def _check_bytes(self, size: int, what: str) -> None:
        admitted = int(self.max_pending_bytes * ADMISSION_SHARE)
        if self.held_bytes + size > admitted:
            raise ToolingError(
                ErrorCode.LIMIT_EXCEEDED,
                f"{self.held_bytes} bytes are held for this guest's open calls and undelivered envelopes; {what} "
                f"would pass the {admitted} admitted within the limit of {self.max_pending_bytes} "
                f"({self._pending_key}; half is kept for results): receive envelopes from the inbox or cancel calls "
                "first",
            )

    def _fitting(self, kind: EventKind, payload: object, what: str, replaced: int = 0) -> tuple[EventKind, object]:
        """(kind, payload), or a `limit-exceeded` error in their place when queuing them (instead of
        `replaced` bytes already queued for the same id) would pass `max_pending_bytes`."""
        size = payload_size(payload)
        if self.held_bytes - replaced + size <= self.max_pending_bytes:
            return kind, payload
        return "error", ToolingError(
            ErrorCode.LIMIT_EXCEEDED,
            f"{what} ({size} bytes) was not kept: {self.held_bytes} bytes are already held for this guest's "
            f"open calls and undelivered envelopes, and the limit is {self.max_pending_bytes} ({self._pending_key}); "
            "receive envelopes from the inbox sooner or open fewer calls at once",
        )

    def _replace(self, slot: _Slot, kind: EventKind, payload: object) -> None:
        size = payload_size(payload)
        self.held_bytes += size - slot.size
        slot.kind, slot.payload, slot.size = kind, payload, size

    def _append(self, item_id: str, kind: EventKind, payload: object) -> _Slot:
        slot = _Slot(item_id, kind, payload, payload_size(payload))
        self._queue.append(slot)
        self.held_bytes += slot.size
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
            self.held_bytes -= slot.size
            if slot.parts is not None:
                assert isinstance(slot.payload, ChatDelta), "only a stream's piece holds parts"
                slot.payload = ChatDelta("".join(slot.parts), slot.payload.tool_call)
                slot.parts = None
            if slot.kind in FINAL_KINDS:
                call = self._calls.pop(slot.id, None)
                if call is not None:
                    self.held_bytes -= call.reserved
            elif slot.kind in ("progress", "elicitation", "chat-delta"):
                call = self._calls.get(slot.id)
                if call is not None and call.progress is slot:
                    call.progress = None
                    if call.on_taken is not None:
                        taken, call.on_taken = call.on_taken, None
                        taken()
            elif self._subscriptions.get(slot.id) is slot:
                self._subscriptions[slot.id] = None
            return Envelope(slot.id, slot.kind, slot.payload)
        return None

    def _discard(self, item_id: str) -> None:
        for slot in self._queue:
            if slot.id == item_id and slot.live:
                slot.live = False
                self._live -= 1
                self.held_bytes -= slot.size
        if len(self._queue) > 2 * self._live + 64:
            self._queue = deque(e for e in self._queue if e.live)


def _joins(first: ChatDelta, then: ChatDelta) -> bool:
    """Whether one piece can hold `first` then `then`, in order: text to text, a tool call after text
    (not text after a tool call, nor two tool calls)."""
    if first.tool_call is not None:
        return False
    return then.tool_call is None or not then.content
