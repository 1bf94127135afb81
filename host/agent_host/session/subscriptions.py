"""A guest's subscriptions: registered with the tooling's shared `Watchers`, delivered by a sink.

`subscribe` opens the inbox side first, then registers with the tooling's `Watchers` on the loop,
blocking until the server acknowledged it (bounded by the tooling's `timeout`); on failure the
inbox side is closed again and nothing stays registered. Events are pushed into the inbox by a sink
that never blocks, list events cut to what the agent may see. `unsubscribe` closes the inbox side
first (no envelope after it returns), then releases upstream, and is audited; an unknown id, or
one of another kind, is `False`. Releases are bounded by `RELEASE_TIMEOUT`, run even after the
run ended, and their failures are logged, never raised.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

import anyio

from agent_host.errors import ToolingError
from agent_host.model import EventKind, Operation
from agent_host.session.admission import Admission
from agent_host.session.audit import AuditTrail
from agent_host.session.deadline import LoopCalls
from agent_host.session.inbox import Inbox
from agent_host.toolings import Sink, Tooling, ToolingSet, Watchers

logger = logging.getLogger(__name__)

SubscriptionKind = Literal["resource", "resource-list", "tool-list"]

RELEASE_TIMEOUT: Final = 10.0
"""Seconds allowed for releasing ended subscriptions upstream."""

SUBSCRIBE: Final[Mapping[SubscriptionKind, Operation]] = {
    "resource": Operation.SUBSCRIBE_RESOURCE,
    "resource-list": Operation.SUBSCRIBE_RESOURCE_LIST,
    "tool-list": Operation.SUBSCRIBE_TOOL_LIST,
}

UNSUBSCRIBE: Final[Mapping[SubscriptionKind, Operation]] = {
    "resource": Operation.UNSUBSCRIBE_RESOURCE,
    "resource-list": Operation.UNSUBSCRIBE_RESOURCE_LIST,
    "tool-list": Operation.UNSUBSCRIBE_TOOL_LIST,
}

_Register = Callable[[Watchers, str, str, Sink], Awaitable[None]]


async def _resource(watchers: Watchers, token: str, uri: str, sink: Sink) -> None:
    await watchers.subscribe_resource(token, uri, sink)


async def _resource_list(watchers: Watchers, token: str, uri: str, sink: Sink) -> None:
    await watchers.subscribe_resource_list(token, sink)


async def _tool_list(watchers: Watchers, token: str, uri: str, sink: Sink) -> None:
    await watchers.subscribe_tool_list(token, sink)


_REGISTER: Final[Mapping[SubscriptionKind, _Register]] = {
    "resource": _resource,
    "resource-list": _resource_list,
    "tool-list": _tool_list,
}


@dataclass(frozen=True)
class _OpenSubscription:
    rep: int
    kind: SubscriptionKind
    tooling: str
    watchers: Watchers


class Subscriptions:
    """One guest's subscriptions (see the module docstring). Used from the guest's thread."""

    def __init__(
        self,
        agent: str,
        toolings: ToolingSet,
        inbox: Inbox,
        loop: LoopCalls,
        admission: Admission,
        audit: AuditTrail,
    ) -> None:
        self._agent = agent
        self._toolings = toolings
        self._inbox = inbox
        self._loop = loop
        self._admission = admission
        self._audit = audit
        self._open: dict[str, _OpenSubscription] = {}

    def subscribe(
        self, rep: int, tooling: Tooling, kind: SubscriptionKind, uri: str = "", refusal: ToolingError | None = None
    ) -> str:
        """Subscribe through handle `rep` and return the subscription's id (`uri` for `resource`).

        Raises `ToolingError`: `denied` for a resource outside the allow-lists, then `refusal` when
        given (the caller's own reason, such as a resource nobody lists), `limit-exceeded` when
        `max_subscriptions` are open, `unavailable` when the server cannot notify such changes.
        """
        if kind == "resource":
            self._admission.policy.grants.check_resource(tooling.name, uri)
        if refusal is not None:
            raise refusal
        sub_id = str(uuid.uuid4())
        self._inbox.open_subscription(sub_id)
        sink = self._sink(tooling.name, sub_id)
        register = _REGISTER[kind]
        toolings = self._toolings

        async def subscribe() -> Watchers:
            watchers = toolings.watchers(tooling.name)
            await register(watchers, sub_id, uri, sink)
            return watchers

        try:
            watchers = self._loop.request(tooling, SUBSCRIBE[kind].value + (f" of {uri!r}" if uri else ""), subscribe)
        except ToolingError:
            self._inbox.close_subscription(sub_id)
            raise
        self._open[sub_id] = _OpenSubscription(rep, kind, tooling.name, watchers)
        return sub_id

    def _sink(self, tooling: str, sub_id: str) -> Sink:
        """Pushes a subscription's events into the inbox, with list events cut to what is granted."""
        push = self._inbox.push_event
        admission = self._admission

        def sink(kind: EventKind, payload: object) -> None:
            if kind == "tool-list-updated" and isinstance(payload, list):
                try:
                    payload = admission.visible_tools(tooling, payload)
                except ToolingError as exc:  # the lock file is broken: no tool of a pinning tooling is usable
                    logger.warning("tooling %r: tool list event emptied: %s", tooling, exc.message)
                    payload = []
            elif kind == "resource-list-updated" and isinstance(payload, list):
                payload = admission.visible_resources(tooling, payload)
            push(sub_id, kind, payload)

        return sink

    def unsubscribe(self, kind: SubscriptionKind, sub_id: str) -> bool:
        """End subscription `sub_id` of `kind`; returns whether there was one."""
        subscription = self._open.get(sub_id)
        if subscription is None or subscription.kind != kind:
            return False
        with self._audit.span(UNSUBSCRIBE[kind], subscription.tooling, sub_id):
            del self._open[sub_id]
            self._inbox.close_subscription(sub_id)
            self._release([(sub_id, subscription)])
        return True

    def end_where(self, keep: Callable[[int], bool]) -> None:
        """End the subscriptions made through a handle `keep` rejects, upstream too."""
        ended = [(sub_id, sub) for sub_id, sub in self._open.items() if not keep(sub.rep)]
        for sub_id, _ in ended:
            del self._open[sub_id]
            self._inbox.close_subscription(sub_id)
        self._release(ended)

    def _release(self, ended: list[tuple[str, _OpenSubscription]]) -> None:
        """Release ended subscriptions upstream; failures are logged, never raised."""
        if not ended or self._loop.closed:
            return

        async def release() -> None:
            async with anyio.create_task_group() as tg:
                for sub_id, subscription in ended:
                    tg.start_soon(subscription.watchers.unsubscribe, sub_id)

        try:
            self._loop.cleanup(
                "releasing subscriptions",
                release,
                timeout=RELEASE_TIMEOUT,
                hint="the server may keep them until the tooling's subscriptions next change",
            )
        except ToolingError as exc:
            logger.warning("agent %s: releasing subscriptions: %s", self._agent, exc)
