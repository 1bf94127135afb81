"""A syntax error in a guest is reported before componentize-py starts, judged by the guest's Python.

`build_guest` (so `run`, `build`, `serve` and the pytest fixture) compiles the guest's `.py` files
with the dev runner, the guest's own CPython, first: a syntax error in the entry module or in a
nested one, or a file that is not UTF-8, is a `BuildError` naming the file, line and column, with
nothing of componentize-py, which is not started; `agent-host run` exits 2 as for any build error.
A guest using syntax newer than the host's Python still builds, and files the build leaves out
(caches, hidden folders) are not checked.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from agent_host.app.devmode import prepare_runner
from agent_host.components import build
from agent_host.components.build import GUEST_PYTHON, build_guest
from agent_host.components.dev_runner import built_runner
from agent_host.errors import BuildError
from tests.support import in_process

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]
"""180 s: in a fresh cache the dev runner is built and compiled first (30-40 s alone, more under load),
and the guest of newer syntax is built for real."""

GUEST: Final = """\
import wit_world
from pkg import helper


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        return helper.shout(input)
"""

HELPER: Final = "def shout(text):\n    return text.upper()\n"

NEWER: Final = """\
import wit_world

type Pair[T] = tuple[T, T]


def first[T](pair: Pair[T]) -> T:
    return pair[0]


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        try:
            return f"{first((input, "other"))}"
        except ValueError, TypeError:
            return "no"
"""
"""Syntax of Python 3.12 (PEP 695 type parameters, PEP 701 quotes in f-strings) and 3.14 (PEP 758:
`except` of several types without parentheses), which componentize-py 0.25.1's CPython 3.14 takes."""


@pytest.fixture(scope="module", autouse=True)
def judge() -> None:
    """The guest's Python at hand: the host's when it is that version, else the dev runner (built
    and compiled once per cache; without it a build checks nothing first)."""
    if GUEST_PYTHON != sys.version_info[:2]:
        prepare_runner()
        assert built_runner() is not None


@pytest.fixture
def never_componentized(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """A spy where componentize-py would be started: the folders it was asked to build."""
    started: list[Path] = []

    def spy(folder: Path, *args: object) -> None:
        started.append(folder)
        raise AssertionError("componentize-py was started")

    monkeypatch.setattr(build, "_componentize", spy)
    yield started
    assert started == []


def guest_folder(tmp_path: Path, app: str = GUEST, helper: str = HELPER) -> Path:
    folder = tmp_path / "checked"
    (folder / "pkg").mkdir(parents=True)
    (folder / "app.py").write_text(app)
    (folder / "pkg" / "__init__.py").write_text("")
    (folder / "pkg" / "helper.py").write_text(helper)
    return folder


def test_a_syntax_error_is_reported_with_file_line_and_caret_before_componentize_py_starts(
    tmp_path: Path, never_componentized: list[Path]
) -> None:
    folder = guest_folder(tmp_path, app=GUEST.replace("helper.shout(input)", "helper.shout(input) +"))
    with pytest.raises(BuildError) as raised:
        build_guest(folder)
    assert raised.value.message == (
        f"app.py:7:37: SyntaxError: invalid syntax (guest {folder})\n"
        "    return helper.shout(input) +\n"
        "                                ^"
    )
    assert raised.value.exit_code == 2


def test_an_error_in_a_nested_module_is_named_by_its_path_in_the_folder(
    tmp_path: Path, never_componentized: list[Path]
) -> None:
    folder = guest_folder(tmp_path, helper="def shout(text)\n    return text.upper()\n")
    with pytest.raises(BuildError) as raised:
        build_guest(folder)
    assert raised.value.message.splitlines() == [
        f"pkg/helper.py:1:16: SyntaxError: expected ':' (guest {folder})",
        "    def shout(text)",
        "                   ^",
    ]


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path, never_componentized: list[Path]) -> None:
    folder = guest_folder(tmp_path)
    (folder / "pkg" / "helper.py").write_bytes(b'WORD = "caf\xe9"\n' + HELPER.encode())
    with pytest.raises(BuildError) as raised:
        build_guest(folder)
    assert raised.value.message == f"pkg/helper.py:1:12: not UTF-8 text: byte 0xe9 (guest {folder})"


def test_agent_host_run_of_a_guest_with_a_syntax_error_exits_2_with_the_error_alone(tmp_path: Path) -> None:
    folder = guest_folder(tmp_path, helper="def shout(text):\nreturn text\n")
    done = in_process.run("run", str(folder), "--input", "x")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[:2] == [
        f"agent-host: error: pkg/helper.py:2:1: IndentationError: expected an indented block after function "
        f"definition on line 1 (guest {folder})",
        "    return text",
    ]
    assert "componentize" not in done.stderr and "building" not in done.stderr


def test_a_guest_of_newer_syntax_builds_and_files_left_out_of_the_build_are_not_checked(tmp_path: Path) -> None:
    folder = tmp_path / "newer"
    folder.mkdir()
    (folder / "app.py").write_text(NEWER)
    for left_out in ("__pycache__/old.py", ".scratch/draft.py", "node_modules/x.py"):
        (folder / left_out).parent.mkdir()
        (folder / left_out).write_text("def broken(:\n")
    assert build_guest(folder, force=True).is_file()  # forced: checked and built, not taken from the cache


def test_the_dev_runner_runs_the_python_the_check_assumes_for_guests(tmp_path: Path) -> None:
    """`GUEST_PYTHON` decides whether the host's `compile()` may judge: it is the version of the
    CPython that componentize-py puts in a guest (the dev runner is built by it)."""
    folder = tmp_path / "version"
    folder.mkdir()
    (folder / "app.py").write_text(
        "import sys\nimport wit_world\n\n\nclass WitWorld(wit_world.WitWorld):\n"
        "    def run(self, input: str) -> str:\n        return '.'.join(map(str, sys.version_info[:2]))\n"
    )
    done = in_process.run("run", "--dev", str(folder))
    assert done.returncode == 0, done.stderr
    assert GUEST_PYTHON is not None and done.stdout == ".".join(map(str, GUEST_PYTHON))
