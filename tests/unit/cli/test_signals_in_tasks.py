"""A signal that lands inside a task of the event loop (`serve`'s loop, the SDK's stdout writer) is a
stop too, not a traceback.

Provenance: issue 22's fresh-clone run: `serve --stdio` given SIGTERM while the SDK's stdout writer
ran printed a `BaseExceptionGroup` traceback and exited 1 instead of 143: the signal's exception was
raised inside a task, and the task group wrapped it in a group that `signals` did not look into.
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
    """Provenance: a warm run of `serve --stdio` given SIGTERM printed `Exception in callback
    BaseSelectorEventLoop._read_from_self()` and no `stopped:` line: the signal's exception was raised
    inside the callback that reads the loop's wake-up pipe (the signal itself writes to it), and
    asyncio logs any exception of a callback but `KeyboardInterrupt` and `SystemExit`, so the stop
    was lost."""
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
