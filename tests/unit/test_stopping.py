"""Ending a child process that runs in its own process group ends what it started too.

Provenance: issue 9 (found while moving the CLI): a signal during a build ended componentize-py but
not the helper process it had started, which outlived the host (tests/component/
test_newcomer_defects.py::test_sigterm_during_a_build_ends_componentize_py_and_exits_143, under load).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from host.stopping import end_child

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
