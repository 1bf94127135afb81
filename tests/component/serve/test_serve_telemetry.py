"""Traces and metrics of `agent-host serve`: one trace from a client's request through the guest to
the upstream MCP server, spans read with the OpenTelemetry SDK's in-memory exporter; `GET /metrics`
in Prometheus text behind the tokens; export configured by the standard `OTEL_*` variables.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import anyio
import httpx2
import pytest
from mcp import Client
from mcp_types import RequestParamsMeta
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_host import Host
from agent_host.config import parse_config
from agent_host.serve.catalog import build_catalog
from agent_host.serve.mcp_server import build_server
from tests.support import cli_process
from tests.support.component import REPO
from tests.support.serving import INITIALIZE, JSON_HEADERS, HttpServe

pytestmark = [pytest.mark.component, pytest.mark.timeout(180)]

TRACED = f'[tooling.traced]\ncommand = "{sys.executable}"\nargs = ["-m", "tests.servers.traced"]\n'
CONFIG = TRACED + '[agents.py]\ncode = "python"\ntoolings = ["traced"]\n'
SNIPPET = "from toolings import traced\ntraced.traceparent()"
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


class _Collected(SpanProcessor):
    """Spans ended while a test collects them (the provider is the process's, set once)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.on = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            self.exporter.export([span])


_PROCESSOR = _Collected()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(_PROCESSOR)
        trace.set_tracer_provider(provider)
    _PROCESSOR.exporter.clear()
    _PROCESSOR.on = True
    try:
        yield _PROCESSOR.exporter
    finally:
        _PROCESSOR.on = False
        _PROCESSOR.exporter.clear()


def _served(path: Path, body: Any) -> Any:
    config = parse_config(path.read_text(), path)

    async def main() -> Any:
        with Host(config) as host:
            catalog = build_catalog(host, host.config)
            async with catalog.running(), Client(build_server(catalog)) as client:
                return await body(client)

    return anyio.run(main)


def test_a_clients_trace_goes_through_the_guest_to_the_upstream_server(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    path = tmp_path / "agent-host.toml"
    path.write_text(CONFIG)

    async def body(client: Client) -> Any:
        return await client.call_tool("py", {"code": SNIPPET}, meta=cast(RequestParamsMeta, {"traceparent": PARENT}))

    called = _served(path, body)
    seen = called.structured_content["result"]["result"]
    assert seen.split("-")[1] == TRACE_ID  # the upstream server got the client's trace
    in_trace = {s.name: s for s in spans.get_finished_spans() if format(s.context.trace_id, "032x") == TRACE_ID}
    for name in ("tools/call py", "serve py", "invoke_agent py", "get traced", "execute_tool traceparent",
                 "MCP send tools/call traceparent"):  # fmt: skip
        assert name in in_trace, sorted(in_trace)
    run, call = in_trace["invoke_agent py"], in_trace["execute_tool traceparent"]
    assert call.parent is not None and call.parent.span_id == run.context.span_id
    assert call.attributes is not None and call.attributes["gen_ai.tool.name"] == "traceparent"
    assert call.attributes["mcp.method.name"] == "tools/call"
    upstream = in_trace["MCP send tools/call traceparent"]
    assert upstream.parent is not None and upstream.parent.span_id == call.context.span_id
    assert seen.split("-")[2] == format(upstream.context.span_id, "016x")  # its parent is that request's span


def test_a_failed_call_marks_its_spans_with_the_error_code(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    path = tmp_path / "agent-host.toml"
    path.write_text(CONFIG)

    async def body(client: Client) -> Any:
        return await client.call_tool("py", {"code": "from toolings import traced\ntraced.nope()"})

    assert _served(path, body).is_error
    named = {s.name: s for s in spans.get_finished_spans()}
    assert named["execute_tool nope"].attributes["error.type"] == "not-found"  # type: ignore[index]
    assert named["invoke_agent py"].attributes["error.type"] == "error"  # type: ignore[index]
    assert named["serve py"].attributes["error.type"] == "tool-failed"  # type: ignore[index]


def test_the_http_tool_apis_traceparent_header_continues_the_clients_trace(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    from agent_host.config import ServeSettings
    from agent_host.serve.http import build_app

    path = tmp_path / "agent-host.toml"
    path.write_text(CONFIG)

    async def main() -> Any:
        with Host(parse_config(CONFIG, path)) as host:
            catalog = build_catalog(host, host.config)
            app = build_app(build_server(catalog), catalog, ServeSettings(), "127.0.0.1")
            async with catalog.running():
                transport = httpx2.ASGITransport(app=app)
                async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                    return await http.post("/tools/py", json={"code": SNIPPET}, headers={"traceparent": PARENT})

    answered = anyio.run(main)
    assert answered.status_code == 200, answered.text
    assert answered.json()["result"]["result"]["result"].split("-")[1] == TRACE_ID
    traced = [s.name for s in spans.get_finished_spans() if format(s.context.trace_id, "032x") == TRACE_ID]
    assert "serve py" in traced and "invoke_agent py" in traced


def test_metrics_count_calls_by_tool_and_outcome_behind_the_tokens(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG + '[serve]\ntokens = ["sekrit"]\nready_instances = 1\n')
    served = HttpServe(config)
    try:
        auth = {"authorization": "Bearer sekrit"}
        assert httpx2.get(f"{served.base}/metrics").status_code == 401
        for code in (SNIPPET, "raise ValueError"):
            httpx2.post(f"{served.base}/tools/py", json={"code": code}, headers=auth, timeout=60)
        httpx2.post(f"{served.base}/tools/{'x' * 50}", json={}, headers=auth)
        scraped = httpx2.get(f"{served.base}/metrics", headers=auth)
    finally:
        served.stop()
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    text = scraped.text
    assert 'agent_host_served_calls_total{outcome="ok",tool="py"} 1.0' in text
    assert 'agent_host_served_calls_total{outcome="tool-failed",tool="py"} 1.0' in text
    assert 'agent_host_served_calls_total{outcome="not-found",tool="(unknown)"} 1.0' in text  # refused by the API
    assert 'agent_host_served_call_duration_seconds_count{tool="py"} 2.0' in text
    assert "agent_host_calls_running 0.0" in text and "agent_host_max_concurrent 8.0" in text
    assert 'agent_host_ready_instances{agent="py"} 1.0' in text


def test_run_exports_its_own_trace_when_the_otel_variables_ask(tmp_path: Path) -> None:
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "tested"}
    done = cli_process.run("run", "--config", str(config), "--agent", "py", "--input", SNIPPET, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["result"].startswith("00-")
    assert '"name": "invoke_agent py"' in done.stderr and '"service.name": "tested"' in done.stderr
    quiet = cli_process.run("run", "--config", str(config), "--agent", "py", "--input", SNIPPET, cwd=REPO)
    assert '"name": "invoke_agent py"' not in quiet.stderr  # off by default
    attrs = {"OTEL_TRACES_EXPORTER": "console", "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attributes"}
    named = cli_process.run("run", "--config", str(config), "--agent", "py", "--input", "1", cwd=REPO, env=attrs)
    assert '"service.name": "from-attributes"' in named.stderr


def test_span_names_hold_no_unbounded_text_and_a_started_call_is_one_span(
    spans: InMemorySpanExporter, tmp_path: Path
) -> None:
    path = tmp_path / "agent-host.toml"
    path.write_text(CONFIG)
    code = (
        "from agentlib import tooling, ToolingError\nfrom toolings import traced, gather\n"
        "try:\n    tooling('traced').call('Z' * 5000 + '\\x1b[2J', {})\nexcept ToolingError:\n    pass\n"
        "gather(traced.traceparent.start())"
    )

    async def body(client: Client) -> Any:
        await client.call_tool("py", {"code": code})
        return await client.call_tool("not offered " + "y" * 5000, {})

    _served(path, body)
    ours = [
        s.name
        for s in spans.get_finished_spans()
        if s.instrumentation_scope and s.instrumentation_scope.name == "agent-host"
    ]
    names = [s.name for s in spans.get_finished_spans()]
    assert all(len(name) < 200 and "\x1b" not in name for name in ours), [n[:80] for n in ours if len(n) >= 200]
    assert names.count("execute_tool traceparent") == 1
    assert "serve (unknown)" in names


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_carries_the_trace_to_the_model_providers_server(
    spans: InMemorySpanExporter, kind: str, stream: bool
) -> None:
    from agent_host.model import ChatMessage, ChatRequest
    from agent_host.providers import ProviderSet
    from tests.servers import anthropic_wire, openai_wire
    from tests.support.model_servers import requests, running
    from tests.support.provider_configs import network, providers

    build = openai_wire.build if kind == "openai" else anthropic_wire.build
    request = ChatRequest(messages=(ChatMessage("user", "hello"),))
    with running(build) as url:
        base = f"{url}/v1" if kind == "openai" else url

        async def chat() -> tuple[str, list[dict[str, Any]]]:
            made = ProviderSet(providers(network(kind, base, model="gpt-4.1")))
            try:
                with trace.get_tracer("test").start_as_current_span("the caller") as caller:
                    provider = made.get("llm")
                    if stream:
                        async for _ in provider.stream(request, model="gpt-4.1", max_tokens=16):
                            pass
                    else:
                        await provider.chat(request, model="gpt-4.1", max_tokens=16)
                    trace_id = format(caller.get_span_context().trace_id, "032x")
            finally:
                await made.aclose()
            return trace_id, await requests(url)

        trace_id, received = anyio.run(chat)
    assert received[-1]["headers"]["traceparent"].split("-")[1] == trace_id


def test_a_traceparent_header_on_an_mcp_request_continues_the_clients_trace(tmp_path: Path) -> None:
    """An HTTP client instrumented by OpenTelemetry sends the W3C header, not `_meta`: the upstream
    server sees its trace all the same (raw requests: this process's SDK client would add `_meta`)."""
    config = tmp_path / "agent-host.toml"
    config.write_text(CONFIG)
    served = HttpServe(config)
    try:
        with httpx2.Client(headers={**JSON_HEADERS, "traceparent": PARENT}, timeout=60) as http:
            opened = http.post(served.url, json=INITIALIZE)
            session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
            http.post(served.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            request = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "py", "arguments": {"code": SNIPPET}}}  # fmt: skip
            called = http.post(served.url, json=request, headers=session)
    finally:
        served.stop()
    answers = [json.loads(line[6:]) for line in called.text.splitlines() if line.startswith("data: ")]
    result = next(answer["result"] for answer in answers if answer.get("id") == 2)
    assert result["structuredContent"]["result"]["result"].split("-")[1] == TRACE_ID
