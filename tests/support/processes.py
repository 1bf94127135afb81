"""Which processes this test run started and has not reaped: the leak check behind every test.

Reads /proc (Linux). A process counts as leaked when it descends from the pytest process, is not
a zombie being reaped, and was not registered as long-lived by a session fixture (`keep`). A fork
server (`serves_forks`) is not a leak, and a child it forked counts as its launcher does
(`forkserver.launcher_of`): kept with a kept launcher, leaked with a leaked one, and leaked when its
launcher is gone.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from pathlib import Path

from tests.support.forkserver import launcher_of

_kept: set[int] = set()
_fork_servers: set[int] = set()


def keep(pid: int) -> None:
    """Exempt a session-scoped server (stopped by its own fixture) from the per-test check."""
    _kept.add(pid)


def release(pid: int) -> None:
    _kept.discard(pid)


def serves_forks(pid: int) -> None:
    """Register the fork server `pid` (`tests.support.forkserver`): see the module docstring."""
    _fork_servers.add(pid)


def process_table() -> dict[int, tuple[int, str, str]]:
    """Every process of this machine: pid -> (parent pid, state, command line)."""
    table: dict[int, tuple[int, str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may contain spaces and parentheses.
        rest = stat[stat.rindex(")") + 2 :].split()
        table[int(entry.name)] = (int(rest[1]), rest[0], cmdline)
    return table


def descendants(root: int | None = None) -> dict[int, str]:
    """Live descendants of `root` (default: this process), pid → command line."""
    root = os.getpid() if root is None else root
    table = process_table()
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, state, cmdline) in table.items():
            if ppid == parent and pid not in found:
                if state != "Z":
                    found[pid] = cmdline
                frontier.append(pid)
    return found


def leaked(grace: float = 3.0, ignore: set[int] | frozenset[int] = frozenset()) -> dict[int, str]:
    """Descendants not kept nor in `ignore`, after waiting up to `grace` seconds for them to exit."""
    deadline = time.monotonic() + grace
    while True:
        exempt = set(_kept) | set(ignore) | _fork_servers
        for pid in list(_kept):
            exempt |= set(descendants(pid))
        found = descendants()
        alive: dict[int, str] = {}
        for pid, cmd in found.items():
            if pid in exempt:
                continue
            launcher = launcher_of(pid)
            if launcher is None:
                alive[pid] = cmd
            elif launcher in exempt:
                exempt |= set(descendants(pid))
            elif launcher not in found:
                alive[pid] = f"{cmd} (forked, its launcher {launcher} gone)"
        alive = {pid: cmd for pid, cmd in alive.items() if pid not in exempt}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def wait_for_line(process: subprocess.Popen[str], text: str, timeout: float = 60.0) -> str:
    """Read `process`'s stderr until a line containing `text`; everything read (for messages).
    Fails when the process ends first or after `timeout` seconds."""
    assert process.stderr is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stderr, selectors.EVENT_READ)
    seen = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if selector.select(deadline - time.monotonic()):
            line = process.stderr.readline()
            seen += line
            if text in line:
                return seen
            assert line, f"the process ended before {text!r}: {seen}"
    raise AssertionError(f"{text!r} never appeared: {seen}")


MUTE_SERVER = "import time; time.sleep(120)  # a server that never answers the handshake"
"""A stdio server's Python code (`args = ["-c", MUTE_SERVER]`) that never answers the handshake."""


def connecting(process: subprocess.Popen[str], timeout: float = 60.0) -> None:
    """Wait (up to `timeout` s) until `process` has started the mute server: it is connecting to it now."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any("time.sleep(120)" in command for command in descendants(process.pid).values()):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the mute server never started")
