"""`agent-host serve`: what a client does with a call reaches nobody else, and every call is answered.

An HTTP client that hangs up mid-call has its call cancelled, its guest stopped and its turn freed;
a body or MCP arguments that are not strict JSON are a 400 `invalid-arguments` naming what is
wrong, every call audited, a hang-up mid-body no traceback; at SIGTERM, calls cut off after the
grace answer 503 JSON `cancelled` and leave no temporary folder; guest log lines reach a client cut
as the host log cuts them, bounded per call with one "N log lines dropped" line, and the result
always gets through. Real `agent-host serve` processes on 127.0.0.1, the SDK's client, and raw
sockets where a client must misbehave.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server
from agent_host.session.guest_log import MAX_LOG_MESSAGE
from tests.support.probe_steps import log, script
from tests.support.processes import leaked
from tests.support.serve_audit import WAIT, calls_of, wait_for, waiting
from tests.support.serve_configs import CONFIG, WAITING, configured
from tests.support.serving import JSON_HEADERS, HttpServe, mcp_call, stopped

pytestmark = pytest.mark.component


def raw_post(served: HttpServe, path: str, body: bytes, length: int | None = None) -> socket.socket:
    """A connection that sent `POST path` with `body` (announcing `length` bytes) and reads nothing."""
    host, port = served.base.removeprefix("http://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=WAIT)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


@pytest.mark.real_processes  # its subject: a process of its own
def test_an_http_client_that_hangs_up_mid_call_frees_its_turn_and_its_guest_is_stopped(tmp_path: Path) -> None:
    """With one turn and no queue, a call after the hang-up runs instead of being refused."""
    config, audit = configured(tmp_path, "queue = 0\n")
    config.write_text(config.read_text().replace("max_concurrent = 2", "max_concurrent = 1"))
    served = HttpServe(config)
    try:
        with raw_post(served, "/tools/probe", json.dumps({"input": json.dumps(WAITING)}).encode()):
            wait_for(lambda: waiting(audit), "the first call's guest waits in its inbox")
            busy = httpx2.post(f"{served.base}/tools/idle", json={"input": "5"})
        # the first client hung up: its call is cancelled, its guest stopped, its turn free
        deadline = time.monotonic() + WAIT
        answer = httpx2.post(f"{served.base}/tools/idle", json={"input": "5"})
        while answer.status_code == 429 and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = httpx2.post(f"{served.base}/tools/idle", json={"input": "5"})
    finally:
        code, stderr = stopped(served)
    assert busy.status_code == 429  # while the first call ran, the one turn was taken
    assert (answer.status_code, answer.json()) == (200, {"result": "idle done"}), stderr
    assert code == 143, stderr
    assert [line["outcome"] for line in calls_of(audit, "probe")] == ["cancelled"]
    assert "agent probe: call cancelled, its guest stopped" in stderr
    assert not leaked()


BAD_BODIES: dict[str, tuple[bytes, str]] = {
    "deep": (b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested more than 128 levels deep"),
    "not quite deep enough to crash": (b'{"x": ' + b"[" * 200 + b"]" * 200 + b"}", "at $.x[0][0]"),
    "lone surrogate": (b'{"x": "a\\ud800b"}', "lone UTF-16 surrogate (\\ud800)"),
    "lone surrogate key": (b'{"\\udfff": 1}', "at $ (a key)"),
    "NaN": (b'{"x": NaN}', "NaN is not a JSON number"),
    "Infinity": (b'{"x": [1, -Infinity]}', "-Infinity is not a JSON number"),
    "overflow": (b'{"x": 1e999}', "too large for a float"),
    "huge integer": (b'{"x": ' + b"7" * 2000 + b"}", "an integer of 2000 digits (more than 1000)"),
    "not UTF-8": (b'{"x": "\xff"}', "not UTF-8"),
}


def test_bodies_that_are_not_strict_json_are_400_invalid_arguments_and_every_call_is_audited(tmp_path: Path) -> None:
    """On the HTTP API, for a proxied tool and an agent, and as MCP arguments; and a hang-up mid-body."""
    config, audit = configured(tmp_path, 'toolings = ["mock"]\nmax_body = "4MiB"\n')
    served = HttpServe(config)
    try:
        answers = {case: httpx2.post(f"{served.base}/tools/mock.echo", content=body, headers=JSON_HEADERS)
                   for case, (body, _) in BAD_BODIES.items()}  # fmt: skip
        to_agent = httpx2.post(f"{served.base}/tools/idle", content=b'{"input": "\\udc00"}', headers=JSON_HEADERS)
        fine = httpx2.post(
            f"{served.base}/tools/mock.echo", content=b'{"x": [1.5, "\\u00e9\\ud83d\\ude00"]}', headers=JSON_HEADERS
        )
        with raw_post(served, "/tools/mock.echo", b'{"x": ', length=1000):
            pass  # hung up mid-body
        wait_for(lambda: len(calls_of(audit, "mock.echo")) == len(BAD_BODIES) + 2, "every call audited")
        mcp = mcp_call(served, "mock.echo", '{"x": NaN, "y": ' + "1" * 1500 + "}")
    finally:
        code, stderr = stopped(served)
    for case, (_, named) in BAD_BODIES.items():
        answer = answers[case]
        assert answer.status_code == 400, (case, answer.text)
        assert answer.json()["error"]["code"] == "invalid-arguments", case
        assert named in answer.json()["error"]["message"], (case, answer.json())
    assert to_agent.status_code == 400 and "lone UTF-16 surrogate (\\udc00)" in to_agent.json()["error"]["message"]
    assert fine.status_code == 200, fine.text  # surrogate pairs, non-ASCII and floats are strict JSON
    outcomes = [line["outcome"] for line in calls_of(audit, "mock.echo")]
    assert outcomes == ["invalid-arguments"] * len(BAD_BODIES) + ["ok", "cancelled", "invalid-arguments"]
    assert [line["outcome"] for line in calls_of(audit, "idle")] == ["invalid-arguments"]
    assert mcp["isError"] is True
    assert mcp["content"][0]["text"].startswith("invalid-arguments: the arguments are not strict JSON: ")
    assert code == 143
    assert "Traceback" not in stderr and "Exception in ASGI application" not in stderr, stderr


@pytest.mark.real_processes  # its subject: a process of its own
def test_at_sigterm_calls_cut_off_after_the_grace_answer_503_cancelled_and_leave_no_temp_folder(
    tmp_path: Path,
) -> None:
    """The README's 503 JSON `cancelled`, not a plain-text 500; guests' folders removed."""
    config, audit = configured(tmp_path, "grace = 1\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    served = HttpServe(config, env={"TMPDIR": str(temp)})
    answers: list[httpx2.Response | BaseException] = []

    def call() -> None:
        try:
            answers.append(httpx2.post(f"{served.base}/tools/probe", json={"input": json.dumps(WAITING)}, timeout=WAIT))
        except httpx2.HTTPError as exc:
            answers.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    try:
        wait_for(lambda: waiting(audit), "the call's guest waits in its inbox")
        assert list(temp.glob("agent-host-*"))  # the process's folder, while it runs (agent_host._support.scratch)
    finally:
        code, stderr = stopped(served)
        caller.join(WAIT)
    assert code == 143, stderr
    assert "agent-host: stopping: waiting for 1 call in flight to end, up to 1 s ([serve] grace)\n" in stderr, stderr
    answer = answers[0]
    assert isinstance(answer, httpx2.Response), answer
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "cancelled"
    assert "within [serve] grace" in answer.json()["error"]["message"]
    assert [line["outcome"] for line in calls_of(audit, "probe")] == ["cancelled"]
    assert sorted(path.name for path in temp.iterdir()) == []  # no process folder, no guest's, no server logs
    assert not leaked()


def test_a_log_line_too_long_for_the_clients_reader_is_cut_and_the_result_gets_through(tmp_path: Path) -> None:
    """A 2 MB line (the SDK's client reads SSE events of at most 1 MiB) is cut at 16 Ki."""
    config, _ = configured(tmp_path, 'max_body = "8MiB"\n')
    steps = script(log("y" * 2_000_000), log("after"))
    logged: list[str] = []
    served = HttpServe(config, "--agent", "probe")

    async def on_log(params: Any) -> None:
        logged.append(params.data)

    async def main() -> Any:
        with anyio.fail_after(WAIT):
            async with Client(served.url, logging_callback=on_log, log_level="debug") as client:
                return await client.call_tool("probe", {"input": steps})

    try:
        result = anyio.run(main)
    finally:
        stopped(served)
    assert result.is_error is False and json.loads(result.content[0].text) == [{"ok": True}, {"ok": True}]
    assert logged == ["y" * MAX_LOG_MESSAGE + f"... [{2_000_000 - MAX_LOG_MESSAGE} characters cut]", "after"]


def test_a_client_slower_than_the_guests_log_holds_at_most_log_buffer_bytes_then_one_dropped_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that does not read while the guest logs 200 lines of 16 KiB (3.2 MB): at
    most `[serve] log_buffer` (here 256 KiB) wait for it; the rest are one "N log lines dropped" line
    in their place, and the result comes after them."""
    text = CONFIG + 'log_buffer = "256KiB"\n'
    count = 200
    steps = script(*(log(f"{i:04d}" + "z" * (MAX_LOG_MESSAGE - 4)) for i in range(count)))
    logged: list[str] = []
    config = parse_config(text, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config, ["probe"])

        started: list[Any] = []
        start = host.start

        def starting(*args: Any, **kwargs: Any) -> Any:  # on the loop: the call starts its guest
            started.append(start(*args, **kwargs))
            return started[-1]

        monkeypatch.setattr(host, "start", starting)

        async def main() -> Any:
            reading = anyio.Event()

            async def on_log(params: Any) -> None:
                await reading.wait()  # this client reads nothing until the guest has ended
                logged.append(params.data)

            async def guest_ends() -> None:
                await anyio.wait_all_tasks_blocked()  # the call has started its guest (see `starting`)
                assert started, "the guest started"
                await anyio.to_thread.run_sync(started[0].join, WAIT)
                reading.set()

            server = build_server(catalog)
            with anyio.fail_after(WAIT):
                async with catalog.running(), Client(server, logging_callback=on_log, log_level="debug") as client:
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(guest_ends)
                        return await client.call_tool("probe", {"input": steps})

        result = anyio.run(main)
    assert result.is_error is False
    lines = [line for line in logged if not line.startswith("[")]
    markers = [line for line in logged if line.startswith("[")]
    assert len(markers) == 1 and markers[0].endswith(
        "log lines dropped: the client reads them slower than the agent writes them]"
    )
    dropped = int(markers[0].removeprefix("[").split()[0])
    assert len(lines) + dropped == count
    assert len(lines) <= 256 * 1024 // MAX_LOG_MESSAGE + 2  # what fits the buffer, and the line in delivery
    assert [int(line[:4]) for line in lines] == sorted(int(line[:4]) for line in lines)  # in order


def test_a_client_that_reads_nothing_until_the_drain_ends_is_told_how_many_lines_it_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines still waiting when `LOG_DRAIN_WAIT` runs out are told as one "N log lines dropped"
    line (they were once dropped silently). The client here reads nothing until the server
    has given up draining (it logs so), then reads: a marker line comes before the result."""
    from agent_host.serve import agents

    monkeypatch.setattr(agents, "LOG_DRAIN_WAIT", 0.5)
    count = 100
    steps = script(*(log(f"{i:04d} " + "w" * 100) for i in range(count)))
    logged: list[str] = []
    config = parse_config(CONFIG, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config, ["probe"])

        async def main() -> Any:
            reading = anyio.Event()

            class GaveUp(logging.Handler):
                def emit(self, record: logging.LogRecord) -> None:  # on the loop: the drain was cut
                    if "were dropped" in record.getMessage():
                        reading.set()

            handler = GaveUp()
            served_log = logging.getLogger("agent_host.serve.agents")
            level = served_log.level
            served_log.setLevel(logging.INFO)
            served_log.addHandler(handler)

            async def on_log(params: Any) -> None:
                await reading.wait()
                logged.append(params.data)

            try:
                with anyio.fail_after(WAIT):
                    async with (
                        catalog.running(),
                        Client(build_server(catalog), logging_callback=on_log, log_level="debug") as client,
                    ):
                        return await client.call_tool("probe", {"input": steps})
            finally:
                served_log.removeHandler(handler)
                served_log.setLevel(level)

        result = anyio.run(main)
    assert result.is_error is False
    markers = [line for line in logged if line.startswith("[")]
    assert len(markers) == 1, logged
    assert markers[0].endswith(f"log lines dropped: the client did not read them within {0.5:g} s of the agent's end]")
    lines = [line for line in logged if not line.startswith("[")]
    assert len(lines) + int(markers[0].removeprefix("[").split()[0]) == count
