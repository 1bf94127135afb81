"""Host file descriptors guests hold through their granted folders: counted, bounded per guest.

wasmtime's WASI opens a host descriptor for each file, folder or directory stream a guest opens in
its `dirs`, with no count or limit (none in wasmtime-py 50's C API; the open runs inside WASI). So
the host counts from the process's table (`/proc/self/fd`, or `/dev/fd` + `F_GETPATH`): a guest
holds the descriptors naming a path in its folders that were not open when its run started, less
the folders' preopens. `Watch.check` runs on the guest's thread each epoch tick of running wasm
(`RunGuard`); the table is read again only when its size changed. Bounds: over `max_open_files`
the guest is stopped; with fewer than `HOST_RESERVE` descriptors left, the guest holding the most
is. The soft `RLIMIT_NOFILE` is raised to the hard limit at the first watch. A descriptor opened in
a folder several running guests were granted counts for each of them (the host cannot tell whose).
"""

from __future__ import annotations

import fcntl
import logging
import os
import resource
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from agent_host.config import DirGrant
from agent_host.policy.grants import Limit

logger = logging.getLogger(__name__)

HOST_RESERVE: Final = 256
"""Descriptors of the process's limit kept for the host: with fewer left, the guest holding the most
descriptors is stopped."""

RESCAN: Final = 0.05
"""Seconds after which the descriptor table is read again even when its size did not change."""

MIN_RESCAN: Final = 0.01
"""Seconds between two reads of the table at the most (one epoch tick), however often its size
changes (a busy `serve` opens and closes sockets all the time): ~1 ms per read of 500 descriptors."""

RAISED_LIMIT_CAP: Final = 1 << 20
"""Highest soft `RLIMIT_NOFILE` the host raises itself to (when the hard limit is unlimited)."""

_FD_DIR: Final = "/proc/self/fd" if sys.platform.startswith("linux") else "/dev/fd"


@dataclass(eq=False)
class Watch:
    """The descriptors of one guest run: made by `watch`, checked by `check`, ended by `close`."""

    roots: tuple[str, ...]
    """The real paths of the guest's granted folders."""
    limit: Limit
    baseline: frozenset[tuple[int, str]]
    """(descriptor, path) open under `roots` when the run started: not the guest's."""
    held: int = 0
    """Descriptors the guest held at the last count."""
    _ledger: _Ledger | None = field(default=None, repr=False)

    def check(self) -> str | None:
        """Why the guest must stop (its descriptors are over its limit, or the host is short of
        descriptors and this guest holds the most), or None. Called on the guest's thread; never raises."""
        ledger = self._ledger
        if ledger is None:
            return None
        try:
            return ledger.check(self)
        except Exception:  # boundary: a failed count must not stop a guest or reach wasmtime
            logger.exception("counting the host file descriptors of a guest failed")
            return None

    def close(self) -> None:
        """Stop counting (after the guest's store is closed: its descriptors are gone). Idempotent."""
        ledger, self._ledger = self._ledger, None
        if ledger is not None:
            ledger.forget(self)


def watch(dirs: Sequence[DirGrant], limit: Limit) -> Watch | None:
    """A `Watch` of a guest granted `dirs`, registered before its WASI context opens them; None
    when it has no folder (it can open nothing) or the platform cannot list descriptors."""
    if not dirs or not os.path.isdir(_FD_DIR):
        return None
    return _LEDGER.register(tuple(dict.fromkeys(os.path.realpath(grant.host) for grant in dirs)), limit)


def raise_soft_limit() -> int:
    """Raise the soft `RLIMIT_NOFILE` to the hard limit (capped by `RAISED_LIMIT_CAP`); the soft
    limit in force afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = RAISED_LIMIT_CAP if hard == resource.RLIM_INFINITY else min(hard, RAISED_LIMIT_CAP)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError) as exc:  # macOS refuses more than OPEN_MAX: keep what it allows
            logger.debug("cannot raise the open-files limit to %d: %s", wanted, exc)
    return int(soft)


class _Ledger:
    """The watches of every running guest and the last count of the process's descriptors."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: list[Watch] = []
        self._size = -1
        """Entries in the descriptor table at the last count."""
        self._counted = 0.0
        self._short: str | None = None
        """Why the host is short of descriptors at the last count, or None."""
        self._worst: Watch | None = None
        self._soft_limit: int | None = None

    def register(self, roots: tuple[str, ...], limit: Limit) -> Watch:
        with self._lock:
            if self._soft_limit is None:
                self._soft_limit = raise_soft_limit()
            baseline = frozenset((fd, path) for fd, path in _descriptors() if _under(path, roots))
            watch = Watch(roots, limit, baseline, _ledger=self)
            self._watches.append(watch)
            self._size, self._counted = -1, 0.0
            return watch

    def forget(self, watch: Watch) -> None:
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)
            if self._worst is watch:
                self._worst = None
            self._size, self._counted = -1, 0.0

    def check(self, watch: Watch) -> str | None:
        size = _table_size()
        now = time.monotonic()
        with self._lock:
            since = now - self._counted
            if (size != self._size and since >= MIN_RESCAN) or since > RESCAN:
                self._count(size, now)
            if watch.held > watch.limit.value:
                return (
                    f"file descriptor limit (limit-exceeded): the run holds {watch.held} host file descriptors "
                    f"(open files, folders, directory streams) in its granted folders, more than "
                    f"{int(watch.limit.value)} ({watch.limit.key})"
                )
            if self._short is not None and watch is self._worst:
                return self._short
        return None

    def _count(self, size: int, now: float) -> None:
        """Count every watch's descriptors from one read of the table (the lock is held)."""
        table = list(_descriptors())
        roots = {root for watch in self._watches for root in watch.roots}
        preopens: dict[str, int] = {}
        for watch in self._watches:
            for root in watch.roots:
                preopens[root] = preopens.get(root, 0) + 1
        inside = [(fd, path) for fd, path in table if _under(path, roots)]
        for watch in self._watches:
            mine = [(fd, path) for fd, path in inside if _under(path, watch.roots) and (fd, path) not in watch.baseline]
            at_root: dict[str, int] = {}
            for _, path in mine:
                if path in preopens:
                    at_root[path] = at_root.get(path, 0) + 1
            watch.held = len(mine) - sum(min(count, preopens[path]) for path, count in at_root.items())
        self._size, self._counted = size, now
        soft = self._soft_limit or raise_soft_limit()
        left = soft - len(table)
        self._worst = max(self._watches, key=lambda watch: watch.held, default=None)
        if left < HOST_RESERVE and self._worst is not None and self._worst.held > 0:
            self._short = (
                f"file descriptor limit (limit-exceeded): the host has {max(left, 0)} of its {soft} file descriptors "
                f"left (it keeps {HOST_RESERVE}), and this run holds the most of them in its granted folders "
                f"({self._worst.held})"
            )
        else:
            self._short = None


def _table_size() -> int:
    """Open descriptors of the process: the size Linux (6.2 on) gives `/proc/self/fd` (4 us), else
    the length of its listing (~190 us for 300)."""
    try:
        size = os.stat(_FD_DIR).st_size
        return size if size > 0 else len(os.listdir(_FD_DIR))
    except OSError:
        return -1


def _descriptors() -> Iterable[tuple[int, str]]:
    """(descriptor, the path it names) for each open descriptor of the process that names a path."""
    try:
        names = os.listdir(_FD_DIR)
    except OSError:
        return
    for name in names:
        try:
            fd = int(name)
            path = _path_of(fd)
        except (ValueError, OSError):  # closed meanwhile, or no path (a socket, a pipe)
            continue
        if path.startswith("/"):
            yield fd, path.removesuffix(" (deleted)")


def _path_of(fd: int) -> str:
    if _FD_DIR == "/proc/self/fd":
        return os.readlink(f"{_FD_DIR}/{fd}")
    get_path = getattr(fcntl, "F_GETPATH", None)
    if get_path is None:
        raise OSError("no F_GETPATH")
    return os.fsdecode(fcntl.fcntl(fd, get_path, bytes(1024)).rstrip(b"\0"))


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


_LEDGER: Final = _Ledger()
"""The process's one ledger: descriptors are the process's, whichever runtime opened them."""
