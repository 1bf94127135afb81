"""An offered agent whose guest cannot start answers `unavailable` naming why, over every path: a
host error raised while the call's log lines are being forwarded is the call's answer, not a
failure of the server (it was an `ExceptionGroup` out of the call's task group: a plain 500)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, parse_config
from agent_host.errors import GuestsStuck
from agent_host.model import RunResult
from agent_host.serve.agents import AgentCalls, Offer

pytestmark = pytest.mark.anyio


class Stuck:
    """A runner that refuses every guest, as the host does once too many are left behind."""

    async def run(self, offer: Offer, given: str, on_log: Any, audit_budget: Any = None) -> RunResult:
        raise GuestsStuck("agent a not started: 16 guests of this process are blocked", hint="restart it")

    def close(self) -> None:
        pass

    def ready(self) -> dict[str, int]:
        return {}


@pytest.mark.parametrize("with_log", [True, False])
async def test_a_guest_that_cannot_start_answers_unavailable(tmp_path: Path, with_log: bool) -> None:
    config = parse_config('[agents.a]\ncomponent = "a.wasm"\n', tmp_path / "agent-host.toml", {})
    with Host(config) as host:
        offer = Offer("a", "", tmp_path / "a.wasm", config.agents["a"], host.agent_policy("a"))
        calls = AgentCalls(host, [offer], runner=Stuck())

        async def on_log(level: str, message: str) -> None:
            pass

        answer = await calls.call("a", {"input": "x"}, on_log if with_log else None)
    assert answer.code == "unavailable"
    assert "agent 'a' cannot start: agent a not started: 16 guests of this process are blocked" in answer.message
