"""A guest that waits (sleeps) is stopped at its wall-clock limit, at a stop and at a signal at
once, and its waiting is not CPU time.

Provenance: issue 20 point 1: `time.sleep(30)` with `timeout = 5` ran 30 s, was counted as CPU
time, and SIGTERM, stop requests, the end of a fleet run and serve's cancellations all waited for
it. wasmtime's epoch checks never run while a guest is blocked inside WASI, so the host serves the
WASI monotonic clock itself (`agent_host.runtime.clock`). The hand-built component blocks in WASI's
`pollable.block` directly, at another WASI version than componentize-py's, with no Python in it.
Before the fix every bounded wait below ran out (the sleeps are an hour long).
"""

from __future__ import annotations

import io
import json
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.runtime.guest import GuestThread, Outcome
from tests.support import cli_process

pytestmark = pytest.mark.component

HOUR_MS: Final = 3_600_000
BOUND: Final = 30.0
"""Seconds a test waits for a stopped guest: far below the hour its sleep asks for."""
START: Final = 300.0
"""Seconds a test waits for a guest to start (its first compile on a loaded machine included)."""

SLEEPER_WAT: Final = r"""
(component
  (import "wasi:io/poll@0.2.0" (instance $poll
    (export "pollable" (type (sub resource)))
    (export "[method]pollable.block" (func (param "self" (borrow 0))))))
  (alias export $poll "pollable" (type $pollable))
  (import "wasi:clocks/monotonic-clock@0.2.0" (instance $clock
    (alias outer 1 $pollable (type))
    (export "pollable" (type (eq 0)))
    (export "subscribe-duration" (func (param "when" u64) (result (own 1))))))
  (alias export $clock "subscribe-duration" (func $subscribe))
  (alias export $poll "[method]pollable.block" (func $block))
  (core module $mem
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024)))
  (core instance $m (instantiate $mem))
  (alias core export $m "memory" (core memory $memory))
  (alias core export $m "realloc" (core func $realloc))
  (core func $sub (canon lower (func $subscribe)))
  (core func $blk (canon lower (func $block)))
  (core module $guest
    (import "wasi" "subscribe" (func $subscribe (param i64) (result i32)))
    (import "wasi" "block" (func $block (param i32)))
    (import "m" "memory" (memory 1))
    (data (i32.const 64) "slept")
    (func (export "run") (param i32 i32) (result i32)
      (call $block (call $subscribe (i64.const 3600000000000)))
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 64))
      (i32.store (i32.const 24) (i32.const 5))
      (i32.const 16)))
  (core instance $i (instantiate $guest
    (with "wasi" (instance (export "subscribe" (func $sub)) (export "block" (func $blk))))
    (with "m" (instance $m))))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""
"""A component that is not Python: `run` blocks an hour in WASI's `pollable.block`."""


class Lines(io.StringIO):
    """Guest output that sets `seen` once a line containing `marker` was written."""

    def __init__(self, marker: str) -> None:
        super().__init__()
        self.marker = marker
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        if self.marker in text:
            self.seen.set()
        return super().write(text)


def joined(guest: GuestThread) -> Outcome:
    outcome = guest.join(BOUND)
    assert outcome is not None, f"the guest still runs {BOUND:g} s later"
    assert not guest.running
    return outcome


def sleeper(
    make_host: Callable[[str], Host], probe_wasm: Path, limits: str, output: Lines | None = None
) -> GuestThread:
    host = make_host(f"[agents.sleeper]\n{limits}\n")
    host.runtime.load(probe_wasm)  # compiled (once) before the clock of the test starts
    steps = [{"op": "print", "text": "sleeping"}, {"op": "sleep", "ms": HOUR_MS}]
    return host.start(
        probe_wasm, json.dumps({"steps": steps}), agent="sleeper",
        policy=host.policy("sleeper", host.config.agents["sleeper"]), output=output,
    )  # fmt: skip


def test_a_sleeping_guest_is_stopped_at_its_wall_clock_limit(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    outcome = joined(sleeper(make_host, probe_wasm, "timeout = 1"))
    assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), outcome
    assert outcome.text.startswith("time limit: run did not finish within 1 s"), outcome.text


def test_a_sleeping_guest_is_stopped_at_once_by_a_stop_request(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    output = Lines("sleeping")
    guest = sleeper(make_host, probe_wasm, "timeout = 7200", output)
    assert output.seen.wait(START)
    guest.stop("the test is done")
    outcome = joined(guest)
    assert (outcome.status, outcome.tripped) == ("trap", "stopped"), outcome
    assert "the test is done" in outcome.text


def test_sleeping_is_not_cpu_time(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    """A guest that sleeps 1.5 s and computes a little stays within a CPU limit of 0.5 s."""
    host = make_host("[agents.napper]\ncpu_time = 0.5\n")
    steps = [{"op": "sleep", "ms": 1500}, {"op": "busy", "ms": 100}, {"op": "sleep", "ms": 500}]
    outcome = host.run(
        probe_wasm, json.dumps({"steps": steps}), agent="napper",
        policy=host.policy("napper", host.config.agents["napper"]),
    )  # fmt: skip
    assert outcome.status == "ok", outcome


def test_a_component_blocked_in_wasi_poll_is_stopped_at_its_limit(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    wasm = tmp_path / "sleeper.wasm"
    wasm.write_text(SLEEPER_WAT)
    host = make_host("[agents.raw]\ntimeout = 1\n")
    host.runtime.load(wasm)
    guest = host.start(wasm, "", agent="raw", policy=host.policy("raw", host.config.agents["raw"]))
    outcome = joined(guest)
    assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), outcome


def test_sigterm_stops_a_sleeping_run_at_once_and_leaves_no_temp_folder(probe_wasm: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    steps = {"steps": [{"op": "print", "text": "sleeping"}, {"op": "sleep", "ms": HOUR_MS}]}
    env = {"TMPDIR": str(scratch)}
    proc = cli_process.start("run", str(probe_wasm), "--input", json.dumps(steps), env=env, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "sleeping" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(BOUND) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.communicate()
    assert not list(scratch.glob("agent-host-*")), list(scratch.iterdir())
    assert tempfile.gettempdir() != str(scratch)


def test_a_guest_reading_stdin_finds_it_closed_instead_of_waiting(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    """A guest has no stdin (WASI's is closed): a read ends at once with nothing, never a wait the
    host cannot stop, whatever the host's own stdin is."""
    host = make_host("[agents.reader]\ntimeout = 600\n")
    host.runtime.load(probe_wasm)
    steps = [{"op": "read_stdin", "n": 1}, {"op": "read_stdin", "n": 1_000_000}]
    guest = host.start(
        probe_wasm, json.dumps({"steps": steps}), agent="reader",
        policy=host.policy("reader", host.config.agents["reader"]),
    )  # fmt: skip
    outcome = joined(guest)
    assert outcome.status == "ok", outcome
    assert json.loads(outcome.text) == [{"ok": ""}, {"ok": ""}]
