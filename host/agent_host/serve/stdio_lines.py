"""The input of `agent-host serve --stdio`, one bounded line (one JSON-RPC message) at a time.

The SDK's stdio transport reads each line whole, whatever its size, before it parses it: a 300 MiB
line held 300 MiB. `BoundedLines` is the text it reads instead: the input is read `READ_CHUNK` bytes
at a time from a private duplicate of fd 0 (`claimed_stdin`; fd 0 itself then reads the null device,
as the SDK's own claim does, so that nothing else in the process reads the wire), and a line over
`max_line` bytes is never held: what is read of it is dropped up to its end, and `refuse` (set once
the transport's write stream exists) answers it. It holds at most `max_line` + `READ_CHUNK` bytes.
Reads run in a worker thread abandoned on cancellation (the private descriptor is never closed
under it).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Final, Self

import anyio.to_thread

READ_CHUNK: Final = 64 * 1024
"""Bytes read from the input at once."""


@contextmanager
def claimed_stdin() -> Iterator[int]:
    """A private duplicate of fd 0 for the block, fd 0 pointing at the null device meanwhile."""
    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield private
    finally:
        os.dup2(private, 0)


class BoundedLines:
    """The lines of `fd` as text (UTF-8, errors replaced), each at most `max_line` bytes (see the
    module docstring); an async iterator, as the SDK's stdio transport reads its input."""

    def __init__(self, fd: int, max_line: int) -> None:
        self._fd = fd
        self._max = max_line
        self._buffer = bytearray()
        self._scanned = 0
        """Bytes at the start of `_buffer` known to hold no newline."""
        self._dropping = False
        """Whether the line being read is over `max_line` (what is read of it is dropped)."""
        self._ended = False
        self.refuse: Callable[[], Awaitable[None]] | None = None
        """Answers a line that was over `max_line`."""

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        while True:
            newline = self._buffer.find(b"\n", self._scanned)
            if newline >= 0:
                line = bytes(self._buffer[: newline + 1])
                del self._buffer[: newline + 1]
                self._scanned = 0
                if self._dropping or newline > self._max:
                    self._dropping = False
                    await self._refused()
                    continue
                return line.decode("utf-8", "replace")
            self._scanned = len(self._buffer)
            if self._dropping or len(self._buffer) > self._max:
                self._dropping = True
                self._buffer.clear()
                self._scanned = 0
            if self._ended:
                if self._dropping:
                    self._dropping = False
                    await self._refused()
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                self._scanned = 0
                return line.decode("utf-8", "replace")
            chunk = await anyio.to_thread.run_sync(os.read, self._fd, READ_CHUNK, abandon_on_cancel=True)
            self._ended = not chunk
            self._buffer += chunk

    async def _refused(self) -> None:
        if self.refuse is not None:
            await self.refuse()
