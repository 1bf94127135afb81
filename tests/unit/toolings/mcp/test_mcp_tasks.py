"""The Tasks extension polls as the server says: each wait is the latest `pollIntervalMs`, clamped.

The server is tests/servers/tasking.py, in process (the SDK's in-memory transport, 2026-07-28 era); the
waits between polls are recorded instead of slept, so nothing here depends on time.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from agent_host.toolings.mcp.tasks import DEFAULT_POLL, MAX_POLL, MIN_POLL, TasksExtension, poll_interval
from agent_host.toolings.request_clock import request_timeout
from tests.servers.tasking import State, build

pytestmark = pytest.mark.anyio


def test_a_hint_is_clamped_and_its_absence_is_the_default() -> None:
    assert poll_interval(250) == 0.25
    assert poll_interval(0) == MIN_POLL
    assert poll_interval(10**9) == MAX_POLL
    assert poll_interval(None) == DEFAULT_POLL


async def test_each_wait_between_polls_is_the_servers_latest_hint() -> None:
    state = State()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        """Record the wait; the server changes its hint after the first and ends the work after the third."""
        waits.append(seconds)
        (task,) = state.tasks.values()
        task.poll_ms = 500
        if len(waits) == 3:
            state.released["k"].set()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        server = build(tg, state)
        async with Client(server, extensions=[TasksExtension("t", 5.0, sleep=sleep)], cache=None) as client:
            with anyio.fail_after(10), request_timeout(10) as clock:
                result = await client.call_tool("work", {"key": "k", "poll_ms": 250})
        tg.cancel_scope.cancel()
    assert [block.text for block in result.content if block.type == "text"] == ["done k"]
    assert waits[:2] == [0.25, 0.5]  # the first hint came with the task, the next with a poll
    assert state.counts["k"]["polls"] == len(waits)  # one poll after each wait, none without one
    assert clock.renewed  # every answer renewed the request timeout


async def test_a_client_without_the_extension_gets_no_task() -> None:
    """What a server must do with a client that did not declare Tasks: answer inline (as before)."""
    state = State()
    async with anyio.create_task_group() as tg:
        server = build(tg, state)
        state.released["k"].set()
        async with Client(server, cache=None) as client:
            result = await client.call_tool("work", {"key": "k"})
        tg.cancel_scope.cancel()
    assert [block.text for block in result.content if block.type == "text"] == ["done k"]
    assert state.counts["k"]["tasks"] == 0
