"""`make bench`, telemetry: what traces cost a guest's run, off (the default) and on.

The probe guest making one `tooling.get` and one blocking call of a mock tool, through `Host.run`,
each mode in a process of its own: OpenTelemetry not loaded (a host that touches no MCP tooling),
its API loaded with no SDK (what `serve` and any MCP tooling load: traces off, the default), and the
SDK recording every span into an in-memory exporter (traces on, the exporter's network left out).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Final

from tests.bench.__main__ import Target
from tests.bench.record import Run, Table, record

RUNS: Final = 300
ROUNDS: Final = 7

SCRIPT: Final = """
import json, statistics, sys, time
from pathlib import Path
mode = sys.argv[1]
if mode != "unloaded":
    import opentelemetry.trace
if mode == "on":
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
from agent_host import Host
from agent_host.config import parse_config
from agent_host.components.build import build_guest
from tests.support.component import PROBE
wasm = build_guest(PROBE)
config = parse_config(
    '[tooling.m]\\nkind = "mock"\\n[[tooling.m.tools]]\\nname = "echo"\\nresults = [{ text = "hi" }]\\n'
    'repeat_last = true\\n[agents.p]\\ntoolings = ["m"]\\n', Path.cwd() / "bench.toml")
steps = json.dumps({"steps": [{"op": "get", "tooling": "m", "as": "t"},
                              {"op": "call_blocking", "h": "t", "tool": "echo", "args": "{}"}]})
with Host(config) as host:
    policy = host.agent_policy("p")
    for _ in range(30):
        host.run(wasm, steps, agent="p", policy=policy)
    times = []
    for _ in range(int(sys.argv[2])):
        started = time.perf_counter()
        outcome = host.run(wasm, steps, agent="p", policy=policy)
        times.append(time.perf_counter() - started)
        assert outcome.status == "ok", outcome
    assert ("opentelemetry.trace" in sys.modules) == (mode != "unloaded")
    if mode == "on":
        assert any(span.name == "invoke_agent p" for span in exporter.get_finished_spans())
print(statistics.median(times) * 1e3)
"""
MODES: Final = ("unloaded", "off", "on")


def measure() -> dict[str, float]:
    """Median ms of a run in each mode (medians of `ROUNDS` interleaved processes)."""
    found: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(ROUNDS):
        for mode in MODES:
            done = subprocess.run(
                [sys.executable, "-c", SCRIPT, mode, str(RUNS)], capture_output=True, text=True, check=True
            )
            found[mode].append(float(done.stdout.strip().splitlines()[-1]))
    medians = {mode: sorted(values)[len(values) // 2] for mode, values in found.items()}
    spreads = {f"{mode}_max": max(values) for mode, values in found.items()}
    return medians | spreads | {f"{mode}_min": min(values) for mode, values in found.items()}


def main() -> int:
    run = Run("telemetry")
    f = measure()
    base = f["unloaded"]
    table = Table(
        ["a guest's run (one get, one blocking call of a mock tool)", "median", "processes' spread", "ratio"],
        [
            [what, f"{f[mode]:.2f} ms", f"{f[mode + '_min']:.2f}–{f[mode + '_max']:.2f} ms", f"{f[mode] / base:.2f}x"]
            for mode, what in (
                ("unloaded", "OpenTelemetry not loaded"),
                ("off", "its API loaded, no SDK (traces off: the default)"),
                ("on", "the SDK recording every span (traces on, in memory)"),
            )
        ],
        note=f"Medians of {ROUNDS} interleaved processes of {RUNS} runs each.",
    )
    targets = [
        Target("traces off: a run / the same with OpenTelemetry not loaded", "not loaded", base, f["off"], "ms",
               "within the reference's spread", f["off"] <= f["unloaded_max"]),
    ]  # fmt: skip
    target_table = Table(
        ["telemetry target", "reference (same run)", "agent-host", "ratio", "target", ""], [t.cells() for t in targets]
    )
    print(json.dumps(f))
    record(run, [table, target_table], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
