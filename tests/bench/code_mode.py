"""`make bench`, code mode: a trivial snippet with one tool call, each in a fresh sandbox.

Through the Python API (`Host.start` of a code agent; its instance made per call, and made ahead by
a pool) and through `agent-host serve --http` (one client's calls in a row, `ready_instances = 2`),
the tool a mock tooling's (no network: what is measured is the sandbox and the host). References
from the same run: `pydantic-monty` (a Python subset in Rust, worker processes: a fresh session per
snippet, the tool a host function) and starting a bare `python3 -I -S -c pass` process.
`mcp-run-python` (Pyodide in Deno) is not measured: its first run fetches from a JavaScript
registry this machine does not reach.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio
from mcp import Client

from agent_host import Host
from agent_host.config import parse_config
from tests.bench.__main__ import Target
from tests.bench.record import Run, Table, record
from tests.bench.serve import _serve

CALLS: Final = 200
"""Snippets run for each median."""

WARM_UP: Final = 20
SNIPPET: Final = "from toolings import calc\ncalc.add(a=1, b=2)"
MONTY_SNIPPET: Final = "add(a=1, b=2)"
CONFIG: Final = (
    '[tooling.calc]\nkind = "mock"\n[[tooling.calc.tools]]\nname = "add"\nresults = [{ structured = { sum = 3 } }]\n'
    'repeat_last = true\n[agents.py]\ncode = "python"\ntoolings = ["calc"]\n'
)
EXPECTED: Final = '{"result": {"sum": 3}, "stdout": ""}'


def _median_ms(once: Callable[[], Any], count: int = CALLS) -> float:
    for _ in range(WARM_UP):
        once()
    times = []
    for _ in range(count):
        started = time.perf_counter()
        once()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def python_api(config_file: Path) -> tuple[float, float]:
    """Median ms of a snippet through `Host.start`, its instance made per call and made ahead."""
    with Host(parse_config(CONFIG, config_file)) as host:
        wasm = host.agent_component("py")
        policy = host.agent_policy("py")
        pool = host.pool(wasm, "py", policy, 2)
        assert pool.filled(60)

        def fresh() -> None:
            outcome = host.wait(host.start(wasm, SNIPPET, agent="py", policy=policy))
            assert outcome.text == EXPECTED, outcome

        def ready() -> None:
            outcome = host.wait(host.start(wasm, SNIPPET, agent="py", policy=policy, pool=pool))
            assert outcome.text == EXPECTED, outcome
            pool.filled(60)

        made = _median_ms(fresh)
        for _ in range(WARM_UP):
            ready()
        times = []
        for _ in range(CALLS):
            started = time.perf_counter()
            outcome = host.wait(host.start(wasm, SNIPPET, agent="py", policy=policy, pool=pool))
            times.append(time.perf_counter() - started)
            assert outcome.text == EXPECTED, outcome
            pool.filled(60)  # the next call finds one made (not timed: made off the call's path)
        ahead = statistics.median(times) * 1e3
    return made, ahead


def served(config_file: Path) -> float:
    """Median ms of one client's code calls in a row through `agent-host serve --http`."""
    config_file.write_text(CONFIG + "[serve]\nready_instances = 2\n")
    server, url = _serve(config_file)
    try:

        async def measure() -> float:
            async with Client(url, cache=None) as client:
                for _ in range(WARM_UP):
                    await client.call_tool("py", {"code": SNIPPET})
                times = []
                for _ in range(CALLS):
                    started = time.perf_counter()
                    result = await client.call_tool("py", {"code": SNIPPET})
                    times.append(time.perf_counter() - started)
                    assert result.structured_content == {"result": {"sum": 3}, "stdout": ""}, result
                return statistics.median(times) * 1e3

        return anyio.run(measure)
    finally:
        server.terminate()
        server.wait(timeout=60)


def monty() -> float | None:
    """Median ms of a fresh pydantic-monty session running the snippet with one host call (None when
    pydantic-monty, a benchmark-only dependency, is not installed)."""
    try:
        import pydantic_monty
    except ImportError:
        return None

    def add(a: int, b: int) -> dict[str, int]:
        return {"sum": a + b}

    with pydantic_monty.Monty(min_processes=2) as pool:

        def once() -> None:
            with pool.checkout() as session:
                assert session.feed_run(MONTY_SNIPPET, external_lookup={"add": add}) == {"sum": 3}

        return _median_ms(once)


def bare_process() -> float:
    """Median ms of starting and ending `python3 -I -S -c pass`."""
    return _median_ms(lambda: subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True), count=50)


def measure() -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="agent-host-bench-") as scratch:
        config_file = Path(scratch) / "agent-host.toml"
        made, ahead = python_api(config_file)
        serve_one = served(config_file)
    figures = {"api_made": made, "api_ahead": ahead, "serve_one": serve_one, "bare_process": bare_process()}
    reference = monty()
    if reference is not None:
        figures["monty"] = reference
    return figures


def main() -> int:
    run = Run("code_mode")
    f = measure()
    monty_ms = f.get("monty")
    api = min(f["api_made"], f["api_ahead"])
    rows = [
        ["agent-host, Python API, instance made per call", f"{f['api_made']:.2f} ms"],
        ["agent-host, Python API, instance made ahead (`Host.pool`)", f"{f['api_ahead']:.2f} ms"],
        ["agent-host, `serve --http`, one client's calls in a row (`ready_instances = 2`)", f"{f['serve_one']:.2f} ms"],
        ["pydantic-monty 1.4: a fresh session, the tool a host function",
         f"{monty_ms:.2f} ms" if monty_ms is not None else "not installed (`pip install -e '.[bench]'`)"],
        ["a bare `python3 -I -S -c pass` process, started and ended", f"{f['bare_process']:.2f} ms"],
    ]  # fmt: skip
    table = Table(
        ["a snippet with one tool call, fresh sandbox each", "median"],
        rows,
        note=f"Medians of {CALLS} snippets (the bare process: 50), after {WARM_UP} to warm up.",
    )
    targets = [
        Target("through the Python API (the better of the two rows)", "pydantic-monty", monty_ms, api, "ms", "≤ 2 ms",
               api <= 2.0),
        Target("through `serve`", "a bare `python3 -I -S` process", f["bare_process"], f["serve_one"], "ms",
               "≤ the bare process", f["serve_one"] <= f["bare_process"]),
    ]  # fmt: skip
    target_table = Table(
        ["code mode target", "reference (same run)", "agent-host", "ratio", "target", ""], [t.cells() for t in targets]
    )
    record(run, [table, target_table], f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
