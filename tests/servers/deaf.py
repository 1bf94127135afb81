"""A stdio MCP server that never answers, ignores its stdin closing and is slow to stop on SIGTERM.

`python -m tests.servers.deaf MARKER`: appends `pid N` to the file MARKER once started, then never
reads its stdin (so it never answers `initialize`) and lives `LINGER` seconds. SIGTERM appends
`SIGTERM` to MARKER and takes `LINGER` seconds to handle; SIGINT is ignored. Used to test that a stop
at a signal or a deadline kills it at once instead of waiting for it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType

LINGER = 60.0
"""Seconds the server lives, and takes to handle a SIGTERM."""


def _note(marker: Path, line: str) -> None:
    with marker.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")


if __name__ == "__main__":
    marker = Path(sys.argv[1])

    def slow_to_stop(signum: int, frame: FrameType | None) -> None:
        _note(marker, "SIGTERM")
        time.sleep(LINGER)

    signal.signal(signal.SIGTERM, slow_to_stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _note(marker, f"pid {os.getpid()}")
    time.sleep(LINGER)
