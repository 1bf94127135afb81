"""Helpers of the Ray tests: a Ray cluster made as a user makes it, and the Ray processes of this machine.

`start_head` runs `ray start --head --num-cpus=2` (2 CPUs whatever the machine: the pool has two
actors) in a temp folder of its own; `Head.stop` ends that head alone. Its processes are not children of
the test run (`ray start` detaches them), so the Ray tests check what they leave themselves:
`ray_processes` lists this machine's Ray processes (agent-host's actors are `ray::AgentWorker`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tests.support.processes import descendants, process_table

RAY: Final = Path(sys.executable).with_name("ray")
"""The `ray` command of the test run's environment (the extra `agent-host[ray]` installs it)."""

ENV: Final = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}

MARKERS: Final = ("ray::", "raylet", "gcs_server", "ray/_private", "ray/dashboard", "ray/autoscaler")
"""What the command line of every Ray process contains one of."""


def parents_of(text: str) -> dict[int, str]:
    """The processes whose command line contains `text`: pid -> their parent's command line."""
    table = process_table()
    return {pid: table.get(ppid, (0, "", ""))[2] for pid, (ppid, _, cmd) in table.items() if text in cmd}


def ray_processes(*, actors_only: bool = False) -> dict[int, str]:
    """This machine's Ray processes (pid → command line); with `actors_only`, agent-host's actors."""
    return {
        pid: cmd
        for pid, (_, state, cmd) in process_table().items()
        if state != "Z" and (cmd.startswith("ray::AgentWorker") if actors_only else any(m in cmd for m in MARKERS))
    }


def left_after(grace: float, *, ignore: set[int] | None = None) -> dict[int, str]:
    """What is still running after up to `grace` seconds: agent-host's actors, or with `ignore`,
    every Ray process not in it."""
    deadline = time.monotonic() + grace
    while True:
        if ignore is None:
            left = ray_processes(actors_only=True)
        else:
            left = {pid: cmd for pid, cmd in ray_processes().items() if pid not in ignore}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


@dataclass(frozen=True)
class Head:
    """A Ray head started by `start_head`."""

    address: str
    folder: Path
    """Its `--temp-dir`: every process of it names the folder, which is how `stop` finds them."""

    def stop(self, grace: float = 10.0) -> None:
        """Kill every process of this head and what they started (Ray's agents rename themselves
        `ray::DashboardAgent` ...), as `ray stop --force` does (its GCS and raylet outlive SIGTERM
        for seconds); wait up to `grace` s for them to go. Other Rays are left alone."""
        mine = [pid for pid, cmd in ray_processes().items() if str(self.folder) in cmd]
        mine += [child for pid in list(mine) for child in descendants(pid) if child not in mine]
        for pid in mine:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(pid in ray_processes() for pid in mine):
            time.sleep(0.1)
        shutil.rmtree(self.folder, ignore_errors=True)


def start_head() -> Head:
    """Start a Ray head of 2 CPUs on a free port, in a temp folder of its own."""
    assert shutil.which(str(RAY)), f"{RAY} is missing: pip install -e '.[dev,ray]' (make setup does)"
    folder = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's sockets live in it
    started = subprocess.run(
        [str(RAY), "start", "--head", "--num-cpus=2", "--port=0", "--include-dashboard=false", "--disable-usage-stats",
         f"--temp-dir={folder}"],
        capture_output=True, text=True, env=ENV, timeout=120, check=False,
    )  # fmt: skip
    assert started.returncode == 0, started.stdout + started.stderr
    match = re.search(r"--address='([^']+)'", started.stdout + started.stderr)
    assert match, started.stdout + started.stderr
    return Head(match.group(1), folder)
