"""What the cache folder holds, as entries: the unit the pruner keeps or removes.

Layout: `builds/<guest>-<key>.wasm` (+ `.source`: the guest folder it was built from),
`compiled/<key>.cwasm` (+ `.sha256`; + `.image`: its memory image; + `.source`: the wasm it was
compiled from), `npm/`, `stamps/` (see `stamps`; not entries: pruned when their file is gone),
`locks/`, `dev-runner/`, and temp files `.tmp-*` of builds and compiles in progress. A build and the
artifacts compiled from it are one `Entry`, grouped by guest folder; an artifact compiled from a
file outside the cache is an entry of its own, grouped by that file (without a `.source`, by
itself). `used` is the newest mtime of its files. Scanning never fails on files that another process
removes meanwhile.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

BUILDS: Final = "builds"
COMPILED: Final = "compiled"
LOCKS: Final = "locks"
NPM: Final = "npm"
FOLDER_MODE: Final = 0o700
"""Permissions of a folder the host makes in the cache: its user's alone (`private`; the umask may narrow them)."""
SOURCE: Final = ".source"
IMAGE: Final = ".image"
"""A compiled artifact's memory image (`runtime.compiler.IMAGE`)."""
UNKNOWN: Final = "(source unknown)"
"""The name of an artifact compiled before sources were recorded (each is a group of its own)."""
TOUCH_EVERY: Final = 3600.0
"""Seconds between "last used" marks (mtime) of a build taken from the cache."""


@dataclass(frozen=True)
class Entry:
    """A build with the artifacts compiled from it, or one artifact compiled from a file outside the
    cache. `locks` are the files locked to remove it; `files` every file it has."""

    group: str
    """The guest folder (or name) of a build, the source file of an artifact."""
    name: str
    """How a person calls the group: the guest's name, or the source file's name."""
    locks: tuple[Path, ...]
    files: tuple[Path, ...]
    size: int
    used: float
    builds: int = 0
    compiled: int = 0
    orphan: bool = False
    """An artifact compiled from a build of this cache that is gone: it can never be used again."""


@dataclass(frozen=True)
class Listing:
    """What the cache folder holds."""

    root: Path
    entries: tuple[Entry, ...]
    npm: int = 0
    """Bytes under `npm/`."""
    temp: tuple[Path, ...] = ()
    """Temp files of builds and compiles (in progress, or left by a process that died)."""

    @property
    def size(self) -> int:
        """Bytes of builds and compiled artifacts: what the size cap bounds."""
        return sum(entry.size for entry in self.entries)


def scan(root: Path) -> Listing:
    """The entries of the cache folder `root` (which may not exist)."""
    builds: dict[str, _Parts] = {}
    for wasm in sorted((root / BUILDS).glob("*.wasm")):
        if not wasm.name.startswith(".tmp-"):
            source = _read_source(wasm)
            name = Path(source).name if source else wasm.stem.rsplit("-", 1)[0]
            files = [wasm, *_existing(wasm.with_suffix(SOURCE))]
            builds[str(wasm.resolve())] = _Parts(source or name, name, [wasm], files, builds=1)
    loose: list[_Parts] = []
    builds_dir = str((root / BUILDS).resolve())
    for cwasm in sorted((root / COMPILED).glob("*.cwasm")):
        if cwasm.name.startswith(".tmp-"):
            continue
        files = [cwasm, *_existing(cwasm.with_suffix(".sha256"), cwasm.with_suffix(SOURCE), cwasm.with_suffix(IMAGE))]
        source = _read_source(cwasm)
        owner = builds.get(source) if source else None
        if owner is not None:
            owner.locks.append(cwasm)
            owner.files.extend(files)
            owner.compiled += 1
        elif source is not None:
            orphan = str(Path(source).parent) == builds_dir
            loose.append(_Parts(source, Path(source).name, [cwasm], files, compiled=1, orphan=orphan))
        else:
            loose.append(_Parts(f"{cwasm.name} {UNKNOWN}", UNKNOWN, [cwasm], files, compiled=1))
    entries = [entry for parts in [*builds.values(), *loose] if (entry := parts.entry()) is not None]
    temp = tuple(sorted(p for folder in (BUILDS, COMPILED) for p in (root / folder).glob(".tmp-*")))
    return Listing(root, tuple(entries), tree_size(root / NPM), temp)


def record_source(artifact: Path, source: Path) -> None:
    """Write `artifact`'s `.source` sidecar: the file or folder it was made from (atomically)."""
    sidecar = artifact.with_suffix(SOURCE)
    tmp = sidecar.with_name(f".tmp-{os.getpid()}-{sidecar.name}")
    tmp.write_text(str(source.resolve()), encoding="utf-8")
    os.replace(tmp, sidecar)


def mark_used(path: Path) -> None:
    """Mark a build taken from the cache as used now (at most every `TOUCH_EVERY` seconds, so that
    a runtime's memo of unchanged files stays valid)."""
    try:
        if time.time() - path.stat().st_mtime > TOUCH_EVERY:
            os.utime(path)
    except OSError:
        pass


def tree_size(root: Path) -> int:
    """Bytes of every file under `root` (0 when it does not exist)."""
    total = 0
    for dirpath, _, filenames in os.walk(root):
        for filename in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, filename)).st_size
            except OSError:
                pass
    return total


@dataclass
class _Parts:
    """An entry while `scan` collects its files."""

    group: str
    name: str
    locks: list[Path]
    files: list[Path]
    builds: int = 0
    compiled: int = 0
    orphan: bool = False

    def entry(self) -> Entry | None:
        """The entry, or None when its files went away meanwhile (another process pruned it)."""
        try:
            stats = [path.stat() for path in self.files]
        except FileNotFoundError:
            return None
        size, used = sum(s.st_size for s in stats), max(s.st_mtime for s in stats)
        return Entry(
            self.group,
            self.name,
            tuple(self.locks),
            tuple(self.files),
            size,
            used,
            self.builds,
            self.compiled,
            self.orphan,
        )


def _read_source(path: Path) -> str | None:
    try:
        return path.with_suffix(SOURCE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _existing(*paths: Path) -> list[Path]:
    return [path for path in paths if path.exists()]
