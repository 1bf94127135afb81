"""The one door to wasmtime-py's internals: every private name of wasmtime-py the host uses is used here.

wasmtime-py 50 makes host calls slow (it re-reads a function's types through the C API at every
call) and does not wrap two C APIs the runtime needs. Each of the three hooks below is checked at
import: the names, ctypes signatures and structure fields it relies on, and the installed wasmtime
against `TESTED_VERSIONS`. A hook found unusable is logged once at debug with why, and the rest of
the runtime takes the public path instead (slower or coarser, never wrong):

- `host_functions`: `add_func` registers a host function through our own trampoline, its types
  read once into codecs (plain Python data: `codec`); `borrowed_rep` reads a borrow's rep without an
  intermediate object. Public path: `LinkerInstance.add_func` (types re-read at every call) and
  `ResourceAny.to_host(store).rep`.
- `epoch_callback`: `watch_epochs` registers wasmtime's epoch-deadline callback, so a run's limits
  and stops are checked every slice and the run resumes. No public path in wasmtime-py: only
  `Store.set_epoch_deadline`, whose deadline traps for good (`runtime.run_guard` then arms the
  nearer limit).
- `memory_creator`: `install_memory_creator` lets the host allocate linear memories, so it knows
  when it refused a growth. No public path in wasmtime-py: the store limiter (`Store.set_limits`,
  which refuses silently; `runtime.memory_limit`).

With the public `LinkerInstance.add_func`, a value a host function returns that does not fit its
WIT type (a host bug) reaches the caller of the export as that Python exception, through
wasmtime-py's process-global slot, instead of trapping the guest with it.

Invariants: nothing raised in a callback unwinds into wasmtime's C frames (it becomes the
`WasmtimeError` that traps the guest); every ctypes callback lives as long as wasmtime may call it;
no other module of the package names a private module or attribute of wasmtime-py
(`tests/unit/runtime/test_wasmtime_hooks.py` and an import-linter contract check it).
Longer: the table of hooks and their public paths is this module's contract with the runtime.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import inspect
import itertools
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, Protocol

from wasmtime import Config, Store, StoreContext, WasmtimeError
from wasmtime.component import (
    U8,
    FuncType,
    LinkerInstance,
    ListType,
    OptionType,
    Record,
    RecordType,
    ResourceAny,
    ResultType,
    String,
    TupleType,
    ValType,
    Variant,
    VariantType,
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


def _error_pointer(message: str) -> int:
    """A new `wasmtime_error_t*` (as an int) with `message`, owned by wasmtime from now on."""
    pointer: int = ctypes.cast(WasmtimeError(message)._consume(), ctypes.c_void_p).value or 0
    return pointer


# -- codecs: converters between Python values and component values, built once per WIT type ----
#
# wasmtime-py's `ValType`s convert values correctly but re-read their structure through the C API
# at every conversion (a record's fields, a variant's cases and whether it is tagged). `codec(ty)`
# walks a `ValType` once into plain Python data. A codec converts exactly as the `ValType` it was
# built from does (same Python forms: `Record` with kebab-case attributes, `Variant` only for
# ambiguous variants, `bytes` for `list<u8>`); a lowering that fails leaves no C value behind.
# Types whose conversion makes no type query (numbers, enums, flags, resources) use their `ValType`.

CVal = Any
"""A `wasmtime_component_val_t` (ctypes structure)."""
CValPointer = Any
"""A pointer to a `wasmtime_component_val_t`."""


class Codec(Protocol):
    """Converts values of one WIT type."""

    @property
    def classes(self) -> tuple[type, ...]:
        """The Python classes `lift` returns (decides how an enclosing variant matches a value)."""
        ...

    def lift(self, c: CVal) -> Any:
        """The Python value of component value `c`, whose contents it takes over."""
        ...

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        """Write `value` into `*ptr`; raises `TypeError`/`ValueError` for a value of another shape."""
        ...


def _classes(ty: ValType) -> tuple[type, ...]:
    found: set[type] = set()
    ty.add_classes(found)
    return tuple(found)


def _clear(c: CVal) -> None:
    """Mark a converted element as a plain bool, so deleting its container frees nothing twice."""
    c.kind = ffi.WASMTIME_COMPONENT_BOOL
    c.of.boolean = False


def _fill(store: Any, data: Any, items: list[tuple[Codec, Any]]) -> None:
    """Lower each (codec, value) of `items` into `data[0]`, `data[1]`...; when one fails, the slots
    not filled are cleared (so the caller can delete the vector) and the error is raised."""
    done = 0
    try:
        for codec_, value in items:
            codec_.lower(store, value, ctypes.pointer(data[done]))
            done += 1
    except BaseException:
        for j in range(done, len(items)):
            _clear(data[j])
        raise


class _Direct:
    """A type whose own conversion asks no type question."""

    def __init__(self, ty: ValType) -> None:
        self.classes = _classes(ty)
        self.lift: Callable[[CVal], Any] = ty.convert_from_c
        self.lower: Callable[[Any, Any, CValPointer], None] = ty.convert_to_c


class _String:
    """`string`: one C call each way (wasmtime-py's `String` makes three and reads `ptr.contents` twice)."""

    def __init__(self) -> None:
        self.classes: tuple[type, ...] = (str,)
        self._bytes = ctypes.POINTER(ffi.wasm_byte_t)

    def lift(self, c: CVal) -> Any:
        vec = c.of.string
        try:
            return ctypes.string_at(vec.data, vec.size).decode("utf-8")
        finally:
            ffi.wasm_byte_vec_delete(ctypes.byref(vec))

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        if not isinstance(value, str):
            raise TypeError("expected string type")
        data = value.encode("utf-8")
        vec = ffi.wasm_byte_vec_t()
        ffi.wasm_byte_vec_new(ctypes.byref(vec), len(data), ctypes.cast(ctypes.c_char_p(data), self._bytes))
        contents = ptr.contents
        contents.kind = ffi.WASMTIME_COMPONENT_STRING
        contents.of.string = vec


class _List:
    def __init__(self, element: Codec, is_bytes: bool) -> None:
        self._element = element
        self._bytes = is_bytes
        self.classes: tuple[type, ...] = (bytes,) if is_bytes else (list,)

    def lift(self, c: CVal) -> Any:
        element = self._element
        try:
            values = []
            data = c.of.list.data
            for i in range(c.of.list.size):
                raw = data[i]
                values.append(element.lift(raw))
                _clear(raw)
            return bytes(values) if self._bytes else values
        finally:
            ffi.wasmtime_component_vallist_delete(ctypes.byref(c.of.list))

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        if not isinstance(value, bytes if self._bytes else list):
            raise TypeError("expected bytes value" if self._bytes else "expected list value")
        raw = ffi.wasmtime_component_vallist_t()
        ffi.wasmtime_component_vallist_new_uninit(raw, len(value))
        try:
            _fill(store, raw.data, [(self._element, item) for item in value])
        except BaseException:
            ffi.wasmtime_component_vallist_delete(ctypes.byref(raw))
            raise
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_LIST
        ptr.contents.of.list = raw


class _Record:
    def __init__(self, fields: list[tuple[str, Codec]]) -> None:
        self._fields = fields
        self.classes: tuple[type, ...] = (Record,)

    def lift(self, c: CVal) -> Any:
        record = Record()
        try:
            data = c.of.record.data
            for i, (name, field) in enumerate(self._fields):
                raw = data[i].val
                setattr(record, name, field.lift(raw))
                _clear(raw)
            return record
        finally:
            ffi.wasmtime_component_valrecord_delete(ctypes.byref(c.of.record))

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        fields = self._fields
        raw = ffi.wasmtime_component_valrecord_t()
        ffi.wasmtime_component_valrecord_new_uninit(raw, len(fields))
        done = 0
        try:
            for name, field in fields:
                entry = raw.data[done]
                field.lower(store, getattr(value, name), ctypes.pointer(entry.val))
                entry.name = ffi.str_to_capi(name)
                done += 1
        except BaseException:
            for j in range(done, len(fields)):
                _clear(raw.data[j].val)
                raw.data[j].name = ffi.str_to_capi("")
            ffi.wasmtime_component_valrecord_delete(ctypes.byref(raw))
            raise
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_RECORD
        ptr.contents.of.record = raw


class _Tuple:
    def __init__(self, elements: list[Codec]) -> None:
        self._elements = elements
        self.classes: tuple[type, ...] = (tuple,)

    def lift(self, c: CVal) -> Any:
        try:
            data = c.of.tuple.data
            values = []
            for i, element in enumerate(self._elements):
                raw = data[i]
                values.append(element.lift(raw))
                _clear(raw)
            return tuple(values)
        finally:
            ffi.wasmtime_component_valtuple_delete(ctypes.byref(c.of.tuple))

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        elements = self._elements
        if not isinstance(value, tuple):
            raise TypeError("expected tuple type")
        if len(value) != len(elements):
            raise TypeError("tuple length mismatch")
        raw = ffi.wasmtime_component_valtuple_t()
        ffi.wasmtime_component_valtuple_new_uninit(raw, len(elements))
        try:
            _fill(store, raw.data, list(zip(elements, value, strict=True)))
        except BaseException:
            ffi.wasmtime_component_valtuple_delete(ctypes.byref(raw))
            raise
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_TUPLE
        ptr.contents.of.tuple = raw


class _Case:
    """One case of a variant, option or result: its name, payload codec and the classes it matches."""

    def __init__(self, name: str, payload: Codec | None) -> None:
        self.name = name
        self.payload = payload
        self.classes: tuple[type, ...] = (object,) if payload is None else payload.classes


def _is_tagged(cases: list[_Case]) -> bool:
    """wasmtime-py's rule: tagged (`Variant`) when two cases map to overlapping Python classes."""
    seen: set[type] = set()
    for case in cases:
        if seen & set(case.classes):
            return True
        seen |= set(case.classes)
    return False


class _VariantLike:
    """A variant, option or result: a case chosen by tag (tagged) or by the value's class."""

    def __init__(self, kind: str, cases: list[_Case]) -> None:
        self._kind = kind
        self._cases = cases
        self._by_name = {case.name: case for case in cases}
        self._tagged = _is_tagged(cases)
        self.classes: tuple[type, ...] = (
            (Variant,) if self._tagged else tuple({c for case in cases for c in case.classes})
        )

    def _choose(self, value: Any) -> tuple[_Case, Any]:
        if self._tagged:
            if not isinstance(value, Variant):
                raise TypeError("expected Variant type")
            case = self._by_name.get(value.tag)
            if case is None:
                raise ValueError("value not valid for this variant")
            return case, value.payload
        for case in self._cases:
            if case.payload is None:
                if value is None:
                    return case, None
            elif isinstance(value, case.classes):
                return case, value
        raise ValueError("value not valid for this variant")

    def _lower_payload(self, store: Any, value: Any) -> tuple[str, Any]:
        case, payload = self._choose(value)
        if case.payload is None:
            return case.name, None
        raw = ffi.wasmtime_component_val_t()
        case.payload.lower(store, payload, ctypes.pointer(raw))
        return case.name, ffi.wasmtime_component_val_new(ctypes.byref(raw))

    def lower(self, store: Any, value: Any, ptr: CValPointer) -> None:
        name, raw = self._lower_payload(store, value)
        contents = ptr.contents
        if self._kind == "variant":
            contents.kind = ffi.WASMTIME_COMPONENT_VARIANT
            contents.of.variant.discriminant = ffi.str_to_capi(name)
            contents.of.variant.val = raw
        elif self._kind == "option":
            contents.kind = ffi.WASMTIME_COMPONENT_OPTION
            contents.of.option = raw
        else:
            contents.kind = ffi.WASMTIME_COMPONENT_RESULT
            contents.of.result.is_ok = name == "ok"
            contents.of.result.val = raw

    def lift(self, c: CVal) -> Any:
        if self._kind == "variant":
            tag = ffi.to_str(c.of.variant.discriminant)
            ffi.wasm_byte_vec_delete(ctypes.byref(c.of.variant.discriminant))
            raw = c.of.variant.val
        elif self._kind == "option":
            raw = c.of.option
            tag = "some" if raw else "none"
        else:
            raw = c.of.result.val
            tag = "ok" if c.of.result.is_ok else "err"
        case = self._by_name[tag]
        if case.payload is None:
            return Variant(tag) if self._tagged else None
        payload = case.payload.lift(raw.contents)
        _clear(raw.contents)
        ffi.wasmtime_component_val_delete(raw)
        return Variant(tag, payload) if self._tagged else payload


def codec(ty: ValType) -> Codec:
    """The codec of `ty`, with its structure (and that of every type inside it) read now, once.
    Only with the `host_functions` hook available."""
    if isinstance(ty, ListType):
        element = ty.element
        return _List(codec(element), isinstance(element, U8))
    if isinstance(ty, RecordType):
        return _Record([(name, codec(field)) for name, field in ty.fields])
    if isinstance(ty, TupleType):
        return _Tuple([codec(element) for element in ty.elements])
    if isinstance(ty, VariantType):
        return _VariantLike("variant", [_case(name, payload) for name, payload in ty.cases])
    if isinstance(ty, OptionType):
        return _VariantLike("option", [_Case("none", None), _case("some", ty.payload)])
    if isinstance(ty, ResultType):
        return _VariantLike("result", [_case("ok", ty.ok), _case("err", ty.err)])
    if isinstance(ty, String):
        return _String()
    return _Direct(ty)


def _case(name: str, payload: ValType | None) -> _Case:
    return _Case(name, None if payload is None else codec(payload))


def new_component_value() -> CVal:
    """An empty `wasmtime_component_val_t` to lower into (for tests of the codecs)."""
    return ffi.wasmtime_component_val_t()


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
        return _error_pointer(f"host function failed: {type(exc).__name__}: {exc}")
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
        self._c_finalizer = entry[3](_no_finalizer)
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
        return _error_pointer(message)


def watch_epochs(store: Store, callback: EpochCallback) -> EpochWatch | None:
    """Register `callback` as `store`'s epoch-deadline callback (see `EpochCallback`); None when the
    `epoch_callback` hook is unavailable: then reaching the deadline traps the guest (wasmtime's
    default), which cannot be resumed."""
    if not available("epoch_callback"):
        return None
    return EpochWatch(store, callback)


def _no_finalizer(data: Any) -> None:
    return None


# -- the memory creator (no public path in wasmtime-py 50) -------------------------------------


class MemoryCreator(Protocol):
    """Allocates the linear memories of every engine made from a `Config` it was installed on.
    Called on wasmtime's threads; must not raise (an exception becomes the error it returns)."""

    def new_memory(self, minimum: int, maximum: int, reserved: int, guard: int) -> int | str:
        """A new memory of `minimum` bytes (at most `maximum`; `reserved` bytes reserved, 0: the
        creator's choice; `guard` bytes of guard after the reservation): its key, or why not."""
        ...

    def get_memory(self, key: int) -> tuple[int, int, int] | None:
        """(base address, size, reserved capacity) in bytes of memory `key`; None if unknown."""
        ...

    def grow_memory(self, key: int, new_size: int) -> str | None:
        """Grow memory `key` to `new_size` bytes: None when done, else why not (the guest sees a
        failed `memory.grow`)."""
        ...

    def release(self, key: int) -> None:
        """Memory `key` is no longer used."""
        ...


class _CreatorCallbacks:
    """The ctypes callbacks of one `MemoryCreator` (alive for the process: engines copy pointers)."""

    def __init__(self, creator: MemoryCreator) -> None:
        self.creator = creator
        finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self.get = ffi.wasmtime_memory_get_callback_t(self._get)
        self.grow = ffi.wasmtime_memory_grow_callback_t(self._grow)
        self.release = finalizer(self._release)
        self.new = ffi.wasmtime_new_memory_callback_t(self._new)
        self.no_finalizer = finalizer(_no_finalizer)

    def _new(self, env: Any, ty: Any, minimum: int, maximum: int, reserved: int, guard: int, memory_ret: Any) -> int:
        try:
            made = self.creator.new_memory(minimum, maximum, reserved, guard)
            if isinstance(made, str):
                return _error_pointer(made)
            result = memory_ret[0]
            result.env = made
            result.get_memory = self.get
            result.grow_memory = self.grow
            result.finalizer = self.release
            return 0
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
            return _error_pointer(f"host error creating a linear memory: {exc!r}")

    def _get(self, env: Any, byte_size: Any, byte_capacity: Any) -> int:
        try:
            found = self.creator.get_memory(env or 0)
        except BaseException:  # boundary: nothing may unwind into wasmtime's frames
            logger.exception("reading linear memory %r", env)
            found = None
        if found is None:
            return 0
        base, size, capacity = found
        byte_size[0] = size
        byte_capacity[0] = capacity
        return base

    def _grow(self, env: Any, new_size: int) -> int:
        try:
            refused = self.creator.grow_memory(env or 0, new_size)
        except BaseException as exc:  # boundary: nothing may unwind into wasmtime's frames
            refused = f"host error growing a linear memory: {exc!r}"
        return 0 if refused is None else _error_pointer(refused)

    def _release(self, env: Any) -> None:
        try:
            self.creator.release(env or 0)
        except BaseException:  # boundary: nothing may unwind into wasmtime's frames
            logger.exception("releasing a linear memory")


_creators: dict[int, _CreatorCallbacks] = {}


def install_memory_creator(config: Config, creator: MemoryCreator) -> bool:
    """Make `config`'s engines allocate linear memories with `creator` (and turn `memory_init_cow`
    off, which that requires: wasmtime maps images copy-on-write only into memories it allocates).
    False, with `config` unchanged, when the `memory_creator` hook is unavailable."""
    if not available("memory_creator"):
        return False
    callbacks = _creators.get(id(creator))
    if callbacks is None:
        callbacks = _creators[id(creator)] = _CreatorCallbacks(creator)
    c_creator = ffi.wasmtime_memory_creator_t()
    c_creator.new_memory = callbacks.new
    c_creator.finalizer = callbacks.no_finalizer
    ffi.wasmtime_config_memory_init_cow_set(config.ptr(), False)
    ffi.wasmtime_config_host_memory_creator_set(config.ptr(), ctypes.byref(c_creator))  # copied by wasmtime
    return True
