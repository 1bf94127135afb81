"""Traces: export is asked for by the standard variables only; a trace context is taken from a
valid `traceparent` only; a chat's usage is counted by agent, provider and kind."""

from __future__ import annotations

import subprocess
import sys

import pytest
from opentelemetry import trace

from agent_host._support import metering, tracing
from agent_host.model import Operation
from agent_host.session.audit import AuditTrail


def test_export_is_off_unless_the_standard_variables_ask_for_it() -> None:
    assert not tracing.wanted({})
    assert not tracing.wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert tracing.wanted({"OTEL_TRACES_EXPORTER": "otlp"})
    assert tracing.wanted({"OTEL_TRACES_EXPORTER": "none,console"})
    assert tracing.wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"})


def test_only_a_valid_traceparent_is_continued() -> None:
    before = trace.get_current_span().get_span_context()
    for carrier in ({}, {"traceparent": "garbage"}, {"traceparent": "00-" + "0" * 32 + "-" + "0" * 16 + "-01"}):
        with tracing.attached(carrier):
            assert trace.get_current_span().get_span_context() == before
    valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with tracing.attached({"traceparent": valid}):
        assert format(trace.get_current_span().get_span_context().trace_id, "032x") == valid[3:35]


def test_a_chats_usage_is_counted_by_agent_provider_and_kind() -> None:
    def count(kind: str) -> int:
        return metering.token_counts().get(("counted", "llm", kind), 0)

    before = count("input"), count("output")
    with AuditTrail("counted", None).span(Operation.CHAT, "llm") as span:
        span.details.update(provider="llm", model="m", input_tokens=12, output_tokens=3)
    assert (count("input"), count("output")) == (before[0] + 12, before[1] + 3)


def test_serve_renders_the_process_token_counts_as_prometheus_text() -> None:
    from agent_host.serve.metrics import ServeMetrics

    metering.tokens("rendered", "llm", 5, 0)
    gauges = {"agent_host_calls_running": 0, "agent_host_calls_waiting": 0, "agent_host_max_concurrent": 8,
              "agent_host_queue": 64}  # fmt: skip
    text = ServeMetrics(lambda name: False, lambda: gauges, dict).render().decode()
    assert 'agent_host_model_tokens_total{agent="rendered",kind="input",provider="llm"} 5.0' in text


@pytest.mark.real_processes  # its subject: a process of its own
def test_a_host_loads_neither_opentelemetry_nor_prometheus_until_something_asks() -> None:
    """A `run` that touches no MCP tooling pays for neither (~0.1 s to import prometheus-client)."""
    code = (
        "import sys, agent_host.app.host, agent_host.session\n"
        "print(sorted(m for m in ('opentelemetry', 'prometheus_client') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_runs_span_ends_whatever_form_its_status_has() -> None:
    """Found by the suite: a replayed trap's status came as the plain string "trap", and ending a
    recording run span on it raised (an internal host error instead of the run's outcome)."""
    from opentelemetry.sdk.trace import TracerProvider

    from agent_host.model import RunStatus
    from agent_host.runtime.guest import _traced_end

    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())  # recording spans, exported nowhere
    for status in (RunStatus.TRAP, "trap", RunStatus.OK):
        started = tracing.start("invoke_agent t")
        assert started[0] is not None and started[0].is_recording()
        _traced_end(started, status, None, None)  # type: ignore[arg-type]
