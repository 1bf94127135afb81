"""A guest that waits (sleeps) is stopped at its wall-clock limit, at a stop and at a signal at
once, and its waiting is not CPU time.

wasmtime's epoch checks never run while a guest is blocked inside WASI, so the host serves the WASI
monotonic clock itself (`agent_host.runtime.clock`). The hand-built component blocks in WASI's
`pollable.block` directly, at another WASI version than componentize-py's, with no Python in it. A
wait that no check reaches (opening a named pipe) ends the run past its limit and is left behind.
The sleeps are an hour long: a test bounds each wait far below that.
"""

from __future__ import annotations

import io
import json
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.errors import GuestsStuck
from agent_host.model import RunResult
from agent_host.runtime import guest as guest_module
from agent_host.runtime.guest import LEFT_BEHIND, GuestThread, abandoned_count
from tests.support import cli_process, wat
from tests.support.probe_steps import busy, print_, read_file, read_stdin, script, sleep

pytestmark = pytest.mark.component

HOUR_MS: Final = 3_600_000
BOUND: Final = 30.0
"""Seconds a test waits for a stopped guest: far below the hour its sleep asks for."""
START: Final = 300.0
"""Seconds a test waits for a guest to start (its first compile on a loaded machine included)."""


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


def joined(guest: GuestThread) -> RunResult:
    outcome = guest.join(BOUND)
    assert outcome is not None, f"the guest still runs {BOUND:g} s later"
    assert guest.abandoned or guest.ended(BOUND)  # its thread frees its instance, then ends
    assert not guest.running
    return outcome


def sleeper(
    make_host: Callable[[str], Host], probe_wasm: Path, limits: str, output: Lines | None = None
) -> GuestThread:
    host = make_host(f"[agents.sleeper]\n{limits}\n")
    host.runtime.load(probe_wasm)  # compiled (once) before the clock of the test starts
    return host.start(
        probe_wasm, script(print_("sleeping"), sleep(HOUR_MS)), agent="sleeper",
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
    outcome = host.run(
        probe_wasm, script(sleep(1500), busy(100), sleep(500)), agent="napper",
        policy=host.policy("napper", host.config.agents["napper"]),
    )  # fmt: skip
    assert outcome.status == "ok", outcome


def test_a_component_blocked_in_wasi_poll_is_stopped_at_its_limit(
    make_host: Callable[[str], Host], tmp_path: Path
) -> None:
    wasm = tmp_path / "sleeper.wasm"
    wasm.write_text(wat.sleeper())
    host = make_host("[agents.raw]\ntimeout = 1\n")
    host.runtime.load(wasm)
    guest = host.start(wasm, "", agent="raw", policy=host.policy("raw", host.config.agents["raw"]))
    outcome = joined(guest)
    assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), outcome


@pytest.mark.real_processes  # its subject: a signal to the command
def test_sigterm_stops_a_sleeping_run_at_once_and_leaves_no_temp_folder(probe_wasm: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    steps = script(print_("sleeping"), sleep(HOUR_MS))
    env = {"TMPDIR": str(scratch)}
    proc = cli_process.start("run", str(probe_wasm), "--input", steps, env=env, cwd=tmp_path)
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
    guest = host.start(
        probe_wasm, script(read_stdin(1), read_stdin(1_000_000)), agent="reader",
        policy=host.policy("reader", host.config.agents["reader"]),
    )  # fmt: skip
    outcome = joined(guest)
    assert outcome.status == "ok", outcome
    assert json.loads(outcome.text) == [{"ok": ""}, {"ok": ""}]


def _unblock_in_background(pipe: Path) -> None:
    """Open `pipe` for writing and close it at once, on a thread: a reader blocked opening it gets
    end-of-file (the thread blocks until a reader comes, so it is a daemon)."""
    threading.Thread(target=lambda: open(pipe, "wb").close(), daemon=True).start()


def _pipe_reader(make_host: Callable[[str], Host], probe_wasm: Path, folder: Path, limits: str) -> GuestThread:
    os.mkfifo(folder / "pipe")
    host = make_host(f'[agents.reader]\n{limits}\ndirs = [{{ host = "{folder}", guest = "/data" }}]\n')
    host.runtime.load(probe_wasm)
    return host.start(
        probe_wasm, script(print_("reading"), read_file("/data/pipe")), agent="reader",
        policy=host.policy("reader", host.config.agents["reader"]), output=Lines("reading"),
    )  # fmt: skip


def test_a_guest_blocked_on_a_named_pipe_ends_at_its_limit_and_is_left_behind(
    make_host: Callable[[str], Host], probe_wasm: Path, tmp_path: Path
) -> None:
    """A wait in WASI that no check reaches (opening a named pipe in a granted folder blocks in the
    kernel) ends the run `ABANDON_AFTER` seconds past its limit, with the limit's outcome; the
    thread is left behind, counted, and frees everything once the call returns."""
    before = abandoned_count()
    guest = _pipe_reader(make_host, probe_wasm, tmp_path, "timeout = 1")
    try:
        outcome = joined(guest)
        assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), outcome
        assert outcome.text.startswith("time limit: run did not finish within 1 s"), outcome.text
        assert LEFT_BEHIND in outcome.text
        assert guest.abandoned and not guest.running
        assert abandoned_count() == before + 1
    finally:
        _unblock_in_background(tmp_path / "pipe")
    assert guest.ended(BOUND)
    assert abandoned_count() == before


def test_no_guest_starts_while_too_many_are_left_behind(
    make_host: Callable[[str], Host], probe_wasm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(guest_module, "MAX_ABANDONED", abandoned_count() + 1)
    stuck = _pipe_reader(make_host, probe_wasm, tmp_path, "timeout = 1")
    try:
        assert joined(stuck).status == "trap"
        host = make_host("[agents.other]\n")
        with pytest.raises(GuestsStuck) as refused:
            host.start(probe_wasm, script(), agent="other")
        assert "blocked in WASI calls the host cannot interrupt" in refused.value.message
        assert refused.value.hint is not None and "named pipe" in refused.value.hint
    finally:
        _unblock_in_background(tmp_path / "pipe")
    assert stuck.ended(BOUND)
    assert host.run(probe_wasm, script(), agent="other").status == "ok"


@pytest.mark.real_processes  # its subject: a signal to the command
def test_sigterm_ends_a_run_blocked_on_a_named_pipe_within_seconds(probe_wasm: Path, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "agent-host.toml").write_text(
        f'[agents.reader]\ncomponent = "{probe_wasm}"\ntimeout = 3600\n'
        f'dirs = [{{ host = "{tmp_path}", guest = "/data" }}]\n'
    )
    steps = script(print_("reading"), read_file("/data/pipe"))
    proc = cli_process.start("run", "--agent", "reader", "--input", steps, cwd=tmp_path)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if "reading" in line:
                break
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(BOUND) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        _, err = proc.communicate()
        _unblock_in_background(tmp_path / "pipe")
    assert "left behind" in err, err
