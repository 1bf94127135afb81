"""Type checkers on a guest written by `agent-host new`, with the bindings of `agent-host bindings`.

pyright and mypy check a guest with no further set-up, and report a wrong call. mypy comes with the
dev extras; pyright is installed from npm (pinned) into the cache folder, and its test is skipped,
with the reason, when node or npm is missing. Each runs the way the README says: in the guest
folder, and from the project root naming the guest's settings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

from agent_host.cli import main
from tests.support.component import npm_bin

pytestmark = pytest.mark.component

PYRIGHT_VERSION: Final = "1.1.414"
CHECK_TIMEOUT: Final = 180.0
"""Seconds a type checker may take on one small guest (mypy's first run reads typeshed)."""

WRONG_CALL: Final = "    wit_tooling.get(42)  # a WIT function called with a wrong type\n"

USES_AGENTLIB: Final = """

from agentlib import Resource, ToolingError, ToolResult, call, read_resource
from wit_world.imports import tooling as wit_tooling


def summary(demo: wit_tooling.Tooling) -> str:
    try:
        result: ToolResult = call(demo, "add", a=2, b=3)
        readme: Resource = read_resource(demo, "demo://readme")
        return result.text + readme.text + str(result.structured) + result.raw["content"][0]["type"]
    except ToolingError as error:
        return error.code + ": " + error.message + str(error)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with guests/scout from `agent-host new` (plus a helper using agentlib) and
    ./typings from `agent-host bindings`."""
    monkeypatch.chdir(tmp_path)
    assert main(["-q", "new", "scout"]) == 0
    assert main(["-q", "bindings"]) == 0
    app = tmp_path / "guests" / "scout" / "app.py"
    app.write_text(app.read_text() + USES_AGENTLIB)
    return tmp_path


def break_the_guest(project: Path) -> int:
    """Insert `WRONG_CALL` as the first line of `run`'s body; its line number."""
    app = project / "guests" / "scout" / "app.py"
    lines = app.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("def run(input: str)")) + 1
    lines.insert(at, WRONG_CALL)
    app.write_text("".join(lines))
    return at + 1


def checked(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, timeout=CHECK_TIMEOUT)


def test_mypy_passes_on_a_new_guest_and_names_the_line_of_a_wrong_wit_call(project: Path) -> None:
    guest = project / "guests" / "scout"
    mypy = [sys.executable, "-m", "mypy", "--cache-dir", str(project / ".mypy_cache")]
    passed = checked([*mypy, "."], guest)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Success: no issues found in 1 source file" in passed.stdout
    line = break_the_guest(project)
    failed = checked([*mypy, "--config-file", "guests/scout/mypy.ini", "guests/scout"], project)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f'guests/scout/app.py:{line}: error: Argument 1 to "get" has incompatible type "int"; expected "str"' in (
        failed.stdout
    )
    assert "Found 1 error in 1 file" in failed.stdout  # nothing reported inside the bindings


@pytest.fixture(scope="session")
def pyright_bin() -> Path:
    return npm_bin("pyright", PYRIGHT_VERSION, "pyright")


@pytest.mark.npm
def test_pyright_passes_on_a_new_guest_and_names_the_line_of_a_wrong_wit_call(project: Path, pyright_bin: Path) -> None:
    guest = project / "guests" / "scout"
    passed = checked([str(pyright_bin)], guest)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "0 errors" in passed.stdout
    line = break_the_guest(project)
    failed = checked([str(pyright_bin), "-p", "guests/scout"], project)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f'app.py:{line}:21 - error: Argument of type "Literal[42]" cannot be assigned to parameter "name"' in (
        failed.stdout
    )
    assert "1 error," in failed.stdout
    from_root = checked([str(pyright_bin), "guests/scout/app.py"], project)  # ./typings found by default
    assert f"app.py:{line}:21 - error" in from_root.stdout and "1 error," in from_root.stdout
