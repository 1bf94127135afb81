"""What a guest opened is cancelled when it lets go, and what it watches survives a server restart.

Dropping a `tooling` handle, returning from `run`, and a trap in the middle of open calls each
cancel what was open, upstream too; a server killed while calls and subscriptions are open: the open
calls get `unavailable` envelopes; after the server is back, new calls work and subscriptions are
restored with a fresh `resource-updated`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_host import Host
from tests.support.component import Era, Server, eventually, granted, ok, probe
from tests.support.processes import descendants

pytestmark = pytest.mark.component
GET = {"op": "get", "tooling": "t", "as": "t"}
WAIT_60 = {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 60}'}
SUBSCRIBE = {"op": "subscribe_resource", "h": "t", "uri": "obs://a"}
BOTH_STARTED = {"op": "poll", "h": "t", "tool": "activity", "key": "started", "equals": 2}


def test_dropping_a_handle_cancels_its_calls_and_subscriptions_upstream(
    make_host: Callable[[str], Host], probe_wasm: Path, era: Era
) -> None:
    host = make_host(era.toml)
    results = probe(
        host,
        probe_wasm,
        [GET, WAIT_60, WAIT_60, SUBSCRIBE, BOTH_STARTED,
         {"op": "drop", "h": "t"},
         {"op": "get", "tooling": "t", "as": "u"},
         {"op": "poll", "h": "u", "tool": "activity", "key": "cancelled", "equals": 2},
         {"op": "pending"}],
    )  # fmt: skip
    assert ok(results[7])["cancelled"] == 2
    eventually(host, lambda a: era.upstream(a) == [])
    assert ok(results[8]) == []


@pytest.mark.parametrize("ending", ["return", "raise"])
def test_the_end_of_run_cancels_everything_upstream(
    make_host: Callable[[str], Host], probe_wasm: Path, ending: str, era: Era
) -> None:
    host = make_host(era.toml)
    steps: list[dict[str, Any]] = [GET, WAIT_60, WAIT_60, SUBSCRIBE, BOTH_STARTED]
    if ending == "raise":
        steps.append({"op": "raise", "message": "mid-flight"})
    outcome = host.run(probe_wasm, json.dumps({"steps": steps}), agent=ending, policy=granted(host, ending))
    assert outcome.status == ("ok" if ending == "return" else "error"), outcome  # an exception: the agent failed
    seen = eventually(host, lambda a: a["cancelled"] == 2 and era.upstream(a) == [])
    assert seen["finished"] == 0


def _kill_server(pattern: str) -> int:
    matches = [pid for pid, cmd in descendants().items() if pattern in cmd]
    assert len(matches) == 1, matches
    os.kill(matches[0], signal.SIGKILL)
    return matches[0]


def test_a_killed_stdio_server_fails_open_calls_then_comes_back_with_subscriptions(
    make_host: Callable[[str], Host], probe_wasm: Path, era: Era
) -> None:
    host = make_host(era.toml)
    guest = host.start(
        probe_wasm,
        json.dumps(
            {"steps": [
                GET, SUBSCRIBE, WAIT_60,
                {"op": "drain", "count": 2, "timeout_ms": 30000},
                {"op": "call_blocking", "h": "t", "tool": "echo", "args": '{"text": "back"}'},
                {"op": "call_blocking", "h": "t", "tool": "activity"},
            ]}
        ),
        agent="survivor",
        policy=granted(host, "survivor"),
    )  # fmt: skip
    eventually(host, lambda a: a["started"] == 1 and era.upstream(a) == [["obs://a"]])
    killed = _kill_server("tests.servers.observed")
    outcome = guest.join(60)
    assert outcome is not None and outcome.status == "ok", outcome
    results = json.loads(outcome.text)
    call_id, sub_id = ok(results[2]), ok(results[1])
    envelopes = {e["id"]: e for e in ok(results[3])}
    failed = envelopes[call_id]
    assert failed["kind"] == "Error" and failed["value"]["code"] == "unavailable"
    assert "closed the connection" in failed["value"]["message"]
    fresh = envelopes[sub_id]
    assert fresh["kind"] == "ResourceUpdated" and fresh["value"]["content"] == "initial a"
    assert ok(results[4])["value"]["content"][0]["text"] == "back"
    restarted = ok(results[5])["value"]["structuredContent"]
    assert era.upstream(restarted) == [["obs://a"]]  # restored on the new server process
    assert killed not in descendants()


def test_an_http_server_stopped_and_restarted_is_reconnected_with_subscriptions(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    server = Server([sys.executable, "-m", "tests.servers.observed", "--http", "0"])
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    replacement: Server | None = None
    try:
        host = make_host(f'[tooling.t]\nurl = "{server.url}"\ntimeout = 10\n')
        guest = host.start(
            probe_wasm,
            json.dumps(
                {"steps": [
                    GET, SUBSCRIBE,
                    {"op": "drain", "count": 1, "timeout_ms": 40000},
                    {"op": "call_blocking", "h": "t", "tool": "echo", "args": '{"text": "again"}'},
                ]}
            ),
            agent="http-survivor",
            policy=granted(host, "http-survivor"),
        )  # fmt: skip
        eventually(host, lambda a: a["listens"] == [["obs://a"]])
        server.stop()
        replacement = Server([sys.executable, "-m", "tests.servers.observed", "--http", port])
        outcome = guest.join(60)
        assert outcome is not None and outcome.status == "ok", outcome
        results = json.loads(outcome.text)
        fresh = ok(results[2])[0]
        assert fresh["kind"] == "ResourceUpdated" and fresh["value"]["content"] == "initial a"
        assert ok(results[3])["value"]["content"][0]["text"] == "again"
        eventually(host, lambda a: a["listens"] == [])  # released when the guest ended
        host.close()
    finally:
        server.stop()
        if replacement is not None:
            replacement.stop()
