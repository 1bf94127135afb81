"""The host's memory creator: it enforces a run's memory limit and records what it refused.

wasmtime's store limiter refuses growth silently; the memory creator records each refusal, so the host
can tell that a guest ran out of memory. Core modules from WAT on an engine with the host's config.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from wasmtime import Engine, Instance, Module, Store, Trap, WasmtimeError

from agent_host.runtime import memory_limit
from agent_host.runtime.compiler import engine_config

PAGE = 65536
WAT = """(module (memory (export "memory") 2)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "far") (param i32) (result i32) (i32.load offset=0x100000 (local.get 0)))
  (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1))))"""


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    assert memory_limit.INSTALLED_BY_DEFAULT, "wasmtime-py 50 has the memory-creator API"
    yield Engine(engine_config())


def instance(engine: Engine, budget: memory_limit.MemoryBudget | None) -> tuple[Store, dict[str, object]]:
    store = Store(engine)
    store.set_epoch_deadline(1 << 40)  # the host's engines interrupt by epoch; this test never ticks
    module = Module(engine, WAT)
    if budget is None:
        made = Instance(store, module, [])
    else:
        with memory_limit.active(budget):
            made = Instance(store, module, [])
    return store, dict(made.exports(store))


def call(store: Store, exports: dict[str, object], name: str, *args: int) -> object:
    func = exports[name]
    assert callable(func)
    return func(store, *args)


def test_a_growth_over_the_limit_fails_for_the_guest_and_is_recorded(engine: Engine) -> None:
    budget = memory_limit.MemoryBudget(4 * PAGE)
    store, exports = instance(engine, budget)
    with memory_limit.active(budget):
        assert call(store, exports, "grow", 2) == 2  # to 4 pages: at the limit, allowed
        assert budget.refused is None
        assert call(store, exports, "grow", 1) == -1  # as the store limiter: the guest sees -1
    assert budget.refused == memory_limit.Refusal(4 * PAGE, 5 * PAGE)
    assert (budget.refusals, budget.peak) == (1, 4 * PAGE)
    call(store, exports, "store", 4 * PAGE - 4, 7)  # what was granted is usable
    assert call(store, exports, "load", 4 * PAGE - 4) == 7
    store.close()


def test_a_memory_over_the_limit_at_instantiation_is_refused_and_recorded(engine: Engine) -> None:
    budget = memory_limit.MemoryBudget(PAGE)
    with pytest.raises(WasmtimeError):
        instance(engine, budget)
    assert budget.refused == memory_limit.Refusal(0, 2 * PAGE)


def test_accesses_past_the_memory_and_into_its_guard_trap(engine: Engine) -> None:
    store, exports = instance(engine, memory_limit.MemoryBudget(4 * PAGE))
    for name, address in (("load", 2 * PAGE), ("far", 0xFFFFFFF0)):
        with pytest.raises(Trap, match="out of bounds memory access"):
            call(store, exports, name, address)
    store.close()


def test_a_memory_made_with_no_budget_active_has_no_limit_here(engine: Engine) -> None:
    store, exports = instance(engine, None)
    assert call(store, exports, "grow", 64) == 2
    store.close()


def test_an_image_is_mapped_copy_on_write_into_each_memory_made_while_it_is_named(engine: Engine) -> None:
    data = bytearray(PAGE)
    data[8:12] = (1234).to_bytes(4, "little")
    image = memory_limit.MappedImage.of(bytes(data))
    try:
        with memory_limit.imaged(image):
            first, first_exports = instance(engine, memory_limit.MemoryBudget(4 * PAGE))
            second, second_exports = instance(engine, memory_limit.MemoryBudget(4 * PAGE))
        call(first, first_exports, "store", 8, 99)  # written in the first memory only
        assert call(first, first_exports, "load", 8) == 99
        assert call(second, second_exports, "load", 8) == 1234
        assert call(second, second_exports, "load", PAGE + 8) == 0  # past the image: zero, as wasm says
        third, third_exports = instance(engine, memory_limit.MemoryBudget(4 * PAGE))  # no image named: an empty memory
        assert call(third, third_exports, "load", 8) == 0
        for store in (first, second, third):
            store.close()
    finally:
        image.close()


def test_an_image_larger_than_the_memory_fails_the_instantiation(engine: Engine) -> None:
    image = memory_limit.MappedImage.of(bytes(3 * PAGE))  # the module's memory has 2 pages
    try:
        with memory_limit.imaged(image), pytest.raises(WasmtimeError, match="larger than the memory"):
            instance(engine, memory_limit.MemoryBudget(4 * PAGE))
    finally:
        image.close()


def test_an_image_file_that_is_not_whole_pages_is_refused(tmp_path: Path) -> None:
    (tmp_path / "none.image").write_bytes(b"")
    assert memory_limit.MappedImage.open(str(tmp_path / "none.image")) is None
    (tmp_path / "odd.image").write_bytes(b"x" * 100)
    with pytest.raises(OSError, match="not a whole number of pages"):
        memory_limit.MappedImage.open(str(tmp_path / "odd.image"))
