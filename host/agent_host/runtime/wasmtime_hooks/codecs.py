"""Codecs: converters between Python values and component values, built once per WIT type."""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, Protocol

from wasmtime.component import (
    U8,
    ListType,
    OptionType,
    Record,
    RecordType,
    ResultType,
    String,
    TupleType,
    ValType,
    Variant,
    VariantType,
)

from agent_host.runtime.wasmtime_hooks.checks import ffi

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
