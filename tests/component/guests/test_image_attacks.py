"""Attacks on the memory image (`runtime/memory_image.py`, mapped by `memory_limit`'s creator):
an image lands only in the memories of the component it was taken from, is whole or not used, and
costs the host in proportion to the component. Components written by hand (`tests.support.wat`)."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest
import wasmtime

from agent_host import Host
from agent_host._support.paths import cache_dir
from agent_host.errors import ComponentError
from agent_host.runtime.engine import cache_key
from tests.support import wat

pytestmark = pytest.mark.component

SECRET: Final = "SECRET"


def component(folder: Path, name: str, text: str) -> Path:
    wasm = folder / f"{name}.wasm"
    wasm.write_bytes(bytes(wasmtime.wat2wasm(text)))
    return wasm


def unlinkable_with_data() -> str:
    """A component with `SECRET` at 200 in its memory image, and an import the host does not link:
    `Runtime.load` compiles and loads it (its image opened), then refuses it (`_require_linkable`)."""
    text = wat._answering("i32.const 1", memories=f'(data (i32.const 200) "{SECRET}")')
    return text.replace("(component\n", '(component\n  (import "evil:nothing/here" (instance))\n', 1)


def reader(variant: int) -> str:
    """A component with no data (so no image of its own): `run` answers the 6 bytes at 200 of its
    memory, `clean..` when they are zero. `variant` makes each a different component."""
    return rf"""
(component
  (core module $m
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const {1024 + 8 * variant}))
    (func (export "run") (param i32 i32) (result i32)
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 200))
      (i32.store (i32.const 24) (i32.const 6))
      (if (i32.eqz (i32.load8_u (i32.const 200)))
        (then (i32.store (i32.const 200) (i32.const 0x61656c63)) (i32.store16 (i32.const 204) (i32.const 0x2e6e))))
      (i32.const 16)))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $memory))
  (alias core export $i "realloc" (core func $realloc))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="counts /proc/self/fd")
def test_a_component_refused_at_load_keeps_no_image_open(make_host: Callable[[str], Host], tmp_path: Path) -> None:
    """A component `load` refuses (an import the host does not link) after its artifact and image
    were loaded keeps nothing open: 50 refusals, not 50 descriptors."""
    host = make_host("[agents.a]\n")
    policy = host.policy("a", host.config.agents["a"])
    refused = component(tmp_path, "refused", unlinkable_with_data())
    with pytest.raises(ComponentError):
        host.run(refused, "", agent="a", policy=policy)  # compiled once
    gc.collect()
    before = open_fds()
    for _ in range(50):
        with pytest.raises(ComponentError):
            host.run(refused, "", agent="a", policy=policy)
    gc.collect()
    assert open_fds() - before < 10


def test_an_image_never_lands_in_another_components_memory(make_host: Callable[[str], Host], tmp_path: Path) -> None:
    """A refused component's image is never mapped into a later component, even one that CPython
    gives the refused one's id (a component with no data would read `SECRET`; each attempt had a
    ~10% chance of that id: 40 attempts)."""
    readers = [component(tmp_path, f"reader{n}", reader(n)) for n in range(40)]
    warm = make_host("[agents.a]\n")  # compiles the readers into the cache, so that loading them is quick
    warm_policy = warm.policy("a", warm.config.agents["a"])
    for wasm in readers:
        assert warm.run(wasm, "", agent="a", policy=warm_policy).text == "clean."
    warm.close()
    host = make_host("[agents.a]\n")
    policy = host.policy("a", host.config.agents["a"])
    refused = component(tmp_path, "refused", unlinkable_with_data())
    seen = []
    for wasm in readers:
        with pytest.raises(ComponentError):
            host.run(refused, "", agent="a", policy=policy)
        seen.append(host.run(wasm, "", agent="a", policy=policy).text)
    assert SECRET not in seen, seen


def image_of(wasm: Path) -> Path:
    return cache_dir() / "compiled" / f"{cache_key(wasm.read_bytes())}.image"


@pytest.mark.parametrize("damage", ["emptied", "one-byte", "one-page-left"])
def test_a_damaged_image_in_the_cache_is_compiled_again_like_a_damaged_artifact(
    make_host: Callable[[str], Host], tmp_path: Path, damage: str
) -> None:
    """The image is checked against its digest in the `.sha256` sidecar, as the artifact is: emptied
    (which would read as "no image": the guest's data gone), changed or cut, it is compiled again."""
    own = len(damage) * 1000 + sum(map(ord, damage))  # a component of this test's own (its own cache key)
    text = wat.scribbler().replace("(table $t 0 funcref)", f"(table $t 0 funcref) (global i32 (i32.const {own}))")
    wasm = component(tmp_path, "scribbler", text)
    first = make_host("[agents.s]\n")
    assert first.run(wasm, "", agent="s", policy=first.policy("s", first.config.agents["s"])).text == "fresh"
    first.close()
    image = image_of(wasm)
    whole = image.read_bytes()
    damaged = {"emptied": b"", "one-byte": whole[:64] + b"X" + whole[65:], "one-page-left": whole[:4096]}[damage]
    image.write_bytes(damaged)
    try:
        host = make_host("[agents.s]\n")
        outcome = host.run(wasm, "", agent="s", policy=host.policy("s", host.config.agents["s"]))
        assert (outcome.status, outcome.text) == ("ok", "fresh"), outcome
    finally:
        image.write_bytes(whole)


def test_a_tiny_component_does_not_write_its_whole_memory_into_the_cache(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    """~100 bytes with one byte at the end of a 64 MiB memory: the cache does not grow out of
    proportion to the component (the component is left whole; its one segment is written at
    instantiation, within the memory limit)."""
    pages = 1024
    text = wat._answering(f"i32.eq (i32.load8_u (i32.const {pages * 65536 - 1})) (i32.const 120)").replace(
        '(memory (export "memory") 1)',
        f'(memory (export "memory") {pages})\n    (data (i32.const {pages * 65536 - 1}) "x")',
    )
    wasm = component(tmp_path, "far", text)
    host = make_host('[agents.far]\nmemory = "128MiB"\n')
    outcome = host.run(wasm, "", agent="far", policy=host.policy("far", host.config.agents["far"]))
    assert (outcome.status, outcome.text) == ("ok", "fine"), outcome
    image = image_of(wasm)
    stored = image.stat().st_blocks * 512 if image.exists() else 0
    assert stored < 1024 * 1024, f"a {wasm.stat().st_size}-byte component stored a {stored}-byte image"
