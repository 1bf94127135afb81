"""A signal that lands inside a task of the event loop (`serve`'s loop, the SDK's stdout writer) is a
stop too, not a traceback.

The signal's exception, raised inside a task (and wrapped by its task group in a `BaseExceptionGroup`)
or inside an event loop callback, ends the command as `Interrupted` with the signal's exit code (143 for
SIGTERM), never as a traceback or a logged callback error.
"""

from __future__ import annotations

import os
import signal

import anyio
import pytest

from agent_host.cli.signals import signals
from agent_host.errors import Interrupted


def test_a_signal_raised_inside_a_task_group_is_interrupted_with_its_signal() -> None:
    async def writer() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # handled in this task, at its next bytecode
        await anyio.sleep_forever()

    async def serve() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(writer)
            await anyio.sleep_forever()

    with pytest.raises(Interrupted) as stopped:
        with signals(raise_at_once=True):
            anyio.run(serve)
    assert stopped.value.exit_code == 143  # 128 + SIGTERM
    assert "SIGTERM received" in str(stopped.value)


def test_a_signal_raised_inside_an_event_loop_callback_is_interrupted_not_logged(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The signal's exception may be raised inside the callback that reads the loop's wake-up pipe
    (the signal itself writes to it), and asyncio logs any exception of a callback but
    `KeyboardInterrupt` and `SystemExit`: the stop must not be lost as `Exception in callback
    BaseSelectorEventLoop._read_from_self()` with no `stopped:` line."""
    import asyncio

    def callback() -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # handled in this callback, at its next bytecode
        sum(range(100))

    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(Interrupted) as stopped:
            with signals(raise_at_once=True):
                loop.call_soon(callback)
                loop.call_soon(loop.stop)
                loop.run_forever()
    finally:
        loop.close()
    assert stopped.value.exit_code == 143
    assert "Exception in callback" not in capfd.readouterr().err
