"""What one guest's store may hold, whatever the component: all its linear memories together within
its memory limit, tables within their bounds, and start code timed like its run. The components are
written by hand (`tests.support.wat`): nothing a toolchain would make, all a hostile author could."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest
import wasmtime

from agent_host import Host
from agent_host.runtime.guest import MAX_TABLE_ELEMENTS
from tests.support import wat

pytestmark = pytest.mark.component

BOUND: Final = 30.0
"""Seconds a test waits for a guest that its limits end."""


def component(folder: Path, name: str, text: str) -> Path:
    wasm = folder / f"{name}.wasm"
    wasm.write_bytes(bytes(wasmtime.wat2wasm(text)))
    return wasm


def test_many_memories_together_are_held_to_one_memory_limit(make_host: Callable[[str], Host], tmp_path: Path) -> None:
    """Four memories of 30 MiB each, every one under a limit of 64 MiB, are 120 MiB together."""
    host = make_host('[agents.many]\nmemory = "64MiB"\n')
    policy = host.policy("many", host.config.agents["many"])
    fits = host.run(component(tmp_path, "two", wat.many_memories(2, 480)), "", agent="many", policy=policy)
    assert fits.status == "ok", fits
    too_many = host.run(component(tmp_path, "four", wat.many_memories(4, 480)), "", agent="many", policy=policy)
    assert (too_many.status, too_many.tripped) == ("trap", "memory"), too_many
    assert too_many.text.startswith("memory limit: the guest ran out of memory at 64 MiB"), too_many.text


def test_a_table_cannot_grow_past_its_bound(make_host: Callable[[str], Host], tmp_path: Path) -> None:
    host = make_host("[agents.tables]\n")
    policy = host.policy("tables", host.config.agents["tables"])
    small = host.run(
        component(tmp_path, "small", wat.table_grower(MAX_TABLE_ELEMENTS)), "", agent="tables", policy=policy
    )
    assert (small.status, small.text) == ("ok", "grown"), small
    huge = host.run(component(tmp_path, "huge", wat.table_grower(100_000_000)), "", agent="tables", policy=policy)
    assert (huge.status, huge.text) == ("ok", "refused"), huge


def test_start_code_past_the_time_limit_is_that_limit_and_a_pool_stops_making_instances(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    host = make_host("[agents.spin]\ntimeout = 1\n")
    policy = host.policy("spin", host.config.agents["spin"])
    wasm = component(tmp_path, "spin", wat.START_SPIN)
    pool = host.pool(wasm, "spin", policy, 2)
    assert pool.filled(BOUND)  # it stopped after the first instance failed
    first = host.wait(host.start(wasm, "", agent="spin", policy=policy, pool=pool))
    assert (first.status, first.tripped) == ("trap", "wall_time"), first
    assert first.text.endswith("(in the component's start code)"), first.text
    second = host.wait(host.start(wasm, "", agent="spin", policy=policy, pool=pool))
    assert (second.status, second.tripped) == ("trap", "wall_time"), second
    assert pool.made == 1  # no instance made ahead after the failed one: each call pays for its own


def test_every_instance_starts_from_the_components_data_whatever_an_earlier_one_wrote(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    """The memory image is mapped copy-on-write: a run's writes stay in its own instance, whether
    instances are made per run or ahead in a pool, and one after another or at once."""
    host = make_host("[agents.scribble]\n")
    policy = host.policy("scribble", host.config.agents["scribble"])
    wasm = component(tmp_path, "scribbler", wat.scribbler())
    alone = [host.run(wasm, "", agent="scribble", policy=policy) for _ in range(3)]
    assert [(o.status, o.text) for o in alone] == [("ok", "fresh")] * 3, alone
    pool = host.pool(wasm, "scribble", policy, 3)
    assert pool.filled(BOUND)
    together = [host.start(wasm, "", agent="scribble", policy=policy, pool=pool) for _ in range(6)]
    assert [(o.status, o.text) for o in map(host.wait, together)] == [("ok", "fresh")] * 6
