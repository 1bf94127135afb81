"""The OpenTelemetry SDK, installed when traces are exported (`tracing.configure`): the `otel` extra.

Imported only by `tracing.configure`, only when the standard variables ask for export: the host's
import path never loads the SDK. Exporters by `OTEL_TRACES_EXPORTER` (`otlp`: OTLP over HTTP, which
reads its own `OTEL_EXPORTER_OTLP_*` variables; `console`: the SDK's, to stderr), behind a batching
processor, with the resource the SDK reads from `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`
(default service name `agent-host`); attribute values are cut at `MAX_ATTRIBUTE` characters unless
`OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT` says otherwise.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from typing import Final

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

logger = logging.getLogger(__name__)

MAX_ATTRIBUTE: Final = 1024
"""Characters of an attribute value kept (the SDK's spans too), unless OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT says."""


def install(environ: Mapping[str, str]) -> Callable[[], None]:
    """Install a tracer provider exporting as `environ` says; what flushes and shuts it down."""
    names = [part.strip().lower() for part in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
    unknown = [name for name in names if name not in ("otlp", "console", "none", "")]
    if unknown:
        logger.warning("OTEL_TRACES_EXPORTER: %s not supported (otlp, console); ignored", ", ".join(unknown))
    exporters: list[SpanExporter] = []
    if "otlp" in names:
        exporters.append(OTLPSpanExporter())
    if "console" in names:
        exporters.append(ConsoleSpanExporter(out=sys.stderr))
    resource = Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, as the SDK reads them
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "agent-host"}))
    limits = SpanLimits(max_attribute_length=int(environ.get("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", MAX_ATTRIBUTE)))
    provider = TracerProvider(resource=resource, span_limits=limits)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider.shutdown
