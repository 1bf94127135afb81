"""A guest's stdout and stderr files on disk, bounded: a guest cannot fill the host's disk by printing.

wasmtime hands each write of the guest to `CappedFile` (WASI's custom output), which appends it to
the file that `output.Forwarder` copies from. Once `limit` bytes were written in the run, the rest
is dropped: the file ends with one notice line naming the bound and the key that sets it, the
host's log says so once per run and stream, and the guest is not told (its writes succeed, as to a
full log). A write the disk refuses is dropped the same way. The file is created with mode 0600
(never an existing one), at the guest's first write (a guest that prints nothing costs no file),
and removed by `close`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Final

from agent_host.config import format_size
from agent_host.policy.grants import Limit

logger = logging.getLogger(__name__)

FILE_MODE: Final = 0o600
"""Permissions of a guest's output files: the host's user alone."""


class CappedFile:
    """One output stream of one guest run (see the module docstring). Called by wasmtime on the
    guest's thread with each write; `close` after the run."""

    def __init__(self, path: Path, limit: Limit, *, agent: str, stream: str) -> None:
        self.path = path
        self._limit = limit
        self._room = int(limit.value)
        self._agent = agent
        self._stream = stream
        self.dropped = 0
        """Bytes dropped beyond the limit (or refused by the disk)."""
        self.written = 0
        """Bytes in the file: what the guest wrote within the limit, and the notice of the cut."""
        self._broken = False
        """The disk refused a write: nothing more is written."""
        self._fd = -1
        self._closed = False

    def __call__(self, data: bytes) -> int:
        """Write `data` (what fits of it); always report it all written."""
        if self._closed or self._broken or (self._fd < 0 and not self._open()):
            self.dropped += len(data)
            return len(data)
        kept = data[: self._room]
        if kept:
            self._room -= len(kept)
            self._write(kept)
        if len(kept) < len(data):
            if not self.dropped:
                self._cut()
            self.dropped += len(data) - len(kept)
        return len(data)

    def _cut(self) -> None:
        size = format_size(int(self._limit.value))
        self._write(
            f"\n[agent-host: {self._stream} cut at {size} ({self._limit.key}); the rest of it is dropped]\n".encode()
        )
        logger.warning(
            "agent %r wrote more than %s to %s; the rest is dropped (%s)",
            self._agent,
            size,
            self._stream,
            self._limit.key,
        )

    def _open(self) -> bool:
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
            self._fd = os.open(self.path, flags, FILE_MODE)
        except OSError as exc:
            self._refused(exc)
            return False
        return True

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                done = os.write(self._fd, view)
                self.written += done
                view = view[done:]
        except OSError as exc:
            self.dropped += len(view)
            self._refused(exc)

    def _refused(self, exc: OSError) -> None:
        if not self._broken:
            self._broken = True
            logger.warning("cannot write the %s of agent %r to %s: %s", self._stream, self._agent, self.path, exc)

    def close(self) -> None:
        """Close the file and remove it (later writes are dropped); idempotent."""
        self._closed = True
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self.path.unlink(missing_ok=True)
