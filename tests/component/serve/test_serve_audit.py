"""`agent-host serve`: one client with a valid token cannot rotate away another client's audit lines.

A real server with two tokens proxies a mock tooling and audits arguments into a small rotated log
(256 KiB, one old file). The first client floods calls whose arguments are escape-heavy (each
unbounded line would be ~600 KB, rotating everything else away); its lines are cut,
charged to its allowance (`[serve] audit_client_max`) and, past it, counted; the second client's
lines before and after the flood are written, and at SIGTERM one line tells what was counted.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agent_host.session.audit_line import MAX_LINE_BYTES
from tests.support.serving import JSON_HEADERS, HttpServe

pytestmark = pytest.mark.component

WAIT = 60.0
"""Seconds any one request or the server's exit may take (a bound, never a synchronisation)."""

ALLOWANCE = 32 * 1024
"""`[serve] audit_client_max` of the test: bytes of audit lines each client may write."""

FLOOD = 30
"""Calls the first client makes."""

CONFIG = """
[tooling.mock]
kind = "mock"
[[tooling.mock.tools]]
name = "echo"
repeat_last = true
results = [{{ text = "hello" }}]

[host]
audit_log = "{audit}"
audit_arguments = true
audit_log_max = "256KiB"
audit_log_keep = 1

[serve]
toolings = ["mock"]
tokens = ["first-client-token", "second-client-token"]
audit_client_max = {allowance}
audit_client_rate = 1
"""


def call(served: HttpServe, token: str, body: bytes) -> httpx2.Response:
    headers = {**JSON_HEADERS, "authorization": f"Bearer {token}"}
    return httpx2.post(f"{served.base}/tools/mock.echo", content=body, headers=headers, timeout=WAIT)


def test_one_clients_flood_is_counted_past_its_allowance_and_the_others_lines_stay(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG.format(audit=audit, allowance=ALLOWANCE))
    served = HttpServe(config)
    try:
        before = call(served, "second-client-token", b'{"n": "before"}')
        flood_body = json.dumps({"x": "\x01" * 100_000}).encode()  # \u0001 in the body, a control character parsed
        flood = [call(served, "first-client-token", flood_body) for _ in range(FLOOD)]
        after = call(served, "second-client-token", b'{"n": "after"}')
    finally:
        served.process.send_signal(signal.SIGTERM)
        _, stderr = served.process.communicate(timeout=WAIT)
    assert [before.status_code, after.status_code] == [200, 200], stderr
    assert {answer.status_code for answer in flood} == {200}
    old = audit.with_name("audit.jsonl.1")
    raw = [line for path in (old, audit) if path.exists() for line in path.read_bytes().splitlines()]
    assert all(len(line) <= MAX_LINE_BYTES for line in raw)
    lines: list[dict[str, Any]] = [json.loads(line) for line in raw]
    second = [line.get("arguments") for line in lines if line["operation"] == "call-tool"]
    assert '{"n": "before"}' in second and '{"n": "after"}' in second
    told = [line for line in lines if line["operation"] == "audit-budget"]
    assert told and {line["target"] for line in told} == {"token 1"}
    flood_lines = [line for line in lines if line.get("arguments_chars")]
    assert not flood_lines  # each is over the allowance even cut: counted, never written
    counted = sum(line["lines_not_written"] for line in told)
    assert counted >= FLOOD  # every call-tool line of the flood at least
    assert not old.exists() and audit.stat().st_size < ALLOWANCE + 8 * 1024  # the allowance, the others, the telling
