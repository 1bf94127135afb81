"""CPU time, wall-clock time and stop requests for one guest run, enforced with epoch deadlines.

Limits and stop requests are checked while wasm runs, once per slice (`SLICE_TICKS` epoch ticks,
50 ms: the precision of every time limit). CPU time is the guest thread's own CPU time
(`time.thread_time`) less what host functions spent on it, so waiting (a slow tool, `inbox.recv`, a
sleep) never counts. No deadline fires while the guest waits in the host: those waits are bounded by
the host itself, and sleeps wait on the guard (`wait`, used by `runtime.clock`), which a stop or the
wall-clock deadline ends at once. Wall-clock time counts from the start of the run, waits included.

The epoch callback goes through `wasmtime_hooks.watch_epochs`; without it, the public path (`_arm`)
traps at the nearer limit, and stops apply as host functions return and at that deadline.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Final, Literal

from wasmtime import Store

from agent_host.policy.grants import Limit
from agent_host.runtime import wasmtime_hooks
from agent_host.runtime.descriptors import Watch

logger = logging.getLogger(__name__)

EPOCH_TICK: Final = 0.01
"""Seconds between epoch increments (`engine.EpochTicker`): the resolution of time limits."""

SLICE_TICKS: Final = 5
"""Epoch ticks between checks: 50 ms at the 10 ms tick; the precision of every time limit."""

_PAST_DEADLINE: Final = 0.02
"""Seconds a `wait` cut short by the wall-clock deadline goes on past it, so that the guest's next
check finds the deadline passed."""


TripKind = Literal["stopped", "cpu_time", "wall_time", "open_files"]
"""Which check of a `RunGuard` stopped a run: a stop request, its CPU time, its wall-clock time, the
host file descriptors it holds (`runtime.descriptors`)."""


class RunGuard:
    """Time limits and stop requests of one store.

    The engine's epoch advances every `EPOCH_TICK` (10 ms) on the ticker thread. The guard gives its
    store a deadline `SLICE_TICKS` ahead and registers wasmtime's epoch-deadline callback, which runs
    on the guest's thread each time running wasm reaches the deadline (one Python call every 50 ms
    of wasm execution). When a limit is exceeded or a stop was requested, the callback makes wasm
    trap with a message and `reason` says why (the runner reports it); otherwise the deadline moves
    one slice ahead.
    """

    def __init__(self, store: Store, *, cpu_time: Limit, wall_time: Limit, files: Watch | None = None) -> None:
        """`files`: the guest's host file descriptors, checked at every tick (not every slice) while
        wasm runs, so that what it opens between two checks stays small."""
        self._cpu_time = cpu_time
        self._files = files
        self._slice = 1 if files is not None else SLICE_TICKS
        self._wall_time = wall_time
        self.started = time.monotonic()
        self.deadline = self.started + wall_time.value
        """When the wall-clock limit is reached (`time.monotonic`)."""
        self._mark = time.thread_time()
        self._host_time = 0.0
        self._entered: float | None = None
        self._stopped = threading.Event()
        self.cpu_used = 0.0
        """Seconds of CPU time used so far: the guest thread's CPU time minus that of host functions."""
        self.reason: str | None = None
        """Why the run was made to trap, for a person; None while it runs on."""
        self.tripped: TripKind | None = None
        """Which of the guard's checks made it trap (`stopped`, `cpu_time`, `wall_time`)."""
        self._stop_reason: str | None = None
        self._stop_kind: TripKind = "stopped"
        self._watch = wasmtime_hooks.watch_epochs(store, self._on_deadline)
        self._store: Store | None = None
        """The store, on the public path only (no epoch callback): `_arm` sets its deadline."""
        self._armed_until: float | None = None
        """On the public path: the earliest time (`time.monotonic`) the deadline `_arm` set can fire."""
        if self._watch is None:
            self._store = store
            self._arm()
        else:
            store.set_epoch_deadline(self._slice)

    def begin(self) -> None:
        """The run begins now, on this thread: the wall-clock and CPU time limits count from here (a
        guard made with an instance prepared ahead timed its start code, maybe on another thread).
        A stop requested before stays requested."""
        self.started = time.monotonic()
        self.deadline = self.started + self._wall_time.value
        self._mark = time.thread_time()
        self._host_time = 0.0
        self._entered = None
        self.cpu_used = 0.0
        if self._store is not None:
            self._armed_until = None
            self._arm()

    def host_enter(self) -> None:
        """Called by every host function on entry, on the guest's thread; until `host_exit`, the
        thread's CPU time is not the guest's."""
        self._entered = time.thread_time()

    def host_exit(self) -> None:
        """Called by every host function on return (see `host_enter`)."""
        if self._entered is not None:
            self._host_time += time.thread_time() - self._entered
            self._entered = None
        if self._store is not None:
            self._arm()

    def stop(self, reason: str, tripped: TripKind = "stopped") -> None:
        """Stop the guest at its next slice (from any thread, as the shutdown on SIGINT/SIGTERM does);
        a `wait` in progress ends at once. `tripped`: which check stops it (`open_files` from the
        descriptor watcher: `reason` is then the whole reason); the first stop's reason is kept."""
        if self._stop_reason is None:
            self._stop_reason, self._stop_kind = reason, tripped
        self._stopped.set()

    def wait(self, seconds: float) -> None:
        """Wait up to `seconds` on the guest's thread (a guest's sleep): less when the run is stopped
        or reaches its wall-clock deadline, after which the guest traps at its next check."""
        end = min(time.monotonic() + seconds, self.deadline + _PAST_DEADLINE)
        remaining = end - time.monotonic()
        if remaining > 0:
            self._stopped.wait(remaining)

    def halted(self) -> str | None:
        """On the guest's thread, as a host function returns: why the guest must trap now instead of
        running on (a stop request, or the wall-clock deadline passed), recorded as the epoch callback
        records it; None to go on. A wait a stop ended returns to a guest that may have nothing left
        to do: without this it could return `ok` before its next slice's check."""
        if self.tripped is not None:
            return self.reason
        public_path = self._store is not None  # no epoch callback: every check happens here too
        if not public_path and self._stop_reason is None and time.monotonic() <= self.deadline:
            return None
        verdict = self._verdict(time.monotonic())
        if verdict is None or (not public_path and self._stop_reason is None and verdict[0] != "wall_time"):
            return None
        self.tripped, self.reason = verdict
        return self.reason

    def usage(self) -> str:
        """From any thread, for a person: the CPU and wall-clock time used so far against their limits
        (`3 s of CPU of 60 (cpu_time ...), 12 s of 300 (timeout ...)`)."""
        cpu, wall = self._cpu_time, self._wall_time
        elapsed = time.monotonic() - self.started
        return (
            f"{self.cpu_used:.0f} s of CPU of {cpu.value:g} ({cpu.key}), {elapsed:.0f} s of {wall.value:g} ({wall.key})"
        )

    def overdue(self) -> tuple[TripKind, str] | None:
        """From any thread: the stop request or the wall-clock limit the run is past (which, and the
        reason, as a trap would report it), None while neither applies: for a run that goes on after
        them (`runtime.guest` gives up waiting for a guest blocked where no check runs)."""
        if self.tripped is not None and self.reason is not None:
            return self.tripped, self.reason
        return self._stop_verdict() or self._wall_verdict(time.monotonic())

    def after_trap(self) -> str | None:
        """On the guest's thread once wasm trapped: why the guard made it trap (see `reason`), None
        when it did not. With the epoch callback, that is what the callback recorded. On the public
        path, reaching the deadline `_arm` set is the guard's doing: the limit its accounting shows
        exceeded, else the CPU time limit (wasm ran at a stretch for the CPU time it had left)."""
        if self._store is None or self.tripped is not None:
            return self.reason
        self._account(time.thread_time())
        now = time.monotonic()
        verdict = self._verdict(now)
        if verdict is None and self._armed_until is not None and now >= self._armed_until:
            verdict = self._cpu_verdict()
        if verdict is not None:
            self.tripped, self.reason = verdict
        return self.reason

    def _cpu_verdict(self) -> tuple[TripKind, str]:
        cpu = self._cpu_time
        return "cpu_time", f"CPU time limit: run used more than {cpu.value:g} s of CPU ({cpu.key})"

    def _verdict(self, now: float) -> tuple[TripKind, str] | None:
        stopped = self._stop_verdict()
        if stopped is not None:
            return stopped
        if self.cpu_used > self._cpu_time.value:
            return self._cpu_verdict()
        wall = self._wall_verdict(now)
        if wall is not None:
            return wall
        if self._files is not None and (files := self._files.check()) is not None:
            return "open_files", files
        return None

    def _stop_verdict(self) -> tuple[TripKind, str] | None:
        reason, kind = self._stop_reason, self._stop_kind
        if reason is None:
            return None
        return (kind, reason) if kind != "stopped" else ("stopped", f"stopped by the host: {reason}")

    def _wall_verdict(self, now: float) -> tuple[TripKind, str] | None:
        if now - self.started <= self._wall_time.value:
            return None
        wall = self._wall_time
        return "wall_time", f"time limit: run did not finish within {wall.value:g} s ({wall.key})"

    def _account(self, cpu: float) -> None:
        """Add the thread's CPU time since the last account, minus that of host functions, to
        `cpu_used` (`cpu`: `time.thread_time()` now, on the guest's thread)."""
        if self._entered is not None:  # a host function running wasm (`runtime.clock`'s adapter)
            self._host_time += cpu - self._entered
            self._entered = cpu
        self.cpu_used += max(0.0, cpu - self._mark - self._host_time)
        self._host_time = 0.0
        self._mark = cpu

    def _arm(self) -> None:
        """The public path (no epoch callback, which wasmtime-py does not wrap): account the CPU time
        so far, then give the store a deadline at the nearer of the CPU time left and the wall-clock
        deadline (a tick late rather than early); called at the start and as each host function
        returns. Its deadline traps for good: stops and the open-files check apply as host functions
        return (`halted`) and at that deadline, and wasm running at a stretch counts its wall time
        as CPU time (`after_trap`)."""
        self._account(time.thread_time())
        now = time.monotonic()
        left = max(0.0, min(self._cpu_time.value - self.cpu_used, self.deadline - now))
        ticks = math.ceil(left / EPOCH_TICK) + 1
        self._armed_until = now + (ticks - 1) * EPOCH_TICK
        if self._store is not None:
            self._store.set_epoch_deadline(ticks)

    def _on_deadline(self) -> int | str:
        """The epoch-deadline callback (on the guest's thread, `wasmtime_hooks.EpochCallback`): add
        the CPU time since the last slice (`_account`); then the ticks to the next slice, or the
        message that makes wasm trap. Never raises."""
        try:
            self._account(time.thread_time())
            verdict = self._verdict(time.monotonic())
            if verdict is None:
                return self._slice
            self.tripped, self.reason = verdict
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's C frames
            self.reason = f"host error in the time guard: {exc!r}"
        return f"agent-host: {self.reason}"
