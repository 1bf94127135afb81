"""A component built against the released contract (`agent-host:guest@0.2.0`) runs unchanged.

The guest in `tests/guests/released` is built with componentize-py against the WIT of 0.2.0 as it
was released (`wit/released/0.2.0`, frozen), so it imports the interfaces at `@0.2.0` and knows
nothing of `provider`: the host links those beside 0.3.0's, and its calls answer as before.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_host import Host, RunStatus, default_config
from agent_host._support.paths import cache_dir
from agent_host.components.build import COMPONENTIZE_PY_VERSION

pytestmark = pytest.mark.component

GUESTS = Path(__file__).resolve().parents[2] / "guests"
OLD_WIT = GUESTS.parent.parent / "wit" / "released" / "0.2.0"
SOURCE = GUESTS / "released"


@pytest.fixture(scope="module")
def released_wasm() -> Path:
    """The guest built against 0.2.0's WIT, once per change of its source, the WIT or componentize-py."""
    digest = hashlib.sha256(COMPONENTIZE_PY_VERSION.encode())
    for path in sorted([*OLD_WIT.glob("*.wit"), SOURCE / "app.py"]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    target = cache_dir() / "tests" / f"released-0.2.0-{digest.hexdigest()[:16]}.wasm"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".part")
        runner = "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())"
        command = [sys.executable, "-c", runner, "-d", str(OLD_WIT), "-w", "agent", "componentize", "app"]
        done = subprocess.run(
            [*command, "-p", str(SOURCE), "-o", str(partial)], capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        partial.replace(target)
    return target


def test_it_imports_only_the_released_interfaces(released_wasm: Path) -> None:
    """Read from the component's bytes, where each import's name stands as written (no compile)."""
    data = released_wasm.read_bytes()
    assert all(f"agent-host:guest/{name}@0.2.0".encode() in data for name in ("tooling", "inbox", "log"))
    assert b"agent-host:guest/provider" not in data and b"agent-host:guest/tooling@0.3.0" not in data


def test_it_runs_and_its_calls_answer_as_before(released_wasm: Path) -> None:
    with Host(default_config()) as host:
        result = host.run(released_wasm, "hello", agent="released")
    assert result.status is RunStatus.OK, result
    answer = json.loads(result.output)
    assert answer["echo"]["content"][0]["text"] == "hello"
    assert "echo" in answer["tools"]
