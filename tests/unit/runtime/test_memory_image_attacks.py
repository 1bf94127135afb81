"""Hostile inputs to `memory_image.split` (run at every compile, on untrusted components): what it
costs must stay in proportion to the input, and no valid component may make it fail."""

from __future__ import annotations

import tracemalloc

import wasmtime
from wasmtime.component import Component

from agent_host.runtime.memory_image import PAGE, _leb, split


def encoded(text: str) -> bytes:
    return bytes(wasmtime.wat2wasm(text))


def far_byte(pages: int) -> bytes:
    """~100 bytes: one memory of `pages` pages and one byte of data at its very end."""
    return encoded(
        f"""(component
  (core module $m (memory (export "memory") {pages}) (data (i32.const {pages * PAGE - 1}) "x"))
  (core instance $i (instantiate $m)))"""
    )


def test_a_tiny_component_does_not_make_split_allocate_its_whole_memory() -> None:
    """A 100-byte component with one byte at the end of a 64 MiB memory (or at 2**31 - 1): what
    `split` allocates follows the input's size, not the offsets it declares."""
    wasm = far_byte(1024)
    assert len(wasm) < 200
    tracemalloc.start()
    try:
        split(wasm)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"split of a {len(wasm)}-byte component allocated {peak} bytes"


def nested(depth: int) -> bytes:
    """A component of one memory with data, beside `depth` empty components nested one in another
    (wasmtime accepts up to ~997: its limit is 1000 modules and components)."""
    inner = encoded("(component)")
    for _ in range(depth):
        inner = b"\0asm\x0d\x00\x01\x00\x04" + _leb(len(inner)) + inner
    base = encoded(
        """(component
  (core module $m (memory (export "memory") 1) (data (i32.const 64) "hello"))
  (core instance $i (instantiate $m)))"""
    )
    return base + b"\x04" + _leb(len(inner)) + inner


def test_deep_nesting_that_wasmtime_accepts_does_not_make_split_fail() -> None:
    """Components nested as deep as wasmtime accepts are walked without recursion: `split` returns
    (the compiler child does not die on a component wasmtime compiles)."""
    wasm = nested(990)
    Component(wasmtime.Engine(), wasm)  # valid
    taken = split(wasm)
    Component(wasmtime.Engine(), taken.wasm)
