"""`agent-host run` as a user runs it: a child process, real guests, the embedded default config.

stdout carries exactly the guest's answer; logs, progress and guest output go to stderr (guest
lines prefixed with the agent's name); exit codes 0/1/2/3; `--input TEXT|@FILE|-`; `--agent NAME`;
`--json`; the example agent's summary.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support import in_process
from tests.support import probe_steps as step
from tests.support.component import PROBE, REPO

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s, not the suite's 60: in a fresh cache the first test of a worker to need the example guests or the
dev runner builds and compiles them (30-40 s alone), and the others wait for that build (`cache.turn`); a fresh
run that was loaded took over 60 s."""


def agent_host(*args: str, stdin: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command line in this process (nothing here needs a process of its own)."""
    return in_process.run(*args, cwd=cwd, stdin=stdin or "")


def test_stdout_is_exactly_the_answer_and_guest_output_goes_to_stderr(probe_wasm: Path) -> None:
    done = agent_host(
        "run", str(probe_wasm), "--input",
        step.script(step.print_("to stdout"), step.eprint("to stderr"), step.log("logged", level="info"),
                    step.log("careful", level="warn")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"ok": True}] * 4
    name = probe_wasm.stem
    for line in ("to stdout", "to stderr", "info: logged", "warn: careful"):  # prints as they are, logs with a level
        assert f"[{name}] {line}\n" in done.stderr


def test_exit_codes_follow_the_design(probe_wasm: Path, tmp_path: Path) -> None:
    bound = tmp_path / "agent-host.toml"
    bound.write_text("[host]\ncpu_time = 0.2\n")
    failed = agent_host("run", str(probe_wasm), "--input", step.script(step.fail("declined")))
    assert failed.returncode == 1 and failed.stdout == ""
    assert "failed: declined" in failed.stderr
    raised = agent_host("run", str(probe_wasm), "--input", step.script(step.raise_("kaput")))
    assert raised.returncode == 1 and raised.stdout == ""  # an exception escaping run: the agent failed
    assert f"agent {probe_wasm.stem} failed: RuntimeError: kaput (at app.py:" in raised.stderr
    trapped = agent_host("run", str(probe_wasm), "--input", step.script(step.loop()), "--config", str(bound))
    assert trapped.returncode == 3 and trapped.stdout == ""  # a limit the host imposed
    assert "was stopped: CPU time limit" in trapped.stderr
    unusable = agent_host("run", str(probe_wasm), "--config", "/nonexistent/agent-host.toml")
    assert unusable.returncode == 2
    assert "no such file" in unusable.stderr


def test_run_json_prints_one_outcome_for_a_single_guest(probe_wasm: Path) -> None:
    """`--json` for a single run: {agent, status, exit_code, duration, output}."""
    done = agent_host("run", str(probe_wasm), "--json", "--input", step.script(step.log("x")))
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert set(outcome) == {"agent", "status", "exit_code", "duration", "output", "usage"}
    assert (outcome["agent"], outcome["status"], outcome["exit_code"]) == (probe_wasm.stem, "ok", 0)
    assert json.loads(outcome["output"]) == [{"ok": True}]
    failed = agent_host("run", str(probe_wasm), "--json", "--input", step.script(step.fail("declined")))
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["status"] == "error" and json.loads(failed.stdout)["output"] == "declined"
    assert "failed: declined" in failed.stderr


def test_input_comes_from_text_a_file_or_stdin(probe_wasm: Path, tmp_path: Path) -> None:
    script = step.script(step.log("x"))
    (tmp_path / "in.json").write_text(script)
    for args, stdin in (
        (["--input", script], None),
        (["--input", f"@{tmp_path / 'in.json'}"], None),
        (["--input", "-"], script),
    ):
        done = agent_host("run", str(probe_wasm), *args, stdin=stdin)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [{"ok": True}]


def test_an_agent_table_supplies_component_input_and_name(probe_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        f"[agents.scout]\ncomponent = '{PROBE}'\ntoolings = [\"demo\"]\n"
        f"input = '{step.script(step.get('demo', as_='d'), step.eprint('hi'))}'\n"
    )
    done = agent_host("run", "--agent", "scout", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [{"ok": True}, {"ok": True}]
    assert "[scout] hi" in done.stderr


def test_the_demo_agent_prints_its_summary() -> None:
    done = agent_host("run", "guests/demo")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "Tools of 'demo': echo, add, word_count, fail, sleep, set_note"
    assert "add(words, lines) = 15" in done.stdout
    assert "Resource demo://logo.png (image/png): 190 bytes, PNG signature ok" in done.stdout


def test_the_watcher_agent_reacts_to_changes_while_its_call_is_in_flight() -> None:
    done = agent_host("run", "guests/watcher", "--input", "first note\nsecond one here")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "sleep finished: slept 3 s"
    changes = [line for line in lines if line.startswith("note changed:")]
    assert changes == ["note changed: 'first note' (2 words)", "note changed: 'second one here' (3 words)"]
    assert lines.index(changes[-1]) < len(lines) - 1  # reacted before the call finished


@pytest.mark.timeout(120)  # four `agent-host` processes, each with the demo server: 14 s alone, 74 s under load
def test_tools_and_call_use_the_embedded_default() -> None:
    listed = agent_host("tools", "--json")
    assert listed.returncode == 0, listed.stderr
    report = json.loads(listed.stdout)
    assert [t["name"] for t in report["demo"]["tools"]][:2] == ["echo", "add"]
    called = agent_host("call", "demo", "add", '{"a": 1, "b": 2}')
    assert called.returncode == 0 and json.loads(called.stdout)["structuredContent"] == {"sum": 3}
    failed = agent_host("call", "demo", "fail", '{"message": "nope"}')
    assert failed.returncode == 1 and json.loads(failed.stdout)["isError"] is True
    unknown = agent_host("call", "demo", "nosuch")
    assert unknown.returncode == 2 and "not-found" in unknown.stderr


@pytest.mark.timeout(180)  # builds a new guest (cold in a fresh cache): 7-27 s alone, 128 s under load
def test_a_guest_written_from_the_template_builds_and_runs(tmp_path: Path) -> None:
    """A guest that is not in the repo, written against wit/ alone, built with `agent-host build`
    (named scout, as in the first-guest tests: the same template text, so one build serves both)."""
    assert agent_host("new", "scout", "--dir", str(tmp_path)).returncode == 0
    built = agent_host("build", str(tmp_path / "scout"))
    assert built.returncode == 0, built.stderr
    wasm = Path(built.stdout.strip())
    assert wasm.suffix == ".wasm" and wasm.is_file()
    again = agent_host("build", str(tmp_path / "scout"))
    assert again.stdout == built.stdout and "building" not in again.stderr  # cached by content
    done = agent_host("run", str(wasm), "--input", "ping")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["tools"][:2] == ["echo", "add"]
    assert answer["echo"] == "ping"
