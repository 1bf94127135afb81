"""A 2025-11-25 MCP client that goes away mid-call cancels it: its guest is stopped, its turn freed.

As on the 2026 path and the tool API, the call is cancelled rather than its guest running to its end
holding its turn. Three ways to go away, each with the SDK's client over streamable HTTP at
2025-11-25 against the real `agent-host serve --http`: the client process killed mid-call (its
connection closed by the system, nothing more sent), a DELETE of its session, and
`notifications/cancelled` (the SDK's client cancelling its call). With one turn and no queue, a call
afterwards runs instead of 429.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.component import REPO
from tests.support.processes import leaked
from tests.support.serve_audit import WAIT, calls_of, wait_for, waiting
from tests.support.serve_configs import WAITING, configured
from tests.support.serving import HttpServe, stopped

pytestmark = pytest.mark.component

ONE_TURN = "queue = 0\n"
ARGUMENTS = {"input": json.dumps(WAITING)}
"""The arguments of a call whose guest waits ten minutes."""


def turn_is_free(served: HttpServe) -> httpx2.Response:
    """A call of agent `idle` on the tool API, tried again while it is refused (the one turn is still
    held: the server sees the hang-up a moment after it happened); bounded by `WAIT`."""

    def answered() -> bool:
        answers.append(httpx2.post(f"{served.base}/tools/idle", json={"input": "1"}, timeout=WAIT))
        return answers[-1].status_code != 429

    answers: list[httpx2.Response] = []
    wait_for(answered, "the hung-up call's turn is free")
    return answers[-1]


def test_a_2025_client_killed_mid_call_cancels_it(tmp_path: Path) -> None:
    config, audit = configured(tmp_path, ONE_TURN)
    config.write_text(config.read_text().replace("max_concurrent = 2", "max_concurrent = 1"))
    served = HttpServe(config)
    caller = subprocess.Popen(
        [sys.executable, "-m", "tests.support.legacy_caller", served.url, "probe", json.dumps(ARGUMENTS)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_for(lambda: waiting(audit), "the call's guest waits in its inbox")
        caller.kill()
        caller.communicate(timeout=WAIT)
        answer = turn_is_free(served)
    finally:
        if caller.poll() is None:
            caller.kill()
            caller.communicate()
        code, stderr = stopped(served)
    assert (answer.status_code, answer.json()) == (200, {"result": "idle done"}), stderr
    assert [line["outcome"] for line in calls_of(audit, "probe")] == ["cancelled"]
    assert code == 143, stderr
    assert not leaked()


def _session_ids() -> tuple[list[str], Callable[[httpx2.Response], Awaitable[None]]]:
    seen: list[str] = []

    async def on_response(response: httpx2.Response) -> None:
        session = response.headers.get("mcp-session-id")
        if session and session not in seen:
            seen.append(session)

    return seen, on_response


@pytest.mark.parametrize("how", ["delete", "cancelled"])
def test_a_2025_client_that_ends_its_session_or_cancels_stops_the_call(tmp_path: Path, how: str) -> None:
    config, audit = configured(tmp_path, ONE_TURN)
    config.write_text(config.read_text().replace("max_concurrent = 2", "max_concurrent = 1"))
    served = HttpServe(config)
    seen, on_response = _session_ids()

    async def main() -> httpx2.Response:
        http = httpx2.AsyncClient(event_hooks={"response": [on_response]}, timeout=WAIT)
        async with http, Client(streamable_http_client(served.url, http_client=http), mode="legacy") as client:
            assert (await client.session.send_ping()) is not None
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as tg:
                    call = anyio.CancelScope()

                    async def calling() -> None:
                        with call, contextlib.suppress(MCPError):  # DELETE: the call's stream ends unanswered
                            await client.call_tool("probe", ARGUMENTS)

                    tg.start_soon(calling)
                    await anyio.to_thread.run_sync(wait_for, lambda: waiting(audit), "the guest waits")
                    if how == "delete":
                        ended = await http.delete(served.url, headers={"mcp-session-id": seen[0]})
                        assert ended.status_code == 200, ended.text
                    else:
                        call.cancel()  # the SDK's client sends notifications/cancelled
                    answer = await anyio.to_thread.run_sync(turn_is_free, served)
                    call.cancel()
        return answer

    try:
        answer = anyio.run(main)
    finally:
        code, stderr = stopped(served)
    assert (answer.status_code, answer.json()) == (200, {"result": "idle done"}), stderr
    assert [line["outcome"] for line in calls_of(audit, "probe")] == ["cancelled"]
    assert code == 143, stderr
    assert not leaked()


def test_results_reach_a_2025_client_that_stays(tmp_path: Path) -> None:
    """The hang-up watch cancels nothing of a client that reads its answer."""
    config, _ = configured(tmp_path)
    served = HttpServe(config)

    async def main() -> Any:
        async with Client(served.url, mode="legacy") as client:
            return [await client.call_tool("idle", {"input": "1"}) for _ in range(3)]

    try:
        results = anyio.run(main)
    finally:
        stopped(served)
    assert [result.content[0].text for result in results] == ["idle done"] * 3
