"""How much the cache keeps, and removing the rest without touching what a running host uses.

`prune` keeps, per group (guest folder, or source file of an artifact compiled from outside the
cache), the `keep` most recently used entries; removes artifacts whose build is gone; then removes
the least recently used until builds + compiled artifacts fit in `max_bytes` (`npm/` is not
counted). It runs after every build and compile with the limits of the environment
(`AGENT_HOST_CACHE_KEEP`, `AGENT_HOST_CACHE_MAX`). `clean` removes everything. Both skip entries
pinned by a running host (`locks`) and entries written in the last `FRESH` seconds (a compiled
artifact between the compiler's rename and its loader's pin).
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_host.cache import stamps
from agent_host.cache.contents import NPM, Entry, scan
from agent_host.cache.locks import lock_all, release
from agent_host.config import parse_size
from agent_host.errors import UsageError

logger = logging.getLogger(__name__)

ENV_KEEP: Final = "AGENT_HOST_CACHE_KEEP"
ENV_MAX: Final = "AGENT_HOST_CACHE_MAX"
DEFAULT_KEEP: Final = 3
"""Entries kept per group."""
DEFAULT_MAX: Final = 2 * 1024**3
"""Bytes of builds and compiled artifacts kept at most (2 GiB)."""
FRESH: Final = 120.0
"""Seconds after its last write during which no entry is removed."""
STALE_TEMP: Final = 3600.0
"""Seconds after which an unlocked temp file of a build or compile that died is removed."""


@dataclass(frozen=True)
class Limits:
    """How much the cache keeps; `max_bytes` None: no size cap."""

    keep: int = DEFAULT_KEEP
    max_bytes: int | None = DEFAULT_MAX

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The limits set by `AGENT_HOST_CACHE_KEEP` (>= 1) and `AGENT_HOST_CACHE_MAX` (`2GiB`,
        `500MB`, bytes, or `none`). Raises `UsageError` naming the variable it cannot read."""
        env = os.environ if environ is None else environ
        keep, size = env.get(ENV_KEEP, "").strip(), env.get(ENV_MAX, "").strip()
        if keep and (not keep.isdigit() or int(keep) < 1):
            raise UsageError(f"{ENV_KEEP}={keep!r}: expected a whole number >= 1")
        return cls(
            int(keep) if keep else DEFAULT_KEEP,
            parse_bytes(size, ENV_MAX) if size else DEFAULT_MAX,
        )


def parse_bytes(text: str, name: str) -> int | None:
    """Bytes from `2GiB`, `500MB`, `1048576`; None for `none`. Raises `UsageError` naming `name`."""
    if text.strip().lower() == "none":
        return None
    size = parse_size(text)
    if size is None:
        raise UsageError(f"{name}={text!r}: expected a size such as 2GiB, 500MB or a number of bytes, or none")
    return size


@dataclass(frozen=True)
class Removal:
    """What `prune` or `clean` did."""

    removed: tuple[Entry, ...] = ()
    kept: tuple[Entry, ...] = ()
    """Due for removal but in use by a running host, or written in the last `FRESH` seconds."""
    other: tuple[str, ...] = ()
    """Other things removed (`npm/`, temp files)."""

    @property
    def freed(self) -> int:
        return sum(entry.size for entry in self.removed)


def select(entries: Iterable[Entry], limits: Limits, now: float, busy: Iterable[Entry] = ()) -> list[Entry]:
    """The entries `prune` removes, least recently used first (pure). Entries in `busy` or used
    less than `FRESH` seconds before `now` are never chosen."""
    entries = list(entries)
    held = set(busy)

    def removable(entry: Entry) -> bool:
        return entry not in held and now - entry.used >= FRESH

    chosen: list[Entry] = []
    groups: dict[str, list[Entry]] = defaultdict(list)
    for entry in entries:
        groups[entry.group].append(entry)
    for members in groups.values():
        members.sort(key=lambda e: e.used, reverse=True)
        chosen += [e for e in members[limits.keep :] if removable(e)]
    chosen += [e for e in entries if e.orphan and e not in chosen and removable(e)]
    if limits.max_bytes is not None:
        total = sum(e.size for e in entries) - sum(e.size for e in chosen)
        for entry in sorted(entries, key=lambda e: e.used):
            if total <= limits.max_bytes:
                break
            if entry not in chosen and removable(entry):
                chosen.append(entry)
                total -= entry.size
    return sorted(chosen, key=lambda e: e.used)


def prune(root: Path, limits: Limits, now: float | None = None) -> Removal:
    """Remove what `select` chooses in the cache folder `root`, and temp files older than `STALE_TEMP`."""
    listing = scan(root)
    now = time.time() if now is None else now
    busy = [entry for entry in listing.entries if in_use(entry)]
    removed, kept = _remove(select(listing.entries, limits, now, busy))
    held = tuple(entry for entry in select(listing.entries, limits, now) if entry in busy)
    stamps.forget_stale(root)
    return Removal(removed, held + kept, _remove_temp(listing.temp, now))


def clean(root: Path, now: float | None = None) -> Removal:
    """Remove everything in the cache folder `root` but what is in use (see the module docstring)."""
    listing = scan(root)
    now = time.time() if now is None else now
    removed, kept = _remove(e for e in listing.entries if now - e.used >= FRESH)
    kept += tuple(e for e in listing.entries if now - e.used < FRESH)
    other = list(_remove_temp(listing.temp, now))
    stamps.forget_stale(root)
    if (root / NPM).is_dir():
        shutil.rmtree(root / NPM, ignore_errors=True)
        other.append(str(root / NPM))
    return Removal(removed, kept, tuple(other))


def auto_prune(root: Path) -> None:
    """`prune` with the limits of the environment, after a build or compile; never raises."""
    try:
        removal = prune(root, Limits.from_env())
    except (OSError, UsageError) as exc:
        logger.warning("cache %s not pruned: %s", root, exc)
        return
    if removal.removed:
        count = len(removal.removed)
        logger.info(
            "cache: removed %d old %s (%.0f MB)", count, "entry" if count == 1 else "entries", removal.freed / 1e6
        )


def in_use(entry: Entry) -> bool:
    """Whether a process pins one of the entry's files."""
    fds = lock_all(entry.locks)
    if fds is None:
        return True
    release(fds)
    return False


def _remove(entries: Iterable[Entry]) -> tuple[tuple[Entry, ...], tuple[Entry, ...]]:
    removed, kept = [], []
    for entry in entries:
        fds = lock_all(entry.locks)
        if fds is None:
            kept.append(entry)
            continue
        try:
            for path in entry.files:
                path.unlink(missing_ok=True)
        finally:
            release(fds)
        removed.append(entry)
    return tuple(removed), tuple(kept)


def _remove_temp(paths: Iterable[Path], now: float) -> tuple[str, ...]:
    gone = []
    for path in paths:
        fds = lock_all([path])  # a build in progress pins its temp file
        if fds is None:
            continue
        try:
            if now - path.stat().st_mtime >= STALE_TEMP:
                path.unlink()
                gone.append(str(path))
        except OSError:
            pass
        finally:
            release(fds)
    return tuple(gone)
