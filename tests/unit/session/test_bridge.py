"""The bridge runs coroutines on its loop thread for blocking callers, with deadlines that cancel."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import signal
import threading
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import pytest

from agent_host.errors import ErrorCode, ToolingError
from agent_host.session.bridge import Bridge

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


def _busy_loop(bridge: Bridge) -> tuple[threading.Event, concurrent.futures.Future[None]]:
    """Block the bridge's loop thread until the returned event is set (once it is blocked)."""
    entered, release = threading.Event(), threading.Event()

    async def block() -> None:
        entered.set()
        release.wait(WAIT)  # blocks the loop thread itself: nothing else runs on it meanwhile

    blocked = bridge.start(block)
    assert entered.wait(WAIT)
    return release, blocked


def test_hand_offs_made_while_the_loop_is_busy_wake_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-off made while the loop is busy does not write to the loop's wake-up socket again (with
    16 threads calling, that was one system call on each side per call): coroutines handed over while
    a wake-up is pending join it, and all run."""
    with Bridge() as bridge:
        release, blocked = _busy_loop(bridge)
        wakeups: list[object] = []
        loop = bridge._loop
        original = loop.call_soon_threadsafe

        def counting(callback: Callable[..., object], *args: object, **kwargs: Any) -> asyncio.Handle:
            wakeups.append(callback)
            return original(callback, *args, **kwargs)

        monkeypatch.setattr(loop, "call_soon_threadsafe", counting)

        async def double(x: int) -> int:
            return 2 * x

        futures = [bridge.start(double, x) for x in range(5)]
        release.set()
        assert [future.result(WAIT) for future in futures] == [0, 2, 4, 6, 8]
        blocked.result(WAIT)
        assert len(wakeups) == 1


def test_coroutines_handed_over_together_keep_their_own_thread_context() -> None:
    """Tasks started by one wake-up still run in a copy of the context of the thread that handed each over."""
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")

    async def whose() -> str:
        return who.get()

    with Bridge() as bridge:
        release, blocked = _busy_loop(bridge)
        futures: dict[str, concurrent.futures.Future[str]] = {}

        def hand_over(name: str) -> None:
            who.set(name)
            futures[name] = bridge.start(whose)

        threads = [threading.Thread(target=hand_over, args=(name,)) for name in ("a", "b", "c")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
        release.set()
        assert {name: future.result(WAIT) for name, future in futures.items()} == {"a": "a", "b": "b", "c": "c"}
        blocked.result(WAIT)


def test_cancelling_a_hand_off_before_its_task_started_cancels_the_task() -> None:
    """As with `asyncio.run_coroutine_threadsafe`: the task runs to its first suspension and is cancelled there."""
    ran, cancelled = threading.Event(), threading.Event()

    async def slow() -> None:
        ran.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    with Bridge() as bridge:
        release, blocked = _busy_loop(bridge)
        future = bridge.start(slow)
        assert future.cancel()
        release.set()
        assert ran.wait(WAIT) and cancelled.wait(WAIT)
        blocked.result(WAIT)


def test_run_foreground_returns_the_value_and_raises_what_the_coroutine_raised() -> None:
    """`serve` runs its server on the bridge loop. A server that fails at once (a port in use) must
    reach the command, not hang it waiting on the finished task again."""
    with Bridge() as bridge:

        async def where() -> str:
            return threading.current_thread().name

        async def fail() -> None:
            raise ToolingError(ErrorCode.UNAVAILABLE, "port in use")

        assert bridge.run_foreground(where) == "agent-host-bridge"
        with pytest.raises(ToolingError, match="port in use"):
            bridge.run_foreground(fail, stop=lambda: None)


@pytest.mark.parametrize(("graceful", "expected"), [(True, "stopped"), (False, "cancelled")])
def test_an_exception_in_the_waiting_thread_ends_the_coroutine_first_then_is_raised(
    graceful: bool, expected: str
) -> None:
    """A signal handler's exception in the waiting thread calls `stop` on the loop (the server's
    graceful end) or, without `stop`, cancels the coroutine; it is raised once the coroutine ended."""
    assert threading.current_thread() is threading.main_thread()

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGUSR1, interrupted)
    try:
        with Bridge() as bridge:
            stopped = threading.Event()
            ended: list[str] = []

            async def server() -> None:
                main = threading.main_thread().ident
                assert main is not None
                signal.pthread_kill(main, signal.SIGUSR1)  # the main thread is waiting for this coroutine
                try:
                    await anyio.to_thread.run_sync(stopped.wait, abandon_on_cancel=True)
                    ended.append("stopped")
                except BaseException:
                    ended.append("cancelled")
                    raise

            with pytest.raises(KeyboardInterrupt):
                bridge.run_foreground(server, stop=stopped.set if graceful else None)
            assert ended == [expected]
            stopped.set()
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_run_awaits_a_coroutine_on_the_bridge_loop_and_cancelling_the_caller_cancels_it() -> None:
    """`serve`'s proxied calls are coroutines handed to the bridge loop from a coroutine (from another
    loop in process, on the same loop in the command)."""
    with Bridge() as bridge:
        started, cancelled = threading.Event(), threading.Event()
        ended: list[str] = []

        async def where() -> str:
            return threading.current_thread().name

        async def forever() -> None:
            started.set()
            try:
                await anyio.sleep_forever()
            except BaseException:
                ended.append(threading.current_thread().name)
                cancelled.set()
                raise

        async def caller() -> tuple[str, str]:
            from_elsewhere = await bridge.run(where)
            on_the_loop = bridge.call(_nested_run, bridge, where, timeout=WAIT, on_timeout=_timeout)
            async with anyio.create_task_group() as tg:
                tg.start_soon(bridge.run, forever)
                await anyio.to_thread.run_sync(started.wait, WAIT)
                tg.cancel_scope.cancel()
            return from_elsewhere, on_the_loop

        assert anyio.run(caller) == ("agent-host-bridge", "agent-host-bridge")
        assert cancelled.wait(WAIT)
        assert ended == ["agent-host-bridge"]  # the task on the bridge loop was cancelled too


async def _nested_run(bridge: Bridge, fn: Callable[[], Any]) -> Any:
    return await bridge.run(fn)
