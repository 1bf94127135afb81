"""The bridge runs coroutines on its loop thread for blocking callers, with deadlines that cancel.

Provenance: issue 2, point 4 ("guest threads submit work to it with a deadline"); style.md §12, §17.
"""

from __future__ import annotations

import threading

import anyio
import pytest

from host.bridge import Bridge
from host.errors import ErrorCode, ToolingError

WAIT = 5.0


def _timeout() -> ToolingError:
    return ToolingError(ErrorCode.TIMEOUT, "too slow")


def test_call_runs_on_the_bridge_thread_and_returns_the_value() -> None:
    with Bridge() as bridge:

        async def where(x: int) -> tuple[str, int]:
            return threading.current_thread().name, x * 2

        assert bridge.call(where, 21, timeout=WAIT, on_timeout=_timeout) == ("agent-host-bridge", 42)


def test_exceptions_from_the_coroutine_reach_the_caller() -> None:
    with Bridge() as bridge:

        async def fail() -> None:
            raise ToolingError(ErrorCode.NOT_FOUND, "nothing here")

        with pytest.raises(ToolingError) as caught:
            bridge.call(fail, timeout=WAIT, on_timeout=_timeout)
        assert caught.value.code is ErrorCode.NOT_FOUND


def test_a_deadline_cancels_the_coroutine_and_raises_the_timeout_error() -> None:
    cancelled = threading.Event()
    with Bridge() as bridge:

        async def forever() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.set()

        with pytest.raises(ToolingError, match="too slow"):
            bridge.call(forever, timeout=0.05, on_timeout=_timeout)
        assert cancelled.wait(WAIT)


def test_the_nursery_outlives_calls_and_is_cancelled_at_close() -> None:
    started, stopped = threading.Event(), threading.Event()
    bridge = Bridge()

    async def owner() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()

    async def spawn() -> None:
        bridge.nursery.start_soon(owner)

    bridge.call(spawn, timeout=WAIT, on_timeout=_timeout)
    assert started.wait(WAIT)
    assert not stopped.is_set()
    bridge.close()
    assert stopped.is_set()


def test_close_runs_shutdown_is_idempotent_and_refuses_later_calls() -> None:
    ran = threading.Event()
    bridge = Bridge()

    async def shutdown() -> None:
        ran.set()

    async def noop() -> None:
        return None

    bridge.close(shutdown)
    bridge.close(shutdown)
    assert ran.is_set() and bridge.closed
    with pytest.raises(ToolingError) as caught:
        bridge.call(noop, timeout=WAIT, on_timeout=_timeout)
    assert caught.value.code is ErrorCode.UNAVAILABLE
