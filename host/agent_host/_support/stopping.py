"""A stop request that every slow step of the host honours: build, compile, connect, run.

`StopToken.stop(reason, signum)` may be called from any thread or from a signal handler (it only
sets fields and an `Event`). Slow steps poll it while they wait (`POLL` seconds at most between
looks): a child process (componentize-py, the compiler) is terminated and `Interrupted` is raised;
`Host.start` refuses to start a guest once it is set; running guests are stopped by the host.
Such children run in their own process group, so a terminal's Ctrl-C reaches the host alone and
the host decides: it ends them with their whole group (what they started goes too, and the
host waits until nothing of the group is left), and reports `Interrupted` rather than the child's failure.

`Interrupted` (defined in `agent_host.errors` with the other errors, and importable from here)
carries the exit code of the signal: 128 + its number (SIGINT 130, SIGTERM 143).
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Final

from agent_host.errors import Interrupted as Interrupted

POLL: Final = 0.1
"""Seconds between looks at the token while waiting for a child process."""

TERMINATE_GRACE: Final = 2.0
"""Seconds a child process gets to exit after SIGTERM before it is killed."""


_groups: set[int] = set()
"""Tracked process groups; no lock (`kill_descendants` runs in a signal handler): `set.add`,
`discard` and copying the set are each atomic under the GIL."""


def track_group(group: int) -> None:
    """Register process group `group` until `forget_group`: a group that outlives the step that
    started it (a stdio MCP server's, ended by its tooling when done with the server), so that
    exiting at once (`kill_descendants`) kills it too, even what a server left behind when it exited."""
    _groups.add(group)


def forget_group(group: int) -> None:
    _groups.discard(group)


class StopToken:
    """Set once, read by every slow step (see the module docstring)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.reason: str | None = None
        self.signum: int | None = None

    def stop(self, reason: str, signum: int | None = None) -> None:
        """Request a stop; the first reason and signal are kept."""
        if self.reason is None:
            self.reason, self.signum = reason, signum
        self._event.set()

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def check(self, what: str) -> None:
        """Raise `Interrupted` (naming `what` was not done) when a stop was requested."""
        if self._event.is_set():
            raise Interrupted(f"{what}: not done, {self.reason}", signum=self.signum)

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)


TIMED_OUT: Final = -2
"""The status `run_child` gives for a child ended because it ran past its `timeout`."""


def run_child(
    command: list[str],
    stop: StopToken | None,
    what: str,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[int, str]:
    """Run `command` to its end and return (exit status, its stdout and stderr as text).

    The child runs in its own process group (a terminal's Ctrl-C reaches the host only) with no
    stdin. On a stop request, before or while it runs, it is terminated (killed after
    `TERMINATE_GRACE`) and `Interrupted` naming `what` is raised, whatever the child did. A child
    still running after `timeout` seconds is ended the same way, and its status is `TIMED_OUT`."""
    if stop is not None:
        stop.check(what)
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            process_group=0,
        )
        try:
            status = _wait(child, stop, None if timeout is None else time.monotonic() + timeout)
        finally:
            end_child(child)
        if stop is not None:
            stop.check(what)
        output.seek(0)
        return status, output.read().decode("utf-8", errors="replace")


def _wait(process: subprocess.Popen[bytes], stop: StopToken | None, deadline: float | None) -> int:
    """The exit status of `process`, -1 as soon as a stop is requested, `TIMED_OUT` past `deadline`."""
    while True:
        try:
            return process.wait(POLL)
        except subprocess.TimeoutExpired:
            pass
        if stop is not None and stop.stopped:
            return -1
        if deadline is not None and time.monotonic() >= deadline:
            return TIMED_OUT


def end_child(process: subprocess.Popen[bytes]) -> None:
    """Terminate `process` (with its own process group, when it leads one: what it started goes
    too), kill it if it does not exit in time, and reap it; then wait (bounded) until nothing of its
    group is left, so that no orphan outlives the host's step."""
    group = process.pid if process.poll() is None and _leads_group(process.pid) else None
    if process.poll() is None:
        _signal(process, group, signal.SIGTERM)
        try:
            process.wait(TERMINATE_GRACE)
        except subprocess.TimeoutExpired:
            _signal(process, group, signal.SIGKILL)
            process.wait()
    if group is not None:
        _wait_group_gone(group)


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _signal(process: subprocess.Popen[bytes], group: int | None, signum: int) -> None:
    if group is None:
        process.send_signal(signum)
        return
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


def _wait_group_gone(group: int) -> None:
    """Until no process of `group` is left (orphans exit, and are reaped by init): SIGKILL after
    `TERMINATE_GRACE`, then give up after as long again."""
    deadline = time.monotonic() + TERMINATE_GRACE
    killed = False
    while True:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        if time.monotonic() > deadline:
            if killed:
                return
            killed = True
            deadline = time.monotonic() + TERMINATE_GRACE
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                return
        time.sleep(POLL / 10)


def kill_descendants() -> None:
    """SIGKILL every process this one started, and what they started (on Linux, read from /proc;
    elsewhere nothing): the last step of exiting at once, so that no child (a stdio server, a local
    Ray's processes, a compiler) outlives the host; and every tracked process group (`track_group`:
    what a stdio server started, even once the server is gone)."""
    for group in list(_groups):
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    parents: dict[int, list[int]] = {}
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])  # pid (comm) state ppid ...
        parents.setdefault(parent, []).append(int(entry.name))
    found, frontier = [], [os.getpid()]
    while frontier:
        children = parents.get(frontier.pop(), [])
        found += children
        frontier += children
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
