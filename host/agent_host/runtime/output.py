"""Forwarding a guest's output: complete lines of its stdout and stderr files, to the host's stderr.

Lines are prefixed with `[NAME] ` (the agent's name) and copied while the guest runs, every
`FORWARD_INTERVAL` seconds, by a thread of their own; `stop()` copies what is left, including a
last line without its newline. Never to the host's stdout, which carries the answer.

Bounded whatever the guest writes: the files are read `READ_CHUNK` bytes at a time, and a line is
kept up to `MAX_OUTPUT_LINE` bytes (the bound of a guest's log message), the rest of it counted and
dropped, then forwarded with a marker saying how much was cut. So the host holds at most one chunk
and one cut line per file, however long a line (or output without any newline) is.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Protocol, TextIO

from agent_host._support.printable import printable
from agent_host.session import MAX_LOG_MESSAGE

FORWARD_INTERVAL: Final = 0.05
"""Seconds between polls of the guest's output files."""

MAX_OUTPUT_LINE: Final = MAX_LOG_MESSAGE
"""Bytes of one output line forwarded (as a guest log message is cut); the rest is cut with a marker."""

READ_CHUNK: Final = 64 * 1024
"""Bytes read from a guest's output file at a time."""


class _Line:
    """The line being read: its first `MAX_OUTPUT_LINE` bytes, and how many bytes after those were cut."""

    def __init__(self) -> None:
        self.kept = bytearray()
        self.cut = 0

    def add(self, data: bytes) -> None:
        room = MAX_OUTPUT_LINE - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.cut += max(0, len(data) - max(room, 0))

    def take(self) -> str:
        """The line as text (cut with a marker), and start the next one."""
        text = self.kept.decode("utf-8", errors="replace")
        if self.cut:
            text += f"... [{self.cut} bytes cut]"
        self.kept, self.cut = bytearray(), 0
        return text

    def __bool__(self) -> bool:
        return bool(self.kept) or self.cut > 0


class Counted(Protocol):
    """An output file that says how many bytes it holds (`output_files.CappedFile`): it is opened
    only when it holds more than was forwarded."""

    path: Path
    written: int


class Forwarder:
    """Copies complete lines from the guest's output files to the host's stderr, prefixed."""

    def __init__(self, agent: str, outputs: Sequence[Path | Counted], sink: TextIO) -> None:
        self._prefix = f"[{agent}] "
        self._counted = {output.path: output for output in outputs if not isinstance(output, Path)}
        paths = [output if isinstance(output, Path) else output.path for output in outputs]
        self._paths = paths
        self._offsets = dict.fromkeys(paths, 0)
        self._lines = {path: _Line() for path in paths}
        self._sink = sink
        self._written = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"output-{agent}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(FORWARD_INTERVAL):
            self._pump(final=False)

    def stop(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()
        self._pump(final=True)

    def _pump(self, *, final: bool) -> None:
        for path in self._paths:
            line = self._lines[path]
            counted = self._counted.get(path)
            if counted is not None and counted.written == self._offsets[path]:
                if final and line:
                    self._write(line.take())
                continue  # nothing new: the file is not opened (nor made, for a guest that printed nothing)
            try:
                with path.open("rb") as handle:
                    handle.seek(self._offsets[path])
                    while chunk := handle.read(READ_CHUNK):
                        self._offsets[path] += len(chunk)
                        self._feed(line, chunk)
            except OSError:
                continue
            if final and line:
                self._write(line.take())
        if self._written:
            self._written = False
            self._sink.flush()

    def _feed(self, line: _Line, chunk: bytes) -> None:
        *complete, rest = chunk.split(b"\n")
        for piece in complete:
            line.add(piece)
            self._write(line.take())
        line.add(rest)

    def _write(self, text: str) -> None:
        self._sink.write(f"{self._prefix}{printable(text, len(text))}\n")  # cut already; escaped
        self._written = True
