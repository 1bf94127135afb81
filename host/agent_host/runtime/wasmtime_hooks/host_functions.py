"""Host functions through our own trampoline, each function's types read once (`add_func`)."""

from __future__ import annotations

import ctypes
import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

from wasmtime import StoreContext, WasmtimeError
from wasmtime.component import (
    FuncType,
    LinkerInstance,
    ResourceAny,
)

from agent_host.runtime.wasmtime_hooks.checks import available, error_pointer, ffi
from agent_host.runtime.wasmtime_hooks.codecs import Codec, codec

logger = logging.getLogger(__name__)

# -- host functions: our own trampoline, each function's types read once ----------------------
#
# `add_func(li, name, fn)` registers `fn` with the C entry point `LinkerInstance.add_func` uses but
# a trampoline of ours: the first call of a function builds its codecs from the type wasmtime
# passes, later calls reuse them. Nothing in wasmtime-py is patched. Invariant: a registered
# function has one type at every call, because a linker serves one component (`Runtime.instantiate`).

HostFn = Callable[..., Any]


class _Signature:
    """A function's parameter codecs and result codec (None: no result)."""

    def __init__(self, params: list[Codec], result: Codec | None) -> None:
        self.params = params
        self.result = result


class _Entry:
    def __init__(self, fn: HostFn) -> None:
        self.fn = fn
        self.signature: _Signature | None = None
        self._lock = threading.Lock()

    def signature_of(self, store: StoreContext, ty_raw: Any) -> _Signature:
        """The cached signature, read from `ty_raw` at the first call (once, whatever the threads)."""
        signature = self.signature
        if signature is None:
            with self._lock:
                signature = self.signature
                if signature is None:
                    with FuncType._from_ptr(ty_raw, owner=store) as fty:
                        result = fty.result
                        signature = _Signature(
                            [codec(ty) for _, ty in fty.params], None if result is None else codec(result)
                        )
                    self.signature = signature
        return signature


_entries: dict[int, _Entry] = {}
_counter = itertools.count(1)


def add_func(li: LinkerInstance, name: str, fn: HostFn) -> None:
    """Define `fn` as function `name` of `li`: through our trampoline (types read once), or with
    wasmtime-py's `LinkerInstance.add_func` when the `host_functions` hook is unavailable.

    `fn(store, *args)` is called as wasmtime-py calls host functions. Whatever it raises traps the
    guest with its message; wrap it with `thread_state.host_function` to relay exceptions per thread.
    """
    if not available("host_functions"):
        li.add_func(name, fn)
        return
    li._assert_not_locked()
    encoded = name.encode("utf-8")
    idx = next(_counter)
    _entries[idx] = _Entry(fn)
    error = ffi.wasmtime_component_linker_instance_add_func(
        li.ptr(), ctypes.create_string_buffer(encoded), len(encoded), _callbacks()[0], idx, _callbacks()[1]
    )
    if error:
        del _entries[idx]
        raise WasmtimeError._from_ptr(error)


def _call(entry: _Entry, store: StoreContext, ty_raw: Any, args: Any, nargs: int, results: Any) -> None:
    signature = entry.signature_of(store, ty_raw)
    params = signature.params
    if len(params) != nargs:
        raise WasmtimeError(f"host function called with {nargs} arguments, its type has {len(params)}")
    value = entry.fn(store, *[params[i].lift(args[i]) for i in range(nargs)])
    if signature.result is not None:
        signature.result.lower(store, value, results)


def borrowed_rep(store: StoreContext, handle: ResourceAny) -> int:
    """The rep of a borrowed host resource `handle`, the borrow consumed (as `handle.to_host(store).rep`
    does, without the intermediate `ResourceHost`). Raises `WasmtimeError` for a guest resource."""
    if not available("host_functions"):
        public: int = handle.to_host(store).rep
        return public
    host = ctypes.POINTER(ffi.wasmtime_component_resource_host_t)()
    error = ffi.wasmtime_component_resource_any_to_host(store._context(), handle.ptr(), ctypes.byref(host))
    if error:
        raise WasmtimeError._from_ptr(error)
    try:
        rep: int = ffi.wasmtime_component_resource_host_rep(host)
        return rep
    finally:
        ffi.wasmtime_component_resource_host_delete(host)


def _trampoline(idx: int | None, context: Any, ty_raw: Any, args: Any, nargs: int, results: Any, nresults: int) -> int:
    store = StoreContext(context)
    try:
        _call(_entries[idx or 0], store, ty_raw, args, nargs, results)
    except WasmtimeError as exc:
        return ctypes.cast(exc._consume(), ctypes.c_void_p).value or 0
    except Exception as exc:  # boundary: a conversion failure traps the guest, never unwinds into C
        return error_pointer(f"host function failed: {type(exc).__name__}: {exc}")
    finally:
        store._invalidate()
    return 0


def _finalize(idx: int | None) -> None:
    _entries.pop(idx or 0, None)


_made: list[Any] = []


def _callbacks() -> tuple[Any, Any]:
    """The ctypes trampoline and finalizer, made once (alive for the process: linkers copy them)."""
    if not _made:
        _made.extend(
            [
                ffi.wasmtime_component_func_callback_t(_trampoline),
                ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_finalize),
            ]
        )
    return _made[0], _made[1]
