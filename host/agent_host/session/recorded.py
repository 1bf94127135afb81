"""Sessions that record what a guest did into a cassette, or replay it from one (`cassette`).

`RecordingSession` is a `GuestSession` that writes the arguments and answer (value or error) of
every function `operations` marks `taped` to its agent's tape as the guest calls it, at the one
place every import passes (`GuestSession.invoke`). `ReplayingSession` answers each of them from the
tape instead, in order, never touching a tooling (no server is started, no wait is
made) and raises `cassette.Diverged` at the first call the tape does not have next. Handle drops and
log lines are not recorded: they are not answers the guest depends on (a collected handle is dropped
when the guest's garbage collector decides). `ended` compares or records how the run ended.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from agent_host.errors import ToolingError
from agent_host.model import Envelope
from agent_host.operations import GrantCheck, WitFunction
from agent_host.session import tape_values
from agent_host.session.cassette import Player, Recorder
from agent_host.session.guest_session import GuestSession, not_open
from agent_host.session.providers import not_open as provider_not_open


class RecordingSession(GuestSession):
    """A `GuestSession` whose every answer to the guest is also written to `recorder`'s tape."""

    recorder: Recorder

    def invoke(self, function: WitFunction, args: Sequence[Any]) -> Any:
        if not function.taped:
            return super().invoke(function, args)
        try:
            value = super().invoke(function, args)
        except ToolingError as exc:
            self.recorder.failed(function.key, tape_values.args_out(args), exc)
            raise
        self.recorder.answered(function.key, tape_values.args_out(args), value)
        return value

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
        self._provider_names: dict[int, str] = {}
        """The provider of each provider handle the replay gave out."""
        self._grants: Final[dict[GrantCheck, Callable[[Sequence[Any]], None]]] = {
            "tooling": lambda args: self.policy.grants.check_tooling(args[0]),
            "tool": lambda args: self.policy.grants.check_tool(self._tooling_of(args[0]), args[1]),
            "resource": lambda args: self.policy.grants.check_resource(self._tooling_of(args[0]), args[1]),
            "provider": lambda args: self.policy.providers.check_provider(args[0]),
            "model": lambda args: self.providers.check_model(self._provider_of(args[0]), args[1]),
        }

    def invoke(self, function: WitFunction, args: Sequence[Any]) -> Any:
        """The recorded answer of `function(args)`. The grant check of `function`, if any, is made once
        the call is known to be the recorded one: a call the agent's grants deny now is denied (and
        the recorded answer passed over), as it would be live."""
        if not function.taped:
            return super().invoke(function, args)
        self._loop.check_open()  # a stopped run refuses every later operation, as a live one does
        grant = self._grants[function.grant] if function.grant is not None else None
        try:
            answer = self.player.answer(function.key, tape_values.args_out(args))
        except ToolingError:
            if grant is not None:
                grant(args)
            raise
        if grant is not None:
            grant(args)
        if function.key == "get":
            self._names[answer] = args[0]
        elif function.key == "provider.get":
            self._provider_names[answer] = args[0]
        elif isinstance(answer, Envelope) and isinstance(answer.payload, ToolingError):
            self._remember(answer.payload)  # an `Err` quoting it is then the host's error, as live
        return answer

    def _tooling_of(self, rep: int) -> str:
        name = self._names.get(rep)
        if name is None:
            raise not_open(rep)
        return name

    def _provider_of(self, rep: int) -> str:
        name = self._provider_names.get(rep)
        if name is None:
            raise provider_not_open(rep)
        return name

    def drop(self, rep: int) -> None:
        self._names.pop(rep, None)
        super().drop(rep)

    def drop_provider(self, rep: int) -> None:
        self._provider_names.pop(rep, None)
        super().drop_provider(rep)

    def ended(self, status: str, text: str, tripped: str | None = None) -> str | None:
        return self.player.ended(status, text)
