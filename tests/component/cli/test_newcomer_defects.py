"""Defects a new user met, each run as that user runs it: `agent-host` as a child process.

An uncaught host error or a non-str answer leaves `run` readable (exit 1); out of memory names the
`memory` limit and where it is set (exit 3); a signal during build or compile stops everything,
nothing starts after it and no process is left (SIGINT 130, SIGTERM 143); a fleet goes on past an
agent whose guest does not build; a final newline is printed only on a terminal; a python tool's
failure names the tooling and tool.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host.components.build import build_guest
from tests.support import cli_process, in_process
from tests.support.component import REPO
from tests.support.processes import descendants, wait_for_line

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: signals during a build and a compile

BLUNDERS: Final = REPO / "tests" / "guests" / "blunders"
WAIT: Final = 60.0
"""Seconds a child `agent-host` may take to reach a line or to exit."""
STOPPED_WITHIN: Final = 5.0
"""Seconds from a signal to the exit of `agent-host` (a stop should take "a second or two"; slack
for a loaded CI machine). Not a speed check: a broken stop takes the whole build or compile."""


@pytest.fixture(scope="session")
def blunders_wasm() -> Path:
    return build_guest(BLUNDERS)


def line_of(text: str) -> int:
    """The line of app.py of the blunders guest whose code starts with `text`."""
    lines = (BLUNDERS / "app.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip().startswith(text))


def agent_host(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command line in this process (the signal tests start a process of their own)."""
    return in_process.run(*args, cwd=cwd, env=env)


def assert_no_panic(stderr: str) -> None:
    assert "panicked" not in stderr and "unreachable" not in stderr and "object address" not in stderr, stderr


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (
            "nosuch",
            "not-found: no tooling named 'nosuch' is configured; granted to this agent: demo (raised at app.py:{line})",
        ),
        ("call", "not-found: "),
    ],
)
def test_an_uncaught_host_error_keeps_its_code_message_and_line(blunders_wasm: Path, given: str, expected: str) -> None:
    done = agent_host("run", str(blunders_wasm), "--input", given)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert_no_panic(done.stderr)
    line = line_of('tooling.get("nosuch")') if given == "nosuch" else line_of('call(demo, "no_such_tool")')
    assert f"agent-host: agent {blunders_wasm.stem} failed: {expected.format(line=line)}" in done.stderr
    assert f"(raised at app.py:{line})" in done.stderr


@pytest.mark.parametrize(("given", "kind"), [("dict", "dict"), ("none", "None")])
def test_run_returning_something_else_than_str_says_so(blunders_wasm: Path, given: str, kind: str) -> None:
    done = agent_host("run", str(blunders_wasm), "--input", given)
    assert done.returncode == 1, done.stderr
    assert_no_panic(done.stderr)
    assert f"failed: run() must return str, got {kind} (app.py:{line_of('def run(')})" in done.stderr


def test_an_err_with_a_string_and_a_good_answer_pass_through_unchanged(blunders_wasm: Path) -> None:
    declined = agent_host("run", str(blunders_wasm), "--input", "err")
    assert declined.returncode == 1
    assert f"agent-host: agent {blunders_wasm.stem} failed: declined\n" in declined.stderr
    fine = agent_host("run", str(blunders_wasm), "--input", "x")
    assert fine.returncode == 0, fine.stderr
    assert fine.stdout == "fine: x"  # piped: byte-exact, no newline added


def test_running_out_of_memory_names_the_limit_and_where_it_is_set(blunders_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(f"[agents.hog]\ncomponent = '{blunders_wasm}'\nmemory = \"64MiB\"\ninput = 'oom'\n")
    done = agent_host("run", "--agent", "hog", "--config", str(config))
    assert done.returncode == 3, done.stderr
    assert "object address" not in done.stderr
    assert (
        f"agent-host: agent hog was stopped: memory limit: the guest ran out of memory at 64 MiB "
        f"(raised at app.py:{line_of('hoard.append')}); the limit is memory in {config} [agents.hog]"
    ) in done.stderr


def test_the_answer_ends_with_a_newline_on_a_terminal_only(blunders_wasm: Path) -> None:
    controller, side = pty.openpty()
    try:
        process = cli_process.start("run", str(blunders_wasm), "--input", "x", stdout=side, cwd=REPO, text=False)
        os.close(side)
        seen = b""
        while True:
            try:
                chunk = os.read(controller, 1024)
            except OSError:  # the terminal side closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
        process.communicate(timeout=WAIT)
    finally:
        os.close(controller)
    assert process.returncode == 0
    assert seen == b"fine: x\r\n"  # the terminal turns "\n" into "\r\n"


def different_copy(wasm: Path, folder: Path) -> Path:
    """`wasm` with a custom section appended: a valid component that no cache has compiled."""
    payload = b"agent-host test " + os.urandom(16)
    name = b"x"
    body = bytes([len(name)]) + name + payload
    copy = folder / "fresh.wasm"
    copy.write_bytes(wasm.read_bytes() + b"\x00" + bytes([len(body)]) + body)
    return copy


@pytest.fixture
def empty_cache(tmp_path: Path) -> Iterator[dict[str, str]]:
    cache = tmp_path / "cache"
    yield {"AGENT_HOST_CACHE": str(cache)}


def working_children(process: subprocess.Popen[str], marker: str) -> set[int]:
    """The children of `process`, once one whose command line holds `marker` is at work."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        children = descendants(process.pid)
        if any(marker in command for command in children.values()):
            return set(children)
        time.sleep(0.05)
    raise AssertionError(f"no child process running {marker} within {WAIT} s")


def stop_with(process: subprocess.Popen[str], signum: int, marker: str) -> tuple[str, float]:
    children = working_children(process, marker)
    sent = time.monotonic()
    process.send_signal(signum)
    _, err = process.communicate(timeout=WAIT)
    took = time.monotonic() - sent
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    return err, took


def test_sigint_during_the_first_compile_stops_before_the_guest_starts(
    blunders_wasm: Path, tmp_path: Path, empty_cache: dict[str, str]
) -> None:
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[host]\naudit_log = "{audit}"\n'
        '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
        f"[agents.early]\ncomponent = '{different_copy(blunders_wasm, tmp_path)}'\n"
        "toolings = ['demo']\ninput = 'call'\n"
    )
    process = cli_process.start("run", "--agent", "early", "--config", str(config), cwd=REPO, env=empty_cache)
    wait_for_line(process, "compiling fresh.wasm")
    err, took = stop_with(process, signal.SIGINT, "agent_host.runtime.compiler")
    assert process.returncode == 130, err
    assert took < STOPPED_WITHIN, f"stopping took {took:.1f} s"
    assert "agent-host: stopped: " in err and "SIGINT received" in err
    assert "stopped after" in err
    assert "[early]" not in err and "agent early" not in err
    assert not audit.exists() or audit.read_text() == ""  # not even a `get`: the guest never ran
    assert not list((tmp_path / "cache").rglob("*.cwasm"))


def test_sigterm_during_a_build_ends_componentize_py_and_exits_143(tmp_path: Path, empty_cache: dict[str, str]) -> None:
    guest = tmp_path / "fresh"
    guest.mkdir()
    (guest / "app.py").write_text((BLUNDERS / "app.py").read_text() + f"\n# {os.urandom(8).hex()}\n")
    process = cli_process.start("run", str(guest), cwd=REPO, env=empty_cache)
    wait_for_line(process, "building guest fresh")
    err, took = stop_with(process, signal.SIGTERM, "componentize")
    assert process.returncode == 143, err
    assert took < STOPPED_WITHIN, f"stopping took {took:.1f} s"
    assert "SIGTERM received" in err
    assert not list((tmp_path / "cache").rglob("*.wasm"))


@pytest.mark.timeout(180)  # builds guests (one fails) into the cache: 29-36 s alone, 80 s under load
def test_a_fleet_goes_on_past_an_agent_whose_guest_does_not_build(blunders_wasm: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "app.py").write_text("import wit_world\n\nclass WitWorld(wit_world.WitWorld):\n    def run(self, x:\n")
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f"[agents.good]\ncomponent = '{blunders_wasm}'\ninput = 'x'\n"
        f"[agents.broken]\ncomponent = '{broken}'\n"
        f"[agents.bogus]\ncomponent = '{tmp_path / 'bogus.wasm'}'\n"
    )
    (tmp_path / "bogus.wasm").write_bytes(b"not a component")
    done = agent_host("run", "--json", "--config", str(config))
    assert done.returncode == 2, done.stderr
    rows = {row["agent"]: row for row in json.loads(done.stdout)}
    assert rows["good"]["status"] == "ok" and rows["good"]["output"] == "fine: x"
    assert rows["broken"]["status"] == "build-error" and rows["broken"]["exit_code"] == 2
    assert rows["broken"]["output"].startswith("agent broken: ")
    assert "SyntaxError: '(' was never closed" in rows["broken"]["output"]  # before componentize-py, or by it
    assert rows["bogus"]["status"] == "component-error"
    assert f"agent bogus: {tmp_path / 'bogus.wasm'} is not a WebAssembly component" in rows["bogus"]["output"]
    assert "agent-host: error: agent broken: " in done.stderr
    # The table too (without building the broken guest a second time: a failed build is not cached,
    # and the rows of every outcome are drawn alike).
    table = agent_host("run", "--config", str(config), "--agent", "good", "--agent", "bogus")
    assert table.returncode == 2
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["AGENT", "OUTCOME", "TIME", "DETAIL"]
    assert [line.split()[:2] for line in lines[1:]] == [["good", "ok"], ["bogus", "component-error"]]


def test_a_repeated_agent_option_runs_just_those_agents(blunders_wasm: Path, tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        "".join(f"[agents.{name}]\ncomponent = '{blunders_wasm}'\ninput = '{name}'\n" for name in ("a", "b", "c"))
    )
    done = agent_host("run", "--json", "--config", str(config), "--agent", "a", "--agent", "c")
    assert done.returncode == 0, done.stderr
    assert [(row["agent"], row["output"]) for row in json.loads(done.stdout)] == [("a", "fine: a"), ("c", "fine: c")]


def test_a_python_tool_that_raises_is_logged_with_its_tooling_and_tool(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(
        f'[tooling.mine]\nkind = "python"\npath = ["{REPO}"]\ntools = ["tests.support.pytools:explode"]\n'
    )
    done = agent_host("call", "mine", "explode", "--config", str(config))
    assert done.returncode == 1
    assert "tooling 'mine': tool 'explode' (called by agent 'cli') raised RuntimeError: kaboom" in done.stderr
    assert "agent-host: failed\n" not in done.stderr
