"""Instances made ahead (`runtime.pool`, `Host.pool`, `[serve] ready_instances`): each runs once.

A fresh guest per call stays (no state leaks between callers), but its cost need not be paid on the
call's path: a small pool of ready, never-used instances is refilled in the background, bounded in
memory.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_host import Host
from agent_host._support import scratch
from tests.support.component import granted
from tests.support.probe_steps import call_blocking, eprint, get, print_, script

pytestmark = pytest.mark.component

MOCK = (
    '[tooling.m]\nkind = "mock"\n[[tooling.m.tools]]\nname = "echo"\nresults = [{ text = "hi" }]\nrepeat_last = true\n'
)
GET = get("m", as_="t")
STEPS = script(GET, call_blocking("t", "echo", "{}"))
FILLED = 60.0


def _output_files() -> list[Path]:
    return sorted(scratch.folder().glob("guest-*"))


def test_each_call_runs_its_own_instance_made_ahead_and_close_frees_those_waiting(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(MOCK)
    policy = granted(host, "pooled")
    pool = host.pool(probe_wasm, "pooled", policy, 2)
    assert pool.filled(FILLED)
    assert pool.waiting == 2
    outcomes = []
    for _ in range(3):
        guest = host.start(probe_wasm, STEPS, agent="pooled", policy=policy, pool=pool)
        outcomes.append(host.wait(guest))
        assert guest.ended(60)
    assert [o.status for o in outcomes] == ["ok"] * 3, outcomes
    assert all("hi" in json.dumps(json.loads(o.text)[1]["ok"]) for o in outcomes)
    assert pool.filled(FILLED)
    assert pool.made >= 4  # the two made first, and one more for each call that took one
    assert pool.waiting == 2 and not _output_files()  # a run's instance is freed with its output files
    pool.close()
    assert pool.waiting == 0


def test_a_run_that_prints_has_its_output_forwarded_and_its_files_removed(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(MOCK)
    sink = io.StringIO()
    steps = script(print_("to stdout"), eprint("to stderr"))
    guest = host.start(probe_wasm, steps, agent="p", output=sink)
    outcome = host.wait(guest)
    assert outcome.status == "ok", outcome
    assert sink.getvalue().splitlines() == ["[p] to stdout", "[p] to stderr"]
    assert guest.ended(60) and not _output_files()  # freed by its thread once the outcome was given


def test_a_pool_serves_only_its_own_agent_and_policy(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    host = make_host(MOCK)
    pool = host.pool(probe_wasm, "pooled", granted(host, "pooled"), 1)
    assert pool.filled(FILLED)
    other = host.wait(host.start(probe_wasm, STEPS, agent="other", policy=granted(host, "other"), pool=pool))
    assert other.status == "ok", other
    assert pool.waiting == 1  # not taken: made under another agent's policy


def test_an_instance_over_the_memory_limit_ends_its_call_as_the_memory_limit(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(MOCK + '[agents.small]\ntoolings = ["m"]\nmemory = "1MiB"\n')
    policy = host.agent_policy("small")
    pool = host.pool(probe_wasm, "small", policy, 1)
    assert pool.filled(FILLED)
    outcome = host.wait(host.start(probe_wasm, STEPS, agent="small", policy=policy, pool=pool))
    assert (outcome.status, outcome.tripped) == ("trap", "memory"), outcome
    assert "memory" in outcome.text
