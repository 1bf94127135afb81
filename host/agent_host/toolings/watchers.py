"""Shared subscriptions of one tooling: one upstream subscription per URI, fanned out to every guest.

`Watchers` sits between guest subscriptions (many, each with a sink that pushes into one guest's
inbox) and the tooling (one connection), on the bridge loop. The tooling watches a URI (or the
resource list, or the tool list) while at least one guest subscription needs it, and upstream state
always converges to what the guests hold. On each change the resource is read (or the list
re-listed) once, however many guests subscribed, and the result is pushed to every current sink.
Sinks are called on the loop and must not block (they push into an `Inbox`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import anyio
from anyio.abc import TaskGroup

from agent_host.errors import ToolingError
from agent_host.model import EventKind
from agent_host.toolings.base import Change, Tooling, WatchSet

logger = logging.getLogger(__name__)

Sink = Callable[[EventKind, object], None]

RESOURCE_LIST: Final = "resources"
TOOL_LIST: Final = "tools"


@dataclass(frozen=True)
class _Key:
    """What a subscription watches: a resource URI, or one of the two lists."""

    what: str
    uri: str = ""


class Watchers:
    """Fan-out of one tooling's change notifications.

    A subscribe that the tooling cannot honour (no server support) fails with `unavailable` and
    leaves nothing registered.
    """

    def __init__(self, tooling: Tooling, nursery: TaskGroup) -> None:
        self._tooling = tooling
        self._nursery = nursery
        self._sinks: dict[_Key, dict[str, Sink]] = {}
        self._lock = anyio.Lock()
        self._reading: set[_Key] = set()
        self._dirty: set[_Key] = set()
        tooling.set_listener(self._on_change)

    def watch_set(self) -> WatchSet:
        return WatchSet(
            uris=frozenset(k.uri for k in self._sinks if k.what == "resource"),
            resource_list=_Key(RESOURCE_LIST) in self._sinks,
            tool_list=_Key(TOOL_LIST) in self._sinks,
        )

    async def subscribe_resource(self, token: str, uri: str, sink: Sink) -> None:
        """Push each new content of `uri` to `sink`, as subscription `token`."""
        await self._add(_Key("resource", uri), token, sink)

    async def subscribe_resource_list(self, token: str, sink: Sink) -> None:
        """Push each new resource list to `sink`, as subscription `token`."""
        await self._add(_Key(RESOURCE_LIST), token, sink)

    async def subscribe_tool_list(self, token: str, sink: Sink) -> None:
        """Push each new tool list to `sink`, as subscription `token`."""
        await self._add(_Key(TOOL_LIST), token, sink)

    async def unsubscribe(self, token: str) -> None:
        """Forget `token`; release the upstream subscription when it was the last one.

        Never raises: when the upstream release fails (connection down), the desired state is
        applied again at the next reconnection.
        """
        async with self._lock:
            for key, sinks in list(self._sinks.items()):
                if sinks.pop(token, None) is not None and not sinks:
                    del self._sinks[key]
                    try:
                        await self._apply()
                    except ToolingError as exc:
                        logger.info("tooling %r: releasing a subscription upstream failed: %s", self._tooling.name, exc)

    async def _add(self, key: _Key, token: str, sink: Sink) -> None:
        async with self._lock:
            sinks = self._sinks.setdefault(key, {})
            first = not sinks
            sinks[token] = sink
            if not first:
                return
            try:
                await self._apply()
            except BaseException:
                del self._sinks[key]
                raise

    async def _apply(self) -> None:
        """Give the tooling the complete desired set (lock held; after every change that alters it)."""
        await self._tooling.set_watch(self.watch_set())

    # -- change notifications (on the loop) ----------------------------------------------------

    def _on_change(self, change: Change) -> None:
        """Re-read what `change` concerns; after `reconnected`, every watched key is re-read and
        delivered, so subscribers can resynchronise."""
        if change.kind == "reconnected":
            keys = list(self._sinks)
        elif change.kind == "resource":
            keys = [_Key("resource", change.uri)]
        else:
            keys = [_Key(change.kind)]
        for key in keys:
            if key in self._sinks:
                self._refresh(key)

    def _refresh(self, key: _Key) -> None:
        """Re-read `key` in the background. Re-reads coalesce: at most one read per key is in flight;
        changes that arrive meanwhile cause exactly one more read after it, so the last content
        delivered is never older than the last change."""
        if key in self._reading:
            self._dirty.add(key)
            return
        self._reading.add(key)
        self._nursery.start_soon(self._read_loop, key, name=f"refresh-{self._tooling.name}-{key.what}{key.uri}")

    async def _read_loop(self, key: _Key) -> None:
        """Read `key` (a list: all pages) and push the result to every current sink, again while changes
        arrived meanwhile. A read that fails is logged and delivers nothing; the next change, or a
        reconnection, delivers the then-current state."""
        try:
            while key in self._sinks:
                self._dirty.discard(key)
                try:
                    kind, payload = await self._read(key)
                except (ToolingError, TimeoutError) as exc:
                    logger.warning(
                        "tooling %r: re-reading after a change failed: %s", self._tooling.name, exc or "timeout"
                    )
                except Exception:  # boundary: a failing refresh must not take down the nursery's other tasks
                    logger.exception("tooling %r: unexpected failure re-reading after a change", self._tooling.name)
                else:
                    for sink in list(self._sinks.get(key, {}).values()):
                        sink(kind, payload)
                if key not in self._dirty:
                    return
        finally:
            self._reading.discard(key)

    async def _read(self, key: _Key) -> tuple[EventKind, object]:
        read: Callable[[], Awaitable[object]]
        if key.what == "resource":
            kind: EventKind = "resource-updated"

            async def read() -> object:
                return await self._tooling.read_resource(key.uri)
        elif key.what == RESOURCE_LIST:
            kind, read = "resource-list-updated", self._tooling.list_resources
        else:
            kind, read = "tool-list-updated", self._tooling.list_tools
        timeout = self._tooling.config.timeout
        with anyio.fail_after(timeout):
            return kind, await read()
