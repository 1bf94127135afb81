"""Every bounded wait of a session, in one place, with one message when a bound is reached.

`timed_out` is the one `timeout` error ("WHAT did not finish within N s and was cancelled (HINT)"),
used by requests, connects, approvals, asynchronous tool calls (`bounded_call`, on the loop: progress
starts the timeout anew, under `max_call_time`) and releases.
`Deadline` is the end of the run's wall-clock limit: a wait that would outlast it is shortened to
it, and its hint names the limit's key. `LoopCalls` runs coroutines on the bridge loop from the
guest's thread within those bounds, ended by the session's `Interrupt`, raising only `ToolingError`
(a host bug becomes `internal`, logged); its `cleanup` runs even after the run's end or an interrupt.
"""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from agent_host.config import ToolingConfig
from agent_host.errors import ErrorCode, ToolingError
from agent_host.session.bridge import Bridge, Interrupt, shutting_down
from agent_host.toolings import ProgressFn, Tooling
from agent_host.toolings.request_clock import request_timeout

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

HOP_GRACE: Final = 1.0
"""Seconds past the run's deadline a hop to the core waits (the core ends its own wait at the
deadline, with its message; this bound is only the backstop)."""


def timed_out(what: str, seconds: float, hint: str) -> ToolingError:
    """The `timeout` error of a wait for `what` that lasted `seconds`; `hint` says what to change."""
    return ToolingError(ErrorCode.TIMEOUT, f"{what} did not finish within {seconds:g} s and was cancelled ({hint})")


def request_hint(config: ToolingConfig) -> str:
    """The hint of a request to a tooling that timed out: the key bounding it."""
    return f"raise `timeout` in {config.origin} to wait longer"


def internal_error(what: str, exc: BaseException) -> ToolingError:
    """A host bug met during `what`, as the guest sees it."""
    return ToolingError(ErrorCode.INTERNAL, f"internal error in the host during {what}: {type(exc).__name__}: {exc}")


async def bounded_call(
    config: ToolingConfig, what: str, run: Callable[[ProgressFn], Awaitable[_T]], on_progress: ProgressFn | None = None
) -> _T:
    """On the loop: `await run(report)`, a tool call whose progress reports go through `report` to
    `on_progress`. It is cancelled after the tooling's `timeout`, a time started anew by each report
    when `progress_resets_timeout` (reports may come from any thread) and by each answer of a server
    running the call as a task (`toolings.request_clock`), and after `max_call_time` in all. Raises
    `ToolingError(timeout)` naming the bound that ended it and its key."""
    hard = anyio.current_time() + config.max_call_time
    loop_thread = threading.get_ident()
    token = anyio.lowlevel.current_token()
    reports = 0
    with request_timeout(config.timeout, hard) as clock:

        def report(progress: float, total: float | None, message: str | None) -> None:
            nonlocal reports
            reports += 1
            if config.progress_resets_timeout and not clock.scope.cancel_called:
                if threading.get_ident() == loop_thread:
                    clock.restart()
                else:
                    with contextlib.suppress(RuntimeError):  # the loop is closing: nothing left to extend
                        anyio.from_thread.run_sync(clock.restart, token=token)
            if on_progress is not None:
                on_progress(progress, total, message)

        return await run(report)
    if clock.scope.deadline >= hard:
        raise timed_out(what, config.max_call_time, f"raise `max_call_time` in {config.origin} to let it run longer")
    if clock.renewed:
        silent = f"the server did not answer for {config.timeout:g} s"
        raise ToolingError(ErrorCode.TIMEOUT, f"{what} was cancelled: {silent} ({request_hint(config)})")
    if config.progress_resets_timeout and reports:
        raise ToolingError(
            ErrorCode.TIMEOUT,
            f"{what} reported no progress for {config.timeout:g} s and was cancelled ({request_hint(config)})",
        )
    raise timed_out(what, config.timeout, request_hint(config))


class Deadline:
    """The end of a run's wall-clock limit, as a `time.monotonic()` value (None: not running)."""

    def __init__(self, limit_key: str) -> None:
        self.at: float | None = None
        self._limit_key = limit_key

    def bound(self, seconds: float, hint: str) -> tuple[float, str]:
        """`seconds` and `hint`, or what is left of the run and a hint naming its limit when less."""
        if self.at is not None:
            remaining = self.at - time.monotonic()
            if remaining < seconds:
                return max(0.0, remaining), f"the agent's run time limit ends then: {self._limit_key}"
        return seconds, hint

    def clamp(self, seconds: float) -> float:
        """`seconds`, or what is left of the run when less (never negative)."""
        if self.at is None:
            return seconds
        return max(0.0, min(seconds, self.at - time.monotonic()))


class LoopCalls:
    """Runs coroutines on the bridge loop for one guest (see the module docstring)."""

    def __init__(self, agent: str, bridge: Bridge, deadline: Deadline, interrupt: Interrupt) -> None:
        self._agent = agent
        self._bridge = bridge
        self._deadline = deadline
        self._interrupt = interrupt

    def run(
        self,
        what: str,
        fn: Callable[..., Awaitable[_T]],
        *args: Any,
        timeout: float,
        hint: str,
        expired: Callable[[], ToolingError] | None = None,
    ) -> _T:
        """`fn(*args)` on the loop, within `timeout` seconds and the run's deadline.

        Raises `ToolingError`: `timeout` (see `timed_out`; `expired()` instead when given and the
        run's deadline did not shorten the wait), `cancelled` once the session was interrupted,
        whatever `fn` raised, or `internal` for any other exception.
        """
        bounded, bound_hint = self._deadline.bound(timeout, hint)
        own = expired if expired is not None and bounded == timeout else None
        return self._call(what, fn, args, bounded, bound_hint, self._interrupt, own)

    def hop(self, what: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """`fn(*args)` on the loop, a coroutine that bounds its own waits (`SessionCore`, given the run's
        deadline): bounded here only by the run's deadline, as a backstop, and ended by an interrupt.
        Raises as `run` does."""
        at = self._deadline.at
        if at is None:
            return self._call(what, fn, args, None, "", self._interrupt)
        seconds, hint = self._deadline.bound(math.inf, "")
        return self._call(what, fn, args, seconds + HOP_GRACE, hint, self._interrupt)

    def request(self, tooling: Tooling, what: str, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        """A request to `tooling` (`what`, for messages), bounded by its `timeout` (see `run`)."""
        config = tooling.config
        return self.run(
            f"tooling {tooling.name!r}: {what}", fn, *args, timeout=config.timeout, hint=request_hint(config)
        )

    def cleanup(self, what: str, fn: Callable[..., Awaitable[_T]], *args: Any, timeout: float, hint: str) -> _T:
        """`fn(*args)` on the loop within `timeout`, even after the run's end or an interrupt."""
        return self._call(what, fn, args, timeout, hint, None)

    def check_open(self) -> None:
        """Raise what `run` raises before running anything: `cancelled` once the session was
        interrupted, `unavailable` once the host is shutting down (for work done without the loop)."""
        if self._interrupt.reason is not None:
            raise self._interrupt.error()
        if self._bridge.closed:
            raise shutting_down()

    @property
    def bridge(self) -> Bridge:
        return self._bridge

    @property
    def closed(self) -> bool:
        """Whether the bridge is closed (the host is shutting down)."""
        return self._bridge.closed

    def _call(
        self,
        what: str,
        fn: Callable[..., Awaitable[_T]],
        args: tuple[Any, ...],
        timeout: float | None,
        hint: str,
        interrupt: Interrupt | None,
        expired: Callable[[], ToolingError] | None = None,
    ) -> _T:
        def on_timeout() -> ToolingError:
            assert timeout is not None, "an unbounded wait does not time out"
            return expired() if expired is not None else timed_out(what, timeout, hint)

        try:
            return self._bridge.call(fn, *args, timeout=timeout, on_timeout=on_timeout, interrupt=interrupt)
        except ToolingError:
            raise
        except Exception as exc:  # boundary: a host bug must reach the guest as `internal`, not as a trap
            logger.exception("internal error during %s (agent %s)", what, self._agent)
            raise internal_error(what, exc) from exc


async def within(
    what: str,
    fn: Callable[..., Awaitable[_T]],
    *args: Any,
    timeout: float | None,  # noqa: ASYNC109 - a bound with its own message, as LoopCalls.run takes it
    hint: str = "",
    expired: Callable[[], ToolingError] | None = None,
) -> _T:
    """On the loop: `await fn(*args)` within `timeout` seconds (None: `fn` bounds itself), as
    `LoopCalls.run` bounds a wait from a guest's thread. Raises `ToolingError`: `timeout`
    (`timed_out`, or `expired()` when given), whatever `fn` raised, or `internal` for any other
    exception (logged)."""
    try:
        if timeout is None or timeout == math.inf:  # no cancel scope to enter and leave: `fn` bounds itself
            return await fn(*args)
        with anyio.move_on_after(timeout) as scope:
            return await fn(*args)
    except ToolingError:
        raise
    except Exception as exc:  # boundary: a host bug reaches the caller as `internal`
        logger.exception("internal error during %s", what)
        raise internal_error(what, exc) from exc
    assert scope.cancelled_caught and timeout is not None
    raise expired() if expired is not None else timed_out(what, timeout, hint)
