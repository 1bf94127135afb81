"""The WASI monotonic clock, served by the host so that a waiting guest stays stoppable.

wasmtime checks epoch deadlines only while wasm runs, so a guest blocked in WASI (`time.sleep`)
would outlive its limits, stops and signals (docs/notes/wasmtime-waits.md). Only timers become
ready later in a guest's sandbox (no stdin, no network; files are always ready), so the host
shadows `wasi:clocks/monotonic-clock` under every name of the component that wasmtime could
resolve to WASI's clock (`linkable.imports_of`: any version, pre-release or build metadata of the
interface), so that no spelling reaches wasmtime's own: `subscribe-*` wait on
the run's `RunGuard` (a stop or the deadline ends the wait at once; the guest then traps), then
return a WASI pollable that is already ready. Timers never fire early; `now` counts from the run's
start. Invariants: the pollable type is WASI's own, so WASI's destructor frees every pollable;
waits run on the guest's thread inside host functions, so they are never the guest's CPU time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from wasmtime import Engine, Store, StoreContext, WasiConfig
from wasmtime.component import Component, Func, Linker, ResourceAny, ResourceType

from agent_host.runtime import linkable
from agent_host.runtime.run_guard import RunGuard
from agent_host.runtime.thread_state import host_function
from agent_host.runtime.wasmtime_hooks import add_func

_ADAPTER_WASI: Final = "0.2.0"
"""The WASI version the adapter imports (any 0.2.x of the linker serves it)."""

_ADAPTER: Final = f"""
(component
  (import "wasi:io/poll@{_ADAPTER_WASI}" (instance $poll (export "pollable" (type (sub resource)))))
  (alias export $poll "pollable" (type $pollable))
  (import "wasi:clocks/monotonic-clock@{_ADAPTER_WASI}" (instance $clock
    (alias outer 1 $pollable (type))
    (export "pollable" (type (eq 0)))
    (export "subscribe-duration" (func (param "when" u64) (result (own 1))))))
  (alias export $clock "subscribe-duration" (func $subscribe))
  (core func $lowered (canon lower (func $subscribe)))
  (core module $m
    (import "wasi" "subscribe" (func $subscribe (param i64) (result i32)))
    (func (export "ready") (result i32) (call $subscribe (i64.const 0))))
  (core instance $i (instantiate $m (with "wasi" (instance (export "subscribe" (func $lowered))))))
  (func (export "ready") (result (own $pollable)) (canon lift (core func $i "ready")))
)
"""
"""A component exporting `ready() -> own<pollable>`: WASI's `subscribe-duration(0)`, a pollable
that is ready at once. The host cannot make a WASI resource itself; wasm lowering WASI can."""


class ClockShim:
    """The adapter component, its WASI linker and WASI's pollable type, for one engine. `define`
    adds the host's clock to a guest's linker; `started` readies it in a guest's store."""

    def __init__(self, engine: Engine) -> None:
        self._adapter = Component(engine, _ADAPTER)
        self._linker = Linker(engine)
        self._linker.add_wasip2()
        self._lock = threading.Lock()
        self._pollable = self._pollable_type(engine)

    def _pollable_type(self, engine: Engine) -> ResourceType:
        """WASI's pollable type, read from a pollable the adapter makes in a throwaway store."""
        store = Store(engine)
        try:
            store.set_wasi(WasiConfig())
            store.set_epoch_deadline(1 << 40)
            ready = self._ready_func(store)
            pollable = ready(store)
            ready.post_return(store)
            kind: ResourceType = pollable.type
            pollable.drop(store)
            return kind
        finally:
            store.close()

    def _ready_func(self, store: Store) -> Func:
        with self._lock:
            instance = self._linker.instantiate(store, self._adapter)
        ready = instance.get_func(store, "ready")
        if ready is None:  # the adapter is ours: it always exports `ready`
            raise RuntimeError("the clock adapter exports no `ready`")
        return ready

    def define(self, linker: Linker, component: Component, engine: Engine) -> None:
        """Shadow WASI's monotonic clock on `linker` under every import name of `component` that
        resolves to it (`linkable.imports_of`: the linker takes an exact name first, so each of
        them is the host's). Call after `add_wasip2` and before any other instance is open on `linker`."""
        names = linkable.imports_of(component.type.imports(engine), linkable.CLOCK)
        if not names:
            return
        linker.allow_shadowing = True
        try:
            with linker.root() as root:
                for name in names:
                    with root.add_instance(name) as li:
                        li.add_resource("pollable", self._pollable, _never_dropped)
                        add_func(li, "now", now)
                        add_func(li, "resolution", resolution)
                        add_func(li, "subscribe-duration", subscribe_duration)
                        add_func(li, "subscribe-instant", subscribe_instant)
        finally:
            linker.allow_shadowing = False

    @contextmanager
    def started(self, store: Store, guard: RunGuard) -> Iterator[None]:
        """Serve the clock to the guest of `store` on this thread, timed by `guard`, for the block."""
        _state.ready = self._ready_func(store)
        _state.guard = guard
        _state.base = time.monotonic_ns()
        try:
            yield
        finally:
            _state.ready = None
            _state.guard = None


class _State(threading.local):
    ready: Func | None = None
    guard: RunGuard | None = None
    base: int = 0


_state = _State()


def _never_dropped(store: StoreContext, rep: int) -> None:
    """The guest imports `pollable` from `wasi:io/poll`, so WASI's destructor frees pollables."""


@host_function
def now(store: StoreContext) -> int:
    """Nanoseconds since the run started."""
    return max(0, time.monotonic_ns() - _state.base)


@host_function
def resolution(store: StoreContext) -> int:
    return 1


@host_function
def subscribe_duration(store: StoreContext, duration: int) -> ResourceAny:
    """Wait `duration` ns (less when the run is stopped or reaches its deadline), then a ready pollable."""
    return _after(store, duration / 1e9)


@host_function
def subscribe_instant(store: StoreContext, when: int) -> ResourceAny:
    """Wait until `when` (ns since the run started; see `subscribe_duration`), then a ready pollable."""
    return _after(store, (when - (time.monotonic_ns() - _state.base)) / 1e9)


def _after(store: StoreContext, seconds: float) -> ResourceAny:
    ready, guard = _state.ready, _state.guard
    if ready is None or guard is None:
        raise RuntimeError("the host clock is used outside a run (a host bug)")
    if seconds > 0:
        guard.wait(seconds)
    pollable: ResourceAny = ready(store)
    ready.post_return(store)
    return pollable
