"""A stop at a signal or a deadline ends a stdio server that is still connecting at once.

A signal or a run's deadline while the host is connecting to a stdio server that ignores its stdin
closing does not wait out the SDK's graceful shutdown (2 s for the server to exit after EOF, then
SIGTERM and 2 s more): the server's process group is killed at once (it never even gets the SIGTERM
it would be slow to handle), and no process is left.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.errors import ExitCode
from tests.support import cli_process
from tests.support.component import PROBE, REPO
from tests.support.pids import alive, gone
from tests.support.probe_steps import get, script

pytestmark = pytest.mark.component

WAIT: Final = 60.0
"""Seconds a child `agent-host` may take to reach a point or to exit."""


def deaf_tooling(marker: Path) -> str:
    return (
        f'[tooling.deaf]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.deaf", "{marker}"]\n'
        f'cwd = "{REPO}"\nconnect_timeout = 120\n'
    )


def server_pid(marker: Path) -> int:
    """The deaf server's pid, once it has started (a bounded wait)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        lines = marker.read_text().splitlines() if marker.exists() else []
        started = [line for line in lines if line.startswith("pid ")]
        if started:
            return int(started[0].split()[1])
        time.sleep(0.05)
    raise AssertionError("the deaf server never started")


GET_DEAF = script(get("deaf", as_="d"))


def test_a_run_stopped_by_a_signal_while_connecting_kills_the_server_at_once(tmp_path: Path) -> None:
    marker = tmp_path / "deaf.marker"
    config = tmp_path / "agent-host.toml"
    config.write_text(
        deaf_tooling(marker) + f"[agents.waiter]\ncomponent = '{PROBE}'\ntoolings = ['deaf']\ninput = '{GET_DEAF}'\n"
    )
    process = cli_process.start("run", "--agent", "waiter", "--config", str(config), cwd=REPO)
    try:
        pid = server_pid(marker)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == ExitCode.for_signal(signal.SIGTERM), err
    assert gone(pid), "the stdio server outlived the host"
    assert "SIGTERM" not in marker.read_text(), "the server was asked to stop and waited for, not killed at once"


def test_a_run_that_reaches_its_deadline_while_connecting_kills_the_server_at_once(
    make_host: Callable[[str], Host], probe_wasm: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "deaf.marker"
    host = make_host(deaf_tooling(marker) + "[agents.hurried]\ntoolings = ['deaf']\ntimeout = 2\n")
    outcome = host.run(
        probe_wasm, GET_DEAF, agent="hurried", policy=host.policy("hurried", host.config.agents["hurried"])
    )
    assert (outcome.status, outcome.tripped) == ("trap", "wall_time"), outcome
    pid = server_pid(marker)
    assert gone(pid), "the server of an abandoned connection lives on while the host does"
    assert "SIGTERM" not in marker.read_text()
    assert not alive(pid)
