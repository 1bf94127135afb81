"""Grants and limits as a guest meets them: what is not granted is invisible or denied with a message
naming the key that grants it; results beyond the size limit, the wall-clock limit and the CPU limit
are enforced, and time waiting in the host is not CPU time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host, RunResult
from tests.support import probe_steps as step
from tests.support.component import OBSERVED_TOML, err, ok

pytestmark = pytest.mark.component

GET = step.get("t", as_="t")

AGENTS = """
[agents.reader]
toolings = ["t"]
tools = { t = ["echo", "add_*", "big"] }
resources = { t = ["obs://a", "obs://new*"] }

[agents.patient]
toolings = ["t"]
cpu_time = 1
timeout = 30

[agents.hurried]
toolings = ["t"]
timeout = 2
"""


def run_agent(host: Host, probe_wasm: Path, agent: str, steps: list[dict[str, Any]]) -> RunResult:
    policy = host.policy(agent, host.config.agents[agent])
    return host.run(probe_wasm, step.script(*steps), agent=agent, policy=policy)


@pytest.fixture
def host(make_host: Callable[[str], Host]) -> Host:
    return make_host("[host]\nmax_result_bytes = 1000\n" + OBSERVED_TOML + AGENTS)


def test_allow_lists_hide_what_is_not_granted_and_deny_it_everywhere(host: Host, probe_wasm: Path) -> None:
    outcome = run_agent(
        host,
        probe_wasm,
        "reader",
        [
            GET,
            step.list_tools("t"),
            step.list_resources("t"),
            step.call_blocking("t", "activity"),
            step.call("t", "activity"),
            step.read_resource("t", "obs://b"),
            step.subscribe_resource("t", "obs://b"),
            step.read_resource("t", "obs://a"),
            step.subscribe_resource_list("t"),
            step.subscribe_tool_list("t"),
            step.call_blocking("t", "add_resource", name="newer"),
            step.call_blocking("t", "add_tool", name="hidden_tool"),
            step.drain(count=2, timeout_ms=10000),
        ],
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    assert [t["name"] for t in ok(results[1])] == ["echo", "add_resource", "add_tool", "big"]  # server order
    assert [r["uri"] for r in ok(results[2])] == ["obs://a"]
    for index in (3, 4):
        error = err(results[index])
        assert error["code"] == "denied"
        assert "agent 'reader' may not call tool 'activity' of tooling 't'" in error["message"]
        assert 'tools.t = ["echo", "add_*", "big"]' in error["message"] and "[agents.reader]" in error["message"]
    for index in (5, 6):
        assert err(results[index])["code"] == "denied"
        assert "may not use resource 'obs://b'" in err(results[index])["message"]
    assert ok(results[7])["content"] == "initial a"
    events = {e["kind"]: e["value"] for e in ok(results[12])}
    assert [r["uri"] for r in events["ResourceListUpdated"]] == ["obs://a", "obs://newer"]
    assert "hidden_tool" not in [t["name"] for t in events["ToolListUpdated"]]


def test_results_beyond_the_size_limit_are_refused(host: Host, probe_wasm: Path) -> None:
    outcome = run_agent(
        host,
        probe_wasm,
        "reader",
        [
            GET,
            step.call_blocking("t", "big", size=5000),
            step.call("t", "big", size=5000),
            step.drain([step.ref(2)]),
            step.call_blocking("t", "big", size=10),
        ],
    )
    results = json.loads(outcome.text)
    error = err(results[1])
    assert error["code"] == "limit-exceeded"
    assert "more than the limit of 1000 (max_result_bytes in" in error["message"]
    envelope = ok(results[3])[0]
    assert (envelope["kind"], envelope["value"]["code"]) == ("Error", "limit-exceeded")
    assert ok(results[4])["value"]["content"][0]["text"] == "y" * 10


def test_the_wall_clock_limit_ends_waits_in_the_host_too(host: Host, probe_wasm: Path) -> None:
    started = time.monotonic()
    outcome = run_agent(host, probe_wasm, "hurried", [GET, step.recv(60000), step.loop()])
    assert outcome.status == "trap"
    assert (
        "time limit: run did not finish within 2 s (timeout in" in outcome.text and "[agents.hurried]" in outcome.text
    )
    assert time.monotonic() - started < 10


def test_waiting_in_the_host_is_not_cpu_time(host: Host, probe_wasm: Path) -> None:
    outcome = run_agent(
        host,
        probe_wasm,
        "patient",
        [GET, step.call_blocking("t", "wait", seconds=2.5), step.recv(1000)],
    )
    assert outcome.status == "ok", outcome  # 3.5 s of waiting under a 1 s CPU limit
    # A guest that computes for ever is stopped at 1 s of its own CPU time, however long the
    # machine takes to give it that second (a loaded machine: a fixed 3 s of wall-clock busy-work
    # got less than 1 s of CPU once).
    busy = run_agent(host, probe_wasm, "patient", [step.loop()])
    assert busy.status == "trap" and "CPU time limit: run used more than 1 s of CPU" in busy.text


def test_a_resource_uri_with_a_dot_segment_passes_no_resource_glob(host: Host, probe_wasm: Path) -> None:
    """A dot segment cannot walk a URI out of a glob (`demo://readme/../note` must not pass `demo://read*`)."""
    outcome = run_agent(
        host,
        probe_wasm,
        "reader",
        [
            GET,
            step.read_resource("t", "obs://new/../a"),
            step.subscribe_resource("t", "obs://new/%2e%2E/a"),
            step.read_resource("t", "obs://newer/..%2fb"),
        ],
    )
    assert outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    for result in results[1:]:
        error = err(result)
        assert error["code"] == "denied", error
        assert "dot segment '..'" in error["message"] and "resources.t" in error["message"], error


def test_a_guest_started_without_a_policy_gets_its_agent_tables_grants_and_limits(host: Host, probe_wasm: Path) -> None:
    """`Host.start` (and `Host.run`) with no `policy` resolves the agent's own policy
    (`Host.agent_policy`): its `[agents.NAME]` table, else deny by default."""
    steps = step.script(GET, step.list_tools("t"))
    reader = host.run(probe_wasm, steps, agent="reader")
    assert reader.status == "ok", reader
    assert [t["name"] for t in ok(json.loads(reader.text)[1])] == ["echo", "add_resource", "add_tool", "big"]
    stranger = host.run(probe_wasm, step.script(GET), agent="stranger")
    assert stranger.status == "ok", stranger
    error = err(json.loads(stranger.text)[0])
    assert error["code"] == "denied" and "deny by default" in error["message"], error
