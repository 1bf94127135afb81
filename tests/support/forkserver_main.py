"""The fork server: one process that has imported the MCP SDK, agent-host and coverage, and forks the
test run's Python children from there, so that each skips the ~1 s of CPU those imports cost.

Run as `python -m tests.support.forkserver_main SOCKET LAUNCHER`; it prints `ready` once it listens.
A launcher (`tests.support.launcher`) connects, sends a length-prefixed JSON request (`args`: `-m
MODULE ...` or `-c CODE ...`, `env`, `cwd`, `launcher`: its pid) and its three standard streams;
the server forks a child, answers `pid N`, and once the child ends `exit STATUS` (a wait status).
The child leads a session of its own, runs with the request's streams, folder and environment
(`FORKED_FOR` added: its launcher's pid, for the leak check), coverage started as a child of the
run would be, `sys.executable` the launcher (so that its own Python children are forked too), and
ends as the interpreter would (threads joined, atexit handlers run). A launcher that goes away (its
connection ends) takes its child's whole session with it (SIGKILL). The server is single-threaded
(it forks, so no other thread may hold a lock), and ends when its standard input closes.
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import threading
import traceback
from typing import Any, Final, NoReturn

FORKED_FOR: Final = "AGENT_HOST_TEST_FORKED_FOR"
"""The variable of a forked child's environment that names its launcher's pid."""

PRELOADED: Final = (
    "anyio",
    "pydantic",
    "httpx2",
    "mcp",
    "mcp.client",
    "mcp.server",
    "mcp.server.mcpserver",
    "uvicorn",
    "starlette.applications",
    "coverage",
    "wasmtime",
    "agent_host",
    "agent_host.cli",
    "agent_host.cli.root",
    "agent_host.app.host",
    "agent_host.serve.http",
    "agent_host.serve.mcp_server",
    "agent_host.toolings.mcp.tooling",
    "agent_host.demo_server",
    "tests.servers.observed",
    "tests.servers.asking",
)
"""What the server imports once (a module that fails to import is skipped: a child imports it itself)."""

MAX_REQUEST: Final = 64 * 1024 * 1024
"""Bytes of one request at most (its environment, its code)."""


def _preload() -> None:
    import importlib

    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except Exception:
            continue


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _flags, _address = socket.recv_fds(conn, 4 + 65536, 3)
    (size,) = struct.unpack("!I", head[:4])
    if size > MAX_REQUEST:
        raise ValueError(f"a request of {size} bytes")
    body = head[4:]
    while len(body) < size:
        chunk = conn.recv(min(size - len(body), 1 << 20))
        if not chunk:
            raise EOFError("the launcher went away")
        body += chunk
    return json.loads(body), fds


def _child(request: dict[str, Any], fds: list[int], launcher: str, closing: list[int]) -> NoReturn:
    """In the forked child: become what the request asks for, run it, end as the interpreter would."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in closing:
            os.close(fd)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[FORKED_FOR] = str(request["launcher"])
        sys.executable = launcher
        if os.environ.get("COVERAGE_PROCESS_START") or os.environ.get("COVERAGE_PROCESS_CONFIG"):
            import coverage

            coverage.process_startup()
        option, target, *rest = request["args"]
        if option == "-m":
            sys.argv = [target, *rest]
            sys.path[0] = os.getcwd()
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *rest]
            sys.path[0] = ""
            exec(compile(target, "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        code = 0
    except SystemExit as stop:
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        _end()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    _end()
    os._exit(code)


def _end() -> None:
    """What the interpreter does at its exit: join the threads, run the atexit handlers, flush."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def main() -> None:
    path, launcher = sys.argv[1], sys.argv[2]
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    wake_read, wake_write = socket.socketpair()
    wake_read.setblocking(False)
    wake_write.setblocking(False)
    signal.set_wakeup_fd(wake_write.fileno())
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_read, selectors.EVENT_READ, "children")
    selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
    connections: dict[int, socket.socket] = {}
    """pid -> the connection of its launcher (while it is there)."""
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError, EOFError):
                    conn.close()
                    continue
                closing = [listener.fileno(), wake_read.fileno(), wake_write.fileno(), conn.fileno()]
                closing += [other.fileno() for other in connections.values()]
                pid = os.fork()
                if pid == 0:
                    _child(request, fds, launcher, closing)
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"pid {pid}\n".encode())
                connections[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
            elif key.data == "children":
                try:
                    while wake_read.recv(4096):
                        pass
                except BlockingIOError:
                    pass
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    ended = connections.pop(pid, None)
                    if ended is not None:
                        selector.unregister(ended)
                        try:
                            ended.sendall(f"exit {status}\n".encode())
                        except OSError:
                            pass
                        ended.close()
            elif key.data == "stdin":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in list(connections):
                        _kill(pid)
                    return
            else:
                pid = key.data
                conn = key.fileobj  # type: ignore[assignment]
                if not conn.recv(64):  # the launcher went away: its child's session goes too
                    selector.unregister(conn)
                    conn.close()
                    connections.pop(pid, None)
                    _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    main()
