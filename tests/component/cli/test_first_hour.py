"""What a new user meets in the first hour, run as that user runs it: `run GUEST` takes the settings
of the one agent whose component GUEST is, a long run says on a terminal that it still runs and how
to stop it, and an exception escaping `run` is the agent's failure (exit 1) with advice for a
missing module."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_host.cli import run as run_command
from tests.support import in_process

pytestmark = pytest.mark.component


def test_run_guest_takes_the_settings_of_the_one_agent_whose_component_it_is(probe_wasm: Path, tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text(
        '[tooling.demo]\nkind = "mock"\n'
        f'[agents.clock]\ncomponent = "{probe_wasm}"\ninput = \'{{"steps": [{{"op": "get", "tooling": "demo"}}]}}\'\n'
    )
    done = in_process.run("run", str(probe_wasm), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{probe_wasm} is the component of [agents.clock]: running with its settings" in done.stderr
    result = json.loads(done.stdout)[0]  # the agent's own input, under its own grants (none)
    assert result["err"]["code"] == "denied" and "[agents.clock]" in result["err"]["message"]


def test_run_guest_of_several_agents_says_how_to_choose_and_runs_with_the_defaults(
    probe_wasm: Path, tmp_path: Path
) -> None:
    (tmp_path / "agent-host.toml").write_text(
        f'[agents.one]\ncomponent = "{probe_wasm}"\n[agents.two]\ncomponent = "{probe_wasm}"\n'
    )
    done = in_process.run("run", str(probe_wasm), "--input", '{"steps": []}', cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{probe_wasm} is the component of agents one, two: running with the [host] defaults" in done.stderr
    assert "pass --agent NAME" in done.stderr


def test_a_long_run_says_on_a_terminal_that_it_still_runs_and_how_to_stop_it(
    probe_wasm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_command, "STILL_RUNNING", 0.2)
    monkeypatch.setattr(run_command, "_on_terminal", lambda: True)
    (tmp_path / "agent-host.toml").write_text("[host]\ncpu_time = 1\n")
    done = in_process.run("run", str(probe_wasm), "--input", '{"steps": [{"op": "loop"}]}', cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    notes = [line for line in done.stderr.splitlines() if "still running:" in line]
    assert notes and notes[0].endswith("; Ctrl-C stops it"), done.stderr
    assert "s of CPU of 1 (cpu_time in " in notes[0] and "s of 300 (timeout" in notes[0]


def test_no_still_running_note_off_a_terminal(probe_wasm: Path, tmp_path: Path) -> None:
    (tmp_path / "agent-host.toml").write_text("[host]\ncpu_time = 0.5\n")
    done = in_process.run("run", str(probe_wasm), "--input", '{"steps": [{"op": "loop"}]}', cwd=tmp_path)
    assert done.returncode == 3 and "still running" not in done.stderr
