"""The launcher of forked children: a stand-in for `python -m MODULE ARGS` or `python -c CODE ARGS`.

`forkserver.launcher()` writes this file as an executable script (`#!PYTHON -S`: no site, so it
starts in ~20 ms). It hands its argument list, environment, working folder and standard streams to
the fork server named by `SERVER` in its environment, which forks a child of a process that has
already imported the SDK and agent-host; then it stands for that child: signals it receives are
sent on, and it ends as the child ended (its exit code, or killed by the same signal). Whatever it
cannot hand over (another option of the interpreter, no server) runs the real interpreter
(`REAL_PYTHON`) in its place. It imports only the standard library, and nothing of the project.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
from typing import NoReturn

SERVER = "AGENT_HOST_TEST_FORKSERVER"
REAL_PYTHON = "AGENT_HOST_TEST_REAL_PYTHON"
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _real(args: list[str]) -> NoReturn:
    real = os.environ.get(REAL_PYTHON) or sys.executable
    os.execv(real, [real, *args])
    raise AssertionError("execv returned")


class _Lines:
    """The server's answer, line by line (both lines may come in one read: a child that ends at once)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._data = b""

    def next(self) -> str | None:
        while b"\n" not in self._data:
            chunk = self._sock.recv(64)
            if not chunk:
                return None
            self._data += chunk
        line, _, self._data = self._data.partition(b"\n")
        return line.decode().strip()


def main() -> None:
    args = sys.argv[1:]
    path = os.environ.get(SERVER)
    if not path or len(args) < 2 or args[0] not in ("-m", "-c"):
        _real(args)
    streams = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            _real(args)  # a closed standard stream: the real interpreter deals with it
        streams.append(fd)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        _real(args)
    request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd(), "launcher": os.getpid()}
    payload = json.dumps(request).encode()
    socket.send_fds(sock, [struct.pack("!I", len(payload)) + payload], streams)
    lines = _Lines(sock)
    started = lines.next()
    if started is None or not started.startswith("pid "):
        _real(args)
    child = int(started.split()[1])

    def forward(signum: int, frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    for signum in FORWARDED:
        signal.signal(signum, forward)
    ended = lines.next()
    status = int(ended.split()[1]) if ended is not None and ended.startswith("exit ") else 255 << 8
    if os.WIFSIGNALED(status):
        killed = os.WTERMSIG(status)
        signal.signal(killed, signal.SIG_DFL)
        os.kill(os.getpid(), killed)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 255)


if __name__ == "__main__":
    main()
