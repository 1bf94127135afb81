"""Ending a child process that runs in its own process group ends what it started too.

`end_child` ends a group leader and the processes it started (a build's componentize-py and its helper),
and exiting at once kills what a server that has already exited left in its tracked group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_host._support.stopping import end_child

pytestmark = pytest.mark.real_processes  # their subject: process groups and signals

PARENT = (
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(60)\n"
)


def test_ending_a_group_leader_ends_the_processes_it_started() -> None:
    process = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, process_group=0)
    assert process.stdout is not None
    grandchild = int(process.stdout.readline())
    end_child(process)
    process.stdout.close()
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(grandchild, 0)


def test_ending_a_child_that_has_exited_is_harmless() -> None:
    process = subprocess.Popen([sys.executable, "-c", "pass"], process_group=0)
    process.wait()
    end_child(process)
    assert process.returncode == 0


LEAVING = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(child.pid, flush=True)\n"
)
"""A server that starts a child and exits: the child lives on in the server's process group."""

EXITING_AT_ONCE = (
    "import subprocess, sys\n"
    "from agent_host._support.stopping import kill_descendants, track_group\n"
    "server = subprocess.Popen([sys.executable, '-c', sys.argv[1]], stdout=subprocess.PIPE, start_new_session=True)\n"
    "grandchild = int(server.stdout.readline())\n"
    "server.wait()\n"  # the server is gone; what it started lives on, adopted by init: no descendant
    "track_group(server.pid)\n"
    "kill_descendants()\n"
    "print(grandchild, flush=True)\n"
)
"""A host that exits at once (a second signal) after its stdio server exited."""

GONE_WITHIN = 10.0
"""Seconds a killed process may take to be gone (or a zombie waiting for init)."""


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_exiting_at_once_kills_what_a_gone_server_left_in_its_tracked_group() -> None:
    """A second signal's `kill_descendants` also kills what a stdio server that has exited left behind,
    though such orphans descend from init, no longer from the host: it kills the server's tracked group."""
    done = subprocess.run([sys.executable, "-c", EXITING_AT_ONCE, LEAVING], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    grandchild = int(done.stdout)
    deadline = time.monotonic() + GONE_WITHIN
    while running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    if running(grandchild):
        os.kill(grandchild, signal.SIGKILL)
        raise AssertionError("what the server left behind survived kill_descendants")
