"""Host functions through the project's trampoline: types read once, values converted as wasmtime-py does.

Each host function's types are read through the C API once, cached in a trampoline owned by this
project per linker (not at each call, and without patching the library); values convert as
wasmtime-py converts them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from wasmtime.component import (
    F32,
    F64,
    Bool,
    BorrowType,
    ComponentInstanceType,
    EnumType,
    FlagsType,
    FuncType,
    ListType,
    OptionType,
    OwnType,
    Record,
    RecordType,
    ResultType,
    String,
    TupleType,
    ValType,
    Variant,
    VariantType,
)

from agent_host import Host
from agent_host._support.paths import cache_dir
from agent_host.operations import interface
from agent_host.runtime import wasmtime_hooks
from agent_host.runtime.engine import Runtime
from tests.support import probe_steps as step
from tests.support.component import ok, probe

pytestmark = pytest.mark.component

MOCK = """
[tooling.mock]
kind = "mock"
[[tooling.mock.tools]]
name = "echo"
repeat_last = true
results = [{ text = "hi" }]
"""


def test_each_imports_types_are_read_once_however_many_calls(
    make_host: Any, probe_wasm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    params = FuncType.params

    def counted(self: FuncType) -> Any:
        reads.append(1)
        return params.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(FuncType, "params", property(counted))
    host: Host = make_host(MOCK)
    steps = [step.get("mock", as_="t"), step.timed_name("t", 40), step.timed("t", "echo", 40, args="{}")]
    results = probe(host, probe_wasm, steps)
    assert [isinstance(ok(result), int | float | bool) for result in results] == [True, True, True]
    # get, name, call-tool-blocking and the host clock's `now` (the guest times its calls) once each
    # (not 81 times), the export `run` (read by wasmtime-py per call), and the clock adapter's `ready`
    # called once when the runtime reads WASI's pollable type
    assert len(reads) == 6
    probe(host, probe_wasm, steps)
    assert len(reads) == 7  # the next run of the same component reuses its linker and its signatures


def _functions(runtime: Runtime, component: Any) -> Iterator[tuple[str, FuncType]]:
    for iface in ("tooling", "inbox", "log"):
        instance = component.type.imports(runtime.engine)[interface(iface)].ty
        assert isinstance(instance, ComponentInstanceType)
        for name, extern in instance.exports(runtime.engine).items():
            if isinstance(extern.ty, FuncType):
                yield f"{iface}.{name}", extern.ty


def _samples(ty: ValType) -> list[Any]:
    """Values of every shape `ty` has (each case of a variant, none and some, empty lists)."""
    if isinstance(ty, String):
        return ["", "héllo ✓"]
    if isinstance(ty, ListType):
        element = _samples(ty.element)
        return [[], element[-1:] * 2] if element else []
    if isinstance(ty, RecordType):
        record = Record()
        for name, field in ty.fields:
            values = _samples(field)
            if not values:
                return []
            setattr(record, name, values[-1])
        return [record]
    if isinstance(ty, TupleType):
        return [tuple(_samples(element)[-1] for element in ty.elements)]
    if isinstance(ty, EnumType):
        return list(ty.names)
    if isinstance(ty, FlagsType):
        return [set(), set(ty.names)]
    if isinstance(ty, OwnType | BorrowType):
        return []  # needs a store; converted by wasmtime-py itself
    if isinstance(ty, VariantType | OptionType | ResultType):
        codec = wasmtime_hooks.codec(ty)
        tagged = codec.classes == (Variant,)
        cases = ty.cases if isinstance(ty, VariantType) else (
            [("none", None), ("some", ty.payload)] if isinstance(ty, OptionType) else [("ok", ty.ok), ("err", ty.err)]
        )  # fmt: skip
        shapes: list[Any] = []
        for name, payload in cases:
            payloads = [None] if payload is None else _samples(payload)
            shapes += [Variant(name, p) if tagged else p for p in payloads]
        return shapes
    if isinstance(ty, Bool):
        return [False, True]
    if isinstance(ty, F32 | F64):
        return [0.5]
    return [7]  # the integers


def _lower_then_lift(lower: Any, lift: Any, value: Any) -> Any:
    raw = wasmtime_hooks.new_component_value()
    lower(None, value, ctypes.pointer(raw))
    return lift(raw)


def test_codecs_convert_every_type_of_our_wit_exactly_as_wasmtime_py(probe_wasm: Path) -> None:
    checked = 0
    with Runtime(cache_dir()) as runtime:
        component = runtime.load(probe_wasm)
        for name, func in _functions(runtime, component):
            types = [ty for _, ty in func.params] + ([func.result] if func.result is not None else [])
            for ty in types:
                codec = wasmtime_hooks.codec(ty)
                for value in _samples(ty):
                    by_codec = _lower_then_lift(codec.lower, ty.convert_from_c, value)
                    by_wasmtime = _lower_then_lift(ty.convert_to_c, codec.lift, value)
                    assert by_codec == value == by_wasmtime, (name, value)
                    assert type(by_codec) is type(value) is type(by_wasmtime), name
                    checked += 1
    assert checked > 40  # every record, option and result of the world, each case of each


def test_a_value_of_the_wrong_shape_is_refused_like_wasmtime_py_does(probe_wasm: Path) -> None:
    with Runtime(cache_dir()) as runtime:
        component = runtime.load(probe_wasm)
        func = dict(_functions(runtime, component))["tooling.[method]tooling.call-tool-blocking"]
        assert func.result is not None
        codec = wasmtime_hooks.codec(func.result)
        raw = wasmtime_hooks.new_component_value()
        with pytest.raises(TypeError, match="expected Variant type"):
            codec.lower(None, "not a variant", ctypes.pointer(raw))
        with pytest.raises(ValueError, match="value not valid for this variant"):
            codec.lower(None, Variant("neither", None), ctypes.pointer(raw))
        with pytest.raises(AttributeError):
            codec.lower(None, Variant("ok", Record()), ctypes.pointer(raw))  # a record without its fields


def test_a_list_with_one_bad_element_is_refused_and_what_was_lowered_is_freed(probe_wasm: Path) -> None:
    with Runtime(cache_dir()) as runtime:
        component = runtime.load(probe_wasm)
        func = dict(_functions(runtime, component))["tooling.[method]tooling.list-tools"]
        assert isinstance(func.result, ResultType) and func.result.ok is not None
        codec = wasmtime_hooks.codec(func.result)
        tool = _samples(func.result.ok)[-1][0]  # a complete `tool` record
        raw = wasmtime_hooks.new_component_value()
        for _ in range(200):  # a double free or a leak of the lowered elements would show (crash, growth)
            with pytest.raises(AttributeError):
                codec.lower(None, [tool, tool, "not a tool"], ctypes.pointer(raw))
        assert _lower_then_lift(codec.lower, func.result.convert_from_c, [tool]) == [tool]


def test_wasmtime_py_s_public_path_gives_a_guest_the_same_results(
    make_host: Any, probe_wasm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a wasmtime the hooks were not tested with, host functions go through
    wasmtime-py's `LinkerInstance.add_func` and time limits through plain epoch deadlines."""
    steps = [
        step.get("mock", as_="t"),
        step.kind("t"),
        step.name("t"),
        step.list_tools("t"),
        step.call_blocking("t", "echo", '{"x": [1, "é"]}'),  # as written: non-ASCII text, not escaped
        step.call_blocking("t", "missing"),
        step.sleep(1),
        step.drop("t"),
    ]
    fast = probe(make_host(MOCK), probe_wasm, steps)
    for hook in ("host_functions", "epoch_callback"):
        monkeypatch.setitem(wasmtime_hooks.UNAVAILABLE, hook, "forced by the test")
    assert probe(make_host(MOCK), probe_wasm, steps) == fast
    assert [next(iter(result)) for result in fast] == ["ok"] * 5 + ["err"] + ["ok"] * 2
