"""`GET /metrics` of `agent-host serve`: its calls, turns and instances in Prometheus text.

Per served tool (an offered agent or `TOOLING.TOOL`; an unknown name counts as `(unknown)`, so a
client cannot grow the label set) and outcome (`ok` or the error code): calls, and a latency
histogram. Read at scrape time: calls running and waiting for a turn, the `[serve]` bounds, instances
made ahead ready per agent. Beside them the process's own (`_support.metering`: model tokens by
agent, provider and kind). The endpoint sits behind `[serve] tokens` like every path but `/healthz`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Final

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from agent_host._support import metering

disable_created_metrics()  # type: ignore[no-untyped-call]  # no `_created` series beside each counter: a scraper has the process's start

UNKNOWN: Final = "(unknown)"
"""The tool label of a call of a name nothing offers."""

BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
"""Seconds: a served call takes from milliseconds (a proxied tool) to minutes (an agent)."""

CONTENT_TYPE: Final = CONTENT_TYPE_LATEST


class _Gauges(Collector):
    """Gauges read when scraped."""

    def __init__(self, read: Callable[[], Mapping[str, float]], ready: Callable[[], Mapping[str, int]]) -> None:
        self._read = read
        self._ready = ready

    def collect(self) -> Iterator[GaugeMetricFamily]:
        values = self._read()
        for name, text in (
            ("agent_host_calls_running", "Served calls running now (turns taken)."),
            ("agent_host_calls_waiting", "Served calls waiting for a turn now."),
            ("agent_host_max_concurrent", "[serve] max_concurrent: calls that run at once."),
            ("agent_host_queue", "[serve] queue: calls that may wait for a turn."),
        ):
            yield GaugeMetricFamily(name, text, value=values[name])
        ready = GaugeMetricFamily(
            "agent_host_ready_instances", "Instances of an offered agent made ahead, ready now.", labels=["agent"]
        )
        for agent, count in sorted(self._ready().items()):
            ready.add_metric([agent], count)
        yield ready


class _Tokens(Collector):
    """The process's model tokens (`_support.metering`), read when scraped."""

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "agent_host_model_tokens",
            "Model tokens used by guests' chats, as the providers reported them.",
            labels=["agent", "provider", "kind"],
        )
        for (agent, provider, kind), count in sorted(metering.token_counts().items()):
            family.add_metric([agent, provider, kind], count)
        yield family


class ServeMetrics:
    """One server's metrics (see the module docstring)."""

    def __init__(
        self,
        known: Callable[[str], bool],
        read: Callable[[], Mapping[str, float]],
        ready: Callable[[], Mapping[str, int]],
    ) -> None:
        """`known(name)`: whether a tool name is offered; `read()`: the turn gauges by name;
        `ready()`: instances made ahead ready, by agent."""
        self._known = known
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter(
            "agent_host_served_calls", "Calls of served tools, by tool and outcome.", ["tool", "outcome"],
            registry=self.registry,
        )  # fmt: skip
        self._latency = Histogram(
            "agent_host_served_call_duration_seconds", "Seconds a served call took, by tool.", ["tool"],
            buckets=BUCKETS, registry=self.registry,
        )  # fmt: skip
        self.registry.register(_Gauges(read, ready))
        self.registry.register(_Tokens())

    def observe(self, tool: str, outcome: str, seconds: float) -> None:
        """Count one finished call."""
        label = tool if self._known(tool) else UNKNOWN
        self._calls.labels(label, outcome).inc()
        self._latency.labels(label).observe(seconds)

    def render(self) -> bytes:
        """The Prometheus text of this server's metrics and the process's."""
        return generate_latest(self.registry)
