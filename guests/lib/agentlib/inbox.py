"""The inbox as a loop, calls and subscriptions as objects with an `id` to match envelopes on.

`events()` yields every envelope it receives, in the inbox's order, and never drops one; it ends
when none arrives within `timeout` seconds, or once every id of `until` has had its final envelope
(yielded first). `start()` begins a call (`call-tool`) and `subscribe_resource()` and its siblings
subscribe (`subscribe-*`); each returns an object whose `id` is the id its envelopes carry and
which, used with `with`, ends what it opened on leaving the block: a `Subscription` unsubscribes
exactly once, a `Call` is cancelled if it is still open. Once their tooling handle is dropped (which
ended them), they answer `False` without asking the host: a host call on a dropped handle traps.
Failures of the host raise `ToolingError` (agentlib.errors).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from types import TracebackType
from typing import Any, Final

from wit_world.imports import inbox as _inbox
from wit_world.imports import types
from wit_world.imports.tooling import Tooling

from agentlib.errors import raising

__all__ = (
    "Call",
    "Events",
    "Subscription",
    "events",
    "is_final",
    "start",
    "subscribe_resource",
    "subscribe_resource_list",
    "subscribe_tool_list",
)

MAX_TIMEOUT_MS: Final = 2**32 - 1
"""The largest wait `inbox.recv` accepts (a WIT `u32` of milliseconds)."""


def is_final(envelope: types.Envelope) -> bool:
    """True for a call's final envelope (`tool-result` or `error`): nothing follows for its id."""
    return isinstance(envelope.event, (types.Event_ToolResult, types.Event_Error))


class Events:
    """An iterator over the inbox; see `events()`.

    After the loop, `timed_out` says whether it ended because nothing arrived in time, and
    `pending` holds the ids of `until` that have not had their final envelope.
    """

    def __init__(self, timeout: float | None, until: Until | None) -> None:
        self.timeout = timeout
        several = () if until is None else (until,) if isinstance(until, (str, Call)) else until
        self.pending: set[str] = {item if isinstance(item, str) else item.id for item in several}
        self.timed_out = False
        self._watching = until is not None
        self._ended = False

    def __iter__(self) -> Iterator[types.Envelope]:
        return self

    def __next__(self) -> types.Envelope:
        """The next envelope; `StopIteration` once `until` is done or nothing arrived within `timeout`."""
        if self._ended or (self._watching and not self.pending):
            self._ended = True
            raise StopIteration
        envelope = self._receive()
        if envelope is None:
            self._ended = self.timed_out = True
            raise StopIteration
        if is_final(envelope):
            self.pending.discard(envelope.id)
        return envelope

    def _receive(self) -> types.Envelope | None:
        if self.timeout is None:
            return _inbox.recv(None)
        if self.timeout <= 0:
            return _inbox.try_recv()
        return _inbox.recv(min(round(self.timeout * 1000), MAX_TIMEOUT_MS))


def events(timeout: float | None = None, *, until: Until | None = None) -> Events:
    """Iterate the inbox: `for envelope in events(5):` yields each envelope as it arrives.

    The loop ends when no envelope arrives within `timeout` seconds (`None`: the host's maximum
    wait, 60 s by default; `0`: only what is waiting now, without blocking), or, when `until` is
    given (a call's id or its `Call`, or several), right after the final envelope of the last of
    them. Envelopes of other ids are yielded too. A call whose final envelope was received before
    the loop started never ends it: pass only open calls.
    """
    return Events(timeout, until)


class Call:
    """A call started with `call-tool`: `id` is the id of its envelopes.

    Leaving a `with` block cancels the call if it is still open (its final envelope not received).
    """

    def __init__(self, tooling: Tooling, tool: str, id: str) -> None:
        self.tooling = tooling
        self.tool = tool
        self.id = id

    def is_open(self) -> bool:
        """True until the call's final envelope has been received or the call was cancelled."""
        return not _dropped(self.tooling) and self.tooling.is_open(self.id)

    def cancel(self) -> bool:
        """Cancel the call upstream; nothing for `id` arrives afterwards. Returns whether it was open."""
        return not _dropped(self.tooling) and self.tooling.cancel(self.id)

    @raising
    def respond(self, action: types.ElicitAction, content: dict[str, Any] | None = None) -> None:
        """Answer the call's open question (an `elicitation` event): `types.ElicitAction.ACCEPT` with
        `content` matching its requested schema, or `DECLINE` / `CANCEL` without. Raises `ToolingError`
        (`not-found`, `invalid-arguments`) as `tooling.respond` fails."""
        self.tooling.respond(self.id, action, json.dumps(content) if content is not None else None)

    def __enter__(self) -> Call:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.cancel()

    def __repr__(self) -> str:
        return f"Call({self.tool!r}, id={self.id!r})"


Until = str | Call | Iterable[str | Call]
"""What `events(until=...)` accepts: one call (its id or its `Call`) or several."""


@raising
def start(tooling: Tooling, tool: str, /, **arguments: Any) -> Call:
    """Start a call of `tool` with keyword arguments (`call-tool`); its outcome arrives in the inbox.

    Raises `ToolingError` when the host refuses the call at once (`not-found`, `invalid-arguments`,
    `denied`, `limit-exceeded`); later failures arrive as its `error` envelope.
    """
    return Call(tooling, tool, tooling.call_tool(tool, json.dumps(arguments)))


class Subscription:
    """An active subscription: `id` is the id of its envelopes, `target` what it watches.

    `close()`, or leaving a `with` block, unsubscribes once; after that no envelope for `id` arrives.
    """

    def __init__(self, tooling: Tooling, id: str, target: str, unsubscribe: Callable[[str], bool]) -> None:
        self.tooling = tooling
        self.id = id
        self.target = target
        self._unsubscribe: Callable[[str], bool] | None = unsubscribe

    @property
    def closed(self) -> bool:
        return self._unsubscribe is None

    def close(self) -> bool:
        """Unsubscribe; returns whether the subscription was active. Later calls return False."""
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        return unsubscribe is not None and not _dropped(self.tooling) and unsubscribe(self.id)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Subscription({self.target!r}, id={self.id!r}{', closed' if self.closed else ''})"


@raising
def subscribe_resource(tooling: Tooling, uri: str) -> Subscription:
    """Subscribe to the resource at `uri`: each change arrives as `resource-updated` with its content.

    Raises `ToolingError` when the host refuses (`unavailable`: the server cannot notify; `denied`,
    `limit-exceeded`, ...).
    """
    return Subscription(tooling, tooling.subscribe_resource(uri), uri, tooling.unsubscribe_resource)


@raising
def subscribe_resource_list(tooling: Tooling) -> Subscription:
    """Subscribe to the resource list: each change arrives as `resource-list-updated` (the full list).
    Raises `ToolingError` as `subscribe_resource` does."""
    return Subscription(tooling, tooling.subscribe_resource_list(), "resource list", tooling.unsubscribe_resource_list)


@raising
def subscribe_tool_list(tooling: Tooling) -> Subscription:
    """Subscribe to the tool list: each change arrives as `tool-list-updated` (the full list).
    Raises `ToolingError` as `subscribe_resource` does."""
    return Subscription(tooling, tooling.subscribe_tool_list(), "tool list", tooling.unsubscribe_tool_list)


def _dropped(tooling: Tooling) -> bool:
    """Whether `tooling`'s handle was dropped (componentize-py sets a dropped resource's `handle` to None)."""
    return getattr(tooling, "handle", 0) is None
