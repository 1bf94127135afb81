"""`agent-host serve`: the configured agents as tools of an MCP server, used by the SDK's client.

Each configured agent with a component is a tool; its answer is the guest's (as `structuredContent`
too when it is a JSON object), a failure an `isError` result with its code and message, and the
client's cancellation stops the guest. At most `max_concurrent` guests run and `queue` wait; tokens,
Host/Origin checks, the body bound and loopback by default guard the HTTP transport; the HTTP tool
API and SIGTERM's grace period. In-process tests use the SDK's in-memory transport
(`Client(server)`); the others run the real command as a child process, over stdio and streamable HTTP.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve import tool_api
from agent_host.serve.catalog import Catalog, build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support import cli_process
from tests.support.component import PROBE
from tests.support.probe_steps import call_blocking, get, log, loop, raise_, recv, script, sleep
from tests.support.processes import leaked
from tests.support.serve_configs import CONFIG
from tests.support.serving import INITIALIZE, JSON_HEADERS, HttpServe, RawStdio, sdk_stdio

pytestmark = pytest.mark.component


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Host, Catalog]]:
    config = parse_config(CONFIG, tmp_path / "agent-host.toml")
    with Host(config) as host:
        yield host, build_catalog(host, config)


def run(catalog: Catalog, body: Any) -> Any:
    async def main() -> Any:
        async with catalog.running(), Client(build_server(catalog)) as client:
            return await body(client)

    return anyio.run(main)


async def at_once(client: Client, count: int, wait_ms: str, pause: float = 0.0) -> list[Any]:
    """`count` calls of agent `idle` started together (`pause` seconds apart); their results."""
    answers: list[Any] = []

    async def one() -> None:
        answers.append(await client.call_tool("idle", {"input": wait_ms}))

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
            await anyio.sleep(pause)
    return answers


def test_every_agent_with_a_component_is_a_tool_taking_its_input(served: tuple[Host, Catalog]) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(served[1], body)}
    assert sorted(tools) == ["idle", "probe"]  # `lonely` has no component
    assert tools["idle"].description == "Waits N milliseconds in its inbox, then answers."
    assert tools["probe"].description is not None and "agent probe" in tools["probe"].description
    assert tools["idle"].input_schema["properties"]["input"]["type"] == "string"


def test_a_call_answers_with_the_guests_answer_structured_when_it_is_json(served: tuple[Host, Catalog]) -> None:
    steps = script(get("mock", as_="t"), call_blocking("t", "echo"))

    async def body(client: Client) -> Any:
        return await client.call_tool("idle", {}), await client.call_tool("probe", {"input": steps})

    idle, probe = run(served[1], body)
    assert (idle.is_error, idle.content[0].text, idle.structured_content) == (False, "idle done", None)
    assert probe.is_error is False, probe.content[0].text
    results = json.loads(probe.content[0].text)
    assert results[1]["ok"]["value"]["content"][0]["text"] == "hello"  # the guest called the mock through its grant
    assert probe.structured_content is None  # a JSON list, not an object


def test_failures_are_error_results_naming_what_went_wrong(served: tuple[Host, Catalog]) -> None:
    denied = script(get("nope", as_="t"))

    async def body(client: Client) -> Any:
        return (
            await client.call_tool("idle", {"input": "not a number"}),
            await client.call_tool("idle", {"input": 3}),
            await client.call_tool("idle", {"text": "x"}),
            await client.call_tool("nobody", {}),
            await client.call_tool("probe", {"input": denied}),
        )

    trapped, not_a_string, unexpected, unknown, probe = run(served[1], body)
    assert trapped.is_error and trapped.content[0].text.startswith("tool-failed: agent idle failed: ValueError")
    assert not_a_string.is_error and not_a_string.content[0].text.startswith("invalid-arguments: agent 'idle' takes")
    assert unexpected.is_error and "unexpected: text" in unexpected.content[0].text
    assert unknown.is_error
    assert unknown.content[0].text == "not-found: no tool 'nobody' is offered; offered: idle, probe"
    assert probe.is_error is False  # the probe reports the refused `get` in its own answer
    assert json.loads(probe.content[0].text)[0]["err"]["code"] == "not-found"


def no_agents_left(host: Host, within: float = 60.0) -> bool:
    """Whether `host` runs no guest within `within` seconds."""
    deadline = time.monotonic() + within
    while host.running_agents and time.monotonic() < deadline:
        time.sleep(0.05)
    return host.running_agents == []


def test_the_clients_cancellation_stops_the_guest(served: tuple[Host, Catalog]) -> None:
    host, calls = served

    async def body(client: Client) -> Any:
        with anyio.move_on_after(1.0):
            await client.call_tool("idle", {"input": "600000"})  # ten minutes in its inbox
        return await client.call_tool("idle", {})

    after = run(calls, body)
    assert after.content[0].text == "idle done"
    assert no_agents_left(host)  # stopped, not left waiting out its ten minutes


def test_the_clients_cancellation_stops_a_sleeping_guest_and_frees_its_turn(served: tuple[Host, Catalog]) -> None:
    """A guest in `time.sleep` is stopped by the cancellation too (it does not sleep its hour out,
    holding a `max_concurrent` turn and its thread)."""
    host, calls = served
    hour = script(sleep(3_600_000))

    async def body(client: Client) -> Any:
        for _ in range(3):  # more cancelled sleepers than max_concurrent = 2
            with anyio.move_on_after(0.5):
                await client.call_tool("probe", {"input": hour})
        return await client.call_tool("idle", {})

    after = run(calls, body)
    assert after.content[0].text == "idle done"
    assert no_agents_left(host)


def test_at_most_max_concurrent_guests_run_at_once(
    served: tuple[Host, Catalog], monkeypatch: pytest.MonkeyPatch
) -> None:
    host, calls = served
    peak: list[int] = []
    start = host.start

    def counting(*args: Any, **kwargs: Any) -> Any:
        guest = start(*args, **kwargs)
        peak.append(len(host.running_agents))
        return guest

    monkeypatch.setattr(host, "start", counting)

    answers = run(calls, lambda client: at_once(client, 6, "300"))
    assert [a.content[0].text for a in answers] == ["idle done"] * 6
    assert len(peak) == 6 and max(peak) <= 2  # [serve] max_concurrent = 2


def test_serve_over_stdio_as_a_child_process_and_exit_when_the_client_leaves(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)

    async def main() -> Any:
        async with Client(sdk_stdio("--config", str(config), "--agent", "idle")) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            return names, await client.call_tool("idle", {"input": "10"})

    names, answer = anyio.run(main)
    assert names == ["idle"]
    assert answer.content[0].text == "idle done"
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


def test_serve_names_an_agent_it_cannot_serve(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    done = cli_process.run(
        "serve", "--stdio", "--config", str(config), "--agent", "lonely", timeout=120, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert "agent 'lonely' cannot be served: its [agents] table has no `component`" in done.stderr
    assert "agents that can be served (an [agents.NAME] table with a `component` or `code`): idle, probe" in done.stderr
    assert done.stdout == ""


def test_sigterm_with_a_call_in_flight_stops_its_guest_and_exits_143(tmp_path: Path) -> None:
    """SIGTERM ends the server with its guests stopped and no process left."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    server = RawStdio(config, "--agent", "probe")
    assert server.ask(INITIALIZE)["id"] == 1
    server.send({"method": "notifications/initialized"})
    steps = script(log("waiting in the inbox"), recv(600000))
    server.send(
        {
            "id": 2,
            "method": "tools/call",
            "params": {"name": "probe", "arguments": {"input": steps}},
        }
    )
    server.until("waiting in the inbox")  # the guest's log line, sent to the client
    stderr = server.end(terminate=True)
    assert server.process.returncode == 143, stderr
    assert "stopped: SIGTERM received" in stderr
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


def test_serve_over_streamable_http_to_the_sdk_client_and_stop_on_sigterm(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    served = HttpServe(config, "--agent", "idle")
    try:

        async def main() -> Any:
            async with Client(served.url) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                return names, await client.call_tool("idle", {"input": "10"})

        names, answer = anyio.run(main)
        assert names == ["idle"] and answer.content[0].text == "idle done"
        assert httpx2.get(f"{served.base}/healthz").json() == {"status": "ok"}
        foreign_host = httpx2.post(served.url, json=INITIALIZE, headers={**JSON_HEADERS, "host": "evil.example"})
        assert foreign_host.status_code == 421  # DNS rebinding: a name that is not this machine's
        foreign_origin = httpx2.post(
            served.url, json=INITIALIZE, headers={**JSON_HEADERS, "origin": "http://evil.example"}
        )
        assert foreign_origin.status_code == 403
        too_big = httpx2.post(served.url, content=b"[" + b"1," * 600_000 + b"1]", headers=JSON_HEADERS)
        assert too_big.status_code == 413  # [serve] max_body: 1 MiB by default
    finally:
        code = served.stop()
    assert code == 143
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


def test_with_tokens_every_request_but_healthz_needs_one(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG + 'tokens = ["${SERVE_TOKEN}"]\n')
    served = HttpServe(config, "--agent", "idle", env={"SERVE_TOKEN": "s3cret-token"})
    try:
        missing = httpx2.post(served.url, json=INITIALIZE, headers=JSON_HEADERS)
        wrong = httpx2.post(served.url, json=INITIALIZE, headers={**JSON_HEADERS, "authorization": "Bearer nope"})
        right = httpx2.post(
            served.url, json=INITIALIZE, headers={**JSON_HEADERS, "authorization": "Bearer s3cret-token"}
        )
        health = httpx2.get(f"{served.base}/healthz")
    finally:
        served.stop()
    assert (missing.status_code, wrong.status_code, right.status_code, health.status_code) == (401, 401, 200, 200)
    assert missing.json()["error"]["code"] == "denied" and missing.headers["www-authenticate"] == "Bearer"


def test_a_bind_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    done = cli_process.run("serve", "--http", "0.0.0.0:0", "--config", str(config), timeout=120)
    assert done.returncode == 2
    assert "--http 0.0.0.0:0: binding 0.0.0.0 (beyond this machine) needs a token" in done.stderr


def test_the_http_tool_api_lists_and_runs_the_agents_with_a_status_per_error_code(tmp_path: Path) -> None:
    """GET /tools/list, POST /tools/{name}, /openapi.json; errors {error: {code, message}}."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG + 'tokens = ["${SERVE_TOKEN}"]\n')
    served = HttpServe(config, env={"SERVE_TOKEN": "tok"})
    auth = {"authorization": "Bearer tok"}
    try:
        listing = httpx2.get(f"{served.base}/tools/list", headers=auth)
        ok = httpx2.post(f"{served.base}/tools/idle", json={"input": "5"}, headers=auth)
        steps = script(get("mock", as_="t"))
        as_json = httpx2.post(f"{served.base}/tools/probe", json={"input": steps}, headers=auth)
        invalid = httpx2.post(f"{served.base}/tools/idle", json={"input": 5}, headers=auth)
        not_object = httpx2.post(f"{served.base}/tools/idle", json=["x"], headers=auth)
        unknown = httpx2.post(f"{served.base}/tools/nobody", json={}, headers=auth)
        failed = httpx2.post(f"{served.base}/tools/idle", json={"input": "abc"}, headers=auth)
        too_big = httpx2.post(f"{served.base}/tools/idle", json={"input": "x" * 1_200_000}, headers=auth)
        no_token = httpx2.post(f"{served.base}/tools/idle", json={"input": ""})
        foreign = httpx2.get(f"{served.base}/tools/list", headers={**auth, "host": "evil.example"})
        not_json = httpx2.post(
            f"{served.base}/tools/idle", content=b"x", headers={**auth, "content-type": "text/plain"}
        )
        openapi = httpx2.get(f"{served.base}/openapi.json", headers=auth)
    finally:
        served.stop()
    assert listing.status_code == 200
    tools = {tool["name"]: tool for tool in listing.json()["tools"]}
    assert sorted(tools) == ["idle", "probe"]
    assert tools["idle"]["parameters"]["properties"]["input"]["type"] == "string" and tools["idle"]["builtin"] is False
    assert (ok.status_code, ok.json()) == (200, {"result": "idle done"})
    assert as_json.status_code == 200 and as_json.json()["result"][0] == {"ok": True}  # JSON answers as JSON
    assert (invalid.status_code, invalid.json()["error"]["code"]) == (400, "invalid-arguments")
    assert (not_object.status_code, not_object.json()["error"]["code"]) == (400, "invalid-arguments")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "not-found")
    assert (failed.status_code, failed.json()["error"]["code"]) == (500, "tool-failed")
    assert "agent idle failed: ValueError" in failed.json()["error"]["message"]
    assert (too_big.status_code, too_big.json()["error"]["code"]) == (413, "limit-exceeded")
    assert (no_token.status_code, foreign.status_code) == (401, 421)
    assert foreign.json()["error"] == {
        "code": "denied",
        "message": "this server does not answer to Host 'evil.example' (DNS-rebinding protection): "
        "add it to [serve] allowed_hosts",
    }
    assert (not_json.status_code, not_json.json()["error"]["code"]) == (400, "invalid-arguments")
    assert openapi.status_code == 200 and set(openapi.json()["paths"]) == {"/tools/list", "/tools/idle", "/tools/probe"}
    assert served.banner == [  # the banner, after its URL line
        "agent-host: offering agents idle, probe",
        f"agent-host: HTTP tool API: GET {served.base}/tools/list, POST {served.base}/tools/NAME; "
        f"OpenAPI: {served.base}/openapi.json",
    ], served.banner


def test_calls_beyond_max_concurrent_and_the_queue_are_refused_at_once(tmp_path: Path) -> None:
    """At most `max_concurrent` run, at most `queue` wait; the rest get `limit-exceeded` (429 over HTTP)."""
    config = parse_config(CONFIG.replace("max_concurrent = 2", "max_concurrent = 1\nqueue = 1"), tmp_path / "a.toml")
    with Host(config) as host:
        calls = build_catalog(host, config, ["idle"])

        # 0.2 s apart, in this order: one runs, one waits, one finds the queue full
        answers = run(calls, lambda client: at_once(client, 3, "1500", pause=0.2))
    texts = sorted(answer.content[0].text for answer in answers)
    assert texts[:2] == ["idle done", "idle done"]
    assert texts[2].startswith("limit-exceeded: busy: 1 calls run and 1 wait")
    assert [answer.is_error for answer in answers].count(True) == 1


def test_fifty_concurrent_calls_over_http_all_answer(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG.replace("max_concurrent = 2", "max_concurrent = 8"))
    served = HttpServe(config, "--agent", "idle")
    try:

        async def main() -> list[Any]:
            async with Client(served.url) as client:
                return await at_once(client, 50, "3")

        answers = anyio.run(main)
    finally:
        served.stop()
    assert [answer.content[0].text for answer in answers] == ["idle done"] * 50


def test_a_2025_era_client_lists_and_calls_over_stdio(tmp_path: Path) -> None:
    """Both protocol eras: the SDK client above negotiates the newest; this one speaks 2025-06-18."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    server = RawStdio(config)
    initialized = server.ask(INITIALIZE)
    server.send({"method": "notifications/initialized"})
    listed = server.ask({"id": 2, "method": "tools/list"})
    called = server.ask({"id": 3, "method": "tools/call", "params": {"name": "idle", "arguments": {"input": ""}}})
    stderr = server.end(terminate=False)
    assert server.process.returncode == 0, stderr
    assert initialized["result"]["protocolVersion"] == "2025-06-18"
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["idle"]
    assert called["result"]["content"][0]["text"] == "idle done" and called["result"]["isError"] is False


def test_an_agent_with_an_input_schema_takes_that_object_checked_and_runs_with_its_json(tmp_path: Path) -> None:
    """An agent that declares an input schema takes a JSON object checked against it."""
    schema = (
        'input_schema = { type = "object", properties = { steps = { type = "array" } }, required = ["steps"], '
        "additionalProperties = false }\n"
    )
    text = CONFIG.replace('[agents.probe]\ncomponent = "', "[agents.probe]\n" + schema + 'component = "')
    config = parse_config(text, tmp_path / "agent-host.toml")
    with Host(config) as host:
        calls = build_catalog(host, config, ["probe"])

        async def body(client: Client) -> Any:
            tools = (await client.list_tools()).tools
            ran = await client.call_tool("probe", {"steps": [get("mock", as_="t")]})
            refused = await client.call_tool("probe", {"steps": "not a list"})
            return tools, ran, refused

        tools, ran, refused = run(calls, body)
    assert tools[0].input_schema["required"] == ["steps"]
    assert ran.is_error is False and json.loads(ran.content[0].text) == [{"ok": True}]
    assert refused.is_error
    assert refused.content[0].text == (
        "invalid-arguments: the arguments of agent 'probe' do not match its input schema: at $.steps: "
        "'not a list' is not of type 'array' (rule: type)"
    )


@pytest.mark.parametrize(("wait_ms", "finished"), [("1500", True), ("600000", False)])
def test_sigterm_gives_http_calls_in_flight_the_grace_period_then_cancels_them(
    tmp_path: Path, wait_ms: str, finished: bool
) -> None:
    """Stop accepting, let calls in flight finish within `[serve] grace`, cancel the rest, exit 143."""
    config = tmp_path / "agent-host.toml"
    audit = tmp_path / "audit.jsonl"
    config.write_text(CONFIG.replace("[serve]", f'[host]\naudit_log = "{audit}"\n[serve]') + "grace = 3\n")
    served = HttpServe(config, "--agent", "probe")
    answer: list[httpx2.Response | BaseException] = []
    steps = script(get("mock", as_="t"), call_blocking("t", "echo", "{}"), sleep(int(wait_ms)))

    def call() -> None:
        try:
            answer.append(httpx2.post(f"{served.base}/tools/probe", json={"input": steps}, timeout=120))
        except httpx2.HTTPError as exc:
            answer.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 60
    while '"echo"' not in (audit.read_text() if audit.exists() else ""):  # the call is in its sleep now
        assert time.monotonic() < deadline and caller.is_alive(), answer
        time.sleep(0.05)
    code = served.stop()
    caller.join(60)
    assert code == 143
    response = answer[0]
    if finished:
        assert isinstance(response, httpx2.Response) and response.json()["result"][2] == {"ok": True}, response
    else:  # cancelled at the end of the grace period: its guest stopped, not left waiting ten minutes
        assert isinstance(response, httpx2.Response) and response.status_code == 503, response
        assert response.json()["error"]["code"] == "cancelled"
    left = leaked()
    assert not left, f"the server left processes behind: {left}"


def test_the_guests_log_lines_reach_the_client_as_log_notifications_and_progress(
    served: tuple[Host, Catalog],
) -> None:
    """Guest log lines become MCP log notifications and progress reports while it runs."""
    steps = script(log("step one", level="info"), log("step two", level="warn"))
    logged: list[tuple[str, str | None, Any]] = []
    reports: list[tuple[float, str | None]] = []

    async def on_log(params: Any) -> None:
        logged.append((params.level, params.logger, params.data))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async def main() -> Any:
        async with Client(build_server(served[1]), logging_callback=on_log, log_level="debug") as client:
            return await client.call_tool("probe", {"input": steps}, progress_callback=on_progress)

    result = anyio.run(main)
    assert result.is_error is False
    assert logged == [
        ("info", "agent-host.agent.probe", "step one"),
        ("warning", "agent-host.agent.probe", "step two"),
    ]
    assert reports == [(1, "step one"), (2, "step two")]


def test_an_agent_past_its_time_limit_answers_timeout(tmp_path: Path) -> None:
    """504 (timeout): an agent stopped by its wall-clock limit, as the run's guard tells it."""
    text = CONFIG.replace("[serve]\n", f'[agents.spinner]\ncomponent = "{PROBE}"\ntimeout = 1\n\n[serve]\n')
    config = parse_config(text, tmp_path / "agent-host.toml")
    with Host(config) as host:
        catalog = build_catalog(host, config, ["spinner"])
        spin = script(loop())
        answer = anyio.run(catalog.call, "spinner", {"input": spin})
        raised = anyio.run(catalog.call, "spinner", {"input": script(raise_("x"))})
    assert answer.code == "timeout" and "time limit: run did not finish within 1 s" in answer.text
    assert tool_api.STATUS[answer.code] == 504
    assert raised.code == "tool-failed"  # a trap of its own is the agent's failure
