"""How a command ends, seen as a newcomer (or a script) sees it: `agent-host` as a child process.

`--json` prints one JSON document on every exit (`run` of one guest stopped before it started,
`call`/`tools` given a configuration error); a Ctrl-C in the first ~0.1 s prints no
`KeyboardInterrupt` traceback; forced exits leave no `/tmp/agent-host-logs-*` folder; a stdio
tooling's missing `cwd` is named as such, not "command not found", and messages show `${VAR}` as
written beside what it expanded to.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host.errors import ExitCode
from tests.support import cli_process, in_process
from tests.support.component import PROBE, REPO
from tests.support.processes import MUTE_SERVER, connecting, wait_for_line

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: signals and exit codes of the command

WAIT: Final = 120.0
"""Seconds a child `agent-host` may take to reach a line or to exit (a loaded machine)."""


def agent_host(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return cli_process.run(*args, cwd=cwd, timeout=WAIT, env=env)


def one_document(stdout: str) -> Any:
    """The one JSON document `stdout` holds (fails on anything else)."""
    return json.loads(stdout)


BAD_CONFIG: Final = '[host]\nmemory = "lots"\n'


@pytest.mark.parametrize(
    "command",
    [
        ["run", str(PROBE), "--json"],
        ["run", "--json"],
        ["run", "--agent", "nosuch", "--json"],
        ["call", "demo", "echo", "text=hi", "--json"],
        ["tools", "--json"],
        ["tools", "demo", "--json"],
        ["config", "check", "--json"],
    ],
    ids=" ".join,
)
def test_a_configuration_error_is_one_json_document_under_json(command: list[str], tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(BAD_CONFIG)
    done = in_process.run("--config", str(config), *command)  # what is printed needs no process
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    document = one_document(done.stdout)
    if command[:2] == ["config", "check"]:
        assert document["ok"] is False and "host.memory" in document["problems"][0]
    else:
        assert set(document) == {"error"} and set(document["error"]) == {"code", "message", "data"}, document
        assert document["error"]["code"] == "config-error", document
        assert document["error"]["message"].startswith(f"{config}: host.memory: "), document
    assert "host.memory" in done.stderr


@pytest.mark.parametrize(
    "command",
    [["run", str(PROBE), "--json", "--bogus"], ["call", "--json"], ["tools", "--json", "a", "b"]],
    ids=" ".join,
)
def test_a_usage_error_is_one_json_document_under_json(command: list[str]) -> None:
    done = in_process.run(*command)
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    document = one_document(done.stdout)
    assert document["error"]["code"] == "usage-error" and document["error"]["message"], document
    assert "agent-host: error:" in done.stderr


def test_run_json_of_a_guest_stopped_before_it_starts_is_its_outcome(tmp_path: Path) -> None:
    """A signal while the guest's component is prepared (here: a build componentize-py cannot finish
    soon, a folder the cache has never seen): the guest never starts, `run --json` still tells it."""
    guest = tmp_path / "slow"
    guest.mkdir()
    (guest / "app.py").write_text(
        "import wit_world\n\nclass WitWorld(wit_world.WitWorld):\n    def run(self, input: str) -> str:\n"
        f"        return {os.urandom(8).hex()!r}\n"
    )
    process = cli_process.start("run", str(guest), "--json", cwd=REPO)
    try:
        wait_for_line(process, "building", WAIT)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == ExitCode.for_signal(signal.SIGTERM), err
    outcome = one_document(out)
    assert outcome["agent"] == "slow" and outcome["status"] == "interrupted", outcome
    assert outcome["exit_code"] == ExitCode.for_signal(signal.SIGTERM)
    assert "SIGTERM" in outcome["output"]


EARLY_SIGINT: Final = """\
import os, signal, sys, threading, time
delay = float(sys.argv[1])
sys.argv = ["agent-host", *sys.argv[2:]]

def interrupt() -> None:
    deadline = time.monotonic() + 30
    while "agent_host.cli" not in sys.modules and time.monotonic() < deadline:  # the command line's first line
        time.sleep(0.0005)
    end = time.monotonic() + delay
    while time.monotonic() < end:
        time.sleep(0.0005)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
from agent_host.cli import entry
entry()
"""
"""The `agent-host` console script, with a SIGINT `delay` seconds after its package's first line
(what comes before, the interpreter's own start-up, is Python's)."""


@pytest.mark.parametrize("delay", [index * 0.02 for index in range(20)], ids=lambda d: f"{d:.2f}s")
def test_a_ctrl_c_at_any_moment_of_start_up_is_a_quiet_stop(delay: float) -> None:
    done = cli_process.run(str(delay), "config", "check", "--connect", code=EARLY_SIGINT, cwd=REPO, timeout=WAIT)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (ExitCode.SUCCESS, ExitCode.INTERRUPTED), done.stderr
    if done.returncode == ExitCode.INTERRUPTED:
        assert "cancelled by user" in done.stderr or "stopped: SIGINT received" in done.stderr, done.stderr


HOUR_MS: Final = 3_600_000


def isolated_tmp(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A temporary folder of its own for a child `agent-host` (TMPDIR), and the environment naming it."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder, {"TMPDIR": str(folder)}


@pytest.mark.parametrize("signals", [1, 2], ids=["one signal", "a second signal: exit at once"])
def test_a_stopped_command_leaves_no_temporary_folder(tmp_path: Path, signals: int) -> None:
    folder, env = isolated_tmp(tmp_path)
    config = tmp_path / "agent-host.toml"
    config.write_text(f'[tooling.mute]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-c", "{MUTE_SERVER}"]\n')
    process = cli_process.start("--config", str(config), "tools", cwd=tmp_path, env=env)
    try:
        connecting(process, WAIT)  # its log folder exists
        assert list(folder.glob("agent-host-*")), list(folder.iterdir())
        process.send_signal(signal.SIGINT)
        if signals == 2:
            wait_for_line(process, "stopping everything", WAIT)
            process.send_signal(signal.SIGINT)
        process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == ExitCode.INTERRUPTED
    assert list(folder.iterdir()) == []


def test_the_folder_of_a_killed_run_is_removed_by_the_next_command(probe_wasm: Path, tmp_path: Path) -> None:
    """SIGKILL leaves nothing a process can do: the next agent-host command cleans up after it."""
    folder, env = isolated_tmp(tmp_path)
    steps = {"steps": [{"op": "print", "text": "sleeping"}, {"op": "sleep", "ms": HOUR_MS}]}
    process = cli_process.start("run", str(probe_wasm), "--input", json.dumps(steps), cwd=tmp_path, env=env)
    try:
        wait_for_line(process, "sleeping", WAIT)
        left = list(folder.glob("agent-host-*"))
        process.kill()
        process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert len(left) == 1 and any(left[0].glob("guest-*.stdout")), left  # the guest printed: its file
    assert left[0].exists()  # nothing could run at SIGKILL
    again = agent_host("run", str(probe_wasm), "--input", json.dumps({"steps": []}), env=env, cwd=tmp_path)
    assert again.returncode == ExitCode.SUCCESS, again.stderr
    assert list(folder.iterdir()) == []


def test_a_missing_cwd_is_named_as_such_and_both_keys_are_quoted_as_written(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        '[tooling.here]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        'cwd = "${SERVER_DIR}"\n'
        '[tooling.plain]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\ncwd = "gone"\n'
        '[tooling.absent]\ncommand = "${SERVER}"\nenv = { TOKEN = "${TOKEN}" }\n'
    )
    env = {"SERVER_DIR": str(tmp_path / "no-such-dir"), "SERVER": "/opt/no-such-server",
           "TOKEN": "s3cr3t-t0ken-/opt/no-such-server"}  # fmt: skip
    done = agent_host("config", "check", str(config), "--connect", env=env, cwd=tmp_path)
    assert done.returncode == ExitCode.USAGE_ERROR, done.stderr
    lines = {line.split("]: ", 1)[0]: line for line in done.stderr.splitlines() if "problem: [tooling." in line}
    missing = tmp_path / "no-such-dir"
    assert (
        f"its working folder `cwd` '${{SERVER_DIR}}' (expanded to '{missing}') is not a folder (check `cwd` in "
        f"{config} [tooling.here])"
    ) in lines["agent-host: problem: [tooling.here"], lines
    assert f"`cwd` '{tmp_path / 'gone'}' is not a folder" in lines["agent-host: problem: [tooling.plain"], lines
    absent = lines["agent-host: problem: [tooling.absent"]
    assert "command '${SERVER}' (expanded to '/opt/no-such-server') was not found" in absent, absent
    assert "s3cr3t" not in done.stderr
    assert "command" not in lines["agent-host: problem: [tooling.here"].split("`cwd`")[0]
