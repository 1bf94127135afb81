"""Server faults reach guests as errors with the right code, and calls work again afterwards.

A stdio server that crashes mid-call (in-flight calls get `unavailable`, the next call reconnects),
a server that hangs (`timeout`), a server that writes garbage to stdout (`protocol`, not a hang), an
HTTP server stopped and restarted; reconnection backs off exponentially up to the configured cap.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_host import ErrorCode, Host, ToolingError
from tests.support.component import OBSERVED_TOML, REPO, Server, err, ok, probe
from tests.support.processes import descendants

pytestmark = [pytest.mark.component, pytest.mark.real_processes]  # their subject: servers killed and hanging

GET = {"op": "get", "tooling": "t", "as": "t"}
ECHO = {"op": "call_blocking", "h": "t", "tool": "echo", "args": '{"text": "again"}'}


def echoed(result: dict[str, object]) -> str:
    value = ok(result)
    assert isinstance(value, dict)
    text: str = value["value"]["content"][0]["text"]
    return text


def server_pid() -> int:
    matches = [pid for pid, cmd in descendants().items() if "tests.servers.observed" in cmd]
    assert len(matches) == 1, matches
    return matches[0]


def test_a_crash_mid_call_fails_the_calls_in_flight_and_the_next_call_reconnects(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(OBSERVED_TOML)
    results = probe(
        host,
        probe_wasm,
        [GET, {"op": "call", "h": "t", "tool": "wait", "args": '{"seconds": 30}'},
         {"op": "call_blocking", "h": "t", "tool": "exit_now"},
         {"op": "drain", "ids": [{"ref": 1}], "timeout_ms": 10000},
         ECHO],
    )  # fmt: skip
    assert err(results[2])["code"] == "unavailable"
    in_flight = ok(results[3])[0]
    assert (in_flight["id"], in_flight["kind"], in_flight["value"]["code"]) == (ok(results[1]), "Error", "unavailable")
    assert echoed(results[4]) == "again"


def test_a_hanging_server_gives_timeout_and_calls_work_once_it_answers(
    make_host: Callable[[str], Host], probe_wasm: Path
) -> None:
    host = make_host(OBSERVED_TOML + "timeout = 1\n")
    host.session("connect", allow=["*"]).get("t")
    pid = server_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        hung = probe(host, probe_wasm, [GET, ECHO])
    finally:
        os.kill(pid, signal.SIGCONT)
    error = err(hung[1])
    assert error["code"] == "timeout"
    assert "did not finish within 1 s and was cancelled" in error["message"]
    assert "timeout" in error["message"] and "[tooling.t]" in error["message"]
    assert echoed(probe(host, probe_wasm, [GET, ECHO])[1]) == "again"


def test_garbage_on_stdout_is_a_protocol_error_not_a_hang(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    raw = f'[tooling.t]\ncommand = "${{AGENT_HOST_PYTHON}}"\nargs = ["-m", "tests.servers.raw"]\ncwd = "{REPO}"\n'
    host = make_host(raw + "timeout = 20\n")
    started = time.monotonic()
    results = probe(host, probe_wasm, [GET, {"op": "call_blocking", "h": "t", "tool": "garbage"}, ECHO])
    assert time.monotonic() - started < 15  # far from the 20 s request timeout
    error = err(results[1])
    assert error["code"] == "protocol"
    assert "this line is not JSON-RPC" not in error["message"] and "in the host's log" in error["message"]
    assert echoed(results[2]) == "again"


def test_an_http_server_stopped_and_restarted_serves_again(make_host: Callable[[str], Host], probe_wasm: Path) -> None:
    server = Server([sys.executable, "-m", "tests.servers.observed", "--http", "0"])
    port = server.url.rsplit(":", 1)[1].split("/")[0]
    try:
        host = make_host(f'[tooling.t]\nurl = "{server.url}"\n')
        session = host.session("client", allow=["*"])
        rep = session.get("t")
        assert "again" in session.call_tool_blocking(rep, "echo", '{"text": "again"}').value
        server.stop()
        with pytest.raises(ToolingError) as down:
            session.call_tool_blocking(rep, "echo", '{"text": "nobody there"}')
        assert down.value.code is ErrorCode.UNAVAILABLE
        server = Server([sys.executable, "-m", "tests.servers.observed", "--http", port])
        deadline = time.monotonic() + 10
        while True:
            try:
                value = session.call_tool_blocking(rep, "echo", '{"text": "back"}').value
                break
            except ToolingError as exc:
                assert exc.code is ErrorCode.UNAVAILABLE and time.monotonic() < deadline, exc
                time.sleep(0.1)
        assert json.loads(value)["content"][0]["text"] == "back"
        session.close()
        host.close()
    finally:
        server.stop()


def test_reconnection_backs_off_exponentially_up_to_the_configured_cap(make_host: Callable[[str], Host]) -> None:
    host = make_host('[tooling.t]\ncommand = "/nonexistent/server"\nmax_backoff = 0.4\n')
    session = host.session("client", allow=["*"])
    waits = []
    attempts = 0
    deadline = time.monotonic() + 10
    while attempts < 5 and time.monotonic() < deadline:
        with pytest.raises(ToolingError) as failed:
            session.get("t")
        message = failed.value.message
        if "the next attempt is in" in message:
            waits.append(float(message.split("the next attempt is in ")[1].split(" s")[0]))
            time.sleep(0.05)
        else:
            assert "was not found" in message
            attempts += 1
    assert attempts == 5
    assert max(waits) <= 0.4 and max(waits) > 0.2  # doubled from 0.1, capped by max_backoff
