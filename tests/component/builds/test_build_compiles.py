"""`agent-host build` compiles the component too, so the first run starts at once.

The first `run` after `build` compiles nothing; two processes needing the same new build make it
once; a run that calls no MCP tooling imports neither the MCP SDK nor jsonschema.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import cli_process
from tests.support.component import REPO

pytestmark = pytest.mark.component

BLUNDERS = REPO / "tests" / "guests" / "blunders"


@pytest.mark.real_processes  # its subject: what a fresh process imports
def test_a_run_that_touches_no_mcp_tooling_imports_neither_mcp_nor_jsonschema() -> None:
    """A run of a cached guest that touches no MCP tooling stays fast: importing the MCP SDK costs
    ~0.5 s and jsonschema ~0.06 s, and neither is needed when no tool is called."""
    script = (
        "import sys; from agent_host.cli import main; code = main(['run', 'tests/guests/probe']);"
        "print(code, sorted(m for m in ('mcp', 'jsonschema', 'httpx2') if m in sys.modules))"
    )
    done = cli_process.run(code=script, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "idle done" + "0 []\n"  # the answer (no newline when piped), then the check


@pytest.mark.timeout(180)  # a new build and compile into an empty cache of its own
def test_two_processes_needing_the_same_new_build_make_it_once_and_the_first_run_compiles_nothing(
    tmp_path: Path,
) -> None:
    """`agent-host build` compiles the component too, so the first run after it compiles nothing.
    Before: two `agent-host` processes started at once (a `serve` and a `run`, the workers of a
    test run) each built and compiled the same guest (~20 s of CPU each). Now the second waits for
    the first's build and compile, saying so, and takes both from the cache."""
    guest = tmp_path / "shared"
    guest.mkdir()
    (guest / "app.py").write_text((BLUNDERS / "app.py").read_text() + f"\n# {os.urandom(8).hex()}\n")
    env = {"AGENT_HOST_CACHE": str(tmp_path / "cache")}
    first = cli_process.start("build", str(guest), cwd=REPO, env=env)
    try:
        assert first.stderr is not None
        seen = ""
        for line in first.stderr:  # the first holds the build's turn once it says it is building
            seen += line
            if "building guest shared" in line:
                break
        else:
            raise AssertionError(f"the first build never started: {seen}")
        second = cli_process.run("build", str(guest), cwd=REPO, env=env)
        out, rest = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0 and second.returncode == 0, (seen + rest, second.stderr)
    assert second.stdout == out  # the same component
    assert "waiting for another agent-host process building guest shared" in second.stderr, second.stderr
    # One build and one compile in all: the build is the first's (it held the turn when the second
    # started); the compile is whichever took its turn first, the other waited for it.
    both = (seen + rest + second.stderr).splitlines()
    assert sum(line.startswith("agent-host: building guest shared with") and line.endswith("...") for line in both) == 1
    assert sum(line.startswith("agent-host: compiling shared-") and line.endswith("...") for line in both) == 1, both
    first_run = cli_process.run("run", out.strip(), "--input", "x", cwd=REPO, env=env)
    assert first_run.returncode == 0, first_run.stderr
    assert first_run.stdout == "fine: x"
    assert "compiling" not in first_run.stderr
