"""The bridge: one anyio event loop on a background thread, and the seam guest threads use.

One loop per host process, on the thread `agent-host-bridge` (an anyio blocking portal). Every
tooling coroutine runs there; guest threads never run async code themselves: they hand coroutines
to the loop with `Bridge.call` (and wait) or `Bridge.start` (and get a future).

Hand-offs wake the loop at most once per batch (`_Handoff`): a coroutine handed over while an
earlier hand-off is still waiting to be taken joins it, so many threads calling at once do not each
write to the loop's wake-up socket and make it drain that socket once per call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import logging
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, Generic, TypeVar

import anyio
import anyio.from_thread
from anyio.abc import TaskGroup, TaskStatus

from agent_host.errors import ErrorCode, ToolingError

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

RESULT_GRACE: Final = 5.0
"""Seconds the waiting thread allows beyond a call's deadline before it gives up on the loop."""

SHUTDOWN_TIMEOUT: Final = 20.0
"""Seconds `close` allows for closing every connection before it cancels them."""


def shutting_down() -> ToolingError:
    """The error of any request made once the bridge is closed."""
    return ToolingError(ErrorCode.UNAVAILABLE, "the host is shutting down")


class Interrupt:
    """Cancels, from any thread, the bridge call another thread is blocked in (and later ones).

    Passed to `Bridge.call`: once `fire(reason)` was called, the blocked call's task is cancelled and
    its caller gets `ToolingError(cancelled)`; calls made with it afterwards are refused the same way.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._call: _Waiter[Any] | None = None
        self.reason: str | None = None

    def _arm(self, call: _Waiter[Any]) -> None:
        with self._lock:
            self._call = call
            if self.reason is not None:
                call.cancel()

    def _disarm(self) -> None:
        with self._lock:
            self._call = None

    def fire(self, reason: str) -> None:
        """Cancel the call waiting with this interrupt, if any, and refuse later ones (from any thread)."""
        with self._lock:
            self.reason = reason
            if self._call is not None:
                self._call.cancel()

    def error(self) -> ToolingError:
        """The `ToolingError(cancelled)` calls get once this interrupt fired."""
        return ToolingError(ErrorCode.CANCELLED, f"the host stopped this agent: {self.reason}")


class _Expired(Exception):
    """The waiting thread's backstop passed before the task ended."""


_Handed = tuple[Coroutine[Any, Any, Any], Callable[["asyncio.Task[Any]"], None], contextvars.Context]
"""A coroutine handed over, what to do with its task once started, and the context it runs in."""


class _Handoff:
    """Coroutines handed to the loop from other threads, started as tasks in the order handed over.

    `submit` queues the coroutine and wakes the loop (`call_soon_threadsafe`) only when no wake-up
    is pending: one `_drain` on the loop starts everything queued by then, each task in a copy of
    its submitting thread's context (as `asyncio.run_coroutine_threadsafe` does), and passes it to
    the submitter's `started` callback (on the loop).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._queue: deque[_Handed] = deque()
        self._wake_pending = False

    def submit(self, coro: Coroutine[Any, Any, Any], started: Callable[[asyncio.Task[Any]], None]) -> None:
        with self._lock:
            self._queue.append((coro, started, contextvars.copy_context()))
            if self._wake_pending:
                return
            self._wake_pending = True
        self._loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        """On the loop: start every queued coroutine."""
        with self._lock:
            queued, self._queue = self._queue, deque()
            self._wake_pending = False
        for coro, started, context in queued:
            started(self._loop.create_task(coro, context=context))


class _Waiter(Generic[_T]):
    """A thread blocked until its task ends: the cheapest wait measured here (a lock the task's done
    callback releases; `concurrent.futures.Future` adds a condition and a second future).

    `cancel` works from any thread, before or after the task started (a task not started yet is
    cancelled as soon as it is, at its first suspension point, as `run_coroutine_threadsafe` does).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._task: asyncio.Task[_T] | None = None
        self._done = threading.Lock()
        self._done.acquire()
        self._finished = False
        """Whether a wait saw the task end (`_done` is then held for good)."""
        self._cancelled = False

    def started(self, task: asyncio.Task[_T]) -> None:
        """On the loop: the task of this wait was created."""
        self._task = task
        if self._cancelled:
            task.cancel()
        task.add_done_callback(lambda _: self._done.release())

    def cancel(self) -> None:
        """From any thread: cancel the task (the waiter then gets `CancelledError`)."""
        self._cancelled = True
        if not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._cancel_task)

    def _cancel_task(self) -> None:
        if self._task is not None:
            self._task.cancel()

    @property
    def was_started(self) -> bool:
        """Whether the task was created (from any thread): it was handed over."""
        return self._task is not None

    @property
    def running(self) -> bool:
        """Whether the task was started and has not ended (from any thread)."""
        return self._task is not None and not self._task.done()

    def result(self, timeout: float | None) -> _T:
        """The coroutine's value, or what it raised; `_Expired` after `timeout` seconds (None: no
        limit), `asyncio.CancelledError` when it was cancelled."""
        if not self._done.acquire(timeout=-1 if timeout is None else timeout):
            raise _Expired
        self._finished = True
        assert self._task is not None
        return self._task.result()

    def ended(self) -> None:
        """Wait until the task has ended (or was never started and cannot be any more)."""
        if not self._finished and self._done.acquire():
            self._finished = True


def _follow(future: concurrent.futures.Future[Any], loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    """On the loop: make `future` follow `task` (its outcome; cancelling the future cancels the task)."""
    task.add_done_callback(functools.partial(_settle, future))
    future.add_done_callback(functools.partial(_cancel_task, loop, task))


def _settle(future: concurrent.futures.Future[Any], task: asyncio.Task[Any]) -> None:
    """Copy a finished task's outcome into its caller's future (unless the caller cancelled it)."""
    if task.cancelled():
        future.cancel()
        return
    if not future.set_running_or_notify_cancel():
        return
    exception = task.exception()
    if exception is not None:
        future.set_exception(exception)
    else:
        future.set_result(task.result())


def _cancel_task(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], future: concurrent.futures.Future[Any]
) -> None:
    """The caller's future is done: if it was cancelled, cancel the task on its loop."""
    if future.cancelled() and not loop.is_closed():
        loop.call_soon_threadsafe(task.cancel)


class Bridge:
    """Owner of the background event loop.

    `nursery` is a task group on the loop that outlives any single request: connection owner tasks
    live in it. It is cancelled last, when the bridge closes.
    """

    def __init__(self) -> None:
        self._portal_cm = anyio.from_thread.start_blocking_portal(name="agent-host-bridge")
        self._portal = self._portal_cm.__enter__()
        self._lock = threading.Lock()
        self._closed = False
        self._stop: anyio.Event | None = None
        self._serve_future, self.nursery = self._portal.start_task(self._serve, name="agent-host-nursery")
        self._loop: asyncio.AbstractEventLoop = self._portal.call(_running_loop)
        self._handoff = _Handoff(self._loop)

    async def _serve(self, *, task_status: TaskStatus[TaskGroup]) -> None:
        self._stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            task_status.started(tg)
            await self._stop.wait()
            tg.cancel_scope.cancel()

    @property
    def closed(self) -> bool:
        return self._closed

    def call(
        self,
        fn: Callable[..., Awaitable[_T]],
        *args: Any,
        timeout: float | None,
        on_timeout: Callable[[], ToolingError],
        interrupt: Interrupt | None = None,
    ) -> _T:
        """Run `fn(*args)` on the loop and block the calling thread until it finishes, at most `timeout`
        seconds (None: `fn` bounds itself).

        The deadline is enforced on the loop (the task is cancelled, which cancels the upstream
        request) and, as a backstop, on the waiting thread (`RESULT_GRACE` later). A deadline that
        passes raises the `ToolingError` built by `on_timeout`. Exceptions from `fn` are re-raised
        in the caller; a fired `interrupt` raises its `ToolingError(cancelled)`. Raises
        `ToolingError(unavailable)` after `close`. Must not be used from the loop thread: it would
        block the loop until the backstop and then raise `on_timeout()`.
        """
        if interrupt is not None and interrupt.reason is not None:
            raise interrupt.error()
        with self._lock:
            if self._closed:
                raise shutting_down()
            call: _Waiter[_T] = _Waiter(self._loop)
            self._handoff.submit(_bounded(fn, args, timeout, on_timeout), call.started)
        if interrupt is not None:
            interrupt._arm(call)
        try:
            return call.result(None if timeout is None else timeout + RESULT_GRACE)
        except _Expired:
            call.cancel()
            raise on_timeout() from None
        except asyncio.CancelledError:
            if interrupt is not None and interrupt.reason is not None:
                raise interrupt.error() from None
            raise ToolingError(ErrorCode.CANCELLED, "the request was cancelled") from None
        except BaseException:
            call.cancel()
            raise
        finally:
            if interrupt is not None:
                interrupt._disarm()

    def start(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> concurrent.futures.Future[_T]:
        """Schedule `fn(*args)` on the loop without waiting; cancelling the future cancels the task.

        Raises `ToolingError(unavailable)` after `close`.
        """
        return self._submit(fn, *args)

    def run_foreground(
        self, fn: Callable[..., Awaitable[_T]], *args: Any, stop: Callable[[], None] | None = None
    ) -> _T:
        """From the main thread: run `fn(*args)` on the loop (a server that should share it with
        the toolings: no thread hand-over between them) and wait for its outcome. An exception
        raised in the waiting thread (a signal handler's) ends it: `stop()` is called on the loop
        (a graceful end; without `stop`, the task is cancelled), its end is waited for, and the
        exception is raised. Raises `ToolingError(unavailable)` after `close`."""
        waiter: _Waiter[_T] = _Waiter(self._loop)
        submitted = False
        try:  # a signal may land anywhere from here: once the coroutine is handed over, it is ended
            with self._lock:
                if self._closed:
                    raise shutting_down()
                self._handoff.submit(_as_coroutine(fn, args), waiter.started)
                submitted = True
            return waiter.result(None)
        except BaseException:
            if submitted or waiter.was_started:  # a signal landing in `submit` after the hand-over too
                if stop is not None and waiter.running:
                    self._loop.call_soon_threadsafe(stop)
                else:
                    waiter.cancel()  # nothing when it has ended; when it has not started, at its start
                waiter.ended()
            else:
                waiter.cancel()  # handed over after all (the signal landed in `submit`): cancelled at its start
            raise

    async def run(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """From a coroutine on any asyncio loop: `await fn(*args)` on the bridge loop (at once when
        the caller is on it) and its outcome. Cancelling the caller cancels the task on the bridge
        loop. Raises `ToolingError(unavailable)` after `close`."""
        if asyncio.get_running_loop() is self._loop:
            if self._closed:
                raise shutting_down()
            return await fn(*args)
        return await asyncio.wrap_future(self._submit(fn, *args))

    def _submit(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> concurrent.futures.Future[_T]:
        """Hand `fn(*args)` to the loop (`_Handoff`); the future follows its task as
        `asyncio.run_coroutine_threadsafe`'s does. Raises `ToolingError(unavailable)` once the bridge
        is closed."""
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise shutting_down()
            self._handoff.submit(_as_coroutine(fn, args), functools.partial(_follow, future, self._loop))
        return future

    def close(self, shutdown: Callable[[], Awaitable[None]] | None = None) -> None:
        """Run `shutdown()` on the loop (bounded by `SHUTDOWN_TIMEOUT`), then cancel the nursery, stop
        the loop and join its thread. Idempotent; `call` and `start` afterwards raise
        `ToolingError(unavailable)`."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            if shutdown is not None:
                self._portal.call(_bounded_shutdown, shutdown)
        finally:
            self._portal.call(self._stop_nursery)
            self._portal_cm.__exit__(None, None, None)

    async def _stop_nursery(self) -> None:
        assert self._stop is not None
        self._stop.set()

    def __enter__(self) -> Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


async def _as_coroutine(fn: Callable[..., Awaitable[_T]], args: tuple[Any, ...]) -> _T:
    return await fn(*args)


async def _bounded(
    fn: Callable[..., Awaitable[_T]],
    args: tuple[Any, ...],
    seconds: float | None,
    on_timeout: Callable[[], ToolingError],
) -> _T:
    if seconds is None:  # `fn` bounds itself: no cancel scope to enter and leave
        return await fn(*args)
    with anyio.move_on_after(seconds) as scope:
        return await fn(*args)
    assert scope.cancelled_caught
    raise on_timeout()


async def _bounded_shutdown(shutdown: Callable[[], Awaitable[None]]) -> None:
    with anyio.move_on_after(SHUTDOWN_TIMEOUT) as scope:
        await shutdown()
    if scope.cancelled_caught:
        logger.warning("closing connections took longer than %s s; they were cancelled", SHUTDOWN_TIMEOUT)
