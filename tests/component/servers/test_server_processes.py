"""What a stdio server or a guest leaves behind: no process it started, and no unbounded file.

Provenance: issue 20, points 13 and 14. A process that a stdio server starts survived the server
when the server exited by itself (a crash) and when the host closed the connection (the server
exits at EOF, so the SDK never signalled its process group); the server's stderr log grew without
bound (a server wrote 1 GB in 5 s), and so did a guest's stdout file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.toolings.mcp.stdio import STDERR_CHUNK
from tests.support.component import OBSERVED_TOML, config_from, err, ok, probe

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: the servers' processes

GONE_WITHIN: Final = 15.0
"""Seconds a process left by a server may take to go (the host's shutdown is bounded by less)."""

GET = {"op": "get", "tooling": "t", "as": "t"}
SPAWN = {"op": "call_blocking", "h": "t", "tool": "spawn"}


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def gone(pid: int, within: float = GONE_WITHIN) -> bool:
    """Whether `pid` stops running within `within` seconds."""
    deadline = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


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
    results = probe(host, probe_wasm, [GET, SPAWN, {"op": "call_blocking", "h": "t", "tool": "exit_now"}])
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
        results = probe(
            host, probe_wasm, [GET, {"op": "call_blocking", "h": "t", "tool": "shout", "args": '{"size": 2000000}'}]
        )
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
        steps = [{"op": "spew", "bytes": 2_000_000}, {"op": "spew", "bytes": 500_000, "stream": "stderr"}]
        outcome = host.run(probe_wasm, json.dumps({"steps": steps}), agent="spewer", output=forwarded)
    finally:
        host.close()
    assert outcome.status == "ok", outcome
    text = forwarded.getvalue()
    assert text.count("[spewer] [agent-host: stdout cut at 64 KiB (guest_output_max in ") == 1, text[-300:]
    assert text.count("[spewer] [agent-host: stderr cut at 64 KiB (guest_output_max in ") == 1, text[-300:]
    assert len(text) < 2 * (64 * 1024 * 1.1 + 2000)  # the prefix adds 9 bytes per 100-byte line
