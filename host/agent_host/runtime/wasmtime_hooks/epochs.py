"""The epoch-deadline callback (`watch_epochs`): a run's limits checked every slice, the run resumed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from wasmtime import Store

from agent_host.runtime.wasmtime_hooks.checks import available, bindings, error_pointer, no_finalizer

# -- the epoch-deadline callback (no public path in wasmtime-py 50) ----------------------------

EpochCallback = Callable[[], "int | str"]
"""Called on the guest's thread each time running wasm reaches its store's epoch deadline: the
number of ticks to run on, or the message to trap with. Must not raise."""

_CONTINUE: Final = 0
"""WASMTIME_UPDATE_DEADLINE_CONTINUE: keep running with the new deadline."""


class EpochWatch:
    """The ctypes callbacks registered on one store by `watch_epochs`; keep it as long as the store."""

    def __init__(self, store: Store, callback: EpochCallback) -> None:
        entry = bindings._wasmtime_store_epoch_deadline_callback.argtypes
        self._callback = callback
        self._c_callback = entry[1](self._on_deadline)
        self._c_finalizer = entry[3](no_finalizer)
        bindings.wasmtime_store_epoch_deadline_callback(store.ptr(), self._c_callback, None, self._c_finalizer)

    def _on_deadline(self, context: Any, data: Any, delta: Any, kind: Any) -> int:
        try:
            verdict = self._callback()
            if isinstance(verdict, int):
                delta[0] = verdict
                kind[0] = _CONTINUE
                return 0
            message = verdict
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's C frames
            message = f"agent-host: host error in the epoch callback: {exc!r}"
        return error_pointer(message)


def watch_epochs(store: Store, callback: EpochCallback) -> EpochWatch | None:
    """Register `callback` as `store`'s epoch-deadline callback (see `EpochCallback`); None when the
    `epoch_callback` hook is unavailable: then reaching the deadline traps the guest (wasmtime's
    default), which cannot be resumed."""
    if not available("epoch_callback"):
        return None
    return EpochWatch(store, callback)
