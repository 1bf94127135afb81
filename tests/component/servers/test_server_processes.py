"""What a stdio server or a guest leaves behind: no process it started, and no unbounded file.

A process that a stdio server starts is ended with it, when the server exits by itself (a crash)
and when the host closes the connection (the server exits at EOF, so the SDK never signals its
process group); the server's stderr log and a guest's output are bounded (`server_log_max`,
`guest_output_max`).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.toolings.mcp.stdio import STDERR_CHUNK
from tests.support.component import OBSERVED_TOML, config_from, err, ok, probe
from tests.support.pids import alive, gone
from tests.support.probe_steps import call_blocking, get, script, spew

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: the servers' processes

GET = get("t", as_="t")
SPAWN = call_blocking("t", "spawn")


@pytest.fixture
def spawned() -> Iterator[list[int]]:
    """Pids of processes the test server started, killed after the test whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def child_pid(result: dict[str, object]) -> int:
    value = ok(result)
    assert isinstance(value, dict)
    return int(value["value"]["content"][0]["text"])


def test_a_process_a_crashed_server_started_is_ended_with_it(
    make_host: Callable[[str], Host], probe_wasm: Path, spawned: list[int]
) -> None:
    host = make_host(OBSERVED_TOML)
    results = probe(host, probe_wasm, [GET, SPAWN, call_blocking("t", "exit_now")])
    spawned.append(child_pid(results[1]))
    assert err(results[2])["code"] == "unavailable"
    assert gone(spawned[0]), "the server's child outlived the server that crashed"


def test_a_process_the_server_started_is_ended_when_the_host_closes_the_connection(
    make_host: Callable[[str], Host], probe_wasm: Path, spawned: list[int]
) -> None:
    host = make_host(OBSERVED_TOML)
    results = probe(host, probe_wasm, [GET, SPAWN])
    spawned.append(child_pid(results[1]))
    assert alive(spawned[0])
    host.close()
    assert not alive(spawned[0]), "the server's child outlived the host's closing of the connection"


SMALL_LOGS: Final = '[host]\nserver_log_max = "64KiB"\nserver_log_keep = 1\nguest_output_max = "64KiB"\n'


def test_a_server_that_floods_its_stderr_fills_only_its_bounded_log_files(probe_wasm: Path, tmp_path: Path) -> None:
    host = Host(config_from(SMALL_LOGS + OBSERVED_TOML, tmp_path), keep_logs=True)
    try:
        results = probe(host, probe_wasm, [GET, call_blocking("t", "shout", size=2000000)])
        ok(results[1])
    finally:
        host.close()
    logs = sorted(host.log_dir.glob("t.stderr.log*"))
    try:
        sizes = {path.name: path.stat().st_size for path in logs}
        assert set(sizes) == {"t.stderr.log", "t.stderr.log.1"}, sizes
        assert all(size <= 64 * 1024 + STDERR_CHUNK for size in sizes.values()), sizes
        assert (host.log_dir / "t.stderr.log").read_bytes().rstrip(b"y").endswith(b"x\n")  # the newest bytes kept
    finally:
        shutil.rmtree(host.log_dir, ignore_errors=True)


def test_a_guest_that_floods_its_stdout_is_cut_at_guest_output_max(probe_wasm: Path, tmp_path: Path) -> None:
    host = Host(config_from(SMALL_LOGS, tmp_path))
    forwarded = io.StringIO()
    try:
        steps = script(spew(2_000_000), spew(500_000, "stderr"))
        outcome = host.run(probe_wasm, steps, agent="spewer", output=forwarded)
    finally:
        host.close()
    assert outcome.status == "ok", outcome
    text = forwarded.getvalue()
    assert text.count("[spewer] [agent-host: stdout cut at 64 KiB (guest_output_max in ") == 1, text[-300:]
    assert text.count("[spewer] [agent-host: stderr cut at 64 KiB (guest_output_max in ") == 1, text[-300:]
    assert len(text) < 2 * (64 * 1024 * 1.1 + 2000)  # the prefix adds 9 bytes per 100-byte line
