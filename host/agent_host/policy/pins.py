"""Pinned tool definitions: digests of reviewed tools in `agent-host.lock`, and the verdict on a tool.

A tooling with `pin_tools = true` has its tools' digests (`digest`: sha256 of canonical JSON) kept in
`LOCK_NAME` beside the config file, a TOML table per tooling. The first listing seen of a tooling
without a table records every tool, once even when several guests list at once; later a tool whose
digest differs is `changed`, one without a digest `new`: both are denied (`check`) naming the tool
and `agent-host tools --pin TOOLING`, which rewrites the table (`pin`). A removed tool's digest stays
until then. The file is re-read when it changes on disk, written atomically (temp file + rename)
under an exclusive `flock` of its folder, and read-merged first so other toolings' tables survive.
A broken lock file denies the pinned toolings' tools, naming the problem; without a config file
there is no lock: pinning is then a `ConfigError`.
"""

from __future__ import annotations

import enum
import fcntl
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import tomli_w

from agent_host.errors import ConfigError, ErrorCode, ToolingError
from agent_host.model import ToolSpec

if TYPE_CHECKING:
    from agent_host.config import Config
logger = logging.getLogger(__name__)

LOCK_NAME: Final = "agent-host.lock"
"""The lock file's name; it lives in the config file's folder."""

LOCK_VERSION: Final = 1
"""The format of the lock file this host writes and reads."""

HEADER: Final = """\
# agent-host.lock: digests of the reviewed tool definitions of toolings with `pin_tools = true`.
# Each is sha256 over the tool's canonical JSON (keys sorted, no spaces, UTF-8) of name,
# description, inputSchema, outputSchema and annotations. Written by agent-host at first sight
# and by `agent-host tools --pin [TOOLING]`; review changes before re-pinning, keep it with the config.
"""

FIRST_SIGHT: Final = "at first sight"
"""Why a tooling's pins were written when they were recorded without `tools --pin` (in the log)."""

MAX_REMEMBERED: Final = 4096
"""Digests of tool specs remembered between checks (all are forgotten at once beyond)."""

_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")


class PinStatus(enum.StrEnum):
    """A listed tool compared with its tooling's pins."""

    PINNED = "pinned"
    CHANGED = "changed"
    NEW = "new"


def definition(spec: ToolSpec) -> dict[str, Any]:
    """What a tool's digest covers, in MCP's wire names; absent parts are left out."""
    parts = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "outputSchema": spec.output_schema,
        "annotations": spec.annotations,
    }
    return {key: value for key, value in parts.items() if value is not None}


def digest(spec: ToolSpec) -> str:
    """`sha256:HEX` of the canonical JSON of `definition(spec)`: the same on every machine and run."""
    text = json.dumps(definition(spec), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Repin:
    """What `Pins.pin` changed in one tooling's table (tool names, sorted)."""

    tooling: str
    tools: int
    changed: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


Table = dict[str, dict[str, str]]
"""Tooling name -> tool name -> digest."""


class Pins:
    """The pins of one configuration's pinned toolings; thread-safe (guests list on their threads)."""

    def __init__(self, path: Path | None, pinned: Iterable[str] = ()) -> None:
        """`path` is the lock file; `pinned` the toolings with `pin_tools = true` (a `ConfigError`
        when there are some but no `path`)."""
        self._pinned = frozenset(pinned)
        if self._pinned and path is None:
            names = ", ".join(sorted(self._pinned))
            raise ConfigError(
                f"tooling {names} sets pin_tools = true, but the configuration has no file beside which "
                f"{LOCK_NAME} could keep the pins",
                hint="load the configuration from a file (`--config FILE`, or parse_config(text, path) in code)",
            )
        self._path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._table: Table = {}
        self._broken: str | None = None
        self._digests: dict[int, tuple[ToolSpec, str]] = {}
        """id(spec) -> (spec, its digest): a tooling keeps its listed specs, so a call's check is a lookup."""

    @classmethod
    def of(cls, config: Config) -> Pins:
        """The pins of `config`: its `pin_tools` toolings, in `LOCK_NAME` beside its file."""
        path = config.source.parent / LOCK_NAME if config.source is not None else None
        return cls(path, [name for name, tooling in config.toolings.items() if tooling.pin_tools])

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def pinned(self) -> frozenset[str]:
        """The toolings whose tools are pinned."""
        return self._pinned

    def applies(self, tooling: str) -> bool:
        return tooling in self._pinned

    def seen(self, tooling: str) -> bool:
        """Whether `tooling` has pins to check against (always, for a tooling that pins nothing)."""
        if tooling not in self._pinned:
            return True
        with self._lock:
            return tooling in self._current()

    def review(self, tooling: str, specs: Sequence[ToolSpec]) -> dict[str, PinStatus]:
        """The status of each of `specs`, a complete listing of `tooling` (empty for a tooling that
        pins nothing). At first sight every tool is recorded first, and so `pinned`."""
        if tooling not in self._pinned:
            return {}
        with self._lock:
            pins = self._current().get(tooling)
            if pins is None:
                pins = {spec.name: digest(spec) for spec in specs}
                self._write(tooling, pins, FIRST_SIGHT)
            return {spec.name: self._status(pins, spec) for spec in specs}

    def check(self, tooling: str, spec: ToolSpec) -> None:
        """Raise `ToolingError(denied)` unless `spec` is the pinned definition (or `tooling` pins nothing)."""
        if tooling not in self._pinned:
            return
        with self._lock:
            pins = self._current().get(tooling)
            status = self._status(pins, spec) if pins is not None else None
        if status is None:
            raise self._denied(tooling, spec.name, f"no tool of tooling {tooling!r} is pinned yet in {self._path}")
        if status is PinStatus.CHANGED:
            raise self._denied(tooling, spec.name, f"its definition changed since it was pinned in {self._path}")
        if status is PinStatus.NEW:
            raise self._denied(tooling, spec.name, f"it is new since the tools were pinned in {self._path}")

    def pin(self, tooling: str, specs: Sequence[ToolSpec]) -> Repin:
        """Record `specs` (a complete listing) as the pins of `tooling`, replacing its table."""
        if tooling not in self._pinned:
            raise ToolingError(ErrorCode.DENIED, f"tooling {tooling!r} does not set pin_tools = true")
        pins = {spec.name: digest(spec) for spec in specs}
        with self._lock:
            old = self._current().get(tooling, {})
            self._write(tooling, pins, "on request")
        return Repin(
            tooling,
            len(pins),
            changed=tuple(sorted(n for n in pins if n in old and old[n] != pins[n])),
            new=tuple(sorted(n for n in pins if n not in old)),
            removed=tuple(sorted(n for n in old if n not in pins)),
        )

    # -- the file (the lock is held) -------------------------------------------------------------

    def _current(self) -> Table:
        """The tables of the lock file as it is on disk now (re-read when it changed)."""
        assert self._path is not None, "only a pinning configuration reads the lock file"
        try:
            info = self._path.stat()
        except FileNotFoundError:
            self._stamp, self._table, self._broken = None, {}, None
            return self._table
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._table, self._broken = _parse(self._path.read_text(encoding="utf-8")), None
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError) as exc:
                self._table, self._broken = {}, str(exc)
        if self._broken is not None:
            raise ToolingError(
                ErrorCode.DENIED,
                f"pinned tools cannot be checked: {self._path} is broken ({self._broken}); fix it, or delete it "
                "and re-pin with `agent-host tools --pin`",
            )
        return self._table

    def _write(self, tooling: str, pins: dict[str, str], why: str) -> None:
        """Set `tooling`'s table to `pins` in the file: merged into what is on disk, atomically."""
        path = self._path
        assert path is not None
        with _folder_locked(path.parent):
            self._stamp = None  # re-read under the folder lock: another process may have written
            table = {**self._current(), tooling: pins}
            text = HEADER + tomli_w.dumps({"version": LOCK_VERSION, "tooling": table})
            _replace(path, text)
        self._stamp = None
        self._current()
        level = logging.INFO if why == FIRST_SIGHT else logging.DEBUG  # `tools --pin` tells it itself
        logger.log(level, "pinned %d tools of tooling %r in %s (%s)", len(pins), tooling, path, why)

    def _status(self, pins: Mapping[str, str], spec: ToolSpec) -> PinStatus:
        pinned = pins.get(spec.name)
        if pinned is None:
            return PinStatus.NEW
        known = self._digests.get(id(spec))
        if known is None or known[0] is not spec:
            if len(self._digests) >= MAX_REMEMBERED:
                self._digests.clear()
            known = self._digests[id(spec)] = (spec, digest(spec))
        return PinStatus.PINNED if pinned == known[1] else PinStatus.CHANGED

    def _denied(self, tooling: str, tool: str, why: str) -> ToolingError:
        return ToolingError(
            ErrorCode.DENIED,
            f"tool {tool!r} of tooling {tooling!r} is not the reviewed one: {why}; review it with "
            f"`agent-host tools {tooling}`, then re-pin with `agent-host tools --pin {tooling}`",
        )


def _parse(text: str) -> Table:
    """The tables of a lock file's text; `ValueError` naming what is wrong."""
    data = tomllib.loads(text)
    if data.get("version") != LOCK_VERSION:
        raise ValueError(f"version is {data.get('version')!r}, this host reads version {LOCK_VERSION}")
    toolings = data.get("tooling", {})
    if not isinstance(toolings, dict):
        raise ValueError("`tooling` is not a table")
    table: Table = {}
    for name, pins in toolings.items():
        if not isinstance(pins, dict):
            raise ValueError(f"[tooling.{name}] is not a table")
        for tool, value in pins.items():
            if not isinstance(value, str) or not _DIGEST.fullmatch(value):
                raise ValueError(f"[tooling.{name}] {tool!r} is not a digest (sha256:64 hex digits)")
        table[name] = dict(pins)
    return table


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a temp file in its folder, flushed, renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fchmod(file.fileno(), 0o644)
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _folder_locked(folder: Path) -> Iterator[None]:
    """An exclusive `flock` on `folder` (held briefly: writers of the lock file take turns)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
