"""`make bench`: how long whole `agent-host` processes take, beside an empty Python process.

- `agent-host --help`;
- `agent-host run GUEST` of a guest built and compiled before (the `idle` test guest: it touches no
  MCP tooling, so the MCP SDK is never imported);
- the first `run` after `agent-host build` of a freshly edited guest: the build compiled it, so this
  run should cost what a cached run costs (ratio ~1), not the ~10 s of a compile.

Medians of `ROUNDS` processes each (one for the build).
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

from agent_host._support.paths import cache_dir
from agent_host.components.build import build_guest
from agent_host.runtime.engine import Runtime

ROUNDS: Final = 7
IDLE: Final = Path(__file__).resolve().parents[1] / "guests" / "probe"
"""The probe guest; an input that is not JSON runs its idle part (wait in the inbox, then answer)."""


def process(*args: str, rounds: int = ROUNDS) -> float:
    """Median seconds of `rounds` runs of `args` (a command); each must exit 0."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - started)
        assert done.returncode == 0, done.stderr
    return statistics.median(times)


def measure() -> dict[str, float]:
    """Seconds: `python` (an empty process), `help`, `run_cached`, `build`, `first_run_after_build`."""
    agent_host = (sys.executable, "-m", "agent_host")
    wasm = build_guest(IDLE)
    with Runtime(cache_dir()) as runtime:
        runtime.load(wasm)  # compiled before timing
    figures = {
        "python": process(sys.executable, "-c", "pass"),
        "help": process(*agent_host, "--help"),
        "run_cached": process(*agent_host, "run", str(IDLE)),
    }
    with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
        fresh = Path(scratch) / "probe"
        shutil.copytree(IDLE, fresh)
        with (fresh / "app.py").open("a", encoding="utf-8") as app:
            app.write(f"\n# edited for the bench at {time.time()}\n")  # nothing of it is cached
        figures["build"] = process(*agent_host, "build", str(fresh), rounds=1)
        figures["first_run_after_build"] = process(*agent_host, "run", str(fresh), rounds=1)
    return figures
