"""Taking a component's memory image out of its data segments: what is taken, what is left as it is,
and that no input makes the reader fail (it leaves such a component whole)."""

from __future__ import annotations

import random

import pytest
import wasmtime
from wasmtime.component import Component

from agent_host.runtime.memory_image import PAGE, split
from tests.support import wat


def encoded(text: str) -> bytes:
    return bytes(wasmtime.wat2wasm(text))


def one_memory(data: str, pages: int = 1) -> str:
    """A component of one core module with one memory of `pages` pages and the `data` WAT."""
    return f"""
(component
  (core module $m (memory (export "memory") {pages}) {data})
  (core instance $i (instantiate $m)))
"""


def test_the_data_of_the_one_memory_becomes_a_page_aligned_image() -> None:
    original = encoded(wat.scribbler())
    taken = split(original, host_page=4096)
    assert taken.image is not None
    assert taken.image.minimum == PAGE
    assert len(taken.image.data) == 40960  # up to the last segment's page
    assert taken.image.data[64:69] == b"fresh" and taken.image.data[96:101] == b"dirty"
    assert taken.image.data[40000:40001] == b"z"
    assert b"fresh" not in taken.wasm and b"dirty" not in taken.wasm
    Component(wasmtime.Engine(), taken.wasm)  # still a valid component
    again = split(taken.wasm)
    assert (again.wasm, again.image) == (taken.wasm, None)  # nothing left to take


def test_later_segments_overwrite_earlier_ones_as_instantiation_would() -> None:
    taken = split(encoded(one_memory('(data (i32.const 8) "aaaa") (data (i32.const 10) "bb")')))
    assert taken.image is not None
    assert taken.image.data[8:12] == b"aabb"


def test_passive_segments_stay_in_the_module() -> None:
    taken = split(encoded(one_memory('(data "passive-text") (data (i32.const 8) "active")')))
    assert taken.image is not None
    assert b"passive-text" in taken.wasm and b"active" not in taken.wasm


@pytest.mark.parametrize(
    "text",
    [
        wat.many_memories(2, 1),  # several modules define memories: whose is whose is not known
        one_memory('(data (i32.const 65530) "0123456789")'),  # past the initial size: instantiation fails as before
        one_memory('(global $g i32 (i32.const 8)) (data (global.get $g) "x")'),  # not a constant offset
        one_memory(""),  # no data at all
        wat.sleeper(),  # the data goes into a memory imported from another module
        one_memory('(data (i32.const 60000000) "x")', pages=1000),  # an image of 60 MB for one byte
    ],
    ids=["two-memories", "past-minimum", "global-offset", "no-data", "imported-memory", "mostly-zeros"],
)
def test_a_component_it_cannot_read_with_certainty_is_left_whole(text: str) -> None:
    original = encoded(text)
    assert split(original).wasm == original
    assert split(original).image is None


def test_no_bytes_make_it_fail() -> None:
    original = encoded(wat.scribbler())
    chance = random.Random(7)
    for _ in range(300):
        damaged = bytearray(original)
        for _ in range(chance.randint(1, 4)):
            damaged[chance.randrange(len(damaged))] = chance.randrange(256)
        cut = bytes(damaged[: chance.randrange(len(damaged) + 1)])
        for attempt in (bytes(damaged), cut):
            taken = split(attempt)
            assert taken.image is not None or taken.wasm == attempt
    assert split(b"\0asm\x01\x00\x00\x00").image is None  # a core module, not a component
    assert split(b"").image is None
