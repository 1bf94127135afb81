"""When `agent-host serve` starts to stop with calls in flight, it says how many it waits for, and how long.

`Catalog.stopping(grace)` (called as the HTTP server shuts down) logs `stopping: waiting for N
call(s) in flight to end, up to GRACE s ([serve] grace)` once, N being the calls in flight at that
moment; with none in flight it says nothing (the server ends at once). A call still running when
the grace ends answers `cancelled`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_host import Host, parse_config
from agent_host.serve.answers import Answer
from agent_host.serve.catalog import build_catalog, waiting_line
from tests.support.log_records import Records

pytestmark = pytest.mark.anyio

SLOW = (
    '[tooling.mock]\nkind = "mock"\n[[tooling.mock.tools]]\nname = "slow"\nrepeat_last = true\n'
    'results = [{ text = "late", delay = 600, progress = 6000 }]\n[serve]\ntoolings = ["mock"]\n'
)
"""A proxied mock tool that reports progress every 0.1 s for ten minutes, then answers."""


def test_the_line_names_the_calls_and_the_grace() -> None:
    assert waiting_line(1, 10.0) == "stopping: waiting for 1 call in flight to end, up to 10 s ([serve] grace)"
    assert waiting_line(3, 2.5) == "stopping: waiting for 3 calls in flight to end, up to 2.5 s ([serve] grace)"


async def test_stopping_with_calls_in_flight_says_it_waits_for_them_once(tmp_path: Path) -> None:
    config = parse_config(SLOW, tmp_path / "agent-host.toml", {})
    answers: list[Answer] = []
    with Records.on("agent_host.serve.catalog") as records, Host(config) as host:
        catalog = build_catalog(host, config)
        running = [anyio.Event(), anyio.Event()]

        async def call(index: int) -> None:
            async def on_progress(progress: Any) -> None:
                running[index].set()

            answers.append(await catalog.call("mock.slow", {}, on_progress=on_progress, client=f"token {index}"))

        async with catalog.running(), anyio.create_task_group() as tasks:
            for index in range(2):
                tasks.start_soon(call, index)
            with anyio.fail_after(60):
                for event in running:
                    await event.wait()
            catalog.stopping(0)
            catalog.stopping(0)  # a second stop request: said once
    said = [record for record in records.records if record.getMessage().startswith("stopping:")]
    assert [(record.levelno, record.getMessage()) for record in said] == [(logging.INFO, waiting_line(2, 0))]
    assert [answer.code for answer in answers] == ["cancelled", "cancelled"]


async def test_stopping_with_nothing_in_flight_says_nothing(tmp_path: Path) -> None:
    config = parse_config(SLOW, tmp_path / "agent-host.toml", {})
    with Records.on("agent_host.serve.catalog") as records, Host(config) as host:
        catalog = build_catalog(host, config)
        async with catalog.running():
            catalog.stopping(10)
    assert not [message for message in records.messages() if message.startswith("stopping:")]
