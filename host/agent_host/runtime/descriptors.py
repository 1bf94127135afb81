"""Host file descriptors guests hold through their granted folders: counted, bounded per guest.

wasmtime's WASI opens a host descriptor for each file, folder or directory stream a guest opens in
its `dirs`, with no count or limit (none in wasmtime-py 50's C API). So the host counts from the
process's table (`/proc/self/fd`, or `/dev/fd` + `F_GETPATH`). Invariants: only what the process
held before its first guest with folders is left out (one baseline per process: a run never
inherits what another opened); a guest holds every other descriptor naming a path in its folders
(less their preopens; shared among the running guests granted a folder), see `_Ledger._count`.
Counted on the guest's thread each epoch tick of running wasm (`Watch.check`) and every
`WATCH_INTERVAL` by a watcher thread, which stops a sleeping or waiting guest (`Watch.on_over`).
Over `max_open_files` a guest is stopped; with under `HOST_RESERVE` left, the one holding the most.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
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

WATCH_INTERVAL: Final = 0.1
"""Seconds between two counts by the watcher thread (while any guest with folders runs): how long a
guest that does not run wasm (it sleeps, or waits in the host) may stay past a bound."""

LOG_INTERVAL: Final = 10.0
"""Seconds between two log lines of the watcher about the guests it stopped (one line per interval)."""

RAISED_LIMIT_CAP: Final = 1 << 20
"""Highest soft `RLIMIT_NOFILE` the host raises itself to (when the hard limit is unlimited)."""

_FD_DIR: Final = "/proc/self/fd" if sys.platform.startswith("linux") else "/dev/fd"

_UNREADABLE: Final = "\0unreadable"
"""The path of a descriptor whose path cannot be read (`ENAMETOOLONG`): inside every guest's folders."""

Entry = tuple[int, str]
"""(descriptor, the path it names, or a description such as `socket:[…]`, or `_UNREADABLE`)."""

OnOver = Callable[[str], None]
"""Stops a guest from another thread (the watcher), with the reason."""


@dataclass(eq=False)
class Watch:
    """The descriptors of one guest run: made by `watch`, checked by `check`, ended by `close`."""

    roots: tuple[str, ...]
    """The real paths of the guest's granted folders."""
    limit: Limit
    writable: bool = False
    """Whether one of its folders is writable: only such a guest can make a path past `PATH_MAX`
    (renaming folders above files it holds open), so descriptors whose path cannot be read count
    for these guests (for every guest when none is running)."""
    held: int = 0
    """Descriptors the guest held at the last count."""
    _ledger: _Ledger | None = field(default=None, repr=False)
    _on_over: OnOver | None = field(default=None, repr=False)
    _stopping: bool = field(default=False, repr=False)

    def on_over(self, stop: OnOver) -> None:
        """Have the watcher thread call `stop(reason)` (once) when the guest is past a bound while
        it runs no wasm; set once its `RunGuard` exists."""
        self._on_over = stop

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
    writable = any(grant.writable for grant in dirs)
    return _LEDGER.register(tuple(os.path.realpath(grant.host) for grant in dirs), limit, writable)


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
    """The watches of every running guest, the process's baseline and the last count."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: list[Watch] = []
        self._baseline: set[Entry] | None = None
        """(descriptor, path) open before the first guest with folders: never a guest's."""
        self._size = -1
        """Entries in the descriptor table at the last count."""
        self._counted = 0.0
        self._short: str | None = None
        """Why the host is short of descriptors at the last count, or None."""
        self._worst: Watch | None = None
        self._soft_limit: int | None = None
        self._watcher: threading.Thread | None = None
        self._logged = -LOG_INTERVAL
        self._unlogged = 0

    def register(self, roots: tuple[str, ...], limit: Limit, writable: bool = False) -> Watch:
        with self._lock:
            if self._soft_limit is None:
                self._soft_limit = raise_soft_limit()
            if self._baseline is None:
                self._baseline = set(_descriptors())
            watch = Watch(roots, limit, writable, _ledger=self)
            self._watches.append(watch)
            self._size, self._counted = -1, 0.0
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._watch, name="agent-host-descriptors", daemon=True)
                self._watcher.start()
            return watch

    def forget(self, watch: Watch) -> None:
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)
            if self._worst is watch:
                self._worst = None
            self._size, self._counted = -1, 0.0

    def check(self, watch: Watch) -> str | None:
        """`watch`'s verdict at the last count (counting anew when the table changed). When it is
        over, every other guest over at the same count (a shared folder's budget) is stopped too,
        at once: the guest stopped here closes its descriptors, and a later count would spare them."""
        size = _table_size()
        now = time.monotonic()
        over: list[tuple[OnOver, str]] = []
        with self._lock:
            since = now - self._counted
            if (size != self._size and since >= MIN_RESCAN) or since > RESCAN:
                self._count(size, now)
            verdict = self._verdict(watch)
            if verdict is not None:
                over = self._stopping_all_over(skip=watch)
        self._stop(over)
        return verdict

    def _stopping_all_over(self, skip: Watch | None = None) -> list[tuple[OnOver, str]]:
        """The stops of every guest past a bound at the last count, not yet stopping (the lock is held)."""
        over: list[tuple[OnOver, str]] = []
        for other in self._watches:
            if other is skip or other._on_over is None or other._stopping:
                continue
            reason = self._verdict(other)
            if reason is not None:
                other._stopping = True
                over.append((other._on_over, reason))
        return over

    def _stop(self, over: list[tuple[OnOver, str]]) -> None:
        for stop, reason in over:
            try:
                stop(reason)
            except Exception:  # boundary: one failed stop must not spare the others
                logger.exception("stopping a guest for its file descriptors failed")
        if over:
            self._log(len(over), over[0][1])

    def _verdict(self, watch: Watch) -> str | None:
        """Why `watch`'s guest must stop at the last count, or None (the lock is held)."""
        if watch.held > watch.limit.value:
            return (
                f"file descriptor limit (limit-exceeded): the run holds {watch.held} host file descriptors "
                f"(open files, folders, directory streams) in its granted folders, more than "
                f"{int(watch.limit.value)} ({watch.limit.key})"
            )
        if self._short is not None and watch is self._worst:
            return self._short
        return None

    def _watch(self) -> None:
        """The watcher thread: count every `WATCH_INTERVAL` and stop the guests past a bound; ends
        when no guest with folders runs."""
        while True:
            time.sleep(WATCH_INTERVAL)  # a period, not a synchronisation: the count is read anew
            with self._lock:
                if not self._watches:
                    self._watcher = None
                    return
                try:
                    self._count(_table_size(), time.monotonic())
                except Exception:  # boundary: a failed count must not end the watcher
                    logger.exception("counting the host file descriptors of the guests failed")
                    continue
                over = self._stopping_all_over()
            self._stop(over)

    def _log(self, stopped: int, reason: str) -> None:
        """One warning per `LOG_INTERVAL` at most, with the count of stops since the last one."""
        self._unlogged += stopped
        now = time.monotonic()
        if now - self._logged >= LOG_INTERVAL:
            logger.warning("stopped %d guest run(s) for their file descriptors; the last: %s", self._unlogged, reason)
            self._logged, self._unlogged = now, 0

    def _count(self, size: int, now: float) -> None:
        """Count every watch's descriptors from one read of the table (the lock is held).

        Baseline pairs seen closed leave it for good (Linux reuses the lowest free numbers: a pair
        reopened later is a guest's). Paths are real paths (a symlinked or twice-granted folder is
        one folder; ` (deleted)` stripped; files, folders, directory streams alike), each preopen of
        a folder among the running guests is taken off once, a descriptor in a folder several
        running guests share counts for each, and one whose path cannot be read (past `PATH_MAX`)
        for every guest granted a writable folder (who alone can make such a path), or every guest
        when none is. The reserve counts every descriptor of the process (sockets too)."""
        table = list(_descriptors())
        baseline = self._baseline if self._baseline is not None else set()
        baseline &= set(table)  # a pair seen closed is never the baseline's again
        self._baseline = baseline
        preopens: dict[str, int] = {}
        for watch in self._watches:
            for root in watch.roots:
                preopens[root] = preopens.get(root, 0) + 1
        counted = [entry for entry in table if entry not in baseline]
        unreadable = sum(1 for _, path in counted if path == _UNREADABLE)
        named = [path for _, path in counted if path.startswith("/")]
        blamed = any(watch.writable for watch in self._watches)
        for watch in self._watches:
            roots = set(watch.roots)
            mine = [path for path in named if _under(path, roots)]
            at_root: dict[str, int] = {}
            for path in mine:
                if path in roots:
                    at_root[path] = at_root.get(path, 0) + 1
            theirs = unreadable if watch.writable or not blamed else 0
            watch.held = len(mine) + theirs - sum(min(count, preopens[path]) for path, count in at_root.items())
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


def _descriptors() -> Iterable[Entry]:
    """Every open descriptor of the process: (descriptor, the path it names, ` (deleted)` stripped,
    or what it is (`socket:[…]`, `pipe:[…]`, `anon_inode:…`), or `_UNREADABLE`)."""
    try:
        names = os.listdir(_FD_DIR)
    except OSError:
        return
    for name in names:
        try:
            fd = int(name)
            path = _path_of(fd)
        except ValueError:
            continue
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:  # a path past PATH_MAX: inside a guest's folder, surely
                yield fd, _UNREADABLE
            continue  # closed meanwhile
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
