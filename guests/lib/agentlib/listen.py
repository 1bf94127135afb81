"""The inbox as typed events: `listen()` yields one dataclass per envelope, for `match`.

    with demo.start("sleep", seconds=2) as slow:
        for event in listen(10, until=slow):
            match event:
                case Progress(progress=done, total=total):
                    ...
                case Result(value=value):        # the structured content, else the text
                    ...
                case Failed(error=error):        # a ToolingError: error.code, error.message
                    ...

Every event has the `id` of the call, subscription or stream it belongs to. `listen` ends as
`events()` does (`agentlib.inbox`): when nothing arrives within `timeout` seconds, or once every
id of `until` had its final event (`Result`, `Failed`, `ChatEnd`), which is yielded first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from wit_world.imports import types

from agentlib.errors import ToolingError
from agentlib.inbox import Events, Until
from agentlib.models import Reply, ToolCall
from agentlib.values import Resource, ToolResult

__all__ = (
    "ChatDelta",
    "ChatEnd",
    "Event",
    "Failed",
    "Progress",
    "Question",
    "ResourceListUpdated",
    "ResourceUpdated",
    "Result",
    "ToolListUpdated",
    "listen",
    "typed",
)


@dataclass(frozen=True)
class Progress:
    """A progress report of an open call."""

    id: str
    progress: float
    total: float | None
    message: str | None


@dataclass(frozen=True)
class Result:
    """A call's result (final): `result` the whole `ToolResult`, `value` its structured content, else its text."""

    id: str
    result: ToolResult

    @property
    def value(self) -> Any:
        structured = self.result.structured
        return structured if structured is not None else self.result.text


@dataclass(frozen=True)
class Failed:
    """A call's, a subscription's or a stream's failure (final for a call or a stream)."""

    id: str
    error: ToolingError


@dataclass(frozen=True)
class ResourceUpdated:
    """A subscribed resource changed: its new content."""

    id: str
    resource: Resource


@dataclass(frozen=True)
class ResourceListUpdated:
    id: str
    resources: list[types.ResourceInfo]


@dataclass(frozen=True)
class ToolListUpdated:
    id: str
    tools: list[types.Tool]


@dataclass(frozen=True)
class Question:
    """A server's question during an open call (`elicitation = "guest"`): answer with `Call.respond`."""

    id: str
    message: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class ChatDelta:
    """A streamed answer's next piece: some text, or one whole tool call."""

    id: str
    text: str | None
    tool_call: ToolCall | None


@dataclass(frozen=True)
class ChatEnd:
    """A streamed answer's end (final): the whole `Reply`."""

    id: str
    reply: Reply


Event = (
    Progress
    | Result
    | Failed
    | ResourceUpdated
    | ResourceListUpdated
    | ToolListUpdated
    | Question
    | ChatDelta
    | ChatEnd
)


def typed(envelope: types.Envelope) -> Event:
    """The typed event of a WIT envelope."""
    event, id = envelope.event, envelope.id
    if isinstance(event, types.Event_ToolResult):
        return Result(id, ToolResult.of(event.value))
    if isinstance(event, types.Event_Error):
        return Failed(id, ToolingError(event.value))
    if isinstance(event, types.Event_Progress):
        return Progress(id, event.value.progress, event.value.total, event.value.message)
    if isinstance(event, types.Event_ResourceUpdated):
        return ResourceUpdated(id, Resource.of(event.value))
    if isinstance(event, types.Event_ResourceListUpdated):
        return ResourceListUpdated(id, list(event.value))
    if isinstance(event, types.Event_ToolListUpdated):
        return ToolListUpdated(id, list(event.value))
    if isinstance(event, types.Event_Elicitation):
        return Question(id, event.value.message, json.loads(event.value.requested_schema))
    if isinstance(event, types.Event_ChatDelta):
        call = event.value.tool_call
        return ChatDelta(id, event.value.content, ToolCall.of(call) if call is not None else None)
    if isinstance(event, types.Event_ChatEnd):
        return ChatEnd(id, Reply.of(event.value))
    raise TypeError(f"agentlib does not know the event {type(event).__name__}")


class Listening:
    """The iterator `listen()` returns; `timed_out` and `pending` as `Events` has them."""

    def __init__(self, timeout: float | None, until: Until | None) -> None:
        self._events = Events(timeout, until)
        self._chat_ends: set[str] = set()

    @property
    def timed_out(self) -> bool:
        return self._events.timed_out

    @property
    def pending(self) -> set[str]:
        return self._events.pending

    def __iter__(self) -> Iterator[Event]:
        for envelope in self._events:
            if isinstance(envelope.event, types.Event_ChatEnd):
                self._events.pending.discard(envelope.id)  # a stream's end is final too
            yield typed(envelope)


def listen(timeout: float | None = None, *, until: Until | None = None) -> Listening:
    """Iterate the inbox as typed events (see the module docstring)."""
    return Listening(timeout, until)
