"""The door's checks: what each hook relies on in the installed wasmtime-py, verified at import.

`UNAVAILABLE` says why each hook is not usable here (None: usable); `available(hook)` is how the
other modules of the door ask. `ffi` and `bindings` are wasmtime-py's private ctypes modules (None
in another layout of wasmtime-py: every hook then falls back).
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import inspect
import logging
from collections.abc import Sequence
from typing import Any, Final, Literal

from wasmtime import StoreContext, WasmtimeError
from wasmtime.component import (
    FuncType,
    LinkerInstance,
    ValType,
)

logger = logging.getLogger(__name__)

ffi: Any
bindings: Any
try:
    from wasmtime import _bindings as bindings  # the generated bindings (private ctypes entry points)
    from wasmtime import _ffi as ffi  # the bindings plus wasmtime-py's helpers and constants
except ImportError:  # another layout of wasmtime-py: every hook falls back
    ffi = bindings = None

TESTED_VERSIONS: Final = ("50.0.1",)
"""The wasmtime versions these hooks were tested with; on any other, the runtime takes the public paths."""

WASMTIME_VERSION: Final = importlib.metadata.version("wasmtime")

Hook = Literal["host_functions", "epoch_callback", "memory_creator"]
HOOKS: Final[tuple[Hook, ...]] = ("host_functions", "epoch_callback", "memory_creator")

# -- checks -------------------------------------------------------------------------------------


def _missing(owner: object, *names: str) -> list[str]:
    label = getattr(owner, "__name__", type(owner).__name__)
    return [f"{label}.{name}" for name in names if not hasattr(owner, name)]


def _argtypes(function: str) -> Sequence[Any] | None:
    entry = getattr(bindings, f"_{function}", None)
    return getattr(entry, "argtypes", None)


def _callback_args(callback_type: Any) -> Sequence[Any] | None:
    return getattr(callback_type, "_argtypes_", None)


def _fields(structure: Any) -> set[str]:
    return {name for name, *_ in getattr(structure, "_fields_", [])}


def _check_common() -> str | None:
    if WASMTIME_VERSION not in TESTED_VERSIONS:
        return (
            f"wasmtime {WASMTIME_VERSION} is not a version these hooks were tested with ({', '.join(TESTED_VERSIONS)})"
        )
    if ffi is None or bindings is None:
        return "wasmtime-py has no modules wasmtime._ffi and wasmtime._bindings"
    missing = _missing(WasmtimeError, "_consume")
    if missing:
        return f"missing {', '.join(missing)}"
    return None


def _check_host_functions() -> str | None:
    missing = [
        *_missing(
            ffi,
            "wasmtime_component_linker_instance_add_func",
            "wasmtime_component_func_callback_t",
            "wasmtime_component_resource_any_to_host",
            "wasmtime_component_resource_host_rep",
            "wasmtime_component_resource_host_delete",
            "wasmtime_component_resource_host_t",
            "wasmtime_component_val_t",
            "wasmtime_component_val_new",
            "wasmtime_component_val_delete",
            "wasmtime_component_vallist_t",
            "wasmtime_component_vallist_new_uninit",
            "wasmtime_component_vallist_delete",
            "wasmtime_component_valrecord_t",
            "wasmtime_component_valrecord_new_uninit",
            "wasmtime_component_valrecord_delete",
            "wasmtime_component_valtuple_t",
            "wasmtime_component_valtuple_new_uninit",
            "wasmtime_component_valtuple_delete",
            "wasm_byte_vec_t",
            "wasm_byte_vec_new",
            "wasm_byte_vec_delete",
            "wasm_byte_t",
            "str_to_capi",
            "to_str",
            *(f"WASMTIME_COMPONENT_{kind}" for kind in ("BOOL", "STRING", "LIST", "RECORD", "TUPLE")),
            *(f"WASMTIME_COMPONENT_{kind}" for kind in ("VARIANT", "OPTION", "RESULT")),
        ),
        *_missing(FuncType, "_from_ptr"),
        *_missing(LinkerInstance, "_assert_not_locked", "ptr"),
        *_missing(StoreContext, "_context", "_invalidate"),
        *_missing(WasmtimeError, "_from_ptr"),
        *_missing(ValType, "convert_from_c", "convert_to_c", "add_classes"),
    ]
    if missing:
        return f"missing {', '.join(missing)}"
    callback = ffi.wasmtime_component_func_callback_t
    expected = [
        ctypes.POINTER(ffi.wasmtime_component_linker_instance_t),
        ctypes.POINTER(ctypes.c_char),
        ctypes.c_size_t,
        callback,
        ctypes.c_void_p,
        ctypes.CFUNCTYPE(None, ctypes.c_void_p),
    ]
    if list(_argtypes("wasmtime_component_linker_instance_add_func") or []) != expected:
        return "wasmtime_component_linker_instance_add_func has another signature"
    if len(_callback_args(callback) or []) != 7:
        return "wasmtime_component_func_callback_t has another signature"
    if list(inspect.signature(FuncType._from_ptr).parameters) != ["ptr", "owner"]:
        return "FuncType._from_ptr has another signature"
    union = _fields(ffi.wasmtime_component_valunion_t) if hasattr(ffi, "wasmtime_component_valunion_t") else set()
    needed = {"boolean", "string", "list", "record", "tuple", "variant", "option", "result"}
    if _fields(ffi.wasmtime_component_val_t) != {"kind", "of"} or not needed <= union:
        return "wasmtime_component_val_t has another layout"
    return None


def _check_epoch_callback() -> str | None:
    missing = _missing(bindings, "wasmtime_store_epoch_deadline_callback", "wasmtime_update_deadline_kind_t")
    if missing:
        return f"missing {', '.join(missing)}"
    args = _argtypes("wasmtime_store_epoch_deadline_callback")
    if args is None or len(args) != 4 or len(_callback_args(args[1]) or []) != 4:
        return "wasmtime_store_epoch_deadline_callback has another signature"
    return None


def _check_memory_creator() -> str | None:
    missing = _missing(
        ffi,
        "wasmtime_config_host_memory_creator_set",
        "wasmtime_config_memory_init_cow_set",
        "wasmtime_memory_creator_t",
        "wasmtime_new_memory_callback_t",
        "wasmtime_memory_get_callback_t",
        "wasmtime_memory_grow_callback_t",
        "wasmtime_linear_memory_t",
    )
    if missing:
        return f"missing {', '.join(missing)}"
    if _fields(ffi.wasmtime_memory_creator_t) != {"env", "new_memory", "finalizer"}:
        return "wasmtime_memory_creator_t has another layout"
    if _fields(ffi.wasmtime_linear_memory_t) != {"env", "get_memory", "grow_memory", "finalizer"}:
        return "wasmtime_linear_memory_t has another layout"
    if len(_callback_args(ffi.wasmtime_new_memory_callback_t) or []) != 7:
        return "wasmtime_new_memory_callback_t has another signature"
    return None


def _check(hook: Hook) -> str | None:
    try:
        common = _check_common()
        if common is not None:
            return common
        return {
            "host_functions": _check_host_functions,
            "epoch_callback": _check_epoch_callback,
            "memory_creator": _check_memory_creator,
        }[hook]()
    except Exception as exc:  # boundary: a check that cannot even run means the hook is not usable
        return f"its check failed: {type(exc).__name__}: {exc}"


UNAVAILABLE: Final[dict[Hook, str | None]] = {hook: _check(hook) for hook in HOOKS}
"""Why each hook is not usable here (None: usable). Tests set an entry to force the public path."""

_logged: set[Hook] = set()


def available(hook: Hook) -> bool:
    """Whether `hook` is usable with the installed wasmtime-py; the first time it is not, why is
    logged at debug."""
    reason = UNAVAILABLE[hook]
    if reason is None:
        return True
    if hook not in _logged:
        _logged.add(hook)
        logger.debug("wasmtime hook %s unavailable, using wasmtime-py's public API instead: %s", hook, reason)
    return False


def error_pointer(message: str) -> int:
    """A new `wasmtime_error_t*` (as an int) with `message`, owned by wasmtime from now on."""
    pointer: int = ctypes.cast(WasmtimeError(message)._consume(), ctypes.c_void_p).value or 0
    return pointer


def no_finalizer(data: Any) -> None:
    """A finalizer for callback data that needs none (the ctypes callbacks are kept alive by their owners)."""
    return None
