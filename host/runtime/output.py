"""Forwarding a guest's output: complete lines of its stdout and stderr files, to the host's stderr.

Lines are prefixed with `[NAME] ` (the agent's name) and copied while the guest runs, every
`FORWARD_INTERVAL` seconds, by a thread of their own; `stop()` copies what is left, including a
last line without its newline. Never to the host's stdout, which carries the answer.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Final, TextIO

FORWARD_INTERVAL: Final = 0.05
"""Seconds between polls of the guest's output files."""


class Forwarder:
    """Copies complete lines from the guest's output files to the host's stderr, prefixed."""

    def __init__(self, agent: str, paths: list[Path], sink: TextIO) -> None:
        self._prefix = f"[{agent}] "
        self._paths = paths
        self._offsets = dict.fromkeys(paths, 0)
        self._partial = dict.fromkeys(paths, b"")
        self._sink = sink
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
            try:
                with path.open("rb") as handle:
                    handle.seek(self._offsets[path])
                    chunk = handle.read()
            except OSError:
                continue
            self._offsets[path] += len(chunk)
            lines = (self._partial[path] + chunk).split(b"\n")
            tail = lines.pop()
            if final and tail:
                lines.append(tail)
                tail = b""
            self._partial[path] = tail
            for line in lines:
                self._sink.write(f"{self._prefix}{line.decode('utf-8', errors='replace')}\n")
            if lines:
                self._sink.flush()
