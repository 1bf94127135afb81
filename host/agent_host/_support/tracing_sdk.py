"""The OpenTelemetry SDK, installed when traces are exported (`tracing.configure`): the `otel` extra.

Imported only by `tracing.configure`, only when the standard variables ask for export: the host's
import path never loads the SDK. Exporters by `OTEL_TRACES_EXPORTER` (`otlp`: OTLP over HTTP, which
reads its own `OTEL_EXPORTER_OTLP_*` variables; `console`: the SDK's, to stderr), behind a batching
processor, with the resource the SDK reads from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`
(default service name `agent-host`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter


def install(environ: Mapping[str, str]) -> Callable[[], None]:
    """Install a tracer provider exporting as `environ` says; what flushes and shuts it down."""
    names = [part.strip().lower() for part in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    exporters: list[SpanExporter] = []
    if "otlp" in names:
        exporters.append(OTLPSpanExporter())
    if "console" in names:
        exporters.append(ConsoleSpanExporter(out=sys.stderr))
    service = {SERVICE_NAME: environ.get("OTEL_SERVICE_NAME", "agent-host")}
    provider = TracerProvider(resource=Resource.create(service))
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider.shutdown
