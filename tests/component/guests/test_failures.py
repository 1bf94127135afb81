"""Toolings that cannot be reached give `unavailable` with a message naming the cause and the key to fix.

A server command that does not exist, an HTTP URL with nothing listening, a server that exits during
the handshake and one that never answers it. In each case a guest sees the error as a value, and the
host (and the guest) go on working.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_host import ErrorCode, Host, ToolingError
from tests.support.component import Server, err, ok, probe
from tests.support.probe_steps import call_blocking, get

pytestmark = pytest.mark.component

DEMO = '[tooling.demo]\ncommand = "${AGENT_HOST_PYTHON}"\nargs = ["-m", "agent_host.demo_server"]\n'
ECHO = call_blocking("d", "echo", text="alive")


def _then_demo_works(results: list[dict[str, object]]) -> None:
    assert ok(results[-2]) is True
    assert ok(results[-1])["value"]["content"][0]["text"] == "alive"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_server_command_that_does_not_exist_is_unavailable(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(DEMO + '[tooling.ghost]\ncommand = "/nonexistent/bin/mcp-ghost"\n')
    results = probe(host, probe_wasm, [get("ghost", as_="g"), get("demo", as_="d"), ECHO])
    error = err(results[0])
    assert error["code"] == "unavailable"
    assert "'/nonexistent/bin/mcp-ghost' was not found" in error["message"]
    assert "[tooling.ghost]" in error["message"]
    _then_demo_works(results)


def test_an_http_url_with_nothing_listening_is_unavailable(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    host = make_host(DEMO + f'[tooling.remote]\nurl = "{url}"\n')
    results = probe(host, probe_wasm, [get("remote", as_="r"), get("demo", as_="d"), ECHO])
    error = err(results[0])
    assert error["code"] == "unavailable"
    assert f"cannot connect to {url}" in error["message"]
    assert "is the server running?" in error["message"]
    _then_demo_works(results)


def test_a_server_that_exits_during_the_handshake_logs_its_stderr_but_keeps_it_from_the_guest(
    make_host: Callable[[str], Host], probe_wasm: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The server's stderr goes to the host's log; the guest's error points there, not quoting it."""
    crash = "import sys; sys.stderr.write('fatal: API key missing\\n'); sys.exit(3)"
    host = make_host(DEMO + f'[tooling.crashy]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-c", "{crash}"]\n')
    results = probe(host, probe_wasm, [get("crashy", as_="c"), get("demo", as_="d"), ECHO])
    error = err(results[0])
    assert error["code"] == "unavailable"
    assert "fatal: API key missing" not in error["message"] and "its stderr is in the host's log" in error["message"]
    assert any("fatal: API key missing" in record.getMessage() for record in caplog.records)
    _then_demo_works(results)


def test_a_server_that_never_answers_the_handshake_times_out_and_is_stopped(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    mute = "import time; time.sleep(120)"
    host = make_host(
        DEMO + f'[tooling.mute]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-c", "{mute}"]\nconnect_timeout = 1\n'
    )
    results = probe(host, probe_wasm, [get("mute", as_="m"), get("demo", as_="d"), ECHO])
    error = err(results[0])
    assert error["code"] == "unavailable"
    assert "did not complete the MCP handshake within 1 s" in error["message"]
    assert "[tooling.mute]" in error["message"]
    _then_demo_works(results)
    # no_leaked_processes checks that the mute server was stopped


def test_a_failed_connection_is_retried_by_the_next_get(make_host: Callable[[str], Host]) -> None:
    port = _free_port()
    # the backoff after one failure is shorter than starting the server: the next get tries again
    host = make_host(f'[tooling.remote]\nurl = "http://127.0.0.1:{port}/mcp"\nmax_backoff = 0.001\n')
    session = host.session("retry", allow=["*"])
    with pytest.raises(ToolingError) as refused:
        session.get("remote")
    assert refused.value.code is ErrorCode.UNAVAILABLE
    server = Server([sys.executable, "-m", "agent_host.demo_server", "--http", str(port)])
    try:
        rep = session.get("remote")
        assert session.call_tool_blocking(rep, "echo", '{"text": "now"}').value.startswith('{"content"')
    finally:
        host.close()
        server.stop()
