"""Turns and queue places of `agent-host serve` are divided between clients.

One client's many long calls do not make every other client's calls 429. With `max_concurrent = 2,
queue = 2`, client A fills both turns with guests that wait (tests/guests/probe in its inbox) and
both queue places; client B's call is then not refused: it takes the place of A's newest waiting
call (which answers `limit-exceeded`), and the next turn that frees goes to B, the client running
fewer calls, not to A's older waiting call. Real guests through the catalog (as the MCP server and
the tool API call it), on one loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.answers import Answer
from agent_host.serve.catalog import build_catalog
from tests.support.serve_audit import WAIT, wait_for
from tests.support.serve_configs import CONFIG, WAITING

pytestmark = pytest.mark.component


def test_a_client_that_fills_every_turn_and_queue_place_does_not_lock_another_out(tmp_path: Path) -> None:
    config = parse_config(CONFIG + "queue = 2\n", tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config)
        answers: dict[str, Answer] = {}

        async def main() -> Any:
            with anyio.fail_after(WAIT):
                async with catalog.running(), anyio.create_task_group() as tg:
                    scopes = [anyio.CancelScope() for _ in range(4)]

                    async def a_call(index: int) -> None:
                        with scopes[index]:
                            answers[f"a{index}"] = await catalog.call(
                                "probe", {"input": json.dumps(WAITING)}, client="token 1"
                            )

                    for index in range(4):
                        tg.start_soon(a_call, index)
                        await anyio.wait_all_tasks_blocked()
                    both = "both turns taken by guests that wait ten minutes"
                    await anyio.to_thread.run_sync(wait_for, lambda: len(host.running_agents) == 2, both)
                    b_done = anyio.Event()

                    async def b_call() -> None:
                        answers["b"] = await catalog.call("idle", {"input": "1"}, client="token 2")
                        b_done.set()

                    tg.start_soon(b_call)
                    await anyio.wait_all_tasks_blocked()  # B's call was admitted (or refused) at once
                    scopes[0].cancel()  # one of A's guests is stopped: its turn frees
                    await b_done.wait()
                    for scope in scopes:
                        scope.cancel()
            return answers

        answers = anyio.run(main)
    assert answers["b"].code is None and answers["b"].value == "idle done", answers["b"]
    evicted = answers["a3"]
    assert evicted.code == "limit-exceeded", evicted
    assert "client token 1" in evicted.message and "another client" in evicted.message
    assert "a2" not in answers  # A's older waiting call still waited: B got the free turn first
