"""Per-thread state of the guest running on this thread: its session and the exception relay.

wasmtime-py relays a Python exception raised in a host function through one process-global slot,
so with guests on several threads an exception can surface on the wrong thread. Instead, every host
function is wrapped by `host_function`, which relays exceptions per thread; host functions find
their guest's session with `session()`, inside `running`.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from wasmtime import WasmtimeError

from agent_host.runtime.run_guard import RunGuard
from agent_host.session import GuestSession

logger = logging.getLogger(__name__)

_F = TypeVar("_F", bound=Callable[..., Any])


class _State(threading.local):
    session: GuestSession | None = None
    guard: RunGuard | None = None
    exception: BaseException | None = None


_state = _State()


@contextmanager
def running(session: GuestSession, guard: RunGuard | None = None) -> Iterator[None]:
    """Mark the current thread as running `session`'s guest, timed by `guard`, for the `with` block.

    Raises `RuntimeError` when the thread is already running a guest.
    """
    if _state.session is not None:
        raise RuntimeError("this thread is already running a guest")
    _state.session = session
    _state.guard = guard
    _state.exception = None
    try:
        yield
    finally:
        _state.session = None
        _state.guard = None


def session() -> GuestSession:
    """The session of the guest running on this thread. Raises `RuntimeError` outside `running` (a host bug)."""
    current = _state.session
    if current is None:
        raise RuntimeError("host function called on a thread that is not running a guest")
    return current


def take_exception() -> BaseException | None:
    """The exception a host function raised on this thread since the last call, if any.

    After the export call returns or traps, the runner calls it, re-raises interrupts
    (`KeyboardInterrupt`, `SystemExit`) and reports other exceptions as host errors.
    """
    exc, _state.exception = _state.exception, None
    return exc


def host_function(fn: _F) -> _F:
    """Wrap a host function so that no exception reaches wasmtime-py's global relay.

    Any `BaseException` it raises is stored in this thread's relay (the first one since the last
    `take_exception`) and replaced by a `WasmtimeError`: the guest traps with that message. It
    reports the time it spent to the thread's guard (`host_enter`/`host_exit`), so waiting in the
    host never counts as the guest's CPU time. When the guard has been stopped (or its wall-clock
    deadline passed) by the time the function returns, the guest traps then (`RunGuard.halted`)
    instead of being handed the result.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        guard = _state.guard
        if guard is not None:
            guard.host_enter()
        try:
            result = fn(*args)
        except BaseException as exc:  # boundary: relay per thread, trap the guest with a message
            if _state.exception is None:
                _state.exception = exc
            if not isinstance(exc, KeyboardInterrupt | SystemExit):
                logger.debug("host function %s failed", fn.__name__, exc_info=exc)
            raise WasmtimeError(f"host function {fn.__name__} failed: {type(exc).__name__}: {exc}") from None
        finally:
            if guard is not None:
                guard.host_exit()
        if guard is not None and (reason := guard.halted()) is not None:
            raise WasmtimeError(f"agent-host: {reason}")  # the guard's verdict, not a host failure
        return result

    return wrapper  # type: ignore[return-value]
