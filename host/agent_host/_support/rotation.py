"""Log files that cannot fill the disk: appended to, rotated once they reach a size, old ones dropped.

`RotatingFile(path, bounds)` appends bytes to `path`. A write that would take the file past
`bounds.max_bytes` first renames it `path.1` (`path.1` becomes `path.2` ...), keeping `bounds.keep`
old files and removing older ones; with `keep = 0` the file is emptied instead. So the files of
one log hold at most `(keep + 1) * max_bytes` plus one write. A write is never split across
files (a line stays whole). Files are created with `mode`; an existing file with more permissions
is tightened to it. Another process that rotated the file (logrotate, a second host) is noticed at
the next write (the path no longer names the open file) and the file is reopened.
Not thread-safe: callers serialize their writes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_host.config.defaults import (
    DEFAULT_AUDIT_LOG_KEEP,
    DEFAULT_AUDIT_LOG_MAX,
    DEFAULT_SERVER_LOG_KEEP,
    DEFAULT_SERVER_LOG_MAX,
)

DEFAULT_MODE: Final = 0o644
"""Permissions of a new log file that holds nothing secret (the umask still applies)."""

PRIVATE_MODE: Final = 0o600
"""Permissions of a log file that may hold secrets (tool arguments): the user alone."""


@dataclass(frozen=True)
class LogBounds:
    """How big one log may grow: rotated at `max_bytes`, `keep` rotated files kept."""

    max_bytes: int
    keep: int


SERVER_LOG_BOUNDS: Final = LogBounds(DEFAULT_SERVER_LOG_MAX, DEFAULT_SERVER_LOG_KEEP)
"""A stdio server's stderr log, by default (`[host] server_log_max`, `server_log_keep`)."""

AUDIT_LOG_BOUNDS: Final = LogBounds(DEFAULT_AUDIT_LOG_MAX, DEFAULT_AUDIT_LOG_KEEP)
"""The audit log, by default (`[host] audit_log_max`, `audit_log_keep`)."""


class RotatingFile:
    """One log file, rotated by size (see the module docstring)."""

    def __init__(self, path: Path, bounds: LogBounds, *, mode: int = DEFAULT_MODE) -> None:
        """Open (create) `path` for appending; raises `OSError` when that fails."""
        if bounds.max_bytes < 1 or bounds.keep < 0:
            raise ValueError(f"log bounds need max_bytes >= 1 and keep >= 0, got {bounds}")
        self.path = path
        self.bounds = bounds
        self._mode = mode
        self._fd = self._open()

    def _open(self) -> int:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, self._mode)
        try:
            current = stat.S_IMODE(os.fstat(fd).st_mode)
            if current & ~self._mode:
                os.fchmod(fd, current & self._mode)
        except OSError:
            os.close(fd)
            raise
        return fd

    def write(self, data: bytes) -> None:
        """Append `data` whole, rotating first when it would take the file past the bound."""
        if self._fd < 0:
            raise ValueError(f"{self.path}: written after close")
        self._follow()
        size = os.fstat(self._fd).st_size
        if size and size + len(data) > self.bounds.max_bytes:
            self._rotate()
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def _follow(self) -> None:
        """Reopen when the path no longer names the open file (rotated or removed by someone else)."""
        try:
            same = os.path.samestat(os.stat(self.path, follow_symlinks=False), os.fstat(self._fd))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(self._fd)
            self._fd = self._open()

    def _rotate(self) -> None:
        keep = self.bounds.keep
        if keep == 0:
            os.ftruncate(self._fd, 0)
            return
        old = [self.path.with_name(f"{self.path.name}.{n}") for n in range(1, keep + 1)]
        old[-1].unlink(missing_ok=True)
        for newer, older in zip(reversed(old[:-1]), reversed(old[1:]), strict=True):
            if newer.exists():
                newer.replace(older)
        self.path.replace(old[0])
        os.close(self._fd)
        self._fd = self._open()

    def close(self) -> None:
        """Close the file; idempotent."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
