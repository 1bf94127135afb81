"""`make bench`: agent-host beside the raw MCP SDK, measured in the same run, reported as ratios.

Same server, same tool (`echo`), same machine and run:

- raw SDK: `mcp.Client.call_tool` from an asyncio program (the baseline);
- host API: `GuestSession.call_tool_blocking` from Python (the host's bridge, no wasm);
- guest: a WebAssembly guest calling `call-tool-blocking` in a loop (timed inside the guest), and
  `call-tool` N times then draining the inbox (asynchronous throughput);
- host path alone: the guest calling a mock tooling (no server, no IPC): the cost of the boundary,
  the checks and the bridge;
- guest start: instantiating a cached component and running a trivial `run`.

Against the bundled demo server over stdio and streamable HTTP (127.0.0.1), and against a server
that is not ours, `@modelcontextprotocol/server-everything` over streamable HTTP (its `echo`;
skipped, saying why, without node and npm). Figures vary from run to run on a shared machine: read
the ratios. Timings are medians of `ROUNDS` rounds.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from host import Host
from host.builder import build_guest
from host.config import parse_config
from host.session import GuestSession
from tests.bench.everything import EverythingHttp, start_everything
from tests.component.conftest import PROBE, Server

CALLS = 300
"""Sequential calls per round."""
ASYNC_CALLS = 200
"""Calls a guest starts at once (below the default limit of 256 open calls)."""
CONCURRENT = 16
"""Concurrent callers for throughput."""
PER_CALLER = 25
ROUNDS = 3
ECHO = {"text": "hello"}
"""The demo server's `echo` arguments."""
EVERYTHING_ECHO = {"message": "hello"}
"""server-everything's `echo` arguments."""


@dataclass(frozen=True)
class Target:
    """One server as the bench reaches it: through the SDK, and as the host's tooling `tooling`."""

    label: str
    sdk: StdioServerParameters | str
    tooling: str
    arguments: dict[str, Any]


def median(values: list[float]) -> float:
    return statistics.median(values)


def sdk_latency(target: StdioServerParameters | str, arguments: dict[str, Any]) -> tuple[float, float]:
    """(seconds per sequential call, calls per second with CONCURRENT callers) with the raw SDK."""

    async def measure() -> tuple[float, float]:
        async with Client(target, cache=None) as client:
            await client.list_tools()
            for _ in range(10):
                await client.call_tool("echo", arguments)
            sequential = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                for _ in range(CALLS):
                    await client.call_tool("echo", arguments)
                sequential.append((time.perf_counter() - started) / CALLS)
            throughput = []
            for _ in range(ROUNDS):

                async def caller() -> None:
                    for _ in range(PER_CALLER):
                        await client.call_tool("echo", arguments)

                started = time.perf_counter()
                async with anyio.create_task_group() as tg:
                    for _ in range(CONCURRENT):
                        tg.start_soon(caller)
                throughput.append(CONCURRENT * PER_CALLER / (time.perf_counter() - started))
            return median(sequential), median(throughput)

    return anyio.run(measure)


def host_latency(host: Host, tooling: str, echo: dict[str, Any]) -> tuple[float, float]:
    """The same through the host's Python API (GuestSession, one per thread)."""
    session = host.session("bench")
    rep = session.get(tooling)
    arguments = json.dumps(echo)
    for _ in range(10):
        session.call_tool_blocking(rep, "echo", arguments)
    sequential = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        for _ in range(CALLS):
            session.call_tool_blocking(rep, "echo", arguments)
        sequential.append((time.perf_counter() - started) / CALLS)
    throughput = []
    for _ in range(ROUNDS):
        sessions = [host.session(f"bench-{i}") for i in range(CONCURRENT)]
        reps = [s.get(tooling) for s in sessions]

        def caller(session: GuestSession, rep: int) -> None:
            for _ in range(PER_CALLER):
                session.call_tool_blocking(rep, "echo", arguments)

        threads = [threading.Thread(target=caller, args=pair) for pair in zip(sessions, reps, strict=True)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        throughput.append(CONCURRENT * PER_CALLER / (time.perf_counter() - started))
        for s in sessions:
            s.close()
    session.close()
    return median(sequential), median(throughput)


def guest_latency(
    host: Host, wasm: Path, tooling: str, echo: dict[str, Any] = ECHO, *, asynchronous: bool = False
) -> float:
    """Seconds per call measured inside a guest (median of ROUNDS runs of CALLS calls)."""
    steps: list[dict[str, Any]] = [{"op": "get", "tooling": tooling, "as": "t"}]
    steps += [{"op": "timed", "h": "t", "tool": "echo", "args": json.dumps(echo), "n": 10}]
    calls = ASYNC_CALLS if asynchronous else CALLS
    steps += [{"op": "timed", "h": "t", "tool": "echo", "args": json.dumps(echo), "n": calls, "async": asynchronous}]
    values = []
    for _ in range(ROUNDS):
        outcome = host.run(wasm, json.dumps({"steps": steps}), agent="bench", policy=host.policy("bench", allow=["*"]))
        assert outcome.status == "ok", outcome
        values.append(json.loads(outcome.text)[2]["ok"] / calls)
    return median(values)


def guest_start(host: Host, wasm: Path) -> float:
    values = []
    for _ in range(ROUNDS * 3):
        started = time.perf_counter()
        outcome = host.run(wasm, json.dumps({"steps": []}), agent="start", policy=host.policy("start"))
        assert outcome.status == "ok", outcome
        values.append(time.perf_counter() - started)
    return median(values)


def row(name: str, sdk: float | None, host_api: float | None, guest: float | None, unit: str) -> str:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f}"

    def ratio(value: float | None) -> str:
        return f"{value / sdk:.2f}x" if sdk and value else "-"

    return f"| {name} | {cell(sdk)} | {cell(host_api)} | {cell(guest)} | {unit} | {ratio(host_api)} | {ratio(guest)} |"


def main() -> int:
    wasm = build_guest(PROBE)
    python = sys.executable
    stdio = StdioServerParameters(command=python, args=["-m", "host.demo_server"])
    http_server = Server([python, "-m", "host.demo_server", "--http", "0"])
    targets = [Target("stdio", stdio, "stdio", ECHO), Target("http", http_server.url, "http", ECHO)]
    toml = (
        f'[tooling.stdio]\ncommand = "{python}"\nargs = ["-m", "host.demo_server"]\n'
        f'[tooling.http]\nurl = "{http_server.url}"\n'
        '[tooling.mock]\nkind = "mock"\n[[tooling.mock.tools]]\nname = "echo"\nrepeat_last = true\n'
        'results = [{ text = "hello" }]\n'
    )
    results: list[str] = []
    everything: EverythingHttp | str = "not started"
    try:
        everything = start_everything()
        if isinstance(everything, str):
            print(f"server-everything rows skipped: {everything}", file=sys.stderr)
        else:
            targets.append(Target("server-everything over http", everything.url, "everything", EVERYTHING_ECHO))
            toml += f'[tooling.everything]\nurl = "{everything.url}"\n'
        with Host(parse_config(toml, Path.cwd() / "bench.toml")) as host:
            host.runtime.load(wasm)
            for target in targets:
                label, echo = target.label, target.arguments
                sdk_seq, sdk_tput = sdk_latency(target.sdk, echo)
                api_seq, api_tput = host_latency(host, target.tooling, echo)
                guest_seq = guest_latency(host, wasm, target.tooling, echo)
                guest_async = guest_latency(host, wasm, target.tooling, echo, asynchronous=True)
                results.append(row(f"call latency, {label}", sdk_seq * 1e6, api_seq * 1e6, guest_seq * 1e6, "µs"))
                results.append(row(f"throughput, {CONCURRENT} callers, {label}", sdk_tput, api_tput, None, "calls/s"))
                results.append(
                    row(f"throughput, {label}: SDK {CONCURRENT} callers / one guest's call-tool", sdk_tput, None,
                        1 / guest_async, "calls/s")
                )  # fmt: skip
            mock = guest_latency(host, wasm, "mock")
            results.append(row("host path alone (guest → mock tooling)", None, None, mock * 1e6, "µs"))
            start = guest_start(host, wasm) * 1e3
            results.append(row("guest start (cached component) + trivial run", None, None, start, "ms"))
    finally:
        http_server.stop()
        if not isinstance(everything, str):
            everything.stop()
    print(
        "| measurement | raw MCP SDK | agent-host, host API | agent-host, guest | unit | host API / SDK | guest / SDK |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for line in results:
        print(line)
    print(
        f"\n{CALLS} sequential calls x {ROUNDS} rounds (median); throughput: {CONCURRENT} concurrent callers x "
        f"{PER_CALLER} calls. Ratios: for latency lower is better, for throughput higher is better."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
