"""Changes upstream, relayed to the MCP clients of both eras.

One long-lived session of agent `serve` watches the offered toolings: their tool and resource lists
and each resource some client subscribed to (one subscription upstream per URI however many clients
hold it, released when the last one leaves). A task pumps its inbox: a 2026-07-28 client gets what
its `subscriptions/listen` stream asked for (the SDK's `ListenHandler`, fed by a `SubscriptionBus`);
a 2025-11-25 client gets `notifications/resources/updated` for the URIs it subscribed to and the
list-changed notifications once it has made a request, from a task and an outbox of its own
(`_Outbox`: one that stops reading delays nobody else); its subscriptions end with its connection.
The grants apply as to every operation of agent `serve`: a resource outside them is refused
(`denied`), one that no offered tooling lists too (`not-found`); what one client holds is bounded
(`subscribe`, `listen`).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.subscriptions import event_matches
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_host.config import ServeSettings
from agent_host.errors import ErrorCode, ToolingError
from agent_host.model import Envelope
from agent_host.serve.clients import RELAY, ClientSlots, client_of_request
from agent_host.serve.limit_log import LimitLog
from agent_host.serve.proxy import CLIENT, ToolingProxy
from agent_host.session import GuestSession
from agent_host.session.audit_budget import Allowances, AuditBudget
from agent_host.toolings.mcp.sdk_hooks import connection_of

logger = logging.getLogger(__name__)

PUMP_WAIT_MS: Final = 1000
"""Longest wait of one inbox read of the pump (it ends at once when the relay stops)."""

SEND_WAIT: Final = 5.0
"""Seconds one notification to a 2025-11-25 connection may take to be sent (its client reads it);
then the connection's sender gives up until its next event (what waits stays in its outbox)."""

_TOOLS: Final = "tools"
_RESOURCES: Final = "resources"


@dataclass
class _Watched:
    """One resource watched upstream for `holders` clients."""

    rep: int
    sub_id: str
    holders: int


@dataclass
class _Outbox:
    """What waits to be sent to one 2025-11-25 connection, coalesced: `_TOOLS`, `_RESOURCES` (list
    changes) and the updated URIs, each at most once, in order of arrival (bounded by its
    subscriptions; nothing is lost, as a notification only says that something changed). Its sender
    gives up a send that takes `SEND_WAIT` seconds (logged once per interval) until the next event."""

    waiting: dict[str, None] = field(default_factory=dict)
    """Keys: `_TOOLS`, `_RESOURCES`, or `uri:URI`."""
    sending: bool = False
    """Whether a sender task runs for it."""


async def _notify(connection: Connection, key: str) -> None:
    """Send the notification `key` (see `_Outbox.waiting`) to `connection`."""
    if key == _TOOLS:
        await connection.send_tool_list_changed()
    elif key == _RESOURCES:
        await connection.send_resource_list_changed()
    else:
        await connection.send_resource_updated(key.removeprefix("uri:"))


class Relay:
    """See the module docstring. Enter `running()` on the server's loop before serving."""

    def __init__(
        self,
        proxy: ToolingProxy,
        settings: ServeSettings,
        slots: ClientSlots,
        limit_log: LimitLog,
        allowances: Allowances | None = None,
    ) -> None:
        """`allowances`: the clients' audit allowances, charged with the audit lines of what the relay
        does for each (subscribing upstream for it); the relay's own lines have an allowance of their
        own, as large and refilled alike."""
        self._proxy = proxy
        keys = f"audit_client_max, audit_client_rate in {settings.origin}"
        self._allowances = allowances or Allowances(
            settings.audit_client_max, settings.audit_client_rate, agent=CLIENT, keys=keys
        )
        self._settings = settings
        self._slots = slots
        self._limit_log = limit_log
        self.bus = InMemorySubscriptionBus()
        self._listens: set[ListenHandler] = set()
        """One handler per open `subscriptions/listen` stream (so that one can be ended alone)."""
        self._session: GuestSession | None = None
        self._one = anyio.CapacityLimiter(1)
        """The session's operations: one at a time, in a worker thread."""
        self._lock = anyio.Lock()
        self._reps: dict[str, int] = {}
        self._watched: dict[str, _Watched] = {}
        self._uris: dict[str, str] = {}
        """Subscription id → the URI it watches."""
        self._tool_lists: dict[str, str] = {}
        """Subscription id → the tooling whose tool list it watches."""
        self._legacy: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._legacy_uris: dict[str, weakref.WeakSet[Connection]] = {}
        """URI → the 2025-11-25 connections subscribed to it (no entry without one)."""
        self._held: weakref.WeakKeyDictionary[Connection, set[str]] = weakref.WeakKeyDictionary()
        """2025-11-25 connection → the URIs it is subscribed to (or subscribing to)."""
        self._client_of: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()
        """2025-11-25 connection → the client it serves (its subscriptions' audit lines are charged to it)."""
        self._outboxes: weakref.WeakKeyDictionary[Connection, _Outbox] = weakref.WeakKeyDictionary()
        self._senders: anyio.abc.TaskGroup | None = None
        """The task group of `running()`, where each connection's sender runs."""

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Watch the toolings and relay their changes for the block; at its end every subscription
        upstream is released."""
        session = self._session = self._proxy.session(self._allowances.of(RELAY))
        ended: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                self._senders = tg
                tg.start_soon(self._watch_lists)
                tg.start_soon(self._pump, session)
                try:
                    yield
                except BaseException as exc:  # re-raised below, outside the task group: not wrapped in a group
                    ended = exc
                finally:
                    self._senders = None
                    for handler in list(self._listens):
                        handler.close()
                    session.interrupt("the server is stopping")
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(session.close, limiter=self._one)
        if ended is not None:
            raise ended

    # -- upstream ----------------------------------------------------------------------------------

    def _rep(self, session: GuestSession, tooling: str) -> int:
        if tooling not in self._reps:
            self._reps[tooling] = session.get(tooling)
        return self._reps[tooling]

    async def _watch_lists(self) -> None:
        await anyio.to_thread.run_sync(self._subscribe_lists, limiter=self._one)

    def _subscribe_lists(self) -> None:
        session = self._session
        assert session is not None, "running() set it"
        for tooling in self._proxy.toolings:
            try:
                rep = self._rep(session, tooling)
                self._tool_lists[session.subscribe(rep, "tool-list")] = tooling
                self._proxy.watching(tooling)
                session.subscribe(rep, "resource-list")
            except ToolingError as exc:
                if exc.code is ErrorCode.CANCELLED:  # the server is stopping
                    return
                logger.warning("changes of tooling %s are not relayed: %s", tooling, exc)

    async def acquire(self, uri: str, client: str = RELAY) -> None:
        """Watch resource `uri` upstream for one more client (`client`: the audit lines of subscribing
        are charged to its allowance). Raises `ToolingError` (`denied`, `not-found`, `unavailable`
        when the server cannot notify, `limit-exceeded`)."""
        async with self._lock:
            watched = self._watched.get(uri)
            if watched is not None:
                watched.holders += 1
                return
            budget = self._allowances.of(client)
            rep, sub_id = await anyio.to_thread.run_sync(self._subscribe, uri, budget, limiter=self._one)
            self._watched[uri] = _Watched(rep, sub_id, 1)
            self._uris[sub_id] = uri

    def _subscribe(self, uri: str, budget: AuditBudget) -> tuple[int, str]:
        session = self._session
        assert session is not None, "running() set it"
        with session.charged_to(budget):
            tooling, refusal = self._proxy.subscribable(session, uri)
            rep = self._rep(session, tooling)
            return rep, session.subscribe(rep, "resource", uri, refusal)

    async def release(self, uri: str, client: str = RELAY) -> None:
        """One client less watches resource `uri`; the last one ends the subscription upstream (its
        audit line charged to `client`'s allowance)."""
        async with self._lock:
            watched = self._watched.get(uri)
            if watched is None:
                return
            watched.holders -= 1
            if watched.holders > 0:
                return
            del self._watched[uri]
            self._uris.pop(watched.sub_id, None)
            session = self._session
            assert session is not None, "running() set it"
            budget = self._allowances.of(client)

            def unsubscribe() -> None:
                with session.charged_to(budget):
                    session.unsubscribe(watched.rep, "resource", watched.sub_id)

            await anyio.to_thread.run_sync(unsubscribe, limiter=self._one)

    # -- downstream --------------------------------------------------------------------------------

    async def _pump(self, session: GuestSession) -> None:
        while not session.inbox.closed:
            envelope = await anyio.to_thread.run_sync(session.recv, PUMP_WAIT_MS, abandon_on_cancel=True)
            if envelope is not None:
                await self._deliver(envelope)

    async def _deliver(self, envelope: Envelope) -> None:
        event: ServerEvent
        if envelope.kind == "tool-list-updated":
            self._proxy.changed(self._tool_lists.get(envelope.id, ""))
            event = ToolsListChanged()
        elif envelope.kind == "resource-list-updated":
            event = ResourcesListChanged()
        elif envelope.kind == "resource-updated" and envelope.id in self._uris:
            event = ResourceUpdated(uri=self._uris[envelope.id])
        else:
            return
        await self.bus.publish(event)
        if isinstance(event, ToolsListChanged):
            key = _TOOLS
        elif isinstance(event, ResourcesListChanged):
            key = _RESOURCES
        else:
            key = f"uri:{event.uri}"
        for connection in self._recipients(event):
            outbox = self._outboxes.setdefault(connection, _Outbox())
            outbox.waiting[key] = None
            if not outbox.sending and self._senders is not None:
                outbox.sending = True
                self._senders.start_soon(self._send, weakref.ref(connection), outbox)

    async def _send(self, connection_ref: weakref.ref[Connection], outbox: _Outbox) -> None:
        """Send what waits in `outbox` to its connection, oldest first, until none waits, the
        connection is gone, or a send does not end within `SEND_WAIT` seconds (it stays waiting)."""
        try:
            while outbox.waiting:
                key = next(iter(outbox.waiting))
                connection = connection_ref()
                if connection is None:
                    return
                with anyio.move_on_after(SEND_WAIT) as scope:
                    try:
                        await _notify(connection, key)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
                        outbox.waiting.clear()  # the connection ended: nobody to tell
                        return
                del connection
                if scope.cancelled_caught:
                    self._limit_log.reached(
                        "send_wait",
                        f"a 2025-11-25 MCP session did not read a notification within {SEND_WAIT:g} s (SEND_WAIT); "
                        "its notifications wait, coalesced, until its next event",
                    )
                    return
                outbox.waiting.pop(key, None)
        finally:
            outbox.sending = False

    def _recipients(self, event: ServerEvent) -> Sequence[Connection]:
        if isinstance(event, ResourceUpdated):
            return list(self._legacy_uris.get(event.uri, ()))
        return list(self._legacy)

    # -- the clients' side ---------------------------------------------------------------------------

    def seen(self, ctx: ServerRequestContext[Any]) -> None:
        """A request came: a 2025-11-25 client's connection gets list changes from now on."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._legacy.add(connection_of(ctx))

    async def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        """`resources/subscribe` (2025-11-25): relay updates of `uri` to this client's connection
        until it unsubscribes or goes away. Raises `ToolingError` (`limit-exceeded` beyond `[serve]
        max_subscriptions_per_session` URIs per connection, logged once per interval)."""
        connection = connection_of(ctx)
        client = self._client_of.setdefault(connection, client_of_request(ctx.request))
        held = self._held.setdefault(connection, set())
        if uri in held:
            return
        if len(held) >= self._settings.max_subscriptions_per_session:
            raise self._beyond(self._too_many(len(held), "this MCP session holds", "unsubscribe from one first"))
        held.add(uri)  # before the wait upstream: a concurrent request of this connection counts it
        try:
            await self.acquire(uri, client)
        except BaseException:
            held.discard(uri)
            raise
        self._legacy_uris.setdefault(uri, weakref.WeakSet()).add(connection)
        connection.exit_stack.push_async_callback(self.unsubscribe_connection, connection, uri)

    async def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        """`resources/unsubscribe` (2025-11-25)."""
        await self.unsubscribe_connection(connection_of(ctx), uri)

    async def unsubscribe_connection(self, connection: Connection, uri: str) -> None:
        """`connection` no longer watches `uri` (it unsubscribed, or went away): the audit line of ending
        the subscription upstream is charged to the client it subscribed for."""
        client = self._client_of.get(connection, RELAY)
        holders = self._legacy_uris.get(uri)
        if holders is None or connection not in holders:
            return
        holders.discard(connection)
        if not holders:
            del self._legacy_uris[uri]
        self._held.get(connection, set()).discard(uri)
        outbox = self._outboxes.get(connection)
        if outbox is not None:
            outbox.waiting.pop(f"uri:{uri}", None)
        await self.release(uri, client)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """`subscriptions/listen` (2026-07-28): the resources it names (at most `[serve]
        max_subscriptions_per_session`) are watched while it lasts, in one of its client's
        `max_sessions_per_client` slots (`clients.ClientSlots`; `max_sessions` streams in all);
        ended gracefully after `listen_idle` seconds without an event for it.
        Raises `ToolingError` for a resource that cannot be watched or a bound reached (`limit-exceeded`,
        logged once per interval); nothing is then held."""
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if len(uris) > self._settings.max_subscriptions_per_session:
            raise self._beyond(self._too_many(len(uris), "this subscriptions/listen stream names", "listen to fewer"))
        client = client_of_request(ctx.request)
        slot = object()
        self._take_slot(client, slot)
        held: list[str] = []
        handler = ListenHandler(self.bus, max_subscriptions=1)
        self._listens.add(handler)
        try:
            for uri in uris:
                await self.acquire(uri, client)
                held.append(uri)
            return await self._listened(ctx, params, handler)
        finally:
            self._listens.discard(handler)
            self._slots.release(client, slot)
            with anyio.CancelScope(shield=True):
                for uri in held:
                    await self.release(uri, client)

    async def _listened(
        self, ctx: ServerRequestContext[Any], params: SubscriptionsListenRequestParams, handler: ListenHandler
    ) -> SubscriptionsListenResult:
        """Serve one listen stream with `handler`, ended gracefully once no event it asked for came
        for `[serve] listen_idle` seconds."""
        wanted = params.notifications
        uris = frozenset(wanted.resource_subscriptions or ())
        idle = self._settings.listen_idle
        watch = anyio.CancelScope(deadline=anyio.current_time() + idle)

        def seen(event: ServerEvent) -> None:
            if event_matches(wanted, uris, event):
                watch.deadline = anyio.current_time() + idle

        async def expire() -> None:
            with watch:
                await anyio.sleep_forever()
            logger.info("a subscriptions/listen stream carried no event for %g s ([serve] listen_idle): ended", idle)
            handler.close()

        unsubscribe = self.bus.subscribe(seen)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(expire)
                result = await handler(ctx, params)
                tg.cancel_scope.cancel()
        finally:
            unsubscribe()
        return result

    def _take_slot(self, client: str, slot: object) -> None:
        settings = self._settings
        streams = self._slots.count("listen")
        if streams >= settings.max_sessions:
            raise self._beyond(
                ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"{streams} subscriptions/listen streams are open ([serve] max_sessions = "
                    f"{settings.max_sessions}); try again later",
                ),
                "max_sessions",
            )
        if not self._slots.take(client, slot, "listen"):
            raise self._beyond(
                ToolingError(
                    ErrorCode.LIMIT_EXCEEDED,
                    f"client {client} holds {self._slots.held(client)} MCP sessions and listen streams ([serve] "
                    f"max_sessions_per_client = {settings.max_sessions_per_client}); close one first",
                ),
                "max_sessions_per_client",
            )

    def _too_many(self, count: int, what: str, hint: str) -> ToolingError:
        cap = self._settings.max_subscriptions_per_session
        return ToolingError(
            ErrorCode.LIMIT_EXCEEDED,
            f"{what} {count} resource subscriptions ([serve] max_subscriptions_per_session = {cap}); {hint}",
        )

    def _beyond(self, error: ToolingError, bound: str = "max_subscriptions_per_session") -> ToolingError:
        """`error`, logged once per interval for `bound`."""
        self._limit_log.reached(bound, f"refused a client: {error}")
        return error
