"""A signal is a stop, whatever the command is doing: exit 130 (SIGINT) or 143 (SIGTERM), said so.

Ctrl-C while `tools`, `call` or `config check --connect` is connecting is a stop, not an "internal
error" (exit 2); `run --json` reports a signal stop as what it is, as the exit code does; a Ctrl-C
while `serve` prepares never lands inside a library's step (no traceback): the step ends, then the
command stops.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host.cli import main
from agent_host.errors import ExitCode
from tests.support import cli_process
from tests.support.component import PROBE, REPO
from tests.support.processes import MUTE_SERVER, connecting, wait_for_line

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: signals and exit codes of the command

WAIT: Final = 60.0
"""Seconds a child `agent-host` may take to reach a point or to exit."""


def start(*args: str) -> subprocess.Popen[str]:
    return cli_process.start(*args, cwd=REPO)


@pytest.mark.parametrize(
    "command",
    [["tools"], ["tools", "--json"], ["call", "mute", "x"], ["call", "mute", "x", "--json"],
     ["config", "check", "--connect"], ["config", "check", "--connect", "--json"]],
    ids=" ".join,
)  # fmt: skip
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_connecting_is_a_stop_not_an_internal_error(
    command: list[str], signum: int, tmp_path: Path
) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(f'[tooling.mute]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-c", "{MUTE_SERVER}"]\n')
    process = start("--config", str(config), *command)
    try:
        connecting(process, WAIT)
        process.send_signal(signum)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == ExitCode.for_signal(signum), err
    assert f"agent-host: stopped: {signal.Signals(signum).name} received" in err
    assert "internal" not in err and "internal" not in out
    assert "Traceback" not in err


def probe_agent(tmp_path: Path, *steps: dict[str, Any]) -> Path:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f"[agents.waiter]\ncomponent = '{PROBE}'\ninput = '{json.dumps({'steps': list(steps)})}'\n"
        f"[agents.quick]\ncomponent = '{PROBE}'\ninput = '{json.dumps({'steps': []})}'\n"
    )
    return config


@pytest.mark.parametrize("agents", [["--agent", "waiter"], []], ids=["one agent", "every agent"])
def test_run_json_reports_a_signal_stop_as_what_it_is(agents: list[str], probe_wasm: Path, tmp_path: Path) -> None:
    config = probe_agent(tmp_path, {"op": "eprint", "text": "ready"}, {"op": "recv", "timeout_ms": 60000})
    process = start("run", *agents, "--json", "--config", str(config))
    try:
        wait_for_line(process, "[waiter] ready", WAIT)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    printed = json.loads(out)
    outcomes = printed if isinstance(printed, list) else [printed]
    waiter = next(outcome for outcome in outcomes if outcome["agent"] == "waiter")
    assert waiter["status"] == "interrupted" and waiter["exit_code"] == 130, waiter
    assert "SIGINT received" in waiter["output"]


def test_a_signal_while_serve_prepares_never_lands_inside_a_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The signal comes while `serve` builds its MCP server (pydantic models and all): the step ends
    as it would (a library never sees the signal as its own failure) and the command stops, 130."""
    import agent_host.serve.mcp_server as mcp_server

    finished: list[str] = []
    real = mcp_server.build_server

    def build_server_under_a_signal(catalog: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        server = real(catalog)
        finished.append("build_server")
        return server

    def never_served(*args: Any) -> None:
        raise AssertionError("serve started serving after the signal")

    monkeypatch.setattr(mcp_server, "build_server", build_server_under_a_signal)
    monkeypatch.setattr("agent_host.serve.http.serve_http", never_served)
    config = tmp_path / "agent-host.toml"
    config.write_text(
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        '[serve]\nhttp = "127.0.0.1:0"\ntoolings = ["demo"]\ngrants = { toolings = ["demo"] }\n'
    )
    assert main(["serve", "--config", str(config)]) == 130
    assert finished == ["build_server"]
    assert "agent-host: stopped: SIGINT received" in capsys.readouterr().err
