"""Sessions that record what a guest did into a cassette, or replay it from one (`cassette`).

`RecordingSession` is a `GuestSession` that writes every tooling and inbox function's arguments and
answer (value or error) to its agent's tape as the guest calls it. `ReplayingSession` answers each
of them from the tape instead, in order, never touching a tooling (no server is started, no wait is
made) and raises `cassette.Diverged` at the first call the tape does not have next. Handle drops and
log lines are not recorded: they are not answers the guest depends on (a collected handle is dropped
when the guest's garbage collector decides). `ended` compares or records how the run ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from agent_host.errors import ToolingError
from agent_host.model import CallOutcome, Envelope, ResourceData, ResourceSpec, ToolSpec
from agent_host.session.cassette import Player, Recorder
from agent_host.session.facade import GuestSession, not_open
from agent_host.session.subscriptions import SubscriptionKind

_T = TypeVar("_T")


class RecordingSession(GuestSession):
    """A `GuestSession` whose every answer to the guest is also written to `recorder`'s tape."""

    recorder: Recorder

    def _kept(self, fn: str, args: list[Any], produce: Callable[[], _T]) -> _T:
        try:
            value = produce()
        except ToolingError as exc:
            self.recorder.failed(fn, args, exc)
            raise
        self.recorder.answered(fn, args, value)
        return value

    def get(self, name: str) -> int:
        return self._kept("get", [name], lambda: super(RecordingSession, self).get(name))

    def kind(self, rep: int) -> str:
        return self._kept("kind", [rep], lambda: super(RecordingSession, self).kind(rep))

    def name(self, rep: int) -> str:
        return self._kept("name", [rep], lambda: super(RecordingSession, self).name(rep))

    def list_tools(self, rep: int, *, unpinned: bool = False) -> list[ToolSpec]:
        return self._kept("list-tools", [rep], lambda: super(RecordingSession, self).list_tools(rep, unpinned=unpinned))

    def call_tool_blocking(self, rep: int, name: str, arguments: str) -> CallOutcome:
        produce = lambda: super(RecordingSession, self).call_tool_blocking(rep, name, arguments)  # noqa: E731
        return self._kept("call-tool-blocking", [rep, name, arguments], produce)

    def list_resources(self, rep: int) -> list[ResourceSpec]:
        return self._kept("list-resources", [rep], lambda: super(RecordingSession, self).list_resources(rep))

    def read_resource(self, rep: int, uri: str) -> ResourceData:
        return self._kept("read-resource", [rep, uri], lambda: super(RecordingSession, self).read_resource(rep, uri))

    def call_tool(self, rep: int, name: str, arguments: str) -> str:
        produce = lambda: super(RecordingSession, self).call_tool(rep, name, arguments)  # noqa: E731
        return self._kept("call-tool", [rep, name, arguments], produce)

    def is_open(self, rep: int, call_id: str) -> bool:
        return self._kept("is-open", [rep, call_id], lambda: super(RecordingSession, self).is_open(rep, call_id))

    def cancel(self, rep: int, call_id: str) -> bool:
        return self._kept("cancel", [rep, call_id], lambda: super(RecordingSession, self).cancel(rep, call_id))

    def subscribe(self, rep: int, kind: SubscriptionKind, uri: str = "", refusal: ToolingError | None = None) -> str:
        produce = lambda: super(RecordingSession, self).subscribe(rep, kind, uri, refusal)  # noqa: E731
        return self._kept(f"subscribe-{kind}", _subscription_args(rep, kind, uri), produce)

    def unsubscribe(self, rep: int, kind: SubscriptionKind, sub_id: str) -> bool:
        produce = lambda: super(RecordingSession, self).unsubscribe(rep, kind, sub_id)  # noqa: E731
        return self._kept(f"unsubscribe-{kind}", [rep, sub_id], produce)

    def respond(self, rep: int, call_id: str, action: str, content: str | None) -> None:
        produce = lambda: super(RecordingSession, self).respond(rep, call_id, action, content)  # noqa: E731
        self._kept("respond", [rep, call_id, action, content], produce)

    def recv(self, timeout_ms: int | None) -> Envelope | None:
        return self._kept("recv", [timeout_ms], lambda: super(RecordingSession, self).recv(timeout_ms))

    def try_recv(self) -> Envelope | None:
        return self._kept("try-recv", [], lambda: super(RecordingSession, self).try_recv())

    def ended(self, status: str, text: str, tripped: str | None = None) -> str | None:
        self.recorder.ended(status, text, tripped)
        return None


class ReplayingSession(GuestSession):
    """A `GuestSession` whose every answer comes from `player`'s tape (see the module docstring);
    the agent's grants are checked as live (`get`, tools, resources), its limits hold as on any run."""

    player: Player

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._names: dict[int, str] = {}
        """The tooling of each handle the replay gave out (for the grants of later calls)."""

    def _played(self, fn: str, args: list[Any], grant: Callable[[], None] | None = None) -> Any:
        """The recorded answer of `fn(args)`. `grant`, the policy's check of this call, is made once
        the call is known to be the recorded one: a call the agent's grants deny now is denied (and
        the recorded answer passed over), as it would be live."""
        self._loop.check_open()  # a stopped run refuses every later operation, as a live one does
        try:
            answer = self.player.answer(fn, args)
        except ToolingError:
            if grant is not None:
                grant()
            raise
        if grant is not None:
            grant()
        return answer

    def _tooling_of(self, rep: int) -> str:
        name = self._names.get(rep)
        if name is None:
            raise not_open(rep)
        return name

    def get(self, name: str) -> int:
        rep: int = self._played("get", [name], lambda: self.policy.grants.check_tooling(name))
        self._names[rep] = name
        return rep

    def drop(self, rep: int) -> None:
        self._names.pop(rep, None)
        super().drop(rep)

    def kind(self, rep: int) -> str:
        text: str = self._played("kind", [rep])
        return text

    def name(self, rep: int) -> str:
        text: str = self._played("name", [rep])
        return text

    def list_tools(self, rep: int, *, unpinned: bool = False) -> list[ToolSpec]:
        specs: list[ToolSpec] = self._played("list-tools", [rep])
        return specs

    def call_tool_blocking(self, rep: int, name: str, arguments: str) -> CallOutcome:
        tool = lambda: self.policy.grants.check_tool(self._tooling_of(rep), name)  # noqa: E731
        outcome: CallOutcome = self._played("call-tool-blocking", [rep, name, arguments], tool)
        return outcome

    def list_resources(self, rep: int) -> list[ResourceSpec]:
        specs: list[ResourceSpec] = self._played("list-resources", [rep])
        return specs

    def read_resource(self, rep: int, uri: str) -> ResourceData:
        resource = lambda: self.policy.grants.check_resource(self._tooling_of(rep), uri)  # noqa: E731
        data: ResourceData = self._played("read-resource", [rep, uri], resource)
        return data

    def call_tool(self, rep: int, name: str, arguments: str) -> str:
        tool = lambda: self.policy.grants.check_tool(self._tooling_of(rep), name)  # noqa: E731
        call_id: str = self._played("call-tool", [rep, name, arguments], tool)
        return call_id

    def is_open(self, rep: int, call_id: str) -> bool:
        return bool(self._played("is-open", [rep, call_id]))

    def cancel(self, rep: int, call_id: str) -> bool:
        return bool(self._played("cancel", [rep, call_id]))

    def subscribe(self, rep: int, kind: SubscriptionKind, uri: str = "", refusal: ToolingError | None = None) -> str:
        resource = lambda: self.policy.grants.check_resource(self._tooling_of(rep), uri)  # noqa: E731
        sub_id: str = self._played(f"subscribe-{kind}", _subscription_args(rep, kind, uri), resource if uri else None)
        return sub_id

    def unsubscribe(self, rep: int, kind: SubscriptionKind, sub_id: str) -> bool:
        return bool(self._played(f"unsubscribe-{kind}", [rep, sub_id]))

    def respond(self, rep: int, call_id: str, action: str, content: str | None) -> None:
        self._played("respond", [rep, call_id, action, content])

    def recv(self, timeout_ms: int | None) -> Envelope | None:
        return self._delivered(self._played("recv", [timeout_ms]))

    def try_recv(self) -> Envelope | None:
        return self._delivered(self._played("try-recv", []))

    def _delivered(self, envelope: Envelope | None) -> Envelope | None:
        if envelope is not None and isinstance(envelope.payload, ToolingError):
            self._remember(envelope.payload)  # an `Err` quoting it is then the host's error, as live
        return envelope

    def ended(self, status: str, text: str, tripped: str | None = None) -> str | None:
        return self.player.ended(status, text)


def _subscription_args(rep: int, kind: SubscriptionKind, uri: str) -> list[Any]:
    return [rep, uri] if kind == "resource" else [rep]
