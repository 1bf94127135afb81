"""Work on large untrusted input runs off the event loop, on a bounded number of worker threads;
small work stays on the loop (a thread hand-over would cost more than it)."""

from __future__ import annotations

import threading

import anyio
import anyio.lowlevel
import pytest

from agent_host._support import off_loop

pytestmark = pytest.mark.anyio


async def test_small_work_runs_on_the_loop_and_large_work_on_a_worker() -> None:
    loop_thread = threading.get_ident()
    assert await off_loop.run(threading.get_ident, size=off_loop.INLINE) == loop_thread
    assert await off_loop.run(threading.get_ident, size=off_loop.INLINE + 1) != loop_thread


async def test_at_most_threads_workers_run_at_once_and_the_loop_stays_free() -> None:
    started = threading.Semaphore(0)
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        started.release()
        assert release.wait(10)
        with lock:
            running -= 1

    async with anyio.create_task_group() as tg:
        for _ in range(off_loop.THREADS + 3):
            tg.start_soon(lambda: off_loop.run(work, size=off_loop.INLINE + 1))
        for _ in range(off_loop.THREADS):
            assert await anyio.to_thread.run_sync(started.acquire, True, 10)
        await anyio.lowlevel.checkpoint()  # the loop runs while every worker is busy
        with lock:
            assert running == off_loop.THREADS
        release.set()
    assert most == off_loop.THREADS


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, 1),
        ({"a": [1, 2]}, 5),
        ("x" * (3 * off_loop.INLINE), 4),
        ([0] * 10**6, off_loop.COUNT_LIMIT),
        ({str(i): i for i in range(10**5)}, off_loop.COUNT_LIMIT),
    ],
)
def test_size_of_counts_values_up_to_its_limit(value: object, expected: int) -> None:
    assert off_loop.size_of(value) == expected
