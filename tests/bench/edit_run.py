"""`make bench`, the guest author's loop: from an edit of a guest's source to its new answer.

Three ways, in the same run, on a copy of the scout template guest that is edited before each round
(so nothing of its build is cached):
- build + run: `agent-host run GUEST` as a process: componentize-py build, first compile, run;
- `run --dev`: `agent-host run --dev GUEST` as a process (the dev runner is cached; no build);
- `agent-host dev`: the watch loop's rerun in a live host (what a save costs while `dev` watches).
Reported as seconds and as ratios to build + run. Medians of `ROUNDS` rounds (build + run: 1 round,
it takes ~30 s). Kept for the performance page as module `edit_run` (`tests.bench.record`).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final

from agent_host._support.paths import template
from agent_host.app.devmode import dev_policy
from agent_host.app.host import Host
from agent_host.components.dev_runner import runner_component
from agent_host.config import default_config
from tests.bench.record import Run, Table, record

ROUNDS: Final = 5


def _edit(folder: Path, round_: int) -> None:
    text = (template("guest_app.py.txt").replace("${name}", "bench")).replace('"hello"', f'"edit {round_}"')
    (folder / "app.py").write_text(text, encoding="utf-8")


def _process(*args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agent_host", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - started


def measure() -> list[tuple[str, float]]:
    """(label, seconds) for each way, medians."""
    with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
        folder = Path(scratch) / "bench"
        folder.mkdir()
        _edit(folder, 0)
        runner_component()  # built and compiled once, before timing
        _edit(folder, 1)
        full = _process("run", str(folder))
        dev_process = []
        for round_ in range(ROUNDS):
            _edit(folder, 10 + round_)
            dev_process.append(_process("run", "--dev", str(folder)))
        live = []
        with Host(default_config()) as host:
            wasm = runner_component()
            policy = dev_policy(host.policy("bench"), folder)
            host.run(wasm, "", agent="bench", policy=policy)  # connects the tooling, loads the runner
            for round_ in range(ROUNDS):
                _edit(folder, 20 + round_)
                started = time.perf_counter()
                outcome = host.run(wasm, "", agent="bench", policy=policy)
                live.append(time.perf_counter() - started)
                assert outcome.status == "ok", outcome
        shutil.rmtree(folder, ignore_errors=True)
    return [
        ("edit → answer: build + run (`agent-host run GUEST`, whole process)", full),
        ("edit → answer: `agent-host run --dev GUEST` (whole process)", statistics.median(dev_process)),
        ("edit → answer: `agent-host dev` rerun (live host, connections open)", statistics.median(live)),
    ]


def main() -> int:
    run = Run("edit_run")
    rows = measure()
    full = rows[0][1]
    table = Table(
        ["the guest author's loop", "seconds", "ratio to build + run"],
        [[label, f"{seconds:.3f}", f"{seconds / full:.3f}x"] for label, seconds in rows],
    )
    record(run, [table], dict(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
