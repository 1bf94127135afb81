"""SIGINT and SIGTERM while a command runs: stop every step, then exit 128 + the signal.

Inside `with signals() as stopper:` the first signal sets `stopper.token` (a build or compile in
progress ends, no guest starts) and stops every guest of `stopper.host` (what they opened is
cancelled upstream, connections close, no child is left); while `raise_at_once` is set (commands
that wait on one call) the signal also ends the main thread's wait at once, with a `BaseException`
that no `except Exception` boundary takes for a failure; leaving the `with`, it is `Interrupted`,
exit 130 or 143. A step that must not be cut in the middle (building what `serve` runs) runs with
`raise_at_once` unset, then `Stopper.check`. A second signal, even while closing, exits at once:
every process the command started killed (a local Ray's too), the temporary folder removed
(`agent_host._support.scratch`), the `--json` error document printed if none was. Previous handlers come back on exit.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol, TypeVar

from agent_host._support import scratch
from agent_host._support.stopping import StopToken, kill_descendants
from agent_host.cli import render
from agent_host.errors import ExitCode, Interrupted


class Stoppable(Protocol):
    """What runs guests: a `agent_host.app.host.Host`, or a `cluster.executor.RayExecutor`."""

    def stop_all(self, reason: str, signum: int | None = None) -> None: ...


class _AtOnce(KeyboardInterrupt):
    """A signal ending the main thread's wait (see the module docstring); `signals` re-raises it
    as `Interrupted`. A `KeyboardInterrupt` because asyncio lets only that and `SystemExit` leave a
    callback or a task: any other exception raised where the signal lands (the callback reading the
    loop's wake-up pipe, which the signal itself wrote to) is logged there and the stop is lost."""

    def __init__(self, reason: str, signum: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.signum = signum


_T = TypeVar("_T")


class Stopper:
    """What the signal handler acts on: the stop token, the host (or executor) once it exists."""

    def __init__(self, raise_at_once: bool) -> None:
        self.token = StopToken()
        self.host: Stoppable | None = None
        self.raise_at_once = raise_at_once
        """Whether a signal also ends the main thread's wait at once (may change while running)."""

    @property
    def exit_code(self) -> int | None:
        """128 + the signal's number once one was received (130 SIGINT, 143 SIGTERM), else None."""
        return ExitCode.for_signal(self.token.signum) if self.token.stopped else None

    def check(self) -> None:
        """Raise `Interrupted` once a signal was received."""
        if self.token.stopped:
            raise Interrupted(self.token.reason or "stopped", signum=self.token.signum)

    @contextmanager
    def started(self, make: Callable[[], AbstractContextManager[_T]]) -> Iterator[_T]:
        """Make and enter what `make` returns (a `Host`) with no signal raised inside it (a signal
        landing in a thread's start-up, such as the bridge's portal, left it unjoinable: the command
        hung until a second signal), then raise `Interrupted` if one came meanwhile, closing it."""
        at_once, self.raise_at_once = self.raise_at_once, False
        try:
            resource = make()
        finally:
            self.raise_at_once = at_once
        with resource as entered:
            self.check()
            yield entered


def _at_once_in(group: BaseExceptionGroup[BaseException]) -> _AtOnce | None:
    """The signal's exception in `group` (at any depth); what else the group holds came from the
    teardown the signal started, and goes with it."""
    found: BaseException | None = group.split(_AtOnce)[0]
    while isinstance(found, BaseExceptionGroup):
        found = found.exceptions[0]
    return found if isinstance(found, _AtOnce) else None


@contextmanager
def signals(*, raise_at_once: bool = False) -> Iterator[Stopper]:
    """Handle SIGINT and SIGTERM as the module docstring says while the body runs."""
    stopper = Stopper(raise_at_once)

    def handler(signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if stopper.token.stopped:
            os.write(2, f"agent-host: {name} again: exiting at once\n".encode())
            kill_descendants()
            if render.json_missing():
                document = render.error_document(Interrupted.reference, f"{name} again: exited at once")
                os.write(1, (json.dumps(document) + "\n").encode())
            scratch.remove()
            os._exit(ExitCode.for_signal(signum))
        fresh_line = "\n" if os.isatty(2) else ""  # a live progress line may be on the terminal's last line
        os.write(2, f"{fresh_line}agent-host: {name}: stopping everything (send it again to exit at once)\n".encode())
        reason = f"{name} received"
        stopper.token.stop(reason, signum)
        if stopper.host is not None:
            stopper.host.stop_all(reason, signum)
        if stopper.raise_at_once:
            raise _AtOnce(reason, signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stopper
    except _AtOnce as stop:
        raise Interrupted(stop.reason, signum=stop.signum) from None
    except BaseExceptionGroup as group:  # raised inside a task: its task group wrapped it
        inside = _at_once_in(group)
        if inside is None:
            raise
        raise Interrupted(inside.reason, signum=inside.signum) from None
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
