"""Cassettes: what crossed the tooling boundary in a guest's run, recorded to be replayed offline.

One JSON file keyed by agent: each tape holds the input, every tooling and inbox function the guest
called in order (`fn`, the arguments that identify the call, the `ok` value or `err` error; envelopes
are answers of `recv`/`try-recv`, so they come back at the same points) and how the run ended. The
file names the host and WIT versions; another WIT contract is refused.

Invariants: a tape holds only what the guest saw or sent, with every `${VAR}` value of the
configuration written as `${secret}`, and at most `MAX_TAPE_BYTES`; a replay answers from the tape
alone and raises `Diverged`, naming the first difference, at a call that is not next. No I/O but
`load` (a regular file of at most `MAX_CASSETTE_BYTES`, nothing else read) and `save` (mode 0600).
"""

from __future__ import annotations

import functools
import json
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_host._version import __version__
from agent_host.errors import CassetteError, ReplayDiverged, ToolingError
from agent_host.operations import PACKAGE, VERSION, VERSIONS
from agent_host.session import tape_values

FORMAT: Final = 1
"""The cassette format this host writes and reads (`agent-host-cassette`)."""

WIT: Final = f"{PACKAGE}@{VERSION}"
"""The WIT contract this host writes in a cassette (the world's package and version)."""

READ_WITS: Final = frozenset(f"{PACKAGE}@{version}" for version in VERSIONS)
"""The contracts of cassettes this host replays: every package version it links (a later one only
adds functions, so an earlier recording's calls are all answered the same way)."""

MAX_TAPE_BYTES: Final = 64 * 1024 * 1024
"""JSON bytes one agent's tape may hold; past them the recording fails (the run goes on)."""

MAX_CASSETTE_BYTES: Final = 64 * 1024 * 1024
"""Bytes of a cassette file: a larger one is refused unread, and a recording that would pass them is
not written (so a replay never holds more)."""

READ_BYTES: Final = 1024 * 1024
"""Bytes of a cassette file read at a time (a file may grow while it is read: the bound is counted)."""

FILE_MODE: Final = 0o600
"""Permissions of a cassette file, which holds every argument and answer: its user's alone, as the
audit log with arguments (an existing file's are narrowed to them, never widened)."""

_NOT_FILES: Final[Mapping[int, str]] = {
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
"""What a path that is not a regular file names, by its file type (`stat.S_IFMT`), as messages say it."""

SECRET: Final = "${secret}"
"""What replaces a configuration value that came from the environment."""

MIN_SECRET_CHARS: Final = 6
"""Environment values shorter than this are written as they are (replaced, they would match anywhere)."""

SHOWN_CHARS: Final = 200
"""Characters of an argument or answer quoted in a divergence message."""


class Diverged(Exception):
    """The replayed guest asked for something the cassette does not have next (not a `ToolingError`:
    the guest cannot catch it; its run ends with status `diverged`)."""

    def __init__(self, agent: str, detail: str) -> None:
        super().__init__(f"replay of agent {agent} diverged: {detail}")
        self.agent = agent
        self.detail = detail


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _shown(value: Any) -> str:
    text = _json(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def describe(fn: str, args: list[Any]) -> str:
    """A call as messages name it: `call-tool(1, "echo", "{...}")`."""
    return f"{fn}({', '.join(_shown(a) for a in args)})"


def _apart(recorded: str, asked: str) -> tuple[str, str]:
    """Both texts, cut to `SHOWN_CHARS` around their first difference (so that it shows)."""
    if len(recorded) <= SHOWN_CHARS and len(asked) <= SHOWN_CHARS:
        return recorded, asked
    first = next((i for i, (a, b) in enumerate(zip(recorded, asked, strict=False)) if a != b), None)
    first = min(len(recorded), len(asked)) if first is None else first
    start = max(0, first - SHOWN_CHARS // 4)

    def window(text: str) -> str:
        cut = text[start : start + SHOWN_CHARS]
        return ("…" if start else "") + cut + ("…" if start + SHOWN_CHARS < len(text) else "")

    return window(recorded), window(asked)


def _escapes(value: str, depth: int = 3) -> set[str]:
    """`value` as it reads inside JSON text, inside JSON text in JSON text, ... (`depth` levels), with
    and without non-ASCII escaped: tool arguments and results are JSON text inside the cassette's."""
    found, level = {value}, {value}
    for _ in range(depth):
        level = {json.dumps(v, ensure_ascii=ascii)[1:-1] for v in level for ascii in (True, False)}
        found |= level
    return found


class Scrubber:
    """Replaces every configuration value that came from the environment by `SECRET`, in every string
    of a JSON value (never in keys), whether it stands as itself or escaped inside JSON text."""

    def __init__(self, secrets: Iterable[str]) -> None:
        kept = {s for s in secrets if len(s) >= MIN_SECRET_CHARS}
        self.short = sorted(s for s in secrets if 0 < len(s) < MIN_SECRET_CHARS)
        """Values too short to replace (they would match anywhere): written as they are."""
        self._needles = sorted({n for s in kept for n in _escapes(s)}, key=len, reverse=True)

    def __call__(self, value: Any) -> Any:
        if not self._needles:
            return value
        if isinstance(value, str):
            for needle in self._needles:
                if needle in value:
                    value = value.replace(needle, SECRET)
            return value
        if isinstance(value, list):
            return [self(item) for item in value]
        if isinstance(value, dict):
            return {key: self(item) for key, item in value.items()}
        return value


# -- tapes -----------------------------------------------------------------------------------------


@dataclass
class Tape:
    """One agent's recording: its input, its calls in order (each a JSON object, or its compact JSON
    text while recording: what a tape holds in memory is about what it will write), how it ended."""

    input: str = ""
    calls: list[Any] = field(default_factory=list)
    outcome: dict[str, Any] | None = None
    size: int = 0
    overflowed: bool = False

    def call(self, index: int) -> dict[str, Any]:
        entry = self.calls[index]
        decoded: dict[str, Any] = json.loads(entry) if isinstance(entry, str) else entry
        return decoded


class Recorder:
    """Appends what one guest's session did to its tape (on the guest's thread)."""

    def __init__(self, tape: Tape, scrub: Scrubber) -> None:
        self.tape = tape
        self._scrub = scrub

    def answered(self, fn: str, args: list[Any], value: Any) -> None:
        self._add({"fn": fn, "args": args, "ok": tape_values.answers(fn)[0](value)})

    def failed(self, fn: str, args: list[Any], exc: ToolingError) -> None:
        self._add({"fn": fn, "args": args, "err": tape_values.error_out(exc)})

    def ended(self, status: str, text: str, tripped: str | None = None) -> None:
        outcome = {"status": status, "text": text}
        if tripped is not None:
            outcome["tripped"] = tripped
        self.tape.outcome = self._scrub(outcome)

    def _add(self, entry: dict[str, Any]) -> None:
        if self.tape.overflowed:
            return
        text = json.dumps(self._scrub(entry), ensure_ascii=False)
        self.tape.size += len(text)
        if self.tape.size > MAX_TAPE_BYTES:
            self.tape.overflowed = True
            self.tape.calls.clear()
            return
        self.tape.calls.append(text)


REPLAYED_TRIPS: Final = frozenset({"wall_time", "open_files"})
"""Host-made ends of a recorded run that a replay makes again as the last recorded call returns:
they came from time and descriptors, which a replay does not spend."""


class ReplayedTrap(Exception):
    """The recorded run was ended by the host (`REPLAYED_TRIPS`) after its last call: the replay ends
    the same way (the guest cannot catch it)."""

    def __init__(self, text: str, tripped: str) -> None:
        super().__init__(text)
        self.text = text
        self.tripped = tripped


class Player:
    """Answers one guest's calls from its tape, in order (on the guest's thread)."""

    def __init__(self, agent: str, tape: Tape, scrub: Scrubber) -> None:
        self.agent = agent
        self.tape = tape
        self._scrub = scrub
        self._next = 0

    def answer(self, fn: str, args: list[Any]) -> Any:
        """The recorded answer of the next call, which must be `fn(args)`: its value, or its
        `ToolingError` raised. Raises `Diverged` when the next recorded call is another one, and
        `ReplayedTrap` past the last call of a run the host ended (`REPLAYED_TRIPS`)."""
        index, calls = self._next, self.tape.calls
        asked = self._scrub(args)
        if index >= len(calls):
            outcome = self.tape.outcome or {}
            if outcome.get("status") == "trap" and outcome.get("tripped") in REPLAYED_TRIPS:
                raise ReplayedTrap(str(outcome.get("text")), str(outcome["tripped"]))
            raise Diverged(
                self.agent, f"call {index + 1} is {describe(fn, args)}, but the cassette ends after call {index}"
            )
        entry = self.tape.call(index)
        compared = tape_values.COMPARED.get(fn, len(asked))
        if entry.get("fn") != fn or entry.get("args", [])[:compared] != asked[:compared]:
            recorded, shown = _apart(describe(entry.get("fn", "?"), entry.get("args", [])), describe(fn, args))
            raise Diverged(self.agent, f"call {index + 1} of {len(calls)}: recorded {recorded}, asked {shown}")
        self._next += 1
        outcome = self.tape.outcome or {}
        if self._next == len(calls) and outcome.get("status") == "trap" and outcome.get("tripped") in REPLAYED_TRIPS:
            # Live, the host ended the run as this call returned (or later, waiting or computing):
            # the replay ends it here, as nothing it could still do was recorded.
            raise ReplayedTrap(str(outcome.get("text")), str(outcome["tripped"]))
        if "err" in entry:
            raise tape_values.error_in(entry["err"])
        return tape_values.answers(fn)[1](entry.get("ok"))

    def ended(self, status: str, text: str) -> str | None:
        """Why the run's end differs from the recorded one (calls left, another status or answer);
        None when it is the same."""
        calls = self.tape.calls
        left = len(calls) - self._next
        if left:
            entry = self.tape.call(self._next)
            return (
                f"the guest ended ({status}) after call {self._next} of {len(calls)}; "
                f"the cassette has {left} more, next {describe(entry['fn'], entry['args'])}"
            )
        recorded = self.tape.outcome
        if recorded is not None:
            now = self._scrub({"status": status, "text": text})
            if (recorded.get("status"), recorded.get("text")) != (now["status"], now["text"]):
                ended, was = _apart(_json(now["text"]), _json(recorded.get("text")))
                return f"the run ended {now['status']} {ended}; recorded {recorded.get('status')} {was}"
        return None


# -- the file --------------------------------------------------------------------------------------


@dataclass
class Cassette:
    """A cassette file's content: one tape per agent."""

    agents: dict[str, Tape] = field(default_factory=dict)
    host: str = __version__
    wit: str = WIT


def _header(path: Path, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict) or "agent-host-cassette" not in data:
        raise CassetteError(f"{path}: not a cassette (no `agent-host-cassette` key)")
    version = data["agent-host-cassette"]
    if not isinstance(version, int) or isinstance(version, bool) or version != FORMAT:
        raise CassetteError(
            f"{path}: cassette format {version!r}; this host reads format {FORMAT}",
            hint="record it again with this host",
        )
    if data.get("wit") not in READ_WITS:
        raise CassetteError(
            f"{path}: recorded against {data.get('wit')!r}; this host replays {', '.join(sorted(READ_WITS))}",
            hint="record it again with a guest built against this host's WIT (`agent-host wit`)",
        )
    if not isinstance(data.get("agents", {}), dict):
        raise CassetteError(f"{path}: `agents` is not an object keyed by agent")
    return data


def load(path: Path) -> Cassette:
    """The cassette in `path`; `CassetteError` naming what is wrong (missing, not a regular file or
    larger than `MAX_CASSETTE_BYTES` (`_read`), not a cassette, another format or WIT contract, a call
    or an outcome that a replay could not use)."""
    try:
        data = json.loads(_read(path).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise CassetteError(f"{path}: not a cassette: {reason}") from None
    data = _header(path, data)
    agents: dict[str, Tape] = {}
    for name, tape in (data.get("agents") or {}).items():
        where = f"{path}: agents.{name}"
        if not isinstance(tape, dict) or not isinstance(tape.get("calls"), list):
            raise CassetteError(f"{where}: not a tape (no `calls` list)")
        if not isinstance(tape.get("input", ""), str):
            raise CassetteError(f"{where}: `input` is not a string")
        outcome = tape.get("outcome")
        if outcome is not None and not (
            isinstance(outcome, dict)
            and isinstance(outcome.get("status"), str)
            and isinstance(outcome.get("text"), str)
        ):
            raise CassetteError(f"{where}: `outcome` is not {{status, text}} strings")
        for index, call in enumerate(tape["calls"]):
            problem = _problem(call)
            if problem is not None:
                raise CassetteError(f"{where}: call {index + 1}: {problem}")
        agents[name] = Tape(tape.get("input", ""), tape["calls"], outcome)
    return Cassette(agents, str(data.get("host", "?")), WIT)


def _read(path: Path) -> bytes:
    """The bytes of the cassette file `path`, a regular file (or a link to one) of at most
    `MAX_CASSETTE_BYTES`. It is opened without blocking and judged on the open descriptor (no race
    with a file swapped in): a pipe, a device or a folder is refused at once, never read, and at
    most one byte past the bound is read. `CassetteError` naming the path, what is wrong and the fix."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise CassetteError(
            f"{path}: no such cassette", hint="record one first: agent-host run ... --record FILE"
        ) from None
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read the cassette: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = _NOT_FILES.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise CassetteError(
                f"{path}: {kind}, not a cassette file: a replay reads a regular file only",
                hint="pass the file that `agent-host run ... --record FILE` wrote",
            )
        data = b"" if info.st_size > MAX_CASSETTE_BYTES else _at_most(fd, MAX_CASSETTE_BYTES + 1)
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read the cassette: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if info.st_size > MAX_CASSETTE_BYTES or len(data) > MAX_CASSETTE_BYTES:
        raise CassetteError(
            f"{path}: more than {MAX_CASSETTE_BYTES // 2**20} MiB, the most a cassette may hold: not read",
            hint="pass the file that `agent-host run ... --record FILE` wrote (never larger), or record it again",
        )
    return data


def _at_most(fd: int, limit: int) -> bytes:
    """What `fd` holds up to its end or `limit` bytes, whichever comes first."""
    parts: list[bytes] = []
    left = limit
    while left:
        part = os.read(fd, min(left, READ_BYTES))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _problem(call: Any) -> str | None:
    """What makes `call` unusable on replay (read as `Player.answer` will), or None."""
    if not isinstance(call, dict) or call.get("fn") not in tape_values.RECORDED:
        return "not a recorded host function"
    if not isinstance(call.get("args"), list):
        return "its `args` are not a list"
    try:
        if "err" in call:
            tape_values.error_in(call["err"])
        else:
            tape_values.answers(call["fn"])[1](call.get("ok"))
    except ValueError as exc:
        return f"not a {call['fn']} answer ({exc})"
    return None


def check_target(path: Path) -> None:
    """`CassetteError` unless `path` may be written: missing, or a regular file holding a cassette
    (never a link, a device, a pipe or a folder, nor a file of something else, which would be lost)."""
    _existing(path)


def _existing(path: Path) -> Cassette | None:
    """The cassette at `path` that a recording would replace (None: no file, or an empty one);
    `CassetteError` when `path` may not be written (`check_target`)."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise CassetteError(f"{path}: not a regular file: a cassette is written only as a file of its own")
    if not path.exists() or not path.stat().st_size:
        return None
    try:
        return load(path)
    except CassetteError as exc:
        raise CassetteError(
            f"{path}: exists and is not a cassette: not replaced", hint=f"{exc.message}; name another file"
        ) from None


def save(cassette: Cassette, path: Path, keep: bool = True) -> None:
    """Write `cassette` to `path` at once (a temporary file renamed over it): a reader never sees half
    a cassette. The file has mode `FILE_MODE` from its first byte, whatever the umask (one replaced
    keeps a narrower mode). With `keep`, the tapes of other agents that a cassette already at `path`
    holds stay. `CassetteError` when a tape overflowed, the file would pass `MAX_CASSETTE_BYTES`,
    `path` is not a cassette's file (`check_target`) or cannot be written."""
    overflowed = sorted(name for name, tape in cassette.agents.items() if tape.overflowed)
    if overflowed:
        raise CassetteError(
            f"{path}: not written: the recording of agent {overflowed[0]} passed {MAX_TAPE_BYTES // 2**20} MiB",
            hint="record a shorter run",
        )
    existing = _existing(path)  # read once: checked, and its other agents' tapes kept
    agents = {**existing.agents, **cassette.agents} if keep and existing is not None else dict(cassette.agents)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = FILE_MODE & _mode(path)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600, O_EXCL: no one else's
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                os.fchmod(fd, mode)  # exactly: a umask could only have narrowed mkstemp's
                _write(out, cassette, agents)
                out.flush()
                size = os.fstat(fd).st_size
            if size > MAX_CASSETTE_BYTES:
                raise CassetteError(
                    f"{path}: not written: the cassette would pass {MAX_CASSETTE_BYTES // 2**20} MiB, "
                    "the most a replay reads",
                    hint="record fewer agents into one file, or a shorter run",
                )
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CassetteError(f"{path}: cannot write the cassette: {exc.strerror or exc}") from None


def _write(out: Any, cassette: Cassette, agents: Mapping[str, Tape]) -> None:
    """The file: its header, then each agent's tape with one call a line (so a diff shows calls)."""
    dump = functools.partial(json.dumps, ensure_ascii=False)
    out.write(f'{{"agent-host-cassette": {FORMAT}, "host": {dump(cassette.host)}, "wit": {dump(cassette.wit)},\n')
    out.write(' "agents": {')
    for number, (name, tape) in enumerate(sorted(agents.items())):
        out.write(("," if number else "") + f'\n  {dump(name)}: {{"input": {dump(tape.input)}, "calls": [')
        for index, call in enumerate(tape.calls):
            out.write(("," if index else "") + "\n   " + (call if isinstance(call, str) else dump(call)))
        out.write(f'\n  ], "outcome": {dump(tape.outcome)}}}')
    out.write("\n }\n}\n")


def _mode(path: Path) -> int:
    """The permissions of the file at `path` (`FILE_MODE` when there is none)."""
    try:
        return stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return FILE_MODE


class Recording:
    """A cassette being recorded: one tape per agent that runs (each tape is written by its own
    guest thread only)."""

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

    def check_input(self, agent: str, given: str) -> None:
        """Raise `ReplayDiverged`, naming both, when `given` is not the input `agent`'s tape recorded (a
        replay is of the recorded run); nothing when it is, or when the cassette has no tape of it."""
        tape = self.cassette.agents.get(agent)
        if tape is None or tape.input == self.scrub(given):
            return
        detail = f"the input is {given[:200]!r}; recorded {tape.input[:200]!r}"
        raise ReplayDiverged(str(Diverged(agent, detail)), hint="drop --input: a replay runs with the recorded input")


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
    "ReplayDiverged",
    "ReplayedTrap",
    "Tapes",
    "load",
    "save",
]
