"""The guests many test modules share, built and compiled once per run, before the tests need them.

`Prebuild.start(guests)` builds and compiles each guest folder into the run's cache on two
background threads of the process that starts the run (pytest-xdist's controller, which runs no
test): workers that need one of them meanwhile wait for it in `cache.turn` rather than build it
again, and find the rest ready. A failure is kept, not raised: the tests that need that guest fail
with the build's own error. `close()` stops what is left (componentize-py and the compiler are
ended) and waits for the threads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Final

from agent_host._support.paths import cache_dir
from agent_host._support.stopping import StopToken
from agent_host.components.build import build_guest
from agent_host.errors import HostError
from agent_host.runtime.engine import Runtime

logger = logging.getLogger(__name__)

THREADS: Final = 2
"""Builds at once: the machine the suite is sized for has two cores."""


class Prebuild:
    """Builds and compiles running in the background (see the module docstring)."""

    def __init__(self, pool: ThreadPoolExecutor, futures: list[Future[None]], stop: StopToken) -> None:
        self._pool, self._futures, self._stop = pool, futures, stop

    @classmethod
    def start(cls, guests: Sequence[Path]) -> Prebuild:
        """Start building and compiling `guests`, in their order (the most shared first)."""
        stop = StopToken()
        pool = ThreadPoolExecutor(THREADS, thread_name_prefix="prebuild")
        return cls(pool, [pool.submit(_prepare, guest, stop) for guest in guests], stop)

    def failures(self) -> list[str]:
        """What failed among the builds that ended, one line each."""
        return [f"{future.exception()}" for future in self._futures if future.done() and future.exception()]

    def close(self) -> None:
        """Stop the builds still running and wait for the threads."""
        self._stop.stop("the test run ended")
        self._pool.shutdown(wait=True, cancel_futures=True)


def _prepare(guest: Path, stop: StopToken) -> None:
    try:
        wasm = build_guest(guest, stop=stop)
        with Runtime(cache_dir()) as runtime:
            runtime.load(wasm, stop)
    except HostError as exc:  # the tests needing it report it; the others go on
        logger.warning("prebuilding %s failed: %s", guest.name, exc)
        raise
