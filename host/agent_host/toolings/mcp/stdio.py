"""A stdio MCP server's process: started by the SDK, ended with everything it started, its log bounded.

The SDK signals the server's process group (it leads one) only when the server outlives its stdin
closing, so what it started survived a server that exited by itself. `stdio_transport` ends the
whole group once the SDK is done with the server, however the connection ended; the group is
tracked by `agent_host._support.stopping` meanwhile. A stop (a signal, a deadline, an abandoned connect: the
transport's user is cancelled) or a failure kills the group at once, before the SDK's graceful
shutdown (EOF, 2 s, SIGTERM, 2 s) would wait. A process that leaves the group (`setsid`) escapes.
The server's stderr is a pipe, always read, copied into a `rotation.RotatingFile`. The server's pid
is learnt through `sdk_hooks.spawning` (reported only to the `stdio_transport` that started it).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Final

import anyio
from mcp.client.stdio import StdioServerParameters, stdio_client

from agent_host._support.rotation import LogBounds, RotatingFile
from agent_host._support.stopping import POLL, TERMINATE_GRACE, forget_group, track_group
from agent_host.toolings.mcp.sdk_hooks import TransportStreams, spawning

logger = logging.getLogger(__name__)

STDERR_CHUNK: Final = 64 * 1024
"""Bytes read from a server's stderr pipe at a time (one write to its log)."""

STDERR_DRAIN: Final = 1.0
"""Seconds the log pump may take, once the server's group is gone, to copy what is left in the pipe."""


@asynccontextmanager
async def stdio_transport(
    params: StdioServerParameters, log: Path, bounds: LogBounds
) -> AsyncIterator[TransportStreams]:
    """The SDK's `stdio_client(params)`, its stderr into `log` (bounded by `bounds`), the server's
    process group ended when it exits (see the module docstring). Raises as `stdio_client` does,
    and `OSError` when the log cannot be opened."""
    groups: list[int] = []
    sink = RotatingFile(log, bounds)
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    os.set_blocking(read_end, False)
    errlog = os.fdopen(write_end, "w", encoding="utf-8")

    def started(pid: int) -> None:
        groups.append(pid)  # start_new_session: the server leads a group whose id is its pid
        track_group(pid)
        errlog.close()  # the server holds the write end now; the pipe ends when its group is gone

    copied = anyio.Event()
    async with anyio.create_task_group() as pump:
        pump.start_soon(_copy, read_end, sink, log, copied)
        try:
            async with AsyncExitStack() as stack:
                async with spawning(started):  # the spawn is over at its end: later tasks report nothing
                    streams = await stack.enter_async_context(stdio_client(params, errlog=errlog))
                try:  # the client's exit (the stack's) is shielded and bounded
                    yield streams
                except BaseException:  # a stop (signal, deadline, abandoned connect) or a failure
                    for group in groups:
                        kill_group(group)
                    raise
        finally:
            with anyio.CancelScope(shield=True):
                errlog.close()
                for group in groups:
                    await end_group(group)
                with anyio.move_on_after(STDERR_DRAIN):
                    await copied.wait()
            pump.cancel_scope.cancel()


async def _copy(read_end: int, sink: RotatingFile, log: Path, copied: anyio.Event) -> None:
    """Copy the server's stderr into its log until the pipe ends (no process holds its write end);
    then close both and set `copied`."""
    failed = False
    try:
        while True:
            await anyio.wait_readable(read_end)
            try:
                data = os.read(read_end, STDERR_CHUNK)
            except BlockingIOError:
                continue
            if not data:
                return
            try:
                sink.write(data)
            except OSError as exc:
                if not failed:
                    failed = True
                    logger.warning("cannot write the server log %s: %s (its stderr is dropped)", log, exc)
    finally:
        os.close(read_end)
        sink.close()
        copied.set()


def kill_group(group: int) -> None:
    """SIGKILL process group `group` now (nothing to do when it is gone)."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def end_group(group: int) -> None:
    """End process group `group`: SIGTERM, SIGKILL after `TERMINATE_GRACE`, then wait as long
    again for it to go (orphans are reaped by whoever adopted them); stop tracking it."""
    try:
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(group, signum)
            except ProcessLookupError:
                return
            except PermissionError:
                pass
            if signum == signal.SIGTERM:
                logger.info("process group %d of a stdio server: ending what it left running", group)
            with anyio.move_on_after(TERMINATE_GRACE):
                while _group_alive(group):  # noqa: ASYNC110 - a process group's end has no event to wait on
                    await anyio.sleep(POLL / 10)
                return
        logger.warning("process group %d of a stdio server is still there after SIGKILL; abandoning it", group)
    finally:
        forget_group(group)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True
