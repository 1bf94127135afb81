"""Progress lines on stderr for slow steps (building a guest, first compile of a component).

`with progress("compiling demo.wasm"):` prints `compiling demo.wasm ...` at once. On a terminal the
line then shows the elapsed seconds, updated every `TICK` seconds; elsewhere (CI logs, pipes) the
start line and the end line are all that is printed, so logs stay readable. The end line says
`done in N.N s`, `stopped after N.N s` on a stop request, or `failed after N.N s` when the body
raised. Output never goes to stdout.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO

from host.stopping import Interrupted

TICK: Final = 1.0
"""Seconds between elapsed-time updates on a terminal."""


@contextmanager
def progress(what: str, stream: TextIO | None = None) -> Iterator[None]:
    out = stream if stream is not None else sys.stderr
    interactive = out.isatty()
    start = time.monotonic()
    stop = threading.Event()
    out.write(f"agent-host: {what} ...")
    out.write("" if interactive else "\n")
    out.flush()

    def tick() -> None:
        while not stop.wait(TICK):
            out.write(f"\ragent-host: {what} ... {time.monotonic() - start:.0f} s")
            out.flush()

    ticker = threading.Thread(target=tick, name="agent-host-progress", daemon=True) if interactive else None
    if ticker is not None:
        ticker.start()
    outcome = "failed after"
    try:
        yield
        outcome = "done in"
    except Interrupted:
        outcome = "stopped after"
        raise
    finally:
        stop.set()
        if ticker is not None:
            ticker.join()
        prefix = "\r" if interactive else ""
        out.write(f"{prefix}agent-host: {what}: {outcome} {time.monotonic() - start:.1f} s\n")
        out.flush()
