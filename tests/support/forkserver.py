"""Forked Python children for tests whose subject is not the process: each skips the ~1 s of CPU that
importing the MCP SDK and agent-host costs a fresh interpreter.

`ForkServer.start(folder)` starts `tests.support.forkserver_main` (which imports them once) and
writes `launcher` (`tests.support.launcher` as an executable script), a stand-in for the
interpreter: `LAUNCHER -m MODULE ARGS` and `LAUNCHER -c CODE ARGS` run forked children, with the
launcher's streams, folder and environment, its signals sent on and its exit mirrored. `environ()`
gives the variables that make a test's children forked: the server's socket, the real interpreter
and `AGENT_HOST_PYTHON` (the interpreter a configuration's `${AGENT_HOST_PYTHON}` names). A test
whose subject is a real process (signals, exit codes, child hygiene, transports, a process's own
memory or descriptors) starts it without them. The leak check counts a forked child with its
launcher (`launcher_of`): alive after its launcher is gone, it leaked.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Final

from tests.support import launcher as launcher_module
from tests.support.forkserver_main import FORKED_FOR

SERVER: Final = launcher_module.SERVER
REAL_PYTHON: Final = launcher_module.REAL_PYTHON
PYTHON_VARIABLE: Final = "AGENT_HOST_PYTHON"

READY_WAIT: Final = 120.0
"""Seconds the server may take to import everything and listen (a loaded machine included)."""


class ForkServer:
    """A running fork server and its launcher (see the module docstring). `close` ends it."""

    VARIABLES: Final = (SERVER, REAL_PYTHON, PYTHON_VARIABLE)
    """The variables `environ` sets."""

    REAL: Final = sys.executable
    """The real interpreter (this process's, as it started)."""

    def __init__(self, process: subprocess.Popen[str], socket_path: Path, launcher: Path) -> None:
        self.process = process
        self.socket = socket_path
        self.launcher = launcher

    @classmethod
    def start(cls, folder: Path) -> ForkServer:
        """A server listening in `folder` (made), its children measured by coverage when this process's are."""
        folder.mkdir(parents=True, exist_ok=True)
        launcher = folder / "python-forked"
        source = Path(launcher_module.__file__).read_text(encoding="utf-8")
        launcher.write_text(f"#!{cls.REAL} -S\n{source}", encoding="utf-8")
        launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        socket_path = folder / "forkserver.sock"
        env = {key: value for key, value in os.environ.items() if not key.startswith("COVERAGE_PROCESS")}
        repo = Path(__file__).resolve().parents[2]
        process = subprocess.Popen(
            [cls.REAL, "-m", "tests.support.forkserver_main", str(socket_path), str(launcher)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=repo,
        )
        assert process.stdout is not None
        ready = process.stdout.readline()
        if ready.strip() != "ready":
            process.kill()
            raise RuntimeError(f"the fork server did not start: {ready!r}, exit {process.wait(READY_WAIT)}")
        return cls(process, socket_path, launcher)

    def environ(self) -> dict[str, str]:
        """The variables that make children of a test forked (see the module docstring)."""
        return {SERVER: str(self.socket), REAL_PYTHON: self.REAL, PYTHON_VARIABLE: str(self.launcher)}

    def close(self) -> None:
        """End the server (its children with it) and wait for it. Idempotent."""
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(READY_WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def launcher_of(pid: int) -> int | None:
    """The pid of the launcher a forked child stands behind, None for any other process."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for entry in environ.split(b"\0"):
        name, _, value = entry.partition(b"=")
        if name == FORKED_FOR.encode():
            return int(value)
    return None
