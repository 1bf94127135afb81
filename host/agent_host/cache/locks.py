"""Which cached files a running host uses: advisory `flock` locks, shared by users, exclusive by the pruner.

A process that uses a cached file holds a shared lock on it (`pin`, counted per path, until `unpin` or
the process exits); `publish` renames a finished temp file into place already pinned. The pruner
removes a file only under an exclusive lock taken without waiting (`lock_all`), so a pinned file is
never removed, and a pinner that waited while the pruner held the lock sees the file gone (no link
left, or another file at its path) and makes it anew. Locks belong to open file descriptions, so a
process's own pins keep its own pruner off too. Descriptors are not inherited by child processes.

`turn` makes one process at a time build or compile a given key (an exclusive lock on a file of
`locks/`): the others wait, then find the result in the cache instead of making it again.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Final

from agent_host.cache.contents import FOLDER_MODE

TURN_POLL: Final = 0.1
"""Seconds between two tries of a `turn` another process holds."""

_never = threading.Event()

_pins: dict[Path, list[int]] = {}
"""Path -> [descriptor holding the shared lock, count]."""
_pins_lock = threading.Lock()


def pin(path: Path) -> bool:
    """Hold a shared lock on `path` until `unpin` (or the process exits): no prune removes it
    meanwhile. False when `path` does not exist (any more): the caller makes it anew."""
    key = path.absolute()
    with _pins_lock:
        held = _pins.get(key)
        if held is not None:
            held[1] += 1
            return True
        fd = _open_shared(key)
        if fd is None:
            return False
        _pins[key] = [fd, 1]
        return True


def publish(tmp: Path, target: Path) -> None:
    """Rename `tmp` to `target`, pinned from before the rename on (so no prune can take it between)."""
    fd = os.open(tmp, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.close(fd)
        raise
    key = target.absolute()
    with _pins_lock:
        old = _pins.pop(key, None)
        _pins[key] = [fd, 1 + (old[1] if old else 0)]
    if old is not None:
        os.close(old[0])


def unpin(path: Path) -> None:
    """Release one `pin` of `path` (nothing when it is not pinned)."""
    key = path.absolute()
    with _pins_lock:
        held = _pins.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] == 0:
            del _pins[key]
            os.close(held[0])


def pinned(path: Path) -> bool:
    """Whether this process pins `path`."""
    with _pins_lock:
        return path.absolute() in _pins


def lock_all(paths: Iterable[Path]) -> list[int] | None:
    """Exclusive locks on every existing path of `paths`, taken without waiting; None (and no lock
    kept) when one is held by a pin. Release them with `release`."""
    fds: list[int] = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        fds.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            release(fds)
            return None
    return fds


def release(fds: list[int]) -> None:
    """Release locks taken by `lock_all`."""
    for fd in fds:
        os.close(fd)


def _open_shared(path: Path) -> int | None:
    for _ in range(3):  # a file replaced while we waited for the lock: lock the new one
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        fcntl.flock(fd, fcntl.LOCK_SH)
        mine = os.fstat(fd)
        try:
            now = os.stat(path)
        except FileNotFoundError:
            now = None
        if mine.st_nlink > 0 and now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
            return fd
        os.close(fd)
    return None


@contextmanager
def turn(
    lock: Path,
    wait: Callable[[float], bool] | None = None,
    waiting: Callable[[], AbstractContextManager[object]] | None = None,
) -> Iterator[bool]:
    """Run the body holding the exclusive lock on `lock` (created, with its folder: mode 0700), so that one
    process at a time makes what it guards; the body then looks in the cache first, for what the
    process before it made. While another process holds it, `wait(TURN_POLL)` runs between tries
    (a stop token's `wait`: True when stopped) inside `waiting()` (a progress line); a stop yields
    False, nothing held. The file is removed at the end, so lock files do not pile up: a process
    that opened it just before may then make the same thing a second time, never a wrong one (the
    results are published atomically)."""
    lock.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if not _try_exclusive(fd):
            pause = wait or _never.wait
            with (waiting or nullcontext)():
                while not _try_exclusive(fd):
                    if pause(TURN_POLL):
                        yield False
                        return
        try:
            yield True
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _try_exclusive(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
