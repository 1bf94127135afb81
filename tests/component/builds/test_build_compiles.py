"""`agent-host build` compiles the component too, so the first run starts at once.

Provenance: issue 11 ("first `run` after `build` pays the ~10 s compile → 0 (compile at build)").
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.component import REPO

pytestmark = pytest.mark.component

BLUNDERS = REPO / "tests" / "guests" / "blunders"


def test_the_first_run_after_a_build_compiles_nothing(tmp_path: Path) -> None:
    guest = tmp_path / "fresh"
    guest.mkdir()
    (guest / "app.py").write_text((BLUNDERS / "app.py").read_text() + f"\n# {os.urandom(8).hex()}\n")
    env = {**os.environ, "AGENT_HOST_CACHE": str(tmp_path / "cache")}

    def agent_host(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "agent_host", *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=300,
            check=False,
        )  # fmt: skip

    built = agent_host("build", str(guest))
    assert built.returncode == 0, built.stderr
    assert "building guest fresh" in built.stderr and "compiling" in built.stderr
    wasm = built.stdout.strip()
    first = agent_host("run", wasm, "--input", "x")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "fine: x"
    assert "compiling" not in first.stderr


def test_a_run_that_touches_no_mcp_tooling_imports_neither_mcp_nor_jsonschema() -> None:
    """Issue 11 ("`agent-host run` of a cached guest that touches no MCP tooling ≤ 0.4 s"): importing
    the MCP SDK costs ~0.5 s and jsonschema ~0.06 s; neither is needed when no tool is called."""
    script = (
        "import sys; from agent_host.cli import main; code = main(['run', 'tests/guests/idle']);"
        "print(code, sorted(m for m in ('mcp', 'jsonschema', 'httpx2') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "idle done" + "0 []\n"  # the answer (no newline when piped), then the check


def test_two_processes_needing_the_same_new_build_make_it_once(tmp_path: Path) -> None:
    """Before: two `agent-host` processes started at once (a `serve` and a `run`, the workers of a
    test run) each built and compiled the same guest (~20 s of CPU each). Now the second waits for
    the first's build and compile, saying so, and takes both from the cache."""
    guest = tmp_path / "shared"
    guest.mkdir()
    (guest / "app.py").write_text((BLUNDERS / "app.py").read_text() + f"\n# {os.urandom(8).hex()}\n")
    env = {**os.environ, "AGENT_HOST_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "agent_host", "build", str(guest)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        assert first.stderr is not None
        seen = ""
        for line in first.stderr:  # the first holds the build's turn once it says it is building
            seen += line
            if "building guest shared" in line:
                break
        else:
            raise AssertionError(f"the first build never started: {seen}")
        second = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=env, timeout=600, check=False)
        out, rest = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0 and second.returncode == 0, (seen + rest, second.stderr)
    assert second.stdout == out  # the same component
    assert "waiting for another agent-host process building guest shared" in second.stderr, second.stderr
    assert "compiling" not in second.stderr.replace("process compiling", ""), second.stderr
    assert "building guest shared with" not in second.stderr.replace("process building guest shared with", "")
