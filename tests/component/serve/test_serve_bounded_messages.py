"""`agent-host serve`: what one message may weigh, both ways: an agent's answer (HTTP tool API and
MCP) is bounded by `max_result_bytes`; a `serve --stdio` message is bounded by `[serve] max_body`
while it is read.

An answer over the bound is a `limit-exceeded` error, so clients that do not read cannot make the
server hold it; a stdio message over `max_body` is refused without being read whole, and the next
message is answered. The real command, over HTTP on 127.0.0.1 and over stdio; the probe guest
answers with its environment, which the config makes large.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from tests.support.component import PROBE
from tests.support.probe_steps import env, script
from tests.support.processes import leaked
from tests.support.serving import INITIALIZE, HttpServe, RawStdio

pytestmark = pytest.mark.component

ENV_STEPS = script(env())
"""The probe's input: answer with its environment."""


def config(tmp_path: Path, big: int, serve: str = "") -> Path:
    path = tmp_path / "agent-host.toml"
    path.write_text(
        f'[host]\nmax_result_bytes = "16KiB"\n[agents.probe]\ncomponent = "{PROBE}"\n'
        f'env = {{ BIG = "{"x" * big}" }}\n[serve]\n{serve}'
    )
    return path


def test_an_agent_answer_over_max_result_bytes_is_a_limit_exceeded_error_over_http_and_mcp(tmp_path: Path) -> None:
    """Before the fix the whole answer was sent (200 with 20 KB here; 100 MiB held per client)."""
    served = HttpServe(config(tmp_path, 20000), "--agent", "probe")
    try:
        over = httpx2.post(f"{served.base}/tools/probe", json={"input": ENV_STEPS}, timeout=60)

        async def main() -> Any:
            async with Client(served.url) as client:
                return await client.call_tool("probe", {"input": ENV_STEPS})

        answer = anyio.run(main)
        small = httpx2.post(f"{served.base}/tools/probe", json={"input": json.dumps({"steps": []})}, timeout=60)
    finally:
        served.stop()
    assert over.status_code == 429, over.text[:200]
    error = over.json()["error"]
    assert error["code"] == "limit-exceeded"
    assert error["message"].startswith("agent probe's answer is larger than the limit of 16384 bytes (max_result_bytes")
    assert answer.is_error and answer.content[0].text.startswith("limit-exceeded: agent probe's answer is larger")
    assert small.status_code == 200 and small.json() == {"result": []}
    assert not leaked()


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_stdio_message_over_max_body_is_refused_while_read_and_the_next_one_is_answered(tmp_path: Path) -> None:
    """Before the fix the 32 MiB line was read whole (the peak RSS grew by more than it) and dropped
    without an answer."""
    server = RawStdio(config(tmp_path, 10, 'max_body = "64KiB"\n'), "--agent", "probe")
    try:
        assert server.ask(INITIALIZE)["id"] == 1
        server.send({"method": "notifications/initialized"})
        before = peak_rss_kib(server.process.pid)
        assert server.process.stdin is not None and server.process.stdout is not None
        server.process.stdin.write(
            '{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "' + "x" * (32 << 20) + '"}}\n'
        )
        server.process.stdin.flush()
        refusal = json.loads(server.process.stdout.readline())
        grown = peak_rss_kib(server.process.pid) - before
        listed = server.ask({"id": 3, "method": "tools/list"})
    finally:
        stderr = server.end(terminate=False)
    assert refusal["id"] is None and refusal["error"]["code"] == -32004, refusal
    assert refusal["error"]["message"].startswith(
        "limit-exceeded: a message (one line) is larger than [serve] max_body"
    )
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["probe"]
    assert grown < 16 << 10, f"the server grew by {grown} KiB reading a refused 32 MiB line"
    assert server.process.returncode == 0, stderr
    assert not leaked()
