"""The same guest calls over streamable HTTP: the bundled server on a free 127.0.0.1 port.

Provenance: issue 2: "a test MCP server over streamable HTTP on 127.0.0.1 (random free port,
started and stopped by the test)".
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from host import Host
from tests.component.conftest import Server, err, ok, probe

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
