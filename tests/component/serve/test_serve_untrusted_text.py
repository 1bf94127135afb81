"""`agent-host serve` given hostile text: bodies whose shape makes a naive check costly, and an
answer nested past the host's depth. Each gets its ordinary answer (a 400 naming the path, or the
answer as text), the server's peak memory stays near its size, and the audit line says what
happened. The agents are components written in WAT: `echo` answers its input as it is."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2
import pytest
import wasmtime
from mcp import Client

from tests.support import wat
from tests.support.serving import JSON_HEADERS, HttpServe

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: the server process's peak memory

WAIT: Final = 60.0
"""Seconds any one request or the server's exit may take (a bound, never a synchronisation)."""

GROWTH: Final = 200 * 1024 * 1024
"""Bytes the server's peak memory may grow by while it refuses a body of under 1 MiB (a path string
per value made it grow by 2.6 GB)."""

CONFIG: Final = """
[host]
audit_log = "{audit}"

[agents.echo]
component = "{echo}"

[agents.typed]
component = "{echo}"
input_schema = {{ type = "object", properties = {{ items = {{ type = "array", items = {{ type = "string" }} }} }} }}
"""


def peak_rss(pid: int) -> int:
    """The process's peak resident memory (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("untrusted")
    echo = folder / "echo.wasm"
    echo.write_bytes(bytes(wasmtime.wat2wasm(wat.ECHO)))
    audit = folder / "audit.jsonl"
    config = folder / "agent-host.toml"
    config.write_text(CONFIG.format(audit=audit, echo=echo))
    server = HttpServe(config)
    yield server, audit
    server.process.send_signal(signal.SIGTERM)
    server.process.communicate(timeout=WAIT)


def post(server: HttpServe, tool: str, body: bytes) -> httpx2.Response:
    return httpx2.post(f"{server.base}/tools/{tool}", content=body, headers=JSON_HEADERS, timeout=WAIT)


def path_over_zeros() -> bytes:
    """Under 1 MiB: a path of 126 objects with 40-character keys over an array of zeros."""
    prefix = "".join('{"%s":' % (f"{level:03d}" + "k" * 37) for level in range(126))
    zeros = (1_000_000 - 2 * len(prefix)) // 2
    return (prefix + "[" + ",".join(["0"] * zeros) + ',"\\ud800"]' + "}" * 126).encode()


def test_a_body_whose_paths_would_be_long_is_refused_naming_one_path_in_bounded_memory(served: Any) -> None:
    server, _ = served
    before = peak_rss(server.process.pid)
    answer = post(server, "echo", path_over_zeros())
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid-arguments" and "lone UTF-16 surrogate" in error["message"]
    assert len(error["message"]) < 500
    assert peak_rss(server.process.pid) - before < GROWTH


def test_a_body_breaking_the_input_schema_at_every_item_is_refused_from_a_few_violations(served: Any) -> None:
    server, _ = served
    before = peak_rss(server.process.pid)
    answer = post(server, "typed", json.dumps({"items": [0] * 450_000}, separators=(",", ":")).encode())
    assert answer.status_code == 400, answer.text
    message = answer.json()["error"]["message"]
    assert "at $.items[" in message and "is not of type 'string'" in message and message.endswith("(and more)")
    assert peak_rss(server.process.pid) - before < GROWTH


def test_an_answer_nested_past_the_hosts_depth_is_answered_as_text_over_http_and_mcp(served: Any) -> None:
    server, audit = served
    deep = "[" * 3000 + "]" * 3000
    answer = post(server, "echo", json.dumps({"input": deep}).encode())
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"result": deep}

    async def over_mcp() -> Any:
        with anyio.fail_after(WAIT):
            async with Client(server.url) as client:
                return await client.call_tool("echo", {"input": deep})

    result = anyio.run(over_mcp)
    assert result.is_error is False and [block.text for block in result.content] == [deep]
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    served_calls = [line for line in lines if line["operation"] == "serve-call" and line["target"] == "echo"]
    assert [line["outcome"] for line in served_calls][-2:] == ["ok", "ok"]
