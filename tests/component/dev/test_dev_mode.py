"""Dev mode: a guest folder runs from its source (no build per edit), and `agent-host dev` reruns it
on every save with the connections kept; errors point at the guest's own lines.

`run --dev` gives the guest its source, read-only, and changes nothing else of the sandbox; a guest
still running at a save is restarted, and Ctrl-C ends watch mode; an uncaught exception is told in
Python's format with paths relative to the guest folder and its source lines (no Rust panic text),
a syntax error before the run (as in a build; in watch mode the watch goes on), a missing module
with what to do.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Final

import pytest

from tests.support import in_process
from tests.support.component import REPO
from tests.support.dev_guest import GUEST
from tests.support.dev_watch import Watch
from tests.support.processes import descendants

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s, not the suite's 60: in a fresh cache the first test of a worker to need the example guests or the
dev runner builds and compiles them (30-40 s alone), and the others wait for that build (`cache.turn`); a fresh
run that was loaded took over 60 s."""

WAIT: Final = 120.0
"""Seconds a child `agent-host` may take to print an expected line (the first run builds and
compiles the dev runner once per cache)."""


def agent_host(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command line in this process (the watch-mode tests start a process of their own)."""
    return in_process.run(*args, cwd=cwd)


@pytest.fixture
def guest(tmp_path: Path) -> Path:
    folder = tmp_path / "devguest"
    folder.mkdir()
    (folder / "app.py").write_text(GUEST.replace("VERSION", "v1"))
    return folder


def test_run_dev_answers_from_the_source_and_an_edit_needs_no_build(guest: Path) -> None:
    first = agent_host("run", "--dev", str(guest), "--input", "hello")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "v1 hello"
    (guest / "app.py").write_text(GUEST.replace("VERSION", "v2"))
    second = agent_host("run", "--dev", str(guest), "--input", "hello")
    assert second.returncode == 0, second.stderr
    assert second.stdout == "v2 hello"
    assert "building" not in second.stderr and "compiling" not in second.stderr


def test_in_dev_mode_the_guest_sees_only_its_source_read_only(guest: Path) -> None:
    done = agent_host("run", "--dev", str(guest), "--input", "sandbox")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"src": ["app.py"], "passwd": False, "wrote": False, "env": ["AGENT_HOST_DEV_MODULE"]}


@pytest.mark.parametrize("dev", [True, False], ids=["dev", "built"])
def test_an_uncaught_exception_is_told_in_pythons_format_with_the_guests_lines(guest: Path, dev: bool) -> None:
    done = agent_host("run", *(["--dev"] if dev else []), str(guest), "--input", "divide")
    assert done.returncode == 1, done.stderr  # the agent failed: traps are the host's limits
    prefix = f"[{guest.name}] "
    report = [line.removeprefix(prefix) for line in done.stderr.splitlines() if line.startswith(prefix)]
    assert report == [
        "Traceback (most recent call last):",
        '  File "app.py", line 16, in run',
        "    return str(helper(0))",
        "               ~~~~~~^^^",
        '  File "app.py", line 10, in helper',
        "    return 1 / x",
        "           ~~^~~",
        "ZeroDivisionError: division by zero",
    ]
    assert "panicked" not in done.stderr and "RUST_BACKTRACE" not in done.stderr
    assert f"agent-host: agent {guest.name} failed: ZeroDivisionError: division by zero (at app.py:10)" in done.stderr


def test_a_syntax_error_is_told_before_the_run_with_file_line_and_caret(guest: Path) -> None:
    (guest / "app.py").write_text(GUEST + "\ndef broken(:\n")
    done = agent_host("run", "--dev", str(guest), "--input", "x")
    assert done.returncode == 2, done.stderr  # as in a build: the guest did not run
    line = len(GUEST.splitlines()) + 2
    assert done.stderr.splitlines() == [
        f"agent-host: error: app.py:{line}:12: SyntaxError: invalid syntax (guest {guest.resolve()})",
        "    def broken(:",
        "               ^",
    ]


def test_a_module_that_is_not_there_is_named_with_what_to_do(guest: Path) -> None:
    (guest / "app.py").write_text("import no_such_package_here\n" + GUEST)
    done = agent_host("run", "--dev", str(guest), "--input", "x")
    assert done.returncode == 1, done.stderr
    assert "failed: ModuleNotFoundError: No module named 'no_such_package_here' (at app.py:1)" in done.stderr
    assert f"  hint: copy it into the guest folder: pip install --no-deps --target {guest} no_such_package_here" in (
        done.stderr
    )


@pytest.mark.real_processes  # its subject: a process of its own
def test_dev_reruns_on_save_keeps_the_connection_and_stops_on_ctrl_c(guest: Path) -> None:
    watch = Watch(guest, "--input", "hello")
    try:
        assert watch.next_answer() == "v1 hello"
        watch.wait_err("watching")
        servers = {pid for pid, command in descendants(watch.process.pid).items() if "demo_server" in command}
        assert len(servers) == 1
        (guest / "app.py").write_text(GUEST.replace("VERSION", "v2"))
        assert watch.next_answer() == "v2 hello"
        again = {pid for pid, command in descendants(watch.process.pid).items() if "demo_server" in command}
        assert again == servers, "the tooling connection was not kept across the reload"
    finally:
        code = watch.stop()
    assert code == 130, watch.err
    assert "agent devguest: ok in" in watch.err


def test_a_syntax_error_saved_in_watch_mode_is_told_and_the_watch_goes_on(guest: Path) -> None:
    watch = Watch(guest, "--input", "hello")
    try:
        assert watch.next_answer() == "v1 hello"
        watch.wait_err("watching")
        (guest / "app.py").write_text(GUEST.replace("VERSION", "v2") + "\ndef broken(:\n")
        line = len(GUEST.splitlines()) + 2
        watch.wait_err(f"agent-host: app.py:{line}:12: SyntaxError: invalid syntax (guest {guest.resolve()})")
        (guest / "app.py").write_text(GUEST.replace("VERSION", "v3"))
        assert watch.next_answer() == "v3 hello"
    finally:
        code = watch.stop()
    assert code == 130, watch.err
    assert "v2" not in watch.out and "failed" not in watch.err, watch.err  # the broken save never ran


def test_a_guest_still_running_when_the_source_changes_is_started_again(guest: Path) -> None:
    watch = Watch(guest, "--input", "slow")
    try:
        watch.wait_err("slow: calling sleep")  # the guest is in (or entering) its 30 s `sleep` call now
        (guest / "app.py").write_text(GUEST.replace("VERSION", "v2").replace('"slow"', '"never"'))
        assert watch.next_answer("changed while running") == "v2 slow"
    finally:
        code = watch.stop()
    assert code == 130, watch.err
    assert watch.err.count("changed while running") == 1, watch.err  # one save, one restart
    assert "failed" not in watch.err and "was stopped" not in watch.err, watch.err
