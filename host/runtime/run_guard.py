"""CPU time, wall-clock time and stop requests for one guest run, enforced with epoch deadlines.

Limits and stop requests are checked while wasm runs, once per slice (`SLICE_TICKS` epoch ticks,
50 ms: the precision of every time limit). Time the guest spends waiting in host functions (a slow
tool, `inbox.recv`) never counts as CPU time, and no deadline fires while it waits there: the host
bounds those waits itself. Wall-clock time counts from the start of the run, waits included.

wasmtime-py 50 does not wrap `wasmtime_store_epoch_deadline_callback`; this module calls the
generated binding directly (the version is pinned exactly), keeps the ctypes callbacks alive for
the life of the store, and never lets an exception escape into wasmtime.
"""

from __future__ import annotations

import ctypes
import logging
import time
from typing import Any, Final, Literal

from wasmtime import Store, WasmtimeError
from wasmtime import _bindings as ffi  # the binding wasmtime-py does not wrap (see the module docstring)

from host.policy import Limit

logger = logging.getLogger(__name__)

SLICE_TICKS: Final = 5
"""Epoch ticks between checks: 50 ms at the 10 ms tick; the precision of every time limit."""


TripKind = Literal["stopped", "cpu_time", "wall_time"]
"""Which check of a `RunGuard` stopped a run: a stop request, its CPU time, its wall-clock time."""

_ENTRY = ffi._wasmtime_store_epoch_deadline_callback.argtypes
_CALLBACK_TYPE: Any = _ENTRY[1]
_FINALIZER_TYPE: Any = _ENTRY[3]
_CONTINUE: Final = 0
"""WASMTIME_UPDATE_DEADLINE_CONTINUE: keep running with the new deadline."""


class RunGuard:
    """Time limits and stop requests of one store.

    The engine's epoch advances every `EPOCH_TICK` (10 ms) on the ticker thread. The guard gives its
    store a deadline `SLICE_TICKS` ahead and registers wasmtime's epoch-deadline callback, which runs
    on the guest's thread each time running wasm reaches the deadline (one Python call every 50 ms
    of wasm execution). When a limit is exceeded or a stop was requested, the callback makes wasm
    trap with a message and `reason` says why (the runner reports it); otherwise the deadline moves
    one slice ahead.
    """

    def __init__(self, store: Store, *, cpu_time: Limit, wall_time: Limit) -> None:
        self._cpu_time = cpu_time
        self._wall_time = wall_time
        self.started = time.monotonic()
        self._mark = self.started
        self._host_time = 0.0
        self._entered: float | None = None
        self.cpu_used = 0.0
        """Seconds of CPU time used so far: wall time between slices minus the time spent in the host."""
        self.reason: str | None = None
        """Why the run was made to trap, for a person; None while it runs on."""
        self.tripped: TripKind | None = None
        """Which of the guard's checks made it trap (`stopped`, `cpu_time`, `wall_time`)."""
        """Why the guard stopped the guest, once it did."""
        self._stop_reason: str | None = None
        self._callback = _CALLBACK_TYPE(self._on_deadline)
        self._finalizer = _FINALIZER_TYPE(_no_finalizer)
        ffi.wasmtime_store_epoch_deadline_callback(store.ptr(), self._callback, None, self._finalizer)
        store.set_epoch_deadline(SLICE_TICKS)

    def host_enter(self) -> None:
        """Called by every host function on entry; until `host_exit`, time is not the guest's CPU time."""
        self._entered = time.monotonic()

    def host_exit(self) -> None:
        """Called by every host function on return (see `host_enter`)."""
        if self._entered is not None:
            self._host_time += time.monotonic() - self._entered
            self._entered = None

    def stop(self, reason: str) -> None:
        """Stop the guest at its next slice (from any thread, as the shutdown on SIGINT/SIGTERM does)."""
        self._stop_reason = reason

    def _verdict(self, now: float) -> tuple[TripKind, str] | None:
        if self._stop_reason is not None:
            return "stopped", f"stopped by the host: {self._stop_reason}"
        if self.cpu_used > self._cpu_time.value:
            cpu = self._cpu_time
            return "cpu_time", f"CPU time limit: run used more than {cpu.value:g} s of CPU ({cpu.key})"
        if now - self.started > self._wall_time.value:
            wall = self._wall_time
            return "wall_time", f"time limit: run did not finish within {wall.value:g} s ({wall.key})"
        return None

    def _on_deadline(self, context: Any, data: Any, delta: Any, kind: Any) -> int:
        """The epoch-deadline callback: add the wall time since the last slice, minus the time spent
        in host functions, to `cpu_used`; then move the deadline one slice ahead, or return the
        error that makes wasm trap. Never raises."""
        try:
            now = time.monotonic()
            self.cpu_used += max(0.0, now - self._mark - self._host_time)
            self._host_time = 0.0
            self._mark = now
            verdict = self._verdict(now)
            if verdict is None:
                delta[0] = SLICE_TICKS
                kind[0] = _CONTINUE
                return 0
            self.tripped, self.reason = verdict
            message = f"agent-host: {self.reason}"
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's C frames
            self.reason = f"host error in the time guard: {exc!r}"
            message = f"agent-host: {self.reason}"
        error = WasmtimeError(message)
        pointer: int = ctypes.cast(error._consume(), ctypes.c_void_p).value or 0
        return pointer


def _no_finalizer(data: Any) -> None:
    return None
