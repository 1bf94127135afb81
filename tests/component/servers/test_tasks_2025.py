"""MCP Tasks of the 2025-11-25 era, against a server not written by us: server-everything (npm).

A tool the server runs as a task answers `call-tool` with its result in the inbox exactly once (the
2026-07-28 era is tests/component/servers/test_mcp_tasks.py). server-everything's
`simulate-research-query` requires a task (`execution.taskSupport = "required"`); with `ambiguous`
it asks a question while the task is `input_required`, delivered through `tasks/result`: with
`elicitation = "guest"` the question reaches the guest's inbox under its call's id.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_host import Host
from agent_host.config import parse_config
from tests.support.component import Steps, err, everything_toml, ok, probe

pytestmark = [pytest.mark.component, pytest.mark.npm]


def test_a_tool_that_requires_a_task_answers_once_asynchronous_or_blocking(
    everything_bin: Path, tmp_path: Path, probe_wasm: Path
) -> None:
    steps: Steps = [
        {"op": "get", "tooling": "everything", "as": "e"},
        {"op": "call", "h": "e", "tool": "simulate-research-query", "args": json.dumps({"topic": "tides"})},
        {"op": "is_open", "h": "e", "id": {"ref": 1}},
        {"op": "recv", "timeout_ms": 60_000},
        {"op": "recv", "timeout_ms": 500},
        {"op": "is_open", "h": "e", "id": {"ref": 1}},
        {"op": "call_blocking", "h": "e", "tool": "simulate-research-query", "args": json.dumps({"topic": "waves"})},
    ]
    with Host(parse_config(everything_toml(everything_bin), tmp_path / "agent-host.toml")) as host:
        results = probe(host, probe_wasm, steps)
    call_id = ok(results[1])
    assert ok(results[2]) is True
    final = ok(results[3])
    assert (final["id"], final["kind"]) == (call_id, "ToolResult")
    assert "# Research Report: tides" in final["value"]["value"]["content"][0]["text"]
    assert ok(results[4]) is None and ok(results[5]) is False  # exactly once, then closed
    blocking = ok(results[6])
    assert "# Research Report: waves" in blocking["value"]["content"][0]["text"]


def test_a_tasks_question_reaches_the_guest_and_its_answer_the_task(
    everything_bin: Path, tmp_path: Path, probe_wasm: Path
) -> None:
    arguments = json.dumps({"topic": "tides", "ambiguous": True})
    steps: Steps = [
        {"op": "get", "tooling": "everything", "as": "e"},
        {"op": "call", "h": "e", "tool": "simulate-research-query", "args": arguments},
        {"op": "recv", "timeout_ms": 60_000},
        {"op": "respond", "h": "e", "id": {"ref": 1}, "action": "accept", "content": {"interpretation": "oceans"}},
        {"op": "respond", "h": "e", "id": {"ref": 1}, "action": "accept", "content": {"interpretation": "historical"}},
        {"op": "recv", "timeout_ms": 60_000},
    ]
    text = everything_toml(everything_bin) + 'elicitation = "guest"\n'
    with Host(parse_config(text, tmp_path / "agent-host.toml")) as host:
        results = probe(host, probe_wasm, steps)
    call_id = ok(results[1])
    asked = ok(results[2])
    assert (asked["id"], asked["kind"]) == (call_id, "Elicitation")
    assert "could have multiple interpretations" in asked["value"]["message"]
    assert err(results[3])["code"] == "invalid-arguments"  # not one of the server's choices: still open
    assert ok(results[4]) is True
    final = ok(results[5])
    assert (final["id"], final["kind"]) == (call_id, "ToolResult")
    assert "# Research Report: tides (historical)" in final["value"]["value"]["content"][0]["text"]
