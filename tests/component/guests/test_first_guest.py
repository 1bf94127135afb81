"""A user's first guest, as the template (`agent-host new`) and the README's "Writing a guest" write it.

Both use agentlib, and name an error's code as the host does, `not-found`, never `NOT_FOUND`. Each
is built with componentize-py and run as a user runs it (`agent-host` as a child process): against
the embedded default (the bundled demo server) it answers; with a config that has no tooling `demo`
it fails with exit code 1 and the host's code and message.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

from agent_host.components.build import build_guest
from tests.support import in_process
from tests.support.component import REPO

pytestmark = pytest.mark.component

NO_DEMO: Final = '[tooling.other]\nkind = "mock"\n[host]\nallow = ["other"]\n'
"""A config without a tooling `demo`: `get("demo")` fails with `not-found`."""


def agent_host(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command line in this process."""
    return in_process.run(*args, cwd=cwd)


def readme_first_guest() -> str:
    """The first Python block of the guest guide (docs/guests/python.md, "Writing a guest in Python"); the
    README's first guest is the same (tests/unit/docs/test_pages.py)."""
    section = (REPO / "docs" / "guests" / "python.md").read_text()
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


@pytest.fixture(scope="module", params=["template", "readme"])
def first_guest(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """(which, the built .wasm) of the template's guest and of the README's."""
    parent = tmp_path_factory.mktemp("first")
    if request.param == "template":
        assert agent_host("new", "scout", "--dir", str(parent)).returncode == 0
    else:
        (parent / "scout").mkdir()
        (parent / "scout" / "app.py").write_text(readme_first_guest())
    return request.param, build_guest(parent / "scout")


EXPECTED: Final[dict[str, Any]] = {
    "template": {"tools": ["echo", "add", "word_count", "fail", "sleep", "set_note"], "echo": "ping"},
    "readme": {"sum": 5, "readme": "# agent-host demo server"},
}


@pytest.mark.timeout(180)  # its fixture builds a new guest, then a run: 29 s alone, 101 s under load
def test_the_first_guest_answers_against_the_bundled_server(first_guest: tuple[str, Path]) -> None:
    which, wasm = first_guest
    done = agent_host("run", str(wasm), "--input", "ping")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer == EXPECTED[which]


def test_the_first_guest_reports_a_tooling_error_with_the_hosts_kebab_case_code(
    first_guest: tuple[str, Path], tmp_path: Path
) -> None:
    _, wasm = first_guest
    config = tmp_path / "agent-host.toml"
    config.write_text(NO_DEMO)
    done = agent_host("run", str(wasm), "--config", str(config))
    assert done.returncode == 1, done.stderr  # the guest returned err
    assert (
        "failed: not-found: no tooling named 'demo' is configured; granted to this agent: other (raised at app.py:"
        in (done.stderr)
    )  # the escaped ToolingError, with its code and the guest's own line
    assert "NOT_FOUND" not in done.stderr
