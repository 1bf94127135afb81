"""The same guest calls over streamable HTTP: the bundled server on a free 127.0.0.1 port.

The server is started and stopped by the test; after a burst of concurrent calls, few idle HTTP
connections stay open.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from agent_host import Host
from agent_host.toolings.mcp.connection import HTTP_IDLE_CONNECTIONS
from tests.support.component import Server, err, ok, probe

BURST_WITHIN: Final = 30.0
"""Seconds the concurrent calls of the connection-pool test may take."""

pytestmark = pytest.mark.component


def test_every_blocking_function_works_over_streamable_http(
    make_host: Callable[[str], Host], probe_wasm: Path, http_demo: Server
) -> None:
    assert http_demo.url.startswith("http://127.0.0.1:")
    host = make_host(f'[tooling.remote]\nurl = "{http_demo.url}"\ntimeout = 20\n')
    results = probe(
        host,
        probe_wasm,
        [{"op": "get", "tooling": "remote", "as": "r"},
         {"op": "kind", "h": "r"},
         {"op": "list_tools", "h": "r"},
         {"op": "call_blocking", "h": "r", "tool": "add", "args": '{"a": 40, "b": 2}'},
         {"op": "call_blocking", "h": "r", "tool": "fail", "args": '{"message": "over http"}'},
         {"op": "call_blocking", "h": "r", "tool": "missing", "args": "{}"},
         {"op": "list_resources", "h": "r"},
         {"op": "read_resource", "h": "r", "uri": "demo://logo.png"},
         {"op": "read_resource", "h": "r", "uri": "demo://none"}],
    )  # fmt: skip
    assert ok(results[1]) == "mcp"
    assert [t["name"] for t in ok(results[2])][:3] == ["echo", "add", "word_count"]
    assert ok(results[3])["value"]["structuredContent"] == {"sum": 42}
    assert err(results[4])["code"] == "tool-failed" and "over http" in err(results[4])["message"]
    assert err(results[5])["code"] == "not-found"
    assert len(ok(results[6])) == 3
    assert base64.b64decode(ok(results[7])["content"])[:4] == b"\x89PNG"
    assert err(results[8])["code"] == "not-found"


def test_http_headers_from_the_config_reach_the_server(
    make_host: Callable[[str], Host], probe_wasm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_TOKEN", "s3cret")
    server = Server([sys.executable, "-m", "tests.servers.headers"])
    try:
        host = make_host(
            f'[tooling.remote]\nurl = "{server.url}"\nheaders = {{ Authorization = "Bearer ${{DEMO_TOKEN}}" }}\n'
        )
        results = probe(
            host,
            probe_wasm,
            [{"op": "get", "tooling": "remote", "as": "r"}, {"op": "call_blocking", "h": "r", "tool": "headers"}],
        )
        host.close()
    finally:
        server.stop()
    assert ok(results[1])["value"]["structuredContent"]["authorization"] == "Bearer s3cret"


def established_connections_to(port: int) -> int:
    """Connections to 127.0.0.1:`port` that clients on this machine hold open (ESTABLISHED), from /proc/net/tcp."""
    remote = f"0100007F:{port:04X}"
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[2] == remote and line.split()[3] == "01")


def test_after_a_burst_of_concurrent_calls_few_idle_http_connections_stay_open(
    make_host: Callable[[str], Host],
) -> None:
    """httpx keeps up to 20 idle connections and probes every idle one with system calls each time a
    request starts and ends, so after a burst every later call would pay for all of them. After
    2 * HTTP_IDLE_CONNECTIONS calls in flight at once (a barrier on the server proves it), the next
    call leaves at most HTTP_IDLE_CONNECTIONS (+1 being released) open."""
    burst = 2 * HTTP_IDLE_CONNECTIONS
    server = Server([sys.executable, "-m", "tests.servers.observed", "--http", "0"])
    try:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        host = make_host(f'[tooling.t]\nurl = "{server.url}"\n')
        sessions = [host.session(f"caller-{i}", allow=["*"]) for i in range(burst)]
        reps = [session.get("t") for session in sessions]
        arrived: list[int] = []

        def call(index: int) -> None:
            args = json.dumps({"group": "burst", "count": burst})
            outcome = sessions[index].call_tool_blocking(reps[index], "gather", args)
            arrived.append(json.loads(outcome.value)["structuredContent"]["result"])

        threads = [threading.Thread(target=call, args=(index,)) for index in range(burst)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(BURST_WITHIN)
        assert not any(thread.is_alive() for thread in threads), "the calls never all arrived at once"
        assert sorted(arrived) == [burst] * burst
        sessions[0].call_tool_blocking(reps[0], "echo", '{"text": "after the burst"}')
        assert established_connections_to(port) <= HTTP_IDLE_CONNECTIONS + 1
        host.close()
    finally:
        server.stop()
