"""Cassettes: what crossed the tooling boundary in a guest's run, recorded to be replayed offline.

One JSON file keyed by agent: each tape holds the input, every tooling and inbox function the guest
called in order (`fn`, the arguments that identify the call, the `ok` value or `err` error; envelopes
are answers of `recv`/`try-recv`, so they come back at the same points) and how the run ended. The
file names the host and WIT versions; another WIT contract is refused.

Invariants: a tape holds only what the guest saw or sent, with every `${VAR}` value of the
configuration written as `${secret}`, and at most `MAX_TAPE_BYTES`; a replay answers from the tape
alone and raises `Diverged`, naming the first difference, at a call that is not next. No I/O but
`load` and `save`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_host._version import __version__
from agent_host.errors import ErrorCode, ToolingError, UsageError
from agent_host.model import Asked, CallOutcome, Envelope, Progress, ResourceData, ResourceSpec, ToolSpec

FORMAT: Final = 1
"""The cassette format this host writes and reads (`agent-host-cassette`)."""

WIT: Final = "agent-host:guest@0.2.0"
"""The WIT contract a cassette's guests were built against (the world's package and version)."""

MAX_TAPE_BYTES: Final = 64 * 1024 * 1024
"""JSON bytes one agent's tape may hold; past them the recording fails (the run goes on)."""

SECRET: Final = "${secret}"
"""What replaces a configuration value that came from the environment."""

SHOWN_CHARS: Final = 200
"""Characters of an argument or answer quoted in a divergence message."""

IGNORED_ARGUMENTS: Final[Mapping[str, int]] = {"recv": 0}
"""Functions whose arguments are recorded but not compared, by how many of them are compared: the
wait of `recv` is timing, not the guest's request (replay never waits)."""


class CassetteError(UsageError):
    """A cassette that cannot be read, written or used (exit 2)."""

    reference = "cassette-error"


class Diverged(Exception):
    """The replayed guest asked for something the cassette does not have next (not a `ToolingError`:
    the guest cannot catch it; its run ends with status `diverged`)."""

    def __init__(self, agent: str, detail: str) -> None:
        super().__init__(f"replay of agent {agent} diverged: {detail}")
        self.agent = agent
        self.detail = detail


# -- values ----------------------------------------------------------------------------------------


def _spec_out(spec: Any) -> dict[str, Any]:
    data = dataclasses.asdict(spec)
    if isinstance(data.get("capabilities"), frozenset):
        data["capabilities"] = sorted(data["capabilities"])
    return data


def _tool_in(data: dict[str, Any]) -> ToolSpec:
    caps = data.get("capabilities")
    return ToolSpec(**{**data, "capabilities": frozenset(caps) if caps is not None else None})


def error_out(exc: ToolingError) -> dict[str, Any]:
    return {"code": exc.code.value, "message": exc.message, "data": exc.data}


def error_in(data: dict[str, Any]) -> ToolingError:
    return ToolingError(ErrorCode(data["code"]), data["message"], data.get("data"))


_PAYLOADS_OUT: Final[Mapping[str, Callable[[Any], Any]]] = {
    "tool-result": dataclasses.asdict,
    "error": error_out,
    "progress": dataclasses.asdict,
    "resource-updated": dataclasses.asdict,
    "elicitation": dataclasses.asdict,
    "resource-list-updated": lambda specs: [_spec_out(s) for s in specs],
    "tool-list-updated": lambda specs: [_spec_out(s) for s in specs],
}
_PAYLOADS_IN: Final[Mapping[str, Callable[[Any], Any]]] = {
    "tool-result": lambda d: CallOutcome(**d),
    "error": error_in,
    "progress": lambda d: Progress(**d),
    "resource-updated": lambda d: ResourceData(**d),
    "elicitation": lambda d: Asked(**d),
    "resource-list-updated": lambda items: [ResourceSpec(**s) for s in items],
    "tool-list-updated": lambda items: [_tool_in(s) for s in items],
}


def _envelope_out(item: Envelope | None) -> Any:
    if item is None:
        return None
    return {"id": item.id, "kind": item.kind, "payload": _PAYLOADS_OUT[item.kind](item.payload)}


def _envelope_in(data: Any) -> Envelope | None:
    if data is None:
        return None
    return Envelope(data["id"], data["kind"], _PAYLOADS_IN[data["kind"]](data["payload"]))


def _same(value: Any) -> Any:
    return value


def _strict(kind: type) -> Callable[[Any], Any]:
    """A reader that takes a value of `kind` only (`bool` is no `int`, `"false"` no `bool`)."""

    def read(value: Any) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value

    return read


def _handle(value: Any) -> int:
    rep: int = _strict(int)(value)
    if not 0 < rep < 2**31:
        raise ValueError(f"a tooling handle is 1 to 2**31-1, got {rep}")
    return rep


_ANSWERS: Final[Mapping[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]]] = {
    # function: (to JSON, from JSON)
    "get": (_same, _handle),
    "kind": (_same, _strict(str)),
    "name": (_same, _strict(str)),
    "list-tools": (lambda specs: [_spec_out(s) for s in specs], lambda items: [_tool_in(s) for s in items]),
    "call-tool": (_same, _strict(str)),
    "is-open": (_same, _strict(bool)),
    "cancel": (_same, _strict(bool)),
    "call-tool-blocking": (dataclasses.asdict, lambda d: CallOutcome(**d)),
    "list-resources": (lambda specs: [_spec_out(s) for s in specs], lambda items: [ResourceSpec(**s) for s in items]),
    "read-resource": (dataclasses.asdict, lambda d: ResourceData(**d)),
    "subscribe-resource": (_same, _strict(str)),
    "subscribe-resource-list": (_same, _strict(str)),
    "subscribe-tool-list": (_same, _strict(str)),
    "unsubscribe-resource": (_same, _strict(bool)),
    "unsubscribe-resource-list": (_same, _strict(bool)),
    "unsubscribe-tool-list": (_same, _strict(bool)),
    "respond": (_same, lambda _: None),
    "recv": (_envelope_out, _envelope_in),
    "try-recv": (_envelope_out, _envelope_in),
}
"""How each recorded function's answer is written and read back."""

FUNCTIONS: Final = frozenset(_ANSWERS)


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def describe(fn: str, args: list[Any]) -> str:
    """A call as messages name it: `call-tool(1, "echo", "{...}")`."""
    return f"{fn}({', '.join(_shown(a) for a in args)})"


class Scrubber:
    """Replaces every configuration value that came from the environment by `SECRET` in JSON values."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # As they appear inside a JSON string (escaped), longest first; short values would match anywhere.
        self._needles = sorted(
            {json.dumps(s, ensure_ascii=False)[1:-1] for s in secrets if len(s) >= 6}, key=len, reverse=True
        )

    def __call__(self, value: Any) -> Any:
        if not self._needles:
            return value
        text = json.dumps(value, ensure_ascii=False)
        for needle in self._needles:
            text = text.replace(needle, SECRET)
        return json.loads(text)


# -- tapes -----------------------------------------------------------------------------------------


@dataclass
class Tape:
    """One agent's recording: its input, its calls in order, how its run ended."""

    input: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    size: int = 0
    overflowed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "calls": self.calls, "outcome": self.outcome}


class Recorder:
    """Appends what one guest's session did to its tape (on the guest's thread)."""

    def __init__(self, tape: Tape, scrub: Scrubber) -> None:
        self.tape = tape
        self._scrub = scrub

    def answered(self, fn: str, args: list[Any], value: Any) -> None:
        self._add({"fn": fn, "args": args, "ok": _ANSWERS[fn][0](value)})

    def failed(self, fn: str, args: list[Any], exc: ToolingError) -> None:
        self._add({"fn": fn, "args": args, "err": error_out(exc)})

    def ended(self, status: str, text: str) -> None:
        self.tape.outcome = self._scrub({"status": status, "text": text})

    def _add(self, entry: dict[str, Any]) -> None:
        if self.tape.overflowed:
            return
        kept = self._scrub(entry)
        self.tape.size += len(json.dumps(kept, ensure_ascii=False))
        if self.tape.size > MAX_TAPE_BYTES:
            self.tape.overflowed = True
            self.tape.calls.clear()
            return
        self.tape.calls.append(kept)


class Player:
    """Answers one guest's calls from its tape, in order (on the guest's thread)."""

    def __init__(self, agent: str, tape: Tape, scrub: Scrubber) -> None:
        self.agent = agent
        self.tape = tape
        self._calls = tape.calls
        self._outcome = tape.outcome
        self._scrub = scrub
        self._next = 0

    def answer(self, fn: str, args: list[Any]) -> Any:
        """The recorded answer of the next call, which must be `fn(args)`: its value, or its
        `ToolingError` raised. Raises `Diverged` when the next recorded call is another one."""
        index = self._next
        asked = self._scrub(args)
        if index >= len(self._calls):
            raise Diverged(
                self.agent, f"call {index + 1} is {describe(fn, args)}, but the cassette ends after call {index}"
            )
        entry = self._calls[index]
        compared = IGNORED_ARGUMENTS.get(fn, len(asked))
        if entry.get("fn") != fn or entry.get("args", [])[:compared] != asked[:compared]:
            recorded = describe(entry.get("fn", "?"), entry.get("args", []))
            raise Diverged(
                self.agent, f"call {index + 1} of {len(self._calls)}: recorded {recorded}, asked {describe(fn, args)}"
            )
        self._next += 1
        if "err" in entry:
            raise error_in(entry["err"])
        return _ANSWERS[fn][1](entry.get("ok"))

    def ended(self, status: str, text: str) -> str | None:
        """Why the run's end differs from the recorded one (calls left, another status or answer);
        None when it is the same."""
        left = len(self._calls) - self._next
        if left:
            entry = self._calls[self._next]
            return (
                f"the guest ended ({status}) after call {self._next} of {len(self._calls)}; "
                f"the cassette has {left} more, next {describe(entry['fn'], entry['args'])}"
            )
        recorded = self._outcome
        if recorded is not None:
            now = self._scrub({"status": status, "text": text})
            if (recorded.get("status"), recorded.get("text")) != (now["status"], now["text"]):
                return (
                    f"the run ended {now['status']} {_shown(now['text'])}; "
                    f"recorded {recorded.get('status')} {_shown(recorded.get('text'))}"
                )
        return None


# -- the file --------------------------------------------------------------------------------------


@dataclass
class Cassette:
    """A cassette file's content: one tape per agent."""

    agents: dict[str, Tape] = field(default_factory=dict)
    host: str = __version__
    wit: str = WIT

    def to_json(self) -> dict[str, Any]:
        return {
            "agent-host-cassette": FORMAT,
            "host": self.host,
            "wit": self.wit,
            "agents": {name: tape.to_json() for name, tape in sorted(self.agents.items())},
        }


def load(path: Path) -> Cassette:
    """The cassette in `path`; `CassetteError` naming what is wrong (missing, not a cassette, another
    format or WIT contract)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CassetteError(
            f"{path}: no such cassette", hint="record one first: agent-host run ... --record FILE"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CassetteError(f"{path}: not a cassette: {exc}") from None
    if not isinstance(data, dict) or "agent-host-cassette" not in data:
        raise CassetteError(f"{path}: not a cassette (no `agent-host-cassette` key)")
    if data["agent-host-cassette"] != FORMAT:
        raise CassetteError(
            f"{path}: cassette format {data['agent-host-cassette']!r}; this host reads format {FORMAT}",
            hint="record it again with this host",
        )
    if data.get("wit") != WIT:
        raise CassetteError(
            f"{path}: recorded against {data.get('wit')!r}; this host's guests are built against {WIT}",
            hint="record it again with a guest built against this host's WIT (`agent-host wit`)",
        )
    agents: dict[str, Tape] = {}
    for name, tape in (data.get("agents") or {}).items():
        if not isinstance(tape, dict) or not isinstance(tape.get("calls"), list):
            raise CassetteError(f"{path}: agents.{name}: not a tape (no `calls` list)")
        for index, call in enumerate(tape["calls"]):
            problem = _problem(call)
            if problem is not None:
                raise CassetteError(f"{path}: agents.{name}: call {index + 1}: {problem}")
        agents[name] = Tape(str(tape.get("input", "")), tape["calls"], tape.get("outcome"))
    return Cassette(agents, str(data.get("host", "?")), WIT)


def _problem(call: Any) -> str | None:
    """What makes `call` unusable on replay (read as `Player.answer` will), or None."""
    if not isinstance(call, dict) or call.get("fn") not in FUNCTIONS:
        return "not a recorded host function"
    if not isinstance(call.get("args"), list):
        return "its `args` are not a list"
    try:
        if "err" in call:
            error_in(call["err"])
        else:
            _ANSWERS[call["fn"]][1](call.get("ok"))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return f"not a {call['fn']} answer ({type(exc).__name__}: {exc})"
    return None


def save(cassette: Cassette, path: Path) -> None:
    """Write `cassette` to `path` at once (a temporary file renamed over it): a reader never sees
    half a cassette. `CassetteError` when a tape overflowed or the file cannot be written."""
    overflowed = sorted(name for name, tape in cassette.agents.items() if tape.overflowed)
    if overflowed:
        raise CassetteError(
            f"{path}: not written: the recording of agent {overflowed[0]} passed {MAX_TAPE_BYTES // 2**20} MiB",
            hint="record a shorter run",
        )
    text = json.dumps(cassette.to_json(), ensure_ascii=False, indent=1) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except OSError as exc:
        raise CassetteError(f"{path}: cannot write the cassette: {exc.strerror or exc}") from None


class Recording:
    """A cassette being recorded: one tape per agent that runs (thread-safe enough: each agent's
    tape is written by its own guest thread only)."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.cassette = Cassette()
        self.scrub = Scrubber(secrets)

    def recorder(self, agent: str, input_text: str) -> Recorder:
        tape = Tape(input=self.scrub(input_text))
        self.cassette.agents[agent] = tape
        return Recorder(tape, self.scrub)


class Playback:
    """A cassette being replayed."""

    def __init__(self, cassette: Cassette, path: Path, secrets: Iterable[str] = ()) -> None:
        self.cassette = cassette
        self.path = path
        self.scrub = Scrubber(secrets)

    def player(self, agent: str) -> Player:
        """The player of `agent`'s tape; `CassetteError` naming the recorded agents when it has none."""
        tape = self.cassette.agents.get(agent)
        if tape is None:
            recorded = ", ".join(sorted(self.cassette.agents)) or "(none)"
            raise CassetteError(f"{self.path}: no recording of agent {agent}; recorded: {recorded}")
        return Player(agent, tape, self.scrub)


Tapes = Recording | Playback
"""What a host records into or replays from."""

__all__ = [
    "Cassette",
    "CassetteError",
    "Diverged",
    "Playback",
    "Player",
    "Recorder",
    "Recording",
    "Tapes",
    "load",
    "save",
]
