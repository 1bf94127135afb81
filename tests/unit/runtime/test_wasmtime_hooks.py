"""The one door to wasmtime-py's internals (`runtime.wasmtime_hooks`): each hook works on the installed
wasmtime, its public path (forced here) gives the same results, and no other module of the package
names a private module or attribute of wasmtime-py.

The door checks at import that what it relies on exists, and the version it was tested with, and falls
back to the public path otherwise. Components and core modules from inline WAT.
"""

from __future__ import annotations

import ast
import logging
import pkgutil
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import wasmtime
import wasmtime.component
from packaging.requirements import Requirement
from wasmtime import Config, Engine, Func, FuncType, Instance, Module, Store, StoreContext, Trap, WasmtimeError
from wasmtime.component import Component, Linker, ResourceAny, ResourceHost, ResourceType, Variant

from agent_host.policy.grants import Limit
from agent_host.runtime import engine as runtime_engine
from agent_host.runtime import memory_limit, wasmtime_hooks
from agent_host.runtime.compiler import engine_config
from agent_host.runtime.engine import EpochTicker
from agent_host.runtime.run_guard import RunGuard
from agent_host.runtime.wasmtime_hooks import checks

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "host" / "agent_host"
DOOR = PACKAGE / "runtime" / "wasmtime_hooks"


@pytest.fixture
def public_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`force(hook)` makes `hook` unavailable for the test, as on an untested wasmtime."""

    def force(hook: wasmtime_hooks.Hook) -> None:
        monkeypatch.setitem(wasmtime_hooks.UNAVAILABLE, hook, "forced by the test")

    yield force


def test_every_hook_is_available_on_the_tested_wasmtime() -> None:
    assert wasmtime_hooks.WASMTIME_VERSION in wasmtime_hooks.TESTED_VERSIONS
    assert wasmtime_hooks.UNAVAILABLE == dict.fromkeys(wasmtime_hooks.HOOKS)


# -- no private names outside the door ----------------------------------------------------------


def _wasmtime_private_names() -> set[str]:
    """Every `_name` (not dunder) that wasmtime-py's own source defines or uses, and its private modules."""
    names: set[str] = set()
    for path in Path(wasmtime.__file__).parent.rglob("*.py"):
        if path.stem.startswith("_") and not path.stem.startswith("__"):
            names.add(path.stem)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found: list[str] = []
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                found = [node.name]
            elif isinstance(node, ast.Attribute):
                found = [node.attr]
            elif isinstance(node, ast.Name):
                found = [node.id]
            names |= {name for name in found if name.startswith("_") and not name.startswith("__")}
    return names


def _private_touches(path: Path, private: set[str]) -> list[str]:
    """`path`'s imports of wasmtime's private modules or names, and its uses of wasmtime-py's private
    attribute names on anything but `self`/`cls` (line: what)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "wasmtime":
            parts = (node.module or "").split(".") + [alias.name for alias in node.names]
            if any(part.startswith("_") for part in parts):
                found.append(f"{node.lineno}: from {node.module} import {', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "wasmtime" and any(p.startswith("_") for p in a.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and node.attr in private:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr"):
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in private:
                found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def _may_hold_wasmtime_objects(path: Path) -> bool:
    """A module of the runtime (the only layer given wasmtime objects) or one that imports wasmtime:
    elsewhere a `_name` of wasmtime-py's (`_name`, `_context`) is the module's own."""
    return path.parent.name == "runtime" or "wasmtime" in path.read_text(encoding="utf-8")


def test_no_module_but_the_door_touches_wasmtime_py_internals() -> None:
    private = _wasmtime_private_names()
    assert {"_from_ptr", "_consume", "_context", "_invalidate", "_assert_not_locked", "_ffi", "_bindings"} <= private
    touches = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if DOOR not in path.parents and _may_hold_wasmtime_objects(path) and (found := _private_touches(path, private))
    }
    assert touches == {}, f"private wasmtime-py names outside runtime/wasmtime_hooks/: {touches}"


def test_the_import_contract_names_every_private_module_of_the_installed_wasmtime() -> None:
    modules = {
        f"{package.__name__}.{module.name}"
        for package in (wasmtime, wasmtime.component)
        for module in pkgutil.iter_modules(package.__path__)
        if module.name.startswith("_")
    }
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    door = [c for c in config["contracts"] if "wasmtime_hooks" in c["name"]]
    assert len(door) == 1 and door[0]["source_modules"] == ["agent_host"]
    assert modules <= set(door[0]["forbidden_modules"])
    assert all(rule.startswith("agent_host.runtime.wasmtime_hooks.") for rule in door[0]["ignore_imports"])


# -- the checks at import ------------------------------------------------------------------------


def test_another_wasmtime_version_takes_the_public_path_and_says_why_once_at_debug(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(checks, "WASMTIME_VERSION", "51.0.0")
    reasons = {hook: checks._check(hook) for hook in wasmtime_hooks.HOOKS}
    assert set(reasons.values()) == {"wasmtime 51.0.0 is not a version these hooks were tested with (50.0.1)"}
    monkeypatch.setattr(checks, "UNAVAILABLE", reasons)
    monkeypatch.setattr(checks, "_logged", set())
    with caplog.at_level(logging.DEBUG, logger="agent_host.runtime.wasmtime_hooks.checks"):
        assert not wasmtime_hooks.available("host_functions")
        assert not wasmtime_hooks.available("host_functions")
    assert [r.getMessage() for r in caplog.records] == [
        "wasmtime hook host_functions unavailable, using wasmtime-py's public API instead: "
        "wasmtime 51.0.0 is not a version these hooks were tested with (50.0.1)"
    ]


def test_a_missing_private_name_or_another_signature_makes_its_hook_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(wasmtime.component.FuncType, "_from_ptr")
    assert checks._check("host_functions") == "missing FuncType._from_ptr"
    monkeypatch.setattr(wasmtime_hooks.bindings._wasmtime_store_epoch_deadline_callback, "argtypes", [])
    assert checks._check("epoch_callback") == "wasmtime_store_epoch_deadline_callback has another signature"
    monkeypatch.delattr(wasmtime_hooks.ffi, "wasmtime_config_host_memory_creator_set")
    assert checks._check("memory_creator") == "missing wasmtime._ffi.wasmtime_config_host_memory_creator_set"


# -- host_functions: add_func and borrowed_rep ---------------------------------------------------

RESOURCE_TYPE = 0x51D

HOST_FUNCTIONS = """
(component
  (type $host (instance
    (export "r" (type (sub resource)))
    (export "make" (func (param "rep" u32) (result (own 0))))
    (export "rep-of" (func (param "x" (borrow 0)) (result u32)))
    (export "pick" (func (param "o" (option u32)) (param "r" (result u32 (error u32))) (result u32)))))
  (import "host" (instance $h (type $host)))
  (alias export $h "r" (type $r))
  (alias export $h "make" (func $make))
  (alias export $h "rep-of" (func $rep_of))
  (alias export $h "pick" (func $pick))
  (core func $make_l (canon lower (func $make)))
  (core func $rep_l (canon lower (func $rep_of)))
  (core func $pick_l (canon lower (func $pick)))
  (core func $drop (canon resource.drop $r))
  (core module $m
    (import "h" "make" (func $make (param i32) (result i32)))
    (import "h" "rep" (func $rep (param i32) (result i32)))
    (import "h" "pick" (func $pick (param i32 i32 i32 i32) (result i32)))
    (import "h" "drop" (func $drop (param i32)))
    (func (export "run") (param $n i32) (result i32) (local $x i32) (local $y i32)
      (local.set $x (call $make (local.get $n)))
      (local.set $y (call $rep (local.get $x)))
      (call $drop (local.get $x))
      (i32.add
        (local.get $y)
        (i32.add
          (call $pick (i32.const 1) (local.get $n) (i32.const 0) (i32.const 3))
          (call $pick (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 10))))))
  (core instance $i (instantiate $m (with "h" (instance
    (export "make" (func $make_l)) (export "rep" (func $rep_l)) (export "pick" (func $pick_l))
    (export "drop" (func $drop))))))
  (func (export "run") (param "n" u32) (result u32) (canon lift (core func $i "run")))
)
"""
"""`run(n)`: make a host resource of rep `n`, read its rep back through a borrow, drop it, then add
`pick(some(n), ok(3))` and `pick(none, err(10))`: `n + (n + 3) + 1000` when every value crossed right."""


def _make(store: StoreContext, rep: int) -> ResourceHost:
    return ResourceHost.own(rep, RESOURCE_TYPE)


def _rep_of(store: StoreContext, handle: ResourceAny) -> int:
    return wasmtime_hooks.borrowed_rep(store, handle)


def _pick(store: StoreContext, option: int | None, result: Variant) -> int:
    assert isinstance(result, Variant) and isinstance(result.payload, int)  # result<u32, u32>: tagged
    payload: int = result.payload
    return (option or 0) + (payload if result.tag == "ok" else 100 * payload)


def _run_host_functions(engine: Engine, n: int) -> int:
    linker = Linker(engine)
    with linker.root() as root, root.add_instance("host") as li:
        li.add_resource("r", ResourceType.host(RESOURCE_TYPE), lambda store, rep: None)
        wasmtime_hooks.add_func(li, "make", _make)
        wasmtime_hooks.add_func(li, "rep-of", _rep_of)
        wasmtime_hooks.add_func(li, "pick", _pick)
    store = Store(engine)
    try:
        instance = linker.instantiate(store, Component(engine, HOST_FUNCTIONS))
        run = instance.get_func(store, "run")
        assert run is not None
        values = []
        for _ in range(3):
            values.append(run(store, n))
            run.post_return(store)
        assert len(set(values)) == 1
        result: int = values[0]
        return result
    finally:
        store.close()


def _counting_type_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    params = wasmtime.component.FuncType.params

    def counted(self: wasmtime.component.FuncType) -> Any:
        reads.append(1)
        return params.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(wasmtime.component.FuncType, "params", property(counted))
    return reads


def test_host_functions_through_the_trampoline_read_each_type_once(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_type_reads(monkeypatch)
    assert _run_host_functions(Engine(), 7) == 7 + 10 + 1000
    assert len(reads) == 3 + 3  # each of the three imports once; the export `run` (wasmtime-py's) at each call


def test_host_functions_on_the_public_path_give_the_same_results(
    monkeypatch: pytest.MonkeyPatch, public_path: Any
) -> None:
    public_path("host_functions")
    reads = _counting_type_reads(monkeypatch)
    assert _run_host_functions(Engine(), 7) == 7 + 10 + 1000
    assert len(reads) > 3 * 3  # wasmtime-py's `add_func` and `to_host`: the types are read at every call


def test_a_guest_resource_is_refused_by_borrowed_rep_on_both_paths(public_path: Any) -> None:
    """`borrowed_rep` of a handle that is not the host's raises `WasmtimeError` (the guest traps)."""
    engine = Engine()
    for force in (False, True):
        if force:
            public_path("host_functions")
        store = Store(engine)
        try:
            with pytest.raises((WasmtimeError, TypeError, AttributeError)):
                wasmtime_hooks.borrowed_rep(store, object())  # type: ignore[arg-type]
        finally:
            store.close()


# -- epoch_callback: RunGuard's limits and stops --------------------------------------------------

SPIN = '(module (func (export "spin") (loop br 0)))'
WAIT_THEN_RETURN = """(module (import "h" "wait" (func $wait))
  (func (export "run") (result i32) (call $wait) (i32.const 42)))"""


@pytest.fixture(scope="module")
def ticking() -> Iterator[Engine]:
    engine = Engine(engine_config())
    ticker = EpochTicker(engine)
    yield engine
    ticker.close()


def _guard(store: Store, cpu_time: float, wall_time: float = 3600.0) -> RunGuard:
    return RunGuard(store, cpu_time=Limit(cpu_time, "cpu_time"), wall_time=Limit(wall_time, "timeout"))


def _spin_until_trapped(engine: Engine, cpu_time: float) -> tuple[RunGuard, str | None]:
    store = Store(engine)
    try:
        guard = _guard(store, cpu_time)
        spin = Instance(store, Module(engine, SPIN), []).exports(store)["spin"]
        assert isinstance(spin, Func)
        with pytest.raises((WasmtimeError, Trap)):
            spin(store)
        return guard, guard.after_trap()
    finally:
        store.close()


def test_a_run_over_its_cpu_time_traps_with_the_cpu_limit_on_both_paths(ticking: Engine, public_path: Any) -> None:
    callback, callback_reason = _spin_until_trapped(ticking, 0.1)
    public_path("epoch_callback")
    public, public_reason = _spin_until_trapped(ticking, 0.1)
    expected = "CPU time limit: run used more than 0.1 s of CPU (cpu_time)"
    assert (callback.tripped, callback_reason) == (public.tripped, public_reason) == ("cpu_time", expected)


def test_a_stop_ends_a_spinning_run_at_its_next_slice_with_the_callback(ticking: Engine) -> None:
    store = Store(ticking)
    try:
        guard = _guard(store, 3600.0)
        spin = Instance(store, Module(ticking, SPIN), []).exports(store)["spin"]
        assert isinstance(spin, Func)
        threading.Thread(target=guard.stop, args=("the test is done",)).start()
        with pytest.raises((WasmtimeError, Trap)):
            spin(store)
        assert (guard.tripped, guard.after_trap()) == ("stopped", "stopped by the host: the test is done")
    finally:
        store.close()


def _wait_in_the_host(engine: Engine, seconds: float) -> tuple[object, RunGuard]:
    """A guest whose host function waits `seconds` (as a guest's sleep does), then returns 42."""
    store = Store(engine)
    try:
        guard = _guard(store, cpu_time=0.05)

        def wait() -> None:
            guard.host_enter()
            try:
                guard.wait(seconds)
            finally:
                guard.host_exit()

        host = Func(store, FuncType([], []), wait)
        run = Instance(store, Module(engine, WAIT_THEN_RETURN), [host]).exports(store)["run"]
        assert isinstance(run, Func)
        return run(store), guard
    finally:
        store.close()


def test_waiting_in_the_host_is_not_cpu_time_on_both_paths(ticking: Engine, public_path: Any) -> None:
    """A wait twice as long as the CPU limit: the callback never counts it; the public path arms its
    deadline again as the host function returns."""
    value, guard = _wait_in_the_host(ticking, 0.1)
    assert (value, guard.tripped) == (42, None)
    public_path("epoch_callback")
    value, guard = _wait_in_the_host(ticking, 0.1)
    assert (value, guard.tripped) == (42, None)


# -- memory_creator ------------------------------------------------------------------------------

PAGE = 65536
GROW = """(module (memory (export "memory") 2)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))"""


def _growths(engine: Engine, *, store_limiter: bool) -> list[object]:
    budget = memory_limit.MemoryBudget(4 * PAGE)
    store = Store(engine)
    try:
        store.set_epoch_deadline(1 << 40)
        if store_limiter:
            store.set_limits(memory_size=budget.limit)
        with memory_limit.active(budget):
            grow = Instance(store, Module(engine, GROW), []).exports(store)["grow"]
            assert isinstance(grow, Func)
            return [grow(store, pages) for pages in (1, 1, 1, 0)]
    finally:
        store.close()


def test_memory_limits_on_both_paths_look_the_same_to_the_guest(public_path: Any) -> None:
    creator = Config()
    creator.epoch_interruption = True
    assert memory_limit.install(creator)
    public_path("memory_creator")
    limiter = Config()
    limiter.epoch_interruption = True
    assert not memory_limit.install(limiter)  # the runner then uses the store limiter
    expected = [2, 3, -1, 4]  # to 3 and 4 pages, refused at 5, 4 pages held
    assert _growths(Engine(creator), store_limiter=False) == expected
    assert _growths(Engine(limiter), store_limiter=True) == expected


# -- the declared dependency -----------------------------------------------------------------------


def test_the_declared_wasmtime_range_is_the_tested_one_not_an_exact_pin(monkeypatch: pytest.MonkeyPatch) -> None:
    """Users who install the pytest plugin into their own environment are not forced onto one
    wasmtime; compiled artifacts are keyed by the installed version (`engine.cache_key`)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [declared] = [Requirement(dep) for dep in project["dependencies"] if Requirement(dep).name == "wasmtime"]
    assert not any(spec.operator in ("==", "===") for spec in declared.specifier)
    assert all(declared.specifier.contains(version) for version in wasmtime_hooks.TESTED_VERSIONS)
    assert not declared.specifier.contains("51.0.0")  # a new major changes the API: tested first
    key = runtime_engine.key_of("0" * 64)
    monkeypatch.setattr(runtime_engine, "WASMTIME_VERSION", "50.0.2")
    assert runtime_engine.key_of("0" * 64) != key  # an artifact is never loaded by another wasmtime
