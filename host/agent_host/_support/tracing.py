"""Traces: agent-host's spans in OpenTelemetry, one trace with the MCP SDK's, exported when configured.

Only `opentelemetry-api` is used here, and only once something loaded it (the MCP SDK does, an
embedding application may, `configure` does when export is asked for): until then no span can
record, so none is made and nothing is imported (a run that touches no MCP tooling pays nothing).
`configure()` (each command calls it) installs the SDK with a batching OTLP/HTTP exporter when the
standard variables ask for one (`OTEL_TRACES_EXPORTER=otlp` or `console`, or an
`OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`) and the `otel` extra is installed (else it warns once).
Context crosses threads as contextvars do: a guest's thread runs in the context it was started from
(`runtime.guest.start_guest`) and the bridge gives each coroutine its caller's context, so the SDK's
client injects the trace into upstream `_meta`, and `headers()` into a provider's HTTP request.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from opentelemetry.trace import Span

logger = logging.getLogger(__name__)

for _name in ("opentelemetry.trace.propagation", "opentelemetry.trace.span"):
    # a client's malformed `traceparent` / `tracestate` is its own business: not a log line per request
    logging.getLogger(_name).setLevel(logging.ERROR)

TRACER_NAME: Final = "agent-host"
"""The instrumentation scope of every agent-host span (the SDK's is `mcp-python-sdk`)."""

EXPORTERS: Final = ("otlp", "console")
"""`OTEL_TRACES_EXPORTER` values that turn export on (`none`, or unset without an endpoint: off)."""

Started = tuple["Span | None", object]
"""A span of `start` (None: none was made) and the token that restores the context it replaced."""

NOT_STARTED: Final[Started] = (None, None)


def active() -> bool:
    """Whether a span could record: OpenTelemetry's API is loaded (see the module docstring)."""
    return "opentelemetry.trace" in sys.modules


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None) -> Iterator[Span | None]:
    """A span named `name`, current inside the block (None when none could record); an exception
    escaping it marks it an error (`error.type`: its class) and goes on."""
    current, token = start(name, attributes)
    try:
        yield current
    except BaseException as exc:
        failed(current, type(exc).__name__)
        raise
    finally:
        finish(current, token)


def failed(current: Span | None, error_type: str, message: str | None = None) -> None:
    """Mark `current` failed with `error_type` (an error code, or an exception's class name)."""
    if current is not None and current.is_recording():
        from opentelemetry.trace import Status, StatusCode

        current.set_attribute("error.type", error_type)
        current.set_status(Status(StatusCode.ERROR, message))


def start(name: str, attributes: Mapping[str, Any] | None = None, start_ns: int | None = None) -> Started:
    """A span made current until `finish(span, token)` (entered and left in two calls of one
    context: the audit's spans); `start_ns`: when it began (`time.time_ns`), if not now."""
    if not active():
        return NOT_STARTED
    from opentelemetry import context, trace

    current = trace.get_tracer(TRACER_NAME).start_span(name, attributes=dict(attributes or {}), start_time=start_ns)
    return current, context.attach(trace.set_span_in_context(current))


def finish(current: Span | None, token: object) -> None:
    """End a span of `start` and restore the context it replaced."""
    if current is None:
        return
    from opentelemetry import context

    try:
        context.detach(token)  # type: ignore[arg-type]
    finally:
        current.end()


def headers() -> dict[str, str]:
    """The W3C trace context of the current span as HTTP headers (`traceparent`, `tracestate`), for
    a request agent-host sends itself (a provider's); empty without one."""
    carrier: dict[str, str] = {}
    if active():
        from opentelemetry import propagate

        propagate.inject(carrier)
    return carrier


@contextlib.contextmanager
def attached(carrier: Mapping[str, str]) -> Iterator[None]:
    """A block in the trace context `carrier` holds (HTTP headers: `traceparent`), when it holds a
    valid one; otherwise in the current context."""
    if "traceparent" not in carrier:
        yield
        return
    from opentelemetry import context, propagate, trace

    extracted = propagate.extract({"traceparent": carrier["traceparent"], "tracestate": carrier.get("tracestate", "")})
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        yield
        return
    token = context.attach(extracted)
    try:
        yield
    finally:
        context.detach(token)


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the standard variables ask for traces to be exported (see the module docstring)."""
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter:
        return any(part.strip() in EXPORTERS for part in exporter.split(","))
    return bool(environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"))


_configured: list[Callable[[], None]] = []


def configure(environ: Mapping[str, str] | None = None) -> Callable[[], None]:
    """Export traces when `environ` (default: the process's) asks for it and the SDK is installed;
    idempotent. Returns what flushes and stops the exporter (nothing when off)."""
    if _configured:
        return _configured[0]
    env = os.environ if environ is None else environ
    shutdown: Callable[[], None] = _nothing
    if wanted(env):
        try:
            from agent_host._support import tracing_sdk
        except ImportError:
            logger.warning(
                "OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed: "
                "pip install 'agent-host[otel]' (no traces are exported)"
            )
        else:
            shutdown = tracing_sdk.install(env)
    _configured.append(shutdown)
    return shutdown


def _nothing() -> None:
    pass
